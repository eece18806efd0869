// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: memory that moves (ib_sync_mem_invalidate_range(),
 * IB_SYNC_MEM_INVAL_MOVED, ->revalidate).
 *
 *   moves                   the errnos of bad moves; a move is not terminal;
 *	the next ->sync is preceded by one ->revalidate of the exact span
 *	moved (ranges merged); a failed ->revalidate is the sync's result and
 *	is tried again; a lazy client is revalidated only when it owes a
 *	sync; a move from atomic context
 *   move_during_revalidate  a move while ->revalidate runs returns without
 *	waiting for it and is not lost; a second sync waiting meanwhile does
 *	not revalidate again
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "sync_mem_test.h"

/* The test clients are 4096 bytes (tc_register_ops()). */
#define MV_SIZE		4096

/* One sync of @t in the caller; checks what ->revalidate was given. */
static void mv_expect_sync(struct tc *t, int err, int revalidates, u64 off,
			   u64 len)
{
	int syncs = atomic_read(&t->syncs);

	KT_EXPECT_EQ(ib_sync_mem_sync(t->client, IB_SYNC_MEM_TO_DEVICE, 0),
		     err);
	KT_EXPECT_EQ(atomic_read(&t->revalidates), revalidates);
	KT_EXPECT_EQ(READ_ONCE(t->reval_off), off);
	KT_EXPECT_EQ(READ_ONCE(t->reval_len), len);
	/* ->revalidate first, then ->sync unless it failed. */
	KT_EXPECT_EQ(atomic_read(&t->syncs), syncs + (err ? 0 : 1));
}

static void mv_bad_input(struct tc *plain, struct tc *t)
{
	struct ib_sync_mem_client *c = t->client;

	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, plain->client, 0,
						  MV_SIZE), -EOPNOTSUPP);
	KT_EXPECT_EQ(ib_sync_mem_invalidate(kt_owner, plain->client,
					    IB_SYNC_MEM_INVAL_MOVED),
		     -EOPNOTSUPP);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_other, c, 0, 1), -EPERM);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(NULL, c, 0, 1), -EPERM);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, c, 0, 0), -EINVAL);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, c, MV_SIZE, 1),
		     -ERANGE);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, c, 1, MV_SIZE),
		     -ERANGE);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, c, U64_MAX, 2),
		     -ERANGE);
	KT_EXPECT_EQ(ib_sync_mem_invalidate(kt_owner, c, 0), -EINVAL);
	KT_EXPECT_EQ(ib_sync_mem_invalidate(kt_owner, c,
					    IB_SYNC_MEM_INVAL_MOVED + 1),
		     -EINVAL);
	/* None of those moved anything, nor invalidated the client. */
	mv_expect_sync(t, 0, 0, 0, 0);
	KT_EXPECT_EQ(atomic_read(&t->invalidates), 0);
	KT_EXPECT_EQ(atomic_read(&plain->invalidates), 0);
}

void test_moves(struct ib_device *ibdev)
{
	struct ib_sync_mem_result res = {};
	static DEFINE_SPINLOCK(lock);
	struct ib_sync_mem_client *held;
	unsigned long flags;
	struct tc *t = tc_alloc(3);
	int ret;

	if (!t)
		return;
	/* t[0] cannot be moved; t[1] can; t[2] can and is lazy. */
	if (IS_ERR(tc_register(ibdev, &t[0], 0)) ||
	    IS_ERR(tc_register_ops(ibdev, &t[1], &tc_move_ops, 0)) ||
	    IS_ERR(tc_register_ops(ibdev, &t[2], &tc_move_ops,
				   IB_SYNC_MEM_F_LAZY))) {
		kt_fail++;
		kt_diag("register: %ld %ld %ld", PTR_ERR(t[0].client),
			PTR_ERR(t[1].client), PTR_ERR(t[2].client));
		goto out;
	}
	mv_bad_input(&t[0], &t[1]);

	/* The last byte: the exact span, once, before the ->sync. */
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, t[1].client,
						  MV_SIZE - 1, 1), 0);
	mv_expect_sync(&t[1], 0, 1, MV_SIZE - 1, 1);
	KT_EXPECT_EQ(t[1].reval_syncs, 1);
	mv_expect_sync(&t[1], 0, 1, MV_SIZE - 1, 1);

	/* Two ranges: their span. */
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, t[1].client, 2000,
						  48), 0);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, t[1].client, 100,
						  10), 0);
	mv_expect_sync(&t[1], 0, 2, 100, 1948);

	/* The whole client, by reason; not terminal, no ->invalidate. */
	KT_EXPECT_EQ(ib_sync_mem_invalidate(kt_owner, t[1].client,
					    IB_SYNC_MEM_INVAL_MOVED), 0);
	KT_EXPECT_EQ(READ_ONCE(t[1].client->state), SM_LIVE);
	mv_expect_sync(&t[1], 0, 3, 0, MV_SIZE);
	KT_EXPECT_EQ(atomic_read(&t[1].invalidates), 0);

	/* A failed ->revalidate is the sync's result, and is tried again. */
	t[1].reval_fail = -EIO;
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, t[1].client, 8, 8),
		     0);
	mv_expect_sync(&t[1], -EIO, 4, 8, 8);
	KT_EXPECT_EQ(ib_sync_mem_client_last_err(t[1].client), -EIO);
	/* In a pass too: a client's error, the others ran. */
	KT_EXPECT_EQ(ib_sync_mem_sync_owner(ibdev, kt_owner,
					    IB_SYNC_MEM_TO_DEVICE, 0, &res),
		     -EIO);
	KT_EXPECT_EQ(res.clients, 2);
	KT_EXPECT_EQ(res.errors, 1);
	KT_EXPECT_EQ(res.skipped, 1);
	KT_EXPECT_EQ(res.err, -EIO);
	KT_EXPECT_EQ(atomic_read(&t[1].revalidates), 5);
	t[1].reval_fail = 0;
	mv_expect_sync(&t[1], 0, 6, 8, 8);
	mv_expect_sync(&t[1], 0, 6, 8, 8);

	/* A lazy client that owes no sync is not revalidated until it does. */
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, t[2].client, 0, 64),
		     0);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[2].client, IB_SYNC_MEM_TO_DEVICE, 0),
		     0);
	KT_EXPECT_EQ(atomic_read(&t[2].revalidates), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].syncs), 0);
	ib_sync_mem_mark_dirty(t[2].client, IB_SYNC_MEM_TO_DEVICE);
	mv_expect_sync(&t[2], 0, 1, 0, 64);

	/* From atomic context: never sleeps (the debug kernel would say so). */
	spin_lock_irqsave(&lock, flags);
	ret = ib_sync_mem_invalidate_range(kt_owner, t[1].client, 4, 4);
	spin_unlock_irqrestore(&lock, flags);
	KT_EXPECT_EQ(ret, 0);
	mv_expect_sync(&t[1], 0, 7, 4, 4);

	/* Gone for good: a move of it fails with the state's errno. */
	ib_sync_mem_invalidate(kt_owner, t[2].client, IB_SYNC_MEM_INVAL_MEMORY);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, t[2].client, 0, 1),
		     -ENXIO);
	held = ib_sync_mem_get(t[1].client);
	tc_unregister_all(t, 3);
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, held, 0, 1),
		     -ENODEV);
	ib_sync_mem_put(held);
	KT_EXPECT_EQ(atomic_read(&t[1].releases), 1);
	KT_EXPECT_EQ(atomic_read(&t[1].after_inval), 0);
out:
	tc_free(t);
}

/* A move made from a thread, so that a move that waits cannot hang us. */
struct mv_mover {
	struct tc *t;
	u64 off, len;
	int ret;
	struct completion done;
};

static int mv_move_fn(void *arg)
{
	struct mv_mover *m = arg;

	m->ret = ib_sync_mem_invalidate_range(kt_owner, m->t->client, m->off,
					      m->len);
	complete_all(&m->done);
	return 0;
}

/* @k syncs @t to-device (kt_sync_client_fn). */
static void mv_caller(struct kt_caller *k, struct tc *t)
{
	k->client = t->client;
	k->dir = IB_SYNC_MEM_TO_DEVICE;
}

/*
 * Move [0, 16) of @t and start a sync of it on a thread (@k), then wait
 * until that sync is in ->revalidate (held by the test's gate). False,
 * reported, if the thread could not start.
 */
static bool mv_start_revalidating(struct kt_caller *k, struct tc *t)
{
	KT_EXPECT_EQ(ib_sync_mem_invalidate_range(kt_owner, t->client, 0, 16),
		     0);
	mv_caller(k, t);
	if (!kt_start(kt_sync_client_fn, k))
		return false;
	if (!wait_for_completion_timeout(&t->reval_entered, 60 * HZ)) {
		kt_fail++;
		kt_diag("->revalidate never ran");
	}
	return true;
}

/*
 * Two syncs while ->revalidate runs: the second waits for the first's
 * revalidation (killable) and, nothing having moved since, does not
 * revalidate again.
 */
static void mv_second_waits(struct tc *t, struct completion *gate)
{
	struct kt_caller a = {}, b = {};
	struct task_struct *task;

	if (!mv_start_revalidating(&a, t))
		return;
	mv_caller(&b, t);
	init_completion(&b.done);
	task = kthread_create(kt_sync_client_fn, &b, "kt_caller");
	if (IS_ERR(task)) {
		kt_fail++;
		kt_diag("kthread_create: %ld", PTR_ERR(task));
		complete_all(&b.done);
	} else {
		get_task_struct(task);
		wake_up_process(task);
		if (!KT_WAIT(READ_ONCE(task->__state) == TASK_KILLABLE, 60)) {
			kt_fail++;
			kt_diag("the second sync never waited for the first");
		}
		put_task_struct(task);
	}
	complete_all(gate);
	wait_for_completion(&a.done);
	wait_for_completion(&b.done);
	KT_EXPECT_EQ(a.ret, 0);
	KT_EXPECT_EQ(b.ret, 0);
	KT_EXPECT_EQ(atomic_read(&t->revalidates), 1);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 2);
}

/*
 * A move while ->revalidate runs: it returns without waiting for it, and
 * the next sync revalidates again (the one in flight may have mapped the
 * old place), with the span of both moves.
 */
static void mv_move_meanwhile(struct tc *t, struct completion *gate)
{
	struct mv_mover m = { .t = t, .off = 1000, .len = 24 };
	struct kt_caller a = {};
	struct task_struct *task;

	if (!mv_start_revalidating(&a, t))
		return;
	init_completion(&m.done);
	task = kthread_run(mv_move_fn, &m, "kt_mover");
	if (IS_ERR(task)) {
		kt_fail++;
		kt_diag("kthread_run: %ld", PTR_ERR(task));
		complete_all(&m.done);
	}
	if (!KT_WAIT(completion_done(&m.done), 60)) {
		kt_fail++;
		kt_diag("a move waited for the ->revalidate in flight");
	}
	complete_all(gate);
	wait_for_completion(&a.done);
	wait_for_completion(&m.done);
	KT_EXPECT_EQ(m.ret, 0);
	KT_EXPECT_EQ(a.ret, 0);
	KT_EXPECT_EQ(atomic_read(&t->revalidates), 2);
	KT_EXPECT_EQ(READ_ONCE(t->reval_len), 16);
	mv_expect_sync(t, 0, 3, 0, 1024);
	mv_expect_sync(t, 0, 3, 0, 1024);
}

void test_move_during_revalidate(struct ib_device *ibdev)
{
	DECLARE_COMPLETION_ONSTACK(gate);
	struct tc *t = tc_alloc(1);

	if (!t)
		return;
	if (IS_ERR(tc_register_ops(ibdev, t, &tc_move_ops, 0))) {
		kt_fail++;
		kt_diag("register: %ld", PTR_ERR(t->client));
		goto out;
	}
	t->reval_gate = &gate;
	mv_second_waits(t, &gate);
	reinit_completion(&gate);
	mv_move_meanwhile(t, &gate);
	t->reval_gate = NULL;
	tc_unregister(t);
out:
	tc_free(t);
}
