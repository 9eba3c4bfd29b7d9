// SPDX-License-Identifier: GPL-2.0
/*
 * fl-notify: one frame at a time to an echoing peer, so that every completion goes through
 * the notification path (arm cq_event, sleep, interrupt). Each round submits one frame and
 * waits for its TX completion and the echoed frame:
 *   -m poll   poll() with no timeout, then REAP with timeout 0 (a lost wake-up hangs: the
 *             caller bounds the run);
 *   -m reap   REAP with a timeout (a lost wake-up costs the driver's safety slice).
 * Prints the rounds, the longest round in microseconds and the device's interrupt and
 * safety_wakeups counters. Exit 0 when every round completed with status 0, 1 otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libframelink.h"

static int wait_one(struct fl_dev *d, int use_poll, struct fl_completion *c, u32 max)
{
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	int n;

	if (!use_poll)
		return fl_dev_reap(d, c, max, 10000);
	n = poll(&pfd, 1, -1);
	if (n < 0)
		return -errno;
	if (pfd.revents & (POLLERR | POLLHUP))
		return -EIO;
	return fl_dev_reap(d, c, max, 0);
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/framelink0";
	struct fl_completion c[16];
	u64 worst = 0, t0, dt;
	int use_poll = 1, ch, n, i;
	u32 rounds = 100, size = 4096, r, b, acc;
	struct fl_stats st;
	struct fl_frame f;
	struct fl_dev d;

	while ((ch = getopt(argc, argv, "d:n:s:m:")) != -1) {
		switch (ch) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'm':
			use_poll = !strcmp(optarg, "poll");
			break;
		default:
			fprintf(stderr,
				"usage: fl-notify [-d DEV] [-n ROUNDS] [-s SIZE] [-m poll|reap]\n");
			return 2;
		}
	}
	if (fl_dev_open(&d, dev, 1)) {
		perror(dev);
		return 1;
	}
	if (d.info.nbufs < 2 || size > d.info.buf_size) {
		fprintf(stderr, "fl-notify: need 2 buffers of %u bytes\n", size);
		return 1;
	}
	/* buffer 0 sends, the others receive */
	for (b = 1; b < d.info.nbufs && b <= d.info.rx_depth; b++)
		if (fl_dev_post(&d, &b, 1, &acc)) {
			perror("POST");
			return 1;
		}
	for (r = 0; r < rounds; r++) {
		int tx = 0, rx = 0;

		memset(fl_dev_buf(&d, 0), (int)r, size);
		f = (struct fl_frame){ .buf = 0, .bytes = size, .flags = FL_FRAME_EOF,
				       .cookie = r };
		t0 = fl_now_ns();
		if (fl_dev_submit(&d, &f, 1, &acc)) {
			perror("SUBMIT");
			return 1;
		}
		while (!tx || !rx) {
			n = wait_one(&d, use_poll, c, 16);
			if (n < 0) {
				fprintf(stderr, "fl-notify: round %u: wait failed: %s\n", r,
					strerror(-n));
				return 1;
			}
			if (!n && !use_poll) {
				fprintf(stderr, "fl-notify: round %u: nothing in 10 s\n", r);
				return 1;
			}
			for (i = 0; i < n; i++) {
				if (c[i].status) {
					fprintf(stderr, "fl-notify: round %u: status %d\n", r,
						c[i].status);
					return 1;
				}
				if (c[i].queue == FL_Q_TX) {
					tx = 1;
				} else {
					rx = 1;
					if (fl_dev_post(&d, &c[i].buf, 1, &acc)) {
						perror("POST");
						return 1;
					}
				}
			}
		}
		dt = fl_now_ns() - t0;
		if (dt > worst)
			worst = dt;
	}
	if (fl_dev_stats(&d, &st)) {
		perror("STATS");
		return 1;
	}
	printf("rounds: %u\nworst_us: %llu\ninterrupts: %llu\nsafety_wakeups: %llu\n", rounds,
	       worst / 1000, st.interrupts, st.safety_wakeups);
	fl_dev_close(&d);
	return 0;
}
