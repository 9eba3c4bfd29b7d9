// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: a dmaengine provider shaped like dw-edma.
 *
 * DMA_SLAVE only (no DMA_MEMCPY), N read channels (DMA_DEV_TO_MEM: host
 * memory to local memory) and N write channels (DMA_MEM_TO_DEV: local to
 * host). The remote (PCI) address comes from dma_slave_config
 * (src_addr for reads, dst_addr for writes) and advances across the scatter
 * list, as in dw-edma. PCI addresses are the host's DMA addresses, which
 * are host physical addresses here.
 *
 * Each channel has one work item on an unbound workqueue: descriptors run
 * in submission order per channel and in parallel across channels.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dmaengine.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "loop.h"

/* Bytes copied between checks for abort, faults and link down */
#define LOOP_DMA_CHUNK		SZ_64K
/* Longest wait of a stalled channel before it re-checks its state */
#define LOOP_STALL_POLL_MS	100

static struct loop_dma_chan *to_loop_chan(struct dma_chan *chan)
{
	return container_of(chan, struct loop_dma_chan, chan);
}

static struct loop_dma_desc *to_loop_desc(struct dma_async_tx_descriptor *tx)
{
	return container_of(tx, struct loop_dma_desc, tx);
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
	unsigned int i;
	u64 remote;

	if (dir != c->dir || !sg_len)
		return NULL;

	spin_lock_irqsave(&c->lock, lflags);
	remote = dir == DMA_DEV_TO_MEM ? c->cfg.src_addr : c->cfg.dst_addr;
	spin_unlock_irqrestore(&c->lock, lflags);

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
	spin_unlock_irqrestore(&c->lock, flags);
	return 0;
}

static void loop_dma_issue_pending(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&c->lock, flags);
	list_splice_tail_init(&c->submitted, &c->issued);
	kick = !list_empty(&c->issued);
	spin_unlock_irqrestore(&c->lock, flags);

	if (kick)
		queue_work(c->loop->dma_wq, &c->work);
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

static enum dma_status loop_dma_tx_status(struct dma_chan *chan,
					  dma_cookie_t cookie,
					  struct dma_tx_state *state)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	struct loop_dma_desc *d;
	enum dma_status status;
	unsigned long flags;
	u32 residue = 0;

	spin_lock_irqsave(&c->lock, flags);
	status = dma_async_is_complete(cookie, chan->completed_cookie,
				       chan->cookie);
	if (status == DMA_COMPLETE) {
		if (loop_dma_cookie_failed(c, cookie))
			status = DMA_ERROR;
	} else if (c->active && c->active->tx.cookie == cookie) {
		residue = c->active->total - c->active->done;
	} else {
		list_for_each_entry(d, &c->issued, node)
			if (d->tx.cookie == cookie)
				residue = d->total;
		list_for_each_entry(d, &c->submitted, node)
			if (d->tx.cookie == cookie)
				residue = d->total;
	}
	dma_set_tx_state(state, chan->completed_cookie, chan->cookie, residue);
	spin_unlock_irqrestore(&c->lock, flags);
	return status;
}

static int loop_dma_terminate_all(struct dma_chan *chan)
{
	struct loop_dma_chan *c = to_loop_chan(chan);
	struct loop_dma_desc *d, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);

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

static void loop_dma_synchronize(struct dma_chan *chan)
{
	flush_work(&to_loop_chan(chan)->work);
}

static void loop_dma_caps(struct dma_chan *chan, struct dma_slave_caps *caps)
{
	caps->directions = BIT(to_loop_chan(chan)->dir);
}

static int loop_dma_alloc_chan(struct dma_chan *chan)
{
	return 0;
}

static void loop_dma_free_chan(struct dma_chan *chan)
{
	loop_dma_terminate_all(chan);
	loop_dma_synchronize(chan);
}

static bool loop_dma_stalled(struct loop_dma_chan *c)
{
	struct pci_epc_loop *loop = c->loop;

	return READ_ONCE(loop->stall_mask) & BIT(c->idx) && !READ_ONCE(c->abort) &&
	       loop_ep_up(loop);
}

/*
 * Move one descriptor. Returns the dmaengine result; *aborted is set when
 * terminate_all dropped it (no callback then).
 */
static enum dmaengine_tx_result loop_dma_run(struct loop_dma_chan *c,
					     struct loop_dma_desc *d,
					     bool *aborted)
{
	struct pci_epc_loop *loop = c->loop;
	enum dmaengine_tx_result fail = d->dir == DMA_DEV_TO_MEM ?
		DMA_TRANS_READ_FAILED : DMA_TRANS_WRITE_FAILED;
	u64 remote = d->remote;
	unsigned int i;
	bool first = true;

	if (atomic_dec_if_positive(&loop->fail_dma) >= 0)
		return fail;

	for (i = 0; i < d->nsegs; i++) {
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
			return fail;
		}

		while (left) {
			size_t n = min_t(size_t, left, LOOP_DMA_CHUNK);
			unsigned long flags;

			/* A stalled channel makes no progress; bounded poll */
			while (loop_dma_stalled(c))
				wait_event_timeout(loop->stall_wq,
						   !loop_dma_stalled(c),
						   msecs_to_jiffies(LOOP_STALL_POLL_MS));
			if (READ_ONCE(c->abort)) {
				*aborted = true;
				return DMA_TRANS_ABORTED;
			}
			if (!loop_ep_up(loop))
				return fail;

			loop_link_xfer_delay(loop, n, first);
			first = false;
			if (d->dir == DMA_DEV_TO_MEM)
				memcpy(lva, rva, n);
			else
				memcpy(rva, lva, n);

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
	return DMA_TRANS_NOERROR;
}

static void loop_dma_complete(struct loop_dma_chan *c, struct loop_dma_desc *d,
			      enum dmaengine_tx_result result)
{
	struct dmaengine_result res = {
		.result = result,
		.residue = d->total - d->done,
	};
	struct dma_async_tx_descriptor *tx = &d->tx;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	if (result != DMA_TRANS_NOERROR) {
		c->err_cookie[c->err_pos] = tx->cookie;
		c->err_pos = (c->err_pos + 1) % LOOP_ERR_COOKIES;
	}
	/* Cookies complete in order on a channel */
	if (dma_async_is_complete(tx->cookie, c->chan.completed_cookie,
				  c->chan.cookie) != DMA_COMPLETE)
		c->chan.completed_cookie = tx->cookie;
	c->active = NULL;
	spin_unlock_irqrestore(&c->lock, flags);

	atomic64_inc(&c->loop->stats.dma_xfers);
	if (result != DMA_TRANS_NOERROR)
		atomic64_inc(&c->loop->stats.dma_errors);

	/* Called without the channel lock: callbacks may submit more */
	if (tx->callback_result)
		tx->callback_result(tx->callback_param, &res);
	else if (tx->callback)
		tx->callback(tx->callback_param);
	kfree(d);
}

static void loop_dma_work(struct work_struct *work)
{
	struct loop_dma_chan *c = container_of(work, struct loop_dma_chan,
					       work);
	struct loop_dma_desc *d;
	enum dmaengine_tx_result result;
	unsigned long flags;
	bool aborted;

	for (;;) {
		spin_lock_irqsave(&c->lock, flags);
		d = list_first_entry_or_null(&c->issued, struct loop_dma_desc,
					     node);
		if (d) {
			list_del_init(&d->node);
			c->active = d;
			c->abort = false;
		}
		spin_unlock_irqrestore(&c->lock, flags);
		if (!d)
			break;

		aborted = false;
		result = loop_dma_run(c, d, &aborted);
		if (aborted) {
			spin_lock_irqsave(&c->lock, flags);
			c->active = NULL;
			c->abort = false;
			spin_unlock_irqrestore(&c->lock, flags);
			kfree(d);
			continue;
		}
		loop_dma_complete(c, d, result);
	}
}

/**
 * loop_dma_link_changed() - wake channels so they notice link changes
 * @loop: the loopback
 *
 * A channel checks the link between chunks; transfers running or queued
 * while the endpoint has no link fail with a read/write error.
 */
void loop_dma_link_changed(struct pci_epc_loop *loop)
{
	wake_up_all(&loop->stall_wq);
}

/**
 * loop_dma_init() - register the dmaengine provider
 * @loop: the loopback
 *
 * Return: 0 or a negative errno.
 */
int loop_dma_init(struct pci_epc_loop *loop)
{
	struct dma_device *dd = &loop->dma;
	unsigned int i;
	int ret;

	if (!loop->nchans_rd && !loop->nchans_wr)
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
	dd->directions = BIT(DMA_DEV_TO_MEM) | BIT(DMA_MEM_TO_DEV);
	dd->src_addr_widths = BIT(DMA_SLAVE_BUSWIDTH_4_BYTES);
	dd->dst_addr_widths = BIT(DMA_SLAVE_BUSWIDTH_4_BYTES);
	dd->residue_granularity = DMA_RESIDUE_GRANULARITY_BURST;
	dd->device_alloc_chan_resources = loop_dma_alloc_chan;
	dd->device_free_chan_resources = loop_dma_free_chan;
	dd->device_caps = loop_dma_caps;
	dd->device_config = loop_dma_config;
	dd->device_prep_slave_sg = loop_dma_prep_slave_sg;
	dd->device_issue_pending = loop_dma_issue_pending;
	dd->device_tx_status = loop_dma_tx_status;
	dd->device_terminate_all = loop_dma_terminate_all;
	dd->device_synchronize = loop_dma_synchronize;
	INIT_LIST_HEAD(&dd->channels);

	/* Read channels first, then write channels, as dw-edma numbers them */
	for (i = 0; i < loop->nchans_rd + loop->nchans_wr; i++) {
		struct loop_dma_chan *c = &loop->chans[i];

		c->loop = loop;
		c->idx = i;
		c->dir = i < loop->nchans_rd ? DMA_DEV_TO_MEM : DMA_MEM_TO_DEV;
		spin_lock_init(&c->lock);
		INIT_LIST_HEAD(&c->submitted);
		INIT_LIST_HEAD(&c->issued);
		INIT_WORK(&c->work, loop_dma_work);
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
	if (loop->dma_registered) {
		dma_async_device_unregister(&loop->dma);
		loop->dma_registered = false;
	}
	if (loop->dma_wq) {
		destroy_workqueue(loop->dma_wq);
		loop->dma_wq = NULL;
	}
}
