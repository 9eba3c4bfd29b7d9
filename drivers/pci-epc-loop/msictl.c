// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the MSI controller's pending state, as a GIC's ITS keeps it.
 *
 * An MSI write to a vector sets its pending bit; the CPU taking the
 * interrupt clears it, and only then runs the handler. A second write to a
 * vector that is still pending changes nothing: the two are merged into one
 * handler run (an LPI pending in the GIC, or the target CPU with interrupts
 * off). With irq_holdoff_us = 0 the handler runs at once in the raiser's
 * context and nothing can merge; with irq_holdoff_us > 0 a vector that
 * becomes pending is taken that much later, from an hrtimer (hard-IRQ
 * context, as an interrupt is), so every MSI raised to it meanwhile merges
 * (irq_merged). A write that arrives while the handler runs sets the bit
 * again and is taken once more, as with a GIC (active and pending).
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>
#include <linux/ktime.h>

#include "loop.h"

/* Longest hold-off: a handler held longer than this looks like a hung CPU */
#define LOOP_IRQ_HOLDOFF_MAX_US	100000U

/* Take every pending vector: pending cleared first, then the handler */
static enum hrtimer_restart loop_msictl_take(struct hrtimer *t)
{
	struct pci_epc_loop *loop = container_of(t, struct pci_epc_loop, msictl_timer);
	unsigned long flags;
	unsigned int hw;
	bool msix;

	for (;;) {
		spin_lock_irqsave(&loop->msictl_lock, flags);
		hw = find_first_bit(loop->msictl_pending, LOOP_NR_MSI);
		if (hw >= LOOP_NR_MSI) {
			loop->msictl_armed = false;
			spin_unlock_irqrestore(&loop->msictl_lock, flags);
			return HRTIMER_NORESTART;
		}
		__clear_bit(hw, loop->msictl_pending);
		msix = __test_and_clear_bit(hw, loop->msictl_msix);
		spin_unlock_irqrestore(&loop->msictl_lock, flags);

		if (generic_handle_domain_irq_safe(loop->msi_base, hw))
			atomic64_inc(&loop->stats.irq_dropped);
		else
			atomic64_inc(msix ? &loop->stats.irq_msix : &loop->stats.irq_msi);
	}
}

/**
 * loop_msictl_deliver() - an MSI write reached the controller
 * @loop: the loopback
 * @hw: the decoded vector (a @loop->msi_base hwirq)
 * @msix: counted as MSI-X when delivered
 *
 * Return: true when it is pending (or merged into a pending one); false
 * when the caller delivers it at once (no hold-off).
 */
bool loop_msictl_deliver(struct pci_epc_loop *loop, u32 hw, bool msix)
{
	u32 us = min(READ_ONCE(loop->irq_holdoff_us), LOOP_IRQ_HOLDOFF_MAX_US);
	unsigned long flags;

	if (!us)
		return false;
	spin_lock_irqsave(&loop->msictl_lock, flags);
	if (__test_and_set_bit(hw, loop->msictl_pending)) {
		atomic64_inc(&loop->stats.irq_merged);
	} else {
		if (msix)
			__set_bit(hw, loop->msictl_msix);
		if (!loop->msictl_armed) {
			loop->msictl_armed = true;
			hrtimer_start(&loop->msictl_timer, ns_to_ktime((u64)us * NSEC_PER_USEC),
				      HRTIMER_MODE_REL);
		}
	}
	spin_unlock_irqrestore(&loop->msictl_lock, flags);
	return true;
}

/**
 * loop_msictl_init() - the pending state, empty
 * @loop: the loopback
 */
void loop_msictl_init(struct pci_epc_loop *loop)
{
	spin_lock_init(&loop->msictl_lock);
	fl_hrtimer_setup(&loop->msictl_timer, loop_msictl_take, CLOCK_MONOTONIC,
			 HRTIMER_MODE_REL);
}

/**
 * loop_msictl_stop() - no handler runs after this; pending vectors dropped
 * @loop: the loopback (the root complex side is down or going away)
 */
void loop_msictl_stop(struct pci_epc_loop *loop)
{
	unsigned long flags;
	unsigned int n;

	hrtimer_cancel(&loop->msictl_timer);
	spin_lock_irqsave(&loop->msictl_lock, flags);
	n = bitmap_weight(loop->msictl_pending, LOOP_NR_MSI);
	bitmap_zero(loop->msictl_pending, LOOP_NR_MSI);
	bitmap_zero(loop->msictl_msix, LOOP_NR_MSI);
	loop->msictl_armed = false;
	spin_unlock_irqrestore(&loop->msictl_lock, flags);
	atomic64_add(n, &loop->stats.irq_dropped);
}
