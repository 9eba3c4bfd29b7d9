// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: an interrupt that overtook its completions (%FL_F_IRQ_PROD).
 *
 * The endpoint writes its completions, cq_prod and then irq_prod (the cq_prod
 * the interrupt is for) into our memory as posted writes and raises the
 * interrupt without reading anything back. Posted writes stay in order among
 * themselves, but the interrupt may take another path: on Tegra234 the MSI is
 * a write to a controller register, and PCIe orders it behind nothing the CPU
 * wrote through the outbound window. So an interrupt can arrive before what it
 * announces. Waking the waiters then would find nothing, arm again and sleep
 * while the endpoint, which has signalled, raises nothing more.
 *
 * Instead the handler looks at its own memory (no read across the link). The
 * endpoint also writes irq_seq, a count of its interrupts, after irq_prod.
 * Each interrupt taken asks for one more announcement (irq_seq) than had
 * landed, or than the interrupts before it asked for; an announcement has
 * landed when irq_seq moved and cq_prod reached irq_prod. Whatever new landed
 * wakes the waiters. Until every interrupt's announcement has, an hrtimer
 * looks again after 4 us, doubling to at most 1 ms (early_irqs counts the
 * landings it found), for at most 50 ms after the last interrupt (stale_irqs:
 * more interrupts than announcements, i.e. a duplicated interrupt; the waiters
 * are woken then anyway). Posted writes land within microseconds on a board;
 * the lab's outbound window publishes them every 100 us (msi_overtake).
 *
 * A lost interrupt asks for nothing: the next one, or REAP's safety slice,
 * covers it. Two interrupts overtaking their completions ask for two
 * announcements, so the first landing does not end the wait for the second.
 *
 * INTx works the same way: a handler run again while the line is held, or
 * an INTx the endpoint raised again, asks for one announcement too many and
 * costs the bound in timer passes, never a wake-up.
 *
 * cq_prod is tested against irq_prod because the lab, which cannot see the
 * order of the stores within one propagation pass, stores higher addresses
 * first: irq_seq (+8) may appear before cq_prod (+0); irq_prod (+12) lies
 * above irq_seq, so it appears no later.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>

#include "host.h"

#define FL_SETTLE_FIRST_NS	(4 * NSEC_PER_USEC)
#define FL_SETTLE_STEP_MAX_NS	NSEC_PER_MSEC
#define FL_SETTLE_MAX_NS	(50 * NSEC_PER_MSEC)

/* The waiters look at host memory again (REAP and poll() wait for @wakes to move) */
static void fl_settle_wake(struct fl_host *host)
{
	atomic64_inc(&host->wakes);
	wake_up_all(&host->wq);
}

/*
 * A newer announcement, and the completions it announces, are in host memory:
 * @irq_seq_seen moves to it. irq_prod is read after irq_seq: it was written
 * before it, so it is that announcement's or a later one's (then cq_prod is
 * waited for a little longer). @settle_lock held.
 */
static bool fl_settle_landed(struct fl_host *host)
{
	u32 seq = le32_to_cpu(READ_ONCE(host->status->irq_seq));
	u32 ann, prod;

	if ((s32)(seq - host->irq_seq_seen) <= 0)
		return false;
	dma_rmb();
	ann = le32_to_cpu(READ_ONCE(host->status->irq_prod));
	prod = le32_to_cpu(READ_ONCE(host->status->cq_prod));
	if ((s32)(prod - ann) < 0)
		return false;
	host->irq_seq_seen = seq;
	return true;
}

/* Every interrupt taken has its announcement in host memory; @settle_lock held */
static bool fl_settle_done(struct fl_host *host)
{
	return (s32)(host->irq_seq_seen - host->irq_seq_want) >= 0;
}

static enum hrtimer_restart fl_settle_timer(struct hrtimer *t)
{
	struct fl_host *host = container_of(t, struct fl_host, settle);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	unsigned long flags;
	bool wake;

	spin_lock_irqsave(&host->settle_lock, flags);
	if (!host->settling) {
		spin_unlock_irqrestore(&host->settle_lock, flags);
		return HRTIMER_NORESTART;
	}
	wake = fl_settle_landed(host);
	if (wake)
		atomic64_inc(&host->early_irqs);
	if (fl_settle_done(host)) {
		host->settling = false;
	} else if (ktime_get_ns() >= host->settle_until) {
		/* more interrupts than announcements: duplicates, INTx raised again */
		atomic64_inc(&host->stale_irqs);
		host->irq_seq_want = host->irq_seq_seen;
		host->settling = false;
		wake = true;
	} else {
		host->settle_step = min(host->settle_step * 2, FL_SETTLE_STEP_MAX_NS);
		hrtimer_forward_now(t, ns_to_ktime(host->settle_step));
		ret = HRTIMER_RESTART;
	}
	spin_unlock_irqrestore(&host->settle_lock, flags);
	if (wake)
		fl_settle_wake(host);
	return ret;
}

/**
 * fl_settle_irq() - a completion interrupt came: wake the waiters once it landed
 * @host: the device (interrupt handler).
 *
 * Each interrupt asks for one announcement more than had landed when it came,
 * or than the interrupts before it asked for. Whatever new landed wakes the
 * waiters; until every interrupt's announcement has, the timer looks again.
 * Without %FL_F_IRQ_PROD, during the enable handshake (the interrupt self-test
 * announces nothing) and before the queue is enabled the waiters are woken at
 * once.
 */
void fl_settle_irq(struct fl_host *host)
{
	unsigned long flags;
	bool wake;

	if (!(READ_ONCE(host->features) & FL_F_IRQ_PROD) || !READ_ONCE(host->enabled) ||
	    READ_ONCE(host->irqt_armed)) {
		fl_settle_wake(host);
		return;
	}
	spin_lock_irqsave(&host->settle_lock, flags);
	if (fl_settle_done(host))
		host->irq_seq_want = host->irq_seq_seen;
	host->irq_seq_want++;
	wake = fl_settle_landed(host);
	if (!fl_settle_done(host)) {
		/* the bound counts from the last interrupt */
		host->settle_until = ktime_get_ns() + FL_SETTLE_MAX_NS;
		if (!host->settling) {
			host->settling = true;
			host->settle_step = FL_SETTLE_FIRST_NS;
			hrtimer_start(&host->settle, ns_to_ktime(FL_SETTLE_FIRST_NS),
				      HRTIMER_MODE_REL);
		}
	}
	spin_unlock_irqrestore(&host->settle_lock, flags);
	if (wake)
		fl_settle_wake(host);
}

/**
 * fl_settle_seen() - the last announcement that landed, looked at now (%FL_F_IRQ_SEEN)
 * @host: the device; fl_host.lock held (fl_q_arm(), before sleeping).
 *
 * An announcement found here that the handler and timer have not seen yet wakes the
 * waiters, as the timer would have: the caller drains it, another waiter may want it.
 *
 * Return: fl_host_status.irq_seq of that announcement.
 */
u32 fl_settle_seen(struct fl_host *host)
{
	unsigned long flags;
	bool wake;
	u32 seen;

	spin_lock_irqsave(&host->settle_lock, flags);
	wake = fl_settle_landed(host);
	seen = host->irq_seq_seen;
	spin_unlock_irqrestore(&host->settle_lock, flags);
	if (wake)
		fl_settle_wake(host);
	return seen;
}

/**
 * fl_settle_init() - the timer and lock (probe)
 * @host: the device.
 */
void fl_settle_init(struct fl_host *host)
{
	spin_lock_init(&host->settle_lock);
	fl_hrtimer_setup(&host->settle, fl_settle_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	atomic64_set(&host->wakes, 0);
	atomic64_set(&host->early_irqs, 0);
	atomic64_set(&host->stale_irqs, 0);
}

/**
 * fl_settle_reset() - a new session: no announcement seen yet (enable, after the
 *	completion area was zeroed)
 * @host: the device; fl_host.lock held.
 */
void fl_settle_reset(struct fl_host *host)
{
	unsigned long flags;

	hrtimer_cancel(&host->settle);
	spin_lock_irqsave(&host->settle_lock, flags);
	host->settling = false;
	host->irq_seq_seen = 0;
	host->irq_seq_want = 0;
	spin_unlock_irqrestore(&host->settle_lock, flags);
}

/**
 * fl_settle_stop() - no timer runs after this (the interrupt is freed first)
 * @host: the device.
 */
void fl_settle_stop(struct fl_host *host)
{
	hrtimer_cancel(&host->settle);
}
