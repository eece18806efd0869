// SPDX-License-Identifier: GPL-2.0
/*
 * Region clients: memory of a process, pinned and DMA-mapped on the RDMA
 * device, made coherent by syncing every mapped segment.
 *
 * The pages are pinned with FOLL_LONGTERM and counted against the owner's
 * RLIMIT_MEMLOCK the way ib_umem does. The mapping goes through the ib_dma_*
 * helpers, so a device with a real DMA device gets real mappings and syncs;
 * rxe uses virtual DMA and the syncs are no-ops, but the path is the same.
 *
 * An mmu_interval_notifier watches the range: when it is unmapped or the
 * process exits, a work item invalidates the client (it syncs to -ENXIO
 * from then on), unmaps and unpins the pages and gives the locked memory
 * back. The client stays until it is deleted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/netlink.h>
#include <uapi/linux/ib_sync_mem.h>

#include "sync_mem.h"

#define SM_REGION_MAX_LEN	SZ_1G

/**
 * struct sm_region - a region client's private data
 * @client: its registry client (NULL until registered)
 * @ibdev: the device its pages are mapped on
 * @mm: the owner's mm (mmgrab), for the pinned_vm account
 * @addr: user address
 * @len: bytes
 * @access: IB_SYNC_MEM_REGION_F_*
 * @pages: the pinned pages
 * @npages: how many
 * @sgt: their sg table, DMA-mapped while @mapped
 * @mapped: pages pinned and mapped (cleared by the teardown)
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
	struct page **pages;
	unsigned long npages;
	struct sg_table sgt;
	bool mapped;
	struct mmu_interval_notifier notifier;
	bool notified;
	bool gone;
	struct work_struct inval_work;
};

static int sm_region_sync(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct sm_region *r = ib_sync_mem_client_priv(client);
	struct scatterlist *sg;
	int i;

	/* The registry never runs this after ->invalidate: r is mapped. */
	for_each_sgtable_dma_sg(&r->sgt, sg, i) {
		switch (dir) {
		case IB_SYNC_MEM_TO_DEVICE:
			ib_dma_sync_single_for_device(r->ibdev, sg_dma_address(sg),
						      sg_dma_len(sg),
						      DMA_TO_DEVICE);
			break;
		case IB_SYNC_MEM_TO_CPU:
			ib_dma_sync_single_for_cpu(r->ibdev, sg_dma_address(sg),
						   sg_dma_len(sg),
						   DMA_FROM_DEVICE);
			break;
		case IB_SYNC_MEM_BIDIRECTIONAL:
			ib_dma_sync_single_for_cpu(r->ibdev, sg_dma_address(sg),
						   sg_dma_len(sg),
						   DMA_BIDIRECTIONAL);
			ib_dma_sync_single_for_device(r->ibdev, sg_dma_address(sg),
						      sg_dma_len(sg),
						      DMA_BIDIRECTIONAL);
			break;
		}
	}
	return 0;
}

/* Unmap, unpin and give the locked memory back. Idempotent. */
static void sm_region_unpin(struct sm_region *r)
{
	if (!r->mapped)
		return;
	r->mapped = false;
	ib_dma_unmap_sgtable_attrs(r->ibdev, &r->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&r->sgt);
	unpin_user_pages_dirty_lock(r->pages, r->npages,
				    r->access & IB_SYNC_MEM_REGION_F_WRITE);
	atomic64_sub(r->npages, &r->mm->pinned_vm);
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
	sm_region_unpin(r);
}

static void sm_region_free(struct sm_region *r)
{
	sm_region_unwatch(r);
	/* The notifier is gone: nothing queues the work any more. */
	cancel_work_sync(&r->inval_work);
	sm_region_unpin(r);
	kvfree(r->pages);
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
	    nla_put_u32(msg, IB_SYNC_MEM_A_REGION_SEGMENTS, r->sgt.nents))
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

/* Count the pages against RLIMIT_MEMLOCK, as ib_umem_get() does. */
static int sm_region_account(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

static int sm_region_pin(struct sm_region *r)
{
	unsigned int gup = FOLL_LONGTERM;
	unsigned long done = 0;
	int ret;

	if (r->access & IB_SYNC_MEM_REGION_F_WRITE)
		gup |= FOLL_WRITE;
	while (done < r->npages) {
		ret = pin_user_pages_fast(r->addr + done * PAGE_SIZE,
					  min_t(unsigned long, r->npages - done,
						PAGE_SIZE / sizeof(struct page *)),
					  gup, r->pages + done);
		if (ret <= 0) {
			unpin_user_pages(r->pages, done);
			return ret ?: -EFAULT;
		}
		done += ret;
		if (fatal_signal_pending(current)) {
			unpin_user_pages(r->pages, done);
			return -EINTR;
		}
	}
	return 0;
}

static int sm_region_map(struct sm_region *r)
{
	int ret;

	ret = sg_alloc_table_from_pages(&r->sgt, r->pages, r->npages, 0,
					r->len, GFP_KERNEL);
	if (ret)
		return ret;
	ret = ib_dma_map_sgtable_attrs(r->ibdev, &r->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		sg_free_table(&r->sgt);
	return ret;
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
	r->npages = r->len >> PAGE_SHIFT;
	r->pages = kvmalloc_array(r->npages, sizeof(*r->pages), GFP_KERNEL);
	if (!r->pages) {
		ret = -ENOMEM;
		goto err_free;
	}

	/* Watch first, so an unmap racing with the pinning is seen. */
	ret = mmu_interval_notifier_insert(&r->notifier, r->mm, r->addr,
					   r->len, &sm_region_mn_ops);
	if (ret)
		goto err_free;
	r->notified = true;

	ret = sm_region_account(r->mm, r->npages);
	if (ret) {
		NL_SET_ERR_MSG(extack, "region exceeds RLIMIT_MEMLOCK");
		goto err_free;
	}
	ret = sm_region_pin(r);
	if (ret) {
		atomic64_sub(r->npages, &r->mm->pinned_vm);
		NL_SET_ERR_MSG_ATTR(extack, nest, "cannot pin the region (not mapped?)");
		goto err_free;
	}
	ret = sm_region_map(r);
	if (ret) {
		unpin_user_pages(r->pages, r->npages);
		atomic64_sub(r->npages, &r->mm->pinned_vm);
		NL_SET_ERR_MSG(extack, "cannot DMA-map the region");
		goto err_free;
	}
	r->mapped = true;

	reg.priv = r;
	reg.size = r->len;
	c = ib_sync_mem_register(ibdev, &reg);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		goto err_free;
	}
	atomic_set(&c->pinned_pages, r->npages);
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
