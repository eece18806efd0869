// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: the inbound direction (IB_SYNC_MEM_INBOUND).
 *
 *   inbound       routing: ->flush_inbound instead of ->sync, -EOPNOTSUPP
 *	for a client with neither inbound op, its own dirty state for lazy
 *	clients, in passes as a client's result; bad directions
 *   inbound_read  the module's flush is an RDMA READ through the device
 *	(a kernel QP in loopback on the dev device, rxe0 in the VMs): each
 *	flush of a client with ->inbound_target completes one READ, which
 *	brings back the 8 bytes at the target as they are now; the pages
 *	flushed stay registered (one registration for a page's first
 *	flush, none after it), the least recently used of them given up
 *	for a new one, and every READ reads its own page
 *   inbound_scoped  a flush waiting for the flusher another client's
 *	flush holds ends at its own deadline (-ETIMEDOUT), and with -ENODEV
 *	when its client is unregistered, an unregister that does not wait
 *	for the other client's flush
 *   inbound_teardown  a READ a timed-out flush left in flight is over,
 *	and no MR holds the client's page, when its unregister or
 *	invalidation returns
 *   inbound_buffer  the READs land in a buffer alone in its cache lines
 *   inbound_recovery (in steps, test/vm/20-core.sh)  after the link went
 *	down and a READ failed, flushes of old and new clients work again
 *	once it is up: the QP recovered, once
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cache.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "sync_mem_test.h"

#define IN		IB_SYNC_MEM_INBOUND

static int in_sync(struct tc *t, enum ib_sync_mem_dir dir)
{
	return ib_sync_mem_sync(t->client, dir, 0);
}

void test_inbound(struct ib_device *ibdev)
{
	struct ib_sync_mem_batch_entry e[2] = {};
	struct ib_sync_mem_result res = {};
	struct tc *t = tc_alloc(3);

	if (!t)
		return;
	/* t[0] has no inbound op; t[1] its own flush; t[2] too, lazy. */
	if (IS_ERR(tc_register(ibdev, &t[0], 0)) ||
	    IS_ERR(tc_register_ops(ibdev, &t[1], &tc_inbound_ops, 0)) ||
	    IS_ERR(tc_register_ops(ibdev, &t[2], &tc_inbound_ops,
				   IB_SYNC_MEM_F_LAZY))) {
		kt_fail++;
		kt_diag("register: %ld %ld %ld", PTR_ERR(t[0].client),
			PTR_ERR(t[1].client), PTR_ERR(t[2].client));
		goto out;
	}
	/* Bad input: nothing runs, nothing is counted. */
	KT_EXPECT_EQ(in_sync(&t[0], IN), -EOPNOTSUPP);
	KT_EXPECT_EQ(ib_sync_mem_client_last_err(t[0].client), 0);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 0);
	e[0].client = t[0].client;
	e[1].client = t[1].client;
	KT_EXPECT_EQ(ib_sync_mem_sync_many(e, 2, IN, 0), 0);
	KT_EXPECT_EQ(e[0].err, -EOPNOTSUPP);
	KT_EXPECT_EQ(e[0].ran, false);
	KT_EXPECT_EQ(e[1].err, 0);
	KT_EXPECT_EQ(e[1].ran, true);
	KT_EXPECT_EQ(atomic_read(&t[1].flushes), 1);
	KT_EXPECT_EQ(ib_sync_mem_client_last_err(t[0].client), 0);
	KT_EXPECT_EQ(in_sync(&t[0], IN + 1), -EINVAL);
	KT_EXPECT_EQ(in_sync(&t[0], 0), -EINVAL);

	/* The owner's flush, not ->sync; and ->sync for the others. */
	KT_EXPECT_EQ(in_sync(&t[1], IN), 0);
	KT_EXPECT_EQ(atomic_read(&t[1].flushes), 2);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 0);
	KT_EXPECT_EQ(in_sync(&t[1], IB_SYNC_MEM_BIDIRECTIONAL), 0);
	KT_EXPECT_EQ(atomic_read(&t[1].flushes), 2);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 1);
	t[1].target_fail = -EIO;
	KT_EXPECT_EQ(in_sync(&t[1], IN), -EIO);
	KT_EXPECT_EQ(ib_sync_mem_client_last_err(t[1].client), -EIO);
	KT_EXPECT_EQ(atomic_read(&t[1].flushes), 3);
	t[1].target_fail = 0;

	/* Lazy: its own dirty state, owed only by an inbound mark. */
	KT_EXPECT_EQ(in_sync(&t[2], IN), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].flushes), 0);
	ib_sync_mem_mark_dirty(t[2].client, IB_SYNC_MEM_BIDIRECTIONAL);
	KT_EXPECT_EQ(in_sync(&t[2], IN), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].flushes), 0);
	ib_sync_mem_mark_dirty(t[2].client, IN);
	KT_EXPECT_EQ(in_sync(&t[2], IB_SYNC_MEM_BIDIRECTIONAL), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].syncs), 1);
	KT_EXPECT_EQ(atomic_read(&t[2].flushes), 0);
	KT_EXPECT_EQ(in_sync(&t[2], IN), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].flushes), 1);
	KT_EXPECT_EQ(in_sync(&t[2], IN), 0);
	KT_EXPECT_EQ(atomic_read(&t[2].flushes), 1);

	/* A pass: a client that cannot is a result, the lazy one clean. */
	KT_EXPECT_EQ(ib_sync_mem_sync_owner(ibdev, kt_owner, IN, 0, &res),
		     -EOPNOTSUPP);
	KT_EXPECT_EQ(res.clients, 2);
	KT_EXPECT_EQ(res.errors, 1);
	KT_EXPECT_EQ(res.skipped, 1);
	KT_EXPECT_EQ(res.err, -EOPNOTSUPP);
	KT_EXPECT_EQ(atomic_read(&t[1].flushes), 4);
	KT_EXPECT_EQ(atomic_read(&t[1].syncs), 1);
	tc_unregister_all(t, 3);
out:
	tc_free(t);
}

/* The flushes of the dev device's QP so far, and what the last one read. */
static u64 in_reads(struct ib_device *ibdev, u64 *last)
{
	struct sm_inbound_stats st;

	sm_inbound_stats(test_domain(ibdev), &st);
	*last = st.last;
	return st.reads;
}

/* The pages the dev device's QP registered so far. */
static u64 in_regs(struct ib_device *ibdev)
{
	struct sm_inbound_stats st;

	sm_inbound_stats(test_domain(ibdev), &st);
	return st.regs;
}

#define IN_PAGES	5	/* one more than the device keeps registered */

/* Flush page @i of @addr through @t: it must READ that page's value. */
static void in_flush_page(struct ib_device *ibdev, struct tc *t,
			  const u64 *addr, int i)
{
	u64 last;

	t->target = addr[i] + 8 * i;
	KT_EXPECT_EQ(in_sync(t, IN), 0);
	in_reads(ibdev, &last);
	KT_EXPECT_EQ(last, 0x9a9e000000000000ULL + i);
}

/*
 * Five pages through four registrations, least recently used out. 0 1 2 3
 * first, without counting: a page an earlier test flushed may be one of
 * them, still registered; after them the four registrations hold 0 1 2 3,
 * whatever they held before. Then 0 1 2 3 again register nothing, 4 takes
 * 0's, 1 keeps its own, 0 takes 2's (3 was used after 2), 2 takes 3's, and
 * 1 4 0 2 hold.
 */
static void in_flush_lru(struct ib_device *ibdev, struct tc *t)
{
	static const struct { int page; bool reg; } seq[] = {
		{ 0, false }, { 1, false }, { 2, false }, { 3, false },
		{ 4, true }, { 1, false }, { 0, true }, { 2, true },
		{ 1, false }, { 4, false }, { 0, false }, { 2, false },
	};
	u64 *page[IN_PAGES] = {}, addr[IN_PAGES] = {};
	int i;

	for (i = 0; i < IN_PAGES; i++) {
		page[i] = (u64 *)get_zeroed_page(GFP_KERNEL);
		if (!page[i])
			goto out;
		addr[i] = ib_dma_map_single(ibdev, page[i], PAGE_SIZE,
					    DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(ibdev, addr[i])) {
			addr[i] = 0;
			goto out;
		}
		/* Word i of page i: a READ of the wrong page reads 0. */
		page[i][i] = 0x9a9e000000000000ULL + i;
	}
	for (i = 0; i < IN_PAGES - 1; i++)
		in_flush_page(ibdev, t, addr, i);
	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		u64 regs = in_regs(ibdev);

		in_flush_page(ibdev, t, addr, seq[i].page);
		KT_EXPECT_EQ(in_regs(ibdev), regs + seq[i].reg);
	}
	i = IN_PAGES;
out:
	if (i < IN_PAGES) {
		kt_fail++;
		kt_diag("page %d: no page or no mapping", i);
	}
	for (i = 0; i < IN_PAGES; i++) {
		if (addr[i])
			ib_dma_unmap_single(ibdev, addr[i], PAGE_SIZE,
					    DMA_BIDIRECTIONAL);
		free_page((unsigned long)page[i]);
	}
}

void test_inbound_read(struct ib_device *ibdev)
{
	struct tc *t = tc_alloc(2);
	u64 *page = (u64 *)get_zeroed_page(GFP_KERNEL);
	u64 reads, regs, last;

	if (!t || !page)
		goto out;
	if (IS_ERR(tc_register_ops(ibdev, &t[0], &tc_target_ops, 0)) ||
	    IS_ERR(tc_register_ops(ibdev, &t[1], &tc_target_ops,
				   IB_SYNC_MEM_F_LAZY))) {
		kt_fail++;
		kt_diag("register: %ld %ld", PTR_ERR(t[0].client),
			PTR_ERR(t[1].client));
		goto unreg;
	}
	/* The device's address of the page (the kernel's on rxe). */
	t[0].target = ib_dma_map_single(ibdev, page, PAGE_SIZE,
					DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, t[0].target)) {
		kt_fail++;
		kt_diag("ib_dma_map_single failed");
		goto unreg;
	}
	t[0].target += 64;
	t[1].target = t[0].target;

	reads = in_reads(ibdev, &last);
	page[8] = 0x5a171e55c0de0001ULL;
	KT_EXPECT_EQ(in_sync(&t[0], IN), 0);
	KT_EXPECT_EQ(in_reads(ibdev, &last), reads + 1);
	KT_EXPECT_EQ(last, 0x5a171e55c0de0001ULL);
	/* Registered now (by an earlier test if the page was its too). */
	regs = in_regs(ibdev);
	KT_EXPECT_EQ(atomic_read(&t[0].targets), 1);
	KT_EXPECT_EQ(atomic_read(&t[0].syncs), 0);
	/* Each flush reads the memory as it is now. */
	page[8] = 0x5a171e55c0de0002ULL;
	KT_EXPECT_EQ(in_sync(&t[0], IN), 0);
	KT_EXPECT_EQ(in_reads(ibdev, &last), reads + 2);
	KT_EXPECT_EQ(last, 0x5a171e55c0de0002ULL);
	/* Its page stays registered. */
	KT_EXPECT_EQ(in_regs(ibdev), regs);
	/* An unaligned target: the 8 aligned bytes that hold it. */
	t[0].target += 3;
	KT_EXPECT_EQ(in_sync(&t[0], IN), 0);
	KT_EXPECT_EQ(in_reads(ibdev, &last), reads + 3);
	KT_EXPECT_EQ(last, 0x5a171e55c0de0002ULL);
	/* No READ for a target that fails, nor for a lazy clean client. */
	t[0].target_fail = -ENXIO;
	KT_EXPECT_EQ(in_sync(&t[0], IN), -ENXIO);
	KT_EXPECT_EQ(in_sync(&t[1], IN), 0);
	KT_EXPECT_EQ(in_reads(ibdev, &last), reads + 3);
	KT_EXPECT_EQ(atomic_read(&t[1].targets), 0);
	ib_sync_mem_mark_dirty(t[1].client, IN);
	KT_EXPECT_EQ(in_sync(&t[1], IN), 0);
	KT_EXPECT_EQ(in_reads(ibdev, &last), reads + 4);
	KT_EXPECT_EQ(atomic_read(&t[1].targets), 1);
	KT_EXPECT_EQ(in_regs(ibdev), regs);
	t[0].target_fail = 0;
	in_flush_lru(ibdev, &t[0]);
	ib_dma_unmap_single(ibdev, t[1].target - 64, PAGE_SIZE,
			    DMA_BIDIRECTIONAL);
unreg:
	if (!IS_ERR_OR_NULL(t[0].client))
		tc_unregister(&t[0]);
	if (!IS_ERR_OR_NULL(t[1].client))
		tc_unregister(&t[1]);
out:
	free_page((unsigned long)page);
	tc_free(t);
}

/* What the dev device's flusher says now. */
static void in_stats(struct ib_device *ibdev, struct sm_inbound_stats *st)
{
	sm_inbound_stats(test_domain(ibdev), st);
}

/* Does an MR of the dev device's flusher hold the page of @addr? */
static bool in_held(struct ib_device *ibdev, u64 addr)
{
	struct sm_inbound_stats st;
	int i;

	in_stats(ibdev, &st);
	for (i = 0; i < SM_INBOUND_MRS; i++)
		if (st.held[i] == (addr & PAGE_MASK))
			return true;
	return false;
}

/* A zeroed page mapped for @ibdev: its kernel address, *@dma its DMA one. */
static u64 *in_page(struct ib_device *ibdev, u64 *dma)
{
	u64 *page = (u64 *)get_zeroed_page(GFP_KERNEL);

	*dma = 0;
	if (!page)
		return NULL;
	*dma = ib_dma_map_single(ibdev, page, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, *dma)) {
		*dma = 0;
		free_page((unsigned long)page);
		return NULL;
	}
	return page;
}

static void in_page_free(struct ib_device *ibdev, u64 *page, u64 dma)
{
	if (!page)
		return;
	ib_dma_unmap_single(ibdev, dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
	free_page((unsigned long)page);
}

/* Start @k: an inbound sync of @t with a timeout of @ms. */
static bool in_start(struct kt_caller *k, struct tc *t, unsigned int ms)
{
	k->client = t->client;
	k->dir = IN;
	k->timeout_ms = ms;
	return kt_start(kt_sync_client_fn, k);
}

/* @k ended within @secs (a hang guard). */
static bool in_ended(struct kt_caller *k, unsigned int secs)
{
	return wait_for_completion_timeout(&k->done, secs * HZ) > 0;
}

/*
 * inbound_scoped: a flush that waits for the flusher is bounded by its own
 * deadline and scoped to its client. With A's READ in flight (parked by
 * inbound_hold), B's flush with a 200 ms timeout ends with -ETIMEDOUT while
 * A still waits, and C's flush, queued behind A's, ends with -ENODEV when
 * C is unregistered, an unregister that returns while A still waits.
 */
void test_inbound_scoped(struct ib_device *ibdev)
{
	struct kt_caller k[4] = {};
	bool started[4] = {};
	struct tc *t = tc_alloc(3);
	u64 dma, *page = in_page(ibdev, &dma);
	int i, n = 0;

	if (!t || !page) {
		kt_fail++;
		kt_diag("no memory or no mapping");
		goto out;
	}
	for (n = 0; n < 3; n++) {
		if (IS_ERR(tc_register_ops(ibdev, &t[n], &tc_target_ops, 0))) {
			kt_fail++;
			kt_diag("register %d: %ld", n, PTR_ERR(t[n].client));
			goto unreg;
		}
		t[n].target = dma + 64 * n;
	}
	/* The flusher exists and works. */
	KT_EXPECT_EQ(in_sync(&t[0], IN), 0);

	sm_inbound_set_hold(true);
	started[0] = in_start(&k[0], &t[0], 120000);
	if (!started[0] || !KT_WAIT(sm_inbound_parked() == 1, 30)) {
		kt_fail++;
		kt_diag("A's READ never parked: %d", sm_inbound_parked());
		goto release;
	}
	/* B: its deadline ends its wait for the flusher A holds. */
	started[1] = in_start(&k[1], &t[1], 200);
	if (started[1] && in_ended(&k[1], 20)) {
		KT_EXPECT_EQ(k[1].ret, -ETIMEDOUT);
	} else {
		kt_fail++;
		kt_diag("B's flush (200 ms) still waits behind A's after 20 s");
	}
	KT_EXPECT(!completion_done(&k[0].done));

	/* C: queued behind A; its unregister does not wait for A. */
	started[2] = in_start(&k[2], &t[2], 120000);
	if (!started[2] || !KT_WAIT(atomic_read(&t[2].targets) == 1, 30)) {
		kt_fail++;
		kt_diag("C's flush never began");
		goto release;
	}
	k[3].tc = &t[2];
	started[3] = kt_start(kt_unregister_fn, &k[3]);
	if (!started[3] || !in_ended(&k[3], 20)) {
		kt_fail++;
		kt_diag("C's unregister still waits for A's flush after 20 s");
	} else if (in_ended(&k[2], 20)) {
		KT_EXPECT_EQ(k[2].ret, -ENODEV);
	} else {
		kt_fail++;
		kt_diag("C's flush still waits after its unregister returned");
	}
	KT_EXPECT(!completion_done(&k[0].done));

release:
	sm_inbound_set_hold(false);
	for (i = 0; i < 4; i++)
		if (started[i])
			wait_for_completion(&k[i].done);
	if (started[0])
		KT_EXPECT_EQ(k[0].ret, 0);
	KT_EXPECT_EQ(sm_inbound_parked(), 0);
unreg:
	for (i = 0; i < n; i++)
		if (!(i == 2 && started[3]))
			tc_unregister(&t[i]);
out:
	in_page_free(ibdev, page, dma);
	tc_free(t);
}

/*
 * inbound_teardown: a flush that gave up at its deadline leaves its READ
 * in flight (parked by inbound_hold); when the unregister (or the
 * invalidation) of its client returns, that READ is no longer in flight
 * and no MR holds the client's page, before its memory goes. The flusher
 * works on after it.
 */
void test_inbound_teardown(struct ib_device *ibdev)
{
	struct sm_inbound_stats st;
	struct tc *t = tc_alloc(3);
	u64 dma[2], *page[2];
	bool gone0 = false;
	int i, n = 0;

	page[0] = in_page(ibdev, &dma[0]);
	page[1] = in_page(ibdev, &dma[1]);
	if (!t || !page[0] || !page[1]) {
		kt_fail++;
		kt_diag("no memory or no mapping");
		goto out;
	}
	for (n = 0; n < 3; n++) {
		if (IS_ERR(tc_register_ops(ibdev, &t[n], &tc_target_ops, 0))) {
			kt_fail++;
			kt_diag("register %d: %ld", n, PTR_ERR(t[n].client));
			goto unreg;
		}
		t[n].target = dma[n & 1] + 64;
	}

	/* Unregister after a flush that timed out. */
	KT_EXPECT_EQ(in_sync(&t[0], IN), 0);
	KT_EXPECT(in_held(ibdev, dma[0]));
	sm_inbound_set_hold(true);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[0].client, IN, 200), -ETIMEDOUT);
	KT_EXPECT_EQ(sm_inbound_parked(), 1);
	tc_unregister(&t[0]);
	gone0 = true;
	KT_EXPECT_EQ(tc_wait_release(&t[0]), 1);
	in_stats(ibdev, &st);
	KT_EXPECT_EQ(st.inflight, false);
	KT_EXPECT_EQ(sm_inbound_parked(), 0);
	KT_EXPECT(!in_held(ibdev, dma[0]));
	sm_inbound_set_hold(false);

	/* Invalidation of the memory after a flush that timed out. */
	KT_EXPECT_EQ(in_sync(&t[1], IN), 0);
	KT_EXPECT(in_held(ibdev, dma[1]));
	sm_inbound_set_hold(true);
	KT_EXPECT_EQ(ib_sync_mem_sync(t[1].client, IN, 200), -ETIMEDOUT);
	KT_EXPECT_EQ(sm_inbound_parked(), 1);
	ib_sync_mem_invalidate(kt_owner, t[1].client, IB_SYNC_MEM_INVAL_MEMORY);
	in_stats(ibdev, &st);
	KT_EXPECT_EQ(st.inflight, false);
	KT_EXPECT_EQ(sm_inbound_parked(), 0);
	KT_EXPECT(!in_held(ibdev, dma[1]));
	sm_inbound_set_hold(false);
	KT_EXPECT_EQ(in_sync(&t[1], IN), -ENXIO);

	/* The flusher works on: a READ of the page the first one held. */
	page[0][8] = 0x7ea2d0a1d0a1d0a1ULL;
	KT_EXPECT_EQ(in_sync(&t[2], IN), 0);
	in_stats(ibdev, &st);
	KT_EXPECT_EQ(st.last, 0x7ea2d0a1d0a1d0a1ULL);
	KT_EXPECT_EQ(st.broken, false);
unreg:
	sm_inbound_set_hold(false);
	for (i = gone0 ? 1 : 0; i < n; i++)
		tc_unregister(&t[i]);
out:
	in_page_free(ibdev, page[0], dma[0]);
	in_page_free(ibdev, page[1], dma[1]);
	tc_free(t);
}

/*
 * inbound_buffer: the buffer the READs land in is alone in its cache
 * lines: aligned to and as long as a cache line at least (and the DMA
 * cache alignment, where it is larger).
 */
void test_inbound_buffer(struct ib_device *ibdev)
{
	struct sm_inbound_stats st;
	struct tc *t = tc_alloc(1);
	u64 dma, *page = in_page(ibdev, &dma);
	int align = max_t(int, L1_CACHE_BYTES, dma_get_cache_alignment());

	if (!t || !page ||
	    IS_ERR(tc_register_ops(ibdev, &t[0], &tc_target_ops, 0))) {
		kt_fail++;
		kt_diag("no memory, no mapping or no client");
		goto out;
	}
	t[0].target = dma;
	KT_EXPECT_EQ(in_sync(&t[0], IN), 0);
	in_stats(ibdev, &st);
	KT_EXPECT(st.buf && IS_ALIGNED((unsigned long)st.buf, align));
	KT_EXPECT(st.buf_size >= align);
	kt_diag("READ buffer %zu bytes at %p, cache line %d", st.buf_size,
		st.buf, align);
	tc_unregister(&t[0]);
out:
	in_page_free(ibdev, page, dma);
	tc_free(t);
}

/*
 * inbound_recovery, in steps around a link that goes down and up again
 * (test/vm/20-core.sh): inbound_recover_start (a client of the dev device
 * flushed), `ip link set veth0 down`, inbound_recover_down (a flush then,
 * and the flusher's QP failed), `ip link set veth0 up`,
 * inbound_recover_check: a flush of that client and one of a new client
 * both read their page (0), the QP was recovered once.
 */
static struct {
	struct ib_device *ibdev;
	struct tc *t;
	u64 *page;
	u64 dma;
	u64 recoveries;
	u64 reads;
} rec;

static void in_recover_free(void)
{
	int i;

	if (!rec.ibdev)
		return;
	for (i = 0; rec.t && i < 2; i++)
		if (!IS_ERR_OR_NULL(rec.t[i].client))
			tc_unregister(&rec.t[i]);
	in_page_free(rec.ibdev, rec.page, rec.dma);
	tc_free(rec.t);
	ib_device_put(rec.ibdev);
	memset(&rec, 0, sizeof(rec));
}

int inbound_recover_start(struct ib_device *ibdev)
{
	struct sm_inbound_stats st;
	int ret;

	in_recover_free();
	rec.ibdev = ib_sync_mem_device_get(kt_dev);
	if (!rec.ibdev)
		return -ENODEV;
	rec.t = tc_alloc(2);
	rec.page = in_page(ibdev, &rec.dma);
	if (!rec.t || !rec.page) {
		in_recover_free();
		return -ENOMEM;
	}
	if (IS_ERR(tc_register_ops(ibdev, &rec.t[0], &tc_target_ops, 0))) {
		ret = PTR_ERR(rec.t[0].client);
		in_recover_free();
		return ret;
	}
	rec.t[0].target = rec.dma;
	ret = in_sync(&rec.t[0], IN);
	if (ret) {
		in_recover_free();
		return ret;
	}
	in_stats(ibdev, &st);
	rec.recoveries = st.recoveries;
	return 0;
}

/* The link is down: a flush fails, and the QP is left failed. */
int inbound_recover_down(void)
{
	struct sm_inbound_stats st;
	int ret;

	if (!rec.ibdev)
		return -ENOENT;
	ret = ib_sync_mem_sync(rec.t[0].client, IN, 5000);
	pr_info("%s: a flush with the link down: %d\n", __func__, ret);
	if (!KT_WAIT((in_stats(rec.ibdev, &st), st.broken), 30)) {
		pr_info("%s: the QP did not fail (flush %d)\n", __func__,
			ret);
		return -EAGAIN;
	}
	return 0;
}

void test_inbound_recover_check(void)
{
	struct sm_inbound_stats st;
	u64 reads;

	if (!rec.ibdev) {
		kt_fail++;
		kt_diag("inbound_recover_start did not run");
		return;
	}
	in_stats(rec.ibdev, &st);
	reads = st.reads;
	rec.page[0] = 0x7ec0fe7ec0fe0001ULL;
	KT_EXPECT_EQ(in_sync(&rec.t[0], IN), 0);
	in_stats(rec.ibdev, &st);
	KT_EXPECT_EQ(st.last, 0x7ec0fe7ec0fe0001ULL);
	if (IS_ERR(tc_register_ops(rec.ibdev, &rec.t[1], &tc_target_ops, 0))) {
		kt_fail++;
		kt_diag("register: %ld", PTR_ERR(rec.t[1].client));
	} else {
		rec.t[1].target = rec.dma + 8;
		rec.page[1] = 0x7ec0fe7ec0fe0002ULL;
		KT_EXPECT_EQ(in_sync(&rec.t[1], IN), 0);
		in_stats(rec.ibdev, &st);
		KT_EXPECT_EQ(st.last, 0x7ec0fe7ec0fe0002ULL);
		KT_EXPECT_EQ(st.reads, reads + 2);
	}
	KT_EXPECT_EQ(st.broken, false);
	KT_EXPECT_EQ(st.recoveries, rec.recoveries + 1);
	in_recover_free();
}

void test_inbound_exit(void)
{
	in_recover_free();
}

/*
 * inbound_no_flusher, in steps around the removal of a device whose
 * inbound flusher could not be made (test/vm/20-core.sh):
 * inbound_nocreate_start NAME (NAME a new device with a RoCE v2 GID):
 * with the creation failing (-ENOMEM), a fence-safe client of NAME
 * registers all the same; a blocking flush and a second one return
 * -ENOMEM (the failure left no lock held), and so does an asynchronous
 * one; with the creation let succeed again, an asynchronous flush still
 * does (it never makes a flusher: it runs in its fence's signalling
 * section), then a blocking flush makes it and reads, and an asynchronous
 * one reads through it. The client is then unregistered and the device
 * let go (a reference held would hold its removal); `rdma link delete
 * NAME` must then return. inbound_nocreate_check reports the start's
 * expectations.
 */
static int in_async(struct tc *t)
{
	struct dma_fence *f;
	int ret;

	f = ib_sync_mem_sync_async(t->client, IN, 0, 0, 0, NULL);
	if (IS_ERR(f))
		return PTR_ERR(f);
	ret = kt_fence_wait(f);
	dma_fence_put(f);
	/* 1: signalled without error; 0: never signalled. */
	return ret ? min(ret, 0) : -EBUSY;
}

/*
 * Each step starts with no failure counted: the start's expectations
 * (-1: it did not run) wait here for the check to report them.
 */
static int nocreate_fails = -1;

static void in_nocreate(struct ib_device *ibdev, struct tc *t, u64 *page)
{
	struct sm_inbound_stats st;

	WRITE_ONCE(sm_inbound_fail_create, ENOMEM);
	if (IS_ERR(tc_register_ops(ibdev, t, &tc_target_ops,
				   IB_SYNC_MEM_F_FENCE_SAFE))) {
		kt_fail++;
		kt_diag("register: %ld", PTR_ERR(t->client));
		return;
	}
	page[0] = 0x7ec0fe7ec0fe0003ULL;
	KT_EXPECT_EQ(in_sync(t, IN), -ENOMEM);
	KT_EXPECT_EQ(in_sync(t, IN), -ENOMEM);
	KT_EXPECT_EQ(in_async(t), -ENOMEM);
	WRITE_ONCE(sm_inbound_fail_create, 0);
	KT_EXPECT_EQ(in_async(t), -ENOMEM);
	KT_EXPECT_EQ(in_sync(t, IN), 0);
	in_stats(ibdev, &st);
	KT_EXPECT_EQ(st.reads, 1);
	KT_EXPECT_EQ(st.last, 0x7ec0fe7ec0fe0003ULL);
	page[0] = 0x7ec0fe7ec0fe0004ULL;
	KT_EXPECT_EQ(in_async(t), 0);
	in_stats(ibdev, &st);
	KT_EXPECT_EQ(st.reads, 2);
	KT_EXPECT_EQ(st.last, 0x7ec0fe7ec0fe0004ULL);
	tc_unregister(t);
	KT_EXPECT_EQ(tc_wait_release(t), 1);
}

int inbound_nocreate_start(const char *name)
{
	struct ib_device *ibdev = ib_sync_mem_device_get(name);
	struct tc *t;
	u64 *page;
	u64 dma;

	if (!ibdev)
		return -ENODEV;
	t = tc_alloc(1);
	page = in_page(ibdev, &dma);
	if (t && page) {
		t->target = dma;
		in_nocreate(ibdev, t, page);
	} else {
		kt_fail++;
		kt_diag("no memory for the test");
	}
	WRITE_ONCE(sm_inbound_fail_create, 0);
	in_page_free(ibdev, page, dma);
	tc_free(t);
	ib_device_put(ibdev);
	nocreate_fails = kt_fail;
	return 0;
}

/* The start's expectations, after the removal returned. */
void test_inbound_nocreate_check(void)
{
	if (nocreate_fails < 0) {
		kt_fail++;
		kt_diag("inbound_nocreate_start did not run");
		return;
	}
	kt_fail += nocreate_fails;
	nocreate_fails = -1;
}
