// SPDX-License-Identifier: GPL-2.0
/*
 * framelink v4l2-stream: frames through a V4L2 output device and the V4L2 capture device at
 * the link's other end (issue 29), measured as `framelink stream` measures the ioctl path,
 * for make bench:
 *
 *   framelink v4l2-stream -o OUTDEV -c CAPDEV -s SIZE -n COUNT [-q DEPTH] [--dmabuf]
 *                         [--e2h] [-d HOSTDEV] [-p EPDEV] [--csv]
 *
 * Host -> endpoint by default (OUTDEV the host's output device, CAPDEV the endpoint's capture
 * device); with --e2h endpoint -> host (OUTDEV the endpoint's output device, CAPDEV the
 * host's capture device: MMAP only, and its timestamps are the host's, not copied).
 *
 * Frames are GREY, 1024 pixels wide and SIZE / 1024 lines (SIZE a multiple of 2048 from
 * 32 KiB): both devices' format arithmetic gives exactly SIZE bytes. The host's thread keeps
 * DEPTH MMAP output buffers queued; the endpoint's thread DEPTH capture buffers: MMAP, or
 * with --dmabuf the endpoint's slots exported as dma-bufs (FL_IOC_EXPORT) and imported, a
 * consumer's own memory. The capture buffers are created for SIZE (CREATE_BUFS), whatever
 * format an earlier stream announced. Each frame's number is stamped into its first and last
 * 8 bytes (payload.h), checked and poisoned on arrival; its timestamp is the host's
 * CLOCK_MONOTONIC at QBUF, which the capture buffer carries (TIMESTAMP_COPY, ABI 1.3): a
 * copied timestamp that is not the one queued counts the frame bad.
 *
 * Printed, and with --csv as one "csv," line in `framelink stream`'s columns (mode v4l2-mmap
 * or v4l2-dmabuf, direction h2e): GB/s (10^9 B/s of payload from the first QBUF on the host
 * to the last DQBUF on the endpoint), frames/s, latency (QBUF on the host to DQBUF on the
 * endpoint) p50/p99/max and interrupts per frame over the steady window (the frames after
 * the first DEPTH and before the last DEPTH), the endpoint's DMA and CPU transfers over the
 * run, and each application thread's CPU time per frame. Columns the ioctl path has and this
 * path does not measure (reaction time, link reads) are 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "libframelink.h"
#include "payload.h"
#include "v4l2stream.h"

#define VS_MAX_BUFS	32	/* VIDEO_MAX_FRAME */
#define VS_WIDTH	1024
#define VS_WAIT_MS	10000	/* no frame for this long: the run failed */

struct vs_opts {
	const char *out, *cap, *host, *ep;
	u64 size, count;
	u32 depth;
	int csv, dmabuf, e2h;
};

/* One video node and its buffers (a mapping each; with --dmabuf the capture's are slots) */
struct vs_node {
	int fd;
	u32 type, memory, first;
	u8 *map[VS_MAX_BUFS];
	u32 len[VS_MAX_BUFS];
	int dmafd[VS_MAX_BUFS];
};

struct vs_run {
	const struct vs_opts *o;
	struct vs_node out, cap;
	struct fl_dev h, e;
	u64 *tq;			/* QBUF time of each frame (host thread writes) */
	u64 *lat, nlat;
	u64 sent, received, bad, t0, t_last, w_lo, w_hi;
	struct fl_stats w_h[2], w_e[2];
	u64 cpu_ns[2];
	int ret[2];
};

static int vs_ioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

static u64 vs_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* GREY 1024 x SIZE/1024: exactly SIZE bytes, or -EINVAL */
static int vs_format(struct vs_node *n, u64 size, struct v4l2_format *f)
{
	int ret;

	*f = (struct v4l2_format){ .type = n->type };
	f->fmt.pix.width = VS_WIDTH;
	f->fmt.pix.height = (u32)(size / VS_WIDTH);
	f->fmt.pix.pixelformat = V4L2_PIX_FMT_GREY;
	f->fmt.pix.field = V4L2_FIELD_NONE;
	ret = vs_ioctl(n->fd, VIDIOC_S_FMT, f);
	if (!ret && n->type == V4L2_BUF_TYPE_VIDEO_OUTPUT && f->fmt.pix.sizeimage != size)
		ret = -EINVAL;
	return ret;
}

/* @count buffers of @size on @n: created (CREATE_BUFS: the size, not the format's), mapped */
static int vs_buffers(struct vs_node *n, struct vs_run *r, u32 count)
{
	struct v4l2_create_buffers cb = { .count = count, .memory = n->memory };
	struct fl_export ex;
	u32 i;
	int ret;

	ret = vs_format(n, r->o->size, &cb.format);
	/*
	 * The capture device offers the format the host announced last (an earlier run's, of
	 * another size): buffers that hold it and this run's frames
	 */
	if (cb.format.fmt.pix.sizeimage < r->o->size)
		cb.format.fmt.pix.sizeimage = (u32)r->o->size;
	if (!ret)
		ret = vs_ioctl(n->fd, VIDIOC_CREATE_BUFS, &cb);
	if (!ret && cb.count != count)
		ret = -ENOMEM;
	n->first = cb.index;
	for (i = 0; !ret && i < count; i++) {
		struct v4l2_buffer b = { .type = n->type, .memory = n->memory,
					 .index = n->first + i };

		if (n->memory == V4L2_MEMORY_DMABUF) {
			ex = (struct fl_export){ .slot = i, .flags = FL_EXPORT_CLOEXEC };
			ret = vs_ioctl(r->e.fd, FL_IOC_EXPORT, &ex);
			n->dmafd[i] = ret ? -1 : ex.fd;
			n->map[i] = fl_dev_buf(&r->e, i);
			continue;
		}
		ret = vs_ioctl(n->fd, VIDIOC_QUERYBUF, &b);
		if (ret)
			break;
		n->len[i] = b.length;
		n->map[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, n->fd,
				 b.m.offset);
		if (n->map[i] == MAP_FAILED) {
			n->map[i] = NULL;
			ret = -errno;
		}
	}
	return ret;
}

static int vs_qbuf(struct vs_node *n, u32 i, u64 size, u64 ts_ns)
{
	struct v4l2_buffer b = { .type = n->type, .memory = n->memory, .index = n->first + i };

	/* a dma-buf's length: all of it (0), at least what the format asks */
	if (n->memory == V4L2_MEMORY_DMABUF)
		b.m.fd = n->dmafd[i];
	if (n->type == V4L2_BUF_TYPE_VIDEO_OUTPUT) {
		b.bytesused = (u32)size;
		b.field = V4L2_FIELD_NONE;
		b.timestamp.tv_sec = (time_t)(ts_ns / 1000000000ull);
		b.timestamp.tv_usec = (long)(ts_ns % 1000000000ull / 1000);
	}
	return vs_ioctl(n->fd, VIDIOC_QBUF, &b);
}

/* Wait up to VS_WAIT_MS for a buffer back on @n; 0 and @b, or -errno (-ETIMEDOUT) */
static int vs_dqbuf(struct vs_node *n, struct v4l2_buffer *b)
{
	struct pollfd p = { .fd = n->fd,
			    .events = n->type == V4L2_BUF_TYPE_VIDEO_OUTPUT ? POLLOUT : POLLIN };
	int ret;

	ret = poll(&p, 1, VS_WAIT_MS);
	if (ret < 0)
		return -errno;
	if (!ret)
		return -ETIMEDOUT;
	*b = (struct v4l2_buffer){ .type = n->type, .memory = n->memory };
	return vs_ioctl(n->fd, VIDIOC_DQBUF, b);
}

/* The sender: every frame stamped with its number and queued, DEPTH in flight */
static int vs_send(struct vs_run *r)
{
	const struct vs_opts *o = r->o;
	u32 type = r->out.type, i;
	struct v4l2_buffer b;
	int ret = 0;

	for (; !ret && r->sent < o->count; r->sent++) {
		if (r->sent < o->depth) {
			i = (u32)r->sent;
		} else {
			ret = vs_dqbuf(&r->out, &b);
			if (ret)
				break;
			i = b.index - r->out.first;
		}
		pl_stamp(r->out.map[i], o->size, r->sent, 0);
		__atomic_store_n(&r->tq[r->sent], fl_now_ns(), __ATOMIC_RELEASE);
		if (!r->sent)
			r->t0 = r->tq[0];
		ret = vs_qbuf(&r->out, i, o->size, r->tq[r->sent]);
		if (!ret && !r->sent)
			ret = vs_ioctl(r->out.fd, VIDIOC_STREAMON, &type);
	}
	/* the last frames complete before STREAMOFF (it would cancel them after 1 s) */
	while (!ret && __atomic_load_n(&r->received, __ATOMIC_ACQUIRE) < r->sent &&
	       !vs_dqbuf(&r->out, &b))
		;
	vs_ioctl(r->out.fd, VIDIOC_STREAMOFF, &type);
	return ret;
}

/* One frame arrived in capture buffer @i: stamps, copied timestamp, latency, window */
static void vs_arrived(struct vs_run *r, const struct v4l2_buffer *b, u32 i)
{
	const struct vs_opts *o = r->o;
	u64 now = fl_now_ns(), fno = r->received, tq, ts;

	tq = __atomic_load_n(&r->tq[fno], __ATOMIC_ACQUIRE);
	ts = (u64)b->timestamp.tv_sec * 1000000000ull + (u64)b->timestamp.tv_usec * 1000ull;
	/* host -> endpoint: the capture buffer carries the timestamp queued (TIMESTAMP_COPY) */
	if ((b->flags & V4L2_BUF_FLAG_ERROR) || b->bytesused != o->size ||
	    !pl_take_stamps(r->cap.map[i], o->size, fno, 0) ||
	    (!o->e2h && ts != tq / 1000 * 1000)) {
		fprintf(stderr, "framelink: v4l2-stream: bad frame %llu: flags %#x, %u bytes, ",
			fno, b->flags, b->bytesused);
		fprintf(stderr, "timestamp %llu (queued %llu)\n", ts, tq / 1000 * 1000);
		r->bad++;
	} else {
		if (fno >= r->w_lo && fno < r->w_hi)
			r->lat[r->nlat++] = now - tq;
		r->t_last = now;
	}
	if (fno == r->w_lo || fno == r->w_hi - 1) {
		fl_dev_stats(&r->h, &r->w_h[fno != r->w_lo]);
		fl_dev_stats(&r->e, &r->w_e[fno != r->w_lo]);
	}
	__atomic_store_n(&r->received, fno + 1, __ATOMIC_RELEASE);
}

/* The receiver: DEPTH capture buffers queued, streaming, each frame checked and requeued */
static int vs_receive(struct vs_run *r)
{
	const struct vs_opts *o = r->o;
	u32 type = r->cap.type, i;
	struct v4l2_buffer b;
	int ret = 0;

	while (r->received < o->count) {
		ret = vs_dqbuf(&r->cap, &b);
		if (ret)
			break;
		i = b.index - r->cap.first;
		vs_arrived(r, &b, i);
		if (r->received < o->count && o->count - r->received >= o->depth)
			ret = vs_qbuf(&r->cap, i, o->size, 0);
		if (ret)
			break;
	}
	vs_ioctl(r->cap.fd, VIDIOC_STREAMOFF, &type);
	return ret;
}

/* One end's loop in its own thread, as on two boards: 0 the sender's, 1 the receiver's */
struct vs_end {
	struct vs_run *r;
	int (*loop)(struct vs_run *r);
	int end;
};

static void *vs_thread(void *arg)
{
	struct vs_end *a = arg;
	u64 t = vs_cpu_ns();

	a->r->ret[a->end] = a->loop(a->r);
	a->r->cpu_ns[a->end] = vs_cpu_ns() - t;
	return NULL;
}

/* Both nodes open with their buffers; the capture side queued and streaming */
static int vs_setup(struct vs_run *r)
{
	const struct vs_opts *o = r->o;
	u32 type = V4L2_BUF_TYPE_VIDEO_CAPTURE, i;
	int ret;

	r->out = (struct vs_node){ .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
				   .memory = V4L2_MEMORY_MMAP };
	r->cap = (struct vs_node){ .type = type,
				   .memory = o->dmabuf ? V4L2_MEMORY_DMABUF : V4L2_MEMORY_MMAP };
	r->out.fd = open(o->out, O_RDWR | O_NONBLOCK);
	r->cap.fd = open(o->cap, O_RDWR | O_NONBLOCK);
	if (r->out.fd < 0 || r->cap.fd < 0)
		return -errno;
	if (o->dmabuf && (r->e.info.nbufs < o->depth || r->e.info.buf_size < o->size))
		return -ENOSPC;
	ret = vs_buffers(&r->out, r, o->depth);
	if (!ret)
		ret = vs_buffers(&r->cap, r, o->depth);
	for (i = 0; !ret && i < o->depth; i++)
		ret = vs_qbuf(&r->cap, i, o->size, 0);
	if (!ret)
		ret = vs_ioctl(r->cap.fd, VIDIOC_STREAMON, &type);
	return ret;
}

static void vs_teardown(struct vs_run *r)
{
	u32 i;

	for (i = 0; i < VS_MAX_BUFS; i++) {
		if (r->out.map[i])
			munmap(r->out.map[i], r->out.len[i]);
		if (r->cap.memory == V4L2_MEMORY_MMAP && r->cap.map[i])
			munmap(r->cap.map[i], r->cap.len[i]);
		if (r->cap.memory == V4L2_MEMORY_DMABUF && r->cap.map[i])
			close(r->cap.dmafd[i]);
	}
	if (r->out.fd >= 0)
		close(r->out.fd);
	if (r->cap.fd >= 0)
		close(r->cap.fd);
}

static int vs_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void vs_print(struct vs_run *r, const struct fl_stats *de)
{
	const struct vs_opts *o = r->o;
	u64 n = r->received - r->bad, ns = r->t_last > r->t0 ? r->t_last - r->t0 : 1;
	u64 p50 = 0, p99 = 0, max = 0;
	double fr = (double)(r->w_hi - 1 - r->w_lo), gbps, fps, irq = 0, raise = 0, us[2];
	const char *mode = o->dmabuf ? "v4l2-dmabuf" : "v4l2-mmap";
	int k;

	if (r->nlat) {
		qsort(r->lat, r->nlat, sizeof(*r->lat), vs_cmp);
		p50 = r->lat[(r->nlat - 1) / 2];
		p99 = r->lat[(r->nlat * 99 + 99) / 100 - 1];
		max = r->lat[r->nlat - 1];
	}
	if (r->received >= r->w_hi && fr > 0) {
		irq = (double)(r->w_h[1].interrupts - r->w_h[0].interrupts) / fr;
		raise = (double)(r->w_e[1].interrupts - r->w_e[0].interrupts) / fr;
	}
	gbps = (double)(n * o->size) / (double)ns;
	fps = (double)n * 1e9 / (double)ns;
	for (k = 0; k < 2; k++)
		us[k] = r->received ? r->cpu_ns[k] / 1e3 / (double)r->received : 0;
	printf("%-11s %8llu %8llu %3u %8.3f %9.1f %9.1f %9.1f %9.1f %7.3f %7.3f ", mode, o->size,
	       n, o->depth, gbps, fps, p50 / 1e3, p99 / 1e3, max / 1e3, irq, raise);
	printf("%7llu %7llu %4llu\n", de->dma_transfers, de->cpu_transfers, r->bad);
	if (!o->csv)
		return;
	printf("csv,%s,%s,%llu,%u,%llu,%llu,", mode, o->e2h ? "e2h" : "h2e", o->size, o->depth, n,
	       ns);
	printf("%.6f,%.1f,%.1f,%.1f,%.1f,", gbps, fps, p50 / 1e3, p99 / 1e3, max / 1e3);
	printf("%.4f,%.4f,%llu,%llu,%llu,", irq, raise, de->dma_transfers, de->cpu_transfers,
	       r->bad);
	/* reaction time and link reads: not measured on this path */
	/* host app, endpoint app: the sender's thread is 0, the receiver's 1 */
	printf("0,0,0,0,%.1f,%.1f\n", us[o->e2h], us[!o->e2h]);
}

static int vs_parse(int argc, char **argv, struct vs_opts *o)
{
	static const struct option lo[] = { { "csv", no_argument, NULL, 'C' },
					    { "dmabuf", no_argument, NULL, 'D' },
					    { "e2h", no_argument, NULL, 'E' }, { } };
	int ch;

	*o = (struct vs_opts){ .host = "/dev/framelink0", .ep = "/dev/framelink-ep0",
			       .depth = 16 };
	optind = 2;
	while ((ch = getopt_long(argc, argv, "o:c:d:p:s:n:q:", lo, NULL)) != -1) {
		if (ch == 'o')
			o->out = optarg;
		else if (ch == 'c')
			o->cap = optarg;
		else if (ch == 'd')
			o->host = optarg;
		else if (ch == 'p')
			o->ep = optarg;
		else if (ch == 's' && fl_parse_size(optarg, &o->size))
			return -EINVAL;
		else if (ch == 'n')
			o->count = strtoull(optarg, NULL, 0);
		else if (ch == 'q')
			o->depth = (u32)strtoul(optarg, NULL, 0);
		else if (ch == 'C')
			o->csv = 1;
		else if (ch == 'D')
			o->dmabuf = 1;
		else if (ch == 'E')
			o->e2h = 1;
		else if (ch != 's')
			return -EINVAL;
	}
	if (!o->out || !o->cap || o->size < 32768 || o->size % (2 * VS_WIDTH) ||
	    o->size / VS_WIDTH > 8192 || !o->depth || o->depth > VS_MAX_BUFS ||
	    o->count < 3 * o->depth || (o->e2h && o->dmabuf))
		return -EINVAL;
	return 0;
}

int cmd_v4l2_stream(int argc, char **argv)
{
	struct vs_run r = { .out.fd = -1, .cap.fd = -1, .h.fd = -1, .e.fd = -1 };
	struct vs_end ends[2] = { { &r, vs_send, 0 }, { &r, vs_receive, 1 } };
	struct fl_stats e0, e1, de = { 0 };
	int ret, k, started[2];
	pthread_t th[2];
	struct vs_opts o;

	if (vs_parse(argc, argv, &o)) {
		fputs("usage: framelink v4l2-stream -o OUTDEV -c CAPDEV -s SIZE -n COUNT", stderr);
		fputs(" [-q DEPTH]", stderr);
		fputs(" [--dmabuf | --e2h] [-d HOSTDEV] [-p EPDEV] [--csv]\n", stderr);
		fputs("  SIZE: a multiple of 2048 from 32K to 8M; COUNT at least 3 x DEPTH\n",
		      stderr);
		return 2;
	}
	r.o = &o;
	r.w_lo = o.depth;
	r.w_hi = o.count - o.depth;
	r.tq = calloc(o.count, sizeof(*r.tq));
	r.lat = calloc(o.count, sizeof(*r.lat));
	ret = r.tq && r.lat ? 0 : -ENOMEM;
	if (!ret)
		ret = fl_dev_open(&r.h, o.host, 0);
	if (!ret)
		ret = fl_dev_open(&r.e, o.ep, o.dmabuf);
	if (!ret)
		ret = vs_setup(&r);
	fl_dev_stats(&r.e, &e0);
	if (!ret) {
		/* the receiver's first: its buffers are queued already, it only waits */
		for (k = 1; k >= 0; k--) {
			started[k] = !pthread_create(&th[k], NULL, vs_thread, &ends[k]);
			if (!started[k])
				r.ret[k] = -EAGAIN;
		}
		for (k = 0; k < 2; k++)
			if (started[k])
				pthread_join(th[k], NULL);
		ret = r.ret[0] ? r.ret[0] : r.ret[1];
	}
	fl_dev_stats(&r.e, &e1);
	de.dma_transfers = e1.dma_transfers - e0.dma_transfers;
	de.cpu_transfers = e1.cpu_transfers - e0.cpu_transfers;
	if (ret)
		fprintf(stderr, "framelink: v4l2-stream: %s\n", strerror(-ret));
	printf("%-11s %8s %8s %3s %8s %9s %9s %9s %9s %7s %7s %7s %7s %4s\n", "mode", "size",
	       "frames", "q", "GB/s", "frames/s", "p50_us", "p99_us", "max_us", "irq/fr",
	       "raise/fr", "dma", "cpu", "bad");
	vs_print(&r, &de);
	vs_teardown(&r);
	fl_dev_close(&r.e);
	fl_dev_close(&r.h);
	free(r.tq);
	free(r.lat);
	return ret || r.bad || r.received < o.count;
}
