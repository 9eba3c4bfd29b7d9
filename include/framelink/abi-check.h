/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * framelink: the ABI's sizes and offsets (include/uapi/linux/framelink.h), checked at
 * compile time wherever this is included: both drivers (common/fl_proto.h) and the
 * framelink tool (tools/framelink/libframelink.h). Not part of the uapi header, which
 * user space may compile as C90: static_assert is C11.
 */
#ifndef _FRAMELINK_ABI_CHECK_H
#define _FRAMELINK_ABI_CHECK_H

#ifdef __KERNEL__
#include <uapi/linux/framelink.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#define FL_ABI_ASSERT(e)	static_assert(e)
#else
#include <linux/framelink.h>
#include <assert.h>
#include <stddef.h>
#define FL_ABI_ASSERT(e)	static_assert(e, #e)
#endif

FL_ABI_ASSERT(sizeof(struct fl_bar_header) + FL_BAR_HEADER_OFFSET == FL_BAR_CTRL_OFFSET);
FL_ABI_ASSERT(sizeof(struct fl_bar_ctrl) + FL_BAR_CTRL_OFFSET == FL_BAR_STATUS_OFFSET);
FL_ABI_ASSERT(sizeof(struct fl_bar_status) + FL_BAR_STATUS_OFFSET == FL_BAR_DOORBELL_OFFSET);
FL_ABI_ASSERT(sizeof(struct fl_bar_doorbell) + FL_BAR_DOORBELL_OFFSET == FL_BAR_FORMAT_OFFSET);
FL_ABI_ASSERT(sizeof(struct fl_bar_format) + FL_BAR_FORMAT_OFFSET <= FL_BAR_RINGS_OFFSET);
FL_ABI_ASSERT(sizeof(struct fl_bar_format) == 64);
FL_ABI_ASSERT(offsetof(struct fl_bar_format, sizeimage) == 20);
FL_ABI_ASSERT(offsetof(struct fl_bar_format, xfer_func) == 40);
FL_ABI_ASSERT((FL_FRAME_FLAGS & FL_FRAME_FMT_FLAGS) == 0);
FL_ABI_ASSERT(sizeof(struct fl_bar_header) == 256);
FL_ABI_ASSERT(offsetof(struct fl_bar_header, features) == 8);
FL_ABI_ASSERT(offsetof(struct fl_bar_header, ep_slots) == 40);
FL_ABI_ASSERT(sizeof(struct fl_bar_ctrl) == 256);
FL_ABI_ASSERT(offsetof(struct fl_bar_ctrl, cq_addr) == 8);
FL_ABI_ASSERT(offsetof(struct fl_bar_ctrl, features) == 16);
FL_ABI_ASSERT(offsetof(struct fl_bar_ctrl, irq_vectors) == 28);
FL_ABI_ASSERT(sizeof(struct fl_bar_status) == 256);
FL_ABI_ASSERT(offsetof(struct fl_bar_status, irq_test) == 12);
FL_ABI_ASSERT(offsetof(struct fl_bar_status, intx_seq) == 16);
FL_ABI_ASSERT(sizeof(struct fl_bar_doorbell) == 256);
FL_ABI_ASSERT(offsetof(struct fl_bar_doorbell, cq_event) == 12);
FL_ABI_ASSERT(offsetof(struct fl_bar_doorbell, irq_ack) == 16);
FL_ABI_ASSERT(offsetof(struct fl_bar_doorbell, irq_test) == 20);
FL_ABI_ASSERT(sizeof(struct fl_tx_desc) == 32);
FL_ABI_ASSERT(offsetof(struct fl_tx_desc, cookie) == 16);
FL_ABI_ASSERT(offsetof(struct fl_tx_desc, seq) == 28);
FL_ABI_ASSERT(sizeof(struct fl_rx_desc) == 16);
/* Both rings at their largest fit in BAR0. */
FL_ABI_ASSERT(FL_BAR_RINGS_OFFSET + FL_RING_MAX_ENTRIES *
	      (sizeof(struct fl_tx_desc) + sizeof(struct fl_rx_desc)) <= FL_BAR_SIZE);
FL_ABI_ASSERT(sizeof(struct fl_host_status) == FL_HOST_CQ_OFFSET);
FL_ABI_ASSERT(offsetof(struct fl_host_status, e2h_pending) == 4);
FL_ABI_ASSERT(offsetof(struct fl_host_status, irq_seq) == 8);
FL_ABI_ASSERT(offsetof(struct fl_host_status, irq_prod) == 12);
FL_ABI_ASSERT(sizeof(struct fl_cqe) == 64);
FL_ABI_ASSERT(offsetof(struct fl_cqe, kind) == 8);
FL_ABI_ASSERT(offsetof(struct fl_cqe, cookie) == 24);
FL_ABI_ASSERT(offsetof(struct fl_cqe, ts_dma_done) == 40);
FL_ABI_ASSERT(sizeof(struct fl_info) == 128);
FL_ABI_ASSERT(offsetof(struct fl_info, link_speed) == 56);
FL_ABI_ASSERT(offsetof(struct fl_info, crossover_how) == 80);
FL_ABI_ASSERT(offsetof(struct fl_info, caps) == 84);
FL_ABI_ASSERT(sizeof(struct fl_frame) == 24);
FL_ABI_ASSERT(sizeof(struct fl_batch) == 24);
FL_ABI_ASSERT(sizeof(struct fl_completion) == 64);
FL_ABI_ASSERT(offsetof(struct fl_completion, cookie) == 24);
FL_ABI_ASSERT(sizeof(struct fl_reap) == 32);
FL_ABI_ASSERT(offsetof(struct fl_stats, safety_wakeups) == 96);
FL_ABI_ASSERT(sizeof(struct fl_stats) == 256);
FL_ABI_ASSERT(offsetof(struct fl_stats, link_reads) == 144);
FL_ABI_ASSERT(offsetof(struct fl_stats, stale_irqs) == 168);
FL_ABI_ASSERT(offsetof(struct fl_stats, tx_imported) == 176);
FL_ABI_ASSERT(offsetof(struct fl_stats, tx_v4l2) == 184);
FL_ABI_ASSERT(offsetof(struct fl_stats, rx_v4l2) == 192);
FL_ABI_ASSERT(offsetof(struct fl_stats, rx_reposted) == 200);
FL_ABI_ASSERT(sizeof(struct fl_export) == 40);
FL_ABI_ASSERT(offsetof(struct fl_export, fd) == 8);
FL_ABI_ASSERT(offsetof(struct fl_export, size) == 16);
FL_ABI_ASSERT(offsetof(struct fl_export, offset) == 24);
FL_ABI_ASSERT(offsetof(struct fl_export, reserved) == 32);
FL_ABI_ASSERT(sizeof(struct fl_import) == 40);
FL_ABI_ASSERT(offsetof(struct fl_import, size) == 16);

#endif /* _FRAMELINK_ABI_CHECK_H */
