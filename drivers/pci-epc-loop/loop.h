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
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pci-epc.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <framelink/compat.h>

#define LOOP_MAX_FUNCS		1
#define LOOP_CFG_SIZE		PCI_CFG_SPACE_EXP_SIZE
#define LOOP_MAX_DMA_CHANS	8
#define LOOP_DEF_DMA_CHANS	2
/* hwirqs of the software MSI controller: multi-MSI (32) plus MSI-X (2048) */
#define LOOP_NR_MSI		4096
/* Address the software MSI controller decodes; nothing else lives there. */
#define LOOP_MSI_ADDR		0xfffff000ULL
/* Outbound window carved from the reserved pool */
#define LOOP_WIN_SIZE		SZ_16M

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

/**
 * struct loop_win_map - one outbound window mapping (map_addr)
 * @node: entry in &pci_epc_loop.win_maps
 * @phys: window physical address the EPF mapped
 * @pci_addr: host (PCI) address it maps to
 * @size: size of the mapping
 * @win: CPU address of the window bytes
 * @host: CPU address of the host bytes
 * @shadow: copy of the host bytes as last synchronised
 */
struct loop_win_map {
	struct list_head node;
	phys_addr_t phys;
	u64 pci_addr;
	size_t size;
	void *win;
	void *host;
	void *shadow;
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
	unsigned int nsegs;
	struct loop_dma_seg seg[] __counted_by(nsegs);
};

#define LOOP_ERR_COOKIES	8

/**
 * struct loop_dma_chan - one read or write channel
 * @chan: the dmaengine channel
 * @loop: owning loopback
 * @dir: direction this channel moves data in
 * @idx: channel index (for the stall fault)
 * @lock: protects @submitted, @issued, @active, @abort, @cfg, @err_cookie,
 *	  @err_pos and the cookies in @chan
 * @submitted: descriptors submitted but not issued
 * @issued: descriptors issued, waiting for the worker
 * @active: descriptor the worker is moving
 * @abort: terminate_all asked the worker to drop @active
 * @cfg: slave configuration
 * @err_cookie: cookies of recently failed transfers, for tx_status
 * @err_pos: next slot in @err_cookie
 * @work: the worker; one per channel keeps transfers in order
 */
struct loop_dma_chan {
	struct dma_chan chan;
	struct pci_epc_loop *loop;
	enum dma_transfer_direction dir;
	unsigned int idx;
	spinlock_t lock; /* lists, active, abort, cfg, err_cookie, cookies */
	struct list_head submitted;
	struct list_head issued;
	struct loop_dma_desc *active;
	bool abort;
	struct dma_slave_config cfg;
	dma_cookie_t err_cookie[LOOP_ERR_COOKIES];
	unsigned int err_pos;
	struct work_struct work;
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
 * @cfg_reads: config reads by the root complex
 * @cfg_writes: config writes by the root complex
 * @win_maps: outbound window mappings
 * @win_flushed: bytes written back to the host through the window
 * @link_ups: link up events
 * @link_downs: link down events
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
	atomic64_t cfg_reads;
	atomic64_t cfg_writes;
	atomic64_t win_maps;
	atomic64_t win_flushed;
	atomic64_t link_ups;
	atomic64_t link_downs;
};

/**
 * struct pci_epc_loop - the loopback link
 * @dev: the platform device
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
 * @dma: dmaengine provider
 * @dma_wq: worker queue for the DMA channels
 * @nchans: channels per direction
 * @chans: read channels then write channels
 * @dma_registered: @dma is registered
 * @model_lock: protects @link_busy_until
 * @link_busy_until: time (ns) the shared link is busy until
 * @rate_mbps: link model rate, 0 = unlimited
 * @setup_ns: link model per-transfer setup time
 * @fail_dma: fail the next N DMA transfers
 * @drop_irq: drop the next N interrupts
 * @dup_irq: duplicate the next N interrupts
 * @stall_mask: bit n set stalls channel n (reads first, then writes)
 * @stall_wq: woken when @stall_mask or the link changes
 * @stats: counters
 * @dbg: debugfs directory
 * @nvedma: NVIDIA eDMA library interface state (nvedma.c), NULL until
 *	    loop_nvedma_init(); published once, read locklessly
 */
struct pci_epc_loop {
	struct device *dev;
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

	struct dma_device dma;
	struct workqueue_struct *dma_wq;
	unsigned int nchans;
	struct loop_dma_chan chans[2 * LOOP_MAX_DMA_CHANS];
	bool dma_registered;

	spinlock_t model_lock; /* link_busy_until */
	u64 link_busy_until;
	u32 rate_mbps;
	u32 setup_ns;

	atomic_t fail_dma;
	atomic_t drop_irq;
	atomic_t dup_irq;
	u32 stall_mask;
	wait_queue_head_t stall_wq;

	struct loop_stats stats;
	struct dentry *dbg;

	/* NVIDIA eDMA library interface, jetpack profile (nvedma.c) */
	struct loop_nvedma *nvedma;
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
extern struct pci_ops loop_pci_ops;

/* host.c */
int loop_host_add(struct pci_epc_loop *loop);
void loop_host_remove(struct pci_epc_loop *loop, bool surprise);

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
void loop_link_xfer_delay(struct pci_epc_loop *loop, size_t bytes, bool first);

/* debugfs.c */
void loop_debugfs_init(struct pci_epc_loop *loop);
void loop_debugfs_exit(struct pci_epc_loop *loop);
void loop_debugfs_root_init(void);
void loop_debugfs_root_exit(void);

/* nvedma.c: NVIDIA eDMA library interface (jetpack profile) */
void loop_nvedma_init(struct pci_epc_loop *loop, struct dentry *dir);
void loop_nvedma_link_down(struct pci_epc_loop *loop);

#endif /* _PCI_EPC_LOOP_H */
