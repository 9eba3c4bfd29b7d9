/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pci-epc-loop: a whole PCIe link inside one kernel - private definitions.
 *
 * The module is both ends of one link: a PCI endpoint controller (struct
 * pci_epc) that endpoint function drivers bind to, and a virtual PCI host
 * bridge whose single device is that endpoint as the root complex sees it.
 */
#ifndef _PCI_EPC_LOOP_H
#define _PCI_EPC_LOOP_H

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/dmaengine.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pci-epc.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <framelink/compat.h>

#define LOOP_MAX_FUNCS		1
/* Links one module instance serves (module parameter "links") */
#define LOOP_MAX_LINKS		4
#define LOOP_CFG_SIZE		PCI_CFG_SPACE_EXP_SIZE
#define LOOP_MAX_DMA_CHANS	8
#define LOOP_DEF_DMA_CHANS	2
/* hwirqs of the software MSI controller: multi-MSI (32) plus MSI-X (2048) */
#define LOOP_NR_MSI		4096
/* Address the software MSI controller decodes; nothing else lives there. */
#define LOOP_MSI_ADDR		0xfffff000ULL
/* Outbound window carved from the reserved pool */
#define LOOP_WIN_SIZE		SZ_16M

/* Link model: how far DMA data may land ahead of its modelled slot */
#define LOOP_MODEL_AHEAD_NS	(5 * NSEC_PER_MSEC)

/* Offsets of the emulated capabilities in config space */
#define LOOP_CAP_MSI		0x50
#define LOOP_CAP_MSIX		0x70
#define LOOP_CAP_EXP		0x80

enum loop_profile {
	LOOP_PROFILE_GENERIC,
	LOOP_PROFILE_TEGRA234,
	LOOP_PROFILE_TEGRA234_EDMA,
	LOOP_PROFILE_JETPACK,
};

/**
 * struct loop_bar - a BAR as the EPF configured it
 * @phys: physical address of the EPF's BAR memory (inside the pool)
 * @size: BAR size (power of two)
 * @flags: PCI_BASE_ADDRESS_* flags from the EPF
 * @set: BAR is configured
 */
struct loop_bar {
	phys_addr_t phys;
	u64 size;
	int flags;
	bool set;
};

/**
 * struct loop_fn - one emulated physical function
 * @cfg: config space contents
 * @wmask: bits the root complex may write
 * @w1cmask: bits the root complex clears by writing 1
 * @bar: BARs configured by the EPF
 * @msi_mmc: MSI multiple message capable (log2 of the vector count)
 * @msix_nr: number of MSI-X vectors, 0 if MSI-X is not configured
 * @msix_bir: BAR holding the MSI-X table and PBA
 * @msix_offset: offset of the MSI-X table in @msix_bir
 * @intx_pending: INTx raised while disabled by the root complex
 * @msi_pending: MSI vectors raised while masked
 * @msix_pending: MSI-X vectors raised while masked
 *
 * All fields are protected by &pci_epc_loop.cfg_lock.
 */
struct loop_fn {
	u8 cfg[LOOP_CFG_SIZE];
	u8 wmask[LOOP_CFG_SIZE];
	u8 w1cmask[LOOP_CFG_SIZE];
	struct loop_bar bar[PCI_STD_NUM_BARS];
	u8 msi_mmc;
	u16 msix_nr;
	enum pci_barno msix_bir;
	u32 msix_offset;
	bool intx_pending;
	u32 msi_pending;
	DECLARE_BITMAP(msix_pending, 2048);
};

struct pci_epc_loop;

/**
 * struct loop_dma_seg - one local scatterlist segment of a transfer
 * @local: local (endpoint side) DMA address
 * @len: length in bytes
 */
struct loop_dma_seg {
	dma_addr_t local;
	u32 len;
};

/**
 * struct loop_dma_desc - one prepared transfer
 * @tx: the dmaengine descriptor
 * @node: entry in a channel list
 * @dir: DMA_DEV_TO_MEM (read from host) or DMA_MEM_TO_DEV (write to host)
 * @remote: host (PCI) address of the first byte
 * @total: bytes in the transfer
 * @done: bytes transferred so far (for the residue)
 * @next_seg: first segment not started yet (dw-edma: start_burst)
 * @batch_done: bytes of the segments before the running linked-list
 *		batch (dw-edma: xfer_sz of burst done_burst - 1)
 * @nsegs: number of @seg entries
 * @seg: local segments
 */
struct loop_dma_desc {
	struct dma_async_tx_descriptor tx;
	struct list_head node;
	enum dma_transfer_direction dir;
	u64 remote;
	size_t total;
	size_t done;
	unsigned int next_seg;
	size_t batch_done;
	unsigned int nsegs;
	struct loop_dma_seg seg[] __counted_by(nsegs);
};

/* dw-edma channel states and requests (dw-edma-core.h enums) */
enum loop_dw_status {
	LOOP_DW_IDLE,
	LOOP_DW_BUSY,
	LOOP_DW_PAUSE,
};

enum loop_dw_request {
	LOOP_DW_REQ_NONE,
	LOOP_DW_REQ_PAUSE,
	LOOP_DW_REQ_STOP,
};

#define LOOP_ERR_COOKIES	8

/**
 * struct loop_dma_chan - one read or write channel
 * @chan: the dmaengine channel
 * @loop: owning loopback
 * @dir: direction this channel moves data in
 * @idx: channel index (for the stall fault)
 * @lock: protects @submitted, @issued, @terminated, @active, @abort, @cfg,
 *	  @err_cookie, @err_pos, @configured, @status, @request, @in_cb
 *	  and the cookies in @chan
 * @submitted: descriptors submitted but not issued
 * @issued: descriptors issued, waiting for the worker
 * @active: descriptor the worker is moving
 * @abort: terminate_all asked the worker to drop @active
 * @cfg: slave configuration
 * @err_cookie: cookies of recently failed transfers, for tx_status
 * @err_pos: next slot in @err_cookie
 * @work: the worker; one per channel keeps transfers in order
 * @terminated: dw-edma: descriptors terminated, freed at synchronize
 * @configured: dw-edma: device_config was called since the channel was
 *		allocated (prep and issue_pending need it)
 * @status: dw-edma channel state (&enum loop_dw_status)
 * @request: dw-edma pending request (&enum loop_dw_request)
 * @in_cb: a completion callback is running (synchronize waits for it)
 * @model_end: link model: end (ns) of this channel's last link slot
 *	       (only the worker touches it)
 * @kick_ns: when issue_pending last queued the worker
 */
struct loop_dma_chan {
	struct dma_chan chan;
	struct pci_epc_loop *loop;
	enum dma_transfer_direction dir;
	unsigned int idx;
	spinlock_t lock; /* lists, active, abort, cfg, errors, dw state, cookies */
	struct list_head submitted;
	struct list_head issued;
	struct loop_dma_desc *active;
	bool abort;
	struct dma_slave_config cfg;
	dma_cookie_t err_cookie[LOOP_ERR_COOKIES];
	unsigned int err_pos;
	struct work_struct work;
	struct list_head terminated;
	bool configured;
	u8 status;
	u8 request;
	bool in_cb;
	u64 model_end;
	u64 kick_ns;
};

/**
 * struct loop_stats - counters shown in debugfs
 * @dma_xfers: DMA transfers completed (ok or failed)
 * @dma_bytes: bytes moved by DMA
 * @dma_errors: DMA transfers failed
 * @irq_intx: INTx interrupts delivered
 * @irq_msi: MSI interrupts delivered
 * @irq_msix: MSI-X interrupts delivered
 * @irq_dropped: interrupts dropped (fault, disabled, link down, bad address)
 * @irq_held: interrupts held pending while masked
 * @irq_merged: MSI/MSI-X writes merged into one still pending (msictl.c)
 * @irq_failed: raises failed on purpose (fail_irq)
 * @cfg_reads: config reads by the root complex
 * @cfg_writes: config writes by the root complex
 * @win_maps: outbound window mappings
 * @win_flushed: bytes written back to the host through the window
 * @link_ups: link up events
 * @link_downs: link down events
 * @bme_blocked: bytes of endpoint requests not issued because the host cleared the
 *	function's Bus Master Enable (window writes dropped, DMA failed)
 */
struct loop_stats {
	atomic64_t dma_xfers;
	atomic64_t dma_bytes;
	atomic64_t dma_errors;
	atomic64_t irq_intx;
	atomic64_t irq_msi;
	atomic64_t irq_msix;
	atomic64_t irq_dropped;
	atomic64_t irq_held;
	atomic64_t irq_merged;
	atomic64_t irq_failed;
	atomic64_t cfg_reads;
	atomic64_t cfg_writes;
	atomic64_t win_maps;
	atomic64_t win_flushed;
	atomic64_t link_ups;
	atomic64_t link_downs;
	atomic64_t bme_blocked;
};

/**
 * struct loop_intr - the controller's interrupt line (intr.c)
 * @lock: protects every field below but @wq
 * @off: disable depth: the eDMA library's interrupt thread is running
 * @linkup_pending: a link up waits for the line
 * @off_since_ns: when the line went off
 * @off_max_ns: longest time the line was off
 * @linkup_held: link ups that had to wait for the line
 * @wq: link-up raisers waiting for the line
 */
struct loop_intr {
	spinlock_t lock; /* off, linkup_pending, the times and counts */
	unsigned int off;
	bool linkup_pending;
	u64 off_since_ns;
	u64 off_max_ns;
	u64 linkup_held;
	wait_queue_head_t wq;
};

/**
 * struct pci_epc_loop - the loopback link
 * @dev: the platform device
 * @index: which link of the machine (DT "framelink,link"), < LOOP_MAX_LINKS
 * @epc: endpoint controller
 * @profile: feature profile
 * @features: features reported to EPFs (points to @features_buf)
 * @features_buf: storage for @features, filled from the profile
 * @bar_caps: per-BAR constraints of the profile
 * @pool_phys: physical base of the reserved pool
 * @pool_size: size of the reserved pool
 * @pool_va: CPU mapping of the whole pool
 * @win_va: CPU address of the outbound window
 * @win_phys: physical address of the outbound window
 * @win_lock: protects @win_maps
 * @win_maps: active outbound mappings
 * @win_task: window worker (window.c), NULL when stopped; under @win_lock
 * @win_words: 8-byte words of all live mappings; written under @win_lock,
 *	       read locklessly by the worker to decide to sleep
 * @win_cursor: next word a partial worker pass starts at; under @win_lock
 * @win_pending: a cut of EPF writes waits for @win_posted_ns; under @win_lock
 * @win_pending_since: time (ns) the waiting cut was taken; under @win_lock
 * @win_last_tick: start (ns) of the worker's previous pass; under @win_lock
 * @win_tick_us: knob: worker period in microseconds
 * @win_idle_tick_us: knob: longest worker period while nothing moves
 * @win_scan_bytes: knob: bytes the worker compares per pass at most
 * @win_posted_ns: knob: delay before EPF window writes become visible
 * @win_msi_overtake: knob: raise_irq does not publish window writes first
 * @win_stat: window counters (enum loop_win_stat in window.c); under @win_lock
 * @cfg_lock: protects @fn (taken inside the PCI core's pci_lock)
 * @fn: emulated functions
 * @link_lock: serialises link transitions; protects @bridge,
 *	       @ep_notified, @mem_res, @busn_res. Never taken under
 *	       epc->lock: it is held while the host bridge probes drivers.
 * @bridge: the virtual host bridge while the link is up
 * @mem_res: host bridge memory window (the reserved pool)
 * @busn_res: host bridge bus number range
 * @ep_notified: EPFs were told link up and not yet link down
 * @state_lock: protects @started, @removing and writes of @ep_up, @rc_up
 * @started: the EPC was started (pci_epc_start)
 * @ep_up: the endpoint side has link: DMA and outbound window work
 *	   (read locklessly by the data paths)
 * @rc_up: the root complex side has link: config space answers and
 *	   interrupts are delivered (read locklessly)
 * @removing: device is being removed
 * @link_wq: ordered queue for link events
 * @link_up_work: bring the link up (after start)
 * @link_down_work: take the link down (after stop)
 * @bme_work: tell EPFs the root complex enabled bus mastering
 * @irq_work: deliver interrupts that were held pending
 * @intx_domain: INTx domain (one hwirq per pin)
 * @msi_base: software MSI controller domain
 * @msi_domain: PCI/MSI domain on top of @msi_base
 * @msi_lock: protects @msi_used
 * @msi_used: allocated @msi_base hwirqs
 * @msictl_lock: protects @msictl_pending, @msictl_msix and @msictl_armed
 * @msictl_pending: @msi_base hwirqs written and not yet taken (msictl.c)
 * @msictl_msix: of those, the ones an MSI-X wrote (for the counters)
 * @msictl_armed: @msictl_timer is started or running
 * @msictl_timer: takes the pending vectors irq_holdoff_us after the first
 * @irq_holdoff_us: how long an MSI stays pending before it is taken, 0 = at
 *		    once (nothing merges)
 * @dma: dmaengine provider
 * @dma_wq: worker queue for the DMA channels
 * @nchans_rd: read (DEV_TO_MEM) channels, 0 = no dmaengine device registered
 * @nchans_wr: write (MEM_TO_DEV) channels
 * @chans: read channels then write channels
 * @dma_registered: @dma is registered
 * @model_lock: protects @model_busy_until
 * @rate_mbps: link model raw rate per direction (Mbit/s), 0 = unlimited
 * @setup_ns: link model per-descriptor setup time (latency)
 * @dma_dw_semantics: 0 = idealised engine, 1 = dw-edma channel semantics
 * @dma_link_rwsem: held for read while a DMA chunk touches memory; link
 *		    down takes it for write so no chunk runs after it
 * @model_busy_until: per direction (0 read, 1 write): time (ns) the link
 *		      direction is busy until
 * @model_mps: Max_Payload_Size override in bytes, 0 = from Device Control
 * @model_mrrs: Max_Read_Request_Size override in bytes, 0 = from Device
 *		Control
 * @model_ovh: per direction: per-TLP overhead (bytes) last used
 * @model_bytes: per direction: bytes moved by DMA
 * @model_link_ns: per direction: modelled link time (ns)
 * @model_restarts: per direction: the copy fell too far behind the model
 * @model_late_ns: per direction: how late the last completion came
 *		   against its modelled end
 * @model_start_late_ns: per direction: how long the last idle channel's
 *			 worker took to start after issue_pending
 * @fail_dma: fail the next N DMA transfers
 * @corrupt_dma: flip one bit in each of the next N DMA chunks copied
 * @drop_irq: drop the next N interrupts
 * @dup_irq: duplicate the next N interrupts
 * @fail_irq: fail the next N raises with -EINVAL
 * @stall_mask: bit n set stalls channel n (reads first, then writes)
 * @stall_wq: woken when @stall_mask or the link changes
 * @stall_hold: a stalled channel stays stalled across link down (a hung engine)
 * @stats: counters
 * @dbg: debugfs directory
 * @nvedma: NVIDIA eDMA library interface state (nvedma.c), NULL until
 *	    loop_nvedma_init(); published once, read locklessly
 */
struct pci_epc_loop {
	struct device *dev;
	u32 index;
	struct pci_epc *epc;
	enum loop_profile profile;
	const struct pci_epc_features *features;
	struct pci_epc_features features_buf;
	const struct fl_epc_bar_caps *bar_caps;

	phys_addr_t pool_phys;
	size_t pool_size;
	void *pool_va;

	void *win_va;
	dma_addr_t win_phys;
	struct mutex win_lock; /* win_maps */
	struct list_head win_maps;
	/* window.c: the live outbound window (issue 7 items 1, 2, 6) */
	struct task_struct *win_task;
	size_t win_words;
	size_t win_cursor;
	bool win_pending;
	u64 win_pending_since;
	u64 win_last_tick;
	u32 win_tick_us;
	u32 win_idle_tick_us;
	u32 win_scan_bytes;
	u32 win_posted_ns;
	bool win_msi_overtake;
	u64 win_stat[16];

	raw_spinlock_t cfg_lock; /* fn[] */
	struct loop_fn fn[LOOP_MAX_FUNCS];

	struct mutex link_lock; /* link transitions, bridge, ep_notified */
	struct pci_host_bridge *bridge;
	struct resource mem_res;
	struct resource busn_res;
	bool ep_notified;
	spinlock_t state_lock; /* started, removing, ep_up/rc_up writes */
	bool started;
	bool ep_up;
	bool rc_up;
	bool removing;
	struct workqueue_struct *link_wq;
	struct work_struct link_up_work;
	struct work_struct link_down_work;
	struct work_struct bme_work;
	struct delayed_work irq_work;

	struct irq_domain *intx_domain;
	struct irq_domain *msi_base;
	struct irq_domain *msi_domain;
	struct mutex msi_lock; /* msi_used */
	DECLARE_BITMAP(msi_used, LOOP_NR_MSI);
	spinlock_t msictl_lock; /* msictl_pending, msictl_msix, msictl_armed */
	DECLARE_BITMAP(msictl_pending, LOOP_NR_MSI);
	DECLARE_BITMAP(msictl_msix, LOOP_NR_MSI);
	bool msictl_armed;
	struct hrtimer msictl_timer;
	u32 irq_holdoff_us;

	struct dma_device dma;
	struct workqueue_struct *dma_wq;
	unsigned int nchans_rd;
	unsigned int nchans_wr;
	struct loop_dma_chan chans[2 * LOOP_MAX_DMA_CHANS];
	bool dma_registered;

	spinlock_t model_lock; /* model_busy_until */
	u32 rate_mbps;
	u32 setup_ns;

	/* dw-edma semantics and the per-direction link model (dma.c, model.c) */
	u32 dma_dw_semantics;
	struct rw_semaphore dma_link_rwsem;
	u64 model_busy_until[2];
	u32 model_mps;
	u32 model_mrrs;
	u32 model_ovh[2];
	atomic64_t model_bytes[2];
	atomic64_t model_link_ns[2];
	atomic64_t model_restarts[2];
	atomic64_t model_late_ns[2];
	atomic64_t model_start_late_ns[2];

	atomic_t fail_dma;
	atomic_t corrupt_dma;
	atomic_t drop_irq;
	atomic_t dup_irq;
	atomic_t fail_irq;
	u32 stall_mask;
	wait_queue_head_t stall_wq;
	u32 stall_hold;

	struct loop_stats stats;
	struct dentry *dbg;

	/*
	 * PERST# lifecycle and interrupt numbering of the profile (perst.c,
	 * epc.c). perst_lock serialises PERST# transitions and protects
	 * perst_line and perst_inited; perst_on is written under it and read
	 * locklessly by the EPC operations.
	 */
	/** @perst_model: init/deinit follow PERST# (all but generic) */
	bool perst_model;
	/** @perst_deinit_at_assert: epc_deinit at assert (JetPack), else at the next deassert */
	bool perst_deinit_at_assert;
	/**
	 * @linkup_hardirq: link up is raised from the controller's hard IRQ
	 * handler (NVIDIA's kernels; link.c)
	 */
	bool linkup_hardirq;
	/** @linkup_irq_work: runs pci_epc_linkup() in hard IRQ context */
	struct irq_work linkup_irq_work;
	/** @intr: the controller's interrupt line (intr.c) */
	struct loop_intr intr;
	/** @msi_first: MSI number raise_irq maps to the first vector (1, JetPack 0) */
	u8 msi_first;
	/** @msix_raw: MSI-X numbers are 0-based table entries (Tegra doorbell) */
	bool msix_raw;
	/** @win_page: outbound window page size (the iATU granule) */
	size_t win_page;
	/** @perst_lock: serialises PERST# transitions */
	struct mutex perst_lock; /* perst_line, perst_inited, perst_on writes */
	/** @perst_line: the root complex holds PERST# asserted */
	bool perst_line;
	/** @perst_on: controller out of reset: its registers answer */
	bool perst_on;
	/** @perst_inited: EPFs were told epc_init and not epc_deinit since */
	bool perst_inited;
	/** @perst_logged: an access while in reset was logged in this assert */
	atomic_t perst_logged;
	/** @perst_work: the root complex deasserts PERST# after start */
	struct work_struct perst_work;
	/** @perst_inits: epc_init notifications sent */
	atomic64_t perst_inits;
	/** @perst_deinits: epc_deinit notifications sent */
	atomic64_t perst_deinits;
	/** @perst_asserts: PERST# assert events seen by a started controller */
	atomic64_t perst_asserts;
	/** @perst_deasserts: PERST# deassert events seen by a started controller */
	atomic64_t perst_deasserts;
	/** @perst_faults: EPC operations refused while in reset */
	atomic64_t perst_faults;
	/* Root-complex profile (rc.c; used by irq.c, cfg.c, host.c, link.c) */
	/** @rc_name: root-complex profile name ("generic-rc" or "j784s4") */
	const char *rc_name;
	/** @rc_intx: the root has an INTx domain (map_irq hands out IRQs) */
	bool rc_intx;
	/** @rc_hotplug: a link loss removes the function (surprise removal) */
	bool rc_hotplug;
	/** @intx_level: INTx is level-triggered (debugfs knob) */
	u32 intx_level;
	/** @intx_assert_us: how long a raise holds INTx asserted (knob) */
	u32 intx_assert_us;
	/** @rc_mps: Max_Payload_Size (bytes) the root programs at link up */
	u32 rc_mps;
	/** @rc_ready_ms: link up to the root's first config request (knob) */
	u32 rc_ready_ms;
	/** @intx_lock: serialises INTx assertions: one hold at a time */
	struct mutex intx_lock;
	/** @intx_masked: INTx pins masked by the host's irq chip (bitops) */
	unsigned long intx_masked;
	/** @rc_intx_redelivered: handler runs again while the line was held */
	atomic64_t rc_intx_redelivered;
	/** @rc_intx_refused: INTx raises dropped: the root has no INTx */
	atomic64_t rc_intx_refused;
	/** @rc_cfg_lost: config accesses answered all-ones/dropped, no link */
	atomic64_t rc_cfg_lost;
	/* NVIDIA eDMA library interface, jetpack profile (nvedma.c) */
	struct loop_nvedma *nvedma;
	/** @watch: the watched window words and their store log (watch.c) */
	struct loop_watch *watch;
};

static inline bool loop_ep_up(struct pci_epc_loop *loop)
{
	return READ_ONCE(loop->ep_up);
}

static inline bool loop_rc_up(struct pci_epc_loop *loop)
{
	return READ_ONCE(loop->rc_up);
}

/* core.c */
void *loop_phys_to_virt(struct pci_epc_loop *loop, u64 addr, size_t size);

/* epc.c */
extern struct pci_epc_ops loop_epc_ops;
void loop_epc_ops_init(void);
void loop_win_flush_all(struct pci_epc_loop *loop);
u64 loop_win_bytemask(u64 x);
void loop_win_drop_all(struct pci_epc_loop *loop);

/* cfg.c */
void loop_cfg_init(struct pci_epc_loop *loop);
void loop_cfg_reset_host(struct pci_epc_loop *loop);
void loop_cfg_write_header(struct pci_epc_loop *loop, u8 func_no,
			   const struct pci_epf_header *hdr);
void loop_cfg_set_bar(struct pci_epc_loop *loop, u8 func_no,
		      const struct pci_epf_bar *epf_bar);
void loop_cfg_clear_bar(struct pci_epc_loop *loop, u8 func_no,
			enum pci_barno barno);
void loop_cfg_set_msi(struct pci_epc_loop *loop, u8 func_no, u8 mmc);
int loop_cfg_get_msi(struct pci_epc_loop *loop, u8 func_no);
void loop_cfg_set_msix(struct pci_epc_loop *loop, u8 func_no, u16 nr,
		       enum pci_barno bir, u32 offset);
int loop_cfg_get_msix(struct pci_epc_loop *loop, u8 func_no);
bool loop_fn_master(struct pci_epc_loop *loop, u8 func_no);
extern struct pci_ops loop_pci_ops;

/* host.c */
int loop_host_add(struct pci_epc_loop *loop);
void loop_host_remove(struct pci_epc_loop *loop, bool surprise);

/* msictl.c */
bool loop_msictl_deliver(struct pci_epc_loop *loop, u32 hw, bool msix);
void loop_msictl_init(struct pci_epc_loop *loop);
void loop_msictl_stop(struct pci_epc_loop *loop);

/* irq.c */
int loop_irq_init(struct pci_epc_loop *loop);
void loop_irq_exit(struct pci_epc_loop *loop);
int loop_irq_raise(struct pci_epc_loop *loop, u8 func_no, unsigned int type,
		   u16 num);
int loop_map_irq(const struct pci_dev *pdev, u8 slot, u8 pin);
void loop_irq_kick(struct pci_epc_loop *loop);

/* dma.c */
int loop_dma_init(struct pci_epc_loop *loop);
void loop_dma_exit(struct pci_epc_loop *loop);
void loop_dma_link_changed(struct pci_epc_loop *loop);

/* link.c */
int loop_link_init(struct pci_epc_loop *loop);
void loop_link_exit(struct pci_epc_loop *loop);
int loop_link_start(struct pci_epc_loop *loop);
void loop_link_stop(struct pci_epc_loop *loop);
int loop_link_down(struct pci_epc_loop *loop);
int loop_link_up(struct pci_epc_loop *loop);

/* debugfs.c */
void loop_debugfs_init(struct pci_epc_loop *loop);
void loop_debugfs_exit(struct pci_epc_loop *loop);
void loop_debugfs_root_init(void);
void loop_debugfs_root_exit(void);

/* perst.c: PERST# lifecycle */
void loop_perst_init(struct pci_epc_loop *loop);
void loop_perst_probe_done(struct pci_epc_loop *loop);
void loop_perst_start(struct pci_epc_loop *loop);
bool loop_perst_link_allowed(struct pci_epc_loop *loop);
int loop_perst_check(struct pci_epc_loop *loop, const char *op);
void loop_perst_remove(struct pci_epc_loop *loop);
void loop_perst_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir);
/* dma.c and model.c: dw-edma semantics and the per-direction link model */
void loop_dma_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir);
bool loop_dma_chan_halted(struct loop_dma_chan *c);
void loop_model_init(struct pci_epc_loop *loop);
void loop_model_charge(struct pci_epc_loop *loop,
		       enum dma_transfer_direction dir, u64 remote,
		       size_t bytes, u64 ready);
u64 loop_model_reserve(struct loop_dma_chan *c, u64 remote, size_t bytes,
		       u64 ready, u64 *end);
int loop_model_wait_until(struct loop_dma_chan *c, u64 t);
void loop_model_done(struct loop_dma_chan *c, u64 end);
void loop_model_started(struct loop_dma_chan *c, u64 kick);
void loop_model_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir);
/* rc.c: root-complex profiles (generic-rc, j784s4) */
int loop_rc_init(struct pci_epc_loop *loop);
void loop_rc_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir);
void loop_rc_wait_ready(struct pci_epc_loop *loop);
bool loop_rc_keeps_function(struct pci_epc_loop *loop);
void loop_host_link_lost(struct pci_epc_loop *loop);
void loop_host_link_back(struct pci_epc_loop *loop);
void loop_cfg_program_mps(struct pci_epc_loop *loop, u32 mps);
u32 loop_cfg_mps(struct pci_epc_loop *loop);
/* window.c: the live outbound window */
int loop_win_map(struct pci_epc_loop *loop, u8 func_no, phys_addr_t addr, u64 pci_addr,
		 size_t size);
void loop_win_unmap(struct pci_epc_loop *loop, phys_addr_t addr);
void loop_win_init(struct pci_epc_loop *loop, struct dentry *dir);
/* intr.c: the controller's interrupt line (link up, eDMA library) */
void loop_intr_init(struct pci_epc_loop *loop);
void loop_intr_disable(struct pci_epc_loop *loop);
void loop_intr_enable(struct pci_epc_loop *loop);
void loop_intr_linkup(struct pci_epc_loop *loop, bool hardirq);
void loop_intr_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir);

/* nvedma.c: NVIDIA eDMA library interface (jetpack profile) */
void loop_nvedma_init(struct pci_epc_loop *loop, struct dentry *dir);
void loop_nvedma_link_down(struct pci_epc_loop *loop);
/* hook.c: a test module's window hook (include/framelink/epc-loop-test.h) */
void loop_hook_publish(struct pci_epc_loop *loop, u64 pci_addr, u64 v, u64 s, u64 mask);
/* watch.c: the CPU's stores to chosen window words, one by one */
void loop_watch_init(struct pci_epc_loop *loop, struct dentry *dir);
bool loop_watch_word(struct pci_epc_loop *loop, u32 off);
bool loop_watch_range(struct pci_epc_loop *loop, u32 off, size_t size, u32 *lo, u32 *hi);
void loop_watch_cut(struct pci_epc_loop *loop);
bool loop_watch_pending(struct pci_epc_loop *loop);
bool loop_watch_logged(struct pci_epc_loop *loop);
bool loop_watch_whole(struct pci_epc_loop *loop);
bool loop_watch_next(struct pci_epc_loop *loop, u32 *off, u8 *size, u64 *val);
u32 loop_watch_tear_us(struct pci_epc_loop *loop);
void loop_watch_unmapped(struct pci_epc_loop *loop, u32 off, size_t size);
bool loop_win_live(struct pci_epc_loop *loop, u32 off, u32 len);

#endif /* _PCI_EPC_LOOP_H */
