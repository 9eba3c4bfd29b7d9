/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink stream's payload check (payload.c).
 *
 * The stamp places are the first and last 8 bytes of a frame and, with @pages, the first 8
 * bytes of every 4 KiB page between: the sender writes the frame's cookie there; the receiver
 * compares each with the cookie and poisons it before the buffer goes back, so a frame, or a
 * page of one, that did not arrive cannot pass for a later one.
 *
 * Every byte (stream --verify, with the page stamps): a sender's buffer is filled once, before
 * the run, with a pattern of its own (the CLI's fill_random(), seeded by its index and the
 * run's tag); only the stamp places change per frame. The receiver compares a
 * position-dependent 64-bit sum (a += word, b += a) over the frame with the sum of the
 * sender's buffer, both with the stamp places poisoned. One read of every frame on the
 * receiving end.
 */
#ifndef FRAMELINK_PAYLOAD_H
#define FRAMELINK_PAYLOAD_H

#include "libframelink.h"

#define PL_POISON	0x5a5a5a5a5a5a5a5aull

/* The position-dependent sum of a frame */
struct pl_sum {
	u64 a, b;
};

/* Fill @size bytes at @p with buffer @idx's pattern for run @tag; its sum, stamps poisoned */
struct pl_sum pl_fill(u8 *p, u64 size, u64 tag, u32 idx);

/* The frame's @cookie into every stamp place of @size bytes at @p (@pages: each page's too) */
void pl_stamp(u8 *p, u64 size, u64 cookie, int pages);

/* Poison every stamp place (@pages: each page's too); 1 when each held @cookie, else 0 */
int pl_take_stamps(u8 *p, u64 size, u64 cookie, int pages);

/* The sum of @size bytes at @p */
struct pl_sum pl_sum(const u8 *p, u64 size);

#endif /* FRAMELINK_PAYLOAD_H */
