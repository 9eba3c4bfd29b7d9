// SPDX-License-Identifier: GPL-2.0
/*
 * framelink bench (host side): random frames through the peer's echo, each one checked to
 * come back inverted, a table of throughput, latency, interrupts and the DMA/CPU split per
 * size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "framelink.h"

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct bench_row {
	u64 size, frames, bytes, ns;
	u64 p50, p99, max;
	u64 irqs, peer_irqs, dma, cpu;
	int peer;
	u64 bad, stale;
	u64 revoked;		/* echoes the device's removal left unreadable (not bad) */
	struct tally *t;	/* statuses of every completion, all sizes */
};

/* Byte an RX buffer holds before the endpoint writes it: a missing DMA part shows. */
#define RX_POISON	0xa5

/* First byte of @rx (@n bytes) that is not the inverse of fill_random(@seed), or @n. */
static size_t first_not_inverted(const u8 *rx, size_t n, u64 seed)
{
	u64 s = rnd_seed(seed), w, a;
	size_t q, k;

	for (q = 0; q < n; q += 8) {
		w = ~rnd_next(&s);
		k = n - q < 8 ? n - q : 8;
		a = 0;
		memcpy(&a, rx + q, k);
		if (memcmp(&a, &w, k))
			for (size_t j = 0; j < k; j++)
				if (rx[q + j] != ((u8 *)&w)[j])
					return q + j;
	}
	return n;
}

/*
 * What the bytes of a frame that came back wrong hold, to tell a missing DMA part (poison),
 * a zeroed page, an echo that never inverted (the sent pattern) and another frame's data
 * apart: counts over the whole frame and the extent of the bad bytes.
 */
static void describe_mismatch(const u8 *rx, size_t n, u64 seed)
{
	u64 s = rnd_seed(seed), w = 0;
	size_t q, bad = 0, poison = 0, zero = 0, raw = 0, first = n, last = 0;

	for (q = 0; q < n; q++) {
		u8 want, sent;

		if (!(q & 7))
			w = rnd_next(&s);
		sent = ((const u8 *)&w)[q & 7];
		want = (u8)~sent;
		if (rx[q] == want)
			continue;
		bad++;
		first = first < q ? first : q;
		last = q;
		poison += rx[q] == RX_POISON;
		zero += !rx[q];
		raw += rx[q] == sent;
	}
	fprintf(stderr,
		"framelink: bench:   %zu bad bytes in [%zu, %zu]: poison %zu, zero %zu, as sent %zu\n",
		bad, first, last, poison, zero, raw);
}

/* POST one RX buffer again, poisoned first over @bytes (the size the next frame has). */
static int repost(struct fl_dev *d, u32 buf, size_t bytes)
{
	memset(fl_dev_buf(d, buf), RX_POISON, bytes);
	return post_all(d, &buf, 1);
}

/* One size's stream: the buffers, frames and timestamps of bench_one() */
struct bench {
	struct fl_dev *d;
	const struct opts *o;
	struct bench_row *row;
	struct fl_completion *c;
	struct fl_frame *f;
	u64 *lat, *tsub;	/* per frame: round trip, SUBMIT time */
	u32 *txfree, ntxfree, ntx;
	u64 size, sent, back, tag;
};

/*
 * SUBMIT up to a batch of new frames from the free TX buffers; 0 or the error, said.
 * Cookie of frame F sent from tx buffer B: TAG << 48 | B << 32 | F, TAG random per run so
 * frames still in the peer's pipeline from an earlier stream are recognised and dropped.
 * Every frame's payload is fill_random(cookie): unique per frame, so an echo of stale data
 * (a DMA part that never ran over a buffer that held an earlier frame) cannot pass, and RX
 * buffers are poisoned before every POST.
 */
static int bench_submit(struct bench *b)
{
	u32 k = 0, i, acc;
	int ret;

	while (b->sent + k < b->o->count && b->ntxfree && k < b->o->batch) {
		u32 tb = b->txfree[--b->ntxfree];
		u64 cookie = b->tag << 48 | (u64)tb << 32 | (b->sent + k);

		fill_random(fl_dev_buf(b->d, tb), b->size, cookie);
		b->f[k] = (struct fl_frame){ .buf = tb, .bytes = (u32)b->size,
					     .flags = FL_FRAME_EOF, .cookie = cookie };
		b->tsub[b->sent + k] = fl_now_ns();
		k++;
	}
	if (!k)
		return 0;
	ret = fl_dev_submit(b->d, b->f, k, &acc);
	for (i = k; i-- > acc;)
		b->txfree[b->ntxfree++] = b->f[i].buf;
	b->sent += acc;
	if (ret && ret != -EAGAIN) {
		fprintf(stderr, "framelink: bench: SUBMIT: %s\n", strerror(-ret));
		return ret;
	}
	return 0;
}

/* An echo of one of this stream's frames: checked byte for byte, its round trip kept */
static void bench_echoed(struct bench *b, const struct fl_completion *x, u64 fno)
{
	const u8 *rx = fl_dev_buf(b->d, x->buf);
	size_t bad = first_not_inverted(rx, b->size, x->cookie);

	if (bad != b->size && fl_dev_revoked()) {
		/*
		 * The device went after the frame came back: the SIGBUS guard put zero pages
		 * where the buffers were, so what is read is no longer what arrived. Not a
		 * content error, and not verified either: counted apart.
		 */
		fprintf(stderr,
			"framelink: bench: frame %llu: buffer mapping revoked before its check\n",
			fno);
		b->row->revoked++;
	} else if (bad != b->size) {
		fprintf(stderr,
			"framelink: bench: frame %llu (%llu bytes): not inverted at %zu (%#04x)\n",
			fno, b->size, bad, rx[bad]);
		describe_mismatch(rx, b->size, x->cookie);
		b->row->bad++;
	}
	b->lat[b->back] = x->ts_delivered - b->tsub[fno];
	b->back++;
	b->row->bytes += x->bytes;
}

/* A sent frame frees its TX buffer; an RX buffer is checked and posted again. 0 or error */
static int bench_completion(struct bench *b, const struct fl_completion *x)
{
	u64 fno = x->cookie & 0xffffffffu;
	u32 tb = (u32)(x->cookie >> 32) & 0xffff;

	tally_add(b->row->t, x->status);
	if (x->queue == FL_Q_TX) {
		if (x->status) {
			fprintf(stderr, "framelink: bench: frame %llu tx: %s\n", fno,
				strerror(-x->status));
			b->row->bad++;
		}
		if (fno < b->o->count)
			b->tsub[fno] = x->ts_submit;	/* the driver's clock */
		b->txfree[b->ntxfree++] = x->buf;
		return 0;
	}
	if (x->status) {
		fprintf(stderr, "framelink: bench: rx buffer %u: %s\n", x->buf,
			strerror(-x->status));
		b->row->bad++;
	} else if (x->cookie >> 48 != b->tag) {
		b->row->stale++;	/* from an earlier stream: not ours */
	} else if (fno >= b->o->count || tb >= b->ntx || x->bytes != b->size) {
		fprintf(stderr, "framelink: bench: unexpected frame cookie %#llx, %u bytes\n",
			x->cookie, x->bytes);
		b->row->bad++;
	} else {
		bench_echoed(b, x, fno);
	}
	return repost(b->d, x->buf, b->size);
}

/* Frames out as TX buffers free up, the echoes checked, until COUNT came back; 0 or error */
static int bench_stream(struct bench *b)
{
	int ret = 0, n;

	while (b->back < b->o->count && !stopped()) {
		ret = bench_submit(b);
		if (ret)
			break;
		n = fl_dev_reap(b->d, b->c, MAX_BATCH, 5000);
		if (n <= 0) {
			fprintf(stderr, "framelink: bench: %s after %llu/%llu frames\n",
				n ? strerror(-n) : "no completion in 5 s", b->back, b->o->count);
			ret = n ? n : -ETIMEDOUT;
			break;
		}
		for (int j = 0; j < n && !ret; j++)
			ret = bench_completion(b, &b->c[j]);
		if (ret)
			break;
	}
	return ret;
}

/* Drain what is still out so the next size starts clean */
static void bench_drain(struct bench *b)
{
	int n;

	while ((b->ntxfree < b->ntx || b->sent > b->back) && !stopped()) {
		n = fl_dev_reap(b->d, b->c, MAX_BATCH, 2000);
		if (n <= 0)
			break;
		for (int j = 0; j < n; j++) {
			if (b->c[j].queue == FL_Q_TX) {
				b->txfree[b->ntxfree++] = b->c[j].buf;
				continue;
			}
			b->back++;
			if (repost(b->d, b->c[j].buf, b->size))
				break;
		}
	}
}

/* The row's counters from both ends' STATS before [0] and after [1], its percentiles */
static void bench_measure(struct bench *b, const struct fl_stats *s, const struct fl_stats *p)
{
	struct bench_row *row = b->row;

	row->irqs = s[1].interrupts - s[0].interrupts;
	row->peer_irqs = p[1].interrupts - p[0].interrupts;
	/* whichever end moves the frames counts them (the endpoint) */
	row->dma = s[1].dma_transfers - s[0].dma_transfers + p[1].dma_transfers -
		   p[0].dma_transfers;
	row->cpu = s[1].cpu_transfers - s[0].cpu_transfers + p[1].cpu_transfers -
		   p[0].cpu_transfers;
	if (b->back) {
		qsort(b->lat, b->back, sizeof(*b->lat), cmp_u64);
		row->p50 = b->lat[(b->back - 1) / 2];
		row->p99 = b->lat[(b->back * 99 + 99) / 100 - 1];
		row->max = b->lat[b->back - 1];
	}
}

static int bench_one(struct fl_dev *d, struct fl_dev *peer, const struct opts *o, u64 size,
		     struct bench_row *row)
{
	u64 seed = fl_now_ns(), t0;
	struct bench b = {
		.d = d, .o = o, .row = row, .size = size, .ntx = d->info.nbufs / 2,
		.tag = ((seed ^ (seed >> 16) ^ (seed >> 32)) & 0xffff) | 1,
	};
	struct fl_stats s[2], p[2] = { 0 };
	struct tally *t = row->t;
	int ret;

	memset(row, 0, sizeof(*row));
	row->t = t;
	row->size = size;
	b.c = calloc(MAX_BATCH, sizeof(*b.c));
	b.f = calloc(MAX_BATCH, sizeof(*b.f));
	b.lat = calloc(o->count, sizeof(*b.lat));
	b.tsub = calloc(o->count, sizeof(*b.tsub));
	b.txfree = calloc(b.ntx, sizeof(*b.txfree));
	if (!b.c || !b.f || !b.lat || !b.tsub || !b.txfree)
		return -ENOMEM;
	for (u32 i = 0; i < b.ntx; i++)
		b.txfree[b.ntxfree++] = b.ntx - 1 - i;
	fl_dev_stats(d, &s[0]);
	if (peer)
		row->peer = !fl_dev_stats(peer, &p[0]);
	t0 = fl_now_ns();
	ret = bench_stream(&b);
	row->ns = fl_now_ns() - t0;
	row->frames = b.back;
	fl_dev_stats(d, &s[1]);
	if (row->peer)
		row->peer = !fl_dev_stats(peer, &p[1]);
	bench_measure(&b, s, p);
	if (!ret)
		bench_drain(&b);
	free(b.c);
	free(b.f);
	free(b.lat);
	free(b.tsub);
	free(b.txfree);
	if (!ret && b.back < o->count)
		ret = -EINTR;
	return ret;
}

/* bench: the device, its peer for STATS, a row per size, every completion's status */
struct bench_run {
	struct fl_dev d, peer;
	int have_peer;
	struct bench_row rows[MAX_SIZES];
	int nrows, end;
	struct tally t;
};

/*
 * The second half of the buffers receives, posted once for every size and poisoned over
 * what the largest frame covers (touching every byte of big buffers is slow). 0, 1 without
 * memory, or POST's error (said).
 */
static int bench_post_rx(struct fl_dev *d, const struct opts *o)
{
	u32 ntx = d->info.nbufs / 2, nrx = d->info.nbufs - ntx, *rxidx;
	u64 maxsize = 0;
	int ret;

	rxidx = calloc(nrx, sizeof(*rxidx));
	if (!rxidx)
		return 1;
	for (int r = 0; r < o->nsizes; r++)
		maxsize = o->sizes[r] > maxsize ? o->sizes[r] : maxsize;
	for (u32 i = 0; i < nrx; i++) {
		rxidx[i] = ntx + i;
		memset(fl_dev_buf(d, ntx + i), RX_POISON,
		       maxsize < d->info.buf_size ? maxsize : d->info.buf_size);
	}
	ret = post_all(d, rxidx, nrx < d->info.rx_depth ? nrx : d->info.rx_depth);
	free(rxidx);
	return ret;
}

/* Each size in turn, up to the first that fails; 1 when one did */
static int bench_sizes(struct bench_run *br, const struct opts *o)
{
	int fail = 0, ret;

	for (int r = 0; r < o->nsizes; r++) {
		struct bench_row *w = &br->rows[r];

		if (o->sizes[r] > br->d.info.buf_size) {
			fprintf(stderr, "framelink: bench: size %llu > buffer size %u\n",
				o->sizes[r], br->d.info.buf_size);
			return 1;
		}
		w->t = &br->t;
		ret = bench_one(&br->d, br->have_peer ? &br->peer : NULL, o, o->sizes[r], w);
		br->nrows++;
		if (ret && ret != -EINTR)
			br->end = ret;
		if (ret || w->bad)
			fail = 1;
		if (o->max_lat_us && w->max > o->max_lat_us * 1000) {
			fprintf(stderr,
				"framelink: bench: size %llu: max latency %llu us > %llu us\n",
				o->sizes[r], w->max / 1000, o->max_lat_us);
			fail = 1;
		}
		if (fail || stopped())
			break;
	}
	return fail;
}

static void bench_print_row(const struct bench_row *w)
{
	double fr = w->frames ? (double)w->frames : 1;
	char pi[16] = "-", pd[16] = "-", pc[16] = "-";
	char sz[32];

	if (w->peer)
		snprintf(pi, sizeof(pi), "%.3f", (double)w->peer_irqs / fr);
	if (w->peer || w->dma || w->cpu) {
		snprintf(pd, sizeof(pd), "%llu", w->dma);
		snprintf(pc, sizeof(pc), "%llu", w->cpu);
	}
	printf("%8s %8llu %12llu %8.3f %9.1f %9.1f %9.1f %9.3f %9s %9s %8s%s\n",
	       human(w->size, sz, sizeof(sz)), w->frames, w->bytes,
	       w->ns ? (double)w->bytes / (double)w->ns : 0.0, (double)w->p50 / 1e3,
	       (double)w->p99 / 1e3, (double)w->max / 1e3, (double)w->irqs / fr, pi, pd,
	       pc, w->bad ? "  FAILED" : "");
}

static void bench_table(const struct bench_run *br, const struct opts *o)
{
	printf("framelink bench: %s, %llu frames per size through the peer's echo, each verified\n",
	       o->dev, o->count);
	printf("GB/s = 10^9 bytes/s of payload one way; latency: SUBMIT to the echoed frame\n"
	       "reaching the driver (CLOCK_MONOTONIC of the driver); irq/fr: interrupts taken\n"
	       "here per frame; peer_irq: the peer's count per frame (an endpoint counts those it\n"
	       "raises); dma_xfer/cpu_xfer: frames moved by DMA / by CPU copy, both directions\n");
	printf("%8s %8s %12s %8s %9s %9s %9s %9s %9s %9s %8s\n", "size", "frames", "bytes",
	       "GB/s", "p50_us", "p99_us", "max_us", "irq/fr", "peer_irq", "dma_xfer", "cpu_xfer");
	for (int k = 0; k < br->nrows; k++)
		bench_print_row(&br->rows[k]);
	for (int k = 0; k < br->nrows; k++)
		if (br->rows[k].stale)
			printf("%llu frame(s) of an earlier stream dropped at size %llu\n",
			       br->rows[k].stale, br->rows[k].size);
	for (int k = 0; k < br->nrows; k++)
		if (br->rows[k].revoked)
			printf("%llu frame(s) not checked at size %llu: mapping revoked first\n",
			       br->rows[k].revoked, br->rows[k].size);
}

int cmd_bench(struct opts *o)
{
	struct bench_run br = { 0 };
	int fail, ret;

	if (!o->nsizes || !o->count) {
		fprintf(stderr, "framelink: bench: -s SIZES and -n COUNT required\n");
		return 2;
	}
	ret = fl_dev_open(&br.d, o->dev, 1);
	if (ret) {
		/* the device can vanish (link down, unbind) before the stream starts */
		fprintf(stderr, "framelink: %s: %s\n", o->dev, strerror(-ret));
		tally_print(stdout, "bench", &br.t, ret);
		return 1;
	}
	if (br.d.info.nbufs < 2) {
		fprintf(stderr, "framelink: bench: needs at least 2 buffers\n");
		return 1;
	}
	if (o->peer ? !open_dev(&br.peer, o->peer, 0) :
		      (!access(DEFAULT_EP_DEV, F_OK) && !fl_dev_open(&br.peer, DEFAULT_EP_DEV, 0)))
		br.have_peer = 1;
	ret = bench_post_rx(&br.d, o);
	if (ret > 0)
		return 1;
	if (ret) {
		tally_print(stdout, "bench", &br.t, ret);
		return 1;
	}
	fail = bench_sizes(&br, o);
	bench_table(&br, o);
	tally_print(stdout, "bench", &br.t, br.end);
	printf("result: %s\n", fail ? "FAIL" : "PASS (all frames verified)");
	if (br.have_peer)
		fl_dev_close(&br.peer);
	fl_dev_close(&br.d);
	return fail;
}
