// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: host frame buffers. Physically contiguous (one bus address per frame in
 * fl_tx_desc/fl_rx_desc), non-coherent (dma_alloc_pages(): cacheable for the CPU, explicit
 * dma_sync_*() at every ownership change), mmap()ed to user space at offset 0, buffer i at
 * i * buf_size. They belong to struct fl_host, not to the PCI binding: a mapping keeps them
 * until munmap() even after the device is gone.
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "host.h"

/**
 * fl_bufs_alloc() - allocate the frame buffers and the per-queue bookkeeping
 * @host: the device; ring sizes known.
 * @nbufs: number of buffers.
 * @buf_size: bytes per buffer, a multiple of PAGE_SIZE.
 *
 * Everything the hot path needs is allocated here, never later. Freed by fl_bufs_free()
 * at the last reference.
 *
 * Return: 0 or -ENOMEM (with a log line naming the module parameters to change).
 */
int fl_bufs_alloc(struct fl_host *host, u32 nbufs, size_t buf_size)
{
	u32 i;

	host->bufs = kcalloc(nbufs, sizeof(*host->bufs), GFP_KERNEL);
	host->tx_sh = kcalloc(host->tx_entries, sizeof(*host->tx_sh), GFP_KERNEL);
	host->rx_sh = kcalloc(host->rx_entries, sizeof(*host->rx_sh), GFP_KERNEL);
	host->fifo = kcalloc(nbufs, sizeof(*host->fifo), GFP_KERNEL);
	if (!host->bufs || !host->tx_sh || !host->rx_sh || !host->fifo)
		return -ENOMEM;
	host->nbufs = nbufs;
	host->buf_size = buf_size;
	for (i = 0; i < nbufs; i++) {
		struct fl_buf *b = &host->bufs[i];

		b->page = dma_alloc_pages(host->dev, buf_size, &b->dma, DMA_BIDIRECTIONAL,
					  GFP_KERNEL | __GFP_NOWARN);
		if (!b->page) {
			dev_err(host->dev,
				"cannot allocate frame buffer %u of %zu bytes (%u requested): lower nbufs= or buf_size=, or give the kernel more CMA (cma=)\n",
				i, buf_size, nbufs);
			return -ENOMEM;
		}
		b->state = FL_BUF_APP;
	}
	host->tx_depth = min(host->tx_entries, nbufs);
	host->rx_depth = min(host->rx_entries, nbufs);
	return 0;
}

/**
 * fl_bufs_free() - free what fl_bufs_alloc() allocated (also after a partial failure)
 * @host: the device, no longer reachable by anyone.
 */
void fl_bufs_free(struct fl_host *host)
{
	u32 i;

	for (i = 0; host->bufs && i < host->nbufs; i++) {
		struct fl_buf *b = &host->bufs[i];

		if (b->page)
			dma_free_pages(host->dev, host->buf_size, b->page, b->dma,
				       DMA_BIDIRECTIONAL);
	}
	kfree(host->bufs);
	kfree(host->tx_sh);
	kfree(host->rx_sh);
	kfree(host->fifo);
	host->bufs = NULL;
}

/**
 * fl_buf_sync_for_device() - give the first @bytes of a buffer to the endpoint
 * @host: the device.
 * @idx: buffer index.
 * @bytes: bytes the endpoint will read (%DMA_TO_DEVICE) or may write (%DMA_FROM_DEVICE).
 * @dir: direction of the coming transfer.
 */
void fl_buf_sync_for_device(struct fl_host *host, u32 idx, size_t bytes,
			    enum dma_data_direction dir)
{
	dma_sync_single_for_device(host->dev, host->bufs[idx].dma, bytes, dir);
}

/**
 * fl_buf_sync_for_cpu() - take the first @bytes of a buffer back after a transfer
 * @host: the device.
 * @idx: buffer index.
 * @bytes: bytes the endpoint wrote.
 * @dir: direction of the finished transfer.
 */
void fl_buf_sync_for_cpu(struct fl_host *host, u32 idx, size_t bytes,
			 enum dma_data_direction dir)
{
	dma_sync_single_for_cpu(host->dev, host->bufs[idx].dma, bytes, dir);
}

/* A mapping holds a reference: the buffers outlive the device until munmap(). */
static void fl_vma_open(struct vm_area_struct *vma)
{
	struct fl_host *host = vma->vm_private_data;

	kref_get(&host->ref);
}

static void fl_vma_close(struct vm_area_struct *vma)
{
	fl_host_put(vma->vm_private_data);
}

static const struct vm_operations_struct fl_vm_ops = {
	.open = fl_vma_open,
	.close = fl_vma_close,
};

/**
 * fl_bufs_mmap() - map frame buffers (any page range of [0, nbufs * buf_size))
 * @host: the device.
 * @vma: the mapping; cacheable, like the kernel's view of the buffers.
 *
 * Return: 0, -EINVAL for a private mapping or a range outside the buffers, -EPERM for an
 * executable mapping, or remap_pfn_range()'s error.
 */
int fl_bufs_mmap(struct fl_host *host, struct vm_area_struct *vma)
{
	u64 total = (u64)host->nbufs * host->buf_size;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	unsigned long addr = vma->vm_start;
	int ret;

	/* the device reads and writes these pages: no private (copy-on-write) mappings */
	if (!(vma->vm_flags & VM_SHARED) || off >= total || len > total - off)
		return -EINVAL;
	/* frame data written by a peer is never code: no PROT_EXEC, now or by mprotect() */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	while (len) {
		u32 i = div64_u64(off, host->buf_size);
		u64 in_buf = off - (u64)i * host->buf_size;
		u64 chunk = min_t(u64, len, host->buf_size - in_buf);

		ret = remap_pfn_range(vma, addr,
				      page_to_pfn(host->bufs[i].page) + (in_buf >> PAGE_SHIFT),
				      chunk, vma->vm_page_prot);
		if (ret)
			return ret;
		addr += chunk;
		off += chunk;
		len -= chunk;
	}
	vma->vm_private_data = host;
	vma->vm_ops = &fl_vm_ops;
	fl_vma_open(vma);
	return 0;
}
