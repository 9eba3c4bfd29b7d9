/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink: what the two V4L2 devices (host/v4l2.c: output, epf/v4l2.c: capture) do the same
 * way: one single-plane vb2 queue serialised by the device's mutex, the file operations of
 * videobuf2, and the format ioctls over fl_v4l2_fmt.h. Included by the one V4L2 file of each
 * module.
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
static const struct v4l2_file_operations fl_v4l2_fops = {
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

#endif /* _FRAMELINK_V4L2_DEV_H */
