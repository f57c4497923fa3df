/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints of the neuron driver (events/neuron/ in tracefs): a job's
 * path from SUBMIT to the ring to completion, and the timeouts and resets
 * that end a hung one. Jobs are named by their hardware fence's seqno on
 * their queue (the seqno resets and fdinfo also use).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM neuron

#if !defined(__NEURON_TRACE_H__) || defined(TRACE_HEADER_MULTI_READ)
#define __NEURON_TRACE_H__

#include <linux/tracepoint.h>

TRACE_EVENT(neuron_submit,
	    TP_PROTO(const char *dev, const char *queue, u32 ndesc, bool direct),
	    TP_ARGS(dev, queue, ndesc, direct),
	    TP_STRUCT__entry(__string(dev, dev)
			     __string(queue, queue)
			     __field(u32, ndesc)
			     __field(bool, direct)),
	    TP_fast_assign(__assign_str(dev);
			   __assign_str(queue);
			   __entry->ndesc = ndesc;
			   __entry->direct = direct;),
	    TP_printk("dev=%s queue=%s ndesc=%u path=%s", __get_str(dev),
		      __get_str(queue), __entry->ndesc,
		      __entry->direct ? "direct" : "scheduler")
);

TRACE_EVENT(neuron_push,
	    TP_PROTO(const char *dev, const char *queue, u64 seqno, u32 slot,
		     u32 ndesc),
	    TP_ARGS(dev, queue, seqno, slot, ndesc),
	    TP_STRUCT__entry(__string(dev, dev)
			     __string(queue, queue)
			     __field(u64, seqno)
			     __field(u32, slot)
			     __field(u32, ndesc)),
	    TP_fast_assign(__assign_str(dev);
			   __assign_str(queue);
			   __entry->seqno = seqno;
			   __entry->slot = slot;
			   __entry->ndesc = ndesc;),
	    TP_printk("dev=%s queue=%s seqno=%llu slot=%u ndesc=%u",
		      __get_str(dev), __get_str(queue), __entry->seqno,
		      __entry->slot, __entry->ndesc)
);

TRACE_EVENT(neuron_complete,
	    TP_PROTO(const char *dev, const char *queue, u64 seqno, int error,
		     u32 device_error),
	    TP_ARGS(dev, queue, seqno, error, device_error),
	    TP_STRUCT__entry(__string(dev, dev)
			     __string(queue, queue)
			     __field(u64, seqno)
			     __field(int, error)
			     __field(u32, device_error)),
	    TP_fast_assign(__assign_str(dev);
			   __assign_str(queue);
			   __entry->seqno = seqno;
			   __entry->error = error;
			   __entry->device_error = device_error;),
	    TP_printk("dev=%s queue=%s seqno=%llu error=%d device_error=%u",
		      __get_str(dev), __get_str(queue), __entry->seqno,
		      __entry->error, __entry->device_error)
);

TRACE_EVENT(neuron_timeout,
	    TP_PROTO(const char *dev, const char *queue, u64 seqno),
	    TP_ARGS(dev, queue, seqno),
	    TP_STRUCT__entry(__string(dev, dev)
			     __string(queue, queue)
			     __field(u64, seqno)),
	    TP_fast_assign(__assign_str(dev);
			   __assign_str(queue);
			   __entry->seqno = seqno;),
	    TP_printk("dev=%s queue=%s seqno=%llu", __get_str(dev),
		      __get_str(queue), __entry->seqno)
);

TRACE_EVENT(neuron_reset,
	    TP_PROTO(const char *dev, const char *queue, u64 guilty, bool device),
	    TP_ARGS(dev, queue, guilty, device),
	    TP_STRUCT__entry(__string(dev, dev)
			     __string(queue, queue)
			     __field(u64, guilty)
			     __field(bool, device)),
	    TP_fast_assign(__assign_str(dev);
			   __assign_str(queue);
			   __entry->guilty = guilty;
			   __entry->device = device;),
	    TP_printk("dev=%s queue=%s guilty_seqno=%llu scope=%s",
		      __get_str(dev), __get_str(queue), __entry->guilty,
		      __entry->device ? "device" : "queue")
);

#endif /* __NEURON_TRACE_H__ */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE neuron_trace
#include <trace/define_trace.h>
