// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: /dev/framelink<N>, the queue API of include/uapi/linux/framelink.h
 * (INFO, SUBMIT, POST, REAP, STATS, poll(), mmap(); IMPORT and UNIMPORT: import.c). The
 * endpoint driver offers the same API on /dev/framelink-ep<N>; this file only parses and
 * checks what user space passes and calls the ring operations in queue.c, so the two can
 * share it later.
 *
 * Batches are copied in small chunks on the stack (nothing allocates) and accepted in order:
 * on an error, fl_batch.done is the index of the bad entry and the entries before it are
 * queued. fl_batch is written back once before anything is queued, so a batch that cannot
 * be written back fails with -EFAULT having queued nothing.
 *
 * REAP copies completions to user space without fl_host.lock (a fault may sleep on the
 * app's mmap_lock; open() and the interrupt path must not wait for that) and consumes them
 * only after both the entries and fl_reap.count reached user space: a REAP that fails has
 * consumed nothing. REAP callers are serialised by fl_host.reap_lock instead.
 */
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "host.h"
#include "trace.h"

#define FL_CHUNK	16

static struct fl_host *fl_file_host(struct file *file)
{
	return file->private_data;
}

static int fl_open(struct inode *inode, struct file *file)
{
	/* misc_open() set private_data to our miscdevice; misc_mtx orders us with remove() */
	struct fl_host *host = container_of(file->private_data, struct fl_host, misc);

	kref_get(&host->ref);
	file->private_data = host;
	/* never fl_host.lock here: misc_open() holds misc_mtx, every misc open would wait */
	atomic_inc(&host->openers);
	return 0;
}

static int fl_release(struct inode *inode, struct file *file)
{
	struct fl_host *host = fl_file_host(file);

	if (!atomic_dec_and_test(&host->openers))
		goto put;
	mutex_lock(&host->lock);
	/*
	 * The last close gives every buffer back: frames still in flight or posted are
	 * cancelled by a queue reset (waited for, bounded: the buffers come back only once
	 * the endpoint cannot write them), completions nobody reaped are dropped. A queue
	 * that stopped gets another attempt here, unless the V4L2 device streams on it.
	 */
	if (!host->dead && !(host->user & FL_USER_V4L2) && (!fl_q_idle(host) || !host->enabled)) {
		fl_q_reset(host, -ECANCELED);
		fl_live_wait_reset(host, false);
	}
	/* an open() that raced with this close keeps what it may already have queued */
	if (!host->dead && !atomic_read(&host->openers)) {
		for (; host->fifo_len; host->fifo_len--) {
			host->bufs[host->fifo[host->fifo_head].buf].state = FL_BUF_APP;
			host->fifo_head = (host->fifo_head + 1) % host->nslots;
		}
		/* nothing in flight any more: the imports go with the last close */
		fl_import_drop(host, false);
		host->user &= ~FL_USER_IOCTL;
	}
	mutex_unlock(&host->lock);
put:
	fl_host_put(host);
	return 0;
}

static long fl_ioc_info(struct fl_host *host, void __user *argp)
{
	struct fl_info info = { };

	mutex_lock(&host->lock);
	info.abi_version = FL_ABI_VERSION;
	info.role = FL_ROLE_HOST;
	info.features = host->features;
	info.nbufs = host->nbufs;
	info.buf_size = host->buf_size;
	info.mmap_offset = 0;
	info.tx_depth = host->tx_depth;
	info.rx_depth = host->rx_depth;
	info.cq_entries = host->cq_entries;
	/* FL_IRQ_* == FL_NOTIFY_* for 0..3; polled after a failed interrupt self-test */
	info.notify = fl_host_irq_live(host) ? host->irq_type : FL_NOTIFY_POLL;
	info.link_speed = host->link_speed;
	info.link_width = host->link_width;
	info.mps = host->mps;
	info.mps_supported = host->mps_supported;
	info.mrrs = host->mrrs;
	info.max_imports = host->nslots - host->nbufs;
	info.caps = info.max_imports ? FL_CAP_IMPORT : 0;
	mutex_unlock(&host->lock);
	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * SUBMIT, POST and IMPORT make this device the ioctl path's until its last close, unless a
 * V4L2 device streams (v4l2.c, v4l2-cap.c). fl_host.lock held.
 */
static int fl_claim_ioctl(struct fl_host *host)
{
	if (host->user & FL_USER_V4L2) {
		dev_dbg_ratelimited(host->dev, "ioctl refused: a V4L2 device streams\n");
		return -EBUSY;
	}
	host->user = FL_USER_IOCTL;
	return 0;
}

static int fl_batch_get(struct fl_batch *b, void __user *argp)
{
	if (copy_from_user(b, argp, sizeof(*b)))
		return -EFAULT;
	if (b->flags || b->reserved || !b->count || b->count > FL_RING_MAX_ENTRIES)
		return -EINVAL;
	/* proves fl_batch writable before anything is queued: a fault then has no effect */
	b->done = 0;
	if (copy_to_user(argp, b, sizeof(*b)))
		return -EFAULT;
	return 0;
}

/*
 * Frames are queued by now: their result is the ioctl's result. Only an app that unmaps
 * fl_batch during the call can make this write fail; done is then lost but the frames
 * complete as usual (documented in the uapi header).
 */
static long fl_batch_put(struct fl_batch *b, void __user *argp, u32 done, long ret)
{
	b->done = done;
	if (copy_to_user(argp, b, sizeof(*b)) && !done)
		return -EFAULT;
	return ret;
}

static long fl_ioc_submit(struct fl_host *host, void __user *argp)
{
	struct fl_frame frames[FL_CHUNK];
	struct dma_buf *writing = NULL;
	unsigned long deadline = 0;
	struct fl_frame __user *up;
	struct fl_batch b;
	u32 done = 0, i, n;
	long ret;

	ret = fl_batch_get(&b, argp);
	if (ret)
		return ret;
	up = u64_to_user_ptr(b.ptr);
	while (done < b.count) {
		n = min_t(u32, b.count - done, FL_CHUNK);
		if (copy_from_user(frames, up + done, n * sizeof(frames[0]))) {
			ret = -EFAULT;
			break;
		}
		mutex_lock(&host->lock);
		i = 0;
		/* a queue being reset (or stopped) runs again first, bounded */
		fl_live_before_queue(host);
		ret = fl_live_wait_reset(host, true);
		if (!ret)
			ret = fl_claim_ioctl(host);
		for (; !ret && i < n; i++) {
			ret = fl_q_tx_one(host, &frames[i]);
			if (ret)
				break;
		}
		if (i)
			fl_q_tx_kick(host);
		if (ret == -EINPROGRESS)
			writing = fl_import_dmabuf_get(host, frames[i].buf);
		mutex_unlock(&host->lock);
		done += i;
		/* an import still being written: wait unlocked, then read that frame again */
		if (ret == -EINPROGRESS)
			ret = fl_import_wait_writers(host, writing, &deadline);
		if (ret)
			break;
	}
	return fl_batch_put(&b, argp, done, ret);
}

static long fl_ioc_post(struct fl_host *host, void __user *argp)
{
	u32 bufs[4 * FL_CHUNK];
	u32 __user *up;
	struct fl_batch b;
	u32 done = 0, i, n;
	long ret;

	ret = fl_batch_get(&b, argp);
	if (ret)
		return ret;
	up = u64_to_user_ptr(b.ptr);
	while (done < b.count) {
		n = min_t(u32, b.count - done, ARRAY_SIZE(bufs));
		if (copy_from_user(bufs, up + done, n * sizeof(bufs[0]))) {
			ret = -EFAULT;
			break;
		}
		mutex_lock(&host->lock);
		i = 0;
		fl_live_before_queue(host);
		ret = fl_live_wait_reset(host, true);
		if (!ret)
			ret = fl_claim_ioctl(host);
		for (; !ret && i < n; i++) {
			ret = fl_q_rx_one(host, bufs[i]);
			if (ret)
				break;
		}
		if (i)
			fl_q_rx_kick(host);
		mutex_unlock(&host->lock);
		done += i;
		if (ret)
			break;
	}
	return fl_batch_put(&b, argp, done, ret);
}

#define FL_REAP_CHUNK	8

/*
 * Copy up to @max completions from the head of the fifo to user space, then fl_reap with
 * the count, and only then consume them. fl_host.reap_lock held: nobody else consumes, so
 * the entries at the head stay put while fl_host.lock is dropped for the copies.
 * Return: completions consumed (also written to @argp), or -EFAULT with nothing consumed.
 */
static int fl_reap_out(struct fl_host *host, struct fl_completion __user *up, u32 max,
		       struct fl_reap *r, void __user *argp)
{
	struct fl_completion chunk[FL_REAP_CHUNK];
	unsigned long left = 0;
	u32 n = 0, i, k;

	while (n < max) {
		mutex_lock(&host->lock);
		/* only REAP consumes (under reap_lock): the fifo holds at least n entries */
		k = min3(max - n, host->fifo_len - n, (u32)FL_REAP_CHUNK);
		for (i = 0; i < k; i++)
			chunk[i] = host->fifo[(host->fifo_head + n + i) % host->nslots];
		mutex_unlock(&host->lock);
		if (!k)
			break;
		left = copy_to_user(up + n, chunk, k * sizeof(chunk[0]));
		/* partial progress: the completions that reached user space in full */
		n += k - DIV_ROUND_UP(left, sizeof(chunk[0]));
		if (left)
			break;
	}
	if (!n)
		return left ? -EFAULT : 0;
	r->count = n;
	if (copy_to_user(argp, r, sizeof(*r)))
		return -EFAULT;
	mutex_lock(&host->lock);
	for (i = 0; i < n; i++) {
		const struct fl_completion *c = &host->fifo[host->fifo_head];

		/* errors count what applications saw, not what the last close dropped */
		if (c->status)
			host->stats.errors++;
		host->bufs[c->buf].state = FL_BUF_APP;
		host->fifo_head = (host->fifo_head + 1) % host->nslots;
		WRITE_ONCE(host->fifo_len, host->fifo_len - 1);
	}
	mutex_unlock(&host->lock);
	trace_fl_host_reap(host->id, n);
	return n;
}

/*
 * The safety slice ended a REAP wait with completions in host memory past the armed event
 * index (with %FL_F_CQ_BATCH, completions short of it may wait for the rest of the batch,
 * legitimately). Either the
 * interrupt is late (a busy endpoint, a slow VM) or it was lost (the notification protocol
 * failed): nothing raises a lost one later, since the endpoint interrupts only for an index
 * the host arms again. Give it one more slice; if none comes, count a lost wake-up. Counted,
 * never hidden: fl_stats.safety_wakeups must stay 0. A waiter pays the extra slice only
 * when the protocol already failed or the interrupt is that late.
 */
static void fl_reap_safety_check(struct fl_host *host, s64 seen)
{
	bool waiting;

	mutex_lock(&host->lock);
	waiting = host->enabled && !host->dead && fl_q_arm_passed(host);
	mutex_unlock(&host->lock);
	if (!waiting || wait_event_interruptible_timeout(host->wq, READ_ONCE(host->dead) ||
							 atomic64_read(&host->wakes) != seen,
							 HZ / 10))
		return;
	mutex_lock(&host->lock);
	host->stats.safety_wakeups++;
	mutex_unlock(&host->lock);
	dev_dbg_ratelimited(host->dev, "woken by the safety timer with completions waiting\n");
}

static long fl_ioc_reap(struct fl_host *host, void __user *argp)
{
	struct fl_completion __user *up;
	unsigned long deadline, slice;
	struct fl_reap r;
	long ret;
	s64 seen;
	int n;

	if (copy_from_user(&r, argp, sizeof(r)))
		return -EFAULT;
	if (r.flags || r.reserved || !r.max || r.max > FL_RING_MAX_ENTRIES ||
	    r.timeout_ms < 0 || r.timeout_ms > FL_REAP_MAX_TIMEOUT_MS)
		return -EINVAL;
	up = u64_to_user_ptr(r.ptr);
	deadline = jiffies + msecs_to_jiffies(r.timeout_ms);

	for (;;) {
		mutex_lock(&host->lock);
		fl_q_drain(host);
		if (host->fifo_len) {
			mutex_unlock(&host->lock);
			if (mutex_lock_interruptible(&host->reap_lock))
				return -EINTR;
			n = fl_reap_out(host, up, r.max, &r, argp);
			mutex_unlock(&host->reap_lock);
			if (n)
				return n < 0 ? n : 0;
			/* another REAP took them: wait on */
			continue;
		}
		if (host->dead) {
			mutex_unlock(&host->lock);
			return -ENODEV;
		}
		/* during a reset, wait (bounded by the timeout) for the failed frames */
		if (!host->enabled && !host->resetting) {
			ret = fl_live_errno(host);
			mutex_unlock(&host->lock);
			return ret;
		}
		if (!r.timeout_ms || time_after_eq(jiffies, deadline)) {
			mutex_unlock(&host->lock);
			n = 0;
			break;
		}
		seen = atomic64_read(&host->wakes);
		if (fl_q_arm(host)) {
			mutex_unlock(&host->lock);
			continue;
		}
		mutex_unlock(&host->lock);
		/*
		 * Sleep until the interrupt, bounded: a lost interrupt costs at most 100 ms,
		 * and without a vector (or with interrupts the self-test found not arriving) the
		 * ring is polled every jiffy.
		 */
		slice = fl_host_irq_live(host) ? HZ / 10 : 1;
		slice = min(deadline - jiffies, slice);
		ret = wait_event_interruptible_timeout(host->wq,
						       READ_ONCE(host->fifo_len) ||
						       READ_ONCE(host->dead) ||
						       atomic64_read(&host->wakes) != seen,
						       slice ? slice : 1);
		if (ret < 0)
			return -EINTR;
		if (!ret && fl_host_irq_live(host))
			fl_reap_safety_check(host, seen);
	}
	r.count = n;
	if (copy_to_user(argp, &r, sizeof(r)))
		return -EFAULT;
	return 0;
}

static long fl_ioc_stats(struct fl_host *host, void __user *argp)
{
	struct fl_stats st;

	mutex_lock(&host->lock);
	st = host->stats;
	mutex_unlock(&host->lock);
	st.interrupts = atomic64_read(&host->irqs);
	st.early_irqs = atomic64_read(&host->early_irqs);
	st.stale_irqs = atomic64_read(&host->stale_irqs);
	return copy_to_user(argp, &st, sizeof(st)) ? -EFAULT : 0;
}

static long fl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct fl_host *host = fl_file_host(file);
	void __user *argp = (void __user *)arg;
	long ret;

	switch (cmd) {
	case FL_IOC_INFO:
		return fl_ioc_info(host, argp);
	case FL_IOC_SUBMIT:
		return fl_ioc_submit(host, argp);
	case FL_IOC_POST:
		return fl_ioc_post(host, argp);
	case FL_IOC_REAP:
		return fl_ioc_reap(host, argp);
	case FL_IOC_STATS:
		return fl_ioc_stats(host, argp);
	case FL_IOC_IMPORT:
		mutex_lock(&host->lock);
		ret = fl_claim_ioctl(host);
		mutex_unlock(&host->lock);
		return ret ? ret : fl_import_add(host, argp);
	case FL_IOC_UNIMPORT:
		return fl_import_remove(host, argp);
	default:
		return -ENOTTY;
	}
}

static __poll_t fl_poll(struct file *file, poll_table *wait)
{
	struct fl_host *host = fl_file_host(file);
	__poll_t mask = 0;

	poll_wait(file, &host->wq, wait);
	mutex_lock(&host->lock);
	fl_q_drain(host);
	if (!host->fifo_len && fl_q_arm(host))
		fl_q_drain(host);
	if (host->fifo_len)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (host->dead)
		mask |= EPOLLHUP | EPOLLERR;
	else if (!host->enabled && !host->resetting)
		/* stopped (endpoint gone, link down): REAP/SUBMIT would fail, say so */
		mask |= EPOLLERR;
	else if (host->enabled && fl_q_can_submit(host))
		mask |= EPOLLOUT | EPOLLWRNORM;
	/* no interrupt vector: nothing else would wake this poll() for a completion */
	if (!(mask & EPOLLIN) && host->enabled && !fl_q_idle(host))
		fl_live_poll_arm(host);
	mutex_unlock(&host->lock);
	return mask;
}

static int fl_mmap(struct file *file, struct vm_area_struct *vma)
{
	return fl_bufs_mmap(fl_file_host(file), vma);
}

static const struct file_operations fl_fops = {
	.owner = THIS_MODULE,
	.open = fl_open,
	.release = fl_release,
	.unlocked_ioctl = fl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = fl_poll,
	.mmap = fl_mmap,
	.llseek = noop_llseek,
};

/**
 * fl_cdev_register() - create /dev/framelink<N>
 * @host: the device, enabled.
 *
 * Return: 0 or misc_register()'s error.
 */
int fl_cdev_register(struct fl_host *host)
{
	host->misc.minor = MISC_DYNAMIC_MINOR;
	host->misc.name = host->name;
	host->misc.fops = &fl_fops;
	host->misc.parent = host->dev;
	host->misc.mode = 0600;
	return misc_register(&host->misc);
}

/**
 * fl_cdev_unregister() - remove /dev/framelink<N>; open files stay valid (and fail)
 * @host: the device.
 */
void fl_cdev_unregister(struct fl_host *host)
{
	misc_deregister(&host->misc);
}
