// SPDX-License-Identifier: GPL-2.0
/*
 * framelink CLI: what its commands share. The stop flag of SIGINT and SIGTERM, size lists,
 * the test pattern of a frame, the tally of completion statuses, and opening a device and
 * posting buffers with the failure said.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "framelink.h"

static int stop;

int stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
}

void catch_stop_signals(void)
{
	struct sigaction sa = { 0 };

	/* no SA_RESTART: a blocking REAP returns EINTR and the loops see the stop at once */
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int parse_sizes(const char *arg, struct opts *o)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	o->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES || fl_parse_size(tok, &o->sizes[o->nsizes]) ||
		    !o->sizes[o->nsizes])
			return -1;
		o->nsizes++;
	}
	return o->nsizes ? 0 : -1;
}

const char *human(u64 v, char *buf, size_t len)
{
	if (v >= (1u << 20) && !(v & ((1u << 20) - 1)))
		snprintf(buf, len, "%lluM", v >> 20);
	else if (v >= 1024 && !(v & 1023))
		snprintf(buf, len, "%lluK", v >> 10);
	else
		snprintf(buf, len, "%llu", v);
	return buf;
}

u64 rnd_seed(u64 seed)
{
	u64 s = seed * 0x9e3779b97f4a7c15ull + 1;

	return s ? s : 1;
}

/* xorshift64*: fast, and good enough for test data */
u64 rnd_next(u64 *s)
{
	u64 x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

void fill_random(u8 *p, size_t n, u64 seed)
{
	u64 s = rnd_seed(seed), w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		w = rnd_next(&s);
		memcpy(p + i, &w, 8);
	}
	if (i < n) {
		w = rnd_next(&s);
		memcpy(p + i, &w, n - i);
	}
}

long check_random(const u8 *p, size_t n, u64 seed)
{
	u64 s = rnd_seed(seed), w;
	size_t i, k;

	for (i = 0; i < n; i += 8) {
		w = rnd_next(&s);
		k = n - i < 8 ? n - i : 8;
		if (memcmp(p + i, &w, k)) {
			for (size_t j = 0; j < k; j++)
				if (p[i + j] != ((u8 *)&w)[j])
					return (long)(i + j);
		}
	}
	return -1;
}

void tally_add(struct tally *t, int status)
{
	int e = status < 0 ? -status : status;

	for (int i = 0; i < TALLY_SLOTS; i++) {
		if (t->n[i] && t->err[i] != e)
			continue;
		t->err[i] = e;
		t->n[i]++;
		return;
	}
	t->other++;
}

u64 tally_errors(const struct tally *t)
{
	u64 sum = t->other;

	for (int i = 0; i < TALLY_SLOTS; i++)
		if (t->err[i])
			sum += t->n[i];
	return sum;
}

void tally_print(FILE *f, const char *who, const struct tally *t, int end)
{
	fprintf(f, "%s: status:", who);
	for (int i = 0; i < TALLY_SLOTS; i++)
		if (t->n[i])
			fprintf(f, " %s=%llu", fl_errno_name(t->err[i]), t->n[i]);
	if (t->other)
		fprintf(f, " other=%llu", t->other);
	if (end)
		fprintf(f, " end=%s", fl_errno_name(end < 0 ? -end : end));
	fprintf(f, "\n");
	if (fl_dev_revoked())
		fprintf(f, "%s: buffer mapping revoked (device removed or unbound): %s\n", who,
			"SIGBUS caught, the access read zeros");
}

int open_dev(struct fl_dev *d, const char *path, int map)
{
	int ret = fl_dev_open(d, path, map);

	if (ret)
		fprintf(stderr, "framelink: %s: %s\n", path, strerror(-ret));
	return ret;
}

int post_all(struct fl_dev *d, const u32 *idx, u32 n)
{
	u32 acc = 0;
	int ret = 0;

	while (n) {
		ret = fl_dev_post(d, idx, n, &acc);
		if (ret && ret != -EAGAIN)
			break;
		idx += acc;
		n -= acc;
		if (ret == -EAGAIN)
			return 0;	/* ring full: the rest waits */
		ret = 0;
	}
	if (ret)
		fprintf(stderr, "framelink: POST buffer %u: %s\n", idx[acc], strerror(-ret));
	return ret;
}
