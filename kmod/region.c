// SPDX-License-Identifier: GPL-2.0
/*
 * Region clients: memory of a process, pinned and DMA-mapped on the RDMA
 * device by ib_umem, made coherent by syncing its DMA-mapped table.
 *
 * ib_umem_get() does what the RDMA stack does for every memory region:
 * FOLL_LONGTERM pinning (with write access only if the region is
 * writable), the pinned_vm account against RLIMIT_MEMLOCK (CAP_IPC_LOCK
 * goes past it), segments capped at the device's maximum segment size and
 * the mapping on the device's DMA device. A device with a DMA device gets
 * real mappings and syncs; a virtual-DMA device (rxe, siw) has no DMA to
 * sync for (the CPU is its DMA engine): the syncs are no-ops there.
 *
 * Directions follow the access: a read-only region (pinned without write)
 * is never synced from the device into its pages, and refuses to-cpu and
 * bidirectional syncs with -EACCES.
 *
 * ib_umem has no invalidation of its own, so an mmu_interval_notifier
 * watches the range: when it is unmapped or the process exits, a work item
 * invalidates the client (it syncs to -ENXIO from then on) and releases
 * the umem (unmapped, unpinned, the locked memory given back). The client
 * stays until it is deleted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/netlink.h>
#include <rdma/ib_umem.h>
#include <uapi/linux/ib_sync_mem.h>

#include "sync_mem.h"
#include "compat.h"

#define SM_REGION_MAX_LEN	SZ_1G

/**
 * struct sm_region - a region client's private data
 * @client: its registry client (NULL until registered)
 * @ibdev: the device its pages are mapped on
 * @mm: the owner's mm (mmgrab), watched by @notifier
 * @addr: user address
 * @len: bytes
 * @access: IB_SYNC_MEM_REGION_F_*
 * @umem: the pinned, DMA-mapped pages (NULL once released)
 * @notifier: watches the range for unmap and exit
 * @notified: the notifier is inserted
 * @gone: the range was unmapped or its mm is exiting
 * @inval_work: invalidates the client outside the notifier
 */
struct sm_region {
	struct ib_sync_mem_client *client;
	struct ib_device *ibdev;
	struct mm_struct *mm;
	u64 addr;
	u64 len;
	u32 access;
	struct ib_umem *umem;
	struct mmu_interval_notifier notifier;
	bool notified;
	bool gone;
	struct work_struct inval_work;
};

static bool sm_region_writable(const struct sm_region *r)
{
	return r->access & IB_SYNC_MEM_REGION_F_WRITE;
}

static int sm_region_sync(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct sm_region *r = ib_sync_mem_client_priv(client);
	struct sg_table *sgt;
	struct device *dma;

	/* The device may not write a read-only region: nothing to sync in. */
	if (dir != IB_SYNC_MEM_TO_DEVICE && !sm_region_writable(r))
		return -EACCES;
	/* The CPU is a virtual-DMA device's DMA engine. */
	if (ib_uses_virt_dma(r->ibdev))
		return 0;
	/* The registry never runs this after ->invalidate: r->umem is there. */
	sgt = &r->umem->sgt_append.sgt;
	dma = r->ibdev->dma_device;
	switch (dir) {
	case IB_SYNC_MEM_TO_DEVICE:
		dma_sync_sgtable_for_device(dma, sgt, DMA_TO_DEVICE);
		break;
	case IB_SYNC_MEM_TO_CPU:
		dma_sync_sgtable_for_cpu(dma, sgt, DMA_FROM_DEVICE);
		break;
	case IB_SYNC_MEM_BIDIRECTIONAL:
		dma_sync_sgtable_for_cpu(dma, sgt, DMA_BIDIRECTIONAL);
		dma_sync_sgtable_for_device(dma, sgt, DMA_BIDIRECTIONAL);
		break;
	}
	return 0;
}

/* Unmap, unpin and give the locked memory back. Idempotent. */
static void sm_region_release_umem(struct sm_region *r)
{
	struct ib_umem *umem = xchg(&r->umem, NULL);

	if (!umem)
		return;
	ib_umem_release(umem);
	if (r->client)
		atomic_set(&r->client->pinned_pages, 0);
}

static void sm_region_unwatch(struct sm_region *r)
{
	if (!r->notified)
		return;
	r->notified = false;
	mmu_interval_notifier_remove(&r->notifier);
}

static void sm_region_invalidate(struct ib_sync_mem_client *client,
				 enum ib_sync_mem_inval reason)
{
	struct sm_region *r = ib_sync_mem_client_priv(client);

	/* Neither sync nor the device may use the pages after this. */
	sm_region_release_umem(r);
}

static void sm_region_free(struct sm_region *r)
{
	sm_region_unwatch(r);
	/* The notifier is gone: nothing queues the work any more. */
	cancel_work_sync(&r->inval_work);
	sm_region_release_umem(r);
	mmdrop(r->mm);
	kfree(r);
}

static void sm_region_release(struct ib_sync_mem_client *client)
{
	sm_region_free(ib_sync_mem_client_priv(client));
}

static int sm_region_fill_info(struct ib_sync_mem_client *client,
			       struct sk_buff *msg)
{
	struct sm_region *r = ib_sync_mem_client_priv(client);

	if (nla_put_u64_64bit(msg, IB_SYNC_MEM_A_REGION_ADDR, r->addr,
			      IB_SYNC_MEM_A_REGION_PAD) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_REGION_LEN, r->len,
			      IB_SYNC_MEM_A_REGION_PAD) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_REGION_ACCESS, r->access) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_REGION_SEGMENTS,
			r->umem ? r->umem->sgt_append.sgt.nents : 0))
		return -EMSGSIZE;
	return 0;
}

static const struct ib_sync_mem_ops sm_region_ops = {
	.owner = THIS_MODULE,
	.sync = sm_region_sync,
	.invalidate = sm_region_invalidate,
	.release = sm_region_release,
	.fill_info = sm_region_fill_info,
};

static void sm_region_inval_work(struct work_struct *work)
{
	struct sm_region *r = container_of(work, struct sm_region, inval_work);

	/* Ends in ->invalidate, which unpins; the owner deletes the client. */
	ib_sync_mem_invalidate(r->client, IB_SYNC_MEM_INVAL_MEMORY);
}

static bool sm_region_notify(struct mmu_interval_notifier *mni,
			     const struct mmu_notifier_range *range,
			     unsigned long cur_seq)
{
	struct sm_region *r = container_of(mni, struct sm_region, notifier);

	mmu_interval_set_seq(mni, cur_seq);
	/*
	 * The pins keep the pages; what ends the client is the range going
	 * away: unmap (also partial, and mremap) and exit. MMU_NOTIFY_CLEAR
	 * is not one of them: it is also raised for attempts that pinned
	 * pages make fail, a migration by FOLL_LONGTERM pinning (ours, or
	 * ibv_reg_mr's on the same buffer) or a khugepaged collapse, and
	 * telling those from a zap (MADV_DONTNEED) needs a page-table walk
	 * this module does not do. After a zap the client keeps the old
	 * pages, as an ib_umem does. Protection changes leave pinned pages
	 * where they are.
	 */
	if (range->event != MMU_NOTIFY_UNMAP &&
	    range->event != MMU_NOTIFY_RELEASE)
		return true;
	WRITE_ONCE(r->gone, true);
	/* Pairs with the barrier in sm_region_create() after registering. */
	smp_mb();
	if (READ_ONCE(r->client))
		queue_work(system_wq, &r->inval_work);
	return true;
}

static const struct mmu_interval_notifier_ops sm_region_mn_ops = {
	.invalidate = sm_region_notify,
};

static int sm_region_check(u64 addr, u64 len, struct nlattr *nest,
			   struct netlink_ext_ack *extack)
{
	if (!len || len > SM_REGION_MAX_LEN) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "region length must be 1 page to 1 GiB");
		return -EINVAL;
	}
	if (!PAGE_ALIGNED(addr) || !PAGE_ALIGNED(len)) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "region address and length must be page-aligned");
		return -EINVAL;
	}
	if (addr + len < addr) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "region wraps around the address space");
		return -EINVAL;
	}
	if (!access_ok((void __user *)(uintptr_t)addr, len)) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "region is not user memory");
		return -EINVAL;
	}
	return 0;
}

/*
 * ib_umem_get() refused the region with -ENOMEM: because of its
 * RLIMIT_MEMLOCK check (the same test, for the message only)?
 */
static bool sm_region_over_memlock(struct sm_region *r)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	return !capable(CAP_IPC_LOCK) &&
	       atomic64_read(&r->mm->pinned_vm) + (r->len >> PAGE_SHIFT) > limit;
}

static int sm_region_get_umem(struct sm_region *r, struct nlattr *nest,
			      struct netlink_ext_ack *extack)
{
	struct ib_umem *umem;

	umem = ib_umem_get_va(r->ibdev, r->addr, r->len,
			      sm_region_writable(r) ? IB_ACCESS_LOCAL_WRITE : 0);
	if (IS_ERR(umem)) {
		switch (PTR_ERR(umem)) {
		case -ENOMEM:
			if (sm_region_over_memlock(r))
				NL_SET_ERR_MSG(extack, "region exceeds RLIMIT_MEMLOCK");
			else
				NL_SET_ERR_MSG(extack, "out of memory pinning the region");
			break;
		case -EPERM:
			NL_SET_ERR_MSG(extack, "RLIMIT_MEMLOCK is 0 without CAP_IPC_LOCK");
			break;
		default:
			NL_SET_ERR_MSG_ATTR(extack, nest, "cannot pin the region (not mapped?)");
			break;
		}
		return PTR_ERR(umem);
	}
	r->umem = umem;
	return 0;
}

static struct ib_sync_mem_client *
sm_region_create(struct ib_device *ibdev, const char *name, u32 flags,
		 struct nlattr **attrs, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[IB_SYNC_MEM_A_REGION_MAX + 1] = {};
	struct nlattr *nest = attrs[IB_SYNC_MEM_A_REGION];
	struct ib_sync_mem_reg reg = {
		.name = name,
		.ops = &sm_region_ops,
		.flags = flags,
		.kind = IB_SYNC_MEM_KIND_REGION,
	};
	struct ib_sync_mem_client *c;
	struct sm_region *r;
	int ret;

	if (!nest) {
		NL_SET_ERR_MSG(extack, "region client needs IB_SYNC_MEM_A_REGION");
		return ERR_PTR(-EINVAL);
	}
	ret = nla_parse_nested(tb, IB_SYNC_MEM_A_REGION_MAX, nest, NULL, extack);
	if (ret)
		return ERR_PTR(ret);
	if (!tb[IB_SYNC_MEM_A_REGION_ADDR] || !tb[IB_SYNC_MEM_A_REGION_LEN]) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "region needs ADDR and LEN");
		return ERR_PTR(-EINVAL);
	}
	if (!current->mm) {
		NL_SET_ERR_MSG(extack, "caller has no user memory");
		return ERR_PTR(-EINVAL);
	}

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	r->ibdev = ibdev;
	r->addr = nla_get_u64(tb[IB_SYNC_MEM_A_REGION_ADDR]);
	r->len = nla_get_u64(tb[IB_SYNC_MEM_A_REGION_LEN]);
	if (tb[IB_SYNC_MEM_A_REGION_ACCESS])
		r->access = nla_get_u32(tb[IB_SYNC_MEM_A_REGION_ACCESS]);
	r->mm = current->mm;
	mmgrab(r->mm);
	INIT_WORK(&r->inval_work, sm_region_inval_work);

	ret = sm_region_check(r->addr, r->len, nest, extack);
	if (ret)
		goto err_free;

	/* Watch first, so an unmap racing with the pinning is seen. */
	ret = mmu_interval_notifier_insert(&r->notifier, r->mm, r->addr,
					   r->len, &sm_region_mn_ops);
	if (ret)
		goto err_free;
	r->notified = true;

	ret = sm_region_get_umem(r, nest, extack);
	if (ret)
		goto err_free;

	reg.priv = r;
	reg.size = r->len;
	c = ib_sync_mem_register(ibdev, &reg);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		goto err_free;
	}
	atomic_set(&c->pinned_pages, ib_umem_num_pages(r->umem));
	WRITE_ONCE(r->client, c);
	/* Pairs with sm_region_notify(): one of us sees the other. */
	smp_mb();
	if (READ_ONCE(r->gone))
		queue_work(system_wq, &r->inval_work);
	return c;

err_free:
	sm_region_free(r);
	return ERR_PTR(ret);
}

static void sm_region_destroy(struct ib_sync_mem_client *client)
{
	ib_sync_mem_unregister(client);
}

struct ib_sync_mem_client_kind sm_region_kind = {
	.id = IB_SYNC_MEM_KIND_REGION,
	.name = "region",
	.owner = THIS_MODULE,
	.create = sm_region_create,
	.destroy = sm_region_destroy,
};
