// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: completions into host memory, then the interrupt.
 *
 * The completion ring is host memory at ctrl.cq_addr: struct fl_host_status
 * (cq_prod) then fl_cqe[cq_entries], mapped once per enable (cqmap.c). Per
 * batch: the entries, then cq_prod, are stored through that mapping (posted
 * writes, in order), then - only if the host armed cq_event past the old
 * cq_prod (FL_F_CQ_EVENT) or did not accept moderation - the interrupt.
 *
 * Two orderings cross the link and a local barrier gives neither:
 *  - data before interrupt: the MSI (a controller register write on
 *    Tegra234) may reach the host before the posted stores. With
 *    FL_F_IRQ_PROD the interrupt is announced in host memory behind them and
 *    the host waits for the announcement (host/settle.c); otherwise cq_prod is
 *    read back through the window before every raise (fl_cq_signal);
 *  - the lost wake-up (Dekker across the link): the endpoint stores cq_prod
 *    then loads cq_event, the host stores cq_event then loads cq_prod; both
 *    stores are posted, so both loads can see old values and nobody
 *    interrupts or wakes. Each side flushes its store with a read on the same
 *    path before its load: the host in fl_q_arm(), the endpoint on its way to
 *    idle (fl_cq_idle: one read per batch that did not interrupt, not one per
 *    completion), and the endpoint looks at cq_event again on every idle
 *    pass, so an arm it missed is answered within one polling interval even
 *    where a read is no flush (the lab).
 *
 * Batches (FL_F_CQ_BATCH): the host arms cq_event ahead, at a part of what
 * it has in flight, and does not flush its arm. The endpoint then loads
 * cq_event on every pass until an interrupt covers what it published, and
 * interrupts short of the index once nothing is in flight (fl_cq_batch_idle):
 * at saturation one interrupt per several frames, and with FL_F_IRQ_PROD
 * nothing is read across the link. Such a batch can interrupt twice for one
 * arm (short of the index, then at it); if the two merge into one handler
 * run the host may arm below the second's cq_prod before it landed: with
 * FL_F_IRQ_SEEN the arm says so (fl_cq_behind()) and is answered.
 *
 * INTx (FL_F_INTX_SEQ): each INTx has a number, written to
 * fl_bar_status.intx_seq before the raise; the host's handler reads it when it
 * takes the INTx and masks INTx, and writes it to fl_bar_doorbell.irq_ack
 * whenever it enables INTx again (line low). The endpoint raises its next
 * INTx only once irq_ack carries the number of its last one, so no pulse
 * ends unseen while the host has INTx disabled and the line is never
 * asserted again for a host that has not run its handler. An INTx lost
 * anyway (its pulse ended before the host saw it; the lab's drop_irq) is
 * never acknowledged: it is raised again, with a new number, after 20 ms
 * while the host has completions it has not consumed (intx_retries). The
 * acknowledge of the INTx raised before it may still come, late (the host's
 * enable waits for the line to go low): an older number settles nothing.
 * Before minor 2 irq_ack was a count of the INTx the handler took, and a late
 * count passed for the acknowledge of the next INTx, which had met INTx
 * disabled and was lost: poll() slept for good beside a CPU hog (65-notify,
 * "late INTx acknowledge"). The EPC API has no deassert: each raise is the
 * controller's own pulse (about 1 ms on Tegra234 and Cadence).
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/ktime.h>
#include <linux/string.h>

#include "epf.h"
#include "trace.h"

static const unsigned int fl_irq_types[] = {
	[FL_IRQ_INTX] = FL_EPC_IRQ_INTX,
	[FL_IRQ_MSI] = FL_EPC_IRQ_MSI,
	[FL_IRQ_MSIX] = FL_EPC_IRQ_MSIX,
};

/*
 * An INTx the host has not acknowledged after this long is taken as lost: the
 * controller's pulse (about 1 ms) ended before the host's handler saw INTx
 * Status set (a handler that ran late, or INTx still disabled at the
 * function), so no acknowledge will ever come. It is raised again.
 */
#define FL_INTX_RETRY_NS	(20 * NSEC_PER_MSEC)

/* INTx with FL_F_INTX_SEQ in use: the next raise waits for irq_ack */
static bool fl_cq_intx_acked_mode(struct fl_ep *ep)
{
	return ep->irq_type == FL_IRQ_INTX && (ep->accepted & FL_F_INTX_SEQ) &&
	       ep->state == FL_STATE_READY;
}

/*
 * Take in the host's acknowledge: irq_ack carries the number of the last INTx.
 * Any other number acknowledges an earlier INTx, taken late: the last one is
 * still out, taken and waiting for the host's enable, or lost (then raised
 * again once overdue).
 */
static void fl_cq_intx_settle(struct fl_ep *ep)
{
	if (ep->intx_out && le32_to_cpu(READ_ONCE(ep->db->irq_ack)) == ep->intx_seq)
		ep->intx_out = false;
}

/* The last INTx is unacknowledged for FL_INTX_RETRY_NS (after fl_cq_intx_settle()) */
static bool fl_cq_intx_overdue(struct fl_ep *ep)
{
	return ep->intx_out && ktime_get_ns() - ep->intx_ts >= FL_INTX_RETRY_NS;
}

/*
 * INTx with FL_F_INTX_SEQ: true while the last INTx is not acknowledged (the
 * caller defers this one) and not overdue; otherwise the raise about to
 * happen is the one out from now on (fl_cq_raise_num() numbers it).
 */
static bool fl_cq_intx_busy(struct fl_ep *ep)
{
	if (!fl_cq_intx_acked_mode(ep))
		return false;
	fl_cq_intx_settle(ep);
	if (ep->intx_out) {
		if (!fl_cq_intx_overdue(ep)) {
			ep->intx_wait = true;
			return true;
		}
		fl_stat_add(ep, FL_STAT_INTX_RETRIES, 1);
		dev_info_ratelimited(ep->dev, "INTx not acknowledged within %u ms: raised again\n",
				     (u32)(FL_INTX_RETRY_NS / NSEC_PER_MSEC));
	}
	ep->intx_out = true;
	ep->intx_wait = false;
	ep->intx_ts = ktime_get_ns();
	return false;
}

/*
 * A lost INTx leaves the host asleep with completions it has not consumed,
 * and nothing new may come to raise another: the idle pass raises it again,
 * 20 ms after it went unacknowledged.
 */
static bool fl_cq_intx_lost(struct fl_ep *ep)
{
	if (!fl_cq_intx_acked_mode(ep))
		return false;
	fl_cq_intx_settle(ep);
	if (!fl_cq_intx_overdue(ep))
		return false;
	return le32_to_cpu(READ_ONCE(ep->db->cq_cons)) != ep->cq_prod;
}

/**
 * fl_cq_raise_num() - raise one interrupt of the type the host enabled
 * @ep: the endpoint (engine context, or engine stopped; irq_type not NONE).
 * @num: the number passed to pci_epc_raise_irq() (its meaning: irqtest.c).
 *
 * An INTx the host acknowledges by number (%FL_F_INTX_SEQ) gets the next
 * number in fl_bar_status.intx_seq first.
 *
 * Return: pci_epc_raise_irq()'s result; -EIO (controller in reset) also marks
 * the session lost for the window and the controller.
 */
int fl_cq_raise_num(struct fl_ep *ep, u16 num)
{
	struct pci_epf *epf = ep->epf;
	int ret;

	if (ep->irq_type == FL_IRQ_INTX && (ep->accepted & FL_F_INTX_SEQ)) {
		WRITE_ONCE(ep->status->intx_seq, cpu_to_le32(++ep->intx_seq));
		/* the number in BAR0 before the raise: the host's handler reads it */
		wmb();
	}
	ret = pci_epc_raise_irq(ep->epc, epf->func_no, epf->vfunc_no,
				fl_irq_types[ep->irq_type], num);
	if (ret == -EIO) {
		/* The controller is in reset (PERST#): leave it and the window alone */
		ep->cqm_lost = true;
	}
	if (!ret) {
		fl_stat_add(ep, FL_STAT_INTERRUPTS, 1);
		trace_fl_ep_irq(ep->id, num, ep->cq_prod);
	}
	return ret;
}

/**
 * fl_cq_raise() - interrupt the host with the type it enabled
 * @ep: the endpoint (engine context, or engine stopped).
 *
 * With the number the self-test found (1, or 0 on a 0-based controller;
 * irqtest.c), and not at all when it found that none reaches the host: the
 * host polls then. An INTx the host has not acknowledged yet
 * (%FL_F_INTX_SEQ) defers this one until it does (fl_cq_idle()).
 *
 * Return: 0 when raised, deferred or not due; the controller's errno when the raise failed.
 */
int fl_cq_raise(struct fl_ep *ep)
{
	int ret;

	if (ep->irq_type == FL_IRQ_NONE || ep->irq_type > FL_IRQ_MSIX || ep->irq_dead)
		return 0;
	if (fl_cq_intx_busy(ep))
		return 0;
	ret = fl_cq_raise_num(ep, ep->irq_num);
	if (ret)
		dev_err_ratelimited(ep->dev, "raising irq type %u number %u failed: %d\n",
				    ep->irq_type, ep->irq_num, ret);
	return ret;
}

/**
 * fl_cq_init() - take the host's set-up at enable
 * @ep: the endpoint (engine context).
 *
 * The control block is copied out once and checked (fl_ctrl_check); then
 * cq_prod is zeroed in host memory, which also proves the address.
 *
 * Return: 0, or -EINVAL after entering %FL_STATE_ERROR.
 */
int fl_cq_init(struct fl_ep *ep)
{
	struct fl_host_status hs = {};
	struct fl_bar_ctrl c;
	u32 ack;
	int ret;

	/* The host writes every other field before ENABLE */
	dma_rmb();
	memcpy(&c, ep->ctrl, sizeof(c));
	ep->irq_type = FL_IRQ_NONE;
	/* A refusal below interrupts untested, with the default number */
	fl_irqt_reset(ep);
	if (fl_ctrl_check(&c, ep->offered, ep->entries, ep->entries)) {
		if (le32_to_cpu(c.irq_type) <= FL_IRQ_MSIX)
			ep->irq_type = le32_to_cpu(c.irq_type);
		fl_bar_proto_error(ep, FL_ERR_BAD_CTRL, "control block out of range at enable");
		return -EINVAL;
	}
	ep->cq_entries = le32_to_cpu(c.cq_entries);
	ep->cq_addr = le64_to_cpu(c.cq_addr);
	ep->accepted = le64_to_cpu(c.features);
	ep->irq_type = le32_to_cpu(c.irq_type);
	fl_ep_v4l2_enable(ep, ep->accepted & FL_F_FORMAT);

	ep->cq_unflushed = false;
	ep->cq_signalled = 0;
	ep->irq_seq = 0;
	ep->cq_sig_event = 0;
	ep->cq_sig_seen = 0;
	ep->intx_out = false;
	ep->intx_wait = false;
	/* INTx numbers go on past any acknowledge the host may still write (an earlier bind's) */
	ack = le32_to_cpu(READ_ONCE(ep->db->irq_ack));
	if ((s32)(ack - ep->intx_seq) > 0)
		ep->intx_seq = ack;
	ep->irq_owed = false;

	ret = fl_cqmap_map(ep);
	if (ret) {
		dev_err_ratelimited(ep->dev, "cannot map the completion area: %d\n", ret);
		fl_bar_proto_error(ep, FL_ERR_BAD_CTRL, "completion ring not writable");
		return -EINVAL;
	}
	fl_cqmap_write(ep, 0, &hs, sizeof(hs));
	return 0;
}

/**
 * fl_cq_stop() - the queues stopped: no more completions this session
 * @ep: the endpoint (engine context, or engine stopped).
 */
void fl_cq_stop(struct fl_ep *ep)
{
	fl_cqmap_unmap(ep);
}

static void fl_cqe_fill(struct fl_cqe *e, const struct fl_xfer *x, u16 kind, bool ts)
{
	*e = (struct fl_cqe){
		.id = cpu_to_le32(x->id),
		.bytes = cpu_to_le32(x->status == FL_ST_OK ? x->bytes : 0),
		.kind = cpu_to_le16(kind),
		.status = cpu_to_le16(x->status),
		/* the host's own flags, as minor 2 defined them */
		.flags = cpu_to_le32(x->flags & FL_FRAME_FLAGS),
		.seq = cpu_to_le32(x->seq),
		.cookie = cpu_to_le64(x->cookie),
	};
	if (ts) {
		e->ts_dma_start = cpu_to_le64(x->ts_start);
		e->ts_dma_done = cpu_to_le64(x->ts_done);
	}
}

/*
 * A DMA abort is often the first sign of a link loss whose event (link_down,
 * epc_deinit) comes next: hold a failed transfer, and the ones behind it,
 * for FL_EP_FAIL_HOLD_MS so that the loss cancels it (-ECANCELED) like every
 * other frame in flight, instead of failing it alone (-EIO) just before.
 * A failure without a link loss is published after the hold.
 */
static bool fl_cq_hold(struct fl_xfer *x)
{
	u64 now;

	if (!x->dma_err || x->status != FL_ST_OK)
		return false;
	now = ktime_get_ns();
	if (!x->hold_until)
		x->hold_until = now + FL_EP_FAIL_HOLD_MS * NSEC_PER_MSEC;
	return now < x->hold_until;
}

/* Finish a transfer: its wire status, its slot to the app */
static void fl_cq_finish(struct fl_ep *ep, struct fl_xfer *x, u32 queue)
{
	if (x->status == FL_ST_OK && x->dma_err)
		x->status = FL_ST_DMA;
	if (x->slot != FL_EP_NO_SLOT)
		fl_q_complete(ep, x, queue, fl_status_errno(x->status));
}

/* Write n entries from cq_batch at ring position cq_prod, then cq_prod */
static void fl_cq_write(struct fl_ep *ep, u32 n)
{
	u32 pos = fl_ring_slot(ep->cq_prod, ep->cq_entries);
	u32 first = min(n, ep->cq_entries - pos);

	fl_cqmap_write(ep, FL_HOST_CQ_OFFSET + (size_t)pos * sizeof(struct fl_cqe),
		       ep->cq_batch, first * sizeof(struct fl_cqe));
	if (n > first)
		fl_cqmap_write(ep, FL_HOST_CQ_OFFSET, ep->cq_batch + first,
			       (n - first) * sizeof(struct fl_cqe));
	/* what is still coming to the host: sizes its next batch (FL_F_CQ_BATCH) */
	if (ep->accepted & FL_F_CQ_BATCH)
		fl_cqmap_write32(ep, offsetof(struct fl_host_status, e2h_pending),
				 fl_q_submitted(ep) + (ep->rx_cons - ep->rx_done));
	/* Posted writes through one window stay in order: entries before the index */
	wmb();
	fl_cqmap_write32(ep, offsetof(struct fl_host_status, cq_prod), ep->cq_prod + n);
}

/*
 * Interrupt for everything published. With FL_F_IRQ_PROD the interrupt is
 * announced in host memory (irq_prod and irq_seq, after cq_prod: one window,
 * in order) and the host waits there for what it overtook. Without it, cq_prod is read back
 * through the window: the completions are in host memory before the
 * interrupt, whatever path the controller sends it on.
 */
static void fl_cq_signal(struct fl_ep *ep)
{
	if (ep->accepted & FL_F_IRQ_PROD) {
		/* one window, posted writes in order: cq_prod, irq_prod, irq_seq */
		wmb();
		fl_cqmap_write32(ep, offsetof(struct fl_host_status, irq_prod), ep->cq_prod);
		/* irq_prod before irq_seq: the host reads them in the other order */
		wmb();
		fl_cqmap_write32(ep, offsetof(struct fl_host_status, irq_seq), ++ep->irq_seq);
	} else {
		fl_cqmap_flush(ep);
	}
	ep->cq_unflushed = false;
	ep->cq_signalled = ep->cq_prod;
	/* the arm this interrupt answers: a host behind it arms anew (fl_cq_behind()) */
	ep->cq_sig_event = le32_to_cpu(READ_ONCE(ep->db->cq_event));
	dma_rmb();
	ep->cq_sig_seen = le32_to_cpu(READ_ONCE(ep->db->irq_seen));
	/*
	 * Marked signalled either way: a raise that failed is owed, and the idle
	 * pass makes it again (the host may be asleep, armed, and nothing new may
	 * come to raise another). Not on a controller in reset: the session is lost.
	 */
	ep->irq_owed = fl_cq_raise(ep) && !ep->cqm_lost;
}

/*
 * FL_F_IRQ_SEEN: the host armed @event (loaded just before) without having seen
 * our last announcement, and has armed anew since the last interrupt. Two
 * interrupts merged into one handler run wake the host at the first
 * announcement; it drains that and may arm below cq_signalled, which then
 * does not mean "awake". Once per new (cq_event, irq_seen) pair, so a host
 * that stays behind is not interrupted on every pass.
 */
static bool fl_cq_behind(struct fl_ep *ep, u32 event)
{
	u32 seen;

	if (!(ep->accepted & FL_F_IRQ_SEEN))
		return false;
	/* the host stores irq_seen before cq_event: loaded after it */
	dma_rmb();
	seen = le32_to_cpu(READ_ONCE(ep->db->irq_seen));
	return seen != ep->irq_seq && (event != ep->cq_sig_event || seen != ep->cq_sig_seen);
}

/*
 * The host armed @event since the last interrupt: an index before cq_prod of
 * the last interrupt was armed before the host drained what that interrupt
 * announced, and the host is awake - unless it armed behind an announcement
 * (fl_cq_behind()). Compared as a signed distance: a host that polled more
 * than cq_entries completions without arming (REAP with no timeout) arms far
 * past cq_signalled, and that arm is fresh.
 */
static bool fl_cq_armed(struct fl_ep *ep, u32 event)
{
	return (s32)(event - ep->cq_signalled) >= 0 || fl_cq_behind(ep, event);
}

/* A published completion has passed @event (event in [cq_prod - cq_entries, cq_prod)) */
static bool fl_cq_passed(struct fl_ep *ep, u32 event)
{
	return (u32)(ep->cq_prod - event - 1) < ep->cq_entries;
}

/*
 * Interrupt when the host armed an event index that a published completion
 * has passed. Otherwise the batch stays unflushed.
 */
static void fl_cq_check_event(struct fl_ep *ep)
{
	u32 event = le32_to_cpu(READ_ONCE(ep->db->cq_event));

	if (fl_cq_passed(ep, event) && fl_cq_armed(ep, event))
		fl_cq_signal(ep);
	else
		ep->cq_unflushed = true;
}

/* A transfer was started and not yet published: its publish looks at cq_event again */
static bool fl_cq_in_flight(struct fl_ep *ep)
{
	return ep->tx_done != ep->tx_cons || ep->rx_done != ep->rx_cons;
}

/*
 * FL_F_CQ_BATCH, nothing new to publish. Until an interrupt covers what was
 * published, cq_event is loaded again on every pass: the host does not flush
 * its arm, so this is how an arm that crossed our last load is seen. While
 * transfers are in flight that is all (no read across the link per batch:
 * their publish comes soon and looks again). With nothing in flight the
 * batch has ended: completions the host armed for and has not consumed get
 * their interrupt now, short of the index; consumed ones need none.
 */
static void fl_cq_batch_idle(struct fl_ep *ep)
{
	u32 event, cons;
	bool behind;

	/* all signalled, and the host has seen our last announcement (or cannot say) */
	if (ep->cq_prod == ep->cq_signalled &&
	    (!(ep->accepted & FL_F_IRQ_SEEN) ||
	     le32_to_cpu(READ_ONCE(ep->db->irq_seen)) == ep->irq_seq))
		return;
	event = le32_to_cpu(READ_ONCE(ep->db->cq_event));
	behind = fl_cq_behind(ep, event);
	if (!behind && (s32)(event - ep->cq_signalled) < 0)
		return;
	if (fl_cq_passed(ep, event)) {
		fl_cq_signal(ep);
		return;
	}
	/* the host has not caught up with the last interrupt yet: it is awake, unless behind */
	cons = le32_to_cpu(READ_ONCE(ep->db->cq_cons));
	if (fl_cq_in_flight(ep) || cons == ep->cq_prod ||
	    ((s32)(cons - ep->cq_signalled) < 0 && !behind))
		return;
	fl_stat_add(ep, FL_STAT_BATCH_IRQS, 1);
	fl_cq_signal(ep);
}

/*
 * Nothing new to publish: on the way to idle. A batch that did not
 * interrupt is flushed (cq_prod in host memory) before cq_event is loaded
 * again, so an arm the host made after our last load is seen; a deferred
 * INTx goes out once the host acknowledged the last one, and an interrupt
 * whose raise failed is raised again (65-notify, "raises fail").
 */
static void fl_cq_idle(struct fl_ep *ep)
{
	if (ep->irq_owed || ep->intx_wait || fl_cq_intx_lost(ep)) {
		fl_cq_signal(ep);
		return;
	}
	if (!(ep->accepted & FL_F_CQ_EVENT))
		return;
	if (ep->accepted & FL_F_CQ_BATCH) {
		fl_cq_batch_idle(ep);
		return;
	}
	if (ep->cq_unflushed) {
		fl_cqmap_flush(ep);
		ep->cq_unflushed = false;
	}
	fl_cq_check_event(ep);
	/* Looked again: stays unflushed only until the next idle pass */
	ep->cq_unflushed = false;
}

/**
 * fl_cq_publish() - publish finished transfers in ring order
 * @ep: the endpoint (engine context, state READY).
 *
 * Return: true when anything was published.
 */
bool fl_cq_publish(struct fl_ep *ep)
{
	u32 cons = le32_to_cpu(READ_ONCE(ep->db->cq_cons));
	u32 old = ep->cq_prod, used, room, n = 0;
	bool ts = ep->accepted & FL_F_TIMESTAMPS;

	/* The controller is in reset: no store into the window until the next enable */
	if (ep->cqm_lost || !ep->cqm_va)
		return false;
	used = fl_ring_used(old, cons);
	if (used > ep->cq_entries) {
		fl_bar_proto_error(ep, FL_ERR_BAD_INDEX, "cq_cons past cq_prod");
		return true;
	}
	room = ep->cq_entries - used;

	while (n < room && ep->tx_done != ep->tx_cons) {
		struct fl_xfer *x = &ep->txx[fl_ring_slot(ep->tx_done, ep->entries)];

		if (!fl_xfer_done(x) || fl_cq_hold(x))
			break;
		fl_cq_finish(ep, x, FL_Q_RX);
		fl_cqe_fill(&ep->cq_batch[n++], x, FL_CQE_TX_DONE, ts);
		ep->tx_done++;
	}
	while (n < room && ep->rx_done != ep->rx_cons) {
		struct fl_xfer *x = &ep->rxx[fl_ring_slot(ep->rx_done, ep->entries)];

		if (!fl_xfer_done(x) || fl_cq_hold(x))
			break;
		fl_cq_finish(ep, x, FL_Q_TX);
		fl_cqe_fill(&ep->cq_batch[n++], x, FL_CQE_RX, ts);
		ep->rx_done++;
	}
	if (!n) {
		fl_cq_idle(ep);
		return false;
	}

	fl_cq_write(ep, n);
	ep->cq_prod = old + n;
	trace_fl_ep_cq_publish(ep->id, ep->cq_prod, n);

	if (!(ep->accepted & FL_F_CQ_EVENT)) {
		fl_cq_signal(ep);
		return true;
	}
	/*
	 * cq_prod stored before cq_event is loaded (local order only; the store
	 * may still be on its way: fl_cq_idle() flushes it)
	 */
	mb();
	fl_cq_check_event(ep);
	return true;
}
