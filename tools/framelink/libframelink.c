// SPDX-License-Identifier: GPL-2.0
/*
 * libframelink: open, INFO, mmap, SUBMIT/POST/REAP batches and STATS over the framelink
 * character devices; the number and errno-name helpers the tools share.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libframelink.h"

/*
 * The SIGBUS guard. A device removed (host) or a function unbound (endpoint) revokes the
 * buffer mappings: the next access raises SIGBUS. An application inside a frame at that
 * moment would die before it could REAP the errno that says what happened, so the guard
 * replaces the revoked mapping with anonymous zero pages and lets the access complete; the
 * ioctls then report the cause (-ENODEV) and fl_dev_revoked() tells the caller.
 */
#define FL_GUARD_MAX	8

static struct {
	void *base;
	size_t len;
} fl_guard[FL_GUARD_MAX];
static int fl_revoked; /* set by the SIGBUS handler, read with __atomic_load_n() */

static void fl_sigbus(int sig, siginfo_t *si, void *uc)
{
	char *a = si->si_addr;

	(void)uc;
	for (int i = 0; i < FL_GUARD_MAX; i++) {
		char *b = fl_guard[i].base;

		if (!b || a < b || a >= b + fl_guard[i].len)
			continue;
		/* mmap() is not on the async-signal-safe list but is a plain system call */
		if (mmap(b, fl_guard[i].len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
			__atomic_store_n(&fl_revoked, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	/* Not a framelink mapping: the default action when the access is retried */
	signal(sig, SIG_DFL);
}

static void fl_guard_add(void *base, size_t len)
{
	static int installed;

	for (int i = 0; i < FL_GUARD_MAX; i++) {
		if (fl_guard[i].base)
			continue;
		fl_guard[i].len = len;
		fl_guard[i].base = base;
		break;
	}
	if (!installed) {
		struct sigaction sa = { .sa_sigaction = fl_sigbus, .sa_flags = SA_SIGINFO };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
		installed = 1;
	}
}

static void fl_guard_del(void *base)
{
	for (int i = 0; i < FL_GUARD_MAX; i++)
		if (fl_guard[i].base == base)
			fl_guard[i].base = NULL;
}

int fl_dev_revoked(void)
{
	return __atomic_load_n(&fl_revoked, __ATOMIC_RELAXED);
}

int fl_dev_open(struct fl_dev *d, const char *path, int map)
{
	int ret;

	memset(d, 0, sizeof(*d));
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	ret = fl_dev_info(d, &d->info);
	if (ret)
		goto close_fd;
	if (map && d->info.nbufs) {
		void *p;

		d->map_len = (size_t)d->info.nbufs * d->info.buf_size;
		p = mmap(NULL, d->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd,
			 (off_t)d->info.mmap_offset);
		if (p == MAP_FAILED) {
			ret = -errno;
			goto close_fd;
		}
		d->map = p;
		fl_guard_add(p, d->map_len);
	}
	return 0;

close_fd:
	close(d->fd);
	d->fd = -1;
	return ret;
}

void fl_dev_close(struct fl_dev *d)
{
	if (d->map) {
		fl_guard_del(d->map);
		munmap(d->map, d->map_len);
	}
	if (d->fd >= 0)
		close(d->fd);
	d->map = NULL;
	d->fd = -1;
}

void *fl_dev_buf(const struct fl_dev *d, u32 idx)
{
	if (!d->map || idx >= d->info.nbufs)
		return NULL;
	return d->map + (size_t)idx * d->info.buf_size;
}

int fl_dev_info(struct fl_dev *d, struct fl_info *info)
{
	return ioctl(d->fd, FL_IOC_INFO, info) ? -errno : 0;
}

int fl_dev_stats(struct fl_dev *d, struct fl_stats *stats)
{
	return ioctl(d->fd, FL_IOC_STATS, stats) ? -errno : 0;
}

#define FL_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* struct fl_stats's counters in the order `framelink stats` prints them */
#define FL_STAT(f) { #f, offsetof(struct fl_stats, f) }
static const struct {
	const char *name;
	size_t off;
} fl_stats_fields[] = {
	FL_STAT(tx_frames),
	FL_STAT(tx_bytes),
	FL_STAT(rx_frames),
	FL_STAT(rx_bytes),
	FL_STAT(errors),
	FL_STAT(protocol_errors),
	FL_STAT(interrupts),
	FL_STAT(dma_transfers),
	FL_STAT(cpu_transfers),
	FL_STAT(polls),
	FL_STAT(poll_interval_us),
	FL_STAT(reaction_ns_max),
	FL_STAT(safety_wakeups),
	FL_STAT(queue_resets),
	FL_STAT(dma_aborts),
	FL_STAT(dma_leaked),
	FL_STAT(status_repairs),
	FL_STAT(intx_retries),
	FL_STAT(link_reads),
	FL_STAT(batch_irqs),
	FL_STAT(early_irqs),
	FL_STAT(stale_irqs),
	FL_STAT(tx_imported),
	FL_STAT(tx_v4l2),
	FL_STAT(rx_v4l2),
	FL_STAT(rx_reposted),
};

#undef FL_STAT

const char *fl_stats_field(const struct fl_stats *s, u32 i, u64 *val)
{
	if (i >= FL_ARRAY_SIZE(fl_stats_fields))
		return NULL;
	memcpy(val, (const char *)s + fl_stats_fields[i].off, sizeof(*val));
	return fl_stats_fields[i].name;
}

static int fl_dev_batch(struct fl_dev *d, unsigned long cmd, const void *ptr, u32 n,
			u32 *done)
{
	struct fl_batch b = { .ptr = (uintptr_t)ptr, .count = n };
	int ret;

	ret = ioctl(d->fd, cmd, &b) ? -errno : 0;
	if (done)
		*done = b.done;
	return ret;
}

int fl_dev_submit(struct fl_dev *d, const struct fl_frame *frames, u32 n, u32 *done)
{
	return fl_dev_batch(d, FL_IOC_SUBMIT, frames, n, done);
}

int fl_dev_post(struct fl_dev *d, const u32 *bufs, u32 n, u32 *done)
{
	return fl_dev_batch(d, FL_IOC_POST, bufs, n, done);
}

int fl_dev_reap(struct fl_dev *d, struct fl_completion *c, u32 max, int timeout_ms)
{
	struct fl_reap r = { .ptr = (uintptr_t)c, .max = max, .timeout_ms = timeout_ms };

	if (ioctl(d->fd, FL_IOC_REAP, &r))
		return -errno;
	return (int)r.count;
}

static u32 crc_table[256];

u32 fl_crc32(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;

	if (!crc_table[1]) {
		for (u32 i = 0; i < 256; i++) {
			u32 c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			crc_table[i] = c;
		}
	}
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

u64 fl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

int fl_parse_size(const char *s, u64 *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K':
		v <<= 10;
		end++;
		break;
	case 'm': case 'M':
		v <<= 20;
		end++;
		break;
	case 'g': case 'G':
		v <<= 30;
		end++;
		break;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

const char *fl_errno_name(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "OK";
	case EIO: return "EIO";
	case EPROTO: return "EPROTO";
	case ECANCELED: return "ECANCELED";
	case ENOLINK: return "ENOLINK";
	case ENODEV: return "ENODEV";
	case EMSGSIZE: return "EMSGSIZE";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case EAGAIN: return "EAGAIN";
	case EFAULT: return "EFAULT";
	case EINTR: return "EINTR";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSPC: return "ENOSPC";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

const char *fl_role_name(u32 role)
{
	switch (role) {
	case FL_ROLE_HOST:
		return "host";
	case FL_ROLE_ENDPOINT:
		return "endpoint";
	default:
		return "unknown";
	}
}

const char *fl_notify_name(u32 notify)
{
	switch (notify) {
	case FL_NOTIFY_POLL:
		return "polling";
	case FL_NOTIFY_INTX:
		return "INTx";
	case FL_NOTIFY_MSI:
		return "MSI";
	case FL_NOTIFY_MSIX:
		return "MSI-X";
	case FL_NOTIFY_DOORBELL:
		return "doorbell";
	default:
		return "unknown";
	}
}

const char *fl_xover_how_name(u32 how)
{
	switch (how) {
	case FL_XOVER_CONFIGURED:
		return "configured";
	case FL_XOVER_MEASURED:
		return "measured at enable";
	case FL_XOVER_NO_DMA:
		return "no DMA: CPU";
	case FL_XOVER_PENDING:
		return "auto: measured at the next enable";
	case FL_XOVER_FAILED:
		return "auto: measuring failed at enable, see the endpoint's log";
	default:
		return NULL;
	}
}

const char *fl_xfer_backend_name(u32 backend)
{
	switch (backend) {
	case FL_XFER_CPU:
		return "cpu";
	case FL_XFER_DMAENGINE:
		return "dmaengine";
	case FL_XFER_NVEDMA:
		return "nvidia-edma";
	case 0:
		return "not reported (older driver)";
	default:
		return "unknown";
	}
}
