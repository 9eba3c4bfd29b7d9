/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink-host: the root-complex side of framelink (TI Jacinto 7 in the real system).
 *
 * One struct fl_host per bound PCI function. It is reference counted (kref) because it
 * outlives the PCI binding: an open /dev/framelink<N> or an mmap() of the frame buffers
 * keeps it (and the buffers) alive after remove() or a surprise link down, and every
 * operation then fails with -ENODEV instead of touching the gone device.
 *
 * Files: main.c (PCI probe/remove, BAR, vectors, link info), setup.c (BAR0 handshake,
 * enable/reset), bufs.c (frame buffers, mmap, DMA sync), queue.c (rings and completions),
 * cdev.c (/dev/framelink<N>: the queue API shared with the endpoint driver).
 */
#ifndef _FRAMELINK_HOST_H
#define _FRAMELINK_HOST_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/pci.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <uapi/linux/framelink.h>
#include <framelink/compat.h>

#define FL_HOST_DRV_NAME	"framelink-host"

/* BAR0 offsets of the endpoint's control, status and doorbell words */
#define FL_CTRL(f)	(FL_BAR_CTRL_OFFSET + offsetof(struct fl_bar_ctrl, f))
#define FL_STATUS(f)	(FL_BAR_STATUS_OFFSET + offsetof(struct fl_bar_status, f))
#define FL_DB(f)	(FL_BAR_DOORBELL_OFFSET + offsetof(struct fl_bar_doorbell, f))

/* Bound of each half of the BAR0 handshake (stop: RESET, start: READY). */
#define FL_SETUP_TIMEOUT_MS	2000

/* Who owns a host frame buffer; exactly one at a time. */
enum fl_buf_state {
	FL_BUF_APP,	/* the application (free, or holding a received frame) */
	FL_BUF_TX,	/* in the tx ring, the endpoint may read it */
	FL_BUF_RX,	/* in the rx ring, the endpoint may write it */
	FL_BUF_DONE,	/* completed; owned by the app once its completion is reaped */
};

/* Imported dma-bufs a device holds at once (FL_IOC_IMPORT; fl_info.max_imports). */
#define FL_HOST_IMPORTS		32

/*
 * Who queues frames on a device (fl_host.user, bits): the ioctl path, or the V4L2 devices,
 * each for its direction; never the ioctl path and a V4L2 device together.
 */
/* SUBMIT, POST or IMPORT on /dev/framelink<N>, until its last close */
#define FL_USER_IOCTL		BIT(0)
#define FL_USER_V4L2_OUT	BIT(1)	/* the V4L2 output device, STREAMON to STREAMOFF (v4l2.c) */
#define FL_USER_V4L2_CAP	BIT(2)	/* the V4L2 capture device, the same (v4l2-cap.c) */
#define FL_USER_V4L2		(FL_USER_V4L2_OUT | FL_USER_V4L2_CAP)

struct fl_host_v4l2;

struct fl_host_import;

/**
 * struct fl_buf - one host frame buffer, own or imported
 * @page: first page (physically contiguous, from dma_alloc_pages()); NULL for an import.
 * @imp: the import (import.c) for indices from fl_host.nbufs on; NULL when that index is
 *	free; set and cleared under fl_host.lock.
 * @dma: its bus address.
 * @len: bytes a frame from it may have (fl_host.buf_size, or the import's size); 0 for a
 *	free import index.
 * @state: enum fl_buf_state; protected by fl_host.lock.
 */
struct fl_buf {
	struct page *page;
	struct fl_host_import *imp;
	dma_addr_t dma;
	u32 len;
	u8 state;
};

/* What the host wrote into a tx ring entry, to check and complete its TX_DONE. */
struct fl_tx_shadow {
	u32 buf;
	u32 bytes;
	u32 flags;
	u32 seq;
	u64 cookie;
	u64 ts_submit;
};

/* What the host posted into an rx ring entry. */
struct fl_rx_shadow {
	u32 buf;
	u64 ts_post;
};

/**
 * struct fl_host - one framelink endpoint seen from the root complex
 * @ref: last put frees the buffers and drops @pdev.
 * @pdev: the function (reference held until the last put).
 * @dev: &pdev->dev.
 * @id: N of /dev/framelink<N>.
 * @name: "framelink<N>".
 * @misc: the character device.
 * @bar: BAR0, uncached; NULL after remove.
 * @bar_len: its length.
 * @tx_off: BAR0 offset of the fl_tx_desc ring.
 * @rx_off: BAR0 offset of the fl_rx_desc ring.
 * @tx_entries: tx ring size (from the header, validated).
 * @rx_entries: rx ring size.
 * @max_frame: largest frame the endpoint accepts.
 * @ep_slots: endpoint frame slots.
 * @offered: features the endpoint offered.
 * @features: features the host accepted.
 * @generation: fl_bar_status.generation after the last enable.
 * @tx_depth: frames that can be in flight (min of tx ring and buffers).
 * @rx_depth: buffers that can be posted.
 * @cq_entries: completion ring size.
 * @cq_bytes: size of the coherent ring area.
 * @cq_area: the ring area: struct fl_host_status, then the fl_cqe ring.
 * @status: &cq_area's fl_host_status (endpoint writes cq_prod).
 * @cq: the fl_cqe ring (endpoint writes).
 * @cq_dma: bus address of @cq_area.
 * @irq: Linux IRQ of vector 0, or 0 when polling.
 * @irq_type: FL_IRQ_*.
 * @link_speed: GT/s * 10, 0 if unknown.
 * @link_width: lanes, 0 if unknown.
 * @mps: negotiated Max_Payload_Size, bytes.
 * @mps_supported: largest MPS the function supports, bytes.
 * @mrrs: Max_Read_Request_Size, bytes.
 * @nbufs: number of own frame buffers.
 * @nslots: buffer indices: @nbufs own, then up to %FL_HOST_IMPORTS imports (none on a
 *	kernel without dma-buf); the indices the ioctls accept.
 * @nvbufs: buffer indices after @nslots for the V4L2 devices' buffers (0 on a kernel
 *	without videobuf2-dma-contig): %FL_HOST_V4L2_BUFS for the output device (v4l2.c),
 *	then as many for the capture device (v4l2-cap.c); their completions go to them,
 *	never to @fifo, and no ioctl names them.
 * @buf_size: bytes per buffer (page multiple).
 * @bufs: the buffers, @nslots + @nvbufs entries (freed at the last put).
 * @tx_sh: shadow of the tx ring (@tx_entries).
 * @rx_sh: shadow of the rx ring (@rx_entries).
 * @fifo: completions waiting for REAP (@nslots entries: one per buffer at most).
 * @lock: protects everything below, the buffer states, @tx_sh, @rx_sh, @fifo and every
 *	BAR0 access after probe (so remove() can unmap the BAR under it).
 * @dead: removed (or surprise-removed); set once, under @lock.
 * @user: FL_USER_* bits, who may queue frames now; @lock.
 * @v4l2: the V4L2 output device (v4l2.c), or %NULL.
 * @vcap: the V4L2 capture device (v4l2-cap.c), or %NULL.
 * @imports_kept: remove() kept imports attached (the endpoint did not stop): they point
 *	at @pdev's device, so the last put keeps @pdev's reference for good.
 * @enabled: the endpoint is READY and the rings may be used.
 * @tx_prod: tx descriptors written (free-running, as in BAR0).
 * @tx_cons: tx descriptors completed.
 * @rx_prod: rx descriptors written.
 * @rx_cons: rx descriptors completed.
 * @cq_cons: completions consumed (as written to BAR0); read locklessly by the IRQ handler.
 * @cq_armed: the event index last written to cq_event (fl_q_arm()).
 * @tx_seq: next tx sequence number (continues across resets).
 * @fifo_head: position in @fifo of the next completion to reap.
 * @fifo_len: completions in @fifo; read locklessly by waiters.
 * @openers: open files; atomic so fl_open() never waits for @lock (it runs under the misc
 *	core's global mutex, and @lock can be held across a copy or a BAR read).
 * @stats: counters (interrupts are in @irqs).
 * @irqs: interrupts taken, counted in the handler without @lock.
 * @wakes: times the interrupt path woke @wq with completions in host memory (settle.c);
 *	REAP waits for it to move.
 * @wq: REAP and poll() waiters; woken by the interrupt, resets and remove.
 * @settle_lock: protects @settling, @settle_step, @settle_until, @irq_seq_seen and
 *	@irq_seq_want (the interrupt handler and @settle's callback).
 * @settle: looks again for what an interrupt announced (%FL_F_IRQ_PROD) until it landed.
 * @settling: @settle runs.
 * @settle_step: its current interval, ns.
 * @settle_until: ktime_get_ns() after which the waiters are woken anyway.
 * @irq_seq_seen: fl_host_status.irq_seq of the last announcement that landed.
 * @irq_seq_want: the irq_seq the interrupts taken so far ask for.
 * @early_irqs: interrupts that came before what they announced (fl_stats.early_irqs).
 * @stale_irqs: interrupts with nothing new announced in the bound (fl_stats.stale_irqs).
 * @reap_lock: serialises REAP callers so the completions at the head of @fifo can be copied
 *	to user space without @lock and consumed only once they arrived (nests outside @lock).
 * @live_work: liveness watchdog (live.c): while frames are outstanding and no completion
 *	came for a period, reads fl_bar_status (state, generation) at a bounded rate.
 * @reset_work: runs a queue reset (stop handshake, fail outstanding frames, enable
 *	handshake) without holding @lock across its waits; also retries a stopped queue.
 * @poll_work: without an interrupt vector, wakes poll() waiters while frames are outstanding.
 * @resetting: a reset attempt is queued or running (REAP and SUBMIT wait for it); @lock.
 * @removing: remove(), shutdown or a frozen / failed channel (error_detected() until
 *	resume()) started: no reset or watchdog work may be queued; @lock.
 * @link_down: the last reset attempt found the link gone (config space all-ones); @lock.
 * @master_off: bus mastering is off until the endpoint reports RESET (probe, a failed reset,
 *	link recovery); set again by the enable handshake; @lock.
 * @reset_err: status for the frames the pending reset fails; @lock.
 * @reset_seq: reset attempts finished (waiters compare it); @lock, read locklessly by waiters.
 * @retry_ms: delay before the next attempt on a stopped queue (backoff); @lock.
 * @live_cons: @cq_cons when the watchdog last looked; @lock.
 * @live_checked: jiffies of the last fl_bar_status read by the liveness checks; @lock.
 * @intx_lock: orders the handler's masking against enabling INTx and writing irq_ack, so
 *	an acknowledge is never written while a handler is between masking INTx and setting
 *	@intx_masked (the endpoint's next pulse would end while INTx is disabled: lost).
 * @intx_masked: the handler masked INTx at the function; set by the handler (INTx is then
 *	disabled, so it does not run again), cleared under @lock when INTx is enabled again.
 * @intx_seq: fl_bar_status.intx_seq as the handler read it when it last took an INTx
 *	(INTx Status set when it ran; %FL_F_INTX_SEQ), written to fl_bar_doorbell.irq_ack
 *	each time INTx is enabled again; under @intx_lock.
 * @intx_work: enables INTx again one jiffy after the handler masked it.
 * @irqt_armed: between writing the control block and reading READY, the handler counts
 *	each interrupt in fl_bar_doorbell.irq_test: the endpoint's interrupt self-test
 *	(%FL_F_IRQ_TEST, setup.c); written under @lock, read locklessly by the handler.
 * @irqt_count: interrupts the handler counted while @irqt_armed.
 * @irq_test: FL_IRQT_* the endpoint reported at the last enable; @lock.
 * @irq_polled: the self-test found that the endpoint's interrupts do not arrive:
 *	completions are polled as without a vector (fl_host_irq_live()); written under
 *	@lock, read locklessly by waiters.
 * @map_lock: protects @vmas, each entry's use count and @bufs_gone; nests inside the
 *	mmap_lock of an address space (->mmap, vm_ops open/close run under it).
 * @vmas: one struct fl_host_vma per mmap() of the buffers (bufs.c), so remove() can wait
 *	for an mmap() still linking its VMA and zap every user mapping.
 * @bufs_gone: remove() zaps the mappings and frees the buffer pages: no new mapping.
 */
struct fl_host {
	struct kref ref;
	struct pci_dev *pdev;
	struct device *dev;
	int id;
	char name[20];
	struct miscdevice misc;

	void __iomem *bar;
	u64 bar_len;
	u32 tx_off;
	u32 rx_off;
	u32 tx_entries;
	u32 rx_entries;
	u32 max_frame;
	u32 ep_slots;
	u64 offered;
	u64 features;
	u32 generation;
	u32 tx_depth;
	u32 rx_depth;

	u32 cq_entries;
	size_t cq_bytes;
	void *cq_area;
	struct fl_host_status *status;
	struct fl_cqe *cq;
	dma_addr_t cq_dma;

	int irq;
	u32 irq_type;

	u16 link_speed;
	u16 link_width;
	u16 mps;
	u16 mps_supported;
	u16 mrrs;

	u32 nbufs;
	u32 nslots;
	u32 nvbufs;
	size_t buf_size;
	struct fl_buf *bufs;
	struct fl_tx_shadow *tx_sh;
	struct fl_rx_shadow *rx_sh;
	struct fl_completion *fifo;

	struct mutex lock;	/* see @lock above */
	bool dead;
	u8 user;
	struct fl_host_v4l2 *v4l2;
	struct fl_host_v4l2 *vcap;
	bool imports_kept;
	bool enabled;
	u32 tx_prod;
	u32 tx_cons;
	u32 rx_prod;
	u32 rx_cons;
	u32 cq_cons;
	u32 cq_armed;
	u32 tx_seq;
	u32 fifo_head;
	u32 fifo_len;
	atomic_t openers;
	struct fl_stats stats;
	atomic64_t irqs;
	atomic64_t wakes;
	wait_queue_head_t wq;
	spinlock_t settle_lock;	/* see @settle_lock above */
	struct hrtimer settle;
	bool settling;
	u64 settle_step;
	u64 settle_until;
	u32 irq_seq_seen;
	u32 irq_seq_want;
	atomic64_t early_irqs;
	atomic64_t stale_irqs;

	/* issue 8: liveness, asynchronous resets, REAP copy-out (live.c, cdev.c) */
	struct mutex reap_lock;	/* see @reap_lock above */
	struct delayed_work live_work;
	struct delayed_work reset_work;
	struct delayed_work poll_work;
	bool resetting;
	bool removing;
	bool link_down;
	bool master_off;
	int reset_err;
	u32 reset_seq;
	u32 retry_ms;
	u32 live_cons;
	unsigned long live_checked;
	/* INTx acknowledge and masking: queue.c fl_q_irq()/fl_q_arm() (issue 8) */
	spinlock_t intx_lock;	/* see @intx_lock above */
	bool intx_masked;
	u32 intx_seq;
	struct delayed_work intx_work;
	/* interrupt self-test at enable (issue 9 section 1): setup.c, queue.c fl_q_irq() */
	bool irqt_armed;
	atomic_t irqt_count;
	u32 irq_test;
	bool irq_polled;
	/* issue 8 item 6: user mappings of the buffers, zapped at remove (bufs.c) */
	struct mutex map_lock;	/* see @map_lock above */
	struct list_head vmas;
	bool bufs_gone;
};

/**
 * fl_host_irq_live() - do completions interrupt the host?
 * @host: the device.
 *
 * Return: false without a vector, and when the interrupt self-test found that the
 * endpoint's interrupts do not arrive: waiters then poll the ring.
 */
static inline bool fl_host_irq_live(struct fl_host *host)
{
	return host->irq && !READ_ONCE(host->irq_polled);
}

/* main.c */
void fl_host_put(struct fl_host *host);

/* setup.c */
int fl_setup_read_header(struct fl_host *host);
int fl_setup_enable(struct fl_host *host);
int fl_setup_disable(struct fl_host *host);
u32 fl_setup_start(struct fl_host *host);
int fl_setup_finish(struct fl_host *host, u32 generation);
int fl_setup_same_header(struct fl_host *host);
const char *fl_state_name(u32 state);

/* bufs.c */
int fl_bufs_alloc(struct fl_host *host, u32 nbufs, size_t buf_size);
void fl_bufs_free(struct fl_host *host);
int fl_bufs_mmap(struct fl_host *host, struct vm_area_struct *vma);
void fl_bufs_zap(struct fl_host *host);
void fl_bufs_free_pages(struct fl_host *host, bool leak);
void fl_buf_sync_for_device(struct fl_host *host, u32 idx, size_t bytes,
			    enum dma_data_direction dir);
void fl_buf_sync_for_cpu(struct fl_host *host, u32 idx, size_t bytes,
			 enum dma_data_direction dir);

/* queue.c: every function here needs fl_host.lock held. */
int fl_q_tx_one(struct fl_host *host, const struct fl_frame *f);
void fl_q_tx_kick(struct fl_host *host);
int fl_q_rx_one(struct fl_host *host, u32 buf);
void fl_q_rx_kick(struct fl_host *host);
void fl_q_drain(struct fl_host *host);
bool fl_q_arm(struct fl_host *host);
bool fl_q_arm_passed(struct fl_host *host);
void fl_q_init_rings(struct fl_host *host);
void fl_q_fail_all(struct fl_host *host, int err);
int fl_q_reset(struct fl_host *host, int err);
bool fl_q_idle(struct fl_host *host);
bool fl_q_can_submit(struct fl_host *host);
irqreturn_t fl_q_irq(int irq, void *data);

/* settle.c */
void fl_settle_irq(struct fl_host *host);
u32 fl_settle_seen(struct fl_host *host);
void fl_settle_init(struct fl_host *host);
void fl_settle_reset(struct fl_host *host);
void fl_settle_stop(struct fl_host *host);
void fl_q_intx_work(struct work_struct *work);
void fl_q_intx_listen(struct fl_host *host);

/* live.c: liveness and asynchronous resets */
void fl_live_init(struct fl_host *host);
bool fl_live_link_ok(struct fl_host *host);
void fl_live_arm(struct fl_host *host);
void fl_live_before_queue(struct fl_host *host);
void fl_live_reset(struct fl_host *host, int err);
int fl_live_wait_reset(struct fl_host *host, bool interruptible);
void fl_live_poll_arm(struct fl_host *host);
void fl_live_stop(struct fl_host *host);
int fl_live_errno(struct fl_host *host);

/* fence.c: implicit fences of imports */
#define FL_RFENCES	4

struct fl_rfence;

/**
 * struct fl_rfences - an import's read fences (fence.c); under fl_host.lock
 * @context: the fence context of this import.
 * @seqno: the last sequence number used.
 * @pool: the fences, allocated at IMPORT.
 * @last: the fence published last (in the dma_resv until replaced), or %NULL.
 * @busy: the fence of the frame the endpoint may be reading, or %NULL.
 */
struct fl_rfences {
	u64 context;
	u64 seqno;
	struct fl_rfence *pool[FL_RFENCES];
	struct fl_rfence *last;
	struct fl_rfence *busy;
};

int fl_rfences_init(struct fl_rfences *rfs);
int fl_rfences_begin(struct fl_rfences *rfs, struct dma_resv *resv);
void fl_rfences_end(struct fl_rfences *rfs);
void fl_rfences_fini(struct fl_rfences *rfs, struct dma_resv *resv);
int fl_rfences_wait_writers(struct dma_resv *resv, unsigned long timeout);

/* import.c: dma-bufs as frame sources (FL_IOC_IMPORT) */
#if IS_ENABLED(CONFIG_DMA_SHARED_BUFFER) || defined(FL_IMPORT_UNLINKED)
#define FL_HOST_MAX_IMPORTS	FL_HOST_IMPORTS
int fl_import_add(struct fl_host *host, void __user *argp);
int fl_import_remove(struct fl_host *host, void __user *argp);
void fl_import_drop(struct fl_host *host, bool all);
u32 fl_import_keep(struct fl_host *host);
int fl_import_read_begin(struct fl_host *host, u32 buf);
void fl_import_read_end(struct fl_host *host, u32 buf);
struct dma_buf *fl_import_dmabuf_get(struct fl_host *host, u32 buf);
int fl_import_wait_writers(struct fl_host *host, struct dma_buf *dmabuf,
			   unsigned long *deadline);
#else
static inline int fl_import_read_begin(struct fl_host *host, u32 buf)
{
	return 0;
}

static inline void fl_import_read_end(struct fl_host *host, u32 buf)
{
}

static inline struct dma_buf *fl_import_dmabuf_get(struct fl_host *host, u32 buf)
{
	return NULL;
}

static inline int fl_import_wait_writers(struct fl_host *host, struct dma_buf *dmabuf,
					 unsigned long *deadline)
{
	return -EOPNOTSUPP;
}

#define FL_HOST_MAX_IMPORTS	0
static inline int fl_import_add(struct fl_host *host, void __user *argp)
{
	return -EOPNOTSUPP;
}

static inline int fl_import_remove(struct fl_host *host, void __user *argp)
{
	return -EOPNOTSUPP;
}

static inline void fl_import_drop(struct fl_host *host, bool all)
{
}

static inline u32 fl_import_keep(struct fl_host *host)
{
	return 0;
}
#endif

/*
 * v4l2.c, v4l2-cap.c: the V4L2 output and capture devices (issue 29), where the kernel has
 * videobuf2-dma-contig
 */
#if IS_ENABLED(CONFIG_VIDEOBUF2_DMA_CONTIG) || defined(FL_V4L2_UNLINKED)
#define FL_HOST_V4L2_BUFS	32	/* VB2_MAX_FRAME: a queue's buffers (v4l2.c asserts it) */
int fl_v4l2_register(struct fl_host *host);
void fl_v4l2_unregister(struct fl_host *host);
void fl_v4l2_tx_done(struct fl_host *host, const struct fl_completion *c);
void fl_v4l2_rx_done(struct fl_host *host, const struct fl_completion *c);
#else
#define FL_HOST_V4L2_BUFS	0
static inline int fl_v4l2_register(struct fl_host *host)
{
	return 0;
}

static inline void fl_v4l2_unregister(struct fl_host *host)
{
}

static inline void fl_v4l2_tx_done(struct fl_host *host, const struct fl_completion *c)
{
}

static inline void fl_v4l2_rx_done(struct fl_host *host, const struct fl_completion *c)
{
}
#endif
int fl_q_tx_buf(struct fl_host *host, u32 buf, u32 bytes, u32 flags, u64 cookie);
int fl_q_rx_buf(struct fl_host *host, u32 buf);

/* cdev.c */
int fl_cdev_register(struct fl_host *host);
void fl_cdev_unregister(struct fl_host *host);

#endif /* _FRAMELINK_HOST_H */
