// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: /dev/framelink-ep<N>, the endpoint app's queue API.
 *
 * The ioctls of include/uapi/linux/framelink.h, identical to the host's:
 * INFO, SUBMIT (batch), POST (batch), REAP (batch, bounded interruptible
 * wait), STATS; EXPORT (a slot as a dma-buf, endpoint only: export.c);
 * poll() readiness; mmap() of the slots at fl_info.mmap_offset. Batches
 * stop at the first bad entry: @done is its index and the entries before
 * it were accepted.
 *
 * A call that fails has had no effect (the host's rule too): what the call
 * writes back (fl_batch.done, fl_reap.count, the completions) is proven
 * writable or written before anything is queued or consumed, so -EFAULT
 * never comes after a change. SUBMIT and POST write @done = 0 first;
 * REAP copies each chunk of completions and the new count out before it
 * takes them off the queue, so a fault later in a call returns the
 * completions already counted, with success.
 *
 * Lifetime: every open file and every exported dma-buf holds a reference on
 * struct fl_ep. Unbind unregisters the device, zaps user mappings, those of
 * exported dma-bufs too (later accesses get SIGBUS), and frees the slots;
 * files still open get -ENODEV until closed, REAP only once it has handed
 * out the completions queued before (frames in flight: ECANCELED).
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "epf.h"

#define FL_BATCH_CHUNK	16	/* entries copied from user space at a time */
#define FL_REAP_CHUNK	8	/* completions copied to user space at a time */

static DEFINE_IDA(fl_ep_ida);

/**
 * struct fl_ep_file - one open file
 * @ep: the endpoint (a reference).
 * @file: the file (its mapping is zapped at unbind).
 * @node: in fl_ep.files, under fl_ep.files_lock.
 */
struct fl_ep_file {
	struct fl_ep *ep;
	struct file *file;
	struct list_head node;
};

static void fl_ep_release_ref(struct kref *ref)
{
	struct fl_ep *ep = container_of(ref, struct fl_ep, ref);

	fl_slots_free_meta(ep);
	mutex_destroy(&ep->reap_lock);
	mutex_destroy(&ep->files_lock);
	mutex_destroy(&ep->life_lock);
	kfree(ep);
}

/**
 * fl_ep_put() - drop a reference; the last frees the bookkeeping
 * @ep: the endpoint.
 */
void fl_ep_put(struct fl_ep *ep)
{
	kref_put(&ep->ref, fl_ep_release_ref);
}

static int fl_cdev_open(struct inode *inode, struct file *file)
{
	/* misc_open() set private_data to the miscdevice, under misc_mtx */
	struct fl_ep *ep = container_of(file->private_data, struct fl_ep, misc);
	struct fl_ep_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	/* Under misc_mtx: files_lock, not life_lock (held around EPC calls) */
	mutex_lock(&ep->files_lock);
	if (ep->dead) {
		mutex_unlock(&ep->files_lock);
		kfree(f);
		return -ENODEV;
	}
	kref_get(&ep->ref);
	f->ep = ep;
	f->file = file;
	list_add(&f->node, &ep->files);
	spin_lock(&ep->q_lock);
	ep->openers++;
	spin_unlock(&ep->q_lock);
	mutex_unlock(&ep->files_lock);
	file->private_data = f;
	return stream_open(inode, file);
}

static int fl_cdev_release(struct inode *inode, struct file *file)
{
	struct fl_ep_file *f = file->private_data;
	struct fl_ep *ep = f->ep;
	bool last;

	mutex_lock(&ep->files_lock);
	list_del(&f->node);
	spin_lock(&ep->q_lock);
	last = --ep->openers == 0;
	spin_unlock(&ep->q_lock);
	/* Nobody can reap any more: queued slots are the app's again */
	if (last)
		fl_q_release_all(ep);
	mutex_unlock(&ep->files_lock);
	kfree(f);
	fl_ep_put(ep);
	return 0;
}

static int fl_ioc_info(struct fl_ep *ep, void __user *arg)
{
	struct fl_info info = {
		.abi_version = FL_ABI_VERSION,
		.role = FL_ROLE_ENDPOINT,
		.nbufs = ep->nslots,
		.buf_size = ep->slot_size,
		.mmap_offset = 0,
		.tx_depth = ep->nslots,
		.rx_depth = ep->nslots,
		.notify = FL_NOTIFY_POLL,
		/* export.o is linked exactly where the kernel has dma-buf (Kbuild) */
		.caps = IS_ENABLED(CONFIG_DMA_SHARED_BUFFER) ? FL_CAP_EXPORT : 0,
	};

	info.crossover_how = fl_xover_info(ep, &info.crossover, &info.rd_crossover);
	mutex_lock(&ep->life_lock);
	info.features = ep->state == FL_STATE_READY ? ep->accepted : ep->offered;
	info.dma_rd_channels = ep->nrd;
	info.dma_wr_channels = ep->nwr;
	info.xfer_backend = fl_xfer_backend_id(ep);
	if (ep->notify)
		info.notify = ep->notify->notify;
	mutex_unlock(&ep->life_lock);
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/* Every counter lands in its struct fl_stats field, in order */
static_assert(ARRAY_SIZE(((struct fl_ep_stats *)0)->c) ==
	      offsetof(struct fl_stats, batch_irqs) / sizeof(__u64) + 1);

static int fl_ioc_stats(struct fl_ep *ep, void __user *arg)
{
	struct fl_stats st = {};
	u64 *v = &st.tx_frames;
	int i;

	for (i = 0; i < ARRAY_SIZE(ep->stats.c); i++)
		v[i] = atomic64_read(&ep->stats.c[i]);
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static int fl_ioc_batch(struct fl_ep *ep, void __user *arg, bool submit)
{
	struct fl_batch __user *ub = arg;
	struct fl_batch b;
	u32 done = 0;
	int ret = 0;

	if (copy_from_user(&b, ub, sizeof(b)))
		return -EFAULT;
	if (b.flags || b.reserved || !b.count || b.count > FL_RING_MAX_ENTRIES)
		return -EINVAL;
	/* @done must be writable before anything is queued: fail with no effect */
	if (put_user(0U, &ub->done))
		return -EFAULT;

	while (done < b.count && !ret) {
		u32 n = min_t(u32, b.count - done, FL_BATCH_CHUNK), i;

		if (submit) {
			struct fl_frame fr[FL_BATCH_CHUNK];

			if (copy_from_user(fr, u64_to_user_ptr(b.ptr) + done * sizeof(*fr),
					   n * sizeof(*fr))) {
				ret = -EFAULT;
				break;
			}
			for (i = 0; i < n && !ret; i++) {
				ret = fl_q_submit(ep, &fr[i]);
				if (!ret)
					done++;
			}
		} else {
			u32 idx[FL_BATCH_CHUNK];

			if (copy_from_user(idx, u64_to_user_ptr(b.ptr) + done * sizeof(*idx),
					   n * sizeof(*idx))) {
				ret = -EFAULT;
				break;
			}
			for (i = 0; i < n && !ret; i++) {
				ret = fl_q_post(ep, idx[i]);
				if (!ret)
					done++;
			}
		}
	}
	if (done)
		fl_engine_kick(ep);
	/*
	 * Proven writable above; if another thread unmapped it meanwhile, the
	 * frames are queued all the same and the result must say so, not -EFAULT.
	 */
	if (put_user(done, &ub->done))
		dev_dbg_ratelimited(ep->dev, "batch: done no longer writable\n");
	return ret;
}

/* Something to reap, or a reason to stop waiting */
static bool fl_reap_ready(struct fl_ep *ep, u32 epoch)
{
	bool ret;

	spin_lock(&ep->q_lock);
	ret = ep->comp_fifo.tail != ep->comp_fifo.head || ep->dead ||
	      ep->link_epoch != epoch;
	spin_unlock(&ep->q_lock);
	return ret;
}

static int fl_ioc_reap(struct fl_ep *ep, void __user *arg)
{
	struct fl_reap __user *ur = arg;
	struct fl_completion c[FL_REAP_CHUNK];
	struct fl_reap r;
	u32 count = 0, epoch;
	long left;
	int ret = 0;

	if (copy_from_user(&r, ur, sizeof(r)))
		return -EFAULT;
	if (r.flags || r.reserved || !r.max || r.max > FL_RING_MAX_ENTRIES ||
	    r.timeout_ms < 0 || r.timeout_ms > FL_REAP_MAX_TIMEOUT_MS)
		return -EINVAL;

	spin_lock(&ep->q_lock);
	epoch = ep->link_epoch;
	spin_unlock(&ep->q_lock);
	if (r.timeout_ms) {
		left = wait_event_interruptible_timeout(ep->app_wq, fl_reap_ready(ep, epoch),
							msecs_to_jiffies(r.timeout_ms));
		if (left < 0)
			return left;
	}

	/* count must be writable before anything is consumed: fail with no effect */
	if (put_user(0U, &ur->count))
		return -EFAULT;
	mutex_lock(&ep->reap_lock);
	while (count < r.max) {
		u32 n = fl_q_peek_completions(ep, c, min_t(u32, r.max - count, FL_REAP_CHUNK));

		if (!n)
			break;
		/* Entries and the new count out first; only then off the queue */
		if (copy_to_user(u64_to_user_ptr(r.ptr) + count * sizeof(*c), c,
				 n * sizeof(*c)) || put_user(count + n, &ur->count)) {
			ret = -EFAULT;
			break;
		}
		fl_q_drop_completions(ep, n);
		count += n;
	}
	mutex_unlock(&ep->reap_lock);

	if (!count && !ret) {
		spin_lock(&ep->q_lock);
		if (ep->dead)
			ret = -ENODEV;
		else if (ep->link_epoch != epoch)
			ret = -ENOLINK;
		spin_unlock(&ep->q_lock);
	}
	/* count is already in user memory: completions taken are reported, not lost */
	return count ? 0 : ret;
}

/* FL_IOC_EXPORT: the request is checked here, on every kernel; export.c does the rest */
static int fl_ioc_export(struct fl_ep *ep, void __user *arg)
{
	struct fl_export x;

	if (copy_from_user(&x, arg, sizeof(x)))
		return -EFAULT;
	if (x.slot >= ep->nslots || (x.flags & ~FL_EXPORT_FLAGS) || x.reserved0 ||
	    x.reserved) {
		dev_dbg_ratelimited(ep->dev, "export: bad slot %u, flags %#x or reserved field\n",
				    x.slot, x.flags);
		return -EINVAL;
	}
	return fl_export_slot(ep, &x, arg);
}

static long fl_cdev_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct fl_ep_file *f = file->private_data;
	struct fl_ep *ep = f->ep;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case FL_IOC_INFO:
	case FL_IOC_SUBMIT:
	case FL_IOC_POST:
	case FL_IOC_REAP:
	case FL_IOC_STATS:
	case FL_IOC_EXPORT:
		break;
	default:
		return -ENOTTY;
	}
	/* After unbind REAP still hands out what was queued, then says -ENODEV */
	if (READ_ONCE(ep->dead) && cmd != FL_IOC_REAP)
		return -ENODEV;

	switch (cmd) {
	case FL_IOC_INFO:
		return fl_ioc_info(ep, uarg);
	case FL_IOC_SUBMIT:
		return fl_ioc_batch(ep, uarg, true);
	case FL_IOC_POST:
		return fl_ioc_batch(ep, uarg, false);
	case FL_IOC_REAP:
		return fl_ioc_reap(ep, uarg);
	case FL_IOC_EXPORT:
		return fl_ioc_export(ep, uarg);
	default:
		return fl_ioc_stats(ep, uarg);
	}
}

static __poll_t fl_cdev_poll(struct file *file, poll_table *wait)
{
	struct fl_ep_file *f = file->private_data;
	struct fl_ep *ep = f->ep;
	__poll_t mask = 0;

	poll_wait(file, &ep->app_wq, wait);
	spin_lock(&ep->q_lock);
	if (ep->comp_fifo.tail != ep->comp_fifo.head)
		mask = EPOLLIN | EPOLLRDNORM;
	if (ep->dead)
		mask |= mask ? EPOLLHUP : EPOLLERR | EPOLLHUP;
	if (!ep->dead && ep->engine_up)
		mask |= EPOLLOUT | EPOLLWRNORM;
	spin_unlock(&ep->q_lock);
	return mask;
}

static int fl_cdev_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct fl_ep_file *f = file->private_data;
	struct fl_ep *ep = f->ep;
	int ret;

	mutex_lock(&ep->files_lock);
	ret = ep->dead ? -ENODEV : fl_slots_mmap(ep, vma);
	mutex_unlock(&ep->files_lock);
	return ret;
}

static const struct file_operations fl_cdev_fops = {
	.owner = THIS_MODULE,
	.open = fl_cdev_open,
	.release = fl_cdev_release,
	.unlocked_ioctl = fl_cdev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = fl_cdev_poll,
	.mmap = fl_cdev_mmap,
	.llseek = noop_llseek,
};

/**
 * fl_cdev_register() - create /dev/framelink-ep<N> (bind)
 * @ep: the endpoint.
 *
 * Return: 0 or a negative errno.
 */
int fl_cdev_register(struct fl_ep *ep)
{
	int ret;

	INIT_LIST_HEAD(&ep->vmas);
	INIT_LIST_HEAD(&ep->exports);
	ret = ida_alloc(&fl_ep_ida, GFP_KERNEL);
	if (ret < 0)
		return ret;
	ep->id = ret;
	snprintf(ep->name, sizeof(ep->name), "framelink-ep%d", ep->id);
	ep->misc = (struct miscdevice){
		.minor = MISC_DYNAMIC_MINOR,
		.name = ep->name,
		.fops = &fl_cdev_fops,
		.parent = ep->dev,
		.mode = 0600,
	};
	ret = misc_register(&ep->misc);
	if (ret) {
		ida_free(&fl_ep_ida, ep->id);
		ep->id = -1;
	}
	return ret;
}

/**
 * fl_cdev_unregister() - remove the device, end user access to the slots (unbind)
 * @ep: the endpoint (engine stopped).
 *
 * After this returns nobody can open the device or reach slot memory; open
 * files fail with -ENODEV (REAP once the completions queued are out) and REAP
 * waiters are woken.
 */
void fl_cdev_unregister(struct fl_ep *ep)
{
	struct fl_ep_file *f;

	misc_deregister(&ep->misc);
	mutex_lock(&ep->files_lock);
	spin_lock(&ep->q_lock);
	ep->dead = true;
	spin_unlock(&ep->q_lock);
	mutex_unlock(&ep->files_lock);
	/* An mmap() that passed the dead check links its VMA before this returns */
	fl_slots_sync_mmaps(ep);
	mutex_lock(&ep->files_lock);
	list_for_each_entry(f, &ep->files, node)
		unmap_mapping_range(f->file->f_mapping, 0, 0, 1);
	mutex_unlock(&ep->files_lock);
	fl_export_zap(ep);
	fl_q_release_pending(ep);
	wake_up_interruptible(&ep->app_wq);
	ida_free(&fl_ep_ida, ep->id);
}
