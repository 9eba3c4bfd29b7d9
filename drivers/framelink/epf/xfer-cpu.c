// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: CPU copies between the slots and host memory.
 *
 * Through one outbound window allocated at set-up, mapped per chunk
 * (pci_epc_map_addr), copied with memcpy_fromio/memcpy_toio, unmapped.
 * Used below the crossover size of the direction (reads of host memory
 * have their own, much smaller one: each CPU load is a PCIe round trip),
 * without channels, and as a fallback when no channel can take a frame.
 * Copies run from the engine pass, at most cpu_pass_bytes per pass, and
 * stop between window chunks when the host resets or the link goes down.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/io.h>
#include <linux/kthread.h>
#include <linux/ktime.h>

#include "epf.h"

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

/**
 * fl_win_read() - read host memory into a local buffer through the window
 * @ep: the endpoint (engine context, or engine stopped).
 * @pci_addr: host bus address.
 * @dst: local buffer.
 * @len: bytes.
 *
 * The same map, copy, unmap as a CPU copy of a frame from the host, so its
 * cost is what such a frame costs (xover.c times it).
 *
 * Return: 0 or the map error (-ENOLINK when the link is down).
 */
int fl_win_read(struct fl_ep *ep, u64 pci_addr, void *dst, size_t len)
{
	return fl_win_copy(ep, pci_addr, dst, len, false);
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
	void *local = fl_slot_va(ep, x->slot);

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
	fl_xfer_trace_done(x);
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
 * fl_xfer_cpu_pass() - move CPU copies, oldest first, within one pass's budget
 * @ep: the endpoint (engine context, state READY).
 *
 * At most cfg.cpu_pass_bytes per pass, checking for a reset or link down
 * between window chunks, so the engine answers the host within one chunk
 * however large the frames are.
 *
 * Return: true when anything was copied.
 */
bool fl_xfer_cpu_pass(struct fl_ep *ep)
{
	u32 budget = max_t(u32, ep->cfg.cpu_pass_bytes, PAGE_SIZE);
	u32 start = budget;

	if (fl_xfer_cpu_ring(ep, ep->txx, ep->tx_done, ep->tx_cons, &budget))
		fl_xfer_cpu_ring(ep, ep->rxx, ep->rx_done, ep->rx_cons, &budget);
	return budget != start;
}
