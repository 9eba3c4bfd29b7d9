// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: moving frame data, by DMA or by CPU copy.
 *
 * One DMA backend per binding, the first that finds channels at bind
 * (configfs xfer_backend, "auto" by default: dmaengine, then NVIDIA's eDMA
 * library): xfer-dmaengine.c (dw-edma and any dmaengine driver of the
 * controller), xfer-nvedma.c (NVIDIA's JetPack library). Without one every
 * frame is a CPU copy (xfer-cpu.c). This file holds what the backends share:
 * the choice of path per frame, the split of a frame across the channels of
 * its direction, and the transfer state the callbacks finish.
 *
 * A large frame is split across the channels of its direction and finishes
 * when every part has; several frames are in flight; callbacks only count
 * parts down and kick the engine. Each issued part has a callback context
 * (struct fl_dma_ctx) tagged with the transfer generation (fl_ep.xgen); a
 * teardown bumps the generation first, so a late callback never touches a
 * transfer reused since, and a context is reused only once its callback ran
 * or its channel was proven idle (the backend's quiesce).
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/kmemleak.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "epf.h"
#include "trace.h"

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

/**
 * fl_dma_chan_at() - every held channel, reads first
 * @ep: the endpoint.
 * @i: index: for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++).
 *
 * Return: the channel, or NULL past the last one.
 */
struct fl_dma_chan *fl_dma_chan_at(struct fl_ep *ep, u32 i)
{
	if (i < ep->nrd)
		return &ep->rd[i];
	i -= ep->nrd;
	return i < ep->nwr ? &ep->wr[i] : NULL;
}

/**
 * fl_dma_ctx_alloc() - callback contexts for a channel being taken (bind)
 * @ep: the endpoint.
 * @dc: the channel: one context per ring entry, it never holds more parts.
 *
 * Return: 0 or -ENOMEM.
 */
int fl_dma_ctx_alloc(struct fl_ep *ep, struct fl_dma_chan *dc)
{
	dc->ctx = kcalloc(ep->entries, sizeof(*dc->ctx), GFP_KERNEL);
	if (!dc->ctx)
		return -ENOMEM;
	dc->nctx = ep->entries;
	dc->ctx_next = 0;
	dc->stuck = false;
	return 0;
}

/**
 * fl_dma_ctx_release() - free the contexts of a channel given back
 * @dc: the channel, proven idle.
 */
void fl_dma_ctx_release(struct fl_dma_chan *dc)
{
	kfree(dc->ctx);
	dc->ctx = NULL;
	dc->nctx = 0;
}

/**
 * fl_dma_ctx_get() - the next callback context of a channel, if free
 * @dc: the channel.
 *
 * Return: the context, or NULL when the channel cannot take a part now.
 */
struct fl_dma_ctx *fl_dma_ctx_get(struct fl_dma_chan *dc)
{
	struct fl_dma_ctx *c;

	if (dc->stuck || !dc->nctx)
		return NULL;
	c = &dc->ctx[dc->ctx_next % dc->nctx];
	/* Pairs with the callback's unlock: a context is free once it said so */
	return READ_ONCE(c->busy) ? NULL : c;
}

/**
 * fl_dma_ctx_arm() - mark a context busy for a part about to be submitted
 * @ep: the endpoint.
 * @c: the context from fl_dma_ctx_get().
 * @dc: its channel.
 * @x: the transfer the part belongs to.
 *
 * Before the part exists for the engine: its callback may come at once.
 */
void fl_dma_ctx_arm(struct fl_ep *ep, struct fl_dma_ctx *c, struct fl_dma_chan *dc,
		    struct fl_xfer *x)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->xgen_lock, flags);
	c->x = x;
	c->dc = dc;
	c->gen = ep->xgen;
	c->busy = true;
	spin_unlock_irqrestore(&ep->xgen_lock, flags);
}

/**
 * fl_dma_ctx_disarm() - the part of an armed context was never submitted
 * @ep: the endpoint.
 * @c: the context.
 */
void fl_dma_ctx_disarm(struct fl_ep *ep, struct fl_dma_ctx *c)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->xgen_lock, flags);
	c->busy = false;
	spin_unlock_irqrestore(&ep->xgen_lock, flags);
}

/**
 * fl_dma_ctx_free_all() - a channel is proven idle: every context is free
 * @ep: the endpoint.
 * @dc: the channel; no callback of it can run any more.
 */
void fl_dma_ctx_free_all(struct fl_ep *ep, struct fl_dma_chan *dc)
{
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&ep->xgen_lock, flags);
	for (i = 0; i < dc->nctx; i++)
		dc->ctx[i].busy = false;
	spin_unlock_irqrestore(&ep->xgen_lock, flags);
}

/**
 * fl_dma_ctx_leak() - a channel did not stop in time: keep what it may touch
 * @ep: the endpoint.
 * @dc: the channel; marked stuck, not used until proven idle.
 *
 * The transfers of its busy contexts are marked leaked: their slots are
 * never given back (%FL_STAT_DMA_LEAKED counts them).
 *
 * Return: the number of transfers leaked.
 */
u32 fl_dma_ctx_leak(struct fl_ep *ep, struct fl_dma_chan *dc)
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
	return n;
}

static void fl_xfer_finish(struct fl_xfer *x)
{
	x->ts_done = ktime_get_ns();
	fl_xfer_trace_done(x);
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

/**
 * fl_xfer_part_done() - a backend's callback: one part of a transfer ended
 * @c: the part's context.
 * @failed: the part did not move its data.
 *
 * Any context. Under xgen_lock, so a teardown that bumped the generation is
 * never overtaken: a callback of an older generation leaves the transfer
 * alone. The last part finishes the transfer and kicks the engine.
 *
 * Return: false when the callback was stale (ignored).
 */
bool fl_xfer_part_done(struct fl_dma_ctx *c, bool failed)
{
	struct fl_xfer *x = c->x;
	struct fl_ep *ep = x->ep;
	unsigned long flags;
	bool stale, last = false;
	u32 gen;

	spin_lock_irqsave(&ep->xgen_lock, flags);
	gen = c->gen;
	stale = gen != ep->xgen;
	c->busy = false;
	if (!stale) {
		if (failed)
			fl_xfer_fail(ep, x);
		last = atomic_dec_and_test(&x->pending);
		if (last) {
			/* Still under the lock: a teardown reuses @x only after its bump */
			x->ts_done = ktime_get_ns();
			fl_xfer_trace_done(x);
			/* Pairs with fl_xfer_done(): ts_done and dma_err before done */
			smp_store_release(&x->done, true);
		}
	}
	spin_unlock_irqrestore(&ep->xgen_lock, flags);

	if (stale) {
		int n = atomic_inc_return(&ep->dma_stale);

		dev_info_ratelimited(ep->dev, "DMA: late callback of generation %u ignored (%d so far)\n",
				     gen, n);
		return false;
	}
	if (failed || last)
		fl_engine_kick(ep);
	return true;
}

/*
 * Issue @x as up to one part per usable channel of its direction. Returns
 * false when nothing could be issued (the caller copies by CPU instead).
 */
static bool fl_xfer_dma(struct fl_ep *ep, struct fl_xfer *x, u64 host, dma_addr_t local,
			bool to_host)
{
	const struct fl_xfer_ops *ops = ep->xops;
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

		if (!ops->part(ep, use[i], x, host + off, local + off,
			       min(part_len, x->bytes - off), to_host))
			break;
		issued++;
	}
	for (i = 0; ops->flush && i < issued; i++)
		ops->flush(use[i]);

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
 * host memory; configured, or measured at enable: xover.c) when the host
 * accepted %FL_F_DMA and a channel of that direction can take it, CPU copy
 * otherwise. A CPU copy only starts here:
 * fl_xfer_pass() moves it in bounded chunks. Both finish @x the same way.
 */
void fl_xfer_start(struct fl_ep *ep, struct fl_xfer *x, u64 host, bool to_host)
{
	u32 nch = to_host ? ep->nwr : ep->nrd;
	u32 crossover = ep->xo[to_host ? FL_XO_WR : FL_XO_RD].bytes;

	x->dma_err = false;
	x->hold_until = 0;
	x->done = false;
	x->leaked = false;
	x->cpu = false;
	x->cpu_off = 0;
	x->ts_start = ktime_get_ns();
	if (nch && ep->xops && (ep->accepted & FL_F_DMA) && x->bytes >= crossover &&
	    fl_xfer_dma(ep, x, host, fl_slot_dma(ep, x->slot), to_host)) {
		fl_stat_add(ep, FL_STAT_DMA, 1);
		trace_fl_ep_xfer_start(ep->id, to_host, x->slot, x->bytes, x->cookie, false, false);
		return;
	}
	/* a V4L2 buffer imported without a kernel mapping: only DMA can fill it */
	if (!fl_slot_va(ep, x->slot)) {
		dev_warn_ratelimited(ep->dev, "buffer %u: no DMA channel and no CPU mapping: frame failed\n",
				     x->slot);
		x->dma_err = true;
		x->ts_done = ktime_get_ns();
		/* Pairs with fl_xfer_done(), as in fl_xfer_finish() */
		smp_store_release(&x->done, true);
		return;
	}
	x->cpu = true;
	x->cpu_host = host;
	x->cpu_to_host = to_host;
	fl_stat_add(ep, FL_STAT_CPU, 1);
	trace_fl_ep_xfer_start(ep->id, to_host, x->slot, x->bytes, x->cookie, true, false);
}

/**
 * fl_xfer_trace_done() - trace the end of a transfer (DMA callback or CPU copy)
 * @x: the transfer, ts_done and dma_err set, done not yet.
 */
void fl_xfer_trace_done(struct fl_xfer *x)
{
	struct fl_ep *ep = x->ep;
	/* rxx[] holds the frames towards the host (the host's rx ring) */
	bool to_host = x >= ep->rxx && x < ep->rxx + ep->entries;

	/* The crossover measurement's transfers (xover.c) are no frames */
	if (x->slot == FL_EP_NO_SLOT)
		return;
	trace_fl_ep_xfer_done(ep->id, to_host, x->slot, x->bytes, x->cookie, x->cpu,
			      READ_ONCE(x->dma_err));
}

/* The backends "auto" tries, in order */
static const struct fl_xfer_ops *const fl_xfer_backends[] = {
	&fl_xfer_dmaengine,
	&fl_xfer_nvedma,
};

/* Take channels from the backend configfs xfer_backend names, or the first that has some */
static void fl_xfer_pick(struct fl_ep *ep)
{
	const struct fl_xfer_ops *ops;
	u32 i;
	int ret;

	ep->xops = NULL;
	ep->nrd = 0;
	ep->nwr = 0;
	if (!ep->cfg.dma_channels)
		return;
	for (i = 0; i < ARRAY_SIZE(fl_xfer_backends); i++) {
		ops = fl_xfer_backends[i];
		if (ep->cfg.xfer_backend != FL_EP_XFER_AUTO && ep->cfg.xfer_backend != ops->id)
			continue;
		ret = ops->init(ep);
		if (!ret) {
			ep->xops = ops;
			return;
		}
		if (ret != -ENODEV)
			dev_err(ep->dev, "DMA: %s backend failed (%d): trying the next\n",
				ops->name, ret);
		ep->nrd = 0;
		ep->nwr = 0;
	}
}

/**
 * fl_xfer_backend_name() - what moves this binding's DMA frames
 * @ep: the endpoint.
 *
 * Return: "dmaengine", "nvidia-edma" or "cpu".
 */
const char *fl_xfer_backend_name(struct fl_ep *ep)
{
	return ep->xops ? ep->xops->name : "cpu";
}

/**
 * fl_xfer_backend_id() - FL_XFER_* of this binding
 * @ep: the endpoint.
 *
 * Return: the backend's id, %FL_XFER_CPU without one.
 */
u32 fl_xfer_backend_id(struct fl_ep *ep)
{
	return ep->xops ? ep->xops->id : FL_XFER_CPU;
}

/**
 * fl_xfer_init_hw() - take DMA channels and the outbound window (epc_init)
 * @ep: the endpoint.
 *
 * Fewer channels than configured (or none) is not an error: frames then go
 * by CPU copy. Logs the backend and its channels.
 *
 * Return: 0, or -ENODEV/-ENOMEM when no outbound window is available.
 */
int fl_xfer_init_hw(struct fl_ep *ep)
{
	struct pci_epc *epc = ep->epc;
	u32 want = ep->cfg.dma_channels;

	fl_xfer_pick(ep);
	ep->rd_next = 0;
	ep->wr_next = 0;
	fl_xover_reset(ep, true);
	dev_info(ep->dev, "transfers: %s, %u read + %u write DMA channels\n",
		 fl_xfer_backend_name(ep), ep->nrd, ep->nwr);
	if (want && (ep->nrd < want || ep->nwr < want))
		dev_info(ep->dev, "DMA: %u read and %u write channels of %u wanted\n",
			 ep->nrd, ep->nwr, want);

	if (!epc->mem) {
		dev_err(ep->dev, "controller has no outbound window\n");
		goto put_channels;
	}
	ep->win_page = max_t(size_t, epc->mem->window.page_size, ep->features->align);
	if (!ep->win_page)
		ep->win_page = PAGE_SIZE;
	ep->win_va = pci_epc_mem_alloc_addr(epc, &ep->win_phys, FL_EP_WIN_SIZE);
	if (!ep->win_va) {
		dev_err(ep->dev, "no outbound window of %u bytes\n", FL_EP_WIN_SIZE);
		goto put_channels;
	}
	return 0;

put_channels:
	if (ep->xops)
		ep->xops->exit(ep);
	ep->xops = NULL;
	return epc->mem ? -ENOMEM : -ENODEV;
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
	if (ep->xops)
		ep->xops->exit(ep);
	ep->xops = NULL;
	if (ep->win_va) {
		pci_epc_mem_free_addr(ep->epc, ep->win_phys, ep->win_va, FL_EP_WIN_SIZE);
		ep->win_va = NULL;
	}
}

/**
 * fl_xfer_quiesce() - end every DMA transfer before its state is reused
 * @ep: the endpoint (engine context, or engine stopped).
 * @timeout_ms: how long to wait for stopped transfers.
 *
 * Bumps the generation first (a late callback is then ignored), then the
 * backend stops its channels and waits, bounded. A channel that does not
 * stop in time is marked stuck and its transfers leaked (fl_xfer.leaked,
 * %FL_STAT_DMA_LEAKED): neither their slots nor the channel are used again
 * until it is proven idle.
 *
 * Return: true when every channel is proven idle.
 */
bool fl_xfer_quiesce(struct fl_ep *ep, unsigned int timeout_ms)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->xgen_lock, flags);
	ep->xgen++;
	spin_unlock_irqrestore(&ep->xgen_lock, flags);
	return ep->xops ? ep->xops->quiesce(ep, timeout_ms) : true;
}

/**
 * fl_xfer_stuck() - is DMA of an earlier generation possibly still running?
 * @ep: the endpoint (engine context, or engine stopped).
 *
 * A stuck channel found idle now is used again. The endpoint reports RESET
 * only once this is false: the host may then reuse every buffer it had
 * posted.
 *
 * Return: true while a channel is stuck.
 */
bool fl_xfer_stuck(struct fl_ep *ep)
{
	return ep->xops && ep->xops->stuck(ep);
}

/**
 * fl_xfer_resume() - make the backend ready again before the queue is enabled
 * @ep: the endpoint (engine context, state RESET, nothing in flight).
 */
void fl_xfer_resume(struct fl_ep *ep)
{
	if (ep->xops && ep->xops->resume)
		ep->xops->resume(ep);
}

/**
 * fl_xfer_pass() - the transfer work of one engine pass
 * @ep: the endpoint (engine context, state READY).
 *
 * Lets the backend restart channels an abort left with queued descriptors,
 * then moves CPU copies in order (xfer-cpu.c).
 *
 * Return: true when anything was done.
 */
bool fl_xfer_pass(struct fl_ep *ep)
{
	bool work = ep->xops && ep->xops->pass && ep->xops->pass(ep);

	return fl_xfer_cpu_pass(ep) || work;
}
