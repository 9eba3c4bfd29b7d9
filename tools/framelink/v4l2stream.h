/* SPDX-License-Identifier: GPL-2.0 */
/* framelink v4l2-stream (v4l2stream.c): host -> endpoint through the V4L2 devices, make bench */
#ifndef FRAMELINK_V4L2STREAM_H
#define FRAMELINK_V4L2STREAM_H

int cmd_v4l2_stream(int argc, char **argv);

#endif /* FRAMELINK_V4L2STREAM_H */
