// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: BAR0 (header, control, status, doorbell, rings).
 *
 * BAR0 is endpoint memory the host writes with posted writes. The endpoint
 * writes the header once (epc_init) and the status block; everything the host
 * wrote is copied out once and validated before use (fl_proto.h).
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/io.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "epf.h"

/**
 * fl_bar_alloc() - allocate BAR0 and lay it out (bind)
 * @ep: the endpoint.
 *
 * BAR0 is 1 MiB, 64-bit, the only BAR mainline Tegra234 offers.
 *
 * Return: 0 or a negative errno.
 */
int fl_bar_alloc(struct fl_ep *ep)
{
	u64 fixed = fl_epc_bar_fixed_size(ep->features, BAR_0);
	struct pci_epf *epf = ep->epf;
	void *base;

	if (pci_epc_get_first_free_bar(ep->features) != BAR_0) {
		dev_err(ep->dev, "framelink needs BAR0, the controller reserves it\n");
		return -EINVAL;
	}
	if (fixed && fixed < FL_BAR_SIZE) {
		dev_err(ep->dev, "BAR0 is fixed at %llu bytes, framelink needs %u\n",
			fixed, FL_BAR_SIZE);
		return -EINVAL;
	}
	base = fl_epf_alloc_space(epf, FL_BAR_SIZE, BAR_0, ep->features);
	if (!base) {
		dev_err(ep->dev, "cannot allocate BAR0\n");
		return -ENOMEM;
	}
	/* 64-bit, so the host may place it anywhere (BAR1 is its upper half) */
	epf->bar[BAR_0].flags |= PCI_BASE_ADDRESS_MEM_TYPE_64;
	memset(base, 0, epf->bar[BAR_0].size);

	ep->bar = base;
	ep->hdr = base + FL_BAR_HEADER_OFFSET;
	ep->ctrl = base + FL_BAR_CTRL_OFFSET;
	ep->status = base + FL_BAR_STATUS_OFFSET;
	ep->db = base + FL_BAR_DOORBELL_OFFSET;
	ep->entries = ep->cfg.ring_entries;
	ep->tx_ring = base + FL_BAR_RINGS_OFFSET;
	ep->rx_ring = (void *)(ep->tx_ring + ep->entries);
	ep->state = FL_STATE_RESET;
	return 0;
}

/**
 * fl_bar_free() - free BAR0 (unbind)
 * @ep: the endpoint.
 */
void fl_bar_free(struct fl_ep *ep)
{
	if (!ep->bar)
		return;
	pci_epf_free_space(ep->epf, ep->bar, BAR_0, PRIMARY_INTERFACE);
	ep->bar = NULL;
}

/* The header this endpoint publishes, built from its own state, never from the BAR */
static void fl_bar_fill_header(const struct fl_ep *ep, struct fl_bar_header *h)
{
	u32 rx_off = FL_BAR_RINGS_OFFSET + ep->entries * sizeof(struct fl_tx_desc);

	*h = (struct fl_bar_header){
		.magic = cpu_to_le32(FL_MAGIC),
		.abi_version = cpu_to_le32(FL_ABI_VERSION),
		.features = cpu_to_le64(ep->offered),
		.bar_size = cpu_to_le32(FL_BAR_SIZE),
		.tx_ring_offset = cpu_to_le32(FL_BAR_RINGS_OFFSET),
		.tx_entries = cpu_to_le32(ep->entries),
		.rx_ring_offset = cpu_to_le32(rx_off),
		.rx_entries = cpu_to_le32(ep->entries),
		.max_frame = cpu_to_le32(ep->slot_size),
		.ep_slots = cpu_to_le32(ep->nslots),
	};
}

/* Everything but the magic, then the magic: a host that sees it sees the rest */
static void fl_bar_publish_header(struct fl_ep *ep, const struct fl_bar_header *h)
{
	const size_t body = offsetof(struct fl_bar_header, abi_version);

	memcpy((u8 *)ep->hdr + body, (const u8 *)h + body, sizeof(*h) - body);
	/* the body before the magic, for a host that reads the BAR */
	wmb();
	WRITE_ONCE(ep->hdr->magic, h->magic);
}

/**
 * fl_bar_write_header() - publish the header once the data path is known (epc_init)
 * @ep: the endpoint.
 */
void fl_bar_write_header(struct fl_ep *ep)
{
	struct fl_bar_header h;

	ep->offered = FL_F_CQ_EVENT | FL_F_TIMESTAMPS | FL_F_IRQ_TEST | FL_F_CQ_BATCH |
		     FL_F_IRQ_PROD | FL_F_IRQ_SEEN | FL_F_INTX_SEQ | FL_F_FORMAT |
		     (ep->nrd || ep->nwr ? FL_F_DMA : 0);
	fl_bar_fill_header(ep, &h);
	fl_bar_publish_header(ep, &h);
}

/**
 * fl_bar_heal_header() - rewrite the header if the host altered it
 * @ep: the endpoint (engine context, or the engine is stopped); header published.
 *
 * The header is BAR0 memory the host can write (a buggy driver, a crashed kernel
 * before a kdump one): the host reads it again at every queue reset and keeps
 * its queue stopped while it differs from what it set up. Called at link up,
 * on every idle pass of a session (READY or ERROR) and before the status
 * block says RESET, so the reset that follows reads the endpoint's own header.
 * Not while idle in RESET: no host has a queue with this endpoint then, and a
 * host that binds reads whatever is there (78-epf-coverage.sh writes other
 * endpoints' headers then to show the host's refusals). Counted in
 * status_repairs.
 *
 * Return: true when the header was rewritten.
 */
bool fl_bar_heal_header(struct fl_ep *ep)
{
	struct fl_bar_header h;

	fl_bar_fill_header(ep, &h);
	if (!memcmp(&h, ep->hdr, sizeof(h)))
		return false;
	fl_stat_add(ep, FL_STAT_STATUS_REPAIRS, 1);
	dev_warn_ratelimited(ep->dev, "BAR0 header altered by the host: rewritten\n");
	fl_bar_publish_header(ep, &h);
	return true;
}

static bool fl_irq_mode_allows(struct fl_ep *ep, u32 mode)
{
	return ep->cfg.irq_mode == FL_EP_IRQ_AUTO || ep->cfg.irq_mode == mode;
}

/**
 * fl_bar_setup() - program the controller (epc_init)
 * @ep: the endpoint.
 *
 * Writes the configuration header and the BAR0 header, sets BAR0 and the
 * interrupt capabilities the mode allows. DMA channels are requested before
 * (fl_xfer_init_hw) so the header can offer %FL_F_DMA.
 *
 * Return: 0 or a negative errno.
 */
int fl_bar_setup(struct fl_ep *ep)
{
	struct pci_epf *epf = ep->epf;
	struct pci_epc *epc = ep->epc;
	int ret;

	if (ep->cfg.irq_mode == FL_EP_IRQ_NONE ||
	    !fl_irq_mode_allows(ep, FL_EP_IRQ_INTX))
		epf->header->interrupt_pin = PCI_INTERRUPT_UNKNOWN;
	else if (!epf->header->interrupt_pin)
		epf->header->interrupt_pin = PCI_INTERRUPT_INTA;
	if (epf->vfunc_no <= 1) {
		ret = pci_epc_write_header(epc, epf->func_no, epf->vfunc_no, epf->header);
		if (ret) {
			dev_err(ep->dev, "cannot write the configuration header: %d\n", ret);
			return ret;
		}
	}

	ret = pci_epc_set_bar(epc, epf->func_no, epf->vfunc_no, &epf->bar[BAR_0]);
	if (ret) {
		dev_err(ep->dev, "cannot set BAR0: %d\n", ret);
		return ret;
	}

	ep->msi = false;
	ep->msix = false;
	if (ep->features->msi_capable && fl_irq_mode_allows(ep, FL_EP_IRQ_MSI)) {
		ret = pci_epc_set_msi(epc, epf->func_no, epf->vfunc_no,
				      max_t(u8, epf->msi_interrupts, 1));
		if (ret)
			dev_warn(ep->dev, "MSI set-up failed: %d\n", ret);
		ep->msi = !ret;
	}
	if (ep->features->msix_capable && fl_irq_mode_allows(ep, FL_EP_IRQ_MSIX)) {
		u16 n = epf->msix_interrupts ?: FL_EP_MSIX_VECTORS;

		ret = pci_epc_set_msix(epc, epf->func_no, epf->vfunc_no, n, BAR_0,
				       FL_EP_MSIX_OFFSET);
		if (ret)
			dev_warn(ep->dev, "MSI-X set-up failed: %d\n", ret);
		ep->msix = !ret;
	}
	return 0;
}

/**
 * fl_bar_clear() - take BAR0 off the controller (deinit, unbind)
 * @ep: the endpoint.
 */
void fl_bar_clear(struct fl_ep *ep)
{
	struct pci_epf *epf = ep->epf;

	pci_epc_clear_bar(ep->epc, epf->func_no, epf->vfunc_no, &epf->bar[BAR_0]);
}

/* fl_bar_status.intx_seq: the last INTx's number if the host accepted numbers, else zero */
static u32 fl_bar_intx_seq(struct fl_ep *ep)
{
	return ep->accepted & FL_F_INTX_SEQ ? ep->intx_seq : 0;
}

/* Write the status block from what the endpoint knows: error and generation first */
static void fl_bar_write_status(struct fl_ep *ep)
{
	struct fl_bar_status *st = ep->status;

	WRITE_ONCE(st->generation, cpu_to_le32(ep->st_generation));
	WRITE_ONCE(st->error, cpu_to_le32(ep->st_error));
	WRITE_ONCE(st->intx_seq, cpu_to_le32(fl_bar_intx_seq(ep)));
	memset(st->reserved, 0, sizeof(st->reserved));
	/* error and generation before the state the host waits for */
	wmb();
	WRITE_ONCE(st->state, cpu_to_le32(ep->state));
}

/**
 * fl_bar_set_state() - write the status block
 * @ep: the endpoint (engine context, or the engine is stopped).
 * @state: FL_STATE_*.
 * @error: FL_ERR_*.
 *
 * The generation counts from the endpoint's own copy, never from the BAR,
 * which the host can write.
 */
void fl_bar_set_state(struct fl_ep *ep, u32 state, u32 error)
{
	if (state == FL_STATE_READY)
		ep->st_generation++;
	/* the host reads the header again once it sees RESET (engine context: published) */
	if (state == FL_STATE_RESET)
		fl_bar_heal_header(ep);
	ep->st_error = error;
	ep->state = state;
	fl_bar_write_status(ep);
}

/**
 * fl_bar_heal_status() - rewrite the status block if the host altered it
 * @ep: the endpoint (engine context, or the engine is stopped).
 *
 * The status block is BAR0 memory, so the host can write it, and the engine
 * writes it only on a state change: one stray host write to @state while
 * the endpoint idles in RESET would leave the host waiting for RESET for
 * good. Called on every idle pass and at link up; a difference in any field
 * is counted in status_repairs and logged (rate-limited).
 *
 * Return: true when the block was rewritten.
 */
bool fl_bar_heal_status(struct fl_ep *ep)
{
	struct fl_bar_status *st = ep->status;

	if (le32_to_cpu(READ_ONCE(st->state)) == ep->state &&
	    le32_to_cpu(READ_ONCE(st->error)) == ep->st_error &&
	    le32_to_cpu(READ_ONCE(st->generation)) == ep->st_generation &&
	    le32_to_cpu(READ_ONCE(st->intx_seq)) == fl_bar_intx_seq(ep) &&
	    !memchr_inv(st->reserved, 0, sizeof(st->reserved)))
		return false;
	fl_stat_add(ep, FL_STAT_STATUS_REPAIRS, 1);
	dev_warn_ratelimited(ep->dev, "BAR0 status altered by the host: rewritten (state %u)\n",
			     ep->state);
	fl_bar_write_status(ep);
	return true;
}

/**
 * fl_bar_check_doorbell() - refuse non-zero reserved doorbell words (idle passes)
 * @ep: the endpoint (engine context).
 *
 * A later minor ABI may give these words a meaning; an endpoint that
 * ignored them could not be told apart from one that obeys. Checked while
 * READY on every idle pass (the busy path reads only the indices).
 *
 * Return: true after a protocol error stopped the queues.
 */
bool fl_bar_check_doorbell(struct fl_ep *ep)
{
	struct fl_bar_doorbell db;

	if (ep->state != FL_STATE_READY)
		return false;
	memcpy(&db, ep->db, sizeof(db));
	if (fl_doorbell_reserved_ok(&db))
		return false;
	fl_bar_proto_error(ep, FL_ERR_BAD_INDEX, "doorbell reserved field not zero");
	return true;
}

/**
 * fl_bar_proto_error() - the host broke the protocol: stop the queues, tell it
 * @ep: the endpoint (engine context).
 * @error: FL_ERR_* for the status block.
 * @what: what was wrong, for the log.
 *
 * Everything in flight fails, the state becomes %FL_STATE_ERROR until the
 * host clears %FL_CTRL_ENABLE, and an interrupt is raised if the host set
 * one up.
 */
void fl_bar_proto_error(struct fl_ep *ep, u32 error, const char *what)
{
	fl_stat_add(ep, FL_STAT_PROTO_ERRORS, 1);
	dev_err_ratelimited(ep->dev, "protocol error from the host: %s; queues stopped\n", what);
	if (ep->state == FL_STATE_READY)
		fl_ring_abort(ep);
	fl_bar_set_state(ep, FL_STATE_ERROR, error);
	fl_cq_raise(ep);
}
