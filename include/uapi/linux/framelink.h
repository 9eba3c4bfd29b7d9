/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * framelink: camera frames between two SoCs over PCIe, moved by the endpoint's DMA engine.
 *
 * This header is the whole contract between framelink-host.ko (root complex),
 * framelink-epf.ko (endpoint), their user-space tools and tests:
 *
 *  1. the BAR0 layout the endpoint exposes (section "BAR0"),
 *  2. the host-memory completion ring the endpoint writes (section "Host memory"),
 *  3. the character-device ioctls, identical on /dev/framelink<N> (host) and
 *     /dev/framelink-ep<N> (endpoint) (section "ioctls").
 *
 * Wire rules (shared memory): every field is little-endian and fixed-width, every structure
 * has explicit padding and a stated size, indices are free-running __le32 counters taken
 * modulo a power-of-two ring size, and every shared index has exactly one writer. Neither
 * side trusts the other: whatever is read from shared memory is bounds-checked before use.
 *
 * BAR0 (1 MiB, the only BAR mainline Tegra234 endpoint mode offers):
 *
 *   0x00000 +---------------------------+ struct fl_bar_header   EP writes once at init;
 *           | magic, ABI, features,     |                        host reads at probe
 *           | offsets and sizes         |
 *   0x00100 +---------------------------+ struct fl_bar_ctrl     host writes at setup/reset
 *           | enable, cq address, irq   |
 *   0x00200 +---------------------------+ struct fl_bar_status   EP writes; host reads at
 *           | state, error, generation  |                        setup only (non-posted)
 *   0x00300 +---------------------------+ struct fl_bar_doorbell host writes on the hot path
 *           | tx_prod rx_prod cq_cons   |                        (posted writes only)
 *           | cq_event                  |
 *   0x00400 +---------------------------+ struct fl_bar_format  host writes before a frame
 *           | pixel format of a stream  |                        that announces it (1.3)
 *   0x01000 +---------------------------+ struct fl_tx_desc[tx_entries]  host writes:
 *           | frames host -> endpoint   |                        frames for the endpoint
 *   rx_off  +---------------------------+ struct fl_rx_desc[rx_entries]  host writes:
 *           | empty host buffers        |                        buffers the EP may fill
 *           +---------------------------+
 *           | unused; the generic loop  |
 *           | profile puts the MSI-X    |
 *           | table at 0x80000          |
 *           +---------------------------+
 *
 * Host memory (allocated by the host, bus address in fl_bar_ctrl.cq_addr):
 *
 *   +0      struct fl_host_status    EP writes cq_prod after the entries it publishes,
 *                                    irq_prod, irq_seq after it (%FL_F_IRQ_PROD)
 *   +64     struct fl_cqe[cq_entries] EP writes completions (TX done, RX frame)
 *
 * Frame flow, host -> endpoint: the host writes an fl_tx_desc (bus address and length of a
 * host buffer) and bumps tx_prod; the endpoint DMA-reads the frame into one of its slots,
 * completes the descriptor with an FL_CQE_TX_DONE entry and hands the slot to its app.
 * Endpoint -> host: the host posts empty buffers as fl_rx_desc and bumps rx_prod; when the
 * endpoint app submits a slot, the endpoint DMA-writes it into the next posted buffer and
 * publishes an FL_CQE_RX entry. Completions of one ring are published in ring order.
 */
#ifndef _UAPI_LINUX_FRAMELINK_H
#define _UAPI_LINUX_FRAMELINK_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FL_MAGIC		0x4b4e4c46	/* "FLNK" */
#define FL_ABI_MAJOR		1
/*
 * Minor 1: FL_IOC_IMPORT, FL_IOC_UNIMPORT, fl_info.caps and max_imports, fl_stats.tx_imported.
 * Minor 2: %FL_F_INTX_SEQ and fl_bar_status.intx_seq; %FL_F_INTX_ACK retired.
 * Minor 3: %FL_F_FORMAT, struct fl_bar_format, %FL_FRAME_FORMAT and %FL_FRAME_TSTAMP.
 */
#define FL_ABI_MINOR		3
#define FL_ABI_VERSION		((FL_ABI_MAJOR << 16) | FL_ABI_MINOR)

#define FL_BAR_SIZE		0x100000	/* 1 MiB */
#define FL_BAR_HEADER_OFFSET	0x0
#define FL_BAR_CTRL_OFFSET	0x100
#define FL_BAR_STATUS_OFFSET	0x200
#define FL_BAR_DOORBELL_OFFSET	0x300
#define FL_BAR_FORMAT_OFFSET	0x400
#define FL_BAR_RINGS_OFFSET	0x1000
#define FL_RING_MAX_ENTRIES	1024	/* per ring; power of two */

/* Feature bits, offered in fl_bar_header.features, accepted in fl_bar_ctrl.features. */
#define FL_F_CQ_EVENT		(1ULL << 0)	/* interrupt moderation by cq_event */
#define FL_F_DMA		(1ULL << 1)	/* the endpoint moves frames with its DMA engine */
#define FL_F_TIMESTAMPS		(1ULL << 2)	/* completions carry endpoint timestamps */
/*
 * Retired in minor 2 (never offered or accepted since): the INTx acknowledge of minors 0
 * and 1, where irq_ack was a count of the INTx the host's handler took. A count cannot tell
 * the late acknowledge of an INTx raised again from the acknowledge of the next one, so a
 * next INTx lost to a masked function could pass for taken (a lost wake-up). Superseded by
 * %FL_F_INTX_SEQ; a peer that still offers or accepts this bit gets no INTx acknowledge.
 */
#define FL_F_INTX_ACK		(1ULL << 3)

/* ---- interrupt self-test (issue 9 section 1) ---- */
/*
 * Interrupt self-test at enable: controller drivers number pci_epc_raise_irq() vectors
 * differently (mainline DWC and Tegra MSI: number n is vector n - 1; NVIDIA's JetPack Tegra
 * MSI and Tegra's MSI-X doorbell: vector n), and a raise on a vector the host did not
 * allocate is lost without an error. So, at every enable and before it reports
 * %FL_STATE_READY, the endpoint raises one interrupt of the type the host enabled with
 * number 1 and waits (bounded, 50 ms by default) for the host's handler to count it in
 * fl_bar_doorbell.irq_test; unanswered, it tries number 0 (not for INTx, which has no
 * number) and keeps it only when two raises of 0 are both answered. The outcome is
 * fl_bar_status.irq_test (FL_IRQT_*): every completion interrupt uses the number found;
 * with %FL_IRQT_NONE the endpoint raises no interrupt and the host polls and says so.
 * The host counts in irq_test only between writing the control block and reading READY.
 * A peer that does not know the bit neither offers nor accepts it: the endpoint raises
 * number 1 untested, the host never writes irq_test and both words stay 0 (reserved).
 */
#define FL_F_IRQ_TEST		(1ULL << 4)

#define FL_IRQT_UNTESTED	0	/* no test: not accepted, or no interrupt enabled */
#define FL_IRQT_NUM1		1	/* number 1 answered (mainline numbering) */
#define FL_IRQT_NUM0		2	/* number 0 answered twice (0-based: JetPack MSI, MSI-X) */
#define FL_IRQT_NONE		3	/* nothing answered: no interrupts, the host polls */
/* ---- end of interrupt self-test ---- */

/*
 * Batched completion interrupts (issue 10): the host may arm cq_event ahead of cq_cons, at a
 * part of the frames it has in flight, so that a busy stream takes one interrupt per several
 * completions. The endpoint then interrupts also when it has published completions the host
 * has not consumed (cq_cons behind cq_prod) and no transfer is left in flight: a batch that
 * ends short of the index still wakes the host, once, without a timer. And it loads
 * cq_event again after every publish and on every polling pass until an interrupt covers
 * what it published, so the host need not flush its cq_event store with a read of BAR0 (an
 * arm the endpoint missed is answered at its next pass, within poll_max_us).
 * A peer that does not know the bit neither offers nor accepts it: the host then arms
 * cq_event at cq_cons and reads BAR0 back before it sleeps, as before.
 */
#define FL_F_CQ_BATCH		(1ULL << 5)

/*
 * Interrupts announced in host memory (issue 10): before each interrupt the endpoint writes
 * fl_host_status.irq_prod (the cq_prod the interrupt is for) and then irq_seq (a count of
 * interrupts), after cq_prod, and does not read anything back across the link. An interrupt
 * may reach the host before the posted writes ahead of it (on Tegra234 the MSI is a
 * controller register write, not a write behind the data): the host counts the interrupts
 * it took and, until irq_seq has caught up with them and cq_prod with irq_prod, polls its
 * own memory with back-off (bounded; fl_stats.early_irqs), waking its waiters whenever
 * something new landed. Without the bit the
 * endpoint reads cq_prod back through its window before every interrupt (a round trip
 * over the link each), as before.
 */
#define FL_F_IRQ_PROD		(1ULL << 6)

/*
 * Arms that say which announcement they were made after (issue 27 item 3.2): with
 * %FL_F_IRQ_PROD and %FL_F_CQ_EVENT, the host writes fl_bar_doorbell.irq_seen (the irq_seq
 * of the last announcement it found landed, cq_prod included) before every cq_event store.
 * Two interrupts can merge into one handler run (an MSI written to a vector still pending:
 * a GICv3 ITS keeps one pending bit per LPI), so the host cannot count them; it can then
 * wake at the first announcement and arm below the second's cq_prod, which has not landed
 * yet, and the endpoint takes that arm for one made before its last interrupt was handled.
 * An arm whose irq_seen is behind the endpoint's irq_seq is fresh whatever its index, once
 * per new (cq_event, irq_seen) pair: the endpoint interrupts again, with a new announcement,
 * when a completion has passed it, and keeps loading cq_event while the host is behind.
 */
#define FL_F_IRQ_SEEN		(1ULL << 7)

/*
 * INTx acknowledged by number (minor 2): before every INTx it raises the endpoint writes its
 * number (free-running) to fl_bar_status.intx_seq in BAR0; the host's handler reads that word
 * when it takes an INTx and masks it (INTx Disable), and writes the number it read to
 * fl_bar_doorbell.irq_ack whenever it enables INTx again with the line low. The endpoint
 * raises its next INTx only once irq_ack carries the number of its last one: an older number
 * is the late acknowledge of an earlier INTx, and the last one stays unacknowledged (a raise
 * that met INTx disabled and was lost is raised again with a new number after 20 ms). INTx
 * is a level the host masks while it handles it, so an INTx raised while the function is
 * masked is lost; a number, unlike a count, cannot be mistaken for a later INTx's.
 * A peer that does not know the bit neither offers nor accepts it: the endpoint then raises
 * INTx without waiting, leaves intx_seq zero, and the host does not write irq_ack.
 */
#define FL_F_INTX_SEQ		(1ULL << 8)

/*
 * Frames carry their image format and capture time (minor 3): before the first frame of a
 * stream of images (the host's V4L2 output device at STREAMON) the host writes struct
 * fl_bar_format and sets %FL_FRAME_FORMAT in that frame's descriptor; the endpoint reads
 * the block when it takes that descriptor (posted writes arrive in order: the block before
 * the descriptor before tx_prod). %FL_FRAME_TSTAMP says the cookie is the sender's capture
 * time. Neither flag is valid on a link that did not accept the bit: the endpoint refuses
 * them as unknown flags (FL_ST_BAD_DESC), so a host only sets them when accepted.
 */
#define FL_F_FORMAT		(1ULL << 9)

#define FL_F_ALL		(FL_F_CQ_EVENT | FL_F_DMA | FL_F_TIMESTAMPS | FL_F_IRQ_TEST | \
				 FL_F_CQ_BATCH | FL_F_IRQ_PROD | FL_F_IRQ_SEEN | FL_F_INTX_SEQ | \
				 FL_F_FORMAT)

/**
 * struct fl_bar_header - what the endpoint offers (BAR0 + 0x0, 256 bytes)
 * @magic: %FL_MAGIC.
 * @abi_version: %FL_ABI_VERSION; the host refuses another major.
 * @features: FL_F_* the endpoint supports.
 * @bar_size: size of BAR0 in bytes.
 * @tx_ring_offset: BAR0 offset of the fl_tx_desc ring.
 * @tx_entries: entries in that ring, a power of two <= %FL_RING_MAX_ENTRIES.
 * @rx_ring_offset: BAR0 offset of the fl_rx_desc ring.
 * @rx_entries: entries in that ring, a power of two <= %FL_RING_MAX_ENTRIES.
 * @max_frame: largest frame in bytes the endpoint accepts (its slot size).
 * @ep_slots: number of endpoint frame slots.
 * @reserved: zero.
 */
struct fl_bar_header {
	__le32 magic;
	__le32 abi_version;
	__le64 features;
	__le32 bar_size;
	__le32 tx_ring_offset;
	__le32 tx_entries;
	__le32 rx_ring_offset;
	__le32 rx_entries;
	__le32 max_frame;
	__le32 ep_slots;
	__le32 reserved[53];
};

#define FL_CTRL_ENABLE		(1U << 0)	/* rings are set up; start */

#define FL_IRQ_NONE		0	/* host polls */
#define FL_IRQ_INTX		1
#define FL_IRQ_MSI		2
#define FL_IRQ_MSIX		3

/**
 * struct fl_bar_ctrl - host setup (BAR0 + 0x100, 256 bytes, host writes)
 * @ctrl: FL_CTRL_*; the host writes every other field first, then sets %FL_CTRL_ENABLE.
 *	Clearing it resets the queues: the endpoint stops its DMA, writes nothing more to
 *	host memory, fails its own app's frames in flight (-ECANCELED) and then reports
 *	%FL_STATE_RESET. The host fails its in-flight descriptors itself and keeps the
 *	completion ring and buffers until it reads RESET. After %FL_STATE_ERROR or a link
 *	down the host must clear ENABLE and see RESET before enabling again; a stale ENABLE
 *	is never obeyed. At every enable all indices restart at 0 and the endpoint zeroes
 *	fl_host_status.cq_prod (which also proves @cq_addr).
 * @cq_entries: completion ring entries, a power of two, at least tx_entries + rx_entries
 *	so the ring never overflows.
 * @cq_addr: bus address of the host ring area (struct fl_host_status, then the fl_cqe ring
 *	at +%FL_HOST_CQ_OFFSET), 64-byte aligned.
 * @features: FL_F_* the host accepted, a subset of the offer.
 * @irq_type: FL_IRQ_* the host enabled.
 * @irq_vectors: vectors enabled (the endpoint raises vector 1 for completions, or the
 *	number the interrupt self-test found, %FL_F_IRQ_TEST).
 * @reserved: zero.
 */
struct fl_bar_ctrl {
	__le32 ctrl;
	__le32 cq_entries;
	__le64 cq_addr;
	__le64 features;
	__le32 irq_type;
	__le32 irq_vectors;
	__le32 reserved[56];
};

#define FL_STATE_RESET		0	/* idle; the host may (re)configure */
#define FL_STATE_READY		1	/* enabled and running */
#define FL_STATE_ERROR		2	/* stopped on a protocol error; see @error */

/* Why the endpoint stopped (fl_bar_status.error). */
#define FL_ERR_NONE		0
#define FL_ERR_BAD_CTRL		1	/* fl_bar_ctrl out of range at enable */
#define FL_ERR_BAD_INDEX	2	/* a producer index jumped past the ring */
#define FL_ERR_BAD_DESC		3	/* a descriptor out of range */
#define FL_ERR_LINK		4	/* the link went down */

/**
 * struct fl_bar_status - endpoint state (BAR0 + 0x200, 256 bytes, endpoint writes)
 * @state: FL_STATE_*.
 * @error: FL_ERR_* when @state is %FL_STATE_ERROR.
 * @generation: incremented at every enable, so the host can tell a restart.
 * @irq_test: with %FL_F_IRQ_TEST, FL_IRQT_* of the interrupt self-test of this enable,
 *	written before @state becomes %FL_STATE_READY; otherwise zero.
 * @intx_seq: with %FL_F_INTX_SEQ, the number of the last INTx the endpoint raised
 *	(free-running, written before the raise); otherwise zero.
 * @reserved: zero.
 */
struct fl_bar_status {
	__le32 state;
	__le32 error;
	__le32 generation;
	__le32 irq_test;
	__le32 intx_seq;
	__le32 reserved[59];
};

/**
 * struct fl_bar_doorbell - hot-path indices (BAR0 + 0x300, 256 bytes, host writes)
 * @tx_prod: free-running count of fl_tx_desc entries the host has written.
 * @rx_prod: free-running count of fl_rx_desc entries the host has written.
 * @cq_cons: free-running count of completions the host has consumed.
 * @cq_event: with %FL_F_CQ_EVENT, the endpoint interrupts only when publishing moves
 *	cq_prod past this index (the host re-arms it to cq_cons when it goes idle; with
 *	%FL_F_CQ_BATCH possibly further ahead, and the endpoint interrupts at the end of a
 *	batch too).
 * @irq_ack: with %FL_F_INTX_SEQ, fl_bar_status.intx_seq as the host's handler read it when
 *	it last took an INTx, written each time the host enabled INTx for the next interrupt;
 *	the endpoint raises its next INTx only once it equals the number of its last one.
 * @irq_test: with %FL_F_IRQ_TEST, free-running count of the interrupts the host's handler
 *	took during the enable handshake (the self-test's answer); zeroed by the host before
 *	it sets %FL_CTRL_ENABLE.
 * @irq_seen: with %FL_F_IRQ_SEEN, fl_host_status.irq_seq of the last announcement the host
 *	found landed when it armed, written before @cq_event.
 * @reserved: zero.
 */
struct fl_bar_doorbell {
	__le32 tx_prod;
	__le32 rx_prod;
	__le32 cq_cons;
	__le32 cq_event;
	__le32 irq_ack;
	__le32 irq_test;
	__le32 irq_seen;
	__le32 reserved[57];
};

/**
 * struct fl_bar_format - the image format of the frames that follow (BAR0 + 0x400, 64 bytes,
 *	host writes; %FL_F_FORMAT)
 * @seq: the host's count of formats announced (free-running; for logs).
 * @pixelformat: a V4L2 fourcc (V4L2_PIX_FMT_*).
 * @width: pixels per line.
 * @height: lines per frame.
 * @bytesperline: bytes per line of the first plane.
 * @sizeimage: bytes per frame (every frame of the stream is this long).
 * @field: enum v4l2_field.
 * @colorspace: enum v4l2_colorspace.
 * @ycbcr_enc: enum v4l2_ycbcr_encoding.
 * @quantization: enum v4l2_quantization.
 * @xfer_func: enum v4l2_xfer_func.
 * @reserved: zero.
 *
 * The values are V4L2's (struct v4l2_pix_format), so the receiver reports what the sender
 * set; it checks them against the formats it knows before it believes them.
 */
struct fl_bar_format {
	__le32 seq;
	__le32 pixelformat;
	__le32 width;
	__le32 height;
	__le32 bytesperline;
	__le32 sizeimage;
	__le32 field;
	__le32 colorspace;
	__le32 ycbcr_enc;
	__le32 quantization;
	__le32 xfer_func;
	__le32 reserved[5];
};

/* Frame flags, carried from sender to receiver. */
#define FL_FRAME_EOF		(1U << 0)	/* last buffer of a frame */
#define FL_FRAME_ERROR		(1U << 1)	/* the sender marks the content bad */
#define FL_FRAME_FLAGS		(FL_FRAME_EOF | FL_FRAME_ERROR)
/* Set by the host's driver on a link with %FL_F_FORMAT only, never by an app's SUBMIT: */
#define FL_FRAME_FORMAT		(1U << 2)	/* fl_bar_format describes this frame on */
#define FL_FRAME_TSTAMP		(1U << 3)	/* @cookie: CLOCK_MONOTONIC capture time, ns */
#define FL_FRAME_FMT_FLAGS	(FL_FRAME_FORMAT | FL_FRAME_TSTAMP)

/**
 * struct fl_tx_desc - a frame from the host (32 bytes, host writes)
 * @addr: bus address of the frame in host memory.
 * @bytes: frame length, 1..max_frame.
 * @flags: FL_FRAME_*.
 * @cookie: the sender's cookie, echoed to both ends.
 * @id: host buffer index, echoed in the completion.
 * @seq: sequence number of the frame on this ring.
 */
struct fl_tx_desc {
	__le64 addr;
	__le32 bytes;
	__le32 flags;
	__le64 cookie;
	__le32 id;
	__le32 seq;
};

/**
 * struct fl_rx_desc - an empty host buffer for the endpoint to fill (16 bytes, host writes)
 * @addr: bus address of the buffer in host memory.
 * @size: buffer size in bytes.
 * @id: host buffer index, echoed in the completion.
 */
struct fl_rx_desc {
	__le64 addr;
	__le32 size;
	__le32 id;
};

#define FL_HOST_CQ_OFFSET	64

/**
 * struct fl_host_status - endpoint-written indices in host memory (64 bytes)
 * @cq_prod: free-running count of completions published; written after the entries.
 * @e2h_pending: with %FL_F_CQ_BATCH, frames the endpoint app has submitted towards the host
 *	and not yet completed, as of this publication (written with @cq_prod; 0 before). The
 *	host counts receive completions to wait for from it, not from the buffers it posted,
 *	which are room and not frames on their way.
 * @irq_seq: with %FL_F_IRQ_PROD, free-running count of the interrupts the endpoint raised
 *	(or deferred, for INTx) this session; written after @irq_prod, before the interrupt.
 * @irq_prod: with %FL_F_IRQ_PROD, the @cq_prod the last interrupt was raised for, written
 *	after @cq_prod (0 before the first). It lies above @irq_seq so that a writer whose
 *	stores land highest address first (the lab's window) still lands it first.
 * @reserved: zero.
 */
struct fl_host_status {
	__le32 cq_prod;
	__le32 e2h_pending;
	__le32 irq_seq;
	__le32 irq_prod;
	__le32 reserved[12];
};

#define FL_CQE_TX_DONE		1	/* a fl_tx_desc was consumed */
#define FL_CQE_RX		2	/* a fl_rx_desc was filled with a frame */

/* Completion status on the wire (fl_cqe.status). */
#define FL_ST_OK		0
/*
 * A frame larger than the posted host buffer is consumed: FL_ST_TOO_BIG to the host, -EMSGSIZE
 * to the endpoint app. A bad fl_rx_desc completes with FL_ST_BAD_DESC and the endpoint's frame
 * waits for the next buffer.
 */
#define FL_ST_TOO_BIG		1	/* frame larger than the receiving buffer */
#define FL_ST_DMA		2	/* the DMA engine reported an error */
#define FL_ST_BAD_DESC		3	/* the descriptor failed validation */
#define FL_ST_RESET		4	/* reserved: reset frames are failed by each side itself */

/**
 * struct fl_cqe - a completion in host memory (64 bytes, endpoint writes)
 * @id: host buffer index from the descriptor.
 * @bytes: bytes moved (the frame length for %FL_CQE_RX).
 * @kind: FL_CQE_*.
 * @status: FL_ST_*.
 * @flags: FL_FRAME_* of the frame.
 * @seq: sequence number of the frame on its ring.
 * @reserved0: zero.
 * @cookie: the sender's cookie.
 * @ts_dma_start: endpoint CLOCK_MONOTONIC ns when the DMA was issued.
 * @ts_dma_done: endpoint CLOCK_MONOTONIC ns when the DMA completed.
 * @reserved1: zero.
 */
struct fl_cqe {
	__le32 id;
	__le32 bytes;
	__le16 kind;
	__le16 status;
	__le32 flags;
	__le32 seq;
	__le32 reserved0;
	__le64 cookie;
	__le64 ts_dma_start;
	__le64 ts_dma_done;
	__le64 reserved1[2];
};

/*
 * ioctls: the same on both ends. Buffers (host frame buffers, endpoint frame slots) are
 * mmap()ed from the device at fl_info.mmap_offset, buffer i at i * buf_size.
 *
 * A buffer has one owner at a time: the app, the receive queue (after POST) or the send
 * queue (after SUBMIT, until its FL_Q_TX completion). SUBMIT or POST of a buffer the app
 * does not own fails with -EBUSY. A received buffer (FL_Q_RX) belongs to the app, which may
 * SUBMIT it as it is (zero copy). The last close of the device withdraws posted buffers and
 * cancels frames in flight (bounded wait); the next open starts with every buffer the app's.
 * REAP returns 0 with count 0 when nothing completed within timeout_ms. After the device
 * is gone (host: removed; endpoint: unbound) every ioctl fails with -ENODEV, except REAP:
 * it first hands out the completions queued before (frames in flight: -ECANCELED).
 *
 * Failed ioctls (host, issue 8): an ioctl that fails has no effect. SUBMIT and POST write
 * fl_batch back (done = 0) before queueing anything: if it cannot be written, -EFAULT and
 * nothing is queued. On a later error, done is the index of the bad entry and the entries
 * before it are queued; if the app makes fl_batch unwritable during the call, the frames
 * queued stay queued (their completions say what happened) and the queueing result is
 * returned. REAP consumes completions only after they and fl_reap.count reached user
 * space: -EFAULT means nothing was consumed; a fault part-way returns the completions
 * copied before it (count). Buffer mappings refuse PROT_EXEC (-EPERM), also by mprotect().
 *
 * Queue resets (host): after a protocol violation, an endpoint restart or a link loss the
 * host resets the queue by itself, asynchronously: frames in flight and posted buffers
 * complete with -ECANCELED (-EPROTO after a violation) once the endpoint can no longer
 * touch them. While the reset runs, REAP waits as for a completion (timeout 0 returns at
 * once) and SUBMIT/POST wait for it (bounded, interruptible). A queue that could not be
 * reset is stopped: SUBMIT/POST/REAP fail with -ENOLINK while the link is down, -EIO
 * otherwise, poll() reports EPOLLERR, and the host retries by itself.
 */

#define FL_ROLE_HOST		1
#define FL_ROLE_ENDPOINT	2

#define FL_NOTIFY_POLL		0	/* the peer is polled */
#define FL_NOTIFY_INTX		1
#define FL_NOTIFY_MSI		2
#define FL_NOTIFY_MSIX		3
#define FL_NOTIFY_DOORBELL	4

/* fl_info.xfer_backend: what moves the endpoint's DMA frames (0 = a driver without the field) */
#define FL_XFER_CPU		1	/* no DMA engine: every frame is a CPU copy */
#define FL_XFER_DMAENGINE	2	/* dmaengine channels of the controller (dw-edma) */
#define FL_XFER_NVEDMA		3	/* NVIDIA's Tegra PCIe eDMA library (JetPack) */

/*
 * fl_info.crossover_how: how each crossover was found (endpoint), one byte per direction:
 * FL_XOVER_WR() for fl_info.crossover (writes to the host), FL_XOVER_RD() for
 * fl_info.rd_crossover (reads of host memory). Values:
 *  - CONFIGURED: a byte count written to configfs;
 *  - MEASURED: configfs "auto", CPU copy and DMA timed at the last enable;
 *  - NO_DMA: "auto", but no DMA this way (no channel, or FL_F_DMA not accepted): every
 *    frame by CPU, the value is the default;
 *  - PENDING: "auto", not enabled yet: the default until measured;
 *  - FAILED: "auto", measuring failed at the last enable (the endpoint's log says why):
 *    the last value measured in this binding, else the default.
 */
#define FL_XOVER_UNKNOWN	0	/* the host, or a driver without the field */
#define FL_XOVER_CONFIGURED	1
#define FL_XOVER_MEASURED	2
#define FL_XOVER_NO_DMA		3
#define FL_XOVER_PENDING	4
#define FL_XOVER_FAILED		5
#define FL_XOVER_WR(how)	((how) & 0xff)
#define FL_XOVER_RD(how)	(((how) >> 8) & 0xff)

/**
 * struct fl_info - FL_IOC_INFO (128 bytes, out)
 * @abi_version: %FL_ABI_VERSION of the driver.
 * @role: FL_ROLE_*.
 * @features: FL_F_* in use.
 * @nbufs: buffers this end owns (mmap()able).
 * @buf_size: size of each buffer in bytes (also the largest frame).
 * @mmap_offset: mmap() offset of buffer 0.
 * @tx_depth: frames that can be in flight towards the peer.
 * @rx_depth: buffers that can be posted for receiving.
 * @dma_rd_channels: endpoint DMA channels reading from the host (0 on the host).
 * @dma_wr_channels: endpoint DMA channels writing to the host (0 on the host).
 * @crossover: frames to the host below this size are copied by the endpoint CPU instead of DMA.
 * @notify: FL_NOTIFY_* this end gets from its peer.
 * @link_speed: link speed in GT/s times 10 (host; 0 if unknown).
 * @link_width: negotiated lanes (host; 0 if unknown).
 * @mps: negotiated Max_Payload_Size in bytes (host).
 * @mps_supported: largest payload size the host's device supports (host).
 * @mrrs: Max_Read_Request_Size in bytes (host).
 * @reserved16: zero.
 * @rd_crossover: frames from the host below this size are copied by the endpoint CPU
 *	(endpoint; 0 from a driver older than the field: @crossover then applies both ways).
 * @xfer_backend: FL_XFER_* (endpoint; 0 on the host and from older drivers).
 * @cq_entries: completion ring entries (host; 0 on the endpoint and from older drivers).
 * @crossover_how: how @crossover and @rd_crossover were found: FL_XOVER_* in the bytes
 *	FL_XOVER_WR() and FL_XOVER_RD() take apart (endpoint; 0 on the host and from older
 *	drivers). A measured value is taken again at every enable (each queue reset).
 * @caps: FL_CAP_* this driver offers on this kernel (0 from a driver older than ABI 1.1).
 * @max_imports: dma-bufs FL_IOC_IMPORT can hold at once (host; 0 without %FL_CAP_IMPORT).
 * @reserved: zero.
 */
struct fl_info {
	__u32 abi_version;
	__u32 role;
	__u64 features;
	__u32 nbufs;
	__u32 buf_size;
	__u64 mmap_offset;
	__u32 tx_depth;
	__u32 rx_depth;
	__u32 dma_rd_channels;
	__u32 dma_wr_channels;
	__u32 crossover;
	__u32 notify;
	__u16 link_speed;
	__u16 link_width;
	__u16 mps;
	__u16 mps_supported;
	__u16 mrrs;
	__u16 reserved16;
	__u32 rd_crossover;
	__u32 xfer_backend;
	__u32 cq_entries;
	__u32 crossover_how;
	__u32 caps;
	__u32 max_imports;
	__u32 reserved[9];
};

/* Local capabilities (fl_info.caps): what this end's driver and kernel can do, not the link. */
#define FL_CAP_EXPORT		(1U << 0)	/* FL_IOC_EXPORT: the kernel has dma-buf */
#define FL_CAP_IMPORT		(1U << 1)	/* FL_IOC_IMPORT: the kernel has dma-buf */

/**
 * struct fl_frame - one frame to send (FL_IOC_SUBMIT entry, 24 bytes)
 * @buf: index of an owned buffer holding the frame.
 * @bytes: frame length, 1..buf_size.
 * @flags: FL_FRAME_*.
 * @reserved: zero.
 * @cookie: any value; returned in both ends' completions.
 */
struct fl_frame {
	__u32 buf;
	__u32 bytes;
	__u32 flags;
	__u32 reserved;
	__u64 cookie;
};

/**
 * struct fl_batch - FL_IOC_SUBMIT and FL_IOC_POST (24 bytes)
 * @ptr: user pointer to struct fl_frame[@count] (SUBMIT) or __u32 buffer indices (POST).
 * @count: entries at @ptr, 1..%FL_RING_MAX_ENTRIES.
 * @done: out: entries accepted, in order; on an error, the index of the bad entry.
 * @flags: zero.
 * @reserved: zero.
 */
struct fl_batch {
	__u64 ptr;
	__u32 count;
	__u32 done;
	__u32 flags;
	__u32 reserved;
};

#define FL_Q_TX			1	/* a frame this end sent completed */
#define FL_Q_RX			2	/* a frame arrived */

/**
 * struct fl_completion - one FL_IOC_REAP result (64 bytes)
 * @buf: buffer index; for %FL_Q_TX the buffer is free again, for %FL_Q_RX it holds the frame.
 * @bytes: frame length.
 * @queue: FL_Q_*.
 * @status: 0, or a negative errno: -EMSGSIZE (frame larger than the receiving buffer), -EIO
 *	(DMA error), -EPROTO (the peer broke the protocol), -ECANCELED (queue reset / link down).
 * @flags: FL_FRAME_* from the sender.
 * @seq: sequence number of the frame in its direction.
 * @cookie: the sender's cookie.
 * @ts_submit: this end's CLOCK_MONOTONIC ns at SUBMIT or POST.
 * @ts_dma_start: endpoint CLOCK_MONOTONIC ns when the DMA was issued.
 * @ts_dma_done: endpoint CLOCK_MONOTONIC ns when the DMA completed.
 * @ts_delivered: this end's CLOCK_MONOTONIC ns when the completion reached the driver.
 */
struct fl_completion {
	__u32 buf;
	__u32 bytes;
	__u32 queue;
	__s32 status;
	__u32 flags;
	__u32 seq;
	__u64 cookie;
	__u64 ts_submit;
	__u64 ts_dma_start;
	__u64 ts_dma_done;
	__u64 ts_delivered;
};

/**
 * struct fl_reap - FL_IOC_REAP (32 bytes)
 * @ptr: user pointer to struct fl_completion[@max].
 * @max: room at @ptr, 1..%FL_RING_MAX_ENTRIES.
 * @count: out: completions written.
 * @timeout_ms: wait up to this long for the first completion; 0 does not wait, at most
 *	%FL_REAP_MAX_TIMEOUT_MS.
 * @flags: zero.
 * @reserved: zero.
 */
struct fl_reap {
	__u64 ptr;
	__u32 max;
	__u32 count;
	__s32 timeout_ms;
	__u32 flags;
	__u64 reserved;
};

#define FL_REAP_MAX_TIMEOUT_MS	60000

/**
 * struct fl_stats - FL_IOC_STATS (256 bytes, out; counters since the device appeared)
 * @tx_frames: frames sent.
 * @tx_bytes: bytes sent.
 * @rx_frames: frames received.
 * @rx_bytes: bytes received.
 * @errors: completions with a non-zero status.
 * @protocol_errors: violations of this ABI seen from the peer.
 * @interrupts: interrupts taken (host) or raised (endpoint).
 * @dma_transfers: frames moved by DMA (endpoint).
 * @cpu_transfers: frames moved by CPU copy (endpoint).
 * @polls: polling passes over BAR0 (endpoint).
 * @poll_interval_us: current polling interval (endpoint).
 * @reaction_ns_max: longest time from a doorbell write being seen to the DMA issue (endpoint).
 * @safety_wakeups: waits ended by the safety timer while completions were waiting, i.e. a
 *	lost interrupt (host); stays 0 when the notification protocol works.
 * @queue_resets: queue resets (host: after a violation, a stopped endpoint or a link loss;
 *	endpoint: host-requested resets).
 * @dma_aborts: DMA transfers that ended aborted or in error and were failed (endpoint).
 * @dma_leaked: transfers whose DMA callback never came within the bound; their state and
 *	memory are deliberately kept, never reused (endpoint).
 * @status_repairs: times the endpoint found its BAR0 status block or header altered and
 *	rewrote it.
 * @intx_retries: INTx raised again because the host did not acknowledge the last one within
 *	20 ms with completions unconsumed: a pulse the host never saw (endpoint; since ABI 1.0
 *	in a reserved word, 0 from an older endpoint).
 * @link_reads: CPU loads across the link on the data path (the host's read of BAR0 before
 *	it sleeps without %FL_F_CQ_BATCH; the endpoint's read back through the outbound window
 *	that flushes completions before an interrupt or before it stops looking at cq_event).
 *	Each costs a round trip over PCIe (since ABI 1.0 in a reserved word, 0 from an older
 *	driver).
 * @batch_irqs: interrupts the endpoint raised with %FL_F_CQ_BATCH at the end of a batch,
 *	short of the host's cq_event, since nothing more was in flight (endpoint; reserved
 *	word before, 0 from an older endpoint).
 * @early_irqs: interrupts that reached the host before the completions they announced
 *	(%FL_F_IRQ_PROD): the host polled its own memory until they landed (host; reserved
 *	word before, 0 from an older host).
 * @stale_irqs: times the host stopped waiting, 50 ms after its last interrupt, for more
 *	announcements than came
 *	(%FL_F_IRQ_PROD): a duplicated interrupt, an INTx handler run again; the waiters
 *	are woken anyway (host; reserved word before).
 * @tx_imported: frames sent from imported dma-bufs (FL_IOC_IMPORT), included in
 *	@tx_frames: the host CPU neither copied nor touched them (host; reserved word before).
 * @tx_v4l2: frames sent from the buffers of the host's V4L2 output device (MMAP or
 *	DMABUF), included in @tx_frames: the host CPU neither copied nor touched them either
 *	(host; reserved word before).
 * @rx_v4l2: frames received into the buffers of the host's V4L2 capture device (MMAP or
 *	DMABUF), included in @rx_frames: written by the endpoint's DMA or CPU, never copied by
 *	the host CPU (host; reserved word before).
 * @rx_reposted: V4L2 capture buffers a queue reset took back while the capture device
 *	streamed, posted again instead of returned with an error: no frame is lost by them
 *	(host; reserved word before).
 * @reserved: zero.
 */
struct fl_stats {
	__u64 tx_frames;
	__u64 tx_bytes;
	__u64 rx_frames;
	__u64 rx_bytes;
	__u64 errors;
	__u64 protocol_errors;
	__u64 interrupts;
	__u64 dma_transfers;
	__u64 cpu_transfers;
	__u64 polls;
	__u64 poll_interval_us;
	__u64 reaction_ns_max;
	__u64 safety_wakeups;
	__u64 queue_resets;
	__u64 dma_aborts;
	__u64 dma_leaked;
	__u64 status_repairs;
	__u64 intx_retries;
	__u64 link_reads;
	__u64 batch_irqs;
	__u64 early_irqs;
	__u64 stale_irqs;
	__u64 tx_imported;
	__u64 tx_v4l2;
	__u64 rx_v4l2;
	__u64 rx_reposted;
	__u64 reserved[6];
};

/**
 * struct fl_export - FL_IOC_EXPORT (40 bytes; endpoint only)
 * @slot: in: the slot to export, 0..fl_info.nbufs - 1.
 * @flags: in: FL_EXPORT_*; other bits are -EINVAL. FL_EXPORT_RDWR governs CPU mappings of
 *	the dma-buf; what an importing device does is its own driver's choice.
 * @fd: out: a dma-buf file descriptor for the slot's memory.
 * @reserved0: zero.
 * @size: out: bytes of the dma-buf (fl_info.buf_size).
 * @offset: out: where the slot starts in the device's own mmap() (fl_info.mmap_offset +
 *	@slot * fl_info.buf_size), for an app that uses both mappings.
 * @reserved: zero.
 *
 * The dma-buf is a second view of the slot, not a copy, and it does not change who owns the
 * slot: the app reads or writes it (through the dma-buf or a device it imported it to) only
 * while the slot is the app's (after the REAP of its completion, before its next SUBMIT or
 * POST), and brackets CPU access with DMA_BUF_IOCTL_SYNC. After unbind the dma-buf stays a
 * valid fd: its mappings fault (SIGBUS), DMA_BUF_IOCTL_SYNC and new imports fail with -ENODEV.
 * Errors: -EINVAL (slot, flags, reserved), -ENODEV (unbound), -EOPNOTSUPP (a kernel without
 * dma-buf), -ENXIO (the DMA API cannot describe the slot), -EMFILE, -ENOMEM, -EFAULT (no fd
 * is created then); the host's device answers -ENOTTY.
 */
struct fl_export {
	__u32 slot;
	__u32 flags;
	__s32 fd;
	__u32 reserved0;
	__u64 size;
	__u64 offset;
	__u64 reserved;
};

#define FL_EXPORT_CLOEXEC	(1U << 0)	/* @fd gets FD_CLOEXEC */
#define FL_EXPORT_RDWR		(1U << 1)	/* writable mappings; read-only without it */
#define FL_EXPORT_FLAGS		(FL_EXPORT_CLOEXEC | FL_EXPORT_RDWR)

/**
 * struct fl_import - FL_IOC_IMPORT and FL_IOC_UNIMPORT (40 bytes; host only)
 * @fd: IMPORT in: a dma-buf file descriptor (a V4L2 buffer from VIDIOC_EXPBUF, a dma-heap
 *	buffer, a GPU buffer). The driver takes its own reference: the app may close @fd.
 * @flags: in: zero.
 * @buf: IMPORT out, UNIMPORT in: the buffer index frames from the dma-buf are submitted
 *	with (fl_frame.buf); imports are numbered from fl_info.nbufs up.
 * @segments: IMPORT out: DMA segments the dma-buf maps to for the host's PCI function (1).
 * @size: IMPORT out: bytes of the dma-buf; a frame from it is 1..min(@size,
 *	fl_bar_header.max_frame) bytes from its start.
 * @reserved: zero.
 *
 * IMPORT attaches the dma-buf to the host's PCI function and maps it for the endpoint to
 * read (DMA_TO_DEVICE) once; SUBMIT then sends frames from it as from an own buffer, with
 * the same ownership rules (the app must not change it between SUBMIT and the REAP of
 * its completion), no CPU copy and no cache maintenance by the host: a CPU that writes
 * the dma-buf brackets that with DMA_BUF_IOCTL_SYNC, as the exporter requires. Imports
 * send only (POST refuses them). They belong to the device like its own buffers: they
 * stay until UNIMPORT or the last close of the device, and go at remove() (later
 * SUBMITs of them fail with -ENODEV). A dma-buf that maps to more than one DMA segment
 * (a scatter-gather buffer without an IOMMU to join it) is refused.
 * Implicit fences: SUBMIT of a frame from an import first waits for the dma-buf's write
 * fences (a camera or GPU still writing it), at most the host module parameter
 * import_fence_ms (default 1000): -ETIMEDOUT when they did not signal, -EINTR on a signal
 * (that frame and those after it are not queued; fl_batch.done counts the ones that were).
 * From SUBMIT to its completion the dma-buf carries a read fence of framelink's, so a
 * writer that follows implicit sync waits until the endpoint has read the frame.
 * Errors: -EINVAL (flags, reserved, @buf not an import), -EBADF (@fd not a dma-buf),
 * -ENOSPC (fl_info.max_imports held), -EOPNOTSUPP (a kernel without dma-buf; more than
 * one DMA segment), -EBUSY (UNIMPORT of a buffer with a frame in flight or a completion
 * not reaped), -ENODEV (removed; also UNIMPORT then: remove() dropped the imports),
 * -ENOMEM, or what the exporter's map returned; the endpoint's device answers -ENOTTY.
 */
struct fl_import {
	__s32 fd;
	__u32 flags;
	__u32 buf;
	__u32 segments;
	__u64 size;
	__u64 reserved[2];
};

/*
 * ioctl type 0xB9, numbers 0x00-0x07 (0x08-0x1F kept for framelink): free in
 * Documentation/userspace-api/ioctl/ioctl-number.rst of 6.12 and 7.3, where an upstream
 * submission registers "0xB9  00-1F  uapi/linux/framelink.h".
 */
#define FL_IOC_MAGIC		0xB9
#define FL_IOC_INFO		_IOR(FL_IOC_MAGIC, 0x00, struct fl_info)
#define FL_IOC_SUBMIT		_IOWR(FL_IOC_MAGIC, 0x01, struct fl_batch)
#define FL_IOC_POST		_IOWR(FL_IOC_MAGIC, 0x02, struct fl_batch)
#define FL_IOC_REAP		_IOWR(FL_IOC_MAGIC, 0x03, struct fl_reap)
#define FL_IOC_STATS		_IOR(FL_IOC_MAGIC, 0x04, struct fl_stats)
#define FL_IOC_EXPORT		_IOWR(FL_IOC_MAGIC, 0x05, struct fl_export)
#define FL_IOC_IMPORT		_IOWR(FL_IOC_MAGIC, 0x06, struct fl_import)
#define FL_IOC_UNIMPORT		_IOW(FL_IOC_MAGIC, 0x07, struct fl_import)

/*
 * Every size and offset above is ABI. The checks live in include/framelink/abi-check.h
 * (C11 static_assert), compiled with both drivers and the framelink tool, so that this
 * header stays plain C90 for user space (the kernel's usr/include header test).
 */

#endif /* _UAPI_LINUX_FRAMELINK_H */
