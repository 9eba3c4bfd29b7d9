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
 * CPU: through one outbound window allocated at set-up, mapped per chunk
 * (pci_epc_map_addr), copied with memcpy_fromio/memcpy_toio, unmapped.
 * Used below the crossover size, without channels, and as a fallback when
 * a DMA submission fails before anything was issued.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/sizes.h>

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

static u32 fl_dma_request(struct fl_ep *ep, struct dma_chan **chans, u32 want,
			  enum dma_transfer_direction dir)
{
	struct fl_dma_filter f = { .dev = ep->dma_dev, .dir_mask = BIT(dir) };
	dma_cap_mask_t mask;
	u32 n;

	dma_cap_zero(mask);
	dma_cap_set(DMA_SLAVE, mask);
	for (n = 0; n < want; n++) {
		chans[n] = dma_request_channel(mask, fl_dma_filter_fn, &f);
		if (!chans[n])
			break;
	}
	return n;
}

static void fl_dma_release(struct dma_chan **chans, u32 *n)
{
	while (*n) {
		(*n)--;
		dma_release_channel(chans[*n]);
		chans[*n] = NULL;
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
		fl_dma_release(ep->wr, &ep->nwr);
		fl_dma_release(ep->rd, &ep->nrd);
		return -ENODEV;
	}
	ep->win_page = max_t(size_t, epc->mem->window.page_size, ep->features->align);
	if (!ep->win_page)
		ep->win_page = PAGE_SIZE;
	ep->win_va = pci_epc_mem_alloc_addr(epc, &ep->win_phys, FL_EP_WIN_SIZE);
	if (!ep->win_va) {
		dev_err(ep->dev, "no outbound window of %u bytes\n", FL_EP_WIN_SIZE);
		fl_dma_release(ep->wr, &ep->nwr);
		fl_dma_release(ep->rd, &ep->nrd);
		return -ENOMEM;
	}
	return 0;
}

/**
 * fl_xfer_exit_hw() - give channels and window back (epc_deinit, unbind)
 * @ep: the endpoint (engine stopped).
 */
void fl_xfer_exit_hw(struct fl_ep *ep)
{
	fl_xfer_terminate(ep);
	fl_dma_release(ep->wr, &ep->nwr);
	fl_dma_release(ep->rd, &ep->nrd);
	if (ep->win_va) {
		pci_epc_mem_free_addr(ep->epc, ep->win_phys, ep->win_va, FL_EP_WIN_SIZE);
		ep->win_va = NULL;
	}
}

/**
 * fl_xfer_terminate() - abort every DMA transfer; no callback runs afterwards
 * @ep: the endpoint (engine context, or engine stopped).
 */
void fl_xfer_terminate(struct fl_ep *ep)
{
	u32 i;

	for (i = 0; i < ep->nrd; i++)
		dmaengine_terminate_sync(ep->rd[i]);
	for (i = 0; i < ep->nwr; i++)
		dmaengine_terminate_sync(ep->wr[i]);
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

static void fl_xfer_dma_done(void *param, const struct dmaengine_result *res)
{
	struct fl_xfer_part *p = param;
	struct fl_xfer *x = p->x;

	if (res && res->result != DMA_TRANS_NOERROR)
		WRITE_ONCE(x->dma_err, true);
	if (atomic_dec_and_test(&x->pending))
		fl_xfer_finish(x);
}

/*
 * Issue @x as up to one part per channel of its direction. Returns false
 * when nothing could be issued (the caller copies by CPU instead).
 */
static bool fl_xfer_dma(struct fl_ep *ep, struct fl_xfer *x, u64 host, dma_addr_t local,
			bool to_host)
{
	enum dma_transfer_direction dir = to_host ? DMA_MEM_TO_DEV : DMA_DEV_TO_MEM;
	struct dma_chan **chans = to_host ? ep->wr : ep->rd;
	u32 nch = to_host ? ep->nwr : ep->nrd;
	u32 *next = to_host ? &ep->wr_next : &ep->rd_next;
	u32 parts, part_len, issued = 0, i;
	unsigned long used = 0;

	parts = clamp_t(u32, x->bytes / FL_EP_SPLIT_MIN, 1, nch);
	part_len = ALIGN(DIV_ROUND_UP(x->bytes, parts), SZ_4K);
	parts = DIV_ROUND_UP(x->bytes, part_len);
	atomic_set(&x->pending, parts + 1);

	for (i = 0; i < parts; i++) {
		u32 ci = (*next + i) % nch;
		struct dma_chan *chan = chans[ci];
		u32 off = i * part_len;
		u32 len = min(part_len, x->bytes - off);
		struct dma_slave_config sc = { .direction = dir };
		struct dma_async_tx_descriptor *tx;

		if (to_host)
			sc.dst_addr = host + off;
		else
			sc.src_addr = host + off;
		if (dmaengine_slave_config(chan, &sc))
			break;
		tx = dmaengine_prep_slave_single(chan, local + off, len, dir,
						 DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
		if (!tx)
			break;
		tx->callback_result = fl_xfer_dma_done;
		tx->callback_param = &x->part[i];
		if (dma_submit_error(dmaengine_submit(tx)))
			break;
		used |= BIT(ci);
		issued++;
	}
	*next = (*next + parts) % nch;
	for (i = 0; i < nch; i++)
		if (used & BIT(i))
			dma_async_issue_pending(chans[i]);

	if (!issued)
		return false;
	if (issued < parts) {
		dev_warn_ratelimited(ep->dev, "DMA: %u of %u parts issued\n", issued, parts);
		WRITE_ONCE(x->dma_err, true);
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
 * The path is chosen per frame: DMA at or above the crossover size when the
 * host accepted %FL_F_DMA and a channel of that direction exists, CPU copy
 * otherwise. Both finish @x with the same result.
 */
void fl_xfer_start(struct fl_ep *ep, struct fl_xfer *x, u64 host, bool to_host)
{
	u64 off = (u64)x->slot * ep->slot_size;
	u32 nch = to_host ? ep->nwr : ep->nrd;
	int ret;

	x->dma_err = false;
	x->done = false;
	x->ts_start = ktime_get_ns();
	if (nch && (ep->accepted & FL_F_DMA) && x->bytes >= ep->cfg.crossover &&
	    fl_xfer_dma(ep, x, host, ep->slots_dma + off, to_host)) {
		fl_stat_add(ep, FL_STAT_DMA, 1);
		return;
	}

	ret = fl_win_copy(ep, host, ep->slots_va + off, x->bytes, to_host);
	if (ret) {
		dev_err_ratelimited(ep->dev, "CPU copy %s host %#llx+%u failed: %d\n",
				    to_host ? "to" : "from", host, x->bytes, ret);
		x->dma_err = true;
	}
	fl_stat_add(ep, FL_STAT_CPU, 1);
	x->ts_done = ktime_get_ns();
	/* Pairs with fl_xfer_done(), as in fl_xfer_finish() */
	smp_store_release(&x->done, true);
}
