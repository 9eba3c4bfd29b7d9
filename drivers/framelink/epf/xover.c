// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the crossover sizes, measured at enable (issue 10).
 *
 * Per direction a frame goes by DMA at or above its crossover and by CPU copy
 * through the outbound window below it (xfer.c). Where the two paths cross
 * depends on the board, the link and the backend, so configfs "auto" (the
 * default of crossover and rd_crossover) times both paths at every enable
 * instead of trusting a fixed number:
 *
 *  - after fl_cq_init() mapped the host's completion area and before the
 *    interrupt self-test and READY, so nothing is in flight and the host does
 *    not look at the ring yet (it reads entries only below cq_prod, which is
 *    zero). The ring part of that area (FL_HOST_CQ_OFFSET on, never the status
 *    block) is the host memory copied to and from; an endpoint buffer allocated
 *    at bind like the slots (same allocator and attributes, so the CPU sees the
 *    memory type the slots have) is the other end;
 *  - each path at two sizes (1 KiB and the largest power of two <= 64 KiB that
 *    fits the ring: 8 KiB with the default rings), FL_XO_RUNS times, the
 *    fastest run per size kept (the others lost to interrupts and scheduling);
 *    t = a + b * size per path through those two points; the crossover is the
 *    size where DMA gets cheaper, clamped to [0, slot_size], slot_size + 1
 *    (every frame by CPU) when DMA never gets cheaper (fl_xo_solve() says how
 *    far the lines are trusted beyond the sizes timed);
 *  - the CPU path is the data path's own map, copy, unmap (fl_win_read(),
 *    fl_win_write()); the DMA path is one part on one channel through the
 *    binding's backend (the same ->part() as a frame below 256 KiB, which is
 *    one part), its time taken up to the callback's ts_done;
 *  - writes store zeros (the buffer is zeroed first), so the ring is zeros
 *    where it was used when the host first reads it;
 *  - bounded: crossover_ms (module parameter, 50 ms) per direction, the first
 *    run up to four times that, the later ones once that from its end. What
 *    did not complete one run of all four timings by then, or failed, keeps
 *    the last value this binding measured, else the default (64 KiB writes,
 *    4 KiB reads), and says why with dev_warn_ratelimited(). A DMA part
 *    still running at the bound is stopped (fl_xfer_quiesce()); one that
 *    cannot be proven stopped may still write the ring, so the enable is
 *    refused (the engine stays in RESET and enables again once the channel
 *    is idle).
 *
 * The fitted lines are logged at every enable; FL_IOC_INFO reports the values
 * and FL_XOVER_* per direction (measured, configured, no DMA, failed).
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/stringify.h>

#include "epf.h"

#define FL_XO_SMALL		SZ_1K	/* the smaller size timed */
#define FL_XO_RUNS		5	/* timings per path and size; the fastest counts */
#define FL_XO_DRAIN_MS		200	/* a measuring DMA stopped at the bound */
#define FL_XO_FIRST_RUN		4	/* budgets the first run may take */

/*
 * Per direction. A board needs a few ms (a CPU read of 8 KiB through the
 * window is about 1024 round trips of ~1 us); the lab's emulated copies under
 * TCG need 4-10 ms per run. At most 100: both directions with a slow first
 * run, the later runs and a stopped DMA each (2 x (5 x 100 + 200) ms) and
 * the interrupt self-test (150 ms) stay inside the host's 2 s enable bound.
 */
static unsigned int crossover_ms = 50;
module_param(crossover_ms, uint, 0644);
MODULE_PARM_DESC(crossover_ms,
		 "time to measure an \"auto\" crossover at enable, per direction, ms (1..100, default 50)");

/* A path's cost line: a_ns + b_ps * size / 1000 ns */
struct fl_xo_fit {
	s64 a_ns;
	s64 b_ps;
};

static const char *const fl_xo_names[] = {
	[FL_XO_RD] = "rd_crossover (reads of host memory)",
	[FL_XO_WR] = "crossover (writes to the host)",
};

static u32 fl_xo_default(int dir)
{
	return dir == FL_XO_WR ? FL_EP_XO_WR_DEFAULT : FL_EP_XO_RD_DEFAULT;
}

static bool fl_xo_auto(struct fl_ep *ep, int dir)
{
	return dir == FL_XO_WR ? ep->cfg.crossover_auto : ep->cfg.rd_crossover_auto;
}

/* Publish one direction's value and how it was found (FL_IOC_INFO reads both under q_lock) */
static void fl_xo_set(struct fl_ep *ep, int dir, u32 bytes, u32 how)
{
	spin_lock(&ep->q_lock);
	ep->xo[dir].bytes = bytes;
	ep->xo[dir].how = how;
	spin_unlock(&ep->q_lock);
}

/**
 * fl_xover_alloc() - the endpoint buffer the measurement copies with (bind)
 * @ep: the endpoint, slots allocated (the same device and attributes).
 *
 * Once per binding, never at enable: nothing is allocated on the way to READY.
 * Failing is not fatal: "auto" then keeps the defaults (FL_XOVER_FAILED).
 */
void fl_xover_alloc(struct fl_ep *ep)
{
	ep->xo_va = dma_alloc_attrs(ep->dma_dev, FL_EP_XO_BUF, &ep->xo_dma,
				    GFP_KERNEL | __GFP_NOWARN, ep->sm_attrs);
	if (!ep->xo_va)
		dev_warn(ep->dev, "no %u bytes to measure the crossovers with: defaults kept\n",
			 FL_EP_XO_BUF);
	ep->xo_x.ep = ep;
	ep->xo_x.slot = FL_EP_NO_SLOT;
}

/**
 * fl_xover_free() - free the measurement's buffer (unbind)
 * @ep: the endpoint; its DMA is proven over (a binding with leaked DMA keeps
 *	the buffer, as it keeps the slots).
 */
void fl_xover_free(struct fl_ep *ep)
{
	if (!ep->xo_va)
		return;
	dma_free_attrs(ep->dma_dev, FL_EP_XO_BUF, ep->xo_va, ep->xo_dma, ep->sm_attrs);
	ep->xo_va = NULL;
}

/**
 * fl_xover_reset() - the crossovers before any measurement (bind, epc_init)
 * @ep: the endpoint (engine not running).
 * @chans_known: the DMA channels were taken (epc_init): an "auto" direction
 *	without one is reported as %FL_XOVER_NO_DMA rather than pending.
 *
 * A configured number is used as it is; "auto" starts at the default.
 */
void fl_xover_reset(struct fl_ep *ep, bool chans_known)
{
	int dir;

	for (dir = FL_XO_RD; dir <= FL_XO_WR; dir++) {
		u32 nch = dir == FL_XO_WR ? ep->nwr : ep->nrd;

		ep->xo[dir].has_last = false;
		if (!fl_xo_auto(ep, dir))
			fl_xo_set(ep, dir, dir == FL_XO_WR ? ep->cfg.crossover :
				  ep->cfg.rd_crossover, FL_XOVER_CONFIGURED);
		else if (chans_known && (!ep->xops || !nch))
			fl_xo_set(ep, dir, fl_xo_default(dir), FL_XOVER_NO_DMA);
		else
			fl_xo_set(ep, dir, fl_xo_default(dir), FL_XOVER_PENDING);
	}
}

/**
 * fl_xover_info() - the crossovers for FL_IOC_INFO
 * @ep: the endpoint.
 * @wr: out: fl_info.crossover.
 * @rd: out: fl_info.rd_crossover.
 *
 * Return: fl_info.crossover_how.
 */
u32 fl_xover_info(struct fl_ep *ep, u32 *wr, u32 *rd)
{
	u32 how;

	spin_lock(&ep->q_lock);
	*wr = ep->xo[FL_XO_WR].bytes;
	*rd = ep->xo[FL_XO_RD].bytes;
	how = ep->xo[FL_XO_WR].how | ep->xo[FL_XO_RD].how << 8;
	spin_unlock(&ep->q_lock);
	return how;
}

/* A channel of the direction that can take a part now, or NULL */
static struct fl_dma_chan *fl_xo_chan(struct fl_ep *ep, bool to_host)
{
	struct fl_dma_chan *dcs = to_host ? ep->wr : ep->rd;
	u32 nch = to_host ? ep->nwr : ep->nrd;
	u32 i;

	for (i = 0; i < nch; i++)
		if (fl_dma_ctx_get(&dcs[i]))
			return &dcs[i];
	return NULL;
}

/*
 * A measuring DMA part did not end within the bound (or the engine is being
 * stopped): end it like a teardown does. -EBUSY when it cannot be proven
 * over: it may still write the ring, so the caller must not enable.
 */
static int fl_xo_dma_stop(struct fl_ep *ep)
{
	if (!fl_xfer_quiesce(ep, FL_XO_DRAIN_MS))
		return -EBUSY;
	/* The NVIDIA library is deinitialized by a quiesce: initialize it again */
	fl_xfer_resume(ep);
	return -ETIMEDOUT;
}

/* One DMA part of @len bytes between the buffer and host memory; its time in *ns */
static int fl_xo_dma(struct fl_ep *ep, struct fl_dma_chan *dc, u64 host, u32 len, bool to_host,
		     u64 end, u64 *ns)
{
	struct fl_xfer *x = &ep->xo_x;
	u64 t0;

	x->bytes = len;
	x->dma_err = false;
	x->done = false;
	x->leaked = false;
	x->cpu = false;
	/* One part and no submission bias: its callback finishes the transfer */
	atomic_set(&x->pending, 1);
	t0 = ktime_get_ns();
	x->ts_start = t0;
	if (!ep->xops->part(ep, dc, x, host, ep->xo_dma, len, to_host))
		return -EIO;
	if (ep->xops->flush)
		ep->xops->flush(dc);
	/*
	 * Slept on in short steps, bounded by @end: the time is the callback's
	 * ts_done, so the sleep is not timed, and a spinning engine would take
	 * the CPU from the lab's emulated engine (and from the NVIDIA library's
	 * callback thread on a board).
	 */
	while (!fl_xfer_done(x)) {
		if (ktime_get_ns() > end || kthread_should_stop())
			return fl_xo_dma_stop(ep);
		usleep_range(20, 50);
	}
	if (READ_ONCE(x->dma_err))
		return -EIO;
	*ns = x->ts_done - t0;
	return 0;
}

/* The data path's CPU copy of @len bytes; its time in *ns */
static int fl_xo_cpu(struct fl_ep *ep, u64 host, u32 len, bool to_host, u64 *ns)
{
	u64 t0 = ktime_get_ns();
	int ret;

	if (to_host)
		ret = fl_win_write(ep, host, ep->xo_va, len);
	else
		ret = fl_win_read(ep, host, ep->xo_va, len);
	*ns = ktime_get_ns() - t0;
	return ret;
}

/*
 * Time both paths at both sizes, FL_XO_RUNS times within the budget; the
 * fastest of each in best[path][size] (path 0 CPU, 1 DMA). Stops early, with
 * what it has, once the budget is spent after at least one whole run (a DMA
 * part cut at the bound is stopped first). The first run may take up to
 * FL_XO_FIRST_RUN budgets: the first transfer of a channel after bind can be
 * slow (the lab's first one under TCG took over 50 ms), and without one whole
 * run there is nothing to fit. The later runs get one budget from the first
 * run's end: counted from the start, a slow first run left none, and a fit
 * from one run takes any preempted timing as the board's (beside a CPU hog:
 * a 1 KiB CPU read of 51.7 ms, "DMA for every frame" on a link where DMA
 * takes 5 ms to start).
 */
static int fl_xo_sample(struct fl_ep *ep, struct fl_dma_chan *dc, bool to_host,
			const u32 *sizes, u64 best[2][2], const char **why)
{
	u64 host = ep->cq_addr + FL_HOST_CQ_OFFSET;
	u64 budget = clamp(READ_ONCE(crossover_ms), 1U, 100U) * NSEC_PER_MSEC;
	u64 start = ktime_get_ns();
	u64 ns, end;
	int run, s, ret;

	end = start + FL_XO_FIRST_RUN * budget;
	for (run = 0; run < FL_XO_RUNS; run++) {
		if (run == 1)
			end = ktime_get_ns() + budget;
		for (s = 0; s < 2; s++) {
			if (ktime_get_ns() > end) {
				*why = run ? "fewer runs: out of time" : "out of time";
				return run ? 0 : -ETIMEDOUT;
			}
			ret = fl_xo_cpu(ep, host, sizes[s], to_host, &ns);
			if (ret) {
				*why = "CPU copy failed";
				return ret;
			}
			best[0][s] = min(best[0][s], ns);
			ret = fl_xo_dma(ep, dc, host, sizes[s], to_host, end, &ns);
			if (ret == -ETIMEDOUT && run) {
				*why = "fewer runs: out of time";
				return 0;
			}
			if (ret) {
				*why = ret == -EIO ? "DMA failed" : "DMA did not finish in time";
				return ret;
			}
			best[1][s] = min(best[1][s], ns);
		}
	}
	return 0;
}

/* The line through (s0, t0) and (s1, t1); never negative (noise can tilt it) */
static struct fl_xo_fit fl_xo_line(u32 s0, u64 t0, u32 s1, u64 t1)
{
	struct fl_xo_fit f;

	f.b_ps = max_t(s64, div64_s64(((s64)t1 - (s64)t0) * 1000, (s64)(s1 - s0)), 0);
	f.a_ns = max_t(s64, (s64)t0 - div64_s64(f.b_ps * s0, 1000), 0);
	return f;
}

/*
 * The smallest size from which DMA is not slower, from the two lines and the
 * larger size timed, @big: slot_size + 1 (CPU for every frame) when DMA never
 * gets cheaper within a slot, 0 when it always is.
 *
 * Trusted as measured up to @big. Beyond it the lines are extrapolated only
 * towards DMA: a DMA engine exists because it moves a byte no slower than the
 * CPU through the window, so DMA found faster at @big stays DMA for larger
 * frames even when noise tilted the lines the other way (the lab's emulated
 * engine, timed under TCG, does that), while a CPU copy found faster at @big
 * gives way where its larger cost per byte catches up with DMA's start.
 */
static u32 fl_xo_solve(const struct fl_xo_fit *cpu, const struct fl_xo_fit *dma, u32 big,
		       u32 slot_size)
{
	s64 da = dma->a_ns - cpu->a_ns;	/* DMA's extra cost to start, ns */
	s64 db = cpu->b_ps - dma->b_ps;	/* the CPU's extra cost per byte, ps */
	u64 x;

	if (da <= 0 && db >= 0)
		return 0;			/* DMA never slower */
	if (da <= 0) {
		/* DMA starts cheaper, the CPU copies faster: they cross at x */
		x = div64_u64((u64)-da * 1000, (u64)-db);
		return x > big ? 0 : slot_size + 1;
	}
	if (db <= 0)
		return slot_size + 1;		/* DMA never faster */
	x = div64_u64((u64)da * 1000 + (u64)db - 1, (u64)db);
	return x > slot_size ? slot_size + 1 : (u32)x;
}

/* Measuring failed: the last good value of this binding, else the default; say why */
static void fl_xo_fail(struct fl_ep *ep, int dir, const char *why, int err)
{
	struct fl_xo *xo = &ep->xo[dir];
	u32 bytes = xo->has_last ? xo->last : fl_xo_default(dir);

	fl_xo_set(ep, dir, bytes, FL_XOVER_FAILED);
	dev_warn_ratelimited(ep->dev, "%s not measured (%s, %d): %s %u bytes\n",
			     fl_xo_names[dir], why, err,
			     xo->has_last ? "keeping the last measured" : "default", bytes);
}

/* A line as "1.2 us + 0.800 ns/B": a_ns and b_ps are never negative (fl_xo_line()) */
#define FL_XO_FMT	"%lld.%01lld us + %lld.%03lld ns/B"

/* One direction at enable; -EBUSY when a measuring DMA may still run */
static int fl_xo_measure(struct fl_ep *ep, int dir)
{
	bool to_host = dir == FL_XO_WR;
	u32 nch = to_host ? ep->nwr : ep->nrd;
	u64 best[2][2] = { { U64_MAX, U64_MAX }, { U64_MAX, U64_MAX } };
	struct fl_xo_fit cpu, dma;
	struct fl_dma_chan *dc;
	const char *why = NULL, *verdict = "";
	u32 sizes[2], bytes;
	u64 t0 = ktime_get_ns();
	int ret;

	if (!fl_xo_auto(ep, dir))
		return 0;	/* configured: set at bind, never changed */
	if (!ep->xops || !nch || !(ep->accepted & FL_F_DMA)) {
		fl_xo_set(ep, dir, fl_xo_default(dir), FL_XOVER_NO_DMA);
		return 0;
	}
	if (!ep->xo_va) {
		fl_xo_fail(ep, dir, "no buffer", -ENOMEM);
		return 0;
	}
	/* The ring part of the completion area: cq_entries x 64 bytes */
	sizes[0] = FL_XO_SMALL;
	sizes[1] = rounddown_pow_of_two(min_t(u64, FL_EP_XO_BUF,
					      (u64)ep->cq_entries * sizeof(struct fl_cqe)));
	if (sizes[1] <= sizes[0]) {
		fl_xo_fail(ep, dir, "completion ring too small", -ENOSPC);
		return 0;
	}
	dc = fl_xo_chan(ep, to_host);
	if (!dc) {
		fl_xo_fail(ep, dir, "no DMA channel free", -EBUSY);
		return 0;
	}
	/* Writes store zeros: the ring holds zeros where it was used */
	memset(ep->xo_va, 0, sizes[1]);
	ret = fl_xo_sample(ep, dc, to_host, sizes, best, &why);
	if (ret) {
		fl_xo_fail(ep, dir, why, ret);
		return ret == -EBUSY ? -EBUSY : 0;
	}

	cpu = fl_xo_line(sizes[0], best[0][0], sizes[1], best[0][1]);
	dma = fl_xo_line(sizes[0], best[1][0], sizes[1], best[1][1]);
	bytes = fl_xo_solve(&cpu, &dma, sizes[1], ep->slot_size);
	ep->xo[dir].last = bytes;
	ep->xo[dir].has_last = true;
	fl_xo_set(ep, dir, bytes, FL_XOVER_MEASURED);
	if (bytes > ep->slot_size)
		verdict = " (CPU for every frame)";
	else if (!bytes)
		verdict = " (DMA for every frame)";
	dev_info(ep->dev, "%s: %u bytes%s, measured: cpu " FL_XO_FMT ", dma " FL_XO_FMT
		 " (%s channel, %u and %u bytes, %s, %llu us)\n",
		 fl_xo_names[dir], bytes, verdict,
		 cpu.a_ns / 1000, cpu.a_ns % 1000 / 100, cpu.b_ps / 1000, cpu.b_ps % 1000,
		 dma.a_ns / 1000, dma.a_ns % 1000 / 100, dma.b_ps / 1000, dma.b_ps % 1000,
		 fl_xfer_backend_name(ep), sizes[0], sizes[1],
		 why ? why : "best of " __stringify(FL_XO_RUNS),
		 div_u64(ktime_get_ns() - t0, NSEC_PER_USEC));
	return 0;
}

/**
 * fl_xover_run() - measure the "auto" crossovers at enable
 * @ep: the endpoint (engine context, fl_cq_init() done, queues reset, nothing
 *	in flight, before the interrupt self-test and READY).
 *
 * Reads first, then writes, each bounded by the crossover_ms module parameter
 * (see the top of this file); a direction set in configfs is left alone.
 *
 * Return: 0, -EBUSY when a measuring DMA could not be proven stopped (the
 * ring may still be written), or -EINTR when the engine is being stopped:
 * either way the caller must not enable now.
 */
int fl_xover_run(struct fl_ep *ep)
{
	int dir, ret;

	for (dir = FL_XO_RD; dir <= FL_XO_WR; dir++) {
		if (kthread_should_stop())
			return -EINTR;
		ret = fl_xo_measure(ep, dir);
		if (ret)
			return ret;
	}
	return 0;
}
