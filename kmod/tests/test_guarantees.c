// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: the guarantees under concurrency, as the header
 * (include/rdma/ib_sync_mem.h) states them:
 *
 *   lazy_inflight, lazy_directions, lazy_stress   a sync that returns 0 has
 *	a completed ->sync behind it that saw the caller's writes; the dirty
 *	state is per direction
 *   deadline_per_caller    no caller sees -ETIMEDOUT before its own
 *	deadline, nor another caller's -ERESTARTSYS
 *   batch_pairing, batch_churn   every ->prepare has exactly one ->finish
 *   invalidate_unregister, invalidate_unregister_device   a client may be
 *	unregistered from its ->invalidate, or from a work item it queues
 *   fill_info_after_unregister   no ->fill_info after unregister returned
 *   killable_waits   a caller waiting for a pass can be killed
 *   unregister_many   a bulk unregister waits for the syncs of its
 *	clients in flight
 *   unregister_scoped   an unregister or invalidation waits for its own
 *	client's callbacks only: not for a pass blocked in another client's
 *	->sync, nor for a single sync of another client
 *
 * and the helpers of the netlink suites: bulk registration (replies at the
 * documented limits) and a held NETLINK_URELEASE (a portid reused before
 * the release of its old socket arrives).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "sync_mem_test.h"

/* ---- lazy clients ---- */

/*
 * The producer writes and marks a lazy client dirty; a device-wide pass
 * takes that dirty state and is inside the client's ->sync when the
 * producer syncs the client itself: that sync may return 0 only after a
 * ->sync that began after the mark has completed (the pass's, or one of
 * its own).
 */
void test_lazy_inflight(struct ib_device *ibdev)
{
	struct kt_caller pass = { .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_DEVICE };
	struct kt_caller single = { .dir = IB_SYNC_MEM_TO_DEVICE };
	DECLARE_COMPLETION_ONSTACK(gate);
	struct tc *t = tc_alloc(1);
	s64 coherent_then = -1;
	bool returned_early;

	if (!t || IS_ERR(tc_register(ibdev, t, IB_SYNC_MEM_F_LAZY))) {
		kt_fail++;
		goto out;
	}
	t->gate = &gate;
	atomic64_set(&t->written, 1);
	ib_sync_mem_mark_dirty(t->client, IB_SYNC_MEM_TO_DEVICE);
	if (!kt_start(kt_sync_device_fn, &pass))
		goto out_open;
	if (!KT_WAIT(atomic_read(&t->syncs) == 1, 60)) {
		kt_fail++;
		kt_diag("the pass never entered the client");
		goto out_open;
	}

	/* The producer hands the memory over while the pass's ->sync runs. */
	single.client = t->client;
	if (!kt_start(kt_sync_client_fn, &single))
		goto out_open;
	/* It either runs a ->sync of its own (blocked on the gate too)... */
	KT_WAIT(completion_done(&single.done) || atomic_read(&t->syncs) >= 2, 60);
	/* ...or returns, which is only right if the memory is coherent. */
	returned_early = completion_done(&single.done);
	if (returned_early)
		coherent_then = atomic64_read(&t->coherent);
out_open:
	complete_all(&gate);
	if (pass.task)
		wait_for_completion(&pass.done);
	if (single.task)
		wait_for_completion(&single.done);
	KT_EXPECT_EQ(pass.ret, 0);
	KT_EXPECT_EQ(single.ret, 0);
	if (returned_early) {
		kt_diag("returned 0 inside the pass's ->sync: coherent %lld, not 1",
			coherent_then);
		KT_EXPECT(coherent_then >= 1);
	}
	KT_EXPECT(atomic64_read(&t->coherent) >= 1);
	if (!IS_ERR_OR_NULL(t->client))
		tc_unregister(t);
out:
	tc_free(t);
}

/*
 * The dirty state is per direction: a pass one way keeps the other owed;
 * and only a ->sync that succeeded pays what is owed.
 */
void test_lazy_directions(struct ib_device *ibdev)
{
	struct ib_sync_mem_result res = {};
	struct tc *t = tc_alloc(1);

	if (!t || IS_ERR(tc_register(ibdev, t, IB_SYNC_MEM_F_LAZY))) {
		kt_fail++;
		goto out;
	}
	/* The CPU wrote: a to-cpu pass has nothing to do for it. */
	ib_sync_mem_mark_dirty(t->client, IB_SYNC_MEM_TO_DEVICE);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_CPU, 0, &res), 0);
	KT_EXPECT_EQ(res.skipped, 1);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 0);
	/* The to-device sync it is owed still runs, once. */
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);

	/* The device wrote: to-device has nothing to do, to-cpu runs. */
	ib_sync_mem_mark_dirty(t->client, IB_SYNC_MEM_TO_CPU);
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 1);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_TO_CPU, 0, &res), 0);
	KT_EXPECT_EQ(res.clients, 1);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 2);

	/* Both: a bidirectional sync covers both, once. */
	ib_sync_mem_mark_dirty(t->client, IB_SYNC_MEM_BIDIRECTIONAL);
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_BIDIRECTIONAL, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 3);
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_CPU, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 3);

	/* A bidirectional pass covers one owed direction too. */
	ib_sync_mem_mark_dirty(t->client, IB_SYNC_MEM_TO_CPU);
	KT_EXPECT_EQ(ib_sync_mem_sync_device(ibdev, IB_SYNC_MEM_BIDIRECTIONAL, 0,
					     &res), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 4);
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_CPU, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 4);

	/* A ->sync that failed covered nothing: the writes stay owed. */
	ib_sync_mem_mark_dirty(t->client, IB_SYNC_MEM_TO_DEVICE);
	WRITE_ONCE(t->fail, -EIO);
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_DEVICE, 0), -EIO);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 5);
	WRITE_ONCE(t->fail, 0);
	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_DEVICE, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 6);
	tc_unregister(t);
out:
	tc_free(t);
}

#define LAZY_PRODUCERS	2

struct lazy_producer {
	struct ib_device *ibdev;
	struct tc *t;
	unsigned int iters;
	unsigned int synced, violations, errors;
	struct completion done;
};

static int lazy_producer_fn(void *arg)
{
	struct lazy_producer *p = arg;
	unsigned int i;
	s64 v;
	int ret;

	for (i = 0; i < p->iters; i++) {
		/* Write, then say so, then give the passes a moment. */
		v = atomic64_inc_return(&p->t->written);
		ib_sync_mem_mark_dirty(p->t->client, IB_SYNC_MEM_TO_DEVICE);
		udelay(get_random_u32() % 100);
		if (i % 4)
			ret = ib_sync_mem_sync(p->t->client,
					       IB_SYNC_MEM_TO_DEVICE, 0);
		else
			ret = ib_sync_mem_sync_device(p->ibdev,
						      IB_SYNC_MEM_TO_DEVICE, 0,
						      NULL);
		if (ret) {
			p->errors++;
			continue;
		}
		p->synced++;
		if (atomic64_read(&p->t->coherent) < v)
			p->violations++;
		cond_resched();
	}
	complete(&p->done);
	return 0;
}

static int lazy_passes_fn(void *arg)
{
	struct kt_caller *k = arg;

	while (!kthread_should_stop()) {
		/* To-device passes race the producers; to-cpu ones owe nothing. */
		if (ib_sync_mem_sync_device(k->ibdev, k->dir, 0, NULL))
			k->ret = -EIO;
		cond_resched();
	}
	return 0;
}

/* Producers of lazy clients against device-wide passes both ways. */
void test_lazy_stress(struct ib_device *ibdev)
{
	struct lazy_producer p[LAZY_PRODUCERS] = {};
	struct kt_caller passes[2] = {
		{ .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_DEVICE },
		{ .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_CPU },
	};
	struct task_struct *pt[2] = {};
	struct tc *t = tc_alloc(LAZY_PRODUCERS);
	unsigned int i, started = 0;

	if (!t || !tc_register_all(ibdev, t, LAZY_PRODUCERS, IB_SYNC_MEM_F_LAZY))
		goto out;
	for (i = 0; i < 2; i++) {
		pt[i] = kthread_run(lazy_passes_fn, &passes[i], "kt_lazy_pass/%u", i);
		if (IS_ERR(pt[i])) {
			kt_fail++;
			pt[i] = NULL;
		}
	}
	for (i = 0; i < LAZY_PRODUCERS; i++) {
		t[i].sleep_us = 100;
		p[i].ibdev = ibdev;
		p[i].t = &t[i];
		p[i].iters = max(kt_churn_iters / 2, 100u);
		init_completion(&p[i].done);
		if (IS_ERR(kthread_run(lazy_producer_fn, &p[i], "kt_lazy/%u", i)))
			kt_fail++;
		else
			started |= BIT(i);
	}
	for (i = 0; i < LAZY_PRODUCERS; i++)
		if (started & BIT(i))
			wait_for_completion(&p[i].done);
	for (i = 0; i < 2; i++)
		if (pt[i])
			kthread_stop(pt[i]);
	for (i = 0; i < LAZY_PRODUCERS; i++) {
		kt_diag("lazy: producer %u: %u syncs ok, %u not coherent, %u errors",
			i, p[i].synced, p[i].violations, p[i].errors);
		KT_EXPECT_EQ(p[i].violations, 0);
		KT_EXPECT_EQ(p[i].errors, 0);
		KT_EXPECT(p[i].synced > 0);
	}
	KT_EXPECT_EQ(passes[0].ret, 0);
	KT_EXPECT_EQ(passes[1].ret, 0);
	tc_unregister_all(t, LAZY_PRODUCERS);
out:
	tc_free(t);
}

/* ---- deadlines and signals of coalesced callers ---- */

#define DEADLINE_ROUNDS		80
#define DEADLINE_HASTY_MS	1000
#define DEADLINE_PATIENT_MS	60000

/*
 * A pass blocks in a client that honours its deadline and signals. A hasty
 * caller (a short timeout, or a signal pending) and a patient one queue
 * behind it. Both are bound to one CPU and the hasty one has a real-time
 * priority, so when the pass ends the hasty caller runs the next pass,
 * serving the patient one: that pass ends with the hasty caller's own
 * -ETIMEDOUT or -ERESTARTSYS, which the patient caller, whose deadline is a
 * minute away and who has no signal, must never see. Rounds go on until the
 * hasty caller ran the next pass both ways (timeout and signal) twice; a
 * round where it did not (the scheduler is not bound to the priority on
 * every kernel) proves nothing and counts for nothing.
 */
void test_deadline_per_caller(struct ib_device *ibdev)
{
	struct ib_sync_mem_domain *dom = test_domain(ibdev);
	struct kt_caller r0, h, pt;
	struct completion g1, g2;
	struct sm_pass_queue *q;
	struct tc *t = tc_alloc(1);
	unsigned int round, hasty_ran[2] = {}, bad = 0, s0;
	int cpu = raw_smp_processor_id();
	pid_t runner;
	bool sig;

	if (!t || !dom || !sm_coalesce || IS_ERR(tc_register(ibdev, t, 0))) {
		kt_fail++;
		kt_diag("needs the device's domain and coalesce=1");
		goto out;
	}
	q = &dom->passes[IB_SYNC_MEM_TO_DEVICE - 1];
	t->gate_deadline = true;
	for (round = 0; round < DEADLINE_ROUNDS; round++) {
		if (hasty_ran[0] >= 2 && hasty_ran[1] >= 2)
			break;
		sig = round & 1;
		init_completion(&g1);
		init_completion(&g2);
		WRITE_ONCE(t->gate, &g1);
		r0 = (struct kt_caller){ .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_DEVICE,
					 .timeout_ms = DEADLINE_PATIENT_MS };
		h = r0;
		pt = r0;
		h.timeout_ms = sig ? DEADLINE_PATIENT_MS : DEADLINE_HASTY_MS;
		h.signal = sig;
		s0 = atomic_read(&t->syncs);
		if (!kt_start(kt_sync_device_fn, &r0) ||
		    !KT_WAIT(atomic_read(&t->syncs) == s0 + 1, 60) ||
		    !kt_start_on(kt_sync_device_fn, &h, cpu, true) ||
		    !KT_WAIT(kt_waiters(&q->wq) == 1, 60) ||
		    !kt_start_on(kt_sync_device_fn, &pt, cpu, false) ||
		    !KT_WAIT(kt_waiters(&q->wq) == 2, 60))
			goto stuck;
		if (sig)
			send_sig(SIGUSR1, h.task, 0);
		/* Pass 1 ends; the next one blocks in the client again. */
		WRITE_ONCE(t->gate, &g2);
		complete_all(&g1);
		wait_for_completion(&r0.done);
		if (!KT_WAIT(atomic_read(&t->syncs) >= s0 + 2, 60))
			goto stuck;
		runner = READ_ONCE(t->last_pid);
		if (runner == h.pid) {
			/* Its pass ends by its deadline or its signal. */
			hasty_ran[sig]++;
			if (!wait_for_completion_timeout(&h.done, 60 * HZ))
				goto stuck;
		}
		complete_all(&g2);
		wait_for_completion(&h.done);
		wait_for_completion(&pt.done);
		/*
		 * A non-fatal signal does not end the hasty caller's killable
		 * wait: an error means it ran the next pass with its signal
		 * pending, whether or not that pass reached the client's
		 * ->sync (the core may stop it before).
		 */
		if (sig && runner != h.pid && h.ret)
			hasty_ran[1]++;
		if (pt.ret) {
			bad++;
			kt_diag("round %u (%s, next pass by %s): patient %d, hasty %d",
				round, sig ? "signal" : "timeout",
				runner == h.pid ? "the hasty" : "the patient",
				pt.ret, h.ret);
		}
		KT_EXPECT_EQ(r0.ret, 0);
		continue;
stuck:
		kt_fail++;
		kt_diag("round %u: a caller never got as far as expected", round);
		complete_all(&g1);
		complete_all(&g2);
		if (r0.task)
			wait_for_completion(&r0.done);
		if (h.task)
			wait_for_completion(&h.done);
		if (pt.task)
			wait_for_completion(&pt.done);
		break;
	}
	kt_diag("deadline: %u rounds, hasty ran the next pass %u+%u times, %u bad",
		round, hasty_ran[0], hasty_ran[1], bad);
	KT_EXPECT_EQ(bad, 0);
	/* Never the hasty runner: the case proved nothing. */
	KT_EXPECT(hasty_ran[0] >= 1 && hasty_ran[1] >= 1);
	WRITE_ONCE(t->gate, NULL);
	tc_unregister(t);
out:
	tc_free(t);
}

/* ---- batch hooks ---- */

/*
 * A batch client is unregistered between a pass's prepare walk and its
 * finish walk (the pass blocks in a later client meanwhile): it must still
 * get its ->finish.
 */
void test_batch_pairing(struct ib_device *ibdev)
{
	struct kt_caller pass = { .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_DEVICE };
	struct kt_caller unreg = {};
	DECLARE_COMPLETION_ONSTACK(gate);
	struct tc *t = tc_alloc(2);

	if (!t)
		goto out;
	if (IS_ERR(tc_register_ops(ibdev, &t[0], &tc_batch_ops, 0))) {
		kt_fail++;
		goto out;
	}
	t[1].gate = &gate;
	if (IS_ERR(tc_register(ibdev, &t[1], 0))) {
		kt_fail++;
		tc_unregister(&t[0]);
		goto out;
	}
	if (!kt_start(kt_sync_device_fn, &pass))
		goto out_open;
	if (!KT_WAIT(completion_done(&t[1].entered), 60))
		goto out_open;
	KT_EXPECT_EQ(atomic_read(&t[0].prepares), 1);
	unreg.tc = &t[0];
	if (!kt_start(kt_unregister_fn, &unreg))
		goto out_open;
	/* Off the list now; its unregister waits for the pass. */
	KT_EXPECT(KT_WAIT(!READ_ONCE(t[0].client->listed), 60));
out_open:
	complete_all(&gate);
	if (pass.task)
		wait_for_completion(&pass.done);
	if (unreg.task)
		wait_for_completion(&unreg.done);
	else
		tc_unregister(&t[0]);
	KT_EXPECT_EQ(atomic_read(&t[0].releases), 1);
	KT_EXPECT_EQ(atomic_read(&t[0].prepares), 1);
	KT_EXPECT_EQ(atomic_read(&t[0].finishes), 1);
	tc_unregister(&t[1]);
out:
	tc_free(t);
}

struct batch_writer {
	struct ib_device *ibdev;
	struct tc *pool;
	unsigned int iters, used, errors;
	struct completion done;
};

/*
 * An unregister waits for its own client's callbacks only, so the writers
 * could churn through their clients between two passes: each
 * new client waits until a pass has prepared it (the passes run without
 * pause), and its unregister comes at a random point after that.
 */
static void batch_wait_prepared(struct tc *t)
{
	unsigned long end = jiffies + 60 * HZ;

	while (!atomic_read(&t->prepares) && time_before(jiffies, end))
		cond_resched();
}

static int batch_writer_fn(void *arg)
{
	struct batch_writer *w = arg;
	struct tc *live[4] = {};
	unsigned int i, slot;

	for (i = 0; i < w->iters; i++) {
		slot = get_random_u32() % ARRAY_SIZE(live);
		if (live[slot]) {
			tc_unregister(live[slot]);
			live[slot] = NULL;
		} else {
			struct tc *t = &w->pool[w->used++];

			t->sleep_us = 20;
			if (IS_ERR(tc_register_ops(w->ibdev, t, &tc_batch_ops, 0))) {
				w->errors++;
			} else {
				live[slot] = t;
				batch_wait_prepared(t);
			}
		}
		cond_resched();
	}
	for (slot = 0; slot < ARRAY_SIZE(live); slot++)
		if (live[slot])
			tc_unregister(live[slot]);
	complete(&w->done);
	return 0;
}

/* Batch clients registered and unregistered under passes: all paired. */
void test_batch_churn(struct ib_device *ibdev)
{
	struct batch_writer w[2] = {};
	struct kt_caller passes = { .ibdev = ibdev, .dir = IB_SYNC_MEM_BIDIRECTIONAL };
	struct task_struct *pt;
	unsigned int i, j, unpaired = 0, prepared = 0, started = 0;

	for (i = 0; i < 2; i++) {
		w[i].ibdev = ibdev;
		w[i].iters = max(kt_churn_iters / 2, 100u);
		w[i].pool = tc_alloc(w[i].iters);
		init_completion(&w[i].done);
		if (!w[i].pool) {
			kt_fail++;
			goto out;
		}
	}
	pt = kthread_run(lazy_passes_fn, &passes, "kt_batch_pass");
	if (IS_ERR(pt)) {
		kt_fail++;
		goto out;
	}
	for (i = 0; i < 2; i++) {
		if (IS_ERR(kthread_run(batch_writer_fn, &w[i], "kt_batch/%u", i)))
			kt_fail++;
		else
			started |= BIT(i);
	}
	for (i = 0; i < 2; i++)
		if (started & BIT(i))
			wait_for_completion(&w[i].done);
	kthread_stop(pt);
	for (i = 0; i < 2; i++) {
		KT_EXPECT_EQ(w[i].errors, 0);
		for (j = 0; j < w[i].used; j++) {
			struct tc *t = &w[i].pool[j];

			prepared += atomic_read(&t->prepares) > 0;
			if (atomic_read(&t->prepares) != atomic_read(&t->finishes))
				unpaired++;
		}
	}
	kt_diag("batch: %u+%u registrations, %u prepared, %u unpaired",
		w[0].used, w[1].used, prepared, unpaired);
	KT_EXPECT_EQ(unpaired, 0);
	/* Every client was in a pass before it could go. */
	KT_EXPECT_EQ(prepared, w[0].used + w[1].used);
	KT_EXPECT_EQ(passes.ret, 0);
out:
	tc_free(w[0].pool);
	tc_free(w[1].pool);
}

/* ---- unregister from ->invalidate ---- */

/*
 * The natural driver reaction to an invalidation is to unregister: from
 * ->invalidate itself, or from a work item it queues. Both must work, on a
 * memory invalidation and on a device removal (invalidate_unregister_device).
 */
void test_invalidate_unregister(struct ib_device *ibdev)
{
	struct tc *t = tc_alloc(2);
	int i;

	if (!t)
		goto out;
	t[0].inval_mode = TC_INVAL_UNREGISTER;
	t[1].inval_mode = TC_INVAL_WORK;
	if (!tc_register_all(ibdev, t, 2, 0))
		goto out;
	for (i = 0; i < 2; i++)
		ib_sync_mem_invalidate(kt_owner, t[i].client, IB_SYNC_MEM_INVAL_MEMORY);
	KT_EXPECT_EQ(tc_wait_release(&t[1]), 1);
	flush_work(&t[1].unreg_work);
	for (i = 0; i < 2; i++) {
		KT_EXPECT_EQ(atomic_read(&t[i].invalidates), 1);
		if (READ_ONCE(t[i].inval_locked)) {
			kt_diag("client %d: ->invalidate ran under the domain's lock", i);
			kt_fail++;
			tc_unregister(&t[i]);
		}
		KT_EXPECT_EQ(atomic_read(&t[i].releases), 1);
	}
out:
	tc_free(t);
}

/* ---- bulk unregister, and what an unregister waits for ---- */

#define MANY_N	64

struct many_caller {
	struct ib_sync_mem_client *clients[MANY_N];
	struct completion done;
};

static int many_unregister_fn(void *arg)
{
	struct many_caller *m = arg;

	ib_sync_mem_unregister_many(kt_owner, m->clients, MANY_N);
	complete_all(&m->done);
	return 0;
}

/*
 * ib_sync_mem_unregister_many() of MANY_N clients while a pass is inside
 * the last one's ->sync: every client comes off the list at once, the call
 * returns only after that callback did, and no callback runs after it.
 */
void test_unregister_many(struct ib_device *ibdev)
{
	struct kt_caller pass = { .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_DEVICE };
	DECLARE_COMPLETION_ONSTACK(gate);
	struct many_caller *m = kzalloc(sizeof(*m), GFP_KERNEL);
	struct tc *t = tc_alloc(MANY_N);
	bool early, unlisted;
	int i;

	if (!m || !t) {
		kt_fail++;
		goto out;
	}
	init_completion(&m->done);

	/* Nothing syncing: one unregister, then the other MANY_N - 1 at once. */
	if (!tc_register_all(ibdev, t, MANY_N, 0))
		goto out;
	tc_unregister(&t[0]);
	for (i = 1; i < MANY_N; i++)
		m->clients[i - 1] = t[i].client;
	ib_sync_mem_unregister_many(kt_owner, m->clients, MANY_N - 1);
	for (i = 1; i < MANY_N; i++)
		WRITE_ONCE(t[i].dead, true);
	for (i = 0; i < MANY_N; i++)
		KT_EXPECT_EQ(atomic_read(&t[i].releases), 1);
	tc_free(t);

	/* A pass blocked in the last client's ->sync. */
	t = tc_alloc(MANY_N);
	if (!t) {
		kt_fail++;
		goto out;
	}
	t[MANY_N - 1].gate = &gate;
	if (!tc_register_all(ibdev, t, MANY_N, 0))
		goto out;
	for (i = 0; i < MANY_N; i++)
		m->clients[i] = t[i].client;
	if (!kt_start(kt_sync_device_fn, &pass)) {
		tc_unregister_all(t, MANY_N);
		goto out;
	}
	if (!KT_WAIT(completion_done(&t[MANY_N - 1].entered), 60)) {
		kt_diag("the pass never reached the last client");
		kt_fail++;
		complete_all(&gate);
		wait_for_completion(&pass.done);
		tc_unregister_all(t, MANY_N);
		goto out;
	}
	if (IS_ERR(kthread_run(many_unregister_fn, m, "kt_many"))) {
		kt_fail++;
		complete_all(&gate);
		wait_for_completion(&pass.done);
		tc_unregister_all(t, MANY_N);
		goto out;
	}
	/* The registration's reference keeps each client until it returns. */
	unlisted = KT_WAIT(!READ_ONCE(t[MANY_N - 1].client->listed), 60);
	KT_EXPECT(unlisted);
	/* It must wait for the callback still running. */
	msleep(100);
	early = completion_done(&m->done);
	KT_EXPECT(!early);
	complete_all(&gate);
	wait_for_completion(&m->done);
	for (i = 0; i < MANY_N; i++)
		WRITE_ONCE(t[i].dead, true);
	/*
	 * The pass may still be finishing: the wait was for the callback of
	 * the client in it, not for the pass.
	 */
	wait_for_completion(&pass.done);
	KT_EXPECT_EQ(pass.ret, 0);
	for (i = 0; i < MANY_N; i++) {
		KT_EXPECT_EQ(atomic_read(&t[i].syncs), 1);
		KT_EXPECT_EQ(atomic_read(&t[i].releases), 1);
	}
out:
	tc_free(t);
	kfree(m);
}

static int many_one_fn(void *arg)
{
	struct kt_caller *k = arg;

	ib_sync_mem_unregister_many(kt_owner, &k->client, 1);
	complete_all(&k->done);
	return 0;
}

/*
 * Clients of scoped_wait(): [0] is blocked in ->sync by a pass or a
 * single sync, [1] is unregistered, [2] invalidated and [3] unregistered
 * with ib_sync_mem_unregister_many() meanwhile, [4] waits after them in the
 * pass's order (a pass that went on would sync it).
 */
#define SCOPED_N	5

/*
 * Writers on other clients of the device while @blocker is inside
 * ->sync of t[0]: each returns while that callback still runs, and has
 * its client's callbacks done (->invalidate ran, ->release ran).
 */
static void scoped_wait(struct ib_device *ibdev, bool pass)
{
	struct kt_caller blocker = { .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_DEVICE };
	struct kt_caller unreg = {}, inval = {}, many = {};
	DECLARE_COMPLETION_ONSTACK(gate);
	struct tc *t = tc_alloc(SCOPED_N);
	bool returned, ok = false;
	int i;

	if (!t || !tc_register_all(ibdev, t, SCOPED_N, 0)) {
		kt_fail++;
		goto out;
	}
	t[0].gate = &gate;
	blocker.client = t[0].client;
	if (!kt_start(pass ? kt_sync_device_fn : kt_sync_client_fn, &blocker)) {
		tc_unregister_all(t, SCOPED_N);
		goto out;
	}
	if (!KT_WAIT(completion_done(&t[0].entered), 60)) {
		kt_diag("the sync never reached the first client");
		kt_fail++;
		goto release;
	}

	unreg.tc = &t[1];
	inval.client = t[2].client;
	many.client = t[3].client;
	if (!kt_start(kt_unregister_fn, &unreg) ||
	    !kt_start(kt_invalidate_fn, &inval))
		goto release;
	/* A hang guard: a writer that waits for t[0] never returns here. */
	returned = KT_WAIT(completion_done(&unreg.done) &&
			   completion_done(&inval.done), 60);
	if (!returned) {
		kt_diag("%s: an unregister or invalidation waited for another client's ->sync",
			pass ? "pass" : "single sync");
		kt_fail++;
		goto release;
	}
	KT_EXPECT_EQ(atomic_read(&t[1].releases), 1);
	KT_EXPECT_EQ(atomic_read(&t[2].invalidates), 1);

	if (!kt_start(many_one_fn, &many))
		goto release;
	KT_EXPECT(KT_WAIT(completion_done(&many.done), 60));
	KT_EXPECT_EQ(atomic_read(&t[3].releases), 1);
	/* Still inside t[0]'s ->sync. */
	KT_EXPECT(!completion_done(&blocker.done));
	KT_EXPECT_EQ(atomic_read(&t[4].syncs), 0);
	ok = true;

release:
	complete_all(&gate);
	wait_for_completion(&blocker.done);
	if (unreg.task)
		wait_for_completion(&unreg.done);
	if (inval.task)
		wait_for_completion(&inval.done);
	if (many.task) {
		wait_for_completion(&many.done);
		WRITE_ONCE(t[3].dead, true);
	}
	if (ok) {
		KT_EXPECT_EQ(blocker.ret, 0);
		/* The pass skipped the clients gone meanwhile, synced the last. */
		KT_EXPECT_EQ(atomic_read(&t[0].syncs), 1);
		for (i = 1; i < 4; i++)
			KT_EXPECT_EQ(atomic_read(&t[i].syncs), 0);
		KT_EXPECT_EQ(atomic_read(&t[4].syncs), pass ? 1 : 0);
	}
	for (i = 0; i < SCOPED_N; i++)
		if (!READ_ONCE(t[i].dead))
			tc_unregister(&t[i]);
out:
	tc_free(t);
}

void test_unregister_scoped(struct ib_device *ibdev)
{
	scoped_wait(ibdev, true);
	scoped_wait(ibdev, false);
}

#define INVAL_DEV_N	4

static struct {
	struct tc *t;
	int n;
	bool active;
} inval_dev;

int inval_dev_start(const char *name)
{
	struct ib_device *ibdev = ib_sync_mem_device_get(name);
	int i;

	if (!ibdev)
		return -ENODEV;
	if (inval_dev.active) {
		ib_device_put(ibdev);
		return -EBUSY;
	}
	inval_dev.t = tc_alloc(INVAL_DEV_N);
	if (!inval_dev.t) {
		ib_device_put(ibdev);
		return -ENOMEM;
	}
	for (i = 0; i < INVAL_DEV_N; i++) {
		inval_dev.t[i].inval_mode = i % 2 ? TC_INVAL_WORK : TC_INVAL_UNREGISTER;
		if (IS_ERR(tc_register(ibdev, &inval_dev.t[i], 0)))
			break;
	}
	inval_dev.n = i;
	inval_dev.active = true;
	ib_device_put(ibdev);
	return i == INVAL_DEV_N ? 0 : -EIO;
}

void test_inval_dev_check(void)
{
	struct tc *t;
	int i;

	if (!inval_dev.active) {
		kt_fail++;
		kt_diag("inval_dev_check without inval_dev_start");
		return;
	}
	KT_EXPECT_EQ(inval_dev.n, INVAL_DEV_N);
	for (i = 0; i < inval_dev.n; i++) {
		t = &inval_dev.t[i];
		KT_EXPECT(KT_WAIT(atomic_read(&t->invalidates) == 1, 60));
		if (t->inval_mode == TC_INVAL_WORK)
			flush_work(&t->unreg_work);
		if (READ_ONCE(t->inval_locked)) {
			kt_diag("client %d: ->invalidate ran under the domain's lock", i);
			kt_fail++;
			tc_unregister(t);
		}
		KT_EXPECT_EQ(tc_wait_release(t), 1);
		KT_EXPECT_EQ(atomic_read(&t->invalidates), 1);
	}
	tc_free(inval_dev.t);
	inval_dev.active = false;
}

/* ---- removal while a memory ->invalidate runs (two steps) ---- */

static struct {
	struct tc *t;
	struct completion gate;
	struct kt_caller inval;
	bool active;
} inval_race;

/*
 * A client's memory goes away and its ->invalidate blocks (a driver
 * tearing a mapping down) until inval_race_check: the removal of its
 * device, started meanwhile, must wait for it, not see the call made and
 * return while it still runs.
 */
int inval_race_start(const char *name)
{
	struct ib_device *ibdev = ib_sync_mem_device_get(name);
	struct tc *t;
	int ret = -EIO;

	if (!ibdev)
		return -ENODEV;
	if (inval_race.active) {
		ib_device_put(ibdev);
		return -EBUSY;
	}
	t = tc_alloc(1);
	if (!t) {
		ib_device_put(ibdev);
		return -ENOMEM;
	}
	init_completion(&inval_race.gate);
	t->inval_gate = &inval_race.gate;
	if (IS_ERR(tc_register(ibdev, t, 0)))
		goto err_free;
	inval_race.inval = (struct kt_caller){ .client = t->client };
	if (!kt_start(kt_invalidate_fn, &inval_race.inval)) {
		tc_unregister(t);
		goto err_free;
	}
	inval_race.t = t;
	inval_race.active = true;
	ib_device_put(ibdev);
	return KT_WAIT(completion_done(&t->inval_entered), 60) ? 0 : -ETIMEDOUT;

err_free:
	tc_free(t);
	ib_device_put(ibdev);
	return ret;
}

/*
 * The shell saw the removal wait while ->invalidate blocked: the
 * callback ran once (the removal did not call it again), and once it
 * returns the removal does too (the shell checks that after this step).
 */
void test_inval_race_check(void)
{
	struct tc *t = inval_race.t;

	if (!inval_race.active) {
		kt_fail++;
		kt_diag("inval_race_check without inval_race_start");
		return;
	}
	KT_EXPECT_EQ(atomic_read(&t->invalidates), 1);
	KT_EXPECT(!completion_done(&inval_race.inval.done));
	complete_all(&inval_race.gate);
	wait_for_completion(&inval_race.inval.done);
	KT_EXPECT_EQ(atomic_read(&t->invalidates), 1);
	tc_unregister(t);
	/* The removal's reference may be the last one, dropped after it woke. */
	KT_EXPECT_EQ(tc_wait_release(t), 1);
	tc_free(t);
	inval_race.active = false;
}

/* ---- a dump across a removal's change of state (three steps) ---- */

#define DUMPW_CLIENTS 2000

static struct {
	struct tc *t;		/* DUMPW_CLIENTS, then the gated one */
	struct completion gate;
	struct kt_caller sync;
	struct ib_sync_mem_domain *dom;
	struct completion release;
	struct completion held;
	struct completion hold_done;
	bool hold_ended;
	bool active;
} dumpw;

/*
 * Holds the domain's lock until dump_window_flip (at most 120 s): the
 * removal stops where it takes it to change its clients' state, after its
 * first generation bump.
 */
static int dumpw_hold_fn(void *arg)
{
	mutex_lock(&dumpw.dom->lock);
	complete(&dumpw.held);
	wait_for_completion_timeout(&dumpw.release, 120 * HZ);
	mutex_unlock(&dumpw.dom->lock);
	kthread_complete_and_exit(&dumpw.hold_done, 0);
}

/* Let go of the domain's lock, once. */
static void dumpw_end_hold(void)
{
	if (dumpw.hold_ended)
		return;
	complete_all(&dumpw.release);
	wait_for_completion(&dumpw.hold_done);
	dumpw.hold_ended = true;
}

/*
 * DUMPW_CLIENTS clients on @name and one whose sync blocks on a gate, that
 * sync in flight, and the domain's lock held. Then the shell removes the
 * device: it stops at that lock, after its first generation bump, the
 * device already off the list; a dump begins there.
 */
int dump_window_start(const char *name)
{
	struct ib_device *ibdev = ib_sync_mem_device_get(name);
	struct task_struct *task;
	struct tc *t;
	int ret = -EIO;

	if (!ibdev)
		return -ENODEV;
	if (dumpw.active) {
		ib_device_put(ibdev);
		return -EBUSY;
	}
	t = tc_alloc(DUMPW_CLIENTS + 1);
	if (!t) {
		ib_device_put(ibdev);
		return -ENOMEM;
	}
	init_completion(&dumpw.gate);
	init_completion(&dumpw.release);
	init_completion(&dumpw.held);
	init_completion(&dumpw.hold_done);
	dumpw.dom = test_domain(ibdev);
	dumpw.hold_ended = true;
	if (!dumpw.dom) {
		ret = -ENODEV;
		goto err_free;
	}
	t[DUMPW_CLIENTS].gate = &dumpw.gate;
	if (!tc_register_all(ibdev, t, DUMPW_CLIENTS + 1, 0))
		goto err_free;
	dumpw.sync = (struct kt_caller){
		.client = t[DUMPW_CLIENTS].client,
		.dir = IB_SYNC_MEM_TO_DEVICE,
	};
	if (!kt_start(kt_sync_client_fn, &dumpw.sync))
		goto err_unregister;
	if (!KT_WAIT(completion_done(&t[DUMPW_CLIENTS].entered), 60)) {
		ret = -ETIMEDOUT;
		goto err_sync;
	}
	task = kthread_run(dumpw_hold_fn, NULL, "kt_dom_hold");
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		goto err_sync;
	}
	dumpw.hold_ended = false;
	dumpw.t = t;
	dumpw.active = true;
	ib_device_put(ibdev);
	return KT_WAIT(completion_done(&dumpw.held), 60) ? 0 : -ETIMEDOUT;

err_sync:
	complete_all(&dumpw.gate);
	wait_for_completion(&dumpw.sync.done);
err_unregister:
	tc_unregister_all(t, DUMPW_CLIENTS + 1);
err_free:
	tc_free(t);
	ib_device_put(ibdev);
	return ret;
}

/*
 * The dump's first part is read: let the removal on, and return once it
 * changed its clients' state and waits for the gated sync (the old order
 * moved the generation only after that wait).
 */
int dump_window_flip(void)
{
	if (!dumpw.active)
		return -EINVAL;
	dumpw_end_hold();
	if (!KT_WAIT(READ_ONCE(dumpw.t[0].client->state) == SM_INVALIDATED &&
		     READ_ONCE(dumpw.t[DUMPW_CLIENTS - 1].client->state) ==
		     SM_INVALIDATED, 60))
		return -ETIMEDOUT;
	return 0;
}

/*
 * The dump is over. It ran while the removal waited for the gated sync:
 * nothing was invalidated through ->invalidate yet. Then the gate opens
 * and the removal ends; the clients go.
 */
void test_dump_window_check(void)
{
	struct tc *t = dumpw.t;
	int i;

	if (!dumpw.active) {
		kt_fail++;
		kt_diag("dump_window_check without dump_window_start");
		return;
	}
	KT_EXPECT(dumpw.hold_ended);
	KT_EXPECT(!completion_done(&dumpw.sync.done));
	KT_EXPECT_EQ(atomic_read(&t[0].invalidates), 0);
	complete_all(&dumpw.gate);
	wait_for_completion(&dumpw.sync.done);
	KT_EXPECT_EQ(dumpw.sync.ret, 0);
	for (i = 0; i <= DUMPW_CLIENTS; i++)
		if (!KT_WAIT(atomic_read(&t[i].invalidates) == 1, 60))
			break;
	KT_EXPECT_EQ(i, DUMPW_CLIENTS + 1);
	tc_unregister_all(t, DUMPW_CLIENTS + 1);
	tc_free(t);
	dumpw.t = NULL;
	dumpw.active = false;
}

static void dump_window_exit(void)
{
	if (!dumpw.active)
		return;
	dumpw_end_hold();
	complete_all(&dumpw.gate);
	wait_for_completion(&dumpw.sync.done);
	tc_unregister_all(dumpw.t, DUMPW_CLIENTS + 1);
	tc_free(dumpw.t);
	dumpw.active = false;
}

/* ---- ->fill_info and unregister (two steps around a dump) ---- */

static struct {
	struct tc *t;
	struct completion gate;
	bool active;
} fillt;

int fill_info_start(struct ib_device *ibdev)
{
	if (fillt.active)
		return -EBUSY;
	fillt.t = tc_alloc(1);
	if (!fillt.t)
		return -ENOMEM;
	init_completion(&fillt.gate);
	fillt.t->info_gate = &fillt.gate;
	if (IS_ERR(tc_register(ibdev, fillt.t, 0))) {
		tc_free(fillt.t);
		return -EIO;
	}
	fillt.active = true;
	return 0;
}

/*
 * A dump is inside the client's ->fill_info (userspace started it after
 * fill_info_start): unregister must wait for it to return.
 */
void test_fill_info_check(void)
{
	struct kt_caller unreg = {};
	bool early = false;

	if (!fillt.active) {
		kt_fail++;
		kt_diag("fill_info_check without fill_info_start");
		return;
	}
	if (!KT_WAIT(completion_done(&fillt.t->info_entered), 60)) {
		kt_fail++;
		kt_diag("no dump reached the client's ->fill_info");
		goto out_open;
	}
	unreg.tc = fillt.t;
	if (!kt_start(kt_unregister_fn, &unreg))
		goto out_open;
	/*
	 * It cannot return while ->fill_info waits; if it does within a few
	 * seconds, it did not wait.
	 */
	early = KT_WAIT(completion_done(&unreg.done), 3);
	KT_EXPECT(!early);
out_open:
	complete_all(&fillt.gate);
	if (unreg.task)
		wait_for_completion(&unreg.done);
	else
		tc_unregister(fillt.t);
	/* The dump's reference may be the last one. */
	KT_EXPECT_EQ(tc_wait_release(fillt.t), 1);
	tc_free(fillt.t);
	fillt.active = false;
}

/* ---- killable waits (two steps around a netlink sync) ---- */

static struct {
	struct tc *t;
	struct completion gate;
	struct kt_caller pass;
	bool active;
} killt;

/* A pass that blocks in a client until killable_check opens the gate. */
int killable_start(struct ib_device *ibdev)
{
	if (killt.active)
		return -EBUSY;
	killt.t = tc_alloc(1);
	if (!killt.t)
		return -ENOMEM;
	init_completion(&killt.gate);
	killt.t->gate = &killt.gate;
	if (IS_ERR(tc_register(ibdev, killt.t, 0))) {
		tc_free(killt.t);
		return -EIO;
	}
	killt.pass = (struct kt_caller){ .ibdev = ibdev, .dir = IB_SYNC_MEM_TO_DEVICE,
					.timeout_ms = 600000 };
	if (!kt_start(kt_sync_device_fn, &killt.pass)) {
		tc_unregister(killt.t);
		tc_free(killt.t);
		return -EIO;
	}
	killt.active = true;
	if (!KT_WAIT(completion_done(&killt.t->entered), 60))
		return -ETIMEDOUT;
	return 0;
}

void test_killable_check(void)
{
	if (!killt.active) {
		kt_fail++;
		kt_diag("killable_check without killable_start");
		return;
	}
	complete_all(&killt.gate);
	wait_for_completion(&killt.pass.done);
	KT_EXPECT_EQ(killt.pass.ret, 0);
	tc_unregister(killt.t);
	KT_EXPECT_EQ(atomic_read(&killt.t->releases), 1);
	tc_free(killt.t);
	killt.active = false;
}

/* ---- many clients at once (replies at the documented limits) ---- */

static struct {
	struct tc *t;
	unsigned int n;
} bulk;

int bulk_register(struct ib_device *ibdev, unsigned int n)
{
	unsigned int i;

	if (bulk.t || !n)
		return -EINVAL;
	bulk.t = tc_alloc(n);
	if (!bulk.t)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (IS_ERR(tc_register(ibdev, &bulk.t[i], 0))) {
			bulk.n = i;
			bulk_unregister();
			return -ENOSPC;
		}
	}
	bulk.n = n;
	return 0;
}

/*
 * The memory of bulk client 0 goes while a sync of it is in flight (held
 * on a gate): ib_sync_mem_invalidate(), from a thread, has made the client
 * invalidated and waits for that sync, before its ->invalidate (and the
 * generation bump that goes with it) when this returns. A dump that runs
 * meanwhile sees the generation move only if the state change moved it.
 * bulk_invalidate_release opens the gate and waits for both threads.
 */
static struct {
	struct completion gate;
	struct kt_caller sync;
	struct kt_caller inval;
	bool active;
} bulk_inval;

int bulk_invalidate_held(void)
{
	struct tc *t;

	if (!bulk.n || bulk_inval.active)
		return -EINVAL;
	t = &bulk.t[0];
	init_completion(&bulk_inval.gate);
	reinit_completion(&t->entered);
	t->gate = &bulk_inval.gate;
	bulk_inval.sync = (struct kt_caller){
		.client = t->client, .dir = IB_SYNC_MEM_TO_DEVICE,
		.timeout_ms = 120000,
	};
	bulk_inval.inval = (struct kt_caller){ .client = t->client };
	if (!kt_start(kt_sync_client_fn, &bulk_inval.sync))
		return -EIO;
	bulk_inval.active = true;
	if (!wait_for_completion_timeout(&t->entered, 60 * HZ) ||
	    !kt_start(kt_invalidate_fn, &bulk_inval.inval) ||
	    !KT_WAIT(READ_ONCE(t->client->state) == SM_INVALIDATED, 60)) {
		complete_all(&bulk_inval.gate);
		return -EIO;
	}
	return 0;
}

int bulk_invalidate_release(void)
{
	if (!bulk_inval.active)
		return -EINVAL;
	complete_all(&bulk_inval.gate);
	wait_for_completion(&bulk_inval.sync.done);
	if (bulk_inval.inval.task)
		wait_for_completion(&bulk_inval.inval.done);
	bulk.t[0].gate = NULL;
	bulk_inval.active = false;
	return atomic_read(&bulk.t[0].invalidates) == 1 ? 0 : -EIO;
}

void bulk_unregister(void)
{
	tc_unregister_all(bulk.t, bulk.n);
	tc_free(bulk.t);
	bulk.t = NULL;
	bulk.n = 0;
}

/* ---- a NETLINK_URELEASE held back ---- */

/*
 * netlink frees a closing socket's portid before it tells the notifier
 * chain: a new socket can get that portid in between. Holding the release
 * of one portid here (first in the chain) makes that window as wide as a
 * test needs.
 */
static struct {
	u32 portid;
	bool armed;
	atomic_t held;
	struct completion release;
} urel;

static int urel_notify(struct notifier_block *nb, unsigned long event,
		       void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !READ_ONCE(urel.armed) || n->portid != READ_ONCE(urel.portid))
		return NOTIFY_DONE;
	WRITE_ONCE(urel.armed, false);
	atomic_inc(&urel.held);
	wait_for_completion_timeout(&urel.release, 120 * HZ);
	atomic_dec(&urel.held);
	return NOTIFY_DONE;
}

static struct notifier_block urel_nb = {
	.notifier_call = urel_notify,
	.priority = INT_MAX,
};

static bool urel_registered;

int urelease_hold(u32 portid)
{
	int ret;

	if (!urel_registered) {
		init_completion(&urel.release);
		ret = netlink_register_notifier(&urel_nb);
		if (ret)
			return ret;
		urel_registered = true;
	}
	reinit_completion(&urel.release);
	WRITE_ONCE(urel.portid, portid);
	WRITE_ONCE(urel.armed, true);
	return 0;
}

/* 0 once the held release is waiting here, -EAGAIN before. */
int urelease_held(void)
{
	return atomic_read(&urel.held) ? 0 : -EAGAIN;
}

void urelease_release(void)
{
	WRITE_ONCE(urel.armed, false);
	complete_all(&urel.release);
}

void test_guarantees_exit(void)
{
	dump_window_exit();
	if (inval_race.active) {
		complete_all(&inval_race.gate);
		wait_for_completion(&inval_race.inval.done);
		tc_unregister(inval_race.t);
		tc_free(inval_race.t);
		inval_race.active = false;
	}
	if (urel_registered) {
		urelease_release();
		netlink_unregister_notifier(&urel_nb);
	}
	if (bulk.t)
		bulk_unregister();
}
