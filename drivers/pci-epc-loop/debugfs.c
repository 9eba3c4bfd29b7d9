// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: debugfs knobs, counters and fault injection.
 *
 * <debugfs>/pci-epc-loop/<device>/
 *   link        read: "up"/"down"; write "down" (surprise) or "up"
 *   rate_mbps   link model rate, 0 = unlimited
 *   setup_ns    link model per-transfer setup time
 *   fail_dma    fail the next N DMA transfers
 *   corrupt_dma flip a bit in the middle of each of the next N DMA chunks (the
 *               idealised and dw engines; a check of the data path's checks)
 *   drop_irq    drop the next N interrupts
 *   dup_irq     deliver the next N interrupts twice
 *   fail_irq    fail the next N raises (-EINVAL)
 *   irq_holdoff_us  an MSI stays pending this long before it is taken (writes
 *                   to a pending vector merge into it; msictl.c)
 *   stall       bitmask of stalled channels (reads first, then writes)
 *   stall_hold  1: a stalled channel stays stalled across link down
 *   corrupt_bar write "BAR OFFSET LENGTH": random bytes into a BAR
 *   stats       counters
 *   channels    per channel: direction, active transfer progress, queue
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "loop.h"

static struct dentry *loop_dbg_root;

static int loop_stats_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;
	struct loop_stats *st = &loop->stats;
	const struct {
		const char *name;
		atomic64_t *val;
	} rows[] = {
		{ "dma_xfers", &st->dma_xfers },
		{ "dma_bytes", &st->dma_bytes },
		{ "dma_errors", &st->dma_errors },
		{ "irq_intx", &st->irq_intx },
		{ "irq_msi", &st->irq_msi },
		{ "irq_msix", &st->irq_msix },
		{ "irq_dropped", &st->irq_dropped },
		{ "irq_held", &st->irq_held },
		{ "irq_merged", &st->irq_merged },
		{ "irq_failed", &st->irq_failed },
		{ "cfg_reads", &st->cfg_reads },
		{ "cfg_writes", &st->cfg_writes },
		{ "win_maps", &st->win_maps },
		{ "win_flushed", &st->win_flushed },
		{ "link_ups", &st->link_ups },
		{ "link_downs", &st->link_downs },
		{ "bme_blocked", &st->bme_blocked },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		seq_printf(s, "%-12s %lld\n", rows[i].name,
			   atomic64_read(rows[i].val));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(loop_stats);

static int loop_channels_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;
	unsigned int i;

	for (i = 0; i < loop->nchans_rd + loop->nchans_wr; i++) {
		struct loop_dma_chan *c = &loop->chans[i];
		size_t done = 0, total = 0;
		unsigned int queued = 0;
		struct loop_dma_desc *d;
		bool active;

		spin_lock_irq(&c->lock);
		active = c->active;
		if (active) {
			done = c->active->done;
			total = c->active->total;
		}
		list_for_each_entry(d, &c->issued, node)
			queued++;
		spin_unlock_irq(&c->lock);

		seq_printf(s, "%u %s %s %zu/%zu queued %u%s\n", i,
			   c->dir == DMA_DEV_TO_MEM ? "read" : "write",
			   active ? "active" : "idle", done, total, queued,
			   READ_ONCE(loop->stall_mask) & BIT(i) ? " stalled" : "");
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(loop_channels);

static int loop_link_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;

	seq_printf(s, "%s\n", loop_rc_up(loop) ? "up" : "down");
	return 0;
}

static int loop_link_open(struct inode *inode, struct file *file)
{
	return single_open(file, loop_link_show, inode->i_private);
}

static ssize_t loop_link_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct pci_epc_loop *loop = file_inode(file)->i_private;
	char buf[8] = {};
	int ret;

	if (copy_from_user(buf, ubuf, min(count, sizeof(buf) - 1)))
		return -EFAULT;

	if (sysfs_streq(buf, "down"))
		ret = loop_link_down(loop);
	else if (sysfs_streq(buf, "up"))
		ret = loop_link_up(loop);
	else
		ret = -EINVAL;
	return ret ? ret : count;
}

static const struct file_operations loop_link_fops = {
	.owner		= THIS_MODULE,
	.open		= loop_link_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= loop_link_write,
};

/*
 * A hostile root complex: overwrite BAR bytes with random data, as host
 * writes through the BAR would. Format: "BAR OFFSET LENGTH".
 */
static ssize_t loop_corrupt_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct pci_epc_loop *loop = file_inode(file)->i_private;
	unsigned int bar, off, len;
	unsigned long flags;
	phys_addr_t phys = 0;
	char buf[48] = {};
	u64 size = 0;

	if (copy_from_user(buf, ubuf, min(count, sizeof(buf) - 1)))
		return -EFAULT;
	if (sscanf(buf, "%u %i %i", &bar, &off, &len) != 3 ||
	    bar >= PCI_STD_NUM_BARS || !len)
		return -EINVAL;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	if (loop->fn[0].bar[bar].set) {
		phys = loop->fn[0].bar[bar].phys;
		size = loop->fn[0].bar[bar].size;
	}
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	if (!size || (u64)off + len > size)
		return -EINVAL;
	get_random_bytes(loop->pool_va + (phys - loop->pool_phys) + off, len);
	return count;
}

static const struct file_operations loop_corrupt_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= loop_corrupt_write,
};

static int loop_atomic_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int loop_atomic_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(loop_atomic_fops, loop_atomic_get, loop_atomic_set,
			 "%llu\n");

static int loop_stall_set(void *data, u64 val)
{
	struct pci_epc_loop *loop = data;

	WRITE_ONCE(loop->stall_mask, (u32)val);
	wake_up_all(&loop->stall_wq);
	return 0;
}

static int loop_stall_get(void *data, u64 *val)
{
	struct pci_epc_loop *loop = data;

	*val = READ_ONCE(loop->stall_mask);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(loop_stall_fops, loop_stall_get, loop_stall_set,
			 "0x%llx\n");

/**
 * loop_debugfs_init() - create the device's debugfs directory
 * @loop: the loopback
 */
void loop_debugfs_init(struct pci_epc_loop *loop)
{
	struct dentry *d;

	d = debugfs_create_dir(dev_name(loop->dev), loop_dbg_root);
	loop->dbg = d;

	debugfs_create_file("link", 0600, d, loop, &loop_link_fops);
	debugfs_create_u32("rate_mbps", 0600, d, &loop->rate_mbps);
	debugfs_create_u32("setup_ns", 0600, d, &loop->setup_ns);
	debugfs_create_file_unsafe("fail_dma", 0600, d, &loop->fail_dma,
				   &loop_atomic_fops);
	debugfs_create_file_unsafe("corrupt_dma", 0600, d, &loop->corrupt_dma,
				   &loop_atomic_fops);
	debugfs_create_file_unsafe("drop_irq", 0600, d, &loop->drop_irq,
				   &loop_atomic_fops);
	debugfs_create_file_unsafe("dup_irq", 0600, d, &loop->dup_irq,
				   &loop_atomic_fops);
	debugfs_create_file_unsafe("fail_irq", 0600, d, &loop->fail_irq,
				   &loop_atomic_fops);
	debugfs_create_u32("irq_holdoff_us", 0600, d, &loop->irq_holdoff_us);
	debugfs_create_file_unsafe("stall", 0600, d, loop, &loop_stall_fops);
	debugfs_create_u32("stall_hold", 0600, d, &loop->stall_hold);
	debugfs_create_file("corrupt_bar", 0200, d, loop, &loop_corrupt_fops);
	debugfs_create_file("stats", 0400, d, loop, &loop_stats_fops);
	debugfs_create_file("channels", 0400, d, loop, &loop_channels_fops);
	loop_perst_debugfs_init(loop, d);
	loop_dma_debugfs_init(loop, d);
	loop_rc_debugfs_init(loop, d);
	loop_intr_debugfs_init(loop, d);
	loop_win_init(loop, d);
	loop_watch_init(loop, d);
	loop_nvedma_init(loop, d);
}

/**
 * loop_debugfs_exit() - remove the device's debugfs directory
 * @loop: the loopback
 */
void loop_debugfs_exit(struct pci_epc_loop *loop)
{
	debugfs_remove_recursive(loop->dbg);
	loop->dbg = NULL;
}

/**
 * loop_debugfs_root_init() - create the module's debugfs directory
 */
void loop_debugfs_root_init(void)
{
	loop_dbg_root = debugfs_create_dir("pci-epc-loop", NULL);
}

/**
 * loop_debugfs_root_exit() - remove the module's debugfs directory
 */
void loop_debugfs_root_exit(void)
{
	debugfs_remove_recursive(loop_dbg_root);
	loop_dbg_root = NULL;
}
