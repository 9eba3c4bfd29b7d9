// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the NVIDIA eDMA library backend (JetPack's tegra-pcie-edma).
 *
 * NVIDIA's JetPack kernels do not register the Orin's eDMA with dmaengine;
 * their endpoint functions drive it through a library exported by the
 * tegra-pcie-edma module (nvidia-oot drivers/pci/controller/tegra-pcie-edma.c,
 * r36; interface facts and sources: Documentation/framelink.rst "DMA
 * backends"). In the lab pci-epc-loop implements it on the jetpack profile.
 *
 * The functions are looked up at bind with symbol_get(), so framelink-epf
 * loads on every kernel and only this backend needs the library (load it
 * first: modprobe tegra-pcie-edma). Built against NVIDIA's header when the
 * build is given NVIDIA_OOT=<nvidia-oot tree>, else against the project's
 * declaration of the r36 interface (include/framelink/tegra-pcie-edma.h).
 *
 * What the library gives and what it does not, and how this file copes:
 *  - 4 write and 2 read channels, each a ring of num_descriptors slots
 *    allocated at initialize; ASYNC channels call back once per submit, in
 *    process context (the library's threaded irq). One part = one submit of
 *    one descriptor with its struct fl_dma_ctx as priv.
 *  - No per-transfer terminate: a teardown calls tegra_pcie_edma_deinit(),
 *    which stops every channel, waits for submitters and for the irq thread,
 *    and calls the pending callbacks with EDMA_XFER_DEINIT - except that
 *    JetPack 6 skips the callbacks of channels other than 0 and 1 of a
 *    direction. So no context waits for a callback after deinit: once it
 *    returned no callback can run, and every context is free (the generation
 *    was bumped before, so a callback that did run changed nothing). The
 *    library is initialized again before the queue is enabled (resume).
 *  - tegra_pcie_edma_stop() is not used: JetPack 5 lacks it, and deinit
 *    does the same and more. The library's calls are not bounded by us: a
 *    deinit that never returns hangs the teardown (NVIDIA's source not checked
 *    for that; the lab's returns after one chunk).
 *  - The library does not look at the link: a transfer across a link loss
 *    completes EDMA_XFER_SUCCESS although the hardware dropped it. The
 *    link-down event cancels the frames still in flight (fl_ring_abort());
 *    one reported done just before the event is published as arrived: a
 *    race this backend cannot close.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/log2.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/slab.h>

#ifdef FL_NVIDIA_EDMA_HEADER
#include FL_NVIDIA_EDMA_HEADER
#else
#include <framelink/tegra-pcie-edma.h>
#endif

#include "epf.h"

/**
 * struct fl_nvedma - the library as this binding uses it
 * @initialize: tegra_pcie_edma_initialize(), held with symbol_get().
 * @submit: tegra_pcie_edma_submit_xfer().
 * @deinit: tegra_pcie_edma_deinit().
 * @info: the channels asked for, kept to initialize again after a deinit.
 * @cookie: the library instance, NULL after a deinit until resume.
 *
 * Engine private (engine thread, or whoever stopped it).
 */
struct fl_nvedma {
	void *(*initialize)(struct tegra_pcie_edma_init_info *info);
	edma_xfer_status_t (*submit)(void *cookie, struct tegra_pcie_edma_xfer_info *tx_info);
	void (*deinit)(void *cookie);
	struct tegra_pcie_edma_init_info info;
	void *cookie;
};

static void fl_nvedma_put_symbols(struct fl_nvedma *nv)
{
	if (nv->initialize)
		symbol_put(tegra_pcie_edma_initialize);
	if (nv->submit)
		symbol_put(tegra_pcie_edma_submit_xfer);
	if (nv->deinit)
		symbol_put(tegra_pcie_edma_deinit);
}

/* The library's functions, if its module is loaded; false (none held) otherwise */
static bool fl_nvedma_get_symbols(struct fl_nvedma *nv)
{
	nv->initialize = symbol_get(tegra_pcie_edma_initialize);
	nv->submit = symbol_get(tegra_pcie_edma_submit_xfer);
	nv->deinit = symbol_get(tegra_pcie_edma_deinit);
	if (nv->initialize && nv->submit && nv->deinit)
		return true;
	fl_nvedma_put_symbols(nv);
	return false;
}

/* Channels of one direction: ASYNC, a ring one larger than the contexts */
static u32 fl_nvedma_chans(struct fl_ep *ep, struct tegra_pcie_edma_chans_info *ci,
			   struct fl_dma_chan *dcs, u32 max)
{
	u32 n = min(ep->cfg.dma_channels, max);
	u32 i;

	for (i = 0; i < n; i++) {
		if (fl_dma_ctx_alloc(ep, &dcs[i]))
			break;
		dcs[i].num = i;
		ci[i].ch_type = EDMA_CHAN_XFER_ASYNC;
		/* A ring holds num_descriptors - 1: room for every context */
		ci[i].num_descriptors = roundup_pow_of_two(dcs[i].nctx + 1);
	}
	return i;
}

static void fl_nvedma_free(struct fl_ep *ep)
{
	struct fl_dma_chan *dc;
	u32 i;

	for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++)
		fl_dma_ctx_release(dc);
	ep->nrd = 0;
	ep->nwr = 0;
	fl_nvedma_put_symbols(ep->nv);
	kfree(ep->nv);
	ep->nv = NULL;
}

static int fl_nvedma_init(struct fl_ep *ep)
{
	struct device_node *np = ep->dma_dev->of_node;
	struct fl_nvedma *nv;

	/* The library finds the controller from its device-tree node */
	if (!np)
		return -ENODEV;
	nv = kzalloc(sizeof(*nv), GFP_KERNEL);
	if (!nv)
		return -ENOMEM;
	if (!fl_nvedma_get_symbols(nv)) {
		kfree(nv);
		return -ENODEV;
	}
	ep->nv = nv;
	nv->info.np = np;
	ep->nwr = fl_nvedma_chans(ep, nv->info.tx, ep->wr, DMA_WR_CHNL_NUM);
	ep->nrd = fl_nvedma_chans(ep, nv->info.rx, ep->rd, DMA_RD_CHNL_NUM);
	nv->cookie = nv->initialize(&nv->info);
	if (!nv->cookie) {
		/* Normal under "auto" on a controller the library does not drive */
		if (ep->cfg.xfer_backend == FL_XFER_NVEDMA)
			dev_info(ep->dev, "DMA: the NVIDIA eDMA library did not initialize on %pOF (see its log)\n",
				 np);
		fl_nvedma_free(ep);
		return -ENODEV;
	}
	return 0;
}

static void fl_nvedma_exit(struct fl_ep *ep)
{
	struct fl_nvedma *nv = ep->nv;

	if (nv->cookie)
		nv->deinit(nv->cookie);
	nv->cookie = NULL;
	fl_nvedma_free(ep);
}

/* The library's callback: process context, one per submit */
static void fl_nvedma_done(void *priv, edma_xfer_status_t status,
			   struct tegra_pcie_edma_desc *desc)
{
	struct fl_dma_ctx *c = priv;
	bool failed = status != EDMA_XFER_SUCCESS;
	/* Read before fl_xfer_part_done(): the engine may reuse @c once it returns */
	struct fl_dma_chan *dc = c->dc;
	struct fl_ep *ep = c->x->ep;
	bool rd = dc >= ep->rd && dc < ep->rd + FL_EP_MAX_CHANNELS;

	if (fl_xfer_part_done(c, failed) && failed)
		dev_err_ratelimited(ep->dev, "DMA: eDMA %s channel %u transfer failed: status %d\n",
				    rd ? "read" : "write", dc->num, status);
}

static bool fl_nvedma_part(struct fl_ep *ep, struct fl_dma_chan *dc, struct fl_xfer *x,
			   u64 host, dma_addr_t local, u32 len, bool to_host)
{
	struct fl_dma_ctx *c = fl_dma_ctx_get(dc);
	struct fl_nvedma *nv = ep->nv;
	/* The library copies the descriptor into its ring: the stack is fine */
	struct tegra_pcie_edma_desc d = {
		.src = to_host ? local : host,
		.dst = to_host ? host : local,
		.sz = len,
	};
	struct tegra_pcie_edma_xfer_info xi = {
		.type = to_host ? EDMA_XFER_WRITE : EDMA_XFER_READ,
		.channel_num = dc->num,
		.desc = &d,
		.nents = 1,
		.complete = fl_nvedma_done,
		.priv = c,
	};
	edma_xfer_status_t st;

	if (!c || !nv->cookie)
		return false;
	/* Busy before the library has it: the callback may come before submit returns */
	fl_dma_ctx_arm(ep, c, dc, x);
	st = nv->submit(nv->cookie, &xi);
	if (st != EDMA_XFER_SUCCESS) {
		fl_dma_ctx_disarm(ep, c);
		dev_err_ratelimited(ep->dev, "DMA: eDMA %s channel %u refused a transfer: status %d\n",
				    to_host ? "write" : "read", dc->num, st);
		return false;
	}
	dc->ctx_next++;
	return true;
}

/*
 * deinit stops the engines and returns once no callback can run any more
 * (its pending callbacks ran or were dropped): every channel is idle.
 * @timeout_ms is not ours to enforce: the library call is not bounded.
 */
static bool fl_nvedma_quiesce(struct fl_ep *ep, unsigned int timeout_ms)
{
	struct fl_nvedma *nv = ep->nv;
	struct fl_dma_chan *dc;
	u32 i;

	if (nv->cookie)
		nv->deinit(nv->cookie);
	nv->cookie = NULL;
	for (i = 0; (dc = fl_dma_chan_at(ep, i)); i++) {
		fl_dma_ctx_free_all(ep, dc);
		dc->ctx_next = 0;
	}
	return true;
}

static bool fl_nvedma_stuck(struct fl_ep *ep)
{
	return false;
}

/* Initialize the library again after a quiesce; without it frames go by CPU */
static void fl_nvedma_resume(struct fl_ep *ep)
{
	struct fl_nvedma *nv = ep->nv;

	if (nv->cookie)
		return;
	nv->cookie = nv->initialize(&nv->info);
	if (!nv->cookie)
		dev_err_ratelimited(ep->dev,
				    "DMA: NVIDIA eDMA library did not initialize again: CPU copies until the next reset\n");
}

const struct fl_xfer_ops fl_xfer_nvedma = {
	.name = "nvidia-edma",
	.id = FL_XFER_NVEDMA,
	.init = fl_nvedma_init,
	.exit = fl_nvedma_exit,
	.part = fl_nvedma_part,
	.quiesce = fl_nvedma_quiesce,
	.stuck = fl_nvedma_stuck,
	.resume = fl_nvedma_resume,
};
