// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-testtool: what the VM tests do to a device that no application does, kept out
 * of the user's CLI (tools/framelink): raw 32-bit loads and stores on a BAR (a hostile or
 * broken host), buffer mappings held across a device's removal, a REAP waiting across a
 * link cut.
 *
 *   framelink-testtool peek FILE OFFSET LENGTH
 *                          hex dump of an mmap()able file, e.g. a PCI BAR's sysfs resourceN:
 *                          the host's view, read only
 *   framelink-testtool poke FILE OFFSET VALUE...
 *                          32-bit stores into such a file: a hostile host writing the
 *                          endpoint's BAR0
 *   framelink-testtool hold DEV READY GO [race|submit|import|keep-import]
 *                          keep the buffers mapped across a removal, then report SIGBUS vs
 *                          data per page; IMPORT then
 *   framelink-testtool reap-cut DEV READY
 *                          frames queued, REAP waiting across a link cut
 *   framelink-testtool pcitest-time DEV r|w SIZE COUNT
 *                          the kernel's pci-epf-test DMA transfers timed from user space
 *                          (make bench: the same measure as framelink's streams)
 *   framelink-testtool stat DEV NAME
 *                          one counter of FL_IOC_STATS (a name `framelink stats` prints)
 *   framelink-testtool stat-wait DEV NAME gt|ge VALUE MS
 *                          wait up to MS milliseconds for the counter to pass VALUE,
 *                          polling every 5 ms in this process: one program where a shell
 *                          loop ran three a poll (~0.15 s each in the test VM)
 *
 * OFFSET, LENGTH and VALUE take 0x and K/M suffixes. Exit status: 0 when the command did
 * what it checks, 1 on a failure, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/dma-heap.h>
#include <linux/pcitest.h>

#include "libframelink.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"framelink-testtool COMMAND [arguments]   (the VM tests' device helpers)\n"
		"  peek FILE OFFSET LENGTH        hex dump via mmap() (a BAR's sysfs resourceN)\n"
		"  poke FILE OFFSET VALUE...      32-bit stores via mmap() from OFFSET on\n"
		"  hold DEV READY GO [race|submit|import|keep-import]\n"
		"                                 buffers mapped across a removal: SIGBUS?\n"
		"  reap-cut DEV READY             frames queued, REAP across a link cut\n"
		"  pcitest-time DEV r|w SIZE COUNT\n"
		"                                 pci-epf-test DMA transfers timed from user space\n"
		"  stat DEV NAME                  one FL_IOC_STATS counter\n"
		"  stat-wait DEV NAME gt|ge VALUE MS\n"
		"                                 wait for the counter to pass VALUE\n");
}

/*
 * The 32-bit words from OFF to OFF + LEN of an mmap()able file (a BAR's sysfs resourceN),
 * mapped from the page that holds OFF, read-only or (PROT_WRITE) writable; NULL, said, when
 * the file does not open or map. munmap(*map, *maplen) gives the mapping back.
 */
static u32 *map_words(const char *path, u64 off, u64 len, int prot, void **map,
		      size_t *maplen)
{
	u64 pg = (u64)sysconf(_SC_PAGESIZE), base = off & ~(pg - 1);
	int fd = open(path, ((prot & PROT_WRITE) ? O_RDWR : O_RDONLY) | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "framelink-testtool: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	*maplen = off - base + len;
	*map = mmap(NULL, *maplen, prot, MAP_SHARED, fd, (off_t)base);
	close(fd);
	if (*map == MAP_FAILED) {
		fprintf(stderr, "framelink-testtool: mmap %s: %s\n", path, strerror(errno));
		return NULL;
	}
	return (u32 *)((u8 *)*map + (off - base));
}

/*
 * What the host reads from a BAR, without writing it first (pcitest's BAR test writes its
 * pattern before it reads). 32-bit loads, as a driver's readl() would do.
 */
static int cmd_peek(int argc, char **argv)
{
	const u32 *w;
	size_t maplen;
	u64 off, len;
	void *p;

	if (argc != 5 || fl_parse_size(argv[3], &off) || fl_parse_size(argv[4], &len) || !len ||
	    (off | len) & 3) {
		fprintf(stderr, "framelink-testtool: peek FILE OFFSET LENGTH (multiples of 4)\n");
		return 2;
	}
	w = map_words(argv[2], off, len, PROT_READ, &p, &maplen);
	if (!w)
		return 1;
	/* one 32-bit load each, not merged or split by the compiler */
	for (u64 i = 0; i < len / 4; i++)
		printf("%08x%s", __atomic_load_n(&w[i], __ATOMIC_RELAXED),
		       (i % 4 == 3 || i == len / 4 - 1) ? "\n" : " ");
	munmap(p, maplen);
	return 0;
}

/*
 * tests/vm/78-epf-coverage.sh: what a hostile or broken host writes into the endpoint's
 * BAR0 behind its driver's back (a malformed descriptor, a corrupted header). One 32-bit
 * store per VALUE, at OFFSET, OFFSET + 4, ..., in that order; every VALUE is parsed before
 * the first store, so a bad one writes nothing.
 */
static int cmd_poke(int argc, char **argv)
{
	int n = argc - 4, ret = 2;
	size_t maplen;
	u32 *w, *val;
	u64 off, v;
	void *p;

	if (n < 1 || fl_parse_size(argv[3], &off) || off & 3) {
		fprintf(stderr,
			"framelink-testtool: poke FILE OFFSET VALUE... (OFFSET a multiple of 4)\n");
		return 2;
	}
	val = calloc(n, sizeof(*val));
	if (!val)
		return 1;
	for (int i = 0; i < n; i++) {
		if (fl_parse_size(argv[4 + i], &v) || v > 0xffffffffULL) {
			fprintf(stderr, "framelink-testtool: poke: bad value %s\n", argv[4 + i]);
			goto free_val;
		}
		val[i] = (u32)v;
	}
	ret = 1;
	w = map_words(argv[2], off, (u64)n * 4, PROT_READ | PROT_WRITE, &p, &maplen);
	if (!w)
		goto free_val;
	/* one 32-bit store each, as a driver's writel() */
	for (int i = 0; i < n; i++)
		__atomic_store_n(&w[i], val[i], __ATOMIC_RELAXED);
	munmap(p, maplen);
	ret = 0;
free_val:
	free(val);
	return ret;
}

/*
 * tests/vm/67-host-remove.sh: keep every buffer of DEV mmap()ed while the device is
 * removed, then report what the mapping gives. Each page gets its own pattern, READY is
 * created, and the tool waits (at most 120 s) for GO to exist; with "race" it meanwhile maps
 * single pages again and again, so some mmap() calls run while the device goes away. Then
 * every page of every mapping is read once: after a removal each read must fault with
 * SIGBUS (the driver zapped the mapping), never return data (freed or reused memory, or
 * buffers the device no longer owns). Exit 0 when every page faulted, 1 when any page could
 * still be read, 2 on bad usage. With "submit" every buffer is first submitted as a frame
 * (nobody on the other side takes it) and nothing is reaped until GO; then REAP runs until
 * it fails, and the tally must be one -ECANCELED completion per buffer, then -ENODEV: frames
 * queued at a removal are reported, not lost (64-epf-dma-lifetime.sh). With "import" an
 * IMPORT after the removal must fail with ENODEV; with "keep-import" an import made before
 * it is never taken back by the app.
 */
#define HOLD_MAGIC	0x686f6c64ULL	/* "hold" */
#define HOLD_RACE_MAX	4096

enum hold_mode { HOLD_PLAIN, HOLD_RACE, HOLD_SUBMIT, HOLD_IMPORT, HOLD_KEEP_IMPORT };

struct hold_count {
	u64 sigbus, intact, changed;
};

/* One hold: the device, its mapping @p of @pages pages, and what was found. */
struct hold {
	enum hold_mode mode;
	int fd;
	struct fl_info info;
	u64 pg, pages;
	u8 *p;
	u64 nmaps, nrace, enodev;	/* race: single-page mmap()s, those kept, ENODEV seen */
	struct hold_count c, rc;	/* the whole mapping's pages, the race mappings' */
	u32 ncancel, nother;		/* submit: completions reaped after GO */
	int reap_err, import_err;
};

/* race: the newest HOLD_RACE_MAX single-page mappings and their pages */
static void *hold_race[HOLD_RACE_MAX];
static u64 hold_race_page[HOLD_RACE_MAX];

static sigjmp_buf hold_jb;

static void hold_sigbus(int sig)
{
	(void)sig;
	siglongjmp(hold_jb, 1);
}

/* 1: the read faulted (SIGBUS); 0: data came back (in *val) */
static int hold_probe(const u64 *p, u64 *val)
{
	if (sigsetjmp(hold_jb, 1))
		return 1;
	/* one real load, not optimised away or merged */
	*val = __atomic_load_n(p, __ATOMIC_RELAXED);
	return 0;
}

static void hold_check(const u8 *base, u64 first_page, u64 pages, u64 pg, struct hold_count *c)
{
	u64 v;

	for (u64 i = 0; i < pages; i++) {
		if (hold_probe((const u64 *)(base + i * pg), &v))
			c->sigbus++;
		else if (v == (HOLD_MAGIC << 32 | (first_page + i)))
			c->intact++;
		else
			c->changed++;
	}
}

/* hold submit, reap-cut: every buffer as one frame of a page, all accepted */
static int hold_submit(int fd, const struct fl_info *info)
{
	struct fl_frame f[64] = { 0 };
	struct fl_batch b = { .ptr = (u64)(unsigned long)f };

	for (u32 i = 0; i < info->nbufs; i += b.count) {
		b.count = info->nbufs - i < 64 ? info->nbufs - i : 64;
		for (u32 k = 0; k < b.count; k++)
			f[k] = (struct fl_frame){ .buf = i + k, .bytes = 4096, .cookie = i + k };
		if (ioctl(fd, FL_IOC_SUBMIT, &b) || b.done != b.count) {
			fprintf(stderr,
				"framelink-testtool: hold: SUBMIT of %u at %u: %s (done %u)\n",
				b.count, i, strerror(errno), b.done);
			return 1;
		}
	}
	return 0;
}

/*
 * IMPORT of a one-page system-heap dma-buf on @fd. Return: 0 or the errno of IMPORT, or
 * of the allocation (-1 without a heap).
 */
static int hold_import(int fd)
{
	struct dma_heap_allocation_data a = { .len = 4096, .fd_flags = O_RDWR | O_CLOEXEC };
	struct fl_import im = { .buf = ~0U };
	int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC), err = 0;

	if (heap < 0)
		return -1;
	if (ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a))
		err = errno;
	close(heap);
	if (err)
		return err;
	im.fd = a.fd;
	if (ioctl(fd, FL_IOC_IMPORT, &im))
		err = errno;
	close(a.fd);
	return err;
}

/* The mode from the arguments; -1 on bad usage */
static int hold_mode(int argc, char **argv)
{
	static const char * const names[] = {
		[HOLD_RACE] = "race", [HOLD_SUBMIT] = "submit", [HOLD_IMPORT] = "import",
		[HOLD_KEEP_IMPORT] = "keep-import",
	};

	if (argc == 5)
		return HOLD_PLAIN;
	for (int m = HOLD_RACE; argc == 6 && m <= HOLD_KEEP_IMPORT; m++)
		if (!strcmp(argv[5], names[m]))
			return m;
	return -1;
}

/* Open DEV, map every buffer, a pattern in each page; 0 or the exit status */
static int hold_map(struct hold *h, const char *dev)
{
	u64 total;

	h->pg = (u64)sysconf(_SC_PAGESIZE);
	h->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (h->fd < 0 || ioctl(h->fd, FL_IOC_INFO, &h->info)) {
		fprintf(stderr, "framelink-testtool: hold %s: %s\n", dev, strerror(errno));
		return 1;
	}
	total = (u64)h->info.nbufs * h->info.buf_size;
	h->pages = total / h->pg;
	h->p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, h->fd,
		    (off_t)h->info.mmap_offset);
	if (h->p == MAP_FAILED) {
		fprintf(stderr, "framelink-testtool: hold: mmap: %s\n", strerror(errno));
		return 1;
	}
	for (u64 i = 0; i < h->pages; i++)
		*(u64 *)(h->p + i * h->pg) = HOLD_MAGIC << 32 | i;
	return 0;
}

/* race: one more single-page mapping, the oldest kept one unmapped past HOLD_RACE_MAX */
static void hold_race_once(struct hold *h)
{
	u64 k = h->nmaps % HOLD_RACE_MAX;
	void *m = mmap(NULL, h->pg, PROT_READ, MAP_SHARED, h->fd,
		       (off_t)(h->info.mmap_offset + (h->nmaps % h->pages) * h->pg));

	if (m == MAP_FAILED) {
		h->enodev = errno == ENODEV;
		if (!h->enodev)
			usleep(1000);
		return;
	}
	if (hold_race[k])
		munmap(hold_race[k], h->pg);
	hold_race[k] = m;
	hold_race_page[k] = h->nmaps++ % h->pages;
}

/* Until @go exists (at most 120 s of waiting); race: mapping meanwhile */
static void hold_wait(struct hold *h, const char *go)
{
	for (int t = 0; t < 120000 && access(go, F_OK); ) {
		if (h->mode == HOLD_RACE && !h->enodev) {
			hold_race_once(h);
			continue;
		}
		usleep(1000);
		t++;
	}
}

/* After GO: every page read, IMPORT tried (import), REAP until it fails (submit) */
static void hold_after(struct hold *h)
{
	struct fl_reap r = { 0 };
	struct fl_completion cpl;

	hold_check(h->p, 0, h->pages, h->pg, &h->c);
	if (h->mode == HOLD_IMPORT)
		h->import_err = hold_import(h->fd);
	h->nrace = h->nmaps < HOLD_RACE_MAX ? h->nmaps : HOLD_RACE_MAX;
	for (u64 k = 0; k < h->nrace; k++)
		hold_check(hold_race[k], hold_race_page[k], 1, h->pg, &h->rc);
	r.ptr = (u64)(unsigned long)&cpl;
	r.max = 1;
	/* submit: every completion queued before the removal, then the error */
	while (!(h->reap_err = ioctl(h->fd, FL_IOC_REAP, &r) ? errno : 0) && r.count &&
	       h->mode == HOLD_SUBMIT && h->ncancel + h->nother < h->info.nbufs) {
		if (cpl.status == -ECANCELED)
			h->ncancel++;
		else
			h->nother++;
	}
}

/* The one line the tests match; the exit status */
static int hold_report(const struct hold *h)
{
	printf("hold: pages %llu sigbus %llu intact %llu changed %llu; ",
	       h->pages, h->c.sigbus, h->c.intact, h->c.changed);
	printf("race mmaps %llu kept %llu sigbus %llu intact %llu changed %llu ",
	       h->nmaps, h->nrace, h->rc.sigbus, h->rc.intact, h->rc.changed);
	printf("mmap_enodev %llu; ", h->enodev);
	if (h->mode == HOLD_SUBMIT)
		printf("reaped ECANCELED %u other %u, then ", h->ncancel, h->nother);
	printf("reap %s", fl_errno_name(h->reap_err));
	if (h->mode == HOLD_IMPORT)
		printf("; import after removal %s",
		       h->import_err < 0 ? "(no system heap)" : fl_errno_name(h->import_err));
	if (h->mode == HOLD_KEEP_IMPORT)
		printf("; an import held across the removal");
	printf("\n");
	if (h->mode == HOLD_SUBMIT && (h->ncancel != h->info.nbufs || h->reap_err != ENODEV))
		return 1;
	if (h->mode == HOLD_IMPORT && h->import_err != ENODEV)
		return 1;
	return h->c.sigbus == h->pages && h->rc.sigbus == h->nrace ? 0 : 1;
}

static int cmd_hold(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = hold_sigbus };
	struct hold h = { 0 };
	int mode = hold_mode(argc, argv), ready;

	if (mode < 0) {
		fprintf(stderr,
			"framelink-testtool: hold DEV READYFILE GOFILE [race|submit|import|keep-import]\n");
		return 2;
	}
	h.mode = mode;
	if (hold_map(&h, argv[2]))
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	if (h.mode == HOLD_SUBMIT && hold_submit(h.fd, &h.info))
		return 1;
	/* keep-import: an import made before the removal, never taken back by the app */
	if (h.mode == HOLD_KEEP_IMPORT)
		h.import_err = hold_import(h.fd);
	if (h.import_err) {
		fprintf(stderr, "framelink-testtool: hold: IMPORT: %s\n",
			h.import_err < 0 ? "no system heap" : fl_errno_name(h.import_err));
		return 1;
	}
	ready = open(argv[3], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (ready < 0)
		return 1;
	close(ready);
	hold_wait(&h, argv[4]);
	hold_after(&h);
	return hold_report(&h);
}

/*
 * tests/vm/68-epf-copy-cut.sh: submit one frame per buffer of DEV (nobody on the other side
 * takes them), create READY, then wait in REAP (1 s slices, at most 60) while the test cuts
 * the link. The first REAP that returns something or fails is the verdict: every frame
 * -ECANCELED, not -ENOLINK while the cancelled frames are still to come. Exit 0 then, 1
 * otherwise, 2 on bad usage.
 */
static int cmd_reap_cut(int argc, char **argv)
{
	struct fl_completion *c;
	struct fl_reap r = { .timeout_ms = 1000 };
	struct fl_info info;
	u32 ncancel = 0, i;
	int fd, ready, err = 0, t;

	if (argc != 4) {
		fprintf(stderr, "framelink-testtool: reap-cut DEV READYFILE\n");
		return 2;
	}
	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FL_IOC_INFO, &info) || hold_submit(fd, &info)) {
		fprintf(stderr, "framelink-testtool: reap-cut %s: %s\n", argv[2],
			strerror(errno));
		return 1;
	}
	c = calloc(info.nbufs, sizeof(*c));
	ready = c ? open(argv[3], O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
	if (ready < 0)
		return 1;
	close(ready);
	r.ptr = (u64)(unsigned long)c;
	r.max = info.nbufs;
	for (t = 0; t < 60; t++) {
		err = ioctl(fd, FL_IOC_REAP, &r) ? errno : 0;
		if (err || r.count)
			break;
	}
	for (i = 0; !err && i < r.count; i++)
		ncancel += c[i].status == -ECANCELED;
	if (err)
		printf("reap-cut: first REAP %s\n", fl_errno_name(err));
	else
		printf("reap-cut: first REAP %u completions, ECANCELED %u\n", r.count, ncancel);
	return !err && ncancel == r.count && r.count ? 0 : 1;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * pci-epf-test's DMA transfers timed as make bench times framelink: from user space, each
 * PCITEST_READ (the endpoint reads host memory: h2e) or PCITEST_WRITE (e2h) ioctl from its
 * call to its return, which spans the host driver's request through BAR0, the endpoint's
 * transfer and CRC, and its interrupt back. pci_endpoint_test returns 1 for a transfer
 * whose CRC matched (the 6.1 and 6.12 kernels the lab boots). GB/s is 10^9 bytes of payload
 * per second over the sum of the calls; one line:
 *   pcitest-time DIR SIZE n COUNT ok OK ns NS gbps G p50_us P p99_us Q max_us M
 */
static int cmd_pcitest_time(int argc, char **argv)
{
	struct pci_endpoint_test_xfer_param param = { .flags = PCITEST_FLAGS_USE_DMA };
	u64 size, count, i, ok = 0, sum = 0, *lat;
	unsigned long req;
	int fd, ret;

	if (argc != 6 || (strcmp(argv[3], "r") && strcmp(argv[3], "w")) ||
	    fl_parse_size(argv[4], &size) || fl_parse_size(argv[5], &count) || !size ||
	    !count || count > 100000) {
		usage(stderr);
		return 2;
	}
	req = argv[3][0] == 'r' ? PCITEST_READ : PCITEST_WRITE;
	param.size = size;
	lat = calloc(count, sizeof(*lat));
	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (!lat || fd < 0) {
		fprintf(stderr, "framelink-testtool: %s: %s\n", argv[2], strerror(errno));
		free(lat);
		return 1;
	}
	for (i = 0; i < count; i++) {
		u64 t0 = fl_now_ns();

		ret = ioctl(fd, req, &param);
		lat[i] = fl_now_ns() - t0;
		sum += lat[i];
		ok += ret == 1;
	}
	close(fd);
	qsort(lat, count, sizeof(*lat), cmp_u64);
	printf("pcitest-time %s %llu n %llu ok %llu ns %llu gbps %.6f",
	       argv[3][0] == 'r' ? "h2e" : "e2h", (unsigned long long)size,
	       (unsigned long long)count, (unsigned long long)ok, (unsigned long long)sum,
	       sum ? (double)size * count / sum : 0.0);
	printf(" p50_us %.1f p99_us %.1f max_us %.1f\n", lat[count / 2] / 1e3,
	       lat[count * 99 / 100] / 1e3,
	       lat[count - 1] / 1e3);
	free(lat);
	return ok == count ? 0 : 1;
}

/* Counter @name of the device open on @fd into *@val: 0, 1 said on a failure */
static int stat_read(int fd, const char *dev, const char *name, u64 *val)
{
	struct fl_stats s;
	const char *n;
	u32 i;

	if (ioctl(fd, FL_IOC_STATS, &s)) {
		fprintf(stderr, "framelink-testtool: %s: STATS: %s\n", dev, strerror(errno));
		return 1;
	}
	for (i = 0; (n = fl_stats_field(&s, i, val)); i++)
		if (!strcmp(n, name))
			return 0;
	fprintf(stderr, "framelink-testtool: no counter '%s'\n", name);
	return 1;
}

/* stat DEV NAME: the value on stdout */
static int cmd_stat(int argc, char **argv)
{
	int fd, ret;
	u64 val;

	if (argc != 4) {
		usage(stderr);
		return 2;
	}
	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "framelink-testtool: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	ret = stat_read(fd, argv[2], argv[3], &val);
	close(fd);
	if (!ret)
		printf("%llu\n", (unsigned long long)val);
	return ret;
}

/*
 * stat-wait DEV NAME gt|ge VALUE MS: 0 once the counter is above (gt) or at least (ge)
 * VALUE, 1 with the last value said when MS pass first or the device goes away
 */
static int cmd_stat_wait(int argc, char **argv)
{
	u64 want, ms, val = 0, end;
	int fd, ret, gt;

	if (argc != 7 || (strcmp(argv[4], "gt") && strcmp(argv[4], "ge")) ||
	    fl_parse_size(argv[5], &want) || fl_parse_size(argv[6], &ms)) {
		usage(stderr);
		return 2;
	}
	gt = argv[4][1] == 't';
	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "framelink-testtool: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	end = fl_now_ns() + ms * 1000000;
	while (!(ret = stat_read(fd, argv[2], argv[3], &val))) {
		if (gt ? val > want : val >= want)
			break;
		if (fl_now_ns() >= end) {
			fprintf(stderr, "framelink-testtool: %s stayed %llu after %llu ms\n",
				argv[3], (unsigned long long)val, (unsigned long long)ms);
			ret = 1;
			break;
		}
		usleep(5000);
	}
	close(fd);
	return ret;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "peek", cmd_peek },
	{ "poke", cmd_poke },
	{ "hold", cmd_hold },
	{ "reap-cut", cmd_reap_cut },
	{ "pcitest-time", cmd_pcitest_time },
	{ "stat", cmd_stat },
	{ "stat-wait", cmd_stat_wait },
};

int main(int argc, char **argv)
{
	const char *cmd = argc < 2 ? "" : argv[1];

	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc, argv);
	if (argc >= 2)
		fprintf(stderr, "framelink-testtool: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
