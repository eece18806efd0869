// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: in-kernel tests of the ib_sync_mem registry, in KTAP.
 *
 * Driven from test/vm/20-core.sh (and 60-packaging.sh, 75-churn.sh) through
 * debugfs:
 *
 *   /sys/kernel/debug/ib_sync_mem_test/run      write a case name, or a step
 *   /sys/kernel/debug/ib_sync_mem_test/results  KTAP of every case run so far
 *   /sys/kernel/debug/ib_sync_mem_test/list     the cases "run" takes alone
 *   /sys/kernel/debug/ib_sync_mem_test/waiters  callers waiting for a pass
 *                                               on the dev device, per
 *                                               direction
 *   /sys/kernel/debug/ib_sync_mem_test/fence    fences with no timer, for
 *                                               dma-bufs (test_fence.c)
 *
 * Most cases run on the device named by the module parameter dev (rxe0).
 * Some need userspace in the middle and run in steps (each step a write to
 * "run"; the second writes the KTAP result):
 *
 *   storm_start DEV, storm_wait, `rdma link delete DEV`, storm_check
 *   fill_info_start, a dump with CAP_NET_ADMIN, fill_info_check
 *   killable_start, a netlink sync waiting for it (then SIGKILL), killable_check
 *   listener_start, `rdma link add/delete` of other devices, listener_check
 *	(test_listener.c)
 *   inval_dev_start DEV, `rdma link delete DEV`, inval_dev_check
 *   inval_race_start DEV, `rdma link delete DEV` (it must wait), inval_race_check
 *   async_dev_start DEV, `rdma link delete DEV`, async_dev_check
 *	(test_async.c)
 *   inbound_recover_start, `ip link set veth0 down`, inbound_recover_down,
 *	`ip link set veth0 up`, inbound_recover_check (test_inbound.c)
 *   inbound_nocreate_start DEV, `rdma link delete DEV`,
 *	inbound_nocreate_check (test_inbound.c)
 *   dump_window_start DEV, `rdma link delete DEV`, a dump's first part,
 *	dump_window_flip, the rest of the dump, dump_window_check
 *   bulk_register N, bulk_invalidate_held, bulk_invalidate_release, ...,
 *	bulk_unregister			      (no result of their own)
 *   urelease_hold PORTID, urelease_release   (no result of their own)
 *   splat_atomic, splat_signalling           (the debug kernel's report is
 *                                             the result; test_splats.c)
 *
 * It looks into the registry's internal structures (sync_mem.h) to wait for
 * exact states instead of sleeping and hoping. The cases are in
 * test_core.c and test_guarantees.c; the test client in this file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "debugfs_cmd.h"
#include "sync_mem_test.h"

char *kt_dev = "rxe0";
module_param_named(dev, kt_dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device the tests register clients on");

unsigned int kt_churn_iters = 2000;
module_param_named(churn_iters, kt_churn_iters, uint, 0644);
MODULE_PARM_DESC(churn_iters, "Iterations per thread of the churn test");

bool kt_shared;
module_param_named(shared, kt_shared, bool, 0444);
MODULE_PARM_DESC(shared, "Others register clients meanwhile (75-churn): the churn and storm cases check their own clients only, not the module-wide counts or device-wide results");

/* KTAP output of every test, for the results file. */
static DEFINE_MUTEX(kt_lock);
static char *kt_buf;
struct seq_buf kt_out;
static unsigned int kt_num;
int kt_fail;
atomic_t kt_bad;

#define KT_BUF_SIZE	(256 * 1024)

/* ---- the test client ---- */

/* A callback of a client that is released or whose unregister returned. */
static bool tc_gone(struct tc *t)
{
	if (READ_ONCE(t->canary) == TC_LIVE && !READ_ONCE(t->dead))
		return false;
	atomic_inc(&kt_bad);
	return true;
}

static void tc_record_coherent(struct tc *t, s64 snap)
{
	s64 old = atomic64_read(&t->coherent);

	while (old < snap && !atomic64_try_cmpxchg(&t->coherent, &old, snap))
		;
}

static int tc_sync(struct ib_sync_mem_client *client, enum ib_sync_mem_dir dir,
		   ktime_t deadline)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);
	struct completion *gate;
	s64 snap;
	long left;

	if (tc_gone(t))
		return -EFAULT;
	if (atomic_read(&t->invalidates))
		atomic_inc(&t->after_inval);
	atomic_inc(&t->syncs);
	/* What the producer wrote before it asked for this sync. */
	snap = atomic64_read(&t->written);
	WRITE_ONCE(t->last_pid, current->pid);
	WRITE_ONCE(t->deadline, deadline);
	if (t->order)
		t->order[atomic_inc_return(t->order_pos) - 1] = t->idx;
	complete(&t->entered);
	gate = READ_ONCE(t->gate);
	if (gate && t->gate_deadline) {
		left = ib_sync_mem_jiffies_left(deadline);
		left = wait_for_completion_interruptible_timeout(gate, left);
		if (left < 0)
			return left;
		if (!left)
			return -ETIMEDOUT;
	} else if (gate) {
		wait_for_completion(gate);
	}
	if (t->wait_fence) {
		left = dma_fence_wait_timeout(t->wait_fence, true,
					      ib_sync_mem_jiffies_left(deadline));
		if (left < 0)
			return left;
		if (!left)
			return -ETIMEDOUT;
		left = dma_fence_get_status(t->wait_fence);
		if (left < 0)
			return left;
	}
	if (t->sleep_us)
		fsleep(t->sleep_us);
	if (!t->fail)
		tc_record_coherent(t, snap);
	return t->fail;
}

static void tc_unreg_work(struct work_struct *work)
{
	tc_unregister(container_of(work, struct tc, unreg_work));
}

static void tc_invalidate(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_inval reason)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);

	tc_gone(t);
	atomic_inc(&t->invalidates);
	complete(&t->inval_entered);
	if (t->inval_gate)
		wait_for_completion_timeout(t->inval_gate, 120 * HZ);
	switch (t->inval_mode) {
	case TC_INVAL_UNREGISTER:
		/*
		 * The natural reaction of a driver. Called under the
		 * domain's lock it would deadlock: say so and leave it to
		 * the test's clean-up instead.
		 */
		if (mutex_is_locked(&client->dom->lock)) {
			WRITE_ONCE(t->inval_locked, true);
			atomic_inc(&kt_bad);
			break;
		}
		tc_unregister(t);
		break;
	case TC_INVAL_WORK:
		/*
		 * Return only once the work's unregister waits for this
		 * ->invalidate to finish: that wait is the path under test.
		 */
		schedule_work(&t->unreg_work);
		if (!KT_WAIT(wq_has_sleeper(&client->dom->inval_wq), 60)) {
			kt_fail++;
			kt_diag("the unregister from a work item never waited");
		}
		break;
	}
}

static void tc_release(struct ib_sync_mem_client *client)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);

	if (READ_ONCE(t->canary) != TC_LIVE)
		atomic_inc(&kt_bad);
	atomic_inc(&t->releases);
	WRITE_ONCE(t->canary, TC_POISON);
}

static void tc_prepare(struct ib_sync_mem_client *client,
		       enum ib_sync_mem_dir dir)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);

	tc_gone(t);
	atomic_inc(&t->prepares);
}

static void tc_finish(struct ib_sync_mem_client *client,
		      enum ib_sync_mem_dir dir)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);

	tc_gone(t);
	atomic_inc(&t->finishes);
}

static int tc_fill_info(struct ib_sync_mem_client *client, struct sk_buff *msg)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);
	struct completion *gate = READ_ONCE(t->info_gate);

	if (tc_gone(t))
		return 0;
	complete(&t->info_entered);
	if (gate)
		wait_for_completion_timeout(gate, 60 * HZ);
	if (t->info_sleep_us)
		usleep_range(t->info_sleep_us, 2 * t->info_sleep_us);
	/* Unregister must not have returned while this ran. */
	tc_gone(t);
	return 0;
}

static int tc_revalidate(struct ib_sync_mem_client *client, u64 offset,
			 u64 len, ktime_t deadline)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);
	struct completion *gate = READ_ONCE(t->reval_gate);

	if (tc_gone(t))
		return -EFAULT;
	if (atomic_read(&t->invalidates))
		atomic_inc(&t->after_inval);
	WRITE_ONCE(t->reval_syncs, atomic_read(&t->syncs));
	WRITE_ONCE(t->reval_off, offset);
	WRITE_ONCE(t->reval_len, len);
	atomic_inc(&t->revalidates);
	complete(&t->reval_entered);
	if (gate)
		wait_for_completion_timeout(gate, 60 * HZ);
	return t->reval_fail;
}

static int tc_sync_range(struct ib_sync_mem_client *client,
			 enum ib_sync_mem_dir dir, u64 offset, u64 len,
			 ktime_t deadline)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);
	int i;

	if (tc_gone(t))
		return -EFAULT;
	i = atomic_inc_return(&t->nranges) - 1;
	if (i < TC_RANGES) {
		t->ranges[i].start = offset;
		t->ranges[i].end = offset + len;
	}
	t->range_dir = dir;
	WRITE_ONCE(t->deadline, deadline);
	if (t->remark.end) {
		ib_sync_mem_mark_dirty_range(client, t->remark_dir,
					     t->remark.start,
					     t->remark.end - t->remark.start);
		t->remark.end = 0;
	}
	return t->fail;
}

static int tc_flush_inbound(struct ib_sync_mem_client *client,
			    ktime_t deadline)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);

	if (tc_gone(t))
		return -EFAULT;
	if (atomic_read(&t->invalidates))
		atomic_inc(&t->after_inval);
	atomic_inc(&t->flushes);
	return t->target_fail;
}

static int tc_inbound_target(struct ib_sync_mem_client *client, u64 *addr)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);

	if (tc_gone(t))
		return -EFAULT;
	if (atomic_read(&t->invalidates))
		atomic_inc(&t->after_inval);
	atomic_inc(&t->targets);
	*addr = t->target;
	return t->target_fail;
}

const struct ib_sync_mem_ops tc_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
	.fill_info = tc_fill_info,
};

const struct ib_sync_mem_ops tc_move_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
	.fill_info = tc_fill_info,
	.revalidate = tc_revalidate,
};

const struct ib_sync_mem_ops tc_inbound_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
	.flush_inbound = tc_flush_inbound,
};

const struct ib_sync_mem_ops tc_range_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
	.sync_range = tc_sync_range,
	.flush_inbound = tc_flush_inbound,
};

/* A kind with its own engine: its fence is the test's to signal. */
static struct dma_fence *tc_sync_async(struct ib_sync_mem_client *client,
				       enum ib_sync_mem_dir dir,
				       ktime_t deadline)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);
	struct dma_fence *f;

	if (t->async_fail) {
		atomic_inc(&t->async_calls);
		return ERR_PTR(t->async_fail);
	}
	f = kt_fence_new();
	if (t->engine)
		dma_fence_put(t->engine);
	WRITE_ONCE(t->engine, f);
	/*
	 * Counted once the new engine is published (a value-returning
	 * atomic orders the store before it): a test that waits for the
	 * count, then signals t->engine, signals this call's fence, not the
	 * last one's (async_kind waited for a fence no one signalled, and
	 * its unregister for the client's busy count, for ever).
	 */
	atomic_inc_return(&t->async_calls);
	if (!f)
		return ERR_PTR(-ENOMEM);
	return dma_fence_get(f);
}

const struct ib_sync_mem_ops tc_async_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
	.sync_async = tc_sync_async,
};

/* Names no fence: counts its calls, and one after the unregister. */
static struct dma_fence *tc_deps(struct ib_sync_mem_client *client,
				 enum ib_sync_mem_dir dir)
{
	struct tc *t = ib_sync_mem_client_priv(kt_owner, client);

	if (!tc_gone(t))
		atomic_inc(&t->deps_calls);
	return NULL;
}

const struct ib_sync_mem_ops tc_deps_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
	.deps = tc_deps,
};

const struct ib_sync_mem_ops tc_target_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
	.inbound_target = tc_inbound_target,
};

const struct ib_sync_mem_ops tc_batch_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
	.prepare = tc_prepare,
	.finish = tc_finish,
	.fill_info = tc_fill_info,
};

struct tc *tc_alloc(int n)
{
	struct tc *t = kvcalloc(n, sizeof(*t), GFP_KERNEL);
	int i;

	for (i = 0; t && i < n; i++) {
		t[i].canary = TC_LIVE;
		t[i].idx = i;
		t[i].count = n;
		init_completion(&t[i].entered);
		init_completion(&t[i].info_entered);
		init_completion(&t[i].inval_entered);
		init_completion(&t[i].reval_entered);
		INIT_WORK(&t[i].unreg_work, tc_unreg_work);
	}
	return t;
}

struct ib_sync_mem_client *tc_register_sized(struct ib_device *ibdev,
					     struct tc *t,
					     const struct ib_sync_mem_ops *ops,
					     u32 flags, u64 size, u32 align)
{
	struct ib_sync_mem_reg reg = {
		.owner = kt_owner,
		.name = "kt",
		.ops = ops,
		.priv = t,
		.size = size,
		.flags = flags,
		.range_align = align,
	};

	t->client = ib_sync_mem_register(ibdev, &reg);
	return t->client;
}

struct ib_sync_mem_client *tc_register_ops(struct ib_device *ibdev,
					   struct tc *t,
					   const struct ib_sync_mem_ops *ops,
					   u32 flags)
{
	return tc_register_sized(ibdev, t, ops, flags, 4096, 0);
}

struct ib_sync_mem_client *tc_register(struct ib_device *ibdev, struct tc *t,
				       u32 flags)
{
	return tc_register_ops(ibdev, t, &tc_ops, flags);
}

/* Register n clients; on failure report and return false. */
bool tc_register_all(struct ib_device *ibdev, struct tc *t, int n, u32 flags)
{
	int i;

	for (i = 0; i < n; i++) {
		if (IS_ERR(tc_register(ibdev, &t[i], flags))) {
			kt_fail++;
			kt_diag("register %d: %ld", i, PTR_ERR(t[i].client));
			while (i--)
				tc_unregister(&t[i]);
			return false;
		}
	}
	return true;
}

/* Unregister; from here on a callback of @t is a failure. */
void tc_unregister(struct tc *t)
{
	ib_sync_mem_unregister(kt_owner, t->client);
	WRITE_ONCE(t->dead, true);
}

/*
 * ->release of @t comes with its client's last reference, which need not be
 * its unregister's: a dump, an async job or the device's removal may hold
 * one a while longer. Wait for it, 60 s at most.
 *
 * Return: how many ->release calls @t has seen (1 is right).
 */
int tc_wait_release(struct tc *t)
{
	KT_WAIT(atomic_read(&t->releases), 60);
	return atomic_read(&t->releases);
}

/*
 * Free an array of tc_alloc() once each client registered from it has had
 * its ->release (tc_wait_release()): a case that ends early, or one whose
 * client a job still holds, must not free what a ->release will write.
 * One never released is the case's failure, and the array is leaked, not
 * freed under it.
 */
void tc_free(struct tc *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < t->count; i++) {
		if (IS_ERR_OR_NULL(t[i].client) || tc_wait_release(&t[i]))
			continue;
		kt_fail++;
		kt_diag("test client %d of %d never released: the array is leaked",
			i, t->count);
		return;
	}
	kvfree(t);
}

void tc_unregister_all(struct tc *t, int n)
{
	int i;

	for (i = 0; i < n; i++)
		tc_unregister(&t[i]);
}

struct ib_sync_mem_domain *test_domain(struct ib_device *ibdev)
{
	struct ib_sync_mem_domain *dom = sm_domain_get(ibdev);

	if (dom)
		sm_domain_put(dom);	/* the device holds it for us */
	return dom;
}

/* ---- callers on kernel threads ---- */

int kt_sync_device_fn(void *arg)
{
	struct kt_caller *k = arg;

	if (k->signal)
		allow_signal(SIGUSR1);
	k->pid = current->pid;
	k->ret = ib_sync_mem_sync_device(k->ibdev, k->dir, k->timeout_ms,
					 &k->res);
	complete_all(&k->done);
	return 0;
}

int kt_sync_client_fn(void *arg)
{
	struct kt_caller *k = arg;

	k->pid = current->pid;
	k->ret = ib_sync_mem_sync(k->client, k->dir, k->timeout_ms);
	complete_all(&k->done);
	return 0;
}

/* The memory behind k->client went away. */
int kt_invalidate_fn(void *arg)
{
	struct kt_caller *k = arg;

	ib_sync_mem_invalidate(kt_owner, k->client, IB_SYNC_MEM_INVAL_MEMORY);
	complete_all(&k->done);
	return 0;
}

int kt_unregister_fn(void *arg)
{
	struct kt_caller *k = arg;

	if (k->tc)
		tc_unregister(k->tc);
	else
		ib_sync_mem_unregister(kt_owner, k->client);
	complete_all(&k->done);
	return 0;
}

bool kt_start(int (*fn)(void *), struct kt_caller *k)
{
	struct task_struct *task;

	init_completion(&k->done);
	task = kthread_run(fn, k, "kt_caller");
	if (IS_ERR(task)) {
		kt_fail++;
		kt_diag("kthread_run: %ld", PTR_ERR(task));
		return false;
	}
	k->task = task;
	return true;
}

/*
 * Like kt_start(), with the thread bound to @cpu and, if @first, at a
 * real-time priority: of two callers woken together on one CPU, the
 * first one runs first whatever the scheduler would prefer.
 */
bool kt_start_on(int (*fn)(void *), struct kt_caller *k, int cpu, bool first)
{
	struct task_struct *task;

	init_completion(&k->done);
	task = kthread_create(fn, k, "kt_caller");
	if (IS_ERR(task)) {
		kt_fail++;
		kt_diag("kthread_create: %ld", PTR_ERR(task));
		return false;
	}
	kthread_bind(task, cpu);
	if (first)
		sched_set_fifo(task);
	k->task = task;
	wake_up_process(task);
	return true;
}

unsigned int kt_waiters(struct wait_queue_head *wq)
{
	struct wait_queue_entry *w;
	unsigned int n = 0;

	spin_lock_irq(&wq->lock);
	list_for_each_entry(w, &wq->head, entry)
		n++;
	spin_unlock_irq(&wq->lock);
	return n;
}

/* ---- runner ---- */

struct kt_case {
	const char *name;
	void (*fn)(struct ib_device *ibdev);
};

static const struct kt_case kt_cases[] = {
	{ "register_unregister", test_register_unregister },
	{ "bad_input", test_bad_input },
	{ "owners", test_owners },
	{ "bulk", test_bulk },
	{ "fanout_order", test_fanout_order },
	{ "error_propagation", test_error_propagation },
	{ "lazy", test_lazy },
	{ "lazy_inflight", test_lazy_inflight },
	{ "lazy_directions", test_lazy_directions },
	{ "lazy_stress", test_lazy_stress },
	{ "coalescing", test_coalescing },
	{ "deadline_per_caller", test_deadline_per_caller },
	{ "unregister_during_sync", test_unregister_during_sync },
	{ "unregister_many", test_unregister_many },
	{ "unregister_scoped", test_unregister_scoped },
	{ "batch_pairing", test_batch_pairing },
	{ "batch_churn", test_batch_churn },
	{ "invalidate_unregister", test_invalidate_unregister },
	{ "module_refcount", test_module_refcount },
	{ "invalidate_memory", test_invalidate_memory },
	{ "moves", test_moves },
	{ "move_during_revalidate", test_move_during_revalidate },
	{ "inbound", test_inbound },
	{ "inbound_read", test_inbound_read },
	{ "inbound_scoped", test_inbound_scoped },
	{ "inbound_teardown", test_inbound_teardown },
	{ "inbound_buffer", test_inbound_buffer },
	{ "ranges", test_ranges },
	{ "dirty_spans", test_dirty_spans },
	{ "async", test_async },
	{ "async_device", test_async_device },
	{ "async_batch", test_async_batch },
	{ "async_kind", test_async_kind },
	{ "async_invalidate", test_async_invalidate },
	{ "async_batch_gone", test_async_batch_gone },
	{ "async_deps_gone", test_async_deps_gone },
	{ "churn", test_churn },
};

static void kt_report(const char *name)
{
	int bad = atomic_xchg(&kt_bad, 0);

	if (bad) {
		kt_fail++;
		kt_diag("%d poisoned, misplaced or late callbacks", bad);
	}
	seq_buf_printf(&kt_out, "%sok %u %s\n", kt_fail ? "not " : "",
		       ++kt_num, name);
}

/* A step that writes a result: run @fn, report it as @name. */
static int kt_step(const char *name, void (*fn)(void))
{
	fn();
	kt_report(name);
	return 0;
}

/* A step that starts a two-step case: its failure is the case's result. */
static int kt_begin(const char *name, int ret)
{
	if (ret) {
		kt_fail++;
		kt_diag("%s: could not start: %d", name, ret);
		kt_report(name);
	}
	return 0;
}

/* Run a step on the dev device. */
static int kt_run_dev(int (*fn)(struct ib_device *ibdev))
{
	struct ib_device *ibdev = ib_sync_mem_device_get(kt_dev);
	int ret;

	if (!ibdev)
		return -ENODEV;
	ret = fn(ibdev);
	ib_device_put(ibdev);
	return ret;
}

static int kt_run(char *cmd)
{
	struct ib_device *ibdev;
	unsigned int n;
	u32 portid;
	int i;

	kt_fail = 0;
	atomic_set(&kt_bad, 0);
	if (str_has_prefix(cmd, "storm_start "))
		return kt_begin("device_removal_storm",
				storm_start(cmd + strlen("storm_start ")));
	if (!strcmp(cmd, "storm_wait"))
		return storm_wait();
	if (!strcmp(cmd, "storm_check"))
		return kt_step("device_removal_storm", test_storm_check);
	if (!strcmp(cmd, "fill_info_start"))
		return kt_begin("fill_info_after_unregister",
				kt_run_dev(fill_info_start));
	if (!strcmp(cmd, "fill_info_check"))
		return kt_step("fill_info_after_unregister", test_fill_info_check);
	if (!strcmp(cmd, "listener_start"))
		return kt_begin("device_listener", kt_run_dev(listener_start));
	if (!strcmp(cmd, "listener_check"))
		return kt_step("device_listener", test_listener_check);
	if (!strcmp(cmd, "killable_start"))
		return kt_begin("killable_waits", kt_run_dev(killable_start));
	if (!strcmp(cmd, "killable_check"))
		return kt_step("killable_waits", test_killable_check);
	if (str_has_prefix(cmd, "inval_dev_start "))
		return kt_begin("invalidate_unregister_device",
				inval_dev_start(cmd + strlen("inval_dev_start ")));
	if (!strcmp(cmd, "inval_dev_check"))
		return kt_step("invalidate_unregister_device",
			       test_inval_dev_check);
	if (str_has_prefix(cmd, "inval_race_start "))
		return kt_begin("removal_waits_for_invalidate",
				inval_race_start(cmd + strlen("inval_race_start ")));
	if (!strcmp(cmd, "inval_race_check"))
		return kt_step("removal_waits_for_invalidate",
			       test_inval_race_check);
	if (str_has_prefix(cmd, "async_dev_start "))
		return kt_begin("async_across_removal",
				async_dev_start(cmd + strlen("async_dev_start ")));
	if (!strcmp(cmd, "async_dev_check"))
		return kt_step("async_across_removal", test_async_dev_check);
	if (str_has_prefix(cmd, "kind_removal_start "))
		return kt_begin("removal_waits_for_engine",
				kind_removal_start(cmd + strlen("kind_removal_start ")));
	if (!strcmp(cmd, "kind_removal_engine")) {
		test_kind_removal_engine();
		return 0;
	}
	if (!strcmp(cmd, "kind_removal_check"))
		return kt_step("removal_waits_for_engine",
			       test_kind_removal_check);
	if (str_has_prefix(cmd, "fence_removal_start "))
		return kt_begin("removal_cancels_before_waiting",
				fence_removal_start(cmd + strlen("fence_removal_start ")));
	if (!strcmp(cmd, "fence_removal_check"))
		return kt_step("removal_cancels_before_waiting",
			       test_fence_removal_check);
	if (!strcmp(cmd, "inbound_recover_start"))
		return kt_begin("inbound_recovery",
				kt_run_dev(inbound_recover_start));
	if (!strcmp(cmd, "inbound_recover_down"))
		return inbound_recover_down();
	if (!strcmp(cmd, "inbound_recover_check"))
		return kt_step("inbound_recovery", test_inbound_recover_check);
	if (str_has_prefix(cmd, "inbound_nocreate_start "))
		return kt_begin("inbound_no_flusher",
				inbound_nocreate_start(cmd + strlen("inbound_nocreate_start ")));
	if (!strcmp(cmd, "inbound_nocreate_check"))
		return kt_step("inbound_no_flusher", test_inbound_nocreate_check);
	if (str_has_prefix(cmd, "dump_window_start "))
		return kt_begin("dump_across_removal",
				dump_window_start(cmd + strlen("dump_window_start ")));
	if (!strcmp(cmd, "dump_window_flip"))
		return dump_window_flip();
	if (!strcmp(cmd, "dump_window_check"))
		return kt_step("dump_across_removal", test_dump_window_check);
	if (sscanf(cmd, "bulk_register %u", &n) == 1) {
		ibdev = ib_sync_mem_device_get(kt_dev);
		if (!ibdev)
			return -ENODEV;
		i = bulk_register(ibdev, n);
		ib_device_put(ibdev);
		return i;
	}
	if (!strcmp(cmd, "bulk_invalidate_held"))
		return bulk_invalidate_held();
	if (!strcmp(cmd, "bulk_invalidate_release"))
		return bulk_invalidate_release();
	if (!strcmp(cmd, "bulk_unregister")) {
		bulk_unregister();
		return 0;
	}
	if (sscanf(cmd, "urelease_hold %u", &portid) == 1)
		return urelease_hold(portid);
	if (!strcmp(cmd, "splat_atomic"))
		return kt_run_dev(splat_atomic);
	if (!strcmp(cmd, "splat_signalling"))
		return kt_run_dev(splat_signalling);
	if (!strcmp(cmd, "urelease_held"))
		return urelease_held();
	if (!strcmp(cmd, "urelease_release")) {
		urelease_release();
		return 0;
	}

	for (i = 0; i < ARRAY_SIZE(kt_cases); i++)
		if (!strcmp(cmd, kt_cases[i].name))
			break;
	if (i == ARRAY_SIZE(kt_cases))
		return -ENOENT;

	ibdev = ib_sync_mem_device_get(kt_dev);
	if (!ibdev) {
		kt_fail++;
		kt_diag("no RDMA device %s", kt_dev);
	} else {
		kt_cases[i].fn(ibdev);
		ib_device_put(ibdev);
	}
	kt_report(kt_cases[i].name);
	return 0;
}

static ssize_t kt_run_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char cmd[64];

	return cmd_write(ubuf, count, cmd, sizeof(cmd), &kt_lock, kt_run);
}

static const struct file_operations kt_run_fops = {
	.owner = THIS_MODULE,
	.write = kt_run_write,
	.llseek = noop_llseek,
};

static int kt_results_show(struct seq_file *m, void *v)
{
	mutex_lock(&kt_lock);
	seq_puts(m, "KTAP version 1\n");
	seq_write(m, kt_buf, seq_buf_used(&kt_out));
	seq_printf(m, "1..%u\n", kt_num);
	mutex_unlock(&kt_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kt_results);

static int kt_list_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(kt_cases); i++)
		seq_printf(m, "%s\n", kt_cases[i].name);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kt_list);

/* Callers waiting for a pass on the dev device: "to-device N to-cpu N ...". */
static int kt_waiters_show(struct seq_file *m, void *v)
{
	struct ib_device *ibdev = ib_sync_mem_device_get(kt_dev);
	struct ib_sync_mem_domain *dom;

	if (!ibdev)
		return -ENODEV;
	dom = test_domain(ibdev);
	if (dom)
		seq_printf(m, "to-device %u to-cpu %u bidirectional %u\n",
			   kt_waiters(&dom->passes[0].wq),
			   kt_waiters(&dom->passes[1].wq),
			   kt_waiters(&dom->passes[2].wq));
	ib_device_put(ibdev);
	return dom ? 0 : -ENODEV;
}
DEFINE_SHOW_ATTRIBUTE(kt_waiters);

static struct dentry *kt_root;

struct ib_sync_mem_owner *kt_owner;
struct ib_sync_mem_owner *kt_other;

static int __init kt_init(void)
{
	kt_owner = ib_sync_mem_owner_create(THIS_MODULE, "ib_sync_mem_test");
	if (IS_ERR(kt_owner))
		return PTR_ERR(kt_owner);
	kt_other = ib_sync_mem_owner_create(THIS_MODULE, "kt-other");
	if (IS_ERR(kt_other)) {
		ib_sync_mem_owner_destroy(kt_owner);
		return PTR_ERR(kt_other);
	}
	kt_buf = cmd_out_init(&kt_out, KT_BUF_SIZE);
	if (!kt_buf) {
		ib_sync_mem_owner_destroy(kt_other);
		ib_sync_mem_owner_destroy(kt_owner);
		return -ENOMEM;
	}
	kt_root = debugfs_create_dir("ib_sync_mem_test", NULL);
	debugfs_create_file("run", 0200, kt_root, NULL, &kt_run_fops);
	debugfs_create_file("results", 0444, kt_root, NULL, &kt_results_fops);
	debugfs_create_file("list", 0444, kt_root, NULL, &kt_list_fops);
	debugfs_create_file("waiters", 0444, kt_root, NULL, &kt_waiters_fops);
	test_fence_init(kt_root);
	return 0;
}

static void __exit kt_exit(void)
{
	debugfs_remove_recursive(kt_root);
	test_fence_exit();
	/* A two-step case never finished: its threads may still go on. */
	WARN_ON(storm_active());
	test_guarantees_exit();
	test_listener_exit();
	test_inbound_exit();
	kvfree(kt_buf);
	ib_sync_mem_owner_destroy(kt_other);
	ib_sync_mem_owner_destroy(kt_owner);
}

module_init(kt_init);
module_exit(kt_exit);

MODULE_AUTHOR("syncmem developers");
MODULE_DESCRIPTION("In-kernel KTAP tests of ib_sync_mem");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("IB_SYNC_MEM_INTERNAL");
MODULE_IMPORT_NS("DMA_BUF");
