/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink-host: what the V4L2 output device (v4l2.c) and the V4L2 capture device
 * (v4l2-cap.c) of one host device share: their structure, the pump that does REAP's work
 * for them, and the vb2 and ioctl operations that do not depend on the direction.
 */
#ifndef _FRAMELINK_HOST_V4L2_H
#define _FRAMELINK_HOST_V4L2_H

#include <linux/workqueue.h>
#include <linux/wait.h>
#include <media/v4l2-device.h>
#include <media/v4l2-ioctl.h>
#include <media/videobuf2-dma-contig.h>
#include <media/videobuf2-v4l2.h>

#include "host.h"
#include "fl_v4l2_dev.h"

/**
 * struct fl_host_v4l2 - a V4L2 device of one host device (output or capture)
 * @host: the device (a reference, dropped by the video device's release).
 * @tx: the output device (frames to the endpoint); else the capture device.
 * @v4l2_dev: the V4L2 parent.
 * @vdev: /dev/videoN.
 * @queue: the vb2 queue.
 * @lock: serialises the V4L2 ioctls and the vb2 queue (vdev.lock, queue.lock).
 * @fmt: the current format; @lock.
 * @pending: buffers queued by the app and not yet in the tx ring (output) or the rx ring
 *	(capture); fl_host.lock.
 * @out: buffers in the ring, by vb2 index; fl_host.lock.
 * @streaming: between start and stop of streaming; fl_host.lock.
 * @sequence: sequence number of the next completed buffer; fl_host.lock.
 * @seq_base: capture: the endpoint's sequence number less @sequence at the first frame
 *	since streaming started or a queue reset (the endpoint numbers from 0 again);
 *	fl_host.lock.
 * @seq_valid: capture: @seq_base is set; fl_host.lock.
 * @fmt_seq: formats announced to the endpoint (fl_bar_format.seq); fl_host.lock.
 * @fmt_gen: fl_host.generation of the enable the format was announced in; fl_host.lock.
 * @fmt_sent: the format was announced in @fmt_gen since streaming started; fl_host.lock.
 * @wakes_seen: fl_host.wakes at the pump's last pass; fl_host.lock.
 * @resets_seen: fl_host.reset_seq at the pump's last pass; fl_host.lock.
 * @kicked: buffers were queued since the pump's last pass; fl_host.lock.
 * @wait: on fl_host.wq while streaming: a wake-up queues @pump.
 * @pump: drains completions and queues pending buffers (the work REAP does for the ioctls).
 */
struct fl_host_v4l2 {
	struct fl_host *host;
	bool tx;
	struct v4l2_device v4l2_dev;
	struct video_device vdev;
	struct vb2_queue queue;
	struct mutex lock;	/* see @lock above */
	struct v4l2_pix_format fmt;
	struct list_head pending;
	struct vb2_v4l2_buffer *out[FL_HOST_V4L2_BUFS];
	bool streaming;
	u32 sequence;
	u32 seq_base;
	bool seq_valid;
	u32 fmt_seq;
	u32 fmt_gen;
	bool fmt_sent;
	s64 wakes_seen;
	u32 resets_seen;
	bool kicked;
	struct wait_queue_entry wait;
	struct delayed_work pump;
};

/* v4l2.c: shared by both devices */
int fl_v4l2_queue_setup(struct vb2_queue *q, unsigned int *nbuffers, unsigned int *nplanes,
			unsigned int sizes[], struct device *alloc_devs[]);
void fl_v4l2_buf_queue(struct vb2_buffer *vb);
int fl_v4l2_start(struct vb2_queue *q, unsigned int count);
void fl_v4l2_stop_pump(struct fl_host_v4l2 *v);
int fl_v4l2_querycap(struct file *file, void *fh, struct v4l2_capability *cap);
int fl_v4l2_enum_fmt(struct file *file, void *fh, struct v4l2_fmtdesc *f);
int fl_v4l2_enum_framesizes(struct file *file, void *fh, struct v4l2_frmsizeenum *fs);
int fl_v4l2_g_fmt(struct file *file, void *fh, struct v4l2_format *f);
int fl_v4l2_try_fmt(struct file *file, void *fh, struct v4l2_format *f);
int fl_v4l2_s_fmt(struct file *file, void *fh, struct v4l2_format *f);

/* v4l2-cap.c: the capture device's own */
extern const struct vb2_ops fl_vcap_qops;
extern const struct v4l2_ioctl_ops fl_vcap_iops;
void fl_vcap_post(struct fl_host_v4l2 *v);

#endif /* _FRAMELINK_HOST_V4L2_H */
