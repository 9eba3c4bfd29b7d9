// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: controller events, whichever way and in whatever context
 * the kernel delivers them (Documentation/kernel-apis.rst, "Event
 * delivery").
 *
 * Mainline 6.4 and later calls the event ops in process context with
 * epf->lock held. NVIDIA's 6.8 calls link_up from the controller's hard
 * IRQ handler; NVIDIA's 5.15 raises LINK_UP through an atomic notifier from
 * the same place; before 6.4 CORE_INIT comes through that notifier too. The
 * driver's handlers sleep (mutexes, kthread_create(), EPC calls), so:
 *
 *  - every event is first recorded here, under a spinlock, in any context;
 *  - link up and link down always run later, from a work item;
 *  - init and deinit run at once when they arrive as event ops in task
 *    context, because the controller relies on their being done when the
 *    call returns (the BAR programmed before it enables the LTSSM, DMA
 *    stopped before it resets the core at PERST# assert); from an atomic
 *    context (the notifier's CORE_INIT) they go to the work item as well;
 *  - what was recorded runs in the order of a controller's life: deinit,
 *    init, link down, link up; init and link up only if the driver is not
 *    already set up or running (a link up that found no init does not
 *    count), so an event that comes by both mechanisms (LINK_UP by notifier
 *    and by event op) is acted on once.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/workqueue.h>

#include "epf.h"

static const char *const fl_ev_names[] = {
	[FL_EV_INIT] = "init",
	[FL_EV_DEINIT] = "deinit",
	[FL_EV_LINK_UP] = "link up",
	[FL_EV_LINK_DOWN] = "link down",
};

static const char *const fl_ev_via_names[] = {
	[FL_EV_VIA_OPS] = "event op",
	[FL_EV_VIA_NOTIFIER] = "notifier",
	[FL_EV_VIA_BIND] = "bind",
};

/* Record @e; false once unbind began. Any context. */
static bool fl_ev_record(struct fl_epf_events *ev, enum fl_ev e)
{
	unsigned long flags;
	bool taken;

	spin_lock_irqsave(&ev->lock, flags);
	taken = ev->accepting;
	if (!taken)
		goto out_unlock;
	switch (e) {
	case FL_EV_INIT:
		ev->want_init = true;
		break;
	case FL_EV_DEINIT:
		/* The engine stops with the hardware: a pending link up is stale */
		ev->want_init = false;
		ev->deinit_seen = true;
		ev->want_up = false;
		break;
	case FL_EV_LINK_UP:
		ev->want_up = true;
		break;
	case FL_EV_LINK_DOWN:
		ev->want_up = false;
		ev->down_seen = true;
		break;
	}
out_unlock:
	spin_unlock_irqrestore(&ev->lock, flags);
	return taken;
}

/*
 * Act on what was recorded, in a controller's order. Each handler runs only
 * when it changes the state the driver last acted on; deinit and link down
 * always run (stopping twice is harmless, missing a stop is not).
 * Return: the result of the init handler, if it ran, else 0.
 */
static int fl_ev_run_pending(struct fl_epf_events *ev)
{
	bool deinit, init, down, up;
	int ret = 0;

	lockdep_assert_held(&ev->run_lock);
	spin_lock_irq(&ev->lock);
	deinit = ev->deinit_seen;
	ev->deinit_seen = false;
	init = ev->want_init;
	down = ev->down_seen;
	ev->down_seen = false;
	up = ev->want_up;
	spin_unlock_irq(&ev->lock);

	if (deinit) {
		ev->handlers->deinit(ev->epf);
		ev->inited = false;
		ev->up = false;
	}
	if (init && !ev->inited) {
		ret = ev->handlers->init(ev->epf);
		ev->inited = !ret;
	}
	if (down) {
		ev->handlers->link_down(ev->epf);
		ev->up = false;
	}
	/* A link up that could not start the engine (no init yet) counts for nothing */
	if (up && !ev->up)
		ev->up = ev->handlers->link_up(ev->epf);
	return ret;
}

static void fl_ev_work(struct work_struct *work)
{
	struct fl_epf_events *ev = container_of(work, struct fl_epf_events, work);

	mutex_lock(&ev->run_lock);
	fl_ev_run_pending(ev);
	mutex_unlock(&ev->run_lock);
}

/* May this delivery run the handlers itself? Only init and deinit, only when they may sleep */
static bool fl_ev_run_now(enum fl_ev e, enum fl_ev_via via)
{
	if (e != FL_EV_INIT && e != FL_EV_DEINIT)
		return false;
	/* The notifier calls under rcu_read_lock(), from any context */
	if (via == FL_EV_VIA_NOTIFIER)
		return false;
	return in_task() && !irqs_disabled();
}

/**
 * fl_ev_deliver() - a controller event reached the function
 * @epf: the function.
 * @e: the event.
 * @via: how it came.
 *
 * Context: any. Init and deinit given as event ops in task context run
 * before this returns (the caller may hold epf->lock); everything else runs
 * from the work item.
 * Return: the init handler's result when it ran here, else 0.
 */
int fl_ev_deliver(struct pci_epf *epf, enum fl_ev e, enum fl_ev_via via)
{
	struct fl_epf *fepf = epf_get_drvdata(epf);
	struct fl_epf_events *ev;
	int ret;

	if (!fepf)
		return 0;
	ev = &fepf->events;
	if (!fl_ev_record(ev, e))
		return 0;
	/* Rare (a few per link session); says how the kernel delivers events */
	dev_info(&epf->dev, "event: %s by %s%s\n", fl_ev_names[e], fl_ev_via_names[via],
		 in_hardirq() ? " in hard IRQ context" : "");
	if (!fl_ev_run_now(e, via)) {
		if ((e == FL_EV_INIT || e == FL_EV_DEINIT) && via == FL_EV_VIA_OPS)
			dev_warn_ratelimited(&epf->dev,
					     "%s in atomic context: deferred to process context\n",
					     fl_ev_names[e]);
		schedule_work(&ev->work);
		return 0;
	}
	mutex_lock(&ev->run_lock);
	ret = fl_ev_run_pending(ev);
	mutex_unlock(&ev->run_lock);
	return ret;
}

#if FL_COMPAT_NOTIFIER
/* The controller's atomic chain: rcu_read_lock() held, maybe hard IRQ context */
static int fl_ev_notify(struct notifier_block *nb, unsigned long event, void *data)
{
	struct fl_epf_events *ev = container_of(nb, struct fl_epf_events, nb);
	int e = fl_compat_notifier_event(event);

	if (e < 0)
		return NOTIFY_DONE;
	fl_ev_deliver(ev->epf, e, FL_EV_VIA_NOTIFIER);
	return NOTIFY_OK;
}
#endif

/**
 * fl_epf_events_probe() - set up event handling at probe
 * @ev: the function's event state.
 * @epf: the function.
 * @handlers: the driver's handlers; they may sleep.
 *
 * Sets the function's event ops (on kernels that have them) for its whole
 * life: events before bind and after unbind are dropped here.
 */
void fl_epf_events_probe(struct fl_epf_events *ev, struct pci_epf *epf,
			 const struct fl_ev_handlers *handlers)
{
	ev->epf = epf;
	ev->handlers = handlers;
	spin_lock_init(&ev->lock);
	mutex_init(&ev->run_lock);
	INIT_WORK(&ev->work, fl_ev_work);
	fl_compat_set_event_ops(epf);
}

/**
 * fl_epf_events_bind() - start taking events (end of .bind)
 * @ev: the function's event state.
 * @f: the controller's features.
 *
 * Listens to the controller's notifier wherever the kernel has one, event
 * ops or not: NVIDIA's 5.15 raises LINK_UP only there. A controller that
 * does not report its init gets it from here, as that kernel's pci-epf-test
 * does it.
 * Return: 0, or a negative errno (nothing is left registered then).
 */
int fl_epf_events_bind(struct fl_epf_events *ev, const struct pci_epc_features *f)
{
	int ret;

	spin_lock_irq(&ev->lock);
	ev->accepting = true;
	ev->want_init = false;
	ev->want_up = false;
	ev->deinit_seen = false;
	ev->down_seen = false;
	spin_unlock_irq(&ev->lock);
	ev->inited = false;
	ev->up = false;
#if FL_COMPAT_NOTIFIER
	ev->nb.notifier_call = fl_ev_notify;
	ret = fl_compat_notifier_register(ev->epf->epc, &ev->nb);
	if (ret) {
		fl_epf_events_unbind(ev);
		return ret;
	}
	ev->nb_registered = true;
#endif
	if (fl_compat_init_by_event(f))
		return 0;
	ret = fl_ev_deliver(ev->epf, FL_EV_INIT, FL_EV_VIA_BIND);
	if (ret)
		fl_epf_events_unbind(ev);
	return ret;
}

/**
 * fl_epf_events_unbind() - stop taking events (start of .unbind)
 * @ev: the function's event state.
 *
 * After this returns no handler runs or will run for this binding.
 */
void fl_epf_events_unbind(struct fl_epf_events *ev)
{
	spin_lock_irq(&ev->lock);
	ev->accepting = false;
	spin_unlock_irq(&ev->lock);
	if (ev->nb_registered) {
		fl_compat_notifier_unregister(ev->epf->epc, &ev->nb);
		ev->nb_registered = false;
	}
	cancel_work_sync(&ev->work);
}
