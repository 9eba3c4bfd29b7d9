// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: link state (start/stop, link down/up); the link model is
 * in model.c.
 *
 * Locking. The EPC core calls start/stop with epc->lock held, and EPFs call
 * EPC ops from under their own locks, which they may also take in paths
 * that run under locks of driver probing (misc_mtx, ...). Bringing the host
 * side up or down probes or removes drivers under pci_rescan_remove_lock.
 * So nothing here that touches the host bridge runs under epc->lock:
 * start/stop only flip state under state_lock and queue work on the
 * ordered link workqueue, as a controller's link-up/link-down interrupt
 * would. EPF notifications (pci_epc_linkup/linkdown, bus master enable)
 * are sent with no lock held.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/workqueue.h>

#include "loop.h"

static void loop_set_ep_up(struct pci_epc_loop *loop, bool up)
{
	spin_lock(&loop->state_lock);
	WRITE_ONCE(loop->ep_up, up);
	spin_unlock(&loop->state_lock);
	loop_dma_link_changed(loop);
	/* No eDMA-library copy touches host memory once this returns */
	if (!up)
		loop_nvedma_link_down(loop);
}

static void loop_set_rc_up(struct pci_epc_loop *loop, bool up)
{
	spin_lock(&loop->state_lock);
	WRITE_ONCE(loop->rc_up, up);
	spin_unlock(&loop->state_lock);
}

/* The controller's link-up interrupt: hard IRQ context, as on the Orin */
static void loop_linkup_hardirq(struct irq_work *work)
{
	struct pci_epc_loop *loop = container_of(work, struct pci_epc_loop,
						 linkup_irq_work);

	pci_epc_linkup(loop->epc);
}

/*
 * Tell EPFs the link is up. NVIDIA's kernels raise it from the controller's
 * hard IRQ handler (tegra_pcie_ep_hard_irq -> dw_pcie_ep_linkup(); JetPack 6
 * through the atomic notifier, JetPack 7 through event_ops->link_up): so does
 * the jetpack profile on a kernel with NVIDIA's endpoint core. Mainline's
 * core takes mutexes in pci_epc_linkup() (its Tegra driver calls it from the
 * IRQ thread since 6.4), so elsewhere it is called from process context.
 * Either way it waits while the eDMA library holds the controller's line
 * off (intr.c), and returns once EPFs were told, so the root enumerates
 * after it.
 */
static void loop_link_notify_up(struct pci_epc_loop *loop)
{
	loop_intr_linkup(loop, loop->linkup_hardirq);
}

/**
 * loop_link_up() - bring the link up (EPC started)
 * @loop: the loopback
 *
 * The endpoint side gets link first and EPFs are told (as a link-up
 * interrupt would), then the root complex enumerates the function and its
 * driver binds.
 *
 * Context: process context, no EPC lock held.
 * Return: 0, or a negative errno if the link cannot come up.
 */
int loop_link_up(struct pci_epc_loop *loop)
{
	bool notify;
	int ret = 0;

	/* No link while PERST# holds the controller in reset */
	if (!loop_perst_link_allowed(loop))
		return -ENOLINK;

	mutex_lock(&loop->link_lock);
	spin_lock(&loop->state_lock);
	if (!loop->started || loop->removing) {
		spin_unlock(&loop->state_lock);
		mutex_unlock(&loop->link_lock);
		return -ENOLINK;
	}
	spin_unlock(&loop->state_lock);
	if (!loop->bridge)
		loop_cfg_reset_host(loop);
	loop_set_ep_up(loop, true);
	notify = !loop->ep_notified;
	loop->ep_notified = true;
	mutex_unlock(&loop->link_lock);

	if (notify) {
		atomic64_inc(&loop->stats.link_ups);
		loop_link_notify_up(loop);
	}
	/* Enumeration waits as a root does; a root that kept the function does not */
	if (!READ_ONCE(loop->bridge))
		loop_rc_wait_ready(loop);

	mutex_lock(&loop->link_lock);
	if (loop_ep_up(loop) && !loop->bridge) {
		loop_set_rc_up(loop, true);
		ret = loop_host_add(loop);
		if (ret)
			loop_set_rc_up(loop, false);
	} else if (loop_ep_up(loop) && !loop_rc_up(loop)) {
		/* The root kept the function over the link loss (rc.c) */
		loop_set_rc_up(loop, true);
		loop_host_link_back(loop);
	}
	mutex_unlock(&loop->link_lock);
	return ret;
}

/**
 * loop_link_down() - take the link down
 * @loop: the loopback
 *
 * The endpoint loses the link first: DMA transfers in flight fail and the
 * outbound window stops working; EPFs are told and may still signal the
 * failure to the host. Then the root complex sees the link drop: with
 * hot-plug (generic-rc) the function is marked disconnected and removed
 * with its driver (a surprise removal, whether the link went down by stop,
 * removal of this device or the debugfs fault); without (j784s4) it stays
 * and answers all-ones until the link returns, except on removal of this
 * device, which always removes the bus.
 *
 * Context: process context, no EPC lock held.
 * Return: 0.
 */
int loop_link_down(struct pci_epc_loop *loop)
{
	bool notify;

	mutex_lock(&loop->link_lock);
	loop_set_ep_up(loop, false);
	notify = loop->ep_notified;
	loop->ep_notified = false;
	mutex_unlock(&loop->link_lock);

	if (notify) {
		atomic64_inc(&loop->stats.link_downs);
		fl_epc_linkdown(loop->epc);
	}

	mutex_lock(&loop->link_lock);
	loop_set_rc_up(loop, false);
	/* A root without hot-plug keeps the function (rc.c) */
	if (loop_rc_keeps_function(loop))
		loop_host_link_lost(loop);
	else
		loop_host_remove(loop, true);
	mutex_unlock(&loop->link_lock);

	cancel_delayed_work_sync(&loop->irq_work);
	loop_msictl_stop(loop);
	loop_win_drop_all(loop);
	return 0;
}

static void loop_link_up_work(struct work_struct *work)
{
	struct pci_epc_loop *loop = container_of(work, struct pci_epc_loop,
						 link_up_work);
	int ret;

	ret = loop_link_up(loop);
	if (ret && ret != -ENOLINK)
		dev_err(loop->dev, "link up failed: %d\n", ret);
}

static void loop_link_down_work(struct work_struct *work)
{
	struct pci_epc_loop *loop = container_of(work, struct pci_epc_loop,
						 link_down_work);

	loop_link_down(loop);
}

static void loop_bme_work(struct work_struct *work)
{
	struct pci_epc_loop *loop = container_of(work, struct pci_epc_loop,
						 bme_work);

	if (loop_rc_up(loop))
		fl_epc_bme_notify(loop->epc);
}

/**
 * loop_link_start() - EPC start op: train the link
 * @loop: the loopback
 *
 * Context: epc->lock held; the link comes up asynchronously (on PERST#
 * profiles after the PERST# deassert, see perst.c).
 * Return: 0 or -ENODEV while the device is going away.
 */
int loop_link_start(struct pci_epc_loop *loop)
{
	spin_lock(&loop->state_lock);
	if (loop->removing) {
		spin_unlock(&loop->state_lock);
		return -ENODEV;
	}
	loop->started = true;
	spin_unlock(&loop->state_lock);

	/* PERST# profiles: the link comes up after the root deasserts PERST# */
	if (loop->perst_model)
		loop_perst_start(loop);
	else
		queue_work(loop->link_wq, &loop->link_up_work);
	return 0;
}

/**
 * loop_link_stop() - EPC stop op: take the link down
 * @loop: the loopback
 *
 * The endpoint loses the link at once (DMA and the outbound window fail);
 * the host side is removed and EPFs get link down from the link workqueue,
 * as after a controller's link-down interrupt.
 *
 * Context: epc->lock held.
 */
void loop_link_stop(struct pci_epc_loop *loop)
{
	spin_lock(&loop->state_lock);
	loop->started = false;
	spin_unlock(&loop->state_lock);

	loop_set_ep_up(loop, false);
	queue_work(loop->link_wq, &loop->link_down_work);
}

/**
 * loop_link_init() - set up link state and its workqueue
 * @loop: the loopback
 *
 * Return: 0 or -ENOMEM.
 */
int loop_link_init(struct pci_epc_loop *loop)
{
	INIT_WORK(&loop->link_up_work, loop_link_up_work);
	INIT_WORK(&loop->link_down_work, loop_link_down_work);
	INIT_WORK(&loop->bme_work, loop_bme_work);
	loop->linkup_irq_work = IRQ_WORK_INIT_HARD(loop_linkup_hardirq);
	loop_intr_init(loop);
	loop->link_wq = alloc_ordered_workqueue("%s-link", WQ_MEM_RECLAIM,
						dev_name(loop->dev));
	return loop->link_wq ? 0 : -ENOMEM;
}

/**
 * loop_link_exit() - take the link down for good (device removal)
 * @loop: the loopback
 */
void loop_link_exit(struct pci_epc_loop *loop)
{
	if (!loop->link_wq)
		return;

	spin_lock(&loop->state_lock);
	loop->removing = true;
	loop->started = false;
	spin_unlock(&loop->state_lock);

	/*
	 * Down first, so config writes stop queueing work; queued link work
	 * then sees removing / no link and does nothing. The second call
	 * catches a link-up that was past its checks when removal began.
	 */
	loop_link_down(loop);
	destroy_workqueue(loop->link_wq);
	loop->link_wq = NULL;
	loop_link_down(loop);
}
