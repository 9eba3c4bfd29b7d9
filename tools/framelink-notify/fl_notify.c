// SPDX-License-Identifier: GPL-2.0
/*
 * fl-notify: one frame at a time to an echoing peer, so that every completion goes through
 * the notification path (arm cq_event, sleep, interrupt). Each round submits one frame and
 * waits for its TX completion and the echoed frame:
 *   -m poll   poll() with no timeout, then REAP with timeout 0 (a lost wake-up hangs: the
 *             caller bounds the run);
 *   -m reap   REAP with a timeout (a lost wake-up costs the driver's safety slice).
 * -b BURST submits BURST frames per round (buffers 0 .. BURST-1) and waits for all of their
 * completions and echoes: with the host's irq_batch at 100 it arms past the first completion,
 * and the echoing endpoint app, idle between a frame's arrival and its echo, interrupts short
 * of the index and again at it (two interrupts for one arm: what merges in 65-notify).
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
	u32 rounds = 100, size = 4096, burst = 1, r, b, acc;
	struct fl_stats st;
	struct fl_frame f;
	struct fl_dev d;

	while ((ch = getopt(argc, argv, "d:n:s:m:b:")) != -1) {
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
		case 'b':
			burst = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: fl-notify [-d DEV] [-n ROUNDS] [-s SIZE] [-b BURST] [-m poll|reap]\n");
			return 2;
		}
	}
	if (fl_dev_open(&d, dev, 1)) {
		perror(dev);
		return 1;
	}
	if (!burst || burst > 8 || d.info.nbufs < 2 * burst || size > d.info.buf_size) {
		fprintf(stderr, "fl-notify: need 2 x %u (at most 16) buffers of %u bytes\n", burst,
			size);
		return 1;
	}
	/* buffers 0 .. burst - 1 send, the others receive */
	for (b = burst; b < d.info.nbufs && b - burst < d.info.rx_depth; b++)
		if (fl_dev_post(&d, &b, 1, &acc)) {
			perror("POST");
			return 1;
		}
	for (r = 0; r < rounds; r++) {
		u32 tx = 0, rx = 0;

		t0 = fl_now_ns();
		for (b = 0; b < burst; b++) {
			memset(fl_dev_buf(&d, b), (int)r, size);
			f = (struct fl_frame){ .buf = b, .bytes = size, .flags = FL_FRAME_EOF,
					       .cookie = r };
			if (fl_dev_submit(&d, &f, 1, &acc)) {
				perror("SUBMIT");
				return 1;
			}
		}
		while (tx < burst || rx < burst) {
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
					tx++;
				} else {
					rx++;
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
