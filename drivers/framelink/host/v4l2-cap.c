// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: the link as a V4L2 capture device (issue 29, frames from the Orin back to
 * the J784S4). A buffer the app queues on /dev/videoN is posted into the rx ring as an own
 * buffer is by POST: the endpoint's DMA writes the next frame its app (or its V4L2 output
 * device) sends straight into it (MMAP: vb2-dma-contig memory of the host's PCI function;
 * DMABUF: the consumer's own buffer, attached to that function), no CPU copy on the host.
 *
 * Buffer indices: fl_host.nslots + %FL_HOST_V4L2_BUFS + vb2 index, after the output
 * device's (v4l2.c); the frame's completion comes through fl_q_drain() to
 * fl_v4l2_rx_done(), never to the REAP fifo. The pump, start and format ioctls are the
 * output device's (v4l2.c).
 *
 * The format is the app's (S_FMT; the endpoint does not announce one), a frame may be
 * shorter than the buffer (bytesused says how long), sequence numbers are the endpoint's
 * from the stream's first frame (a gap is a frame lost), and the timestamp is the moment
 * the host took the completion (MONOTONIC).
 *
 * A posted buffer cannot be taken back from the endpoint: STREAMOFF with buffers in the rx
 * ring resets the queue (frames in flight both ways fail, the output device's too) and the
 * buffers come back once the endpoint cannot write them. A reset this device did not ask
 * for (the output device's STREAMOFF, a link that came back) takes its buffers back too:
 * they are posted again when the queue runs, the stream goes on (fl_vcap_repost()).
 *
 * Locks: as the output device's (v4l2.c): fl_host_v4l2.lock outside fl_host.lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <media/v4l2-device.h>

#include "host.h"
#include "v4l2.h"

/* The buffer index of vb2 buffer @index in the host's buffer table */
static u32 fl_vcap_idx(struct fl_host *host, u32 index)
{
	return host->nslots + FL_HOST_V4L2_BUFS + index;
}

/**
 * fl_vcap_post() - pending buffers into the rx ring while it has room
 * @v: the capture device; fl_host.lock held.
 */
void fl_vcap_post(struct fl_host_v4l2 *v)
{
	struct fl_host *host = v->host;
	struct fl_v4l2_qbuf *b, *tmp;
	bool posted = false;
	int ret;

	lockdep_assert_held(&host->lock);
	list_for_each_entry_safe(b, tmp, &v->pending, node) {
		struct vb2_buffer *vb = &b->vb.vb2_buf;
		u32 idx = fl_vcap_idx(host, vb->index);

		host->bufs[idx].dma = vb2_dma_contig_plane_dma_addr(vb, 0);
		host->bufs[idx].len = vb2_plane_size(vb, 0);
		ret = fl_q_rx_buf(host, idx);
		if (ret == -EAGAIN)
			break;
		list_del(&b->node);
		if (ret) {
			dev_err_ratelimited(host->dev, "V4L2 capture buffer %u not posted: %d\n",
					    vb->index, ret);
			vb2_buffer_done(vb, VB2_BUF_STATE_ERROR);
			continue;
		}
		v->out[vb->index] = &b->vb;
		posted = true;
	}
	if (posted)
		fl_q_rx_kick(host);
}

/*
 * A buffer a queue reset took back (failed while the queue is stopped) while the device
 * streams never held a frame: it goes back to the pending list and into the ring again once
 * the queue runs (the pump looks at every reset's end), not to the app with an error. A
 * reset by the other direction (the output device's STREAMOFF), a protocol violation or a
 * link that came back must not end a capture stream that had nothing to do with it. Not
 * when the device goes away (removal, a frozen channel: @removing) or when this device
 * stops (!@streaming). The sequence numbers go on from where they were (@seq_valid).
 */
static bool fl_vcap_repost(struct fl_host_v4l2 *v, const struct fl_completion *c)
{
	struct fl_host *host = v->host;

	if (!c->status || !v->streaming || host->enabled || host->dead || host->removing)
		return false;
	host->stats.rx_reposted++;
	v->seq_valid = false;
	return true;
}

/**
 * fl_v4l2_rx_done() - a frame landed in a V4L2 capture buffer (or the buffer failed)
 * @host: the device; fl_host.lock held (fl_q_drain(), fl_q_fail_all()).
 * @c: its completion; @c->buf is fl_host.nslots + %FL_HOST_V4L2_BUFS + the vb2 index.
 */
void fl_v4l2_rx_done(struct fl_host *host, const struct fl_completion *c)
{
	struct fl_host_v4l2 *v = host->vcap;
	u32 index = c->buf - fl_vcap_idx(host, 0);
	struct vb2_v4l2_buffer *vbuf;

	lockdep_assert_held(&host->lock);
	host->bufs[c->buf].state = FL_BUF_APP;
	vbuf = v && index < FL_HOST_V4L2_BUFS ? v->out[index] : NULL;
	if (!vbuf) {
		dev_warn_ratelimited(host->dev, "completion of V4L2 capture buffer %u not posted\n",
				     index);
		return;
	}
	v->out[index] = NULL;
	if (fl_vcap_repost(v, c)) {
		list_add_tail(&fl_v4l2_qbuf(&vbuf->vb2_buf)->node, &v->pending);
		return;
	}
	vbuf->field = V4L2_FIELD_NONE;
	vbuf->vb2_buf.timestamp = c->ts_delivered;
	if (c->status) {
		vb2_set_plane_payload(&vbuf->vb2_buf, 0, 0);
		vb2_buffer_done(&vbuf->vb2_buf, VB2_BUF_STATE_ERROR);
		return;
	}
	/*
	 * The endpoint's numbering from the stream's first frame (a gap is a frame lost), on
	 * from where it was after a queue reset (the endpoint's numbering starts again)
	 */
	if (!v->seq_valid) {
		v->seq_base = c->seq - v->sequence;
		v->seq_valid = true;
	}
	vbuf->sequence = c->seq - v->seq_base;
	v->sequence = vbuf->sequence + 1;
	vb2_set_plane_payload(&vbuf->vb2_buf, 0, c->bytes);
	vb2_buffer_done(&vbuf->vb2_buf, VB2_BUF_STATE_DONE);
}

static int fl_vcap_buf_prepare(struct vb2_buffer *vb)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(vb->vb2_queue);

	return fl_v4l2_check_buf(vb, v->fmt.sizeimage, false, v->host->dev);
}

/*
 * Posted buffers stay the endpoint's until it cannot write them: a queue reset (bounded),
 * as the ioctl path's last close does. Whatever a reset that could not finish leaves in
 * the ring comes back all the same.
 */
static void fl_vcap_stop(struct vb2_queue *q)
{
	struct fl_host_v4l2 *v = vb2_get_drv_priv(q);
	struct fl_host *host = v->host;
	u32 i;

	mutex_lock(&host->lock);
	/* from here, what the reset takes back comes back to vb2 (fl_vcap_repost()) */
	v->streaming = false;
	fl_q_drain(host);
	if (!host->dead && host->rx_prod != host->rx_cons) {
		dev_dbg(host->dev, "V4L2 capture STREAMOFF: buffers posted: resetting\n");
		fl_q_reset(host, -ECANCELED);
		fl_live_wait_reset(host, false);
	}
	fl_v4l2_return_list(&v->pending, VB2_BUF_STATE_ERROR);
	for (i = 0; i < FL_HOST_V4L2_BUFS; i++) {
		if (!v->out[i])
			continue;
		dev_warn(host->dev, "V4L2 capture buffer %u still posted at stop\n", i);
		vb2_buffer_done(&v->out[i]->vb2_buf, VB2_BUF_STATE_ERROR);
		v->out[i] = NULL;
	}
	host->user &= ~FL_USER_V4L2_CAP;
	mutex_unlock(&host->lock);
	fl_v4l2_stop_pump(v);
}

const struct vb2_ops fl_vcap_qops = {
	.queue_setup = fl_v4l2_queue_setup,
	.buf_prepare = fl_vcap_buf_prepare,
	.buf_queue = fl_v4l2_buf_queue,
	.start_streaming = fl_v4l2_start,
	.stop_streaming = fl_vcap_stop,
	FL_VB2_WAIT_OPS
};

const struct v4l2_ioctl_ops fl_vcap_iops = {
	.vidioc_querycap = fl_v4l2_querycap,
	.vidioc_enum_fmt_vid_cap = fl_v4l2_enum_fmt,
	.vidioc_enum_framesizes = fl_v4l2_enum_framesizes,
	.vidioc_g_fmt_vid_cap = fl_v4l2_g_fmt,
	.vidioc_try_fmt_vid_cap = fl_v4l2_try_fmt,
	.vidioc_s_fmt_vid_cap = fl_v4l2_s_fmt,
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
};
