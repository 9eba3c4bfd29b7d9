// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the outbound window (map_addr) as a live mapping.
 *
 * The EPC core ioremap()s window addresses for the EPF, and software cannot
 * make an ioremap of one physical page alias another, so the window is real
 * memory and a propagation worker keeps it and host memory in step:
 *
 * - every win_tick_us (default 100 us; optionally backing off to
 *   win_idle_tick_us while nothing moves) it compares the live mappings with a shadow copy
 *   (host memory as last synchronised): bytes the EPF changed in the window
 *   (window != shadow) are its posted writes and go to host memory; bytes
 *   the host changed (host != shadow, window == shadow) come into the window,
 *   so reads through the window see host memory;
 * - EPF writes are taken as a consistent cut (the changed words are read
 *   again until two reads agree), so a later write is never published before
 *   an earlier one that the cut missed; a pass that cannot scan everything
 *   covers whole mappings, so the cut is consistent within each mapping;
 * - posted_ns delays a cut's publication: it becomes visible to the host no
 *   earlier than posted_ns after the worker took it. While a cut waits, no
 *   new cut is taken, which keeps the writes in order;
 * - publication order: the EPF's stores within one cut cannot be told apart
 *   in time, yet the host may read while a cut is being stored. A cut is
 *   stored highest address first, which is program order for a producer that
 *   fills entries above the index that publishes them (framelink's completion
 *   area: cq_prod at +0, entries from +64), so such a host never sees the
 *   index before the data, as it would not on PCIe. A driver whose index lies
 *   above its data would see it early here: a false hazard the lab documents;
 * - flush points publish at once: unmap_addr, and raise_irq (the MSI
 *   ordering point) unless msi_overtake is set. A link down discards what
 *   was not published, as a link loss loses posted writes in flight;
 * - Bus Master Enable: while the host keeps it clear for the mapping's
 *   function, the EPF's writes are dropped (never published later), host
 *   memory is not read (a mapping made then reads all-ones) and nothing of
 *   the host's reaches the window; counted in bme_dropped and in the loop's
 *   bme_blocked. Whether a real controller drops or errors a CPU access then
 *   is not known here; nothing reaches host memory either way.
 *
 * A CPU load through the window (the read that flushes posted writes on
 * PCIe) cannot be trapped, so it is no flush point here: see
 * Documentation/pci-epc-loop.rst, "Outbound window".
 *
 * Locking: win_lock protects the mapping list, every mapping's shadow and
 * stage, the cut state and the statistics. Host memory and the window are
 * written with cmpxchg so that a concurrent CPU store by the other side to
 * another byte of the same word is never lost.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kasan.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <framelink/epc-loop-test.h>

#include "loop.h"

#define LOOP_WIN_TICK_US	100
#define LOOP_WIN_TICK_MIN_US	10
#define LOOP_WIN_TICK_MAX_US	100000
/* Quiet passes before the worker starts backing off towards win_idle_tick_us */
#define LOOP_WIN_QUIET_PASSES	8
#define LOOP_WIN_SCAN_BYTES	SZ_64K
#define LOOP_WIN_SCAN_MIN	SZ_4K
/* Words compared with memcmp() at once before looking at single words */
#define LOOP_WIN_BLOCK_WORDS	64
/* Reads of a cut until two agree; more means the EPF kept writing */
#define LOOP_WIN_CUT_TRIES	4
/* cmpxchg retries on a word the other side keeps changing */
#define LOOP_WIN_CAS_TRIES	16

/* Indexes of pci_epc_loop.win_stat */
enum loop_win_stat {
	LOOP_WIN_TICKS,		/* worker passes */
	LOOP_WIN_BUSY_NS,	/* time the worker spent in passes */
	LOOP_WIN_BUSY_MAX_NS,	/* longest pass */
	LOOP_WIN_GAP_MAX_NS,	/* longest time between two passes */
	LOOP_WIN_SCANNED,	/* bytes compared by the worker */
	LOOP_WIN_PARTIAL,	/* passes that covered only part of the window */
	LOOP_WIN_CUTS,		/* cuts of EPF writes taken */
	LOOP_WIN_UNSETTLED,	/* cuts the EPF kept changing (taken anyway) */
	LOOP_WIN_PUBLISHED,	/* EPF-written bytes made visible to the host */
	LOOP_WIN_FETCHED,	/* host-written bytes brought into the window */
	LOOP_WIN_FLUSH_UNMAP,	/* flushes at unmap_addr */
	LOOP_WIN_FLUSH_IRQ,	/* flushes at raise_irq */
	LOOP_WIN_OVERTAKEN,	/* raise_irq without flush (msi_overtake) */
	LOOP_WIN_BME_DROPPED,	/* EPF-written bytes dropped: Bus Master Enable clear */
	LOOP_WIN_NR_STATS
};

static const char * const loop_win_stat_names[] = {
	"ticks", "busy_ns", "busy_max_ns", "gap_max_ns", "scanned",
	"partial", "cuts", "unsettled", "published", "fetched",
	"flush_unmap", "flush_irq", "overtaken", "bme_dropped",
};

/**
 * struct loop_win_map - one outbound window mapping (map_addr)
 * @node: entry in &pci_epc_loop.win_maps
 * @func: the function whose requests the mapping's accesses are (map_addr's)
 * @phys: window physical address the EPF mapped
 * @pci_addr: host (PCI) address it maps to
 * @size: size of the mapping in bytes
 * @nwords: 8-byte words covering @size
 * @tail: valid bytes of the last word (all ones if @size is a multiple of 8)
 * @win: CPU address of the window bytes (8-byte aligned)
 * @host: CPU address of the host bytes
 * @host_aligned: @host is 8-byte aligned: host words are stored atomically
 * @shadow: host bytes as last synchronised (invalid tail bytes are 0)
 * @stage: EPF writes of the current cut; equal to @shadow elsewhere
 * @dlo: first word of the cut in @stage
 * @dhi: end of the cut in @stage (@dlo == @dhi: nothing staged)
 *
 * Everything but the memory @win and @host point to is protected by
 * &pci_epc_loop.win_lock.
 */
struct loop_win_map {
	struct list_head node;
	u8 func;
	phys_addr_t phys;
	u64 pci_addr;
	size_t size;
	size_t nwords;
	u64 tail;
	u64 *win;
	void *host;
	bool host_aligned;
	u64 *shadow;
	u64 *stage;
	size_t dlo;
	size_t dhi;
};

enum loop_win_op {
	LOOP_WIN_SCAN,		/* find EPF and host writes */
	LOOP_WIN_SCAN_CUT,	/* ... and stage the EPF writes (a cut) */
	LOOP_WIN_VERIFY,	/* read the cut again, report changes */
};

static void loop_win_stat_add(struct pci_epc_loop *loop, enum loop_win_stat s,
			      u64 v)
{
	loop->win_stat[s] += v;
}

static void loop_win_stat_max(struct pci_epc_loop *loop, enum loop_win_stat s,
			      u64 v)
{
	loop->win_stat[s] = max(loop->win_stat[s], v);
}

/**
 * loop_win_bytemask() - 0xff in every byte of @x that is not zero
 * @x: a word of changed bits (old ^ new).
 *
 * Return: the mask of the bytes that changed.
 */
u64 loop_win_bytemask(u64 x)
{
	u64 m = 0;
	int k;

	for (k = 0; k < 64; k += 8)
		if ((x >> k) & 0xff)
			m |= 0xffULL << k;
	return m;
}

static u64 loop_win_valid(const struct loop_win_map *m, size_t i)
{
	return i == m->nwords - 1 ? m->tail : ~0ULL;
}

static size_t loop_win_nbytes(const struct loop_win_map *m, size_t i)
{
	return min_t(size_t, 8, m->size - i * 8);
}

/*
 * Reads of host memory on behalf of a mapping are a device's reads, not the host CPU's: on
 * PCIe a window mapping reads nothing until the EPF loads through it, but this emulation
 * copies whole mappings (at map, and in the worker's compares), and a mapping is rounded
 * to the window granularity (64 KiB on the tegra234 profiles), so it also covers bytes
 * past the buffer the EPF reads: host memory that may be free or belong to someone else.
 * KASAN must not judge those reads: it would report the host's free pages, and its
 * memcpy() skips a copy it reported, handing the EPF stale window contents (a camera
 * frame's CRC mismatched so, 76-camera.sh). Writes to host memory (the EPF's published
 * stores) stay checked.
 */
static void loop_host_read(void *dst, const void *host, size_t len)
{
	kasan_disable_current();
	memcpy(dst, host, len);
	kasan_enable_current();
}

static bool loop_host_same(const void *host, const void *shadow, size_t len)
{
	bool same;

	kasan_disable_current();
	same = !memcmp(host, shadow, len);
	kasan_enable_current();
	return same;
}

static u64 loop_win_host_load(const struct loop_win_map *m, size_t i)
{
	u64 v = 0;

	if (m->host_aligned) {
		kasan_disable_current();
		v = READ_ONCE(((u64 *)m->host)[i]) & loop_win_valid(m, i);
		kasan_enable_current();
		return v;
	}
	/* Unaligned host address: only the bytes inside the mapping */
	loop_host_read(&v, m->host + i * 8, loop_win_nbytes(m, i));
	return v;
}

/*
 * Store the @mask bytes of @val into host word @i. A cmpxchg keeps host
 * stores to the other bytes of the word that race with us; a word the host
 * keeps changing gets a plain store after a bounded number of tries.
 */
static void loop_win_host_store(struct loop_win_map *m, size_t i, u64 val,
				u64 mask)
{
	u8 v[8], mk[8];
	int k;

	if (m->host_aligned) {
		u64 *p = (u64 *)m->host + i;
		u64 old = READ_ONCE(*p), prev;

		for (k = 0; k < LOOP_WIN_CAS_TRIES; k++) {
			prev = cmpxchg(p, old, (old & ~mask) | (val & mask));
			if (prev == old)
				return;
			old = prev;
		}
		WRITE_ONCE(*p, (old & ~mask) | (val & mask));
		return;
	}
	/* Unaligned host address (pre-6.12 EPFs map unaligned): bytewise */
	memcpy(v, &val, sizeof(v));
	memcpy(mk, &mask, sizeof(mk));
	for (k = 0; k < loop_win_nbytes(m, i); k++)
		if (mk[k])
			WRITE_ONCE(((u8 *)m->host)[i * 8 + k], v[k]);
}

/* Offset of a mapping in the window */
static u32 loop_win_off(const struct pci_epc_loop *loop, const struct loop_win_map *m)
{
	return m->phys - loop->win_phys;
}

static void loop_win_stage(struct loop_win_map *m, size_t i, u64 w)
{
	m->stage[i] = w;
	if (m->dlo == m->dhi) {
		m->dlo = i;
		m->dhi = i + 1;
	} else {
		m->dlo = min(m->dlo, i);
		m->dhi = max(m->dhi, i + 1);
	}
}

/*
 * Bring the bytes the host changed in word @i into the window. The window
 * word is replaced only if the EPF did not store to it meanwhile (cmpxchg);
 * otherwise the next pass sees an EPF write and the host bytes wait.
 */
static u64 loop_win_fetch(struct loop_win_map *m, size_t i, u64 w, u64 h,
			  u64 s)
{
	u64 hm = loop_win_bytemask(h ^ s);
	u64 nw = (w & ~hm) | (h & hm);

	if (cmpxchg(&m->win[i], w, nw) != w)
		return 0;
	m->shadow[i] = (s & ~hm) | (h & hm);
	m->stage[i] = m->shadow[i];
	return hweight64(hm) / 8;
}

/*
 * Scan words [lo, hi) of @m; returns true if an EPF write was staged.
 *
 * Bus Master Enable of the mapping's function clear: it issues no request.
 * What the EPF wrote is dropped instead (taken as the window's contents, so
 * it never lands later) and host memory is neither read nor written; once
 * the host sets the bit again, host bytes come back in as usual.
 */
static bool loop_win_scan(struct pci_epc_loop *loop, struct loop_win_map *m,
			  size_t lo, size_t hi, bool cut)
{
	bool blocked = !loop_fn_master(loop, m->func);
	u8 *win = (u8 *)m->win, *shadow = (u8 *)m->shadow;
	u64 fetched = 0, dropped = 0;
	bool staged = false;
	size_t b, i;

	for (b = lo; b < hi; b += LOOP_WIN_BLOCK_WORDS) {
		size_t e = min(hi, b + LOOP_WIN_BLOCK_WORDS);
		size_t len = min_t(size_t, (e - b) * 8, m->size - b * 8);

		/* Fast path: nothing changed on either side (blocked: host not read) */
		if (!memcmp(win + b * 8, shadow + b * 8, len) &&
		    (blocked || loop_host_same(m->host + b * 8, shadow + b * 8, len)))
			continue;

		for (i = b; i < e; i++) {
			u64 s = m->shadow[i], w, h;

			/* Staged in a cut that waits: publication decides */
			if (m->stage[i] != s)
				continue;
			w = READ_ONCE(m->win[i]);
			if ((w & loop_win_valid(m, i)) != s) {
				w &= loop_win_valid(m, i);
				if (blocked) {
					dropped += hweight64(loop_win_bytemask(w ^ s)) / 8;
					m->shadow[i] = w;
					m->stage[i] = w;
				} else if (cut) {
					loop_win_stage(m, i, w);
					staged = true;
				}
				continue;
			}
			/* Watched words are the function's alone (watch.c) */
			if (blocked || loop_watch_word(loop, loop_win_off(loop, m) + i * 8))
				continue;
			h = loop_win_host_load(m, i);
			if (h != s)
				fetched += loop_win_fetch(m, i, w, h, s);
		}
	}
	loop_win_stat_add(loop, LOOP_WIN_SCANNED, (hi - lo) * 8);
	loop_win_stat_add(loop, LOOP_WIN_FETCHED, fetched);
	loop_win_stat_add(loop, LOOP_WIN_BME_DROPPED, dropped);
	atomic64_add(dropped, &loop->stats.bme_blocked);
	return staged;
}

/*
 * Read words [lo, hi) of @m again and update the cut where the window no
 * longer matches it. Returns true if anything changed.
 */
static bool loop_win_verify(struct loop_win_map *m, size_t lo, size_t hi)
{
	u8 *win = (u8 *)m->win, *stage = (u8 *)m->stage;
	bool changed = false;
	size_t b, i;

	for (b = lo; b < hi; b += LOOP_WIN_BLOCK_WORDS) {
		size_t e = min(hi, b + LOOP_WIN_BLOCK_WORDS);
		size_t len = min_t(size_t, (e - b) * 8, m->size - b * 8);

		if (!memcmp(win + b * 8, stage + b * 8, len))
			continue;
		for (i = b; i < e; i++) {
			u64 w = READ_ONCE(m->win[i]) & loop_win_valid(m, i);

			if (w != m->stage[i]) {
				loop_win_stage(m, i, w);
				changed = true;
			}
		}
	}
	return changed;
}

/*
 * Apply @op to @n words of the live mappings laid end to end, starting at
 * word @start and wrapping around once. Returns true if @op found anything.
 */
static bool loop_win_sweep(struct pci_epc_loop *loop, size_t start, size_t n,
			   enum loop_win_op op)
{
	size_t seg[2][2] = { { start, min(start + n, loop->win_words) },
			     { 0, start + n > loop->win_words ?
				  start + n - loop->win_words : 0 } };
	struct loop_win_map *m;
	bool found = false;
	size_t base = 0;
	int k;

	list_for_each_entry(m, &loop->win_maps, node) {
		for (k = 0; k < 2; k++) {
			size_t lo = max(seg[k][0], base);
			size_t hi = min(seg[k][1], base + m->nwords);

			if (lo >= hi)
				continue;
			lo -= base;
			hi -= base;
			if (op == LOOP_WIN_VERIFY)
				found |= loop_win_verify(m, lo, hi);
			else
				found |= loop_win_scan(loop, m, lo, hi,
						       op == LOOP_WIN_SCAN_CUT);
		}
		base += m->nwords;
	}
	return found;
}

/*
 * A cut was staged: read it again until two reads agree, so it is the
 * window's contents at one instant (the EPF's stores are ordered, so a
 * stable cut holds a write only with every write before it).
 */
static void loop_win_settle(struct pci_epc_loop *loop, size_t start, size_t n)
{
	int tries;

	loop_win_stat_add(loop, LOOP_WIN_CUTS, 1);
	for (tries = 0; tries < LOOP_WIN_CUT_TRIES; tries++) {
		/* The second read of every word after the first of all */
		smp_rmb();
		if (!loop_win_sweep(loop, start, n, LOOP_WIN_VERIFY))
			return;
	}
	loop_win_stat_add(loop, LOOP_WIN_UNSETTLED, 1);
}

/* The mapping holding window offset @off */
static struct loop_win_map *loop_win_map_at(struct pci_epc_loop *loop, u32 off)
{
	struct loop_win_map *m;

	list_for_each_entry(m, &loop->win_maps, node)
		if (off >= loop_win_off(loop, m) && off - loop_win_off(loop, m) < m->size)
			return m;
	return NULL;
}

/*
 * Publish one logged store (watch.c) as its own write: the bytes of it that
 * lie in watched words (at most two words). Returns the bytes published;
 * without Bus Master Enable they are dropped and counted in *@dropped.
 */
static u64 loop_win_replay_store(struct pci_epc_loop *loop, u32 off, u8 size, u64 val,
				 u64 *dropped)
{
	struct loop_win_map *m = loop_win_map_at(loop, off);
	u64 v[2] = {}, mk[2] = {}, bytes = 0;
	size_t i0, i;
	u32 moff, b;
	int k;

	if (!m)
		return 0;
	moff = off - loop_win_off(loop, m);
	i0 = moff / 8;
	for (k = 0; k < size; k++) {
		b = moff + k;
		if (b >= m->size || !loop_watch_word(loop, loop_win_off(loop, m) + (b & ~7U)))
			continue;
		v[b / 8 - i0] |= ((val >> (8 * k)) & 0xff) << (8 * (b % 8));
		mk[b / 8 - i0] |= 0xffULL << (8 * (b % 8));
	}
	for (k = 0; k < 2; k++) {
		u64 old;

		if (!mk[k])
			continue;
		i = i0 + k;
		if (!loop_fn_master(loop, m->func)) {
			*dropped += hweight64(mk[k]) / 8;
			continue;
		}
		old = loop_win_host_load(m, i);
		loop_hook_publish(loop, m->pci_addr + i * 8, (old & ~mk[k]) | v[k], old, mk[k]);
		loop_win_host_store(m, i, v[k], mk[k]);
		bytes += hweight64(mk[k]) / 8;
	}
	return bytes;
}

/* After a replay: the watched words' shadow is what host memory holds now */
static void loop_win_watch_sync(struct pci_epc_loop *loop)
{
	struct loop_win_map *m;
	size_t i;

	list_for_each_entry(m, &loop->win_maps, node) {
		u32 lo, hi;

		if (!loop_watch_range(loop, loop_win_off(loop, m), m->size, &lo, &hi))
			continue;
		for (i = lo / 8; i < DIV_ROUND_UP(hi, 8); i++) {
			u64 h = loop_fn_master(loop, m->func) ? loop_win_host_load(m, i) :
				READ_ONCE(m->win[i]) & loop_win_valid(m, i);

			m->shadow[i] = h;
			m->stage[i] = h;
		}
	}
}

/*
 * The watched words' stores of this cut, one at a time and tear_us apart,
 * in the order the CPU made them: a host read in between sees each
 * intermediate value, as it would between two posted writes on PCIe.
 */
static u64 loop_win_replay(struct pci_epc_loop *loop, u64 *dropped)
{
	u32 gap = loop_watch_tear_us(loop), off;
	u64 val, bytes = 0;
	bool first = true;
	u8 size;

	while (loop_watch_next(loop, &off, &size, &val)) {
		if (!first && gap)
			fsleep(gap);
		first = false;
		bytes += loop_win_replay_store(loop, off, size, val, dropped);
	}
	loop_win_watch_sync(loop);
	return bytes;
}

/*
 * Make the staged cut visible to the host, highest address first; then the
 * watched words' stores one by one (they come last in program order: the
 * cut was taken after them, see loop_watch_cut()).
 */
static void loop_win_publish(struct pci_epc_loop *loop)
{
	bool whole = loop_watch_whole(loop);
	bool replay = !whole && loop_watch_pending(loop);
	/* Stores logged after the cut: their words wait for the next replay too */
	bool by_log = !whole && loop_watch_logged(loop);
	u64 bytes = 0, dropped = 0;
	struct loop_win_map *m;
	size_t i;

	list_for_each_entry(m, &loop->win_maps, node) {
		bool blocked = !loop_fn_master(loop, m->func);

		/* Highest address first: see "publication order" at the top of this file */
		for (i = m->dhi; i-- > m->dlo;) {
			u64 v = m->stage[i], s = m->shadow[i], mask;

			if (v == s)
				continue;
			if (by_log && loop_watch_word(loop, loop_win_off(loop, m) + i * 8)) {
				/* Unstaged: the next sweep stages it again, with its stores */
				m->stage[i] = s;
				continue;
			}
			mask = loop_win_bytemask(v ^ s);
			m->shadow[i] = v;
			/* Bus Master Enable cleared since the cut was taken: dropped */
			if (blocked) {
				dropped += hweight64(mask) / 8;
				continue;
			}
			loop_hook_publish(loop, m->pci_addr + i * 8, v, s, mask);
			/* Fully ordered cmpxchg: stores land in this order */
			loop_win_host_store(m, i, v, mask);
			bytes += hweight64(mask) / 8;
		}
		m->dlo = 0;
		m->dhi = 0;
	}
	if (replay)
		bytes += loop_win_replay(loop, &dropped);
	loop->win_pending = false;
	loop_win_stat_add(loop, LOOP_WIN_PUBLISHED, bytes);
	loop_win_stat_add(loop, LOOP_WIN_BME_DROPPED, dropped);
	atomic64_add(dropped, &loop->stats.bme_blocked);
	if (bytes)
		atomic64_add(bytes, &loop->stats.win_flushed);
}

/* A flush point: everything the EPF wrote becomes visible now. */
static void loop_win_flush_locked(struct pci_epc_loop *loop)
{
	lockdep_assert_held(&loop->win_lock);

	if (!loop->win_words)
		return;
	/* The waiting cut holds older writes: it goes first */
	if (loop->win_pending)
		loop_win_publish(loop);
	loop_watch_cut(loop);
	if (loop_win_sweep(loop, 0, loop->win_words, LOOP_WIN_SCAN_CUT)) {
		loop_win_settle(loop, 0, loop->win_words);
		loop_win_publish(loop);
	}
}

enum loop_win_pass {
	LOOP_WIN_PASS_NONE,	/* no live mapping */
	LOOP_WIN_PASS_QUIET,	/* nothing moved, nothing waits */
	LOOP_WIN_PASS_ACTIVE,	/* something moved or a cut waits */
};

/*
 * Widen a partial pass to whole mappings: a cut holds a write with every
 * write before it only within the words it covers, so a pass that ended
 * between a producer's entries and its index (one mapping) could publish the
 * index alone.
 */
static void loop_win_whole_maps(struct pci_epc_loop *loop, size_t *start,
				size_t *n)
{
	size_t base = 0, lo = 0, hi = 0;
	struct loop_win_map *m;
	bool in = false;

	list_for_each_entry(m, &loop->win_maps, node) {
		size_t end = base + m->nwords;

		if (!in && *start < end) {
			in = true;
			lo = base;
		}
		if (in) {
			hi = end;
			if (hi - lo >= *n)
				break;
		}
		base = end;
	}
	*start = lo;
	*n = hi - lo;
}

/* One worker pass */
static enum loop_win_pass loop_win_tick(struct pci_epc_loop *loop)
{
	u64 posted = READ_ONCE(loop->win_posted_ns);
	size_t n, start, total;
	u64 t0, t1, moved;
	bool active;

	mutex_lock(&loop->win_lock);
	total = loop->win_words;
	if (!total) {
		mutex_unlock(&loop->win_lock);
		return LOOP_WIN_PASS_NONE;
	}
	/* Link down: nothing crosses it; loop_win_drop_all() follows */
	if (!loop_ep_up(loop)) {
		mutex_unlock(&loop->win_lock);
		return LOOP_WIN_PASS_QUIET;
	}
	moved = loop->win_stat[LOOP_WIN_CUTS] + loop->win_stat[LOOP_WIN_FETCHED];

	t0 = ktime_get_ns();
	if (loop->win_last_tick)
		loop_win_stat_max(loop, LOOP_WIN_GAP_MAX_NS,
				  t0 - loop->win_last_tick);
	loop->win_last_tick = t0;

	if (loop->win_pending && t0 - loop->win_pending_since >= posted)
		loop_win_publish(loop);

	n = max_t(size_t, READ_ONCE(loop->win_scan_bytes), LOOP_WIN_SCAN_MIN) / 8;
	if (n >= total) {
		start = 0;
		n = total;
	} else {
		start = loop->win_cursor % total;
		loop_win_whole_maps(loop, &start, &n);
		loop_win_stat_add(loop, LOOP_WIN_PARTIAL, 1);
	}

	if (!loop->win_pending)
		loop_watch_cut(loop);
	if (loop_win_sweep(loop, start, n, loop->win_pending ?
			   LOOP_WIN_SCAN : LOOP_WIN_SCAN_CUT)) {
		loop_win_settle(loop, start, n);
		if (posted) {
			loop->win_pending = true;
			loop->win_pending_since = ktime_get_ns();
		} else {
			loop_win_publish(loop);
		}
	}
	loop->win_cursor = (start + n) % total;
	active = loop->win_pending || moved != loop->win_stat[LOOP_WIN_CUTS] +
					      loop->win_stat[LOOP_WIN_FETCHED];

	t1 = ktime_get_ns();
	loop_win_stat_add(loop, LOOP_WIN_TICKS, 1);
	loop_win_stat_add(loop, LOOP_WIN_BUSY_NS, t1 - t0);
	loop_win_stat_max(loop, LOOP_WIN_BUSY_MAX_NS, t1 - t0);
	mutex_unlock(&loop->win_lock);
	return active ? LOOP_WIN_PASS_ACTIVE : LOOP_WIN_PASS_QUIET;
}

/*
 * Sleep after a pass: win_tick_us; after LOOP_WIN_QUIET_PASSES quiet passes
 * in a row, twice the previous sleep each time up to win_idle_tick_us (no
 * back-off while that is not above win_tick_us, the default).
 */
static u32 loop_win_next_sleep(struct pci_epc_loop *loop, u32 prev,
			       unsigned int quiet)
{
	u32 tick = clamp_t(u32, READ_ONCE(loop->win_tick_us),
			   LOOP_WIN_TICK_MIN_US, LOOP_WIN_TICK_MAX_US);
	u32 idle = clamp_t(u32, READ_ONCE(loop->win_idle_tick_us), tick,
			   LOOP_WIN_TICK_MAX_US);

	if (quiet < LOOP_WIN_QUIET_PASSES)
		return tick;
	return clamp_t(u32, prev * 2, tick, idle);
}

static int loop_win_thread(void *data)
{
	struct pci_epc_loop *loop = data;
	unsigned int quiet = 0;
	u32 us = 0;

	while (!kthread_should_stop()) {
		enum loop_win_pass pass = loop_win_tick(loop);

		if (pass != LOOP_WIN_PASS_NONE) {
			quiet = pass == LOOP_WIN_PASS_QUIET ?
				min(quiet + 1, LOOP_WIN_QUIET_PASSES) : 0;
			us = loop_win_next_sleep(loop, us, quiet);
			usleep_range_state(us, us + us / 4, TASK_IDLE);
			continue;
		}
		quiet = 0;
		/* No live mapping: sleep until map_addr or stop wakes us */
		set_current_state(TASK_IDLE);
		if (!READ_ONCE(loop->win_words) && !kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
		mutex_lock(&loop->win_lock);
		loop->win_last_tick = 0;
		mutex_unlock(&loop->win_lock);
	}
	return 0;
}

static void loop_win_free_map(struct pci_epc_loop *loop,
			      struct loop_win_map *m)
{
	loop_watch_unmapped(loop, loop_win_off(loop, m), m->size);
	list_del(&m->node);
	WRITE_ONCE(loop->win_words, loop->win_words - m->nwords);
	loop->win_cursor = 0;
	kvfree(m->shadow);
	kfree(m);
}

/**
 * loop_win_flush_all() - the MSI ordering point
 * @loop: the loopback
 *
 * raise_irq calls this before it delivers an interrupt. With msi_overtake
 * clear, posted writes are ordered before the MSI (PCIe ordering): every
 * write the EPF made through the window, including a cut waiting for
 * posted_ns, becomes visible to the host first. With msi_overtake set the
 * interrupt does not wait: writes become visible when the worker publishes
 * them, so the interrupt can arrive before the data.
 *
 * Context: process context, may sleep.
 */
void loop_win_flush_all(struct pci_epc_loop *loop)
{
	bool overtake = READ_ONCE(loop->win_msi_overtake);

	mutex_lock(&loop->win_lock);
	if (overtake) {
		loop_win_stat_add(loop, LOOP_WIN_OVERTAKEN, 1);
	} else if (loop->win_words && loop_ep_up(loop)) {
		loop_win_stat_add(loop, LOOP_WIN_FLUSH_IRQ, 1);
		loop_win_flush_locked(loop);
	}
	mutex_unlock(&loop->win_lock);
}

/**
 * loop_win_drop_all() - forget all outbound mappings without writing back
 * @loop: the loopback
 *
 * Link down and removal: what was not published is lost, as posted writes
 * in flight are when a link goes down. The worker is stopped; the next
 * map_addr starts a new one.
 */
void loop_win_drop_all(struct pci_epc_loop *loop)
{
	struct loop_win_map *m, *tmp;
	struct task_struct *task;

	mutex_lock(&loop->win_lock);
	list_for_each_entry_safe(m, tmp, &loop->win_maps, node)
		loop_win_free_map(loop, m);
	loop->win_pending = false;
	task = loop->win_task;
	loop->win_task = NULL;
	mutex_unlock(&loop->win_lock);

	/* Not under win_lock: the worker takes it */
	if (task)
		kthread_stop(task);
}

/* Start the worker if there is none; win_lock held */
static int loop_win_start_worker(struct pci_epc_loop *loop)
{
	struct task_struct *task;

	if (loop->win_task)
		return 0;
	task = kthread_run(loop_win_thread, loop, "%s-win",
			   dev_name(loop->dev));
	if (IS_ERR(task))
		return PTR_ERR(task);
	loop->win_task = task;
	return 0;
}

/**
 * loop_win_map() - map_addr: map host memory into the outbound window
 * @loop: the loopback
 * @func_no: the function whose requests the accesses are (Bus Master Enable)
 * @addr: window physical address (from pci_epc_mem_alloc_addr())
 * @pci_addr: host (PCI) address
 * @size: bytes to map
 *
 * The window starts as a copy of host memory and stays live until unmap:
 * the worker propagates writes in both directions while the function may
 * master (loop_fn_master()).
 *
 * Context: process context (EPC ops run under epc->lock).
 * Return: 0, -ENOLINK without link, -EINVAL for a bad range, -ENOMEM.
 */
int loop_win_map(struct pci_epc_loop *loop, u8 func_no, phys_addr_t addr, u64 pci_addr,
		 size_t size)
{
	struct loop_win_map *m;
	struct task_struct *wake;
	void *host;
	int ret;

	if (!loop_ep_up(loop))
		return -ENOLINK;
	if (!size || addr < loop->win_phys ||
	    addr + size > loop->win_phys + LOOP_WIN_SIZE)
		return -EINVAL;
	/* Window addresses come from the EPC's page-aligned allocator */
	if (!IS_ALIGNED(addr - loop->win_phys, 8))
		return -EINVAL;
	host = loop_phys_to_virt(loop, pci_addr, size);
	if (!host) {
		dev_err_ratelimited(loop->dev,
				    "outbound map to unbacked PCI address %#llx+%zx\n",
				    pci_addr, size);
		return -EINVAL;
	}

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->nwords = DIV_ROUND_UP(size, 8);
	m->shadow = kvcalloc(2 * m->nwords, sizeof(u64), GFP_KERNEL);
	if (!m->shadow) {
		ret = -ENOMEM;
		goto err_free_map;
	}
	m->stage = m->shadow + m->nwords;
	m->func = func_no;
	m->phys = addr;
	m->pci_addr = pci_addr;
	m->size = size;
	memset(&m->tail, 0xff, size % 8 ? size % 8 : 8);
	m->win = loop->win_va + (addr - loop->win_phys);
	m->host = host;
	m->host_aligned = IS_ALIGNED((unsigned long)host, 8);

	mutex_lock(&loop->win_lock);
	ret = loop_win_start_worker(loop);
	if (ret) {
		mutex_unlock(&loop->win_lock);
		goto err_free_shadow;
	}
	/*
	 * Reads through the window see host memory as of now; without Bus
	 * Master Enable nothing is read: all-ones, as a failed read returns
	 */
	if (loop_fn_master(loop, func_no)) {
		loop_host_read(m->win, host, size);
		memcpy(m->shadow, m->win, size);
		memcpy(m->stage, m->win, size);
	} else {
		memset(m->win, 0xff, size);
		memset(m->shadow, 0xff, size);
		memset(m->stage, 0xff, size);
	}
	list_add_tail(&m->node, &loop->win_maps);
	WRITE_ONCE(loop->win_words, loop->win_words + m->nwords);
	loop->win_cursor = 0;
	wake = loop->win_task;
	/* The worker exits only through loop_win_drop_all(), under win_lock */
	wake_up_process(wake);
	mutex_unlock(&loop->win_lock);

	atomic64_inc(&loop->stats.win_maps);
	return 0;

err_free_shadow:
	kvfree(m->shadow);
err_free_map:
	kfree(m);
	return ret;
}

/**
 * loop_win_unmap() - unmap_addr: a flush point, then forget the mapping
 * @loop: the loopback
 * @addr: window physical address given to loop_win_map()
 *
 * Every write the EPF made through any mapping becomes visible first (older
 * writes through other mappings too, to keep them in order). Without link
 * nothing is written back.
 */
void loop_win_unmap(struct pci_epc_loop *loop, phys_addr_t addr)
{
	struct loop_win_map *m;

	mutex_lock(&loop->win_lock);
	list_for_each_entry(m, &loop->win_maps, node) {
		if (m->phys != addr)
			continue;
		if (loop_ep_up(loop)) {
			loop_win_stat_add(loop, LOOP_WIN_FLUSH_UNMAP, 1);
			loop_win_flush_locked(loop);
		}
		loop_win_free_map(loop, m);
		break;
	}
	mutex_unlock(&loop->win_lock);
}

/**
 * loop_win_live() - a live mapping covers a window range
 * @loop: the loopback (win_lock held)
 * @off: window offset
 * @len: bytes
 *
 * Return: true if one mapping holds all of [@off, @off + @len).
 */
bool loop_win_live(struct pci_epc_loop *loop, u32 off, u32 len)
{
	struct loop_win_map *m = loop_win_map_at(loop, off);

	lockdep_assert_held(&loop->win_lock);
	return m && off - loop_win_off(loop, m) + len <= m->size;
}

/**
 * pci_epc_loop_win_passes() - completed passes of the window worker
 * @epc: an endpoint controller of this driver
 *
 * For the lab's own tests (tests/modules/loop-wintest), which measure the
 * window against the model instead of the wall clock: with posted_ns = 0, a
 * value written through a mapping no larger than win_scan_bytes is visible
 * on the other side once two passes completed after the write, however
 * slowly the machine runs.
 *
 * Context: process context, may sleep.
 * Return: the pass count, 0 if @epc is not a pci-epc-loop controller.
 */
u64 pci_epc_loop_win_passes(struct pci_epc *epc)
{
	struct pci_epc_loop *loop;
	u64 n;

	if (IS_ERR_OR_NULL(epc) || epc->ops != &loop_epc_ops)
		return 0;
	loop = epc_get_drvdata(epc);
	mutex_lock(&loop->win_lock);
	n = loop->win_stat[LOOP_WIN_TICKS];
	mutex_unlock(&loop->win_lock);
	return n;
}
EXPORT_SYMBOL_GPL(pci_epc_loop_win_passes);

static int loop_win_stats_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;
	u64 v[LOOP_WIN_NR_STATS];
	struct loop_win_map *m;
	size_t live, words;
	bool pending;
	int i;

	BUILD_BUG_ON(ARRAY_SIZE(loop_win_stat_names) != LOOP_WIN_NR_STATS);
	BUILD_BUG_ON(ARRAY_SIZE(loop->win_stat) < LOOP_WIN_NR_STATS);

	mutex_lock(&loop->win_lock);
	memcpy(v, loop->win_stat, sizeof(v));
	live = list_count_nodes(&loop->win_maps);
	words = loop->win_words;
	pending = loop->win_pending;
	mutex_unlock(&loop->win_lock);

	seq_printf(s, "%-12s %pad\n", "win_phys", &loop->win_phys);
	mutex_lock(&loop->win_lock);
	list_for_each_entry(m, &loop->win_maps, node)
		seq_printf(s, "map pci %#llx win_off %#x size %zu\n", m->pci_addr,
			   loop_win_off(loop, m), m->size);
	mutex_unlock(&loop->win_lock);
	seq_printf(s, "%-12s %zu\n", "live_maps", live);
	seq_printf(s, "%-12s %zu\n", "live_bytes", words * 8);
	seq_printf(s, "%-12s %d\n", "pending", pending);
	for (i = 0; i < LOOP_WIN_NR_STATS; i++)
		seq_printf(s, "%-12s %llu\n", loop_win_stat_names[i], v[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(loop_win_stats);

/**
 * loop_win_init() - defaults and debugfs knobs of the outbound window
 * @loop: the loopback
 * @dir: the device's debugfs directory
 *
 * posted_ns and msi_overtake default to 0 in every profile: a CPU read
 * through the window, which flushes posted writes on PCIe, cannot be seen
 * here, so a delay would flag correct drivers. They exist for tests.
 */
void loop_win_init(struct pci_epc_loop *loop, struct dentry *dir)
{
	loop->win_tick_us = LOOP_WIN_TICK_US;
	loop->win_idle_tick_us = LOOP_WIN_TICK_US;
	loop->win_scan_bytes = LOOP_WIN_SCAN_BYTES;
	loop->win_posted_ns = 0;
	loop->win_msi_overtake = false;

	debugfs_create_u32("win_tick_us", 0600, dir, &loop->win_tick_us);
	debugfs_create_u32("win_idle_tick_us", 0600, dir,
			   &loop->win_idle_tick_us);
	debugfs_create_u32("win_scan_bytes", 0600, dir, &loop->win_scan_bytes);
	debugfs_create_u32("posted_ns", 0600, dir, &loop->win_posted_ns);
	debugfs_create_bool("msi_overtake", 0600, dir, &loop->win_msi_overtake);
	debugfs_create_file("window", 0400, dir, loop, &loop_win_stats_fops);
}
