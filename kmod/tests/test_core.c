// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: the registry's basic cases. Registration and lookup,
 * bad input, fan-out order and errors, lazy clients, coalescing,
 * unregister during a sync, module references, memory invalidation, churn
 * on two CPUs, and a device removed during a sync storm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "sync_mem_test.h"

void test_register_unregister(struct ib_device *ibdev)
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
	KT_EXPECT(ib_sync_mem_client_priv(kt_owner, c) == t);
	KT_EXPECT(!strcmp(ib_sync_mem_client_name(c), "kt"));
	KT_EXPECT_EQ(atomic_read(&sm_counters.clients), before + 1);

	found = ib_sync_mem_lookup(kt_owner, id);
	KT_EXPECT(found == c);
	if (found)
		ib_sync_mem_put(found);

	KT_EXPECT_EQ(ib_sync_mem_sync(c, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);

	tc_unregister(t);
	KT_EXPECT(!ib_sync_mem_lookup(kt_owner, id));
	KT_EXPECT_EQ(atomic_read(&t->releases), 1);
	KT_EXPECT_EQ(atomic_read(&t->invalidates), 0);
	KT_EXPECT_EQ(atomic_read(&sm_counters.clients), before);
out:
	tc_free(t);
}

static int kt_nop_sync(struct ib_sync_mem_client *client,
		       enum ib_sync_mem_dir dir, ktime_t deadline)
{
	return 0;
}

static void kt_nop_release(struct ib_sync_mem_client *client)
{
}

void test_bad_input(struct ib_device *ibdev)
{
	static const struct ib_sync_mem_ops no_sync = { .owner = THIS_MODULE };
	/* ->release without a module reference: it could outlive the module. */
	static const struct ib_sync_mem_ops unpinned_release = {
		.sync = kt_nop_sync, .release = kt_nop_release,
	};
	int clients = atomic_read(&sm_counters.clients);
	int registered = atomic_read(&sm_counters.registered);
	int refs = module_refcount(THIS_MODULE);
	char longname[IB_SYNC_MEM_NAME_MAX + 1];
	struct ib_sync_mem_reg reg = {
		.owner = kt_owner, .name = "kt", .ops = &tc_ops,
	};
	struct tc *t = tc_alloc(1);

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';

	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, NULL)), -EINVAL);
	reg.ops = NULL;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.ops = &no_sync;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.ops = &unpinned_release;
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
		tc_unregister(t);
	reg.name = "kt";
	reg.flags = BIT(31);
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.flags = 0;
	reg.owner = NULL;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(ibdev, &reg)), -EINVAL);
	reg.owner = kt_owner;
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_register(NULL, &reg)), -ENODEV);

	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, 0, 0, NULL), -EINVAL);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, SM_NR_DIRS + 1, 0,
					     NULL), -EINVAL);
	KT_EXPECT(!ib_sync_mem_lookup(kt_owner, 0));
	KT_EXPECT(!ib_sync_mem_lookup(kt_owner, U32_MAX));

	/* Nothing leaked, no reference kept. */
	KT_EXPECT_EQ(atomic_read(&sm_counters.clients), clients);
	KT_EXPECT_EQ(atomic_read(&sm_counters.registered), registered);
	KT_EXPECT_EQ(module_refcount(THIS_MODULE), refs);
	tc_free(t);
}

/* ---- owners ---- */

/* A client of the second owner, kt_other: its own ops and private data. */
struct kt_other_client {
	atomic_t syncs;
	atomic_t releases;
};

static int kt_other_sync(struct ib_sync_mem_client *client,
			 enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct kt_other_client *o = ib_sync_mem_client_priv(kt_other, client);

	atomic_inc(&o->syncs);
	return 0;
}

static void kt_other_release(struct ib_sync_mem_client *client)
{
	struct kt_other_client *o = ib_sync_mem_client_priv(kt_other, client);

	atomic_inc(&o->releases);
}

static const struct ib_sync_mem_ops kt_other_ops = {
	.owner = THIS_MODULE,
	.sync = kt_other_sync,
	.release = kt_other_release,
};

/*
 * Two owners on one device: neither finds, unregisters, invalidates or
 * reads the private data of the other's client (-EPERM, NULL, and the
 * client untouched), and a sync of one owner's clients runs exactly those.
 * Owner names are unique while their owners exist.
 */
void test_owners(struct ib_device *ibdev)
{
	struct kt_other_client o = {};
	struct ib_sync_mem_reg reg = {
		.owner = kt_other, .name = "kt-b", .ops = &kt_other_ops,
		.priv = &o,
	};
	struct ib_sync_mem_client *b, *found, *pair[2];
	struct ib_sync_mem_result res = {};
	struct ib_sync_mem_owner *tmp;
	struct tc *t = tc_alloc(1);
	u32 id_a, id_b;

	if (!t || IS_ERR(tc_register(ibdev, t, 0))) {
		kt_fail++;
		goto out;
	}
	b = ib_sync_mem_register(ibdev, &reg);
	if (IS_ERR(b)) {
		kt_fail++;
		tc_unregister(t);
		goto out;
	}
	id_a = ib_sync_mem_client_id(t->client);
	id_b = ib_sync_mem_client_id(b);
	KT_EXPECT_EQ(atomic_read(&kt_other->clients), 1);

	/* Lookup: another owner's client is not found. */
	KT_EXPECT(!ib_sync_mem_lookup(kt_owner, id_b));
	KT_EXPECT(!ib_sync_mem_lookup(kt_other, id_a));
	found = ib_sync_mem_lookup(kt_other, id_b);
	KT_EXPECT(found == b);
	if (found)
		ib_sync_mem_put(found);

	/* Private data, unregister, invalidate: refused, nothing done. */
	KT_EXPECT(!ib_sync_mem_client_priv(kt_owner, b));
	KT_EXPECT(ib_sync_mem_client_priv(kt_other, b) == &o);
	KT_EXPECT_EQ(ib_sync_mem_unregister(kt_owner, b), -EPERM);
	KT_EXPECT_EQ(ib_sync_mem_invalidate(kt_owner, b,
					    IB_SYNC_MEM_INVAL_MEMORY), -EPERM);
	pair[0] = t->client;
	pair[1] = b;
	KT_EXPECT_EQ(ib_sync_mem_unregister_many(kt_owner, pair, 2), -EPERM);
	KT_EXPECT_EQ(ib_sync_mem_unregister(NULL, b), -EPERM);
	KT_EXPECT_EQ(READ_ONCE(b->state), SM_LIVE);
	KT_EXPECT_EQ(READ_ONCE(t->client->state), SM_LIVE);
	KT_EXPECT_EQ(atomic_read(&o.releases), 0);

	/* A sync of one owner's clients runs those, and only those. */
	KT_EXPECT_EQ(ib_sync_mem_sync_owner(ibdev, kt_other,
					    IB_SYNC_MEM_TO_DEVICE, 0, &res), 0);
	KT_EXPECT_EQ(res.clients, 1);
	KT_EXPECT_EQ(res.skipped, 0);
	KT_EXPECT_EQ(atomic_read(&o.syncs), 1);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 0);
	KT_EXPECT_EQ(ib_sync_mem_sync_owner(ibdev, kt_owner,
					    IB_SYNC_MEM_TO_CPU, 0, &res), 0);
	KT_EXPECT_EQ(res.clients, 1);
	KT_EXPECT_EQ(atomic_read(&o.syncs), 1);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);
	KT_EXPECT_EQ(ib_sync_mem_sync_owner(ibdev, NULL, IB_SYNC_MEM_TO_CPU,
					    0, NULL), -EINVAL);
	KT_EXPECT_EQ(ib_sync_mem_sync_owner(ibdev, kt_owner, SM_NR_DIRS + 1,
					    0, NULL),
		     -EINVAL);
	/* The device pass runs both. */
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     NULL), 0);
	KT_EXPECT_EQ(atomic_read(&o.syncs), 2);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 2);

	KT_EXPECT_EQ(ib_sync_mem_unregister(kt_other, b), 0);
	KT_EXPECT_EQ(atomic_read(&o.releases), 1);
	KT_EXPECT_EQ(atomic_read(&kt_other->clients), 0);
	tc_unregister(t);

	/* Names: unique while the owner exists, free once it is destroyed. */
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_owner_create(THIS_MODULE, "kt-other")),
		     -EEXIST);
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_owner_create(THIS_MODULE, NULL)),
		     -EINVAL);
	KT_EXPECT_EQ(PTR_ERR(ib_sync_mem_owner_create(THIS_MODULE, "")),
		     -EINVAL);
	tmp = ib_sync_mem_owner_create(THIS_MODULE,
				       "0123456789012345678901234567890123");
	KT_EXPECT_EQ(PTR_ERR(tmp), -ENAMETOOLONG);
	tmp = ib_sync_mem_owner_create(THIS_MODULE, "kt-tmp");
	KT_EXPECT(!IS_ERR(tmp));
	if (!IS_ERR(tmp)) {
		KT_EXPECT(!strcmp(ib_sync_mem_owner_name(tmp), "kt-tmp"));
		ib_sync_mem_owner_destroy(tmp);
		tmp = ib_sync_mem_owner_create(THIS_MODULE, "kt-tmp");
		KT_EXPECT(!IS_ERR(tmp));
		if (!IS_ERR(tmp))
			ib_sync_mem_owner_destroy(tmp);
	}
out:
	tc_free(t);
}

/* ---- bulk calls ---- */

#define BULK_N	8

static void bulk_regs(struct ib_sync_mem_reg *regs, struct tc *t)
{
	int i;

	for (i = 0; i < BULK_N; i++)
		regs[i] = (struct ib_sync_mem_reg){
			.owner = kt_owner, .name = "kt-bulk", .ops = &tc_ops,
			.priv = &t[i], .flags = i == 1 ? IB_SYNC_MEM_F_LAZY : 0,
		};
}

/* Syncs of a batch without pause until stopped, counting its ENODEVs. */
struct bulk_syncer {
	struct ib_sync_mem_batch_entry *e;
	unsigned int n, rounds, enodev;
	int ret;
};

static int bulk_syncer_fn(void *arg)
{
	struct bulk_syncer *b = arg;
	unsigned int i;

	while (!kthread_should_stop()) {
		b->ret = ib_sync_mem_sync_many(b->e, b->n,
					       IB_SYNC_MEM_TO_DEVICE, 0);
		for (i = 0; i < b->n; i++)
			b->enodev += b->e[i].err == -ENODEV;
		b->rounds++;
		cond_resched();
	}
	return 0;
}

/*
 * ib_sync_mem_register_many() is all or nothing; ib_sync_mem_sync_many()
 * gives each entry its own result (ran, skipped as lazy and clean, -ENXIO
 * invalidated, the client's error, a client twice), and under unregister
 * churn no callback runs after its client's unregister returned.
 */
void test_bulk(struct ib_device *ibdev)
{
	int registered = atomic_read(&sm_counters.registered);
	struct ib_sync_mem_client *c[BULK_N] = {}, *held[BULK_N];
	struct ib_sync_mem_batch_entry e[5] = {};
	struct ib_sync_mem_reg regs[BULK_N];
	struct bulk_syncer b = {};
	struct tc *t = tc_alloc(BULK_N);
	struct task_struct *task;
	int i;

	if (!t) {
		kt_fail++;
		return;
	}
	/* A bad request in the middle: the first five come and go again. */
	bulk_regs(regs, t);
	regs[5].name = "";
	KT_EXPECT_EQ(ib_sync_mem_register_many(ibdev, regs, BULK_N, c), -EINVAL);
	KT_EXPECT(!c[0]);
	KT_EXPECT_EQ(atomic_read(&sm_counters.registered), registered);
	for (i = 0; i < BULK_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].releases), i < 5 ? 1 : 0);
	tc_free(t);

	t = tc_alloc(BULK_N);
	if (!t) {
		kt_fail++;
		return;
	}
	bulk_regs(regs, t);
	if (ib_sync_mem_register_many(ibdev, regs, BULK_N, c)) {
		kt_fail++;
		goto out;
	}
	KT_EXPECT_EQ(atomic_read(&sm_counters.registered), registered + BULK_N);
	for (i = 0; i < BULK_N; i++)
		t[i].client = c[i];

	/* Each entry its own result. */
	t[3].fail = -EIO;
	KT_EXPECT_EQ(ib_sync_mem_invalidate(kt_owner, c[2],
					    IB_SYNC_MEM_INVAL_MEMORY), 0);
	e[0].client = c[0];
	e[1].client = c[1];	/* lazy, never marked: clean */
	e[2].client = c[2];	/* invalidated */
	e[3].client = c[3];	/* fails with -EIO */
	e[4].client = c[0];	/* again */
	KT_EXPECT_EQ(ib_sync_mem_sync_many(e, 5, 0, 0), -EINVAL);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 0);
	KT_EXPECT_EQ(ib_sync_mem_sync_many(e, 5, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT(e[0].ran && !e[0].err);
	KT_EXPECT(!e[1].ran && !e[1].err);
	KT_EXPECT(!e[2].ran && e[2].err == -ENXIO);
	KT_EXPECT(e[3].ran && e[3].err == -EIO);
	KT_EXPECT(e[4].ran && !e[4].err);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 2);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].syncs), 0);
	KT_EXPECT_EQ(atomic_read(&t[3].syncs), 1);
	t[3].fail = 0;

	/*
	 * Churn: a thread syncs every client as a batch without pause while
	 * they are unregistered one by one (the entries hold references).
	 */
	for (i = 0; i < BULK_N; i++)
		held[i] = ib_sync_mem_get(c[i]);
	b.e = kvcalloc(BULK_N, sizeof(*b.e), GFP_KERNEL);
	if (!b.e) {
		kt_fail++;
		tc_unregister_all(t, BULK_N);
		goto put;
	}
	b.n = BULK_N;
	for (i = 0; i < BULK_N; i++)
		b.e[i].client = held[i];
	task = kthread_run(bulk_syncer_fn, &b, "kt_bulk");
	if (IS_ERR(task)) {
		kt_fail++;
		tc_unregister_all(t, BULK_N);
		goto put;
	}
	KT_EXPECT(KT_WAIT(READ_ONCE(b.rounds) >= 2, 60));
	for (i = 0; i < BULK_N; i++) {
		tc_unregister(&t[i]);
		cond_resched();
	}
	/* Rounds after the last unregister: every entry ENODEV. */
	i = READ_ONCE(b.rounds);
	KT_EXPECT(KT_WAIT(READ_ONCE(b.rounds) >= i + 2, 60));
	kthread_stop(task);
	KT_EXPECT_EQ(b.ret, 0);
	for (i = 0; i < BULK_N; i++)
		KT_EXPECT(!b.e[i].ran && b.e[i].err == -ENODEV);
	kt_diag("bulk: %u rounds, %u ENODEV entries", b.rounds, b.enodev);
put:
	kvfree(b.e);
	for (i = 0; i < BULK_N; i++)
		ib_sync_mem_put(held[i]);
	for (i = 0; i < BULK_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].releases), 1);
out:
	tc_free(t);
}

#define FANOUT_N 16

void test_fanout_order(struct ib_device *ibdev)
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
	tc_free(t);
}

void test_error_propagation(struct ib_device *ibdev)
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
	tc_free(t);
}

void test_lazy(struct ib_device *ibdev)
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
		tc_unregister(&t[0]);
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
	ib_sync_mem_mark_dirty(t[0].client, IB_SYNC_MEM_TO_DEVICE);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     &res), 0);
	KT_EXPECT_EQ(res.clients, 2);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 1);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     NULL), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 1);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 3);

	/* A failed sync leaves the client dirty: it is retried. */
	ib_sync_mem_mark_dirty(t[0].client, IB_SYNC_MEM_TO_CPU);
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
	tc_free(t);
}

#define COALESCE_K 4

void test_coalescing(struct ib_device *ibdev)
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
	if (!KT_WAIT(completion_done(&t->entered), 60)) {
		kt_fail++;
		kt_diag("the first caller's pass never reached the client");
		goto out_open;
	}

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
		tc_unregister(t);
out:
	tc_free(t);
}

void test_unregister_during_sync(struct ib_device *ibdev)
{
	struct kt_caller syncer = { .dir = IB_SYNC_MEM_TO_CPU };
	struct kt_caller unreg = {};
	DECLARE_COMPLETION_ONSTACK(gate);
	struct tc *t = tc_alloc(1);
	bool early, entered;

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
		tc_unregister(t);
		ib_sync_mem_put(syncer.client);
		goto out;
	}
	entered = KT_WAIT(completion_done(&t->entered), 60);
	if (!entered) {
		kt_fail++;
		kt_diag("the sync never reached the client's callback");
	}
	if (!entered || !kt_start(kt_unregister_fn, &unreg)) {
		complete_all(&gate);
		wait_for_completion(&syncer.done);
		tc_unregister(t);
		ib_sync_mem_put(syncer.client);
		goto out;
	}

	/* Unregister must wait for the sleeping callback. */
	msleep(300);
	early = completion_done(&unreg.done);
	KT_EXPECT(!early);
	complete_all(&gate);
	wait_for_completion(&unreg.done);
	/* The syncer may still be on its way out: the wait was for ->sync. */
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
	tc_free(t);
}

void test_module_refcount(struct ib_device *ibdev)
{
	int refs = module_refcount(THIS_MODULE);
	struct tc *t = tc_alloc(3);

	if (!t || !tc_register_all(ibdev, t, 3, 0))
		goto out;
	KT_EXPECT_EQ(module_refcount(THIS_MODULE), refs + 3);
	/* A lookup reference does not pin the module; the client does. */
	tc_unregister(&t[0]);
	KT_EXPECT_EQ(module_refcount(THIS_MODULE), refs + 2);
	tc_unregister(&t[1]);
	tc_unregister(&t[2]);
	KT_EXPECT_EQ(module_refcount(THIS_MODULE), refs);
out:
	tc_free(t);
}

void test_invalidate_memory(struct ib_device *ibdev)
{
	struct ib_sync_mem_result res = {};
	struct tc *t = tc_alloc(2);

	if (!t || !tc_register_all(ibdev, t, 2, 0))
		goto out;
	ib_sync_mem_invalidate(kt_owner, t[0].client, IB_SYNC_MEM_INVAL_MEMORY);
	KT_EXPECT_EQ(atomic_read(&t[0].invalidates), 1);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[0].client, IB_SYNC_MEM_TO_DEVICE, 0),
		     -ENXIO);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_DEVICE, 0,
					     &res), 0);
	KT_EXPECT_EQ(res.clients, 1);
	KT_EXPECT_EQ(res.skipped, 1);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 0);
	/* A second invalidation is a no-op. */
	ib_sync_mem_invalidate(kt_owner, t[0].client, IB_SYNC_MEM_INVAL_MEMORY);
	KT_EXPECT_EQ(atomic_read(&t[0].invalidates), 1);
	tc_unregister_all(t, 2);
	KT_EXPECT_EQ(atomic_read(&t[0].releases), 1);
out:
	tc_free(t);
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
	struct tc *live[8] = {};
	unsigned int i, slot;

	for (i = 0; i < ch->iters; i++) {
		slot = get_random_u32() % ARRAY_SIZE(live);
		if (live[slot]) {
			if (ib_sync_mem_sync(live[slot]->client,
					     IB_SYNC_MEM_TO_DEVICE, 0))
				ch->errors++;
			tc_unregister(live[slot]);
			live[slot] = NULL;
		} else {
			struct tc *t = &ch->pool[ch->used++];

			/* A dump beside the churn sees ->fill_info linger. */
			t->info_sleep_us = 50;
			if (IS_ERR(tc_register(ch->ibdev, t, 0)))
				ch->errors++;
			else
				live[slot] = t;
		}
		cond_resched();
	}
	for (slot = 0; slot < ARRAY_SIZE(live); slot++)
		if (live[slot])
			tc_unregister(live[slot]);
	atomic_dec(ch->running);
	complete(&ch->done);
	return 0;
}

static int churn_syncer(void *arg)
{
	struct churn *ch = arg;

	while (atomic_read(ch->running)) {
		/* Shared: other owners' clients may fail a device-wide pass. */
		if (ib_sync_mem_sync_device(ch->ibdev, IB_SYNC_MEM_TO_CPU, 0,
					    NULL) && !kt_shared)
			ch->errors++;
		ch->used++;
		cond_resched();
	}
	complete(&ch->done);
	return 0;
}

void test_churn(struct ib_device *ibdev)
{
	int before = atomic_read(&sm_counters.clients);
	struct churn ch[3] = {};
	atomic_t running = ATOMIC_INIT(2);
	struct task_struct *task;
	unsigned int i, j, started = 0;

	for (i = 0; i < 3; i++) {
		ch[i].ibdev = ibdev;
		ch[i].iters = kt_churn_iters;
		ch[i].running = &running;
		init_completion(&ch[i].done);
	}
	for (i = 0; i < 2; i++) {
		ch[i].pool = tc_alloc(kt_churn_iters);
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
			/* A dump beside the churn may hold the last reference. */
			KT_EXPECT_EQ(tc_wait_release(t), 1);
			KT_EXPECT_EQ(READ_ONCE(t->canary), TC_POISON);
		}
	}
	if (!kt_shared)
		KT_EXPECT(KT_WAIT(atomic_read(&sm_counters.clients) == before, 60));
	kt_diag("churn: 2 writers x %u iterations, %u registrations, %u device syncs, %u cpus",
		kt_churn_iters, ch[0].used + ch[1].used, ch[2].used,
		num_online_cpus());
out:
	tc_free(ch[0].pool);
	tc_free(ch[1].pool);
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
		ibdev = ib_sync_mem_device_get(storm.dev);
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
		ibdev = ib_sync_mem_device_get(storm.dev);
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
		tc_unregister(t);
		/*
		 * The removal's reference, as it invalidates this client, or
		 * a dump's may be the last: wait for ->release before the
		 * private data is used again.
		 */
		if (tc_wait_release(t) != 1)
			atomic_inc(&storm.regs_other);
		/* Reuse the private data: it was released, rearm it. */
		t->client = NULL;
		atomic_set(&t->releases, 0);
		atomic_set(&t->invalidates, 0);
		WRITE_ONCE(t->dead, false);
		WRITE_ONCE(t->canary, TC_LIVE);
		cond_resched();
	}
	tc_free(t);
	complete(done);
	return 0;
}

int storm_start(const char *name)
{
	struct ib_device *ibdev;
	int i;

	if (storm.active)
		return -EBUSY;
	memset(&storm, 0, sizeof(storm));
	strscpy(storm.dev, name, sizeof(storm.dev));
	storm.before = atomic_read(&sm_counters.clients);
	ibdev = ib_sync_mem_device_get(storm.dev);
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

/* Wait until the storm has synced and registered at least once. */
int storm_wait(void)
{
	if (!storm.active)
		return -EINVAL;
	if (!KT_WAIT(atomic_read(&storm.syncs_ok) && atomic_read(&storm.regs_ok),
		     300))
		return -ETIMEDOUT;
	return 0;
}

bool storm_active(void)
{
	if (storm.active)
		atomic_set(&storm.stop, 1);
	return storm.active;
}

void test_storm_check(void)
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
		/*
		 * The owner still unregisters its orphaned client (a dump
		 * beside the storm may hold the last reference).
		 */
		tc_unregister(t);
		KT_EXPECT_EQ(tc_wait_release(t), 1);
	}
	if (!kt_shared)
		KT_EXPECT_EQ(atomic_read(&sm_counters.clients), storm.before);
	kt_diag("storm: %d clients, %d syncs ok, %d -ENODEV, %d registrations",
		storm.n, atomic_read(&storm.syncs_ok),
		atomic_read(&storm.syncs_enodev), atomic_read(&storm.regs_ok));
	tc_free(storm.t);
	storm.active = false;
}
