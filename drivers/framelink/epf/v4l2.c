// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: the link as a V4L2 capture device (issue 29, the Orin half). A buffer the
 * app queues on /dev/videoN is posted to the engine as a slot is: the next frame from the
 * host lands in it by the endpoint's DMA, with no CPU copy (MMAP: vb2-dma-contig memory of
 * the controller's device, the one the DMA engine writes; DMABUF: the consumer's own buffer,
 * attached to that device, one contiguous DMA segment or refused by videobuf2).
 *
 * The V4L2 device and the ioctls share the engine and its queues (slots.c): a vb2 buffer
 * has a buffer index past the slots (fl_ep.nslots + vb2 index) whose address, kernel
 * mapping and length travel with it (struct fl_slot); its frame's completion comes to
 * fl_ep_v4l2_rx_done() instead of the REAP queue. Only one of the two receives at a time
 * (fl_ep.user): STREAMON fails with -EBUSY while an app holds the ioctl path, POST and
 * SUBMIT fail with -EBUSY while V4L2 streams. The output device (v4l2-out.c) sends the
 * other way beside it.
 *
 * A frame larger than the buffer is consumed unread (-EMSGSIZE to both ends); a buffer
 * without a kernel mapping is never the target of a CPU copy (the frame fails instead).
 *
 * The format is the sender's where the host announces it (FL_F_FORMAT, ABI 1.3): the
 * device then offers only that format, as an HDMI receiver offers what its source sends,
 * signals V4L2_EVENT_SOURCE_CHANGE when an announcement does not fit the app's format, and
 * stamps a buffer with the host's capture time (TIMESTAMP_COPY). Without announcements
 * (an older host, the host's ioctl path) the app chooses among all formats, and the
 * timestamp is the end of the frame's DMA here (MONOTONIC).
 *
 * Locks: fl_ep_v4l2.lock serialises the V4L2 ioctls and the vb2 queue (taken by the V4L2
 * core); fl_ep_v4l2.out_lock protects what the engine's completions and announcements
 * touch (@out, @inflight, @seq_base, @seq_valid, @peer, @peer_ts, @app). Neither is held
 * across the other's sections.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <media/v4l2-device.h>
#include <media/v4l2-event.h>

#include "epf.h"
#include "fl_v4l2_dev.h"

static_assert(FL_EP_V4L2_BUFS == VB2_MAX_FRAME);

/* How long STREAMOFF waits for frames landing in its buffers (a frame is one DMA) */
#define FL_EP_V4L2_STOP_MS	2000

/**
 * struct fl_ep_v4l2 - the V4L2 capture device of one endpoint
 * @ep: the endpoint (a reference, dropped by the video device's release).
 * @v4l2_dev: the V4L2 parent.
 * @vdev: /dev/videoN.
 * @queue: the vb2 capture queue.
 * @lock: serialises the V4L2 ioctls and the vb2 queue (vdev.lock, queue.lock).
 * @fmt: the current format; @lock.
 * @pending: buffers queued before streaming started; @lock.
 * @streaming: between start and stop of streaming; @lock.
 * @ts_copy: buffers carry the host's capture time; written under @lock while no buffer
 *	is queued (queue_setup), read by completions.
 * @out_lock: protects @out, @inflight, @seq_base, @seq_valid, @peer, @peer_ts and @app.
 * @out: buffers given to the engine (posted or being written), by vb2 index.
 * @inflight: entries of @out.
 * @seq_base: the host's sequence number of the first frame of this stream.
 * @seq_valid: @seq_base is set.
 * @peer: the format the host announced last (pixelformat 0: none).
 * @peer_ts: the host carries formats and capture times (FL_F_FORMAT accepted).
 * @app: a copy of @fmt for the engine's side (announcements compare with it).
 * @done_wq: STREAMOFF waits here for @inflight to drop.
 * @old_max_seg: the controller device's DMA segment limit before we raised it, or 0.
 */
struct fl_ep_v4l2 {
	struct fl_ep *ep;
	struct v4l2_device v4l2_dev;
	struct video_device vdev;
	struct vb2_queue queue;
	struct mutex lock;	/* see @lock above */
	struct v4l2_pix_format fmt;
	struct list_head pending;
	bool streaming;
	bool ts_copy;
	spinlock_t out_lock;	/* see @out_lock above */
	struct vb2_v4l2_buffer *out[FL_EP_V4L2_BUFS];
	u32 inflight;
	u32 seq_base;
	bool seq_valid;
	struct v4l2_pix_format peer;
	bool peer_ts;
	struct v4l2_pix_format app;
	wait_queue_head_t done_wq;
	unsigned int old_max_seg;
};

/* Give one buffer to the engine; vb2 gets it back with an error if it cannot go. */
static void fl_ep_v4l2_post(struct fl_ep_v4l2 *v, struct vb2_buffer *vb)
{
	struct fl_ep *ep = v->ep;
	int ret;

	spin_lock(&v->out_lock);
	v->out[vb->index] = to_vb2_v4l2_buffer(vb);
	v->inflight++;
	spin_unlock(&v->out_lock);
	ret = fl_q_post_vbuf(ep, ep->nslots + vb->index, vb2_dma_contig_plane_dma_addr(vb, 0),
			     vb2_plane_vaddr(vb, 0), vb2_plane_size(vb, 0));
	if (!ret)
		return;
	spin_lock(&v->out_lock);
	v->out[vb->index] = NULL;
	v->inflight--;
	spin_unlock(&v->out_lock);
	dev_err_ratelimited(ep->dev, "V4L2 buffer %u not posted: %d\n", vb->index, ret);
	vb2_buffer_done(vb, VB2_BUF_STATE_ERROR);
}

/**
 * fl_ep_v4l2_rx_done() - a frame landed in a V4L2 buffer (or failed)
 * @ep: the endpoint.
 * @c: its completion; @c->buf is fl_ep.nslots + the vb2 index.
 *
 * Called by the engine (fl_q_complete()), or by whoever stopped it, without fl_ep.q_lock.
 */
void fl_ep_v4l2_rx_done(struct fl_ep *ep, const struct fl_completion *c)
{
	struct fl_ep_v4l2 *v = ep->v4l2;
	u32 index = c->buf - ep->nslots;
	struct vb2_v4l2_buffer *vbuf;

	if (!v)
		return;
	spin_lock(&v->out_lock);
	vbuf = v->out[index];
	v->out[index] = NULL;
	if (vbuf)
		v->inflight--;
	if (vbuf && !c->status && !v->seq_valid) {
		v->seq_base = c->seq;
		v->seq_valid = true;
	}
	spin_unlock(&v->out_lock);
	wake_up(&v->done_wq);
	if (!vbuf) {
		dev_warn_ratelimited(ep->dev, "completion of V4L2 buffer %u not posted\n", index);
		return;
	}
	/* the host's numbering, from the stream's first frame: a gap is a frame lost */
	vbuf->sequence = c->seq - v->seq_base;
	vbuf->field = V4L2_FIELD_NONE;
	if (v->ts_copy && (c->flags & FL_FRAME_TSTAMP))
		vbuf->vb2_buf.timestamp = c->cookie;
	else
		vbuf->vb2_buf.timestamp = c->ts_dma_done ? c->ts_dma_done : ktime_get_ns();
	if (c->status) {
		vb2_set_plane_payload(&vbuf->vb2_buf, 0, 0);
		vb2_buffer_done(&vbuf->vb2_buf, VB2_BUF_STATE_ERROR);
		return;
	}
	vb2_set_plane_payload(&vbuf->vb2_buf, 0, c->bytes);
	vb2_buffer_done(&vbuf->vb2_buf, VB2_BUF_STATE_DONE);
}

/*
 * A format the host announced, checked against what this end carries: one of its pixel
 * formats, progressive, and the size the same arithmetic gives (fl_fmt_fit()); the
 * colorimetry V4L2 does not define becomes the format's default. 0 or -EPROTO.
 */
static int fl_ep_v4l2_check_peer(struct fl_ep *ep, const struct fl_bar_format *f,
				 struct v4l2_pix_format *pix)
{
	struct v4l2_pix_format fit;

	*pix = (struct v4l2_pix_format){
		.pixelformat = le32_to_cpu(f->pixelformat),
		.width = le32_to_cpu(f->width),
		.height = le32_to_cpu(f->height),
		.bytesperline = le32_to_cpu(f->bytesperline),
		.sizeimage = le32_to_cpu(f->sizeimage),
		.field = le32_to_cpu(f->field),
		.colorspace = le32_to_cpu(f->colorspace),
		.ycbcr_enc = le32_to_cpu(f->ycbcr_enc),
		.quantization = le32_to_cpu(f->quantization),
		.xfer_func = le32_to_cpu(f->xfer_func),
	};
	fit = *pix;
	fl_fmt_fit(&fit, ep->slot_size);
	if (memchr_inv(f->reserved, 0, sizeof(f->reserved)) ||
	    fit.pixelformat != pix->pixelformat || fit.width != pix->width ||
	    fit.height != pix->height || fit.bytesperline != pix->bytesperline ||
	    fit.sizeimage != pix->sizeimage || fit.field != pix->field)
		return -EPROTO;
	*pix = fit;
	return 0;
}

/**
 * fl_ep_v4l2_peer_format() - the host announced the format of the frames that follow
 * @ep: the endpoint; engine context (ring.c).
 * @f: a private copy of fl_bar_format.
 *
 * A format this end cannot carry is logged and ignored (the frames still move).
 */
void fl_ep_v4l2_peer_format(struct fl_ep *ep, const struct fl_bar_format *f)
{
	static const struct v4l2_event ev = {
		.type = V4L2_EVENT_SOURCE_CHANGE,
		.u.src_change.changes = V4L2_EVENT_SRC_CH_RESOLUTION,
	};
	struct fl_ep_v4l2 *v = ep->v4l2;
	struct v4l2_pix_format pix, old, app;

	if (!v)
		return;
	if (fl_ep_v4l2_check_peer(ep, f, &pix)) {
		dev_warn_ratelimited(ep->dev, "host format %u refused: %p4cc %ux%u, %u bytes per line, %u per frame, field %u\n",
				     le32_to_cpu(f->seq), &pix.pixelformat, pix.width, pix.height,
				     pix.bytesperline, pix.sizeimage, pix.field);
		return;
	}
	spin_lock(&v->out_lock);
	old = v->peer;
	v->peer = pix;
	app = v->app;
	spin_unlock(&v->out_lock);
	if (!memcmp(&pix, &old, sizeof(pix)))
		return;
	dev_info(ep->dev, "host format %u: %p4cc %ux%u, %u bytes, colorspace %u\n",
		 le32_to_cpu(f->seq), &pix.pixelformat, pix.width, pix.height, pix.sizeimage,
		 pix.colorspace);
	/*
	 * The event tells the app its format no longer fits the frames (V4L2 defines it for
	 * resolution changes; GStreamer's v4l2src renegotiates on it, and lost its stream in
	 * make check's demo when the first announcement raised it for the very format it had
	 * set): not for colorimetry alone, not when the app's format has the host's size.
	 */
	if (pix.pixelformat != app.pixelformat || pix.width != app.width ||
	    pix.height != app.height || pix.sizeimage != app.sizeimage)
		v4l2_event_queue(&v->vdev, &ev);
}

/* @v->fmt changed (fl_ep_v4l2.lock held): the engine's side compares with the copy */
static void fl_ep_v4l2_app_fmt(struct fl_ep_v4l2 *v)
{
	spin_lock(&v->out_lock);
	v->app = v->fmt;
	spin_unlock(&v->out_lock);
}

/**
 * fl_ep_v4l2_enable() - the host enabled the queues
 * @ep: the endpoint; engine context (cq.c).
 * @formats: it accepted %FL_F_FORMAT; without, an earlier host's format is forgotten.
 */
void fl_ep_v4l2_enable(struct fl_ep *ep, bool formats)
{
	struct fl_ep_v4l2 *v = ep->v4l2;

	if (!v)
		return;
	spin_lock(&v->out_lock);
	v->peer_ts = formats;
	if (!formats)
		v->peer.pixelformat = 0;
	spin_unlock(&v->out_lock);
}

/* The host's format, if it announced one: true and @pix set. */
static bool fl_ep_v4l2_peer(struct fl_ep_v4l2 *v, struct v4l2_pix_format *pix)
{
	spin_lock(&v->out_lock);
	*pix = v->peer;
	spin_unlock(&v->out_lock);
	return pix->pixelformat;
}

/*
 * The timestamp type is the queue's, so it is chosen when buffers are allocated: COPY when
 * the host carries capture times. A frame that comes without one (the host's ioctl path)
 * gets the end of its DMA all the same (fl_ep_v4l2_rx_done()).
 */
static void fl_ep_v4l2_choose_ts(struct fl_ep_v4l2 *v)
{
	spin_lock(&v->out_lock);
	v->ts_copy = v->peer_ts;
	spin_unlock(&v->out_lock);
	v->queue.timestamp_flags = v->ts_copy ? V4L2_BUF_FLAG_TIMESTAMP_COPY :
			V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF;
}

static int fl_ep_v4l2_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
				  unsigned int *nplanes, unsigned int sizes[],
				  struct device *alloc_devs[])
{
	struct fl_ep_v4l2 *v = vb2_get_drv_priv(q);

	if (!vb2_is_busy(q))
		fl_ep_v4l2_choose_ts(v);
	return fl_v4l2_setup_planes(v->fmt.sizeimage, nplanes, sizes);
}

static int fl_ep_v4l2_buf_prepare(struct vb2_buffer *vb)
{
	struct fl_ep_v4l2 *v = vb2_get_drv_priv(vb->vb2_queue);

	return fl_v4l2_check_buf(vb, v->fmt.sizeimage, false, v->ep->dev);
}

static void fl_ep_v4l2_buf_queue(struct vb2_buffer *vb)
{
	struct fl_ep_v4l2 *v = vb2_get_drv_priv(vb->vb2_queue);

	if (!v->streaming) {
		list_add_tail(&fl_v4l2_qbuf(vb)->node, &v->pending);
		return;
	}
	fl_ep_v4l2_post(v, vb);
	fl_engine_kick(v->ep);
}

static int fl_ep_v4l2_start(struct vb2_queue *q, unsigned int count)
{
	struct fl_ep_v4l2 *v = vb2_get_drv_priv(q);
	struct fl_ep *ep = v->ep;
	struct fl_v4l2_qbuf *b, *tmp;
	int ret;

	ret = fl_q_claim_v4l2(ep, FL_EP_USER_V4L2_CAP);
	if (ret) {
		dev_dbg_ratelimited(ep->dev, "V4L2 streaming refused: %d\n", ret);
		fl_v4l2_return_list(&v->pending, VB2_BUF_STATE_QUEUED);
		return ret;
	}
	spin_lock(&v->out_lock);
	v->seq_valid = false;
	spin_unlock(&v->out_lock);
	v->streaming = true;
	list_for_each_entry_safe(b, tmp, &v->pending, node) {
		list_del(&b->node);
		fl_ep_v4l2_post(v, &b->vb.vb2_buf);
	}
	fl_engine_kick(ep);
	return 0;
}

static void fl_ep_v4l2_stop(struct vb2_queue *q)
{
	struct fl_ep_v4l2 *v = vb2_get_drv_priv(q);
	struct fl_ep *ep = v->ep;
	u32 idx[FL_EP_V4L2_BUFS];
	struct vb2_v4l2_buffer *vbuf;
	u32 n, i;

	v->streaming = false;
	fl_v4l2_return_list(&v->pending, VB2_BUF_STATE_ERROR);
	/* posted, not taken by the engine yet: back at once */
	n = fl_q_unpost_vbufs(ep, idx);
	for (i = 0; i < n; i++) {
		spin_lock(&v->out_lock);
		vbuf = v->out[idx[i] - ep->nslots];
		v->out[idx[i] - ep->nslots] = NULL;
		if (vbuf)
			v->inflight--;
		spin_unlock(&v->out_lock);
		if (vbuf)
			vb2_buffer_done(&vbuf->vb2_buf, VB2_BUF_STATE_ERROR);
	}
	/* being written: each comes back when its DMA ends (bounded by the engine's own drain) */
	if (!wait_event_timeout(v->done_wq, !READ_ONCE(v->inflight),
				msecs_to_jiffies(FL_EP_V4L2_STOP_MS))) {
		dev_err(ep->dev, "V4L2 STREAMOFF: %u buffers still being written after %u ms: given back\n",
			READ_ONCE(v->inflight), FL_EP_V4L2_STOP_MS);
		for (i = 0; i < FL_EP_V4L2_BUFS; i++) {
			spin_lock(&v->out_lock);
			vbuf = v->out[i];
			v->out[i] = NULL;
			if (vbuf)
				v->inflight--;
			spin_unlock(&v->out_lock);
			if (vbuf)
				vb2_buffer_done(&vbuf->vb2_buf, VB2_BUF_STATE_ERROR);
		}
	}
	fl_q_drop_v4l2(ep, FL_EP_USER_V4L2_CAP);
}

static const struct vb2_ops fl_ep_v4l2_qops = {
	.queue_setup = fl_ep_v4l2_queue_setup,
	.buf_prepare = fl_ep_v4l2_buf_prepare,
	.buf_queue = fl_ep_v4l2_buf_queue,
	.start_streaming = fl_ep_v4l2_start,
	.stop_streaming = fl_ep_v4l2_stop,
	FL_VB2_WAIT_OPS
};

static int fl_ep_v4l2_querycap(struct file *file, void *fh, struct v4l2_capability *cap)
{
	struct fl_ep_v4l2 *v = video_drvdata(file);

	strscpy(cap->driver, "framelink-epf", sizeof(cap->driver));
	scnprintf(cap->card, sizeof(cap->card), "framelink %s", v->ep->name);
	scnprintf(cap->bus_info, sizeof(cap->bus_info), "platform:%s", v->ep->name);
	return 0;
}

/* The host's format where it announced one, all formats the link carries otherwise */
static int fl_ep_v4l2_enum_fmt(struct file *file, void *fh, struct v4l2_fmtdesc *f)
{
	struct fl_ep_v4l2 *v = video_drvdata(file);
	struct v4l2_pix_format peer;

	if (!fl_ep_v4l2_peer(v, &peer))
		return fl_fmt_enum(f);
	if (f->index)
		return -EINVAL;
	f->pixelformat = peer.pixelformat;
	return 0;
}

static int fl_ep_v4l2_enum_framesizes(struct file *file, void *fh, struct v4l2_frmsizeenum *fs)
{
	struct fl_ep_v4l2 *v = video_drvdata(file);
	struct v4l2_pix_format peer;

	if (!fl_ep_v4l2_peer(v, &peer))
		return fl_fmt_framesizes(fs);
	if (fs->index || fs->pixel_format != peer.pixelformat)
		return -EINVAL;
	fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
	fs->discrete.width = peer.width;
	fs->discrete.height = peer.height;
	return 0;
}

/* The app's format becomes the host's while it has no buffers */
static int fl_ep_v4l2_g_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_ep_v4l2 *v = video_drvdata(file);
	struct v4l2_pix_format peer;

	if (fl_ep_v4l2_peer(v, &peer) && !vb2_is_busy(&v->queue)) {
		v->fmt = peer;
		fl_ep_v4l2_app_fmt(v);
	}
	f->fmt.pix = v->fmt;
	return 0;
}

static int fl_ep_v4l2_try_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_ep_v4l2 *v = video_drvdata(file);
	struct v4l2_pix_format peer;

	if (fl_ep_v4l2_peer(v, &peer))
		f->fmt.pix = peer;
	else
		fl_fmt_fit(&f->fmt.pix, v->ep->slot_size);
	return 0;
}

static int fl_ep_v4l2_s_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct fl_ep_v4l2 *v = video_drvdata(file);
	struct v4l2_pix_format peer;
	int ret;

	if (fl_ep_v4l2_peer(v, &peer) && !vb2_is_busy(&v->queue))
		f->fmt.pix = peer;
	ret = fl_v4l2_set_fmt(&v->queue, &v->fmt, f, v->ep->slot_size);
	if (!ret)
		fl_ep_v4l2_app_fmt(v);
	return ret;
}

static int fl_ep_v4l2_subscribe(struct v4l2_fh *fh, const struct v4l2_event_subscription *sub)
{
	if (sub->type == V4L2_EVENT_SOURCE_CHANGE)
		return v4l2_src_change_event_subscribe(fh, sub);
	return -EINVAL;
}

static const struct v4l2_ioctl_ops fl_ep_v4l2_iops = {
	.vidioc_querycap = fl_ep_v4l2_querycap,
	.vidioc_enum_fmt_vid_cap = fl_ep_v4l2_enum_fmt,
	.vidioc_enum_framesizes = fl_ep_v4l2_enum_framesizes,
	.vidioc_g_fmt_vid_cap = fl_ep_v4l2_g_fmt,
	.vidioc_try_fmt_vid_cap = fl_ep_v4l2_try_fmt,
	.vidioc_s_fmt_vid_cap = fl_ep_v4l2_s_fmt,
	.vidioc_enum_input = fl_v4l2_enum_input,
	.vidioc_g_input = fl_v4l2_g_io,
	.vidioc_s_input = fl_v4l2_s_io,
	.vidioc_reqbufs = vb2_ioctl_reqbufs,
	.vidioc_create_bufs = vb2_ioctl_create_bufs,
	.vidioc_prepare_buf = vb2_ioctl_prepare_buf,
	.vidioc_querybuf = vb2_ioctl_querybuf,
	.vidioc_qbuf = vb2_ioctl_qbuf,
	.vidioc_dqbuf = vb2_ioctl_dqbuf,
	.vidioc_expbuf = vb2_ioctl_expbuf,
	.vidioc_streamon = vb2_ioctl_streamon,
	.vidioc_streamoff = vb2_ioctl_streamoff,
	.vidioc_subscribe_event = fl_ep_v4l2_subscribe,
	.vidioc_unsubscribe_event = v4l2_event_unsubscribe,
};

/* The last reference to /dev/videoN is gone: the endpoint's reference with it. */
static void fl_ep_v4l2_release(struct video_device *vdev)
{
	struct fl_ep_v4l2 *v = container_of(vdev, struct fl_ep_v4l2, vdev);
	struct fl_ep *ep = v->ep;

	v4l2_device_unregister(&v->v4l2_dev);
	kfree(v);
	fl_ep_put(ep);
}

static int fl_ep_v4l2_init_queue(struct fl_ep_v4l2 *v)
{
	/* the DMA engine writes through the controller's device, as into the slots */
	return fl_v4l2_queue_init(&v->queue, V4L2_BUF_TYPE_VIDEO_CAPTURE, v,
				  sizeof(struct fl_v4l2_qbuf), &fl_ep_v4l2_qops, v->ep->dma_dev,
				  &v->lock, V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC |
				  V4L2_BUF_FLAG_TSTAMP_SRC_EOF);
}

/*
 * videobuf2-dma-contig maps an imported dma-buf to the controller's device as one segment
 * of the frame's size; with the DMA API's default limit (64 KiB, set by no Tegra or lab
 * controller driver) every such mapping is a DMA-API error. The eDMA takes any contiguous
 * range (the engine splits frames itself, xfer.c), so the limit is raised while the
 * capture device exists, and put back at unbind if nobody changed it meanwhile.
 */
static void fl_ep_v4l2_raise_max_seg(struct fl_ep_v4l2 *v)
{
	struct device *dev = v->ep->dma_dev;

	if (!dev->dma_parms || dma_get_max_seg_size(dev) >= UINT_MAX)
		return;
	v->old_max_seg = dma_get_max_seg_size(dev);
	dma_set_max_seg_size(dev, UINT_MAX);
	dev_info(v->ep->dev, "%s: DMA segment limit raised from %u bytes for V4L2 imports\n",
		 dev_name(dev), v->old_max_seg);
}

static void fl_ep_v4l2_restore_max_seg(struct fl_ep *ep, unsigned int old_max_seg)
{
	if (old_max_seg && dma_get_max_seg_size(ep->dma_dev) == UINT_MAX)
		dma_set_max_seg_size(ep->dma_dev, old_max_seg);
}

static void fl_ep_v4l2_init_vdev(struct fl_ep_v4l2 *v)
{
	v->vdev.v4l2_dev = &v->v4l2_dev;
	v->vdev.fops = &fl_v4l2_fops;
	v->vdev.ioctl_ops = &fl_ep_v4l2_iops;
	v->vdev.release = fl_ep_v4l2_release;
	v->vdev.lock = &v->lock;
	v->vdev.queue = &v->queue;
	v->vdev.vfl_dir = VFL_DIR_RX;
	v->vdev.device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;
	snprintf(v->vdev.name, sizeof(v->vdev.name), "framelink %s", v->ep->name);
	video_set_drvdata(&v->vdev, v);
}

/**
 * fl_ep_v4l2_register() - create the V4L2 capture device of @ep (bind)
 * @ep: the endpoint, its slots and queues allocated, engine not started.
 *
 * Return: 0, or the error of the V4L2 core (the caller goes on without the device).
 */
int fl_ep_v4l2_register(struct fl_ep *ep)
{
	struct fl_ep_v4l2 *v;
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
	v->app = v->fmt;
	ret = v4l2_device_register(ep->dev, &v->v4l2_dev);
	if (ret)
		goto free_v;
	ret = fl_ep_v4l2_init_queue(v);
	if (ret)
		goto unregister_v4l2;
	fl_ep_v4l2_init_vdev(v);
	fl_ep_v4l2_raise_max_seg(v);
	/* before the node exists: a completion of its first buffer looks for it */
	ep->v4l2 = v;
	ret = video_register_device(&v->vdev, VFL_TYPE_VIDEO, -1);
	if (ret)
		goto clear_ep;
	/* dropped by fl_ep_v4l2_release(), after the last close */
	kref_get(&ep->ref);
	dev_info(ep->dev, "V4L2 capture device %s\n", video_device_node_name(&v->vdev));
	return 0;

clear_ep:
	ep->v4l2 = NULL;
	fl_ep_v4l2_restore_max_seg(ep, v->old_max_seg);
unregister_v4l2:
	v4l2_device_unregister(&v->v4l2_dev);
free_v:
	kfree(v);
	return ret;
}

/**
 * fl_ep_v4l2_unregister() - remove the V4L2 capture device (unbind)
 * @ep: the endpoint, its engine stopped (frames in flight completed or kept as leaked).
 *
 * Streaming stops (posted buffers come back) and the buffers nobody maps are freed here,
 * while the controller's device is still ours; open files keep the rest until they close.
 */
void fl_ep_v4l2_unregister(struct fl_ep *ep)
{
	struct fl_ep_v4l2 *v = ep->v4l2;
	unsigned int old_max_seg;

	if (!v)
		return;
	old_max_seg = v->old_max_seg;
	/* @v may be freed when this returns (nobody had the node open) */
	vb2_video_unregister_device(&v->vdev);
	fl_ep_v4l2_restore_max_seg(ep, old_max_seg);
	ep->v4l2 = NULL;
}
