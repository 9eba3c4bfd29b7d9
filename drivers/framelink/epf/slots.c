// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: frame slots, their owners and the app queues.
 *
 * The slots are one physically contiguous DMA API allocation on the
 * controller's device (epc->dev.parent), mmap()ed to the endpoint app.
 * slotmem.c chooses the memory at bind and logs it in one line: the region
 * the controller's DT node names "framelink-slots" when there is one (on the
 * Orin the reusable CMA region of dts/tegra234-...-framelink-ep.dtso; in the
 * VM the loop's own no-map pool, dts/qemu-virt.dtso), else the controller's
 * own pool, else CMA.
 *
 * The GPU: on Tegra234 the GPU reaches any DRAM page through its own MMU
 * (and the SMMU), so any of these sources is reachable in principle; CMA
 * pages are ordinary kernel pages. NOT verified: that CUDA can register the
 * app's mapping of the slots (a PFN map, not page-backed user memory) with
 * cudaHostRegister() or an equivalent, and which flag it needs; nothing here
 * was run on a board.
 *
 * Every slot has exactly one owner (enum fl_slot_state); the app can only
 * SUBMIT or POST a slot it owns (-EBUSY otherwise) and gets it back with a
 * completion it REAPs. Three FIFOs link the app and the engine: posted
 * slots, submitted frames and completions; all under ep->q_lock.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "epf.h"
#include "trace.h"

static u32 fl_fifo_len(const struct fl_fifo *f)
{
	return f->tail - f->head;
}

/**
 * fl_slots_alloc() - allocate the slots and every per-frame structure (bind)
 * @ep: the endpoint.
 *
 * Nothing on the data path allocates memory afterwards. The slot memory
 * comes from fl_slotmem_alloc(), which logs its source.
 *
 * Return: 0 or -ENOMEM (also when the region is too small for the slots).
 */
int fl_slots_alloc(struct fl_ep *ep)
{
	u32 cap = roundup_pow_of_two(ep->cfg.slots);
	/* the V4L2 buffers are posted and submitted through the same queues (v4l2*.c) */
	u32 pcap = roundup_pow_of_two(ep->cfg.slots + FL_EP_V4L2_BUFS);
	u32 i;

	ep->nslots = ep->cfg.slots;
	ep->nvbufs = 2 * FL_EP_V4L2_BUFS;
	ep->slot_size = PAGE_ALIGN(ep->cfg.slot_size);
	ep->slots_bytes = (size_t)ep->nslots * ep->slot_size;

	ep->slot = kcalloc(ep->nslots + ep->nvbufs, sizeof(*ep->slot), GFP_KERNEL);
	ep->posted = kcalloc(pcap, sizeof(*ep->posted), GFP_KERNEL);
	ep->subq = kcalloc(pcap, sizeof(*ep->subq), GFP_KERNEL);
	ep->compq = kcalloc(cap, sizeof(*ep->compq), GFP_KERNEL);
	ep->txx = kcalloc(ep->entries, sizeof(*ep->txx), GFP_KERNEL);
	ep->rxx = kcalloc(ep->entries, sizeof(*ep->rxx), GFP_KERNEL);
	ep->cq_batch = kcalloc(2 * ep->entries, sizeof(*ep->cq_batch), GFP_KERNEL);
	if (!ep->slot || !ep->posted || !ep->subq || !ep->compq || !ep->txx || !ep->rxx ||
	    !ep->cq_batch)
		goto free_meta;
	ep->post_fifo.mask = pcap - 1;
	ep->sub_fifo.mask = pcap - 1;
	ep->comp_fifo.mask = cap - 1;
	for (i = 0; i < ep->entries; i++) {
		ep->txx[i].ep = ep;
		ep->rxx[i].ep = ep;
	}

	if (fl_slotmem_alloc(ep))
		goto free_meta;
	return 0;

free_meta:
	fl_slots_free_meta(ep);
	return -ENOMEM;
}

/**
 * fl_slots_free() - free the slot memory (unbind, after user mappings are zapped)
 * @ep: the endpoint.
 */
void fl_slots_free(struct fl_ep *ep)
{
	fl_slotmem_free(ep);
}

/**
 * fl_slots_free_meta() - free the bookkeeping (last reference)
 * @ep: the endpoint.
 */
void fl_slots_free_meta(struct fl_ep *ep)
{
	kfree(ep->cq_batch);
	kfree(ep->rxx);
	kfree(ep->txx);
	kfree(ep->compq);
	kfree(ep->subq);
	kfree(ep->posted);
	kfree(ep->slot);
	ep->cq_batch = NULL;
	ep->rxx = NULL;
	ep->txx = NULL;
	ep->compq = NULL;
	ep->subq = NULL;
	ep->posted = NULL;
	ep->slot = NULL;
}

/**
 * struct fl_vma - one mmap() of the slots, shared by the VMAs split from it
 * @ep: the endpoint (alive: the VMA holds the file, the file (the device's, or an
 *	exported slot's dma-buf) holds @ep).
 * @node: in fl_ep.vmas until unbind has synchronized with it.
 * @mm: the address space it was made in (grabbed), to wait for its mmap() to finish.
 * @users: VMAs using it, plus one while unbind holds it; under fl_ep.files_lock.
 */
struct fl_vma {
	struct fl_ep *ep;
	struct list_head node;
	struct mm_struct *mm;
	int users;
};

static void fl_vma_put_locked(struct fl_ep *ep, struct fl_vma *v, struct list_head *dead)
{
	lockdep_assert_held(&ep->files_lock);
	if (--v->users)
		return;
	list_move(&v->node, dead);
}

/* Free what fl_vma_put_locked() collected, outside files_lock (mmdrop() may be heavy) */
static void fl_vma_free_list(struct list_head *dead)
{
	struct fl_vma *v, *tmp;

	list_for_each_entry_safe(v, tmp, dead, node) {
		list_del(&v->node);
		mmdrop(v->mm);
		kfree(v);
	}
}

/* A VMA split or moved from one of ours (fork does not copy: VM_DONTCOPY) */
static void fl_slots_vm_open(struct vm_area_struct *vma)
{
	struct fl_vma *v = vma->vm_private_data;
	struct fl_ep *ep = v->ep;

	mutex_lock(&ep->files_lock);
	v->users++;
	mutex_unlock(&ep->files_lock);
}

static void fl_slots_vm_close(struct vm_area_struct *vma)
{
	struct fl_vma *v = vma->vm_private_data;
	struct fl_ep *ep = v->ep;
	LIST_HEAD(dead);

	mutex_lock(&ep->files_lock);
	fl_vma_put_locked(ep, v, &dead);
	mutex_unlock(&ep->files_lock);
	fl_vma_free_list(&dead);
}

/*
 * User mappings are PFN maps without a fault handler: once zapped at unbind,
 * an access gets SIGBUS instead of reaching freed memory. open/close only
 * track which address spaces hold a mapping (fl_slots_sync_mmaps()).
 */
static const struct vm_operations_struct fl_slots_vm_ops = {
	.open = fl_slots_vm_open,
	.close = fl_slots_vm_close,
};

/**
 * fl_slots_mmap() - map slots to the app
 * @ep: the endpoint (caller holds files_lock and checked it is alive).
 * @vma: the mapping (MAP_SHARED); offset 0 is slot 0, slot i at i * slot_size.
 *
 * The DMA API chooses the page attributes, the same way it chose them for its
 * own mapping of the allocation: cacheable for a dma-coherent controller (the
 * Orin's), non-cacheable otherwise (slotmem.c says why, and the one
 * exception, a pool on a coherent device). Slots hold data only: no PROT_EXEC, now or
 * by a later mprotect().
 *
 * Return: 0, -EINVAL for a range outside the slots or a private mapping,
 * -EPERM for an executable one, -ENOMEM.
 */
int fl_slots_mmap(struct fl_ep *ep, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;

	lockdep_assert_held(&ep->files_lock);
	if (off >= ep->slots_bytes || len > ep->slots_bytes - off)
		return -EINVAL;
	return fl_slots_mmap_part(ep, vma, 0, ep->slots_bytes);
}

/**
 * fl_slots_mmap_part() - map part of the slot memory, tracked for unbind like fl_slots_mmap()
 * @ep: the endpoint (caller holds files_lock and checked it is alive).
 * @vma: the mapping; its vm_pgoff counts from @start, its range checked by the caller.
 * @start: first byte of the part (a slot's start for an exported slot, export.c).
 * @bytes: bytes of the part.
 *
 * Same rules as fl_slots_mmap(): shared, never executable, the DMA API's
 * memory type, zapped at unbind.
 *
 * Return: 0, -EINVAL for a private mapping, -EPERM for an executable one, -ENOMEM.
 */
int fl_slots_mmap_part(struct fl_ep *ep, struct vm_area_struct *vma, size_t start,
		       size_t bytes)
{
	struct fl_vma *v;
	int ret;

	lockdep_assert_held(&ep->files_lock);
	/*
	 * A private (copy-on-write) mapping would write to copies, not to the slots.
	 * VM_MAYSHARE, not VM_SHARED: mmap() clears VM_SHARED for a shared mapping of a
	 * file opened read-only (a read-only dma-buf), which can never become writable.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	ret = fl_slotmem_mmap(ep, vma, start, bytes);
	if (ret) {
		kfree(v);
		return ret;
	}
	/* Known before mmap() links the VMA, so unbind can wait for that (sync_mmaps) */
	v->ep = ep;
	v->mm = vma->vm_mm;
	mmgrab(v->mm);
	v->users = 1;
	list_add(&v->node, &ep->vmas);
	vma->vm_private_data = v;
	vma->vm_ops = &fl_slots_vm_ops;
	return 0;
}

/**
 * fl_slots_sync_mmaps() - wait until every mmap() of the slots has linked its VMA (unbind)
 * @ep: the endpoint, already marked dead (no new mapping); files_lock not held.
 *
 * ->mmap() runs before mmap() links the VMA into the file's mappings, so an
 * unmap_mapping_range() in between misses it and the slots would be freed
 * while still mapped. Every mapping made is listed with its address space;
 * taking that mmap_lock once waits for the mmap() call that holds it for
 * writing. Afterwards unmap_mapping_range() reaches every mapping. The lock
 * order is mmap_lock -> files_lock (->mmap, ->close), so files_lock is
 * dropped around the waits; the listed entries are held meanwhile.
 */
void fl_slots_sync_mmaps(struct fl_ep *ep)
{
	struct fl_vma *v;
	LIST_HEAD(dead);

	mutex_lock(&ep->files_lock);
	/* dead: no entry is added; held: none is removed while files_lock is dropped */
	list_for_each_entry(v, &ep->vmas, node)
		v->users++;
	mutex_unlock(&ep->files_lock);

	list_for_each_entry(v, &ep->vmas, node) {
		mmap_read_lock(v->mm);
		mmap_read_unlock(v->mm);
	}

	mutex_lock(&ep->files_lock);
	while (!list_empty(&ep->vmas)) {
		v = list_first_entry(&ep->vmas, struct fl_vma, node);
		list_del_init(&v->node);
		if (--v->users)
			continue;
		list_add(&v->node, &dead);
	}
	mutex_unlock(&ep->files_lock);
	fl_vma_free_list(&dead);
}

/*
 * POST and SUBMIT make the device the ioctl path's until its last close, unless a V4L2
 * device streams (v4l2.c, v4l2-out.c). fl_ep.q_lock held.
 */
static int fl_q_claim_ioctl(struct fl_ep *ep)
{
	if (ep->user & FL_EP_USER_V4L2) {
		dev_dbg_ratelimited(ep->dev, "ioctl refused: a V4L2 device streams\n");
		return -EBUSY;
	}
	ep->user = FL_EP_USER_IOCTL;
	return 0;
}

/**
 * fl_q_claim_v4l2() - a V4L2 device starts streaming (STREAMON)
 * @ep: the endpoint.
 * @user: %FL_EP_USER_V4L2_CAP or %FL_EP_USER_V4L2_OUT.
 *
 * The capture and the output device stream side by side; neither while an app holds the
 * ioctl path.
 *
 * Return: 0, -ENODEV after unbind, -EBUSY while the ioctl path holds the device.
 */
int fl_q_claim_v4l2(struct fl_ep *ep, u8 user)
{
	int ret = 0;

	spin_lock(&ep->q_lock);
	if (ep->dead)
		ret = -ENODEV;
	else if (ep->user & FL_EP_USER_IOCTL)
		ret = -EBUSY;
	else
		ep->user |= user;
	spin_unlock(&ep->q_lock);
	return ret;
}

/**
 * fl_q_drop_v4l2() - a V4L2 device stopped streaming (STREAMOFF)
 * @ep: the endpoint.
 * @user: as for fl_q_claim_v4l2().
 */
void fl_q_drop_v4l2(struct fl_ep *ep, u8 user)
{
	spin_lock(&ep->q_lock);
	ep->user &= ~user;
	spin_unlock(&ep->q_lock);
}

/**
 * fl_slot_dma() - where the DMA engine writes a frame for buffer index @idx
 * @ep: the endpoint.
 * @idx: a slot, or a V4L2 buffer index (from fl_ep.nslots), taken by the engine.
 *
 * Return: its DMA address on fl_ep.dma_dev.
 */
dma_addr_t fl_slot_dma(struct fl_ep *ep, u32 idx)
{
	if (idx < ep->nslots)
		return ep->slots_dma + (u64)idx * ep->slot_size;
	return ep->slot[idx].dma;
}

/**
 * fl_slot_va() - where a CPU copy writes or reads buffer index @idx
 * @ep: the endpoint.
 * @idx: as for fl_slot_dma().
 *
 * Return: its kernel address, or NULL for a V4L2 buffer without one.
 */
void *fl_slot_va(struct fl_ep *ep, u32 idx)
{
	if (idx < ep->nslots)
		return ep->slots_va + (u64)idx * ep->slot_size;
	return ep->slot[idx].va;
}

/**
 * fl_slot_len() - the longest frame buffer index @idx holds
 * @ep: the endpoint.
 * @idx: as for fl_slot_dma().
 *
 * Return: bytes.
 */
u32 fl_slot_len(struct fl_ep *ep, u32 idx)
{
	return idx < ep->nslots ? ep->slot_size : ep->slot[idx].len;
}

/**
 * fl_q_post_vbuf() - the V4L2 capture device posts one of its buffers (v4l2.c)
 * @ep: the endpoint.
 * @idx: fl_ep.nslots + its vb2 index.
 * @dma: its DMA address on fl_ep.dma_dev.
 * @va: its kernel address, or NULL.
 * @len: its length.
 *
 * Return: 0, -ENODEV after unbind, -EBUSY when the capture device does not stream
 * (fl_q_claim_v4l2()) or the buffer is posted already.
 */
int fl_q_post_vbuf(struct fl_ep *ep, u32 idx, dma_addr_t dma, void *va, u32 len)
{
	struct fl_slot *sl = &ep->slot[idx];
	int ret = 0;

	spin_lock(&ep->q_lock);
	if (ep->dead) {
		ret = -ENODEV;
	} else if (!(ep->user & FL_EP_USER_V4L2_CAP) || sl->state != FL_SLOT_APP) {
		ret = -EBUSY;
	} else {
		/* the engine reads these after taking the index, under this lock */
		sl->dma = dma;
		sl->va = va;
		sl->len = len;
		sl->state = FL_SLOT_POSTED;
		sl->ts_post = ktime_get_ns();
		ep->posted[ep->post_fifo.tail++ & ep->post_fifo.mask] = idx;
	}
	spin_unlock(&ep->q_lock);
	return ret;
}

/**
 * fl_q_unpost_vbufs() - take back every posted V4L2 buffer (STREAMOFF)
 * @ep: the endpoint.
 * @out: their indices, room for fl_ep.nvbufs.
 *
 * Posted slots stay posted, in their order (there are none while V4L2 streams).
 *
 * Return: how many were taken back.
 */
u32 fl_q_unpost_vbufs(struct fl_ep *ep, u32 *out)
{
	u32 n, i, idx, got = 0;

	spin_lock(&ep->q_lock);
	n = fl_fifo_len(&ep->post_fifo);
	for (i = 0; i < n; i++) {
		idx = ep->posted[ep->post_fifo.head++ & ep->post_fifo.mask];
		if (idx < ep->nslots) {
			ep->posted[ep->post_fifo.tail++ & ep->post_fifo.mask] = idx;
			continue;
		}
		ep->slot[idx].state = FL_SLOT_APP;
		out[got++] = idx;
	}
	spin_unlock(&ep->q_lock);
	return got;
}

/**
 * fl_q_submit_vbuf() - the V4L2 output device sends one of its buffers (v4l2-out.c)
 * @ep: the endpoint.
 * @f: the frame; @f->buf is its buffer index, fl_ep.nslots + %FL_EP_V4L2_BUFS + vb2 index.
 * @dma: the buffer's DMA address on fl_ep.dma_dev.
 * @va: its kernel address, or NULL.
 * @len: its length.
 *
 * Return: 0, -ENODEV after unbind, -EBUSY when the output device does not stream
 * (fl_q_claim_v4l2()) or the buffer is queued already, -ENOLINK while the link is down.
 */
int fl_q_submit_vbuf(struct fl_ep *ep, const struct fl_frame *f, dma_addr_t dma, void *va,
		     u32 len)
{
	struct fl_slot *sl = &ep->slot[f->buf];
	int ret = 0;

	spin_lock(&ep->q_lock);
	if (ep->dead) {
		ret = -ENODEV;
	} else if (!(ep->user & FL_EP_USER_V4L2_OUT) || sl->state != FL_SLOT_APP) {
		ret = -EBUSY;
	} else if (!ep->engine_up) {
		ret = -ENOLINK;
	} else {
		/* the engine reads these after taking the frame, under this lock */
		sl->dma = dma;
		sl->va = va;
		sl->len = len;
		sl->state = FL_SLOT_QUEUED;
		trace_fl_ep_submit(ep->id, f->buf, f->bytes, f->cookie);
		ep->subq[ep->sub_fifo.tail++ & ep->sub_fifo.mask] = (struct fl_sub){
			.slot = f->buf, .bytes = f->bytes, .flags = f->flags,
			.cookie = f->cookie, .ts_submit = ktime_get_ns(),
		};
	}
	spin_unlock(&ep->q_lock);
	return ret;
}

/**
 * fl_q_unsubmit_vbufs() - take back every V4L2 frame the engine has not taken (STREAMOFF)
 * @ep: the endpoint.
 * @out: their buffer indices, room for %FL_EP_V4L2_BUFS.
 *
 * Other frames stay submitted, in their order (there are none while V4L2 streams). The
 * engine peeks before it takes (fl_q_peek_sub()): the head moved, so it looks again.
 *
 * Return: how many were taken back.
 */
u32 fl_q_unsubmit_vbufs(struct fl_ep *ep, u32 *out)
{
	u32 n, i, got = 0;
	struct fl_sub s;

	spin_lock(&ep->q_lock);
	n = fl_fifo_len(&ep->sub_fifo);
	for (i = 0; i < n; i++) {
		s = ep->subq[ep->sub_fifo.head++ & ep->sub_fifo.mask];
		if (s.slot < ep->nslots || got == FL_EP_V4L2_BUFS) {
			ep->subq[ep->sub_fifo.tail++ & ep->sub_fifo.mask] = s;
			continue;
		}
		ep->slot[s.slot].state = FL_SLOT_APP;
		out[got++] = s.slot;
	}
	spin_unlock(&ep->q_lock);
	return got;
}

/**
 * fl_q_post() - the app gives a slot for a frame from the host (FL_IOC_POST)
 * @ep: the endpoint.
 * @idx: slot index.
 *
 * Return: 0, -EINVAL for a bad index, -EBUSY when the app does not own it,
 * -ENODEV after unbind.
 */
int fl_q_post(struct fl_ep *ep, u32 idx)
{
	int ret = 0;

	if (idx >= ep->nslots)
		return -EINVAL;
	spin_lock(&ep->q_lock);
	if (ep->dead) {
		ret = -ENODEV;
	} else if (ep->slot[idx].state != FL_SLOT_APP || fl_q_claim_ioctl(ep)) {
		ret = -EBUSY;
	} else {
		ep->slot[idx].state = FL_SLOT_POSTED;
		ep->slot[idx].ts_post = ktime_get_ns();
		ep->posted[ep->post_fifo.tail++ & ep->post_fifo.mask] = idx;
	}
	spin_unlock(&ep->q_lock);
	return ret;
}

/**
 * fl_q_submit() - the app sends a frame (FL_IOC_SUBMIT)
 * @ep: the endpoint.
 * @f: the frame, copied from user space.
 *
 * Return: 0, -EINVAL for a bad index, flags or reserved field or a size of 0
 * (as the host), -EMSGSIZE above the slot size, -EBUSY when the app does not
 * own the slot, -ENOLINK while the link is down, -ENODEV after unbind.
 */
int fl_q_submit(struct fl_ep *ep, const struct fl_frame *f)
{
	int ret = 0;

	if (f->buf >= ep->nslots || f->reserved || (f->flags & ~FL_FRAME_FLAGS) || !f->bytes)
		return -EINVAL;
	if (f->bytes > ep->slot_size)
		return -EMSGSIZE;
	spin_lock(&ep->q_lock);
	if (ep->dead) {
		ret = -ENODEV;
	} else if (ep->slot[f->buf].state != FL_SLOT_APP || fl_q_claim_ioctl(ep)) {
		ret = -EBUSY;
	} else if (!ep->engine_up) {
		ret = -ENOLINK;
	} else {
		struct fl_sub *s = &ep->subq[ep->sub_fifo.tail++ & ep->sub_fifo.mask];

		trace_fl_ep_submit(ep->id, f->buf, f->bytes, f->cookie);
		ep->slot[f->buf].state = FL_SLOT_QUEUED;
		*s = (struct fl_sub){
			.slot = f->buf, .bytes = f->bytes, .flags = f->flags,
			.cookie = f->cookie, .ts_submit = ktime_get_ns(),
		};
	}
	spin_unlock(&ep->q_lock);
	return ret;
}

/**
 * fl_q_take_posted() - the engine takes a posted slot for a frame from the host
 * @ep: the endpoint.
 * @ts_post: out: when it was posted.
 *
 * Return: the slot index, or %FL_EP_NO_SLOT when none is posted.
 */
u32 fl_q_take_posted(struct fl_ep *ep, u64 *ts_post)
{
	u32 idx = FL_EP_NO_SLOT;

	spin_lock(&ep->q_lock);
	if (fl_fifo_len(&ep->post_fifo)) {
		idx = ep->posted[ep->post_fifo.head++ & ep->post_fifo.mask];
		ep->slot[idx].state = FL_SLOT_RX;
		*ts_post = ep->slot[idx].ts_post;
	}
	spin_unlock(&ep->q_lock);
	return idx;
}

/**
 * fl_q_peek_sub() - the next frame the app submitted, left in the queue
 * @ep: the endpoint.
 * @sub: out: the frame, and in @sub->pos its place in the queue for fl_q_pop_sub().
 *
 * Return: false when nothing is submitted.
 */
bool fl_q_peek_sub(struct fl_ep *ep, struct fl_sub *sub)
{
	bool ret = false;

	spin_lock(&ep->q_lock);
	if (fl_fifo_len(&ep->sub_fifo)) {
		*sub = ep->subq[ep->sub_fifo.head & ep->sub_fifo.mask];
		sub->pos = ep->sub_fifo.head;
		ret = true;
	}
	spin_unlock(&ep->q_lock);
	return ret;
}

/**
 * fl_q_pop_sub() - the engine takes the frame fl_q_peek_sub() returned
 * @ep: the endpoint.
 * @sub: what fl_q_peek_sub() returned.
 *
 * The queue may have changed since the peek: the last close gives queued
 * frames back to the app (fl_q_release_all()) and a reopened file may submit
 * other slots. The head index is free-running, so the frame is still the one
 * peeked exactly when the head has not moved; otherwise nothing is taken and
 * the engine must not send @sub.
 *
 * Return: true when @sub was taken (its slot is now %FL_SLOT_TX).
 */
bool fl_q_pop_sub(struct fl_ep *ep, const struct fl_sub *sub)
{
	bool ret = false;

	spin_lock(&ep->q_lock);
	if (fl_fifo_len(&ep->sub_fifo) && ep->sub_fifo.head == sub->pos) {
		struct fl_sub *s = &ep->subq[ep->sub_fifo.head++ & ep->sub_fifo.mask];

		ep->slot[s->slot].state = FL_SLOT_TX;
		ret = true;
	}
	spin_unlock(&ep->q_lock);
	return ret;
}

/* Queue a completion for the app, or give the slot back if nobody listens */
static void fl_q_push_completion(struct fl_ep *ep, const struct fl_completion *c)
{
	lockdep_assert_held(&ep->q_lock);
	if (!ep->openers || ep->dead) {
		ep->slot[c->buf].state = FL_SLOT_APP;
		return;
	}
	ep->slot[c->buf].state = FL_SLOT_DONE;
	ep->compq[ep->comp_fifo.tail++ & ep->comp_fifo.mask] = *c;
}

/**
 * fl_q_complete() - hand a finished frame's slot back to the app
 * @ep: the endpoint.
 * @x: the transfer (with a slot).
 * @queue: %FL_Q_TX (the app's frame went to the host) or %FL_Q_RX (a frame arrived).
 * @status: 0 or a negative errno.
 */
void fl_q_complete(struct fl_ep *ep, const struct fl_xfer *x, u32 queue, int status)
{
	struct fl_completion c = {
		.buf = x->slot,
		.bytes = x->bytes,
		.queue = queue,
		.status = status,
		.flags = x->flags,
		.seq = x->seq,
		.cookie = x->cookie,
		.ts_submit = x->ts_submit,
		.ts_dma_start = x->ts_start,
		.ts_dma_done = x->ts_done,
		.ts_delivered = ktime_get_ns(),
	};

	if (status) {
		fl_stat_add(ep, FL_STAT_ERRORS, 1);
	} else if (queue == FL_Q_TX) {
		fl_stat_add(ep, FL_STAT_TX_FRAMES, 1);
		fl_stat_add(ep, FL_STAT_TX_BYTES, x->bytes);
	} else {
		fl_stat_add(ep, FL_STAT_RX_FRAMES, 1);
		fl_stat_add(ep, FL_STAT_RX_BYTES, x->bytes);
	}
	/* a V4L2 buffer's frame goes to videobuf2, not to REAP */
	if (x->slot >= ep->nslots) {
		spin_lock(&ep->q_lock);
		ep->slot[x->slot].state = FL_SLOT_APP;
		spin_unlock(&ep->q_lock);
		if (queue == FL_Q_TX)
			fl_ep_vout_done(ep, &c);
		else
			fl_ep_v4l2_rx_done(ep, &c);
		return;
	}
	spin_lock(&ep->q_lock);
	fl_q_push_completion(ep, &c);
	spin_unlock(&ep->q_lock);
	wake_up_interruptible(&ep->app_wq);
}

/**
 * fl_q_cancel_submitted() - fail every submitted frame not yet taken (reset, link down)
 * @ep: the endpoint.
 */
void fl_q_cancel_submitted(struct fl_ep *ep)
{
	u64 now = ktime_get_ns();
	u32 n = 0;

	spin_lock(&ep->q_lock);
	while (fl_fifo_len(&ep->sub_fifo)) {
		struct fl_sub *s = &ep->subq[ep->sub_fifo.head++ & ep->sub_fifo.mask];
		struct fl_completion c = {
			.buf = s->slot, .bytes = s->bytes, .queue = FL_Q_TX,
			.status = -ECANCELED, .flags = s->flags, .cookie = s->cookie,
			.ts_submit = s->ts_submit, .ts_delivered = now,
		};

		n++;
		if (s->slot < ep->nslots) {
			fl_q_push_completion(ep, &c);
			continue;
		}
		/* a V4L2 buffer goes back to videobuf2, which takes its own locks */
		ep->slot[s->slot].state = FL_SLOT_APP;
		spin_unlock(&ep->q_lock);
		fl_ep_vout_done(ep, &c);
		spin_lock(&ep->q_lock);
	}
	spin_unlock(&ep->q_lock);
	if (n) {
		fl_stat_add(ep, FL_STAT_ERRORS, n);
		wake_up_interruptible(&ep->app_wq);
	}
}

/* Posted slots and submitted frames not yet taken are the app's again */
static void fl_q_release_pending_locked(struct fl_ep *ep)
{
	lockdep_assert_held(&ep->q_lock);
	while (fl_fifo_len(&ep->post_fifo))
		ep->slot[ep->posted[ep->post_fifo.head++ & ep->post_fifo.mask]].state =
			FL_SLOT_APP;
	while (fl_fifo_len(&ep->sub_fifo))
		ep->slot[ep->subq[ep->sub_fifo.head++ & ep->sub_fifo.mask].slot].state =
			FL_SLOT_APP;
}

/**
 * fl_q_release_pending() - unbind: posted and submitted slots are the app's again
 * @ep: the endpoint (engine stopped).
 *
 * Completions stay queued: REAP hands them out after the unbind (frames in
 * flight then completed ECANCELED), and only then says -ENODEV.
 */
void fl_q_release_pending(struct fl_ep *ep)
{
	spin_lock(&ep->q_lock);
	fl_q_release_pending_locked(ep);
	spin_unlock(&ep->q_lock);
}

/**
 * fl_q_release_all() - the last file closed: every slot the app left queued is its again
 * @ep: the endpoint.
 *
 * Posted slots, submitted frames not yet taken and unreaped completions go
 * back to the app; slots the engine is copying return when it finishes.
 */
void fl_q_release_all(struct fl_ep *ep)
{
	spin_lock(&ep->q_lock);
	/* what is posted or submitted belongs to the V4L2 devices while they stream */
	if (!(ep->user & FL_EP_USER_V4L2))
		fl_q_release_pending_locked(ep);
	ep->user &= ~FL_EP_USER_IOCTL;
	while (fl_fifo_len(&ep->comp_fifo))
		ep->slot[ep->compq[ep->comp_fifo.head++ & ep->comp_fifo.mask].buf].state =
			FL_SLOT_APP;
	spin_unlock(&ep->q_lock);
}

/**
 * fl_q_submitted() - frames the app submitted that the engine has not taken yet
 * @ep: the endpoint.
 *
 * Return: the length of the submission queue.
 */
u32 fl_q_submitted(struct fl_ep *ep)
{
	u32 n;

	spin_lock(&ep->q_lock);
	n = fl_fifo_len(&ep->sub_fifo);
	spin_unlock(&ep->q_lock);
	return n;
}

/**
 * fl_q_peek_completions() - copy queued completions without taking them
 * @ep: the endpoint (caller holds reap_lock).
 * @out: where to copy.
 * @max: room at @out.
 *
 * Return: completions copied.
 */
u32 fl_q_peek_completions(struct fl_ep *ep, struct fl_completion *out, u32 max)
{
	u32 n, i;

	spin_lock(&ep->q_lock);
	n = min(max, fl_fifo_len(&ep->comp_fifo));
	for (i = 0; i < n; i++)
		out[i] = ep->compq[(ep->comp_fifo.head + i) & ep->comp_fifo.mask];
	spin_unlock(&ep->q_lock);
	return n;
}

/**
 * fl_q_drop_completions() - the app has the first @n completions: its slots are its own
 * @ep: the endpoint (caller holds reap_lock).
 * @n: completions delivered.
 */
void fl_q_drop_completions(struct fl_ep *ep, u32 n)
{
	spin_lock(&ep->q_lock);
	while (n-- && fl_fifo_len(&ep->comp_fifo))
		ep->slot[ep->compq[ep->comp_fifo.head++ & ep->comp_fifo.mask].buf].state =
			FL_SLOT_APP;
	spin_unlock(&ep->q_lock);
}
