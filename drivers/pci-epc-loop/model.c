// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the link model, one timeline per direction.
 *
 * PCIe is full duplex: the read direction (DMA_DEV_TO_MEM, host data
 * coming to the endpoint in completions) and the write direction
 * (DMA_MEM_TO_DEV, posted writes to the host) each have their own
 * timeline, shared by all channels of that direction.
 *
 * A chunk of a transfer takes max(its link time, the time the copy really
 * took): the channel reserves a slot on its direction's timeline, waits for
 * the slot to start, copies, then waits for what is left of the slot. The
 * link time is bytes on the wire / rate_mbps, where the wire carries one
 * TLP per payload (Max_Payload_Size for posted writes, completions of at
 * most min(MPS, MRRS) for reads) plus the per-TLP overhead:
 *
 *   Gen3 framing token (STP, 4 bytes, carries the 12-bit sequence number)
 *   + header (12 bytes 3DW, 16 bytes 4DW) + LCRC (4 bytes)
 *   = 20 bytes (3DW: completions, writes below 4 GiB), 24 bytes (4DW).
 *
 * (Gen1/2 frame with STP 1 + sequence 2 + END 1: the same 20/24 bytes.)
 * Not modelled: DLLPs (ACK, flow control updates), SKP ordered sets, the
 * 128b/130b encoding (fold it into rate_mbps), read request TLPs on the
 * opposite direction, completions split at the read completion boundary,
 * flow-control credit and tag limits.
 *
 * A channel that moves descriptors back to back keeps its own timeline
 * going (a slot starts where its last one ended, even if the worker woke
 * late), so scheduling latency of the emulation does not lower the rate;
 * only when the copy falls behind the model by more than LOOP_MODEL_LAG_NS
 * does the timeline restart at "now" (the copy is then the limit). Inside
 * a descriptor (or dw-edma batch) the worker may run up to
 * LOOP_MODEL_AHEAD_NS ahead of the timeline, so a late wake-up of the
 * emulated CPU costs nothing: data may land up to that much before its
 * slot, but a descriptor never completes before its modelled end.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/seq_file.h>
#include <linux/wait.h>

#include "loop.h"

/* Per-TLP overhead: STP token with sequence number, LCRC, and the header */
#define LOOP_TLP_FRAMING	4
#define LOOP_TLP_LCRC		4
#define LOOP_TLP_HDR_3DW	12
#define LOOP_TLP_HDR_4DW	16
/*
 * How far a channel's timeline may lag behind now before it restarts: the
 * emulated CPU may lose this much to host contention and catch up by
 * copying unpaced; beyond it the copy, not the link, is the limit.
 */
#define LOOP_MODEL_LAG_NS	(500 * NSEC_PER_MSEC)
/* Longest single sleep, so link down and terminate are seen quickly */
#define LOOP_MODEL_MAX_SLEEP_NS	(10 * NSEC_PER_MSEC)

static unsigned int loop_model_dir_idx(enum dma_transfer_direction dir)
{
	return dir == DMA_DEV_TO_MEM ? 0 : 1;
}

/* MPS and MRRS as the root complex programmed them, or the overrides */
static void loop_model_sizes(struct pci_epc_loop *loop, u32 *mps, u32 *mrrs)
{
	unsigned long flags;
	u16 devctl;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	devctl = loop->fn[0].cfg[LOOP_CAP_EXP + PCI_EXP_DEVCTL] |
		 loop->fn[0].cfg[LOOP_CAP_EXP + PCI_EXP_DEVCTL + 1] << 8;
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	*mps = READ_ONCE(loop->model_mps);
	if (!*mps)
		*mps = 128 << FIELD_GET(PCI_EXP_DEVCTL_PAYLOAD, devctl);
	*mrrs = READ_ONCE(loop->model_mrrs);
	if (!*mrrs)
		*mrrs = 128 << FIELD_GET(PCI_EXP_DEVCTL_READRQ, devctl);
}

/*
 * Link time of @bytes at @remote in direction @d. Posted writes carry MPS
 * bytes per TLP with a 3DW header below 4 GiB, 4DW above; read data comes
 * back in completions (3DW header) of min(MPS, MRRS) bytes, assuming the
 * completer returns the largest completions allowed.
 */
static u64 loop_model_link_ns(struct pci_epc_loop *loop, unsigned int d,
			      u64 remote, size_t bytes, u32 rate)
{
	u32 mps, mrrs, payload, ovh;
	u64 tlps;

	loop_model_sizes(loop, &mps, &mrrs);
	ovh = LOOP_TLP_FRAMING + LOOP_TLP_LCRC;
	if (d == 0) {
		payload = min(mps, mrrs);
		ovh += LOOP_TLP_HDR_3DW;
	} else {
		payload = mps;
		ovh += remote + bytes > SZ_4G ? LOOP_TLP_HDR_4DW :
						LOOP_TLP_HDR_3DW;
	}
	WRITE_ONCE(loop->model_ovh[d], ovh);
	tlps = DIV_ROUND_UP_ULL(bytes, payload);
	return div_u64(((u64)bytes + tlps * ovh) * 8 * 1000, rate);
}

/*
 * Take the slot of @bytes on direction @d's timeline: it starts when the
 * direction is free and the chunk is @ready, and lasts the chunk's link
 * time (0 when rate_mbps is 0). Accounts the chunk in the counters.
 */
static u64 loop_model_slot(struct pci_epc_loop *loop, unsigned int d,
			   u64 remote, size_t bytes, u64 ready, u64 *end)
{
	u32 rate = READ_ONCE(loop->rate_mbps);
	u64 start, link_ns = 0;

	if (rate)
		link_ns = loop_model_link_ns(loop, d, remote, bytes, rate);

	spin_lock(&loop->model_lock);
	start = rate ? max(ready, loop->model_busy_until[d]) : ready;
	*end = start + link_ns;
	if (rate)
		loop->model_busy_until[d] = *end;
	spin_unlock(&loop->model_lock);

	atomic64_add(bytes, &loop->model_bytes[d]);
	atomic64_add(link_ns, &loop->model_link_ns[d]);
	return start;
}

/**
 * loop_model_reserve() - reserve the link slot of one chunk
 * @c: the channel moving the chunk
 * @remote: host (PCI) address of the chunk (header size of writes)
 * @bytes: bytes in the chunk
 * @ready: earliest start (ns, ktime_get_ns() clock): the end of the
 *	   channel's previous slot, plus the setup time for a descriptor's
 *	   first chunk
 * @end: set to the end of the slot
 *
 * The slot starts when the direction is free and the chunk is ready, and
 * lasts the chunk's link time (0 when rate_mbps is 0). Also accounts the
 * chunk in the per-direction counters.
 *
 * Context: the channel's worker.
 * Return: the start of the slot.
 */
u64 loop_model_reserve(struct loop_dma_chan *c, u64 remote, size_t bytes,
		       u64 ready, u64 *end)
{
	struct pci_epc_loop *loop = c->loop;
	unsigned int d = loop_model_dir_idx(c->dir);
	u64 now = ktime_get_ns();
	u64 start;

	/* The copy fell behind the model: the copy is the limit, restart */
	if (ready + LOOP_MODEL_LAG_NS < now) {
		ready = now;
		if (READ_ONCE(loop->rate_mbps))
			atomic64_inc(&loop->model_restarts[d]);
	}
	start = loop_model_slot(loop, d, remote, bytes, ready, end);
	c->model_end = *end;
	return start;
}

/**
 * loop_model_wait_until() - sleep until a point of the model's timeline
 * @c: the channel
 * @t: the time (ns, ktime_get_ns() clock)
 *
 * Sleeps in slices of at most LOOP_MODEL_MAX_SLEEP_NS on high resolution
 * timers and stops early when the channel must stop (link down, or
 * terminate_all of the idealised engine).
 *
 * Context: the channel's worker.
 * Return: 0 at @t, -EINTR when stopped early.
 */
int loop_model_wait_until(struct loop_dma_chan *c, u64 t)
{
	struct pci_epc_loop *loop = c->loop;
	u64 now;

	for (;;) {
		if (loop_dma_chan_halted(c))
			return -EINTR;
		now = ktime_get_ns();
		if (now >= t)
			return 0;
		wait_event_hrtimeout(loop->stall_wq, loop_dma_chan_halted(c),
				     ns_to_ktime(min_t(u64, t - now,
						       LOOP_MODEL_MAX_SLEEP_NS)));
	}
}

/**
 * loop_model_done() - a descriptor is about to report its completion
 * @c: the channel
 * @end: the modelled end of its last chunk
 *
 * Records how late the completion comes against the model: when the
 * emulated CPU could not keep up (copy or wake-up late), the emulation,
 * not the link, set the pace.
 */
void loop_model_done(struct loop_dma_chan *c, u64 end)
{
	u64 now = ktime_get_ns();

	atomic64_set(&c->loop->model_late_ns[loop_model_dir_idx(c->dir)],
		     now > end ? now - end : 0);
}

/**
 * loop_model_started() - an idle channel's worker starts a descriptor
 * @c: the channel
 * @kick: when issue_pending queued the worker
 *
 * Records the emulation's start latency (the link model starts the
 * descriptor now, so that time is not modelled link time).
 */
void loop_model_started(struct loop_dma_chan *c, u64 kick)
{
	u64 now = ktime_get_ns();

	atomic64_set(&c->loop->model_start_late_ns[loop_model_dir_idx(c->dir)],
		     now > kick ? now - kick : 0);
}

/**
 * loop_model_charge() - pace a chunk that an engine without channels copied
 * @loop: the loopback
 * @dir: DMA_DEV_TO_MEM (read) or DMA_MEM_TO_DEV (write)
 * @remote: host (PCI) address of the chunk
 * @bytes: bytes in the chunk
 * @ready: when the chunk could start (its copy's start, plus setup_ns for
 *	   a descriptor's first chunk)
 *
 * For the eDMA library (nvedma.c), which copies a chunk and then charges
 * it: the chunk's slot on @dir's timeline starts at max(@ready, the end of
 * the previous slot) and this sleeps until the slot ends, so a chunk takes
 * max(its link time, its copy time), as for the dmaengine channels. Sleeps
 * are bounded and end early when the endpoint loses the link.
 *
 * Context: process context (an engine worker).
 */
void loop_model_charge(struct pci_epc_loop *loop,
		       enum dma_transfer_direction dir, u64 remote,
		       size_t bytes, u64 ready)
{
	u64 end, now;

	loop_model_slot(loop, loop_model_dir_idx(dir), remote, bytes, ready,
			&end);
	while (loop_ep_up(loop)) {
		now = ktime_get_ns();
		if (now >= end)
			break;
		wait_event_hrtimeout(loop->stall_wq, !loop_ep_up(loop),
				     ns_to_ktime(min_t(u64, end - now,
						       LOOP_MODEL_MAX_SLEEP_NS)));
	}
}

/**
 * loop_model_init() - reset the link model
 * @loop: the loopback
 */
void loop_model_init(struct pci_epc_loop *loop)
{
	unsigned int d;

	for (d = 0; d < 2; d++) {
		loop->model_busy_until[d] = 0;
		loop->model_ovh[d] = LOOP_TLP_FRAMING + LOOP_TLP_LCRC +
				     LOOP_TLP_HDR_3DW;
		atomic64_set(&loop->model_bytes[d], 0);
		atomic64_set(&loop->model_link_ns[d], 0);
		atomic64_set(&loop->model_restarts[d], 0);
		atomic64_set(&loop->model_late_ns[d], 0);
		atomic64_set(&loop->model_start_late_ns[d], 0);
	}
}

static int loop_model_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;
	static const char * const name[] = { "read", "write" };
	u32 mps, mrrs, payload;
	unsigned int d;

	loop_model_sizes(loop, &mps, &mrrs);
	seq_printf(s, "rate_mbps %u\nsetup_ns %u\nmps %u\nmrrs %u\n",
		   READ_ONCE(loop->rate_mbps), READ_ONCE(loop->setup_ns),
		   mps, mrrs);
	for (d = 0; d < 2; d++) {
		payload = d ? mps : min(mps, mrrs);
		seq_printf(s, "%s_payload %u\n%s_tlp_overhead %u\n%s_bytes %lld\n%s_link_ns %lld\n",
			   name[d], payload, name[d], READ_ONCE(loop->model_ovh[d]),
			   name[d], atomic64_read(&loop->model_bytes[d]),
			   name[d], atomic64_read(&loop->model_link_ns[d]));
		seq_printf(s, "%s_restarts %lld\n%s_late_ns %lld\n%s_start_late_ns %lld\n",
			   name[d], atomic64_read(&loop->model_restarts[d]),
			   name[d], atomic64_read(&loop->model_late_ns[d]),
			   name[d], atomic64_read(&loop->model_start_late_ns[d]));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(loop_model);

/* MPS / MRRS overrides: 0 (use config space) or a power of two 128..4096 */
static int loop_model_size_set(void *data, u64 val)
{
	if (val && (val < 128 || val > 4096 || !is_power_of_2(val)))
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}

static int loop_model_size_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u32 *)data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(loop_model_size_fops, loop_model_size_get,
			 loop_model_size_set, "%llu\n");

static ssize_t loop_model_reset_write(struct file *file,
				      const char __user *ubuf, size_t count,
				      loff_t *ppos)
{
	struct pci_epc_loop *loop = file_inode(file)->i_private;
	unsigned int d;

	for (d = 0; d < 2; d++) {
		atomic64_set(&loop->model_bytes[d], 0);
		atomic64_set(&loop->model_link_ns[d], 0);
		atomic64_set(&loop->model_restarts[d], 0);
	}
	return count;
}

static const struct file_operations loop_model_reset_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= loop_model_reset_write,
};

/**
 * loop_model_debugfs_init() - the link model's debugfs files
 * @loop: the loopback
 * @dir: the device's debugfs directory
 *
 * mps, mrrs: overrides in bytes (0 = what the root complex programmed in
 * Device Control); link_model: parameters and per-direction counters
 * (restarts: times the copy fell more than LOOP_MODEL_LAG_NS behind;
 * late_ns: how late the last completion came against the model;
 * start_late_ns: how long an idle channel took to start);
 * link_model_reset: write anything to zero the counters.
 */
void loop_model_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir)
{
	debugfs_create_file_unsafe("mps", 0600, dir, &loop->model_mps,
				   &loop_model_size_fops);
	debugfs_create_file_unsafe("mrrs", 0600, dir, &loop->model_mrrs,
				   &loop_model_size_fops);
	debugfs_create_file("link_model", 0400, dir, loop, &loop_model_fops);
	debugfs_create_file("link_model_reset", 0200, dir, loop,
			    &loop_model_reset_fops);
}
