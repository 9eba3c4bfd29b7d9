// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite of framelink-epf's controller events (drivers/framelink/epf/events.c,
 * included here whole): the deliveries no single lab kernel makes. A link up by event op
 * and by notifier (NVIDIA's earlier JetPack 6 tree has the notifier beside event ops) is
 * acted on once; a link up raised in hard IRQ context (NVIDIA's tegra194) runs its handler
 * later, in process context; init as an event op in task context runs before the call
 * returns, by notifier it does not; a link up that found no init does not count; events
 * recorded before the work runs are acted on in a controller's order; after unbind
 * nothing runs.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <kunit/test.h>
#include <linux/irq_work.h>

#include "events.c"

/**
 * struct fl_evt - one test's function and what its handlers saw
 * @epf: the function (only what events.c touches is set up).
 * @fepf: its driver data.
 * @f: controller features for bind.
 * @init: init handler runs.
 * @deinit: deinit handler runs.
 * @up: link up handler runs.
 * @down: link down handler runs.
 * @atomic: a handler ran in atomic context.
 * @init_ret: what the init handler returns.
 * @up_ret: what the link up handler returns (the engine runs).
 * @order: handler names in the order they ran, one letter each (I, D, U, d).
 * @n: letters in @order.
 */
struct fl_evt {
	struct pci_epf epf;
	struct fl_epf fepf;
	struct pci_epc_features f;
	int init, deinit, up, down, atomic;
	int init_ret;
	bool up_ret;
	char order[16];
	int n;
};

static struct fl_evt *fl_evt_of(struct pci_epf *epf)
{
	return container_of(epf, struct fl_evt, epf);
}

static void fl_evt_saw(struct fl_evt *t, char c)
{
	if (!in_task() || irqs_disabled())
		t->atomic++;
	if (t->n < (int)sizeof(t->order) - 1)
		t->order[t->n++] = c;
}

static int fl_evt_init(struct pci_epf *epf)
{
	struct fl_evt *t = fl_evt_of(epf);

	fl_evt_saw(t, 'I');
	t->init++;
	return t->init_ret;
}

static void fl_evt_deinit(struct pci_epf *epf)
{
	struct fl_evt *t = fl_evt_of(epf);

	fl_evt_saw(t, 'D');
	t->deinit++;
}

static bool fl_evt_up(struct pci_epf *epf)
{
	struct fl_evt *t = fl_evt_of(epf);

	fl_evt_saw(t, 'U');
	t->up++;
	return t->up_ret;
}

static void fl_evt_down(struct pci_epf *epf)
{
	struct fl_evt *t = fl_evt_of(epf);

	fl_evt_saw(t, 'd');
	t->down++;
}

static const struct fl_ev_handlers fl_evt_handlers = {
	.init = fl_evt_init,
	.deinit = fl_evt_deinit,
	.link_up = fl_evt_up,
	.link_down = fl_evt_down,
};

/* A bound function whose controller reports its init (no init at bind) */
static struct fl_evt *fl_evt_bound(struct kunit *test)
{
	struct fl_evt *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->epf.dev.init_name = "fl-events-test";
	t->up_ret = true;
	t->f.linkup_notifier = true;
	fl_epc_set_core_init_notifier(&t->f, true);
	epf_set_drvdata(&t->epf, &t->fepf);
	fl_epf_events_probe(&t->fepf.events, &t->epf, &fl_evt_handlers);
	KUNIT_ASSERT_EQ(test, fl_epf_events_bind(&t->fepf.events, &t->f), 0);
	test->priv = t;
	return t;
}

static void fl_evt_flush(struct fl_evt *t)
{
	flush_work(&t->fepf.events.work);
}

static void fl_evt_exit(struct kunit *test)
{
	struct fl_evt *t = test->priv;

	if (t)
		fl_epf_events_unbind(&t->fepf.events);
}

/* LINK_UP by event op and by notifier: one engine start */
static void fl_evt_link_up_both_ways(struct kunit *test)
{
	struct fl_evt *t = fl_evt_bound(test);

	fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS);
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
	fl_evt_flush(t);
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_NOTIFIER);
	fl_evt_flush(t);
	KUNIT_EXPECT_EQ(test, t->up, 1);
	KUNIT_EXPECT_STREQ(test, t->order, "IU");
	KUNIT_EXPECT_EQ(test, t->atomic, 0);
}

static struct fl_evt *fl_evt_hardirq_target;

static void fl_evt_hardirq(struct irq_work *work)
{
	fl_ev_deliver(&fl_evt_hardirq_target->epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
}

/* Link up from hard IRQ context: recorded there, acted on in process context */
static void fl_evt_link_up_hardirq(struct kunit *test)
{
	struct fl_evt *t = fl_evt_bound(test);
	struct irq_work w = IRQ_WORK_INIT_HARD(fl_evt_hardirq);

	fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS);
	fl_evt_hardirq_target = t;
	irq_work_queue(&w);
	irq_work_sync(&w);
	fl_evt_flush(t);
	KUNIT_EXPECT_EQ(test, t->up, 1);
	KUNIT_EXPECT_EQ(test, t->atomic, 0);
}

/* Init as an event op runs before the call returns and gives its result; by notifier later */
static void fl_evt_init_now_or_later(struct kunit *test)
{
	struct fl_evt *t = fl_evt_bound(test);

	t->init_ret = -EIO;
	KUNIT_EXPECT_EQ(test, fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS), -EIO);
	KUNIT_EXPECT_EQ(test, t->init, 1);
	t->init_ret = 0;
	/* the failed init did not count: the notifier's CORE_INIT tries again, from the work */
	KUNIT_EXPECT_EQ(test, fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_NOTIFIER), 0);
	fl_evt_flush(t);
	KUNIT_EXPECT_EQ(test, t->init, 2);
	/* set up now: another init does nothing */
	fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS);
	KUNIT_EXPECT_EQ(test, t->init, 2);
	KUNIT_EXPECT_EQ(test, t->atomic, 0);
}

/* A link up that could not start the engine (no init yet) does not block the next one */
static void fl_evt_link_up_without_init(struct kunit *test)
{
	struct fl_evt *t = fl_evt_bound(test);

	t->up_ret = false;
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
	fl_evt_flush(t);
	t->up_ret = true;
	fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS);
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
	fl_evt_flush(t);
	KUNIT_EXPECT_EQ(test, t->up, 2);
	KUNIT_EXPECT_STREQ(test, t->order, "UIU");
}

/* A PERST# cycle: deinit stops everything, the next init and link up start again */
static void fl_evt_deinit_then_again(struct kunit *test)
{
	struct fl_evt *t = fl_evt_bound(test);

	fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS);
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
	fl_evt_flush(t);
	fl_ev_deliver(&t->epf, FL_EV_DEINIT, FL_EV_VIA_OPS);
	KUNIT_EXPECT_EQ(test, t->deinit, 1);
	fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS);
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
	fl_evt_flush(t);
	KUNIT_EXPECT_STREQ(test, t->order, "IUDIU");
}

/* Recorded before the work ran: a controller's order, the newest link state wins */
static void fl_evt_recorded_order(struct kunit *test)
{
	struct fl_evt *t = fl_evt_bound(test);

	fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS);
	/* the work waits for the handlers' lock: all three are recorded before it looks */
	mutex_lock(&t->fepf.events.run_lock);
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
	fl_ev_deliver(&t->epf, FL_EV_LINK_DOWN, FL_EV_VIA_OPS);
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_NOTIFIER);
	KUNIT_EXPECT_EQ(test, t->up + t->down, 0);
	mutex_unlock(&t->fepf.events.run_lock);
	fl_evt_flush(t);
	/* down first (a session ended), then up once */
	KUNIT_EXPECT_STREQ(test, t->order, "IdU");
}

/* After unbind no event runs anything */
static void fl_evt_after_unbind(struct kunit *test)
{
	struct fl_evt *t = fl_evt_bound(test);

	fl_epf_events_unbind(&t->fepf.events);
	KUNIT_EXPECT_EQ(test, fl_ev_deliver(&t->epf, FL_EV_INIT, FL_EV_VIA_OPS), 0);
	fl_ev_deliver(&t->epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
	fl_evt_flush(t);
	KUNIT_EXPECT_EQ(test, t->n, 0);
}

static struct kunit_case fl_events_cases[] = {
	KUNIT_CASE(fl_evt_link_up_both_ways),
	KUNIT_CASE(fl_evt_link_up_hardirq),
	KUNIT_CASE(fl_evt_init_now_or_later),
	KUNIT_CASE(fl_evt_link_up_without_init),
	KUNIT_CASE(fl_evt_deinit_then_again),
	KUNIT_CASE(fl_evt_recorded_order),
	KUNIT_CASE(fl_evt_after_unbind),
	{}
};

static struct kunit_suite fl_events_suite = {
	.name = "framelink_events",
	.exit = fl_evt_exit,
	.test_cases = fl_events_cases,
};

kunit_test_suite(fl_events_suite);

MODULE_DESCRIPTION("KUnit tests of framelink-epf's controller events");
MODULE_LICENSE("GPL");
