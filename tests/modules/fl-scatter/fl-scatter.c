// SPDX-License-Identifier: GPL-2.0
/*
 * fl-scatter: test helper that exports a dma-buf whose pages are apart by construction
 * (issue 28 item 3): pages 0, 2 and 4 of one order-3 block, so no two are adjacent and a
 * device without an IOMMU (the lab's) maps them as three DMA segments. framelink-host's
 * IMPORT takes one segment only and must refuse the buffer with -EOPNOTSUPP; the kselftest
 * (import.scattered_eopnotsupp) takes its buffer here when /dev/fl-scatter exists instead
 * of hoping that a heap's pages come out apart.
 *
 * ioctl(FL_SCATTER_NEW) on /dev/fl-scatter returns a new dma-buf fd (O_CLOEXEC) of three
 * pages, zeroed. No CPU access ops: DMA_BUF_IOCTL_SYNC then has nothing to do.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/gfp.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <framelink/compat.h>

#define FL_SCATTER_PAGES	3
#define FL_SCATTER_ORDER	3		/* 8 pages, of which 0, 2 and 4 are used */
#define FL_SCATTER_NEW		_IO('S', 1)

static struct sg_table *fl_scatter_map(struct dma_buf_attachment *at,
				       enum dma_data_direction dir)
{
	struct page *block = at->dmabuf->priv;
	struct scatterlist *sg;
	struct sg_table *sgt;
	int i, ret;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, FL_SCATTER_PAGES, GFP_KERNEL);
	if (ret)
		goto free_sgt;
	/* every other page: a gap of one page between two entries, never merged */
	for_each_sgtable_sg(sgt, sg, i)
		sg_set_page(sg, block + 2 * i, PAGE_SIZE, 0);
	ret = dma_map_sgtable(at->dev, sgt, dir, 0);
	if (ret)
		goto free_table;
	return sgt;

free_table:
	sg_free_table(sgt);
free_sgt:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void fl_scatter_unmap(struct dma_buf_attachment *at, struct sg_table *sgt,
			     enum dma_data_direction dir)
{
	dma_unmap_sgtable(at->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

static void fl_scatter_release(struct dma_buf *buf)
{
	__free_pages(buf->priv, FL_SCATTER_ORDER);
}

static const struct dma_buf_ops fl_scatter_ops = {
	.map_dma_buf = fl_scatter_map,
	.unmap_dma_buf = fl_scatter_unmap,
	.release = fl_scatter_release,
};

static long fl_scatter_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *buf;
	struct page *block;
	int fd;

	if (cmd != FL_SCATTER_NEW)
		return -ENOTTY;
	block = alloc_pages(GFP_KERNEL | __GFP_ZERO, FL_SCATTER_ORDER);
	if (!block)
		return -ENOMEM;
	info.ops = &fl_scatter_ops;
	info.size = FL_SCATTER_PAGES * PAGE_SIZE;
	info.flags = O_RDWR;
	info.priv = block;
	buf = dma_buf_export(&info);
	if (IS_ERR(buf)) {
		__free_pages(block, FL_SCATTER_ORDER);
		return PTR_ERR(buf);
	}
	fd = dma_buf_fd(buf, O_CLOEXEC);
	if (fd < 0)
		dma_buf_put(buf);	/* its release frees the pages */
	return fd;
}

static const struct file_operations fl_scatter_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = fl_scatter_ioctl,
};

static struct miscdevice fl_scatter_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "fl-scatter",
	.fops = &fl_scatter_fops,
};

module_misc_device(fl_scatter_dev);

MODULE_DESCRIPTION("framelink test helper: a dma-buf of pages apart by construction");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
FL_MODULE_IMPORT_NS_DMA_BUF;
