// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: a slot as a dma-buf (FL_IOC_EXPORT, issue 11).
 *
 * The endpoint app hands a slot to a GPU or another device that imports
 * dma-bufs. The dma-buf is a second view of the slot's memory, not a copy;
 * it changes nothing in who owns the slot (enum fl_slot_state): the app uses
 * it only while the slot is the app's, as with its mmap() of the slots.
 *
 * Memory and sync:
 *  - importers get the slot's pages (fl_slotmem_page(): the DMA API's own
 *    description of the allocation) mapped for their device with
 *    dma_map_sgtable(): a streaming mapping, so CPU access is bracketed by
 *    DMA_BUF_IOCTL_SYNC, which syncs the importer mappings of this dma-buf
 *    as the CPU's access needs (fl_xbuf_sync(): for the CPU at the begin of
 *    a read, for the devices at the end of a write). The
 *    controller's own view needs no sync: the slots are a coherent DMA API
 *    allocation on it;
 *  - mmap() of the dma-buf is fl_slots_mmap_part(): the same memory type as
 *    the slot mmap() (the DMA API's choice), shared only, never executable;
 *  - slots from the controller's pool (a no-map reserved region has no
 *    linear mapping for cache maintenance by address) are refused to
 *    importers that are not dma-coherent.
 *
 * Lifetime, the rules of the slot mmap() (slots.c, cdev.c): a dma-buf holds a
 * reference on struct fl_ep and, through the dma-buf core, on this module
 * (rmmod fails while one is open). Unbind marks the endpoint dead, zaps every
 * CPU mapping of every exported dma-buf (later accesses get SIGBUS) and then
 * frees the slots; the dma-buf stays a valid fd whose sync, mmap() and new
 * imports fail with -ENODEV, and its release after unbind touches only the
 * bookkeeping. An importer mapping (map_dma_buf without its unmap) cannot be
 * revoked: the importer may still run DMA into it. While one exists at
 * unbind, the slot memory stays allocated (logged), never freed under a
 * device, and the last unmap frees it (fl_slotmem_free_late()).
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/dma-buf.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "epf.h"

FL_MODULE_IMPORT_NS_DMA_BUF;

/**
 * struct fl_xbuf - one exported slot (the dma-buf's priv)
 * @ep: the endpoint (a reference, dropped at release).
 * @dmabuf: the dma-buf.
 * @node: in fl_ep.exports, under fl_ep.files_lock.
 * @atts: struct fl_xatt mapped for an importer, under fl_ep.files_lock.
 * @slot: the slot.
 * @page: its first page (physically contiguous).
 */
struct fl_xbuf {
	struct fl_ep *ep;
	struct dma_buf *dmabuf;
	struct list_head node;
	struct list_head atts;
	u32 slot;
	struct page *page;
};

/**
 * struct fl_xatt - one importer's attachment (dma_buf_attachment.priv)
 * @dev: the importer's device.
 * @sgt: the slot's pages, mapped for @dev while @mapped.
 * @dir: direction of that mapping.
 * @mapped: mapped, or being mapped (under fl_ep.files_lock).
 * @node: in fl_xbuf.atts once mapped, under fl_ep.files_lock.
 */
struct fl_xatt {
	struct device *dev;
	struct sg_table sgt;
	enum dma_data_direction dir;
	bool mapped;
	struct list_head node;
};

static int fl_xbuf_attach(struct dma_buf *dmabuf, struct dma_buf_attachment *attach)
{
	struct fl_xatt *a = kzalloc(sizeof(*a), GFP_KERNEL);

	if (!a)
		return -ENOMEM;
	a->dev = attach->dev;
	INIT_LIST_HEAD(&a->node);
	attach->priv = a;
	return 0;
}

static void fl_xbuf_detach(struct dma_buf *dmabuf, struct dma_buf_attachment *attach)
{
	kfree(attach->priv);
	attach->priv = NULL;
}

/*
 * Claim @a for one mapping: the endpoint alive, pool slots only for a dma-coherent
 * importer, @a not mapped yet. The dead check comes first: after unbind every new
 * import is -ENODEV, and ep->dev (the function's device, gone once the function is
 * removed) is printed only while the endpoint is alive.
 */
static int fl_xatt_claim(struct fl_xbuf *xb, struct fl_xatt *a)
{
	struct fl_ep *ep = xb->ep;
	int ret = 0;

	mutex_lock(&ep->files_lock);
	if (ep->dead) {
		ret = -ENODEV;
	} else if (ep->sm_pool && !dev_is_dma_coherent(a->dev)) {
		dev_dbg_ratelimited(ep->dev, "export: slots from a pool, %s not dma-coherent\n",
				    dev_name(a->dev));
		ret = -EOPNOTSUPP;
	} else if (a->mapped) {
		ret = -EBUSY;
	} else {
		a->mapped = true;
		ep->exp_mapped++;
	}
	mutex_unlock(&ep->files_lock);
	return ret;
}

/* The last mapping of slots kept at unbind frees them (the dma-buf holds @ep) */
static void fl_xatt_unclaim(struct fl_xbuf *xb, struct fl_xatt *a)
{
	struct fl_ep *ep = xb->ep;
	bool free;

	mutex_lock(&ep->files_lock);
	list_del_init(&a->node);
	a->mapped = false;
	free = !--ep->exp_mapped && ep->slots_kept;
	if (free)
		ep->slots_kept = false;
	mutex_unlock(&ep->files_lock);
	if (free)
		fl_slotmem_free_late(ep);
}

/*
 * The slot's pages as @a's table, in segments no longer than @a's device takes
 * (dma_get_max_seg_size(): 64 KiB unless its driver says more, as vgem's does not): one
 * segment per slot overran it (DMA-API debug, issue 27 item 4), and an IOMMU would not
 * join beyond it either.
 */
static int fl_xbuf_table(struct fl_xatt *a, struct page *page, size_t size)
{
	size_t seg = max_t(size_t, dma_get_max_seg_size(a->dev) & PAGE_MASK, PAGE_SIZE);
	struct scatterlist *sg;
	size_t off = 0;
	int ret, i;

	ret = sg_alloc_table(&a->sgt, DIV_ROUND_UP(size, seg), GFP_KERNEL);
	if (ret)
		return ret;
	for_each_sgtable_sg(&a->sgt, sg, i) {
		size_t len = min(seg, size - off);

		sg_set_page(sg, pfn_to_page(page_to_pfn(page) + (off >> PAGE_SHIFT)), len, 0);
		off += len;
	}
	return 0;
}

static struct sg_table *fl_xbuf_map(struct dma_buf_attachment *attach,
				    enum dma_data_direction dir)
{
	struct fl_xbuf *xb = attach->dmabuf->priv;
	struct fl_xatt *a = attach->priv;
	struct fl_ep *ep = xb->ep;
	int ret;

	ret = fl_xatt_claim(xb, a);
	if (ret)
		return ERR_PTR(ret);
	ret = fl_xbuf_table(a, xb->page, ep->slot_size);
	if (ret)
		goto unclaim;
	ret = dma_map_sgtable(a->dev, &a->sgt, dir, 0);
	if (ret)
		goto free_table;
	a->dir = dir;
	mutex_lock(&ep->files_lock);
	list_add(&a->node, &xb->atts);
	mutex_unlock(&ep->files_lock);
	return &a->sgt;

free_table:
	sg_free_table(&a->sgt);
unclaim:
	fl_xatt_unclaim(xb, a);
	return ERR_PTR(ret);
}

static void fl_xbuf_unmap(struct dma_buf_attachment *attach, struct sg_table *sgt,
			  enum dma_data_direction dir)
{
	struct fl_xbuf *xb = attach->dmabuf->priv;
	struct fl_xatt *a = attach->priv;
	struct fl_ep *ep = xb->ep;

	mutex_lock(&ep->files_lock);
	list_del_init(&a->node);
	mutex_unlock(&ep->files_lock);
	dma_unmap_sgtable(a->dev, &a->sgt, a->dir, 0);
	sg_free_table(&a->sgt);
	/* Counted until the device can no longer reach the slot */
	fl_xatt_unclaim(xb, a);
}

/*
 * Sync the importer mappings for the CPU (@for_cpu) or back for the devices, as the CPU's
 * access @cpu_dir needs (issue 27 item 3.7): DMA_FROM_DEVICE is a CPU read, DMA_TO_DEVICE a
 * CPU write, DMA_BIDIRECTIONAL both. At begin, only a CPU that reads needs what a device
 * wrote: mappings a device can write (not DMA_TO_DEVICE) are synced for the CPU. At end,
 * only a CPU that wrote has something to hand over: mappings a device reads (not
 * DMA_FROM_DEVICE) are synced for the device. Each sync uses the mapping's own direction,
 * as the DMA API requires.
 */
static int fl_xbuf_sync(struct dma_buf *dmabuf, bool for_cpu, enum dma_data_direction cpu_dir)
{
	enum dma_data_direction skip = for_cpu ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	struct fl_xbuf *xb = dmabuf->priv;
	struct fl_ep *ep = xb->ep;
	struct fl_xatt *a;
	int ret = 0;

	mutex_lock(&ep->files_lock);
	if (ep->dead) {
		ret = -ENODEV;
	} else if (cpu_dir != skip) {
		list_for_each_entry(a, &xb->atts, node) {
			if (a->dir == skip)
				continue;
			if (for_cpu)
				dma_sync_sgtable_for_cpu(a->dev, &a->sgt, a->dir);
			else
				dma_sync_sgtable_for_device(a->dev, &a->sgt, a->dir);
		}
	}
	mutex_unlock(&ep->files_lock);
	return ret;
}

static int fl_xbuf_begin_cpu(struct dma_buf *dmabuf, enum dma_data_direction dir)
{
	return fl_xbuf_sync(dmabuf, true, dir);
}

static int fl_xbuf_end_cpu(struct dma_buf *dmabuf, enum dma_data_direction dir)
{
	return fl_xbuf_sync(dmabuf, false, dir);
}

static int fl_xbuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct fl_xbuf *xb = dmabuf->priv;
	struct fl_ep *ep = xb->ep;
	int ret;

	/* The dma-buf core checked the range against the slot's size */
	mutex_lock(&ep->files_lock);
	ret = ep->dead ? -ENODEV :
	      fl_slots_mmap_part(ep, vma, (size_t)xb->slot * ep->slot_size, ep->slot_size);
	mutex_unlock(&ep->files_lock);
	return ret;
}

static void fl_xbuf_release(struct dma_buf *dmabuf)
{
	struct fl_xbuf *xb = dmabuf->priv;
	struct fl_ep *ep = xb->ep;

	mutex_lock(&ep->files_lock);
	list_del(&xb->node);
	mutex_unlock(&ep->files_lock);
	fl_ep_put(ep);
	kfree(xb);
}

static const struct dma_buf_ops fl_xbuf_ops = {
	.attach = fl_xbuf_attach,
	.detach = fl_xbuf_detach,
	.map_dma_buf = fl_xbuf_map,
	.unmap_dma_buf = fl_xbuf_unmap,
	.release = fl_xbuf_release,
	.begin_cpu_access = fl_xbuf_begin_cpu,
	.end_cpu_access = fl_xbuf_end_cpu,
	.mmap = fl_xbuf_mmap,
};

/*
 * A new dma-buf for @xb->slot, listed in @ep->exports; it holds a reference on
 * @ep and owns @xb (freed by its release). On failure @xb is freed too.
 */
static struct dma_buf *fl_xbuf_export(struct fl_ep *ep, struct fl_xbuf *xb, bool rdwr)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *dmabuf;

	info.ops = &fl_xbuf_ops;
	info.size = ep->slot_size;
	info.flags = rdwr ? O_RDWR : O_RDONLY;
	info.priv = xb;
	kref_get(&ep->ref);
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		fl_ep_put(ep);
		kfree(xb);
		return dmabuf;
	}
	xb->dmabuf = dmabuf;
	/* From here the release op drops the reference and frees @xb */
	mutex_lock(&ep->files_lock);
	list_add(&xb->node, &ep->exports);
	if (ep->dead) {
		mutex_unlock(&ep->files_lock);
		dma_buf_put(dmabuf);
		return ERR_PTR(-ENODEV);
	}
	mutex_unlock(&ep->files_lock);
	return dmabuf;
}

/*
 * The slot's first page, while the slots cannot be freed: unbind marks the
 * endpoint dead under files_lock before it frees them.
 */
static int fl_xbuf_find_page(struct fl_ep *ep, struct fl_xbuf *xb, size_t off)
{
	int ret = 0;

	mutex_lock(&ep->files_lock);
	if (ep->dead) {
		ret = -ENODEV;
	} else {
		xb->page = fl_slotmem_page(ep, off);
		if (!xb->page)
			ret = -ENXIO;
	}
	mutex_unlock(&ep->files_lock);
	if (ret == -ENXIO)
		dev_warn_ratelimited(ep->dev, "export: the DMA API cannot describe slot %u\n",
				     xb->slot);
	return ret;
}

/**
 * fl_export_slot() - FL_IOC_EXPORT after its checks (cdev.c): a dma-buf fd for one slot
 * @ep: the endpoint.
 * @x: the request, checked: slot in range, known flags, reserved fields zero.
 * @arg: where it came from, for the answer.
 *
 * The fd is installed only after the answer reached user space: a call that
 * fails leaves no fd behind (the rule of every framelink ioctl).
 *
 * Return: 0, -ENODEV (unbound), -ENXIO (the DMA API cannot describe the
 * slot's pages), -EFAULT, or the error of dma_buf_export() or
 * get_unused_fd_flags().
 */
int fl_export_slot(struct fl_ep *ep, struct fl_export *x, void __user *arg)
{
	size_t off = (size_t)x->slot * ep->slot_size;
	struct dma_buf *dmabuf;
	struct fl_xbuf *xb;
	int fd, ret;

	xb = kzalloc(sizeof(*xb), GFP_KERNEL);
	if (!xb)
		return -ENOMEM;
	xb->ep = ep;
	xb->slot = x->slot;
	INIT_LIST_HEAD(&xb->atts);
	ret = fl_xbuf_find_page(ep, xb, off);
	if (ret)
		goto free_xb;
	fd = get_unused_fd_flags(x->flags & FL_EXPORT_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0) {
		ret = fd;
		goto free_xb;
	}
	/* From here @xb belongs to the dma-buf */
	dmabuf = fl_xbuf_export(ep, xb, x->flags & FL_EXPORT_RDWR);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		goto put_fd;
	}
	x->fd = fd;
	x->size = ep->slot_size;
	x->offset = off;
	if (copy_to_user(arg, x, sizeof(*x))) {
		ret = -EFAULT;
		goto put_dmabuf;
	}
	fd_install(fd, dmabuf->file);
	return 0;

put_dmabuf:
	dma_buf_put(dmabuf);
put_fd:
	put_unused_fd(fd);
	return ret;
free_xb:
	kfree(xb);
	return ret;
}

/**
 * fl_export_zap() - zap every CPU mapping of every exported slot (unbind)
 * @ep: the endpoint, dead, after fl_slots_sync_mmaps() (so every mmap() of a
 *	dma-buf that passed the dead check has linked its VMA).
 */
void fl_export_zap(struct fl_ep *ep)
{
	struct fl_xbuf *xb;
	struct file *f;

	mutex_lock(&ep->files_lock);
	list_for_each_entry(xb, &ep->exports, node) {
		/*
		 * A dma-buf in its last close is still listed until its release op runs,
		 * but its inode, and the mapping in it, is put before that
		 * (__dentry_kill() puts the inode, then d_release reaches
		 * fl_xbuf_release()). No file reference left means no VMA maps it
		 * either (a VMA holds one): nothing to zap. The file itself is freed
		 * only after the release op, which waits for files_lock.
		 */
		f = fl_get_file_active(&xb->dmabuf->file);
		if (!f)
			continue;
		unmap_mapping_range(f->f_mapping, 0, 0, 1);
		/* a last reference dropped here is released later (deferred __fput) */
		fput(f);
	}
	mutex_unlock(&ep->files_lock);
}

/**
 * fl_export_keep_slots() - leave the slots to an importer still mapping one (unbind)
 * @ep: the endpoint, dead: no new importer mapping is made.
 *
 * Return: true when a map_dma_buf has not been unmapped: the slots are kept
 * and the last unmap frees them; false when unbind may free them now.
 */
bool fl_export_keep_slots(struct fl_ep *ep)
{
	bool keep;

	mutex_lock(&ep->files_lock);
	keep = ep->exp_mapped;
	if (keep) {
		fl_slotmem_keep(ep);
		ep->slots_kept = true;
	}
	mutex_unlock(&ep->files_lock);
	/* From here a last unmap may already have freed them */
	return keep;
}
