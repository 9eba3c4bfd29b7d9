// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: host frame buffers. Physically contiguous (one bus address per frame in
 * fl_tx_desc/fl_rx_desc), non-coherent (dma_alloc_pages(): cacheable for the CPU, explicit
 * dma_sync_*() at every ownership change), mmap()ed to user space at offset 0, buffer i at
 * i * buf_size.
 *
 * The pages are freed in remove(), through the device while it is still bound (its DMA
 * configuration, IOMMU domain and swiotlb state are torn down after remove() returns), and
 * only after bus mastering is off and every user mapping is zapped: an application that
 * touches a mapping afterwards gets SIGBUS, never freed memory. Every mmap() is recorded
 * with its address space (struct fl_host_vma) because ->mmap runs before mmap() links the
 * VMA: remove() takes each address space's mmap_lock, which waits for such an mmap(), and
 * zaps the VMAs it finds there. The bookkeeping (states, shadows, fifo) stays with struct
 * fl_host until the last reference, for the files still open.
 */
#include <linux/dma-mapping.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
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

	mutex_init(&host->map_lock);
	INIT_LIST_HEAD(&host->vmas);
	/* import indices follow the own buffers (import.c); all start free, owned by the app */
	host->nslots = nbufs + FL_HOST_MAX_IMPORTS;
	/* the V4L2 devices' indices follow (v4l2.c, v4l2-cap.c); their completions skip @fifo */
	host->nvbufs = 2 * FL_HOST_V4L2_BUFS;
	host->bufs = kcalloc(host->nslots + host->nvbufs, sizeof(*host->bufs), GFP_KERNEL);
	host->tx_sh = kcalloc(host->tx_entries, sizeof(*host->tx_sh), GFP_KERNEL);
	host->rx_sh = kcalloc(host->rx_entries, sizeof(*host->rx_sh), GFP_KERNEL);
	host->fifo = kcalloc(host->nslots, sizeof(*host->fifo), GFP_KERNEL);
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
		b->len = buf_size;
		b->state = FL_BUF_APP;
	}
	host->tx_depth = min(host->tx_entries, nbufs);
	host->rx_depth = min(host->rx_entries, nbufs);
	return 0;
}

/**
 * fl_bufs_free_pages() - free (or leak) the buffer pages (remove, after fl_bufs_zap())
 * @host: the device, still bound, bus mastering off, no user mapping left.
 * @leak: the endpoint did not stop: keep the pages for good (logged), it may still write.
 */
void fl_bufs_free_pages(struct fl_host *host, bool leak)
{
	u32 i;

	for (i = 0; host->bufs && i < host->nbufs; i++) {
		struct fl_buf *b = &host->bufs[i];

		if (b->page && !leak)
			dma_free_pages(host->dev, host->buf_size, b->page, b->dma,
				       DMA_BIDIRECTIONAL);
		b->page = NULL;
	}
	if (leak)
		dev_warn(host->dev, "endpoint did not stop: %u frame buffers of %zu bytes leaked\n",
			 host->nbufs, host->buf_size);
}

/**
 * fl_bufs_free() - free what fl_bufs_alloc() allocated (last reference)
 * @host: the device, no longer reachable by anyone.
 *
 * After a remove() the pages are gone already; only a failed probe, whose device is still
 * being bound, leaves pages for this.
 */
void fl_bufs_free(struct fl_host *host)
{
	fl_bufs_free_pages(host, false);
	kfree(host->bufs);
	kfree(host->tx_sh);
	kfree(host->rx_sh);
	kfree(host->fifo);
	host->bufs = NULL;
	mutex_destroy(&host->map_lock);
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

/**
 * struct fl_host_vma - one mmap() of the buffers, shared by the VMAs split from it
 * @host: the device (a reference, dropped with the last VMA).
 * @node: in fl_host.vmas.
 * @mm: the address space it was made in (grabbed): remove() zaps the mapping there.
 * @users: VMAs using it, plus one while remove() holds it; under fl_host.map_lock.
 */
struct fl_host_vma {
	struct fl_host *host;
	struct list_head node;
	struct mm_struct *mm;
	int users;
};

/* Outside map_lock: the put may be the last reference to @host (and its map_lock). */
static void fl_host_vma_free(struct fl_host_vma *v)
{
	struct fl_host *host = v->host;

	mmdrop(v->mm);
	kfree(v);
	fl_host_put(host);
}

/* A VMA split or moved from one of ours (fork does not copy: VM_DONTCOPY) */
static void fl_vma_open(struct vm_area_struct *vma)
{
	struct fl_host_vma *v = vma->vm_private_data;

	mutex_lock(&v->host->map_lock);
	v->users++;
	mutex_unlock(&v->host->map_lock);
}

static void fl_vma_close(struct vm_area_struct *vma)
{
	struct fl_host_vma *v = vma->vm_private_data;
	struct fl_host *host = v->host;
	bool last;

	mutex_lock(&host->map_lock);
	last = !--v->users;
	if (last)
		list_del(&v->node);
	mutex_unlock(&host->map_lock);
	if (last)
		fl_host_vma_free(v);
}

/*
 * PFN maps without a fault handler: once fl_bufs_zap() cleared the page table entries, an
 * access gets SIGBUS. open/close only track where the mappings are.
 */
static const struct vm_operations_struct fl_vm_ops = {
	.open = fl_vma_open,
	.close = fl_vma_close,
};

static int fl_bufs_remap(struct fl_host *host, struct vm_area_struct *vma, u64 off, u64 len)
{
	unsigned long addr = vma->vm_start;
	int ret;

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
	return 0;
}

/**
 * fl_bufs_mmap() - map frame buffers (any page range of [0, nbufs * buf_size))
 * @host: the device.
 * @vma: the mapping; cacheable, like the kernel's view of the buffers.
 *
 * The mapping is recorded before ->mmap returns, under fl_host.map_lock, so remove()
 * either refuses it (-ENODEV) or finds it (fl_bufs_zap()).
 *
 * Return: 0, -EINVAL for a private mapping or a range outside the buffers, -EPERM for an
 * executable mapping, -ENODEV after remove(), -ENOMEM, or remap_pfn_range()'s error.
 */
int fl_bufs_mmap(struct fl_host *host, struct vm_area_struct *vma)
{
	u64 total = (u64)host->nbufs * host->buf_size;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	struct fl_host_vma *v;
	int ret;

	/* the device reads and writes these pages: no private (copy-on-write) mappings */
	if (!(vma->vm_flags & VM_SHARED) || off >= total || len > total - off)
		return -EINVAL;
	/* frame data written by a peer is never code: no PROT_EXEC, now or by mprotect() */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	mutex_lock(&host->map_lock);
	if (host->bufs_gone) {
		ret = -ENODEV;
		goto free_v;
	}
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	ret = fl_bufs_remap(host, vma, off, len);
	if (ret)
		goto free_v;
	kref_get(&host->ref);
	v->host = host;
	v->mm = vma->vm_mm;
	mmgrab(v->mm);
	v->users = 1;
	list_add(&v->node, &host->vmas);
	vma->vm_private_data = v;
	vma->vm_ops = &fl_vm_ops;
	mutex_unlock(&host->map_lock);
	return 0;

free_v:
	mutex_unlock(&host->map_lock);
	kfree(v);
	return ret;
}

/*
 * Zap the VMAs of @v in its address space. Taking the mmap_lock also waits for an mmap()
 * that recorded @v but has not linked its VMA yet (it holds the lock for writing). An
 * address space without users is being torn down: nobody can fault in it any more.
 * Returns the VMAs zapped.
 */
static u32 fl_bufs_zap_mm(struct fl_host_vma *v)
{
	struct vm_area_struct *vma;
	u32 n = 0;

	if (!mmget_not_zero(v->mm))
		return 0;
	mmap_read_lock(v->mm);
	{
		VMA_ITERATOR(vmi, v->mm, 0);

		for_each_vma(vmi, vma) {
			if (vma->vm_ops != &fl_vm_ops || vma->vm_private_data != v)
				continue;
			fl_zap_pfn_vma(vma);
			n++;
		}
	}
	mmap_read_unlock(v->mm);
	mmput(v->mm);
	return n;
}

/**
 * fl_bufs_zap() - end every user mapping of the buffers (remove, bus mastering off)
 * @host: the device; no file operation reaches the buffers any more.
 *
 * New mmap() calls fail with -ENODEV from here on. The recorded mappings are held while
 * map_lock is dropped around the mmap_lock waits (lock order: mmap_lock, then map_lock),
 * so none is freed or added meanwhile. Afterwards the pages may be freed.
 */
void fl_bufs_zap(struct fl_host *host)
{
	struct fl_host_vma *v, *tmp;
	LIST_HEAD(dead);
	u32 n = 0;

	mutex_lock(&host->map_lock);
	host->bufs_gone = true;
	list_for_each_entry(v, &host->vmas, node)
		v->users++;
	mutex_unlock(&host->map_lock);

	list_for_each_entry(v, &host->vmas, node)
		n += fl_bufs_zap_mm(v);

	mutex_lock(&host->map_lock);
	list_for_each_entry_safe(v, tmp, &host->vmas, node)
		if (!--v->users)
			list_move(&v->node, &dead);
	mutex_unlock(&host->map_lock);
	list_for_each_entry_safe(v, tmp, &dead, node)
		fl_host_vma_free(v);
	if (n)
		dev_info(host->dev,
			 "%u buffer mappings zapped: an access now gets SIGBUS\n", n);
}
