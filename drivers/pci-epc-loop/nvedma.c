// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: NVIDIA's Tegra PCIe eDMA library interface (JetPack 6 API,
 * include/framelink/tegra-pcie-edma.h), the only way to the eDMA engine in
 * the "jetpack" profile.
 *
 * What is modelled, after NVIDIA's implementation (linux-nv-oot
 * drivers/pci/controller/tegra-pcie-edma.c, read at 0221df94 and ffda313d;
 * see Documentation/pci-epc-loop.rst):
 *
 * - 4 write and 2 read channels, each with a ring of num_descriptors slots
 *   (a power of two > 1) preallocated at initialize; a channel holds at most
 *   num_descriptors - 1 descriptors between submit and completion, and a
 *   submit that does not fit returns EDMA_XFER_FAIL_NOMEM (no partial submit).
 * - Submitters of one channel are serialised by a mutex, as in the library.
 *   An ASYNC submit returns at once; only the last descriptor of a submit
 *   interrupts, so there is one callback per submit. A SYNC submit sleeps,
 *   holding the channel mutex, for at most the library's timeout
 *   (bytes + 30 per (sz / num_descriptors + 1), at 2 Gbit/s, + 1 s) and
 *   then returns EDMA_XFER_FAIL_TIMEOUT with its descriptors still queued.
 * - The engine: one work item per channel moves the descriptors in ring
 *   order with the CPU (64 KiB chunks), paced by the link model.
 * - The interrupt thread: one ordered work item retires completed slots and
 *   calls the callbacks, serialised across channels like the library's
 *   threaded irq handler; callbacks may sleep and may submit again. The
 *   controller's shared interrupt line is off meanwhile (intr.c): a link up
 *   waits for the last callback. Each callback is timed (state: cb_max_us).
 * - fail_dma makes the next descriptor fail as a hardware error would: the
 *   library's abort interrupt path (all channels of that direction: done
 *   submits SUCCESS, the rest ABORT, rings reset, engine re-enabled).
 * - stop / deinit: the channel state becomes ABORT / DEINIT (later submits
 *   return it), SYNC waiters wake with it, engines stop, and the caller's
 *   thread runs the pending callbacks with that status. JetPack 6 guards
 *   that last loop with a direction bitmap indexed by channel number, so only
 *   channel 0 (if a write channel is configured) and channel 1 (if a read
 *   channel is) of each direction get their callbacks; the others are dropped.
 *   The knob nvedma/quirk_drop (1 by default in the jetpack profile) keeps
 *   that; 0 delivers every callback, as the JetPack 7 library does.
 * - The library never looks at the link: a transfer across a link down is
 *   reported EDMA_XFER_SUCCESS although the hardware dropped it. The lab
 *   reports the same, but copies nothing while the endpoint has no link.
 *
 * Locking, in order: a channel's @lock (mutex), then its @idx_lock
 * (spinlock, never held across a callback, a copy or a sleep). nvedma_lock
 * (global) protects loop_nvedma.cookie. A link's loop_nvedma.copy_sem
 * orders its copies against its link down (per link: a cut on one link
 * must not wait for the copies of the others). Everything runs in process
 * context.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/of_platform.h>
#include <linux/platform_device.h>
#include <linux/rwsem.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sizes.h>

#include <framelink/tegra-pcie-edma.h>

#include "loop.h"

#define NVEDMA_NCHANS		(DMA_WR_CHNL_NUM + DMA_RD_CHNL_NUM)
/* irq_pending bits: one "done" bit per channel index, one "abort" per type */
#define NVEDMA_ABORT_BIT(type)	(8 + (type))
/* Bytes copied between checks for stop, stall and link down */
#define NVEDMA_CHUNK		SZ_64K
/* Longest wait of a stalled channel before it re-checks its state */
#define NVEDMA_STALL_POLL_MS	100
/*
 * Largest ring the lab allocates. The JetPack 6 header sets no limit (its
 * coherent allocation fails first); the newer tegra-pcie-dma.h documents 32K.
 */
#define NVEDMA_MAX_DESC		SZ_32K
/* The library's SYNC timeout: 30 header bytes per packet, 2 Gbit/s, + 1 s */
#define NVEDMA_SYNC_HDR		30
#define NVEDMA_SYNC_BITS_PER_MS	2000000ULL
#define NVEDMA_SYNC_BASE_MS	1000
#define NVEDMA_NSTATUS		(EDMA_XFER_DEINIT + 1)

/**
 * struct nvedma_slot - one ring slot
 * @complete: callback, set on the last slot of an ASYNC submit
 * @priv: its argument
 * @lie: last descriptor of a submit: completing it interrupts
 */
struct nvedma_slot {
	edma_complete_t *complete;
	void *priv;
	bool lie;
};

struct nvedma;

/**
 * struct nvedma_chan - one channel of the library
 * @ne: owning library instance
 * @type: EDMA_XFER_WRITE or EDMA_XFER_READ
 * @num: channel number within its direction
 * @index: 0-3 write channels, 4-5 read channels (stall and irq bits)
 * @mode: SYNC or ASYNC
 * @desc_sz: ring size, 0 = channel unused
 * @descs: descriptor ring (the "hardware" linked list)
 * @slots: callback ring
 * @lock: serialises submitters, held across a SYNC wait, as the library's
 *	  channel mutex; stop and the abort path take it to drain submitters
 * @idx_lock: protects @w_idx, @hw_idx, @r_idx, @st, @busy, writes of
 *	      @halted, and the ring contents between the indices
 * @w_idx: next slot a submit fills
 * @hw_idx: next slot the engine moves
 * @r_idx: next slot to retire (callbacks); r_idx..w_idx-1 are in use
 * @st: SUCCESS, or ABORT / DEINIT after stop, abort or deinit
 * @busy: a SYNC submit waits for its completion
 * @halted: engine disabled (stop, deinit or hardware abort)
 * @wq: SYNC waiter
 * @work: the engine
 */
struct nvedma_chan {
	struct nvedma *ne;
	edma_xfer_type_t type;
	unsigned int num;
	unsigned int index;
	edma_chan_type_t mode;
	u32 desc_sz;
	struct tegra_pcie_edma_desc *descs;
	struct nvedma_slot *slots;
	struct mutex lock; /* submitters of this channel */
	spinlock_t idx_lock; /* indices, st, busy, halted, ring slots */
	u32 w_idx;
	u32 hw_idx;
	u32 r_idx;
	edma_xfer_status_t st;
	bool busy;
	bool halted;
	wait_queue_head_t wq;
	struct work_struct work;
};

/**
 * struct nvedma - one library instance: the cookie
 * @loop: the loopback whose engine this is
 * @ln: the loopback's library state (knobs, counters)
 * @dev: the controller device, referenced as the library does
 * @engine_wq: channel engines (unbound: channels run in parallel)
 * @irq_wq: ordered queue of @irq_work, the library's irq thread
 * @irq_work: retires completed slots and calls callbacks
 * @irq_pending: done bits per channel index, abort bits per direction
 * @ch_init: BIT(EDMA_XFER_WRITE) / BIT(EDMA_XFER_READ): a channel of that
 *	     direction is configured (the library's ch_init)
 * @stop_st: status stop or deinit set, SUCCESS before
 * @ch: channels, write then read
 */
struct nvedma {
	struct pci_epc_loop *loop;
	struct loop_nvedma *ln;
	struct device *dev;
	struct workqueue_struct *engine_wq;
	struct workqueue_struct *irq_wq;
	struct work_struct irq_work;
	unsigned long irq_pending;
	u32 ch_init;
	edma_xfer_status_t stop_st;
	struct nvedma_chan ch[NVEDMA_NCHANS];
};

/**
 * struct loop_nvedma - per-loopback state of the library interface
 * @loop: the loopback
 * @cookie: the initialized library instance, NULL if none (nvedma_lock)
 * @quirk_drop: stop/deinit drop the callbacks JetPack 6 drops
 * @stall: bit n (0-3 write, 4-5 read channel) stalls that channel's engine
 * @stall_wq: woken when @stall changes or an engine is halted
 * @submit_ret: submits by return status
 * @cb: callbacks by status
 * @cb_max_ns: longest a client's callback ran
 * @cb_dropped: pending callbacks stop/deinit never called (@quirk_drop)
 * @bytes: bytes moved
 * @lost_bytes: bytes "moved" while the endpoint had no link (not copied)
 * @hw_aborts: hardware aborts (fail_dma, unbacked address)
 * @copy_sem: engines hold it for reading across "link up? then copy one
 *	      chunk"; loop_nvedma_link_down() takes it for writing once, so
 *	      that no copy into or out of host memory is still running when it
 *	      returns
 */
struct loop_nvedma {
	struct pci_epc_loop *loop;
	struct nvedma *cookie;
	u32 quirk_drop;
	u32 stall;
	wait_queue_head_t stall_wq;
	atomic64_t submit_ret[NVEDMA_NSTATUS];
	atomic64_t cb[NVEDMA_NSTATUS];
	atomic64_t cb_max_ns;
	atomic64_t cb_dropped;
	atomic64_t bytes;
	atomic64_t lost_bytes;
	atomic64_t hw_aborts;
	struct rw_semaphore copy_sem;
};

/* Protects loop_nvedma.cookie: one library instance per controller */
static DEFINE_MUTEX(nvedma_lock);

static const char * const nvedma_status_name[NVEDMA_NSTATUS] = {
	[EDMA_XFER_SUCCESS] = "success",
	[EDMA_XFER_FAIL_INVAL_INPUTS] = "fail_inval_inputs",
	[EDMA_XFER_FAIL_NOMEM] = "fail_nomem",
	[EDMA_XFER_FAIL_TIMEOUT] = "fail_timeout",
	[EDMA_XFER_ABORT] = "abort",
	[EDMA_XFER_DEINIT] = "deinit",
};

static unsigned int nvedma_count(edma_xfer_type_t type)
{
	return type == EDMA_XFER_WRITE ? DMA_WR_CHNL_NUM : DMA_RD_CHNL_NUM;
}

static struct nvedma_chan *nvedma_ch(struct nvedma *ne, edma_xfer_type_t type,
				     unsigned int num)
{
	return &ne->ch[type == EDMA_XFER_WRITE ? num : DMA_WR_CHNL_NUM + num];
}

/*
 * The one place the library's engines charge the per-direction link model
 * (model.c): called after a chunk's copy, it sleeps for what is left of
 * the chunk's link time, so a chunk takes max(link time, copy time).
 */
static void nvedma_link_pace(struct pci_epc_loop *loop, edma_xfer_type_t type,
			     u64 remote, size_t bytes, u64 ready)
{
	loop_model_charge(loop, type == EDMA_XFER_WRITE ? DMA_MEM_TO_DEV :
			  DMA_DEV_TO_MEM, remote, bytes, ready);
}

static void nvedma_raise(struct nvedma *ne, unsigned int bit)
{
	set_bit(bit, &ne->irq_pending);
	queue_work(ne->irq_wq, &ne->irq_work);
}

static bool nvedma_stalled(struct nvedma_chan *ch)
{
	return READ_ONCE(ch->ne->ln->stall) & BIT(ch->index) &&
	       !READ_ONCE(ch->halted);
}

/* Wait while the channel is stalled (bounded polls); true once halted. */
static bool nvedma_wait_stall(struct nvedma_chan *ch)
{
	while (nvedma_stalled(ch))
		wait_event_timeout(ch->ne->ln->stall_wq, !nvedma_stalled(ch),
				   msecs_to_jiffies(NVEDMA_STALL_POLL_MS));
	return READ_ONCE(ch->halted);
}

/*
 * Copy one chunk unless the endpoint has no link: then the hardware drops
 * the TLPs and the lab must not touch host memory. Returns true if copied.
 */
static bool nvedma_copy(struct nvedma_chan *ch, void *lva, void *rva,
			size_t n)
{
	bool up;

	down_read(&ch->ne->ln->copy_sem);
	up = loop_ep_up(ch->ne->loop);
	if (up) {
		if (ch->type == EDMA_XFER_WRITE)
			memcpy(rva, lva, n);
		else
			memcpy(lva, rva, n);
	}
	up_read(&ch->ne->ln->copy_sem);
	return up;
}

/*
 * Move one descriptor: 0 when done, -EINTR when the engine was halted
 * part-way, -EIO / -EFAULT for a hardware error (abort interrupt).
 */
static int nvedma_move(struct nvedma_chan *ch,
		       const struct tegra_pcie_edma_desc *d)
{
	struct pci_epc_loop *loop = ch->ne->loop;
	struct loop_nvedma *ln = ch->ne->ln;
	bool wr = ch->type == EDMA_XFER_WRITE;
	u64 local = wr ? d->src : d->dst;
	u64 remote = wr ? d->dst : d->src;
	size_t left = d->sz;
	bool first = true;
	void *lva, *rva;

	if (atomic_dec_if_positive(&loop->fail_dma) >= 0)
		return -EIO;
	if (!left)
		return 0;

	lva = loop_phys_to_virt(loop, local, left);
	rva = loop_phys_to_virt(loop, remote, left);
	if (!lva || !rva) {
		dev_err_ratelimited(loop->dev,
				    "eDMA %s ch%u: %#llx <-> %#llx+%zx not backed by memory\n",
				    wr ? "write" : "read", ch->num, local,
				    remote, left);
		return -EFAULT;
	}

	while (left) {
		size_t n = min_t(size_t, left, NVEDMA_CHUNK);

		u64 ready = ktime_get_ns();

		if (nvedma_wait_stall(ch))
			return -EINTR;
		/* Bus Master Enable clear: no request leaves, the engine aborts */
		if (!loop_fn_master(loop, 0)) {
			atomic64_add(n, &loop->stats.bme_blocked);
			dev_warn_ratelimited(loop->dev,
					     "eDMA refused: the host cleared Bus Master Enable\n");
			return -EIO;
		}
		if (first)
			ready += READ_ONCE(loop->setup_ns);
		first = false;
		if (nvedma_copy(ch, lva, rva, n)) {
			atomic64_add(n, &ln->bytes);
			nvedma_link_pace(loop, ch->type, remote, n, ready);
		} else {
			atomic64_add(n, &ln->lost_bytes);
		}
		lva += n;
		rva += n;
		remote += n;
		left -= n;
		cond_resched();
	}
	return 0;
}

/* A hardware error on this channel: halt it and raise the abort interrupt. */
static void nvedma_hw_abort(struct nvedma_chan *ch)
{
	spin_lock(&ch->idx_lock);
	WRITE_ONCE(ch->halted, true);
	spin_unlock(&ch->idx_lock);
	atomic64_inc(&ch->ne->ln->hw_aborts);
	nvedma_raise(ch->ne, NVEDMA_ABORT_BIT(ch->type));
}

static void nvedma_engine_work(struct work_struct *work)
{
	struct nvedma_chan *ch = container_of(work, struct nvedma_chan, work);
	struct tegra_pcie_edma_desc d;
	bool lie;
	u32 i;
	int ret;

	for (;;) {
		spin_lock(&ch->idx_lock);
		if (ch->halted || ch->hw_idx == ch->w_idx) {
			spin_unlock(&ch->idx_lock);
			return;
		}
		i = ch->hw_idx;
		d = ch->descs[i];
		spin_unlock(&ch->idx_lock);

		ret = nvedma_move(ch, &d);
		if (ret == -EINTR)
			return;
		if (ret) {
			nvedma_hw_abort(ch);
			return;
		}

		/* A disabled engine reports nothing, even for a finished move */
		spin_lock(&ch->idx_lock);
		if (ch->halted) {
			spin_unlock(&ch->idx_lock);
			return;
		}
		ch->hw_idx = (i + 1) & (ch->desc_sz - 1);
		lie = ch->slots[i].lie;
		spin_unlock(&ch->idx_lock);

		if (lie)
			nvedma_raise(ch->ne, ch->index);
	}
}

static void nvedma_count_cb(struct nvedma *ne, edma_xfer_status_t st)
{
	atomic64_inc(&ne->ln->cb[st]);
}

/* A client's callback ran @ns: keep the longest (framelink's must stay short) */
static void nvedma_time_cb(struct nvedma *ne, s64 ns)
{
	s64 old = atomic64_read(&ne->ln->cb_max_ns);

	while (ns > old && !atomic64_try_cmpxchg(&ne->ln->cb_max_ns, &old, ns))
		;
}

/*
 * Retire slots up to @idx (the library's process_r_idx): each slot that
 * ends an ASYNC submit gets its callback with @st, without idx_lock held so
 * that the callback may submit again.
 */
static void nvedma_retire(struct nvedma_chan *ch, edma_xfer_status_t st,
			  u32 idx)
{
	u32 n = 0;
	u64 t0;

	spin_lock(&ch->idx_lock);
	while (ch->r_idx != idx && n++ < ch->desc_sz) {
		struct nvedma_slot *s = &ch->slots[ch->r_idx];
		edma_complete_t *complete = s->complete;
		void *priv = s->priv;

		s->complete = NULL;
		s->priv = NULL;
		s->lie = false;
		ch->r_idx = (ch->r_idx + 1) & (ch->desc_sz - 1);
		if (ch->mode != EDMA_CHAN_XFER_ASYNC || !complete)
			continue;

		spin_unlock(&ch->idx_lock);
		nvedma_count_cb(ch->ne, st);
		t0 = ktime_get_ns();
		complete(priv, st, NULL);
		nvedma_time_cb(ch->ne, ktime_get_ns() - t0);
		spin_lock(&ch->idx_lock);
	}
	spin_unlock(&ch->idx_lock);
}

/*
 * One channel's done interrupt (the library's process_ch_irq): wake a SYNC
 * waiter, retire what the engine finished with SUCCESS and, if the channel
 * is in ABORT state, everything else with ABORT.
 */
static void nvedma_ch_irq(struct nvedma_chan *ch)
{
	u32 hw, w;
	bool abort;

	spin_lock(&ch->idx_lock);
	hw = ch->hw_idx;
	if (ch->mode == EDMA_CHAN_XFER_SYNC && ch->busy) {
		ch->busy = false;
		wake_up(&ch->wq);
	}
	spin_unlock(&ch->idx_lock);

	nvedma_retire(ch, EDMA_XFER_SUCCESS, hw);

	spin_lock(&ch->idx_lock);
	abort = ch->st == EDMA_XFER_ABORT;
	w = ch->w_idx;
	spin_unlock(&ch->idx_lock);
	if (abort)
		nvedma_retire(ch, EDMA_XFER_ABORT, w);
}

/* Disable a channel's engine and wait until it no longer moves data. */
static void nvedma_halt(struct nvedma_chan *ch)
{
	spin_lock(&ch->idx_lock);
	WRITE_ONCE(ch->halted, true);
	spin_unlock(&ch->idx_lock);
	wake_up_all(&ch->ne->ln->stall_wq);
	flush_work(&ch->work);
}

/* Empty ring, engine enabled again, unless stop or deinit came first. */
static void nvedma_ch_reset(struct nvedma_chan *ch)
{
	edma_xfer_status_t stop = READ_ONCE(ch->ne->stop_st);

	spin_lock(&ch->idx_lock);
	ch->w_idx = 0;
	ch->hw_idx = 0;
	ch->r_idx = 0;
	ch->st = stop;
	WRITE_ONCE(ch->halted, stop != EDMA_XFER_SUCCESS);
	spin_unlock(&ch->idx_lock);
}

/*
 * The abort interrupt of one direction, as the library handles it: every
 * channel of the direction goes to ABORT, the engine stops, each channel
 * drains its submitter (a SYNC submitter holds the mutex until its own
 * timeout, as on the board), finished submits complete with SUCCESS and the
 * rest with ABORT, then the rings are reset and submits work again.
 */
static void nvedma_abort_dir(struct nvedma *ne, edma_xfer_type_t type)
{
	unsigned int i, n = nvedma_count(type);
	struct nvedma_chan *ch;

	dev_info_ratelimited(ne->loop->dev, "eDMA %s abort interrupt\n",
			     type == EDMA_XFER_WRITE ? "write" : "read");
	for (i = 0; i < n; i++) {
		ch = nvedma_ch(ne, type, i);
		spin_lock(&ch->idx_lock);
		ch->st = EDMA_XFER_ABORT;
		spin_unlock(&ch->idx_lock);
	}
	for (i = 0; i < n; i++)
		nvedma_halt(nvedma_ch(ne, type, i));

	for (i = 0; i < n; i++) {
		ch = nvedma_ch(ne, type, i);
		if (!ch->desc_sz)
			continue;
		clear_bit(ch->index, &ne->irq_pending);
		mutex_lock(&ch->lock);
		mutex_unlock(&ch->lock);
		nvedma_ch_irq(ch);
		nvedma_ch_reset(ch);
	}
}

/*
 * The library's interrupt thread: its hard handler disabled the controller's
 * shared line, which stays off until the callbacks are done (intr.c).
 */
static void nvedma_irq_work(struct work_struct *work)
{
	struct nvedma *ne = container_of(work, struct nvedma, irq_work);
	edma_xfer_type_t type;
	unsigned int i;

	loop_intr_disable(ne->loop);
	for (type = EDMA_XFER_WRITE; type <= EDMA_XFER_READ; type++) {
		if (!(ne->ch_init & BIT(type)))
			continue;
		if (test_and_clear_bit(NVEDMA_ABORT_BIT(type),
				       &ne->irq_pending)) {
			nvedma_abort_dir(ne, type);
			continue;
		}
		for (i = 0; i < nvedma_count(type); i++) {
			struct nvedma_chan *ch = nvedma_ch(ne, type, i);

			if (test_and_clear_bit(ch->index, &ne->irq_pending))
				nvedma_ch_irq(ch);
		}
	}
	loop_intr_enable(ne->loop);
}

/*
 * JetPack 6 runs the final callback loop of stop/deinit only for channel
 * numbers whose bit is set in the direction bitmap ch_init.
 */
static bool nvedma_quirk_drops(struct nvedma_chan *ch)
{
	return READ_ONCE(ch->ne->ln->quirk_drop) &&
	       !(ch->ne->ch_init & BIT(ch->num));
}

/* Forget the pending callbacks of a channel, as the quirk does. */
static void nvedma_drop_pending(struct nvedma_chan *ch)
{
	unsigned int dropped = 0;

	spin_lock(&ch->idx_lock);
	while (ch->r_idx != ch->w_idx) {
		struct nvedma_slot *s = &ch->slots[ch->r_idx];

		if (ch->mode == EDMA_CHAN_XFER_ASYNC && s->complete)
			dropped++;
		s->complete = NULL;
		s->priv = NULL;
		s->lie = false;
		ch->r_idx = (ch->r_idx + 1) & (ch->desc_sz - 1);
	}
	spin_unlock(&ch->idx_lock);

	if (!dropped)
		return;
	atomic64_add(dropped, &ch->ne->ln->cb_dropped);
	dev_info_ratelimited(ch->ne->loop->dev,
			     "eDMA %s ch%u: %u pending callbacks dropped (JetPack 6 stop/deinit, quirk_drop=1)\n",
			     ch->type == EDMA_XFER_WRITE ? "write" : "read",
			     ch->num, dropped);
}

/* The library's edma_stop(): close the channels and call what is pending. */
static void nvedma_stop(struct nvedma *ne, edma_xfer_status_t st)
{
	struct nvedma_chan *ch;
	unsigned int i;
	u32 w;

	WRITE_ONCE(ne->stop_st, st);
	for (i = 0; i < NVEDMA_NCHANS; i++) {
		ch = &ne->ch[i];
		spin_lock(&ch->idx_lock);
		ch->st = st;
		if (ch->mode == EDMA_CHAN_XFER_SYNC && ch->busy) {
			ch->busy = false;
			wake_up(&ch->wq);
		}
		spin_unlock(&ch->idx_lock);
		/* Wait for a submit in progress on this channel */
		mutex_lock(&ch->lock);
		mutex_unlock(&ch->lock);
	}

	for (i = 0; i < NVEDMA_NCHANS; i++)
		nvedma_halt(&ne->ch[i]);
	/* synchronize_irq(): no completion runs after this */
	flush_work(&ne->irq_work);

	for (i = 0; i < NVEDMA_NCHANS; i++) {
		ch = &ne->ch[i];
		if (!ch->desc_sz)
			continue;
		if (nvedma_quirk_drops(ch)) {
			nvedma_drop_pending(ch);
			continue;
		}
		spin_lock(&ch->idx_lock);
		w = ch->w_idx;
		spin_unlock(&ch->idx_lock);
		nvedma_retire(ch, st, w);
	}
}

/* stop/deinit from a completion callback deadlock on the board */
static bool nvedma_in_callback(struct nvedma *ne, const char *what)
{
	if (current_work() != &ne->irq_work)
		return false;
	dev_err_ratelimited(ne->loop->dev,
			    "%s called from an eDMA completion callback: deadlocks on the board, refused\n",
			    what);
	return true;
}

/* The controller's loopback, if @pdev is a pci-epc-loop bound to us. */
static struct pci_epc_loop *nvedma_loop_of(struct platform_device *pdev)
{
	/*
	 * Only this module's driver binds devices owned by this module, and
	 * it cannot unbind while a user of these symbols holds the module.
	 */
	if (!pdev->dev.driver || pdev->dev.driver->owner != THIS_MODULE)
		return NULL;
	return platform_get_drvdata(pdev);
}

static int nvedma_chan_init(struct nvedma *ne, struct nvedma_chan *ch,
			    const struct tegra_pcie_edma_chans_info *info)
{
	ch->mode = info->ch_type;
	ch->desc_sz = info->num_descriptors;
	if (!ch->desc_sz)
		return 0;
	if (ch->desc_sz <= 1 || !is_power_of_2(ch->desc_sz) ||
	    ch->desc_sz > NVEDMA_MAX_DESC) {
		dev_err_ratelimited(ne->loop->dev,
				    "eDMA %s ch%u: num_descriptors %u is not a power of two in 2..%u\n",
				    ch->type == EDMA_XFER_WRITE ? "write" : "read",
				    ch->num, ch->desc_sz, NVEDMA_MAX_DESC);
		return -EINVAL;
	}
	/* The whole ring now: nothing is allocated per descriptor later */
	ch->descs = kvcalloc(ch->desc_sz, sizeof(*ch->descs), GFP_KERNEL);
	ch->slots = kvcalloc(ch->desc_sz, sizeof(*ch->slots), GFP_KERNEL);
	if (!ch->descs || !ch->slots)
		return -ENOMEM;
	ne->ch_init |= BIT(ch->type);
	return 0;
}

static void nvedma_free(struct nvedma *ne)
{
	unsigned int i;

	if (ne->engine_wq)
		destroy_workqueue(ne->engine_wq);
	if (ne->irq_wq)
		destroy_workqueue(ne->irq_wq);
	for (i = 0; i < NVEDMA_NCHANS; i++) {
		kvfree(ne->ch[i].descs);
		kvfree(ne->ch[i].slots);
	}
	if (ne->dev)
		put_device(ne->dev);
	kfree(ne);
}

static struct nvedma *nvedma_alloc(struct pci_epc_loop *loop,
				   struct device *dev,
				   const struct tegra_pcie_edma_init_info *info)
{
	struct nvedma *ne;
	unsigned int i;

	ne = kzalloc(sizeof(*ne), GFP_KERNEL);
	if (!ne)
		return NULL;
	ne->loop = loop;
	ne->ln = loop->nvedma;
	INIT_WORK(&ne->irq_work, nvedma_irq_work);
	for (i = 0; i < NVEDMA_NCHANS; i++) {
		struct nvedma_chan *ch = &ne->ch[i];
		bool wr = i < DMA_WR_CHNL_NUM;

		ch->ne = ne;
		ch->type = wr ? EDMA_XFER_WRITE : EDMA_XFER_READ;
		ch->num = wr ? i : i - DMA_WR_CHNL_NUM;
		ch->index = i;
		mutex_init(&ch->lock);
		spin_lock_init(&ch->idx_lock);
		init_waitqueue_head(&ch->wq);
		INIT_WORK(&ch->work, nvedma_engine_work);
		if (nvedma_chan_init(ne, ch, wr ? &info->tx[ch->num] :
						  &info->rx[ch->num]))
			goto free;
	}

	ne->engine_wq = alloc_workqueue("%s-nvedma", WQ_UNBOUND | WQ_MEM_RECLAIM,
					0, dev_name(loop->dev));
	ne->irq_wq = alloc_ordered_workqueue("%s-nvedma-irq",
					     WQ_HIGHPRI | WQ_MEM_RECLAIM,
					     dev_name(loop->dev));
	if (!ne->engine_wq || !ne->irq_wq)
		goto free;
	/* From now on the instance owns the caller's device reference */
	ne->dev = dev;
	return ne;

free:
	nvedma_free(ne);
	return NULL;
}

/* Find the loopback of @np, with a reference on its device in *@devp. */
static struct pci_epc_loop *nvedma_find(struct device_node *np,
					struct device **devp)
{
	struct platform_device *pdev;
	struct pci_epc_loop *loop;

	pdev = of_find_device_by_node(np);
	if (!pdev) {
		pr_err_ratelimited("eDMA library: no device for %pOF\n", np);
		return NULL;
	}
	loop = nvedma_loop_of(pdev);
	if (!loop) {
		pr_err_ratelimited("eDMA library: %pOF is not a pci-epc-loop\n",
				   np);
		goto put;
	}
	if (loop->profile != LOOP_PROFILE_JETPACK) {
		dev_info_ratelimited(loop->dev,
				     "eDMA library: only the jetpack profile has it\n");
		goto put;
	}
	/* Pairs with the release in loop_nvedma_init(): state fully set up */
	if (!smp_load_acquire(&loop->nvedma)) {
		dev_err_ratelimited(loop->dev, "eDMA library: not ready\n");
		goto put;
	}
	*devp = &pdev->dev;
	return loop;

put:
	put_device(&pdev->dev);
	return NULL;
}

/**
 * tegra_pcie_edma_initialize() - set up the eDMA library on a controller
 * @info: channels to configure and the controller's device node
 *
 * Local mode only: @info->np is the device node of the pci-epc-loop, the
 * controller whose engine is used (an endpoint function passes
 * epc->dev.parent->of_node), as NVIDIA's library finds the controller's
 * platform device from it. There is no fallback for a NULL @np (the
 * library has none), and remote mode (@info->edma_remote) is not modelled.
 * The loopback must run the jetpack profile. Channels with
 * num_descriptors 0 are unused; others need a power of two > 1. One
 * instance per controller (a second initialize before deinit fails; on the
 * board both would program the same engine).
 *
 * Context: process context, may sleep.
 * Return: the cookie for the other calls, or NULL.
 */
void *tegra_pcie_edma_initialize(struct tegra_pcie_edma_init_info *info)
{
	struct pci_epc_loop *loop;
	struct device *dev;
	struct nvedma *ne;

	if (!info || info->edma_remote || !info->np) {
		pr_err_ratelimited("eDMA library: %s\n",
				   !info ? "no init info" :
				   info->edma_remote ? "remote eDMA not modelled" :
				   "no device node");
		return NULL;
	}

	loop = nvedma_find(info->np, &dev);
	if (!loop)
		return NULL;
	ne = nvedma_alloc(loop, dev, info);
	if (!ne) {
		put_device(dev);
		return NULL;
	}

	mutex_lock(&nvedma_lock);
	if (ne->ln->cookie) {
		mutex_unlock(&nvedma_lock);
		dev_err_ratelimited(loop->dev,
				    "eDMA library: already initialized on this controller\n");
		nvedma_free(ne);
		return NULL;
	}
	ne->ln->cookie = ne;
	mutex_unlock(&nvedma_lock);

	dev_info(loop->dev, "eDMA library: initialized (write %#x read %#x)\n",
		 ne->ch_init & BIT(EDMA_XFER_WRITE) ? 1 : 0,
		 ne->ch_init & BIT(EDMA_XFER_READ) ? 1 : 0);
	return ne;
}
EXPORT_SYMBOL_GPL(tegra_pcie_edma_initialize);

static edma_xfer_status_t
nvedma_check_xfer(struct nvedma *ne, struct tegra_pcie_edma_xfer_info *x,
		  struct nvedma_chan **chp)
{
	struct nvedma_chan *ch;

	if (!ne || !x || !x->nents || !x->desc ||
	    (unsigned int)x->type > EDMA_XFER_READ ||
	    x->channel_num >= nvedma_count(x->type))
		return EDMA_XFER_FAIL_INVAL_INPUTS;
	ch = nvedma_ch(ne, x->type, x->channel_num);
	if (!ch->desc_sz ||
	    (ch->mode == EDMA_CHAN_XFER_ASYNC && !x->complete))
		return EDMA_XFER_FAIL_INVAL_INPUTS;
	*chp = ch;
	return EDMA_XFER_SUCCESS;
}

/*
 * Queue the descriptors; idx_lock held. Returns the SYNC timeout the
 * library would use for them, in ms.
 */
static u64 nvedma_queue(struct nvedma_chan *ch,
			const struct tegra_pcie_edma_xfer_info *x)
{
	u32 mask = ch->desc_sz - 1;
	u64 total = 0;
	u32 i, slot = 0;

	for (i = 0; i < x->nents; i++) {
		u32 sz = x->desc[i].sz;

		slot = ch->w_idx;
		ch->descs[slot] = x->desc[i];
		ch->slots[slot].complete = NULL;
		ch->slots[slot].priv = NULL;
		ch->slots[slot].lie = false;
		ch->w_idx = (slot + 1) & mask;
		/* The library divides by the ring size here, not the MPS */
		total += sz + ((u64)(sz / ch->desc_sz) + 1) * NVEDMA_SYNC_HDR;
	}
	/* Only the last descriptor interrupts: one callback per submit */
	ch->slots[slot].complete = x->complete;
	ch->slots[slot].priv = x->priv;
	ch->slots[slot].lie = true;
	return div64_u64(total * 8, NVEDMA_SYNC_BITS_PER_MS) +
	       NVEDMA_SYNC_BASE_MS;
}

static edma_xfer_status_t nvedma_sync_wait(struct nvedma_chan *ch, u64 ms)
{
	edma_xfer_status_t st;

	if (!wait_event_timeout(ch->wq, !READ_ONCE(ch->busy),
				msecs_to_jiffies(min_t(u64, ms, UINT_MAX)))) {
		dev_err_ratelimited(ch->ne->loop->dev,
				    "eDMA %s ch%u: sync submit timed out after %llu ms\n",
				    ch->type == EDMA_XFER_WRITE ? "write" : "read",
				    ch->num, ms);
		return EDMA_XFER_FAIL_TIMEOUT;
	}
	spin_lock(&ch->idx_lock);
	st = ch->st;
	spin_unlock(&ch->idx_lock);
	return st;
}

static edma_xfer_status_t
nvedma_submit(struct nvedma_chan *ch, struct tegra_pcie_edma_xfer_info *x)
{
	edma_xfer_status_t st = EDMA_XFER_SUCCESS;
	bool halted;
	u32 avail;
	u64 ms;

	mutex_lock(&ch->lock);
	spin_lock(&ch->idx_lock);
	ch->busy = true;
	if (ch->st != EDMA_XFER_SUCCESS) {
		st = ch->st;
		spin_unlock(&ch->idx_lock);
		goto unlock;
	}
	avail = (ch->r_idx - ch->w_idx - 1) & (ch->desc_sz - 1);
	if (x->nents > avail) {
		spin_unlock(&ch->idx_lock);
		st = EDMA_XFER_FAIL_NOMEM;
		goto unlock;
	}
	ms = nvedma_queue(ch, x);
	halted = ch->halted;
	spin_unlock(&ch->idx_lock);

	/* The doorbell; a disabled engine ignores it */
	if (!halted)
		queue_work(ch->ne->engine_wq, &ch->work);

	if (ch->mode == EDMA_CHAN_XFER_SYNC)
		st = nvedma_sync_wait(ch, ms);
unlock:
	mutex_unlock(&ch->lock);
	return st;
}

/**
 * tegra_pcie_edma_submit_xfer() - queue one transfer of @tx_info->nents
 *	descriptors on a channel
 * @cookie: from tegra_pcie_edma_initialize()
 * @tx_info: direction, channel, descriptors, callback
 *
 * The descriptors are copied into the channel's ring. An ASYNC channel
 * returns at once and calls @tx_info->complete once when the last
 * descriptor is done (or with ABORT / DEINIT). A SYNC channel returns when
 * done, or EDMA_XFER_FAIL_TIMEOUT after the library's timeout.
 *
 * Context: process context, may sleep (channel mutex); a completion
 * callback may call it.
 * Return: EDMA_XFER_SUCCESS, EDMA_XFER_FAIL_INVAL_INPUTS,
 * EDMA_XFER_FAIL_NOMEM when the ring has fewer than @nents free slots,
 * EDMA_XFER_FAIL_TIMEOUT (SYNC), or the channel's ABORT / DEINIT state.
 */
edma_xfer_status_t
tegra_pcie_edma_submit_xfer(void *cookie,
			    struct tegra_pcie_edma_xfer_info *tx_info)
{
	struct nvedma *ne = cookie;
	struct nvedma_chan *ch = NULL;
	edma_xfer_status_t st;

	st = nvedma_check_xfer(ne, tx_info, &ch);
	if (st == EDMA_XFER_SUCCESS)
		st = nvedma_submit(ch, tx_info);
	if (ne)
		atomic64_inc(&ne->ln->submit_ret[st]);
	return st;
}
EXPORT_SYMBOL_GPL(tegra_pcie_edma_submit_xfer);

/**
 * tegra_pcie_edma_stop() - stop all transfers and refuse new ones
 * @cookie: from tegra_pcie_edma_initialize(), may be NULL
 *
 * Every channel goes to EDMA_XFER_ABORT: later submits return it, SYNC
 * waiters wake with it, the engines stop, and the pending ASYNC callbacks
 * run with EDMA_XFER_ABORT in the caller's context (with quirk_drop, only
 * those JetPack 6 calls). Only tegra_pcie_edma_deinit() may follow.
 *
 * Context: process context, may sleep; not from a completion callback.
 * Return: false for a NULL cookie (or a call from a callback), else true.
 */
bool tegra_pcie_edma_stop(void *cookie)
{
	struct nvedma *ne = cookie;

	if (!ne || nvedma_in_callback(ne, "tegra_pcie_edma_stop"))
		return false;
	nvedma_stop(ne, EDMA_XFER_ABORT);
	return true;
}
EXPORT_SYMBOL_GPL(tegra_pcie_edma_stop);

/**
 * tegra_pcie_edma_deinit() - stop and free the library instance
 * @cookie: from tegra_pcie_edma_initialize(), may be NULL (no-op)
 *
 * As tegra_pcie_edma_stop() with EDMA_XFER_DEINIT, then the cookie is freed
 * (the caller's copy dangles, as with the library).
 *
 * Context: process context, may sleep; not from a completion callback.
 */
void tegra_pcie_edma_deinit(void *cookie)
{
	struct nvedma *ne = cookie;

	if (!ne || nvedma_in_callback(ne, "tegra_pcie_edma_deinit"))
		return;
	nvedma_stop(ne, EDMA_XFER_DEINIT);

	mutex_lock(&nvedma_lock);
	ne->ln->cookie = NULL;
	mutex_unlock(&nvedma_lock);
	dev_info(ne->loop->dev, "eDMA library: deinitialized\n");
	nvedma_free(ne);
}
EXPORT_SYMBOL_GPL(tegra_pcie_edma_deinit);

/**
 * loop_nvedma_link_down() - the endpoint lost the link
 * @loop: the loopback, after ep_up was cleared
 *
 * The library does not react to link state (transfers keep "completing"
 * with SUCCESS), but no engine may touch host memory once the link is
 * down: wait until copies that started before ep_up was cleared are done.
 *
 * Context: process context, may sleep briefly (one chunk copy).
 */
void loop_nvedma_link_down(struct pci_epc_loop *loop)
{
	/* Pairs with the release in loop_nvedma_init(): state fully set up */
	struct loop_nvedma *ln = smp_load_acquire(&loop->nvedma);

	/* No library state yet (early probe failure): no engine to wait for */
	if (!ln)
		return;
	down_write(&ln->copy_sem);
	up_write(&ln->copy_sem);
}

static int nvedma_stall_get(void *data, u64 *val)
{
	struct loop_nvedma *ln = data;

	*val = READ_ONCE(ln->stall);
	return 0;
}

static int nvedma_stall_set(void *data, u64 val)
{
	struct loop_nvedma *ln = data;

	WRITE_ONCE(ln->stall, (u32)val);
	wake_up_all(&ln->stall_wq);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(nvedma_stall_fops, nvedma_stall_get, nvedma_stall_set,
			 "0x%llx\n");

static void nvedma_show_chans(struct seq_file *s, struct nvedma *ne)
{
	unsigned int i;

	for (i = 0; i < NVEDMA_NCHANS; i++) {
		struct nvedma_chan *ch = &ne->ch[i];

		if (!ch->desc_sz)
			continue;
		spin_lock(&ch->idx_lock);
		seq_printf(s, "%s%u %s ring %u w %u hw %u r %u st %s%s%s\n",
			   ch->type == EDMA_XFER_WRITE ? "wr" : "rd", ch->num,
			   ch->mode == EDMA_CHAN_XFER_ASYNC ? "async" : "sync",
			   ch->desc_sz, ch->w_idx, ch->hw_idx, ch->r_idx,
			   nvedma_status_name[ch->st],
			   ch->busy && ch->mode == EDMA_CHAN_XFER_SYNC ?
			   " busy" : "", ch->halted ? " halted" : "");
		spin_unlock(&ch->idx_lock);
	}
}

static int nvedma_state_show(struct seq_file *s, void *unused)
{
	struct loop_nvedma *ln = s->private;
	unsigned int i;

	mutex_lock(&nvedma_lock);
	seq_printf(s, "cookie %s\n", ln->cookie ? "initialized" : "none");
	if (ln->cookie)
		nvedma_show_chans(s, ln->cookie);
	mutex_unlock(&nvedma_lock);

	for (i = 0; i < NVEDMA_NSTATUS; i++)
		seq_printf(s, "submit_%s %lld\n", nvedma_status_name[i],
			   atomic64_read(&ln->submit_ret[i]));
	for (i = 0; i < NVEDMA_NSTATUS; i++)
		seq_printf(s, "cb_%s %lld\n", nvedma_status_name[i],
			   atomic64_read(&ln->cb[i]));
	seq_printf(s, "cb_dropped %lld\n", atomic64_read(&ln->cb_dropped));
	seq_printf(s, "cb_max_us %lld\n", div_s64(atomic64_read(&ln->cb_max_ns), NSEC_PER_USEC));
	seq_printf(s, "bytes %lld\n", atomic64_read(&ln->bytes));
	seq_printf(s, "lost_bytes %lld\n", atomic64_read(&ln->lost_bytes));
	seq_printf(s, "hw_aborts %lld\n", atomic64_read(&ln->hw_aborts));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nvedma_state);

/*
 * Device removal with a cookie still initialized (its user unloaded without
 * deinit): stop the engines so nothing runs on freed memory; the user's
 * callbacks are gone with it, so none is called.
 */
static void nvedma_release(void *data)
{
	struct loop_nvedma *ln = data;
	struct nvedma *ne;
	unsigned int i;

	mutex_lock(&nvedma_lock);
	ne = ln->cookie;
	ln->cookie = NULL;
	mutex_unlock(&nvedma_lock);
	if (!ne)
		return;

	dev_err(ln->loop->dev, "eDMA library still initialized at removal\n");
	WRITE_ONCE(ne->stop_st, EDMA_XFER_DEINIT);
	for (i = 0; i < NVEDMA_NCHANS; i++)
		nvedma_halt(&ne->ch[i]);
	cancel_work_sync(&ne->irq_work);
}

/**
 * loop_nvedma_init() - set up the library interface state and its knobs
 * @loop: the loopback (profile known)
 * @dir: the loopback's debugfs directory
 *
 * Creates <dir>/nvedma/: quirk_drop (default 1 in the jetpack profile, the
 * JetPack 6 behaviour; 0 elsewhere), stall (bits 0-3 write channels, 4-5
 * read channels) and state (channels and counters).
 */
void loop_nvedma_init(struct pci_epc_loop *loop, struct dentry *dir)
{
	struct loop_nvedma *ln;
	struct dentry *d;

	ln = devm_kzalloc(loop->dev, sizeof(*ln), GFP_KERNEL);
	if (!ln)
		goto unavailable;
	ln->loop = loop;
	init_waitqueue_head(&ln->stall_wq);
	init_rwsem(&ln->copy_sem);
	ln->quirk_drop = loop->profile == LOOP_PROFILE_JETPACK;
	if (devm_add_action(loop->dev, nvedma_release, ln))
		goto unavailable;

	d = debugfs_create_dir("nvedma", dir);
	debugfs_create_u32("quirk_drop", 0600, d, &ln->quirk_drop);
	debugfs_create_file_unsafe("stall", 0600, d, ln, &nvedma_stall_fops);
	debugfs_create_file("state", 0400, d, ln, &nvedma_state_fops);

	/* Initialize may run from now on: publish the state set up above */
	smp_store_release(&loop->nvedma, ln);
	return;

unavailable:
	dev_warn(loop->dev, "eDMA library interface unavailable\n");
}
