/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink-epf tracepoints: a frame's life on the endpoint (the app's SUBMIT, a host
 * descriptor seen, the transfer started by DMA or CPU and finished, completions published,
 * the interrupt raised). The host's half is drivers/framelink/host/trace.h.
 *
 * Copyright (C) 2026 The framelink authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM framelink_ep

#if !defined(_FL_EPF_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FL_EPF_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(fl_ep_submit,
	    TP_PROTO(int ep, u32 slot, u32 bytes, u64 cookie),
	    TP_ARGS(ep, slot, bytes, cookie),
	    TP_STRUCT__entry(__field(int, ep)
			     __field(u32, slot)
			     __field(u32, bytes)
			     __field(u64, cookie)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->slot = slot;
			   __entry->bytes = bytes;
			   __entry->cookie = cookie;),
	    TP_printk("ep=%d slot=%u bytes=%u cookie=%#llx", __entry->ep, __entry->slot,
		      __entry->bytes, __entry->cookie)
);

TRACE_EVENT(fl_ep_desc_seen,
	    TP_PROTO(int ep, bool to_host, u32 prod),
	    TP_ARGS(ep, to_host, prod),
	    TP_STRUCT__entry(__field(int, ep)
			     __field(bool, to_host)
			     __field(u32, prod)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->to_host = to_host;
			   __entry->prod = prod;),
	    TP_printk("ep=%d ring=%s prod=%u", __entry->ep,
		      __entry->to_host ? "rx" : "tx", __entry->prod)
);

DECLARE_EVENT_CLASS(fl_ep_xfer_class,
		    TP_PROTO(int ep, bool to_host, u32 slot, u32 bytes, u64 cookie, bool cpu,
			     bool err),
		    TP_ARGS(ep, to_host, slot, bytes, cookie, cpu, err),
		    TP_STRUCT__entry(__field(int, ep)
				     __field(bool, to_host)
				     __field(u32, slot)
				     __field(u32, bytes)
				     __field(u64, cookie)
				     __field(bool, cpu)
				     __field(bool, err)),
		    TP_fast_assign(__entry->ep = ep;
				   __entry->to_host = to_host;
				   __entry->slot = slot;
				   __entry->bytes = bytes;
				   __entry->cookie = cookie;
				   __entry->cpu = cpu;
				   __entry->err = err;),
		    TP_printk("ep=%d dir=%s slot=%u bytes=%u cookie=%#llx path=%s%s",
			      __entry->ep, __entry->to_host ? "e2h" : "h2e", __entry->slot,
			      __entry->bytes, __entry->cookie, __entry->cpu ? "cpu" : "dma",
			      __entry->err ? " failed" : "")
);

DEFINE_EVENT(fl_ep_xfer_class, fl_ep_xfer_start,
	     TP_PROTO(int ep, bool to_host, u32 slot, u32 bytes, u64 cookie, bool cpu, bool err),
	     TP_ARGS(ep, to_host, slot, bytes, cookie, cpu, err)
);

DEFINE_EVENT(fl_ep_xfer_class, fl_ep_xfer_done,
	     TP_PROTO(int ep, bool to_host, u32 slot, u32 bytes, u64 cookie, bool cpu, bool err),
	     TP_ARGS(ep, to_host, slot, bytes, cookie, cpu, err)
);

TRACE_EVENT(fl_ep_cq_publish,
	    TP_PROTO(int ep, u32 prod, u32 count),
	    TP_ARGS(ep, prod, count),
	    TP_STRUCT__entry(__field(int, ep)
			     __field(u32, prod)
			     __field(u32, count)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->prod = prod;
			   __entry->count = count;),
	    TP_printk("ep=%d cq_prod=%u count=%u", __entry->ep, __entry->prod,
		      __entry->count)
);

TRACE_EVENT(fl_ep_irq,
	    TP_PROTO(int ep, u16 num, u32 cq_prod),
	    TP_ARGS(ep, num, cq_prod),
	    TP_STRUCT__entry(__field(int, ep)
			     __field(u16, num)
			     __field(u32, cq_prod)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->num = num;
			   __entry->cq_prod = cq_prod;),
	    TP_printk("ep=%d num=%u cq_prod=%u", __entry->ep, __entry->num,
		      __entry->cq_prod)
);

#endif /* _FL_EPF_TRACE_H */

/* An out-of-tree module's trace header: define_trace.h finds it through -I$(src) */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
