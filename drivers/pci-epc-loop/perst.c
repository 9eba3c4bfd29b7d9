// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the PERST# lifecycle of a Tegra234 endpoint controller.
 *
 * On the Orin the controller core is clocked and out of reset only while
 * the root complex keeps PERST# deasserted (pcie-tegra194.c): start only
 * enables the PERST# GPIO interrupt; a deassert powers the core up,
 * programs it and sends epc_init, then enables the LTSSM; an assert waits
 * for the link to drop, asserts the core resets and stops the core clock.
 * Mainline (6.12 and newer) sends epc_deinit at the *next* deassert, once
 * the clocks are back; NVIDIA's JetPack kernel sends it first thing at the
 * assert. Neither sends a link-down event. A register access while the
 * core is in reset is a bus timeout (an SError) on the board: here the EPC
 * operations that touch the controller fail with -EIO and log it once per
 * assert (a log line, not a WARN: the test runner fails on WARNING).
 *
 * The lab's root complex is always booted, so after start it deasserts
 * PERST# by itself (the deassert runs from the link workqueue), unless the
 * debugfs knob "perst" holds it asserted; "perst assert" and "deassert"
 * model a host reboot. On the generic profile the knob is a plain link
 * down / up and epc_init is sent at probe, as before.
 *
 * Locking: perst_lock serialises transitions (the deassert work after
 * start and the knob). It is taken with no EPC lock held, and the EPC
 * operations never take it (they read perst_on locklessly), because EPFs
 * call those operations from the epc_init / epc_deinit notifications sent
 * under it. Under it: link_lock (loop_link_up/down), then the EPC core's
 * list_lock and epf->lock (notifications).
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "loop.h"

/* The controller is started and not going away: its PERST# IRQ is enabled */
static bool loop_perst_started(struct pci_epc_loop *loop)
{
	bool started;

	spin_lock(&loop->state_lock);
	started = loop->started && !loop->removing;
	spin_unlock(&loop->state_lock);
	return started;
}

static void loop_perst_notify_init(struct pci_epc_loop *loop)
{
	lockdep_assert_held(&loop->perst_lock);
	atomic64_inc(&loop->perst_inits);
	loop->perst_inited = true;
	dev_info_ratelimited(loop->dev, "epc_init to the endpoint functions\n");
	pci_epc_init_notify(loop->epc);
}

static void loop_perst_notify_deinit(struct pci_epc_loop *loop)
{
	lockdep_assert_held(&loop->perst_lock);
	if (!loop->perst_inited)
		return;
	atomic64_inc(&loop->perst_deinits);
	loop->perst_inited = false;
	dev_info_ratelimited(loop->dev, "epc_deinit to the endpoint functions\n");
	fl_epc_deinit_notify(loop->epc);
}

/*
 * Deassert: the core comes out of reset with its registers at their reset
 * values (what the EPF programmed is gone), mainline tells EPFs epc_deinit
 * for the previous session now that the clocks run, then epc_init.
 */
static void loop_perst_deassert_event(struct pci_epc_loop *loop)
{
	atomic64_inc(&loop->perst_deasserts);
	dev_info_ratelimited(loop->dev, "PERST# deasserted: controller out of reset\n");
	loop_cfg_init(loop);
	WRITE_ONCE(loop->perst_on, true);
	if (!loop->perst_deinit_at_assert)
		loop_perst_notify_deinit(loop);
	loop_perst_notify_init(loop);
}

/*
 * Assert: JetPack tells EPFs epc_deinit while the core still runs. The
 * link drops (the host side as after "echo down > link") without a
 * link-down event to EPFs, then the core is reset: from here on every
 * controller access faults until the next deassert.
 */
static void loop_perst_assert_event(struct pci_epc_loop *loop)
{
	atomic64_inc(&loop->perst_asserts);
	dev_info_ratelimited(loop->dev, "PERST# asserted: link down, controller reset\n");
	if (loop->perst_deinit_at_assert)
		loop_perst_notify_deinit(loop);

	/* Not notified: loop_link_down() sends no link-down event */
	mutex_lock(&loop->link_lock);
	loop->ep_notified = false;
	mutex_unlock(&loop->link_lock);
	loop_link_down(loop);

	WRITE_ONCE(loop->perst_on, false);
	atomic_set(&loop->perst_logged, 0);
}

/* Let a started controller follow the PERST# line; perst_lock held */
static void loop_perst_apply(struct pci_epc_loop *loop)
{
	int ret;

	lockdep_assert_held(&loop->perst_lock);
	if (!loop_perst_started(loop))
		return;

	if (loop->perst_line) {
		if (loop->perst_on)
			loop_perst_assert_event(loop);
		return;
	}
	if (!loop->perst_on)
		loop_perst_deassert_event(loop);
	/* The LTSSM is enabled last: link up, the host enumerates */
	ret = loop_link_up(loop);
	if (ret && ret != -ENOLINK)
		dev_err(loop->dev, "link up after PERST# deassert failed: %d\n",
			ret);
}

static void loop_perst_work(struct work_struct *work)
{
	struct pci_epc_loop *loop = container_of(work, struct pci_epc_loop,
						 perst_work);

	mutex_lock(&loop->perst_lock);
	loop_perst_apply(loop);
	mutex_unlock(&loop->perst_lock);
}

/**
 * loop_perst_init() - set up the PERST# state of the profile
 * @loop: the loopback (profile parsed)
 *
 * The lab's root complex is booted: PERST# is deasserted. A PERST#
 * profile's core stays in reset until a started controller sees that.
 */
void loop_perst_init(struct pci_epc_loop *loop)
{
	mutex_init(&loop->perst_lock);
	INIT_WORK(&loop->perst_work, loop_perst_work);
	loop->perst_line = false;
	loop->perst_on = !loop->perst_model;
	loop->perst_inited = false;
	atomic_set(&loop->perst_logged, 0);
}

/**
 * loop_perst_probe_done() - the EPC exists: generic sends epc_init now
 * @loop: the loopback
 */
void loop_perst_probe_done(struct pci_epc_loop *loop)
{
	if (loop->perst_model)
		return;
	mutex_lock(&loop->perst_lock);
	loop_perst_notify_init(loop);
	mutex_unlock(&loop->perst_lock);
}

/**
 * loop_perst_start() - EPC start on a PERST# profile
 * @loop: the loopback
 *
 * Start enables the controller's PERST# interrupt (tegra_pcie_dw_start_link);
 * the root deasserts PERST# (unless the knob holds it), which the link
 * workqueue delivers as the interrupt thread would.
 *
 * Context: epc->lock held; nothing is done here but queueing.
 */
void loop_perst_start(struct pci_epc_loop *loop)
{
	queue_work(loop->link_wq, &loop->perst_work);
}

/**
 * loop_perst_link_allowed() - may the link train now
 * @loop: the loopback
 *
 * Return: false while PERST# holds the controller in reset.
 */
bool loop_perst_link_allowed(struct pci_epc_loop *loop)
{
	return READ_ONCE(loop->perst_on);
}

/**
 * loop_perst_check() - an EPC operation is about to touch the controller
 * @loop: the loopback
 * @op: name of the operation, for the log
 *
 * Context: any; may be called under EPC and EPF locks.
 * Return: 0, or -EIO while PERST# holds the core in reset (logged once per
 * assert; the board takes a bus timeout there).
 */
int loop_perst_check(struct pci_epc_loop *loop, const char *op)
{
	if (likely(READ_ONCE(loop->perst_on)))
		return 0;
	atomic64_inc(&loop->perst_faults);
	if (!atomic_xchg(&loop->perst_logged, 1))
		dev_err(loop->dev,
			"%s while PERST# holds the controller in reset (a bus timeout on the board)\n",
			op);
	return -EIO;
}

/**
 * loop_perst_remove() - device removal: EPFs release what epc_init took
 * @loop: the loopback (link work finished)
 */
void loop_perst_remove(struct pci_epc_loop *loop)
{
	mutex_lock(&loop->perst_lock);
	loop_perst_notify_deinit(loop);
	mutex_unlock(&loop->perst_lock);
}

static int loop_perst_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;

	seq_printf(s, "%s\n", READ_ONCE(loop->perst_line) ? "asserted" :
		   "deasserted");
	return 0;
}

static int loop_perst_open(struct inode *inode, struct file *file)
{
	return single_open(file, loop_perst_show, inode->i_private);
}

/* The root complex drives PERST# (a host reboot is assert, then deassert) */
static int loop_perst_set(struct pci_epc_loop *loop, bool assert)
{
	int ret = 0;

	mutex_lock(&loop->perst_lock);
	spin_lock(&loop->state_lock);
	if (loop->removing)
		ret = -ENODEV;
	spin_unlock(&loop->state_lock);
	if (ret)
		goto out_unlock;
	WRITE_ONCE(loop->perst_line, assert);
	if (!loop->perst_model)
		ret = assert ? loop_link_down(loop) : loop_link_up(loop);
	else
		loop_perst_apply(loop);
out_unlock:
	mutex_unlock(&loop->perst_lock);
	return ret;
}

static ssize_t loop_perst_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct pci_epc_loop *loop = file_inode(file)->i_private;
	char buf[12] = {};
	int ret;

	if (copy_from_user(buf, ubuf, min(count, sizeof(buf) - 1)))
		return -EFAULT;

	if (sysfs_streq(buf, "assert"))
		ret = loop_perst_set(loop, true);
	else if (sysfs_streq(buf, "deassert"))
		ret = loop_perst_set(loop, false);
	else
		ret = -EINVAL;
	return ret ? ret : count;
}

static const struct file_operations loop_perst_fops = {
	.owner		= THIS_MODULE,
	.open		= loop_perst_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= loop_perst_write,
};

static int loop_perst_stats_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;

	seq_printf(s, "line         %s\n",
		   READ_ONCE(loop->perst_line) ? "asserted" : "deasserted");
	seq_printf(s, "controller   %s\n",
		   READ_ONCE(loop->perst_on) ? "on" : "reset");
	seq_printf(s, "epc_inits    %lld\n", atomic64_read(&loop->perst_inits));
	seq_printf(s, "epc_deinits  %lld\n",
		   atomic64_read(&loop->perst_deinits));
	seq_printf(s, "asserts      %lld\n",
		   atomic64_read(&loop->perst_asserts));
	seq_printf(s, "deasserts    %lld\n",
		   atomic64_read(&loop->perst_deasserts));
	seq_printf(s, "faults       %lld\n", atomic64_read(&loop->perst_faults));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(loop_perst_stats);

/**
 * loop_perst_debugfs_init() - the "perst" knob and "perst_stats"
 * @loop: the loopback
 * @dir: the device's debugfs directory
 */
void loop_perst_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir)
{
	debugfs_create_file("perst", 0600, dir, loop, &loop_perst_fops);
	debugfs_create_file("perst_stats", 0400, dir, loop,
			    &loop_perst_stats_fops);
}
