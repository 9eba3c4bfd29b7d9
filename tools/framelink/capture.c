// SPDX-License-Identifier: GPL-2.0
/*
 * framelink capture: camera frames from a V4L2 capture device to the endpoint, without a
 * host CPU copy.
 *
 * Every V4L2 buffer (MMAP) is exported as a dma-buf (VIDIOC_EXPBUF) and imported into the
 * host's framelink device (FL_IOC_IMPORT) once; then each frame the camera fills is sent
 * from its own buffer: DQBUF -> SUBMIT { buf = the import's index, bytes = bytesused } ->
 * FL_Q_TX completion -> QBUF. A V4L2 buffer goes back to the camera only after the TX
 * completion of the frame it holds (the endpoint reads it until then), so the number of
 * V4L2 buffers bounds the frames in flight. --copy is the fallback for a camera whose
 * buffers cannot be imported: each frame is copied into a framelink-owned host buffer and
 * the V4L2 buffer is queued again at once.
 *
 * --crc puts the CRC-32 of each frame (read through the V4L2 mapping after DQBUF) in its
 * cookie, ((u64)v4l2 sequence << 32) | crc32, for `framelink recv --crc` on the endpoint.
 * One summary line: "capture: mode=import frames=N size=B fps=F drops=D latency_us p50=..
 * p99=.. max=.. copies=C tx_imported=T errors=E". Latency: from DQBUF's return to the TX
 * completion reaching the host driver (fl_completion.ts_delivered). Drops: gaps in the
 * V4L2 sequence numbers. Exit status 0 only when N frames went out without an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "libframelink.h"
#include "capture.h"

#define CAP_MAX_BUFFERS	32
#define CAP_REAP_MAX	64
#define CAP_DRAIN_MS	5000

struct cap_opts {
	const char *dev;	/* framelink host device */
	const char *video;	/* a path, or a V4L2 bus_info / card name to look for */
	u32 width, height, fourcc, nbuf, fps;
	u64 count;
	int crc, copy, verbose, timeout_ms;
};

/* One V4L2 buffer */
struct cap_buf {
	void *map;
	size_t len;
	u32 imp;		/* framelink buffer index of its import */
	int imported;
	int queued;		/* owned by the V4L2 driver (QBUF'd) */
};

/* One frame in flight on the framelink device */
struct cap_flight {
	int used;
	u32 flbuf;		/* the framelink buffer it was sent from */
	int vidx;		/* its V4L2 buffer (import mode), -1 after a copy */
	u64 t_dq;
};

struct cap {
	struct cap_opts o;
	struct fl_dev d;
	int vfd;
	char vpath[64];
	struct v4l2_pix_format pix;
	struct cap_buf b[CAP_MAX_BUFFERS];
	u32 nbuf;
	struct cap_flight fl[FL_RING_MAX_ENTRIES];
	u32 max_flight, inflight;
	u32 *hfree, nhfree;	/* --copy: free host buffers */
	u64 submitted, done, ok, errors, copies, drops, bytes, bad_v4l2;
	int draining;		/* after STREAMOFF: no QBUF */
	u64 *lat;
	u64 nlat, lat_room;
	u32 last_seq;
	int have_seq;
	u64 t_first, t_last;
};

static int cap_stop;	/* set by a signal: __atomic_load_n() */

#define cap_err(...)	fprintf(stderr, "framelink: capture: " __VA_ARGS__)

static void cap_on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&cap_stop, 1, __ATOMIC_RELAXED);
}

static int cap_stopped(void)
{
	return __atomic_load_n(&cap_stop, __ATOMIC_RELAXED);
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret && errno == EINTR && !cap_stopped());
	return ret ? -errno : 0;
}

static void cap_usage(FILE *f)
{
	fputs("usage: framelink capture [-d DEV] [--video PATH|BUS_INFO] [-n COUNT]\n"
	      "         [--width W] [--height H] [--format FOURCC] [--buffers N] [--fps N]\n"
	      "         [--crc] [--copy] [-t MS] [-v]\n"
	      "  --video    the V4L2 capture device: a path (default /dev/video0), or the\n"
	      "             bus_info or card name VIDIOC_QUERYCAP reports (platform:vivid-000)\n"
	      "  -n COUNT   frames to send (default 100; 0 = until interrupted)\n"
	      "  --width/--height/--format  S_FMT (default 640x480 YUYV)\n"
	      "  --buffers  V4L2 buffers (default 4): the frames that can be in flight\n"
	      "  --fps      ask the camera for this frame rate (VIDIOC_S_PARM; default 30,\n"
	      "             0 keeps the camera's)\n"
	      "  --crc      cookie = (u64)sequence << 32 | CRC-32 of the frame\n"
	      "             (check with `framelink recv --crc` on the endpoint)\n"
	      "  --copy     copy each frame into a framelink host buffer instead of\n"
	      "             importing the V4L2 buffers (FL_IOC_IMPORT)\n"
	      "  -t MS      fail when nothing happens for MS (default 5000)\n", f);
}

static int cap_parse(int argc, char **argv, struct cap_opts *o)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "video", required_argument, NULL, 'V' },
		{ "count", required_argument, NULL, 'n' },
		{ "width", required_argument, NULL, 'W' },
		{ "height", required_argument, NULL, 'H' },
		{ "format", required_argument, NULL, 'F' },
		{ "buffers", required_argument, NULL, 'B' },
		{ "fps", required_argument, NULL, 'R' },
		{ "crc", no_argument, NULL, 'C' },
		{ "copy", no_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	unsigned long long v;
	char *end;
	int ch;

	*o = (struct cap_opts){ .dev = "/dev/framelink0", .video = "/dev/video0",
				.width = 640, .height = 480, .fourcc = V4L2_PIX_FMT_YUYV,
				.nbuf = 4, .fps = 30, .count = 100, .timeout_ms = 5000 };
	optind = 2;
	while ((ch = getopt_long(argc, argv, "d:n:t:vh", lo, NULL)) != -1) {
		switch (ch) {
		case 'd':
			o->dev = optarg;
			continue;
		case 'V':
			o->video = optarg;
			continue;
		case 'F':
			if (strlen(optarg) != 4)
				return -1;
			o->fourcc = v4l2_fourcc(optarg[0], optarg[1], optarg[2], optarg[3]);
			continue;
		case 'C':
			o->crc = 1;
			continue;
		case 'P':
			o->copy = 1;
			continue;
		case 'v':
			o->verbose = 1;
			continue;
		case 'h':
			cap_usage(stdout);
			exit(0);
		case 'n': case 'W': case 'H': case 'B': case 'R': case 't':
			break;
		default:
			return -1;
		}
		errno = 0;
		v = strtoull(optarg, &end, 0);
		if (errno || end == optarg || *end || v > UINT32_MAX)
			return -1;
		switch (ch) {
		case 'n':
			o->count = v;
			break;
		case 'W':
			o->width = (u32)v;
			break;
		case 'H':
			o->height = (u32)v;
			break;
		case 'B':
			if (!v || v > CAP_MAX_BUFFERS)
				return -1;
			o->nbuf = (u32)v;
			break;
		case 'R':
			o->fps = (u32)v;
			break;
		case 't':
			if (!v || v > FL_REAP_MAX_TIMEOUT_MS)
				return -1;
			o->timeout_ms = (int)v;
			break;
		}
	}
	return optind == argc && o->width && o->height ? 0 : -1;
}

/* A capture device's capabilities, or 0 when it is none */
static u32 cap_caps(const struct v4l2_capability *q)
{
	return q->capabilities & V4L2_CAP_DEVICE_CAPS ? q->device_caps : q->capabilities;
}

/* Open the V4L2 device: --video as a path, else the /dev/videoN whose bus_info or card matches */
static int cap_open_video(struct cap *c)
{
	struct v4l2_capability q;
	const char *want = c->o.video;
	int fd;

	if (want[0] == '/') {
		snprintf(c->vpath, sizeof(c->vpath), "%s", want);
		fd = open(c->vpath, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			cap_err("%s: %s\n", c->vpath, strerror(errno));
			return -1;
		}
		if (xioctl(fd, VIDIOC_QUERYCAP, &q)) {
			cap_err("%s is no V4L2 device: %s\n",
				c->vpath, strerror(errno));
			close(fd);
			return -1;
		}
		c->vfd = fd;
		goto found;
	}
	for (int i = 0; i < 64; i++) {
		snprintf(c->vpath, sizeof(c->vpath), "/dev/video%d", i);
		fd = open(c->vpath, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!xioctl(fd, VIDIOC_QUERYCAP, &q) &&
		    (cap_caps(&q) & V4L2_CAP_VIDEO_CAPTURE) &&
		    (!strcmp((const char *)q.bus_info, want) ||
		     !strcmp((const char *)q.card, want))) {
			c->vfd = fd;
			goto found;
		}
		close(fd);
	}
	cap_err("no V4L2 capture device with bus_info or card '%s'\n",
		want);
	return -1;

found:
	if (!(cap_caps(&q) & V4L2_CAP_VIDEO_CAPTURE) || !(cap_caps(&q) & V4L2_CAP_STREAMING)) {
		cap_err("%s (%s) is no single-planar streaming capture device\n",
			c->vpath, (const char *)q.card);
		return -1;
	}
	cap_err("%s: driver %s, card '%s', bus_info %s\n", c->vpath,
		(const char *)q.driver, (const char *)q.card, (const char *)q.bus_info);
	return 0;
}

static const char *fourcc_str(u32 f, char *s)
{
	for (int i = 0; i < 4; i++) {
		char ch = (char)((f >> (8 * i)) & 0xff);

		s[i] = ch > ' ' && ch < 0x7f ? ch : '.';
	}
	s[4] = 0;
	return s;
}

/* S_FMT, S_PARM, REQBUFS and one mapping per buffer */
static int cap_setup_video(struct cap *c)
{
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers rb = { .count = c->o.nbuf, .type = fmt.type,
					  .memory = V4L2_MEMORY_MMAP };
	char f1[5], f2[5];
	int ret;

	fmt.fmt.pix.width = c->o.width;
	fmt.fmt.pix.height = c->o.height;
	fmt.fmt.pix.pixelformat = c->o.fourcc;
	fmt.fmt.pix.field = V4L2_FIELD_NONE;
	ret = xioctl(c->vfd, VIDIOC_S_FMT, &fmt);
	if (ret) {
		cap_err("S_FMT: %s\n", strerror(-ret));
		return -1;
	}
	c->pix = fmt.fmt.pix;
	if (c->pix.pixelformat != c->o.fourcc) {
		cap_err("%s does not capture %s (offers %s)\n",
			c->vpath, fourcc_str(c->o.fourcc, f1), fourcc_str(c->pix.pixelformat, f2));
		return -1;
	}
	if (c->pix.width != c->o.width || c->pix.height != c->o.height)
		cap_err("the camera chose %ux%u\n", c->pix.width,
			c->pix.height);
	if (c->o.fps) {
		struct v4l2_streamparm p = { .type = fmt.type };

		p.parm.capture.timeperframe.numerator = 1;
		p.parm.capture.timeperframe.denominator = c->o.fps;
		ret = xioctl(c->vfd, VIDIOC_S_PARM, &p);
		if (ret)
			cap_err("S_PARM %u fps: %s (ignored)\n",
				c->o.fps, strerror(-ret));
		else if (c->o.verbose)
			cap_err("%u/%u s per frame\n",
				p.parm.capture.timeperframe.numerator,
				p.parm.capture.timeperframe.denominator);
	}
	ret = xioctl(c->vfd, VIDIOC_REQBUFS, &rb);
	if (ret || !rb.count) {
		cap_err("REQBUFS %u MMAP buffers: %s\n", c->o.nbuf,
			ret ? strerror(-ret) : "none given");
		return -1;
	}
	if (rb.count > CAP_MAX_BUFFERS) {
		cap_err("the driver wants %u buffers, at most %d here\n",
			rb.count, CAP_MAX_BUFFERS);
		c->nbuf = rb.count;	/* released by cap_teardown() */
		return -1;
	}
	c->nbuf = rb.count;
	for (u32 i = 0; i < c->nbuf; i++) {
		struct v4l2_buffer vb = { .index = i, .type = fmt.type, .memory = rb.memory };

		ret = xioctl(c->vfd, VIDIOC_QUERYBUF, &vb);
		if (ret) {
			cap_err("QUERYBUF %u: %s\n", i, strerror(-ret));
			return -1;
		}
		c->b[i].len = vb.length;
		c->b[i].map = mmap(NULL, vb.length, PROT_READ, MAP_SHARED, c->vfd, vb.m.offset);
		if (c->b[i].map == MAP_FAILED) {
			c->b[i].map = NULL;
			cap_err("mmap of buffer %u: %s\n", i,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void cap_import_error(struct cap *c, u32 i, int err)
{
	cap_err("FL_IOC_IMPORT of V4L2 buffer %u (%s) into %s: %s\n",
		i, c->vpath, c->o.dev, strerror(err));
	switch (err) {
	case EOPNOTSUPP:
		if (!(c->d.info.caps & FL_CAP_IMPORT))
			cap_err("this kernel has no dma-buf import; use --copy\n");
		else
			fprintf(stderr,
				"framelink: capture: the buffer is scatter-gather: it maps to more than one DMA\n"
				"  segment for the host's PCI function (e.g. vb2-vmalloc). Use a camera driver\n"
				"  that allocates contiguous buffers (vivid: allocators=1, vb2-dma-contig), an\n"
				"  IOMMU, or --copy\n");
		break;
	case ENOSPC:
		cap_err("the device holds at most %u imports: use --buffers %u\n",
			c->d.info.max_imports, c->d.info.max_imports);
		break;
	case ENOTTY:
		cap_err("%s has no FL_IOC_IMPORT (not the host's device, or a\n"
			"  driver older than ABI 1.1); use --copy\n", c->o.dev);
		break;
	case EBADF:
		cap_err("VIDIOC_EXPBUF gave no dma-buf\n");
		break;
	}
}

/* EXPBUF + IMPORT of every V4L2 buffer; the dma-buf fds are closed at once (the import holds it) */
static int cap_import(struct cap *c)
{
	if (!(c->d.info.caps & FL_CAP_IMPORT)) {
		fprintf(stderr,
			"framelink: capture: %s cannot import dma-bufs (caps %#x lacks FL_CAP_IMPORT:\n"
			"  a driver older than ABI 1.1 or a kernel without dma-buf); use --copy\n",
			c->o.dev, c->d.info.caps);
		return -1;
	}
	if (c->nbuf > c->d.info.max_imports) {
		cap_import_error(c, c->d.info.max_imports, ENOSPC);
		return -1;
	}
	for (u32 i = 0; i < c->nbuf; i++) {
		struct v4l2_exportbuffer x = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .index = i,
					       .flags = O_RDONLY | O_CLOEXEC };
		struct fl_import im = { 0 };
		int ret;

		ret = xioctl(c->vfd, VIDIOC_EXPBUF, &x);
		if (ret) {
			cap_err("VIDIOC_EXPBUF %u: %s: %s cannot export\n"
				"  its buffers as dma-bufs; use --copy\n", i, strerror(-ret),
				c->vpath);
			return -1;
		}
		im.fd = x.fd;
		ret = xioctl(c->d.fd, FL_IOC_IMPORT, &im);
		close(x.fd);
		if (ret) {
			cap_import_error(c, i, -ret);
			return -1;
		}
		c->b[i].imp = im.buf;
		c->b[i].imported = 1;
		if (c->o.verbose)
			cap_err("V4L2 buffer %u -> framelink buffer %u, %llu bytes, %u segment(s)\n",
				i, im.buf, (unsigned long long)im.size, im.segments);
		if (im.size < c->pix.sizeimage)
			cap_err("buffer %u: dma-buf of %llu bytes < frame size %u\n",
				i, (unsigned long long)im.size, c->pix.sizeimage);
	}
	return 0;
}

static int cap_qbuf(struct cap *c, u32 i)
{
	struct v4l2_buffer vb = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				  .memory = V4L2_MEMORY_MMAP };
	int ret = xioctl(c->vfd, VIDIOC_QBUF, &vb);

	if (ret)
		cap_err("QBUF %u: %s\n", i, strerror(-ret));
	else
		c->b[i].queued = 1;
	return ret;
}

static void cap_lat_add(struct cap *c, u64 ns)
{
	if (c->nlat == c->lat_room) {
		u64 room = c->lat_room ? c->lat_room * 2 : 1024;
		u64 *p = realloc(c->lat, room * sizeof(*p));

		if (!p)
			return;
		c->lat = p;
		c->lat_room = room;
	}
	c->lat[c->nlat++] = ns;
}

/* Reap what completed (waiting up to @timeout_ms for the first); the count or -errno */
static int cap_reap(struct cap *c, int timeout_ms)
{
	struct fl_completion cq[CAP_REAP_MAX];
	int n = fl_dev_reap(&c->d, cq, CAP_REAP_MAX, timeout_ms);

	if (n < 0) {
		if (n == -EINTR)
			return 0;
		cap_err("REAP: %s\n", strerror(-n));
		return n;
	}
	for (int k = 0; k < n; k++) {
		struct fl_completion *x = &cq[k];
		struct cap_flight *f = NULL;

		if (x->queue != FL_Q_TX)
			continue;
		for (u32 j = 0; j < c->max_flight; j++)
			if (c->fl[j].used && c->fl[j].flbuf == x->buf) {
				f = &c->fl[j];
				break;
			}
		if (!f) {
			cap_err("TX completion of buffer %u not in flight\n",
				x->buf);
			c->errors++;
			continue;
		}
		f->used = 0;
		c->inflight--;
		c->done++;
		c->t_last = fl_now_ns();
		if (x->status) {
			cap_err("frame seq %u (cookie %#llx): %s\n",
				(u32)(x->cookie >> 32), (unsigned long long)x->cookie,
				strerror(-x->status));
			c->errors++;
		} else {
			u64 t = x->ts_delivered ? x->ts_delivered : c->t_last;

			c->ok++;
			c->bytes += x->bytes;
			cap_lat_add(c, t > f->t_dq ? t - f->t_dq : 0);
		}
		/* the endpoint is done with the buffer: back to the camera, or the free list */
		if (f->vidx >= 0) {
			if (!c->draining && !cap_stopped() && cap_qbuf(c, (u32)f->vidx))
				return -EIO;
		} else {
			c->hfree[c->nhfree++] = f->flbuf;
		}
	}
	return n;
}

/* DQBUF one frame and send it; 1 when one went out, 0 when none was ready, -errno */
static int cap_one(struct cap *c)
{
	struct v4l2_buffer vb = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	struct fl_frame fr = { .flags = FL_FRAME_EOF };
	struct cap_flight *f = NULL;
	u64 t;
	int ret;

	ret = xioctl(c->vfd, VIDIOC_DQBUF, &vb);
	if (ret == -EAGAIN)
		return 0;
	if (ret) {
		cap_err("DQBUF: %s\n", strerror(-ret));
		return ret;
	}
	t = fl_now_ns();
	if (vb.index >= c->nbuf)
		return -EPROTO;
	c->b[vb.index].queued = 0;
	if (c->have_seq && vb.sequence > c->last_seq + 1)
		c->drops += vb.sequence - c->last_seq - 1;
	c->last_seq = vb.sequence;
	c->have_seq = 1;
	if ((vb.flags & V4L2_BUF_FLAG_ERROR) || !vb.bytesused ||
	    vb.bytesused > c->b[vb.index].len) {
		/* nothing to send: straight back to the camera */
		c->bad_v4l2++;
		return cap_qbuf(c, vb.index) ? -EIO : 0;
	}
	if (!c->t_first)
		c->t_first = t;
	fr.bytes = vb.bytesused;
	fr.cookie = (u64)vb.sequence << 32;
	if (c->o.crc)
		fr.cookie |= fl_crc32(0, c->b[vb.index].map, vb.bytesused);
	for (u32 j = 0; j < c->max_flight; j++)
		if (!c->fl[j].used) {
			f = &c->fl[j];
			break;
		}
	if (!f)
		return -EOVERFLOW;	/* cap_run() polls only with room */
	if (c->o.copy) {
		fr.buf = c->hfree[--c->nhfree];
		memcpy(fl_dev_buf(&c->d, fr.buf), c->b[vb.index].map, vb.bytesused);
		c->copies++;
		*f = (struct cap_flight){ .used = 1, .flbuf = fr.buf, .vidx = -1, .t_dq = t };
		if (cap_qbuf(c, vb.index))
			return -EIO;
	} else {
		fr.buf = c->b[vb.index].imp;
		*f = (struct cap_flight){ .used = 1, .flbuf = fr.buf, .vidx = (int)vb.index,
					  .t_dq = t };
	}
	ret = fl_dev_submit(&c->d, &fr, 1, NULL);
	if (ret) {
		cap_err("SUBMIT of a %u-byte frame from buffer %u: %s\n",
			fr.bytes, fr.buf, strerror(-ret));
		f->used = 0;
		return ret;
	}
	c->inflight++;
	c->submitted++;
	if (c->o.verbose)
		printf("frame seq %u bytes %u buf %u cookie %#llx\n", vb.sequence, fr.bytes,
		       fr.buf, (unsigned long long)fr.cookie);
	return 1;
}

static int cap_run(struct cap *c)
{
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	u64 idle_since;
	int ret;

	for (u32 i = 0; i < c->nbuf; i++)
		if (cap_qbuf(c, i))
			return -1;
	ret = xioctl(c->vfd, VIDIOC_STREAMON, &type);
	if (ret) {
		cap_err("STREAMON: %s\n", strerror(-ret));
		return -1;
	}
	idle_since = fl_now_ns();
	while ((!c->o.count || c->done < c->o.count) && !cap_stopped()) {
		int want = (!c->o.count || c->submitted < c->o.count) &&
			   c->inflight < c->max_flight && (!c->o.copy || c->nhfree);
		struct pollfd p[2] = {
			{ .fd = c->d.fd, .events = POLLIN },
			{ .fd = c->vfd, .events = POLLIN },
		};
		int progress = 0;

		/*
		 * The completion wait is bounded by 100 ms whatever poll() says: a lost wake-up
		 * costs time, never the run.
		 */
		if (poll(p, want ? 2 : 1, 100) < 0 && errno != EINTR) {
			cap_err("poll: %s\n", strerror(errno));
			return -1;
		}
		ret = cap_reap(c, 0);
		if (ret < 0)
			return -1;
		progress |= ret > 0;
		if (want) {
			ret = cap_one(c);
			if (ret < 0)
				return -1;
			progress |= ret > 0;
		}
		if (progress) {
			idle_since = fl_now_ns();
		} else if (fl_now_ns() - idle_since > (u64)c->o.timeout_ms * 1000000ull) {
			cap_err("nothing for %d ms: %s (%llu sent, %llu done, %u in flight)\n",
				c->o.timeout_ms, c->inflight ? "no TX completion" :
				"no frame from the camera", c->submitted, c->done, c->inflight);
			return -1;
		}
	}
	return 0;
}

/* Everything in flight completes (or the device is closed, which cancels it) */
static void cap_drain(struct cap *c)
{
	u64 t0 = fl_now_ns();

	while (c->inflight && fl_now_ns() - t0 < CAP_DRAIN_MS * 1000000ull)
		if (cap_reap(c, 100) < 0)
			break;
	if (c->inflight)
		cap_err("%u frame(s) still in flight after %d ms\n",
			c->inflight, CAP_DRAIN_MS);
}

static int cap_teardown(struct cap *c)
{
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_requestbuffers rb = { .type = type, .memory = V4L2_MEMORY_MMAP };
	int fail = 0;

	c->draining = 1;
	if (c->vfd >= 0)
		xioctl(c->vfd, VIDIOC_STREAMOFF, &type);
	if (c->d.fd >= 0)
		cap_drain(c);
	for (u32 i = 0; i < c->nbuf && i < CAP_MAX_BUFFERS; i++) {
		if (c->b[i].imported) {
			struct fl_import im = { .buf = c->b[i].imp };
			int ret = xioctl(c->d.fd, FL_IOC_UNIMPORT, &im);

			if (ret) {
				cap_err("UNIMPORT of buffer %u: %s\n",
					c->b[i].imp, strerror(-ret));
				fail = 1;
			}
			c->b[i].imported = 0;
		}
		if (c->b[i].map)
			munmap(c->b[i].map, c->b[i].len);
		c->b[i].map = NULL;
	}
	if (c->vfd >= 0) {
		if (c->nbuf)
			xioctl(c->vfd, VIDIOC_REQBUFS, &rb);
		close(c->vfd);
		c->vfd = -1;
	}
	return fail;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static double cap_pct(const struct cap *c, double q)
{
	if (!c->nlat)
		return 0;
	return (double)c->lat[(u64)(q * (double)(c->nlat - 1) + 0.5)] / 1e3;
}

int cmd_capture(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = cap_on_signal };
	struct fl_stats s0 = { 0 }, s1 = { 0 };
	struct cap *c = calloc(1, sizeof(*c));
	char fcc[5];
	double secs;
	int fail = 0, ret;

	if (!c)
		return 1;
	if (cap_parse(argc, argv, &c->o)) {
		cap_usage(stderr);
		free(c);
		return 2;
	}
	c->vfd = -1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ret = fl_dev_open(&c->d, c->o.dev, c->o.copy);
	if (ret) {
		cap_err("%s: %s\n", c->o.dev, strerror(-ret));
		free(c);
		return 1;
	}
	if (c->d.info.role != FL_ROLE_HOST) {
		cap_err("%s is not a host device (%s)\n", c->o.dev,
			fl_role_name(c->d.info.role));
		fail = 1;
		goto out;
	}
	if (fl_dev_stats(&c->d, &s0) || cap_open_video(c) || cap_setup_video(c)) {
		fail = 1;
		goto out;
	}
	if (c->o.copy) {
		if (c->pix.sizeimage > c->d.info.buf_size) {
			cap_err("--copy: a %u-byte frame does not fit the host buffers (%u bytes)\n",
				c->pix.sizeimage, c->d.info.buf_size);
			fail = 1;
			goto out;
		}
		c->hfree = calloc(c->d.info.nbufs, sizeof(*c->hfree));
		if (!c->hfree) {
			fail = 1;
			goto out;
		}
		for (u32 i = c->d.info.nbufs; i > 0; i--)
			c->hfree[c->nhfree++] = i - 1;
		c->max_flight = c->d.info.nbufs;
	} else {
		if (cap_import(c)) {
			fail = 1;
			goto out;
		}
		c->max_flight = c->nbuf;
	}
	if (c->d.info.tx_depth && c->max_flight > c->d.info.tx_depth)
		c->max_flight = c->d.info.tx_depth;
	if (c->max_flight > FL_RING_MAX_ENTRIES)
		c->max_flight = FL_RING_MAX_ENTRIES;
	cap_err("%ux%u %s, %u bytes a frame, %u V4L2 buffers, %s, up to %u in flight\n",
		c->pix.width, c->pix.height, fourcc_str(c->pix.pixelformat, fcc),
		c->pix.sizeimage, c->nbuf, c->o.copy ? "copied into host buffers" :
		"imported (zero copy)", c->max_flight);
	if (cap_run(c))
		fail = 1;
out:
	fail |= cap_teardown(c);
	if (fl_dev_stats(&c->d, &s1))
		fail = 1;
	if (c->lat)
		qsort(c->lat, c->nlat, sizeof(*c->lat), cmp_u64);
	secs = c->t_last > c->t_first && c->t_first ? (double)(c->t_last - c->t_first) / 1e9 : 0;
	printf("capture: mode=%s frames=%llu size=%u fps=%.1f drops=%llu ",
	       c->o.copy ? "copy" : "import", c->ok, c->pix.sizeimage,
	       secs > 0 && c->ok > 1 ? (double)(c->ok - 1) / secs : 0.0, c->drops);
	printf("latency_us p50=%.0f p99=%.0f max=%.0f copies=%llu tx_imported=%llu errors=%llu\n",
	       cap_pct(c, 0.50), cap_pct(c, 0.99), c->nlat ? (double)c->lat[c->nlat - 1] / 1e3 : 0,
	       c->copies, s1.tx_imported - s0.tx_imported, c->errors);
	if (c->bad_v4l2)
		printf("capture: %llu buffer(s) from the camera marked bad or empty, not sent\n",
		       c->bad_v4l2);
	if (c->errors || (c->o.count && c->ok < c->o.count))
		fail = 1;
	fl_dev_close(&c->d);
	free(c->hfree);
	free(c->lat);
	free(c);
	return fail;
}
