/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Self-contained definitions for synctrace.bpf.c: the few BPF UAPI numbers
 * and helpers it uses, the ib_sync_mem tracepoint records, and the map keys
 * and values shared with the Go side (pkg/trace, through bpf2go -type).
 *
 * Nothing here comes from kernel headers: no vmlinux.h, no CO-RE. The
 * records are written from TP_STRUCT__entry in kmod/ib_sync_mem/trace.h, a
 * stable interface; the offsets are asserted below and checked again at run
 * time against /sys/kernel/tracing/events/ib_sync_mem/<event>/format.
 */
#ifndef SYNCTRACE_H
#define SYNCTRACE_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))
/*
 * As libbpf's bpf_helpers.h: the compiler forgets what it knows of @var,
 * so that a bound written after it stays in the program for the verifier.
 */
#define barrier_var(var) asm volatile("" : "=r"(var) : "0"(var))
/* BTF-defined map attributes, as libbpf and cilium/ebpf read them. */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

enum {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
};

/* Helper numbers from enum bpf_func_id (include/uapi/linux/bpf.h). */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key,
				   const void *value, __u64 flags) = (void *)2;

/* Common header of every trace event record. */
struct sm_trace_common {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
};

#define SM_DEV_NAME_MAX 64	/* IB_DEVICE_NAME_MAX */

/* ib_sync_mem:client_sync, one client's ->sync ran. */
struct sm_client_sync_rec {
	struct sm_trace_common common;
	__u32 dev_index;
	__u32 client;
	__u32 dir;
	__s32 err;
	__u64 ns;
};

/* ib_sync_mem:sync_end, a top-level sync (pass or single client) ended. */
struct sm_sync_end_rec {
	struct sm_trace_common common;
	__u32 dev_index;
	__u32 client;		/* 0: device-wide pass */
	__u32 dir;
	__u32 clients;
	__u32 errors;
	__s32 err;
	__u64 ns;
	char dev[SM_DEV_NAME_MAX];
};

#define SM_ASSERT_OFF(type, field, off)					\
	_Static_assert(__builtin_offsetof(struct type, field) == (off),	\
		       #type "." #field " must be at offset " #off)

SM_ASSERT_OFF(sm_client_sync_rec, dev_index, 8);
SM_ASSERT_OFF(sm_client_sync_rec, client, 12);
SM_ASSERT_OFF(sm_client_sync_rec, dir, 16);
SM_ASSERT_OFF(sm_client_sync_rec, err, 20);
SM_ASSERT_OFF(sm_client_sync_rec, ns, 24);
SM_ASSERT_OFF(sm_sync_end_rec, dev_index, 8);
SM_ASSERT_OFF(sm_sync_end_rec, client, 12);
SM_ASSERT_OFF(sm_sync_end_rec, dir, 16);
SM_ASSERT_OFF(sm_sync_end_rec, clients, 20);
SM_ASSERT_OFF(sm_sync_end_rec, errors, 24);
SM_ASSERT_OFF(sm_sync_end_rec, err, 28);
SM_ASSERT_OFF(sm_sync_end_rec, ns, 32);
SM_ASSERT_OFF(sm_sync_end_rec, dev, 40);

/* What a histogram or error count is about. */
enum sm_kind {
	SM_KIND_CLIENT = 1,	/* one client's ->sync (client_sync) */
	SM_KIND_PASS = 2,	/* a device-wide pass (sync_end, client 0) */
	SM_KIND_REFUSED = 3,	/* a single-client sync failed before its
				 * ->sync ran (sync_end, clients 0): errors only
				 */
};

/*
 * Key of sm_hist: one series, a (device, client, direction, kind). client
 * is 0 for passes and when the per-client split is off (client ids start
 * at 1). Every byte is named so that a zeroed key has no holes.
 */
struct sm_hist_key {
	__u32 dev_index;
	__u32 client;
	__u8 dir;
	__u8 kind;
	__u8 pad[2];
};

/*
 * A series' log2 histogram, all its slots in one value: a map entry per
 * series, not per slot, so the map holds as many series as it has
 * entries. The last slot is open-ended (pkg/hist's Buckets, libbpf-tools'
 * numbering: slot s counts [2^s, 2^(s+1)) units, slot 0 also 0).
 */
#define SM_HIST_SLOTS 32

struct sm_hist_val {
	__u64 ns;		/* sum of the durations, in ns */
	__u64 slots[SM_HIST_SLOTS];
};

/* Key of sm_errors: failures by positive errno. */
struct sm_err_key {
	__u32 dev_index;
	__u32 client;
	__u8 dir;
	__u8 kind;
	__u16 pad;
	__u32 err;
};

struct sm_dev_name {
	char name[SM_DEV_NAME_MAX];
};

#endif /* SYNCTRACE_H */
