/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the framelink CLI's commands share: the options framelink.c parses for them and the
 * helpers of common.c. One file a command group: info.c (info, stats, export), transfer.c
 * (send, recv, echo), bench.c (bench), check.c (check); stream.c and capture.c parse their
 * own options.
 */
#ifndef FRAMELINK_H
#define FRAMELINK_H

#include <stdio.h>

#include "libframelink.h"

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

/*
 * The commands (@o parsed, its device and timeout defaulted): 0 when everything was
 * verified, 1 on any failure, 2 on bad usage.
 */
int cmd_info(struct opts *o);		/* info.c */
int cmd_stats(struct opts *o);
int cmd_export(struct opts *o);
int cmd_send(struct opts *o);		/* transfer.c */
int cmd_recv(struct opts *o);
int cmd_echo(struct opts *o);
int cmd_bench(struct opts *o);		/* bench.c */
int cmd_check(struct opts *o);		/* check.c */

/* common.c: SIGINT and SIGTERM set a flag the loops test, without SA_RESTART */
void catch_stop_signals(void);
int stopped(void);

int parse_sizes(const char *arg, struct opts *o);
/* "4K", "1M" where exact, else the number */
const char *human(u64 v, char *buf, size_t len);

/* The test pattern of a frame: xorshift64* from a state that rnd_seed() derives from @seed */
u64 rnd_seed(u64 seed);
u64 rnd_next(u64 *s);
void fill_random(u8 *p, size_t n, u64 seed);
/* Index of the first byte of @p that differs from the pattern of @seed, or -1. */
long check_random(const u8 *p, size_t n, u64 seed);

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
void tally_add(struct tally *t, int status);
u64 tally_errors(const struct tally *t);
/* "WHO: status: OK=5 EPROTO=1" on @f; @end: how the program ended (0 or an errno). */
void tally_print(FILE *f, const char *who, const struct tally *t, int end);

/* fl_dev_open(), its failure said on stderr */
int open_dev(struct fl_dev *d, const char *path, int map);
/* POST @n buffers; a full ring leaves the rest for later. 0 or the error, said. */
int post_all(struct fl_dev *d, const u32 *idx, u32 n);

#endif /* FRAMELINK_H */
