// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: ranges (ib_sync_mem_sync_range(), a batch entry's
 * range, ib_sync_mem_mark_dirty_range()).
 *
 *   ranges       a range sync calls ->sync_range over exactly that range,
 *	counts its bytes, runs whatever the client's laziness and consumes no
 *	mark; a kind without ->sync_range is synced whole; bad ranges (no
 *	length, outside, overflowing, off the alignment) run and count
 *	nothing; an inbound range is the owner's flush; each callback gets
 *	its caller's deadline
 *   dirty_spans  a ranged lazy client's sync covers the spans marked,
 *	sorted, joined when they touch, the nearest merged past four, per
 *	direction; a mark made while its sync runs is owed to the next
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include "sync_mem_test.h"

#define RG_SIZE		(1024 * 1024)
#define TD		IB_SYNC_MEM_TO_DEVICE
#define TC		IB_SYNC_MEM_TO_CPU

/* Bytes a client's counters say it made coherent. */
static u64 rg_bytes(struct ib_sync_mem_client *c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(c->stats, cpu)->bytes;
	return sum;
}

/* Forget the spans @t was given. */
static void rg_reset(struct tc *t)
{
	atomic_set(&t->nranges, 0);
	memset(t->ranges, 0, sizeof(t->ranges));
}

/* Was span @i of @t's calls [@start, @end)? */
#define RG_EXPECT_SPAN(t, i, s, e) do {					\
	const struct sm_span *_r = &(t)->ranges[i];			\
	KT_EXPECT_EQ(_r->start, (s));					\
	KT_EXPECT_EQ(_r->end, (e));					\
} while (0)

static void rg_bad(struct tc *t, u64 off, u64 len, int err)
{
	struct ib_sync_mem_batch_entry e = {
		.client = t->client, .offset = off, .len = len,
	};
	u64 bytes = rg_bytes(t->client);
	int calls = atomic_read(&t->nranges) + atomic_read(&t->syncs);

	KT_EXPECT_EQ(ib_sync_mem_sync_range(t->client, TD, off, len, 0), err);
	if (len) {
		KT_EXPECT_EQ(ib_sync_mem_sync_many(&e, 1, TD, 0), 0);
		KT_EXPECT_EQ(e.err, err);
		KT_EXPECT_EQ(e.ran, false);
	}
	KT_EXPECT_EQ(atomic_read(&t->nranges) + atomic_read(&t->syncs), calls);
	KT_EXPECT_EQ(rg_bytes(t->client), bytes);
}

void test_ranges(struct ib_device *ibdev)
{
	struct ib_sync_mem_batch_entry e[2] = {};
	struct tc *t = tc_alloc(3);
	ktime_t t0;

	if (!t)
		return;
	/* t[0] syncs ranges on 64-byte lines; t[1] cannot; t[2] lazy. */
	if (IS_ERR(tc_register_sized(ibdev, &t[0], &tc_range_ops, 0, RG_SIZE,
				     64)) ||
	    IS_ERR(tc_register_sized(ibdev, &t[1], &tc_ops, 0, RG_SIZE, 0)) ||
	    IS_ERR(tc_register_sized(ibdev, &t[2], &tc_range_ops,
				     IB_SYNC_MEM_F_LAZY, RG_SIZE, 0))) {
		kt_fail++;
		kt_diag("register: %ld %ld %ld", PTR_ERR(t[0].client),
			PTR_ERR(t[1].client), PTR_ERR(t[2].client));
		goto out;
	}

	/* Exactly the range, in the direction asked; its bytes counted. */
	KT_EXPECT_EQ(ib_sync_mem_sync_range(t[0].client, TC, 4096, 8192, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].nranges), 1);
	RG_EXPECT_SPAN(&t[0], 0, 4096, 12288);
	KT_EXPECT_EQ(t[0].range_dir, TC);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 0);
	KT_EXPECT_EQ(rg_bytes(t[0].client), 8192);
	/* A whole sync is ->sync, over all of it. */
	KT_EXPECT_EQ(ib_sync_mem_sync(t[0].client, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 1);
	KT_EXPECT_EQ(atomic_read(&t[0].nranges), 1);
	KT_EXPECT_EQ(rg_bytes(t[0].client), 8192 + RG_SIZE);
	/* The last line may end at the client's end; a failure counts none. */
	KT_EXPECT_EQ(ib_sync_mem_sync_range(t[0].client, TD, RG_SIZE - 64, 64,
					    0), 0);
	RG_EXPECT_SPAN(&t[0], 1, RG_SIZE - 64, RG_SIZE);
	t[0].fail = -EIO;
	KT_EXPECT_EQ(ib_sync_mem_sync_range(t[0].client, TD, 0, 64, 0), -EIO);
	KT_EXPECT_EQ(ib_sync_mem_client_last_err(t[0].client), -EIO);
	t[0].fail = 0;
	KT_EXPECT_EQ(rg_bytes(t[0].client), 8192 + RG_SIZE + 64);

	/* Bad ranges: refused, nothing runs or is counted. */
	rg_bad(&t[0], 0, 0, -EINVAL);
	rg_bad(&t[0], RG_SIZE - 64, 128, -ERANGE);
	rg_bad(&t[0], RG_SIZE, 64, -ERANGE);
	rg_bad(&t[0], U64_MAX - 63, 128, -ERANGE);
	rg_bad(&t[0], 32, 64, -EINVAL);
	rg_bad(&t[0], 64, 96, -EINVAL);
	KT_EXPECT_EQ(atomic_read(&t[0].nranges), 3);

	/* No ->sync_range: the whole client, counted whole. */
	KT_EXPECT_EQ(ib_sync_mem_sync_range(t[1].client, TD, 100, 10, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 1);
	KT_EXPECT_EQ(rg_bytes(t[1].client), RG_SIZE);

	/* A lazy client: a range runs though nothing is marked... */
	KT_EXPECT_EQ(ib_sync_mem_sync_range(t[2].client, TD, 0, 100, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].nranges), 1);
	/* ...and consumes no mark. */
	KT_EXPECT_EQ(ib_sync_mem_mark_dirty_range(t[2].client, TD, 0, 100), 0);
	KT_EXPECT_EQ(ib_sync_mem_sync_range(t[2].client, TD, 0, 100, 0), 0);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[2].client, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].nranges), 3);
	RG_EXPECT_SPAN(&t[2], 2, 0, 100);

	/* A batch: each entry its own range, or none (whole). */
	e[0].client = t[0].client;
	e[0].offset = 128;
	e[0].len = 64;
	e[1].client = t[1].client;
	KT_EXPECT_EQ(ib_sync_mem_sync_many(e, 2, TD, 0), 0);
	KT_EXPECT_EQ(e[0].err, 0);
	KT_EXPECT_EQ(e[0].ran, true);
	RG_EXPECT_SPAN(&t[0], 3, 128, 192);
	KT_EXPECT_EQ(e[1].ran, true);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 2);

	/* Inbound: the owner's flush, the range's bytes counted. */
	KT_EXPECT_EQ(ib_sync_mem_sync_range(t[0].client, IB_SYNC_MEM_INBOUND,
					    0, 4096, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].flushes), 1);
	KT_EXPECT_EQ(atomic_read(&t[0].nranges), 4);
	KT_EXPECT_EQ(rg_bytes(t[0].client), 8192 + RG_SIZE + 64 + 64 + 4096);

	/* Marks: lazy clients only, and the same range checks. */
	KT_EXPECT_EQ(ib_sync_mem_mark_dirty_range(t[0].client, TD, 0, 64),
		     -EINVAL);
	KT_EXPECT_EQ(ib_sync_mem_mark_dirty_range(t[2].client, TD, 0, 0),
		     -EINVAL);
	KT_EXPECT_EQ(ib_sync_mem_mark_dirty_range(t[2].client, TD, RG_SIZE, 1),
		     -ERANGE);
	KT_EXPECT_EQ(ib_sync_mem_mark_dirty_range(t[2].client, 0, 0, 1),
		     -EINVAL);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[2].client, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].nranges), 3);

	/*
	 * ->sync and ->sync_range get their caller's deadline: 600 s from the
	 * call, not the module's default (sync_timeout_ms, 10 s). A value
	 * compared, not a time measured.
	 */
	t0 = ktime_get();
	KT_EXPECT_EQ(ib_sync_mem_sync(t[1].client, TD, 600000), 0);
	KT_EXPECT(ktime_after(READ_ONCE(t[1].deadline), ktime_add_ms(t0, 300000)));
	t0 = ktime_get();
	KT_EXPECT_EQ(ib_sync_mem_sync_range(t[0].client, TD, 0, 64, 600000), 0);
	KT_EXPECT(ktime_after(READ_ONCE(t[0].deadline), ktime_add_ms(t0, 300000)));
out:
	tc_unregister_all(t, 3);
	tc_free(t);
}

void test_dirty_spans(struct ib_device *ibdev)
{
	struct ib_sync_mem_result res = {};
	struct ib_sync_mem_client *c;
	struct tc *t = tc_alloc(1);

	if (!t)
		return;
	c = tc_register_sized(ibdev, t, &tc_range_ops, IB_SYNC_MEM_F_LAZY,
			      RG_SIZE, 0);
	if (IS_ERR(c)) {
		kt_fail++;
		kt_diag("register: %ld", PTR_ERR(c));
		goto out;
	}

	/* Two spans, sorted, their bytes counted; then nothing is owed. */
	ib_sync_mem_mark_dirty_range(c, TD, 16384, 100);
	ib_sync_mem_mark_dirty_range(c, TD, 4096, 4096);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);
	RG_EXPECT_SPAN(t, 0, 4096, 8192);
	RG_EXPECT_SPAN(t, 1, 16384, 16484);
	KT_EXPECT_EQ(atomic_read(&t->syncs), 0);
	KT_EXPECT_EQ(rg_bytes(c), 4196);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);

	/* Spans that overlap or touch join. */
	rg_reset(t);
	ib_sync_mem_mark_dirty_range(c, TD, 0, 10);
	ib_sync_mem_mark_dirty_range(c, TD, 20, 10);
	ib_sync_mem_mark_dirty_range(c, TD, 10, 10);
	ib_sync_mem_mark_dirty_range(c, TD, 25, 20);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 1);
	RG_EXPECT_SPAN(t, 0, 0, 45);

	/* A fifth span: the two nearest merge (gap 1, not 2 or more). */
	rg_reset(t);
	ib_sync_mem_mark_dirty_range(c, TD, 0, 1);
	ib_sync_mem_mark_dirty_range(c, TD, 100, 1);
	ib_sync_mem_mark_dirty_range(c, TD, 1000, 1);
	ib_sync_mem_mark_dirty_range(c, TD, 5000, 1);
	ib_sync_mem_mark_dirty_range(c, TD, 1002, 1);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 4);
	RG_EXPECT_SPAN(t, 0, 0, 1);
	RG_EXPECT_SPAN(t, 1, 100, 101);
	RG_EXPECT_SPAN(t, 2, 1000, 1003);
	RG_EXPECT_SPAN(t, 3, 5000, 5001);

	/* Per direction: to-device consumes only its own. */
	rg_reset(t);
	ib_sync_mem_mark_dirty_range(c, TD, 0, 10);
	ib_sync_mem_mark_dirty_range(c, TC, 100, 10);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 1);
	RG_EXPECT_SPAN(t, 0, 0, 10);
	KT_EXPECT_EQ(t->range_dir, TD);
	/* Bidirectional covers both: only the to-cpu span is left. */
	ib_sync_mem_mark_dirty_range(c, TD, 200, 10);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, IB_SYNC_MEM_BIDIRECTIONAL, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 3);
	RG_EXPECT_SPAN(t, 1, 100, 110);
	RG_EXPECT_SPAN(t, 2, 200, 210);
	KT_EXPECT_EQ(t->range_dir, IB_SYNC_MEM_BIDIRECTIONAL);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TC, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 3);

	/* A whole mark: one span, all of it. */
	rg_reset(t);
	ib_sync_mem_mark_dirty(c, TD);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 1);
	RG_EXPECT_SPAN(t, 0, 0, RG_SIZE);

	/* Written while its sync ran: owed to the next, and only that. */
	rg_reset(t);
	ib_sync_mem_mark_dirty_range(c, TD, 0, 64);
	t->remark.start = 4096;
	t->remark.end = 4160;
	t->remark_dir = TD;
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 1);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);
	RG_EXPECT_SPAN(t, 1, 4096, 4160);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);

	/*
	 * Written again over, or right next to, the span its sync covers,
	 * while that sync ran: the span the mark joins carries the newer
	 * generation and survives the sync's completion, whole.
	 */
	rg_reset(t);
	ib_sync_mem_mark_dirty_range(c, TD, 0, 64);
	t->remark.start = 0;
	t->remark.end = 64;
	t->remark_dir = TD;
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);
	RG_EXPECT_SPAN(t, 1, 0, 64);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);
	rg_reset(t);
	ib_sync_mem_mark_dirty_range(c, TD, 0, 64);
	t->remark.start = 64;
	t->remark.end = 128;
	t->remark_dir = TD;
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);
	RG_EXPECT_SPAN(t, 1, 0, 128);
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);

	/* A failed sync leaves its spans owed. */
	rg_reset(t);
	ib_sync_mem_mark_dirty_range(c, TD, 300, 10);
	t->fail = -EIO;
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), -EIO);
	t->fail = 0;
	KT_EXPECT_EQ(ib_sync_mem_sync(c, TD, 0), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 2);
	RG_EXPECT_SPAN(t, 1, 300, 310);

	/* A device pass covers the spans too. */
	rg_reset(t);
	ib_sync_mem_mark_dirty_range(c, TD, 512, 512);
	KT_EXPECT_EQ(ib_sync_mem_sync_owner(ibdev, kt_owner, TD, 0, &res), 0);
	KT_EXPECT_EQ(atomic_read(&t->nranges), 1);
	RG_EXPECT_SPAN(t, 0, 512, 1024);
out:
	tc_unregister_all(t, 1);
	tc_free(t);
}
