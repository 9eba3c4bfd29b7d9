/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the framelink kselftests share (framelink_test.c, framelink_vgem_test.c): one open
 * device (struct fl_end) with its buffer mapping, the queue ioctls, CRC-32 and a pattern,
 * SIGBUS probing of a mapping, slot export and dma-buf sync, and the file handshakes the VM
 * scripts use to step a test. Functions are static inline: each program uses a part.
 */
#ifndef FL_KSELFTEST_H
#define FL_KSELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/framelink.h>

#define FL_NO_DMABUF	"kernel without dma-buf (CONFIG_DMA_SHARED_BUFFER)"

#define FL_STASH	64

/*
 * One open device. @stash keeps completions fl_reap_one() reaped while looking for another
 * queue's: they are handed out by a later call, never dropped.
 */
struct fl_end {
	int fd;
	struct fl_info info;
	uint8_t *map;
	size_t map_len;
	struct fl_completion stash[FL_STASH];
	int nstash;
};

static inline int fl_open(struct fl_end *e, const char *env, const char *def)
{
	const char *path = getenv(env) ? getenv(env) : def;

	e->nstash = 0;
	e->map = NULL;
	e->fd = open(path, O_RDWR);
	if (e->fd < 0)
		return -errno;
	if (ioctl(e->fd, FL_IOC_INFO, &e->info))
		return -errno;
	e->map_len = (size_t)e->info.nbufs * e->info.buf_size;
	e->map = mmap(NULL, e->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd,
		      e->info.mmap_offset);
	if (e->map == MAP_FAILED) {
		e->map = NULL;
		return -errno;
	}
	return 0;
}

static inline void fl_close(struct fl_end *e)
{
	if (e->map)
		munmap(e->map, e->map_len);
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	e->map = NULL;
}

static inline uint8_t *fl_buf(struct fl_end *e, uint32_t i)
{
	return e->map + (size_t)i * e->info.buf_size;
}

static inline int fl_post(struct fl_end *e, const uint32_t *bufs, uint32_t n, uint32_t *done)
{
	struct fl_batch b = { .ptr = (uintptr_t)bufs, .count = n };
	int ret = ioctl(e->fd, FL_IOC_POST, &b) ? -errno : 0;

	if (done)
		*done = b.done;
	return ret;
}

static inline int fl_submit(struct fl_end *e, const struct fl_frame *f, uint32_t n, uint32_t *done)
{
	struct fl_batch b = { .ptr = (uintptr_t)f, .count = n };
	int ret = ioctl(e->fd, FL_IOC_SUBMIT, &b) ? -errno : 0;

	if (done)
		*done = b.done;
	return ret;
}

/* Take the oldest stashed completion of @queue into @out; 0 or -ENOENT. */
static inline int fl_unstash(struct fl_end *e, uint32_t queue, struct fl_completion *out)
{
	int i;

	for (i = 0; i < e->nstash; i++) {
		if (e->stash[i].queue != queue)
			continue;
		*out = e->stash[i];
		memmove(&e->stash[i], &e->stash[i + 1], (e->nstash - i - 1) * sizeof(*out));
		e->nstash--;
		return 0;
	}
	return -ENOENT;
}

/*
 * Reap until a completion of @queue arrives (up to 50 x 200 ms). Completions of the other
 * queue are stashed in @e for a later call; -EOVERFLOW if the stash is full (a test that
 * never collects what it caused), never a silent drop.
 */
static inline int fl_reap_one(struct fl_end *e, uint32_t queue, struct fl_completion *out)
{
	struct fl_completion c;
	struct fl_reap r;
	int tries;

	/* defined on every path, so that callers' asserts on @out never read garbage */
	memset(out, 0, sizeof(*out));
	if (!fl_unstash(e, queue, out))
		return 0;
	for (tries = 0; tries < 50; tries++) {
		r = (struct fl_reap){ .ptr = (uintptr_t)&c, .max = 1, .timeout_ms = 200 };
		if (ioctl(e->fd, FL_IOC_REAP, &r))
			return -errno;
		if (!r.count)
			continue;
		if (c.queue == queue) {
			*out = c;
			return 0;
		}
		if (e->nstash == FL_STASH)
			return -EOVERFLOW;
		e->stash[e->nstash++] = c;
	}
	return -ETIMEDOUT;
}

static inline uint32_t crc32_le(const uint8_t *p, size_t n)
{
	uint32_t crc = ~0U;
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320U & -(crc & 1));
	}
	return ~crc;
}

static inline void fill_random(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245U + 12345U;
		p[i] = seed >> 16;
	}
}

static sigjmp_buf fl_bus_jmp;

static inline void fl_on_sigbus(int sig)
{
	siglongjmp(fl_bus_jmp, 1);
}

/* Does reading @p raise SIGBUS? (an atomic load: the compiler must do it) */
static inline int fl_access_faults(const uint8_t *p)
{
	struct sigaction sa = { .sa_handler = fl_on_sigbus }, old;
	int faulted = 0;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(fl_bus_jmp, 1))
		faulted = 1;
	else
		(void)__atomic_load_n(p, __ATOMIC_RELAXED);
	sigaction(SIGBUS, &old, NULL);
	return faulted;
}

/* FL_IOC_EXPORT of @slot; 0 or -errno. @x->fd is the dma-buf on success. */
static inline int ep_export(struct fl_end *e, uint32_t slot, uint32_t flags, struct fl_export *x)
{
	*x = (struct fl_export){ .slot = slot, .flags = flags, .fd = -1 };
	return ioctl(e->fd, FL_IOC_EXPORT, x) ? -errno : 0;
}

/* DMA_BUF_IOCTL_SYNC with @flags; 0 or -errno */
static inline int dmabuf_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return ioctl(fd, DMA_BUF_IOCTL_SYNC, &s) ? -errno : 0;
}

/* Wait up to 60 s for the file @env names; 0 when it appeared */
static inline int wait_file(const char *env)
{
	const char *path = getenv(env);
	int i;

	if (!path)
		return -1;
	for (i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
	return i < 600 ? 0 : -1;
}

static inline void touch_file(const char *env)
{
	int fd = getenv(env) ? open(getenv(env), O_CREAT | O_WRONLY, 0600) : -1;

	if (fd >= 0)
		close(fd);
}

#endif /* FL_KSELFTEST_H */
