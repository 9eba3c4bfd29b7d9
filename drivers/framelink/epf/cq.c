// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: completions into host memory, then the interrupt.
 *
 * The completion ring is host memory at ctrl.cq_addr: struct fl_host_status
 * (cq_prod) then fl_cqe[cq_entries]. Per batch: the entries are written
 * through the outbound window and unmapped (posted writes, visible before
 * anything later), then cq_prod the same way, then - only if the host armed
 * cq_event (FL_F_CQ_EVENT) or did not accept moderation - the interrupt.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/string.h>

#include "epf.h"

static const unsigned int fl_irq_types[] = {
	[FL_IRQ_INTX] = FL_EPC_IRQ_INTX,
	[FL_IRQ_MSI] = FL_EPC_IRQ_MSI,
	[FL_IRQ_MSIX] = FL_EPC_IRQ_MSIX,
};

/**
 * fl_cq_raise() - interrupt the host with the type it enabled, vector 1
 * @ep: the endpoint (engine context, or engine stopped).
 */
void fl_cq_raise(struct fl_ep *ep)
{
	struct pci_epf *epf = ep->epf;
	int ret;

	if (ep->irq_type == FL_IRQ_NONE || ep->irq_type > FL_IRQ_MSIX)
		return;
	ret = pci_epc_raise_irq(ep->epc, epf->func_no, epf->vfunc_no,
				fl_irq_types[ep->irq_type], FL_EP_IRQ_VECTOR);
	if (ret)
		dev_err_ratelimited(ep->dev, "raising irq type %u failed: %d\n",
				    ep->irq_type, ret);
	else
		fl_stat_add(ep, FL_STAT_INTERRUPTS, 1);
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
	int ret;

	/* The host writes every other field before ENABLE */
	dma_rmb();
	memcpy(&c, ep->ctrl, sizeof(c));
	ep->irq_type = FL_IRQ_NONE;
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

	ret = fl_win_write(ep, ep->cq_addr, &hs, sizeof(hs));
	if (ret) {
		fl_bar_proto_error(ep, FL_ERR_BAD_CTRL, "completion ring not writable");
		return -EINVAL;
	}
	return 0;
}

static void fl_cqe_fill(struct fl_cqe *e, const struct fl_xfer *x, u16 kind, bool ts)
{
	*e = (struct fl_cqe){
		.id = cpu_to_le32(x->id),
		.bytes = cpu_to_le32(x->status == FL_ST_OK ? x->bytes : 0),
		.kind = cpu_to_le16(kind),
		.status = cpu_to_le16(x->status),
		.flags = cpu_to_le32(x->flags),
		.seq = cpu_to_le32(x->seq),
		.cookie = cpu_to_le64(x->cookie),
	};
	if (ts) {
		e->ts_dma_start = cpu_to_le64(x->ts_start);
		e->ts_dma_done = cpu_to_le64(x->ts_done);
	}
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
static int fl_cq_write(struct fl_ep *ep, u32 n)
{
	u32 pos = fl_ring_slot(ep->cq_prod, ep->cq_entries);
	u32 first = min(n, ep->cq_entries - pos);
	u64 ring = ep->cq_addr + FL_HOST_CQ_OFFSET;
	__le32 prod = cpu_to_le32(ep->cq_prod + n);
	int ret;

	ret = fl_win_write(ep, ring + (u64)pos * sizeof(struct fl_cqe), ep->cq_batch,
			   first * sizeof(struct fl_cqe));
	if (!ret && n > first)
		ret = fl_win_write(ep, ring, ep->cq_batch + first,
				   (n - first) * sizeof(struct fl_cqe));
	if (ret)
		return ret;
	/* Entries are visible (unmapped) before the index that publishes them */
	wmb();
	return fl_win_write(ep, ep->cq_addr + offsetof(struct fl_host_status, cq_prod),
			    &prod, sizeof(prod));
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
	int ret;

	used = fl_ring_used(old, cons);
	if (used > ep->cq_entries) {
		fl_bar_proto_error(ep, FL_ERR_BAD_INDEX, "cq_cons past cq_prod");
		return true;
	}
	room = ep->cq_entries - used;

	while (n < room && ep->tx_done != ep->tx_cons) {
		struct fl_xfer *x = &ep->txx[fl_ring_slot(ep->tx_done, ep->entries)];

		if (!fl_xfer_done(x))
			break;
		fl_cq_finish(ep, x, FL_Q_RX);
		fl_cqe_fill(&ep->cq_batch[n++], x, FL_CQE_TX_DONE, ts);
		ep->tx_done++;
	}
	while (n < room && ep->rx_done != ep->rx_cons) {
		struct fl_xfer *x = &ep->rxx[fl_ring_slot(ep->rx_done, ep->entries)];

		if (!fl_xfer_done(x))
			break;
		fl_cq_finish(ep, x, FL_Q_TX);
		fl_cqe_fill(&ep->cq_batch[n++], x, FL_CQE_RX, ts);
		ep->rx_done++;
	}
	if (!n)
		return false;

	ret = fl_cq_write(ep, n);
	if (ret) {
		/* Link down is handled by link_down; anything else is a bad address */
		if (ret != -ENOLINK)
			fl_bar_proto_error(ep, FL_ERR_BAD_CTRL, "completion ring not writable");
		return true;
	}
	ep->cq_prod = old + n;

	/* cq_prod out before reading the event index the host re-arms after it */
	mb();
	if (!(ep->accepted & FL_F_CQ_EVENT) ||
	    fl_need_event(le32_to_cpu(READ_ONCE(ep->db->cq_event)), ep->cq_prod, old))
		fl_cq_raise(ep);
	return true;
}
