/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of ib_sync_mem. They are a stable interface: the eBPF tracer
 * (pkg/trace), perf and bpftrace users read them. Fields may be added at the
 * end of an event; existing fields keep their names, types and meaning.
 *
 *   ib_sync_mem:sync_start      a sync begins (client 0: all clients)
 *   ib_sync_mem:sync_end        it ends: clients run, errors, ns, result
 *   ib_sync_mem:client_sync     one client's ->sync ran: ns, result
 *   ib_sync_mem:client_register / client_unregister / client_invalidate
 *   ib_sync_mem:client_move     a range of a client's memory moved
 *   ib_sync_mem:client_revalidate  its ->revalidate ran: the span, result
 *   ib_sync_mem:domain_add / domain_remove
 *
 * dir is enum ib_sync_mem_dir: 1 to-device, 2 to-cpu, 3 bidirectional,
 * 4 inbound.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ib_sync_mem

#if !defined(_IB_SYNC_MEM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IB_SYNC_MEM_TRACE_H

#include <linux/tracepoint.h>
#include "sync_mem.h"

#define sm_show_dir(d)						\
	__print_symbolic(d, { IB_SYNC_MEM_TO_DEVICE, "to-device" },	\
			    { IB_SYNC_MEM_TO_CPU, "to-cpu" },		\
			    { IB_SYNC_MEM_BIDIRECTIONAL, "bidirectional" },	\
			    { IB_SYNC_MEM_INBOUND, "inbound" })

TRACE_EVENT(sync_start,
	TP_PROTO(struct ib_sync_mem_domain *dom, u32 client, int dir),
	TP_ARGS(dom, client, dir),
	TP_STRUCT__entry(
		__field(u32, dev_index)
		__field(u32, client)
		__field(u32, dir)
		__array(char, dev, IB_DEVICE_NAME_MAX)
	),
	TP_fast_assign(
		__entry->dev_index = dom->index;
		__entry->client = client;
		__entry->dir = dir;
		strscpy(__entry->dev, dom->name, IB_DEVICE_NAME_MAX);
	),
	TP_printk("dev=%s client=%u dir=%s", __entry->dev, __entry->client,
		  sm_show_dir(__entry->dir))
);

TRACE_EVENT(sync_end,
	TP_PROTO(struct ib_sync_mem_domain *dom, u32 client, int dir,
		 u32 clients, u32 errors, u64 ns, int err),
	TP_ARGS(dom, client, dir, clients, errors, ns, err),
	TP_STRUCT__entry(
		__field(u32, dev_index)
		__field(u32, client)
		__field(u32, dir)
		__field(u32, clients)
		__field(u32, errors)
		__field(s32, err)
		__field(u64, ns)
		__array(char, dev, IB_DEVICE_NAME_MAX)
	),
	TP_fast_assign(
		__entry->dev_index = dom->index;
		__entry->client = client;
		__entry->dir = dir;
		__entry->clients = clients;
		__entry->errors = errors;
		__entry->err = err;
		__entry->ns = ns;
		strscpy(__entry->dev, dom->name, IB_DEVICE_NAME_MAX);
	),
	TP_printk("dev=%s client=%u dir=%s clients=%u errors=%u ns=%llu err=%d",
		  __entry->dev, __entry->client, sm_show_dir(__entry->dir),
		  __entry->clients, __entry->errors, __entry->ns, __entry->err)
);

TRACE_EVENT(client_sync,
	TP_PROTO(struct ib_sync_mem_client *c, int dir, u64 ns, int err),
	TP_ARGS(c, dir, ns, err),
	TP_STRUCT__entry(
		__field(u32, dev_index)
		__field(u32, client)
		__field(u32, dir)
		__field(s32, err)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->dev_index = c->dom->index;
		__entry->client = c->id;
		__entry->dir = dir;
		__entry->err = err;
		__entry->ns = ns;
	),
	TP_printk("dev_index=%u client=%u dir=%s ns=%llu err=%d",
		  __entry->dev_index, __entry->client,
		  sm_show_dir(__entry->dir), __entry->ns, __entry->err)
);

DECLARE_EVENT_CLASS(sm_client_class,
	TP_PROTO(struct ib_sync_mem_client *c),
	TP_ARGS(c),
	TP_STRUCT__entry(
		__field(u32, dev_index)
		__field(u32, client)
		__field(u32, kind)
		__field(u32, flags)
		__field(u32, reason)
		__array(char, name, IB_SYNC_MEM_NAME_MAX)
	),
	TP_fast_assign(
		__entry->dev_index = c->dom->index;
		__entry->client = c->id;
		__entry->kind = c->kind;
		__entry->flags = c->flags;
		__entry->reason = c->inval_reason;
		strscpy(__entry->name, c->name, IB_SYNC_MEM_NAME_MAX);
	),
	TP_printk("dev_index=%u client=%u name=%s kind=%u flags=%#x reason=%u",
		  __entry->dev_index, __entry->client, __entry->name,
		  __entry->kind, __entry->flags, __entry->reason)
);

DEFINE_EVENT(sm_client_class, client_register,
	TP_PROTO(struct ib_sync_mem_client *c), TP_ARGS(c));
DEFINE_EVENT(sm_client_class, client_unregister,
	TP_PROTO(struct ib_sync_mem_client *c), TP_ARGS(c));
DEFINE_EVENT(sm_client_class, client_invalidate,
	TP_PROTO(struct ib_sync_mem_client *c), TP_ARGS(c));

DECLARE_EVENT_CLASS(sm_range_class,
	TP_PROTO(struct ib_sync_mem_client *c, u64 offset, u64 len, int err),
	TP_ARGS(c, offset, len, err),
	TP_STRUCT__entry(
		__field(u32, dev_index)
		__field(u32, client)
		__field(s32, err)
		__field(u64, offset)
		__field(u64, len)
	),
	TP_fast_assign(
		__entry->dev_index = c->dom->index;
		__entry->client = c->id;
		__entry->err = err;
		__entry->offset = offset;
		__entry->len = len;
	),
	TP_printk("dev_index=%u client=%u offset=%llu len=%llu err=%d",
		  __entry->dev_index, __entry->client, __entry->offset,
		  __entry->len, __entry->err)
);

/* A move has no result: its err is 0. */
DEFINE_EVENT(sm_range_class, client_move,
	TP_PROTO(struct ib_sync_mem_client *c, u64 offset, u64 len, int err),
	TP_ARGS(c, offset, len, err));
DEFINE_EVENT(sm_range_class, client_revalidate,
	TP_PROTO(struct ib_sync_mem_client *c, u64 offset, u64 len, int err),
	TP_ARGS(c, offset, len, err));

DECLARE_EVENT_CLASS(sm_domain_class,
	TP_PROTO(struct ib_sync_mem_domain *dom),
	TP_ARGS(dom),
	TP_STRUCT__entry(
		__field(u32, dev_index)
		__array(char, dev, IB_DEVICE_NAME_MAX)
	),
	TP_fast_assign(
		__entry->dev_index = dom->index;
		strscpy(__entry->dev, dom->name, IB_DEVICE_NAME_MAX);
	),
	TP_printk("dev=%s dev_index=%u", __entry->dev, __entry->dev_index)
);

DEFINE_EVENT(sm_domain_class, domain_add,
	TP_PROTO(struct ib_sync_mem_domain *dom), TP_ARGS(dom));
DEFINE_EVENT(sm_domain_class, domain_remove,
	TP_PROTO(struct ib_sync_mem_domain *dom), TP_ARGS(dom));

#endif /* _IB_SYNC_MEM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
