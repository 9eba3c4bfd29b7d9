// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the dmaengine DMA backend (dw-edma on a mainline Orin with
 * the tegra194 eDMA series, pci-epc-loop's engine on tegra234-edma/generic).
 *
 * Private DMA_SLAVE channels of the controller's own engine, chosen by a
 * filter on the controller's parent device and the channel's direction, as
 * pci-epf-test. Read channels pull frames from host memory (DMA_DEV_TO_MEM,
 * src_addr = the host bus address), write channels push them
 * (DMA_MEM_TO_DEV, dst_addr).
 *
 * Lifetime on dw-edma (drivers/dma/dw-edma/dw-edma-core.c): a descriptor's
 * callback parameter is a per-channel struct fl_dma_ctx tagged with the
 * transfer generation (fl_ep.xgen); a context is reused only after its
 * callback ran or its channel was proven idle (newest cookie complete, then
 * dmaengine_synchronize()). Teardowns bump the generation, terminate every
 * channel and wait, bounded; what does not stop in time is leaked on
 * purpose. An aborted descriptor reports DMA_TRANS_ABORTED (FL_ST_DMA for
 * its frame) and leaves the channel idle with the queued descriptors
 * waiting: the engine issues them again.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kmemleak.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "epf.h"

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

		if (fl_dma_ctx_alloc(ep, dc))
			break;
		dc->chan = dma_request_channel(mask, fl_dma_filter_fn, &f);
		if (!dc->chan) {
			fl_dma_ctx_release(dc);
			break;
		}
		dc->last_cookie = 0;
		atomic_set(&dc->reissue, 0);
		atomic_set(&dc->orphan, 0);
	}
	return n;
}

/*
 * Channels leaked at unbind (issue 27 item 3.3). A watcher thread looks at
 * each every FL_DMA_ORPHAN_POLL_MS and gives it back once its newest cookie
 * is complete and its callbacks are over (dmaengine_synchronize()); it holds
 * a reference on this module while any is listed, so rmmod fails until then
 * and no callback can run freed code. dw-edma drops the descriptors of a
 * channel asked to STOP without callbacks (dw_edma_done_interrupt(),
 * dw_edma_abort_interrupt()), so idle is found by polling, not told.
 */
#define FL_DMA_ORPHAN_POLL_MS	100

static bool fl_dma_chan_idle(struct fl_dma_chan *dc);

static LIST_HEAD(fl_dma_orphans);
static struct task_struct *fl_dma_watcher;
/* protects fl_dma_orphans and fl_dma_watcher */
static DEFINE_MUTEX(fl_dma_orphans_lock);

/* Give back the idle ones; fl_dma_orphans_lock held. Return: none left */
static bool fl_dma_orphans_reap(void)
{
	struct fl_dma_chan *dc, *tmp;

	list_for_each_entry_safe(dc, tmp, &fl_dma_orphans, orphan_node) {
		if (!fl_dma_chan_idle(dc))
			continue;
		list_del(&dc->orphan_node);
		dmaengine_synchronize(dc->chan);
		pr_info("DMA: %s stopped after its endpoint went away: given back\n",
			dma_chan_name(dc->chan));
		dma_release_channel(dc->chan);
		fl_dma_ctx_release(dc);
		dc->chan = NULL;
	}
	return list_empty(&fl_dma_orphans);
}

static int fl_dma_orphan_watch(void *unused)
{
	bool done;

	do {
		msleep(FL_DMA_ORPHAN_POLL_MS);
		mutex_lock(&fl_dma_orphans_lock);
		done = fl_dma_orphans_reap();
		if (done)
			fl_dma_watcher = NULL;
		mutex_unlock(&fl_dma_orphans_lock);
	} while (!done);
	/* never returns into this module's text */
	module_put_and_kthread_exit(0);
}

/* @dc is stuck at unbind: listed for the watcher, started with a module reference */
static void fl_dma_orphan(struct fl_dma_chan *dc)
{
	struct task_struct *t;

	/* late callbacks touch nothing of the endpoint (fl_dmaengine_done()) */
	atomic_set(&dc->orphan, 1);
	mutex_lock(&fl_dma_orphans_lock);
	list_add_tail(&dc->orphan_node, &fl_dma_orphans);
	/* no watcher while the module goes away: its exit waits instead */
	if (!fl_dma_watcher && try_module_get(THIS_MODULE)) {
		t = kthread_run(fl_dma_orphan_watch, NULL, "fl-dma-orphans");
		if (IS_ERR(t))
			module_put(THIS_MODULE);
		else
			fl_dma_watcher = t;
	}
	mutex_unlock(&fl_dma_orphans_lock);
}

/**
 * fl_dmaengine_orphans_free() - module exit: no leaked channel may outlive the module
 *
 * With a watcher running the module could not be unloaded, so what is listed
 * here was leaked by an unbind during this exit: waited for (bounded, as the
 * unbind's own drain), given back if idle, else left to the engine with an
 * error (its callbacks would run freed code: unload nothing while it runs).
 */
void fl_dmaengine_orphans_free(void)
{
	unsigned int waited = 0;
	struct fl_dma_chan *dc;

	mutex_lock(&fl_dma_orphans_lock);
	while (!fl_dma_orphans_reap() && waited < 10000) {
		mutex_unlock(&fl_dma_orphans_lock);
		msleep(FL_DMA_ORPHAN_POLL_MS);
		waited += FL_DMA_ORPHAN_POLL_MS;
		mutex_lock(&fl_dma_orphans_lock);
	}
	list_for_each_entry(dc, &fl_dma_orphans, orphan_node)
		pr_err("DMA: %s still running at unload: left to its engine\n",
		       dma_chan_name(dc->chan));
	mutex_unlock(&fl_dma_orphans_lock);
}

/*
 * Give channels back. One still stuck (its DMA never proven over) is kept
 * with its contexts: releasing it would let a new user reprogram a channel
 * that may still write our slots and the host's buffers. It is handed to the
 * orphan watcher (fl_dma_orphan()), which gives it back once it is idle and
 * keeps this module loaded until then.
 */
static void fl_dma_release(struct fl_ep *ep, struct fl_dma_chan *dcs, u32 *n)
{
	while (*n) {
		struct fl_dma_chan *dc = &dcs[--(*n)];

		if (dc->stuck) {
			dev_err(ep->dev, "DMA: %s never stopped: slots and binding leaked; the module stays loaded until it stops\n",
				dma_chan_name(dc->chan));
			ep->dma_leaked++;
			kmemleak_not_leak(dc->ctx);
			/* the watcher's from here: @dc stays as it is */
			fl_dma_orphan(dc);
			continue;
		}
		dma_release_channel(dc->chan);
		fl_dma_ctx_release(dc);
		dc->chan = NULL;
	}
}

static int fl_dmaengine_init(struct fl_ep *ep)
{
	u32 want = ep->cfg.dma_channels;

	ep->nrd = fl_dma_request(ep, ep->rd, want, DMA_DEV_TO_MEM);
	ep->nwr = fl_dma_request(ep, ep->wr, want, DMA_MEM_TO_DEV);
	if (ep->nrd || ep->nwr)
		return 0;
	return -ENODEV;
}

static void fl_dmaengine_exit(struct fl_ep *ep)
{
	fl_dma_release(ep, ep->wr, &ep->nwr);
	fl_dma_release(ep, ep->rd, &ep->nrd);
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
	dmaengine_synchronize(dc->chan);
	fl_dma_ctx_free_all(ep, dc);
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
	u32 n = fl_dma_ctx_leak(ep, dc);

	dev_err_ratelimited(ep->dev,
			    "DMA: %s not stopped %u ms after terminate: %u transfers leaked, their slots are never reused\n",
			    dma_chan_name(dc->chan), ms, n);
}

/*
 * dw-edma gives fewer guarantees than dmaengine_terminate_sync() suggests:
 * on a busy channel terminate only requests a STOP, the running batch still
 * moves its data, and the running and queued descriptors are then dropped
 * without callbacks; synchronize gives up after 5 s; an abort leaves the
 * queued descriptors to start at the next issue_pending. So (the generation
 * already bumped): terminate every channel (no stale descriptor survives to
 * a later issue_pending), wait (bounded) until each channel's newest cookie
 * is complete, then synchronize. A channel that does not get there in time
 * is marked stuck and its transfers leaked.
 */
static bool fl_dmaengine_quiesce(struct fl_ep *ep, unsigned int timeout_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	struct fl_dma_chan *dc;
	bool idle;
	u32 i;

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

/* A stuck channel found idle now is synchronized and used again */
static bool fl_dmaengine_stuck(struct fl_ep *ep)
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

/* Descriptor callback; any context (dw-edma: the virt-dma tasklet) */
static void fl_dmaengine_done(void *param, const struct dmaengine_result *res)
{
	struct fl_dma_ctx *c = param;
	bool aborted = res && res->result != DMA_TRANS_NOERROR;
	struct fl_dma_chan *dc = c->dc;
	struct fl_ep *ep;

	/* a channel leaked at unbind: the endpoint's engine and transfers are gone */
	if (atomic_read(&dc->orphan))
		return;
	ep = c->x->ep;
	if (!fl_xfer_part_done(c, aborted) || !aborted)
		return;
	/* dw-edma starts what was queued behind an abort only at the next issue_pending */
	atomic_set(&dc->reissue, 1);
	dev_err_ratelimited(ep->dev, "DMA: %s transfer failed: result %d, residue %u\n",
			    dma_chan_name(dc->chan), res->result, res->residue);
	fl_engine_kick(ep);
}

static bool fl_dmaengine_part(struct fl_ep *ep, struct fl_dma_chan *dc, struct fl_xfer *x,
			      u64 host, dma_addr_t local, u32 len, bool to_host)
{
	enum dma_transfer_direction dir = to_host ? DMA_MEM_TO_DEV : DMA_DEV_TO_MEM;
	struct dma_slave_config sc = { .direction = dir };
	struct dma_async_tx_descriptor *tx;
	struct fl_dma_ctx *c = fl_dma_ctx_get(dc);
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
	fl_dma_ctx_arm(ep, c, dc, x);
	tx->callback_result = fl_dmaengine_done;
	tx->callback_param = c;
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie)) {
		fl_dma_ctx_disarm(ep, c);
		return false;
	}
	dc->ctx_next++;
	dc->last_cookie = cookie;
	return true;
}

static void fl_dmaengine_flush(struct fl_dma_chan *dc)
{
	dma_async_issue_pending(dc->chan);
}

/* Restart channels an abort left with queued descriptors */
static bool fl_dmaengine_pass(struct fl_ep *ep)
{
	struct fl_dma_chan *dc;
	bool work = false;
	u32 i;

	for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++) {
		if (!atomic_xchg(&dc->reissue, 0) || dc->stuck)
			continue;
		dma_async_issue_pending(dc->chan);
		work = true;
	}
	return work;
}

const struct fl_xfer_ops fl_xfer_dmaengine = {
	.name = "dmaengine",
	.id = FL_XFER_DMAENGINE,
	.init = fl_dmaengine_init,
	.exit = fl_dmaengine_exit,
	.part = fl_dmaengine_part,
	.flush = fl_dmaengine_flush,
	.quiesce = fl_dmaengine_quiesce,
	.stuck = fl_dmaengine_stuck,
	.pass = fl_dmaengine_pass,
};
