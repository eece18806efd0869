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
 * A region is any bytes [addr, addr + len) of the process, as malloc()
 * returns them: it need not start or end on a page. ib_umem pins and maps
 * the whole pages that hold it, so byte 0 of the mapping is the start of
 * the region's first page and the region is at ib_umem_offset() in it.
 * Every sync covers exactly the region's bytes, or a range of them counted
 * from its first byte: the rest of its first and last pages is other
 * memory, which the device never owns. Pinned pages, the memlock account
 * and the re-check below count the pages the region spans.
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
 *
 * MMU_NOTIFY_CLEAR means the pages may no longer be the ones mapped: a zap
 * (MADV_DONTNEED), a truncate or a hole punch replace them, but the same
 * event comes from attempts that the pins make fail (a migration, a THP
 * collapse) and leave the pages where they were. So a work item re-checks,
 * once the invalidation that raised the event has ended (the notifier runs
 * before the page tables change; mmu_interval_read_begin() waits): it
 * looks the range up in the process's page tables (read-only GUP under
 * the mmap lock, which waits for a migration in flight and faults a zapped
 * page in as the process itself would) and invalidates the client only if
 * a page differs from the pinned one. debugfs region_rechecks counts the
 * re-checks queued and done, for the tests.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/swiotlb.h>
#include <linux/workqueue.h>
#include <net/netlink.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/ib_sync_mem.h>

#include "kinds.h"
#include "compat.h"

#define SM_REGION_MAX_LEN	SZ_1G
/* Pages looked up per GUP call of a re-check. */
#define SM_RECHECK_BATCH	64

/* The owner of every region client. */
static struct ib_sync_mem_owner *sm_region_owner;

static atomic_t sm_rechecks_queued = ATOMIC_INIT(0);
static atomic_t sm_rechecks_done = ATOMIC_INIT(0);

/**
 * struct sm_region - a region client's private data
 * @client: its registry client (NULL until registered)
 * @ibdev: the device its pages are mapped on
 * @mm: the owner's mm (mmgrab), watched by @notifier
 * @addr: user address
 * @len: bytes
 * @access: IB_SYNC_MEM_REGION_F_*
 * @umem: the pinned, DMA-mapped pages (NULL once released)
 * @lock: serialises the release of @umem with a re-check reading it
 * @notifier: watches the range for unmap, exit and clears
 * @notified: the notifier is inserted
 * @gone: the range was unmapped or its mm is exiting
 * @cleared: an MMU_NOTIFY_CLEAR came (before registration: re-check after)
 * @inval_work: invalidates the client outside the notifier
 * @recheck_work: compares the mapped pages with the pinned ones
 * @dma_file: debugfs dma/ID, the mapping's bus addresses
 */
struct sm_region {
	struct ib_sync_mem_client *client;
	struct ib_device *ibdev;
	struct mm_struct *mm;
	u64 addr;
	u64 len;
	u32 access;
	struct ib_umem *umem;
	struct mutex lock;	/* @umem's release against a re-check */
	struct mmu_interval_notifier notifier;
	bool notified;
	bool gone;
	bool cleared;
	struct work_struct inval_work;
	struct work_struct recheck_work;
	struct dentry *dma_file;
};

static bool sm_region_writable(const struct sm_region *r)
{
	return r->access & IB_SYNC_MEM_REGION_F_WRITE;
}

/* The start of the region's first page, and the end of its last one. */
static unsigned long sm_region_first(const struct sm_region *r)
{
	return ALIGN_DOWN(r->addr, PAGE_SIZE);
}

static unsigned long sm_region_end(const struct sm_region *r)
{
	return PAGE_ALIGN(r->addr + r->len);
}

/*
 * What a sync of @r in @dir can do: -EACCES for one the region's access
 * forbids, -EINVAL for inbound, 1 when there is nothing to do, 0 to sync.
 */
static int sm_region_sync_begin(const struct sm_region *r,
				enum ib_sync_mem_dir dir)
{
	/* The device may not write a read-only region: nothing to sync in. */
	if (dir != IB_SYNC_MEM_TO_DEVICE && !sm_region_writable(r))
		return -EACCES;
	/* Inbound is never a ->sync: ->inbound_target below. */
	if (dir == IB_SYNC_MEM_INBOUND)
		return -EINVAL;
	/* The CPU is a virtual-DMA device's DMA engine. */
	return ib_uses_virt_dma(r->ibdev) ? 1 : 0;
}

/* Sync @len bytes at @offset of the DMA segment at @addr for @dir. */
static void sm_region_sync_seg(struct device *dma, dma_addr_t addr,
			       u64 offset, u64 len, enum ib_sync_mem_dir dir)
{
	switch (dir) {
	case IB_SYNC_MEM_TO_DEVICE:
		dma_sync_single_range_for_device(dma, addr, offset, len,
						 DMA_TO_DEVICE);
		break;
	case IB_SYNC_MEM_TO_CPU:
		dma_sync_single_range_for_cpu(dma, addr, offset, len,
					      DMA_FROM_DEVICE);
		break;
	default:
		dma_sync_single_range_for_cpu(dma, addr, offset, len,
					      DMA_BIDIRECTIONAL);
		dma_sync_single_range_for_device(dma, addr, offset, len,
						 DMA_BIDIRECTIONAL);
		break;
	}
}

/*
 * Sync bytes [@start, @end) of @umem's mapping on @dma for @dir: the parts
 * of the DMA segments that hold them. Byte 0 is the start of the region's
 * first page.
 */
static void sm_region_sync_span(struct device *dma, struct ib_umem *umem,
				enum ib_sync_mem_dir dir, u64 start, u64 end)
{
	struct sg_table *sgt = &umem->sgt_append.sgt;
	u64 pos = 0, seg, from;
	struct scatterlist *sg;
	unsigned int i;

	if (start >= end)
		return;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		seg = sg_dma_len(sg);
		if (pos + seg > start) {
			from = max(start, pos);
			sm_region_sync_seg(dma, sg_dma_address(sg), from - pos,
					   min(end, pos + seg) - from, dir);
		}
		pos += seg;
		if (pos >= end)
			break;
	}
}

/*
 * ->sync_range: the range's bytes, @offset counted from the region's first
 * byte (at ib_umem_offset() of its first page).
 */
static int sm_region_sync_range(struct ib_sync_mem_client *client,
				enum ib_sync_mem_dir dir, u64 offset, u64 len,
				ktime_t deadline)
{
	struct sm_region *r = ib_sync_mem_client_priv(sm_region_owner, client);
	u64 start;
	int ret;

	ret = sm_region_sync_begin(r, dir);
	if (ret)
		return ret < 0 ? ret : 0;
	/* The registry never runs this after ->invalidate: r->umem is there. */
	start = ib_umem_offset(r->umem) + offset;
	sm_region_sync_span(r->ibdev->dma_device, r->umem, dir, start,
			    start + len);
	return 0;
}

/*
 * ->sync: the region's bytes and no others. Its first and last pages may
 * hold other memory of the process (a malloc()ed buffer's neighbours):
 * syncing it for the CPU would copy the mapping's stale bytes over them.
 */
static int sm_region_sync(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct sm_region *r = ib_sync_mem_client_priv(sm_region_owner, client);

	return sm_region_sync_range(client, dir, 0, r->len, deadline);
}

/*
 * Inbound: the module reads the region's first bytes through the NIC.
 * The address is the device's for the pinned pages (on a virtual-DMA
 * device, the kernel's).
 */
static int sm_region_inbound_target(struct ib_sync_mem_client *client,
				    u64 *dma_addr)
{
	struct sm_region *r = ib_sync_mem_client_priv(sm_region_owner, client);

	/* The device may not write a read-only region: nothing came in. */
	if (!sm_region_writable(r))
		return -EACCES;
	/* The registry never runs this after ->invalidate: r->umem is there. */
	*dma_addr = sg_dma_address(r->umem->sgt_append.sgt.sgl) +
		    ib_umem_offset(r->umem);
	return 0;
}

/*
 * ib_umem unmaps whole pages, syncing every byte of them for the CPU (a
 * bounce buffer copied back, caches invalidated). The bytes of the first
 * and last pages around the region are other memory of the process, which
 * no sync of the region moved: sync them for the device first, so that
 * what comes back is what the CPU holds now. (A write there between this
 * and the unmap is lost: the device owns whole pages while they are
 * mapped; only a region of whole pages has no such bytes.)
 */
static void sm_region_unmap_prepare(struct sm_region *r, struct ib_umem *umem)
{
	u64 start = ib_umem_offset(umem), end = start + r->len;

	if (ib_uses_virt_dma(r->ibdev))
		return;
	sm_region_sync_span(r->ibdev->dma_device, umem, IB_SYNC_MEM_TO_DEVICE,
			    0, start);
	sm_region_sync_span(r->ibdev->dma_device, umem, IB_SYNC_MEM_TO_DEVICE,
			    end, PAGE_ALIGN(end));
}

/* Unmap, unpin and give the locked memory back. Idempotent. */
static void sm_region_release_umem(struct sm_region *r)
{
	struct ib_umem *umem;

	mutex_lock(&r->lock);
	umem = xchg(&r->umem, NULL);
	mutex_unlock(&r->lock);
	if (!umem)
		return;
	sm_region_unmap_prepare(r, umem);
	ib_umem_release(umem);
	if (r->client)
		ib_sync_mem_client_set_pinned(r->client, 0);
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
	struct sm_region *r = ib_sync_mem_client_priv(sm_region_owner, client);

	/* Neither sync nor the device may use the pages after this. */
	sm_region_release_umem(r);
}

static void sm_region_free(struct sm_region *r)
{
	/* Waits for a reader of the file. */
	debugfs_remove(r->dma_file);
	sm_region_unwatch(r);
	/* The notifier is gone: nothing queues the work any more. */
	if (cancel_work_sync(&r->recheck_work))
		atomic_inc(&sm_rechecks_done);
	cancel_work_sync(&r->inval_work);
	sm_region_release_umem(r);
	mutex_destroy(&r->lock);
	mmdrop(r->mm);
	kfree(r);
}

static void sm_region_release(struct ib_sync_mem_client *client)
{
	sm_region_free(ib_sync_mem_client_priv(sm_region_owner, client));
}

static int sm_region_fill_info(struct ib_sync_mem_client *client,
			       struct sk_buff *msg)
{
	struct sm_region *r = ib_sync_mem_client_priv(sm_region_owner, client);

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

static int sm_region_dma_show(struct seq_file *m, void *v)
{
	struct sm_region *r = m->private;

	mutex_lock(&r->lock);
	if (r->umem && !ib_uses_virt_dma(r->ibdev))
		sm_debugfs_sgt_show(m, &r->umem->sgt_append.sgt);
	mutex_unlock(&r->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sm_region_dma);

static const struct ib_sync_mem_ops sm_region_ops = {
	.owner = THIS_MODULE,
	.sync = sm_region_sync,
	.sync_range = sm_region_sync_range,
	.inbound_target = sm_region_inbound_target,
	.invalidate = sm_region_invalidate,
	.release = sm_region_release,
	.fill_info = sm_region_fill_info,
};

static void sm_region_inval_work(struct work_struct *work)
{
	struct sm_region *r = container_of(work, struct sm_region, inval_work);

	/* Ends in ->invalidate, which unpins; the owner deletes the client. */
	ib_sync_mem_invalidate(sm_region_owner, r->client, IB_SYNC_MEM_INVAL_MEMORY);
}

static void sm_region_recheck_queue(struct sm_region *r)
{
	if (queue_work(system_dfl_wq, &r->recheck_work))
		atomic_inc(&sm_rechecks_queued);
}

/*
 * Are the pages mapped at the region still the pinned ones? Looked up as
 * the process would touch them for reading: GUP waits for a migration in
 * flight and faults a zapped page in (a zero page, a fresh page-cache page
 * after a hole punch); a range that no longer faults in is gone too.
 */
static bool sm_region_compare(struct sm_region *r)
{
	struct page *now[SM_RECHECK_BATCH];
	struct sg_page_iter piter;
	unsigned long addr = sm_region_first(r), end = sm_region_end(r);
	struct sg_table *sgt = &r->umem->sgt_append.sgt;
	bool same = true;
	long n, i;

	__sg_page_iter_start(&piter, sgt->sgl, sgt->orig_nents, 0);
	mmap_read_lock(r->mm);
	while (same && addr < end) {
		n = get_user_pages_remote(r->mm, addr,
					  min_t(unsigned long, SM_RECHECK_BATCH,
						(end - addr) >> PAGE_SHIFT),
					  0, now, NULL);
		if (n <= 0) {
			same = false;
			break;
		}
		for (i = 0; i < n; i++) {
			if (!__sg_page_iter_next(&piter) ||
			    sg_page_iter_page(&piter) != now[i])
				same = false;
			put_page(now[i]);
		}
		addr += n << PAGE_SHIFT;
	}
	mmap_read_unlock(r->mm);
	return same;
}

/* How many times a re-check looks again while invalidations overlap it. */
#define SM_RECHECK_TRIES	16

/*
 * The notifier runs when an invalidation starts, before the page tables
 * change: the comparison waits for it to end (mmu_interval_read_begin())
 * and is redone if another began meanwhile. True while the pages are the
 * pinned ones; -EAGAIN if invalidations kept overlapping it (the re-check
 * is queued again).
 */
static int sm_region_still_mapped(struct sm_region *r)
{
	unsigned long seq;
	int tries;
	bool same;

	for (tries = 0; tries < SM_RECHECK_TRIES; tries++) {
		seq = mmu_interval_read_begin(&r->notifier);
		same = sm_region_compare(r);
		if (!mmu_interval_read_retry(&r->notifier, seq))
			return same;
	}
	return -EAGAIN;
}

static void sm_region_gone(struct sm_region *r)
{
	WRITE_ONCE(r->gone, true);
	/* Pairs with the barrier in sm_region_create() after registering. */
	smp_mb();
	if (READ_ONCE(r->client))
		queue_work(system_dfl_wq, &r->inval_work);
}

static void sm_region_recheck_work(struct work_struct *work)
{
	struct sm_region *r = container_of(work, struct sm_region,
					   recheck_work);
	int same = true;

	/* An exiting mm is the RELEASE event's to report. */
	if (mmget_not_zero(r->mm)) {
		mutex_lock(&r->lock);
		if (r->umem)
			same = sm_region_still_mapped(r);
		mutex_unlock(&r->lock);
		mmput(r->mm);
	}
	if (same == -EAGAIN)
		sm_region_recheck_queue(r);
	else if (!same)
		sm_region_gone(r);
	atomic_inc(&sm_rechecks_done);
}

void sm_region_rechecks(int *queued, int *done)
{
	*done = atomic_read(&sm_rechecks_done);
	*queued = atomic_read(&sm_rechecks_queued);
}

static bool sm_region_notify(struct mmu_interval_notifier *mni,
			     const struct mmu_notifier_range *range,
			     unsigned long cur_seq)
{
	struct sm_region *r = container_of(mni, struct sm_region, notifier);

	mmu_interval_set_seq(mni, cur_seq);
	/*
	 * The pins keep the pages; the range going away ends the client:
	 * unmap (also partial, and mremap) and exit. A clear may have
	 * replaced the pages or not: a work item looks. Protection changes
	 * leave pinned pages where they are.
	 */
	if (range->event == MMU_NOTIFY_CLEAR) {
		WRITE_ONCE(r->cleared, true);
		/* Pairs with the barrier in sm_region_create(). */
		smp_mb();
		if (READ_ONCE(r->client))
			sm_region_recheck_queue(r);
		return true;
	}
	if (range->event != MMU_NOTIFY_UNMAP &&
	    range->event != MMU_NOTIFY_RELEASE)
		return true;
	sm_region_gone(r);
	return true;
}

static const struct mmu_interval_notifier_ops sm_region_mn_ops = {
	.invalidate = sm_region_notify,
};

static int sm_region_check(u64 addr, u64 len, struct nlattr *nest,
			   struct netlink_ext_ack *extack)
{
	if (!len || len > SM_REGION_MAX_LEN) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "region length must be 1 byte to 1 GiB");
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
	       atomic64_read(&r->mm->pinned_vm) +
	       ((sm_region_end(r) - sm_region_first(r)) >> PAGE_SHIFT) > limit;
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
#ifdef DMA_ATTR_REQUIRE_COHERENT
			/*
			 * This kernel's ib_umem maps with DMA_ATTR_REQUIRE_COHERENT:
			 * a device whose streaming DMA needs syncs (bounce
			 * buffers, cache maintenance) cannot map user memory.
			 * A coherent device that swiotlb bounces for shows
			 * that only after its first bounce: ask swiotlb too.
			 * A virtual-DMA device (rxe) has no DMA device.
			 */
			if (!ib_uses_virt_dma(r->ibdev) &&
			    (is_swiotlb_force_bounce(r->ibdev->dma_device) ||
			     dma_dev_need_sync(r->ibdev->dma_device))) {
				NL_SET_ERR_MSG(extack, "ib_umem here needs coherent device DMA");
				return -EOPNOTSUPP;
			}
#endif
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
		.owner = sm_region_owner,
		.name = name,
		.ops = &sm_region_ops,
		/* Its syncs are DMA syncs of pinned pages, its flush a READ. */
		.flags = flags | IB_SYNC_MEM_F_FENCE_SAFE,
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
	mutex_init(&r->lock);
	INIT_WORK(&r->inval_work, sm_region_inval_work);
	INIT_WORK(&r->recheck_work, sm_region_recheck_work);

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
	ib_sync_mem_client_set_pinned(c, ib_umem_num_pages(r->umem));
	r->dma_file = sm_debugfs_dma_create(ib_sync_mem_client_id(c), r,
					    &sm_region_dma_fops);
	WRITE_ONCE(r->client, c);
	/* Pairs with sm_region_notify(): one of us sees the other. */
	smp_mb();
	if (READ_ONCE(r->gone))
		queue_work(system_dfl_wq, &r->inval_work);
	else if (READ_ONCE(r->cleared))
		sm_region_recheck_queue(r);
	return c;

err_free:
	sm_region_free(r);
	return ERR_PTR(ret);
}

/*
 * Unregister, then unmap and unpin before returning rather than when the
 * last reference goes: a sync batch may hold one past the device's removal,
 * and the mapping is the device's. Nothing syncs the region once
 * unregister returned; the reference taken here keeps it for the release.
 */
static void sm_region_destroy(struct ib_sync_mem_client *client)
{
	struct sm_region *r = ib_sync_mem_client_priv(sm_region_owner, client);

	ib_sync_mem_get(client);
	ib_sync_mem_unregister(sm_region_owner, client);
	sm_region_release_umem(r);
	ib_sync_mem_put(client);
}

struct ib_sync_mem_client_kind sm_region_kind = {
	.id = IB_SYNC_MEM_KIND_REGION,
	.name = "region",
	.owner = THIS_MODULE,
	.unprivileged = true,	/* the caller's own pages, charged to it */
	.create = sm_region_create,
	.destroy = sm_region_destroy,
};

int sm_region_init(void)
{
	sm_region_owner = ib_sync_mem_owner_create(THIS_MODULE, "region");
	return PTR_ERR_OR_ZERO(sm_region_owner);
}

void sm_region_exit(void)
{
	ib_sync_mem_owner_destroy(sm_region_owner);
}
