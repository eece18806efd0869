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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

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
	kvfree(t);
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
	kvfree(t);
}
