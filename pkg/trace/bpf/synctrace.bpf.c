// SPDX-License-Identifier: GPL-2.0
/*
 * synctrace: log2 latency histograms of ib_sync_mem syncs, per device,
 * client and direction, and failures by errno. Loaded by pkg/trace.
 *
 *   tracepoint ib_sync_mem:client_sync  ->  sm_hist (kind client),
 *                                           sm_errors (kind client)
 *   tracepoint ib_sync_mem:sync_end     ->  sm_hist (kind pass, client 0),
 *                                           sm_errors (kind pass / refused),
 *                                           sm_dev_names
 *
 * The counting maps are per-CPU and only ever incremented; userspace sums
 * the CPUs and computes interval deltas itself (pkg/trace shrinks their
 * max_entries on machines with many CPUs). Filters are constants rewritten
 * at load time (cfg_*), so a filtered-out event costs a compare.
 */
#include "synctrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by pkg/trace before loading (.rodata). */
volatile const __u32 cfg_filter_dev = 0;	/* only dev_index == cfg_dev */
volatile const __u32 cfg_dev = 0;
volatile const __u32 cfg_client = 0;	/* 0: every client, else only it */
volatile const __u32 cfg_per_client = 0;	/* key client histograms by id */
volatile const __u64 cfg_unit_div = 1000;	/* ns per histogram unit */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sm_hist_key);
	__type(value, struct sm_hist_val);
} sm_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sm_err_key);
	__type(value, __u64);
} sm_errors SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct sm_dev_name);
} sm_dev_names SEC(".maps");

/* Updates lost because a map was full. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sm_drops SEC(".maps");

/* floor(log2(v)), 0 for 0 and 1: the libbpf-tools slot of v. */
static __always_inline __u32 log2_32(__u32 v)
{
	__u32 r, shift;

	r = (v > 0xFFFF) << 4;
	v >>= r;
	shift = (v > 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 log2_64(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? log2_32(hi) + 32 : log2_32((__u32)v);
}

static __always_inline void count_drop(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&sm_drops, &zero);

	if (n)
		(*n)++;
}

static __always_inline void hist_add(__u32 dev, __u32 client, __u32 dir,
				     __u8 kind, __u64 ns)
{
	struct sm_hist_key key = {};
	struct sm_hist_val *v;
	__u32 slot = log2_64(ns / cfg_unit_div);

	key.dev_index = dev;
	key.client = client;
	key.dir = dir;
	key.kind = kind;
	if (slot > SM_HIST_SLOTS - 1)
		slot = SM_HIST_SLOTS - 1;

	v = bpf_map_lookup_elem(&sm_hist, &key);
	if (!v) {
		struct sm_hist_val zero = {};

		/* -EEXIST when another CPU won the race: look up again. */
		bpf_map_update_elem(&sm_hist, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sm_hist, &key);
		if (!v) {
			count_drop();
			return;
		}
	}
	/* Per-CPU value; tracing programs do not nest on a CPU. */
	/*
	 * 6.1's verifier loses the clamp's bound on the way to the index
	 * ("R1 unbounded memory access"): a mask it cannot miss, which the
	 * compiler may not fold away after the clamp.
	 */
	barrier_var(slot);
	v->slots[slot & (SM_HIST_SLOTS - 1)]++;
	v->ns += ns;
}

static __always_inline void err_add(__u32 dev, __u32 client, __u32 dir,
				    __u8 kind, __s32 err)
{
	struct sm_err_key key = {};
	__u64 *n;

	key.dev_index = dev;
	key.client = client;
	key.dir = dir;
	key.kind = kind;
	key.err = err < 0 ? -err : err;

	n = bpf_map_lookup_elem(&sm_errors, &key);
	if (!n) {
		__u64 zero = 0;

		bpf_map_update_elem(&sm_errors, &key, &zero, BPF_NOEXIST);
		n = bpf_map_lookup_elem(&sm_errors, &key);
		if (!n) {
			count_drop();
			return;
		}
	}
	(*n)++;
}

/*
 * Remember the device's name for the reader; write the map only when it
 * changed. The verifier allows only constant offsets from the context
 * pointer, so the name is read word by word at fixed offsets.
 */
static __always_inline void remember_name(__u32 dev,
					  const struct sm_sync_end_rec *ctx)
{
	struct sm_dev_name fresh;
	__u64 *w = (__u64 *)fresh.name;
	struct sm_dev_name *cur;
	__u64 *c;
	int i;

#define SM_WORD(i) (w[i] = *(const __u64 *)&ctx->dev[8 * (i)])
	SM_WORD(0); SM_WORD(1); SM_WORD(2); SM_WORD(3);
	SM_WORD(4); SM_WORD(5); SM_WORD(6); SM_WORD(7);
#undef SM_WORD

	cur = bpf_map_lookup_elem(&sm_dev_names, &dev);
	if (cur) {
		c = (__u64 *)cur->name;
#pragma unroll
		for (i = 0; i < SM_DEV_NAME_MAX / 8; i++)
			if (c[i] != w[i])
				break;
		if (i == SM_DEV_NAME_MAX / 8)
			return;
	}
	if (bpf_map_update_elem(&sm_dev_names, &dev, &fresh, BPF_ANY))
		count_drop();
}

SEC("tracepoint/ib_sync_mem/client_sync")
int sm_client_sync(struct sm_client_sync_rec *ctx)
{
	__u32 dev = ctx->dev_index, client = ctx->client, dir = ctx->dir;
	__s32 err = ctx->err;

	if (cfg_filter_dev && dev != cfg_dev)
		return 0;
	if (cfg_client && client != cfg_client)
		return 0;
	if (!cfg_per_client)
		client = 0;
	hist_add(dev, client, dir, SM_KIND_CLIENT, ctx->ns);
	if (err)
		err_add(dev, client, dir, SM_KIND_CLIENT, err);
	return 0;
}

SEC("tracepoint/ib_sync_mem/sync_end")
int sm_sync_end(struct sm_sync_end_rec *ctx)
{
	__u32 dev = ctx->dev_index, client = ctx->client, dir = ctx->dir;
	__s32 err = ctx->err;

	if (cfg_filter_dev && dev != cfg_dev)
		return 0;
	remember_name(dev, ctx);
	if (!client) {
		/* A device-wide pass: not about any one client. */
		if (cfg_client)
			return 0;
		hist_add(dev, 0, dir, SM_KIND_PASS, ctx->ns);
		if (err)
			err_add(dev, 0, dir, SM_KIND_PASS, err);
		return 0;
	}
	/*
	 * A single-client sync. When its ->sync ran, client_sync counted it;
	 * count only the failures that happened before (invalidated or
	 * unregistered client).
	 */
	if (!err || ctx->clients)
		return 0;
	if (cfg_client && client != cfg_client)
		return 0;
	if (!cfg_per_client)
		client = 0;
	err_add(dev, client, dir, SM_KIND_REFUSED, err);
	return 0;
}
