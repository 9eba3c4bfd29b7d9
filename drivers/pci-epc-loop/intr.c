// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the controller's interrupt line, shared by link up and the
 * eDMA library (jetpack profile).
 *
 * On the Orin, NVIDIA's eDMA library requests the controller's "intr" line
 * (IRQF_SHARED) with a hard handler that disables the line and a thread
 * that calls the clients' completion callbacks and enables it again at the
 * end (nvidia-oot tegra-pcie-edma.c; Documentation/pci-epc-loop.rst). While
 * a callback runs, the controller's own events on that line, link up among
 * them (tegra_pcie_ep_hard_irq()), wait. The lab does the same: the eDMA
 * library's interrupt work holds the line off around its callbacks
 * (nvedma.c), and a link up raised meanwhile is delivered when the line is
 * enabled again, so a slow callback stalls link up here too. Only the eDMA
 * library disables the line: on other profiles it is always on.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/irq_work.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <linux/wait.h>

#include "loop.h"

/* A line off this long is a stuck callback: link up goes through anyway */
#define LOOP_INTR_WAIT_MS	10000

/**
 * loop_intr_init() - the line starts enabled
 * @loop: the loopback
 */
void loop_intr_init(struct pci_epc_loop *loop)
{
	spin_lock_init(&loop->intr.lock);
	init_waitqueue_head(&loop->intr.wq);
}

/**
 * loop_intr_disable() - the eDMA interrupt thread starts: the line is off
 * @loop: the loopback
 *
 * Context: process context (the library's interrupt work).
 */
void loop_intr_disable(struct pci_epc_loop *loop)
{
	struct loop_intr *li = &loop->intr;

	spin_lock_irq(&li->lock);
	if (!li->off++)
		li->off_since_ns = ktime_get_ns();
	spin_unlock_irq(&li->lock);
}

/**
 * loop_intr_enable() - the eDMA interrupt thread is done: the line is on
 * @loop: the loopback
 *
 * A link up raised while the line was off goes on now.
 */
void loop_intr_enable(struct pci_epc_loop *loop)
{
	struct loop_intr *li = &loop->intr;
	bool wake = false;

	spin_lock_irq(&li->lock);
	if (!WARN_ON_ONCE(!li->off) && !--li->off) {
		li->off_max_ns = max(li->off_max_ns, ktime_get_ns() - li->off_since_ns);
		wake = li->linkup_pending;
		li->linkup_pending = false;
	}
	spin_unlock_irq(&li->lock);
	if (wake)
		wake_up_all(&li->wq);
}

/**
 * loop_intr_linkup() - the controller raises link up on its line
 * @loop: the loopback
 * @hardirq: deliver in hard IRQ context (NVIDIA's endpoint core), else here
 *
 * Returns once the EPFs were told (the root enumerates after it). While the
 * line is off the link up waits for it, at most LOOP_INTR_WAIT_MS.
 *
 * Context: process context, no EPC lock held.
 */
void loop_intr_linkup(struct pci_epc_loop *loop, bool hardirq)
{
	struct loop_intr *li = &loop->intr;
	bool held;

	spin_lock_irq(&li->lock);
	held = li->off;
	if (held) {
		li->linkup_pending = true;
		li->linkup_held++;
	}
	spin_unlock_irq(&li->lock);

	if (held && !wait_event_timeout(li->wq, !READ_ONCE(li->linkup_pending),
					msecs_to_jiffies(LOOP_INTR_WAIT_MS))) {
		spin_lock_irq(&li->lock);
		li->linkup_pending = false;
		spin_unlock_irq(&li->lock);
		dev_warn(loop->dev, "controller interrupt line off for %u ms: link up raised anyway\n",
			 LOOP_INTR_WAIT_MS);
	}
	if (!hardirq) {
		pci_epc_linkup(loop->epc);
		return;
	}
	irq_work_queue(&loop->linkup_irq_work);
	irq_work_sync(&loop->linkup_irq_work);
}

static int loop_intr_show(struct seq_file *s, void *unused)
{
	struct loop_intr *li = &((struct pci_epc_loop *)s->private)->intr;

	spin_lock_irq(&li->lock);
	seq_printf(s, "off %u\nlinkup_held %llu\noff_max_us %llu\n", li->off,
		   li->linkup_held, div_u64(li->off_max_ns, NSEC_PER_USEC));
	spin_unlock_irq(&li->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(loop_intr);

/**
 * loop_intr_debugfs_init() - "intr": the line's state and counters
 * @loop: the loopback
 * @dir: its debugfs directory
 */
void loop_intr_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir)
{
	debugfs_create_file("intr", 0400, dir, loop, &loop_intr_fops);
}
