// SPDX-License-Identifier: GPL-2.0
/*
 * framelink: command-line tool over libframelink.
 *
 *   framelink info  [-d DEV]
 *   framelink stats [-d DEV]
 *   framelink send  [-d DEV] -s SIZE -n COUNT [-b BATCH] [--verify]
 *   framelink recv  [-d DEV] [-n COUNT] [-t MS] [--verify] [--crc] [--export] [--save FILE]
 *   framelink echo  [-d DEV] [-n COUNT] [-t MS]          (endpoint side)
 *   framelink bench [-d DEV] -s SIZES -n COUNT [-b BATCH] [-p PEERDEV] [-L US] (host side)
 *   framelink stream -m h2e|e2h|both -s SIZE -n COUNT [-q DEPTH] [-d HOSTDEV] [-p EPDEV]
 *                    [--csv]              (both ends in one machine: the lab; stream.c)
 *   framelink check [-d DEV] [-t MS]      (API conformance: documented errors, ownership)
 *   framelink export [-d DEV] -s SLOT     (endpoint: a slot as a dma-buf, FL_IOC_EXPORT)
 *   framelink capture [-d DEV] [--video PATH|BUS_INFO] [-n COUNT] [--crc] [--copy] ...
 *                                         (host: V4L2 frames, imported dma-bufs; capture.c)
 *
 * send/recv --verify use a pattern derived from each frame's cookie, so `send --verify` on
 * one end and `recv --verify` on the other check every byte; `recv --crc` checks each frame
 * against the CRC-32 in the low 32 bits of its cookie (`capture --crc`), `recv --export`
 * reads each frame through a dma-buf of its slot (FL_IOC_EXPORT, DMA_BUF_IOCTL_SYNC around
 * the access) instead of the slot mapping, and `recv --save FILE` appends the frames to FILE.
 * echo inverts every received frame in place, computes its CRC-32 and sends the same buffer
 * back; bench streams random frames through an echo, checks that each comes back inverted
 * and prints a table.
 * Exit status: 0 when everything was verified, 1 on any failure, 2 on bad usage.
 *
 * These are a user's commands. What only the VM tests do to a device (raw 32-bit loads and
 * stores on a BAR, buffers held across a removal, a REAP across a link cut) is
 * framelink-testtool's, beside the kselftest in tools/testing/selftests/framelink.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <linux/dma-buf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture.h"
#include "libframelink.h"
#include "stream.h"

#define DEFAULT_HOST_DEV	"/dev/framelink0"
#define DEFAULT_EP_DEV		"/dev/framelink-ep0"
#define MAX_BATCH		FL_RING_MAX_ENTRIES
#define MAX_SIZES		16

struct opts {
	const char *dev;
	const char *peer;
	u64 sizes[MAX_SIZES];
	int nsizes;
	u64 count;
	u32 batch;
	int timeout_ms;
	int verify;
	int verbose;
	u64 max_lat_us;
	int crc;		/* recv: check the CRC-32 in the cookie's low 32 bits */
	int export;		/* recv: read frames through dma-bufs of the slots */
	const char *save;	/* recv: append the frames to this file */
	int count_errors;	/* recv: a buffer failed with an error counts toward count */
};

static int stop;

static int stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
}

static void usage(FILE *f)
{
	fprintf(f,
		"framelink COMMAND [options]\n"
		"  info  [-d DEV]                 what the device reports (FL_IOC_INFO)\n"
		"  stats [-d DEV]                 counters (FL_IOC_STATS)\n"
		"  send  [-d DEV] -s SIZE -n COUNT [-b BATCH] [-t MS] [--verify]\n"
		"  recv  [-d DEV] [-n COUNT] [-t MS] [--verify] [--crc] [--export] [--save FILE]\n"
		"        [--count-errors]\n"
		"  echo  [-d DEV] [-n COUNT] [-t MS]   endpoint: invert + CRC each frame, send it back\n"
		"  bench [-d DEV] -s SIZE[,SIZE...] -n COUNT [-b BATCH] [-p PEERDEV] [-L US]\n"
		"  stream -m h2e|e2h|both -s SIZE -n COUNT [-q DEPTH] [-d HOSTDEV] [-p EPDEV] [--csv]\n"
		"                                 both ends here (the lab): one- or two-way stream\n"
		"  check [-d DEV] [-t MS]         ioctl error paths and buffer ownership\n"
		"  capture [-d DEV] [--video PATH|BUS_INFO] [-n COUNT] [--crc] [--copy] ...\n"
		"                                 host: V4L2 frames sent from imported dma-bufs\n"
		"                                 (FL_IOC_IMPORT); `framelink capture -h` for more\n"
		"  export [-d DEV] -s SLOT        endpoint: the slot as a dma-buf (FL_IOC_EXPORT),\n"
		"                                 its fd, size and CRC read through it\n"
		"options:\n"
		"  -d DEV      device (default %s; echo: %s)\n"
		"  -s SIZE     frame size, K/M suffixes (bench: comma-separated list)\n"
		"  -n COUNT    frames (recv/echo: 0 = until interrupted)\n"
		"  -b BATCH    frames per SUBMIT (default 8)\n"
		"  -t MS       recv/echo: give up after MS without a frame, send: without a\n"
		"              completion (default: recv and send 10000, echo 0 = wait forever)\n"
		"  -p PEERDEV  bench: the peer's device for its STATS (default %s if present)\n"
		"  -L US       bench: fail when a frame's round trip took longer than US\n"
		"  --verify    check every frame's content (send: pattern; recv: check pattern)\n"
		"  --crc       recv: check each frame's CRC-32 against its cookie's low 32 bits\n"
		"              (what `capture --crc` sends)\n"
		"  --export    recv (endpoint): read each frame through a dma-buf of its slot\n"
		"              (FL_IOC_EXPORT) instead of the slot mapping\n"
		"  --save FILE recv: append every frame's bytes to FILE\n"
		"  --count-errors  recv: a buffer completed with an error counts toward COUNT\n"
		"              (a test expecting the error ends on it, not on -t)\n"
		"  -v          verbose\n",
		DEFAULT_HOST_DEV, DEFAULT_EP_DEV, DEFAULT_EP_DEV);
}

static int parse_sizes(const char *arg, struct opts *o)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	o->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES || fl_parse_size(tok, &o->sizes[o->nsizes]) ||
		    !o->sizes[o->nsizes])
			return -1;
		o->nsizes++;
	}
	return o->nsizes ? 0 : -1;
}

static const char *human(u64 v, char *buf, size_t len)
{
	if (v >= (1u << 20) && !(v & ((1u << 20) - 1)))
		snprintf(buf, len, "%lluM", v >> 20);
	else if (v >= 1024 && !(v & 1023))
		snprintf(buf, len, "%lluK", v >> 10);
	else
		snprintf(buf, len, "%llu", v);
	return buf;
}

/* xorshift64*: fast, and good enough for test data */
static u64 rnd_next(u64 *s)
{
	u64 x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void fill_random(u8 *p, size_t n, u64 seed)
{
	u64 s = seed * 0x9e3779b97f4a7c15ull + 1, w;
	size_t i;

	if (!s)
		s = 1;
	for (i = 0; i + 8 <= n; i += 8) {
		w = rnd_next(&s);
		memcpy(p + i, &w, 8);
	}
	if (i < n) {
		w = rnd_next(&s);
		memcpy(p + i, &w, n - i);
	}
}

/* Index of the first byte of @p that differs from the pattern of @seed, or -1. */
static long check_random(const u8 *p, size_t n, u64 seed)
{
	u64 s = seed * 0x9e3779b97f4a7c15ull + 1, w;
	size_t i, k;

	if (!s)
		s = 1;
	for (i = 0; i < n; i += 8) {
		w = rnd_next(&s);
		k = n - i < 8 ? n - i : 8;
		if (memcmp(p + i, &w, k)) {
			for (size_t j = 0; j < k; j++)
				if (p[i + j] != ((u8 *)&w)[j])
					return (long)(i + j);
		}
	}
	return -1;
}

/*
 * Per-errno tally of completion statuses, printed as one line a test script can match:
 * "status: OK=3 ECANCELED=2" (names, not strerror() texts, so the exact errno is asserted).
 */
#define TALLY_SLOTS	8

struct tally {
	int err[TALLY_SLOTS];	/* 0 = OK, else a positive errno */
	u64 n[TALLY_SLOTS];
	u64 other;
};

/* Count one completion status (0 or a negative errno). */
static void tally_add(struct tally *t, int status)
{
	int e = status < 0 ? -status : status;

	for (int i = 0; i < TALLY_SLOTS; i++) {
		if (t->n[i] && t->err[i] != e)
			continue;
		t->err[i] = e;
		t->n[i]++;
		return;
	}
	t->other++;
}

static u64 tally_errors(const struct tally *t)
{
	u64 sum = t->other;

	for (int i = 0; i < TALLY_SLOTS; i++)
		if (t->err[i])
			sum += t->n[i];
	return sum;
}

/* "status: OK=5 EPROTO=1" on @f; @end: how the program ended ("" or an errno name). */
static void tally_print(FILE *f, const char *who, const struct tally *t, int end)
{
	fprintf(f, "%s: status:", who);
	for (int i = 0; i < TALLY_SLOTS; i++)
		if (t->n[i])
			fprintf(f, " %s=%llu", fl_errno_name(t->err[i]), t->n[i]);
	if (t->other)
		fprintf(f, " other=%llu", t->other);
	if (end)
		fprintf(f, " end=%s", fl_errno_name(end < 0 ? -end : end));
	fprintf(f, "\n");
	if (fl_dev_revoked())
		fprintf(f, "%s: buffer mapping revoked (device removed or unbound): %s\n", who,
			"SIGBUS caught, the access read zeros");
}

static int open_dev(struct fl_dev *d, const char *path, int map)
{
	int ret = fl_dev_open(d, path, map);

	if (ret)
		fprintf(stderr, "framelink: %s: %s\n", path, strerror(-ret));
	return ret;
}

static int endpoint_link_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) && !(p.revents & POLLERR);
}

/*
 * "crossover: 12288 bytes (measured at enable)"; a measured value past the largest frame or
 * zero says which path every frame takes. The fitted lines are in the endpoint's kernel log.
 */
static void print_crossover(const char *label, u32 bytes, u32 how, const struct fl_info *i)
{
	const char *name = fl_xover_how_name(how);
	const char *all = "";

	if (how == FL_XOVER_MEASURED && bytes > i->buf_size)
		all = ": CPU for every frame";
	else if (how == FL_XOVER_MEASURED && !bytes)
		all = ": DMA for every frame";
	if (name)
		printf("%s%u bytes (%s%s)\n", label, bytes, name, all);
	else
		printf("%s%u bytes\n", label, bytes);
}

static int cmd_info(struct opts *o)
{
	struct fl_dev d;
	struct fl_info *i = &d.info;
	u32 rd;

	if (open_dev(&d, o->dev, 0))
		return 1;
	printf("device:          %s\n", o->dev);
	printf("abi:             %u.%u\n", i->abi_version >> 16, i->abi_version & 0xffff);
	printf("role:            %s\n", fl_role_name(i->role));
	printf("features:        %#llx%s%s%s%s%s%s%s%s\n", (unsigned long long)i->features,
	       i->features & FL_F_CQ_EVENT ? " cq_event" : "",
	       i->features & FL_F_DMA ? " dma" : "",
	       i->features & FL_F_TIMESTAMPS ? " timestamps" : "",
	       i->features & FL_F_INTX_ACK ? " intx_ack" : "",
	       i->features & FL_F_IRQ_TEST ? " irq_test" : "",
	       i->features & FL_F_CQ_BATCH ? " cq_batch" : "",
	       i->features & FL_F_IRQ_PROD ? " irq_prod" : "",
	       i->features & FL_F_IRQ_SEEN ? " irq_seen" : "");
	printf("buffers:         %u x %u bytes at mmap offset %#llx\n", i->nbufs, i->buf_size,
	       (unsigned long long)i->mmap_offset);
	printf("tx_depth:        %u\n", i->tx_depth);
	printf("rx_depth:        %u\n", i->rx_depth);
	if (i->cq_entries)
		printf("cq_entries:      %u\n", i->cq_entries);
	if (i->role == FL_ROLE_ENDPOINT)
		printf("backend:         %s\n", fl_xfer_backend_name(i->xfer_backend));
	printf("dma channels:    %u read, %u write\n", i->dma_rd_channels, i->dma_wr_channels);
	print_crossover("crossover:       ", i->crossover, FL_XOVER_WR(i->crossover_how), i);
	/* rd_crossover 0: "every read by DMA" when crossover_how is set, else an older driver */
	rd = FL_XOVER_RD(i->crossover_how) ? i->rd_crossover : i->rd_crossover ?: i->crossover;
	print_crossover("rd_crossover:    ", rd, FL_XOVER_RD(i->crossover_how), i);
	printf("notify:          %s\n", fl_notify_name(i->notify));
	if (i->link_speed)
		printf("link:            %u.%u GT/s x%u\n", i->link_speed / 10, i->link_speed % 10,
		       i->link_width);
	else if (i->role == FL_ROLE_ENDPOINT)
		/* The endpoint's poll() says POLLOUT while the link is up (queues running) */
		printf("link:            %s\n", endpoint_link_up(d.fd) ? "up" :
		       "down (waiting for the root's PERST# deassert and the host driver)");
	else
		printf("link:            unknown\n");
	printf("mps:             %u (supported %u)\n", i->mps, i->mps_supported);
	printf("mrrs:            %u\n", i->mrrs);
	printf("caps:            %#x%s%s\n", i->caps, i->caps & FL_CAP_EXPORT ? " export" : "",
	       i->caps & FL_CAP_IMPORT ? " import" : "");
	if (i->caps & FL_CAP_IMPORT)
		printf("max_imports:     %u\n", i->max_imports);
	fl_dev_close(&d);
	return 0;
}

static void print_stats(const struct fl_stats *s)
{
	printf("tx_frames:        %llu\n", (unsigned long long)s->tx_frames);
	printf("tx_bytes:         %llu\n", (unsigned long long)s->tx_bytes);
	printf("rx_frames:        %llu\n", (unsigned long long)s->rx_frames);
	printf("rx_bytes:         %llu\n", (unsigned long long)s->rx_bytes);
	printf("errors:           %llu\n", (unsigned long long)s->errors);
	printf("protocol_errors:  %llu\n", (unsigned long long)s->protocol_errors);
	printf("interrupts:       %llu\n", (unsigned long long)s->interrupts);
	printf("dma_transfers:    %llu\n", (unsigned long long)s->dma_transfers);
	printf("cpu_transfers:    %llu\n", (unsigned long long)s->cpu_transfers);
	printf("polls:            %llu\n", (unsigned long long)s->polls);
	printf("poll_interval_us: %llu\n", (unsigned long long)s->poll_interval_us);
	printf("reaction_ns_max:  %llu\n", (unsigned long long)s->reaction_ns_max);
	printf("safety_wakeups:   %llu\n", (unsigned long long)s->safety_wakeups);
	printf("queue_resets:     %llu\n", (unsigned long long)s->queue_resets);
	printf("dma_aborts:       %llu\n", (unsigned long long)s->dma_aborts);
	printf("dma_leaked:       %llu\n", (unsigned long long)s->dma_leaked);
	printf("status_repairs:   %llu\n", (unsigned long long)s->status_repairs);
	printf("intx_retries:     %llu\n", (unsigned long long)s->intx_retries);
	printf("link_reads:       %llu\n", (unsigned long long)s->link_reads);
	printf("batch_irqs:       %llu\n", (unsigned long long)s->batch_irqs);
	printf("early_irqs:       %llu\n", (unsigned long long)s->early_irqs);
	printf("stale_irqs:       %llu\n", (unsigned long long)s->stale_irqs);
	printf("tx_imported:      %llu\n", (unsigned long long)s->tx_imported);
}

static int cmd_stats(struct opts *o)
{
	struct fl_stats s;
	struct fl_dev d;
	int ret;

	if (open_dev(&d, o->dev, 0))
		return 1;
	ret = fl_dev_stats(&d, &s);
	if (ret)
		fprintf(stderr, "framelink: STATS: %s\n", strerror(-ret));
	else
		print_stats(&s);
	fl_dev_close(&d);
	return ret ? 1 : 0;
}

/* Export one slot as a dma-buf; its CRC read through the dma-buf with DMA_BUF_IOCTL_SYNC */
static int cmd_export(struct opts *o)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	struct fl_export x = { .slot = (u32)o->sizes[0], .flags = FL_EXPORT_CLOEXEC };
	struct fl_dev d;
	u32 crc = 0;
	void *p;

	if (open_dev(&d, o->dev, 0))
		return 1;
	if (ioctl(d.fd, FL_IOC_EXPORT, &x)) {
		fprintf(stderr, "framelink: EXPORT slot %u: %s\n", x.slot, strerror(errno));
		fl_dev_close(&d);
		return 1;
	}
	p = mmap(NULL, x.size, PROT_READ, MAP_SHARED, x.fd, 0);
	if (p != MAP_FAILED && !ioctl(x.fd, DMA_BUF_IOCTL_SYNC, &sync)) {
		crc = fl_crc32(0, p, x.size);
		sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
		ioctl(x.fd, DMA_BUF_IOCTL_SYNC, &sync);
	}
	printf("export: slot %u: dma-buf fd %d, %llu bytes, device mmap offset %llu, crc32 %08x\n",
	       x.slot, x.fd, (unsigned long long)x.size, (unsigned long long)x.offset, crc);
	if (p != MAP_FAILED)
		munmap(p, x.size);
	close(x.fd);
	fl_dev_close(&d);
	return p == MAP_FAILED ? 1 : 0;
}

/* A stack of free buffer indices. */
struct freelist {
	u32 *idx;
	u32 n;
};

static int cmd_send(struct opts *o)
{
	struct fl_completion *c = calloc(MAX_BATCH, sizeof(*c));
	struct fl_frame *f = calloc(MAX_BATCH, sizeof(*f));
	u64 sent = 0, done = 0, t0, bytes = 0;
	struct freelist fl = { 0 };
	u64 size = o->sizes[0];
	int fail = 0, ret, n, i, end = 0;
	struct tally t = { 0 };
	struct fl_dev d;
	double secs;

	if (!c || !f || open_dev(&d, o->dev, 1))
		return 1;
	if (!o->nsizes || !size || size > d.info.buf_size) {
		fprintf(stderr, "framelink: send: -s 1..%u required\n", d.info.buf_size);
		return 2;
	}
	fl.idx = calloc(d.info.nbufs, sizeof(*fl.idx));
	if (!fl.idx)
		return 1;
	for (i = (int)d.info.nbufs - 1; i >= 0; i--)
		fl.idx[fl.n++] = (u32)i;

	t0 = fl_now_ns();
	while (done < o->count && !stopped()) {
		u32 k = 0, acc;

		while (sent + k < o->count && fl.n && k < o->batch) {
			u32 b = fl.idx[--fl.n];
			u64 cookie = sent + k;

			if (o->verify)
				fill_random(fl_dev_buf(&d, b), size, cookie);
			f[k] = (struct fl_frame){ .buf = b, .bytes = (u32)size,
						  .flags = FL_FRAME_EOF, .cookie = cookie };
			k++;
		}
		if (k) {
			ret = fl_dev_submit(&d, f, k, &acc);
			/* whatever was not accepted goes back to the free list */
			for (i = (int)k - 1; i >= (int)acc; i--)
				fl.idx[fl.n++] = f[i].buf;
			sent += acc;
			if (ret && ret != -EAGAIN) {
				fprintf(stderr, "framelink: SUBMIT entry %u: %s\n", acc,
					strerror(-ret));
				fail = 1;
				end = ret;
				break;
			}
		}
		n = fl_dev_reap(&d, c, MAX_BATCH, o->timeout_ms);
		if (n < 0) {
			fprintf(stderr, "framelink: REAP: %s\n", strerror(-n));
			fail = 1;
			end = n;
			break;
		}
		if (!n) {
			fprintf(stderr, "framelink: send: no completion in %d ms, %llu/%llu done\n",
				o->timeout_ms, done, o->count);
			fail = 1;
			break;
		}
		for (i = 0; i < n; i++) {
			if (c[i].queue != FL_Q_TX) {
				/* a frame from the peer we did not ask for: give the buffer back */
				fl.idx[fl.n++] = c[i].buf;
				continue;
			}
			fl.idx[fl.n++] = c[i].buf;
			done++;
			tally_add(&t, c[i].status);
			if (c[i].status) {
				fprintf(stderr, "framelink: frame %llu: %s\n",
					(unsigned long long)c[i].cookie, strerror(-c[i].status));
				fail = 1;
			} else {
				bytes += c[i].bytes;
			}
		}
	}
	secs = (double)(fl_now_ns() - t0) / 1e9;
	printf("sent %llu frames, %llu bytes in %.3f s: %.3f GB/s (10^9 B/s)\n",
	       done, bytes, secs, secs > 0 ? (double)bytes / secs / 1e9 : 0.0);
	tally_print(stdout, "send", &t, end);
	fl_dev_close(&d);
	return fail || done < o->count;
}

static int post_all(struct fl_dev *d, const u32 *idx, u32 n)
{
	u32 acc = 0;
	int ret = 0;

	while (n) {
		ret = fl_dev_post(d, idx, n, &acc);
		if (ret && ret != -EAGAIN)
			break;
		idx += acc;
		n -= acc;
		if (ret == -EAGAIN)
			return 0;	/* ring full: the rest waits */
		ret = 0;
	}
	if (ret)
		fprintf(stderr, "framelink: POST buffer %u: %s\n", idx[acc], strerror(-ret));
	return ret;
}

/* recv --export: each slot's dma-buf (FL_IOC_EXPORT) and a read-only mapping of it */
struct recv_export {
	int fd;
	u8 *p;
	size_t len;
};

static void recv_unexport(struct recv_export *x, u32 n)
{
	for (u32 i = 0; x && i < n; i++) {
		if (x[i].p)
			munmap(x[i].p, x[i].len);
		if (x[i].fd >= 0)
			close(x[i].fd);
	}
	free(x);
}

static struct recv_export *recv_export(struct fl_dev *d)
{
	struct recv_export *x = calloc(d->info.nbufs, sizeof(*x));
	u32 i;

	if (!x)
		return NULL;
	for (i = 0; i < d->info.nbufs; i++)
		x[i].fd = -1;
	for (i = 0; i < d->info.nbufs; i++) {
		struct fl_export e = { .slot = i, .flags = FL_EXPORT_CLOEXEC };
		void *p;

		if (ioctl(d->fd, FL_IOC_EXPORT, &e)) {
			int err = errno;

			fprintf(stderr, "framelink: recv --export: EXPORT slot %u: %s%s\n", i,
				strerror(err), err == ENOTTY ? " (the endpoint's device exports)" :
				err == EOPNOTSUPP ? " (a kernel without dma-buf)" : "");
			break;
		}
		x[i].fd = e.fd;
		p = mmap(NULL, e.size, PROT_READ, MAP_SHARED, e.fd, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "framelink: recv --export: mmap of slot %u's dma-buf: %s\n",
				i, strerror(errno));
			break;
		}
		x[i].p = p;
		x[i].len = e.size;
	}
	if (i < d->info.nbufs) {
		recv_unexport(x, d->info.nbufs);
		return NULL;
	}
	return x;
}

static int dmabuf_sync(int fd, u64 flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return ioctl(fd, DMA_BUF_IOCTL_SYNC, &s) ? -errno : 0;
}

/* What recv does with one received frame at @p; 0 or 1 (a failed check) */
static int recv_frame(struct opts *o, const struct fl_completion *x, const u8 *p, FILE *save,
		      u64 *crc_checked, u64 *crc_bad)
{
	int fail = 0;
	long bad = -1;

	if (o->verify)
		bad = check_random(p, x->bytes, x->cookie);
	if (bad >= 0) {
		fprintf(stderr, "framelink: frame %llu (%u bytes): mismatch at byte %ld\n",
			x->cookie, x->bytes, bad);
		fail = 1;
	}
	if (o->crc) {
		u32 crc = fl_crc32(0, p, x->bytes);

		(*crc_checked)++;
		if (crc != (u32)x->cookie) {
			if ((*crc_bad)++ < 10)
				fprintf(stderr,
					"framelink: frame seq %u (cookie %#llx, %u bytes): crc32 %08x, the cookie says %08x\n",
					x->seq, x->cookie, x->bytes, crc, (u32)x->cookie);
			fail = 1;
		}
	}
	if (save && fwrite(p, 1, x->bytes, save) != x->bytes) {
		fprintf(stderr, "framelink: recv --save: %s\n", strerror(errno));
		fail = 1;
	}
	if (o->verbose)
		printf("frame seq %u cookie %llu bytes %u crc32 %08x\n", x->seq, x->cookie,
		       x->bytes, fl_crc32(0, p, x->bytes));
	return fail;
}

/* The frame handed on as a dma-buf: read through the slot's export, bracketed by SYNC */
static int recv_exported(struct opts *o, const struct fl_completion *x,
			 const struct recv_export *xp, u32 nbufs, FILE *save, u64 *crc_checked,
			 u64 *crc_bad)
{
	const struct recv_export *e = &xp[x->buf];
	int ret, fail = 0;

	if (x->buf >= nbufs || x->bytes > e->len) {
		fprintf(stderr, "framelink: recv --export: %u bytes in slot %u: past its dma-buf\n",
			x->bytes, x->buf);
		return 1;
	}
	ret = dmabuf_sync(e->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	if (!ret) {
		fail = recv_frame(o, x, e->p, save, crc_checked, crc_bad);
		ret = dmabuf_sync(e->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	}
	if (ret) {
		fprintf(stderr, "framelink: recv --export: DMA_BUF_IOCTL_SYNC, slot %u: %s\n",
			x->buf, strerror(-ret));
		fail = 1;
	}
	return fail;
}

static int cmd_recv(struct opts *o)
{
	struct fl_completion *c = calloc(MAX_BATCH, sizeof(*c));
	u64 got = 0, errs = 0, bytes = 0, t0 = 0, crc_checked = 0, crc_bad = 0;
	struct recv_export *xp = NULL;
	struct tally t = { 0 };
	FILE *save = NULL;
	u32 *idx, i;
	int fail = 0, n, end = 0;
	struct fl_dev d;
	double secs;

	if (!c || open_dev(&d, o->dev, 1))
		return 1;
	idx = calloc(d.info.nbufs, sizeof(*idx));
	if (!idx)
		return 1;
	if (o->export) {
		xp = recv_export(&d);
		if (!xp)
			return 1;
	}
	if (o->save) {
		save = fopen(o->save, "ab");
		if (!save) {
			fprintf(stderr, "framelink: recv --save %s: %s\n", o->save,
				strerror(errno));
			return 1;
		}
	}
	for (i = 0; i < d.info.nbufs; i++)
		idx[i] = i;
	if (post_all(&d, idx, d.info.rx_depth < d.info.nbufs ? d.info.rx_depth : d.info.nbufs))
		return 1;
	/* errs: failed buffers counted toward COUNT (--count-errors), not as frames */
	while ((!o->count || got + errs < o->count) && !stopped()) {
		n = fl_dev_reap(&d, c, MAX_BATCH, o->timeout_ms);
		if (n < 0) {
			fprintf(stderr, "framelink: REAP: %s\n", strerror(-n));
			fail = 1;
			end = n;
			break;
		}
		if (!n) {
			fprintf(stderr, "framelink: recv: no frame in %d ms\n", o->timeout_ms);
			fail = o->count != 0;
			break;
		}
		if (!t0)
			t0 = fl_now_ns();
		for (int k = 0; k < n; k++) {
			struct fl_completion *x = &c[k];

			if (x->queue != FL_Q_RX)
				continue;
			tally_add(&t, x->status);
			if (x->status) {
				fprintf(stderr, "framelink: rx buffer %u: %s\n", x->buf,
					strerror(-x->status));
				fail = 1;
				errs += o->count_errors;
			} else if (xp) {
				got++;
				bytes += x->bytes;
				fail |= recv_exported(o, x, xp, d.info.nbufs, save, &crc_checked,
						      &crc_bad);
			} else {
				got++;
				bytes += x->bytes;
				fail |= recv_frame(o, x, fl_dev_buf(&d, x->buf), save, &crc_checked,
						   &crc_bad);
			}
			if (post_all(&d, &x->buf, 1)) {
				fail = 1;
				break;
			}
		}
	}
	secs = t0 ? (double)(fl_now_ns() - t0) / 1e9 : 0;
	printf("received %llu frames, %llu bytes%s\n", got, bytes,
	       o->verify ? (fail ? ", VERIFY FAILED" : ", all verified") : "");
	tally_print(stdout, "recv", &t, end);
	if (o->crc)
		printf("recv: crc: checked=%llu mismatches=%llu\n", crc_checked, crc_bad);
	if (xp)
		printf("recv: export: frames read through dma-bufs of %u slots\n", d.info.nbufs);
	if (secs > 0)
		printf("%.3f GB/s (10^9 B/s)\n", (double)bytes / secs / 1e9);
	if (save && fclose(save)) {
		fprintf(stderr, "framelink: recv --save %s: %s\n", o->save, strerror(errno));
		fail = 1;
	}
	recv_unexport(xp, d.info.nbufs);
	fl_dev_close(&d);
	return fail;
}

static void invert(u8 *p, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		u64 w;

		memcpy(&w, p + i, 8);
		w = ~w;
		memcpy(p + i, &w, 8);
	}
	for (; i < n; i++)
		p[i] = (u8)~p[i];
}

/*
 * Endpoint side: POST every slot; for each received frame invert it in place, CRC it, SUBMIT
 * the same slot back (zero copies); repost the slot when its TX completes.
 */
static int cmd_echo(struct opts *o)
{
	struct fl_completion *c = calloc(MAX_BATCH, sizeof(*c));
	u32 *pending, npending = 0, *idx, i, acc;
	u64 echoed = 0, errors = 0, last = fl_now_ns();
	u32 crc_acc = 0;
	struct fl_frame fr;
	int n, ret, reap_err = 0, end = 0, fail = 0;
	struct tally t = { 0 };
	struct fl_dev d;

	if (!c || open_dev(&d, o->dev, 1))
		return 1;
	idx = calloc(d.info.nbufs, sizeof(*idx));
	pending = calloc(d.info.nbufs, sizeof(*pending));
	if (!idx || !pending)
		return 1;
	for (i = 0; i < d.info.nbufs; i++)
		idx[i] = i;
	if (post_all(&d, idx, d.info.rx_depth < d.info.nbufs ? d.info.rx_depth : d.info.nbufs))
		return 1;
	fprintf(stderr, "framelink: echo on %s: %u slots of %u bytes\n", o->dev, d.info.nbufs,
		d.info.buf_size);
	while ((!o->count || echoed < o->count) && !stopped()) {
		n = fl_dev_reap(&d, c, MAX_BATCH, 200);
		if (n == -ENODEV || n == -EBADF || n == -EFAULT || n == -EINVAL) {
			fprintf(stderr, "framelink: echo: REAP: %s\n", strerror(-n));
			end = n;
			break;
		}
		if (n < 0) {
			/* link down and the like: the slots come back failed; keep serving */
			if (n != -EINTR && n != reap_err) {
				fprintf(stderr, "framelink: echo: REAP: %s (retrying)\n",
					strerror(-n));
				/* a transient REAP error is a failure too, remembered by name */
				tally_add(&t, n);
				fail = 1;
			}
			reap_err = n;
			usleep(100000);
			continue;
		}
		reap_err = 0;
		if (!n) {
			if (o->timeout_ms && fl_now_ns() - last > (u64)o->timeout_ms * 1000000)
				break;
			continue;
		}
		last = fl_now_ns();
		for (int k = 0; k < n; k++) {
			struct fl_completion *x = &c[k];

			tally_add(&t, x->status);
			if (x->queue == FL_Q_TX) {
				if (x->status)
					errors++;
				else
					echoed++;
				pending[npending++] = x->buf;
				continue;
			}
			if (x->status) {
				errors++;
				pending[npending++] = x->buf;
				continue;
			}
			invert(fl_dev_buf(&d, x->buf), x->bytes);
			crc_acc ^= fl_crc32(0, fl_dev_buf(&d, x->buf), x->bytes);
			fr = (struct fl_frame){ .buf = x->buf, .bytes = x->bytes, .flags = x->flags,
						.cookie = x->cookie };
			ret = fl_dev_submit(&d, &fr, 1, &acc);
			if (ret) {
				fprintf(stderr, "framelink: echo: SUBMIT slot %u: %s\n", x->buf,
					strerror(-ret));
				tally_add(&t, ret);
				errors++;
				pending[npending++] = x->buf;
			}
		}
		if (npending) {
			ret = fl_dev_post(&d, pending, npending, &acc);
			if (ret == -ENODEV) {
				/* unbound: REAP hands out what is still queued, then ENODEV */
				npending = 0;
				continue;
			}
			if (ret && ret != -EAGAIN) {
				fprintf(stderr, "framelink: echo: POST: %s\n", strerror(-ret));
				end = ret;
				break;
			}
			memmove(pending, pending + acc, (npending - acc) * sizeof(*pending));
			npending -= acc;
		}
	}
	fprintf(stderr, "framelink: echo: %llu frames echoed, %llu errors, crc32 xor %08x\n",
		echoed, errors, crc_acc);
	tally_print(stderr, "framelink: echo", &t, end);
	fl_dev_close(&d);
	/* a stop by signal is a clean end; an errored frame or a fatal REAP is not */
	return fail || end || errors || tally_errors(&t) ? 1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct bench_row {
	u64 size, frames, bytes, ns;
	u64 p50, p99, max;
	u64 irqs, peer_irqs, dma, cpu;
	int peer;
	u64 bad, stale;
	struct tally *t;	/* statuses of every completion, all sizes */
};

/* Byte an RX buffer holds before the endpoint writes it: a missing DMA part shows. */
#define RX_POISON	0xa5

/* First byte of @rx (@n bytes) that is not the inverse of fill_random(@seed), or @n. */
static size_t first_not_inverted(const u8 *rx, size_t n, u64 seed)
{
	u64 s = seed * 0x9e3779b97f4a7c15ull + 1, w, a;
	size_t q, k;

	if (!s)
		s = 1;
	for (q = 0; q < n; q += 8) {
		w = ~rnd_next(&s);
		k = n - q < 8 ? n - q : 8;
		a = 0;
		memcpy(&a, rx + q, k);
		if (memcmp(&a, &w, k))
			for (size_t j = 0; j < k; j++)
				if (rx[q + j] != ((u8 *)&w)[j])
					return q + j;
	}
	return n;
}

/*
 * What the bytes of a frame that came back wrong hold, to tell a missing DMA part (poison),
 * a zeroed page, an echo that never inverted (the sent pattern) and another frame's data
 * apart: counts over the whole frame and the extent of the bad bytes.
 */
static void describe_mismatch(const u8 *rx, size_t n, u64 seed)
{
	u64 s = seed * 0x9e3779b97f4a7c15ull + 1, w = 0;
	size_t q, bad = 0, poison = 0, zero = 0, raw = 0, first = n, last = 0;

	if (!s)
		s = 1;
	for (q = 0; q < n; q++) {
		u8 want, sent;

		if (!(q & 7))
			w = rnd_next(&s);
		sent = ((const u8 *)&w)[q & 7];
		want = (u8)~sent;
		if (rx[q] == want)
			continue;
		bad++;
		first = first < q ? first : q;
		last = q;
		poison += rx[q] == RX_POISON;
		zero += !rx[q];
		raw += rx[q] == sent;
	}
	fprintf(stderr,
		"framelink: bench:   %zu bad bytes in [%zu, %zu]: poison %zu, zero %zu, as sent %zu\n",
		bad, first, last, poison, zero, raw);
}

/* POST one RX buffer again, poisoned first over @bytes (the size the next frame has). */
static int repost(struct fl_dev *d, u32 buf, size_t bytes)
{
	memset(fl_dev_buf(d, buf), RX_POISON, bytes);
	return post_all(d, &buf, 1);
}

/*
 * Cookie of frame F sent from tx buffer B: TAG << 48 | B << 32 | F, TAG random per run so
 * frames still in the peer's pipeline from an earlier stream are recognised and dropped.
 * Every frame's payload is fill_random(cookie): unique per frame, so an echo of stale data
 * (a DMA part that never ran over a buffer that held an earlier frame) cannot pass, and RX
 * buffers are poisoned before every POST.
 */
static int bench_one(struct fl_dev *d, struct fl_dev *peer, const struct opts *o, u64 size,
		     struct bench_row *row)
{
	u32 ntx = d->info.nbufs / 2, i, acc;
	struct fl_completion *c = calloc(MAX_BATCH, sizeof(*c));
	struct fl_frame *f = calloc(MAX_BATCH, sizeof(*f));
	u64 *lat = calloc(o->count, sizeof(*lat));
	u64 *tsub = calloc(o->count, sizeof(*tsub));
	u64 sent = 0, back = 0, t0, seed = fl_now_ns();
	u64 tag = ((seed ^ (seed >> 16) ^ (seed >> 32)) & 0xffff) | 1;
	struct fl_stats s0, s1, p0 = { 0 }, p1 = { 0 };
	u32 *txfree, ntxfree = 0;
	int ret = 0, n;

	struct tally *t = row->t;

	memset(row, 0, sizeof(*row));
	row->t = t;
	row->size = size;
	txfree = calloc(ntx, sizeof(*txfree));
	if (!c || !f || !lat || !tsub || !txfree)
		return -ENOMEM;
	for (i = 0; i < ntx; i++)
		txfree[ntxfree++] = ntx - 1 - i;
	fl_dev_stats(d, &s0);
	if (peer)
		row->peer = !fl_dev_stats(peer, &p0);

	t0 = fl_now_ns();
	while (back < o->count && !stopped()) {
		u32 k = 0;

		while (sent + k < o->count && ntxfree && k < o->batch) {
			u32 b = txfree[--ntxfree];
			u64 cookie = tag << 48 | (u64)b << 32 | (sent + k);

			fill_random(fl_dev_buf(d, b), size, cookie);
			f[k] = (struct fl_frame){ .buf = b, .bytes = (u32)size,
						  .flags = FL_FRAME_EOF, .cookie = cookie };
			tsub[sent + k] = fl_now_ns();
			k++;
		}
		if (k) {
			ret = fl_dev_submit(d, f, k, &acc);
			for (i = k; i-- > acc;)
				txfree[ntxfree++] = f[i].buf;
			sent += acc;
			if (ret && ret != -EAGAIN) {
				fprintf(stderr, "framelink: bench: SUBMIT: %s\n", strerror(-ret));
				break;
			}
			ret = 0;
		}
		n = fl_dev_reap(d, c, MAX_BATCH, 5000);
		if (n <= 0) {
			fprintf(stderr, "framelink: bench: %s after %llu/%llu frames\n",
				n ? strerror(-n) : "no completion in 5 s", back, o->count);
			ret = n ? n : -ETIMEDOUT;
			break;
		}
		for (int j = 0; j < n; j++) {
			struct fl_completion *x = &c[j];
			u64 fno = x->cookie & 0xffffffffu;
			u32 tb = (u32)(x->cookie >> 32) & 0xffff;

			tally_add(row->t, x->status);
			if (x->queue == FL_Q_TX) {
				if (x->status) {
					fprintf(stderr, "framelink: bench: frame %llu tx: %s\n",
						fno, strerror(-x->status));
					row->bad++;
				}
				if (fno < o->count)
					tsub[fno] = x->ts_submit;	/* the driver's clock */
				txfree[ntxfree++] = x->buf;
				continue;
			}
			if (x->status) {
				fprintf(stderr, "framelink: bench: rx buffer %u: %s\n", x->buf,
					strerror(-x->status));
				row->bad++;
			} else if (x->cookie >> 48 != tag) {
				row->stale++;	/* from an earlier stream: not ours */
			} else if (fno >= o->count || tb >= ntx || x->bytes != size) {
				fprintf(stderr,
					"framelink: bench: unexpected frame cookie %#llx, %u bytes\n",
					x->cookie, x->bytes);
				row->bad++;
			} else {
				size_t bad = first_not_inverted(fl_dev_buf(d, x->buf), size,
								x->cookie);

				if (bad != size) {
					fprintf(stderr,
						"framelink: bench: frame %llu (%llu bytes): not inverted at %zu (%#04x)\n",
						fno, size, bad,
						((const u8 *)fl_dev_buf(d, x->buf))[bad]);
					describe_mismatch(fl_dev_buf(d, x->buf), size, x->cookie);
					row->bad++;
				}
				lat[back] = x->ts_delivered - tsub[fno];
				back++;
				row->bytes += x->bytes;
			}
			ret = repost(d, x->buf, size);
			if (ret)
				break;
		}
		if (ret)
			break;
	}
	row->ns = fl_now_ns() - t0;
	row->frames = back;
	fl_dev_stats(d, &s1);
	if (row->peer)
		row->peer = !fl_dev_stats(peer, &p1);
	row->irqs = s1.interrupts - s0.interrupts;
	row->peer_irqs = p1.interrupts - p0.interrupts;
	/* whichever end moves the frames counts them (the endpoint) */
	row->dma = s1.dma_transfers - s0.dma_transfers + p1.dma_transfers - p0.dma_transfers;
	row->cpu = s1.cpu_transfers - s0.cpu_transfers + p1.cpu_transfers - p0.cpu_transfers;
	if (back) {
		qsort(lat, back, sizeof(*lat), cmp_u64);
		row->p50 = lat[(back - 1) / 2];
		row->p99 = lat[(back * 99 + 99) / 100 - 1];
		row->max = lat[back - 1];
	}
	/* drain what is still out so the next size starts clean */
	while (ret == 0 && (ntxfree < ntx || sent > back) && !stopped()) {
		n = fl_dev_reap(d, c, MAX_BATCH, 2000);
		if (n <= 0)
			break;
		for (int j = 0; j < n; j++) {
			if (c[j].queue == FL_Q_TX) {
				txfree[ntxfree++] = c[j].buf;
				continue;
			}
			back++;
			if (repost(d, c[j].buf, size))
				break;
		}
	}
	free(c);
	free(f);
	free(lat);
	free(tsub);
	free(txfree);
	if (!ret && back < o->count)
		ret = -EINTR;
	return ret;
}

static int cmd_bench(struct opts *o)
{
	struct bench_row rows[MAX_SIZES];
	struct fl_dev d, peer;
	int have_peer = 0, fail = 0, r, nrows = 0, end = 0, ret;
	struct tally t = { 0 };
	u64 maxsize = 0;
	u32 ntx, nrx, i, *rxidx;
	char sz[32];

	if (!o->nsizes || !o->count) {
		fprintf(stderr, "framelink: bench: -s SIZES and -n COUNT required\n");
		return 2;
	}
	ret = fl_dev_open(&d, o->dev, 1);
	if (ret) {
		/* the device can vanish (link down, unbind) before the stream starts */
		fprintf(stderr, "framelink: %s: %s\n", o->dev, strerror(-ret));
		tally_print(stdout, "bench", &t, ret);
		return 1;
	}
	if (d.info.nbufs < 2) {
		fprintf(stderr, "framelink: bench: needs at least 2 buffers\n");
		return 1;
	}
	if (o->peer ? !open_dev(&peer, o->peer, 0) :
		      (!access(DEFAULT_EP_DEV, F_OK) && !fl_dev_open(&peer, DEFAULT_EP_DEV, 0)))
		have_peer = 1;
	/* the second half of the buffers receives, posted once for every size */
	ntx = d.info.nbufs / 2;
	nrx = d.info.nbufs - ntx;
	rxidx = calloc(nrx, sizeof(*rxidx));
	if (!rxidx)
		return 1;
	/* poison what the largest frame covers (touching every byte of big buffers is slow) */
	for (r = 0; r < o->nsizes; r++)
		maxsize = o->sizes[r] > maxsize ? o->sizes[r] : maxsize;
	for (i = 0; i < nrx; i++) {
		rxidx[i] = ntx + i;
		memset(fl_dev_buf(&d, ntx + i), RX_POISON,
		       maxsize < d.info.buf_size ? maxsize : d.info.buf_size);
	}
	ret = post_all(&d, rxidx, nrx < d.info.rx_depth ? nrx : d.info.rx_depth);
	if (ret) {
		tally_print(stdout, "bench", &t, ret);
		return 1;
	}
	for (r = 0; r < o->nsizes; r++) {
		if (o->sizes[r] > d.info.buf_size) {
			fprintf(stderr, "framelink: bench: size %llu > buffer size %u\n",
				o->sizes[r], d.info.buf_size);
			fail = 1;
			break;
		}
		rows[nrows].t = &t;
		ret = bench_one(&d, have_peer ? &peer : NULL, o, o->sizes[r], &rows[nrows++]);
		if (ret && ret != -EINTR)
			end = ret;
		if (ret || rows[r].bad)
			fail = 1;
		if (o->max_lat_us && rows[r].max > o->max_lat_us * 1000) {
			fprintf(stderr,
				"framelink: bench: size %llu: max latency %llu us > %llu us\n",
				o->sizes[r], rows[r].max / 1000, o->max_lat_us);
			fail = 1;
		}
		if (fail || stopped())
			break;
	}
	printf("framelink bench: %s, %llu frames per size through the peer's echo, each verified\n",
	       o->dev, o->count);
	printf("GB/s = 10^9 bytes/s of payload one way; latency: SUBMIT to the echoed frame\n"
	       "reaching the driver (CLOCK_MONOTONIC of the driver); irq/fr: interrupts taken\n"
	       "here per frame; peer_irq: the peer's count per frame (an endpoint counts those it\n"
	       "raises); dma_xfer/cpu_xfer: frames moved by DMA / by CPU copy, both directions\n");
	printf("%8s %8s %12s %8s %9s %9s %9s %9s %9s %9s %8s\n", "size", "frames", "bytes",
	       "GB/s", "p50_us", "p99_us", "max_us", "irq/fr", "peer_irq", "dma_xfer", "cpu_xfer");
	for (int k = 0; k < nrows; k++) {
		struct bench_row *w = &rows[k];
		double fr = w->frames ? (double)w->frames : 1;
		char pi[16] = "-", pd[16] = "-", pc[16] = "-";

		if (w->peer)
			snprintf(pi, sizeof(pi), "%.3f", (double)w->peer_irqs / fr);
		if (w->peer || w->dma || w->cpu) {
			snprintf(pd, sizeof(pd), "%llu", w->dma);
			snprintf(pc, sizeof(pc), "%llu", w->cpu);
		}
		printf("%8s %8llu %12llu %8.3f %9.1f %9.1f %9.1f %9.3f %9s %9s %8s%s\n",
		       human(w->size, sz, sizeof(sz)), w->frames, w->bytes,
		       w->ns ? (double)w->bytes / (double)w->ns : 0.0, (double)w->p50 / 1e3,
		       (double)w->p99 / 1e3, (double)w->max / 1e3, (double)w->irqs / fr, pi, pd,
		       pc, w->bad ? "  FAILED" : "");
	}
	for (int k = 0; k < nrows; k++)
		if (rows[k].stale)
			printf("%llu frame(s) of an earlier stream dropped at size %llu\n",
			       rows[k].stale, rows[k].size);
	tally_print(stdout, "bench", &t, end);
	printf("result: %s\n", fail ? "FAIL" : "PASS (all frames verified)");
	if (have_peer)
		fl_dev_close(&peer);
	fl_dev_close(&d);
	return fail;
}

static int check_fail;

static void expect(const char *name, int got, int want)
{
	if (got == want) {
		printf("ok - %s\n", name);
	} else {
		printf("not ok - %s: got %d (%s), want %d (%s)\n", name, got,
		       got < 0 ? strerror(-got) : "success", want,
		       want < 0 ? strerror(-want) : "success");
		check_fail = 1;
	}
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * API conformance: every ioctl's documented errors, `done` on a bad batch entry, buffer
 * ownership, and (with an echo on the peer) that a REAP into a bad pointer loses nothing.
 */
static int cmd_check(struct opts *o)
{
	u32 nb, bs, idx, acc = 0;
	struct fl_completion c[4];
	struct fl_frame f[2];
	struct fl_batch b;
	struct fl_reap r;
	struct fl_dev d;
	struct pollfd pfd;
	void *p;
	int ret, n;

	if (open_dev(&d, o->dev, 1))
		return 1;
	nb = d.info.nbufs;
	bs = d.info.buf_size;
	if (nb < 2) {
		fprintf(stderr, "framelink: check needs 2 buffers\n");
		return 1;
	}
	expect("unknown ioctl: ENOTTY", xioctl(d.fd, _IO(FL_IOC_MAGIC, 0x7f), NULL), -ENOTTY);
	expect("INFO to NULL: EFAULT", xioctl(d.fd, FL_IOC_INFO, NULL), -EFAULT);
	expect("STATS to NULL: EFAULT", xioctl(d.fd, FL_IOC_STATS, NULL), -EFAULT);
	expect("SUBMIT batch at NULL: EFAULT", xioctl(d.fd, FL_IOC_SUBMIT, NULL), -EFAULT);

	memset(f, 0, sizeof(f));
	f[0] = (struct fl_frame){ .buf = 0, .bytes = 64, .flags = FL_FRAME_EOF, .cookie = 1 };
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = 1, .flags = 1 };
	expect("SUBMIT batch flags: EINVAL", xioctl(d.fd, FL_IOC_SUBMIT, &b), -EINVAL);
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = 1, .reserved = 1 };
	expect("SUBMIT batch reserved: EINVAL", xioctl(d.fd, FL_IOC_SUBMIT, &b), -EINVAL);
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = 0 };
	expect("SUBMIT count 0: EINVAL", xioctl(d.fd, FL_IOC_SUBMIT, &b), -EINVAL);
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = FL_RING_MAX_ENTRIES + 1 };
	expect("SUBMIT count too large: EINVAL", xioctl(d.fd, FL_IOC_SUBMIT, &b), -EINVAL);
	b = (struct fl_batch){ .ptr = 8, .count = 1 };
	expect("SUBMIT entries unmapped: EFAULT", xioctl(d.fd, FL_IOC_SUBMIT, &b), -EFAULT);

	f[0].reserved = 1;
	expect("SUBMIT frame reserved: EINVAL", fl_dev_submit(&d, f, 1, &acc), -EINVAL);
	f[0].reserved = 0;
	f[0].flags = 0x80;
	expect("SUBMIT unknown frame flag: EINVAL", fl_dev_submit(&d, f, 1, &acc), -EINVAL);
	f[0].flags = FL_FRAME_EOF;
	f[0].buf = nb;
	expect("SUBMIT buffer index out of range: EINVAL", fl_dev_submit(&d, f, 1, &acc), -EINVAL);
	f[0].buf = 0;
	f[0].bytes = 0;
	expect("SUBMIT zero bytes: EINVAL", fl_dev_submit(&d, f, 1, &acc), -EINVAL);
	f[0].bytes = bs + 1;
	expect("SUBMIT larger than the buffer: EMSGSIZE", fl_dev_submit(&d, f, 1, &acc),
	       -EMSGSIZE);
	expect("  done = 0", (int)acc, 0);

	expect("POST index out of range: EINVAL", fl_dev_post(&d, &nb, 1, &acc), -EINVAL);
	b = (struct fl_batch){ .ptr = 8, .count = 1 };
	expect("POST entries unmapped: EFAULT", xioctl(d.fd, FL_IOC_POST, &b), -EFAULT);

	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 0 };
	expect("REAP max 0: EINVAL", xioctl(d.fd, FL_IOC_REAP, &r), -EINVAL);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 4, .timeout_ms = -1 };
	expect("REAP negative timeout: EINVAL", xioctl(d.fd, FL_IOC_REAP, &r), -EINVAL);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 4,
			      .timeout_ms = FL_REAP_MAX_TIMEOUT_MS + 1 };
	expect("REAP timeout too long: EINVAL", xioctl(d.fd, FL_IOC_REAP, &r), -EINVAL);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 4, .flags = 1 };
	expect("REAP flags: EINVAL", xioctl(d.fd, FL_IOC_REAP, &r), -EINVAL);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 4, .reserved = 1 };
	expect("REAP reserved: EINVAL", xioctl(d.fd, FL_IOC_REAP, &r), -EINVAL);
	expect("REAP timeout 0, nothing pending: 0 completions",
	       fl_dev_reap(&d, c, 4, 0), 0);

	p = mmap(NULL, (size_t)bs, PROT_READ, MAP_SHARED, d.fd,
		 (off_t)(d.info.mmap_offset + (u64)nb * bs));
	expect("mmap past the buffers: EINVAL", p == MAP_FAILED ? -errno : 0, -EINVAL);
	if (p != MAP_FAILED)
		munmap(p, bs);

	/* ownership: a frame in flight is not the app's */
	idx = 1;
	ret = fl_dev_post(&d, &idx, 1, &acc);
	expect("POST buffer 1", ret, 0);
	memset(fl_dev_buf(&d, 0), 0x5a, 64);
	f[0] = (struct fl_frame){ .buf = 0, .bytes = 64, .flags = FL_FRAME_EOF, .cookie = 7 };
	f[1] = (struct fl_frame){ .buf = nb, .bytes = 64 };
	expect("SUBMIT [good, bad index]: EINVAL", fl_dev_submit(&d, f, 2, &acc), -EINVAL);
	expect("  done = 1 (the good frame is queued)", (int)acc, 1);
	expect("SUBMIT buffer in flight: EBUSY", fl_dev_submit(&d, f, 1, &acc), -EBUSY);
	expect("POST buffer in flight: EBUSY", fl_dev_post(&d, &f[0].buf, 1, &acc), -EBUSY);
	expect("POST buffer already posted: EBUSY", fl_dev_post(&d, &idx, 1, &acc), -EBUSY);

	/* with an echo on the peer the frame completes; otherwise close cancels it */
	pfd = (struct pollfd){ .fd = d.fd, .events = POLLIN };
	n = poll(&pfd, 1, o->timeout_ms);
	if (n == 1 && (pfd.revents & POLLIN)) {
		printf("ok - poll: POLLIN for the completion\n");
		r = (struct fl_reap){ .ptr = 8, .max = 4 };
		expect("REAP into unmapped memory: EFAULT", xioctl(d.fd, FL_IOC_REAP, &r), -EFAULT);
		n = fl_dev_reap(&d, c, 1, 5000);
		expect("REAP after EFAULT: the completion is still there", n, 1);
		if (n == 1) {
			expect("  it is the TX of buffer 0", (int)(c[0].queue * 100 + c[0].buf),
			       FL_Q_TX * 100);
			expect("  status 0", c[0].status, 0);
			expect("  cookie echoed", (int)c[0].cookie, 7);
		}
	} else {
		printf("ok - poll: no completion in %d ms (no echo on the peer) # SKIP\n",
		       o->timeout_ms);
	}
	fl_dev_close(&d);
	printf("%s\n", check_fail ? "check: FAIL" : "check: PASS");
	return check_fail;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "batch", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 't' },
		{ "peer", required_argument, NULL, 'p' },
		{ "verify", no_argument, NULL, 'V' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "max-latency-us", required_argument, NULL, 'L' },
		{ "crc", no_argument, NULL, 'C' },
		{ "export", no_argument, NULL, 'E' },
		{ "save", required_argument, NULL, 'S' },
		{ "count-errors", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct opts o = { .batch = 8, .timeout_ms = -1 };
	struct sigaction sa = { 0 };
	const char *cmd;
	u64 v;
	int ch;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "stream"))
		return cmd_stream(argc, argv);
	if (!strcmp(cmd, "capture"))
		return cmd_capture(argc, argv);
	optind = 2;
	while ((ch = getopt_long(argc, argv, "d:s:n:b:t:p:L:vVh", lopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			o.dev = optarg;
			break;
		case 's':
			/* export: a slot index, 0 included */
			if (!strcmp(cmd, "export")) {
				if (fl_parse_size(optarg, &o.sizes[0]) || o.sizes[0] > UINT32_MAX)
					return 2;
				o.nsizes = 1;
				break;
			}
			if (parse_sizes(optarg, &o)) {
				fprintf(stderr, "framelink: bad size list '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (fl_parse_size(optarg, &o.count))
				return 2;
			break;
		case 'b':
			if (fl_parse_size(optarg, &v) || !v || v > MAX_BATCH)
				return 2;
			o.batch = (u32)v;
			break;
		case 't':
			if (fl_parse_size(optarg, &v) || v > FL_REAP_MAX_TIMEOUT_MS)
				return 2;
			o.timeout_ms = (int)v;
			break;
		case 'p':
			o.peer = optarg;
			break;
		case 'L':
			if (fl_parse_size(optarg, &o.max_lat_us))
				return 2;
			break;
		case 'V':
			o.verify = 1;
			break;
		case 'C':
			o.crc = 1;
			break;
		case 'E':
			o.export = 1;
			break;
		case 'S':
			o.save = optarg;
			break;
		case 'X':
			o.count_errors = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if ((o.crc || o.export || o.save) && strcmp(cmd, "recv")) {
		fprintf(stderr, "framelink: --crc, --export and --save are recv options\n");
		return 2;
	}
	if (!o.dev)
		o.dev = strcmp(cmd, "echo") && strcmp(cmd, "export") ? DEFAULT_HOST_DEV :
			DEFAULT_EP_DEV;
	/* no SA_RESTART: a blocking REAP returns EINTR and the loops see the stop at once */
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (!strcmp(cmd, "info"))
		return cmd_info(&o);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(&o);
	if (!strcmp(cmd, "export")) {
		if (o.nsizes != 1) {
			fprintf(stderr, "framelink: export: -s SLOT required\n");
			return 2;
		}
		return cmd_export(&o);
	}
	if (!strcmp(cmd, "send")) {
		if (!o.count) {
			fprintf(stderr, "framelink: send: -n COUNT required\n");
			return 2;
		}
		if (o.timeout_ms < 0)
			o.timeout_ms = 10000;
		return cmd_send(&o);
	}
	if (!strcmp(cmd, "recv")) {
		if (o.timeout_ms < 0)
			o.timeout_ms = 10000;
		return cmd_recv(&o);
	}
	if (!strcmp(cmd, "echo")) {
		if (o.timeout_ms < 0)
			o.timeout_ms = 0;
		return cmd_echo(&o);
	}
	if (!strcmp(cmd, "bench"))
		return cmd_bench(&o);
	if (!strcmp(cmd, "check")) {
		if (o.timeout_ms < 0)
			o.timeout_ms = 5000;
		return cmd_check(&o);
	}
	fprintf(stderr, "framelink: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
