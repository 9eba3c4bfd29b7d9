// SPDX-License-Identifier: GPL-2.0
/*
 * framelink send, recv, echo: frames one way from this end (send), into it (recv: checked,
 * saved or read through the slots' dma-bufs as asked), and back to where they came from
 * (echo, the endpoint's half of bench).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/dma-buf.h>

#include "framelink.h"

/* A stack of free buffer indices. */
struct freelist {
	u32 *idx;
	u32 n;
};

/* send: frames from the free buffers, their completions counted */
struct send {
	struct fl_dev d;
	struct fl_completion *c;
	struct fl_frame *f;
	struct freelist fl;
	u64 size, sent, done, bytes;
	struct tally t;
	int fail, end;
};

/* SUBMIT up to a batch from the free buffers; 0, or -1 when sending must stop */
static int send_submit(struct send *s, const struct opts *o)
{
	u32 k = 0, acc;
	int ret, i;

	while (s->sent + k < o->count && s->fl.n && k < o->batch) {
		u32 b = s->fl.idx[--s->fl.n];
		u64 cookie = s->sent + k;

		if (o->verify)
			fill_random(fl_dev_buf(&s->d, b), s->size, cookie);
		s->f[k] = (struct fl_frame){ .buf = b, .bytes = (u32)s->size,
					     .flags = FL_FRAME_EOF, .cookie = cookie };
		k++;
	}
	if (!k)
		return 0;
	ret = fl_dev_submit(&s->d, s->f, k, &acc);
	/* whatever was not accepted goes back to the free list */
	for (i = (int)k - 1; i >= (int)acc; i--)
		s->fl.idx[s->fl.n++] = s->f[i].buf;
	s->sent += acc;
	if (ret && ret != -EAGAIN) {
		fprintf(stderr, "framelink: SUBMIT entry %u: %s\n", acc, strerror(-ret));
		s->fail = 1;
		s->end = ret;
		return -1;
	}
	return 0;
}

/* REAP, the buffers back to the free list, the frames sent counted; 0, or -1 to stop */
static int send_reap(struct send *s, const struct opts *o)
{
	int n = fl_dev_reap(&s->d, s->c, MAX_BATCH, o->timeout_ms);

	if (n < 0) {
		fprintf(stderr, "framelink: REAP: %s\n", strerror(-n));
		s->fail = 1;
		s->end = n;
		return -1;
	}
	if (!n) {
		fprintf(stderr, "framelink: send: no completion in %d ms, %llu/%llu done\n",
			o->timeout_ms, s->done, o->count);
		s->fail = 1;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const struct fl_completion *x = &s->c[i];

		if (x->queue != FL_Q_TX) {
			/* a frame from the peer we did not ask for: give the buffer back */
			s->fl.idx[s->fl.n++] = x->buf;
			continue;
		}
		s->fl.idx[s->fl.n++] = x->buf;
		s->done++;
		tally_add(&s->t, x->status);
		if (x->status) {
			fprintf(stderr, "framelink: frame %llu: %s\n",
				(unsigned long long)x->cookie, strerror(-x->status));
			s->fail = 1;
		} else {
			s->bytes += x->bytes;
		}
	}
	return 0;
}

int cmd_send(struct opts *o)
{
	struct send s = { .size = o->sizes[0] };
	double secs;
	u64 t0;

	s.c = calloc(MAX_BATCH, sizeof(*s.c));
	s.f = calloc(MAX_BATCH, sizeof(*s.f));
	if (!s.c || !s.f || open_dev(&s.d, o->dev, 1))
		return 1;
	if (!o->nsizes || !s.size || s.size > s.d.info.buf_size) {
		fprintf(stderr, "framelink: send: -s 1..%u required\n", s.d.info.buf_size);
		return 2;
	}
	s.fl.idx = calloc(s.d.info.nbufs, sizeof(*s.fl.idx));
	if (!s.fl.idx)
		return 1;
	for (int i = (int)s.d.info.nbufs - 1; i >= 0; i--)
		s.fl.idx[s.fl.n++] = (u32)i;

	t0 = fl_now_ns();
	while (s.done < o->count && !stopped())
		if (send_submit(&s, o) || send_reap(&s, o))
			break;
	secs = (double)(fl_now_ns() - t0) / 1e9;
	printf("sent %llu frames, %llu bytes in %.3f s: %.3f GB/s (10^9 B/s)\n",
	       s.done, s.bytes, secs, secs > 0 ? (double)s.bytes / secs / 1e9 : 0.0);
	tally_print(stdout, "send", &s.t, s.end);
	fl_dev_close(&s.d);
	return s.fail || s.done < o->count;
}

/* POST the first slots, as many as the RX ring takes (recv's and echo's start); 0 or 1 */
static int post_rx_slots(struct fl_dev *d)
{
	u32 *idx = calloc(d->info.nbufs, sizeof(*idx));
	int ret;

	if (!idx)
		return 1;
	for (u32 i = 0; i < d->info.nbufs; i++)
		idx[i] = i;
	ret = post_all(d, idx, d->info.rx_depth < d->info.nbufs ? d->info.rx_depth :
		       d->info.nbufs);
	free(idx);
	return ret ? 1 : 0;
}

/* recv --export: each slot's dma-buf (FL_IOC_EXPORT) and a read-only mapping of it */
struct recv_export {
	int fd;
	u8 *p;
	size_t len;
};

static void recv_unexport(struct recv_export *x, u32 n)
{
	for (u32 i = 0; x && i < n; i++) {
		if (x[i].p)
			munmap(x[i].p, x[i].len);
		if (x[i].fd >= 0)
			close(x[i].fd);
	}
	free(x);
}

static struct recv_export *recv_export(struct fl_dev *d)
{
	struct recv_export *x = calloc(d->info.nbufs, sizeof(*x));
	u32 i;

	if (!x)
		return NULL;
	for (i = 0; i < d->info.nbufs; i++)
		x[i].fd = -1;
	for (i = 0; i < d->info.nbufs; i++) {
		struct fl_export e = { .slot = i, .flags = FL_EXPORT_CLOEXEC };
		void *p;

		if (ioctl(d->fd, FL_IOC_EXPORT, &e)) {
			int err = errno;

			fprintf(stderr, "framelink: recv --export: EXPORT slot %u: %s%s\n", i,
				strerror(err), err == ENOTTY ? " (the endpoint's device exports)" :
				err == EOPNOTSUPP ? " (a kernel without dma-buf)" : "");
			break;
		}
		x[i].fd = e.fd;
		p = mmap(NULL, e.size, PROT_READ, MAP_SHARED, e.fd, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "framelink: recv --export: mmap of slot %u's dma-buf: %s\n",
				i, strerror(errno));
			break;
		}
		x[i].p = p;
		x[i].len = e.size;
	}
	if (i < d->info.nbufs) {
		recv_unexport(x, d->info.nbufs);
		return NULL;
	}
	return x;
}

static int dmabuf_sync(int fd, u64 flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return ioctl(fd, DMA_BUF_IOCTL_SYNC, &s) ? -errno : 0;
}

/* recv: frames in, each checked, saved, read through its slot's dma-buf as asked */
struct recv {
	struct fl_dev d;
	struct fl_completion *c;
	struct recv_export *xp;	/* --export */
	FILE *save;		/* --save */
	struct tally t;
	u64 got, errs, bytes, crc_checked, crc_bad;
	int fail, end;
};

/* What recv does with one received frame at @p; 0 or 1 (a failed check) */
static int recv_frame(struct recv *r, const struct opts *o, const struct fl_completion *x,
		      const u8 *p)
{
	int fail = 0;
	long bad = -1;

	if (o->verify)
		bad = check_random(p, x->bytes, x->cookie);
	if (bad >= 0) {
		fprintf(stderr, "framelink: frame %llu (%u bytes): mismatch at byte %ld\n",
			x->cookie, x->bytes, bad);
		fail = 1;
	}
	if (o->crc) {
		u32 crc = fl_crc32(0, p, x->bytes);

		r->crc_checked++;
		if (crc != (u32)x->cookie) {
			if (r->crc_bad++ < 10)
				fprintf(stderr,
					"framelink: frame seq %u (cookie %#llx, %u bytes): crc32 %08x, the cookie says %08x\n",
					x->seq, x->cookie, x->bytes, crc, (u32)x->cookie);
			fail = 1;
		}
	}
	if (r->save && fwrite(p, 1, x->bytes, r->save) != x->bytes) {
		fprintf(stderr, "framelink: recv --save: %s\n", strerror(errno));
		fail = 1;
	}
	if (o->verbose)
		printf("frame seq %u cookie %llu bytes %u crc32 %08x\n", x->seq, x->cookie,
		       x->bytes, fl_crc32(0, p, x->bytes));
	return fail;
}

/* The frame handed on as a dma-buf: read through the slot's export, bracketed by SYNC */
static int recv_exported(struct recv *r, const struct opts *o, const struct fl_completion *x)
{
	const struct recv_export *e = &r->xp[x->buf];
	int ret, fail = 0;

	if (x->buf >= r->d.info.nbufs || x->bytes > e->len) {
		fprintf(stderr, "framelink: recv --export: %u bytes in slot %u: past its dma-buf\n",
			x->bytes, x->buf);
		return 1;
	}
	ret = dmabuf_sync(e->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	if (!ret) {
		fail = recv_frame(r, o, x, e->p);
		ret = dmabuf_sync(e->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	}
	if (ret) {
		fprintf(stderr, "framelink: recv --export: DMA_BUF_IOCTL_SYNC, slot %u: %s\n",
			x->buf, strerror(-ret));
		fail = 1;
	}
	return fail;
}

/* Open the device, the slots' exports and the --save file, POST the RX slots; 0 or 1 */
static int recv_open(struct recv *r, const struct opts *o)
{
	r->c = calloc(MAX_BATCH, sizeof(*r->c));
	if (!r->c || open_dev(&r->d, o->dev, 1))
		return 1;
	if (o->export) {
		r->xp = recv_export(&r->d);
		if (!r->xp)
			return 1;
	}
	if (o->save) {
		r->save = fopen(o->save, "ab");
		if (!r->save) {
			fprintf(stderr, "framelink: recv --save %s: %s\n", o->save,
				strerror(errno));
			return 1;
		}
	}
	return post_rx_slots(&r->d);
}

/* One REAP's completions: each RX frame handled, its buffer posted again */
static void recv_batch(struct recv *r, const struct opts *o, int n)
{
	for (int k = 0; k < n; k++) {
		struct fl_completion *x = &r->c[k];

		if (x->queue != FL_Q_RX)
			continue;
		tally_add(&r->t, x->status);
		if (x->status) {
			fprintf(stderr, "framelink: rx buffer %u: %s\n", x->buf,
				strerror(-x->status));
			r->fail = 1;
			r->errs += o->count_errors;
		} else if (r->xp) {
			r->got++;
			r->bytes += x->bytes;
			r->fail |= recv_exported(r, o, x);
		} else {
			r->got++;
			r->bytes += x->bytes;
			r->fail |= recv_frame(r, o, x, fl_dev_buf(&r->d, x->buf));
		}
		if (post_all(&r->d, &x->buf, 1)) {
			r->fail = 1;
			break;
		}
	}
}

static void recv_report(const struct recv *r, const struct opts *o, u64 t0)
{
	double secs = t0 ? (double)(fl_now_ns() - t0) / 1e9 : 0;

	printf("received %llu frames, %llu bytes%s\n", r->got, r->bytes,
	       o->verify ? (r->fail ? ", VERIFY FAILED" : ", all verified") : "");
	tally_print(stdout, "recv", &r->t, r->end);
	if (o->crc)
		printf("recv: crc: checked=%llu mismatches=%llu\n", r->crc_checked, r->crc_bad);
	if (r->xp)
		printf("recv: export: frames read through dma-bufs of %u slots\n",
		       r->d.info.nbufs);
	if (secs > 0)
		printf("%.3f GB/s (10^9 B/s)\n", (double)r->bytes / secs / 1e9);
}

int cmd_recv(struct opts *o)
{
	struct recv r = { 0 };
	u64 t0 = 0;
	int n;

	if (recv_open(&r, o))
		return 1;
	/* errs: failed buffers counted toward COUNT (--count-errors), not as frames */
	while ((!o->count || r.got + r.errs < o->count) && !stopped()) {
		n = fl_dev_reap(&r.d, r.c, MAX_BATCH, o->timeout_ms);
		if (n < 0) {
			fprintf(stderr, "framelink: REAP: %s\n", strerror(-n));
			r.fail = 1;
			r.end = n;
			break;
		}
		if (!n) {
			fprintf(stderr, "framelink: recv: no frame in %d ms\n", o->timeout_ms);
			r.fail = o->count != 0;
			break;
		}
		if (!t0)
			t0 = fl_now_ns();
		recv_batch(&r, o, n);
	}
	recv_report(&r, o, t0);
	if (r.save && fclose(r.save)) {
		fprintf(stderr, "framelink: recv --save %s: %s\n", o->save, strerror(errno));
		r.fail = 1;
	}
	recv_unexport(r.xp, r.d.info.nbufs);
	fl_dev_close(&r.d);
	return r.fail;
}

static void invert(u8 *p, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		u64 w;

		memcpy(&w, p + i, 8);
		w = ~w;
		memcpy(p + i, &w, 8);
	}
	for (; i < n; i++)
		p[i] = (u8)~p[i];
}

/* echo: every received frame inverted and sent back from its own slot */
struct echo {
	struct fl_dev d;
	struct fl_completion *c;
	u32 *pending, npending;	/* slots to POST again */
	u64 echoed, errors;
	u32 crc_acc;
	struct tally t;
	int reap_err, end, fail;
};

/* A completion: a sent frame's slot is posted again, a received frame goes back inverted */
static void echo_one(struct echo *e, const struct fl_completion *x)
{
	struct fl_frame fr;
	u32 acc;
	int ret;

	tally_add(&e->t, x->status);
	if (x->queue == FL_Q_TX) {
		if (x->status)
			e->errors++;
		else
			e->echoed++;
		e->pending[e->npending++] = x->buf;
		return;
	}
	if (x->status) {
		e->errors++;
		e->pending[e->npending++] = x->buf;
		return;
	}
	invert(fl_dev_buf(&e->d, x->buf), x->bytes);
	e->crc_acc ^= fl_crc32(0, fl_dev_buf(&e->d, x->buf), x->bytes);
	fr = (struct fl_frame){ .buf = x->buf, .bytes = x->bytes, .flags = x->flags,
				.cookie = x->cookie };
	ret = fl_dev_submit(&e->d, &fr, 1, &acc);
	if (ret) {
		fprintf(stderr, "framelink: echo: SUBMIT slot %u: %s\n", x->buf, strerror(-ret));
		tally_add(&e->t, ret);
		e->errors++;
		e->pending[e->npending++] = x->buf;
	}
}

/* POST the pending slots again; 0, or -1 when echo must stop (e->end says why) */
static int echo_repost(struct echo *e)
{
	u32 acc;
	int ret;

	if (!e->npending)
		return 0;
	ret = fl_dev_post(&e->d, e->pending, e->npending, &acc);
	if (ret == -ENODEV) {
		/* unbound: REAP hands out what is still queued, then ENODEV */
		e->npending = 0;
		return 0;
	}
	if (ret && ret != -EAGAIN) {
		fprintf(stderr, "framelink: echo: POST: %s\n", strerror(-ret));
		e->end = ret;
		return -1;
	}
	memmove(e->pending, e->pending + acc, (e->npending - acc) * sizeof(*e->pending));
	e->npending -= acc;
	return 0;
}

/* A failed REAP: 0 to keep serving (after a pause), -1 when the device is gone */
static int echo_reap_failed(struct echo *e, int n)
{
	if (n == -ENODEV || n == -EBADF || n == -EFAULT || n == -EINVAL) {
		fprintf(stderr, "framelink: echo: REAP: %s\n", strerror(-n));
		e->end = n;
		return -1;
	}
	/* link down and the like: the slots come back failed; keep serving */
	if (n != -EINTR && n != e->reap_err) {
		fprintf(stderr, "framelink: echo: REAP: %s (retrying)\n", strerror(-n));
		/* a transient REAP error is a failure too, remembered by name */
		tally_add(&e->t, n);
		e->fail = 1;
	}
	e->reap_err = n;
	usleep(100000);
	return 0;
}

/*
 * Endpoint side: POST every slot; for each received frame invert it in place, CRC it, SUBMIT
 * the same slot back (zero copies); repost the slot when its TX completes.
 */
int cmd_echo(struct opts *o)
{
	u64 last = fl_now_ns();
	struct echo e = { 0 };
	int n;

	e.c = calloc(MAX_BATCH, sizeof(*e.c));
	if (!e.c || open_dev(&e.d, o->dev, 1))
		return 1;
	e.pending = calloc(e.d.info.nbufs, sizeof(*e.pending));
	if (!e.pending || post_rx_slots(&e.d))
		return 1;
	fprintf(stderr, "framelink: echo on %s: %u slots of %u bytes\n", o->dev, e.d.info.nbufs,
		e.d.info.buf_size);
	while ((!o->count || e.echoed < o->count) && !stopped()) {
		n = fl_dev_reap(&e.d, e.c, MAX_BATCH, 200);
		if (n < 0) {
			if (echo_reap_failed(&e, n))
				break;
			continue;
		}
		e.reap_err = 0;
		if (!n) {
			if (o->timeout_ms && fl_now_ns() - last > (u64)o->timeout_ms * 1000000)
				break;
			continue;
		}
		last = fl_now_ns();
		for (int k = 0; k < n; k++)
			echo_one(&e, &e.c[k]);
		if (echo_repost(&e))
			break;
	}
	fprintf(stderr, "framelink: echo: %llu frames echoed, %llu errors, crc32 xor %08x\n",
		e.echoed, e.errors, e.crc_acc);
	tally_print(stderr, "framelink: echo", &e.t, e.end);
	fl_dev_close(&e.d);
	/* a stop by signal is a clean end; an errored frame or a fatal REAP is not */
	return e.fail || e.end || e.errors || tally_errors(&e.t) ? 1 : 0;
}
