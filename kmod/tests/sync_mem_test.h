/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sync_mem_test: what the in-kernel test cases share (sync_mem_test.c has
 * the runner, test_core.c and test_guarantees.c the cases).
 */
#ifndef _IB_SYNC_MEM_TEST_H
#define _IB_SYNC_MEM_TEST_H

#include <linux/completion.h>
#include <linux/seq_buf.h>
#include <linux/workqueue.h>
#include <rdma/ib_sync_mem.h>

#include "../ib_sync_mem/sync_mem.h"

/*
 * The owners of the test's clients (sync_mem_test.c): kt_owner's for the
 * tc clients, kt_other for a second driver on the same devices.
 */
extern struct ib_sync_mem_owner *kt_owner;
extern struct ib_sync_mem_owner *kt_other;

/* Module parameters (sync_mem_test.c). */
extern char *kt_dev;
extern unsigned int kt_churn_iters;
extern bool kt_shared;

/* KTAP output of the running case. */
extern struct seq_buf kt_out;
extern int kt_fail;		/* failed expectations */
extern atomic_t kt_bad;		/* failures seen in callbacks and threads */

#define kt_diag(fmt, ...) \
	seq_buf_printf(&kt_out, "    # " fmt "\n", ##__VA_ARGS__)

#define KT_EXPECT(cond) do {						\
	if (!(cond)) {							\
		kt_fail++;						\
		kt_diag("%s:%d: expected %s", __FILE__, __LINE__, #cond); \
	}								\
} while (0)

#define KT_EXPECT_EQ(a, b) do {						\
	long long _a = (a), _b = (b);					\
	if (_a != _b) {							\
		kt_fail++;						\
		kt_diag("%s:%d: expected %s == %s, got %lld != %lld",	\
			__FILE__, __LINE__, #a, #b, _a, _b);		\
	}								\
} while (0)

/*
 * KT_WAIT(cond, secs): poll @cond every 20 ms for at most @secs seconds (a
 * hang guard, never a measurement). True once @cond holds.
 */
#define KT_WAIT(cond, secs) ({						\
	unsigned long __end = jiffies + (secs) * HZ;			\
	bool __ok;							\
	while (!(__ok = (cond)) && time_before(jiffies, __end))	\
		msleep(20);						\
	__ok;								\
})

#define TC_LIVE		0x5a5a1234u
#define TC_RANGES	8
#define TC_POISON	0xdeadbeefu

/* What a test client's ->invalidate does besides counting. */
enum tc_inval_mode {
	TC_INVAL_COUNT,		/* nothing */
	TC_INVAL_UNREGISTER,	/* unregister the client from the callback */
	TC_INVAL_WORK,		/* unregister it from a work item */
};

/**
 * struct tc - a test client
 *
 * Its private data outlives the client: release poisons the canary instead
 * of freeing, so a callback after release is seen; @dead is set when
 * ib_sync_mem_unregister() returned, so a callback after unregister is seen
 * too (both count in kt_bad).
 *
 * @canary: TC_LIVE until released
 * @idx: position in its array
 * @fail: errno ->sync returns, negative
 * @sleep_us: ->sync sleeps that long
 * @gate: ->sync waits for it if set
 * @gate_deadline: ... and then gives up at its deadline (-ETIMEDOUT) or on a
 *	signal (-ERESTARTSYS), as a fence wait does
 * @entered: completed once per ->sync entered
 * @info_gate: ->fill_info waits for it if set (at most 60 s)
 * @info_entered: completed once per ->fill_info entered
 * @info_sleep_us: ->fill_info sleeps that long
 * @inval_gate: ->invalidate waits for it if set (at most 120 s)
 * @inval_entered: completed once per ->invalidate entered
 * @syncs: ->sync calls
 * @invalidates: ->invalidate calls
 * @releases: ->release calls
 * @prepares: ->prepare calls (batch ops)
 * @finishes: ->finish calls (batch ops)
 * @after_inval: ->sync calls after ->invalidate
 * @revalidates: ->revalidate calls (tc_move_ops)
 * @reval_off: the offset the last ->revalidate was given
 * @reval_len: its length
 * @reval_syncs: @syncs when the last ->revalidate began
 * @reval_fail: errno ->revalidate returns, negative
 * @reval_gate: ->revalidate waits for it if set (at most 60 s)
 * @reval_entered: completed once per ->revalidate entered
 * @flushes: ->flush_inbound calls (tc_inbound_ops)
 * @targets: ->inbound_target calls (tc_target_ops)
 * @target: the DMA address ->inbound_target gives
 * @target_fail: errno ->inbound_target and ->flush_inbound return
 * @ranges: the spans ->sync_range was given, in order (tc_range_ops)
 * @nranges: ->sync_range calls (past TC_RANGES, only counted)
 * @range_dir: the direction the last ->sync_range was given
 * @remark: ->sync_range marks this span dirty in @remark_dir, once, as a
 *	producer writing while its sync runs (unset: end 0)
 * @remark_dir: its direction
 * @order: records the order of ->sync calls
 * @order_pos: next slot of @order
 * @written: the producer's generation of the memory (tests bump it)
 * @coherent: the newest @written a completed, successful ->sync covered
 * @last_pid: the task that entered ->sync last
 * @deadline: the deadline the last ->sync or ->sync_range was given
 * @dead: ib_sync_mem_unregister() returned
 * @inval_mode: enum tc_inval_mode
 * @inval_locked: ->invalidate found the domain's lock held
 * @unreg_work: unregisters the client (TC_INVAL_WORK)
 * @engine: the fence ->sync_async returned last (tc_async_ops; the
 *	test's reference), signalled by the test (kt_fence_signal())
 * @async_calls: ->sync_async calls
 * @deps_calls: ->deps calls (tc_deps_ops)
 * @async_fail: errno ->sync_async returns (as an ERR_PTR), negative
 * @wait_fence: ->sync waits for it if set, until its deadline (its error,
 *	or -ETIMEDOUT), as a dma-buf client waits for its reservation's
 * @client: the registry client
 */
struct tc {
	u32 canary;
	int idx;
	int count;		/* of tc_alloc()'s array, in each */
	int fail;
	unsigned int sleep_us;
	struct completion *gate;
	bool gate_deadline;
	struct completion entered;
	struct completion *info_gate;
	struct completion info_entered;
	unsigned int info_sleep_us;
	struct completion *inval_gate;
	struct completion inval_entered;
	atomic_t syncs;
	atomic_t invalidates;
	atomic_t releases;
	atomic_t prepares;
	atomic_t finishes;
	atomic_t after_inval;
	atomic_t revalidates;
	u64 reval_off;
	u64 reval_len;
	int reval_syncs;
	int reval_fail;
	struct completion *reval_gate;
	struct completion reval_entered;
	atomic_t flushes;
	atomic_t targets;
	u64 target;
	int target_fail;
	struct sm_span ranges[TC_RANGES];
	atomic_t nranges;
	enum ib_sync_mem_dir range_dir;
	struct sm_span remark;
	enum ib_sync_mem_dir remark_dir;
	int *order;
	atomic_t *order_pos;
	atomic64_t written;
	atomic64_t coherent;
	pid_t last_pid;
	ktime_t deadline;
	bool dead;
	int inval_mode;
	bool inval_locked;
	struct work_struct unreg_work;
	struct dma_fence *engine;
	atomic_t async_calls;
	atomic_t deps_calls;
	int async_fail;
	struct dma_fence *wait_fence;
	struct ib_sync_mem_client *client;
};

extern const struct ib_sync_mem_ops tc_ops;
extern const struct ib_sync_mem_ops tc_batch_ops;
extern const struct ib_sync_mem_ops tc_move_ops;
extern const struct ib_sync_mem_ops tc_inbound_ops;
extern const struct ib_sync_mem_ops tc_target_ops;
extern const struct ib_sync_mem_ops tc_range_ops;
extern const struct ib_sync_mem_ops tc_async_ops;
extern const struct ib_sync_mem_ops tc_deps_ops;

struct tc *tc_alloc(int n);
struct ib_sync_mem_client *tc_register(struct ib_device *ibdev, struct tc *t,
				       u32 flags);
struct ib_sync_mem_client *tc_register_ops(struct ib_device *ibdev,
					   struct tc *t,
					   const struct ib_sync_mem_ops *ops,
					   u32 flags);
struct ib_sync_mem_client *tc_register_sized(struct ib_device *ibdev,
					     struct tc *t,
					     const struct ib_sync_mem_ops *ops,
					     u32 flags, u64 size, u32 align);
bool tc_register_all(struct ib_device *ibdev, struct tc *t, int n, u32 flags);
void tc_unregister(struct tc *t);
void tc_unregister_all(struct tc *t, int n);
int tc_wait_release(struct tc *t);
void tc_free(struct tc *t);
struct ib_sync_mem_domain *test_domain(struct ib_device *ibdev);

/*
 * A call made from a kernel thread, for tests that need several at once.
 * @done is completed for good when the call returned: wait on it any
 * number of times.
 */
struct kt_caller {
	struct ib_device *ibdev;
	struct ib_sync_mem_client *client;
	struct tc *tc;
	enum ib_sync_mem_dir dir;
	unsigned int timeout_ms;
	bool signal;		/* a SIGUSR1 may be sent to it */
	struct ib_sync_mem_result res;
	int ret;
	pid_t pid;
	struct task_struct *task;
	struct completion done;
};

int kt_sync_device_fn(void *arg);
int kt_invalidate_fn(void *arg);
int kt_sync_client_fn(void *arg);
int kt_unregister_fn(void *arg);
bool kt_start(int (*fn)(void *), struct kt_caller *k);
bool kt_start_on(int (*fn)(void *), struct kt_caller *k, int cpu, bool first);
unsigned int kt_waiters(struct wait_queue_head *wq);

/* The cases, by file; each runs on @ibdev (the dev parameter's device). */
void test_register_unregister(struct ib_device *ibdev);
void test_bad_input(struct ib_device *ibdev);
void test_owners(struct ib_device *ibdev);
void test_bulk(struct ib_device *ibdev);
int listener_start(struct ib_device *ibdev);
void test_listener_check(void);
void test_listener_exit(void);
void test_fanout_order(struct ib_device *ibdev);
void test_error_propagation(struct ib_device *ibdev);
void test_lazy(struct ib_device *ibdev);
void test_coalescing(struct ib_device *ibdev);
void test_unregister_during_sync(struct ib_device *ibdev);
void test_module_refcount(struct ib_device *ibdev);
void test_invalidate_memory(struct ib_device *ibdev);
void test_moves(struct ib_device *ibdev);
void test_move_during_revalidate(struct ib_device *ibdev);
void test_inbound(struct ib_device *ibdev);
void test_inbound_read(struct ib_device *ibdev);
void test_inbound_scoped(struct ib_device *ibdev);
void test_inbound_teardown(struct ib_device *ibdev);
void test_inbound_buffer(struct ib_device *ibdev);
int inbound_recover_start(struct ib_device *ibdev);
int inbound_recover_down(void);
void test_inbound_recover_check(void);
int inbound_nocreate_start(const char *name);
void test_inbound_nocreate_check(void);
void test_inbound_exit(void);
void test_ranges(struct ib_device *ibdev);
void test_dirty_spans(struct ib_device *ibdev);
void test_churn(struct ib_device *ibdev);
int storm_start(const char *name);
int storm_wait(void);
void test_storm_check(void);
bool storm_active(void);

void test_lazy_inflight(struct ib_device *ibdev);
void test_lazy_directions(struct ib_device *ibdev);
void test_lazy_stress(struct ib_device *ibdev);
void test_deadline_per_caller(struct ib_device *ibdev);
void test_batch_pairing(struct ib_device *ibdev);
void test_batch_churn(struct ib_device *ibdev);
void test_invalidate_unregister(struct ib_device *ibdev);
void test_unregister_scoped(struct ib_device *ibdev);
void test_unregister_many(struct ib_device *ibdev);
int fill_info_start(struct ib_device *ibdev);
void test_fill_info_check(void);
int killable_start(struct ib_device *ibdev);
void test_killable_check(void);
int inval_dev_start(const char *name);
void test_inval_dev_check(void);
int inval_race_start(const char *name);
void test_inval_race_check(void);
int dump_window_start(const char *name);
int dump_window_flip(void);
void test_dump_window_check(void);
int bulk_register(struct ib_device *ibdev, unsigned int n);
int bulk_invalidate_held(void);
int bulk_invalidate_release(void);
void bulk_unregister(void);
int urelease_hold(u32 portid);
int urelease_held(void);
void urelease_release(void);
void test_guarantees_exit(void);

/* test_splats.c: steps that make the debug kernel report a bad sync. */
int splat_atomic(struct ib_device *ibdev);
int splat_signalling(struct ib_device *ibdev);

/* test_fence.c: the debugfs "fence" file. */
struct dentry;
void test_fence_init(struct dentry *root);
void test_fence_exit(void);
struct dma_fence *kt_fence_new(void);
int kt_fence_wait(struct dma_fence *f);
void kt_fence_signal(struct dma_fence *f, int err);
void test_async(struct ib_device *ibdev);
void test_async_device(struct ib_device *ibdev);
void test_async_batch(struct ib_device *ibdev);
void test_async_kind(struct ib_device *ibdev);
int async_dev_start(const char *name);
void test_async_dev_check(void);
void test_async_invalidate(struct ib_device *ibdev);
void test_async_batch_gone(struct ib_device *ibdev);
void test_async_deps_gone(struct ib_device *ibdev);
int kind_removal_start(const char *name);
void test_kind_removal_engine(void);
void test_kind_removal_check(void);
int fence_removal_start(const char *name);
void test_fence_removal_check(void);

#endif /* _IB_SYNC_MEM_TEST_H */
