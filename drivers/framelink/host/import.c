// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: dma-bufs as frame sources (FL_IOC_IMPORT, FL_IOC_UNIMPORT; issue 11).
 *
 * A camera's buffer (VIDIOC_EXPBUF), a dma-heap buffer or a GPU buffer is sent from where
 * it is: IMPORT attaches the dma-buf to the PCI function and maps it once for the endpoint
 * to read. It then has a buffer index past the own buffers (fl_host.bufs[nbufs..nslots - 1])
 * and goes through SUBMIT, the tx ring and REAP like an own buffer, with the same ownership
 * states: nothing on the data path knows it is an import except that it needs no cache
 * maintenance from us and counts in fl_stats.tx_imported.
 *
 * One DMA segment only: a frame is one fl_tx_desc, one bus address. An IOMMU joins a
 * scatter-gather buffer into one segment; without one (the lab, a board with the SMMU off
 * for PCIe) only a physically contiguous buffer (vb2-dma-contig, CMA) maps so. Segments
 * that the DMA API returned separately but that follow each other on the bus count as one.
 *
 * No cache maintenance here: the mapping is the exporter's, and the dma-buf rule is that a
 * CPU writer brackets its writes with DMA_BUF_IOCTL_SYNC, which the exporter turns into
 * syncs of every attachment's mapping, ours included. A device writer needs none.
 *
 * Implicit fences (fence.c): SUBMIT waits for the buffer's write fences, at most
 * import_fence_ms, and the buffer carries a read fence of ours while the endpoint may read
 * the frame, signalled at its completion or failure.
 *
 * Lifetime: an import holds a dma-buf reference, an attachment and its mapping. It is
 * unmapped only when no frame from it can be read any more: at UNIMPORT (refused while the
 * buffer is not the app's), at the last close after its queue reset, and at remove() once
 * bus mastering is off.
 *
 * Copyright (C) 2026 The framelink authors
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/kmemleak.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "host.h"

FL_MODULE_IMPORT_NS_DMA_BUF;

static unsigned int import_fence_ms = 1000;
module_param(import_fence_ms, uint, 0644);
MODULE_PARM_DESC(import_fence_ms,
		 "longest SUBMIT waits for an import's write fences, ms (0: fail at once; default 1000)");

/**
 * struct fl_host_import - one imported dma-buf
 * @dmabuf: the dma-buf (our reference).
 * @attach: its attachment to the PCI function.
 * @sgt: the attachment's mapping, %DMA_TO_DEVICE.
 * @dma: bus address of its first byte.
 * @len: bytes that follow @dma on the bus, at most the dma-buf's size.
 * @serial: unique among the imports since load: this import, not one that reuses its
 *	memory (fl_import_add()'s take-back).
 * @rfences: read fences published while the endpoint may read a frame from it.
 */
struct fl_host_import {
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	dma_addr_t dma;
	u64 len;
	u64 serial;
	struct fl_rfences rfences;
};

static atomic64_t fl_import_serial = ATOMIC64_INIT(0);

static void fl_import_release(struct fl_host_import *imp)
{
	fl_rfences_fini(&imp->rfences, imp->dmabuf->resv);
	if (imp->sgt)
		fl_dma_buf_unmap(imp->attach, imp->sgt, DMA_TO_DEVICE);
	if (imp->attach)
		dma_buf_detach(imp->dmabuf, imp->attach);
	dma_buf_put(imp->dmabuf);
	kfree(imp);
}

/* Contiguous bus runs of the mapping; @imp's address and length are the first run's. */
static u32 fl_import_runs(struct fl_host_import *imp)
{
	struct scatterlist *sg;
	dma_addr_t next = 0;
	u32 runs = 0;
	int i;

	for_each_sgtable_dma_sg(imp->sgt, sg, i) {
		if (!runs || sg_dma_address(sg) != next) {
			if (!runs++)
				imp->dma = sg_dma_address(sg);
		}
		if (runs == 1)
			imp->len += sg_dma_len(sg);
		next = sg_dma_address(sg) + sg_dma_len(sg);
	}
	imp->len = min_t(u64, imp->len, imp->dmabuf->size);
	return runs;
}

/* Take, attach and map the dma-buf @fd; a log line says why it was refused. */
static struct fl_host_import *fl_import_map(struct fl_host *host, int fd, u32 *runs)
{
	struct fl_host_import *imp;
	int ret;

	imp = kzalloc(sizeof(*imp), GFP_KERNEL);
	if (!imp)
		return ERR_PTR(-ENOMEM);
	imp->serial = atomic64_inc_return(&fl_import_serial);
	if (fl_rfences_init(&imp->rfences)) {
		kfree(imp);
		return ERR_PTR(-ENOMEM);
	}
	imp->dmabuf = dma_buf_get(fd);
	if (IS_ERR(imp->dmabuf)) {
		/* -EBADF: no file; -EINVAL: a file that is not a dma-buf */
		fl_rfences_fini(&imp->rfences, NULL);
		kfree(imp);
		return ERR_PTR(-EBADF);
	}
	imp->attach = dma_buf_attach(imp->dmabuf, host->dev);
	if (IS_ERR(imp->attach)) {
		ret = PTR_ERR(imp->attach);
		imp->attach = NULL;
		dev_err_ratelimited(host->dev, "import: %s refused the attachment (%d)\n",
				    imp->dmabuf->exp_name, ret);
		goto release;
	}
	imp->sgt = fl_dma_buf_map(imp->attach, DMA_TO_DEVICE);
	if (IS_ERR(imp->sgt)) {
		ret = PTR_ERR(imp->sgt);
		imp->sgt = NULL;
		dev_err_ratelimited(host->dev, "import: %s could not map for the device (%d)\n",
				    imp->dmabuf->exp_name, ret);
		goto release;
	}
	*runs = fl_import_runs(imp);
	if (*runs != 1 || !imp->len) {
		dev_err_ratelimited(host->dev,
				    "import: %s buffer of %zu bytes maps to %u DMA segments; a frame must be one (a contiguous buffer, or an IOMMU)\n",
				    imp->dmabuf->exp_name, imp->dmabuf->size, *runs);
		ret = -EOPNOTSUPP;
		goto release;
	}
	return imp;

release:
	fl_import_release(imp);
	return ERR_PTR(ret);
}

/* A free import index (fl_host.lock held), or -ENOSPC. */
static int fl_import_slot(struct fl_host *host)
{
	u32 i;

	for (i = host->nbufs; i < host->nslots; i++)
		if (!host->bufs[i].imp && host->bufs[i].state == FL_BUF_APP)
			return i;
	return -ENOSPC;
}

/* Clear import index @i (fl_host.lock held); the caller releases what it returns. */
static struct fl_host_import *fl_import_unlink(struct fl_host *host, u32 i)
{
	struct fl_host_import *imp = host->bufs[i].imp;

	host->bufs[i].imp = NULL;
	host->bufs[i].len = 0;
	host->bufs[i].dma = 0;
	return imp;
}

/**
 * fl_import_add() - FL_IOC_IMPORT
 * @host: the device.
 * @argp: struct fl_import in user space.
 *
 * Return: 0 or the errors listed at struct fl_import.
 */
int fl_import_add(struct fl_host *host, void __user *argp)
{
	struct fl_host_import *imp, *cur;
	struct fl_import req;
	u32 runs = 0, len = 0;
	u64 serial = 0;
	int idx;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.reserved[0] || req.reserved[1])
		return -EINVAL;

	/*
	 * Attached and mapped under the lock: remove() (which sets dead under it) cannot come
	 * in between, so a device that went away is never attached to (67-host-remove). The
	 * lock order is the one fl_import_drop() has: fl_host.lock, then the exporter's.
	 */
	mutex_lock(&host->lock);
	idx = host->dead ? -ENODEV : fl_import_slot(host);
	if (idx >= 0) {
		imp = fl_import_map(host, req.fd, &runs);
		if (IS_ERR(imp)) {
			idx = PTR_ERR(imp);
		} else {
			len = min_t(u64, imp->len, U32_MAX);
			serial = imp->serial;
			host->bufs[idx].imp = imp;
			host->bufs[idx].dma = imp->dma;
			host->bufs[idx].len = len;
		}
	}
	mutex_unlock(&host->lock);
	if (idx < 0)
		return idx;

	req.buf = idx;
	req.segments = runs;
	req.size = len;
	if (copy_to_user(argp, &req, sizeof(req))) {
		/*
		 * The app never learnt the index: take this import back, unless it is in use
		 * or gone (an UNIMPORT that guessed the index, then another IMPORT there).
		 */
		mutex_lock(&host->lock);
		cur = host->bufs[idx].imp;
		imp = NULL;
		if (cur && cur->serial == serial && host->bufs[idx].state == FL_BUF_APP)
			imp = fl_import_unlink(host, idx);
		mutex_unlock(&host->lock);
		if (imp)
			fl_import_release(imp);
		return -EFAULT;
	}
	return 0;
}

/**
 * fl_import_remove() - FL_IOC_UNIMPORT
 * @host: the device.
 * @argp: struct fl_import in user space (@buf).
 *
 * Return: 0; -EINVAL (not an import, reserved fields), -EBUSY (a frame from it in flight
 * or its completion not reaped), -ENODEV (removed: the imports are gone), -EFAULT.
 */
int fl_import_remove(struct fl_host *host, void __user *argp)
{
	struct fl_host_import *imp = NULL;
	struct fl_import req;
	int ret = 0;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.reserved[0] || req.reserved[1])
		return -EINVAL;

	mutex_lock(&host->lock);
	if (host->dead)
		ret = -ENODEV;	/* remove() dropped every import already */
	else if (req.buf < host->nbufs || req.buf >= host->nslots || !host->bufs[req.buf].imp)
		ret = -EINVAL;
	else if (host->bufs[req.buf].state != FL_BUF_APP)
		ret = -EBUSY;
	else
		imp = fl_import_unlink(host, req.buf);
	mutex_unlock(&host->lock);
	if (imp)
		fl_import_release(imp);
	return ret;
}

/**
 * fl_import_drop() - release imports no frame can be read from any more
 * @host: the device; fl_host.lock held.
 * @all: every import (remove(), bus mastering off); otherwise those owned by the app.
 */
void fl_import_drop(struct fl_host *host, bool all)
{
	u32 i;

	lockdep_assert_held(&host->lock);
	for (i = host->nbufs; i < host->nslots; i++) {
		if (!host->bufs[i].imp || (!all && host->bufs[i].state != FL_BUF_APP))
			continue;
		fl_import_release(fl_import_unlink(host, i));
	}
}

/**
 * fl_import_keep() - remove() could not stop the endpoint: keep every import for good
 * @host: the device; fl_host.lock held.
 *
 * The endpoint may still write an imported buffer, so it stays attached and mapped, never
 * released (as the own buffers are leaked then); kmemleak is told.
 *
 * Return: the number of imports kept.
 */
u32 fl_import_keep(struct fl_host *host)
{
	u32 i, n = 0;

	lockdep_assert_held(&host->lock);
	for (i = host->nbufs; i < host->nslots; i++) {
		if (!host->bufs[i].imp)
			continue;
		kmemleak_not_leak(host->bufs[i].imp);
		n++;
	}
	return n;
}

/**
 * fl_import_read_begin() - a frame from import @buf is about to be queued
 * @host: the device; fl_host.lock held.
 * @buf: an import index with an import.
 *
 * Return: 0 (a read fence published); -EINPROGRESS (write fences pending: nothing
 * published, wait with fl_import_wait_writers()); -ENOMEM.
 */
int fl_import_read_begin(struct fl_host *host, u32 buf)
{
	struct fl_host_import *imp = host->bufs[buf].imp;

	lockdep_assert_held(&host->lock);
	return fl_rfences_begin(&imp->rfences, imp->dmabuf->resv);
}

/**
 * fl_import_read_end() - the endpoint reads a frame from import @buf no more
 * @host: the device; fl_host.lock held.
 * @buf: a buffer index; nothing happens unless it is an import.
 */
void fl_import_read_end(struct fl_host *host, u32 buf)
{
	lockdep_assert_held(&host->lock);
	if (buf >= host->nbufs && buf < host->nslots && host->bufs[buf].imp)
		fl_rfences_end(&host->bufs[buf].imp->rfences);
}

/**
 * fl_import_dmabuf_get() - a reference on the dma-buf of import @buf
 * @host: the device; fl_host.lock held.
 * @buf: an import index with an import.
 *
 * Return: the dma-buf, for fl_import_wait_writers() once the lock is dropped.
 */
struct dma_buf *fl_import_dmabuf_get(struct fl_host *host, u32 buf)
{
	struct dma_buf *dmabuf = host->bufs[buf].imp->dmabuf;

	lockdep_assert_held(&host->lock);
	get_dma_buf(dmabuf);
	return dmabuf;
}

/**
 * fl_import_wait_writers() - wait for a dma-buf's write fences, up to a SUBMIT's deadline
 * @host: the device; fl_host.lock not held.
 * @dmabuf: from fl_import_dmabuf_get(); its reference is dropped here.
 * @deadline: jiffies; 0 the first time, set here to now + import_fence_ms.
 *
 * Return: 0 (signalled: try again); -ETIMEDOUT (logged); -EINTR.
 */
int fl_import_wait_writers(struct fl_host *host, struct dma_buf *dmabuf,
			   unsigned long *deadline)
{
	unsigned int ms = READ_ONCE(import_fence_ms);
	long left;
	int ret;

	if (!*deadline)
		*deadline = (jiffies + msecs_to_jiffies(ms)) | 1;
	left = (long)(*deadline - jiffies);
	ret = left > 0 ? fl_rfences_wait_writers(dmabuf->resv, left) : -ETIMEDOUT;
	if (ret == -ETIMEDOUT)
		dev_warn_ratelimited(host->dev,
				     "import: %s still being written after %u ms (import_fence_ms): frame refused\n",
				     dmabuf->exp_name, ms);
	dma_buf_put(dmabuf);
	return ret;
}
