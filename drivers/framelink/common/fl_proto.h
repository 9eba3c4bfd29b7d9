/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink: ring index maths and validation of what the peer wrote into shared memory.
 * Pure functions, used by both drivers and tested by KUnit (fl_proto_test.c). Nothing here
 * touches shared memory itself: callers copy an entry out once (READ_ONCE / memcpy_fromio)
 * and validate the copy, so the peer cannot change a value between check and use.
 */
#ifndef _FRAMELINK_FL_PROTO_H
#define _FRAMELINK_FL_PROTO_H

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/types.h>
#include <uapi/linux/framelink.h>
#include <framelink/abi-check.h>

/**
 * fl_ring_used() - entries between a consumer and a producer index
 * @prod: free-running producer index.
 * @cons: free-running consumer index.
 *
 * Return: prod - cons, correct across the 2^32 wrap.
 */
static inline u32 fl_ring_used(u32 prod, u32 cons)
{
	return prod - cons;
}

/**
 * fl_ring_prod_ok() - is a producer index the peer wrote possible?
 * @prod: producer index read from shared memory.
 * @cons: this side's consumer index.
 * @entries: ring size.
 *
 * Return: true when the peer published at most @entries entries ahead of @cons.
 */
static inline bool fl_ring_prod_ok(u32 prod, u32 cons, u32 entries)
{
	return fl_ring_used(prod, cons) <= entries;
}

/**
 * fl_ring_slot() - ring position of a free-running index
 * @idx: free-running index.
 * @entries: ring size, a power of two.
 *
 * Return: @idx modulo @entries.
 */
static inline u32 fl_ring_slot(u32 idx, u32 entries)
{
	return idx & (entries - 1);
}

/**
 * fl_ring_size_ok() - is a ring size acceptable?
 * @entries: ring size read from shared memory or configuration.
 *
 * Return: true for a power of two from 2 to %FL_RING_MAX_ENTRIES.
 */
static inline bool fl_ring_size_ok(u32 entries)
{
	return entries >= 2 && entries <= FL_RING_MAX_ENTRIES && is_power_of_2(entries);
}

/**
 * fl_need_event() - did publishing move the producer past the armed event index?
 * @event: the event index the consumer armed (fl_bar_doorbell.cq_event).
 * @new_prod: producer index after publishing.
 * @old_prod: producer index before publishing.
 *
 * Same rule as virtio's vring_need_event(): interrupt when @event lies in
 * [@old_prod, @new_prod).
 *
 * Return: true when the consumer asked to be interrupted for one of the new entries.
 */
static inline bool fl_need_event(u32 event, u32 new_prod, u32 old_prod)
{
	return (u32)(new_prod - event - 1) < (u32)(new_prod - old_prod);
}

/**
 * struct fl_desc - a validated frame or buffer descriptor, CPU byte order
 * @addr: bus address in host memory.
 * @bytes: frame length (tx) or buffer size (rx).
 * @flags: FL_FRAME_* (tx; 0 for rx).
 * @id: host buffer index.
 * @seq: sequence number (tx; 0 for rx).
 * @cookie: sender's cookie (tx; 0 for rx).
 */
struct fl_desc {
	u64 addr;
	u32 bytes;
	u32 flags;
	u32 id;
	u32 seq;
	u64 cookie;
};

/* A bus range must be non-empty and must not wrap the 64-bit address space. */
static inline bool fl_bus_range_ok(u64 addr, u32 bytes)
{
	return bytes && addr + bytes - 1 >= addr;
}

/**
 * fl_tx_desc_parse() - validate a frame descriptor the host wrote
 * @raw: a private copy of the descriptor.
 * @max_frame: largest frame this endpoint accepts.
 * @flags_ok: the FL_FRAME_* flags valid on this link (%FL_FRAME_FLAGS, and
 *	%FL_FRAME_FMT_FLAGS once %FL_F_FORMAT was accepted).
 * @out: the descriptor in CPU order, set only on success.
 *
 * Return: 0, or -EINVAL for a zero or wrapping range or flags outside @flags_ok, -EMSGSIZE
 * for a frame larger than @max_frame.
 */
static inline int fl_tx_desc_parse(const struct fl_tx_desc *raw, u32 max_frame, u32 flags_ok,
				   struct fl_desc *out)
{
	u64 addr = le64_to_cpu(raw->addr);
	u32 bytes = le32_to_cpu(raw->bytes);
	u32 flags = le32_to_cpu(raw->flags);

	if (!fl_bus_range_ok(addr, bytes) || (flags & ~flags_ok))
		return -EINVAL;
	if (bytes > max_frame)
		return -EMSGSIZE;
	out->addr = addr;
	out->bytes = bytes;
	out->flags = flags;
	out->id = le32_to_cpu(raw->id);
	out->seq = le32_to_cpu(raw->seq);
	out->cookie = le64_to_cpu(raw->cookie);
	return 0;
}

/**
 * fl_rx_desc_parse() - validate an empty-buffer descriptor the host wrote
 * @raw: a private copy of the descriptor.
 * @out: the descriptor in CPU order, set only on success.
 *
 * Return: 0, or -EINVAL for a zero-sized or wrapping buffer.
 */
static inline int fl_rx_desc_parse(const struct fl_rx_desc *raw, struct fl_desc *out)
{
	u64 addr = le64_to_cpu(raw->addr);
	u32 size = le32_to_cpu(raw->size);

	if (!fl_bus_range_ok(addr, size))
		return -EINVAL;
	*out = (struct fl_desc){ .addr = addr, .bytes = size, .id = le32_to_cpu(raw->id) };
	return 0;
}

/*
 * ---- Reserved fields the endpoint reads (issue 8 item 14, endpoint side) ----
 * Non-zero reserved words or bits from the host are a protocol error, so a later minor
 * ABI can give them a meaning and rely on older endpoints refusing them. fl_tx_desc and
 * fl_rx_desc have no reserved words; fl_tx_desc_parse() refuses unknown flag bits.
 */

/**
 * fl_reserved_zero() - are all reserved words of a private copy zero?
 * @words: the reserved array.
 * @n: its number of words.
 *
 * Return: true when every word is zero.
 */
static inline bool fl_reserved_zero(const __le32 *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (words[i])
			return false;
	return true;
}

/**
 * fl_ctrl_reserved_ok() - no reserved bit of ctrl and no reserved word set (at enable)
 * @ctrl: a private copy of fl_bar_ctrl.
 *
 * Return: true when the host left every reserved bit and word zero.
 */
static inline bool fl_ctrl_reserved_ok(const struct fl_bar_ctrl *ctrl)
{
	return !(le32_to_cpu(ctrl->ctrl) & ~FL_CTRL_ENABLE) &&
	       fl_reserved_zero(ctrl->reserved, ARRAY_SIZE(ctrl->reserved));
}

/**
 * fl_doorbell_reserved_ok() - no reserved doorbell word set
 * @db: a private copy of fl_bar_doorbell.
 *
 * Return: true when every reserved word is zero (irq_ack is not reserved).
 */
static inline bool fl_doorbell_reserved_ok(const struct fl_bar_doorbell *db)
{
	return fl_reserved_zero(db->reserved, ARRAY_SIZE(db->reserved));
}

/* ---- end of reserved-field checks ---- */

/**
 * fl_ctrl_check() - validate the host's setup at enable (endpoint side)
 * @ctrl: a private copy of fl_bar_ctrl.
 * @offered: FL_F_* the endpoint offered.
 * @tx_entries: tx ring size the endpoint published.
 * @rx_entries: rx ring size the endpoint published.
 *
 * Return: 0, or -EINVAL when the completion ring is too small, not a power of two,
 * misaligned or wraps, when the host accepted features never offered, when the
 * interrupt type is unknown, or when a reserved bit or word is set.
 */
static inline int fl_ctrl_check(const struct fl_bar_ctrl *ctrl, u64 offered,
				u32 tx_entries, u32 rx_entries)
{
	u32 cq_entries = le32_to_cpu(ctrl->cq_entries);
	u64 cq_addr = le64_to_cpu(ctrl->cq_addr);
	u64 cq_bytes = FL_HOST_CQ_OFFSET + (u64)cq_entries * sizeof(struct fl_cqe);

	if (!is_power_of_2(cq_entries) || cq_entries < tx_entries + rx_entries ||
	    cq_entries > 2 * FL_RING_MAX_ENTRIES)
		return -EINVAL;
	if (!cq_addr || (cq_addr & 63) || cq_addr + cq_bytes - 1 < cq_addr)
		return -EINVAL;
	if (le64_to_cpu(ctrl->features) & ~offered)
		return -EINVAL;
	if (le32_to_cpu(ctrl->irq_type) > FL_IRQ_MSIX)
		return -EINVAL;
	if (!fl_ctrl_reserved_ok(ctrl))
		return -EINVAL;
	return 0;
}

/**
 * fl_header_check() - validate the endpoint's BAR0 header (host side, at probe)
 * @hdr: a private copy of fl_bar_header.
 * @bar_len: length of the BAR the host mapped.
 *
 * Return: 0; -ENODEV when the magic is wrong; -EPROTONOSUPPORT for another ABI major;
 * -EINVAL when a ring size is not acceptable, a ring lies outside the BAR or overlaps the
 * registers or the other ring, or the BAR is smaller than the header says.
 */
static inline int fl_header_check(const struct fl_bar_header *hdr, u64 bar_len)
{
	u32 bar_size = le32_to_cpu(hdr->bar_size);
	u32 tx_off = le32_to_cpu(hdr->tx_ring_offset);
	u32 tx_n = le32_to_cpu(hdr->tx_entries);
	u32 rx_off = le32_to_cpu(hdr->rx_ring_offset);
	u32 rx_n = le32_to_cpu(hdr->rx_entries);
	u64 tx_end, rx_end;

	if (le32_to_cpu(hdr->magic) != FL_MAGIC)
		return -ENODEV;
	if (le32_to_cpu(hdr->abi_version) >> 16 != FL_ABI_MAJOR)
		return -EPROTONOSUPPORT;
	if (bar_size > bar_len || !fl_ring_size_ok(tx_n) || !fl_ring_size_ok(rx_n))
		return -EINVAL;
	tx_end = (u64)tx_off + (u64)tx_n * sizeof(struct fl_tx_desc);
	rx_end = (u64)rx_off + (u64)rx_n * sizeof(struct fl_rx_desc);
	if (tx_off < FL_BAR_RINGS_OFFSET || rx_off < FL_BAR_RINGS_OFFSET ||
	    tx_end > bar_size || rx_end > bar_size ||
	    (tx_off < rx_end && rx_off < tx_end))
		return -EINVAL;
	if (!le32_to_cpu(hdr->max_frame))
		return -EINVAL;
	return 0;
}

/**
 * fl_cqe_check() - validate a completion the endpoint wrote (host side)
 * @cqe: a private copy of the completion.
 * @nbufs: number of host buffers (ids are 0..nbufs-1).
 *
 * Return: 0, or -EPROTO for an unknown kind, status or flags, or a buffer id out of range.
 */
static inline int fl_cqe_check(const struct fl_cqe *cqe, u32 nbufs)
{
	u16 kind = le16_to_cpu(cqe->kind);

	if (kind != FL_CQE_TX_DONE && kind != FL_CQE_RX)
		return -EPROTO;
	if (le16_to_cpu(cqe->status) > FL_ST_RESET)
		return -EPROTO;
	if (le32_to_cpu(cqe->flags) & ~FL_FRAME_FLAGS)
		return -EPROTO;
	if (le32_to_cpu(cqe->id) >= nbufs)
		return -EPROTO;
	return 0;
}

/**
 * fl_status_errno() - wire status to the errno user space sees in fl_completion.status
 * @status: FL_ST_* (already validated).
 *
 * Return: 0 or a negative errno.
 */
static inline int fl_status_errno(u16 status)
{
	switch (status) {
	case FL_ST_OK:
		return 0;
	case FL_ST_TOO_BIG:
		return -EMSGSIZE;
	case FL_ST_DMA:
		return -EIO;
	case FL_ST_RESET:
		return -ECANCELED;
	default:
		return -EPROTO;
	}
}

#endif /* _FRAMELINK_FL_PROTO_H */
