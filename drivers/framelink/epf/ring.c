// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the queue protocol, one pass at a time (engine context).
 *
 * State machine of fl_bar_status.state:
 *   RESET --host sets ENABLE, ctrl valid--> READY (generation++)
 *   RESET --host sets ENABLE, ctrl bad--> ERROR (BAD_CTRL)
 *   READY --host clears ENABLE--> RESET (in flight fails with -ECANCELED locally)
 *   READY --host clears ENABLE, DMA not proven stopped--> ERROR, then RESET
 *     once it is (RESET tells the host that nothing writes its buffers any more)
 *   READY --bad index/address--> ERROR; READY --link down--> ERROR (LINK)
 *   ERROR --host clears ENABLE--> RESET
 * so after any error or link down the host must clear ENABLE (and see RESET)
 * before it can enable again; a stale ENABLE left in BAR0 is never obeyed.
 *
 * Data path, host -> endpoint (the host's tx ring):
 *   1. read tx_prod, check it against what was completed (fl_ring_prod_ok);
 *   2. copy the fl_tx_desc out of BAR0 once and validate the copy;
 *   3. take a slot the app posted (none: wait, the descriptor stays);
 *   4. copy host -> slot (xfer.c: DMA, or CPU in bounded chunks per pass);
 *   5. when done, in ring order: FL_CQE_TX_DONE to the host (cq.c), the slot
 *      to the app as an FL_Q_RX completion.
 * Endpoint -> host (the host's rx ring):
 *   1. the app submitted a slot; read rx_prod, check it;
 *   2. copy the next fl_rx_desc out once, validate; too small: FL_ST_TOO_BIG;
 *   3. copy slot -> host;
 *   4. when done, in ring order: FL_CQE_RX to the host, FL_Q_TX to the app.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/ktime.h>
#include <linux/string.h>

#include "epf.h"
#include "trace.h"

/**
 * fl_ring_reset() - forget every index (at enable)
 * @ep: the endpoint (engine context).
 */
void fl_ring_reset(struct fl_ep *ep)
{
	ep->tx_cons = 0;
	ep->tx_done = 0;
	ep->rx_cons = 0;
	ep->rx_done = 0;
	ep->cq_prod = 0;
	ep->rx_seq = 0;
	ep->tx_seen = 0;
	ep->t_seen = 0;
}

static int fl_status_of(int parse_err)
{
	return parse_err == -EMSGSIZE ? FL_ST_TOO_BIG : FL_ST_BAD_DESC;
}

/* A descriptor failed before any copy: finish it at once, without a slot */
static void fl_ring_fail_desc(struct fl_ep *ep, struct fl_xfer *x, int parse_err,
			      const char *ring, u32 idx)
{
	x->slot = FL_EP_NO_SLOT;
	x->status = fl_status_of(parse_err);
	x->leaked = false;
	x->cpu = false;
	x->ts_start = 0;
	x->ts_done = 0;
	x->done = true;
	if (x->status == FL_ST_BAD_DESC) {
		fl_stat_add(ep, FL_STAT_PROTO_ERRORS, 1);
		dev_err_ratelimited(ep->dev, "bad %s descriptor %u from the host\n", ring, idx);
	}
}

/* Check a producer index the host wrote; false after a protocol error */
static bool fl_ring_prod_check(struct fl_ep *ep, u32 prod, u32 cons, u32 done)
{
	if (!fl_ring_prod_ok(prod, done, ep->entries) ||
	    fl_ring_used(prod, done) < fl_ring_used(cons, done)) {
		fl_bar_proto_error(ep, FL_ERR_BAD_INDEX, "producer index out of range");
		return false;
	}
	return true;
}

/* A frame that took a buffer and will not be copied: done at once with @status */
static void fl_ring_fail_taken(struct fl_ep *ep, struct fl_xfer *x, u16 status)
{
	x->status = status;
	x->dma_err = false;
	x->hold_until = 0;
	x->leaked = false;
	x->cpu = false;
	x->ts_start = ktime_get_ns();
	x->ts_done = x->ts_start;
	/* Pairs with fl_xfer_done(), as in fl_xfer_finish() */
	smp_store_release(&x->done, true);
}

/* The frame flags the host may set: the format's once it accepted FL_F_FORMAT */
static u32 fl_ring_tx_flags(struct fl_ep *ep)
{
	return FL_FRAME_FLAGS | (ep->accepted & FL_F_FORMAT ? FL_FRAME_FMT_FLAGS : 0);
}

/*
 * A descriptor announced a new image format (FL_FRAME_FORMAT): the host wrote the block
 * before the descriptor, and both before the tx_prod this pass read (dma_rmb() above).
 * The capture device checks it (v4l2.c); a frame is moved whatever the block says.
 */
static void fl_ring_take_format(struct fl_ep *ep)
{
	struct fl_bar_format f;

	memcpy(&f, ep->bar + FL_BAR_FORMAT_OFFSET, sizeof(f));
	fl_ep_v4l2_peer_format(ep, &f);
}

/* Host -> endpoint: start copies for new tx descriptors while slots are posted */
static bool fl_ring_tx(struct fl_ep *ep)
{
	u32 prod = le32_to_cpu(READ_ONCE(ep->db->tx_prod));
	bool work = false;

	if (!fl_ring_prod_check(ep, prod, ep->tx_cons, ep->tx_done))
		return true;
	if (prod != ep->tx_seen) {
		ep->tx_seen = prod;
		ep->t_seen = ktime_get_ns();
		trace_fl_ep_desc_seen(ep->id, false, prod);
	}
	/* Descriptors after the index that published them */
	dma_rmb();

	while (ep->tx_cons != prod) {
		u32 pos = fl_ring_slot(ep->tx_cons, ep->entries);
		struct fl_xfer *x = &ep->txx[pos];
		struct fl_tx_desc raw;
		struct fl_desc d;
		u64 ts_post;
		int err;

		memcpy(&raw, &ep->tx_ring[pos], sizeof(raw));
		err = fl_tx_desc_parse(&raw, ep->slot_size, fl_ring_tx_flags(ep), &d);
		x->id = le32_to_cpu(raw.id);
		x->seq = le32_to_cpu(raw.seq);
		x->cookie = le64_to_cpu(raw.cookie);
		x->flags = le32_to_cpu(raw.flags) & FL_FRAME_FLAGS;
		x->bytes = 0;
		if (err) {
			fl_ring_fail_desc(ep, x, err, "tx", ep->tx_cons);
			ep->tx_cons++;
			work = true;
			continue;
		}

		/*
		 * Before a buffer is taken: a receiver that waits for the format to allocate
		 * its buffers learns it from a frame that waits for them (read again on every
		 * pass until then: an unchanged format is not announced twice)
		 */
		if (d.flags & FL_FRAME_FORMAT)
			fl_ring_take_format(ep);
		x->slot = fl_q_take_posted(ep, &ts_post);
		if (x->slot == FL_EP_NO_SLOT) {
			/* Waiting for the app is not reaction time */
			ep->t_seen = 0;
			break;
		}
		x->bytes = d.bytes;
		x->flags = d.flags;
		x->ts_submit = ts_post;
		x->status = FL_ST_OK;
		/* a V4L2 buffer may be shorter than a slot: the frame is consumed, unread */
		if (d.bytes > fl_slot_len(ep, x->slot)) {
			dev_warn_ratelimited(ep->dev, "tx %u: frame of %u bytes, V4L2 buffer of %u\n",
					     ep->tx_cons, d.bytes, fl_slot_len(ep, x->slot));
			fl_ring_fail_taken(ep, x, FL_ST_TOO_BIG);
		} else {
			fl_xfer_start(ep, x, d.addr, false);
		}
		if (ep->t_seen) {
			fl_stat_max(ep, FL_STAT_REACTION_NS, x->ts_start - ep->t_seen);
			ep->t_seen = 0;
		}
		ep->tx_cons++;
		work = true;
	}
	return work;
}

/* Endpoint -> host: start copies of submitted frames into posted host buffers */
static bool fl_ring_rx(struct fl_ep *ep)
{
	u32 prod = le32_to_cpu(READ_ONCE(ep->db->rx_prod));
	bool work = false;

	if (!fl_ring_prod_check(ep, prod, ep->rx_cons, ep->rx_done))
		return true;
	dma_rmb();

	while (ep->rx_cons != prod) {
		u32 pos = fl_ring_slot(ep->rx_cons, ep->entries);
		struct fl_xfer *x = &ep->rxx[pos];
		struct fl_rx_desc raw;
		struct fl_sub sub;
		struct fl_desc d;
		int err;

		if (!fl_q_peek_sub(ep, &sub))
			break;
		memcpy(&raw, &ep->rx_ring[pos], sizeof(raw));
		err = fl_rx_desc_parse(&raw, &d);
		x->id = le32_to_cpu(raw.id);
		if (err) {
			/* The frame waits for the next buffer */
			x->seq = 0;
			x->cookie = 0;
			x->flags = 0;
			x->bytes = 0;
			fl_ring_fail_desc(ep, x, err, "rx", ep->rx_cons);
			ep->rx_cons++;
			work = true;
			continue;
		}

		if (!fl_q_pop_sub(ep, &sub))
			break;	/* the queue changed under the peek (close/reopen): look again */
		x->slot = sub.slot;
		x->bytes = sub.bytes;
		x->flags = sub.flags;
		x->cookie = sub.cookie;
		x->ts_submit = sub.ts_submit;
		x->seq = ep->rx_seq++;
		if (sub.bytes > d.bytes) {
			x->status = FL_ST_TOO_BIG;
			x->leaked = false;
			x->cpu = false;
			x->ts_start = 0;
			x->ts_done = 0;
			x->done = true;
		} else {
			x->status = FL_ST_OK;
			fl_xfer_start(ep, x, d.addr, true);
		}
		ep->rx_cons++;
		work = true;
	}
	return work;
}

/*
 * A CPU copy found the link gone: end the queue the way a link-down event
 * does (frames in flight -ECANCELED, ERROR until the host resets it), not
 * the frame alone with -EIO. The event may follow, or never come (PERST#
 * without a deinit event); either way nothing resumes a cut copy into host
 * memory the host may have reclaimed since.
 */
static void fl_ring_link_cut(struct fl_ep *ep)
{
	ep->link_cut = false;
	dev_info_ratelimited(ep->dev, "link lost during a CPU copy: queue stopped\n");
	fl_ring_abort(ep);
	fl_bar_set_state(ep, FL_STATE_ERROR, FL_ERR_LINK);
}

/**
 * fl_ring_pass() - one look at BAR0 and the transfers in flight
 * @ep: the endpoint (engine context).
 *
 * Return: true when anything happened (keep polling busily).
 */
bool fl_ring_pass(struct fl_ep *ep)
{
	u32 ctrl = le32_to_cpu(READ_ONCE(ep->ctrl->ctrl));
	bool work;

	switch (ep->state) {
	case FL_STATE_RESET:
		if (!(ctrl & FL_CTRL_ENABLE) || fl_xfer_stuck(ep))
			return false;
		if (fl_cq_init(ep))
			return true;
		fl_xfer_resume(ep);
		fl_ring_reset(ep);
		/* Nothing in flight and the ring unused yet: time CPU copy vs DMA (xover.c) */
		if (fl_xover_run(ep)) {
			/* Stopping, or a measuring DMA not proven over: enable later */
			fl_cq_stop(ep);
			return true;
		}
		/* Before READY: the host reads the outcome with the state it waits for */
		fl_irqt_run(ep);
		fl_bar_set_state(ep, FL_STATE_READY, FL_ERR_NONE);
		dev_info(ep->dev, "enabled: generation %u, irq type %u number %u%s, features %#llx\n",
			 le32_to_cpu(READ_ONCE(ep->status->generation)), ep->irq_type,
			 ep->irq_num, ep->irq_dead ? " (none raised: self-test)" : "",
			 ep->accepted);
		return true;
	case FL_STATE_ERROR:
		/* RESET tells the host its buffers are free: not while DMA may write them */
		if ((ctrl & FL_CTRL_ENABLE) || fl_xfer_stuck(ep))
			return false;
		fl_bar_set_state(ep, FL_STATE_RESET, FL_ERR_NONE);
		return true;
	}

	if (!(ctrl & FL_CTRL_ENABLE)) {
		dev_info(ep->dev, "reset by the host\n");
		fl_stat_add(ep, FL_STAT_QUEUE_RESETS, 1);
		if (fl_ring_abort(ep)) {
			fl_bar_set_state(ep, FL_STATE_RESET, FL_ERR_NONE);
		} else {
			/* ERROR until the leaked DMA is proven over, then RESET (above) */
			dev_err_ratelimited(ep->dev, "reset held back: DMA still running\n");
			fl_bar_set_state(ep, FL_STATE_ERROR, FL_ERR_NONE);
		}
		return true;
	}
	work = fl_ring_tx(ep);
	if (ep->state == FL_STATE_READY)
		work |= fl_ring_rx(ep);
	if (ep->state == FL_STATE_READY)
		work |= fl_xfer_pass(ep);
	if (ep->link_cut) {
		fl_ring_link_cut(ep);
		return true;
	}
	if (ep->state == FL_STATE_READY)
		work |= fl_cq_publish(ep);
	return work;
}

/* Give the slot of an aborted transfer back, unless its DMA may still run */
static void fl_ring_cancel(struct fl_ep *ep, struct fl_xfer *x, u32 queue)
{
	if (x->slot == FL_EP_NO_SLOT)
		return;
	if (x->leaked) {
		/* The slot stays the engine's for good: never reused, never the app's */
		dev_warn_ratelimited(ep->dev, "slot %u kept: its DMA did not stop\n", x->slot);
		return;
	}
	fl_q_complete(ep, x, queue, -ECANCELED);
}

/**
 * fl_ring_abort() - stop the queues: fail everything in flight towards the app
 * @ep: the endpoint (engine context, or engine stopped).
 *
 * Nothing is written to host memory: after a reset or a link down the host
 * fails its own descriptors. DMA is ended first (fl_xfer_quiesce(), bounded
 * by dma_drain_ms): a slot goes back to the app only when no DMA of the
 * old generation can touch it or host memory any more; the slot of a
 * transfer whose DMA could not be proven over is kept.
 *
 * Return: true when every DMA channel is proven idle.
 */
bool fl_ring_abort(struct fl_ep *ep)
{
	bool idle = fl_xfer_quiesce(ep, fl_xfer_drain_ms());

	for (; ep->tx_done != ep->tx_cons; ep->tx_done++)
		fl_ring_cancel(ep, &ep->txx[fl_ring_slot(ep->tx_done, ep->entries)], FL_Q_RX);
	for (; ep->rx_done != ep->rx_cons; ep->rx_done++)
		fl_ring_cancel(ep, &ep->rxx[fl_ring_slot(ep->rx_done, ep->entries)], FL_Q_TX);
	fl_q_cancel_submitted(ep);
	fl_cq_stop(ep);
	fl_ring_reset(ep);
	return idle;
}
