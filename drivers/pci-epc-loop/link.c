// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: link state (start/stop, link down/up) and the link model.
 *
 * Lock order: epc->lock (held by the EPC core around our ops) is taken
 * before link_lock; nothing that holds link_lock calls back into the EPC
 * core, because EPF notifications (pci_epc_linkup/linkdown/
 * bus_master_enable) take epc->list_lock and epf->lock, and EPFs call EPC
 * ops (epc->lock) from under those. So notifications are sent with no
 * lock held, from the link workqueue or from debugfs.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/math64.h>

#include "loop.h"

/* Longest single sleep of the link model, to stay responsive to aborts */
#define LOOP_MAX_SLEEP_US	2000

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
	int ret = 0;

	mutex_lock(&loop->link_lock);
	if (!loop->started || loop->removing) {
		mutex_unlock(&loop->link_lock);
		return -ENOLINK;
	}
	if (loop->ep_up) {
		mutex_unlock(&loop->link_lock);
		return 0;
	}
	loop_cfg_reset_host(loop);
	WRITE_ONCE(loop->ep_up, true);
	loop_dma_link_changed(loop);
	mutex_unlock(&loop->link_lock);

	atomic64_inc(&loop->stats.link_ups);
	pci_epc_linkup(loop->epc);

	mutex_lock(&loop->link_lock);
	if (loop->ep_up && !loop->bridge) {
		WRITE_ONCE(loop->rc_up, true);
		ret = loop_host_add(loop);
		if (ret)
			WRITE_ONCE(loop->rc_up, false);
	}
	mutex_unlock(&loop->link_lock);
	return ret;
}

/**
 * loop_link_down() - surprise link down (debugfs)
 * @loop: the loopback
 *
 * The endpoint loses the link first: DMA transfers in flight fail and the
 * outbound window stops working; EPFs are told and may still signal the
 * failure to the host. Then the root complex sees the link drop: the
 * function is marked disconnected and removed with its driver.
 *
 * Context: process context, no EPC lock held.
 * Return: 0.
 */
int loop_link_down(struct pci_epc_loop *loop)
{
	bool was_up;

	mutex_lock(&loop->link_lock);
	was_up = loop->ep_up;
	WRITE_ONCE(loop->ep_up, false);
	loop_dma_link_changed(loop);
	mutex_unlock(&loop->link_lock);

	if (was_up) {
		atomic64_inc(&loop->stats.link_downs);
		loop_epc_linkdown(loop->epc);
	}

	mutex_lock(&loop->link_lock);
	WRITE_ONCE(loop->rc_up, false);
	loop_host_remove(loop, true);
	mutex_unlock(&loop->link_lock);

	cancel_delayed_work_sync(&loop->irq_work);
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

static void loop_linkdown_notify_work(struct work_struct *work)
{
	struct pci_epc_loop *loop = container_of(work, struct pci_epc_loop,
						 linkdown_notify_work);

	loop_epc_linkdown(loop->epc);
}

static void loop_bme_work(struct work_struct *work)
{
	struct pci_epc_loop *loop = container_of(work, struct pci_epc_loop,
						 bme_work);

	if (loop_rc_up(loop))
		loop_epc_bme_notify(loop->epc);
}

/**
 * loop_link_start() - EPC start op: train the link
 * @loop: the loopback
 *
 * Context: epc->lock held; the link comes up asynchronously.
 * Return: 0 or -ENODEV while the device is going away.
 */
int loop_link_start(struct pci_epc_loop *loop)
{
	mutex_lock(&loop->link_lock);
	if (loop->removing) {
		mutex_unlock(&loop->link_lock);
		return -ENODEV;
	}
	loop->started = true;
	mutex_unlock(&loop->link_lock);

	queue_work(loop->link_wq, &loop->link_up_work);
	return 0;
}

/**
 * loop_link_stop() - EPC stop op: take the link down
 * @loop: the loopback
 *
 * The root complex side is removed synchronously, so nothing on the host
 * uses the EPF's BARs after this returns. EPFs get link down from the
 * link workqueue (they may call EPC ops, which need epc->lock, held here).
 *
 * Context: epc->lock held.
 */
void loop_link_stop(struct pci_epc_loop *loop)
{
	bool was_up;

	mutex_lock(&loop->link_lock);
	loop->started = false;
	was_up = loop->ep_up;
	WRITE_ONCE(loop->ep_up, false);
	loop_dma_link_changed(loop);
	WRITE_ONCE(loop->rc_up, false);
	loop_host_remove(loop, false);
	mutex_unlock(&loop->link_lock);

	if (was_up) {
		atomic64_inc(&loop->stats.link_downs);
		queue_work(loop->link_wq, &loop->linkdown_notify_work);
	}
}

/**
 * loop_link_xfer_delay() - account one chunk of a DMA transfer on the link
 * @loop: the loopback
 * @bytes: bytes in the chunk
 * @first: first chunk of a transfer (pays the setup time)
 *
 * Each transfer costs setup_ns (latency, not link occupancy) and
 * bytes / rate of link time; all channels share one link, so a channel
 * waits until the link is free and then occupies it for its chunk.
 * Several transfers in flight overlap their setup times.
 *
 * Context: process context (a channel worker).
 */
void loop_link_xfer_delay(struct pci_epc_loop *loop, size_t bytes, bool first)
{
	u32 setup = READ_ONCE(loop->setup_ns);
	u32 rate = READ_ONCE(loop->rate_mbps);
	u64 now, until;
	s64 wait_ns;

	if (first && setup)
		fsleep(DIV_ROUND_UP(setup, NSEC_PER_USEC));
	if (!rate)
		return;

	spin_lock(&loop->model_lock);
	now = ktime_get_ns();
	until = max(now, loop->link_busy_until) +
		div_u64((u64)bytes * 8 * 1000, rate);
	loop->link_busy_until = until;
	spin_unlock(&loop->model_lock);

	wait_ns = until - now;
	while (wait_ns > 0 && loop_ep_up(loop)) {
		u64 us = min_t(u64, DIV_ROUND_UP_ULL(wait_ns, NSEC_PER_USEC),
			       LOOP_MAX_SLEEP_US);

		fsleep(us);
		wait_ns = until - ktime_get_ns();
	}
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
	INIT_WORK(&loop->linkdown_notify_work, loop_linkdown_notify_work);
	INIT_WORK(&loop->bme_work, loop_bme_work);
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

	mutex_lock(&loop->link_lock);
	loop->removing = true;
	loop->started = false;
	WRITE_ONCE(loop->ep_up, false);
	loop_dma_link_changed(loop);
	WRITE_ONCE(loop->rc_up, false);
	loop_host_remove(loop, false);
	mutex_unlock(&loop->link_lock);

	/* Queued link-up work sees removing and does nothing */
	destroy_workqueue(loop->link_wq);
	loop->link_wq = NULL;
	cancel_delayed_work_sync(&loop->irq_work);
}
