// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: syncs from contexts that must not make them, for the
 * debug kernel to report (test/vm/90-splats.sh reads its log). Steps with
 * no result of their own; not in the list of cases:
 *
 *   splat_atomic      a sync under a spinlock: might_sleep() says
 *			"sleeping function called from invalid context"
 *   splat_signalling  a sync inside a fence signalling section
 *			(dma_fence_begin_signalling()): lockdep reports a
 *			circular dependency of ib_sync_mem_sync and
 *			dma_fence_map, and turns itself off for the boot
 *
 * The client's ->sync neither sleeps nor waits: what is reported is the
 * entry point's annotation, not a callback.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-fence.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "sync_mem_test.h"

/* Register a client on @ibdev, run @fn with it, unregister it. */
static int splat_with_client(struct ib_device *ibdev,
			     void (*fn)(struct ib_sync_mem_client *c))
{
	struct tc *t = tc_alloc(1);
	int ret = 0;

	if (!t)
		return -ENOMEM;
	if (IS_ERR(tc_register(ibdev, t, 0))) {
		ret = PTR_ERR(t->client);
		goto out;
	}
	pr_info("expected splat: %ps\n", fn);
	fn(t->client);
	tc_unregister(t);
out:
	tc_free(t);
	return ret;
}

static void splat_atomic_fn(struct ib_sync_mem_client *c)
{
	static DEFINE_SPINLOCK(lock);

	spin_lock(&lock);
	ib_sync_mem_sync(c, IB_SYNC_MEM_TO_DEVICE, 0);
	spin_unlock(&lock);
}

static void splat_signalling_fn(struct ib_sync_mem_client *c)
{
	bool cookie = dma_fence_begin_signalling();

	ib_sync_mem_sync(c, IB_SYNC_MEM_TO_DEVICE, 0);
	dma_fence_end_signalling(cookie);
}

int splat_atomic(struct ib_device *ibdev)
{
	return splat_with_client(ibdev, splat_atomic_fn);
}

int splat_signalling(struct ib_device *ibdev)
{
	return splat_with_client(ibdev, splat_signalling_fn);
}
