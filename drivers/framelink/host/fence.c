// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: implicit fences of imported dma-bufs (issue 27, item 3.8).
 *
 * A dma-buf's reservation object (dma_resv) carries the fences of the work that uses it:
 * a camera or GPU still writing it has a write fence there, a device reading it a read
 * fence. framelink honours both sides:
 *  - SUBMIT of an import waits, bounded, for the buffer's write fences (import.c), so the
 *    endpoint never reads a half-written frame;
 *  - while the endpoint may read the frame (SUBMIT to its completion or failure), the
 *    buffer carries a read fence of ours, so a writer that follows implicit sync (a GPU
 *    driver, vgem) waits for the endpoint to finish before it writes the buffer again.
 *
 * No allocation per frame: every import owns FL_RFENCES fences, allocated at IMPORT. A
 * fence is used again only when nobody else holds it (its reference count is ours alone)
 * and an RCU grace period has passed since it left the dma_resv: a dma_resv reader may
 * have loaded the pointer under RCU before then and take a reference (dma_fence_get_rcu())
 * after; it checks the dma_resv's sequence afterwards and retries, but its reference must
 * not meet a fence we re-initialised. Frames from one import are in flight one at a time
 * (the buffer is the endpoint's until completion), so two can alternate; should all be
 * held elsewhere (sync_files exported from the buffer, say) or inside a grace period, one
 * is allocated then. dma_resv_reserve_fences() also allocates, when the object's fence list
 * is full.
 *
 * The fences have no release op: the dma-fence core frees them (kfree_rcu of the first
 * member), so a fence a dma_resv or a sync_file holds after this module went away never
 * calls back into it for its release. At the release of an import our fences are replaced
 * in the dma_resv by the core's signalled stub fence where the kernel can
 * (dma_resv_replace_fences(), 5.19); the names (get_driver_name) of a fence still held
 * elsewhere are this module's, as with any module's fences.
 *
 * Copyright (C) 2026 The framelink authors
 */
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "host.h"

/**
 * struct fl_rfence - one read fence
 * @base: the fence; first, so that the dma-fence core's kfree_rcu() frees all of this.
 * @lock: the fence's lock, in the same allocation so that it lives as long as the fence.
 * @left: get_state_synchronize_rcu() cookie taken when the fence left (or may have left)
 *	the dma_resv; valid while @used.
 * @used: initialised at least once.
 */
struct fl_rfence {
	struct dma_fence base;
	spinlock_t lock;	/* protects @base's callbacks (dma-fence core) */
	unsigned long left;
	bool used;
};

static const char *fl_rfence_driver(struct dma_fence *f)
{
	return "framelink-host";
}

static const char *fl_rfence_timeline(struct dma_fence *f)
{
	return "endpoint-read";
}

static const struct dma_fence_ops fl_rfence_ops = {
	.get_driver_name = fl_rfence_driver,
	.get_timeline_name = fl_rfence_timeline,
};

static struct fl_rfence *fl_rfence_alloc(void)
{
	struct fl_rfence *rf = kzalloc(sizeof(*rf), GFP_KERNEL);

	if (rf)
		spin_lock_init(&rf->lock);
	return rf;
}

/**
 * fl_rfences_init() - allocate an import's read fences (FL_IOC_IMPORT)
 * @rfs: the import's fences, zeroed.
 *
 * Return: 0 or -ENOMEM.
 */
int fl_rfences_init(struct fl_rfences *rfs)
{
	int i;

	rfs->context = dma_fence_context_alloc(1);
	for (i = 0; i < FL_RFENCES; i++) {
		rfs->pool[i] = fl_rfence_alloc();
		if (!rfs->pool[i]) {
			fl_rfences_fini(rfs, NULL);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Nobody but us holds @rf and no RCU reader can still find it: it may be initialised. */
static bool fl_rfence_free(struct fl_rfence *rf)
{
	if (kref_read(&rf->base.refcount) > 1)
		return false;
	return !rf->used || poll_state_synchronize_rcu(rf->left);
}

/* A fence to use; a new one (replacing a busy pool entry) when all are held elsewhere. */
static struct fl_rfence *fl_rfence_pick(struct fl_rfences *rfs)
{
	struct fl_rfence *rf;
	int i, busy = -1;

	for (i = 0; i < FL_RFENCES; i++) {
		rf = rfs->pool[i];
		if (rf == rfs->last)
			continue;
		if (fl_rfence_free(rf))
			return rf;
		busy = i;
	}
	rf = fl_rfence_alloc();
	if (!rf || busy < 0)
		return rf;
	/* the old one lives on with its other holders, freed by the core */
	if (rfs->pool[busy]->used)
		dma_fence_put(&rfs->pool[busy]->base);
	else
		kfree(rfs->pool[busy]);
	rfs->pool[busy] = rf;
	return rf;
}

/**
 * fl_rfences_begin() - the endpoint may read the buffer from now on: publish a read fence
 * @rfs: the import's fences; the caller serialises (fl_host.lock).
 * @resv: the dma-buf's reservation object.
 *
 * Atomic with the check of the write fences (both under the dma_resv lock): a writer that
 * adds its fence later sees ours and waits.
 *
 * Return: 0; -EINPROGRESS when a write fence is unsignalled (nothing published: the caller
 * waits with fl_rfences_wait_writers() and tries again); -ENOMEM.
 */
int fl_rfences_begin(struct fl_rfences *rfs, struct dma_resv *resv)
{
	struct fl_rfence *rf;
	int ret;

	if (WARN_ON_ONCE(rfs->busy))
		return -EBUSY;
	dma_resv_lock(resv, NULL);
	if (!fl_resv_writers_done(resv)) {
		ret = -EINPROGRESS;
		goto unlock;
	}
	rf = fl_rfence_pick(rfs);
	if (!rf) {
		ret = -ENOMEM;
		goto unlock;
	}
	dma_fence_init(&rf->base, &fl_rfence_ops, &rf->lock, rfs->context, rfs->seqno + 1);
	ret = fl_resv_add_reader(resv, &rf->base);
	if (ret) {
		/* never published: signalled, so that it counts as free again */
		dma_fence_signal(&rf->base);
		rf->used = true;
		rf->left = get_state_synchronize_rcu();
		goto unlock;
	}
	rfs->seqno++;
	/* the previous fence of this context has just been replaced, or was dropped earlier */
	if (rfs->last)
		rfs->last->left = get_state_synchronize_rcu();
	rf->used = true;
	rfs->last = rf;
	rfs->busy = rf;
unlock:
	dma_resv_unlock(resv);
	return ret;
}

/**
 * fl_rfences_end() - the endpoint reads the buffer no more: signal the read fence
 * @rfs: the import's fences; the caller serialises (fl_host.lock).
 */
void fl_rfences_end(struct fl_rfences *rfs)
{
	if (!rfs->busy)
		return;
	dma_fence_signal(&rfs->busy->base);
	rfs->busy = NULL;
}

/**
 * fl_rfences_fini() - release an import's read fences
 * @rfs: the import's fences; none busy any more (the busy one is signalled here).
 * @resv: the dma-buf's reservation object, or %NULL when no fence was ever published.
 */
void fl_rfences_fini(struct fl_rfences *rfs, struct dma_resv *resv)
{
	int i;

	fl_rfences_end(rfs);
	if (resv && rfs->last) {
		dma_resv_lock(resv, NULL);
		fl_resv_drop_context(resv, rfs->context);
		dma_resv_unlock(resv);
	}
	for (i = 0; i < FL_RFENCES; i++) {
		if (!rfs->pool[i])
			continue;
		if (rfs->pool[i]->used)
			dma_fence_put(&rfs->pool[i]->base);
		else
			kfree(rfs->pool[i]);
		rfs->pool[i] = NULL;
	}
	rfs->last = NULL;
}

/**
 * fl_rfences_wait_writers() - wait for the write fences of a dma-buf
 * @resv: its reservation object (the caller holds a dma-buf reference).
 * @timeout: jiffies, at least 1.
 *
 * Return: 0 once signalled; -ETIMEDOUT; -EINTR (a signal: not restarted, as SUBMIT may
 * have queued frames before this one).
 */
int fl_rfences_wait_writers(struct dma_resv *resv, unsigned long timeout)
{
	long ret = fl_resv_wait_writers(resv, timeout);

	if (ret > 0)
		return 0;
	return ret ? -EINTR : -ETIMEDOUT;
}
