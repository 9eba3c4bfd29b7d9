/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink: the pixel formats of the V4L2 devices and the arithmetic of their frames
 * (issue 29: NV12, YUYV, UYVY, RGB24, GREY and Bayer raw), the same on both ends: included
 * by the one V4L2 file of each module (host/v4l2.c, epf/v4l2.c). A frame is one plane of
 * sizeimage bytes, sent in one descriptor; no padding: bytesperline is the width times the
 * bytes of a pixel, so a frame is exactly what the sender's buffer holds.
 */
#ifndef _FRAMELINK_V4L2_FMT_H
#define _FRAMELINK_V4L2_FMT_H

#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/videodev2.h>

#define FL_FMT_MIN	16
#define FL_FMT_MAX	8192

/*
 * @fourcc, its bytes per pixel in the first plane times 2 (@bpp2), the frame's bytes per
 * line of that plane times 2 (@frame2: NV12's chroma adds half the luma), its default
 * colorspace and whether it is YCbCr (the encoding field means something).
 */
struct fl_fmt {
	u32 fourcc;
	u8 bpp2;
	u8 frame2;
	u8 colorspace;
	bool yuv;
};

static const struct fl_fmt fl_fmts[] = {
	{ V4L2_PIX_FMT_NV12, 2, 3, V4L2_COLORSPACE_REC709, true },
	{ V4L2_PIX_FMT_YUYV, 4, 4, V4L2_COLORSPACE_REC709, true },
	{ V4L2_PIX_FMT_UYVY, 4, 4, V4L2_COLORSPACE_REC709, true },
	{ V4L2_PIX_FMT_RGB24, 6, 6, V4L2_COLORSPACE_SRGB, false },
	{ V4L2_PIX_FMT_GREY, 2, 2, V4L2_COLORSPACE_SRGB, false },
	{ V4L2_PIX_FMT_SRGGB8, 2, 2, V4L2_COLORSPACE_RAW, false },
	/* 10 bits in the low bits of 16, little endian: what most camera receivers write */
	{ V4L2_PIX_FMT_SRGGB10, 4, 4, V4L2_COLORSPACE_RAW, false },
};

static inline const struct fl_fmt *fl_fmt_find(u32 fourcc)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fl_fmts); i++)
		if (fl_fmts[i].fourcc == fourcc)
			return &fl_fmts[i];
	return NULL;
}

/**
 * fl_fmt_enum() - VIDIOC_ENUM_FMT
 * @f: index in, pixelformat out (the V4L2 core writes the description).
 *
 * Return: 0, or -EINVAL past the last format.
 */
static inline int fl_fmt_enum(struct v4l2_fmtdesc *f)
{
	if (f->index >= ARRAY_SIZE(fl_fmts))
		return -EINVAL;
	f->pixelformat = fl_fmts[f->index].fourcc;
	return 0;
}

/**
 * fl_fmt_framesizes() - VIDIOC_ENUM_FRAMESIZES: every even size from 16x16 to 8192x8192
 * @fs: index and pixel_format in, the sizes out.
 *
 * Stepwise: without it GStreamer probes the largest size with TRY_FMT, which shrinks the
 * height of an 8192-wide frame to fit max_frame, and takes that height for the limit of
 * every width. A size whose frame does not fit max_frame is still shrunk by TRY_FMT.
 *
 * Return: 0, or -EINVAL (index not 0, a pixel format not carried).
 */
static inline int fl_fmt_framesizes(struct v4l2_frmsizeenum *fs)
{
	if (fs->index || !fl_fmt_find(fs->pixel_format))
		return -EINVAL;
	fs->type = V4L2_FRMSIZE_TYPE_STEPWISE;
	fs->stepwise = (struct v4l2_frmsize_stepwise){
		.min_width = FL_FMT_MIN, .max_width = FL_FMT_MAX, .step_width = 2,
		.min_height = FL_FMT_MIN, .max_height = FL_FMT_MAX, .step_height = 2,
	};
	return 0;
}

/* The colorimetry the sender asked for where V4L2 defines it, the format's default else. */
static inline void fl_fmt_colorimetry(struct v4l2_pix_format *pix, const struct fl_fmt *fmt)
{
	if (!pix->colorspace || pix->colorspace > V4L2_COLORSPACE_DCI_P3 ||
	    pix->colorspace == V4L2_COLORSPACE_JPEG)
		pix->colorspace = fmt->colorspace;
	if (pix->xfer_func > V4L2_XFER_FUNC_SMPTE2084)
		pix->xfer_func = V4L2_XFER_FUNC_DEFAULT;
	if (!fmt->yuv || pix->ycbcr_enc > V4L2_YCBCR_ENC_SMPTE240M)
		pix->ycbcr_enc = V4L2_YCBCR_ENC_DEFAULT;
	if (pix->quantization > V4L2_QUANTIZATION_LIM_RANGE)
		pix->quantization = V4L2_QUANTIZATION_DEFAULT;
}

/**
 * fl_fmt_fit() - TRY_FMT: the nearest format a framelink device carries
 * @pix: in: what the app asks for; out: a format it can have.
 * @max_frame: the endpoint's largest frame (fl_bar_header.max_frame); the height shrinks
 *	until a frame fits.
 *
 * An unknown pixel format becomes the first one; sizes are even (4:2:0 and Bayer), from 16
 * to 8192; progressive only.
 */
static inline void fl_fmt_fit(struct v4l2_pix_format *pix, u32 max_frame)
{
	const struct fl_fmt *fmt = fl_fmt_find(pix->pixelformat);
	u32 frame_line, max_h;

	if (!fmt)
		fmt = &fl_fmts[0];
	pix->pixelformat = fmt->fourcc;
	pix->width = ALIGN_DOWN(clamp(pix->width, FL_FMT_MIN, FL_FMT_MAX), 2);
	pix->height = ALIGN_DOWN(clamp(pix->height, FL_FMT_MIN, FL_FMT_MAX), 2);
	/* bytes of a frame per line of the image, times 2 (exact for every format) */
	frame_line = pix->width * fmt->frame2;
	max_h = ALIGN_DOWN((u32)(2ULL * max_frame / frame_line), 2);
	pix->height = clamp(max_h, FL_FMT_MIN, pix->height);
	pix->bytesperline = pix->width * fmt->bpp2 / 2;
	pix->sizeimage = frame_line * pix->height / 2;
	pix->field = V4L2_FIELD_NONE;
	pix->flags = 0;
	fl_fmt_colorimetry(pix, fmt);
}

/**
 * fl_fmt_default() - the format a device starts with: 640x480 YUYV, or less if that does
 *	not fit @max_frame
 * @pix: out.
 * @max_frame: as for fl_fmt_fit().
 */
static inline void fl_fmt_default(struct v4l2_pix_format *pix, u32 max_frame)
{
	*pix = (struct v4l2_pix_format){
		.width = 640, .height = 480, .pixelformat = V4L2_PIX_FMT_YUYV,
	};
	fl_fmt_fit(pix, max_frame);
}

#endif /* _FRAMELINK_V4L2_FMT_H */
