// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: the link as a V4L2 output device (issue 29). A frame queued on
 * /dev/videoN is a frame sent to the endpoint: the endpoint's DMA reads it from the vb2
 * buffer itself (MMAP: vb2-dma-contig memory of the host's PCI function; DMABUF: the
 * camera's or GPU's buffer, attached to that function), no CPU copy on the host.
 *
 * The V4L2 device and the ioctls share one queue engine (queue.c): a vb2 buffer has a buffer
 * index past the ioctl indices (fl_host.nslots + vb2 index), its descriptor goes into the tx
 * ring as any frame's, and its TX_DONE comes back through fl_q_drain() to
 * fl_v4l2_tx_done() instead of the REAP fifo. Only one of the two queues frames at a time
 * (fl_host.user): STREAMON fails with -EBUSY while an app holds the ioctl path, and the
 * ioctls fail with -EBUSY while V4L2 streams.
 *
 * Nobody calls REAP here, so a work item does what REAP's loop does: drain the completion
 * ring, queue what waits, arm the interrupt, and look again on every wake-up of fl_host.wq
 * (interrupt, reset, remove) and at least every 100 ms while frames are out (a jiffy without
 * an interrupt that arrives).
 *
 * Locks: the vb2 queue and the ioctls are serialised by fl_host_v4l2.lock (taken by the
 * V4L2 core), which nests outside fl_host.lock; the work item takes fl_host.lock only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <media/v4l2-device.h>

#include "host.h"
#include "fl_v4l2_dev.h"

static_assert(FL_HOST_V4L2_BUFS == VB2_MAX_FRAME);

/* How long STREAMOFF lets the endpoint finish the frames already in the tx ring */
#define FL_V4L2_DRAIN_MS	1000

/**
 * struct fl_host_v4l2 - the V4L2 output device of one host device
 * @host: the device (a reference, dropped by the video device's release).
 * @v4l2_dev: the V4L2 parent.
 * @vdev: /dev/videoN.
 * @queue: the vb2 output queue.
 * @lock: serialises the V4L2 ioctls and the vb2 queue (vdev.lock, queue.lock).
 * @fmt: the current format; @lock.
 * @pending: buffers queued by the app and not yet in the tx ring; fl_host.lock.
 * @out: buffers in the tx ring, by vb2 index; fl_host.lock.
 * @streaming: between start and stop of streaming; fl_host.lock.
 * @sequence: sequence number of the next completed buffer; fl_host.lock.
 * @fmt_seq: formats announced to the endpoint (fl_bar_format.seq); fl_host.lock.
 * @fmt_gen: fl_host.generation of the enable the format was announced in; fl_host.lock.
 * @fmt_sent: the format was announced in @fmt_gen since streaming started; fl_host.lock.
 * @wakes_seen: fl_host.wakes at the pump's last pass; fl_host.lock.
 * @kicked: buffers were queued since the pump's last pass; fl_host.lock.
 * @wait: on fl_host.wq while streaming: a wake-up queues @pump.
 * @pump: drains completions and queues pending buffers (the work REAP does for the ioctls).
 */
struct fl_host_v4l2 {
	struct fl_host *host;
	struct v4l2_device v4l2_dev;
	struct video_device vdev;
	struct vb2_queue queue;
	struct mutex lock;	/* see @lock above */
	struct v4l2_pix_format fmt;
	struct list_head pending;
	struct vb2_v4l2_buffer *out[FL_HOST_V4L2_BUFS];
	bool streaming;
	u32 sequence;
	u32 fmt_seq;
	u32 fmt_gen;
	bool fmt_sent;
	s64 wakes_seen;
	bool kicked;
	struct wait_queue_entry wait;
	struct delayed_work pump;
};

/* A vb2 buffer and its place on fl_host_v4l2.pending. */
struct fl_v4l2_buf {
	struct vb2_v4l2_buffer vb;
	struct list_head node;
};

static struct fl_v4l2_buf *fl_v4l2_buf(struct vb2_buffer *vb)
{
	return container_of(to_vb2_v4l2_buffer(vb), struct fl_v4l2_buf, vb);
}

/*
 * The format into BAR0 for the endpoint (FL_F_FORMAT), before the descriptor that announces
 * it: both are posted writes to the same BAR, so they arrive in this order.
 */
static void fl_v4l2_write_format(struct fl_host_v4l2 *v)
{
	const struct v4l2_pix_format *pix = &v->fmt;
	struct fl_bar_format f = {
		.seq = cpu_to_le32(++v->fmt_seq),
		.pixelformat = cpu_to_le32(pix->pixelformat),
		.width = cpu_to_le32(pix->width),
		.height = cpu_to_le32(pix->height),
		.bytesperline = cpu_to_le32(pix->bytesperline),
		.sizeimage = cpu_to_le32(pix->sizeimage),
		.field = cpu_to_le32(pix->field),
		.colorspace = cpu_to_le32(pix->colorspace),
		.ycbcr_enc = cpu_to_le32(pix->ycbcr_enc),
		.quantization = cpu_to_le32(pix->quantization),
		.xfer_func = cpu_to_le32(pix->xfer_func),
	};

	memcpy_toio(v->host->bar + FL_BAR_FORMAT_OFFSET, &f, sizeof(f));
}

/*
 * The flags of a V4L2 frame's descriptor. On a link with FL_F_FORMAT: the capture time in
 * the cookie, and the format announced with the first frame of a stream and again after
 * every enable (the endpoint may have restarted). fl_host.lock held.
 */
static u32 fl_v4l2_frame_flags(struct fl_host_v4l2 *v)
{
	struct fl_host *host = v->host;

	if (!(host->features & FL_F_FORMAT))
		return FL_FRAME_EOF;
	if (v->fmt_sent && v->fmt_gen == host->generation)
		return FL_FRAME_EOF | FL_FRAME_TSTAMP;
	fl_v4l2_write_format(v);
	return FL_FRAME_EOF | FL_FRAME_TSTAMP | FL_FRAME_FORMAT;
}

/* Pending buffers into the tx ring while it has room; fl_host.lock held. */
static void fl_v4l2_submit(struct fl_host_v4l2 *v)
{
	struct fl_host *host = v->host;
	struct fl_v4l2_buf *b, *tmp;
	bool queued = false;
	u32 flags;
	int ret;

	list_for_each_entry_safe(b, tmp, &v->pending, node) {
		struct vb2_buffer *vb = &b->vb.vb2_buf;
		u32 idx = host->nslots + vb->index;

		host->bufs[idx].dma = vb2_dma_contig_plane_dma_addr(vb, 0);
		host->bufs[idx].len = vb2_plane_size(vb, 0);
		flags = fl_v4l2_frame_flags(v);
		/* the cookie carries the app's timestamp as it is (TIMESTAMP_COPY) */
		ret = fl_q_tx_buf(host, idx, vb2_get_plane_payload(vb, 0), flags,
				  vb->timestamp);
		if (ret == -EAGAIN)
			break;
		if (!ret && (flags & FL_FRAME_FORMAT)) {
			v->fmt_sent = true;
			v->fmt_gen = host->generation;
		}
		list_del(&b->node);
		if (ret) {
			dev_err_ratelimited(host->dev, "V4L2 buffer %u not sent: %d\n",
					    vb->index, ret);
			vb2_buffer_done(vb, VB2_BUF_STATE_ERROR);
			continue;
		}
		v->out[vb->index] = &b->vb;
		queued = true;
	}
	if (queued)
		fl_q_tx_kick(host);
}

static bool fl_v4l2_busy(struct fl_host_v4l2 *v)
{
	return v->streaming && !fl_q_idle(v->host);
}

/*
 * A pass of the safety timer alone (no wake-up, no buffer queued since the last pass) drains
 * only what an interrupt owes: completions past the armed index, from an interrupt lost or
 * later than 100 ms, counted in fl_stats.safety_wakeups as REAP counts them. Completions
 * short of a batch wait for its interrupt, as a poll() on the ioctl path does: a timer that
 * drained them took every batch's interrupt away (make bench, 8 MiB frames: 0 interrupts per
 * frame against the ioctl path's 0.2). fl_host.lock held.
 */
static bool fl_v4l2_timer_only(struct fl_host_v4l2 *v)
{
	struct fl_host *host = v->host;
	s64 wakes = atomic64_read(&host->wakes);
	bool timer = wakes == v->wakes_seen && !v->kicked;

	v->wakes_seen = wakes;
	v->kicked = false;
	if (!timer || !fl_host_irq_live(host))
		return false;
	if (!fl_q_arm_passed(host))
		return true;
	host->stats.safety_wakeups++;
	dev_dbg_ratelimited(host->dev, "V4L2: woken by the safety timer with completions waiting\n");
	return false;
}

/* What REAP's loop does: drain, queue what waits, arm; fl_host.lock held */
static void fl_v4l2_turn(struct fl_host_v4l2 *v)
{
	struct fl_host *host = v->host;

	/* completions call fl_v4l2_tx_done(), which frees room for what is pending */
	fl_q_drain(host);
	fl_v4l2_submit(v);
	/* the interrupt was armed after completions that landed meanwhile: look again */
	while (fl_v4l2_busy(v) && fl_q_arm(host)) {
		fl_q_drain(host);
		fl_v4l2_submit(v);
	}
}

static void fl_v4l2_pump(struct work_struct *work)
{
	struct fl_host_v4l2 *v = container_of(to_delayed_work(work), struct fl_host_v4l2, pump);
	struct fl_host *host = v->host;
	unsigned long next;

	mutex_lock(&host->lock);
	if (!v->streaming) {
		mutex_unlock(&host->lock);
		return;
	}
	if (!fl_v4l2_timer_only(v))
		fl_v4l2_turn(v);
	/* the safety net REAP has too: a lost interrupt costs 100 ms, no vector a jiffy */
	next = fl_host_irq_live(host) ? HZ / 10 : 1;
	if (fl_v4l2_busy(v))
		mod_delayed_work(system_highpri_wq, &v->pump, next);
	if (host->enabled && !fl_q_idle(host))
		fl_live_poll_arm(host);
	mutex_unlock(&host->lock);
}

/* fl_host.wq's wake-up (interrupt context possible): run the pump now */
static int fl_v4l2_wake(struct wait_queue_entry *wait, unsigned int mode, int sync, void *key)
{
	struct fl_host_v4l2 *v = container_of(wait, struct fl_host_v4l2, wait);

	mod_delayed_work(system_highpri_wq, &v->pump, 0);
	return 0;
}

/**
 * fl_v4l2_tx_done() - a V4L2 buffer's frame completed
 * @host: the device; fl_host.lock held (fl_q_drain(), fl_q_fail_all()).
 * @c: its completion; @c->buf is fl_host.nslots + the vb2 index.
 */
void fl_v4l2_tx_done(struct fl_host *host, const struct fl_completion *c)
{
	struct fl_host_v4l2 *v = host->v4l2;
	u32 index = c->buf - host->nslots;
	struct vb2_v4l2_buffer *vbuf;

	lockdep_assert_held(&host->lock);
	host->bufs[c->buf].state = FL_BUF_APP;
	vbuf = v ? v->out[index] : NULL;
	if (!vbuf) {
		dev_warn_ratelimited(host->dev, "completion of V4L2 buffer %u not sent\n", index);
		return;
	}
	v->out[index] = NULL;
	vbuf->sequence = v->sequence++;
	vbuf->field = V4L2_FIELD_NONE;
	vb2_buffer_done(&vbuf->vb2_buf, c->status ? VB2_BUF_STATE_ERROR : VB2_BUF_STATE_DONE);
}

static int fl_v4l2_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			       unsigned int *nplanes, unsigned int sizes[],
			       struct device *alloc_devs[])
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(q);

	return fl_v4l2_setup_planes(v->fmt.sizeimage, nplanes, sizes);
}

static int fl_v4l2_buf_out_validate(struct vb2_buffer *vb)
{
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);

	if (vbuf->field == V4L2_FIELD_ANY)
		vbuf->field = V4L2_FIELD_NONE;
	return vbuf->field == V4L2_FIELD_NONE ? 0 : -EINVAL;
}

static int fl_v4l2_buf_prepare(struct vb2_buffer *vb)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(vb->vb2_queue);
	struct fl_host *host = v->host;
	unsigned long payload = vb2_get_plane_payload(vb, 0);

	if (vb2_plane_size(vb, 0) < v->fmt.sizeimage || payload != v->fmt.sizeimage) {
		dev_dbg_ratelimited(host->dev, "V4L2 buffer %u: %lu bytes of %lu, frame %u\n",
				    vb->index, payload, vb2_plane_size(vb, 0),
				    v->fmt.sizeimage);
		return -EINVAL;
	}
	/* one descriptor per frame: the endpoint reads it in one piece */
	if (payload > host->max_frame)
		return -EMSGSIZE;
	return 0;
}

static void fl_v4l2_buf_queue(struct vb2_buffer *vb)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(vb->vb2_queue);
	struct fl_host *host = v->host;

	mutex_lock(&host->lock);
	list_add_tail(&fl_v4l2_buf(vb)->node, &v->pending);
	v->kicked = true;
	if (v->streaming)
		fl_v4l2_submit(v);
	mutex_unlock(&host->lock);
	if (v->streaming)
		mod_delayed_work(system_highpri_wq, &v->pump, 0);
}

/* Every buffer not in the tx ring back to vb2; fl_host.lock held. */
static void fl_v4l2_return_pending(struct fl_host_v4l2 *v, enum vb2_buffer_state state)
{
	struct fl_v4l2_buf *b, *tmp;

	list_for_each_entry_safe(b, tmp, &v->pending, node) {
		list_del(&b->node);
		vb2_buffer_done(&b->vb.vb2_buf, state);
	}
}

static int fl_v4l2_start(struct vb2_queue *q, unsigned int count)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(q);
	struct fl_host *host = v->host;
	int ret;

	mutex_lock(&host->lock);
	fl_live_before_queue(host);
	ret = fl_live_wait_reset(host, true);
	if (!ret && host->user == FL_USER_IOCTL)
		ret = -EBUSY;
	if (ret) {
		dev_dbg_ratelimited(host->dev, "V4L2 streaming refused: %d\n", ret);
		fl_v4l2_return_pending(v, VB2_BUF_STATE_QUEUED);
		mutex_unlock(&host->lock);
		return ret;
	}
	host->user = FL_USER_V4L2;
	v->sequence = 0;
	v->fmt_sent = false;
	v->kicked = true;
	v->streaming = true;
	add_wait_queue(&host->wq, &v->wait);
	fl_v4l2_submit(v);
	mutex_unlock(&host->lock);
	mod_delayed_work(system_highpri_wq, &v->pump, 0);
	return 0;
}

/*
 * Frames in the tx ring were handed to the endpoint: let them finish, bounded (a receiving
 * endpoint reads one in a DMA). fl_host.lock held, dropped while waiting.
 */
static void fl_v4l2_drain(struct fl_host *host)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(FL_V4L2_DRAIN_MS);
	s64 seen;

	for (;;) {
		fl_q_drain(host);
		if (host->dead || !host->enabled || fl_q_idle(host) ||
		    time_after(jiffies, deadline))
			return;
		seen = atomic64_read(&host->wakes);
		if (fl_q_arm(host))
			continue;
		mutex_unlock(&host->lock);
		wait_event_timeout(host->wq, READ_ONCE(host->dead) ||
				   atomic64_read(&host->wakes) != seen,
				   fl_host_irq_live(host) ? HZ / 10 : 1);
		mutex_lock(&host->lock);
	}
}

static void fl_v4l2_stop(struct vb2_queue *q)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(q);
	struct fl_host *host = v->host;
	u32 i;

	mutex_lock(&host->lock);
	fl_v4l2_return_pending(v, VB2_BUF_STATE_ERROR);
	fl_v4l2_drain(host);
	/* what the endpoint did not read comes back once it cannot: a queue reset */
	if (!host->dead && !fl_q_idle(host)) {
		dev_dbg(host->dev, "V4L2 STREAMOFF: frames still in the tx ring: resetting\n");
		fl_q_reset(host, -ECANCELED);
		fl_live_wait_reset(host, false);
	}
	v->streaming = false;
	/* a reset that could not finish (bounded): vb2 gets them back all the same */
	for (i = 0; i < FL_HOST_V4L2_BUFS; i++) {
		if (!v->out[i])
			continue;
		dev_warn(host->dev, "V4L2 buffer %u still in the tx ring at stop\n", i);
		vb2_buffer_done(&v->out[i]->vb2_buf, VB2_BUF_STATE_ERROR);
		v->out[i] = NULL;
	}
	if (host->user == FL_USER_V4L2)
		host->user = FL_USER_NONE;
	mutex_unlock(&host->lock);
	remove_wait_queue(&host->wq, &v->wait);
	cancel_delayed_work_sync(&v->pump);
}

static const struct vb2_ops fl_v4l2_qops = {
	.queue_setup = fl_v4l2_queue_setup,
	.buf_out_validate = fl_v4l2_buf_out_validate,
	.buf_prepare = fl_v4l2_buf_prepare,
	.buf_queue = fl_v4l2_buf_queue,
	.start_streaming = fl_v4l2_start,
	.stop_streaming = fl_v4l2_stop,
	FL_VB2_WAIT_OPS
};

static int fl_v4l2_querycap(struct file *file, void *fh, struct v4l2_capability *cap)
{
	struct fl_host_v4l2 *v = video_drvdata(file);

	strscpy(cap->driver, FL_HOST_DRV_NAME, sizeof(cap->driver));
	snprintf(cap->card, sizeof(cap->card), "framelink %s", v->host->name);
	snprintf(cap->bus_info, sizeof(cap->bus_info), "PCI:%s", pci_name(v->host->pdev));
	return 0;
}

static int fl_v4l2_enum_fmt(struct file *file, void *fh, struct v4l2_fmtdesc *f)
{
	return fl_fmt_enum(f);
}

static int fl_v4l2_enum_framesizes(struct file *file, void *fh, struct v4l2_frmsizeenum *fs)
{
	return fl_fmt_framesizes(fs);
}

static int fl_v4l2_g_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_host_v4l2 *v = video_drvdata(file);

	f->fmt.pix = v->fmt;
	return 0;
}

static int fl_v4l2_try_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_host_v4l2 *v = video_drvdata(file);

	fl_fmt_fit(&f->fmt.pix, v->host->max_frame);
	return 0;
}

static int fl_v4l2_s_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_host_v4l2 *v = video_drvdata(file);

	return fl_v4l2_set_fmt(&v->queue, &v->fmt, f, v->host->max_frame);
}

static int fl_v4l2_enum_output(struct file *file, void *fh, struct v4l2_output *out)
{
	if (out->index)
		return -EINVAL;
	strscpy(out->name, "framelink link", sizeof(out->name));
	out->type = V4L2_OUTPUT_TYPE_ANALOG;
	return 0;
}

static int fl_v4l2_g_output(struct file *file, void *fh, unsigned int *i)
{
	*i = 0;
	return 0;
}

static int fl_v4l2_s_output(struct file *file, void *fh, unsigned int i)
{
	return i ? -EINVAL : 0;
}

static const struct v4l2_ioctl_ops fl_v4l2_iops = {
	.vidioc_querycap = fl_v4l2_querycap,
	.vidioc_enum_fmt_vid_out = fl_v4l2_enum_fmt,
	.vidioc_enum_framesizes = fl_v4l2_enum_framesizes,
	.vidioc_g_fmt_vid_out = fl_v4l2_g_fmt,
	.vidioc_try_fmt_vid_out = fl_v4l2_try_fmt,
	.vidioc_s_fmt_vid_out = fl_v4l2_s_fmt,
	.vidioc_enum_output = fl_v4l2_enum_output,
	.vidioc_g_output = fl_v4l2_g_output,
	.vidioc_s_output = fl_v4l2_s_output,
	.vidioc_reqbufs = vb2_ioctl_reqbufs,
	.vidioc_create_bufs = vb2_ioctl_create_bufs,
	.vidioc_prepare_buf = vb2_ioctl_prepare_buf,
	.vidioc_querybuf = vb2_ioctl_querybuf,
	.vidioc_qbuf = vb2_ioctl_qbuf,
	.vidioc_dqbuf = vb2_ioctl_dqbuf,
	.vidioc_expbuf = vb2_ioctl_expbuf,
	.vidioc_streamon = vb2_ioctl_streamon,
	.vidioc_streamoff = vb2_ioctl_streamoff,
};

/* The last reference to /dev/videoN is gone: the host's reference with it. */
static void fl_v4l2_release(struct video_device *vdev)
{
	struct fl_host_v4l2 *v = container_of(vdev, struct fl_host_v4l2, vdev);
	struct fl_host *host = v->host;

	v4l2_device_unregister(&v->v4l2_dev);
	kfree(v);
	fl_host_put(host);
}

static int fl_v4l2_init_queue(struct fl_host_v4l2 *v)
{
	/* the endpoint reads the buffers through the host's PCI function */
	return fl_v4l2_queue_init(&v->queue, V4L2_BUF_TYPE_VIDEO_OUTPUT, v,
				  sizeof(struct fl_v4l2_buf), &fl_v4l2_qops, v->host->dev,
				  &v->lock, V4L2_BUF_FLAG_TIMESTAMP_COPY);
}

/**
 * fl_v4l2_register() - create the V4L2 output device of @host
 * @host: the device, probed; its buffer table has fl_host.nvbufs V4L2 indices.
 *
 * Return: 0, or the error of the V4L2 core (the caller goes on without the device).
 */
int fl_v4l2_register(struct fl_host *host)
{
	struct fl_host_v4l2 *v;
	int ret;

	if (!host->nvbufs)
		return 0;
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	v->host = host;
	mutex_init(&v->lock);
	INIT_LIST_HEAD(&v->pending);
	INIT_DELAYED_WORK(&v->pump, fl_v4l2_pump);
	init_waitqueue_func_entry(&v->wait, fl_v4l2_wake);
	fl_fmt_default(&v->fmt, host->max_frame);
	ret = v4l2_device_register(host->dev, &v->v4l2_dev);
	if (ret)
		goto free_v;
	ret = fl_v4l2_init_queue(v);
	if (ret)
		goto unregister_v4l2;
	v->vdev.v4l2_dev = &v->v4l2_dev;
	v->vdev.fops = &fl_v4l2_fops;
	v->vdev.ioctl_ops = &fl_v4l2_iops;
	v->vdev.release = fl_v4l2_release;
	v->vdev.lock = &v->lock;
	v->vdev.queue = &v->queue;
	v->vdev.vfl_dir = VFL_DIR_TX;
	v->vdev.device_caps = V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_STREAMING;
	snprintf(v->vdev.name, sizeof(v->vdev.name), "framelink %s", host->name);
	video_set_drvdata(&v->vdev, v);
	/* before the node exists: its first frame's completion looks for it */
	mutex_lock(&host->lock);
	host->v4l2 = v;
	mutex_unlock(&host->lock);
	ret = video_register_device(&v->vdev, VFL_TYPE_VIDEO, -1);
	if (ret)
		goto clear_host;
	/* dropped by fl_v4l2_release(), after the last close */
	kref_get(&host->ref);
	dev_info(host->dev, "V4L2 output device %s\n", video_device_node_name(&v->vdev));
	return 0;

clear_host:
	mutex_lock(&host->lock);
	host->v4l2 = NULL;
	mutex_unlock(&host->lock);
unregister_v4l2:
	v4l2_device_unregister(&v->v4l2_dev);
free_v:
	kfree(v);
	return ret;
}

/**
 * fl_v4l2_unregister() - remove the V4L2 output device (remove())
 * @host: the device; its queue failed every frame in flight already (fl_q_fail_all()).
 *
 * Streaming stops and the buffers nobody maps are freed here, while the function is still
 * bound; open files keep the rest until their last close.
 */
void fl_v4l2_unregister(struct fl_host *host)
{
	struct fl_host_v4l2 *v = host->v4l2;

	if (!v)
		return;
	vb2_video_unregister_device(&v->vdev);
	/* nothing is in flight any more: no completion looks for it */
	mutex_lock(&host->lock);
	host->v4l2 = NULL;
	mutex_unlock(&host->lock);
}
