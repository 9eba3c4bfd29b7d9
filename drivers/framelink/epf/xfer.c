// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: moving frame data, by DMA or by CPU copy.
 *
 * DMA: private DMA_SLAVE channels of the controller's own engine (dw-edma on
 * the Orin, the loop's engine in tests), chosen by a filter on the
 * controller's parent device and the channel's direction, as pci-epf-test.
 * Read channels pull frames from host memory (DMA_DEV_TO_MEM, src_addr = the
 * host bus address), write channels push them (DMA_MEM_TO_DEV, dst_addr).
 * A large frame is split across the channels of its direction and finishes
 * when every part has; several frames are in flight; callbacks only count
 * parts down and kick the engine.
 *
 * Lifetime on dw-edma (drivers/dma/dw-edma/dw-edma-core.c): a descriptor's
 * callback parameter is a per-channel struct fl_dma_ctx tagged with the
 * transfer generation (fl_ep.xgen); a context is reused only after its
 * callback ran or its channel was proven idle (newest cookie complete, then
 * dmaengine_synchronize()). Teardowns bump the generation, terminate every
 * channel and wait, bounded; what does not stop in time is leaked on
 * purpose (fl_xfer_quiesce()). An aborted descriptor reports DMA_TRANS_ABORTED
 * (FL_ST_DMA for its frame) and leaves the channel idle with the queued
 * descriptors waiting: the engine issues them again.
 *
 * CPU: through one outbound window allocated at set-up, mapped per chunk
 * (pci_epc_map_addr), copied with memcpy_fromio/memcpy_toio, unmapped.
 * Used below the crossover size of the direction (reads of host memory
 * have their own, much smaller one: each CPU load is a PCIe round trip),
 * without channels, and as a fallback when no channel can take a frame.
 * Copies run from the engine pass, at most cpu_pass_bytes per pass, and
 * stop between window chunks when the host resets or the link goes down.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/delay.h>
#include <linux/io.h>
#include <linux/kmemleak.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "epf.h"

/*
 * How long a teardown (host reset, link down, protocol error) waits for the
 * DMA it terminated to be proven over. Below the host's 2 s enable/disable
 * bound, so the host sees the outcome: RESET when the engine is idle, ERROR
 * while a leaked transfer may still move data.
 */
static unsigned int dma_drain_ms = 1000;
module_param(dma_drain_ms, uint, 0644);
MODULE_PARM_DESC(dma_drain_ms,
		 "ms a reset waits for terminated DMA to stop before leaking it (default 1000)");

/* Unbind and deinit give the engine longer: the slots are freed afterwards */
#define FL_EP_EXIT_DRAIN_MS	10000

/**
 * fl_xfer_drain_ms() - the reset path's bound for terminated DMA
 *
 * Return: the dma_drain_ms module parameter, at least 1.
 */
unsigned int fl_xfer_drain_ms(void)
{
	return max(READ_ONCE(dma_drain_ms), 1U);
}

struct fl_dma_filter {
	struct device *dev;
	u32 dir_mask;
};

static bool fl_dma_filter_fn(struct dma_chan *chan, void *param)
{
	struct fl_dma_filter *f = param;
	struct dma_slave_caps caps = {};

	if (chan->device->dev != f->dev)
		return false;
	if (dma_get_slave_caps(chan, &caps))
		return false;
	return caps.directions & f->dir_mask;
}

static u32 fl_dma_request(struct fl_ep *ep, struct fl_dma_chan *dcs, u32 want,
			  enum dma_transfer_direction dir)
{
	struct fl_dma_filter f = { .dev = ep->dma_dev, .dir_mask = BIT(dir) };
	dma_cap_mask_t mask;
	u32 n;

	dma_cap_zero(mask);
	dma_cap_set(DMA_SLAVE, mask);
	for (n = 0; n < want; n++) {
		struct fl_dma_chan *dc = &dcs[n];

		dc->ctx = kcalloc(ep->entries, sizeof(*dc->ctx), GFP_KERNEL);
		if (!dc->ctx)
			break;
		dc->chan = dma_request_channel(mask, fl_dma_filter_fn, &f);
		if (!dc->chan) {
			kfree(dc->ctx);
			dc->ctx = NULL;
			break;
		}
		dc->nctx = ep->entries;
		dc->ctx_next = 0;
		dc->last_cookie = 0;
		dc->stuck = false;
		atomic_set(&dc->reissue, 0);
	}
	return n;
}

/*
 * Give channels back. One still stuck (its DMA never proven over) is kept
 * with its contexts, deliberately leaked: releasing it would let a new user
 * reprogram a channel that may still write our slots and the host's buffers.
 */
static void fl_dma_release(struct fl_ep *ep, struct fl_dma_chan *dcs, u32 *n)
{
	while (*n) {
		struct fl_dma_chan *dc = &dcs[--(*n)];

		if (dc->stuck) {
			dev_err(ep->dev, "DMA: %s never stopped: channel, slots and binding leaked\n",
				dma_chan_name(dc->chan));
			ep->dma_leaked++;
			kmemleak_not_leak(dc->ctx);
		} else {
			dma_release_channel(dc->chan);
			kfree(dc->ctx);
		}
		dc->chan = NULL;
		dc->ctx = NULL;
		dc->nctx = 0;
	}
}

/**
 * fl_xfer_init_hw() - request DMA channels and the outbound window (epc_init)
 * @ep: the endpoint.
 *
 * Fewer channels than configured (or none) is not an error: frames then go
 * by CPU copy.
 *
 * Return: 0, or -ENODEV/-ENOMEM when no outbound window is available.
 */
int fl_xfer_init_hw(struct fl_ep *ep)
{
	struct pci_epc *epc = ep->epc;
	u32 want = ep->cfg.dma_channels;

	ep->nrd = fl_dma_request(ep, ep->rd, want, DMA_DEV_TO_MEM);
	ep->nwr = fl_dma_request(ep, ep->wr, want, DMA_MEM_TO_DEV);
	ep->rd_next = 0;
	ep->wr_next = 0;
	if (want && (ep->nrd < want || ep->nwr < want))
		dev_info(ep->dev, "DMA: %u read and %u write channels of %u wanted\n",
			 ep->nrd, ep->nwr, want);

	if (!epc->mem) {
		dev_err(ep->dev, "controller has no outbound window\n");
		fl_dma_release(ep, ep->wr, &ep->nwr);
		fl_dma_release(ep, ep->rd, &ep->nrd);
		return -ENODEV;
	}
	ep->win_page = max_t(size_t, epc->mem->window.page_size, ep->features->align);
	if (!ep->win_page)
		ep->win_page = PAGE_SIZE;
	ep->win_va = pci_epc_mem_alloc_addr(epc, &ep->win_phys, FL_EP_WIN_SIZE);
	if (!ep->win_va) {
		dev_err(ep->dev, "no outbound window of %u bytes\n", FL_EP_WIN_SIZE);
		fl_dma_release(ep, ep->wr, &ep->nwr);
		fl_dma_release(ep, ep->rd, &ep->nrd);
		return -ENOMEM;
	}
	return 0;
}

/**
 * fl_xfer_exit_hw() - give channels and window back (epc_deinit, unbind)
 * @ep: the endpoint (engine stopped).
 *
 * Terminated DMA gets FL_EP_EXIT_DRAIN_MS to be proven over; a channel that
 * is not is leaked with everything it may touch (fl_ep.dma_leaked).
 */
void fl_xfer_exit_hw(struct fl_ep *ep)
{
	fl_xfer_quiesce(ep, FL_EP_EXIT_DRAIN_MS);
	fl_dma_release(ep, ep->wr, &ep->nwr);
	fl_dma_release(ep, ep->rd, &ep->nrd);
	if (ep->win_va) {
		pci_epc_mem_free_addr(ep->epc, ep->win_phys, ep->win_va, FL_EP_WIN_SIZE);
		ep->win_va = NULL;
	}
}

/* Every held channel, reads first: for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++) */
static struct fl_dma_chan *fl_dma_chan_at(struct fl_ep *ep, u32 i)
{
	if (i < ep->nrd)
		return &ep->rd[i];
	i -= ep->nrd;
	return i < ep->nwr ? &ep->wr[i] : NULL;
}

/*
 * Nothing submitted on @dc can still run or call back later: its newest
 * cookie is complete. dw-edma completes the cookie of a terminated
 * descriptor too (dw_edma_terminate_vdesc()), and cookies complete in order
 * on a channel. A callback may still be on its way: dmaengine_synchronize()
 * waits for it.
 */
static bool fl_dma_chan_idle(struct fl_dma_chan *dc)
{
	enum dma_status st;

	if (!dc->last_cookie)
		return true;
	st = dmaengine_tx_status(dc->chan, dc->last_cookie, NULL);
	/* DMA_ERROR is finished too (engines that keep the error, unlike dw-edma) */
	return st == DMA_COMPLETE || st == DMA_ERROR;
}

/* @dc is proven idle: wait for callbacks in flight, then every context is free */
static void fl_dma_chan_reclaim(struct fl_ep *ep, struct fl_dma_chan *dc)
{
	unsigned long flags;
	u32 i;

	dmaengine_synchronize(dc->chan);
	spin_lock_irqsave(&ep->xgen_lock, flags);
	for (i = 0; i < dc->nctx; i++)
		dc->ctx[i].busy = false;
	spin_unlock_irqrestore(&ep->xgen_lock, flags);
	dc->last_cookie = 0;
	atomic_set(&dc->reissue, 0);
	if (dc->stuck)
		dev_info(ep->dev, "DMA: %s stopped at last; back in use\n",
			 dma_chan_name(dc->chan));
	dc->stuck = false;
}

/* @dc did not stop in time: keep what its descriptors use, count and say so */
static void fl_dma_chan_leak(struct fl_ep *ep, struct fl_dma_chan *dc, unsigned int ms)
{
	unsigned long flags;
	u32 i, n = 0;

	spin_lock_irqsave(&ep->xgen_lock, flags);
	for (i = 0; i < dc->nctx; i++) {
		if (!dc->ctx[i].busy)
			continue;
		dc->ctx[i].x->leaked = true;
		n++;
	}
	spin_unlock_irqrestore(&ep->xgen_lock, flags);
	dc->stuck = true;
	fl_stat_add(ep, FL_STAT_DMA_LEAKED, n);
	dev_err_ratelimited(ep->dev,
			    "DMA: %s not stopped %u ms after terminate: %u transfers leaked, their slots are never reused\n",
			    dma_chan_name(dc->chan), ms, n);
}

/**
 * fl_xfer_quiesce() - end every DMA transfer before its state is reused
 * @ep: the endpoint (engine context, or engine stopped).
 * @timeout_ms: how long to wait for terminated descriptors.
 *
 * dw-edma gives fewer guarantees than dmaengine_terminate_sync() suggests:
 * on a busy channel terminate only requests a STOP, the running batch still
 * moves its data, and the running and queued descriptors are then dropped
 * without callbacks; synchronize gives up after 5 s; an abort leaves the
 * queued descriptors to start at the next issue_pending. So: bump the
 * generation (a late callback is ignored), terminate every channel (no
 * stale descriptor survives to a later issue_pending), wait (bounded) until
 * each channel's newest cookie is complete, then synchronize. A channel
 * that does not get there in time is marked stuck and its transfers leaked
 * (fl_xfer.leaked, %FL_STAT_DMA_LEAKED): neither their slots nor the
 * channel are used again until it is proven idle.
 *
 * Return: true when every channel is proven idle.
 */
bool fl_xfer_quiesce(struct fl_ep *ep, unsigned int timeout_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	struct fl_dma_chan *dc;
	unsigned long flags;
	bool idle;
	u32 i;

	spin_lock_irqsave(&ep->xgen_lock, flags);
	ep->xgen++;
	spin_unlock_irqrestore(&ep->xgen_lock, flags);

	/* All STOP requests first, so the channels drain in parallel */
	for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++)
		dmaengine_terminate_async(dc->chan);
	for (;;) {
		idle = true;
		for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++)
			idle &= fl_dma_chan_idle(dc);
		if (idle || time_after(jiffies, end))
			break;
		usleep_range(200, 1000);
	}
	for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++) {
		if (fl_dma_chan_idle(dc))
			fl_dma_chan_reclaim(ep, dc);
		else
			fl_dma_chan_leak(ep, dc, timeout_ms);
	}
	return idle;
}

/**
 * fl_xfer_stuck() - is DMA of an earlier generation possibly still running?
 * @ep: the endpoint (engine context, or engine stopped).
 *
 * A stuck channel found idle now is synchronized and used again. The
 * endpoint reports RESET only once this is false: the host may then reuse
 * every buffer it had posted.
 *
 * Return: true while a channel is stuck.
 */
bool fl_xfer_stuck(struct fl_ep *ep)
{
	struct fl_dma_chan *dc;
	bool stuck = false;
	u32 i;

	for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++) {
		if (!dc->stuck)
			continue;
		if (fl_dma_chan_idle(dc))
			fl_dma_chan_reclaim(ep, dc);
		else
			stuck = true;
	}
	return stuck;
}

/*
 * Map host memory [pci_addr, pci_addr + *len) into the window; *len is cut to
 * what fits. Returns the CPU address of pci_addr.
 */
static void __iomem *fl_win_map(struct fl_ep *ep, u64 pci_addr, size_t *len, int *err)
{
	struct pci_epf *epf = ep->epf;
	size_t off = pci_addr & (ep->win_page - 1);
	size_t size;

	*len = min_t(size_t, *len, FL_EP_WIN_SIZE - off);
	size = ALIGN(off + *len, ep->win_page);
	if (size > FL_EP_WIN_SIZE)
		size = FL_EP_WIN_SIZE;
	*err = pci_epc_map_addr(ep->epc, epf->func_no, epf->vfunc_no, ep->win_phys,
				pci_addr - off, size);
	if (*err)
		return NULL;
	return ep->win_va + off;
}

static void fl_win_unmap(struct fl_ep *ep)
{
	pci_epc_unmap_addr(ep->epc, ep->epf->func_no, ep->epf->vfunc_no, ep->win_phys);
}

/* CPU copy between host memory and a local buffer, window-sized chunks */
static int fl_win_copy(struct fl_ep *ep, u64 pci_addr, void *local, size_t len, bool to_host)
{
	while (len) {
		size_t n = len;
		void __iomem *va;
		int err;

		va = fl_win_map(ep, pci_addr, &n, &err);
		if (!va)
			return err;
		if (to_host)
			memcpy_toio(va, local, n);
		else
			memcpy_fromio(local, va, n);
		/* Unmap makes the writes visible (posted, before what follows) */
		fl_win_unmap(ep);
		pci_addr += n;
		local += n;
		len -= n;
	}
	return 0;
}

/**
 * fl_win_write() - write a small buffer to host memory through the window
 * @ep: the endpoint (engine context, or engine stopped).
 * @pci_addr: host bus address.
 * @src: data.
 * @len: bytes.
 *
 * Return: 0 or the map error (-ENOLINK when the link is down).
 */
int fl_win_write(struct fl_ep *ep, u64 pci_addr, const void *src, size_t len)
{
	return fl_win_copy(ep, pci_addr, (void *)src, len, true);
}

static void fl_xfer_finish(struct fl_xfer *x)
{
	x->ts_done = ktime_get_ns();
	/* Pairs with fl_xfer_done(): ts_done and dma_err before done */
	smp_store_release(&x->done, true);
	fl_engine_kick(x->ep);
}

/* The first failure of a transfer: FL_ST_DMA for it, one abort counted; xgen_lock held */
static void fl_xfer_fail(struct fl_ep *ep, struct fl_xfer *x)
{
	if (!x->dma_err)
		fl_stat_add(ep, FL_STAT_DMA_ABORTS, 1);
	WRITE_ONCE(x->dma_err, true);
}

/*
 * Descriptor callback; any context (dw-edma: the virt-dma tasklet). Under
 * xgen_lock, so a teardown that bumped the generation is never overtaken:
 * a callback of an older generation leaves the transfer alone.
 */
static void fl_xfer_dma_done(void *param, const struct dmaengine_result *res)
{
	struct fl_dma_ctx *c = param;
	struct fl_xfer *x = c->x;
	struct fl_ep *ep = x->ep;
	bool aborted = res && res->result != DMA_TRANS_NOERROR;
	unsigned long flags;
	bool stale, last = false;
	u32 gen, id;

	spin_lock_irqsave(&ep->xgen_lock, flags);
	gen = c->gen;
	id = x->id;
	stale = gen != ep->xgen;
	c->busy = false;
	if (!stale) {
		if (aborted)
			fl_xfer_fail(ep, x);
		last = atomic_dec_and_test(&x->pending);
		if (last) {
			/* Still under the lock: a teardown reuses @x only after its bump */
			x->ts_done = ktime_get_ns();
			/* Pairs with fl_xfer_done(): ts_done and dma_err before done */
			smp_store_release(&x->done, true);
		}
	}
	spin_unlock_irqrestore(&ep->xgen_lock, flags);

	if (stale) {
		int n = atomic_inc_return(&ep->dma_stale);

		dev_info_ratelimited(ep->dev, "DMA: late callback of generation %u ignored (%d so far)\n",
				     gen, n);
		return;
	}
	if (aborted) {
		/* dw-edma starts what was queued behind an abort only at the next issue_pending */
		atomic_set(&c->dc->reissue, 1);
		dev_err_ratelimited(ep->dev, "DMA: %s transfer %u failed: result %d, residue %u\n",
				    dma_chan_name(c->dc->chan), id, res->result, res->residue);
	}
	if (aborted || last)
		fl_engine_kick(ep);
}

/* A free callback context of @dc, or NULL (the channel is not usable now) */
static struct fl_dma_ctx *fl_dma_ctx_get(struct fl_dma_chan *dc)
{
	struct fl_dma_ctx *c;

	if (dc->stuck || !dc->nctx)
		return NULL;
	c = &dc->ctx[dc->ctx_next % dc->nctx];
	/* Pairs with the callback's unlock: a context is free once it said so */
	return READ_ONCE(c->busy) ? NULL : c;
}

/* Submit one part of @x on @dc: @len bytes at @off. Returns false on failure */
static bool fl_xfer_dma_part(struct fl_ep *ep, struct fl_dma_chan *dc, struct fl_xfer *x,
			     u64 host, dma_addr_t local, u32 len, bool to_host)
{
	enum dma_transfer_direction dir = to_host ? DMA_MEM_TO_DEV : DMA_DEV_TO_MEM;
	struct dma_slave_config sc = { .direction = dir };
	struct dma_async_tx_descriptor *tx;
	struct fl_dma_ctx *c = fl_dma_ctx_get(dc);
	unsigned long flags;
	dma_cookie_t cookie;

	if (!c)
		return false;
	if (to_host)
		sc.dst_addr = host;
	else
		sc.src_addr = host;
	if (dmaengine_slave_config(dc->chan, &sc))
		return false;
	tx = dmaengine_prep_slave_single(dc->chan, local, len, dir,
					 DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!tx)
		return false;

	/* Busy before the descriptor exists for the engine: its callback may come at once */
	spin_lock_irqsave(&ep->xgen_lock, flags);
	c->x = x;
	c->dc = dc;
	c->gen = ep->xgen;
	c->busy = true;
	spin_unlock_irqrestore(&ep->xgen_lock, flags);
	tx->callback_result = fl_xfer_dma_done;
	tx->callback_param = c;
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie)) {
		spin_lock_irqsave(&ep->xgen_lock, flags);
		c->busy = false;
		spin_unlock_irqrestore(&ep->xgen_lock, flags);
		return false;
	}
	dc->ctx_next++;
	dc->last_cookie = cookie;
	return true;
}

/*
 * Issue @x as up to one part per usable channel of its direction. Returns
 * false when nothing could be issued (the caller copies by CPU instead).
 */
static bool fl_xfer_dma(struct fl_ep *ep, struct fl_xfer *x, u64 host, dma_addr_t local,
			bool to_host)
{
	struct fl_dma_chan *dcs = to_host ? ep->wr : ep->rd;
	u32 nch = to_host ? ep->nwr : ep->nrd;
	u32 *next = to_host ? &ep->wr_next : &ep->rd_next;
	struct fl_dma_chan *use[FL_EP_MAX_CHANNELS];
	u32 parts, part_len, issued = 0, n = 0, i;

	/* Round robin over the channels that can take a descriptor now */
	for (i = 0; i < nch; i++) {
		struct fl_dma_chan *dc = &dcs[(*next + i) % nch];

		if (fl_dma_ctx_get(dc))
			use[n++] = dc;
	}
	if (!n)
		return false;

	parts = clamp_t(u32, x->bytes / FL_EP_SPLIT_MIN, 1, n);
	part_len = ALIGN(DIV_ROUND_UP(x->bytes, parts), SZ_4K);
	parts = DIV_ROUND_UP(x->bytes, part_len);
	*next = (*next + parts) % nch;
	atomic_set(&x->pending, parts + 1);

	for (i = 0; i < parts; i++) {
		u32 off = i * part_len;

		if (!fl_xfer_dma_part(ep, use[i], x, host + off, local + off,
				      min(part_len, x->bytes - off), to_host))
			break;
		issued++;
	}
	for (i = 0; i < issued; i++)
		dma_async_issue_pending(use[i]->chan);

	if (!issued)
		return false;
	if (issued < parts) {
		unsigned long flags;

		dev_warn_ratelimited(ep->dev, "DMA: %u of %u parts issued\n", issued, parts);
		spin_lock_irqsave(&ep->xgen_lock, flags);
		fl_xfer_fail(ep, x);
		spin_unlock_irqrestore(&ep->xgen_lock, flags);
	}
	/* Drop the parts never issued and the submission bias */
	if (atomic_sub_and_test(parts - issued + 1, &x->pending))
		fl_xfer_finish(x);
	return true;
}

/**
 * fl_xfer_start() - move one frame between a slot and host memory
 * @ep: the endpoint (engine context).
 * @x: the transfer: slot, bytes set; finished when fl_xfer_done() says so.
 * @host: host bus address.
 * @to_host: endpoint -> host (else host -> endpoint).
 *
 * The path is chosen per frame: DMA at or above the crossover size of its
 * direction (crossover for writes to the host, rd_crossover for reads of
 * host memory) when the host accepted %FL_F_DMA and a channel of that
 * direction can take it, CPU copy otherwise. A CPU copy only starts here:
 * fl_xfer_pass() moves it in bounded chunks. Both finish @x the same way.
 */
void fl_xfer_start(struct fl_ep *ep, struct fl_xfer *x, u64 host, bool to_host)
{
	u64 off = (u64)x->slot * ep->slot_size;
	u32 nch = to_host ? ep->nwr : ep->nrd;
	u32 crossover = to_host ? ep->cfg.crossover : ep->cfg.rd_crossover;

	x->dma_err = false;
	x->hold_until = 0;
	x->done = false;
	x->leaked = false;
	x->cpu = false;
	x->cpu_off = 0;
	x->ts_start = ktime_get_ns();
	if (nch && (ep->accepted & FL_F_DMA) && x->bytes >= crossover &&
	    fl_xfer_dma(ep, x, host, ep->slots_dma + off, to_host)) {
		fl_stat_add(ep, FL_STAT_DMA, 1);
		return;
	}
	x->cpu = true;
	x->cpu_host = host;
	x->cpu_to_host = to_host;
	fl_stat_add(ep, FL_STAT_CPU, 1);
}

/* The engine must stop copying: host reset (ENABLE cleared), link down or unbind */
static bool fl_xfer_cancelled(struct fl_ep *ep)
{
	return kthread_should_stop() ||
	       !(le32_to_cpu(READ_ONCE(ep->ctrl->ctrl)) & FL_CTRL_ENABLE);
}

/*
 * Copy up to *budget bytes of @x's CPU copy, a window chunk at a time,
 * looking for a reset between chunks. Returns false when it must stop.
 */
static bool fl_xfer_cpu_step(struct fl_ep *ep, struct fl_xfer *x, u32 *budget)
{
	void *local = ep->slots_va + (u64)x->slot * ep->slot_size;

	while (x->cpu_off < x->bytes) {
		u32 n = min3(x->bytes - x->cpu_off, *budget, (u32)FL_EP_WIN_SIZE);
		int ret;

		if (!n || fl_xfer_cancelled(ep))
			return false;
		ret = fl_win_copy(ep, x->cpu_host + x->cpu_off, local + x->cpu_off, n,
				  x->cpu_to_host);
		if (ret == -ENOLINK || ret == -EIO) {
			/*
			 * The link or the controller went away, not this frame: never
			 * resume it (the host may reclaim its buffer meanwhile) nor fail
			 * it alone; the engine stops the queue (fl_ring_pass()).
			 */
			dev_warn_ratelimited(ep->dev, "CPU copy %s host %#llx cut at %u of %u bytes: %d\n",
					     x->cpu_to_host ? "to" : "from", x->cpu_host,
					     x->cpu_off, x->bytes, ret);
			ep->link_cut = true;
			return false;
		}
		if (ret) {
			dev_err_ratelimited(ep->dev, "CPU copy %s host %#llx+%u failed: %d\n",
					    x->cpu_to_host ? "to" : "from", x->cpu_host,
					    x->bytes, ret);
			x->dma_err = true;
			break;
		}
		x->cpu_off += n;
		*budget -= n;
	}
	x->ts_done = ktime_get_ns();
	/* Pairs with fl_xfer_done(), as in fl_xfer_finish() */
	smp_store_release(&x->done, true);
	return true;
}

/* CPU copies of one ring, oldest first; false when the budget or a reset stopped them */
static bool fl_xfer_cpu_ring(struct fl_ep *ep, struct fl_xfer *xs, u32 from, u32 to,
			     u32 *budget)
{
	for (; from != to; from++) {
		struct fl_xfer *x = &xs[fl_ring_slot(from, ep->entries)];

		if (x->slot == FL_EP_NO_SLOT || !x->cpu || fl_xfer_done(x))
			continue;
		if (!fl_xfer_cpu_step(ep, x, budget))
			return false;
	}
	return true;
}

/**
 * fl_xfer_pass() - the transfer work of one engine pass
 * @ep: the endpoint (engine context, state READY).
 *
 * Restarts channels an abort left with queued descriptors, then moves CPU
 * copies in order, at most cfg.cpu_pass_bytes per pass and checking for a
 * reset or link down between window chunks, so the engine answers the host
 * within one chunk however large the frames are.
 *
 * Return: true when anything was done.
 */
bool fl_xfer_pass(struct fl_ep *ep)
{
	u32 budget = max_t(u32, ep->cfg.cpu_pass_bytes, PAGE_SIZE);
	u32 start = budget;
	struct fl_dma_chan *dc;
	bool work = false;
	u32 i;

	for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++) {
		if (!atomic_xchg(&dc->reissue, 0) || dc->stuck)
			continue;
		dma_async_issue_pending(dc->chan);
		work = true;
	}
	if (fl_xfer_cpu_ring(ep, ep->txx, ep->tx_done, ep->tx_cons, &budget))
		fl_xfer_cpu_ring(ep, ep->rxx, ep->rx_done, ep->rx_cons, &budget);
	return work || budget != start;
}
