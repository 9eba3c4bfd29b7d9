// SPDX-License-Identifier: GPL-2.0
/*
 * framelink: command-line tool over libframelink. This file has the usage, the options and
 * the dispatch; the commands are in info.c (info, stats, export), transfer.c (send, recv,
 * echo), bench.c, check.c, stream.c and capture.c.
 *
 *   framelink info  [-d DEV]
 *   framelink stats [-d DEV]
 *   framelink send  [-d DEV] -s SIZE -n COUNT [-b BATCH] [--verify]
 *   framelink recv  [-d DEV] [-n COUNT] [-t MS] [--verify] [--crc] [--export] [--save FILE]
 *   framelink echo  [-d DEV] [-n COUNT] [-t MS]          (endpoint side)
 *   framelink bench [-d DEV] -s SIZES -n COUNT [-b BATCH] [-p PEERDEV] [-L US] (host side)
 *   framelink stream -m h2e|e2h|both -s SIZE -n COUNT [-q DEPTH] [-d HOSTDEV] [-p EPDEV]
 *                    [--csv] [--extra-copy] [--verify] (both ends in one machine: the lab;
 *                    stream.c)
 *   framelink v4l2-stream -o OUTDEV -c CAPDEV -s SIZE -n COUNT [-q DEPTH] [--dmabuf | --e2h]
 *                         [--csv]
 *                    (host -> endpoint through the V4L2 devices, both here; v4l2stream.c)
 *   framelink check [-d DEV] [-t MS]      (API conformance: documented errors, ownership)
 *   framelink export [-d DEV] -s SLOT     (endpoint: a slot as a dma-buf, FL_IOC_EXPORT)
 *   framelink capture [-d DEV] [--video PATH|BUS_INFO] [-n COUNT] [--crc] [--copy] ...
 *                                         (host: V4L2 frames, imported dma-bufs; capture.c)
 *
 * send/recv --verify use a pattern derived from each frame's cookie, so `send --verify` on
 * one end and `recv --verify` on the other check every byte; `recv --crc` checks each frame
 * against the CRC-32 in the low 32 bits of its cookie (`capture --crc`), `recv --export`
 * reads each frame through a dma-buf of its slot (FL_IOC_EXPORT, DMA_BUF_IOCTL_SYNC around
 * the access) instead of the slot mapping, and `recv --save FILE` appends the frames to FILE.
 * echo inverts every received frame in place, computes its CRC-32 and sends the same buffer
 * back; bench streams random frames through an echo, checks that each comes back inverted
 * and prints a table.
 * Exit status: 0 when everything was verified, 1 on any failure, 2 on bad usage.
 *
 * These are a user's commands. What only the VM tests do to a device (raw 32-bit loads and
 * stores on a BAR, buffers held across a removal, a REAP across a link cut) is
 * framelink-testtool's, beside the kselftest in tools/testing/selftests/framelink.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "framelink.h"
#include "stream.h"
#include "v4l2stream.h"

static void usage(FILE *f)
{
	fprintf(f,
		"framelink COMMAND [options]\n"
		"  info  [-d DEV]                 what the device reports (FL_IOC_INFO)\n"
		"  stats [-d DEV]                 counters (FL_IOC_STATS)\n"
		"  send  [-d DEV] -s SIZE -n COUNT [-b BATCH] [-t MS] [--verify]\n"
		"  recv  [-d DEV] [-n COUNT] [-t MS] [--verify] [--crc] [--export] [--save FILE]\n"
		"        [--count-errors]\n"
		"  echo  [-d DEV] [-n COUNT] [-t MS]   endpoint: invert + CRC each frame, send it back\n"
		"  bench [-d DEV] -s SIZE[,SIZE...] -n COUNT [-b BATCH] [-p PEERDEV] [-L US]\n"
		"  stream -m h2e|e2h|both -s SIZE -n COUNT [-q DEPTH] [-d HOSTDEV] [-p EPDEV] [--csv]\n"
		"         [--extra-copy] [--verify]\n"
		"                                 both ends here (the lab): one- or two-way stream;\n"
		"                                 --extra-copy: the receiver copies each frame once more\n"
		"                                 (make bench's negative control); --verify: every\n"
		"                                 byte checked (a sum over each frame)\n"
		"  v4l2-stream -o OUTDEV -c CAPDEV -s SIZE -n COUNT [-q DEPTH] [--dmabuf | --e2h]\n"
		"              [--csv]            both ends here: host -> endpoint through the V4L2\n"
		"                                 output and capture devices, measured as stream is\n"
		"                                 (--dmabuf: the capture imports the endpoint's slots;\n"
		"                                 --e2h: endpoint -> host)\n"
		"  check [-d DEV] [-t MS]         ioctl error paths and buffer ownership\n"
		"  capture [-d DEV] [--video PATH|BUS_INFO] [-n COUNT] [--crc] [--copy] ...\n"
		"                                 host: V4L2 frames sent from imported dma-bufs\n"
		"                                 (FL_IOC_IMPORT); `framelink capture -h` for more\n"
		"  export [-d DEV] -s SLOT        endpoint: the slot as a dma-buf (FL_IOC_EXPORT),\n"
		"                                 its fd, size and CRC read through it\n"
		"options:\n"
		"  -d DEV      device (default %s; echo: %s)\n"
		"  -s SIZE     frame size, K/M suffixes (bench: comma-separated list)\n"
		"  -n COUNT    frames (recv/echo: 0 = until interrupted)\n"
		"  -b BATCH    frames per SUBMIT (default 8)\n"
		"  -t MS       recv/echo: give up after MS without a frame, send: without a\n"
		"              completion (default: recv and send 10000, echo 0 = wait forever)\n"
		"  -p PEERDEV  bench: the peer's device for its STATS (default %s if present)\n"
		"  -L US       bench: fail when a frame's round trip took longer than US\n"
		"  --verify    check every frame's content (send: pattern; recv: check pattern)\n"
		"  --crc       recv: check each frame's CRC-32 against its cookie's low 32 bits\n"
		"              (what `capture --crc` sends)\n"
		"  --export    recv (endpoint): read each frame through a dma-buf of its slot\n"
		"              (FL_IOC_EXPORT) instead of the slot mapping\n"
		"  --save FILE recv: append every frame's bytes to FILE\n"
		"  --count-errors  recv: a buffer completed with an error counts toward COUNT\n"
		"              (a test expecting the error ends on it, not on -t)\n"
		"  -v          verbose\n",
		DEFAULT_HOST_DEV, DEFAULT_EP_DEV, DEFAULT_EP_DEV);
}

static const struct option lopts[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "size", required_argument, NULL, 's' },
	{ "count", required_argument, NULL, 'n' },
	{ "batch", required_argument, NULL, 'b' },
	{ "timeout", required_argument, NULL, 't' },
	{ "peer", required_argument, NULL, 'p' },
	{ "verify", no_argument, NULL, 'V' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "max-latency-us", required_argument, NULL, 'L' },
	{ "crc", no_argument, NULL, 'C' },
	{ "export", no_argument, NULL, 'E' },
	{ "save", required_argument, NULL, 'S' },
	{ "count-errors", no_argument, NULL, 'X' },
	{ "help", no_argument, NULL, 'h' },
	{ }
};

#define GO_ON	-1	/* parse_opt(): the option taken, parsing goes on */

/* -s: export's slot index (0 included), else the frame sizes; GO_ON or 2 */
static int parse_size_opt(const char *cmd, struct opts *o)
{
	if (!strcmp(cmd, "export")) {
		if (fl_parse_size(optarg, &o->sizes[0]) || o->sizes[0] > UINT32_MAX)
			return 2;
		o->nsizes = 1;
		return GO_ON;
	}
	if (parse_sizes(optarg, o)) {
		fprintf(stderr, "framelink: bad size list '%s'\n", optarg);
		return 2;
	}
	return GO_ON;
}

/* Option @ch of @cmd (its value in optarg): GO_ON, or the exit status (-h: 0, bad: 2) */
static int parse_opt(int ch, const char *cmd, struct opts *o)
{
	u64 v;

	switch (ch) {
	case 'd':
		o->dev = optarg;
		break;
	case 's':
		return parse_size_opt(cmd, o);
	case 'n':
		if (fl_parse_size(optarg, &o->count))
			return 2;
		break;
	case 'b':
		if (fl_parse_size(optarg, &v) || !v || v > MAX_BATCH)
			return 2;
		o->batch = (u32)v;
		break;
	case 't':
		if (fl_parse_size(optarg, &v) || v > FL_REAP_MAX_TIMEOUT_MS)
			return 2;
		o->timeout_ms = (int)v;
		break;
	case 'p':
		o->peer = optarg;
		break;
	case 'L':
		if (fl_parse_size(optarg, &o->max_lat_us))
			return 2;
		break;
	case 'V':
		o->verify = 1;
		break;
	case 'C':
		o->crc = 1;
		break;
	case 'E':
		o->export = 1;
		break;
	case 'S':
		o->save = optarg;
		break;
	case 'X':
		o->count_errors = 1;
		break;
	case 'v':
		o->verbose = 1;
		break;
	case 'h':
		usage(stdout);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
	return GO_ON;
}

/* @cmd with its own checks and default timeout (-1: not given) */
static int run(const char *cmd, struct opts *o)
{
	if (!strcmp(cmd, "info"))
		return cmd_info(o);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(o);
	if (!strcmp(cmd, "export")) {
		if (o->nsizes != 1) {
			fprintf(stderr, "framelink: export: -s SLOT required\n");
			return 2;
		}
		return cmd_export(o);
	}
	if (!strcmp(cmd, "send")) {
		if (!o->count) {
			fprintf(stderr, "framelink: send: -n COUNT required\n");
			return 2;
		}
		if (o->timeout_ms < 0)
			o->timeout_ms = 10000;
		return cmd_send(o);
	}
	if (!strcmp(cmd, "recv")) {
		if (o->timeout_ms < 0)
			o->timeout_ms = 10000;
		return cmd_recv(o);
	}
	if (!strcmp(cmd, "echo")) {
		if (o->timeout_ms < 0)
			o->timeout_ms = 0;
		return cmd_echo(o);
	}
	if (!strcmp(cmd, "bench"))
		return cmd_bench(o);
	if (!strcmp(cmd, "check")) {
		if (o->timeout_ms < 0)
			o->timeout_ms = 5000;
		return cmd_check(o);
	}
	fprintf(stderr, "framelink: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .batch = 8, .timeout_ms = -1 };
	const char *cmd;
	int ch, ret;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "stream"))
		return cmd_stream(argc, argv);
	if (!strcmp(cmd, "v4l2-stream"))
		return cmd_v4l2_stream(argc, argv);
	if (!strcmp(cmd, "capture"))
		return cmd_capture(argc, argv);
	optind = 2;
	while ((ch = getopt_long(argc, argv, "d:s:n:b:t:p:L:vVh", lopts, NULL)) != -1) {
		ret = parse_opt(ch, cmd, &o);
		if (ret != GO_ON)
			return ret;
	}
	if ((o.crc || o.export || o.save) && strcmp(cmd, "recv")) {
		fprintf(stderr, "framelink: --crc, --export and --save are recv options\n");
		return 2;
	}
	if (!o.dev)
		o.dev = strcmp(cmd, "echo") && strcmp(cmd, "export") ? DEFAULT_HOST_DEV :
			DEFAULT_EP_DEV;
	catch_stop_signals();
	return run(cmd, &o);
}
