// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the interrupt self-test at enable (FL_F_IRQ_TEST, issue 9 section 1).
 *
 * pci_epc_raise_irq() takes a number whose meaning the controller driver decides:
 *  - mainline DWC (pcie-designware-ep.c, 6.1 to 7.3): MSI writes msg_data | (n - 1),
 *    MSI-X uses table entry n - 1 (doorbell: n - 1 too), so numbers start at 1 and 0
 *    silently becomes another vector;
 *  - mainline Tegra194/234 (pcie-tegra194.c; Debian 6.1.192, 6.12.117, 7.3.4): MSI sets
 *    BIT(n - 1) in APPL_MSI_CTRL_1 (n <= 32, commit b640d42a6ac9; before it BIT(n), n <= 31),
 *    MSI-X writes n to the doorbell as given, which takes a 0-based entry;
 *  - NVIDIA's JetPack 6 pcie-tegra194.c: MSI BIT(n), n <= 31 (0-based), MSI-X as above;
 *  - INTx: the number is ignored (Tegra refuses n > 1).
 * Every one of them drops a raise on a vector the host did not allocate without an error.
 * So the pair tests instead of guessing: at every enable, before READY, the endpoint raises
 * number 1 and waits (bounded by irq_test_ms) for the host's handler to bump
 * fl_bar_doorbell.irq_test. Unanswered, number 0 is tried, but only after 1: on a mainline
 * controller 0 is not refused, it raises a wrong vector. 0 is kept only when two raises
 * are both answered, so one late answer to number 1 cannot select it. Nothing answered:
 * no interrupt is raised this session, the status block says FL_IRQT_NONE and the host
 * polls (and logs it).
 *
 * Runs in the engine thread with no transfer in flight (the queues are reset at enable),
 * so its waits delay nothing but the enable, which the host bounds at 2 s: at most three
 * raises of irq_test_ms each.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>

#include "epf.h"

static unsigned int irq_test_ms = 50;
module_param(irq_test_ms, uint, 0644);
MODULE_PARM_DESC(irq_test_ms,
		 "interrupt self-test: wait for the host's answer per raise, ms (1..500, default 50)");

static const char *const fl_irqt_type_names[] = {
	[FL_IRQ_NONE] = "none",
	[FL_IRQ_INTX] = "INTx",
	[FL_IRQ_MSI] = "MSI",
	[FL_IRQ_MSIX] = "MSI-X",
};

/**
 * fl_irqt_reset() - forget the last self-test (at enable, before the control block is read)
 * @ep: the endpoint (engine context).
 */
void fl_irqt_reset(struct fl_ep *ep)
{
	ep->irq_num = FL_EP_IRQ_VECTOR;
	ep->irq_dead = false;
	ep->irq_test = FL_IRQT_UNTESTED;
}

/* Raise @num once and wait, bounded, for the host's handler to count it in irq_test */
static bool fl_irqt_try(struct fl_ep *ep, u16 num)
{
	unsigned long end = jiffies + msecs_to_jiffies(clamp(irq_test_ms, 1U, 500U)) + 1;
	u32 base = le32_to_cpu(READ_ONCE(ep->db->irq_test));
	int ret;

	ret = fl_cq_raise_num(ep, num);
	if (ret) {
		dev_info_ratelimited(ep->dev, "interrupt self-test: raising %s number %u failed: %d\n",
				     fl_irqt_type_names[ep->irq_type], num, ret);
		return false;
	}
	/* An INTx is unacknowledged until irq_ack carries its number (FL_F_INTX_SEQ) */
	if (ep->irq_type == FL_IRQ_INTX) {
		ep->intx_out = true;
		ep->intx_ts = ktime_get_ns();
	}
	for (;;) {
		/* The host's handler writes it; no ordering with anything else is needed */
		if (le32_to_cpu(READ_ONCE(ep->db->irq_test)) != base)
			return true;
		if (time_after(jiffies, end) || kthread_should_stop())
			return false;
		usleep_range(200, 500);
	}
}

/* The test proper: FL_IRQT_* */
static u32 fl_irqt_probe(struct fl_ep *ep)
{
	if (fl_irqt_try(ep, FL_EP_IRQ_VECTOR))
		return FL_IRQT_NUM1;
	/* INTx has no number; after a controller reset (PERST#) nothing is raised */
	if (ep->irq_type == FL_IRQ_INTX || ep->cqm_lost)
		return FL_IRQT_NONE;
	if (fl_irqt_try(ep, 0) && fl_irqt_try(ep, 0))
		return FL_IRQT_NUM0;
	return FL_IRQT_NONE;
}

/**
 * fl_irqt_run() - the interrupt self-test, before the status block says READY
 * @ep: the endpoint (engine context, queues reset, fl_cq_init() done).
 *
 * Writes fl_bar_status.irq_test (ordered before the state by fl_bar_set_state()); without
 * %FL_F_IRQ_TEST accepted or with no interrupt enabled, nothing is tested and the word is
 * zero (reserved for such a host).
 */
void fl_irqt_run(struct fl_ep *ep)
{
	const char *type = fl_irqt_type_names[ep->irq_type];

	fl_irqt_reset(ep);
	if ((ep->accepted & FL_F_IRQ_TEST) && ep->irq_type != FL_IRQ_NONE)
		ep->irq_test = fl_irqt_probe(ep);
	WRITE_ONCE(ep->status->irq_test, cpu_to_le32(ep->irq_test));

	switch (ep->irq_test) {
	case FL_IRQT_NUM1:
		dev_info_ratelimited(ep->dev,
				     "interrupt self-test: %s number 1 acknowledged (1-based numbering)\n",
				     type);
		break;
	case FL_IRQT_NUM0:
		ep->irq_num = 0;
		dev_info_ratelimited(ep->dev,
				     "interrupt vector numbering: 0-based (JetPack): %s number 0 acknowledged, number 1 was not\n",
				     type);
		break;
	case FL_IRQT_NONE:
		ep->irq_dead = true;
		dev_err_ratelimited(ep->dev,
				    "interrupt self-test: no %s acknowledged by the host (tried %s): raising none, the host polls\n",
				    type, ep->irq_type == FL_IRQ_INTX ? "INTx" : "numbers 1 and 0");
		break;
	}
}
