// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_bench: in-kernel micro-benchmarks of the ib_sync_mem registry,
 * each beside its floor or its alternative, for `make bench`.
 *
 *   echo "fanout 64 200 7" > /sys/kernel/debug/ib_sync_mem_bench/run
 *   cat /sys/kernel/debug/ib_sync_mem_bench/out
 *
 * Every command appends one line per repeat to "out", "SUITE key=value ...";
 * the harness (bench/guest.sh, bench/report.py) turns them into medians and
 * ratios.
 * Guest time is emulated under TCG: only ratios of figures taken in the same
 * run mean anything.
 *
 *   fanout N ITERS REPS [DELAY_US]
 *                           ITERS device-wide syncs over N no-op clients
 *                           (clients that busy-wait DELAY_US) with
 *                           client_timing on (sm) and off (untimed),
 *                           against a loop making the same N indirect calls
 *                           (floor), and that loop with a clock read per
 *                           call (clock)
 *   regunreg ITERS REPS     register + unregister of a no-op client, against
 *                           allocating and freeing the same objects
 *   unregmany N REPS        unregistering N no-op clients while a kthread
 *                           syncs the device without pause: one by one and
 *                           with ib_sync_mem_unregister_many(); and one by
 *                           one while nothing syncs
 *   scoped N CB_US REPS     one client of another owner unregistered while
 *                           a pass is inside the first of N clients whose
 *                           ->sync busy-waits CB_US: its time, and the
 *                           pass's
 *   scale IMPL THREADS CHURN MS REPS
 *                           device-wide syncs over 8 no-op clients for MS ms
 *                           from THREADS kthreads (one per CPU), with
 *                           (CHURN=1) or without a writer registering and
 *                           unregistering; IMPL srcu is the registry itself
 *                           (coalescing off), rwlock and rwsem are the same
 *                           list behind an rwlock_t or an rw_semaphore, with
 *                           the same per-client clock read and counters
 *   coalesce ON K ITERS DELAY_US REPS
 *                           K kthreads making ITERS device-wide syncs each
 *                           over 4 clients that busy-wait DELAY_US, with
 *                           coalescing on (1) or off (0)
 *   ranges SIZE_KIB RANGE_KIB ITERS WHOLE_ITERS REPS
 *                           clients whose sync writes back every cache line
 *                           of their memory (vmalloc'ed, SIZE_KIB and
 *                           RANGE_KIB): ITERS ib_sync_mem_sync_range() of
 *                           RANGE_KIB of the large one (range) against ITERS
 *                           ib_sync_mem_sync() of the small one whole
 *                           (small), in alternating blocks; then WHOLE_ITERS
 *                           syncs of the large one whole (whole)
 *   sizes                   sizeof of the client object and its per-CPU
 *                           counters
 *   hold N / release        register N no-op clients and keep them until
 *                           "release" (bench/nlbench measures the slab
 *                           around it)
 *   clear                   empty "out"
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/rwsem.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_sync_mem.h>
#ifdef CONFIG_X86
#include <asm/cacheflush.h>
#include <asm/cpufeature.h>
#endif

#include "../ib_sync_mem/sync_mem.h"
#include "../tests/debugfs_cmd.h"

static char *dev = "rxe0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device the benchmarks register clients on");

#define BM_OUT_SIZE	(256 * 1024)
#define BM_MAX_N	4096
#define BM_MAX_THREADS	16
#define BM_SCALE_N	8
#define BM_COALESCE_N	4

static DEFINE_MUTEX(bm_lock);	/* one command at a time; protects bm_out */
static char *bm_buf;
static struct seq_buf bm_out;

/* One result line: bm_line("fanout"), bm_kv() per field, bm_end(). */
static void bm_line(const char *suite)
{
	seq_buf_printf(&bm_out, "%s", suite);
}

static void bm_kv(const char *key, u64 val)
{
	seq_buf_printf(&bm_out, " %s=%llu", key, val);
}

static void bm_end(void)
{
	seq_buf_printf(&bm_out, "\n");
}

/* The owners of the bench's clients: most, and the one scoped unregisters. */
static struct ib_sync_mem_owner *bm_owner, *bm_other;

/* The no-op client every suite registers. */
static int bm_noop_sync(struct ib_sync_mem_client *client,
			enum ib_sync_mem_dir dir, ktime_t deadline)
{
	return 0;
}

static const struct ib_sync_mem_ops bm_noop_ops = {
	.owner = THIS_MODULE,
	.sync = bm_noop_sync,
};

static unsigned int bm_delay_us;
static atomic_t bm_busy_calls;

static int bm_busy_sync(struct ib_sync_mem_client *client,
			enum ib_sync_mem_dir dir, ktime_t deadline)
{
	atomic_inc(&bm_busy_calls);
	udelay(READ_ONCE(bm_delay_us));
	return 0;
}

static const struct ib_sync_mem_ops bm_busy_ops = {
	.owner = THIS_MODULE,
	.sync = bm_busy_sync,
};

static struct ib_sync_mem_client *bm_register(struct ib_device *ibdev,
					      const struct ib_sync_mem_ops *ops)
{
	struct ib_sync_mem_reg reg = {
		.owner = bm_owner,
		.name = "bench",
		.ops = ops,
	};

	return ib_sync_mem_register(ibdev, &reg);
}

static void bm_unregister_all(struct ib_sync_mem_client **c, unsigned int n)
{
	while (n--)
		ib_sync_mem_unregister(bm_owner, c[n]);
}

static int bm_register_n(struct ib_device *ibdev,
			 const struct ib_sync_mem_ops *ops,
			 struct ib_sync_mem_client **c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		c[i] = bm_register(ibdev, ops);
		if (IS_ERR(c[i])) {
			int err = PTR_ERR(c[i]);

			bm_unregister_all(c, i);
			return err;
		}
	}
	return 0;
}

/*
 * Fan-out: the floor is what any registry must do at least, an indirect
 * call per client through its ops, here over objects of the same layout
 * (the ops pointer is read from each object, so nothing is devirtualised).
 */
struct bm_floor_obj {
	const struct ib_sync_mem_ops *ops;
	struct ib_sync_mem_client *client;
};

static noinline int bm_floor_pass(struct bm_floor_obj *objs, unsigned int n,
				  ktime_t deadline)
{
	unsigned int i;
	int err = 0, ret;

	for (i = 0; i < n; i++) {
		const struct ib_sync_mem_ops *ops = READ_ONCE(objs[i].ops);

		ret = ops->sync(objs[i].client, IB_SYNC_MEM_TO_DEVICE, deadline);
		if (ret && !err)
			err = ret;
	}
	return err;
}

/* The floor plus one clock read per client, as the registry's accounting. */
static noinline u64 bm_clock_pass(struct bm_floor_obj *objs, unsigned int n,
				  ktime_t deadline)
{
	unsigned int i;
	u64 now = ktime_get_ns(), sum = 0, t;

	for (i = 0; i < n; i++) {
		const struct ib_sync_mem_ops *ops = READ_ONCE(objs[i].ops);

		ops->sync(objs[i].client, IB_SYNC_MEM_TO_DEVICE, deadline);
		t = ktime_get_ns();
		sum += t - now;
		now = t;
	}
	return sum;
}

/* @iters device-wide syncs of @ibdev, their time in *@ns. */
static int bm_device_passes(struct ib_device *ibdev, unsigned int iters,
			    u64 *ns)
{
	u64 t0 = ktime_get_ns();
	unsigned int i;
	int err;

	for (i = 0; i < iters; i++) {
		err = ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					      NULL);
		if (err)
			return err;
		cond_resched();
	}
	*ns = ktime_get_ns() - t0;
	return 0;
}

static int bm_fanout(struct ib_device *ibdev, unsigned int n,
		     unsigned int iters, unsigned int reps,
		     unsigned int delay_us)
{
	const struct ib_sync_mem_ops *ops = delay_us ? &bm_busy_ops : &bm_noop_ops;
	struct ib_sync_mem_client **c;
	struct bm_floor_obj *objs;
	unsigned int r, i;
	bool timing = static_key_enabled(&sm_timing_key);
	u64 t0, sm_ns, untimed_ns, floor_ns, clock_ns;
	int err;

	if (!n || n > BM_MAX_N || !iters || !reps || delay_us > 1000)
		return -EINVAL;
	WRITE_ONCE(bm_delay_us, delay_us);
	c = kvcalloc(n, sizeof(*c), GFP_KERNEL);
	objs = kvcalloc(n, sizeof(*objs), GFP_KERNEL);
	if (!c || !objs) {
		err = -ENOMEM;
		goto out;
	}
	err = bm_register_n(ibdev, ops, c, n);
	if (err)
		goto out;
	for (i = 0; i < n; i++) {
		objs[i].ops = ops;
		objs[i].client = c[i];
	}

	/* Warm-up, and a check that the pass reaches every client. */
	for (i = 0; i < 3; i++) {
		struct ib_sync_mem_result res;

		err = ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					      &res);
		if (!err && res.clients != n)
			err = -EPROTO;
		if (err)
			goto out_unreg;
		bm_floor_pass(objs, n, 0);
	}

	for (r = 0; r < reps; r++) {
		static_branch_enable(&sm_timing_key);
		err = bm_device_passes(ibdev, iters, &sm_ns);
		if (err)
			goto out_unreg;
		/* The same passes with client_timing off. */
		static_branch_disable(&sm_timing_key);
		err = bm_device_passes(ibdev, iters, &untimed_ns);
		if (err)
			goto out_unreg;

		t0 = ktime_get_ns();
		for (i = 0; i < iters; i++) {
			bm_floor_pass(objs, n, ktime_add_ms(ktime_get(), 1000));
			cond_resched();
		}
		floor_ns = ktime_get_ns() - t0;

		t0 = ktime_get_ns();
		for (i = 0; i < iters; i++) {
			bm_clock_pass(objs, n, ktime_add_ms(ktime_get(), 1000));
			cond_resched();
		}
		clock_ns = ktime_get_ns() - t0;

		bm_line("fanout");
		bm_kv("n", n);
		bm_kv("rep", r);
		bm_kv("iters", iters);
		bm_kv("delay_us", delay_us);
		bm_kv("sm_ns", sm_ns);
		bm_kv("untimed_ns", untimed_ns);
		bm_kv("floor_ns", floor_ns);
		bm_kv("clock_ns", clock_ns);
		bm_end();
	}
out_unreg:
	bm_unregister_all(c, n);
out:
	/* client_timing as it was. */
	if (timing)
		static_branch_enable(&sm_timing_key);
	else
		static_branch_disable(&sm_timing_key);
	kvfree(objs);
	kvfree(c);
	return err;
}

/* Device-wide syncs without pause until stopped: readers in flight. */
static int bm_syncer_fn(void *arg)
{
	struct ib_device *ibdev = arg;

	while (!kthread_should_stop()) {
		ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0, NULL);
		cond_resched();
	}
	return 0;
}

/* Unregister @c[0..n) one by one or at once: ns taken. */
static u64 bm_unreg_timed(struct ib_sync_mem_client **c, unsigned int n,
			  bool many)
{
	u64 t0 = ktime_get_ns();

	if (many)
		ib_sync_mem_unregister_many(bm_owner, c, n);
	else
		bm_unregister_all(c, n);
	return ktime_get_ns() - t0;
}

/*
 * Unregistering N clients while a kthread keeps a sync in flight on the
 * device, one by one and in bulk; and one by one with nothing syncing.
 */
static int bm_unregmany(struct ib_device *ibdev, unsigned int n,
			unsigned int reps)
{
	struct ib_sync_mem_client **c = NULL;
	struct task_struct *syncer;
	u64 single_ns, many_ns, idle_ns;
	unsigned int r;
	int err = 0;

	if (!n || n > BM_MAX_N || !reps)
		return -EINVAL;
	c = kvcalloc(n, sizeof(*c), GFP_KERNEL);
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	for (r = 0; r < reps; r++) {
		err = bm_register_n(ibdev, &bm_noop_ops, c, n);
		if (err)
			goto out;
		idle_ns = bm_unreg_timed(c, n, false);

		syncer = kthread_run(bm_syncer_fn, ibdev, "sm_bench_sync");
		if (IS_ERR(syncer)) {
			err = PTR_ERR(syncer);
			goto out;
		}
		err = bm_register_n(ibdev, &bm_noop_ops, c, n);
		if (!err) {
			single_ns = bm_unreg_timed(c, n, false);
			err = bm_register_n(ibdev, &bm_noop_ops, c, n);
		}
		if (!err)
			many_ns = bm_unreg_timed(c, n, true);
		kthread_stop(syncer);
		if (err)
			goto out;

		bm_line("unregmany");
		bm_kv("rep", r);
		bm_kv("n", n);
		bm_kv("single_ns", single_ns);
		bm_kv("many_ns", many_ns);
		bm_kv("idle_ns", idle_ns);
		bm_end();
	}
out:
	kvfree(c);
	return err;
}

/* One device-wide sync, timed, from a kthread. */
struct bm_pass {
	struct ib_device *ibdev;
	u64 ns;
	struct completion done;
};

static int bm_pass_fn(void *arg)
{
	struct bm_pass *p = arg;
	u64 t0 = ktime_get_ns();

	ib_sync_mem_sync_device(p->ibdev, IB_SYNC_MEM_TO_DEVICE, 0, NULL);
	p->ns = ktime_get_ns() - t0;
	complete(&p->done);
	return 0;
}

/*
 * What an unregister waits for: a client X of another owner, then @n
 * clients whose ->sync busy-waits @cb_us each; a pass over them all runs
 * in a kthread, and once it is inside the first of the @n, X is
 * unregistered. X's callback is over, so the unregister should take
 * about as long as with nothing syncing, never the rest of the pass.
 * Reports the unregister's time and the pass's, whose mean per client is
 * the time of one callback.
 */
static int bm_scoped(struct ib_device *ibdev, unsigned int n,
		     unsigned int cb_us, unsigned int reps)
{
	struct ib_sync_mem_client **c = NULL, *x;
	struct task_struct *task;
	struct bm_pass p = { .ibdev = ibdev };
	unsigned int r;
	u64 t0, unreg_ns;
	int err = 0;

	if (!n || n > BM_MAX_N || !cb_us || cb_us > 10000 || !reps)
		return -EINVAL;
	c = kvcalloc(n, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	WRITE_ONCE(bm_delay_us, cb_us);
	for (r = 0; r < reps; r++) {
		x = ib_sync_mem_register(ibdev, &(struct ib_sync_mem_reg){
			.owner = bm_other, .name = "bench-x", .ops = &bm_noop_ops,
		});
		if (IS_ERR(x)) {
			err = PTR_ERR(x);
			break;
		}
		err = bm_register_n(ibdev, &bm_busy_ops, c, n);
		if (err) {
			ib_sync_mem_unregister(bm_other, x);
			break;
		}
		atomic_set(&bm_busy_calls, 0);
		init_completion(&p.done);
		task = kthread_run(bm_pass_fn, &p, "sm_bench_pass");
		if (IS_ERR(task)) {
			err = PTR_ERR(task);
			ib_sync_mem_unregister(bm_other, x);
			bm_unregister_all(c, n);
			break;
		}
		while (!atomic_read(&bm_busy_calls))
			cond_resched();
		t0 = ktime_get_ns();
		ib_sync_mem_unregister(bm_other, x);
		unreg_ns = ktime_get_ns() - t0;
		wait_for_completion(&p.done);
		bm_unregister_all(c, n);

		bm_line("scoped");
		bm_kv("rep", r);
		bm_kv("n", n);
		bm_kv("cb_us", cb_us);
		bm_kv("unreg_ns", unreg_ns);
		bm_kv("pass_ns", p.ns);
		bm_end();
	}
	kvfree(c);
	return err;
}

/*
 * Register + unregister against the allocations a client is made of: the
 * client object (same size, its own cache) and its per-CPU counters.
 */
static int bm_regunreg(struct ib_device *ibdev, unsigned int iters,
		       unsigned int reps)
{
	struct kmem_cache *cache;
	struct ib_sync_mem_client *c;
	unsigned int r, i;
	u64 t0, sm_ns, floor_ns;
	int err = 0;

	if (!iters || !reps)
		return -EINVAL;
	cache = kmem_cache_create("ib_sync_mem_bench", sizeof(*c), 0, 0, NULL);
	if (!cache)
		return -ENOMEM;

	for (r = 0; r < reps; r++) {
		t0 = ktime_get_ns();
		for (i = 0; i < iters; i++) {
			c = bm_register(ibdev, &bm_noop_ops);
			if (IS_ERR(c)) {
				err = PTR_ERR(c);
				goto out;
			}
			ib_sync_mem_unregister(bm_owner, c);
		}
		sm_ns = ktime_get_ns() - t0;

		t0 = ktime_get_ns();
		for (i = 0; i < iters; i++) {
			struct sm_stats __percpu *stats;

			c = kmem_cache_zalloc(cache, GFP_KERNEL);
			stats = alloc_percpu(struct sm_stats);
			if (!c || !stats) {
				free_percpu(stats);
				kmem_cache_free(cache, c);
				err = -ENOMEM;
				goto out;
			}
			free_percpu(stats);
			kmem_cache_free(cache, c);
		}
		floor_ns = ktime_get_ns() - t0;

		bm_line("regunreg");
		bm_kv("rep", r);
		bm_kv("iters", iters);
		bm_kv("sm_ns", sm_ns);
		bm_kv("floor_ns", floor_ns);
		bm_end();
	}
out:
	kmem_cache_destroy(cache);
	return err;
}

/*
 * Read-side scaling. The lock-based alternative keeps the same list of
 * clients behind an rwlock_t or an rw_semaphore: readers take the lock for
 * the walk, the writer for each list change.
 */
enum bm_impl { BM_SRCU, BM_RWLOCK, BM_RWSEM };

struct bm_lclient {
	struct list_head node;
	const struct ib_sync_mem_ops *ops;
	struct sm_stats __percpu *stats;
};

/*
 * What the registry does per client besides the call, so that the
 * comparison is of the locking alone: a clock read and per-CPU counters.
 */
static void bm_account(struct bm_lclient *lc, u64 ns, int err)
{
	this_cpu_inc(lc->stats->syncs);
	this_cpu_add(lc->stats->ns, ns);
	if (err)
		this_cpu_inc(lc->stats->errors);
}

static struct bm_lclient *bm_lclient_new(void)
{
	struct bm_lclient *lc = kzalloc(sizeof(*lc), GFP_KERNEL);

	if (!lc)
		return NULL;
	lc->ops = &bm_noop_ops;
	lc->stats = alloc_percpu(struct sm_stats);
	if (!lc->stats) {
		kfree(lc);
		return NULL;
	}
	return lc;
}

static void bm_lclient_free(struct bm_lclient *lc)
{
	free_percpu(lc->stats);
	kfree(lc);
}

struct bm_scale {
	enum bm_impl impl;
	struct ib_device *ibdev;
	rwlock_t rwlock;
	struct rw_semaphore rwsem;
	struct list_head clients;
	bool stop;
	atomic_t ready;
	atomic64_t syncs;
	atomic64_t churn_ops;
	atomic_t err;
};

static int bm_lwalk(struct bm_scale *s)
{
	struct bm_lclient *lc;
	u64 now, t;
	int err = 0, ret;

	now = ktime_get_ns();
	list_for_each_entry(lc, &s->clients, node) {
		ret = lc->ops->sync(NULL, IB_SYNC_MEM_TO_DEVICE, 0);
		t = ktime_get_ns();
		bm_account(lc, t - now, ret);
		now = t;
		if (ret && !err)
			err = ret;
	}
	return err;
}

static int bm_lpass(struct bm_scale *s)
{
	int err;

	if (s->impl == BM_RWLOCK) {
		read_lock(&s->rwlock);
		err = bm_lwalk(s);
		read_unlock(&s->rwlock);
	} else {
		down_read(&s->rwsem);
		err = bm_lwalk(s);
		up_read(&s->rwsem);
	}
	return err;
}

static void bm_lchange(struct bm_scale *s, struct bm_lclient *lc, bool add)
{
	if (add)
		list_add_tail(&lc->node, &s->clients);
	else
		list_del(&lc->node);
}

static void bm_llink(struct bm_scale *s, struct bm_lclient *lc, bool add)
{
	if (s->impl == BM_RWLOCK) {
		write_lock(&s->rwlock);
		bm_lchange(s, lc, add);
		write_unlock(&s->rwlock);
	} else {
		down_write(&s->rwsem);
		bm_lchange(s, lc, add);
		up_write(&s->rwsem);
	}
}

static int bm_reader(void *arg)
{
	struct bm_scale *s = arg;
	u64 n = 0;
	int err;

	atomic_inc(&s->ready);
	while (!READ_ONCE(s->stop)) {
		if (s->impl == BM_SRCU)
			err = ib_sync_mem_sync_device(s->ibdev,
						      IB_SYNC_MEM_TO_DEVICE,
						      0, NULL);
		else
			err = bm_lpass(s);
		if (err)
			atomic_set(&s->err, err);
		n++;
		cond_resched();
	}
	atomic64_add(n, &s->syncs);
	while (!kthread_should_stop())
		schedule_timeout_idle(1);
	return 0;
}

static int bm_writer(void *arg)
{
	struct bm_scale *s = arg;
	struct ib_sync_mem_client *c;
	struct bm_lclient *lc;
	u64 n = 0;

	atomic_inc(&s->ready);
	while (!READ_ONCE(s->stop)) {
		if (s->impl == BM_SRCU) {
			c = bm_register(s->ibdev, &bm_noop_ops);
			if (IS_ERR(c)) {
				atomic_set(&s->err, PTR_ERR(c));
				break;
			}
			ib_sync_mem_unregister(bm_owner, c);
		} else {
			lc = bm_lclient_new();
			if (!lc) {
				atomic_set(&s->err, -ENOMEM);
				break;
			}
			bm_llink(s, lc, true);
			bm_llink(s, lc, false);
			bm_lclient_free(lc);
		}
		n++;
		cond_resched();
	}
	atomic64_add(n, &s->churn_ops);
	while (!kthread_should_stop())
		schedule_timeout_idle(1);
	return 0;
}

static int bm_scale_rep(struct bm_scale *s, unsigned int threads, bool churn,
			unsigned int ms, u64 *ns)
{
	struct task_struct *tasks[BM_MAX_THREADS + 1];
	unsigned int i, nt = 0;
	u64 t0;
	int err = 0;

	s->stop = false;
	atomic_set(&s->ready, 0);
	atomic64_set(&s->syncs, 0);
	atomic64_set(&s->churn_ops, 0);
	for (i = 0; i < threads; i++) {
		tasks[nt] = kthread_create(bm_reader, s, "sm_bench_r%u", i);
		if (IS_ERR(tasks[nt])) {
			err = PTR_ERR(tasks[nt]);
			goto stop;
		}
		kthread_bind(tasks[nt], i % num_online_cpus());
		nt++;
	}
	if (churn) {
		tasks[nt] = kthread_create(bm_writer, s, "sm_bench_w");
		if (IS_ERR(tasks[nt])) {
			err = PTR_ERR(tasks[nt]);
			goto stop;
		}
		nt++;
	}
	for (i = 0; i < nt; i++)
		wake_up_process(tasks[i]);
	while (atomic_read(&s->ready) < nt)
		schedule_timeout_uninterruptible(1);
	t0 = ktime_get_ns();
	msleep(ms);
	WRITE_ONCE(s->stop, true);
	*ns = ktime_get_ns() - t0;
stop:
	WRITE_ONCE(s->stop, true);
	for (i = 0; i < nt; i++)
		kthread_stop(tasks[i]);
	return err ?: atomic_read(&s->err);
}

static int bm_scale_run(struct ib_device *ibdev, const char *impl,
			unsigned int threads, unsigned int churn,
			unsigned int ms, unsigned int reps)
{
	struct ib_sync_mem_client *c[BM_SCALE_N];
	struct bm_lclient *lc, *tmp;
	struct bm_scale *s;
	bool coalesce = READ_ONCE(sm_coalesce);
	unsigned int r, i;
	u64 ns;
	int err = 0;

	if (!threads || threads > BM_MAX_THREADS || churn > 1 || !ms ||
	    ms > 60000 || !reps)
		return -EINVAL;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	if (!strcmp(impl, "srcu")) {
		s->impl = BM_SRCU;
	} else if (!strcmp(impl, "rwlock")) {
		s->impl = BM_RWLOCK;
	} else if (!strcmp(impl, "rwsem")) {
		s->impl = BM_RWSEM;
	} else {
		kfree(s);
		return -EINVAL;
	}
	s->ibdev = ibdev;
	rwlock_init(&s->rwlock);
	init_rwsem(&s->rwsem);
	INIT_LIST_HEAD(&s->clients);

	if (s->impl == BM_SRCU) {
		err = bm_register_n(ibdev, &bm_noop_ops, c, BM_SCALE_N);
		if (err)
			goto out;
		/* Passes, not shared passes: measure the read side itself. */
		WRITE_ONCE(sm_coalesce, false);
	} else {
		for (i = 0; i < BM_SCALE_N; i++) {
			lc = bm_lclient_new();
			if (!lc) {
				err = -ENOMEM;
				goto out_free;
			}
			list_add_tail(&lc->node, &s->clients);
		}
	}

	for (r = 0; r < reps && !err; r++) {
		err = bm_scale_rep(s, threads, churn, ms, &ns);
		if (err)
			break;
		bm_line("scale");
		seq_buf_printf(&bm_out, " impl=%s", impl);
		bm_kv("threads", threads);
		bm_kv("churn", churn);
		bm_kv("rep", r);
		bm_kv("syncs", atomic64_read(&s->syncs));
		bm_kv("churn_ops", atomic64_read(&s->churn_ops));
		bm_kv("ns", ns);
		bm_end();
	}

	if (s->impl == BM_SRCU) {
		WRITE_ONCE(sm_coalesce, coalesce);
		bm_unregister_all(c, BM_SCALE_N);
	}
out_free:
	list_for_each_entry_safe(lc, tmp, &s->clients, node) {
		list_del(&lc->node);
		bm_lclient_free(lc);
	}
out:
	kfree(s);
	return err;
}

/* Coalescing: K callers at once, passes run per call and calls per second. */
struct bm_caller {
	struct ib_device *ibdev;
	unsigned int iters;
	atomic_t *err;
	struct completion *start;	/* all callers begin together */
	struct completion done;
};

static int bm_caller_fn(void *arg)
{
	struct bm_caller *bc = arg;
	unsigned int i;
	int err;

	wait_for_completion(bc->start);
	for (i = 0; i < bc->iters; i++) {
		err = ib_sync_mem_sync_device(bc->ibdev, IB_SYNC_MEM_TO_DEVICE,
					      0, NULL);
		if (err)
			atomic_set(bc->err, err);
		cond_resched();
	}
	complete(&bc->done);
	return 0;
}

static int bm_coalesce(struct ib_device *ibdev, unsigned int on,
		       unsigned int k, unsigned int iters,
		       unsigned int delay_us, unsigned int reps)
{
	struct ib_sync_mem_client *c[BM_COALESCE_N];
	struct ib_sync_mem_domain *dom;
	struct completion start;
	struct bm_caller *bc;
	struct task_struct *t;
	bool coalesce = READ_ONCE(sm_coalesce);
	atomic_t cerr = ATOMIC_INIT(0);
	unsigned int r, i;
	u64 t0, ns, p0;
	int err;

	if (on > 1 || !k || k > BM_MAX_THREADS || !iters || delay_us > 1000 ||
	    !reps)
		return -EINVAL;
	bc = kcalloc(k, sizeof(*bc), GFP_KERNEL);
	if (!bc)
		return -ENOMEM;
	dom = sm_domain_get(ibdev);
	if (!dom) {
		kfree(bc);
		return -ENODEV;
	}
	WRITE_ONCE(bm_delay_us, delay_us);
	err = bm_register_n(ibdev, &bm_busy_ops, c, BM_COALESCE_N);
	if (err)
		goto out;
	WRITE_ONCE(sm_coalesce, on == 1);

	for (r = 0; r < reps && !err; r++) {
		init_completion(&start);
		for (i = 0; i < k; i++) {
			bc[i].ibdev = ibdev;
			bc[i].iters = iters;
			bc[i].err = &cerr;
			bc[i].start = &start;
			init_completion(&bc[i].done);
			t = kthread_run(bm_caller_fn, &bc[i], "sm_bench_c%u", i);
			if (IS_ERR(t)) {
				err = PTR_ERR(t);
				break;
			}
		}
		p0 = sm_domain_passes(dom);
		t0 = ktime_get_ns();
		complete_all(&start);
		/* Threads that started finish their calls. */
		while (i--)
			wait_for_completion(&bc[i].done);
		ns = ktime_get_ns() - t0;
		err = err ?: atomic_read(&cerr);
		if (err)
			break;
		bm_line("coalesce");
		bm_kv("coalesce", on);
		bm_kv("k", k);
		bm_kv("rep", r);
		bm_kv("calls", k * iters);
		bm_kv("passes", sm_domain_passes(dom) - p0);
		bm_kv("delay_us", delay_us);
		bm_kv("ns", ns);
		bm_end();
	}

	WRITE_ONCE(sm_coalesce, coalesce);
	bm_unregister_all(c, BM_COALESCE_N);
out:
	sm_domain_put(dom);
	kfree(bc);
	return err;
}

/*
 * Ranges: a client whose sync costs what its bytes cost, as an
 * accelerator's cache maintenance does. Its memory is vmalloc'ed; ->sync
 * writes back every cache line of it (clflush_cache_range(), or, on a CPU
 * without CLFLUSH or another architecture, a read of each line), and
 * ->sync_range the lines of the range only.
 */
#define BM_LINE		64
#define BM_RANGE_BLOCK	64	/* syncs of one kind timed in a row */
#define BM_MEM_MAX_KIB	(1024 * 1024)

struct bm_mem {
	void *buf;
	u64 size;
	atomic_t syncs;		/* ->sync calls */
	atomic_t ranges;	/* ->sync_range calls */
	u64 range_len;		/* of the last one */
};

static void bm_mem_flush(void *p, u64 len)
{
	u64 off;

#ifdef CONFIG_X86
	if (boot_cpu_has(X86_FEATURE_CLFLUSH)) {
		clflush_cache_range(p, len);
		return;
	}
#endif
	for (off = 0; off < len; off += BM_LINE)
		(void)READ_ONCE(*(u8 *)(p + off));
}

static int bm_mem_sync(struct ib_sync_mem_client *client,
		       enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct bm_mem *m = ib_sync_mem_client_priv(bm_owner, client);

	atomic_inc(&m->syncs);
	bm_mem_flush(m->buf, m->size);
	return 0;
}

static int bm_mem_sync_range(struct ib_sync_mem_client *client,
			     enum ib_sync_mem_dir dir, u64 offset, u64 len,
			     ktime_t deadline)
{
	struct bm_mem *m = ib_sync_mem_client_priv(bm_owner, client);

	atomic_inc(&m->ranges);
	WRITE_ONCE(m->range_len, len);
	bm_mem_flush(m->buf + offset, len);
	return 0;
}

static const struct ib_sync_mem_ops bm_mem_ops = {
	.owner = THIS_MODULE,
	.sync = bm_mem_sync,
	.sync_range = bm_mem_sync_range,
};

/* A client over @size bytes of vmalloc'ed memory, its memory in *@m. */
static struct ib_sync_mem_client *bm_mem_register(struct ib_device *ibdev,
						  u64 size, struct bm_mem *m)
{
	struct ib_sync_mem_client *c;

	m->size = size;
	m->buf = vzalloc(size);
	if (!m->buf)
		return ERR_PTR(-ENOMEM);
	c = ib_sync_mem_register(ibdev, &(struct ib_sync_mem_reg){
		.owner = bm_owner, .name = "bench-mem", .ops = &bm_mem_ops,
		.priv = m, .size = size, .range_align = BM_LINE,
	});
	if (IS_ERR(c)) {
		vfree(m->buf);
		m->buf = NULL;
	}
	return c;
}

/* @n syncs of @c: of [@off, @off + @len), or whole (@len 0); time to *@ns. */
static int bm_mem_syncs(struct ib_sync_mem_client *c, u64 off, u64 len,
			unsigned int n, u64 *ns)
{
	u64 t0 = ktime_get_ns();
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		if (len)
			err = ib_sync_mem_sync_range(c, IB_SYNC_MEM_TO_DEVICE,
						     off, len, 0);
		else
			err = ib_sync_mem_sync(c, IB_SYNC_MEM_TO_DEVICE, 0);
		if (err)
			return err;
	}
	*ns += ktime_get_ns() - t0;
	return 0;
}

/*
 * A range sync of @range_kib KiB of a @size_kib KiB client against a sync
 * of a whole @range_kib KiB client (the same lines written back), in
 * blocks of BM_RANGE_BLOCK syncs, alternating which goes first; and, for
 * contrast, the large client synced whole.
 */
static int bm_ranges(struct ib_device *ibdev, unsigned int size_kib,
		     unsigned int range_kib, unsigned int iters,
		     unsigned int whole_iters, unsigned int reps)
{
	struct bm_mem big = {}, small = {};
	struct ib_sync_mem_client *cb, *cs;
	u64 size = (u64)size_kib * 1024, range = (u64)range_kib * 1024;
	u64 off, range_ns, small_ns, whole_ns;
	unsigned int r, done, n;
	int err;

	if (!range_kib || range_kib > size_kib || size_kib > BM_MEM_MAX_KIB ||
	    !iters || !whole_iters || !reps)
		return -EINVAL;
	/* In the middle of the large client, on a line. */
	off = ALIGN_DOWN((size - range) / 2, BM_LINE);
	cb = bm_mem_register(ibdev, size, &big);
	if (IS_ERR(cb))
		return PTR_ERR(cb);
	cs = bm_mem_register(ibdev, range, &small);
	if (IS_ERR(cs)) {
		err = PTR_ERR(cs);
		goto out_big;
	}

	/*
	 * Warm-up, and a check that a range sync reaches ->sync_range with
	 * the range and nothing else, and a whole sync ->sync.
	 */
	range_ns = 0;
	err = bm_mem_syncs(cb, off, range, BM_RANGE_BLOCK, &range_ns) ?:
	      bm_mem_syncs(cs, 0, 0, BM_RANGE_BLOCK, &range_ns) ?:
	      bm_mem_syncs(cb, 0, 0, 1, &range_ns);
	if (err)
		goto out;
	if (atomic_read(&big.ranges) != BM_RANGE_BLOCK ||
	    READ_ONCE(big.range_len) != range ||
	    atomic_read(&big.syncs) != 1 || atomic_read(&small.ranges) ||
	    atomic_read(&small.syncs) != BM_RANGE_BLOCK) {
		pr_err("ranges: callbacks ran %d/%d (range/whole) on the large client, %d/%d on the small one\n",
		       atomic_read(&big.ranges), atomic_read(&big.syncs),
		       atomic_read(&small.ranges), atomic_read(&small.syncs));
		err = -EPROTO;
		goto out;
	}

	for (r = 0; r < reps; r++) {
		range_ns = 0;
		small_ns = 0;
		whole_ns = 0;
		for (done = 0; done < iters; done += n) {
			n = min_t(unsigned int, iters - done, BM_RANGE_BLOCK);
			if ((done / BM_RANGE_BLOCK) & 1)
				err = bm_mem_syncs(cs, 0, 0, n, &small_ns) ?:
				      bm_mem_syncs(cb, off, range, n, &range_ns);
			else
				err = bm_mem_syncs(cb, off, range, n, &range_ns) ?:
				      bm_mem_syncs(cs, 0, 0, n, &small_ns);
			if (err)
				goto out;
			cond_resched();
		}
		for (done = 0; done < whole_iters; done++) {
			err = bm_mem_syncs(cb, 0, 0, 1, &whole_ns);
			if (err)
				goto out;
			cond_resched();
		}

		bm_line("ranges");
		bm_kv("rep", r);
		bm_kv("size", size);
		bm_kv("range", range);
		bm_kv("iters", iters);
		bm_kv("whole_iters", whole_iters);
		bm_kv("range_ns", range_ns);
		bm_kv("small_ns", small_ns);
		bm_kv("whole_ns", whole_ns);
		bm_end();
	}
out:
	ib_sync_mem_unregister(bm_owner, cs);
	vfree(small.buf);
out_big:
	ib_sync_mem_unregister(bm_owner, cb);
	vfree(big.buf);
	return err;
}

/* "hold N": clients kept registered between commands. */
static struct ib_sync_mem_client **bm_held;
static unsigned int bm_nheld;

static void bm_release(void)
{
	bm_unregister_all(bm_held, bm_nheld);
	kvfree(bm_held);
	bm_held = NULL;
	bm_nheld = 0;
}

static int bm_hold(struct ib_device *ibdev, unsigned int n)
{
	int err;

	if (bm_held || !n || n > 100000)
		return -EINVAL;
	bm_held = kvcalloc(n, sizeof(*bm_held), GFP_KERNEL);
	if (!bm_held)
		return -ENOMEM;
	err = bm_register_n(ibdev, &bm_noop_ops, bm_held, n);
	if (err) {
		kvfree(bm_held);
		bm_held = NULL;
		return err;
	}
	bm_nheld = n;
	return 0;
}

static int bm_run(char *cmd)
{
	unsigned int a[5] = {};
	struct ib_device *ibdev;
	char impl[16];
	int err;

	if (!strcmp(cmd, "clear")) {
		seq_buf_clear(&bm_out);
		return 0;
	}
	if (!strcmp(cmd, "release")) {
		bm_release();
		return 0;
	}
	if (!strcmp(cmd, "sizes")) {
		bm_line("sizes");
		bm_kv("client", sizeof(struct ib_sync_mem_client));
		bm_kv("stats_per_cpu", sizeof(struct sm_stats));
		bm_kv("possible_cpus", num_possible_cpus());
		bm_end();
		return 0;
	}

	ibdev = ib_sync_mem_device_get(dev);
	if (!ibdev)
		return -ENODEV;
	if (sscanf(cmd, "fanout %u %u %u %u", &a[0], &a[1], &a[2], &a[3]) >= 3)
		err = bm_fanout(ibdev, a[0], a[1], a[2], a[3]);
	else if (sscanf(cmd, "hold %u", &a[0]) == 1)
		err = bm_hold(ibdev, a[0]);
	else if (sscanf(cmd, "regunreg %u %u", &a[0], &a[1]) == 2)
		err = bm_regunreg(ibdev, a[0], a[1]);
	else if (sscanf(cmd, "unregmany %u %u", &a[0], &a[1]) == 2)
		err = bm_unregmany(ibdev, a[0], a[1]);
	else if (sscanf(cmd, "scoped %u %u %u", &a[0], &a[1], &a[2]) == 3)
		err = bm_scoped(ibdev, a[0], a[1], a[2]);
	else if (sscanf(cmd, "scale %15s %u %u %u %u", impl, &a[0], &a[1],
			&a[2], &a[3]) == 5)
		err = bm_scale_run(ibdev, impl, a[0], a[1], a[2], a[3]);
	else if (sscanf(cmd, "coalesce %u %u %u %u %u", &a[0], &a[1], &a[2],
			&a[3], &a[4]) == 5)
		err = bm_coalesce(ibdev, a[0], a[1], a[2], a[3], a[4]);
	else if (sscanf(cmd, "ranges %u %u %u %u %u", &a[0], &a[1], &a[2],
			&a[3], &a[4]) == 5)
		err = bm_ranges(ibdev, a[0], a[1], a[2], a[3], a[4]);
	else
		err = -EINVAL;
	ib_device_put(ibdev);
	if (seq_buf_has_overflowed(&bm_out))
		err = -ENOSPC;
	return err;
}

static ssize_t bm_run_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char cmd[96];

	return cmd_write(ubuf, count, cmd, sizeof(cmd), &bm_lock, bm_run);
}

static const struct file_operations bm_run_fops = {
	.owner = THIS_MODULE,
	.write = bm_run_write,
	.llseek = noop_llseek,
};

static int bm_out_show(struct seq_file *m, void *v)
{
	mutex_lock(&bm_lock);
	seq_write(m, bm_buf, seq_buf_used(&bm_out));
	mutex_unlock(&bm_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bm_out);

static struct dentry *bm_root;

static int __init bm_init(void)
{
	bm_owner = ib_sync_mem_owner_create(THIS_MODULE, "bench");
	if (IS_ERR(bm_owner))
		return PTR_ERR(bm_owner);
	bm_other = ib_sync_mem_owner_create(THIS_MODULE, "bench-other");
	if (IS_ERR(bm_other)) {
		ib_sync_mem_owner_destroy(bm_owner);
		return PTR_ERR(bm_other);
	}
	bm_buf = cmd_out_init(&bm_out, BM_OUT_SIZE);
	if (!bm_buf) {
		ib_sync_mem_owner_destroy(bm_other);
		ib_sync_mem_owner_destroy(bm_owner);
		return -ENOMEM;
	}
	bm_root = debugfs_create_dir("ib_sync_mem_bench", NULL);
	debugfs_create_file("run", 0200, bm_root, NULL, &bm_run_fops);
	debugfs_create_file("out", 0444, bm_root, NULL, &bm_out_fops);
	return 0;
}

static void __exit bm_exit(void)
{
	debugfs_remove_recursive(bm_root);
	bm_release();
	kvfree(bm_buf);
	ib_sync_mem_owner_destroy(bm_other);
	ib_sync_mem_owner_destroy(bm_owner);
}

module_init(bm_init);
module_exit(bm_exit);

MODULE_AUTHOR("syncmem developers");
MODULE_DESCRIPTION("Micro-benchmarks of ib_sync_mem");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("IB_SYNC_MEM_INTERNAL");
