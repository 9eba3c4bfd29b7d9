/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink-epf: the endpoint function (Orin side) of framelink.
 *
 * One struct fl_epf per configfs function (probe to remove) holds the configfs
 * attributes; one struct fl_ep per binding (bind to unbind, kept alive by open
 * files until their last close) holds BAR0, the frame slots, the DMA channels,
 * the engine thread and the queues of /dev/framelink-ep<N>.
 *
 * Threads and what they own:
 *  - the engine thread (poll.c) is the only one that reads the host's rings,
 *    moves frames, writes BAR0 status and publishes completions; everything
 *    under "engine private" below is touched by it alone, or by whoever
 *    stopped it (link down, deinit, unbind) once kthread_stop() returned;
 *  - DMA callbacks (xfer.c) only finish a transfer (atomics) and kick the engine;
 *  - ioctls (cdev.c) exchange slots with the engine through the queues under
 *    @q_lock.
 *
 * Copyright (C) 2026 The framelink authors
 */
#ifndef _FRAMELINK_EPF_H
#define _FRAMELINK_EPF_H

#include <linux/atomic.h>
#include <linux/configfs.h>
#include <linux/dmaengine.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci-epc.h>
#include <linux/pci-epf.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include <framelink/compat.h>

#include "fl_proto.h"

/* Defaults the host driver matches: NVIDIA (the Orin), framelink function */
#define FL_EP_VENDOR_ID		0x10de
#define FL_EP_DEVICE_ID		0x22fe

#define FL_EP_MAX_CHANNELS	8	/* dw-edma: up to 8 per direction */
#define FL_EP_MAX_SLOTS		256
#define FL_EP_MSIX_OFFSET	0x80000	/* MSI-X table in BAR0, after the largest rings */
#define FL_EP_MSIX_VECTORS	8	/* when the configfs msix_interrupts is 0 */
#define FL_EP_IRQ_VECTOR	1	/* completions */
#define FL_EP_WIN_SIZE		SZ_1M	/* outbound window for CPU copies and completions */
#define FL_EP_SPLIT_MIN		SZ_256K	/* smallest part of a frame split across channels */
#define FL_EP_FAIL_HOLD_MS	50	/* a failed transfer waits for a link-loss event */
#define FL_EP_NO_SLOT		U32_MAX

/* The crossovers before they were measured, and where measuring is impossible (xover.c) */
#define FL_EP_XO_WR_DEFAULT	SZ_64K
#define FL_EP_XO_RD_DEFAULT	SZ_4K
#define FL_EP_XO_BUF		SZ_64K	/* endpoint memory the measurement copies to and from */

/* fl_ep.xo[] index: the direction of a transfer, to_host */
#define FL_XO_RD		0	/* host -> endpoint: reads of host memory (rd_crossover) */
#define FL_XO_WR		1	/* endpoint -> host: writes to the host (crossover) */

/* configfs irq_mode: which interrupt capabilities the function offers */
enum fl_ep_irq_mode {
	FL_EP_IRQ_AUTO,		/* whatever the controller supports */
	FL_EP_IRQ_MSIX,
	FL_EP_IRQ_MSI,
	FL_EP_IRQ_INTX,
	FL_EP_IRQ_NONE,		/* the host polls */
};

/**
 * struct fl_ep_cfg - configfs attributes, copied at bind
 * @slots: frame slots.
 * @slot_size: bytes per slot (largest frame), a multiple of PAGE_SIZE.
 * @ring_entries: entries of each BAR0 descriptor ring (power of two).
 * @dma_channels: DMA channels per direction, 0 = CPU copies only.
 * @crossover: endpoint -> host frames below this many bytes are written by the CPU
 *	(when @crossover_auto is 0).
 * @rd_crossover: host -> endpoint frames below this many bytes are read by the CPU
 *	(should be much smaller: a CPU read of host memory costs a PCIe round trip
 *	per load; when @rd_crossover_auto is 0).
 * @crossover_auto: configfs crossover "auto": measured at every enable (xover.c).
 * @rd_crossover_auto: the same for rd_crossover.
 * @cpu_pass_bytes: most bytes the CPU copies per engine pass; a reset or link down
 *	is noticed between such chunks.
 * @poll_min_us: first idle polling interval.
 * @poll_max_us: longest idle polling interval (<= 1000).
 * @irq_mode: enum fl_ep_irq_mode.
 * @xfer_backend: %FL_EP_XFER_AUTO or the FL_XFER_* backend to use (configfs
 *	names: auto, cpu, dmaengine, nvidia-edma).
 */
struct fl_ep_cfg {
	u32 slots;
	u32 slot_size;
	u32 ring_entries;
	u32 dma_channels;
	u32 crossover;
	u32 rd_crossover;
	u32 crossover_auto;
	u32 rd_crossover_auto;
	u32 cpu_pass_bytes;
	u32 poll_min_us;
	u32 poll_max_us;
	u32 irq_mode;
	u32 xfer_backend;
};

#define FL_EP_XFER_AUTO		0	/* the first backend that has channels */

struct fl_ep;
struct fl_xfer;
struct fl_dma_chan;

/**
 * struct fl_xfer_ops - a DMA backend (xfer-dmaengine.c, xfer-nvedma.c)
 * @name: for logs and `framelink info`.
 * @id: FL_XFER_* reported by FL_IOC_INFO.
 * @init: take up to cfg.dma_channels channels per direction into fl_ep.rd /
 *	fl_ep.wr and set fl_ep.nrd / fl_ep.nwr; -ENODEV when this backend has
 *	none here (the next one is tried), another errno on failure.
 * @exit: give every channel back (engine stopped, quiesced); a channel whose
 *	DMA was never proven over is kept (leaked) and counted in fl_ep.dma_leaked.
 * @part: queue one part of @x, @len bytes between @local and @host, on @dc
 *	(a context of @dc is free); false when it could not.
 * @flush: start what @part queued on @dc (NULL: @part starts it).
 * @quiesce: end every transfer within @timeout_ms after fl_ep.xgen was bumped;
 *	true when each channel is proven idle.
 * @stuck: true while DMA of an earlier generation may still run.
 * @resume: before the queue is enabled again after a quiesce (may be NULL).
 * @pass: per engine pass (restart channels after an abort); true if it did work.
 */
struct fl_xfer_ops {
	const char *name;
	u32 id;
	int (*init)(struct fl_ep *ep);
	void (*exit)(struct fl_ep *ep);
	bool (*part)(struct fl_ep *ep, struct fl_dma_chan *dc, struct fl_xfer *x, u64 host,
		     dma_addr_t local, u32 len, bool to_host);
	void (*flush)(struct fl_dma_chan *dc);
	bool (*quiesce)(struct fl_ep *ep, unsigned int timeout_ms);
	bool (*stuck)(struct fl_ep *ep);
	void (*resume)(struct fl_ep *ep);
	bool (*pass)(struct fl_ep *ep);
};

/**
 * struct fl_ev_handlers - the driver's handlers of controller events (main.c)
 * @init: set the controller up for the function; may sleep.
 * @deinit: stop everything and give the controller back; may sleep.
 * @link_up: start the engine; may sleep. Return: the engine runs.
 * @link_down: stop the engine; may sleep.
 */
struct fl_ev_handlers {
	int (*init)(struct pci_epf *epf);
	void (*deinit)(struct pci_epf *epf);
	bool (*link_up)(struct pci_epf *epf);
	void (*link_down)(struct pci_epf *epf);
};

/**
 * struct fl_epf_events - controller events of one function (events.c)
 * @epf: the function.
 * @handlers: the driver's handlers.
 * @work: runs recorded events in process context.
 * @lock: protects @accepting, @want_init, @want_up, @deinit_seen and
 *	@down_seen; taken in any context.
 * @accepting: events are taken (bind to unbind).
 * @want_init: the newest of init and deinit recorded is init.
 * @want_up: the newest link event recorded is link up.
 * @deinit_seen: a deinit was recorded and not yet acted on.
 * @down_seen: a link down was recorded and not yet acted on.
 * @run_lock: serialises the handlers (work item and direct calls);
 *	protects @inited and @up.
 * @inited: the driver acted on init last, not on deinit.
 * @up: the engine was started by the last link up and not stopped since by
 *	link down or deinit.
 * @nb: on the controller's notifier chain (kernels that have one).
 * @nb_registered: @nb is on the chain.
 */
struct fl_epf_events {
	struct pci_epf *epf;
	const struct fl_ev_handlers *handlers;
	struct work_struct work;
	spinlock_t lock; /* protects accepting, want_*, *_seen */
	bool accepting;
	bool want_init;
	bool want_up;
	bool deinit_seen;
	bool down_seen;
	struct mutex run_lock; /* serialises handlers; protects inited, up */
	bool inited;
	bool up;
	struct notifier_block nb;
	bool nb_registered;
};

/**
 * struct fl_epf - one framelink function (probe to remove)
 * @epf: the endpoint function.
 * @header: its configuration header (configfs vendorid/deviceid/... write here).
 * @group: configfs group with the framelink attributes.
 * @cfg_lock: protects @cfg and @ep against configfs stores racing bind/unbind.
 * @cfg: attribute values.
 * @ep: the running instance between bind and unbind.
 * @events: controller events (events.c).
 */
struct fl_epf {
	struct pci_epf *epf;
	struct pci_epf_header header;
	struct config_group group;
	struct mutex cfg_lock; /* protects cfg and ep */
	struct fl_ep_cfg cfg;
	struct fl_ep *ep;
	struct fl_epf_events events;
};

/* Who owns a frame slot; exactly one at a time */
enum fl_slot_state {
	FL_SLOT_APP,		/* the endpoint app */
	FL_SLOT_POSTED,		/* posted for a frame from the host */
	FL_SLOT_RX,		/* a frame from the host is being copied in */
	FL_SLOT_QUEUED,		/* submitted, waiting for a host buffer */
	FL_SLOT_TX,		/* being copied to the host */
	FL_SLOT_DONE,		/* completion waiting for REAP */
};

/**
 * struct fl_slot - bookkeeping of one frame slot, or of one V4L2 buffer (v4l2.c)
 * @state: enum fl_slot_state.
 * @ts_post: CLOCK_MONOTONIC ns of the POST.
 * @dma: a V4L2 buffer's DMA address on fl_ep.dma_dev (slots: slots_dma arithmetic).
 * @va: a V4L2 buffer's kernel address, or NULL (then no CPU copy may fill it).
 * @len: a V4L2 buffer's length (slots: slot_size).
 */
struct fl_slot {
	u32 state;
	u64 ts_post;
	dma_addr_t dma;
	void *va;
	u32 len;
};

/*
 * Who receives and sends on an endpoint (fl_ep.user, bits): the ioctl path, or the V4L2
 * devices, each for its direction; never the ioctl path and a V4L2 device together.
 */
/* POST or SUBMIT on /dev/framelink-ep<N>, until its last close */
#define FL_EP_USER_IOCTL	BIT(0)
#define FL_EP_USER_V4L2_CAP	BIT(1)	/* the V4L2 capture device, from STREAMON to STREAMOFF */
#define FL_EP_USER_V4L2_OUT	BIT(2)	/* the V4L2 output device, from STREAMON to STREAMOFF */
#define FL_EP_USER_V4L2		(FL_EP_USER_V4L2_CAP | FL_EP_USER_V4L2_OUT)

struct fl_ep_v4l2;
struct fl_ep_vout;

/**
 * struct fl_sub - a frame the app submitted (FL_IOC_SUBMIT)
 * @slot: slot index.
 * @bytes: frame length.
 * @flags: FL_FRAME_*.
 * @cookie: the app's cookie.
 * @ts_submit: CLOCK_MONOTONIC ns of the SUBMIT.
 * @pos: free-running queue index, set by fl_q_peek_sub() for fl_q_pop_sub().
 */
struct fl_sub {
	u32 slot;
	u32 bytes;
	u32 flags;
	u64 cookie;
	u64 ts_submit;
	u32 pos;
};

struct fl_dma_chan;
struct fl_nvedma;

/**
 * struct fl_dma_ctx - callback parameter of one issued DMA descriptor
 * @x: the transfer it moves.
 * @dc: the channel it was issued on.
 * @gen: fl_ep.xgen when it was issued; a callback of an older generation is
 *	ignored.
 * @busy: issued and neither its callback ran nor the channel was proven idle
 *	since; the context is not reused while set.
 *
 * Fields change under fl_ep.xgen_lock.
 */
struct fl_dma_ctx {
	struct fl_xfer *x;
	struct fl_dma_chan *dc;
	u32 gen;
	bool busy;
};

/**
 * struct fl_dma_chan - one DMA channel held by the endpoint
 * @chan: the dmaengine channel (dmaengine backend).
 * @num: the library's channel number in its direction (NVIDIA eDMA backend).
 * @ctx: one callback context per descriptor it may hold (ring entries).
 * @nctx: entries of @ctx.
 * @ctx_next: next context to use, free-running (engine private).
 * @last_cookie: cookie of the newest descriptor submitted (engine private).
 * @stuck: a terminate was not proven finished within the bound: the channel
 *	is not used and its contexts are kept until it is proven idle (engine
 *	private).
 * @reissue: an abort left queued descriptors that dw-edma starts only at the
 *	next issue_pending (set by callbacks, cleared by the engine).
 * @orphan: 1 once the channel was leaked at unbind still stuck (late
 *	callbacks return at once); 0 while the endpoint owns it.
 * @orphan_node: in the orphan watcher's list (xfer-dmaengine.c).
 */
struct fl_dma_chan {
	struct dma_chan *chan;
	u32 num;
	struct fl_dma_ctx *ctx;
	u32 nctx;
	u32 ctx_next;
	dma_cookie_t last_cookie;
	bool stuck;
	atomic_t reissue;
	atomic_t orphan;
	struct list_head orphan_node;
};

/**
 * struct fl_xfer - one frame moving in either direction (preallocated per ring entry)
 * @ep: the endpoint.
 * @slot: endpoint slot, or %FL_EP_NO_SLOT for a descriptor failed before any copy.
 * @id: host buffer id (echoed in the completion).
 * @bytes: frame length.
 * @flags: FL_FRAME_*.
 * @seq: sequence number.
 * @cookie: sender's cookie.
 * @status: FL_ST_* once finished.
 * @ts_submit: app SUBMIT/POST time (for its completion).
 * @ts_start: when the copy was issued.
 * @ts_done: when the copy finished.
 * @hold_until: a failed transfer is published no earlier than this (engine
 *	private; 0: not held yet; see fl_cq_hold()).
 * @pending: DMA parts outstanding, plus one while they are being submitted.
 * @dma_err: a part failed.
 * @done: finished; set with release ordering after @ts_done and @dma_err.
 * @leaked: its DMA could not be proven stopped at a teardown: its slot is
 *	never given back (engine private).
 * @cpu: copied by the CPU, from fl_xfer_pass() (engine private).
 * @cpu_host: CPU copy: host bus address (engine private).
 * @cpu_off: CPU copy: bytes copied so far (engine private).
 * @cpu_to_host: CPU copy: direction (engine private).
 */
struct fl_xfer {
	struct fl_ep *ep;
	u32 slot;
	u32 id;
	u32 bytes;
	u32 flags;
	u32 seq;
	u64 cookie;
	u16 status;
	u64 ts_submit;
	u64 ts_start;
	u64 ts_done;
	u64 hold_until;
	atomic_t pending;
	bool dma_err;
	bool done;
	bool leaked;
	bool cpu;
	u64 cpu_host;
	u32 cpu_off;
	bool cpu_to_host;
};

/**
 * struct fl_fifo - a ring of slot-sized entries (app queues), under fl_ep.q_lock
 * @head: next entry to take (free-running).
 * @tail: next entry to fill (free-running).
 * @mask: capacity - 1 (capacity a power of two >= slots).
 */
struct fl_fifo {
	u32 head;
	u32 tail;
	u32 mask;
};

/**
 * struct fl_ep_stats - counters behind FL_IOC_STATS (atomics: engine, callbacks, ioctls)
 * @c: one per struct fl_stats field up to batch_irqs.
 */
struct fl_ep_stats {
	atomic64_t c[20];
};

#define FL_STAT_TX_FRAMES	0
#define FL_STAT_TX_BYTES	1
#define FL_STAT_RX_FRAMES	2
#define FL_STAT_RX_BYTES	3
#define FL_STAT_ERRORS		4
#define FL_STAT_PROTO_ERRORS	5
#define FL_STAT_INTERRUPTS	6
#define FL_STAT_DMA		7
#define FL_STAT_CPU		8
#define FL_STAT_POLLS		9
#define FL_STAT_POLL_US		10
#define FL_STAT_REACTION_NS	11
#define FL_STAT_SAFETY_WAKEUPS	12
#define FL_STAT_QUEUE_RESETS	13
#define FL_STAT_DMA_ABORTS	14
#define FL_STAT_DMA_LEAKED	15
#define FL_STAT_STATUS_REPAIRS	16
#define FL_STAT_INTX_RETRIES	17
#define FL_STAT_LINK_READS	18
#define FL_STAT_BATCH_IRQS	19

/**
 * struct fl_xo - the crossover of one direction (xover.c)
 * @bytes: frames of this many bytes and more go by DMA (engine private; written
 *	under fl_ep.q_lock, which FL_IOC_INFO reads it under).
 * @how: FL_XOVER_* (as @bytes).
 * @last: the last value measured in this binding, kept when a measurement fails.
 * @has_last: @last is valid.
 */
struct fl_xo {
	u32 bytes;
	u32 how;
	u32 last;
	bool has_last;
};

/**
 * struct fl_notify_src - what wakes the engine to look at BAR0 (RC -> EP)
 * @name: for logs.
 * @notify: FL_NOTIFY_* reported by FL_IOC_INFO.
 * @wait: wait for a reason to look again; @idle tells that the last pass found
 *	nothing to do. Every wait is bounded.
 *
 * Polling (poll.c) is the only source built; the kernel's endpoint doorbell
 * (pci_epf_alloc_doorbell(), Linux >= 6.17) would be a second one.
 */
struct fl_notify_src {
	const char *name;
	u32 notify;
	void (*wait)(struct fl_ep *ep, bool idle);
};

/**
 * struct fl_ep - one bound framelink function
 * @ref: held by the binding and by every open file.
 * @fepf: the function.
 * @epf: the endpoint function.
 * @epc: its controller.
 * @dev: the function's device (logs).
 * @dma_dev: the controller's parent: slots, BAR memory and DMA engine.
 * @cfg: configuration copied at bind.
 * @features: the controller's features.
 * @id: N of /dev/framelink-ep<N>.
 * @name: "framelink-ep<N>".
 * @misc: the character device.
 *
 * @bar: BAR0 memory (local to the endpoint, written by the host).
 * @hdr: BAR0 header.
 * @ctrl: BAR0 control (host writes).
 * @status: BAR0 status (engine writes).
 * @db: BAR0 doorbell (host writes).
 * @tx_ring: host -> endpoint frame descriptors.
 * @rx_ring: empty host buffers.
 * @entries: entries in each descriptor ring.
 * @offered: FL_F_* offered in the header.
 * @msi: MSI capability set up.
 * @msix: MSI-X capability set up.
 *
 * @slots_va: all frame slots, one physically contiguous allocation.
 * @slots_dma: its DMA address.
 * @slots_bytes: its size.
 * @nslots: number of slots.
 * @slot_size: bytes per slot.
 *
 * @life_lock: protects @hw_ready, @engine and the hardware set-up (BAR, channels,
 *	window); held around EPC calls, so never taken under misc_mtx or mmap_lock.
 * @hw_ready: epc_init done (BAR set, channels and window held).
 * @engine: the engine thread while the link is up.
 * @files_lock: protects @files, @vmas, @exports, @exp_mapped and @dead (written
 *	under @q_lock too); open, mmap and the dma-buf ops take it to see @dead,
 *	unbind to zap mappings.
 * @dead: unbound: no new work, mappings zapped, slots freed (or kept for an
 *	importer's mapping, @slots_kept).
 * @files: open files (to zap their mappings at unbind).
 * @notify: the RC -> EP notification source.
 * @engine_wq: the engine sleeps here between polls.
 * @kick: set to wake the engine early (DMA done, SUBMIT, POST).
 *
 * @xops: the DMA backend, NULL when every frame is a CPU copy.
 * @nv: NVIDIA eDMA library state (xfer-nvedma.c), NULL with another backend.
 * @rd: read channels (DMA_DEV_TO_MEM).
 * @wr: write channels (DMA_MEM_TO_DEV).
 * @nrd: read channels held.
 * @nwr: write channels held.
 * @xgen_lock: protects @xgen and every struct fl_dma_ctx; DMA callbacks
 *	take it (any context) while they check the generation and update the
 *	transfer, so a teardown that bumped @xgen sees no callback of the old
 *	generation touch a transfer afterwards.
 * @xgen: transfer generation, bumped at each teardown (reset, link down, unbind).
 * @dma_stale: callbacks of an older generation ignored (logs).
 * @dma_leaked: channels kept at exit because their DMA never stopped: the
 *	binding, its slots and those channels are then never freed.
 * @rd_next: read channel for the next frame (engine private).
 * @wr_next: write channel for the next frame (engine private).
 * @win_va: outbound window, CPU address.
 * @win_phys: outbound window, controller address.
 * @win_page: mapping granule of the window.
 *
 * @state: FL_STATE_* (engine private, mirrored in BAR0 status).
 * @link_cut: a CPU copy found the link or the controller gone (engine private).
 * @accepted: FL_F_* the host accepted (engine private).
 * @cq_addr: host completion area (engine private).
 * @cq_entries: host completion ring size (engine private).
 * @irq_type: FL_IRQ_* the host enabled (engine private).
 * @tx_cons: tx descriptors taken (engine private).
 * @tx_done: tx descriptors completed (engine private).
 * @rx_cons: rx descriptors taken (engine private).
 * @rx_done: rx descriptors completed (engine private).
 * @cq_prod: completions published (engine private).
 * @rx_seq: sequence number of the next endpoint -> host frame (engine private).
 * @tx_seen: last tx_prod seen (engine private).
 * @t_seen: when it was seen, for the reaction time (engine private).
 * @poll_us: current idle polling interval (engine private).
 * @txx: transfer per tx ring entry.
 * @rxx: transfer per rx ring entry.
 * @cq_batch: completions being published.
 *
 * @cqm_va: the host completion area (cq_addr) through its own window
 *	region, mapped at enable (cqmap.c); NULL when unmapped (engine private).
 * @cqm_base: start of that window region (engine private).
 * @cqm_phys: its controller address (engine private).
 * @cqm_size: its size (engine private).
 * @cqm_lost: an EPC operation failed with the controller in reset: do not
 *	touch the mapping or the controller again this session (engine private).
 * @cq_unflushed: a batch was published without an interrupt and not yet
 *	flushed (engine private).
 * @cq_signalled: cq_prod when the last completion interrupt was raised
 *	(engine private).
 * @irq_seq: interrupts announced to the host this session (%FL_F_IRQ_PROD,
 *	fl_host_status.irq_seq; engine private).
 * @cq_sig_event: fl_bar_doorbell.cq_event when the last interrupt was raised
 *	(%FL_F_IRQ_SEEN; engine private).
 * @cq_sig_seen: fl_bar_doorbell.irq_seen then (engine private).
 * @intx_out: an INTx was raised and the host has not acknowledged it yet
 *	(%FL_F_INTX_SEQ; engine private).
 * @intx_wait: an INTx is due once the host acknowledges (engine private).
 * @intx_seq: the number of the last INTx raised, fl_bar_status.intx_seq
 *	(free-running for the life of the function, never reset at enable, so
 *	that an acknowledge from an earlier session cannot match; engine
 *	private).
 * @intx_ts: when the last INTx was raised (ktime_get_ns(); engine private).
 * @irq_owed: the last raise failed: made again on the next pass (engine private).
 *
 * @q_lock: protects @slot, @posted, @subq, @compq, @post_fifo, @sub_fifo,
 *	@comp_fifo, @openers, @engine_up, @link_epoch and @user.
 * @slot: per-slot owner: @nslots slots, then @nvbufs V4L2 buffers.
 * @nvbufs: buffer indices after the slots for the V4L2 devices (0 on a kernel without
 *	videobuf2-dma-contig): %FL_EP_V4L2_BUFS for the capture device (v4l2.c), posted by
 *	it alone and completed to it, then as many for the output device (v4l2-out.c),
 *	submitted by it alone and completed to it; never named by an ioctl.
 * @user: FL_EP_USER_* bits.
 * @v4l2: the V4L2 capture device, or NULL; set at bind, cleared at unbind.
 * @vout: the V4L2 output device, or NULL; set at bind, cleared at unbind.
 * @posted: slot indices posted for receiving.
 * @subq: frames submitted, not yet taken by the engine.
 * @compq: completions waiting for REAP.
 * @post_fifo: indices of @posted.
 * @sub_fifo: indices of @subq.
 * @comp_fifo: indices of @compq.
 * @openers: open files.
 * @engine_up: the engine runs (SUBMIT is accepted).
 * @link_epoch: bumped at each link down, to wake REAP waiters with -ENOLINK.
 * @app_wq: REAP and poll() wait here.
 * @reap_lock: serializes REAP (completions leave the queue once copied out).
 * @stats: FL_IOC_STATS counters.
 *
 * @vmas: mappings of the slots (struct fl_vma, slots.c), under @files_lock.
 * @st_error: fl_bar_status.error as last written (engine private).
 * @st_generation: fl_bar_status.generation as last written (engine private).
 *
 * @irq_num: the number completion interrupts are raised with: 1, or 0 when
 *	the self-test found 0-based numbering (irqtest.c; engine private).
 * @irq_dead: the self-test found that no interrupt reaches the host: none is
 *	raised until the next enable (engine private).
 * @irq_test: FL_IRQT_* of the last enable (engine private).
 *
 * @sm_att: the framelink-slots region this binding attached to the
 *	controller (slotmem.c), NULL when it uses what the controller had.
 * @sm_attrs: DMA attributes of the slots allocation (alloc, mmap, free).
 * @sm_pool: the slots come from the controller's pool (dev->dma_mem), whose
 *	memory may have no linear mapping: no cache maintenance by address.
 * @sm_dev_pool: the controller's pool when the slots were allocated, or NULL.
 * @sm_dev_cma: its CMA area then, or NULL: a free after unbind needs both unchanged.
 *
 * @exports: exported slots (struct fl_xbuf, export.c), under @files_lock.
 * @exp_mapped: importer mappings of exported slots (map_dma_buf without its
 *	unmap yet), under @files_lock; unbind leaves the slots allocated while any.
 * @slots_kept: unbind left the slots to the last importer mapping, whose unmap
 *	frees them (fl_slotmem_free_late()), under @files_lock.
 *
 * @xo: the crossover per direction, indexed by %FL_XO_RD / %FL_XO_WR.
 * @xo_va: endpoint buffer of %FL_EP_XO_BUF bytes the measurement copies to and
 *	from, allocated at bind like the slots; NULL when that failed.
 * @xo_dma: its DMA address.
 * @xo_x: the transfer the measurement's DMA parts belong to (engine private).
 */
struct fl_ep {
	struct kref ref;
	struct fl_epf *fepf;
	struct pci_epf *epf;
	struct pci_epc *epc;
	struct device *dev;
	struct device *dma_dev;
	struct fl_ep_cfg cfg;
	const struct pci_epc_features *features;
	int id;
	char name[24];
	struct miscdevice misc;

	void *bar;
	struct fl_bar_header *hdr;
	struct fl_bar_ctrl *ctrl;
	struct fl_bar_status *status;
	struct fl_bar_doorbell *db;
	struct fl_tx_desc *tx_ring;
	struct fl_rx_desc *rx_ring;
	u32 entries;
	u64 offered;
	bool msi;
	bool msix;

	void *slots_va;
	dma_addr_t slots_dma;
	size_t slots_bytes;
	u32 nslots;
	u32 slot_size;

	struct mutex life_lock; /* protects hw_ready, engine, hardware set-up */
	bool hw_ready;
	struct task_struct *engine;
	struct mutex files_lock; /* protects files, vmas, exports, exp_mapped, dead */
	bool dead;
	struct list_head files;
	const struct fl_notify_src *notify;
	wait_queue_head_t engine_wq;
	atomic_t kick;

	const struct fl_xfer_ops *xops;
	struct fl_nvedma *nv;
	struct fl_dma_chan rd[FL_EP_MAX_CHANNELS];
	struct fl_dma_chan wr[FL_EP_MAX_CHANNELS];
	u32 nrd;
	u32 nwr;
	spinlock_t xgen_lock; /* protects xgen, the DMA contexts, callback updates */
	u32 xgen;
	atomic_t dma_stale;
	u32 dma_leaked;
	u32 rd_next;
	u32 wr_next;
	void __iomem *win_va;
	phys_addr_t win_phys;
	size_t win_page;

	u32 state;
	bool link_cut;
	u64 accepted;
	u64 cq_addr;
	u32 cq_entries;
	u32 irq_type;
	u32 tx_cons;
	u32 tx_done;
	u32 rx_cons;
	u32 rx_done;
	u32 cq_prod;
	u32 rx_seq;
	u32 tx_seen;
	u64 t_seen;
	u32 poll_us;
	struct fl_xfer *txx;
	struct fl_xfer *rxx;
	struct fl_cqe *cq_batch;

	/* completion area mapping and host notification: cq.c, cqmap.c (issue 8) */
	void __iomem *cqm_va;
	void __iomem *cqm_base;
	phys_addr_t cqm_phys;
	size_t cqm_size;
	bool cqm_lost;
	bool cq_unflushed;
	u32 cq_signalled;
	u32 irq_seq;
	u32 cq_sig_event;
	u32 cq_sig_seen;
	bool intx_out;
	bool intx_wait;
	u32 intx_seq;
	u64 intx_ts;
	bool irq_owed;

	spinlock_t q_lock; /* protects slot states, the app queues, openers, engine_up, user */
	struct fl_slot *slot;
	u32 nvbufs;
	u8 user;
	struct fl_ep_v4l2 *v4l2;
	struct fl_ep_vout *vout;
	u32 *posted;
	struct fl_sub *subq;
	struct fl_completion *compq;
	struct fl_fifo post_fifo;
	struct fl_fifo sub_fifo;
	struct fl_fifo comp_fifo;
	int openers;
	bool engine_up;
	u32 link_epoch;
	wait_queue_head_t app_wq;
	struct mutex reap_lock; /* serializes REAP */
	struct fl_ep_stats stats;

	/* Endpoint hardening (issue 8: mappings vs unbind, self-healing status) */
	struct list_head vmas;
	u32 st_error;
	u32 st_generation;

	/* Interrupt self-test at enable (issue 9 section 1): irqtest.c */
	u16 irq_num;
	bool irq_dead;
	u32 irq_test;

	/* Where the slots come from (issue 9 section 3): slotmem.c */
	struct fl_sm_attach *sm_att;
	unsigned long sm_attrs;
	bool sm_pool;
	void *sm_dev_pool;
	void *sm_dev_cma;

	/* Slots exported as dma-bufs (issue 11): export.c */
	struct list_head exports;
	unsigned int exp_mapped;
	bool slots_kept;

	/* Crossovers measured at enable (issue 10): xover.c */
	struct fl_xo xo[2];
	void *xo_va;
	dma_addr_t xo_dma;
	struct fl_xfer xo_x;
};

static inline void fl_stat_add(struct fl_ep *ep, int i, u64 v)
{
	atomic64_add(v, &ep->stats.c[i]);
}

static inline void fl_stat_max(struct fl_ep *ep, int i, u64 v)
{
	s64 old = atomic64_read(&ep->stats.c[i]);

	while ((u64)old < v && !atomic64_try_cmpxchg(&ep->stats.c[i], &old, v))
		;
}

/* configfs.c */
struct config_group *fl_cfs_add(struct pci_epf *epf, struct config_group *group);
void fl_cfs_defaults(struct fl_ep_cfg *cfg);

/* bar.c */
int fl_bar_alloc(struct fl_ep *ep);
void fl_bar_free(struct fl_ep *ep);
int fl_bar_setup(struct fl_ep *ep);
void fl_bar_clear(struct fl_ep *ep);
void fl_bar_set_state(struct fl_ep *ep, u32 state, u32 error);
void fl_bar_write_header(struct fl_ep *ep);
void fl_bar_proto_error(struct fl_ep *ep, u32 error, const char *what);
bool fl_bar_heal_status(struct fl_ep *ep);
bool fl_bar_heal_header(struct fl_ep *ep);
bool fl_bar_check_doorbell(struct fl_ep *ep);

/* slots.c */
int fl_slots_alloc(struct fl_ep *ep);
void fl_slots_free(struct fl_ep *ep);
void fl_slots_free_meta(struct fl_ep *ep);
int fl_slots_mmap(struct fl_ep *ep, struct vm_area_struct *vma);
int fl_slots_mmap_part(struct fl_ep *ep, struct vm_area_struct *vma, size_t start,
		       size_t bytes);
void fl_slots_sync_mmaps(struct fl_ep *ep);
u32 fl_q_take_posted(struct fl_ep *ep, u64 *ts_post);
bool fl_q_peek_sub(struct fl_ep *ep, struct fl_sub *sub);
bool fl_q_pop_sub(struct fl_ep *ep, const struct fl_sub *sub);
void fl_q_complete(struct fl_ep *ep, const struct fl_xfer *x, u32 queue, int status);
void fl_q_cancel_submitted(struct fl_ep *ep);
void fl_q_release_pending(struct fl_ep *ep);
void fl_q_release_all(struct fl_ep *ep);
int fl_q_submit(struct fl_ep *ep, const struct fl_frame *f);
int fl_q_post(struct fl_ep *ep, u32 idx);
int fl_q_post_vbuf(struct fl_ep *ep, u32 idx, dma_addr_t dma, void *va, u32 len);
u32 fl_q_unpost_vbufs(struct fl_ep *ep, u32 *out);
int fl_q_submit_vbuf(struct fl_ep *ep, const struct fl_frame *f, dma_addr_t dma, void *va,
		     u32 len);
u32 fl_q_unsubmit_vbufs(struct fl_ep *ep, u32 *out);
int fl_q_claim_v4l2(struct fl_ep *ep, u8 user);
void fl_q_drop_v4l2(struct fl_ep *ep, u8 user);
dma_addr_t fl_slot_dma(struct fl_ep *ep, u32 idx);
void *fl_slot_va(struct fl_ep *ep, u32 idx);
u32 fl_slot_len(struct fl_ep *ep, u32 idx);

/* v4l2.c: the V4L2 capture device (issue 29), where the kernel has videobuf2-dma-contig */
#if IS_ENABLED(CONFIG_VIDEOBUF2_DMA_CONTIG) || defined(FL_V4L2_UNLINKED)
#define FL_EP_V4L2_BUFS		32	/* VB2_MAX_FRAME: a queue's buffers (v4l2.c asserts it) */
int fl_ep_v4l2_register(struct fl_ep *ep);
void fl_ep_v4l2_unregister(struct fl_ep *ep);
void fl_ep_v4l2_rx_done(struct fl_ep *ep, const struct fl_completion *c);
void fl_ep_v4l2_peer_format(struct fl_ep *ep, const struct fl_bar_format *f);
void fl_ep_v4l2_enable(struct fl_ep *ep, bool formats);
/* v4l2-out.c: the V4L2 output device (frames to the host), its buffers after the capture's */
int fl_ep_vout_register(struct fl_ep *ep);
void fl_ep_vout_unregister(struct fl_ep *ep);
void fl_ep_vout_done(struct fl_ep *ep, const struct fl_completion *c);
#else
#define FL_EP_V4L2_BUFS		0
static inline int fl_ep_vout_register(struct fl_ep *ep)
{
	return 0;
}

static inline void fl_ep_vout_unregister(struct fl_ep *ep)
{
}

static inline void fl_ep_vout_done(struct fl_ep *ep, const struct fl_completion *c)
{
}

static inline int fl_ep_v4l2_register(struct fl_ep *ep)
{
	return 0;
}

static inline void fl_ep_v4l2_unregister(struct fl_ep *ep)
{
}

static inline void fl_ep_v4l2_rx_done(struct fl_ep *ep, const struct fl_completion *c)
{
}

static inline void fl_ep_v4l2_peer_format(struct fl_ep *ep, const struct fl_bar_format *f)
{
}

static inline void fl_ep_v4l2_enable(struct fl_ep *ep, bool formats)
{
}
#endif
u32 fl_q_submitted(struct fl_ep *ep);
u32 fl_q_peek_completions(struct fl_ep *ep, struct fl_completion *out, u32 max);
void fl_q_drop_completions(struct fl_ep *ep, u32 n);

/* xfer.c */
int fl_xfer_init_hw(struct fl_ep *ep);
void fl_xfer_exit_hw(struct fl_ep *ep);
bool fl_xfer_quiesce(struct fl_ep *ep, unsigned int timeout_ms);
bool fl_xfer_stuck(struct fl_ep *ep);
void fl_xfer_resume(struct fl_ep *ep);
bool fl_xfer_pass(struct fl_ep *ep);
bool fl_xfer_cpu_pass(struct fl_ep *ep);
unsigned int fl_xfer_drain_ms(void);
void fl_xfer_start(struct fl_ep *ep, struct fl_xfer *x, u64 host, bool to_host);
void fl_xfer_trace_done(struct fl_xfer *x);
int fl_win_write(struct fl_ep *ep, u64 pci_addr, const void *src, size_t len);
int fl_win_read(struct fl_ep *ep, u64 pci_addr, void *dst, size_t len);
const char *fl_xfer_backend_name(struct fl_ep *ep);
u32 fl_xfer_backend_id(struct fl_ep *ep);
bool fl_xfer_part_done(struct fl_dma_ctx *c, bool failed);
struct fl_dma_chan *fl_dma_chan_at(struct fl_ep *ep, u32 i);
struct fl_dma_ctx *fl_dma_ctx_get(struct fl_dma_chan *dc);
int fl_dma_ctx_alloc(struct fl_ep *ep, struct fl_dma_chan *dc);
void fl_dma_ctx_arm(struct fl_ep *ep, struct fl_dma_ctx *c, struct fl_dma_chan *dc,
		    struct fl_xfer *x);
void fl_dma_ctx_disarm(struct fl_ep *ep, struct fl_dma_ctx *c);
void fl_dma_ctx_free_all(struct fl_ep *ep, struct fl_dma_chan *dc);
void fl_dma_ctx_release(struct fl_dma_chan *dc);
void fl_dmaengine_orphans_free(void);
u32 fl_dma_ctx_leak(struct fl_ep *ep, struct fl_dma_chan *dc);

/* xfer-dmaengine.c, xfer-nvedma.c */
extern const struct fl_xfer_ops fl_xfer_dmaengine;
extern const struct fl_xfer_ops fl_xfer_nvedma;
static inline bool fl_xfer_done(struct fl_xfer *x)
{
	/* Pairs with the release in xfer.c: the result is visible once done is */
	return smp_load_acquire(&x->done);
}

/* events.c */
void fl_epf_events_probe(struct fl_epf_events *ev, struct pci_epf *epf,
			 const struct fl_ev_handlers *handlers);
int fl_epf_events_bind(struct fl_epf_events *ev, const struct pci_epc_features *f);
void fl_epf_events_unbind(struct fl_epf_events *ev);

/* poll.c */
int fl_engine_start(struct fl_ep *ep);
void fl_engine_stop(struct fl_ep *ep, u32 error);
void fl_engine_kick(struct fl_ep *ep);

/* ring.c */
void fl_ring_reset(struct fl_ep *ep);
bool fl_ring_pass(struct fl_ep *ep);
bool fl_ring_abort(struct fl_ep *ep);

/* cq.c */
bool fl_cq_publish(struct fl_ep *ep);
int fl_cq_init(struct fl_ep *ep);
int fl_cq_raise(struct fl_ep *ep);
int fl_cq_raise_num(struct fl_ep *ep, u16 num);
void fl_cq_stop(struct fl_ep *ep);

/* cqmap.c */
int fl_cqmap_map(struct fl_ep *ep);
void fl_cqmap_unmap(struct fl_ep *ep);
void fl_cqmap_write(struct fl_ep *ep, size_t off, const void *src, size_t len);
void fl_cqmap_write32(struct fl_ep *ep, size_t off, u32 val);
u32 fl_cqmap_flush(struct fl_ep *ep);

/* irqtest.c: interrupt self-test at enable (issue 9 section 1) */
void fl_irqt_reset(struct fl_ep *ep);
void fl_irqt_run(struct fl_ep *ep);

/* xover.c: crossovers measured at enable (issue 10) */
void fl_xover_alloc(struct fl_ep *ep);
void fl_xover_free(struct fl_ep *ep);
void fl_xover_reset(struct fl_ep *ep, bool chans_known);
int fl_xover_run(struct fl_ep *ep);
u32 fl_xover_info(struct fl_ep *ep, u32 *wr, u32 *rd);

/* slotmem.c: where the slots come from (issue 9 section 3) */
struct fl_sm_attach;
int fl_slotmem_alloc(struct fl_ep *ep);
void fl_slotmem_free(struct fl_ep *ep);
void fl_slotmem_keep(struct fl_ep *ep);
void fl_slotmem_free_late(struct fl_ep *ep);
int fl_slotmem_mmap(struct fl_ep *ep, struct vm_area_struct *vma, size_t off, size_t len);
struct page *fl_slotmem_page(struct fl_ep *ep, size_t off);

/*
 * export.c: slots as dma-bufs (issue 11); linked only into a kernel with dma-buf,
 * compile-checked alone elsewhere (FL_EXPORT_UNLINKED, Kbuild).
 */
#if IS_ENABLED(CONFIG_DMA_SHARED_BUFFER) || defined(FL_EXPORT_UNLINKED)
int fl_export_slot(struct fl_ep *ep, struct fl_export *x, void __user *arg);
void fl_export_zap(struct fl_ep *ep);
bool fl_export_keep_slots(struct fl_ep *ep);
#else
static inline int fl_export_slot(struct fl_ep *ep, struct fl_export *x, void __user *arg)
{
	return -EOPNOTSUPP;
}

static inline void fl_export_zap(struct fl_ep *ep)
{
}

static inline bool fl_export_keep_slots(struct fl_ep *ep)
{
	return false;
}
#endif

/* cdev.c */
int fl_cdev_register(struct fl_ep *ep);
void fl_cdev_unregister(struct fl_ep *ep);
void fl_ep_put(struct fl_ep *ep);

#endif /* _FRAMELINK_EPF_H */
