// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the host's completion area, mapped once per enable.
 *
 * The completion area (struct fl_host_status, then the fl_cqe ring) is host
 * memory the endpoint only writes. It gets its own outbound window region,
 * mapped at enable and unmapped when the queues stop (host reset, protocol
 * error, link down, deinit, unbind: every path runs fl_ring_abort()), so
 * publishing a batch costs CPU stores and no window reprogramming (on a
 * DesignWare endpoint every map_addr/unmap_addr rewrites an iATU region).
 *
 * Stores through the window are posted: nothing says when they reach host
 * memory. A load through the same window is a non-posted read that PCIe
 * ordering does not let pass the earlier posted writes, so when it returns
 * the writes are in host memory: fl_cqmap_flush() is that read.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/io.h>

#include "epf.h"

static size_t fl_cqmap_bytes(struct fl_ep *ep)
{
	return FL_HOST_CQ_OFFSET + (size_t)ep->cq_entries * sizeof(struct fl_cqe);
}

/**
 * fl_cqmap_map() - map the completion area at ep->cq_addr for this enable
 * @ep: the endpoint (engine context), cq_addr and cq_entries set.
 *
 * Return: 0, -ENOMEM when the controller has no window space left, or the
 * map_addr error (-ENOLINK without link, -EIO with the controller in reset).
 */
int fl_cqmap_map(struct fl_ep *ep)
{
	struct pci_epf *epf = ep->epf;
	size_t off = ep->cq_addr & (ep->win_page - 1);
	size_t size = ALIGN(off + fl_cqmap_bytes(ep), ep->win_page);
	void __iomem *va;
	phys_addr_t phys;
	int ret;

	fl_cqmap_unmap(ep);
	va = pci_epc_mem_alloc_addr(ep->epc, &phys, size);
	if (!va)
		return -ENOMEM;
	ret = pci_epc_map_addr(ep->epc, epf->func_no, epf->vfunc_no, phys,
			       ep->cq_addr - off, size);
	if (ret) {
		pci_epc_mem_free_addr(ep->epc, phys, va, size);
		return ret;
	}
	ep->cqm_base = va;
	ep->cqm_phys = phys;
	ep->cqm_size = size;
	ep->cqm_va = va + off;
	ep->cqm_lost = false;
	return 0;
}

/**
 * fl_cqmap_unmap() - give the completion area's window region back
 * @ep: the endpoint (engine context, or engine stopped).
 *
 * After a failed EPC operation with the controller in reset (-EIO, PERST#)
 * the mapping is dropped without touching the controller: its address
 * translation was reset with it, and a register access would fault.
 */
void fl_cqmap_unmap(struct fl_ep *ep)
{
	struct pci_epf *epf = ep->epf;

	if (!ep->cqm_base)
		return;
	if (!ep->cqm_lost)
		pci_epc_unmap_addr(ep->epc, epf->func_no, epf->vfunc_no, ep->cqm_phys);
	pci_epc_mem_free_addr(ep->epc, ep->cqm_phys, ep->cqm_base, ep->cqm_size);
	ep->cqm_base = NULL;
	ep->cqm_va = NULL;
	ep->cqm_size = 0;
}

/**
 * fl_cqmap_write() - store into the completion area (posted)
 * @ep: the endpoint (engine context, area mapped).
 * @off: offset from cq_addr.
 * @src: data.
 * @len: bytes.
 *
 * For completion entries and whole areas: memcpy_toio() may store them in
 * parts of any size, which is harmless for what the host reads only after an
 * index published behind it. An index goes through fl_cqmap_write32().
 */
void fl_cqmap_write(struct fl_ep *ep, size_t off, const void *src, size_t len)
{
	memcpy_toio(ep->cqm_va + off, src, len);
}

/**
 * fl_cqmap_write32() - store one 32-bit field of the completion area (posted)
 * @ep: the endpoint (engine context, area mapped).
 * @off: offset from cq_addr, 4-byte aligned.
 * @val: the value, stored little-endian.
 *
 * One 32-bit store, so one write on the link: the host never reads the field
 * half old, half new. memcpy_toio() copies 4 bytes as four byte stores on
 * arm64, each its own posted write, and an index whose carry crosses a byte
 * boundary reads for a moment as a value behind the host's consumer index
 * (tests/vm/80-torn-stores.sh).
 */
void fl_cqmap_write32(struct fl_ep *ep, size_t off, u32 val)
{
	writel(val, ep->cqm_va + off);
}

/**
 * fl_cqmap_flush() - wait until every store into the area reached host memory
 * @ep: the endpoint (engine context, area mapped).
 *
 * Reads cq_prod back through the window: the completion of a read on the
 * path of the posted writes comes back after them.
 *
 * Return: cq_prod as host memory holds it (all ones: the link is gone).
 */
u32 fl_cqmap_flush(struct fl_ep *ep)
{
	/* The stores are issued before the read that flushes them */
	wmb();
	fl_stat_add(ep, FL_STAT_LINK_READS, 1);
	return readl(ep->cqm_va + offsetof(struct fl_host_status, cq_prod));
}
