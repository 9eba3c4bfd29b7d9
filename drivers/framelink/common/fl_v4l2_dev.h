/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink: what the four V4L2 devices (host/v4l2.c: output, host/v4l2-cap.c: capture,
 * epf/v4l2.c: capture, epf/v4l2-out.c: output) do the same way: one single-plane vb2 queue
 * serialised by the device's mutex, its list of buffers not yet given to the engine, the
 * file operations of videobuf2, the format ioctls over fl_v4l2_fmt.h and the one input or
 * output a link has. Included by the V4L2 files of each module.
 */
#ifndef _FRAMELINK_V4L2_DEV_H
#define _FRAMELINK_V4L2_DEV_H

#include <linux/module.h>
#include <media/v4l2-dev.h>
#include <media/v4l2-fh.h>
#include <media/v4l2-ioctl.h>
#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-v4l2.h>

#include "fl_v4l2_fmt.h"

/* videobuf2's own file operations: open files share the device's one queue */
static const struct v4l2_file_operations fl_v4l2_fops __maybe_unused = {
	.owner = THIS_MODULE,
	.open = v4l2_fh_open,
	.release = vb2_fop_release,
	.poll = vb2_fop_poll,
	.mmap = vb2_fop_mmap,
	.unlocked_ioctl = video_ioctl2,
};

/**
 * fl_v4l2_setup_planes() - vb2_ops.queue_setup of both devices
 * @size: the current format's sizeimage.
 * @nplanes: in: 0 (REQBUFS) or the planes CREATE_BUFS asks for; out: 1.
 * @sizes: in (CREATE_BUFS) or out: the plane's size.
 *
 * A buffer smaller than a frame could never hold one whole: CREATE_BUFS asking for one
 * fails with -EINVAL (v4l2-compliance checks it).
 *
 * Return: 0 or -EINVAL.
 */
static inline int fl_v4l2_setup_planes(u32 size, unsigned int *nplanes, unsigned int sizes[])
{
	if (*nplanes)
		return *nplanes != 1 || sizes[0] < size ? -EINVAL : 0;
	*nplanes = 1;
	sizes[0] = size;
	return 0;
}

/**
 * fl_v4l2_set_fmt() - VIDIOC_S_FMT of both devices
 * @q: the device's queue: no change while it has buffers.
 * @cur: the device's format (G_FMT), replaced.
 * @f: in: what the app asks for; out: what it got.
 * @max_frame: the largest frame the link carries.
 *
 * Return: 0 or -EBUSY.
 */
static inline int fl_v4l2_set_fmt(struct vb2_queue *q, struct v4l2_pix_format *cur,
				  struct v4l2_format *f, u32 max_frame)
{
	if (vb2_is_busy(q))
		return -EBUSY;
	fl_fmt_fit(&f->fmt.pix, max_frame);
	*cur = f->fmt.pix;
	return 0;
}

/**
 * fl_v4l2_queue_init() - the vb2 queue of either device
 * @q: the queue, zeroed.
 * @type: V4L2_BUF_TYPE_VIDEO_OUTPUT or _CAPTURE.
 * @priv: vb2_get_drv_priv()'s answer.
 * @buf_size: the driver's buffer struct, a struct vb2_v4l2_buffer first.
 * @ops: its vb2 operations.
 * @dev: the device DMA goes through (buffers are allocated and imported for it).
 * @lock: the device's mutex, also the video device's.
 * @ts_flags: timestamp type and source.
 *
 * Return: vb2_queue_init()'s.
 */
static inline int fl_v4l2_queue_init(struct vb2_queue *q, enum v4l2_buf_type type, void *priv,
				     size_t buf_size, const struct vb2_ops *ops,
				     struct device *dev, struct mutex *lock, u32 ts_flags)
{
	q->type = type;
	q->io_modes = VB2_MMAP | VB2_DMABUF;
	q->drv_priv = priv;
	q->buf_struct_size = buf_size;
	q->ops = ops;
	q->mem_ops = &vb2_dma_contig_memops;
	q->timestamp_flags = ts_flags;
	q->lock = lock;
	q->dev = dev;
	return vb2_queue_init(q);
}

/**
 * struct fl_v4l2_qbuf - a vb2 buffer of any of the devices, and its place on the device's
 *	list of buffers queued by the app and not yet given to the engine
 * @vb: the buffer (first: vb2_queue.buf_struct_size is this structure's size).
 * @node: on that list.
 */
struct fl_v4l2_qbuf {
	struct vb2_v4l2_buffer vb;
	struct list_head node;
};

static inline struct fl_v4l2_qbuf *fl_v4l2_qbuf(struct vb2_buffer *vb)
{
	return container_of(to_vb2_v4l2_buffer(vb), struct fl_v4l2_qbuf, vb);
}

/**
 * fl_v4l2_return_list() - every buffer on a device's pending list back to vb2
 * @pending: the list (under the lock the device keeps it with).
 * @state: how they come back.
 */
static inline void fl_v4l2_return_list(struct list_head *pending, enum vb2_buffer_state state)
{
	struct fl_v4l2_qbuf *b, *tmp;

	list_for_each_entry_safe(b, tmp, pending, node) {
		list_del(&b->node);
		vb2_buffer_done(&b->vb.vb2_buf, state);
	}
}

/**
 * fl_v4l2_out_validate() - vb2_ops.buf_out_validate of both output devices: progressive only
 * @vb: the buffer the app queued.
 *
 * Return: 0 or -EINVAL.
 */
static inline int fl_v4l2_out_validate(struct vb2_buffer *vb)
{
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);

	if (vbuf->field == V4L2_FIELD_ANY)
		vbuf->field = V4L2_FIELD_NONE;
	return vbuf->field == V4L2_FIELD_NONE ? 0 : -EINVAL;
}

/**
 * fl_v4l2_check_buf() - buf_prepare of every device: the buffer holds a whole frame
 * @vb: the buffer.
 * @sizeimage: the device's frame size.
 * @out: an output buffer: it carries exactly one frame (payload == @sizeimage).
 * @dev: the device to log against (debug, rate-limited).
 *
 * Return: 0 or -EINVAL.
 */
static inline int fl_v4l2_check_buf(struct vb2_buffer *vb, u32 sizeimage, bool out,
				    struct device *dev)
{
	unsigned long payload = vb2_get_plane_payload(vb, 0);

	if (vb2_plane_size(vb, 0) >= sizeimage && (!out || payload == sizeimage))
		return 0;
	dev_dbg_ratelimited(dev, "V4L2 buffer %u: %lu bytes%s, frame %u\n", vb->index,
			    vb2_plane_size(vb, 0), out ? " (payload)" : "", sizeimage);
	return -EINVAL;
}

/* A link has one input (capture devices) or one output (output devices), number 0. */
static inline int fl_v4l2_enum_input(struct file *file, void *fh, struct v4l2_input *in)
{
	if (in->index)
		return -EINVAL;
	strscpy(in->name, "framelink link", sizeof(in->name));
	in->type = V4L2_INPUT_TYPE_CAMERA;
	return 0;
}

static inline int fl_v4l2_enum_output(struct file *file, void *fh, struct v4l2_output *out)
{
	if (out->index)
		return -EINVAL;
	strscpy(out->name, "framelink link", sizeof(out->name));
	out->type = V4L2_OUTPUT_TYPE_ANALOG;
	return 0;
}

/* G_INPUT and G_OUTPUT */
static inline int fl_v4l2_g_io(struct file *file, void *fh, unsigned int *i)
{
	*i = 0;
	return 0;
}

/* S_INPUT and S_OUTPUT */
static inline int fl_v4l2_s_io(struct file *file, void *fh, unsigned int i)
{
	return i ? -EINVAL : 0;
}

#endif /* _FRAMELINK_V4L2_DEV_H */
