// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the engine thread and its RC -> EP notification source.
 *
 * Mainline Tegra234 has no endpoint doorbell, so the host's doorbell writes
 * into BAR0 are found by polling: back to back (with cond_resched()) while
 * passes find work, then an exponentially growing sleep from poll_min_us to
 * poll_max_us (<= 1 ms) while idle. DMA completions, SUBMIT and POST kick
 * the thread awake early. Every sleep is bounded. The interval and the
 * reaction time are in FL_IOC_STATS.
 *
 * The source is a struct fl_notify_src, so the kernel's endpoint doorbell
 * (pci_epf_alloc_doorbell(), Linux >= 6.17) can be added as a second one
 * that sleeps until the doorbell interrupt; it is not built here.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/kthread.h>
#include <linux/sched.h>

#include "epf.h"

/**
 * fl_engine_kick() - wake the engine before its polling interval ends
 * @ep: the endpoint. Any context.
 */
void fl_engine_kick(struct fl_ep *ep)
{
	atomic_set(&ep->kick, 1);
	wake_up(&ep->engine_wq);
}

static void fl_poll_wait(struct fl_ep *ep, bool idle)
{
	if (!idle) {
		ep->poll_us = 0;
		cond_resched();
		return;
	}
	ep->poll_us = ep->poll_us ? min(ep->poll_us * 2, ep->cfg.poll_max_us) :
				    ep->cfg.poll_min_us;
	atomic64_set(&ep->stats.c[FL_STAT_POLL_US], ep->poll_us);
	wait_event_interruptible_hrtimeout(ep->engine_wq,
					   atomic_read(&ep->kick) || kthread_should_stop(),
					   ns_to_ktime((u64)ep->poll_us * NSEC_PER_USEC));
}

static const struct fl_notify_src fl_notify_poll = {
	.name = "polling",
	.notify = FL_NOTIFY_POLL,
	.wait = fl_poll_wait,
};

/*
 * An idle pass also looks at what the busy path does not: the status block
 * and, in a session, the header the host may have overwritten (heal them),
 * and reserved doorbell words.
 */
static bool fl_engine_idle_checks(struct fl_ep *ep)
{
	bool healed = ep->state != FL_STATE_RESET && fl_bar_heal_header(ep);

	return fl_bar_check_doorbell(ep) | healed | fl_bar_heal_status(ep);
}

static int fl_engine_fn(void *data)
{
	struct fl_ep *ep = data;

	while (!kthread_should_stop()) {
		bool work;

		atomic_set(&ep->kick, 0);
		work = fl_ring_pass(ep);
		if (!work)
			work = fl_engine_idle_checks(ep);
		fl_stat_add(ep, FL_STAT_POLLS, 1);
		ep->notify->wait(ep, !work);
	}
	return 0;
}

/**
 * fl_engine_start() - start the engine (link up)
 * @ep: the endpoint.
 *
 * Return: 0 or a negative errno.
 */
int fl_engine_start(struct fl_ep *ep)
{
	struct task_struct *t;
	int ret = 0;

	mutex_lock(&ep->life_lock);
	if (ep->engine || !ep->hw_ready || READ_ONCE(ep->dead))
		goto out_unlock;
	ep->notify = &fl_notify_poll;
	ep->poll_us = 0;
	/* The host may have written the header or status block while the link was down */
	fl_bar_heal_header(ep);
	fl_bar_heal_status(ep);
	t = kthread_create(fl_engine_fn, ep, "fl-ep%d", ep->id);
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		dev_err(ep->dev, "cannot start the engine: %d\n", ret);
		goto out_unlock;
	}
	ep->engine = t;
	spin_lock(&ep->q_lock);
	ep->engine_up = true;
	spin_unlock(&ep->q_lock);
	wake_up_process(t);
out_unlock:
	mutex_unlock(&ep->life_lock);
	return ret;
}

/**
 * fl_engine_stop() - stop the engine and fail what was in flight
 * @ep: the endpoint.
 * @error: FL_ERR_* for the status block if the queues were running.
 *
 * After this returns no DMA runs, no callback comes, nothing is written to
 * the host and every waiter in REAP is woken.
 */
void fl_engine_stop(struct fl_ep *ep, u32 error)
{
	struct task_struct *t;

	mutex_lock(&ep->life_lock);
	t = ep->engine;
	ep->engine = NULL;
	spin_lock(&ep->q_lock);
	ep->engine_up = false;
	spin_unlock(&ep->q_lock);
	if (t) {
		kthread_stop(t);
		if (ep->state == FL_STATE_READY) {
			fl_ring_abort(ep);
			fl_bar_set_state(ep, FL_STATE_ERROR, error);
		}
		fl_q_cancel_submitted(ep);
	}
	/*
	 * Only now, with every cancelled frame queued: a REAP that sees the
	 * new epoch finds them, and says -ENOLINK only when nothing was queued
	 */
	spin_lock(&ep->q_lock);
	ep->link_epoch++;
	spin_unlock(&ep->q_lock);
	mutex_unlock(&ep->life_lock);
	wake_up_interruptible(&ep->app_wq);
}
