// SPDX-License-Identifier: GPL-2.0
/*
 * framelink check: API conformance. Every ioctl's documented errors, `done` on a bad batch
 * entry, buffer ownership, and (with an echo on the peer) that a REAP into a bad pointer
 * loses nothing. TAP-like lines, "check: PASS" or "check: FAIL" last.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "framelink.h"

static int check_fail;

static void expect(const char *name, int got, int want)
{
	if (got == want) {
		printf("ok - %s\n", name);
	} else {
		printf("not ok - %s: got %d (%s), want %d (%s)\n", name, got,
		       got < 0 ? strerror(-got) : "success", want,
		       want < 0 ? strerror(-want) : "success");
		check_fail = 1;
	}
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* Bad arguments to SUBMIT: each refused with its errno, nothing queued */
static void check_submit_args(struct fl_dev *d)
{
	u32 nb = d->info.nbufs, bs = d->info.buf_size, acc = 0;
	struct fl_frame f[2];
	struct fl_batch b;

	expect("SUBMIT batch at NULL: EFAULT", xioctl(d->fd, FL_IOC_SUBMIT, NULL), -EFAULT);

	memset(f, 0, sizeof(f));
	f[0] = (struct fl_frame){ .buf = 0, .bytes = 64, .flags = FL_FRAME_EOF, .cookie = 1 };
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = 1, .flags = 1 };
	expect("SUBMIT batch flags: EINVAL", xioctl(d->fd, FL_IOC_SUBMIT, &b), -EINVAL);
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = 1, .reserved = 1 };
	expect("SUBMIT batch reserved: EINVAL", xioctl(d->fd, FL_IOC_SUBMIT, &b), -EINVAL);
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = 0 };
	expect("SUBMIT count 0: EINVAL", xioctl(d->fd, FL_IOC_SUBMIT, &b), -EINVAL);
	b = (struct fl_batch){ .ptr = (uintptr_t)f, .count = FL_RING_MAX_ENTRIES + 1 };
	expect("SUBMIT count too large: EINVAL", xioctl(d->fd, FL_IOC_SUBMIT, &b), -EINVAL);
	b = (struct fl_batch){ .ptr = 8, .count = 1 };
	expect("SUBMIT entries unmapped: EFAULT", xioctl(d->fd, FL_IOC_SUBMIT, &b), -EFAULT);

	f[0].reserved = 1;
	expect("SUBMIT frame reserved: EINVAL", fl_dev_submit(d, f, 1, &acc), -EINVAL);
	f[0].reserved = 0;
	f[0].flags = 0x80;
	expect("SUBMIT unknown frame flag: EINVAL", fl_dev_submit(d, f, 1, &acc), -EINVAL);
	f[0].flags = FL_FRAME_EOF;
	f[0].buf = nb;
	expect("SUBMIT buffer index out of range: EINVAL", fl_dev_submit(d, f, 1, &acc), -EINVAL);
	f[0].buf = 0;
	f[0].bytes = 0;
	expect("SUBMIT zero bytes: EINVAL", fl_dev_submit(d, f, 1, &acc), -EINVAL);
	f[0].bytes = bs + 1;
	expect("SUBMIT larger than the buffer: EMSGSIZE", fl_dev_submit(d, f, 1, &acc),
	       -EMSGSIZE);
	expect("  done = 0", (int)acc, 0);
}

/* Bad arguments to POST and REAP, and an mmap() past the buffers */
static void check_post_reap_args(struct fl_dev *d)
{
	u32 nb = d->info.nbufs, bs = d->info.buf_size, acc = 0;
	struct fl_completion c[4];
	struct fl_batch b;
	struct fl_reap r;
	void *p;

	expect("POST index out of range: EINVAL", fl_dev_post(d, &nb, 1, &acc), -EINVAL);
	b = (struct fl_batch){ .ptr = 8, .count = 1 };
	expect("POST entries unmapped: EFAULT", xioctl(d->fd, FL_IOC_POST, &b), -EFAULT);

	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 0 };
	expect("REAP max 0: EINVAL", xioctl(d->fd, FL_IOC_REAP, &r), -EINVAL);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 4, .timeout_ms = -1 };
	expect("REAP negative timeout: EINVAL", xioctl(d->fd, FL_IOC_REAP, &r), -EINVAL);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 4,
			      .timeout_ms = FL_REAP_MAX_TIMEOUT_MS + 1 };
	expect("REAP timeout too long: EINVAL", xioctl(d->fd, FL_IOC_REAP, &r), -EINVAL);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 4, .flags = 1 };
	expect("REAP flags: EINVAL", xioctl(d->fd, FL_IOC_REAP, &r), -EINVAL);
	r = (struct fl_reap){ .ptr = (uintptr_t)c, .max = 4, .reserved = 1 };
	expect("REAP reserved: EINVAL", xioctl(d->fd, FL_IOC_REAP, &r), -EINVAL);
	expect("REAP timeout 0, nothing pending: 0 completions",
	       fl_dev_reap(d, c, 4, 0), 0);

	p = mmap(NULL, (size_t)bs, PROT_READ, MAP_SHARED, d->fd,
		 (off_t)(d->info.mmap_offset + (u64)nb * bs));
	expect("mmap past the buffers: EINVAL", p == MAP_FAILED ? -errno : 0, -EINVAL);
	if (p != MAP_FAILED)
		munmap(p, bs);
}

/* Ownership: a frame in flight is not the app's; buffer 0 is left queued, 1 posted */
static void check_ownership(struct fl_dev *d)
{
	u32 nb = d->info.nbufs, idx = 1, acc = 0;
	struct fl_frame f[2];
	int ret;

	ret = fl_dev_post(d, &idx, 1, &acc);
	expect("POST buffer 1", ret, 0);
	memset(fl_dev_buf(d, 0), 0x5a, 64);
	f[0] = (struct fl_frame){ .buf = 0, .bytes = 64, .flags = FL_FRAME_EOF, .cookie = 7 };
	f[1] = (struct fl_frame){ .buf = nb, .bytes = 64 };
	expect("SUBMIT [good, bad index]: EINVAL", fl_dev_submit(d, f, 2, &acc), -EINVAL);
	expect("  done = 1 (the good frame is queued)", (int)acc, 1);
	expect("SUBMIT buffer in flight: EBUSY", fl_dev_submit(d, f, 1, &acc), -EBUSY);
	expect("POST buffer in flight: EBUSY", fl_dev_post(d, &f[0].buf, 1, &acc), -EBUSY);
	expect("POST buffer already posted: EBUSY", fl_dev_post(d, &idx, 1, &acc), -EBUSY);
}

/* With an echo on the peer the frame of buffer 0 completes; otherwise close cancels it */
static void check_completion(struct fl_dev *d, int timeout_ms)
{
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	struct fl_completion c[4];
	struct fl_reap r;
	int n;

	n = poll(&pfd, 1, timeout_ms);
	if (!(n == 1 && (pfd.revents & POLLIN))) {
		printf("ok - poll: no completion in %d ms (no echo on the peer) # SKIP\n",
		       timeout_ms);
		return;
	}
	printf("ok - poll: POLLIN for the completion\n");
	r = (struct fl_reap){ .ptr = 8, .max = 4 };
	expect("REAP into unmapped memory: EFAULT", xioctl(d->fd, FL_IOC_REAP, &r), -EFAULT);
	n = fl_dev_reap(d, c, 1, 5000);
	expect("REAP after EFAULT: the completion is still there", n, 1);
	if (n == 1) {
		expect("  it is the TX of buffer 0", (int)(c[0].queue * 100 + c[0].buf),
		       FL_Q_TX * 100);
		expect("  status 0", c[0].status, 0);
		expect("  cookie echoed", (int)c[0].cookie, 7);
	}
}

int cmd_check(struct opts *o)
{
	struct fl_dev d;

	if (open_dev(&d, o->dev, 1))
		return 1;
	if (d.info.nbufs < 2) {
		fprintf(stderr, "framelink: check needs 2 buffers\n");
		return 1;
	}
	expect("unknown ioctl: ENOTTY", xioctl(d.fd, _IO(FL_IOC_MAGIC, 0x7f), NULL), -ENOTTY);
	expect("INFO to NULL: EFAULT", xioctl(d.fd, FL_IOC_INFO, NULL), -EFAULT);
	expect("STATS to NULL: EFAULT", xioctl(d.fd, FL_IOC_STATS, NULL), -EFAULT);
	check_submit_args(&d);
	check_post_reap_args(&d);
	check_ownership(&d);
	check_completion(&d, o->timeout_ms);
	fl_dev_close(&d);
	printf("%s\n", check_fail ? "check: FAIL" : "check: PASS");
	return check_fail;
}
