// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the link as a V4L2 output device (issue 29, frames from the Orin back to the
 * J784S4). A buffer the app queues on /dev/videoN is a frame submitted to the engine as an
 * app's SUBMIT of a slot is: the endpoint's DMA writes it from the vb2 buffer into the next
 * buffer the host posted (MMAP: vb2-dma-contig memory of the controller's device, the one
 * the DMA engine reads; DMABUF: the producer's own buffer, one contiguous DMA segment on
 * that device or refused by videobuf2), with no CPU copy unless the frame is below the
 * write crossover (then from the buffer's kernel mapping; without one the frame fails).
 *
 * Buffer indices: fl_ep.nslots + %FL_EP_V4L2_BUFS + vb2 index, after the capture device's
 * (v4l2.c); the frame's completion comes to fl_ep_vout_done(), never to the REAP queue.
 * The capture and the output device stream side by side; neither while an app holds the
 * ioctl path (fl_ep.user): STREAMON fails with -EBUSY then, and POST and SUBMIT fail with
 * -EBUSY while a V4L2 device streams.
 *
 * The format is the app's (S_FMT); the frames carry no format to the host (the host's
 * capture app sets the same one). The cookie of each frame is the buffer's timestamp as
 * queued (TIMESTAMP_COPY), echoed in the host's completion.
 *
 * Locks: fl_ep_vout.lock serialises the V4L2 ioctls and the vb2 queue (taken by the V4L2
 * core); fl_ep_vout.out_lock protects what the engine's completions touch (@out,
 * @inflight, @sequence). Neither is held across the other's sections.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <media/v4l2-device.h>

#include "epf.h"
#include "fl_v4l2_dev.h"

/* How long STREAMOFF waits for frames the engine is writing to the host (one DMA each) */
#define FL_EP_VOUT_STOP_MS	2000
/* How long STREAMOFF waits for the host to take one more of the frames still queued */
#define FL_EP_VOUT_DRAIN_MS	1000

/**
 * struct fl_ep_vout - the V4L2 output device of one endpoint
 * @ep: the endpoint (a reference, dropped by the video device's release).
 * @v4l2_dev: the V4L2 parent.
 * @vdev: /dev/videoN.
 * @queue: the vb2 output queue.
 * @lock: serialises the V4L2 ioctls and the vb2 queue (vdev.lock, queue.lock).
 * @fmt: the current format; @lock.
 * @pending: buffers queued before streaming started; @lock.
 * @streaming: between start and stop of streaming; @lock.
 * @out_lock: protects @out, @inflight and @sequence.
 * @out: buffers given to the engine (submitted or being written), by vb2 index.
 * @inflight: entries of @out.
 * @sequence: sequence number of the next completed buffer.
 * @done_wq: STREAMOFF waits here for @inflight to drop.
 */
struct fl_ep_vout {
	struct fl_ep *ep;
	struct v4l2_device v4l2_dev;
	struct video_device vdev;
	struct vb2_queue queue;
	struct mutex lock;	/* see @lock above */
	struct v4l2_pix_format fmt;
	struct list_head pending;
	bool streaming;
	spinlock_t out_lock;	/* see @out_lock above */
	struct vb2_v4l2_buffer *out[FL_EP_V4L2_BUFS];
	u32 inflight;
	u32 sequence;
	wait_queue_head_t done_wq;
};

/* The buffer index of vb2 buffer @index in the engine's queues */
static u32 fl_ep_vout_idx(struct fl_ep *ep, u32 index)
{
	return ep->nslots + FL_EP_V4L2_BUFS + index;
}

/* @vbuf leaves @out (out_lock held by the caller): true when it was there */
static bool fl_ep_vout_take(struct fl_ep_vout *v, u32 index, struct vb2_v4l2_buffer **vbuf)
{
	*vbuf = v->out[index];
	v->out[index] = NULL;
	if (*vbuf)
		v->inflight--;
	return *vbuf;
}

/* Give one buffer to the engine; vb2 gets it back with an error if it cannot go. */
static void fl_ep_vout_submit(struct fl_ep_vout *v, struct vb2_buffer *vb)
{
	struct fl_ep *ep = v->ep;
	struct fl_frame f = {
		.buf = fl_ep_vout_idx(ep, vb->index),
		.bytes = vb2_get_plane_payload(vb, 0),
		.flags = FL_FRAME_EOF,
		/* the app's timestamp as it is (TIMESTAMP_COPY), echoed to the host */
		.cookie = vb->timestamp,
	};
	struct vb2_v4l2_buffer *vbuf;
	int ret;

	spin_lock(&v->out_lock);
	v->out[vb->index] = to_vb2_v4l2_buffer(vb);
	v->inflight++;
	spin_unlock(&v->out_lock);
	ret = fl_q_submit_vbuf(ep, &f, vb2_dma_contig_plane_dma_addr(vb, 0),
			       vb2_plane_vaddr(vb, 0), vb2_plane_size(vb, 0));
	if (!ret)
		return;
	spin_lock(&v->out_lock);
	fl_ep_vout_take(v, vb->index, &vbuf);
	spin_unlock(&v->out_lock);
	dev_err_ratelimited(ep->dev, "V4L2 output buffer %u not sent: %d\n", vb->index, ret);
	vb2_buffer_done(vb, VB2_BUF_STATE_ERROR);
}

/**
 * fl_ep_vout_done() - a V4L2 output buffer's frame reached the host (or failed)
 * @ep: the endpoint.
 * @c: its completion; @c->buf is fl_ep.nslots + %FL_EP_V4L2_BUFS + the vb2 index.
 *
 * Called by the engine (fl_q_complete(), fl_q_cancel_submitted()) without fl_ep.q_lock.
 */
void fl_ep_vout_done(struct fl_ep *ep, const struct fl_completion *c)
{
	struct fl_ep_vout *v = ep->vout;
	u32 index = c->buf - fl_ep_vout_idx(ep, 0);
	struct vb2_v4l2_buffer *vbuf;
	bool found;

	if (!v || index >= FL_EP_V4L2_BUFS)
		return;
	spin_lock(&v->out_lock);
	found = fl_ep_vout_take(v, index, &vbuf);
	if (found)
		vbuf->sequence = v->sequence++;
	spin_unlock(&v->out_lock);
	wake_up(&v->done_wq);
	if (!found) {
		dev_warn_ratelimited(ep->dev, "completion of V4L2 output buffer %u not sent\n",
				     index);
		return;
	}
	if (c->status)
		dev_dbg_ratelimited(ep->dev, "V4L2 output buffer %u: %d\n", index, c->status);
	vbuf->field = V4L2_FIELD_NONE;
	vb2_buffer_done(&vbuf->vb2_buf, c->status ? VB2_BUF_STATE_ERROR : VB2_BUF_STATE_DONE);
}

static int fl_ep_vout_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
				  unsigned int *nplanes, unsigned int sizes[],
				  struct device *alloc_devs[])
{
	struct fl_ep_vout *v = vb2_get_drv_priv(q);

	return fl_v4l2_setup_planes(v->fmt.sizeimage, nplanes, sizes);
}

/* Every frame of a stream is one whole image of the format */
static int fl_ep_vout_buf_prepare(struct vb2_buffer *vb)
{
	struct fl_ep_vout *v = vb2_get_drv_priv(vb->vb2_queue);

	return fl_v4l2_check_buf(vb, v->fmt.sizeimage, true, v->ep->dev);
}

static void fl_ep_vout_buf_queue(struct vb2_buffer *vb)
{
	struct fl_ep_vout *v = vb2_get_drv_priv(vb->vb2_queue);

	if (!v->streaming) {
		list_add_tail(&fl_v4l2_qbuf(vb)->node, &v->pending);
		return;
	}
	fl_ep_vout_submit(v, vb);
	fl_engine_kick(v->ep);
}

static int fl_ep_vout_start(struct vb2_queue *q, unsigned int count)
{
	struct fl_ep_vout *v = vb2_get_drv_priv(q);
	struct fl_ep *ep = v->ep;
	struct fl_v4l2_qbuf *b, *tmp;
	int ret;

	ret = fl_q_claim_v4l2(ep, FL_EP_USER_V4L2_OUT);
	if (ret) {
		dev_dbg_ratelimited(ep->dev, "V4L2 output streaming refused: %d\n", ret);
		fl_v4l2_return_list(&v->pending, VB2_BUF_STATE_QUEUED);
		return ret;
	}
	spin_lock(&v->out_lock);
	v->sequence = 0;
	spin_unlock(&v->out_lock);
	v->streaming = true;
	list_for_each_entry_safe(b, tmp, &v->pending, node) {
		list_del(&b->node);
		fl_ep_vout_submit(v, &b->vb.vb2_buf);
	}
	fl_engine_kick(ep);
	return 0;
}

/* Every buffer still in @out back to vb2 with an error */
static void fl_ep_vout_give_back(struct fl_ep_vout *v)
{
	struct vb2_v4l2_buffer *vbuf;
	bool found;
	u32 i;

	for (i = 0; i < FL_EP_V4L2_BUFS; i++) {
		spin_lock(&v->out_lock);
		found = fl_ep_vout_take(v, i, &vbuf);
		spin_unlock(&v->out_lock);
		if (found)
			vb2_buffer_done(&vbuf->vb2_buf, VB2_BUF_STATE_ERROR);
	}
}

/*
 * STREAMOFF ends a stream, not its last frames: GStreamer's v4l2sink stops at EOS with frames
 * still queued, waiting for buffers a slower host app has not posted yet. They go while the
 * host takes one at least every FL_EP_VOUT_DRAIN_MS, so the wait is bounded by the queue's
 * depth; a SIGKILL during the wait ends it.
 */
static void fl_ep_vout_drain(struct fl_ep_vout *v)
{
	u32 left = READ_ONCE(v->inflight);
	u32 now;

	while (left && !fatal_signal_pending(current)) {
		wait_event_killable_timeout(v->done_wq, READ_ONCE(v->inflight) < left,
					    msecs_to_jiffies(FL_EP_VOUT_DRAIN_MS));
		now = READ_ONCE(v->inflight);
		if (now >= left)
			return;
		left = now;
	}
}

static void fl_ep_vout_stop(struct vb2_queue *q)
{
	struct fl_ep_vout *v = vb2_get_drv_priv(q);
	struct fl_ep *ep = v->ep;
	u32 idx[FL_EP_V4L2_BUFS];
	struct vb2_v4l2_buffer *vbuf;
	u32 n, i;

	v->streaming = false;
	fl_v4l2_return_list(&v->pending, VB2_BUF_STATE_ERROR);
	fl_ep_vout_drain(v);
	/* submitted, not taken by the engine after the drain (no host buffer came): back now */
	n = fl_q_unsubmit_vbufs(ep, idx);
	for (i = 0; i < n; i++) {
		spin_lock(&v->out_lock);
		fl_ep_vout_take(v, idx[i] - fl_ep_vout_idx(ep, 0), &vbuf);
		spin_unlock(&v->out_lock);
		if (vbuf)
			vb2_buffer_done(&vbuf->vb2_buf, VB2_BUF_STATE_ERROR);
	}
	/* being written to the host: each comes back when its DMA ends */
	if (!wait_event_timeout(v->done_wq, !READ_ONCE(v->inflight),
				msecs_to_jiffies(FL_EP_VOUT_STOP_MS))) {
		dev_err(ep->dev, "V4L2 output STREAMOFF: %u buffers still being sent after %u ms: given back\n",
			READ_ONCE(v->inflight), FL_EP_VOUT_STOP_MS);
		fl_ep_vout_give_back(v);
	}
	fl_q_drop_v4l2(ep, FL_EP_USER_V4L2_OUT);
}

static const struct vb2_ops fl_ep_vout_qops = {
	.queue_setup = fl_ep_vout_queue_setup,
	.buf_out_validate = fl_v4l2_out_validate,
	.buf_prepare = fl_ep_vout_buf_prepare,
	.buf_queue = fl_ep_vout_buf_queue,
	.start_streaming = fl_ep_vout_start,
	.stop_streaming = fl_ep_vout_stop,
	FL_VB2_WAIT_OPS
};

static int fl_ep_vout_querycap(struct file *file, void *fh, struct v4l2_capability *cap)
{
	struct fl_ep_vout *v = video_drvdata(file);

	strscpy(cap->driver, "framelink-epf", sizeof(cap->driver));
	scnprintf(cap->card, sizeof(cap->card), "framelink %s output", v->ep->name);
	scnprintf(cap->bus_info, sizeof(cap->bus_info), "platform:%s", v->ep->name);
	return 0;
}

static int fl_ep_vout_enum_fmt(struct file *file, void *fh, struct v4l2_fmtdesc *f)
{
	return fl_fmt_enum(f);
}

static int fl_ep_vout_enum_framesizes(struct file *file, void *fh, struct v4l2_frmsizeenum *fs)
{
	return fl_fmt_framesizes(fs);
}

static int fl_ep_vout_g_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_ep_vout *v = video_drvdata(file);

	f->fmt.pix = v->fmt;
	return 0;
}

static int fl_ep_vout_try_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_ep_vout *v = video_drvdata(file);

	fl_fmt_fit(&f->fmt.pix, v->ep->slot_size);
	return 0;
}

static int fl_ep_vout_s_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_ep_vout *v = video_drvdata(file);

	return fl_v4l2_set_fmt(&v->queue, &v->fmt, f, v->ep->slot_size);
}

static const struct v4l2_ioctl_ops fl_ep_vout_iops = {
	.vidioc_querycap = fl_ep_vout_querycap,
	.vidioc_enum_fmt_vid_out = fl_ep_vout_enum_fmt,
	.vidioc_enum_framesizes = fl_ep_vout_enum_framesizes,
	.vidioc_g_fmt_vid_out = fl_ep_vout_g_fmt,
	.vidioc_try_fmt_vid_out = fl_ep_vout_try_fmt,
	.vidioc_s_fmt_vid_out = fl_ep_vout_s_fmt,
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

/* The last reference to /dev/videoN is gone: the endpoint's reference with it. */
static void fl_ep_vout_release(struct video_device *vdev)
{
	struct fl_ep_vout *v = container_of(vdev, struct fl_ep_vout, vdev);
	struct fl_ep *ep = v->ep;

	v4l2_device_unregister(&v->v4l2_dev);
	kfree(v);
	fl_ep_put(ep);
}

static void fl_ep_vout_init_vdev(struct fl_ep_vout *v)
{
	v->vdev.v4l2_dev = &v->v4l2_dev;
	v->vdev.fops = &fl_v4l2_fops;
	v->vdev.ioctl_ops = &fl_ep_vout_iops;
	v->vdev.release = fl_ep_vout_release;
	v->vdev.lock = &v->lock;
	v->vdev.queue = &v->queue;
	v->vdev.vfl_dir = VFL_DIR_TX;
	v->vdev.device_caps = V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_STREAMING;
	snprintf(v->vdev.name, sizeof(v->vdev.name), "framelink %s output", v->ep->name);
	video_set_drvdata(&v->vdev, v);
}

/**
 * fl_ep_vout_register() - create the V4L2 output device of @ep (bind)
 * @ep: the endpoint, its slots and queues allocated, its capture device registered (its
 *	DMA segment limit raised for imports), engine not started.
 *
 * Return: 0, or the error of the V4L2 core (the caller goes on without the device).
 */
int fl_ep_vout_register(struct fl_ep *ep)
{
	struct fl_ep_vout *v;
	int ret;

	if (!ep->nvbufs)
		return 0;
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	v->ep = ep;
	mutex_init(&v->lock);
	spin_lock_init(&v->out_lock);
	INIT_LIST_HEAD(&v->pending);
	init_waitqueue_head(&v->done_wq);
	fl_fmt_default(&v->fmt, ep->slot_size);
	ret = v4l2_device_register(ep->dev, &v->v4l2_dev);
	if (ret)
		goto free_v;
	/* the DMA engine reads through the controller's device, as from the slots */
	ret = fl_v4l2_queue_init(&v->queue, V4L2_BUF_TYPE_VIDEO_OUTPUT, v,
				 sizeof(struct fl_v4l2_qbuf), &fl_ep_vout_qops, ep->dma_dev,
				 &v->lock, V4L2_BUF_FLAG_TIMESTAMP_COPY);
	if (ret)
		goto unregister_v4l2;
	fl_ep_vout_init_vdev(v);
	/* before the node exists: a completion of its first buffer looks for it */
	ep->vout = v;
	ret = video_register_device(&v->vdev, VFL_TYPE_VIDEO, -1);
	if (ret)
		goto clear_ep;
	/* dropped by fl_ep_vout_release(), after the last close */
	kref_get(&ep->ref);
	dev_info(ep->dev, "V4L2 output device %s\n", video_device_node_name(&v->vdev));
	return 0;

clear_ep:
	ep->vout = NULL;
unregister_v4l2:
	v4l2_device_unregister(&v->v4l2_dev);
free_v:
	kfree(v);
	return ret;
}

/**
 * fl_ep_vout_unregister() - remove the V4L2 output device (unbind)
 * @ep: the endpoint, its engine stopped (frames in flight and submitted completed).
 *
 * Streaming stops and the buffers nobody maps are freed here, while the controller's
 * device is still ours; open files keep the rest until they close.
 */
void fl_ep_vout_unregister(struct fl_ep *ep)
{
	struct fl_ep_vout *v = ep->vout;

	if (!v)
		return;
	/* @v may be freed when this returns (nobody had the node open) */
	vb2_video_unregister_device(&v->vdev);
	ep->vout = NULL;
}
