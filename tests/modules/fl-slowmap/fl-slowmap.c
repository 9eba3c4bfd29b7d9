// SPDX-License-Identifier: GPL-2.0
/*
 * fl-slowmap: test helper that holds an mmap() open between the driver's ->mmap and the
 * moment mmap() links the VMA, so an unbind can be forced into that window (issue 8
 * item 10).
 *
 * /dev/fl-slowmap opens the device named by the "target" parameter (default
 * /dev/framelink-ep0) at its first ioctl() and forwards ioctl() to it. Its mmap() hands
 * the VMA to the target's file (vma_set_file(), as dma_buf_mmap() does), calls the
 * target's ->mmap and then sleeps delay_ms before returning: mmap() links the VMA, into
 * the target file's mapping, only after that. While it sleeps, the read-only parameter
 * in_mmap is 1.
 * A driver that zaps its mappings and frees the memory behind them without waiting for
 * such an mmap() leaves a mapping of freed memory.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>

static char *target = "/dev/framelink-ep0";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "device whose mmap() is slowed down");

static unsigned int delay_ms = 2000;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "sleep after the target's ->mmap, at most 10000");

/* 1 while an mmap() sleeps between the target's ->mmap and its return */
static int in_mmap;
module_param(in_mmap, int, 0444);
MODULE_PARM_DESC(in_mmap, "1 while an mmap() is held in the window (read-only)");

/*
 * The target is opened at the first ioctl, not in ->open: misc_open() holds misc_mtx
 * while it calls ->open, and the target is a misc device too.
 */
static struct file *fl_slowmap_target(struct file *file)
{
	struct file *inner = READ_ONCE(file->private_data);

	if (inner)
		return inner;
	inner = filp_open(target, O_RDWR, 0);
	if (IS_ERR(inner))
		return inner;
	if (cmpxchg(&file->private_data, NULL, inner)) {
		fput(inner);
		inner = READ_ONCE(file->private_data);
	}
	return inner;
}

static int fl_slowmap_open(struct inode *inode, struct file *file)
{
	file->private_data = NULL;
	return 0;
}

static int fl_slowmap_release(struct inode *inode, struct file *file)
{
	if (file->private_data)
		fput(file->private_data);
	return 0;
}

static long fl_slowmap_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct file *inner = fl_slowmap_target(file);

	if (IS_ERR(inner))
		return PTR_ERR(inner);
	if (!inner->f_op->unlocked_ioctl)
		return -ENOTTY;
	return inner->f_op->unlocked_ioctl(inner, cmd, arg);
}

static int fl_slowmap_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *inner = READ_ONCE(file->private_data);
	int ret;

	/* Opened by an ioctl first (the test's FL_IOC_INFO) */
	if (!inner || !inner->f_op->mmap)
		return -ENODEV;
	/* The VMA belongs to the target's file: its driver's unmap_mapping_range() sees it */
	vma_set_file(vma, inner);
	ret = inner->f_op->mmap(inner, vma);
	if (ret)
		return ret;
	WRITE_ONCE(in_mmap, 1);
	msleep(min(READ_ONCE(delay_ms), 10000U));
	WRITE_ONCE(in_mmap, 0);
	return 0;
}

static const struct file_operations fl_slowmap_fops = {
	.owner = THIS_MODULE,
	.open = fl_slowmap_open,
	.release = fl_slowmap_release,
	.unlocked_ioctl = fl_slowmap_ioctl,
	.mmap = fl_slowmap_mmap,
};

static struct miscdevice fl_slowmap_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "fl-slowmap",
	.fops = &fl_slowmap_fops,
};

module_misc_device(fl_slowmap_misc);

MODULE_DESCRIPTION("framelink test helper: an mmap() held between ->mmap and VMA linking");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
