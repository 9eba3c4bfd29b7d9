// SPDX-License-Identifier: GPL-2.0
/*
 * framelink stream: one-way or two-way streams between a host device and an endpoint device
 * that this process opens both of (the lab, where both ends are one machine), for `make
 * bench`:
 *
 *   framelink stream -m h2e|e2h|both -s SIZE -n COUNT [-q DEPTH] [-d HOSTDEV] [-p EPDEV]
 *                    [--csv] [--extra-copy] [--verify]
 *
 * Each end runs in its own thread and waits on its own device only, as on two boards (one
 * poll() over both devices would let an endpoint event harvest the host's completions without
 * the host's interrupt). Each sender keeps up to DEPTH frames in flight (submitted, its buffer
 * not yet completed): DEPTH 1 is the one-frame-at-a-time control. Each frame's cookie is
 * stamped into its first and last 8 bytes, which the receiver checks and poisons (payload.h),
 * so a frame that did not arrive, or arrived short, cannot pass for a later one. --verify
 * checks every byte: the cookie also at the start of each 4 KiB page, each sender buffer
 * filled with a pattern of its own before the run, and the receiver compares a 64-bit sum
 * over the frame. That is one more read of every frame on the receiving end, and a store to
 * every page on the sending end, so make bench runs it beside the timed runs, not in them.
 * --extra-copy makes the receiver copy every frame once more before it checks it: make
 * bench's negative control, a data path with one copy too many, which must miss the target.
 *
 * Per direction it prints frames, GB/s (10^9 bytes/s of payload, first SUBMIT to the last
 * frame's delivery on the receiving end: the whole run), frames/s, latency (SUBMIT on one
 * end to delivery on the other: both ends share CLOCK_MONOTONIC, as the completions'
 * timestamps do), interrupts per frame taken by the host and raised by the endpoint, and
 * the frames the endpoint moved by DMA and by CPU copy. Latency, interrupts and link reads
 * are those of the steady stream: the frames after the first DEPTH and before the last
 * DEPTH (the pipeline filling and draining is not saturation; a run shorter than three
 * times DEPTH counts all of it), the counters read when the receiver got to those frames.
 * --csv adds one "csv," line per direction, with two more measures: the reaction time
 * (SUBMIT to the endpoint issuing the frame's copy, from the completions' ts_dma_start:
 * with one frame in flight the doorbell-to-DMA time, with more it includes waiting for the
 * frames ahead) as p50/p99/max, the CPU loads across the link per frame (both ends'
 * link_reads), and the CPU time per frame of each end's application thread (host, then
 * endpoint: CLOCK_THREAD_CPUTIME_ID over the thread's loop, its ioctls included; a frame of
 * either direction in a two-way run).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libframelink.h"
#include "payload.h"
#include "stream.h"

#define ST_MAX_BATCH	FL_RING_MAX_ENTRIES

/* One direction: @tx sends from its buffers @txb, @rx receives into its buffers @rxb. */
struct st_dir {
	const char *name;
	struct fl_dev *tx, *rx;
	u32 txb[ST_MAX_BATCH], ntxfree, ntx, txfirst;
	u32 rxb[ST_MAX_BATCH], nrx;
	struct pl_sum sum[ST_MAX_BATCH];	/* --verify: by sender buffer - txfirst */
	u64 count, sent, received, bad, txbad, tag;
	u64 *tsub, *lat, nlat, *react, nreact;
	u32 *tbuf;				/* the sender buffer of each frame */
	u64 t0, t_last;
	u64 w_lo, w_hi;				/* the steady window: frames [w_lo, w_hi) */
	u8 *scratch;				/* --extra-copy: where each frame is copied */
	struct fl_stats w_tx[2], w_rx[2];	/* both ends' counters at w_lo and w_hi */
};

/* p50, p99 and max of @n samples (sorted in place) */
struct st_pct {
	u64 p50, p99, max;
};

struct st_opts {
	const char *host, *ep, *mode;
	u64 size, count;
	u32 depth;
	int csv, extra_copy, verify;
};

/*
 * Frame @fno of @s, received in @buf: every stamp holds the cookie (then poisoned for the
 * buffer's next use) and, with --verify, the sum matches the sender buffer's. NULL, or what
 * is wrong.
 */
static const char *st_check(struct st_dir *s, const struct st_opts *o, u32 buf, u64 cookie,
			    u64 fno)
{
	u8 *p = fl_dev_buf(s->rx, buf);
	struct pl_sum sum;
	u32 tb;

	if (!pl_take_stamps(p, o->size, cookie, o->verify))
		return "stamp";
	if (!o->verify)
		return NULL;
	tb = __atomic_load_n(&s->tbuf[fno], __ATOMIC_ACQUIRE) - s->txfirst;
	sum = pl_sum(p, o->size);
	if (tb >= s->ntx || sum.a != s->sum[tb].a || sum.b != s->sum[tb].b)
		return "payload sum";
	return NULL;
}

/* Buffers @first..@first+@n-1 of @d: the sender's free list or the receiver's posted set */
static int st_dir_init(struct st_dir *s, const struct st_opts *o, u32 txfirst, u32 ntx,
		       u32 rxfirst, u32 nrx)
{
	u32 i;

	s->count = o->count;
	/* the steady window; all of a run too short to have one */
	s->w_lo = o->count >= 3ull * o->depth ? o->depth : 0;
	s->w_hi = o->count - s->w_lo;
	s->tag = ((fl_now_ns() >> 10) & 0xffff) | 1;
	s->tsub = calloc(o->count, sizeof(*s->tsub));
	s->lat = calloc(o->count, sizeof(*s->lat));
	s->react = calloc(o->count, sizeof(*s->react));
	s->tbuf = calloc(o->count, sizeof(*s->tbuf));
	if (!s->tsub || !s->lat || !s->react || !s->tbuf)
		return -ENOMEM;
	if (o->extra_copy) {
		s->scratch = malloc(o->size);
		if (!s->scratch)
			return -ENOMEM;
		/* touched now: the copies in the run fault nothing in */
		memset(s->scratch, 0, o->size);
	}
	ntx = ntx < o->depth ? ntx : o->depth;
	ntx = ntx < ST_MAX_BATCH ? ntx : ST_MAX_BATCH;
	nrx = nrx < s->rx->info.rx_depth ? nrx : s->rx->info.rx_depth;
	nrx = nrx < ST_MAX_BATCH ? nrx : ST_MAX_BATCH;
	for (i = 0; i < ntx; i++) {
		s->txb[s->ntxfree++] = txfirst + ntx - 1 - i;
		if (o->verify)
			s->sum[i] = pl_fill(fl_dev_buf(s->tx, txfirst + i), o->size, s->tag,
					    txfirst + i);
	}
	s->ntx = ntx;
	s->txfirst = txfirst;
	for (i = 0; i < nrx; i++) {
		s->rxb[i] = rxfirst + i;
		pl_take_stamps(fl_dev_buf(s->rx, rxfirst + i), o->size, 0, 1);	/* poison */
	}
	s->nrx = nrx;
	return fl_dev_post(s->rx, s->rxb, nrx, NULL);
}

/* SUBMIT what the depth, the free buffers and the count allow, in one batch */
static int st_dir_send(struct st_dir *s, const struct st_opts *o)
{
	struct fl_frame f[ST_MAX_BATCH];
	u32 k = 0, acc = 0, i;
	int ret;

	while (s->sent + k < s->count && s->ntxfree) {
		u32 b = s->txb[--s->ntxfree];
		u64 cookie = s->tag << 48 | (s->sent + k);

		pl_stamp(fl_dev_buf(s->tx, b), o->size, cookie, o->verify);
		__atomic_store_n(&s->tbuf[s->sent + k], b, __ATOMIC_RELEASE);
		f[k] = (struct fl_frame){ .buf = b, .bytes = (u32)o->size, .flags = FL_FRAME_EOF,
					  .cookie = cookie };
		k++;
	}
	if (!k)
		return 0;
	if (!s->sent)
		s->t0 = fl_now_ns();
	/* read by the receiving end's thread once the frame arrived there */
	for (i = 0; i < k; i++)
		__atomic_store_n(&s->tsub[s->sent + i], fl_now_ns(), __ATOMIC_RELEASE);
	ret = fl_dev_submit(s->tx, f, k, &acc);
	for (i = k; i-- > acc;)
		s->txb[s->ntxfree++] = f[i].buf;
	s->sent += acc;
	return ret == -EAGAIN ? 0 : ret;
}

/* Both ends' counters as the receiver gets to the steady window's first and last frame */
static void st_window(struct st_dir *s, u64 received)
{
	int k = received == s->w_hi - 1;

	if (received != s->w_lo && !k)
		return;
	fl_dev_stats(s->tx, &s->w_tx[k]);
	fl_dev_stats(s->rx, &s->w_rx[k]);
}

static int st_dir_rx(struct st_dir *s, const struct st_opts *o, const struct fl_completion *c)
{
	u64 fno = c->cookie & 0xffffffffu;
	const char *wrong = "header";

	/*
	 * The bench's negative control (make bench): one more copy of every frame on the
	 * receiving end's path, as a data path with a bounce buffer would make
	 */
	if (s->scratch && !c->status && c->bytes <= o->size) {
		memcpy(s->scratch, fl_dev_buf(s->rx, c->buf), c->bytes);
		__asm__ __volatile__("" : : "r"(s->scratch) : "memory");
	}

	if (!c->status && c->cookie >> 48 == s->tag && fno < s->count && c->bytes == o->size)
		wrong = st_check(s, o, c->buf, c->cookie, fno);
	if (wrong) {
		fprintf(stderr, "framelink: stream %s: bad frame (%s): buf %u cookie %#llx",
			s->name, wrong, c->buf, c->cookie);
		fprintf(stderr, " %u bytes status %d\n", c->bytes, c->status);
		s->bad++;
	} else {
		/* good frames only, in arrival order: st_print() sorts the first n */
		u64 tsub = __atomic_load_n(&s->tsub[fno], __ATOMIC_ACQUIRE);

		if (fno >= s->w_lo && fno < s->w_hi)
			s->lat[s->nlat++] = c->ts_delivered - tsub;
		/* SUBMIT (the doorbell for h2e) to the endpoint issuing the copy */
		if (c->ts_dma_start > tsub)
			s->react[s->nreact++] = c->ts_dma_start - tsub;
		s->t_last = c->ts_delivered;
	}
	st_window(s, s->received);
	s->received++;
	return fl_dev_post(s->rx, &c->buf, 1, NULL);
}

/* Hand each completion reaped on @d to the direction it belongs to */
static int st_reap(struct fl_dev *d, struct st_dir *dirs, int ndirs, const struct st_opts *o)
{
	struct fl_completion c[ST_MAX_BATCH];
	int n = fl_dev_reap(d, c, ST_MAX_BATCH, 0), i, k, ret = 0;

	for (i = 0; i < n && !ret; i++)
		for (k = 0; k < ndirs; k++) {
			struct st_dir *s = &dirs[k];

			if (c[i].queue == FL_Q_TX && s->tx == d) {
				if (c[i].status)
					s->txbad++;
				s->txb[s->ntxfree++] = c[i].buf;
				break;
			}
			if (c[i].queue == FL_Q_RX && s->rx == d) {
				ret = st_dir_rx(s, o, &c[i]);
				break;
			}
		}
	return n < 0 ? n : ret;
}

/* One end: the device it waits on and the directions it sends or receives */
struct st_end {
	struct fl_dev *d;
	struct st_dir *dirs;
	int ndirs;
	const struct st_opts *o;
	pthread_t thread;
	int ret;
	u64 cpu_ns;	/* the thread's CPU time over its loop (its ioctls included) */
};

/* Frames still to send, sender buffers still out, or frames still to receive on this end */
static int st_end_busy(const struct st_end *e)
{
	int k;

	for (k = 0; k < e->ndirs; k++) {
		const struct st_dir *s = &e->dirs[k];

		if (s->tx == e->d && (s->sent < s->count || s->ntxfree < s->ntx))
			return 1;
		if (s->rx == e->d && s->received < s->count)
			return 1;
	}
	return 0;
}

static int st_end_loop(struct st_end *e)
{
	struct pollfd p = { .fd = e->d->fd, .events = POLLIN };
	int k, ret;

	for (;;) {
		for (k = 0; k < e->ndirs; k++) {
			if (e->dirs[k].tx != e->d)
				continue;
			ret = st_dir_send(&e->dirs[k], e->o);
			if (ret)
				return ret;
		}
		if (!st_end_busy(e))
			return 0;
		ret = poll(&p, 1, 10000);
		if (ret <= 0)
			return ret ? -errno : -ETIMEDOUT;
		if (p.revents & POLLIN) {
			ret = st_reap(e->d, e->dirs, e->ndirs, e->o);
			if (ret)
				return ret;
		}
		if (p.revents & (POLLERR | POLLHUP))
			return -EIO;
	}
}

/* This thread's CPU time in ns (user and system: the loop's ioctls are its system time) */
static u64 st_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static void *st_end_thread(void *arg)
{
	struct st_end *e = arg;
	u64 t0 = st_thread_cpu_ns();

	e->ret = st_end_loop(e);
	e->cpu_ns = st_thread_cpu_ns() - t0;
	return NULL;
}

/* The host's end and the endpoint's end, each in its own thread; their CPU time to @cpu_ns */
static int st_run(struct fl_dev *h, struct fl_dev *e, struct st_dir *dirs, int ndirs,
		  const struct st_opts *o, u64 cpu_ns[2])
{
	struct st_end ends[2] = { { .d = h, .dirs = dirs, .ndirs = ndirs, .o = o },
				  { .d = e, .dirs = dirs, .ndirs = ndirs, .o = o } };
	int k, started = 0, ret = 0;

	for (k = 0; k < 2; k++) {
		ret = -pthread_create(&ends[k].thread, NULL, st_end_thread, &ends[k]);
		if (ret)
			break;
		started++;
	}
	for (k = 0; k < started; k++) {
		pthread_join(ends[k].thread, NULL);
		if (!ret)
			ret = ends[k].ret;
		cpu_ns[k] = ends[k].cpu_ns;
	}
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static struct st_pct st_pct(u64 *v, u64 n)
{
	struct st_pct p = { 0 };

	if (n) {
		qsort(v, n, sizeof(*v), cmp_u64);
		p.p50 = v[(n - 1) / 2];
		p.p99 = v[(n * 99 + 99) / 100 - 1];
		p.max = v[n - 1];
	}
	return p;
}

static void st_delta(struct fl_stats *d, const struct fl_stats *a, const struct fl_stats *b)
{
	d->interrupts = b->interrupts - a->interrupts;
	d->dma_transfers = b->dma_transfers - a->dma_transfers;
	d->cpu_transfers = b->cpu_transfers - a->cpu_transfers;
	d->link_reads = b->link_reads - a->link_reads;
}

/*
 * The host's and the endpoint's counters over @s's steady window, *@fr the frames they
 * count for (interrupts are shared by both directions of a two-way stream: per frame of
 * either). Zeroes when the run did not get through its window.
 */
static void st_window_stats(const struct st_dir *s, int ndirs, struct fl_stats *w_h,
			    struct fl_stats *w_e, double *fr)
{
	int h2e = s->tx->info.role == FL_ROLE_HOST;

	*w_h = (struct fl_stats){ 0 };
	*w_e = (struct fl_stats){ 0 };
	*fr = (double)(s->w_hi - 1 - s->w_lo) * ndirs;
	if (s->received < s->w_hi || *fr <= 0) {
		*fr = 1;
		return;
	}
	st_delta(w_h, h2e ? &s->w_tx[0] : &s->w_rx[0], h2e ? &s->w_tx[1] : &s->w_rx[1]);
	st_delta(w_e, h2e ? &s->w_rx[0] : &s->w_tx[0], h2e ? &s->w_rx[1] : &s->w_tx[1]);
}

/*
 * @app_us: CPU microseconds per frame of the host's and the endpoint's application thread
 * (a frame of either direction in a two-way run)
 */
static void st_print(const struct st_dir *s, const struct st_opts *o, const struct fl_stats *d_e,
		     int ndirs, const double app_us[2])
{
	u64 n = s->received - s->bad, bad = s->bad + s->txbad;
	u64 ns = s->t_last > s->t0 ? s->t_last - s->t0 : 1;
	struct st_pct lat = st_pct(s->lat, s->nlat), react = st_pct(s->react, s->nreact);
	u64 p50 = lat.p50, p99 = lat.p99, max = lat.max;
	struct fl_stats w_h, w_e;
	double gbps, fps, fr;

	gbps = (double)(n * o->size) / (double)ns;
	fps = (double)n * 1e9 / (double)ns;
	st_window_stats(s, ndirs, &w_h, &w_e, &fr);
	printf("%-5s %8llu %8llu %3u %8.3f %9.1f %9.1f %9.1f %9.1f %7.3f %7.3f %7llu %7llu %4llu\n",
	       s->name, o->size, n, o->depth, gbps, fps, p50 / 1e3, p99 / 1e3, max / 1e3,
	       w_h.interrupts / fr, w_e.interrupts / fr, d_e->dma_transfers, d_e->cpu_transfers,
	       bad);
	if (!o->csv)
		return;
	printf("csv,%s,%s,%llu,%u,%llu,%llu,", o->mode, s->name, o->size, o->depth, n, ns);
	printf("%.6f,%.1f,%.1f,%.1f,%.1f,", gbps, fps, p50 / 1e3, p99 / 1e3, max / 1e3);
	printf("%.4f,%.4f,%llu,%llu,%llu,", w_h.interrupts / fr, w_e.interrupts / fr,
	       d_e->dma_transfers, d_e->cpu_transfers, bad);
	printf("%.1f,%.1f,%.1f,%.4f,", react.p50 / 1e3, react.p99 / 1e3, react.max / 1e3,
	       (w_h.link_reads + w_e.link_reads) / fr);
	printf("%.1f,%.1f\n", app_us[0], app_us[1]);
}

static int st_parse(int argc, char **argv, struct st_opts *o)
{
	static const struct option lo[] = { { "csv", no_argument, NULL, 'c' },
					    { "extra-copy", no_argument, NULL, 'x' },
					    { "verify", no_argument, NULL, 'v' }, { } };
	char *end;
	int ch;

	*o = (struct st_opts){ .host = "/dev/framelink0", .ep = "/dev/framelink-ep0",
			       .depth = 8 };
	optind = 2;
	while ((ch = getopt_long(argc, argv, "d:p:m:s:n:q:", lo, NULL)) != -1) {
		switch (ch) {
		case 'd':
			o->host = optarg;
			break;
		case 'p':
			o->ep = optarg;
			break;
		case 'm':
			o->mode = optarg;
			break;
		case 's':
			o->size = strtoull(optarg, &end, 0);
			if (*end == 'K' || *end == 'k')
				o->size <<= 10;
			else if (*end == 'M' || *end == 'm')
				o->size <<= 20;
			break;
		case 'n':
			o->count = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			o->depth = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			o->csv = 1;
			break;
		case 'x':
			o->extra_copy = 1;
			break;
		case 'v':
			o->verify = 1;
			break;
		default:
			return -EINVAL;
		}
	}
	if (!o->mode || (strcmp(o->mode, "h2e") && strcmp(o->mode, "e2h") &&
			 strcmp(o->mode, "both")) || o->size < 16 || !o->count || !o->depth)
		return -EINVAL;
	return 0;
}

/* Split the buffers of both ends between the directions the mode runs */
static int st_setup(struct fl_dev *h, struct fl_dev *e, const struct st_opts *o,
		    struct st_dir *dirs, int *ndirs)
{
	int both = !strcmp(o->mode, "both"), ret = 0;
	u32 hh = both ? h->info.nbufs / 2 : h->info.nbufs;
	u32 eh = both ? e->info.nbufs / 2 : e->info.nbufs;

	*ndirs = 0;
	if (o->size > h->info.buf_size || o->size > e->info.buf_size)
		return -EMSGSIZE;
	if (both || !strcmp(o->mode, "h2e")) {
		dirs[*ndirs] = (struct st_dir){ .name = "h2e", .tx = h, .rx = e };
		ret = st_dir_init(&dirs[(*ndirs)++], o, 0, hh, 0, eh);
	}
	if (!ret && (both || !strcmp(o->mode, "e2h"))) {
		dirs[*ndirs] = (struct st_dir){ .name = "e2h", .tx = e, .rx = h };
		ret = st_dir_init(&dirs[(*ndirs)++], o, both ? eh : 0, eh, both ? hh : 0, hh);
	}
	return ret;
}

int cmd_stream(int argc, char **argv)
{
	struct fl_stats e0, e1, de = { 0 };
	struct st_dir dirs[2] = { 0 };
	u64 cpu_ns[2] = { 0 }, frames = 0;
	double app_us[2];
	struct fl_dev h, e;
	struct st_opts o;
	int ndirs = 0, k, ret, fail = 0;

	if (st_parse(argc, argv, &o)) {
		fputs("usage: framelink stream -m h2e|e2h|both -s SIZE -n COUNT", stderr);
		fputs(" [-q DEPTH] [-d HOSTDEV] [-p EPDEV] [--csv] [--extra-copy] [--verify]\n",
		      stderr);
		return 2;
	}
	ret = fl_dev_open(&h, o.host, 1);
	if (!ret)
		ret = fl_dev_open(&e, o.ep, 1);
	if (ret) {
		fprintf(stderr, "framelink: stream: %s\n", strerror(-ret));
		return 1;
	}
	ret = st_setup(&h, &e, &o, dirs, &ndirs);
	fl_dev_stats(&e, &e0);
	if (!ret)
		ret = st_run(&h, &e, dirs, ndirs, &o, cpu_ns);
	fl_dev_stats(&e, &e1);
	st_delta(&de, &e0, &e1);
	if (ret)
		fprintf(stderr, "framelink: stream %s: %s\n", o.mode, strerror(-ret));
	printf("%-5s %8s %8s %3s %8s %9s %9s %9s %9s %7s %7s %7s %7s %4s\n", "dir", "size",
	       "frames", "q", "GB/s", "frames/s", "p50_us", "p99_us", "max_us", "irq/fr",
	       "raise/fr", "dma", "cpu", "bad");
	for (k = 0; k < ndirs; k++)
		frames += dirs[k].received;
	for (k = 0; k < 2; k++)
		app_us[k] = frames ? cpu_ns[k] / 1e3 / (double)frames : 0;
	for (k = 0; k < ndirs; k++) {
		st_print(&dirs[k], &o, &de, ndirs, app_us);
		fail |= dirs[k].bad || dirs[k].txbad || dirs[k].received < dirs[k].count;
		free(dirs[k].tsub);
		free(dirs[k].lat);
		free(dirs[k].react);
		free(dirs[k].tbuf);
		free(dirs[k].scratch);
	}
	printf("cpu per frame: host application %.1f us, endpoint application %.1f us",
	       app_us[0], app_us[1]);
	printf(" (ioctls included%s)\n", o.verify ? ", every byte checked" : "");
	fl_dev_close(&e);
	fl_dev_close(&h);
	return ret || fail;
}
