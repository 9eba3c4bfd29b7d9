// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: a dmaengine provider shaped like dw-edma.
 *
 * DMA_SLAVE only (no DMA_MEMCPY); nchans_rd read channels (DMA_DEV_TO_MEM:
 * host memory to local memory) then nchans_wr write channels
 * (DMA_MEM_TO_DEV: local to host). dw-edma lists them the other way round:
 * dw_edma_channel_setup() gives the first wr_ch_cnt channels EDMA_DIR_WRITE
 * (see loop_dma_init()). The remote (PCI) address comes from
 * dma_slave_config (src_addr for reads, dst_addr for writes) and advances
 * across the scatter list, as in dw-edma. PCI addresses are the host's DMA
 * addresses, which are host physical addresses here.
 *
 * Each channel has one work item on an unbound workqueue: descriptors run
 * in submission order per channel and in parallel across channels. The
 * link model (model.c) paces every 64 KiB chunk.
 *
 * Two channel semantics, chosen by the debugfs knob dma_dw_semantics:
 *
 * 0: an idealised engine. terminate_all drops queued descriptors and stops
 *    the running one at the next chunk, without callbacks; an error
 *    completes the descriptor with DMA_TRANS_READ/WRITE_FAILED, tx_status
 *    says DMA_ERROR and the queue goes on; device_synchronize waits for
 *    the worker.
 *
 * 1: dw-edma as drivers/dma/dw-edma/dw-edma-core.c of the newest kernel
 *    (Debian 7.3.4; the same code is in Debian's 6.12.117 and 6.1.192)
 *    implements it, function by function:
 *    - dw_edma_device_config() sets "configured"; dw_edma_device_transfer()
 *      returns NULL and dw_edma_device_issue_pending() starts nothing
 *      until then; dw_edma_free_chan_resources() clears it again.
 *    - dw_edma_device_terminate_all(): an idle or paused channel has its
 *      issued and submitted descriptors terminated at once (cookie
 *      completed, no callback, kept on a terminated list until
 *      synchronize); a busy channel only gets a STOP request (-EPERM if
 *      one is already pending). The hardware is not told: the running
 *      linked-list batch (up to 169 bursts = sg entries, a 4 KiB list of
 *      24-byte elements, DMA_LLP_MEM_SIZE in pcie-designware.h) still
 *      moves all its data, then dw_edma_done_interrupt() sees STOP and
 *      terminates the running descriptor and every queued one, without
 *      callbacks.
 *    - dw_edma_device_synchronize() (dw_edma_wait_termination()) waits up
 *      to 5 s for the STOP to be handled, warns on timeout, then frees
 *      the terminated descriptors.
 *    - dw_edma_device_pause() asks for a pause at the end of the running
 *      batch; dw_edma_device_resume() restarts; -EPERM when not
 *      configured, not busy / not paused, or a request is pending;
 *      tx_status says DMA_PAUSED meanwhile.
 *    - dw_edma_abort_interrupt(): an error (the loop: fail_dma, link
 *      down, memory not backed) completes the running descriptor with
 *      callback_result DMA_TRANS_ABORTED and residue = bytes not covered
 *      by finished batches (dw_hdma_set_callback_result()); legacy
 *      callbacks get no result. The channel goes idle: queued descriptors
 *      stay and start only at the next issue_pending. tx_status of the
 *      aborted cookie is DMA_COMPLETE (dma_cookie_status(), no error
 *      state is kept).
 *    - completion callbacks run from a tasklet (vchan_complete()), i.e.
 *      in softirq context: the loop calls them with bottom halves
 *      disabled so a callback that sleeps is caught here too.
 *    - residue granularity DMA_RESIDUE_GRANULARITY_DESCRIPTOR.
 *
 * Link down: no chunk touches memory once loop_dma_link_changed() has
 * returned for a link loss (the copy runs under dma_link_rwsem for read,
 * and the link-down path takes it for write).
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/debugfs.h>
#include <linux/dmaengine.h>
#include <linux/ktime.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "loop.h"

/* Bytes copied between checks for abort, faults and link down */
#define LOOP_DMA_CHUNK		SZ_64K
/* Longest wait of a stalled channel before it re-checks its state */
#define LOOP_STALL_POLL_MS	100
/* dw-edma: linked-list elements per batch, PAGE_SIZE / EDMA_LL_SZ - 1 */
#define LOOP_DW_LL_MAX		169
/* dw-edma: dw_edma_wait_termination() gives up after 5 s */
#define LOOP_DW_STOP_WAIT_MS	5000

static struct loop_dma_chan *to_loop_chan(struct dma_chan *chan)
{
	return container_of(chan, struct loop_dma_chan, chan);
}

static struct loop_dma_desc *to_loop_desc(struct dma_async_tx_descriptor *tx)
{
	return container_of(tx, struct loop_dma_desc, tx);
}

static bool loop_dma_dw(struct pci_epc_loop *loop)
{
	return READ_ONCE(loop->dma_dw_semantics);
}

static dma_cookie_t loop_dma_tx_submit(struct dma_async_tx_descriptor *tx)
{
	struct loop_dma_chan *c = to_loop_chan(tx->chan);
	struct loop_dma_desc *d = to_loop_desc(tx);
	unsigned long flags;
	dma_cookie_t cookie;

	spin_lock_irqsave(&c->lock, flags);
	cookie = c->chan.cookie + 1;
	if (cookie < DMA_MIN_COOKIE)
		cookie = DMA_MIN_COOKIE;
	c->chan.cookie = cookie;
	tx->cookie = cookie;
	list_add_tail(&d->node, &c->submitted);
	spin_unlock_irqrestore(&c->lock, flags);
	return cookie;
}

static struct dma_async_tx_descriptor *
loop_dma_prep_slave_sg(struct dma_chan *chan, struct scatterlist *sgl,
		       unsigned int sg_len, enum dma_transfer_direction dir,
		       unsigned long flags, void *context)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	struct loop_dma_desc *d;
	struct scatterlist *sg;
	unsigned long lflags;
	bool configured;
	unsigned int i;
	u64 remote;

	if (dir != c->dir || !sg_len)
		return NULL;

	spin_lock_irqsave(&c->lock, lflags);
	remote = dir == DMA_DEV_TO_MEM ? c->cfg.src_addr : c->cfg.dst_addr;
	configured = c->configured;
	spin_unlock_irqrestore(&c->lock, lflags);

	/* dw_edma_device_transfer(): nothing without a slave config */
	if (loop_dma_dw(c->loop) && !configured)
		return NULL;

	d = kzalloc(struct_size(d, seg, sg_len), GFP_NOWAIT);
	if (!d)
		return NULL;
	d->nsegs = sg_len;
	d->dir = dir;
	d->remote = remote;
	for_each_sg(sgl, sg, sg_len, i) {
		d->seg[i].local = sg_dma_address(sg);
		d->seg[i].len = sg_dma_len(sg);
		d->total += sg_dma_len(sg);
	}

	dma_async_tx_descriptor_init(&d->tx, chan);
	d->tx.tx_submit = loop_dma_tx_submit;
	d->tx.flags = flags;
	INIT_LIST_HEAD(&d->node);
	return &d->tx;
}

static int loop_dma_config(struct dma_chan *chan, struct dma_slave_config *cfg)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	c->cfg = *cfg;
	c->configured = true;
	spin_unlock_irqrestore(&c->lock, flags);
	return 0;
}

static void loop_dma_issue_pending(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&c->lock, flags);
	if (!loop_dma_dw(c->loop)) {
		list_splice_tail_init(&c->submitted, &c->issued);
		kick = !list_empty(&c->issued);
	} else {
		/* dw_edma_device_issue_pending() */
		kick = false;
		if (c->configured) {
			list_splice_tail_init(&c->submitted, &c->issued);
			if (!list_empty(&c->issued) &&
			    c->request == LOOP_DW_REQ_NONE &&
			    c->status == LOOP_DW_IDLE) {
				c->status = LOOP_DW_BUSY;
				kick = true;
			}
		}
	}
	spin_unlock_irqrestore(&c->lock, flags);

	if (kick) {
		WRITE_ONCE(c->kick_ns, ktime_get_ns());
		queue_work(c->loop->dma_wq, &c->work);
	}
}

static bool loop_dma_cookie_failed(struct loop_dma_chan *c,
				   dma_cookie_t cookie)
{
	int i;

	for (i = 0; i < LOOP_ERR_COOKIES; i++)
		if (c->err_cookie[i] == cookie)
			return true;
	return false;
}

/* Residue of a descriptor still on the channel; lock held */
static u32 loop_dma_residue(struct loop_dma_chan *c, dma_cookie_t cookie,
			    bool dw)
{
	struct loop_dma_desc *d;

	if (c->active && c->active->tx.cookie == cookie)
		return c->active->total - (dw ? c->active->batch_done :
					   c->active->done);
	list_for_each_entry(d, &c->issued, node)
		if (d->tx.cookie == cookie)
			return d->total - (dw ? d->batch_done : d->done);
	list_for_each_entry(d, &c->submitted, node)
		if (d->tx.cookie == cookie)
			return d->total;
	return 0;
}

static enum dma_status loop_dma_tx_status(struct dma_chan *chan,
					  dma_cookie_t cookie,
					  struct dma_tx_state *state)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	bool dw = loop_dma_dw(c->loop);
	enum dma_status status;
	unsigned long flags;
	u32 residue = 0;

	spin_lock_irqsave(&c->lock, flags);
	status = dma_async_is_complete(cookie, chan->completed_cookie,
				       chan->cookie);
	if (status == DMA_COMPLETE) {
		/* dw-edma keeps no error state: an abort reads as complete */
		if (!dw && loop_dma_cookie_failed(c, cookie))
			status = DMA_ERROR;
	} else {
		if (dw && c->status == LOOP_DW_PAUSE)
			status = DMA_PAUSED;
		residue = loop_dma_residue(c, cookie, dw);
	}
	dma_set_tx_state(state, chan->completed_cookie, chan->cookie, residue);
	spin_unlock_irqrestore(&c->lock, flags);
	return status;
}

/*
 * dw-edma: dw_edma_terminate_vdesc() for one descriptor: its cookie is
 * completed (no callback) and it waits on the terminated list until
 * synchronize frees it. Lock held.
 */
static void loop_dw_terminate_desc(struct loop_dma_chan *c,
				   struct loop_dma_desc *d)
{
	c->chan.completed_cookie = d->tx.cookie;
	list_move_tail(&d->node, &c->terminated);
}

/*
 * dw_edma_terminate_all_descs(): the running descriptor (the head of
 * desc_issued in dw-edma; only the worker, which owns it, passes
 * @running) first, then issued, then submitted, so the completed cookie
 * only moves forward. Lock held.
 */
static void loop_dw_terminate_all_descs(struct loop_dma_chan *c, bool running)
{
	struct loop_dma_desc *d, *tmp;

	if (running && c->active) {
		list_add_tail(&c->active->node, &c->terminated);
		c->chan.completed_cookie = c->active->tx.cookie;
		c->active = NULL;
	}
	list_for_each_entry_safe(d, tmp, &c->issued, node)
		loop_dw_terminate_desc(c, d);
	list_for_each_entry_safe(d, tmp, &c->submitted, node)
		loop_dw_terminate_desc(c, d);
}

/* dw_edma_device_terminate_all() */
static int loop_dw_terminate_all(struct loop_dma_chan *c)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&c->lock, flags);
	if (!c->configured) {
		loop_dw_terminate_all_descs(c, false);
	} else if (c->status == LOOP_DW_PAUSE) {
		loop_dw_terminate_all_descs(c, false);
		c->status = LOOP_DW_IDLE;
	} else if (c->status == LOOP_DW_IDLE) {
		loop_dw_terminate_all_descs(c, false);
	} else if (c->request == LOOP_DW_REQ_STOP) {
		err = -EPERM;
	} else {
		/* Only a request: the running batch goes on */
		c->request = LOOP_DW_REQ_STOP;
	}
	if (c->status == LOOP_DW_IDLE)
		c->request = LOOP_DW_REQ_NONE;
	spin_unlock_irqrestore(&c->lock, flags);
	return err;
}

static int loop_dma_terminate_all(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	struct loop_dma_desc *d, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);

	if (loop_dma_dw(c->loop))
		return loop_dw_terminate_all(c);

	spin_lock_irqsave(&c->lock, flags);
	list_splice_tail_init(&c->submitted, &dead);
	list_splice_tail_init(&c->issued, &dead);
	if (c->active)
		c->abort = true;
	/* Everything up to now counts as finished for tx_status */
	chan->completed_cookie = chan->cookie;
	spin_unlock_irqrestore(&c->lock, flags);

	wake_up_all(&c->loop->stall_wq);
	list_for_each_entry_safe(d, tmp, &dead, node) {
		list_del(&d->node);
		kfree(d);
	}
	return 0;
}

/* Free what terminate_all parked; lock not held */
static void loop_dma_free_terminated(struct loop_dma_chan *c)
{
	struct loop_dma_desc *d, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);

	spin_lock_irqsave(&c->lock, flags);
	list_splice_tail_init(&c->terminated, &dead);
	spin_unlock_irqrestore(&c->lock, flags);

	list_for_each_entry_safe(d, tmp, &dead, node) {
		list_del(&d->node);
		kfree(d);
	}
}

static bool loop_dw_stopping(struct loop_dma_chan *c)
{
	unsigned long flags;
	bool busy;

	spin_lock_irqsave(&c->lock, flags);
	busy = c->request == LOOP_DW_REQ_STOP || c->in_cb;
	spin_unlock_irqrestore(&c->lock, flags);
	return busy;
}

/*
 * dw_edma_device_synchronize(): wait (bounded) until a deferred STOP was
 * handled and no callback runs, then free the terminated descriptors.
 */
static void loop_dw_synchronize(struct loop_dma_chan *c)
{
	struct pci_epc_loop *loop = c->loop;

	if (!wait_event_timeout(loop->stall_wq, !loop_dw_stopping(c),
				msecs_to_jiffies(LOOP_DW_STOP_WAIT_MS)))
		dev_warn(loop->dev, "chan %u: timeout waiting for channel termination\n",
			 c->idx);
	loop_dma_free_terminated(c);
}

static void loop_dma_synchronize(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);

	if (loop_dma_dw(c->loop)) {
		loop_dw_synchronize(c);
		return;
	}
	flush_work(&c->work);
	loop_dma_free_terminated(c);
}

/* dw_edma_device_pause(): takes effect at the end of the running batch */
static int loop_dma_pause(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&c->lock, flags);
	if (!c->configured || c->status != LOOP_DW_BUSY ||
	    c->request != LOOP_DW_REQ_NONE)
		err = -EPERM;
	else
		c->request = LOOP_DW_REQ_PAUSE;
	spin_unlock_irqrestore(&c->lock, flags);
	return err;
}

/* dw_edma_device_resume() */
static int loop_dma_resume(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	unsigned long flags;
	bool kick = false;
	int err = 0;

	spin_lock_irqsave(&c->lock, flags);
	if (!c->configured || c->status != LOOP_DW_PAUSE ||
	    c->request != LOOP_DW_REQ_NONE) {
		err = -EPERM;
	} else if (list_empty(&c->issued)) {
		c->status = LOOP_DW_IDLE;
	} else {
		c->status = LOOP_DW_BUSY;
		kick = true;
	}
	spin_unlock_irqrestore(&c->lock, flags);

	if (kick)
		queue_work(c->loop->dma_wq, &c->work);
	return err;
}

static void loop_dma_caps(struct dma_chan *chan, struct dma_slave_caps *caps)
{
	caps->directions = BIT(to_loop_chan(chan)->dir);
}

/* dw_edma_alloc_chan_resources(): a channel still running cannot be had */
static int loop_dma_alloc_chan(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);

	if (loop_dma_dw(c->loop) && READ_ONCE(c->status) != LOOP_DW_IDLE)
		return -EBUSY;
	return 0;
}

static void loop_dma_free_chan(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	struct loop_dma_desc *d, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);

	loop_dma_terminate_all(chan);
	loop_dma_synchronize(chan);

	/* dw_edma_free_chan_resources(): a new user must configure again */
	spin_lock_irqsave(&c->lock, flags);
	c->configured = false;
	list_splice_tail_init(&c->submitted, &dead);
	list_splice_tail_init(&c->issued, &dead);
	spin_unlock_irqrestore(&c->lock, flags);

	list_for_each_entry_safe(d, tmp, &dead, node) {
		list_del(&d->node);
		kfree(d);
	}
}

static bool loop_dma_stalled(struct loop_dma_chan *c)
{
	struct pci_epc_loop *loop = c->loop;

	return READ_ONCE(loop->stall_mask) & BIT(c->idx) &&
	       !(READ_ONCE(c->abort) && !loop_dma_dw(loop)) &&
	       (loop_ep_up(loop) || READ_ONCE(loop->stall_hold));
}

/**
 * loop_dma_chan_halted() - the channel must stop moving data now
 * @c: the channel
 *
 * The link is down, or terminate_all of the idealised engine asked the
 * worker to drop its descriptor. (A dw-edma STOP does not halt the
 * hardware: the batch runs to its end.)
 *
 * Return: true when the worker must stop waiting and give up the chunk.
 */
bool loop_dma_chan_halted(struct loop_dma_chan *c)
{
	return !loop_ep_up(c->loop) ||
	       (READ_ONCE(c->abort) && !loop_dma_dw(c->loop));
}

/* Why a chunk was given up: terminate_all (idealised engine) or an error */
static int loop_dma_halt_err(struct loop_dma_chan *c)
{
	return READ_ONCE(c->abort) && !loop_dma_dw(c->loop) ? -ECANCELED : -EIO;
}

/*
 * Copy one chunk unless the link went down (see loop_dma_link_changed()) or
 * the host cleared Bus Master Enable of function 0, whose requester ID the
 * engine's requests carry (dw-edma programs no function number).
 */
static int loop_dma_copy(struct pci_epc_loop *loop, enum dma_transfer_direction dir,
			 void *lva, void *rva, size_t n)
{
	down_read(&loop->dma_link_rwsem);
	if (!loop_ep_up(loop)) {
		up_read(&loop->dma_link_rwsem);
		return -ENOLINK;
	}
	/* Bus Master Enable clear: no request leaves, the channel reports an error */
	if (!loop_fn_master(loop, 0)) {
		up_read(&loop->dma_link_rwsem);
		atomic64_add(n, &loop->stats.bme_blocked);
		dev_warn_ratelimited(loop->dev,
				     "DMA refused: the host cleared Bus Master Enable\n");
		return -EACCES;
	}
	if (dir == DMA_DEV_TO_MEM)
		memcpy(lva, rva, n);
	else
		memcpy(rva, lva, n);
	/*
	 * corrupt_dma: one bit wrong past the middle of the chunk, 11 bytes in: off a page's
	 * first 8 bytes for any chunk of whole pages (a checker's stamps there are not what
	 * is tested)
	 */
	if (atomic_dec_if_positive(&loop->corrupt_dma) >= 0)
		((u8 *)(dir == DMA_DEV_TO_MEM ? lva : rva))[n > 32 ? n / 2 + 11 : n / 2] ^= 1;
	up_read(&loop->dma_link_rwsem);
	return 0;
}

/* How early a chunk may run: LOOP_MODEL_AHEAD_NS before @t */
static u64 loop_dma_early(u64 t)
{
	return t > LOOP_MODEL_AHEAD_NS ? t - LOOP_MODEL_AHEAD_NS : 0;
}

/*
 * Move segments [first, last) of @d, paced by the link model. @ready is
 * the earliest start of the first chunk. Returns 0, -EIO on a transfer
 * error (link down, memory not backed) or -ECANCELED when terminate_all of
 * the idealised engine dropped it.
 */
static int loop_dma_move(struct loop_dma_chan *c, struct loop_dma_desc *d,
			 unsigned int first, unsigned int last, u64 ready)
{
	struct pci_epc_loop *loop = c->loop;
	u64 remote = d->remote + d->done;
	unsigned int i;

	for (i = first; i < last; i++) {
		dma_addr_t local = d->seg[i].local;
		size_t left = d->seg[i].len;
		void *lva, *rva;

		lva = loop_phys_to_virt(loop, local, left);
		rva = loop_phys_to_virt(loop, remote, left);
		if (!lva || !rva) {
			dev_err_ratelimited(loop->dev,
					    "DMA %s %pad <-> %#llx+%zx not backed by memory\n",
					    d->dir == DMA_DEV_TO_MEM ? "read" : "write",
					    &local, remote, left);
			return -EIO;
		}

		while (left) {
			size_t n = min_t(size_t, left, LOOP_DMA_CHUNK);
			unsigned long flags;
			bool last_chunk;
			u64 start, end;

			/* A stalled channel makes no progress; bounded poll */
			while (loop_dma_stalled(c))
				wait_event_timeout(loop->stall_wq,
						   !loop_dma_stalled(c),
						   msecs_to_jiffies(LOOP_STALL_POLL_MS));
			if (loop_dma_chan_halted(c))
				return loop_dma_halt_err(c);

			/*
			 * Pacing: wait for the slot, copy, wait for its end;
			 * up to LOOP_MODEL_AHEAD_NS early except at the end
			 * of the batch, which completes on time.
			 */
			start = loop_model_reserve(c, remote, n, ready, &end);
			ready = end;
			last_chunk = i == last - 1 && n == left;
			if (loop_model_wait_until(c, loop_dma_early(start)) ||
			    loop_dma_copy(loop, d->dir, lva, rva, n) ||
			    loop_model_wait_until(c, last_chunk ? end :
						  loop_dma_early(end)))
				return loop_dma_halt_err(c);

			lva += n;
			rva += n;
			remote += n;
			left -= n;
			spin_lock_irqsave(&c->lock, flags);
			d->done += n;
			spin_unlock_irqrestore(&c->lock, flags);
			atomic64_add(n, &loop->stats.dma_bytes);
			cond_resched();
		}
	}
	return 0;
}

/*
 * Run a completion callback. dw-edma runs them from the virt-dma tasklet
 * (softirq context), so with dw semantics they run with bottom halves
 * disabled and a sleeping callback is caught. Called without the lock:
 * callbacks may submit more.
 */
static void loop_dma_callback(struct loop_dma_chan *c, struct loop_dma_desc *d,
			      enum dmaengine_tx_result result, u32 residue,
			      bool dw)
{
	struct dmaengine_result res = {
		.result = result,
		.residue = residue,
	};
	struct dma_async_tx_descriptor *tx = &d->tx;
	unsigned long flags;

	if (dw)
		local_bh_disable();
	if (tx->callback_result)
		tx->callback_result(tx->callback_param, &res);
	else if (tx->callback)
		tx->callback(tx->callback_param);
	if (dw)
		local_bh_enable();
	kfree(d);

	spin_lock_irqsave(&c->lock, flags);
	c->in_cb = false;
	spin_unlock_irqrestore(&c->lock, flags);
	wake_up_all(&c->loop->stall_wq);
}

/* Complete @d (the active descriptor) for the callback; lock held */
static void loop_dma_complete_locked(struct loop_dma_chan *c,
				     struct loop_dma_desc *d, bool failed)
{
	if (failed) {
		c->err_cookie[c->err_pos] = d->tx.cookie;
		c->err_pos = (c->err_pos + 1) % LOOP_ERR_COOKIES;
	}
	/* Cookies complete in order on a channel */
	if (dma_async_is_complete(d->tx.cookie, c->chan.completed_cookie,
				  c->chan.cookie) != DMA_COMPLETE)
		c->chan.completed_cookie = d->tx.cookie;
	c->active = NULL;
	c->in_cb = true;
	atomic64_inc(&c->loop->stats.dma_xfers);
	if (failed)
		atomic64_inc(&c->loop->stats.dma_errors);
}

/* The idealised engine: one descriptor, start to end */
static void loop_dma_run_ideal(struct loop_dma_chan *c,
			       struct loop_dma_desc *d, u64 ready)
{
	enum dmaengine_tx_result result = DMA_TRANS_NOERROR;
	unsigned long flags;
	int ret = -EIO;

	if (atomic_dec_if_positive(&c->loop->fail_dma) < 0)
		ret = loop_dma_move(c, d, 0, d->nsegs, ready);

	spin_lock_irqsave(&c->lock, flags);
	if (ret == -ECANCELED) {
		c->active = NULL;
		c->abort = false;
		spin_unlock_irqrestore(&c->lock, flags);
		kfree(d);
		return;
	}
	if (ret)
		result = d->dir == DMA_DEV_TO_MEM ? DMA_TRANS_READ_FAILED :
						    DMA_TRANS_WRITE_FAILED;
	loop_dma_complete_locked(c, d, ret);
	spin_unlock_irqrestore(&c->lock, flags);

	if (!ret)
		loop_model_done(c, c->model_end);
	loop_dma_callback(c, d, result, d->total - d->done, false);
}

/*
 * dw-edma: one linked-list batch of @d, then what dw_edma_done_interrupt()
 * or dw_edma_abort_interrupt() do with it. Returns true while the channel
 * stays busy.
 */
static bool loop_dma_run_dw(struct loop_dma_chan *c, struct loop_dma_desc *d,
			    u64 ready)
{
	unsigned int first = d->next_seg;
	unsigned int last = min(d->nsegs, first + LOOP_DW_LL_MAX);
	enum dmaengine_tx_result result = DMA_TRANS_NOERROR;
	struct loop_dma_desc *done = NULL;
	unsigned long flags;
	u32 residue = 0;
	bool busy;
	int ret = -EIO;

	spin_lock_irqsave(&c->lock, flags);
	d->batch_done = d->done;
	d->next_seg = last;
	spin_unlock_irqrestore(&c->lock, flags);

	if (first || atomic_dec_if_positive(&c->loop->fail_dma) < 0)
		ret = loop_dma_move(c, d, first, last, ready);

	spin_lock_irqsave(&c->lock, flags);
	if (c->request == LOOP_DW_REQ_STOP) {
		/* Done or abort interrupt with a STOP pending: drop it all */
		loop_dw_terminate_all_descs(c, true);
		c->request = LOOP_DW_REQ_NONE;
		c->status = LOOP_DW_IDLE;
	} else if (ret) {
		/* dw_edma_abort_interrupt(): report, then go idle */
		result = DMA_TRANS_ABORTED;
		residue = d->total - d->batch_done;
		loop_dma_complete_locked(c, d, true);
		done = d;
		c->request = LOOP_DW_REQ_NONE;
		c->status = LOOP_DW_IDLE;
	} else {
		/* dw_edma_done_interrupt() */
		if (d->next_seg >= d->nsegs) {
			loop_dma_complete_locked(c, d, false);
			done = d;
		}
		if (c->request == LOOP_DW_REQ_PAUSE) {
			c->request = LOOP_DW_REQ_NONE;
			c->status = LOOP_DW_PAUSE;
			/* The rest of @d waits at the head of the queue */
			if (c->active)
				list_add(&c->active->node, &c->issued);
			c->active = NULL;
		} else if (!c->active && list_empty(&c->issued)) {
			c->status = LOOP_DW_IDLE;
		}
	}
	busy = c->status == LOOP_DW_BUSY;
	spin_unlock_irqrestore(&c->lock, flags);

	wake_up_all(&c->loop->stall_wq);
	if (done) {
		if (!ret)
			loop_model_done(c, c->model_end);
		loop_dma_callback(c, done, result, residue, true);
	}
	return busy;
}

/* Next descriptor for the worker, or NULL when the channel has none */
static struct loop_dma_desc *loop_dma_next(struct loop_dma_chan *c, bool dw)
{
	struct loop_dma_desc *d = NULL;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	if (dw && c->status != LOOP_DW_BUSY)
		goto out_unlock;
	d = c->active;
	if (d)
		goto out_unlock;
	d = list_first_entry_or_null(&c->issued, struct loop_dma_desc, node);
	if (d) {
		list_del_init(&d->node);
		c->active = d;
		c->abort = false;
	} else if (dw) {
		c->status = LOOP_DW_IDLE;
	}
out_unlock:
	spin_unlock_irqrestore(&c->lock, flags);
	return d;
}

static void loop_dma_work(struct work_struct *work)
{
	struct loop_dma_chan *c = container_of(work, struct loop_dma_chan,
					       work);
	struct pci_epc_loop *loop = c->loop;
	bool back_to_back = false;
	struct loop_dma_desc *d;
	u64 ready;
	bool dw;

	for (;;) {
		dw = loop_dma_dw(loop);
		d = loop_dma_next(c, dw);
		if (!d)
			break;

		/*
		 * A descriptor queued behind the last one starts where that
		 * one ended on the link; one found idle starts now. Either
		 * way its first chunk waits the setup time.
		 */
		if (d->done) {
			ready = c->model_end;
		} else if (back_to_back) {
			ready = c->model_end + READ_ONCE(loop->setup_ns);
		} else {
			loop_model_started(c, READ_ONCE(c->kick_ns));
			ready = ktime_get_ns() + READ_ONCE(loop->setup_ns);
		}
		back_to_back = true;

		if (!dw)
			loop_dma_run_ideal(c, d, ready);
		else if (!loop_dma_run_dw(c, d, ready))
			break;
	}
}

/**
 * loop_dma_link_changed() - wake channels so they notice link changes
 * @loop: the loopback
 *
 * A channel checks the link between chunks; transfers running or queued
 * while the endpoint has no link fail (idealised: read/write error;
 * dw-edma: abort). After a link loss this returns only once no chunk is
 * being copied, so no DMA touches host memory after the link is down.
 *
 * Context: process context (link state changes), may sleep.
 */
void loop_dma_link_changed(struct pci_epc_loop *loop)
{
	if (!loop_ep_up(loop)) {
		/* Wait for chunks that saw the link up to finish copying */
		down_write(&loop->dma_link_rwsem);
		up_write(&loop->dma_link_rwsem);
	}
	wake_up_all(&loop->stall_wq);
}

/*
 * What differs in struct dma_device: dw-edma has pause/resume and reports
 * residue per descriptor; without the ops dmaengine_pause() and
 * dmaengine_resume() return -ENOSYS, as for an engine that has none.
 */
static void loop_dma_set_ops(struct pci_epc_loop *loop)
{
	struct dma_device *dd = &loop->dma;
	bool dw = loop_dma_dw(loop);

	WRITE_ONCE(dd->residue_granularity,
		   dw ? DMA_RESIDUE_GRANULARITY_DESCRIPTOR :
			DMA_RESIDUE_GRANULARITY_BURST);
	WRITE_ONCE(dd->device_pause, dw ? loop_dma_pause : NULL);
	WRITE_ONCE(dd->device_resume, dw ? loop_dma_resume : NULL);
}

static int loop_dw_semantics_set(void *data, u64 val)
{
	struct pci_epc_loop *loop = data;

	if (val > 1)
		return -EINVAL;
	WRITE_ONCE(loop->dma_dw_semantics, val);
	loop_dma_set_ops(loop);
	return 0;
}

static int loop_dw_semantics_get(void *data, u64 *val)
{
	*val = loop_dma_dw(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(loop_dw_semantics_fops, loop_dw_semantics_get,
			 loop_dw_semantics_set, "%llu\n");

/**
 * loop_dma_debugfs_init() - the DMA engine's and link model's debugfs files
 * @loop: the loopback
 * @dir: the device's debugfs directory
 *
 * dma_dw_semantics: 0 idealised engine, 1 dw-edma (change it only while no
 * transfer is queued); plus the link model's files (model.c).
 */
void loop_dma_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir)
{
	debugfs_create_file_unsafe("dma_dw_semantics", 0600, dir, loop,
				   &loop_dw_semantics_fops);
	loop_model_debugfs_init(loop, dir);
}

/**
 * loop_dma_init() - register the dmaengine provider
 * @loop: the loopback
 *
 * Registers nothing when the profile has no channels in either direction
 * (mainline Tegra234 exposes no eDMA through dmaengine).
 *
 * Return: 0 or a negative errno.
 */
int loop_dma_init(struct pci_epc_loop *loop)
{
	unsigned int nchans = loop->nchans_rd + loop->nchans_wr;
	struct dma_device *dd = &loop->dma;
	unsigned int i;
	int ret;

	init_rwsem(&loop->dma_link_rwsem);
	loop_model_init(loop);
	loop->dma_dw_semantics = loop->profile != LOOP_PROFILE_GENERIC;
	if (!nchans)
		return 0;

	/* EPFs may wait for transfers from reclaim-safe workqueues */
	loop->dma_wq = alloc_workqueue("%s-dma", WQ_UNBOUND | WQ_MEM_RECLAIM, 0,
				       dev_name(loop->dev));
	if (!loop->dma_wq)
		return -ENOMEM;

	dma_cap_zero(dd->cap_mask);
	dma_cap_set(DMA_SLAVE, dd->cap_mask);
	dma_cap_set(DMA_PRIVATE, dd->cap_mask);
	dd->dev = loop->dev;
	dd->directions = 0;
	if (loop->nchans_rd)
		dd->directions |= BIT(DMA_DEV_TO_MEM);
	if (loop->nchans_wr)
		dd->directions |= BIT(DMA_MEM_TO_DEV);
	dd->src_addr_widths = BIT(DMA_SLAVE_BUSWIDTH_4_BYTES);
	dd->dst_addr_widths = BIT(DMA_SLAVE_BUSWIDTH_4_BYTES);
	dd->device_alloc_chan_resources = loop_dma_alloc_chan;
	dd->device_free_chan_resources = loop_dma_free_chan;
	dd->device_caps = loop_dma_caps;
	dd->device_config = loop_dma_config;
	dd->device_prep_slave_sg = loop_dma_prep_slave_sg;
	dd->device_issue_pending = loop_dma_issue_pending;
	dd->device_tx_status = loop_dma_tx_status;
	dd->device_terminate_all = loop_dma_terminate_all;
	dd->device_synchronize = loop_dma_synchronize;
	loop_dma_set_ops(loop);
	INIT_LIST_HEAD(&dd->channels);

	/*
	 * Read channels first, then write channels: the opposite of dw-edma,
	 * whose dw_edma_channel_setup() (drivers/dma/dw-edma/dw-edma-core.c)
	 * makes channels 0..wr_ch_cnt-1 EDMA_DIR_WRITE and the rest
	 * EDMA_DIR_READ, each added to dma->channels in that order by
	 * vchan_init(). Nothing depends on it: framelink-epf's
	 * fl_dma_filter_fn() and pci-epf-test's epf_dma_filter_fn() pick by
	 * device and direction (dma_get_slave_caps()), and within a direction
	 * both list channel 0 first. Only chan_id (dmaXchanY) and this
	 * module's own indices (the stall bitmask, "chan %u" messages) differ.
	 */
	for (i = 0; i < nchans; i++) {
		struct loop_dma_chan *c = &loop->chans[i];

		c->loop = loop;
		c->idx = i;
		c->dir = i < loop->nchans_rd ? DMA_DEV_TO_MEM : DMA_MEM_TO_DEV;
		spin_lock_init(&c->lock);
		INIT_LIST_HEAD(&c->submitted);
		INIT_LIST_HEAD(&c->issued);
		INIT_LIST_HEAD(&c->terminated);
		INIT_WORK(&c->work, loop_dma_work);
		c->status = LOOP_DW_IDLE;
		c->request = LOOP_DW_REQ_NONE;
		c->chan.device = dd;
		c->chan.cookie = DMA_MIN_COOKIE;
		c->chan.completed_cookie = DMA_MIN_COOKIE;
		list_add_tail(&c->chan.device_node, &dd->channels);
	}

	ret = dma_async_device_register(dd);
	if (ret) {
		destroy_workqueue(loop->dma_wq);
		loop->dma_wq = NULL;
		return dev_err_probe(loop->dev, ret, "cannot register DMA\n");
	}
	loop->dma_registered = true;
	return 0;
}

/**
 * loop_dma_exit() - unregister the dmaengine provider
 * @loop: the loopback
 */
void loop_dma_exit(struct pci_epc_loop *loop)
{
	unsigned int i;

	if (loop->dma_registered) {
		dma_async_device_unregister(&loop->dma);
		loop->dma_registered = false;
	}
	if (loop->dma_wq) {
		destroy_workqueue(loop->dma_wq);
		loop->dma_wq = NULL;
		/* A STOP handled after its synchronize timed out parks here */
		for (i = 0; i < loop->nchans_rd + loop->nchans_wr; i++)
			loop_dma_free_terminated(&loop->chans[i]);
	}
}
