// SPDX-License-Identifier: GPL-2.0
/*
 * framelink stream's payload check: buffer patterns, stamps and the frame sum (payload.h
 * says what is checked and why this way).
 *
 * Copyright (C) 2026 The framelink authors
 */
#include <string.h>

#include "framelink.h"
#include "payload.h"

#define PL_PAGE		4096u

/*
 * The stamp places of a frame of @size bytes (at least 16): 0, with @pages every page start
 * k * 4096 whose 8 bytes end before the last stamp's, then @size - 8. Returns the next place
 * after @at, or 0 past the last.
 */
static u64 pl_next(u64 at, u64 size, int pages)
{
	u64 next = at ? at - at % PL_PAGE + PL_PAGE : PL_PAGE;

	if (at == size - 8)
		return 0;
	return pages && next + 8 <= size - 8 ? next : size - 8;
}

void pl_stamp(u8 *p, u64 size, u64 cookie, int pages)
{
	u64 at = 0;

	do
		memcpy(p + at, &cookie, 8);
	while ((at = pl_next(at, size, pages)));
}

int pl_take_stamps(u8 *p, u64 size, u64 cookie, int pages)
{
	u64 at = 0, v, poison = PL_POISON;
	int ok = 1;

	do {
		memcpy(&v, p + at, 8);
		ok &= v == cookie;
		memcpy(p + at, &poison, 8);
	} while ((at = pl_next(at, size, pages)));
	return ok;
}

struct pl_sum pl_sum(const u8 *p, u64 size)
{
	struct pl_sum s = { 0, 0 };
	u64 i, w;

	for (i = 0; i + 8 <= size; i += 8) {
		memcpy(&w, p + i, 8);
		s.a += w;
		s.b += s.a;
	}
	if (i < size) {
		w = 0;
		memcpy(&w, p + i, size - i);
		s.a += w;
		s.b += s.a;
	}
	return s;
}

struct pl_sum pl_fill(u8 *p, u64 size, u64 tag, u32 idx)
{
	/* the CLI's test pattern (send --verify), one seed a buffer and run */
	fill_random(p, size, tag << 32 | idx);
	pl_take_stamps(p, size, 0, 1);
	return pl_sum(p, size);
}
