/* SPDX-License-Identifier: GPL-2.0 */
/* framelink capture (capture.c): V4L2 camera frames to the endpoint, imported or copied */
#ifndef FRAMELINK_CAPTURE_H
#define FRAMELINK_CAPTURE_H

int cmd_capture(int argc, char **argv);

#endif /* FRAMELINK_CAPTURE_H */
