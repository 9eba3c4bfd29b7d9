/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink: the pixel formats a framelink V4L2 device carries (v4l2-fmt.c). A frame is one
 * plane of sizeimage bytes, sent in one descriptor: the formats are single-plane (NV12 with
 * its chroma after the luma) and a frame fits the endpoint's max_frame.
 */
#ifndef _FRAMELINK_V4L2_FMT_H
#define _FRAMELINK_V4L2_FMT_H

#include <linux/videodev2.h>

int fl_fmt_enum(struct v4l2_fmtdesc *f);
int fl_fmt_framesizes(struct v4l2_frmsizeenum *fs);
void fl_fmt_fit(struct v4l2_pix_format *pix, u32 max_frame);
void fl_fmt_default(struct v4l2_pix_format *pix, u32 max_frame);

#endif /* _FRAMELINK_V4L2_FMT_H */
