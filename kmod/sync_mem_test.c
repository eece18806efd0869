// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: in-kernel tests of the ib_sync_mem registry, in KTAP.
 *
 * Driven from test/vm/20-core.sh through debugfs:
 *
 *   /sys/kernel/debug/ib_sync_mem_test/run      write a test name
 *   /sys/kernel/debug/ib_sync_mem_test/results  KTAP of every test run so far
 *
 * Most tests run on the device named by the module parameter dev (rxe0).
 * The device-removal test is in two steps so that userspace can delete the
 * device in between: "storm_start DEV", then `rdma link delete DEV`, then
 * "storm_check".
 *
 * It looks into the registry's internal structures (sync_mem.h) to wait for
 * exact states instead of sleeping and hoping.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <rdma/ib_sync_mem.h>

#include "sync_mem.h"

static char *dev = "rxe0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device the tests register clients on");

static unsigned int churn_iters = 2000;
module_param(churn_iters, uint, 0644);
MODULE_PARM_DESC(churn_iters, "Iterations per thread of the churn test");

#define TC_LIVE		0x5a5a1234u
#define TC_POISON	0xdeadbeefu

/* KTAP output of every test, for the results file. */
static DEFINE_MUTEX(kt_lock);
static char *kt_buf;
static struct seq_buf kt_out;
static unsigned int kt_num;

/* Per-test state. */
static int kt_fail;
static atomic_t kt_bad;	/* failures seen in callbacks and threads */

#define KT_BUF_SIZE	(64 * 1024)

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
 * A test client. Its private data outlives the client: release poisons the
 * canary instead of freeing, so a callback after release is seen.
 */
struct tc {
	u32 canary;
	int idx;
	int fail;			/* errno ->sync returns, negative */
	unsigned int sleep_us;
	struct completion *gate;	/* ->sync waits for it if set */
	struct completion entered;	/* ->sync was entered */
	atomic_t syncs;
	atomic_t invalidates;
	atomic_t releases;
	atomic_t after_inval;		/* ->sync after ->invalidate */
	int *order;			/* records ->sync order */
	atomic_t *order_pos;
	struct ib_sync_mem_client *client;
};

static int tc_sync(struct ib_sync_mem_client *client, enum ib_sync_mem_dir dir,
		   ktime_t deadline)
{
	struct tc *t = ib_sync_mem_client_priv(client);

	if (READ_ONCE(t->canary) != TC_LIVE) {
		atomic_inc(&kt_bad);
		return -EFAULT;
	}
	if (atomic_read(&t->invalidates))
		atomic_inc(&t->after_inval);
	atomic_inc(&t->syncs);
	if (t->order)
		t->order[atomic_inc_return(t->order_pos) - 1] = t->idx;
	complete(&t->entered);
	if (t->gate)
		wait_for_completion(t->gate);
	if (t->sleep_us)
		fsleep(t->sleep_us);
	return t->fail;
}

static void tc_invalidate(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_inval reason)
{
	struct tc *t = ib_sync_mem_client_priv(client);

	if (READ_ONCE(t->canary) != TC_LIVE)
		atomic_inc(&kt_bad);
	atomic_inc(&t->invalidates);
}

static void tc_release(struct ib_sync_mem_client *client)
{
	struct tc *t = ib_sync_mem_client_priv(client);

	if (READ_ONCE(t->canary) != TC_LIVE)
		atomic_inc(&kt_bad);
	atomic_inc(&t->releases);
	WRITE_ONCE(t->canary, TC_POISON);
}

static const struct ib_sync_mem_ops tc_ops = {
	.owner = THIS_MODULE,
	.sync = tc_sync,
	.invalidate = tc_invalidate,
	.release = tc_release,
};

static struct tc *tc_alloc(int n)
{
	struct tc *t = kcalloc(n, sizeof(*t), GFP_KERNEL);
	int i;

	for (i = 0; t && i < n; i++) {
		t[i].canary = TC_LIVE;
		t[i].idx = i;
		init_completion(&t[i].entered);
	}
	return t;
}

static struct ib_sync_mem_client *tc_register(struct ib_device *ibdev,
					      struct tc *t, u32 flags)
{
	struct ib_sync_mem_reg reg = {
		.name = "kt",
		.ops = &tc_ops,
		.priv = t,
		.size = 4096,
		.flags = flags,
	};

	t->client = ib_sync_mem_register(ibdev, &reg);
	return t->client;
}

/* Register n clients; on failure report and return false. */
static bool tc_register_all(struct ib_device *ibdev, struct tc *t, int n,
			    u32 flags)
{
	int i;

	for (i = 0; i < n; i++) {
		if (IS_ERR(tc_register(ibdev, &t[i], flags))) {
			kt_fail++;
			kt_diag("register %d: %ld", i, PTR_ERR(t[i].client));
			while (i--)
				ib_sync_mem_unregister(t[i].client);
			return false;
		}
	}
	return true;
}

static void tc_unregister_all(struct tc *t, int n)
{
	int i;

	for (i = 0; i < n; i++)
		ib_sync_mem_unregister(t[i].client);
}

static struct ib_sync_mem_domain *test_domain(struct ib_device *ibdev)
{
	struct ib_sync_mem_domain *dom = sm_domain_get(ibdev);

	if (dom)
		sm_domain_put(dom);	/* the device holds it for us */
	return dom;
}

/* ---- the tests ---- */

static void test_register_unregister(struct ib_device *ibdev)
{
	int before = atomic_read(&sm_counters.clients);
	struct ib_sync_mem_client *c, *found;
	struct tc *t = tc_alloc(1);
	u32 id;

	if (!t || IS_ERR(tc_register(ibdev, t, 0))) {
		kt_fail++;
		goto out;
	}
	c = t->client;
	id = ib_sync_mem_client_id(c);
	KT_EXPECT(id != 0);
	KT_EXPECT(ib_sync_mem_client_priv(c) == t);
	KT_EXPECT(!strcmp(ib_sync_mem_client_name(c), "kt"));
	KT_EXPECT_EQ(atomic_read(&sm_counters.clients), before + 1);

	found = ib_sync_mem_lookup(id);
	KT_EXPECT(found == c);
	if (found)
		ib_sync_mem_put(found);

	KT_EXPECT_EQ(ib_sync_mem_sync(c, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);

	ib_sync_mem_unregister(c);
	KT_EXPECT(!ib_sync_mem_lookup(id));
	KT_EXPECT_EQ(atomic_read(&t->releases), 1);
	KT_EXPECT_EQ(atomic_read(&t->invalidates), 0);
	KT_EXPECT_EQ(atomic_read(&sm_counters.clients), before);
out:
	kfree(t);
}

static void test_bad_input(struct ib_device *ibdev)
{
	static const struct ib_sync_mem_ops no_sync = { .owner = THIS_MODULE };
	int clients = atomic_read(&sm_counters.clients);
	int registered = atomic_read(&sm_counters.registered);
	int refs = module_refcount(THIS_MODULE);
	char longname[IB_SYNC_MEM_NAME_MAX + 1];
	struct ib_sync_mem_reg reg = { .name = "kt", .ops = &tc_ops };
	struct tc *t = tc_alloc(1);

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';

	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, NULL)), -EINVAL);
	reg.ops = NULL;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.ops = &no_sync;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.ops = &tc_ops;
	reg.name = NULL;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.name = "";
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.name = longname;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -ENAMETOOLONG);
	longname[IB_SYNC_MEM_NAME_MAX - 1] = '\0';	/* 31 bytes: fits */
	reg.priv = t;
	t->client = ib_sync_mem_register(ibdev, &reg);
	KT_EXPECT(!IS_ERR(t->client));
	if (!IS_ERR(t->client))
		ib_sync_mem_unregister(t->client);
	reg.name = "kt";
	reg.flags = BIT(31);
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.flags = 0;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(NULL, &reg)), -ENODEV);

	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, 0, 0, NULL), -EINVAL);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, 4, 0, NULL), -EINVAL);
	KT_EXPECT(!ib_sync_mem_lookup(0));
	KT_EXPECT(!ib_sync_mem_lookup(U32_MAX));

	/* Nothing leaked, no reference kept. */
	KT_EXPECT_EQ(atomic_read(&sm_counters.clients), clients);
	KT_EXPECT_EQ(atomic_read(&sm_counters.registered), registered);
	KT_EXPECT_EQ(module_refcount(THIS_MODULE), refs);
	kfree(t);
}

#define FANOUT_N 16

static void test_fanout_order(struct ib_device *ibdev)
{
	struct ib_sync_mem_result res = {};
	int order[FANOUT_N * 2], i;
	atomic_t pos = ATOMIC_INIT(0);
	struct tc *t = tc_alloc(FANOUT_N);

	if (!t || !tc_register_all(ibdev, t, FANOUT_N, 0))
		goto out;
	for (i = 0; i < FANOUT_N; i++) {
		t[i].order = order;
		t[i].order_pos = &pos;
	}

	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     &res), 0);
	KT_EXPECT_EQ(res.clients, FANOUT_N);
	KT_EXPECT_EQ(res.errors, 0);
	KT_EXPECT_EQ(atomic_read(&pos), FANOUT_N);
	for (i = 0; i < FANOUT_N; i++) {
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), 1);
		KT_EXPECT_EQ(order[i], i);
	}
	tc_unregister_all(t, FANOUT_N);
	for (i = 0; i < FANOUT_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].releases), 1);
out:
	kfree(t);
}

static void test_error_propagation(struct ib_device *ibdev)
{
	struct ib_sync_mem_result res = {};
	struct tc *t = tc_alloc(8);
	int i;

	if (!t)
		goto out;
	t[2].fail = -EIO;
	t[5].fail = -EFAULT;
	if (!tc_register_all(ibdev, t, 8, 0))
		goto out;

	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_CPU, 0,
					     &res), -EIO);
	KT_EXPECT_EQ(res.clients, 8);
	KT_EXPECT_EQ(res.errors, 2);
	for (i = 0; i < 8; i++) {
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), 1);
		KT_EXPECT_EQ(ib_sync_mem_client_last_err(t[i].client),
			     t[i].fail);
	}
	/* The single-client path reports the client's own error. */
	KT_EXPECT_EQ(ib_sync_mem_sync(t[5].client, IB_SYNC_MEM_TO_CPU, 0),
		     -EFAULT);
	/* Results are per pass: fixed clients report success again. */
	t[2].fail = 0;
	t[5].fail = 0;
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_BIDIRECTIONAL,
					     0, &res), 0);
	KT_EXPECT_EQ(ib_sync_mem_client_last_err(t[2].client), 0);
	tc_unregister_all(t, 8);
out:
	kfree(t);
}

static void test_lazy(struct ib_device *ibdev)
{
	struct ib_sync_mem_result res = {};
	struct tc *t = tc_alloc(2);

	if (!t)
		goto out;
	if (IS_ERR(tc_register(ibdev, &t[0], IB_SYNC_MEM_F_LAZY))) {
		kt_fail++;
		goto out;
	}
	if (IS_ERR(tc_register(ibdev, &t[1], 0))) {
		kt_fail++;
		ib_sync_mem_unregister(t[0].client);
		goto out;
	}

	/* Clean lazy client: skipped by passes and single syncs. */
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     &res), 0);
	KT_EXPECT_EQ(res.clients, 1);
	KT_EXPECT_EQ(res.skipped, 1);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[0].client, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 0);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 1);

	/* Dirty: synced once, then clean again. */
	ib_sync_mem_mark_dirty(t[0].client);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     &res), 0);
	KT_EXPECT_EQ(res.clients, 2);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 1);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     NULL), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 1);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 3);

	/* A failed sync leaves the client dirty: it is retried. */
	ib_sync_mem_mark_dirty(t[0].client);
	t[0].fail = -EAGAIN;
	KT_EXPECT_EQ(ib_sync_mem_sync(t[0].client, IB_SYNC_MEM_TO_CPU, 0),
		     -EAGAIN);
	t[0].fail = 0;
	KT_EXPECT_EQ(ib_sync_mem_sync(t[0].client, IB_SYNC_MEM_TO_CPU, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 3);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[0].client, IB_SYNC_MEM_TO_CPU, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 3);

	tc_unregister_all(t, 2);
out:
	kfree(t);
}

struct kt_caller {
	struct ib_device *ibdev;
	struct ib_sync_mem_client *client;
	enum ib_sync_mem_dir dir;
	struct ib_sync_mem_result res;
	int ret;
	struct completion done;
};

static int kt_sync_device_fn(void *arg)
{
	struct kt_caller *k = arg;

	k->ret = ib_sync_mem_sync_device(k->ibdev, k->dir, 0, &k->res);
	complete(&k->done);
	return 0;
}

static int kt_sync_client_fn(void *arg)
{
	struct kt_caller *k = arg;

	k->ret = ib_sync_mem_sync(k->client, k->dir, 0);
	complete(&k->done);
	return 0;
}

static int kt_unregister_fn(void *arg)
{
	struct kt_caller *k = arg;

	ib_sync_mem_unregister(k->client);
	complete(&k->done);
	return 0;
}

static bool kt_start(int (*fn)(void *), struct kt_caller *k)
{
	struct task_struct *task;

	init_completion(&k->done);
	task = kthread_run(fn, k, "kt_caller");
	if (IS_ERR(task)) {
		kt_fail++;
		kt_diag("kthread_run: %ld", PTR_ERR(task));
		return false;
	}
	return true;
}

static unsigned int kt_waiters(struct wait_queue_head *wq)
{
	struct wait_queue_entry *w;
	unsigned int n = 0;

	spin_lock_irq(&wq->lock);
	list_for_each_entry(w, &wq->head, entry)
		n++;
	spin_unlock_irq(&wq->lock);
	return n;
}

#define COALESCE_K 4

static void test_coalescing(struct ib_device *ibdev)
{
	struct ib_sync_mem_domain *dom = test_domain(ibdev);
	struct kt_caller first = { .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_DEVICE };
	struct kt_caller late[COALESCE_K];
	struct sm_pass_queue *q;
	DECLARE_COMPLETION_ONSTACK(gate);
	struct tc *t = tc_alloc(1);
	int i, started = 0, waited;

	if (!t || !dom || !sm_coalesce) {
		kt_fail++;
		kt_diag("needs the device's domain and coalesce=1");
		goto out;
	}
	q = &dom->passes[IB_SYNC_MEM_TO_DEVICE - 1];
	t->gate = &gate;
	if (IS_ERR(tc_register(ibdev, t, 0))) {
		kt_fail++;
		goto out;
	}

	/* The first caller's pass blocks inside the client. */
	if (!kt_start(kt_sync_device_fn, &first))
		goto out_open;
	wait_for_completion(&t->entered);

	/* K callers arrive while it runs and must all wait. */
	for (i = 0; i < COALESCE_K; i++) {
		late[i] = first;
		if (!kt_start(kt_sync_device_fn, &late[i]))
			goto out_open;
		started++;
	}
	for (waited = 0; kt_waiters(&q->wq) < COALESCE_K && waited < 10000;
	     waited += 10)
		msleep(20);
	KT_EXPECT_EQ(kt_waiters(&q->wq), COALESCE_K);
	for (i = 0; i < COALESCE_K; i++)
		KT_EXPECT(!completion_done(&late[i].done));

out_open:
	complete_all(&gate);
	wait_for_completion(&first.done);
	for (i = 0; i < started; i++)
		wait_for_completion(&late[i].done);

	KT_EXPECT_EQ(first.ret, 0);
	KT_EXPECT_EQ(first.res.clients, 1);
	/* One pass for the first caller, one shared by all K late ones. */
	KT_EXPECT_EQ(atomic_read(&t->syncs), 2);
	for (i = 0; i < started; i++) {
		KT_EXPECT_EQ(late[i].ret, 0);
		KT_EXPECT(late[i].res.pass != first.res.pass);
		KT_EXPECT_EQ(late[i].res.pass, late[0].res.pass);
		KT_EXPECT_EQ(late[i].res.clients, 1);
	}
	if (!IS_ERR_OR_NULL(t->client))
		ib_sync_mem_unregister(t->client);
out:
	kfree(t);
}

static void test_unregister_during_sync(struct ib_device *ibdev)
{
	struct kt_caller syncer = { .dir = IB_SYNC_MEM_TO_CPU };
	struct kt_caller unreg = {};
	DECLARE_COMPLETION_ONSTACK(gate);
	struct tc *t = tc_alloc(1);
	bool early;

	if (!t)
		goto out;
	t->gate = &gate;
	if (IS_ERR(tc_register(ibdev, t, 0))) {
		kt_fail++;
		goto out;
	}
	/* The syncer's reference keeps the client memory past unregister. */
	syncer.client = ib_sync_mem_get(t->client);
	unreg.client = t->client;

	if (!kt_start(kt_sync_client_fn, &syncer)) {
		complete_all(&gate);
		ib_sync_mem_unregister(t->client);
		ib_sync_mem_put(syncer.client);
		goto out;
	}
	wait_for_completion(&t->entered);
	if (!kt_start(kt_unregister_fn, &unreg)) {
		complete_all(&gate);
		wait_for_completion(&syncer.done);
		ib_sync_mem_unregister(t->client);
		ib_sync_mem_put(syncer.client);
		goto out;
	}

	/* Unregister must wait for the sleeping callback. */
	msleep(300);
	early = completion_done(&unreg.done);
	KT_EXPECT(!early);
	complete_all(&gate);
	wait_for_completion(&unreg.done);
	KT_EXPECT(completion_done(&syncer.done));
	wait_for_completion(&syncer.done);
	KT_EXPECT_EQ(syncer.ret, 0);

	/* After unregister: no callback, a clear error, release on last put. */
	KT_EXPECT_EQ(ib_sync_mem_sync(syncer.client, IB_SYNC_MEM_TO_CPU, 0),
		     -ENODEV);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);
	KT_EXPECT_EQ(atomic_read(&t->releases), 0);
	ib_sync_mem_put(syncer.client);
	KT_EXPECT_EQ(atomic_read(&t->releases), 1);
out:
	kfree(t);
}

static void test_module_refcount(struct ib_device *ibdev)
{
	int refs = module_refcount(THIS_MODULE);
	struct tc *t = tc_alloc(3);

	if (!t || !tc_register_all(ibdev, t, 3, 0))
		goto out;
	KT_EXPECT_EQ(module_refcount(THIS_MODULE), refs + 3);
	/* A lookup reference does not pin the module; the client does. */
	ib_sync_mem_unregister(t[0].client);
	KT_EXPECT_EQ(module_refcount(THIS_MODULE), refs + 2);
	ib_sync_mem_unregister(t[1].client);
	ib_sync_mem_unregister(t[2].client);
	KT_EXPECT_EQ(module_refcount(THIS_MODULE), refs);
out:
	kfree(t);
}

static void test_invalidate_memory(struct ib_device *ibdev)
{
	struct ib_sync_mem_result res = {};
	struct tc *t = tc_alloc(2);

	if (!t || !tc_register_all(ibdev, t, 2, 0))
		goto out;
	ib_sync_mem_invalidate(t[0].client, IB_SYNC_MEM_INVAL_MEMORY);
	KT_EXPECT_EQ(atomic_read(&t[0].invalidates), 1);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[0].client, IB_SYNC_MEM_TO_DEVICE, 0),
		     -ENXIO);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     &res), 0);
	KT_EXPECT_EQ(res.clients, 1);
	KT_EXPECT_EQ(res.skipped, 1);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 0);
	/* A second invalidation is a no-op. */
	ib_sync_mem_invalidate(t[0].client, IB_SYNC_MEM_INVAL_MEMORY);
	KT_EXPECT_EQ(atomic_read(&t[0].invalidates), 1);
	tc_unregister_all(t, 2);
	KT_EXPECT_EQ(atomic_read(&t[0].releases), 1);
out:
	kfree(t);
}

/* ---- churn: registration, unregistration and syncs racing ---- */

struct churn {
	struct ib_device *ibdev;
	struct tc *pool;	/* one per registration, freed at the end */
	unsigned int iters;
	unsigned int used;
	atomic_t *running;
	struct completion done;
	int errors;
};

static int churn_writer(void *arg)
{
	struct churn *ch = arg;
	struct ib_sync_mem_client *live[8] = {};
	unsigned int i, slot;

	for (i = 0; i < ch->iters; i++) {
		slot = get_random_u32() % ARRAY_SIZE(live);
		if (live[slot]) {
			if (ib_sync_mem_sync(live[slot], IB_SYNC_MEM_TO_DEVICE, 0))
				ch->errors++;
			ib_sync_mem_unregister(live[slot]);
			live[slot] = NULL;
		} else {
			struct tc *t = &ch->pool[ch->used++];

			if (IS_ERR(tc_register(ch->ibdev, t, 0)))
				ch->errors++;
			else
				live[slot] = t->client;
		}
		cond_resched();
	}
	for (slot = 0; slot < ARRAY_SIZE(live); slot++)
		if (live[slot])
			ib_sync_mem_unregister(live[slot]);
	atomic_dec(ch->running);
	complete(&ch->done);
	return 0;
}

static int churn_syncer(void *arg)
{
	struct churn *ch = arg;

	while (atomic_read(ch->running)) {
		if (ib_sync_mem_sync_device(ch->ibdev, IB_SYNC_MEM_TO_CPU, 0,
					    NULL))
			ch->errors++;
		ch->used++;
		cond_resched();
	}
	complete(&ch->done);
	return 0;
}

static void test_churn(struct ib_device *ibdev)
{
	int before = atomic_read(&sm_counters.clients);
	struct churn ch[3] = {};
	atomic_t running = ATOMIC_INIT(2);
	struct task_struct *task;
	unsigned int i, j, started = 0;

	for (i = 0; i < 3; i++) {
		ch[i].ibdev = ibdev;
		ch[i].iters = churn_iters;
		ch[i].running = &running;
		init_completion(&ch[i].done);
	}
	for (i = 0; i < 2; i++) {
		ch[i].pool = tc_alloc(churn_iters);
		if (!ch[i].pool) {
			kt_fail++;
			goto out;
		}
	}

	/* Two writers bound to CPU 0 and 1, one device-wide syncer. */
	for (i = 0; i < 3; i++) {
		task = kthread_create(i < 2 ? churn_writer : churn_syncer,
				      &ch[i], "kt_churn/%u", i);
		if (IS_ERR(task)) {
			kt_fail++;
			if (i < 2)
				atomic_dec(&running);
			continue;
		}
		if (i < 2 && num_online_cpus() > 1)
			kthread_bind(task, i);
		wake_up_process(task);
		started |= BIT(i);
	}
	for (i = 0; i < 3; i++)
		if (started & BIT(i))
			wait_for_completion(&ch[i].done);

	for (i = 0; i < 3; i++)
		KT_EXPECT_EQ(ch[i].errors, 0);
	for (i = 0; i < 2; i++) {
		for (j = 0; j < ch[i].used; j++) {
			struct tc *t = &ch[i].pool[j];

			if (IS_ERR_OR_NULL(t->client))
				continue;
			KT_EXPECT_EQ(atomic_read(&t->releases), 1);
			KT_EXPECT_EQ(READ_ONCE(t->canary), TC_POISON);
		}
	}
	KT_EXPECT_EQ(atomic_read(&sm_counters.clients), before);
	kt_diag("churn: 2 writers x %u iterations, %u registrations, %u device syncs, %u cpus",
		churn_iters, ch[0].used + ch[1].used, ch[2].used,
		num_online_cpus());
out:
	kfree(ch[0].pool);
	kfree(ch[1].pool);
}

/* ---- device removal during a sync storm (two steps) ---- */

#define STORM_N 32

static struct {
	char dev[IB_DEVICE_NAME_MAX];
	struct tc *t;
	int n;
	atomic_t stop;
	atomic_t running;
	atomic_t syncs_ok, syncs_enodev, syncs_other;
	atomic_t regs_ok, regs_enodev, regs_other;
	struct completion done[3];
	int before;
	bool active;
} storm;

static int storm_syncer(void *arg)
{
	struct completion *done = arg;
	struct ib_device *ibdev;
	int ret;

	while (!atomic_read(&storm.stop)) {
		ibdev = ib_device_get_by_name(storm.dev, RDMA_DRIVER_UNKNOWN);
		if (!ibdev)
			break;		/* gone: the storm is over */
		ret = ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					      NULL);
		ib_device_put(ibdev);
		if (!ret)
			atomic_inc(&storm.syncs_ok);
		else if (ret == -ENODEV)
			atomic_inc(&storm.syncs_enodev);
		else
			atomic_inc(&storm.syncs_other);
		cond_resched();
	}
	complete(done);
	return 0;
}

static int storm_registrar(void *arg)
{
	struct completion *done = arg;
	struct ib_sync_mem_client *c;
	struct ib_device *ibdev;
	struct tc *t = tc_alloc(1);

	while (t && !atomic_read(&storm.stop)) {
		ibdev = ib_device_get_by_name(storm.dev, RDMA_DRIVER_UNKNOWN);
		if (!ibdev)
			break;
		c = tc_register(ibdev, t, 0);
		ib_device_put(ibdev);
		if (IS_ERR(c)) {
			if (PTR_ERR(c) == -ENODEV)
				atomic_inc(&storm.regs_enodev);
			else
				atomic_inc(&storm.regs_other);
			continue;
		}
		atomic_inc(&storm.regs_ok);
		ib_sync_mem_unregister(c);
		if (atomic_read(&t->releases) != 1)
			atomic_inc(&storm.regs_other);
		/* Reuse the private data: it was released, rearm it. */
		atomic_set(&t->releases, 0);
		atomic_set(&t->invalidates, 0);
		WRITE_ONCE(t->canary, TC_LIVE);
		cond_resched();
	}
	kfree(t);
	complete(done);
	return 0;
}

static int storm_start(const char *name)
{
	struct ib_device *ibdev;
	int i;

	if (storm.active)
		return -EBUSY;
	memset(&storm, 0, sizeof(storm));
	strscpy(storm.dev, name, sizeof(storm.dev));
	storm.before = atomic_read(&sm_counters.clients);
	ibdev = ib_device_get_by_name(storm.dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return -ENODEV;
	storm.t = tc_alloc(STORM_N);
	if (!storm.t) {
		ib_device_put(ibdev);
		return -ENOMEM;
	}
	for (i = 0; i < STORM_N; i++) {
		storm.t[i].sleep_us = 200;
		if (IS_ERR(tc_register(ibdev, &storm.t[i], 0)))
			break;
	}
	storm.n = i;
	ib_device_put(ibdev);

	for (i = 0; i < 3; i++) {
		init_completion(&storm.done[i]);
		if (IS_ERR(kthread_run(i < 2 ? storm_syncer : storm_registrar,
				       &storm.done[i], "kt_storm/%d", i)))
			complete(&storm.done[i]);
	}
	storm.active = true;
	return 0;
}

static void test_storm_check(void)
{
	int i;

	if (!storm.active) {
		kt_fail++;
		kt_diag("storm_check without storm_start");
		return;
	}
	/* The device is gone: the threads stop by themselves. */
	for (i = 0; i < 3; i++) {
		if (!wait_for_completion_timeout(&storm.done[i], 60 * HZ)) {
			kt_fail++;
			kt_diag("storm thread %d still running after 60 s", i);
			atomic_set(&storm.stop, 1);
			wait_for_completion(&storm.done[i]);
		}
	}
	KT_EXPECT_EQ(storm.n, STORM_N);
	KT_EXPECT(atomic_read(&storm.syncs_ok) > 0);
	KT_EXPECT_EQ(atomic_read(&storm.syncs_other), 0);
	KT_EXPECT_EQ(atomic_read(&storm.regs_other), 0);
	for (i = 0; i < storm.n; i++) {
		struct tc *t = &storm.t[i];

		/* Each was invalidated exactly once and not synced after. */
		KT_EXPECT_EQ(atomic_read(&t->invalidates), 1);
		KT_EXPECT_EQ(atomic_read(&t->after_inval), 0);
		KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_CPU, 0),
			     -ENODEV);
		/* The owner still unregisters its orphaned client. */
		ib_sync_mem_unregister(t->client);
		KT_EXPECT_EQ(atomic_read(&t->releases), 1);
	}
	KT_EXPECT_EQ(atomic_read(&sm_counters.clients), storm.before);
	kt_diag("storm: %d clients, %d syncs ok, %d -ENODEV, %d registrations",
		storm.n, atomic_read(&storm.syncs_ok),
		atomic_read(&storm.syncs_enodev), atomic_read(&storm.regs_ok));
	kfree(storm.t);
	storm.active = false;
}

/* ---- runner ---- */

struct kt_case {
	const char *name;
	void (*fn)(struct ib_device *ibdev);
};

static const struct kt_case kt_cases[] = {
	{ "register_unregister", test_register_unregister },
	{ "bad_input", test_bad_input },
	{ "fanout_order", test_fanout_order },
	{ "error_propagation", test_error_propagation },
	{ "lazy", test_lazy },
	{ "coalescing", test_coalescing },
	{ "unregister_during_sync", test_unregister_during_sync },
	{ "module_refcount", test_module_refcount },
	{ "invalidate_memory", test_invalidate_memory },
	{ "churn", test_churn },
};

static void kt_report(const char *name)
{
	int bad = atomic_xchg(&kt_bad, 0);

	if (bad) {
		kt_fail++;
		kt_diag("%d poisoned or misplaced callbacks", bad);
	}
	seq_buf_printf(&kt_out, "%sok %u %s\n", kt_fail ? "not " : "",
		       ++kt_num, name);
}

static int kt_run(const char *cmd)
{
	struct ib_device *ibdev;
	int i, ret = 0;

	kt_fail = 0;
	atomic_set(&kt_bad, 0);
	if (str_has_prefix(cmd, "storm_start ")) {
		ret = storm_start(cmd + strlen("storm_start "));
		if (ret) {
			kt_fail++;
			kt_diag("storm_start: %d", ret);
			kt_report("device_removal_storm");
		}
		return 0;
	}
	if (!strcmp(cmd, "storm_check")) {
		test_storm_check();
		kt_report("device_removal_storm");
		return 0;
	}

	for (i = 0; i < ARRAY_SIZE(kt_cases); i++)
		if (!strcmp(cmd, kt_cases[i].name))
			break;
	if (i == ARRAY_SIZE(kt_cases))
		return -ENOENT;

	ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev) {
		kt_fail++;
		kt_diag("no RDMA device %s", dev);
	} else {
		kt_cases[i].fn(ibdev);
		ib_device_put(ibdev);
	}
	kt_report(kt_cases[i].name);
	return ret;
}

static ssize_t kt_run_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char cmd[64];
	int ret;

	if (count >= sizeof(cmd))
		return -E2BIG;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	strim(cmd);

	mutex_lock(&kt_lock);
	ret = kt_run(strim(cmd));
	mutex_unlock(&kt_lock);
	return ret ?: count;
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

static struct dentry *kt_root;

static int __init kt_init(void)
{
	kt_buf = kvmalloc(KT_BUF_SIZE, GFP_KERNEL);
	if (!kt_buf)
		return -ENOMEM;
	seq_buf_init(&kt_out, kt_buf, KT_BUF_SIZE);
	kt_root = debugfs_create_dir("ib_sync_mem_test", NULL);
	debugfs_create_file("run", 0200, kt_root, NULL, &kt_run_fops);
	debugfs_create_file("results", 0444, kt_root, NULL, &kt_results_fops);
	debugfs_create_file("list", 0444, kt_root, NULL, &kt_list_fops);
	return 0;
}

static void __exit kt_exit(void)
{
	debugfs_remove_recursive(kt_root);
	if (storm.active) {
		atomic_set(&storm.stop, 1);
		/* storm_check never ran: its threads may still go on. */
		WARN_ON(1);
	}
	kvfree(kt_buf);
}

module_init(kt_init);
module_exit(kt_exit);

MODULE_AUTHOR("syncmem developers");
MODULE_DESCRIPTION("In-kernel KTAP tests of ib_sync_mem");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IB_SYNC_MEM_INTERNAL);
