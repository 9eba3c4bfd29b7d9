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
 * fl_v4l2_tx_done() instead of the REAP fifo. The capture device (v4l2-cap.c) is the other
 * direction beside it; the two share this file's pump, start and format ioctls. The V4L2
 * devices and the ioctl path never queue frames at the same time (fl_host.user): STREAMON
 * fails with -EBUSY while an app holds the ioctl path, and the ioctls fail with -EBUSY
 * while a V4L2 device streams.
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
#include "v4l2.h"

static_assert(FL_HOST_V4L2_BUFS == VB2_MAX_FRAME);

/* How long STREAMOFF waits for the endpoint to read one more frame of the tx ring */
#define FL_V4L2_DRAIN_MS	1000

/* Every frame of the tx ring completed (the rx ring may hold the capture device's buffers) */
static bool fl_v4l2_tx_idle(struct fl_host *host)
{
	return host->tx_cons == host->tx_prod;
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
	struct fl_v4l2_qbuf *b, *tmp;
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
	bool timer = wakes == v->wakes_seen && !v->kicked && host->reset_seq == v->resets_seen;

	v->wakes_seen = wakes;
	v->resets_seen = host->reset_seq;
	v->kicked = false;
	if (!timer || !fl_host_irq_live(host))
		return false;
	if (!fl_q_arm_passed(host))
		return true;
	host->stats.safety_wakeups++;
	dev_dbg_ratelimited(host->dev, "V4L2: woken by the safety timer with completions waiting\n");
	return false;
}

/*
 * Pending buffers into the device's ring while it has room; fl_host.lock held. While a
 * reset runs (or the link is down) they wait for the queue to run again, as SUBMIT and POST
 * do: the pump passes again at the reset's end (fl_v4l2_timer_only()). A removed device
 * gives them back with an error.
 */
static void fl_v4l2_refill(struct fl_host_v4l2 *v)
{
	if (!v->host->enabled && !v->host->dead)
		return;
	if (v->tx)
		fl_v4l2_submit(v);
	else
		fl_vcap_post(v);
}

/* What REAP's loop does: drain, queue what waits, arm; fl_host.lock held */
static void fl_v4l2_turn(struct fl_host_v4l2 *v)
{
	struct fl_host *host = v->host;

	/* completions go to fl_v4l2_tx_done(), fl_v4l2_rx_done(): room for what is pending */
	fl_q_drain(host);
	fl_v4l2_refill(v);
	/* the interrupt was armed after completions that landed meanwhile: look again */
	while (fl_v4l2_busy(v) && fl_q_arm(host)) {
		fl_q_drain(host);
		fl_v4l2_refill(v);
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

/**
 * fl_v4l2_queue_setup() - vb2_ops.queue_setup of both devices
 * @q: the queue.
 * @nbuffers: buffers asked for (any number).
 * @nplanes: as for fl_v4l2_setup_planes().
 * @sizes: as for fl_v4l2_setup_planes().
 * @alloc_devs: unused (the queue's device).
 *
 * Return: fl_v4l2_setup_planes()'s.
 */
int fl_v4l2_queue_setup(struct vb2_queue *q, unsigned int *nbuffers, unsigned int *nplanes,
			unsigned int sizes[], struct device *alloc_devs[])
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(q);

	return fl_v4l2_setup_planes(v->fmt.sizeimage, nplanes, sizes);
}

static int fl_v4l2_buf_prepare(struct vb2_buffer *vb)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(vb->vb2_queue);
	int ret = fl_v4l2_check_buf(vb, v->fmt.sizeimage, true, v->host->dev);

	/* one descriptor per frame: the endpoint reads it in one piece */
	if (!ret && vb2_get_plane_payload(vb, 0) > v->host->max_frame)
		return -EMSGSIZE;
	return ret;
}

/**
 * fl_v4l2_buf_queue() - vb2_ops.buf_queue of both devices: into the ring when it has room
 * @vb: the buffer.
 */
void fl_v4l2_buf_queue(struct vb2_buffer *vb)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(vb->vb2_queue);
	struct fl_host *host = v->host;

	mutex_lock(&host->lock);
	list_add_tail(&fl_v4l2_qbuf(vb)->node, &v->pending);
	v->kicked = true;
	if (v->streaming)
		fl_v4l2_refill(v);
	mutex_unlock(&host->lock);
	if (v->streaming)
		mod_delayed_work(system_highpri_wq, &v->pump, 0);
}

/**
 * fl_v4l2_start() - vb2_ops.start_streaming of both devices
 * @q: the queue.
 * @count: buffers queued.
 *
 * The output and the capture device stream side by side; neither while an app holds the
 * ioctl path.
 *
 * Return: 0; -EBUSY (the ioctl path holds the device), or the queue reset's error.
 */
int fl_v4l2_start(struct vb2_queue *q, unsigned int count)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(q);
	struct fl_host *host = v->host;
	int ret;

	mutex_lock(&host->lock);
	fl_live_before_queue(host);
	ret = fl_live_wait_reset(host, true);
	if (!ret && (host->user & FL_USER_IOCTL))
		ret = -EBUSY;
	if (ret) {
		dev_dbg_ratelimited(host->dev, "V4L2 streaming refused: %d\n", ret);
		fl_v4l2_return_list(&v->pending, VB2_BUF_STATE_QUEUED);
		mutex_unlock(&host->lock);
		return ret;
	}
	host->user |= v->tx ? FL_USER_V4L2_OUT : FL_USER_V4L2_CAP;
	v->sequence = 0;
	v->seq_valid = false;
	v->fmt_sent = false;
	v->kicked = true;
	v->streaming = true;
	add_wait_queue(&host->wq, &v->wait);
	fl_v4l2_refill(v);
	mutex_unlock(&host->lock);
	mod_delayed_work(system_highpri_wq, &v->pump, 0);
	return 0;
}

/*
 * Frames in the tx ring were handed to the endpoint: STREAMOFF ends a stream, not its last
 * frames (GStreamer's v4l2sink stops at EOS with frames queued, waiting for a slower app on
 * the endpoint). They go while the endpoint reads one at least every FL_V4L2_DRAIN_MS, so
 * the wait is bounded by the ring's depth; a SIGKILL ends it. fl_host.lock held, dropped
 * while waiting.
 */
static void fl_v4l2_drain(struct fl_host *host)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(FL_V4L2_DRAIN_MS);
	u32 done = host->tx_cons;
	s64 seen;

	for (;;) {
		fl_q_drain(host);
		if (host->tx_cons != done) {
			done = host->tx_cons;
			deadline = jiffies + msecs_to_jiffies(FL_V4L2_DRAIN_MS);
		}
		if (host->dead || !host->enabled || fl_v4l2_tx_idle(host) ||
		    time_after(jiffies, deadline) || fatal_signal_pending(current))
			return;
		seen = atomic64_read(&host->wakes);
		if (fl_q_arm(host))
			continue;
		mutex_unlock(&host->lock);
		wait_event_killable_timeout(host->wq, READ_ONCE(host->dead) ||
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
	fl_v4l2_return_list(&v->pending, VB2_BUF_STATE_ERROR);
	fl_v4l2_drain(host);
	/* what the endpoint did not read comes back once it cannot: a queue reset */
	if (!host->dead && !fl_v4l2_tx_idle(host)) {
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
	host->user &= ~FL_USER_V4L2_OUT;
	mutex_unlock(&host->lock);
	fl_v4l2_stop_pump(v);
}

/**
 * fl_v4l2_stop_pump() - the end of stop_streaming of both devices: no pass of the pump after
 * @v: the device, no longer streaming; fl_host.lock not held.
 */
void fl_v4l2_stop_pump(struct fl_host_v4l2 *v)
{
	remove_wait_queue(&v->host->wq, &v->wait);
	cancel_delayed_work_sync(&v->pump);
}

static const struct vb2_ops fl_v4l2_qops = {
	.queue_setup = fl_v4l2_queue_setup,
	.buf_out_validate = fl_v4l2_out_validate,
	.buf_prepare = fl_v4l2_buf_prepare,
	.buf_queue = fl_v4l2_buf_queue,
	.start_streaming = fl_v4l2_start,
	.stop_streaming = fl_v4l2_stop,
	FL_VB2_WAIT_OPS
};

/* The ioctls both devices answer the same way (the format's are the same for both types) */
int fl_v4l2_querycap(struct file *file, void *fh, struct v4l2_capability *cap)
{
	struct fl_host_v4l2 *v = video_drvdata(file);

	strscpy(cap->driver, FL_HOST_DRV_NAME, sizeof(cap->driver));
	strscpy(cap->card, v->vdev.name, sizeof(cap->card));
	snprintf(cap->bus_info, sizeof(cap->bus_info), "PCI:%s", pci_name(v->host->pdev));
	return 0;
}

int fl_v4l2_enum_fmt(struct file *file, void *fh, struct v4l2_fmtdesc *f)
{
	return fl_fmt_enum(f);
}

int fl_v4l2_enum_framesizes(struct file *file, void *fh, struct v4l2_frmsizeenum *fs)
{
	return fl_fmt_framesizes(fs);
}

int fl_v4l2_g_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_host_v4l2 *v = video_drvdata(file);

	f->fmt.pix = v->fmt;
	return 0;
}

int fl_v4l2_try_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_host_v4l2 *v = video_drvdata(file);

	fl_fmt_fit(&f->fmt.pix, v->host->max_frame);
	return 0;
}

int fl_v4l2_s_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_host_v4l2 *v = video_drvdata(file);

	return fl_v4l2_set_fmt(&v->queue, &v->fmt, f, v->host->max_frame);
}

static const struct v4l2_ioctl_ops fl_v4l2_iops = {
	.vidioc_querycap = fl_v4l2_querycap,
	.vidioc_enum_fmt_vid_out = fl_v4l2_enum_fmt,
	.vidioc_enum_framesizes = fl_v4l2_enum_framesizes,
	.vidioc_g_fmt_vid_out = fl_v4l2_g_fmt,
	.vidioc_try_fmt_vid_out = fl_v4l2_try_fmt,
	.vidioc_s_fmt_vid_out = fl_v4l2_s_fmt,
	.vidioc_enum_output = fl_v4l2_enum_output,
	.vidioc_g_output = fl_v4l2_g_io,
	.vidioc_s_output = fl_v4l2_s_io,
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

/* The device's slot in fl_host: where completions look for it */
static struct fl_host_v4l2 **fl_v4l2_slot(struct fl_host *host, bool tx)
{
	return tx ? &host->v4l2 : &host->vcap;
}

static int fl_v4l2_init_queue(struct fl_host_v4l2 *v)
{
	/* the endpoint reads or writes the buffers through the host's PCI function */
	if (v->tx)
		return fl_v4l2_queue_init(&v->queue, V4L2_BUF_TYPE_VIDEO_OUTPUT, v,
					  sizeof(struct fl_v4l2_qbuf), &fl_v4l2_qops,
					  v->host->dev, &v->lock, V4L2_BUF_FLAG_TIMESTAMP_COPY);
	return fl_v4l2_queue_init(&v->queue, V4L2_BUF_TYPE_VIDEO_CAPTURE, v,
				  sizeof(struct fl_v4l2_qbuf), &fl_vcap_qops, v->host->dev,
				  &v->lock, V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC |
				  V4L2_BUF_FLAG_TSTAMP_SRC_EOF);
}

static void fl_v4l2_init_vdev(struct fl_host_v4l2 *v)
{
	v->vdev.v4l2_dev = &v->v4l2_dev;
	v->vdev.fops = &fl_v4l2_fops;
	v->vdev.ioctl_ops = v->tx ? &fl_v4l2_iops : &fl_vcap_iops;
	v->vdev.release = fl_v4l2_release;
	v->vdev.lock = &v->lock;
	v->vdev.queue = &v->queue;
	v->vdev.vfl_dir = v->tx ? VFL_DIR_TX : VFL_DIR_RX;
	v->vdev.device_caps = V4L2_CAP_STREAMING |
		(v->tx ? V4L2_CAP_VIDEO_OUTPUT : V4L2_CAP_VIDEO_CAPTURE);
	snprintf(v->vdev.name, sizeof(v->vdev.name), "framelink %s%s", v->host->name,
		 v->tx ? "" : " capture");
	video_set_drvdata(&v->vdev, v);
}

/* One of the two devices: fl_v4l2_register() */
static int fl_v4l2_register_one(struct fl_host *host, bool tx)
{
	struct fl_host_v4l2 *v;
	int ret;

	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	v->host = host;
	v->tx = tx;
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
	fl_v4l2_init_vdev(v);
	/* before the node exists: its first frame's completion looks for it */
	mutex_lock(&host->lock);
	*fl_v4l2_slot(host, tx) = v;
	mutex_unlock(&host->lock);
	ret = video_register_device(&v->vdev, VFL_TYPE_VIDEO, -1);
	if (ret)
		goto clear_host;
	/* dropped by fl_v4l2_release(), after the last close */
	kref_get(&host->ref);
	dev_info(host->dev, "V4L2 %s device %s\n", tx ? "output" : "capture",
		 video_device_node_name(&v->vdev));
	return 0;

clear_host:
	mutex_lock(&host->lock);
	*fl_v4l2_slot(host, tx) = NULL;
	mutex_unlock(&host->lock);
unregister_v4l2:
	v4l2_device_unregister(&v->v4l2_dev);
free_v:
	kfree(v);
	return ret;
}

/**
 * fl_v4l2_register() - create the V4L2 output and capture devices of @host
 * @host: the device, probed; its buffer table has fl_host.nvbufs V4L2 indices.
 *
 * Return: 0, or the error of the V4L2 core (the caller goes on without the device that
 * failed; the other may exist).
 */
int fl_v4l2_register(struct fl_host *host)
{
	int ret;

	if (!host->nvbufs)
		return 0;
	ret = fl_v4l2_register_one(host, true);
	return fl_v4l2_register_one(host, false) ?: ret;
}

static void fl_v4l2_unregister_one(struct fl_host *host, bool tx)
{
	struct fl_host_v4l2 *v = *fl_v4l2_slot(host, tx);

	if (!v)
		return;
	vb2_video_unregister_device(&v->vdev);
	/* nothing is in flight any more: no completion looks for it */
	mutex_lock(&host->lock);
	*fl_v4l2_slot(host, tx) = NULL;
	mutex_unlock(&host->lock);
}

/**
 * fl_v4l2_unregister() - remove the V4L2 devices (remove())
 * @host: the device; its queue failed every frame in flight already (fl_q_fail_all()).
 *
 * Streaming stops and the buffers nobody maps are freed here, while the function is still
 * bound; open files keep the rest until their last close.
 */
void fl_v4l2_unregister(struct fl_host *host)
{
	fl_v4l2_unregister_one(host, false);
	fl_v4l2_unregister_one(host, true);
}
