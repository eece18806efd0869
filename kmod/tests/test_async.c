// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: asynchronous syncs (ib_sync_mem_sync_async(),
 * ib_sync_mem_sync_device_async()). Every fence signals exactly once, with
 * the sync's result: counted by the registry's fences_pending, which a
 * fence never signalled leaves up and one signalled twice takes down
 * twice; each case checks it comes back to where it was, exactly.
 */
#include <linux/dma-fence.h>

#include "sync_mem_test.h"

static void ka_put(struct dma_fence *f)
{
	if (!IS_ERR_OR_NULL(f))
		dma_fence_put(f);
}

void test_async(struct ib_device *ibdev)
{
	int pending = atomic_read(&sm_counters.fences_pending);
	struct dma_fence *f, *g, *in;
	struct ib_sync_mem_client *c;
	struct tc *t = tc_alloc(1);

	if (!t || IS_ERR(tc_register(ibdev, t, 0))) {
		kt_fail++;
		goto out;
	}
	c = t->client;

	/* Bad input is refused at once: no fence, nothing runs. */
	f = ib_sync_mem_sync_async(c, 0, 0, 0, 0, NULL);
	KT_EXPECT_EQ(PTR_ERR_OR_ZERO(f), -EINVAL);
	ka_put(f);
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 64, 0, 0, NULL);
	KT_EXPECT_EQ(PTR_ERR_OR_ZERO(f), -EINVAL);
	ka_put(f);
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_INBOUND, 0, 0, 0, NULL);
	KT_EXPECT_EQ(PTR_ERR_OR_ZERO(f), -EOPNOTSUPP);
	ka_put(f);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 0);

	/* A sync that succeeds: status 1, one ->sync. */
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, NULL);
	KT_EXPECT(!IS_ERR(f));
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), 1);
	ka_put(f);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);

	/* A sync that fails: its errno is the fence's. */
	t->fail = -EIO;
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_CPU, 0, 0, 0, NULL);
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), -EIO);
	ka_put(f);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 2);
	t->fail = 0;

	/* An in-fence: nothing runs before it signals. */
	in = kt_fence_new();
	if (!in) {
		kt_fail++;
		goto unreg;
	}
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, in);
	KT_EXPECT(!IS_ERR(f));
	if (!IS_ERR(f)) {
		KT_EXPECT(!dma_fence_is_signaled(f));
		KT_EXPECT_EQ(atomic_read(&t->syncs), 2);
		kt_fence_signal(in, 0);
		KT_EXPECT_EQ(kt_fence_wait(f), 1);
		KT_EXPECT_EQ(atomic_read(&t->syncs), 3);
	}
	ka_put(f);
	dma_fence_put(in);

	/* An in-fence that failed: its error, and no ->sync. */
	in = kt_fence_new();
	if (!in) {
		kt_fail++;
		goto unreg;
	}
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, in);
	if (!IS_ERR(f)) {
		kt_fence_signal(in, -EPIPE);
		KT_EXPECT_EQ(kt_fence_wait(f), -EPIPE);
	}
	ka_put(f);
	dma_fence_put(in);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 3);

	/*
	 * Unregistered while it waits for its in-fence: it signals -ENODEV
	 * before the unregister returns, once, without waiting for the
	 * in-fence (which may never signal). A second one, chained on the
	 * first, gets the first's error and runs nothing.
	 */
	in = kt_fence_new();
	if (!in) {
		kt_fail++;
		goto unreg;
	}
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, in);
	g = IS_ERR(f) ? f :
	    ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_CPU, 0, 0, 0, f);
	KT_EXPECT(!IS_ERR(g));
	tc_unregister(t);
	if (!IS_ERR(f)) {
		KT_EXPECT(dma_fence_is_signaled(f));
		KT_EXPECT_EQ(dma_fence_get_status(f), -ENODEV);
	}
	kt_fence_signal(in, 0);
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), -ENODEV);
	if (!IS_ERR(g))
		KT_EXPECT_EQ(kt_fence_wait(g), -ENODEV);
	ka_put(g);
	ka_put(f);
	dma_fence_put(in);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 3);
	/* The jobs drop their client after the signal. */
	KT_EXPECT_EQ(tc_wait_release(t), 1);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending);
	goto out;
unreg:
	tc_unregister(t);
out:
	tc_free(t);
}

/*
 * A client whose memory goes (ib_sync_mem_invalidate()) while one of its
 * asynchronous syncs waits for an in-fence: the fence signals with what a
 * sync of the client now returns (-ENXIO) before the invalidation
 * returns, without waiting for the in-fence; the job lets its client go.
 */
void test_async_invalidate(struct ib_device *ibdev)
{
	int pending = atomic_read(&sm_counters.fences_pending);
	struct dma_fence *f = ERR_PTR(-ENOMEM), *in;
	struct tc *t = tc_alloc(1);

	if (!t || IS_ERR(tc_register(ibdev, t, 0))) {
		kt_fail++;
		tc_free(t);
		return;
	}
	in = kt_fence_new();
	if (in)
		f = ib_sync_mem_sync_async(t->client, IB_SYNC_MEM_TO_CPU, 0, 0,
					   0, in);
	KT_EXPECT(!IS_ERR(f));
	KT_EXPECT_EQ(ib_sync_mem_invalidate(kt_owner, t->client,
					    IB_SYNC_MEM_INVAL_MEMORY), 0);
	if (!IS_ERR(f)) {
		KT_EXPECT(dma_fence_is_signaled(f));
		KT_EXPECT_EQ(dma_fence_get_status(f), -ENXIO);
		dma_fence_put(f);
	}
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending);
	if (in) {
		kt_fence_signal(in, 0);
		dma_fence_put(in);
	}
	KT_EXPECT_EQ(atomic_read(&t->syncs), 0);
	KT_EXPECT_EQ(atomic_read(&t->invalidates), 1);
	tc_unregister(t);
	KT_EXPECT_EQ(tc_wait_release(t), 1);
	tc_free(t);
}

#define KA_DEV_N	3

void test_async_device(struct ib_device *ibdev)
{
	int pending = atomic_read(&sm_counters.fences_pending);
	struct dma_fence *f;
	struct tc *t = tc_alloc(KA_DEV_N);
	int i;

	if (!t || !tc_register_all(ibdev, t, KA_DEV_N, 0)) {
		kt_fail++;
		tc_free(t);
		return;
	}
	f = ib_sync_mem_sync_device_async(ibdev, 0, 0, NULL);
	KT_EXPECT_EQ(PTR_ERR_OR_ZERO(f), -EINVAL);
	ka_put(f);

	/* Every client once; the first client error is the fence's. */
	t[1].fail = -EIO;
	f = ib_sync_mem_sync_device_async(ibdev, IB_SYNC_MEM_TO_DEVICE, 0, NULL);
	KT_EXPECT(!IS_ERR(f));
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), -EIO);
	ka_put(f);
	for (i = 0; i < KA_DEV_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), 1);

	t[1].fail = 0;
	f = ib_sync_mem_sync_device_async(ibdev, IB_SYNC_MEM_TO_CPU, 0, NULL);
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), 1);
	ka_put(f);
	for (i = 0; i < KA_DEV_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), 2);
	tc_unregister_all(t, KA_DEV_N);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending);
	tc_free(t);
}

#define KA_BATCH_N	3

/* A batch: every entry once, in order; the first error is the fence's. */
void test_async_batch(struct ib_device *ibdev)
{
	int pending = atomic_read(&sm_counters.fences_pending);
	struct ib_sync_mem_batch_entry e[KA_BATCH_N] = {};
	struct dma_fence *f;
	struct tc *t = tc_alloc(KA_BATCH_N);
	int i;

	if (!t || !tc_register_all(ibdev, t, KA_BATCH_N, 0)) {
		kt_fail++;
		tc_free(t);
		return;
	}
	for (i = 0; i < KA_BATCH_N; i++)
		e[i].client = t[i].client;

	f = ib_sync_mem_sync_many_async(e, 0, IB_SYNC_MEM_TO_DEVICE, 0, NULL);
	KT_EXPECT_EQ(PTR_ERR_OR_ZERO(f), -EINVAL);
	ka_put(f);
	e[2].offset = 64;	/* an offset without a length */
	f = ib_sync_mem_sync_many_async(e, KA_BATCH_N, IB_SYNC_MEM_TO_DEVICE,
					0, NULL);
	KT_EXPECT_EQ(PTR_ERR_OR_ZERO(f), -EINVAL);
	ka_put(f);
	e[2].offset = 0;
	for (i = 0; i < KA_BATCH_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), 0);

	/* The second and third fail: the second's errno is the fence's. */
	t[1].fail = -EIO;
	t[2].fail = -EPIPE;
	f = ib_sync_mem_sync_many_async(e, KA_BATCH_N, IB_SYNC_MEM_TO_DEVICE,
					0, NULL);
	KT_EXPECT(!IS_ERR(f));
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), -EIO);
	ka_put(f);
	for (i = 0; i < KA_BATCH_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), 1);
	t[1].fail = 0;
	t[2].fail = 0;
	f = ib_sync_mem_sync_many_async(e, KA_BATCH_N, IB_SYNC_MEM_TO_CPU, 0,
					NULL);
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), 1);
	ka_put(f);
	for (i = 0; i < KA_BATCH_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), 2);
	tc_unregister_all(t, KA_BATCH_N);
	/* The job let its references go: each client released once. */
	for (i = 0; i < KA_BATCH_N; i++)
		KT_EXPECT_EQ(tc_wait_release(&t[i]), 1);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending);
	tc_free(t);
}

/*
 * Batches waiting for an in-fence that never signals: the invalidation
 * of one of a batch's clients signals that batch (its -ENXIO) before it
 * returns, the unregister of another signals the batch it is in
 * (-ENODEV); a batch with neither client waits on; no entry of any is
 * synced, and the jobs let their clients go.
 */
void test_async_batch_gone(struct ib_device *ibdev)
{
	int pending = atomic_read(&sm_counters.fences_pending);
	struct ib_sync_mem_batch_entry e[2] = {};
	struct dma_fence *a = ERR_PTR(-ENOMEM), *b = ERR_PTR(-ENOMEM);
	struct dma_fence *c = ERR_PTR(-ENOMEM), *in;
	struct tc *t = tc_alloc(4);
	int i;

	if (!t || !tc_register_all(ibdev, t, 4, 0)) {
		kt_fail++;
		tc_free(t);
		return;
	}
	in = kt_fence_new();
	if (in) {
		/* a: t0 and t1; b: t2 and t0; c: t3 alone. */
		e[0].client = t[0].client;
		e[1].client = t[1].client;
		a = ib_sync_mem_sync_many_async(e, 2, IB_SYNC_MEM_TO_CPU, 0, in);
		e[0].client = t[2].client;
		e[1].client = t[0].client;
		b = ib_sync_mem_sync_many_async(e, 2, IB_SYNC_MEM_TO_CPU, 0, in);
		e[0].client = t[3].client;
		c = ib_sync_mem_sync_many_async(e, 1, IB_SYNC_MEM_TO_CPU, 0, in);
	}
	KT_EXPECT(!IS_ERR(a) && !IS_ERR(b) && !IS_ERR(c));
	KT_EXPECT_EQ(ib_sync_mem_invalidate(kt_owner, t[1].client,
					    IB_SYNC_MEM_INVAL_MEMORY), 0);
	if (!IS_ERR(a)) {
		KT_EXPECT(dma_fence_is_signaled(a));
		KT_EXPECT_EQ(dma_fence_get_status(a), -ENXIO);
	}
	if (!IS_ERR(b))
		KT_EXPECT(!dma_fence_is_signaled(b));
	tc_unregister(&t[2]);
	if (!IS_ERR(b)) {
		KT_EXPECT(dma_fence_is_signaled(b));
		KT_EXPECT_EQ(dma_fence_get_status(b), -ENODEV);
	}
	if (!IS_ERR(c))
		KT_EXPECT(!dma_fence_is_signaled(c));
	/* c alone is pending; the others let their clients go. */
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending + 1);
	KT_EXPECT_EQ(tc_wait_release(&t[2]), 1);
	if (in) {
		kt_fence_signal(in, 0);
		dma_fence_put(in);
	}
	if (!IS_ERR(c))
		KT_EXPECT_EQ(kt_fence_wait(c), 1);
	ka_put(c);
	ka_put(b);
	ka_put(a);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending);
	for (i = 0; i < 4; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), i == 3);
	tc_unregister(&t[0]);
	tc_unregister(&t[1]);
	tc_unregister(&t[3]);
	tc_free(t);
}

/* ---- removal while syncs wait for their in-fence (two steps) ---- */

static struct {
	struct tc *t;
	struct dma_fence *in;
	struct dma_fence *f;	/* one client's sync */
	struct dma_fence *d;	/* the device's */
	struct dma_fence *b;	/* a batch of that client */
	int pending;
	bool active;
} async_dev;

/*
 * A client's sync, its device's and a batch of the client wait for an
 * in-fence that signals only at async_dev_check: the device's removal,
 * between the two steps, must signal all three with -ENODEV, before it
 * returns, without ->sync.
 */
int async_dev_start(const char *name)
{
	struct ib_device *ibdev = ib_sync_mem_device_get(name);
	int ret = -ENOMEM;

	if (!ibdev)
		return -ENODEV;
	if (async_dev.active) {
		ib_device_put(ibdev);
		return -EBUSY;
	}
	async_dev.pending = atomic_read(&sm_counters.fences_pending);
	async_dev.t = tc_alloc(1);
	async_dev.in = kt_fence_new();
	if (!async_dev.t || !async_dev.in)
		goto err;
	if (IS_ERR(tc_register(ibdev, async_dev.t, 0))) {
		ret = -EIO;
		goto err;
	}
	async_dev.f = ib_sync_mem_sync_async(async_dev.t->client,
					     IB_SYNC_MEM_TO_DEVICE, 0, 0, 0,
					     async_dev.in);
	async_dev.d = ib_sync_mem_sync_device_async(ibdev, IB_SYNC_MEM_TO_CPU,
						    0, async_dev.in);
	async_dev.b = ib_sync_mem_sync_many_async(&(struct ib_sync_mem_batch_entry){
							.client = async_dev.t->client },
						  1, IB_SYNC_MEM_TO_CPU, 0,
						  async_dev.in);
	async_dev.active = true;
	ib_device_put(ibdev);
	return IS_ERR(async_dev.f) || IS_ERR(async_dev.d) ||
	       IS_ERR(async_dev.b) ? -EIO : 0;
err:
	if (async_dev.in) {
		kt_fence_signal(async_dev.in, 0);
		dma_fence_put(async_dev.in);
	}
	tc_free(async_dev.t);
	ib_device_put(ibdev);
	return ret;
}

void test_async_dev_check(void)
{
	struct tc *t = async_dev.t;

	if (!async_dev.active) {
		kt_fail++;
		kt_diag("async_dev_check without async_dev_start");
		return;
	}
	/* Signalled by the removal, before it returned: no wait here. */
	if (!IS_ERR(async_dev.f)) {
		KT_EXPECT_EQ(dma_fence_get_status(async_dev.f), -ENODEV);
		dma_fence_put(async_dev.f);
	}
	if (!IS_ERR(async_dev.d)) {
		KT_EXPECT_EQ(dma_fence_get_status(async_dev.d), -ENODEV);
		dma_fence_put(async_dev.d);
	}
	if (!IS_ERR(async_dev.b)) {
		KT_EXPECT_EQ(dma_fence_get_status(async_dev.b), -ENODEV);
		dma_fence_put(async_dev.b);
	}
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending),
		     async_dev.pending);
	kt_fence_signal(async_dev.in, 0);
	dma_fence_put(async_dev.in);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 0);
	KT_EXPECT_EQ(atomic_read(&t->invalidates), 1);
	tc_unregister(t);
	KT_EXPECT_EQ(tc_wait_release(t), 1);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending),
		     async_dev.pending);
	tc_free(t);
	async_dev.active = false;
}

/* Client @c's counters: its syncs and errors. */
static void ka_counts(struct ib_sync_mem_client *c, u64 *syncs, u64 *errors)
{
	struct sm_stats_sum sum;

	sm_stats_sum(c->stats, &sum);
	*syncs = sum.syncs;
	*errors = sum.errors;
}

/*
 * A kind with its own engine (->sync_async): a whole, eager sync starts
 * there, in the submitter, and its fence signals when the kind's does, in
 * that call, with its error; the client counts as in a ->sync meanwhile,
 * and the sync is counted like one. A refusal of the kind is the fence's
 * error at once. After an in-fence, the engine starts once it signalled.
 * A lazy client and a range take the ->sync path.
 */
void test_async_kind(struct ib_device *ibdev)
{
	int pending = atomic_read(&sm_counters.fences_pending);
	struct dma_fence *f = NULL, *in = NULL;
	struct ib_sync_mem_client *c;
	struct tc *t = tc_alloc(2);
	u64 syncs, errors;

	if (!t)
		return;
	if (IS_ERR(tc_register_ops(ibdev, &t[0], &tc_async_ops, 0)) ||
	    IS_ERR(tc_register_ops(ibdev, &t[1], &tc_async_ops,
				   IB_SYNC_MEM_F_LAZY))) {
		kt_fail++;
		kt_diag("register: %ld %ld", PTR_ERR(t[0].client),
			PTR_ERR(t[1].client));
		goto out;
	}
	c = t[0].client;

	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, NULL);
	if (IS_ERR(f) || !t[0].engine) {
		kt_fail++;
		kt_diag("sync_async: %ld, engine %p", PTR_ERR(f), t[0].engine);
		goto out;
	}
	/* Started on the engine, here: no ->sync; the client is busy. */
	KT_EXPECT_EQ(atomic_read(&t[0].async_calls), 1);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 0);
	KT_EXPECT(!dma_fence_is_signaled(f));
	KT_EXPECT_EQ(atomic_read(&c->busy), 1);
	ka_counts(c, &syncs, &errors);
	KT_EXPECT_EQ(syncs, 0);
	/* The engine's signal signals it, in that call, counted. */
	kt_fence_signal(t[0].engine, 0);
	KT_EXPECT(dma_fence_is_signaled(f));
	KT_EXPECT_EQ(dma_fence_get_status(f), 1);
	KT_EXPECT_EQ(atomic_read(&c->busy), 0);
	ka_counts(c, &syncs, &errors);
	KT_EXPECT_EQ(syncs, 1);
	KT_EXPECT_EQ(errors, 0);
	dma_fence_put(f);

	/* The engine's error is the fence's and the client's. */
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_CPU, 0, 0, 0, NULL);
	if (!IS_ERR(f)) {
		KT_EXPECT_EQ(atomic_read(&t[0].async_calls), 2);
		kt_fence_signal(t[0].engine, -EIO);
		KT_EXPECT(dma_fence_is_signaled(f));
		KT_EXPECT_EQ(dma_fence_get_status(f), -EIO);
		KT_EXPECT_EQ(ib_sync_mem_client_last_err(c), -EIO);
		ka_counts(c, &syncs, &errors);
		KT_EXPECT_EQ(syncs, 2);
		KT_EXPECT_EQ(errors, 1);
	}
	ka_put(f);

	/* The engine refuses: the fence carries it at once. */
	t[0].async_fail = -ENOSPC;
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, NULL);
	if (!IS_ERR(f)) {
		KT_EXPECT(dma_fence_is_signaled(f));
		KT_EXPECT_EQ(dma_fence_get_status(f), -ENOSPC);
	}
	ka_put(f);
	KT_EXPECT_EQ(atomic_read(&t[0].async_calls), 3);
	KT_EXPECT_EQ(atomic_read(&c->busy), 0);
	ka_counts(c, &syncs, &errors);
	KT_EXPECT_EQ(errors, 2);
	t[0].async_fail = 0;

	/* After an in-fence: the engine starts once it signalled. */
	in = kt_fence_new();
	f = in ? ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, in) :
	    ERR_PTR(-ENOMEM);
	if (!IS_ERR(f)) {
		KT_EXPECT_EQ(atomic_read(&t[0].async_calls), 3);
		kt_fence_signal(in, 0);
		/* Acquire: the engine the counted call published. */
		KT_EXPECT(KT_WAIT(atomic_read_acquire(&t[0].async_calls) == 4,
				  60));
		KT_EXPECT(!dma_fence_is_signaled(f));
		kt_fence_signal(READ_ONCE(t[0].engine), 0);
		KT_EXPECT_EQ(kt_fence_wait(f), 1);
	} else {
		kt_fail++;
	}
	ka_put(f);

	/* A range, and a lazy client: ->sync from the worker. */
	f = ib_sync_mem_sync_async(c, IB_SYNC_MEM_TO_DEVICE, 0, 64, 0, NULL);
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), 1);
	ka_put(f);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 1);
	ib_sync_mem_mark_dirty(t[1].client, IB_SYNC_MEM_TO_DEVICE);
	f = ib_sync_mem_sync_async(t[1].client, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0,
				   NULL);
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), 1);
	ka_put(f);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 1);
	KT_EXPECT_EQ(atomic_read(&t[1].async_calls), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].async_calls), 4);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending);
out:
	if (in)
		dma_fence_put(in);
	if (!IS_ERR_OR_NULL(t[0].client))
		tc_unregister(&t[0]);
	if (!IS_ERR_OR_NULL(t[1].client))
		tc_unregister(&t[1]);
	if (t[0].engine)
		dma_fence_put(t[0].engine);
	tc_free(t);
}

/* ---- removal while a kind's engine syncs a client (three steps) ---- */

static struct {
	struct tc *t;
	struct dma_fence *f;
	int pending;
	int inval_before;	/* ->invalidate calls before the engine ended */
	bool signalled_before;	/* the sync's fence signalled before that */
	bool active;
} kind_rm;

/*
 * A client of a kind with its own engine (->sync_async), its sync running
 * there (the engine's fence is the test's to signal): the device's removal
 * must not call ->invalidate until that sync is over, as unregister and
 * ib_sync_mem_invalidate() do not (the header's word: ->invalidate never
 * runs beside a sync; a real engine would be unmapped under its DMA).
 */
int kind_removal_start(const char *name)
{
	struct ib_device *ibdev = ib_sync_mem_device_get(name);
	int ret = -EIO;

	if (!ibdev)
		return -ENODEV;
	if (kind_rm.active) {
		ib_device_put(ibdev);
		return -EBUSY;
	}
	kind_rm.pending = atomic_read(&sm_counters.fences_pending);
	kind_rm.t = tc_alloc(1);
	if (!kind_rm.t) {
		ret = -ENOMEM;
		goto out;
	}
	if (IS_ERR(tc_register_ops(ibdev, kind_rm.t, &tc_async_ops, 0)))
		goto err;
	kind_rm.f = ib_sync_mem_sync_async(kind_rm.t->client,
					   IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, NULL);
	if (IS_ERR(kind_rm.f) || !kind_rm.t->engine) {
		if (!IS_ERR(kind_rm.f))
			dma_fence_put(kind_rm.f);
		tc_unregister(kind_rm.t);
		goto err;
	}
	kind_rm.active = true;
	ret = 0;
	goto out;
err:
	tc_free(kind_rm.t);
out:
	ib_device_put(ibdev);
	return ret;
}

/* The removal waits, or has returned: its engine's sync still runs. */
void test_kind_removal_engine(void)
{
	struct tc *t = kind_rm.t;

	if (!kind_rm.active) {
		kt_fail++;
		kt_diag("kind_removal_engine without kind_removal_start");
		return;
	}
	/* Checked by kind_removal_check: a step reports no result. */
	kind_rm.signalled_before = dma_fence_is_signaled(kind_rm.f);
	kind_rm.inval_before = atomic_read(&t->invalidates);
	/* The engine's sync ends: the removal may go on. */
	kt_fence_signal(t->engine, 0);
}

/* The removal returned: ->invalidate once, after the engine's sync. */
void test_kind_removal_check(void)
{
	struct tc *t = kind_rm.t;

	if (!kind_rm.active) {
		kt_fail++;
		kt_diag("kind_removal_check without kind_removal_start");
		return;
	}
	KT_EXPECT(!kind_rm.signalled_before);
	KT_EXPECT_EQ(kind_rm.inval_before, 0);
	KT_EXPECT_EQ(kt_fence_wait(kind_rm.f), 1);
	dma_fence_put(kind_rm.f);
	KT_EXPECT_EQ(atomic_read(&t->invalidates), 1);
	KT_EXPECT_EQ(atomic_read(&t->client->busy), 0);
	tc_unregister(t);
	KT_EXPECT_EQ(tc_wait_release(t), 1);
	dma_fence_put(t->engine);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending),
		     kind_rm.pending);
	tc_free(t);
	kind_rm.active = false;
}

/* ---- removal while a sync waits for a fence only it cancels (two steps) */

static struct {
	struct tc *t;
	struct dma_fence *in;
	struct dma_fence *j;
	struct kt_caller k;
	int pending;
	bool active;
} fence_rm;

/*
 * Client Y's asynchronous sync J waits for an in-fence that signals only
 * at fence_removal_check; client X's blocking sync (a kthread, 60 s
 * timeout) waits for J in its ->sync, as a dma-buf client whose
 * reservation holds J's fence does. The device's removal must cancel J
 * (-ENODEV) before it waits for the syncs in flight: X's ->sync then
 * ends with J's error, not at its own deadline (-ETIMEDOUT).
 */
int fence_removal_start(const char *name)
{
	struct ib_device *ibdev = ib_sync_mem_device_get(name);
	struct tc *t;
	int ret = -ENOMEM;

	if (!ibdev)
		return -ENODEV;
	if (fence_rm.active) {
		ib_device_put(ibdev);
		return -EBUSY;
	}
	fence_rm.pending = atomic_read(&sm_counters.fences_pending);
	t = tc_alloc(2);
	fence_rm.t = t;
	fence_rm.in = kt_fence_new();
	if (!t || !fence_rm.in)
		goto err;
	ret = -EIO;
	if (!tc_register_all(ibdev, t, 2, 0))
		goto err;
	fence_rm.j = ib_sync_mem_sync_async(t[1].client, IB_SYNC_MEM_TO_DEVICE,
					    0, 0, 0, fence_rm.in);
	if (IS_ERR(fence_rm.j))
		goto err_unreg;
	t[0].wait_fence = fence_rm.j;
	fence_rm.k = (struct kt_caller){
		.client = t[0].client,
		.dir = IB_SYNC_MEM_TO_CPU,
		.timeout_ms = 60000,
	};
	if (!kt_start(kt_sync_client_fn, &fence_rm.k))
		goto err_fence;
	/* X's ->sync waits for J when this returns. */
	if (!wait_for_completion_timeout(&t[0].entered, 60 * HZ))
		kt_diag("X's ->sync was not entered in 60 s");
	fence_rm.active = true;
	ib_device_put(ibdev);
	return 0;
err_fence:
	kt_fence_signal(fence_rm.in, 0);
	dma_fence_put(fence_rm.j);
err_unreg:
	tc_unregister_all(t, 2);
err:
	if (fence_rm.in) {
		kt_fence_signal(fence_rm.in, 0);
		dma_fence_put(fence_rm.in);
	}
	tc_free(t);
	ib_device_put(ibdev);
	return ret;
}

void test_fence_removal_check(void)
{
	struct tc *t = fence_rm.t;

	if (!fence_rm.active) {
		kt_fail++;
		kt_diag("fence_removal_check without fence_removal_start");
		return;
	}
	/* J was cancelled by the removal; X's sync ended with its error. */
	KT_EXPECT(dma_fence_is_signaled(fence_rm.j));
	KT_EXPECT_EQ(dma_fence_get_status(fence_rm.j), -ENODEV);
	wait_for_completion(&fence_rm.k.done);
	KT_EXPECT_EQ(fence_rm.k.ret, -ENODEV);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].invalidates), 1);
	KT_EXPECT_EQ(atomic_read(&t[1].invalidates), 1);
	kt_fence_signal(fence_rm.in, 0);
	dma_fence_put(fence_rm.in);
	t[0].wait_fence = NULL;
	dma_fence_put(fence_rm.j);
	tc_unregister_all(t, 2);
	KT_EXPECT_EQ(tc_wait_release(&t[0]), 1);
	KT_EXPECT_EQ(tc_wait_release(&t[1]), 1);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending),
		     fence_rm.pending);
	tc_free(t);
	fence_rm.active = false;
}

/*
 * ->deps is a callback like the others: never called once the client's
 * unregister returned (tc_gone() counts such a call as late), also not
 * by the holder of a reference that submits an asynchronous sync then.
 * That sync signals -ENODEV and runs nothing.
 */
void test_async_deps_gone(struct ib_device *ibdev)
{
	int pending = atomic_read(&sm_counters.fences_pending);
	struct ib_sync_mem_client *held;
	struct dma_fence *f;
	struct tc *t = tc_alloc(1);

	if (!t || IS_ERR(tc_register_ops(ibdev, t, &tc_deps_ops, 0))) {
		kt_fail++;
		goto out;
	}
	f = ib_sync_mem_sync_async(t->client, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, NULL);
	KT_EXPECT(!IS_ERR(f));
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), 1);
	ka_put(f);
	KT_EXPECT_EQ(atomic_read(&t->deps_calls), 1);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);

	held = ib_sync_mem_get(t->client);
	tc_unregister(t);
	f = ib_sync_mem_sync_async(held, IB_SYNC_MEM_TO_DEVICE, 0, 0, 0, NULL);
	KT_EXPECT(!IS_ERR(f));
	if (!IS_ERR(f))
		KT_EXPECT_EQ(kt_fence_wait(f), -ENODEV);
	ka_put(f);
	KT_EXPECT_EQ(atomic_read(&t->deps_calls), 1);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);
	ib_sync_mem_put(held);
	KT_EXPECT_EQ(tc_wait_release(t), 1);
	KT_EXPECT_EQ(atomic_read(&sm_counters.fences_pending), pending);
out:
	tc_free(t);
}
