// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: the rings. TX: the host writes fl_tx_desc entries and tx_prod into BAR0.
 * RX: fl_rx_desc entries and rx_prod. Completions: the endpoint writes fl_cqe entries and
 * then cq_prod into host memory; the host copies each entry out once, validates it against
 * what it wrote (shadow rings) and queues an fl_completion for REAP. Only posted writes go
 * to BAR0 here, but for the one flushing read in fl_q_arm() (none with %FL_F_CQ_BATCH);
 * nothing allocates.
 *
 * Interrupt moderation, NAPI style: the interrupt handler only counts and wakes. Draining
 * happens in the consumer (REAP, poll()), which polls host memory while completions flow and
 * arms fl_bar_doorbell.cq_event only when it is about to sleep; an armed event fires once.
 * With %FL_F_CQ_BATCH it arms at irq_batch percent of the frames in flight, not at the next
 * completion, so a saturated stream takes one interrupt per several frames.
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "host.h"
#include "fl_proto.h"
#include "trace.h"

static unsigned int irq_batch = 30;
module_param(irq_batch, uint, 0644);
MODULE_PARM_DESC(irq_batch,
		 "interrupt after this percentage of the frames in flight has completed (rounded up; default 30; 0 = at every completion); needs the endpoint's FL_F_CQ_BATCH");

/**
 * fl_q_init_rings() - forget ring state before an enable (the endpoint starts at 0 too)
 * @host: the device; fl_host.lock held.
 */
void fl_q_init_rings(struct fl_host *host)
{
	host->tx_prod = 0;
	host->tx_cons = 0;
	host->rx_prod = 0;
	host->rx_cons = 0;
	WRITE_ONCE(host->cq_cons, 0);
	host->cq_armed = 0;
}

static void fl_q_push(struct fl_host *host, const struct fl_completion *c)
{
	/* one entry per buffer at most (the buffer is DONE until reaped): never full */
	trace_fl_host_complete(host->id, c->queue, c->buf, c->bytes, c->status, c->cookie);
	/* a V4L2 buffer's frame goes back to videobuf2, not to REAP */
	if (c->buf >= host->nslots) {
		if (c->queue == FL_Q_TX)
			fl_v4l2_tx_done(host, c);
		else
			fl_v4l2_rx_done(host, c);
		return;
	}
	host->fifo[(host->fifo_head + host->fifo_len) % host->nslots] = *c;
	host->bufs[c->buf].state = FL_BUF_DONE;
	WRITE_ONCE(host->fifo_len, host->fifo_len + 1);
}

/**
 * fl_q_tx_one() - validate one frame and write its descriptor into the tx ring
 * @host: the device; fl_host.lock held.
 * @f: the frame, a kernel copy.
 *
 * Not visible to the endpoint until fl_q_tx_kick().
 *
 * Return: 0; -ENODEV (device gone), -EIO (queue not running), -EINVAL (reserved field,
 * flags, buffer index or a free import index, zero length), -EMSGSIZE (longer than the
 * buffer or the endpoint's max_frame), -EBUSY (the app does not own the buffer), -EAGAIN
 * (ring full), -EINPROGRESS (an import's write fences are pending: nothing written; the
 * caller waits with fl_import_wait_writers() and tries again), -ENOMEM.
 */
int fl_q_tx_one(struct fl_host *host, const struct fl_frame *f)
{
	lockdep_assert_held(&host->lock);
	/* the format's flags are the V4L2 device's (v4l2.c), not an app's */
	if (f->reserved || f->buf >= host->nslots || (f->flags & ~FL_FRAME_FLAGS))
		return -EINVAL;
	return fl_q_tx_buf(host, f->buf, f->bytes, f->flags, f->cookie);
}

/**
 * fl_q_tx_buf() - fl_q_tx_one() for any buffer index, the V4L2 device's too (v4l2.c)
 * @host: the device; fl_host.lock held.
 * @buf: buffer index, below fl_host.nslots + fl_host.nvbufs.
 * @bytes: frame length.
 * @flags: FL_FRAME_* (%FL_FRAME_FMT_FLAGS only where %FL_F_FORMAT was accepted).
 * @cookie: the sender's cookie.
 *
 * Return: as fl_q_tx_one().
 */
int fl_q_tx_buf(struct fl_host *host, u32 buf, u32 bytes, u32 flags, u64 cookie)
{
	struct fl_tx_shadow *sh;
	struct fl_tx_desc d;
	u32 slot;
	int ret;

	lockdep_assert_held(&host->lock);
	if (host->dead)
		return -ENODEV;
	if (!host->enabled)
		return -EIO;
	if (buf >= host->nslots + host->nvbufs || !bytes)
		return -EINVAL;
	/* a free import index has no length */
	if (!host->bufs[buf].len)
		return -EINVAL;
	if (bytes > host->bufs[buf].len || bytes > host->max_frame)
		return -EMSGSIZE;
	if (host->bufs[buf].state != FL_BUF_APP)
		return -EBUSY;
	if (fl_ring_used(host->tx_prod, host->tx_cons) >= host->tx_entries)
		return -EAGAIN;

	/*
	 * An import's CPU writers sync it through the dma-buf; its device writers have
	 * fences, waited for here, and our read fence holds the next writer off (fence.c).
	 * videobuf2 syncs a V4L2 buffer at QBUF.
	 */
	if (buf < host->nbufs) {
		fl_buf_sync_for_device(host, buf, bytes, DMA_TO_DEVICE);
	} else if (buf < host->nslots) {
		ret = fl_import_read_begin(host, buf);
		if (ret)
			return ret;
	}
	slot = fl_ring_slot(host->tx_prod, host->tx_entries);
	sh = &host->tx_sh[slot];
	sh->buf = buf;
	sh->bytes = bytes;
	sh->flags = flags;
	sh->seq = host->tx_seq++;
	sh->cookie = cookie;
	sh->ts_submit = ktime_get_ns();
	d.addr = cpu_to_le64(host->bufs[buf].dma);
	d.bytes = cpu_to_le32(bytes);
	d.flags = cpu_to_le32(flags);
	d.cookie = cpu_to_le64(cookie);
	d.id = cpu_to_le32(buf);
	d.seq = cpu_to_le32(sh->seq);
	memcpy_toio(host->bar + host->tx_off + slot * sizeof(d), &d, sizeof(d));
	host->bufs[buf].state = FL_BUF_TX;
	host->tx_prod++;
	trace_fl_host_submit(host->id, buf, bytes, cookie);
	return 0;
}

/**
 * fl_q_tx_kick() - publish the tx descriptors written so far
 * @host: the device; fl_host.lock held.
 */
void fl_q_tx_kick(struct fl_host *host)
{
	lockdep_assert_held(&host->lock);
	if (host->dead || !host->enabled)
		return;
	/*
	 * writel() has a write barrier before the store: the descriptors (memcpy_toio to the
	 * same BAR) and the cache maintenance of the frames reach the endpoint first.
	 */
	writel(host->tx_prod, host->bar + FL_DB(tx_prod));
	fl_live_arm(host);
}

/**
 * fl_q_rx_one() - post one empty buffer into the rx ring
 * @host: the device; fl_host.lock held.
 * @buf: buffer index.
 *
 * Return: 0; -ENODEV, -EIO, -EINVAL (index), -EBUSY (not owned by the app), -EAGAIN (full).
 */
int fl_q_rx_one(struct fl_host *host, u32 buf)
{
	lockdep_assert_held(&host->lock);
	if (buf >= host->nbufs)
		return -EINVAL;
	return fl_q_rx_buf(host, buf);
}

/* The room of buffer @buf for a frame from the endpoint */
static u32 fl_q_rx_room(struct fl_host *host, u32 buf)
{
	return buf < host->nbufs ? host->buf_size : host->bufs[buf].len;
}

/**
 * fl_q_rx_buf() - fl_q_rx_one() for an own buffer or a V4L2 capture buffer (v4l2-cap.c)
 * @host: the device; fl_host.lock held.
 * @buf: an own buffer, or a V4L2 index with fl_buf.dma and fl_buf.len set.
 *
 * Return: as fl_q_rx_one().
 */
int fl_q_rx_buf(struct fl_host *host, u32 buf)
{
	struct fl_rx_desc d;
	u32 slot;

	lockdep_assert_held(&host->lock);
	if (host->dead)
		return -ENODEV;
	if (!host->enabled)
		return -EIO;
	if (buf >= host->nslots + host->nvbufs || (buf >= host->nbufs && buf < host->nslots))
		return -EINVAL;
	if (host->bufs[buf].state != FL_BUF_APP)
		return -EBUSY;
	if (fl_ring_used(host->rx_prod, host->rx_cons) >= host->rx_entries)
		return -EAGAIN;

	/* no dirty line may be evicted over what the endpoint writes (videobuf2 syncs its own) */
	if (buf < host->nbufs)
		fl_buf_sync_for_device(host, buf, host->buf_size, DMA_FROM_DEVICE);
	slot = fl_ring_slot(host->rx_prod, host->rx_entries);
	host->rx_sh[slot].buf = buf;
	host->rx_sh[slot].ts_post = ktime_get_ns();
	d.addr = cpu_to_le64(host->bufs[buf].dma);
	d.size = cpu_to_le32(fl_q_rx_room(host, buf));
	d.id = cpu_to_le32(buf);
	memcpy_toio(host->bar + host->rx_off + slot * sizeof(d), &d, sizeof(d));
	host->bufs[buf].state = FL_BUF_RX;
	host->rx_prod++;
	return 0;
}

/**
 * fl_q_rx_kick() - publish the rx descriptors written so far
 * @host: the device; fl_host.lock held.
 */
void fl_q_rx_kick(struct fl_host *host)
{
	lockdep_assert_held(&host->lock);
	if (host->dead || !host->enabled)
		return;
	/* as in fl_q_tx_kick(): descriptors before the index */
	writel(host->rx_prod, host->bar + FL_DB(rx_prod));
	fl_live_arm(host);
}

/**
 * fl_q_fail_all() - complete every frame in flight and every posted buffer with an error
 * @host: the device; fl_host.lock held; the endpoint stopped (or gone).
 * @err: negative errno for fl_completion.status.
 */
void fl_q_fail_all(struct fl_host *host, int err)
{
	u64 now = ktime_get_ns();
	struct fl_completion c;

	lockdep_assert_held(&host->lock);
	for (; host->tx_cons != host->tx_prod; host->tx_cons++) {
		struct fl_tx_shadow *sh = &host->tx_sh[fl_ring_slot(host->tx_cons,
								    host->tx_entries)];

		c = (struct fl_completion){
			.buf = sh->buf, .bytes = sh->bytes, .queue = FL_Q_TX, .status = err,
			.flags = sh->flags, .seq = sh->seq, .cookie = sh->cookie,
			.ts_submit = sh->ts_submit, .ts_delivered = now,
		};
		fl_import_read_end(host, sh->buf);
		fl_q_push(host, &c);
	}
	for (; host->rx_cons != host->rx_prod; host->rx_cons++) {
		struct fl_rx_shadow *sh = &host->rx_sh[fl_ring_slot(host->rx_cons,
								    host->rx_entries)];

		c = (struct fl_completion){
			.buf = sh->buf, .queue = FL_Q_RX, .status = err,
			.ts_submit = sh->ts_post, .ts_delivered = now,
		};
		fl_q_push(host, &c);
	}
}

/**
 * fl_q_reset() - stop the queue and reset it asynchronously (live.c)
 * @host: the device; fl_host.lock held. Does not sleep: the handshakes run in a work item
 *	that does not hold the lock while it waits, so no caller's timeout is stretched.
 * @err: status for the failed frames: -EPROTO after a violation, -ECANCELED otherwise.
 *
 * Return: 0, or -ENODEV when the device is gone.
 */
int fl_q_reset(struct fl_host *host, int err)
{
	lockdep_assert_held(&host->lock);
	if (host->dead)
		return -ENODEV;
	fl_live_reset(host, err);
	return 0;
}

static void fl_q_violation(struct fl_host *host, const char *what, u32 a, u32 b)
{
	host->stats.protocol_errors++;
	dev_err_ratelimited(host->dev, "protocol violation by the endpoint: %s (%u, %u); resetting the queue\n",
			    what, a, b);
	fl_q_reset(host, -EPROTO);
}

static int fl_q_complete_tx(struct fl_host *host, const struct fl_cqe *cqe, u64 now)
{
	u32 id = le32_to_cpu(cqe->id);
	struct fl_tx_shadow *sh;
	struct fl_completion c;

	if (host->tx_cons == host->tx_prod) {
		fl_q_violation(host, "TX_DONE with no frame in flight (buf, tx_prod)", id,
			       host->tx_prod);
		return -EPROTO;
	}
	sh = &host->tx_sh[fl_ring_slot(host->tx_cons, host->tx_entries)];
	if (id != sh->buf) {
		fl_q_violation(host, "TX_DONE out of ring order (buf, expected)", id, sh->buf);
		return -EPROTO;
	}
	c = (struct fl_completion){
		.buf = id, .bytes = sh->bytes, .queue = FL_Q_TX,
		.status = fl_status_errno(le16_to_cpu(cqe->status)),
		.flags = sh->flags, .seq = sh->seq, .cookie = sh->cookie,
		.ts_submit = sh->ts_submit, .ts_delivered = now,
	};
	if (host->features & FL_F_TIMESTAMPS) {
		c.ts_dma_start = le64_to_cpu(cqe->ts_dma_start);
		c.ts_dma_done = le64_to_cpu(cqe->ts_dma_done);
	}
	if (!c.status) {
		host->stats.tx_frames++;
		host->stats.tx_bytes += c.bytes;
		if (id >= host->nslots)
			host->stats.tx_v4l2++;
		else if (id >= host->nbufs)
			host->stats.tx_imported++;
	}
	host->tx_cons++;
	fl_import_read_end(host, id);
	fl_q_push(host, &c);
	return 0;
}

static int fl_q_complete_rx(struct fl_host *host, const struct fl_cqe *cqe, u64 now)
{
	u32 id = le32_to_cpu(cqe->id);
	u32 bytes = le32_to_cpu(cqe->bytes);
	struct fl_rx_shadow *sh;
	struct fl_completion c;

	if (host->rx_cons == host->rx_prod) {
		fl_q_violation(host, "RX with no buffer posted (buf, rx_prod)", id, host->rx_prod);
		return -EPROTO;
	}
	sh = &host->rx_sh[fl_ring_slot(host->rx_cons, host->rx_entries)];
	if (id != sh->buf) {
		fl_q_violation(host, "RX out of ring order (buf, expected)", id, sh->buf);
		return -EPROTO;
	}
	c = (struct fl_completion){
		.buf = id, .queue = FL_Q_RX,
		.status = fl_status_errno(le16_to_cpu(cqe->status)),
		.flags = le32_to_cpu(cqe->flags), .seq = le32_to_cpu(cqe->seq),
		.cookie = le64_to_cpu(cqe->cookie),
		.ts_submit = sh->ts_post, .ts_delivered = now,
	};
	if (!c.status) {
		if (!bytes || bytes > fl_q_rx_room(host, id)) {
			fl_q_violation(host, "RX length outside the buffer (bytes, size)", bytes,
				       fl_q_rx_room(host, id));
			return -EPROTO;
		}
		c.bytes = bytes;
		if (id < host->nbufs)
			fl_buf_sync_for_cpu(host, id, bytes, DMA_FROM_DEVICE);
		host->stats.rx_frames++;
		host->stats.rx_bytes += bytes;
		if (id >= host->nslots)
			host->stats.rx_v4l2++;
	}
	if (host->features & FL_F_TIMESTAMPS) {
		c.ts_dma_start = le64_to_cpu(cqe->ts_dma_start);
		c.ts_dma_done = le64_to_cpu(cqe->ts_dma_done);
	}
	host->rx_cons++;
	fl_q_push(host, &c);
	return 0;
}

/**
 * fl_q_drain() - move every published completion into the REAP fifo
 * @host: the device; fl_host.lock held.
 *
 * A completion that breaks the protocol (index past the ring, unknown kind or status,
 * buffer that is not the next one in flight, impossible length) is counted, logged
 * (rate-limited) and resets the queue: what was outstanding fails with -EPROTO.
 */
void fl_q_drain(struct fl_host *host)
{
	u32 cons = host->cq_cons;
	struct fl_cqe cqe;
	u64 now;
	u32 prod;

	lockdep_assert_held(&host->lock);
	if (host->dead || !host->enabled)
		return;
	prod = le32_to_cpu(READ_ONCE(host->status->cq_prod));
	if (prod == cons)
		return;
	if (!fl_ring_prod_ok(prod, cons, host->cq_entries)) {
		fl_q_violation(host, "cq_prod past the ring (cq_prod, cq_cons)", prod, cons);
		return;
	}
	/* cq_prod is written after the entries it publishes: read them after it */
	dma_rmb();
	if (memchr_inv(host->status->reserved, 0, sizeof(host->status->reserved))) {
		fl_q_violation(host, "fl_host_status reserved words not zero (cq_prod, cq_cons)",
			       prod, cons);
		return;
	}
	now = ktime_get_ns();
	while (cons != prod) {
		/* one private copy, validated before use; the endpoint may rewrite the ring */
		memcpy(&cqe, &host->cq[fl_ring_slot(cons, host->cq_entries)], sizeof(cqe));
		if (cqe.reserved0 || cqe.reserved1[0] || cqe.reserved1[1]) {
			/* a later minor ABI may use them: an old host refuses, never ignores */
			fl_q_violation(host, "completion reserved fields not zero (kind, buf)",
				       le16_to_cpu(cqe.kind), le32_to_cpu(cqe.id));
			return;
		}
		if (fl_cqe_check(&cqe, host->nslots + host->nvbufs)) {
			fl_q_violation(host, "malformed completion (kind, buf)",
				       le16_to_cpu(cqe.kind), le32_to_cpu(cqe.id));
			return;
		}
		if (le16_to_cpu(cqe.kind) == FL_CQE_TX_DONE) {
			if (fl_q_complete_tx(host, &cqe, now))
				return;
		} else {
			if (fl_q_complete_rx(host, &cqe, now))
				return;
		}
		cons++;
	}
	WRITE_ONCE(host->cq_cons, cons);
	writel(cons, host->bar + FL_DB(cq_cons));
}

/*
 * Enable INTx again (the handler masked it at the function) and tell the endpoint, through
 * irq_ack (%FL_F_INTX_SEQ), that it may raise the next one: only with INTx enabled and the
 * line low, since an INTx pulse that meets a masked function is lost, and a line still
 * asserted runs the handler again, which masks it again. Such a line stays masked unless
 * @force (the work item, at most once per jiffy), which enables it without acknowledging:
 * the handler runs and masks, and the work comes back a jiffy later to acknowledge once the
 * line is low. fl_host.lock held.
 *
 * The acknowledge is the number of the last INTx the handler took, not a count of enables
 * or of handler runs: a stale enable (a consumer going to sleep and the work item both
 * enable INTx after one handler run) that reaches the endpoint after it raised the next
 * INTx, but before the handler took it, writes the old number and acknowledges nothing. A
 * count could not tell either: after the endpoint raised an unacknowledged INTx again, a
 * late count of the first passed for the acknowledge of the next one, lost meanwhile on a
 * masked function, and poll() slept for good (65-notify, "late INTx acknowledge").
 */
static void fl_q_intx_ready(struct fl_host *host, bool force)
{
	unsigned long flags;
	bool was_masked;
	u16 cmd;

	lockdep_assert_held(&host->lock);
	/* the handler masks under intx_lock: no acknowledge while it is half way */
	spin_lock_irqsave(&host->intx_lock, flags);
	was_masked = host->intx_masked;
	/* cleared first: the handler may run (and set it) as soon as INTx is enabled */
	host->intx_masked = false;
	/* enables INTx only when the line is low (INTx Status clear) */
	if (pci_check_and_unmask_intx(host->pdev)) {
		if (host->features & FL_F_INTX_SEQ)
			writel(host->intx_seq, host->bar + FL_DB(irq_ack));
	} else if (force) {
		pci_read_config_word(host->pdev, PCI_COMMAND, &cmd);
		pci_write_config_word(host->pdev, PCI_COMMAND, cmd & ~PCI_COMMAND_INTX_DISABLE);
		schedule_delayed_work(&host->intx_work, 1);
	} else {
		host->intx_masked = was_masked;
	}
	spin_unlock_irqrestore(&host->intx_lock, flags);
}

/**
 * fl_q_intx_listen() - enable INTx (even with the line still asserted) and acknowledge
 * @host: the device; fl_host.lock held; INTx in use.
 *
 * The enable handshake: before %FL_CTRL_ENABLE, so the self-test's INTx reaches the
 * handler, and once READY, since the handler masked INTx for the self-test's INTx while the
 * queue was not enabled, when fl_q_intx_work() does not run: without this INTx would stay
 * masked and the endpoint would wait for irq_ack for good. The acknowledge waits for the
 * line to be low (fl_q_intx_ready()); once READY the work item writes it then.
 */
void fl_q_intx_listen(struct fl_host *host)
{
	fl_q_intx_ready(host, true);
}

/**
 * fl_q_intx_work() - enable INTx again one jiffy after the handler masked it
 * @work: &fl_host.intx_work.
 *
 * Usually the endpoint's pulse is over (about 1 ms on Tegra234 and Cadence). A line still
 * asserted (a long pulse, or an endpoint that never lets go) is enabled too: the handler
 * then runs once more and masks again, so a held line costs one handler run per jiffy, not
 * one per return from the handler.
 */
void fl_q_intx_work(struct work_struct *work)
{
	struct fl_host *host = container_of(to_delayed_work(work), struct fl_host, intx_work);

	mutex_lock(&host->lock);
	if (!host->dead && host->enabled)
		fl_q_intx_ready(host, true);
	mutex_unlock(&host->lock);
}

/*
 * Completions to wait for before the next interrupt (%FL_F_CQ_BATCH): irq_batch percent of
 * the frames on their way: sent and not completed, and those the endpoint reported queued
 * towards us (fl_host_status.e2h_pending, at most the buffers posted: a posted buffer is
 * room, not a frame). At least 1. Every transfer in flight completes in bounded time, and
 * the endpoint interrupts short of the index once none is left, so a batch that ends early
 * still wakes the sleeper. The jitter a batch adds to a frame's latency is at most the
 * batch less one frame times: irq_batch bounds it as a share of the frames in flight.
 */
static u32 fl_q_batch(struct fl_host *host)
{
	u32 rx = min(le32_to_cpu(READ_ONCE(host->status->e2h_pending)),
		     host->rx_prod - host->rx_cons);
	u32 inflight = (host->tx_prod - host->tx_cons) + rx;

	/* rounded up: the frames seen on their way lag the sender's depth by its refills */
	return max(1U, DIV_ROUND_UP(inflight * min(READ_ONCE(irq_batch), 100U), 100));
}

/**
 * fl_q_arm() - ask for an interrupt at the next completion (or batch), before sleeping
 * @host: the device; fl_host.lock held.
 *
 * The endpoint stores cq_prod and then loads cq_event; we store cq_event and then load
 * cq_prod. Both stores are posted, so without a flush both loads can see the old value:
 * the endpoint skips the interrupt and we sleep (a lost wake-up). Without %FL_F_CQ_BATCH the
 * read of BAR0 after the write is that flush: its completion comes back after the write
 * reached the endpoint; only here, on the way to sleep, never per completion. With it the
 * endpoint loads cq_event again on every pass until it interrupts, so the arm is seen
 * within its polling interval and the host reads nothing across the link.
 *
 * With %FL_F_IRQ_SEEN the arm carries the last announcement found landed: after two
 * interrupts merged into one handler run we may wake at the first announcement and arm
 * below the second's cq_prod, not landed yet; the endpoint then sees we are behind and
 * interrupts again instead of taking the arm for a stale one.
 *
 * Return: true when a completion arrived meanwhile (drain again instead of sleeping).
 */
bool fl_q_arm(struct fl_host *host)
{
	u32 event = host->cq_cons;

	lockdep_assert_held(&host->lock);
	if (host->dead || !host->enabled)
		return false;
	/* listening again before sleeping: INTx enabled (unless still asserted), irq_ack */
	if (host->irq_type == FL_IRQ_INTX)
		fl_q_intx_ready(host, false);
	if (host->features & FL_F_CQ_BATCH)
		event += fl_q_batch(host) - 1;
	host->cq_armed = event;
	/* which announcement this arm follows: written before the arm (writel orders them) */
	if (host->features & FL_F_IRQ_SEEN)
		writel(fl_settle_seen(host), host->bar + FL_DB(irq_seen));
	writel(event, host->bar + FL_DB(cq_event));
	/* with batches the endpoint loads cq_event until it interrupts: no flush needed */
	if (!(host->features & FL_F_CQ_BATCH)) {
		readl(host->bar + FL_DB(cq_event));
		host->stats.link_reads++;
	}
	/* cq_prod is loaded after the flushing read returned (virtio's enable_cb_delayed) */
	mb();
	return le32_to_cpu(READ_ONCE(host->status->cq_prod)) != host->cq_cons;
}

/**
 * fl_q_arm_passed() - has a published completion passed the armed event index?
 * @host: the device; fl_host.lock held.
 *
 * Return: true when the endpoint owes an interrupt for what is in host memory.
 */
bool fl_q_arm_passed(struct fl_host *host)
{
	u32 prod = le32_to_cpu(READ_ONCE(host->status->cq_prod));

	lockdep_assert_held(&host->lock);
	return prod != host->cq_cons && (u32)(prod - host->cq_armed - 1) < host->cq_entries;
}

/**
 * fl_q_idle() - nothing is in flight or posted
 * @host: the device; fl_host.lock held.
 *
 * Return: true when both rings are empty.
 */
bool fl_q_idle(struct fl_host *host)
{
	lockdep_assert_held(&host->lock);
	return host->tx_prod == host->tx_cons && host->rx_prod == host->rx_cons;
}

/**
 * fl_q_irq() - completion interrupt: count it and wake the consumers, which drain
 * @irq: the vector.
 * @data: the struct fl_host.
 *
 * INTx is a level the endpoint cannot take back early (a raise holds it for the controller's
 * own time, about 1 ms on Tegra234 and Cadence, or for ever if the endpoint misbehaves), and
 * a level line runs this handler again after every return while it is asserted. So the
 * handler masks INTx at the function (INTx Disable, as vfio and uio_pci_generic do); a
 * consumer about to sleep (fl_q_arm()) or, a jiffy later, fl_q_intx_work() enables it again
 * and then acknowledges in irq_ack with the number the endpoint gave the INTx, read here
 * (%FL_F_INTX_SEQ): the endpoint raises its next INTx only after that.
 *
 * During the enable handshake it also answers the endpoint's interrupt self-test
 * (%FL_F_IRQ_TEST): the count of interrupts taken goes to fl_bar_doorbell.irq_test.
 *
 * Return: %IRQ_NONE for a shared INTx line whose INTx Status is clear, else %IRQ_HANDLED.
 */
irqreturn_t fl_q_irq(int irq, void *data)
{
	struct fl_host *host = data;

	if (host->irq_type == FL_IRQ_INTX) {
		spin_lock(&host->intx_lock);
		/* not ours (shared line), or already masked by an earlier run */
		if (!pci_check_and_mask_intx(host->pdev)) {
			spin_unlock(&host->intx_lock);
			return IRQ_NONE;
		}
		host->intx_masked = true;
		/* which INTx this is: the endpoint numbered it before raising (non-posted read) */
		if (READ_ONCE(host->features) & FL_F_INTX_SEQ)
			host->intx_seq = readl(host->bar + FL_STATUS(intx_seq));
		spin_unlock(&host->intx_lock);
		schedule_delayed_work(&host->intx_work, msecs_to_jiffies(1));
	}
	/* the endpoint's interrupt self-test waits for this count (posted write) */
	if (READ_ONCE(host->irqt_armed))
		writel(atomic_inc_return(&host->irqt_count), host->bar + FL_DB(irq_test));
	trace_fl_host_irq(host->id, atomic64_inc_return(&host->irqs));
	/* the waiters, once what the interrupt announced is in host memory */
	fl_settle_irq(host);
	return IRQ_HANDLED;
}

/**
 * fl_q_can_submit() - is there room in the tx ring?
 * @host: the device; fl_host.lock held.
 *
 * Return: true when SUBMIT would not fail with -EAGAIN.
 */
bool fl_q_can_submit(struct fl_host *host)
{
	lockdep_assert_held(&host->lock);
	return fl_ring_used(host->tx_prod, host->tx_cons) < host->tx_entries;
}
