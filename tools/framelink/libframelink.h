/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libframelink: a small C library over the framelink ioctls (include/uapi/linux/framelink.h).
 * The same calls work on /dev/framelink<N> (host) and /dev/framelink-ep<N> (endpoint).
 * Every function returns 0 (or a count) on success and a negative errno on failure.
 */
#ifndef LIBFRAMELINK_H
#define LIBFRAMELINK_H

#include <stddef.h>
#include <stdint.h>
#include <linux/framelink.h>
#include <framelink/abi-check.h>

/* the kernel's short names, as tools/include does (u64 is unsigned long long: %llu) */
typedef __u64 u64;
typedef __u32 u32;
typedef __u8 u8;

/**
 * struct fl_dev - an open framelink device
 * @fd: the file descriptor.
 * @info: FL_IOC_INFO, read at open.
 * @map: all buffers, mmap()ed at info.mmap_offset (NULL when opened without mapping).
 * @map_len: info.nbufs * info.buf_size.
 */
struct fl_dev {
	int fd;
	struct fl_info info;
	u8 *map;
	size_t map_len;
};

/* Open @path, read INFO and, when @map is non-zero, mmap() every buffer. */
int fl_dev_open(struct fl_dev *d, const char *path, int map);
void fl_dev_close(struct fl_dev *d);

/*
 * Non-zero once a buffer mapping was revoked (device removed, function unbound) and an
 * access to it was caught: fl_dev_open() guards its mapping against SIGBUS, replacing a
 * revoked one with zero pages, so the program lives on to REAP the errno.
 */
int fl_dev_revoked(void);

/* Buffer @idx in this process, or NULL when not mapped or out of range. */
void *fl_dev_buf(const struct fl_dev *d, u32 idx);

int fl_dev_info(struct fl_dev *d, struct fl_info *info);
int fl_dev_stats(struct fl_dev *d, struct fl_stats *stats);

/*
 * Counter @i of @s (0, 1, ... in `framelink stats` order): its name, its value in *@val;
 * NULL past the last one.
 */
const char *fl_stats_field(const struct fl_stats *s, u32 i, u64 *val);

/*
 * SUBMIT @n frames / POST @n buffers. *@done (may be NULL) gets how many were accepted; on
 * an error it is the index of the entry that failed.
 */
int fl_dev_submit(struct fl_dev *d, const struct fl_frame *frames, u32 n, u32 *done);
int fl_dev_post(struct fl_dev *d, const u32 *bufs, u32 n, u32 *done);

/* REAP up to @max completions, waiting up to @timeout_ms for the first; returns the count. */
int fl_dev_reap(struct fl_dev *d, struct fl_completion *c, u32 max, int timeout_ms);

/* CRC-32 (IEEE 802.3, as zlib's crc32()); start with @crc = 0. */
u32 fl_crc32(u32 crc, const void *buf, size_t len);

/* CLOCK_MONOTONIC in ns, the clock of the completion timestamps. */
u64 fl_now_ns(void);

/*
 * A number as the tools take it: decimal, 0x hex or 0 octal, then an optional K, M or G
 * (1K = 1024), "i" and "B" ("4K", "4KiB", "1MB"). 0, or -EINVAL for anything else.
 */
int fl_parse_size(const char *s, u64 *out);

/*
 * The name of errno @e ("ECANCELED", not strerror()'s text: test scripts match the exact
 * errno), "OK" for 0, "E<n>" for one without a name here (in a static buffer).
 */
const char *fl_errno_name(int e);

const char *fl_role_name(u32 role);
const char *fl_notify_name(u32 notify);
const char *fl_xfer_backend_name(u32 backend);
/*
 * How a crossover was found: FL_XOVER_WR()/FL_XOVER_RD() of fl_info.crossover_how; NULL if
 * not reported (the host, an older driver).
 */
const char *fl_xover_how_name(u32 how);

#endif /* LIBFRAMELINK_H */
