// SPDX-License-Identifier: GPL-2.0
/*
 * kselftest of the framelink driver pair, run where both ends are visible to one kernel
 * (the pci-epc-loop test machine): the test drives the host device (/dev/framelink0) and the
 * endpoint device (/dev/framelink-ep0) itself. A frame goes host -> endpoint, is checked by
 * CRC in the endpoint slot, goes back endpoint -> host and is compared byte for byte.
 *
 * Devices can be overridden with FL_HOST_DEV / FL_EP_DEV. Without them the tests SKIP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/framelink.h>

#include "kselftest_harness.h"

#define FL_TIMEOUT_MS	5000

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

static int fl_open(struct fl_end *e, const char *env, const char *def)
{
	const char *path = getenv(env) ? getenv(env) : def;

	e->nstash = 0;
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

static void fl_close(struct fl_end *e)
{
	if (e->map)
		munmap(e->map, e->map_len);
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	e->map = NULL;
}

static uint8_t *fl_buf(struct fl_end *e, uint32_t i)
{
	return e->map + (size_t)i * e->info.buf_size;
}

static int fl_post(struct fl_end *e, const uint32_t *bufs, uint32_t n, uint32_t *done)
{
	struct fl_batch b = { .ptr = (uintptr_t)bufs, .count = n };
	int ret = ioctl(e->fd, FL_IOC_POST, &b) ? -errno : 0;

	if (done)
		*done = b.done;
	return ret;
}

static int fl_submit(struct fl_end *e, const struct fl_frame *f, uint32_t n, uint32_t *done)
{
	struct fl_batch b = { .ptr = (uintptr_t)f, .count = n };
	int ret = ioctl(e->fd, FL_IOC_SUBMIT, &b) ? -errno : 0;

	if (done)
		*done = b.done;
	return ret;
}

/* Take the oldest stashed completion of @queue into @out; 0 or -ENOENT. */
static int fl_unstash(struct fl_end *e, uint32_t queue, struct fl_completion *out)
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
static int fl_reap_one(struct fl_end *e, uint32_t queue, struct fl_completion *out)
{
	struct fl_completion c;
	struct fl_reap r;
	int tries;

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

static uint32_t crc32_le(const uint8_t *p, size_t n)
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

static void fill_random(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245U + 12345U;
		p[i] = seed >> 16;
	}
}

FIXTURE(fl) {
	struct fl_end host;
	struct fl_end ep;
	uint32_t tx_bufs;	/* host buffers 0..tx_bufs-1 send; the rest receive */
};

FIXTURE_VARIANT(fl) {
	const char *path;	/* "dma" or "cpu": sizes on that side of the crossover */
};

FIXTURE_VARIANT_ADD(fl, dma) { .path = "dma" };
FIXTURE_VARIANT_ADD(fl, cpu) { .path = "cpu" };

FIXTURE_SETUP(fl)
{
	uint32_t slots[FL_RING_MAX_ENTRIES], rx[FL_RING_MAX_ENTRIES], i, n;
	int ret;

	self->host.fd = -1;
	self->ep.fd = -1;
	ret = fl_open(&self->host, "FL_HOST_DEV", "/dev/framelink0");
	if (ret == -ENOENT)
		SKIP(return, "no framelink host device");
	ASSERT_EQ(0, ret);
	ret = fl_open(&self->ep, "FL_EP_DEV", "/dev/framelink-ep0");
	if (ret == -ENOENT)
		SKIP(return, "no framelink endpoint device on this machine");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(FL_ROLE_HOST, self->host.info.role);
	ASSERT_EQ(FL_ROLE_ENDPOINT, self->ep.info.role);
	ASSERT_GE(self->host.info.nbufs, 2);

	if (!strcmp(variant->path, "dma") && !self->ep.info.dma_rd_channels)
		SKIP(return, "endpoint has no DMA channels");

	/* Endpoint: every slot posted for receiving. Host: the upper half receives. */
	n = self->ep.info.nbufs;
	for (i = 0; i < n; i++)
		slots[i] = i;
	ASSERT_EQ(0, fl_post(&self->ep, slots, n, NULL));
	self->tx_bufs = self->host.info.nbufs / 2;
	n = self->host.info.nbufs - self->tx_bufs;
	if (n > self->host.info.rx_depth)
		n = self->host.info.rx_depth;
	for (i = 0; i < n; i++)
		rx[i] = self->tx_bufs + i;
	ASSERT_EQ(0, fl_post(&self->host, rx, n, NULL));
}

FIXTURE_TEARDOWN(fl)
{
	fl_close(&self->ep);
	fl_close(&self->host);
}

/* One frame host -> endpoint -> host; returns through the harness on any mismatch. */
static void round_trip(struct __test_metadata *_metadata, struct _test_data_fl *self,
		       uint32_t buf, uint32_t bytes, unsigned int seed)
{
	struct fl_frame f = { .buf = buf, .bytes = bytes, .flags = FL_FRAME_EOF,
			      .cookie = 0xf1a0000000000000ULL | seed };
	struct fl_completion ep_rx, ep_tx, h_tx, h_rx;
	uint32_t crc;

	fill_random(fl_buf(&self->host, buf), bytes, seed);
	crc = crc32_le(fl_buf(&self->host, buf), bytes);
	ASSERT_EQ(0, fl_submit(&self->host, &f, 1, NULL));

	ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_RX, &ep_rx));
	ASSERT_EQ(0, ep_rx.status);
	ASSERT_EQ(bytes, ep_rx.bytes);
	ASSERT_EQ(f.cookie, ep_rx.cookie);
	ASSERT_EQ(crc, crc32_le(fl_buf(&self->ep, ep_rx.buf), bytes));

	/* Back from the slot it arrived in: zero copies on the endpoint. */
	f = (struct fl_frame){ .buf = ep_rx.buf, .bytes = bytes, .flags = FL_FRAME_EOF,
			       .cookie = ep_rx.cookie };
	ASSERT_EQ(0, fl_submit(&self->ep, &f, 1, NULL));
	ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_TX, &ep_tx));
	ASSERT_EQ(0, ep_tx.status);
	ASSERT_EQ(ep_rx.buf, ep_tx.buf);
	ASSERT_EQ(0, fl_post(&self->ep, &ep_tx.buf, 1, NULL));

	ASSERT_EQ(0, fl_reap_one(&self->host, FL_Q_TX, &h_tx));
	ASSERT_EQ(0, h_tx.status);
	ASSERT_EQ(buf, h_tx.buf);
	ASSERT_EQ(0, fl_reap_one(&self->host, FL_Q_RX, &h_rx));
	ASSERT_EQ(0, h_rx.status);
	ASSERT_EQ(bytes, h_rx.bytes);
	ASSERT_EQ(f.cookie, h_rx.cookie);
	ASSERT_GE(h_rx.buf, self->tx_bufs);
	ASSERT_EQ(0, memcmp(fl_buf(&self->host, buf), fl_buf(&self->host, h_rx.buf), bytes));
	ASSERT_LE(h_rx.ts_submit, h_rx.ts_delivered);

	/* Clear the receive buffer so the next round cannot pass on stale data. */
	memset(fl_buf(&self->host, h_rx.buf), 0, bytes);
	ASSERT_EQ(0, fl_post(&self->host, &h_rx.buf, 1, NULL));
}

static uint32_t max_frame(struct _test_data_fl *self)
{
	uint32_t m = self->host.info.buf_size;

	return m < self->ep.info.buf_size ? m : self->ep.info.buf_size;
}

TEST_F(fl, sizes_both_ways)
{
	uint32_t cross = self->ep.info.crossover, mx = max_frame(self);
	uint32_t sizes[] = { 1, 2, 4095, 4096, 4097, cross - 1, cross, cross + 1, mx };
	unsigned int i, ran = 0;
	struct fl_stats before, after;
	__u64 moved;

	ASSERT_EQ(0, ioctl(self->ep.fd, FL_IOC_STATS, &before));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		int dma = sizes[i] >= cross;

		if (!sizes[i] || sizes[i] > mx || dma != !strcmp(variant->path, "dma"))
			continue;
		TH_LOG("%s: %u bytes", variant->path, sizes[i]);
		round_trip(_metadata, self, i % self->tx_bufs, sizes[i], 1000 + i);
		ran++;
	}
	ASSERT_EQ(0, ioctl(self->ep.fd, FL_IOC_STATS, &after));
	if (!ran)
		SKIP(return, "no size on the %s side of crossover %u", variant->path, cross);
	/* Each round trip moves two frames on the chosen path. */
	moved = strcmp(variant->path, "dma") ? after.cpu_transfers - before.cpu_transfers :
					       after.dma_transfers - before.dma_transfers;
	ASSERT_EQ(2 * ran, moved);
}

TEST_F(fl, random_sizes)
{
	uint32_t cross = self->ep.info.crossover, mx = max_frame(self), lo, hi;
	unsigned int i;

	lo = strcmp(variant->path, "dma") ? 1 : cross;
	hi = strcmp(variant->path, "dma") ? cross - 1 : mx;
	if (!cross || lo > hi)
		SKIP(return, "empty %s range", variant->path);
	srand(42);
	for (i = 0; i < 8; i++)
		round_trip(_metadata, self, i % self->tx_bufs,
			   lo + (uint32_t)rand() % (hi - lo + 1), 2000 + i);
}

TEST_F(fl, batch_of_frames)
{
	struct fl_frame f[8];
	struct fl_completion c;
	uint32_t n = self->tx_bufs < 8 ? self->tx_bufs : 8, i, bytes = 4096, got = 0;
	uint32_t seen[8] = { 0 };

	if (n > self->ep.info.nbufs)
		n = self->ep.info.nbufs;
	for (i = 0; i < n; i++) {
		fill_random(fl_buf(&self->host, i), bytes, 3000 + i);
		f[i] = (struct fl_frame){ .buf = i, .bytes = bytes, .flags = FL_FRAME_EOF,
					  .cookie = i };
	}
	ASSERT_EQ(0, fl_submit(&self->host, f, n, NULL));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_RX, &c));
		ASSERT_LT(c.cookie, n);
		/* Frames arrive in submission order. */
		ASSERT_EQ(i, c.cookie);
		ASSERT_EQ(crc32_le(fl_buf(&self->host, c.cookie), bytes),
			  crc32_le(fl_buf(&self->ep, c.buf), bytes));
		ASSERT_EQ(0, fl_post(&self->ep, &c.buf, 1, NULL));
		seen[c.cookie]++;
	}
	while (got < n) {
		ASSERT_EQ(0, fl_reap_one(&self->host, FL_Q_TX, &c));
		ASSERT_EQ(0, c.status);
		got++;
	}
	for (i = 0; i < n; i++)
		ASSERT_EQ(1, seen[i]);
}

TEST_F(fl, poll_readiness)
{
	struct fl_frame f = { .buf = 0, .bytes = 64, .flags = FL_FRAME_EOF };
	struct pollfd p = { .fd = self->ep.fd, .events = POLLIN };
	struct fl_completion c;

	/* Nothing pending: not readable. */
	ASSERT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(0, fl_submit(&self->host, &f, 1, NULL));
	ASSERT_EQ(1, poll(&p, 1, FL_TIMEOUT_MS));
	ASSERT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_RX, &c));
	ASSERT_EQ(0, fl_post(&self->ep, &c.buf, 1, NULL));
	p = (struct pollfd){ .fd = self->host.fd, .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, FL_TIMEOUT_MS));
	ASSERT_EQ(0, fl_reap_one(&self->host, FL_Q_TX, &c));
}

/* Bad input: the documented errno, nothing queued, and the device still works after. */
TEST_F(fl, bad_input)
{
	struct fl_end *h = &self->host;
	uint32_t nb = h->info.nbufs, done = 99, idx;
	struct fl_frame f[2] = {
		{ .buf = 0, .bytes = 64, .flags = FL_FRAME_EOF },
		{ .buf = nb, .bytes = 64 },
	};
	struct fl_completion c[2];
	struct fl_reap r;
	struct fl_batch b;

	/* The second entry names a buffer that does not exist: the first is taken. */
	ASSERT_EQ(-EINVAL, fl_submit(h, f, 2, &done));
	ASSERT_EQ(1, done);
	ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_RX, &c[0]));
	ASSERT_EQ(0, fl_post(&self->ep, &c[0].buf, 1, NULL));
	ASSERT_EQ(0, fl_reap_one(h, FL_Q_TX, &c[0]));

	f[0] = (struct fl_frame){ .buf = 0, .bytes = 0 };
	ASSERT_EQ(-EINVAL, fl_submit(h, f, 1, &done));
	ASSERT_EQ(0, done);
	f[0] = (struct fl_frame){ .buf = 0, .bytes = h->info.buf_size + 1 };
	ASSERT_EQ(-EMSGSIZE, fl_submit(h, f, 1, &done));
	f[0] = (struct fl_frame){ .buf = 0, .bytes = 64, .flags = 1U << 30 };
	ASSERT_EQ(-EINVAL, fl_submit(h, f, 1, &done));
	f[0] = (struct fl_frame){ .buf = 0, .bytes = 64, .reserved = 1 };
	ASSERT_EQ(-EINVAL, fl_submit(h, f, 1, &done));
	/* A buffer posted for receiving is not the app's to send. */
	f[0] = (struct fl_frame){ .buf = self->tx_bufs, .bytes = 64 };
	ASSERT_EQ(-EBUSY, fl_submit(h, f, 1, &done));

	ASSERT_EQ(-EINVAL, fl_submit(h, f, 0, &done));
	ASSERT_EQ(-EINVAL, fl_submit(h, f, FL_RING_MAX_ENTRIES + 1, &done));
	ASSERT_EQ(-EFAULT, fl_submit(h, NULL, 1, &done));
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = 1, .flags = 1 };
	ASSERT_EQ(-1, ioctl(h->fd, FL_IOC_SUBMIT, &b));
	ASSERT_EQ(EINVAL, errno);
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = 1, .reserved = 1 };
	ASSERT_EQ(-1, ioctl(h->fd, FL_IOC_SUBMIT, &b));
	ASSERT_EQ(EINVAL, errno);

	idx = nb;
	ASSERT_EQ(-EINVAL, fl_post(h, &idx, 1, &done));
	idx = self->tx_bufs;	/* already posted */
	ASSERT_EQ(-EBUSY, fl_post(h, &idx, 1, &done));
	ASSERT_EQ(-EFAULT, fl_post(h, NULL, 1, &done));

	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 0 };
	ASSERT_EQ(-1, ioctl(h->fd, FL_IOC_REAP, &r));
	ASSERT_EQ(EINVAL, errno);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 1, .timeout_ms = -1 };
	ASSERT_EQ(-1, ioctl(h->fd, FL_IOC_REAP, &r));
	ASSERT_EQ(EINVAL, errno);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 1, .reserved = 1 };
	ASSERT_EQ(-1, ioctl(h->fd, FL_IOC_REAP, &r));
	ASSERT_EQ(EINVAL, errno);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 1, .timeout_ms = 0 };
	ASSERT_EQ(0, ioctl(h->fd, FL_IOC_REAP, &r));	/* nothing pending: count 0 */
	ASSERT_EQ(0, r.count);
	ASSERT_EQ(-1, ioctl(h->fd, FL_IOC_INFO, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(h->fd, _IO(FL_IOC_MAGIC, 0x7f)));
	ASSERT_EQ(ENOTTY, errno);

	/* Same rules on the endpoint. */
	idx = self->ep.info.nbufs;
	ASSERT_EQ(-EINVAL, fl_post(&self->ep, &idx, 1, &done));
	f[0] = (struct fl_frame){ .buf = 0, .bytes = 64 };	/* slot 0 is posted */
	ASSERT_EQ(-EBUSY, fl_submit(&self->ep, f, 1, &done));

	/* Still works. */
	round_trip(_metadata, self, 1, 4096, 4242);
}

/*
 * Open @e and check that nothing of an earlier open is left to reap. A host queue whose
 * reset at the last close did not finish within its bound is stopped (REAP: -EIO) until
 * the next last close retries: that is retried (at most 3 opens) and logged, since this
 * file tests ownership, not reset latency. Returns 0, the open error, -EIO or -EEXIST.
 */
static int fl_open_clean(struct __test_metadata *_metadata, struct fl_end *e,
			 const char *env, const char *def)
{
	struct fl_completion c;
	struct fl_reap r;
	int tries, ret;

	for (tries = 0; tries < 3; tries++) {
		ret = fl_open(e, env, def);
		if (ret)
			return ret;
		r = (struct fl_reap){ .ptr = (uintptr_t)&c, .max = 1, .timeout_ms = 0 };
		if (!ioctl(e->fd, FL_IOC_REAP, &r))
			return r.count ? -EEXIST : 0;
		ret = -errno;
		if (ret != -EIO)
			return ret;
		TH_LOG("%s: queue stopped (the reset at the last close timed out): reopening",
		       getenv(env) ? getenv(env) : def);
		fl_close(e);
	}
	return ret;
}

/*
 * Every buffer of @e is the app's: POSTing each one succeeds (a buffer still owned by a
 * queue fails with -EBUSY). POST at most rx_depth at a time; the close in between
 * withdraws them again.
 */
static void all_bufs_app_owned(struct __test_metadata *_metadata, struct fl_end *e,
			       const char *env, const char *def)
{
	uint32_t idx[FL_RING_MAX_ENTRIES], first, n, i, done;

	ASSERT_GT(e->info.rx_depth, 0);
	for (first = 0; first < e->info.nbufs; first += n) {
		n = e->info.nbufs - first;
		if (n > e->info.rx_depth)
			n = e->info.rx_depth;
		if (first) {
			fl_close(e);
			/* nothing of the previous open is left to reap */
			ASSERT_EQ(0, fl_open_clean(_metadata, e, env, def));
		}
		for (i = 0; i < n; i++)
			idx[i] = first + i;
		done = ~0U;
		EXPECT_EQ(0, fl_post(e, idx, n, &done)) {
			TH_LOG("buffer %u not the app's after the last close", first + done);
		}
		ASSERT_EQ(n, done);
	}
}

/*
 * Closing both ends with frames in flight and buffers posted cancels them; the next open
 * of each end starts with every buffer the app's and nothing left to reap.
 */
TEST_F(fl, close_in_flight)
{
	struct fl_frame f = { .buf = 0, .bytes = max_frame(self), .flags = FL_FRAME_EOF };
	struct fl_end again;

	ASSERT_EQ(0, fl_submit(&self->host, &f, 1, NULL));
	fl_close(&self->host);
	fl_close(&self->ep);
	usleep(200000);

	ASSERT_EQ(0, fl_open_clean(_metadata, &again, "FL_HOST_DEV", "/dev/framelink0"));
	all_bufs_app_owned(_metadata, &again, "FL_HOST_DEV", "/dev/framelink0");
	fl_close(&again);
	ASSERT_EQ(0, fl_open_clean(_metadata, &again, "FL_EP_DEV", "/dev/framelink-ep0"));
	all_bufs_app_owned(_metadata, &again, "FL_EP_DEV", "/dev/framelink-ep0");
	fl_close(&again);
}

/*
 * Ring boundaries, landed on exactly: with the endpoint app closed (no slot posted) frames
 * wait in the host's tx ring, so SUBMIT of tx_depth frames fills it exactly (one more:
 * -EAGAIN, no POLLOUT); the endpoint app opens and everything drains in ring order until
 * the ring is exactly empty (REAP finds nothing, POLLOUT again). Three laps: the tx ring
 * wraps three times and the completion ring (tx_depth + rx_depth entries) lands on its wrap.
 * Needs more host tx buffers than tx ring entries (62-framelink-hostile.sh sets that up).
 */
TEST_F(fl, ring_boundaries)
{
	uint32_t t = self->host.info.tx_depth, lap, i, done, slots[FL_RING_MAX_ENTRIES];
	struct fl_frame f[FL_RING_MAX_ENTRIES];
	struct fl_completion c;
	struct pollfd p;
	struct fl_reap r;

	if (strcmp(variant->path, "cpu"))
		SKIP(return, "the cpu variant covers it");
	if (self->tx_bufs <= t || self->ep.info.nbufs < t)
		SKIP(return, "tx ring %u: needs more host tx buffers (%u) and as many slots (%u)",
		     t, self->tx_bufs, self->ep.info.nbufs);
	for (i = 0; i < self->ep.info.nbufs; i++)
		slots[i] = i;
	fl_close(&self->ep);
	usleep(100000);
	for (lap = 0; lap < 3; lap++) {
		TH_LOG("lap %u: %u frames", lap, t);
		for (i = 0; i < t; i++) {
			fill_random(fl_buf(&self->host, i), 256, 5000 + lap * t + i);
			f[i] = (struct fl_frame){ .buf = i, .bytes = 256, .flags = FL_FRAME_EOF,
						  .cookie = lap * t + i };
		}
		/* exactly full */
		ASSERT_EQ(0, fl_submit(&self->host, f, t, &done));
		ASSERT_EQ(t, done);
		f[0] = (struct fl_frame){ .buf = t, .bytes = 256, .flags = FL_FRAME_EOF };
		ASSERT_EQ(-EAGAIN, fl_submit(&self->host, f, 1, &done));
		ASSERT_EQ(0, done);
		p = (struct pollfd){ .fd = self->host.fd, .events = POLLOUT };
		ASSERT_EQ(0, poll(&p, 1, 0));
		/* the frames wait: no slot on the endpoint, nothing completes */
		r = (struct fl_reap){ .ptr = (uintptr_t)&c, .max = 1, .timeout_ms = 200 };
		ASSERT_EQ(0, ioctl(self->host.fd, FL_IOC_REAP, &r));
		ASSERT_EQ(0, r.count);

		ASSERT_EQ(0, fl_open(&self->ep, "FL_EP_DEV", "/dev/framelink-ep0"));
		ASSERT_EQ(0, fl_post(&self->ep, slots, self->ep.info.nbufs, NULL));
		for (i = 0; i < t; i++) {
			ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_RX, &c));
			ASSERT_EQ(0, c.status);
			ASSERT_EQ(lap * t + i, c.cookie);
			ASSERT_EQ(crc32_le(fl_buf(&self->host, i), 256),
				  crc32_le(fl_buf(&self->ep, c.buf), 256));
			ASSERT_EQ(0, fl_post(&self->ep, &c.buf, 1, NULL));
		}
		for (i = 0; i < t; i++) {
			ASSERT_EQ(0, fl_reap_one(&self->host, FL_Q_TX, &c));
			ASSERT_EQ(0, c.status);
			ASSERT_EQ(i, c.buf);	/* ring order */
		}
		/* exactly empty */
		r = (struct fl_reap){ .ptr = (uintptr_t)&c, .max = 1, .timeout_ms = 0 };
		ASSERT_EQ(0, ioctl(self->host.fd, FL_IOC_REAP, &r));
		ASSERT_EQ(0, r.count);
		ASSERT_EQ(1, poll(&p, 1, 0));
		ASSERT_TRUE(p.revents & POLLOUT);
		fl_close(&self->ep);
		usleep(100000);
	}
}

TEST_HARNESS_MAIN
