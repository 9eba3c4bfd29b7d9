/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink-host tracepoints: a frame's life on the root's side (SUBMIT, interrupt,
 * completion queued for REAP, REAP). The endpoint's half is drivers/framelink/epf/trace.h;
 * with both enabled, /sys/kernel/tracing/trace shows where a slow frame spent its time
 * (Documentation/framelink.rst, "Tracing a frame").
 *
 * Copyright (C) 2026 The framelink authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM framelink_host

#if !defined(_FL_HOST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FL_HOST_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(fl_host_submit,
	    TP_PROTO(int dev, u32 buf, u32 bytes, u64 cookie),
	    TP_ARGS(dev, buf, bytes, cookie),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, buf)
			     __field(u32, bytes)
			     __field(u64, cookie)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->buf = buf;
			   __entry->bytes = bytes;
			   __entry->cookie = cookie;),
	    TP_printk("dev=%d buf=%u bytes=%u cookie=%#llx", __entry->dev, __entry->buf,
		      __entry->bytes, __entry->cookie)
);

TRACE_EVENT(fl_host_irq,
	    TP_PROTO(int dev, u64 count),
	    TP_ARGS(dev, count),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u64, count)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->count = count;),
	    TP_printk("dev=%d count=%llu", __entry->dev, __entry->count)
);

TRACE_EVENT(fl_host_complete,
	    TP_PROTO(int dev, u32 queue, u32 buf, u32 bytes, int status, u64 cookie),
	    TP_ARGS(dev, queue, buf, bytes, status, cookie),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, queue)
			     __field(u32, buf)
			     __field(u32, bytes)
			     __field(int, status)
			     __field(u64, cookie)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->queue = queue;
			   __entry->buf = buf;
			   __entry->bytes = bytes;
			   __entry->status = status;
			   __entry->cookie = cookie;),
	    TP_printk("dev=%d queue=%s buf=%u bytes=%u status=%d cookie=%#llx",
		      __entry->dev, __entry->queue == 1 ? "tx" : "rx", __entry->buf,
		      __entry->bytes, __entry->status, __entry->cookie)
);

TRACE_EVENT(fl_host_reap,
	    TP_PROTO(int dev, u32 count),
	    TP_ARGS(dev, count),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, count)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->count = count;),
	    TP_printk("dev=%d count=%u", __entry->dev, __entry->count)
);

#endif /* _FL_HOST_TRACE_H */

/* An out-of-tree module's trace header: define_trace.h finds it through -I$(src) */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
