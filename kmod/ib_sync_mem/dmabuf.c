// SPDX-License-Identifier: GPL-2.0
/*
 * dma-buf clients: a buffer shared by its exporter (a GPU driver, vgem,
 * udmabuf), made coherent for an RDMA device or the CPU.
 *
 * Which path a device takes:
 *
 *  - A device with a DMA device (a real HCA) imports the buffer the way
 *    the RDMA stack does, with ib_umem_dmabuf_get_pinned(): a pinned
 *    attachment on that DMA device, mapped for as long as the client is
 *    live and released when the device goes.
 *  - A buffer whose exporter can move it (dma_buf_is_dynamic(): a GPU
 *    driver's VRAM) gets a dynamic attachment instead
 *    (ib_umem_dmabuf_get()). The exporter tells of a move in its
 *    move_notify (invalidate_mappings on 7.x), under the buffer's
 *    reservation lock: the mapping is let go there and the move reported
 *    (ib_sync_mem_invalidate_range()), and the next sync maps the buffer
 *    again (->revalidate), after the exporter's fences of the move,
 *    bounded by the sync's deadline. Where CONFIG_DMABUF_MOVE_NOTIFY is
 *    off (Debian's 6.1 and 6.12) the dma-buf core pins the buffer for such
 *    an attachment instead, and it does not move.
 *  - A virtual-DMA device (ib_uses_virt_dma(): rxe, siw) has no DMA device;
 *    the CPU is its DMA engine. Nothing is attached: the client holds a
 *    reference on the buffer, and a sync is the fence wait and the CPU
 *    access bracket below. These machines reach only this path (rxe).
 *
 * An inbound sync is the module's read-back through the NIC
 * (sm_inbound_flush()) of the buffer's first bytes, at their address on
 * the device: the pinned attachment's, or, on a virtual-DMA device, the
 * page's address in the kernel's linear map (what such a device's DMA
 * addresses are), found through a kernel mapping of the buffer
 * (dma_buf_vmap()) made at the client's first inbound sync and kept while
 * the client is live, so that the exporter keeps the pages in place (a
 * client never flushed inbound maps nothing; 6.1's dma_buf_vmap() warns
 * once when the exporter's vmap fails, as under memory pressure). A
 * buffer that can move (a dynamic attachment) has no fixed address to
 * read, and one the exporter will not map, or maps as I/O memory, none on
 * a virtual-DMA device: their inbound sync fails with -EOPNOTSUPP.
 *
 * A sync waits, bounded by the request's deadline, for the buffer's
 * implicit fences: the writers before the CPU reads (to-cpu), all of them
 * before the device may write (to-device, bidirectional). Then it brackets
 * CPU access: to-cpu opens it with dma_buf_begin_cpu_access(), to-device
 * closes it with dma_buf_end_cpu_access() (or flushes with a begin/end pair
 * if none is open), bidirectional does both.
 *
 * dma_buf_begin_cpu_access() waits for the fences again, without a limit
 * (and an exporter's hook may wait too): a fence added after the bounded
 * wait would hold the caller, and with it the domain's SRCU section, every
 * unregister, invalidation and device removal behind it. So the bracket
 * runs in a work item, one at a time per client, and the sync waits for it
 * only until its deadline: past it the sync fails with -ETIMEDOUT and the
 * bracket finishes on its own, holding a reference on the client's data
 * (and on the buffer) until it does. A device removal never waits for it;
 * unloading the module does (destroy_workqueue()), as it must. Every wait
 * of a sync is uninterruptible and bounded by the deadline: a stray signal
 * never turns into -ERESTARTSYS for a coalesced caller or for userspace.
 *
 * On the attachment path the release of the attachment takes the buffer's
 * reservation lock; an exporter whose begin_cpu_access hook holds that lock
 * while it waits for rendering can still delay a device removal there
 * until its fences signal. The CPU path has no such wait.
 *
 * A sync waits on fences, and allocates and locks through the exporter,
 * so a dma-buf client is not IB_SYNC_MEM_F_FENCE_SAFE: its asynchronous
 * sync runs outside the fence's signalling section (async.c), bounded by
 * its deadline as every sync is. It waits for the reservation's fences
 * before that, by a callback (->deps, sm_dmabuf_deps()), holding no
 * worker; its ->sync then waits only for fences added since. A client
 * that userspace registered without the owned flag keeps its buffer until
 * it is deleted, like a memory region keeps its pages: the buffer is the
 * client's, not the importing file's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/netlink.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/ib_sync_mem.h>

#include "kinds.h"
#include "compat.h"

/* The owner of every dma-buf client. */
static struct ib_sync_mem_owner *sm_dmabuf_owner;

MODULE_IMPORT_NS("DMA_BUF");

/* The CPU access brackets of every dma-buf client. */
static struct workqueue_struct *sm_dmabuf_wq;

/* How long past its deadline a sync waits for a bracket no fence holds. */
#define SM_BRACKET_GRACE	(HZ / 2)

/**
 * struct sm_bracket_wait - a sync waiting for its CPU access bracket
 * @done: completed when the bracket has handed its result over
 * @ret: the bracket's result
 */
struct sm_bracket_wait {
	struct completion done;
	int ret;
};

/**
 * struct sm_dmabuf - a dma-buf client's private data
 * @ref: the client's reference, and the bracket's while one is queued
 * @buf: the buffer (a reference of ours)
 * @umem: the pinned attachment on the device's DMA device, or NULL (a
 *	virtual-DMA device, or the device is gone)
 * @lock: serialises the release of @umem with a reader of @dma_file, and
 *	the mapping of @map with its release
 * @dma_file: debugfs dma/ID, the attachment's bus addresses
 * @map: the kernel's mapping of the buffer on a virtual-DMA device, made
 *	at the first inbound sync (null before, if the exporter gave none,
 *	or once released); under @lock
 * @inbound: the buffer's address on a virtual-DMA device, the inbound
 *	flush's target (0: none yet, or none); under @lock
 * @client: its registry client, once registered (set and read under the
 *	buffer's reservation lock: the move notice reads it)
 * @cpu_open: dma_buf_begin_cpu_access() is in effect (the bracket's state:
 *	one bracket at a time, ordered by @busy)
 * @busy: a bracket is queued or running (bit 0): at most one per client
 * @idle: woken when @busy clears
 * @work: runs the bracket in sm_dmabuf_wq
 * @dir: the direction of the bracket queued
 * @wlock: protects @waiter
 * @waiter: the sync waiting for the bracket, NULL once it gave up
 */
struct sm_dmabuf {
	struct kref ref;
	struct dma_buf *buf;
	struct ib_umem_dmabuf *umem;
	struct mutex lock;	/* @umem, @map, @inbound */
	struct dentry *dma_file;
	struct iosys_map map;
	u64 inbound;
	struct ib_sync_mem_client *client;
	bool cpu_open;
	unsigned long busy;
	wait_queue_head_t idle;
	struct work_struct work;
	enum ib_sync_mem_dir dir;
	spinlock_t wlock;	/* @waiter */
	struct sm_bracket_wait *waiter;
};

/*
 * A test's hold in the window between a sync's bounded fence wait and its
 * CPU access bracket (debugfs dmabuf_hold), where a fence can be added
 * after the wait saw none. A held sync waits until the hold is let go, its
 * deadline passes or its caller is killed.
 */
static bool sm_dmabuf_hold;
static atomic_t sm_dmabuf_nheld;
static DECLARE_WAIT_QUEUE_HEAD(sm_dmabuf_hold_wq);

void sm_dmabuf_set_hold(bool hold)
{
	WRITE_ONCE(sm_dmabuf_hold, hold);
	wake_up_all(&sm_dmabuf_hold_wq);
}

int sm_dmabuf_held(void)
{
	return atomic_read(&sm_dmabuf_nheld);
}

static void sm_dmabuf_window(ktime_t deadline)
{
	if (likely(!READ_ONCE(sm_dmabuf_hold)))
		return;
	atomic_inc(&sm_dmabuf_nheld);
	/* No time left: a timeout of 0 checks the condition, never sleeps. */
	wait_event_killable_timeout(sm_dmabuf_hold_wq, !READ_ONCE(sm_dmabuf_hold),
				    ib_sync_mem_jiffies_left(deadline));
	atomic_dec(&sm_dmabuf_nheld);
}

/*
 * The fences a sync in @dir waits for, as dma_buf_begin_cpu_access() does:
 * the writers before the CPU reads, every fence before the device may
 * write.
 */
static enum dma_resv_usage sm_dmabuf_usage(enum ib_sync_mem_dir dir)
{
	return dir == IB_SYNC_MEM_TO_CPU ? DMA_RESV_USAGE_WRITE :
					   DMA_RESV_USAGE_READ;
}

static int sm_dmabuf_wait(struct sm_dmabuf *d, enum ib_sync_mem_dir dir,
			  ktime_t deadline)
{
	long ret;

	ret = dma_resv_wait_timeout(d->buf->resv, sm_dmabuf_usage(dir), false,
				    ib_sync_mem_jiffies_left(deadline));
	if (ret < 0)
		return ret;
	return ret ? 0 : -ETIMEDOUT;
}

/*
 * Let go of the attachment on the device's DMA device and of the kernel's
 * mapping, once: when the device goes or the client is deleted, else at
 * the last reference.
 */
static void sm_dmabuf_detach(struct sm_dmabuf *d)
{
	struct ib_umem_dmabuf *umem;
	struct iosys_map map;

	mutex_lock(&d->lock);
	umem = d->umem;
	d->umem = NULL;
	map = d->map;
	iosys_map_clear(&d->map);
	d->inbound = 0;
	mutex_unlock(&d->lock);
	if (umem)
		ib_umem_release(&umem->umem);
	if (!iosys_map_is_null(&map))
		dma_buf_vunmap_unlocked(d->buf, &map);
}

static void sm_dmabuf_free(struct kref *ref)
{
	struct sm_dmabuf *d = container_of(ref, struct sm_dmabuf, ref);

	/* Waits for a reader of the file. */
	debugfs_remove(d->dma_file);
	if (d->cpu_open)
		dma_buf_end_cpu_access(d->buf, DMA_BIDIRECTIONAL);
	sm_dmabuf_detach(d);
	dma_buf_put(d->buf);
	mutex_destroy(&d->lock);
	kfree(d);
}

static void sm_dmabuf_put(struct sm_dmabuf *d)
{
	kref_put(&d->ref, sm_dmabuf_free);
}

/* The CPU access bracket of a sync in @dir. */
static int sm_dmabuf_bracket(struct sm_dmabuf *d, enum ib_sync_mem_dir dir)
{
	int ret = 0;

	switch (dir) {
	case IB_SYNC_MEM_TO_CPU:
		if (!d->cpu_open) {
			ret = dma_buf_begin_cpu_access(d->buf, DMA_FROM_DEVICE);
			d->cpu_open = !ret;
		}
		break;
	case IB_SYNC_MEM_TO_DEVICE:
		if (!d->cpu_open)
			ret = dma_buf_begin_cpu_access(d->buf, DMA_TO_DEVICE);
		if (!ret)
			ret = dma_buf_end_cpu_access(d->buf, DMA_TO_DEVICE);
		d->cpu_open = false;
		break;
	case IB_SYNC_MEM_BIDIRECTIONAL:
		if (!d->cpu_open)
			ret = dma_buf_begin_cpu_access(d->buf, DMA_BIDIRECTIONAL);
		if (!ret)
			ret = dma_buf_end_cpu_access(d->buf, DMA_BIDIRECTIONAL);
		d->cpu_open = false;
		break;
	default:
		/* Inbound is never a ->sync: ->inbound_target. */
		ret = -EINVAL;
		break;
	}
	return ret;
}

static void sm_bracket_work(struct work_struct *work)
{
	struct sm_dmabuf *d = container_of(work, struct sm_dmabuf, work);
	struct sm_bracket_wait *w;
	int ret;

	ret = sm_dmabuf_bracket(d, d->dir);
	spin_lock(&d->wlock);
	w = d->waiter;
	d->waiter = NULL;
	if (w)
		w->ret = ret;
	spin_unlock(&d->wlock);
	if (w)
		complete(&w->done);
	clear_bit_unlock(0, &d->busy);
	wake_up(&d->idle);
	/* May free d, and with it this work item: nothing touches it after. */
	sm_dmabuf_put(d);
}

/*
 * Past its deadline a sync still waits SM_BRACKET_GRACE for a bracket that
 * no fence holds (the work item may not have been scheduled yet), never
 * for one that a fence holds.
 */
static long sm_dmabuf_grace(struct sm_dmabuf *d, enum ib_sync_mem_dir dir)
{
	return dma_resv_test_signaled(d->buf->resv, sm_dmabuf_usage(dir)) ?
		SM_BRACKET_GRACE : 0;
}

/* The client's bracket slot is ours (its busy bit). */
static bool sm_dmabuf_claim(struct sm_dmabuf *d)
{
	return !test_and_set_bit_lock(0, &d->busy);
}

/*
 * Run the bracket in sm_dmabuf_wq and wait for it until @deadline: its
 * result, or -ETIMEDOUT with the bracket left to finish on its own. One
 * bracket per client: a stuck one is not joined by more.
 */
static int sm_dmabuf_bracket_until(struct sm_dmabuf *d,
				   enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct sm_bracket_wait w;
	bool gave_up;

	if (!wait_event_timeout(d->idle, sm_dmabuf_claim(d),
				ib_sync_mem_jiffies_left(deadline)) &&
	    !wait_event_timeout(d->idle, sm_dmabuf_claim(d),
				sm_dmabuf_grace(d, dir)))
		return -ETIMEDOUT;
	init_completion(&w.done);
	d->dir = dir;
	spin_lock(&d->wlock);
	d->waiter = &w;
	spin_unlock(&d->wlock);
	kref_get(&d->ref);
	queue_work(sm_dmabuf_wq, &d->work);

	if (wait_for_completion_timeout(&w.done, ib_sync_mem_jiffies_left(deadline)) ||
	    wait_for_completion_timeout(&w.done, sm_dmabuf_grace(d, dir)))
		return w.ret;
	spin_lock(&d->wlock);
	gave_up = d->waiter == &w;
	if (gave_up)
		d->waiter = NULL;
	spin_unlock(&d->wlock);
	if (gave_up)
		return -ETIMEDOUT;
	/* The bracket finished meanwhile and is handing its result over. */
	wait_for_completion(&w.done);
	return w.ret;
}

static int sm_dmabuf_sync(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct sm_dmabuf *d = ib_sync_mem_client_priv(sm_dmabuf_owner, client);
	int ret;

	ret = sm_dmabuf_wait(d, dir, deadline);
	if (ret)
		return ret;
	sm_dmabuf_window(deadline);
	return sm_dmabuf_bracket_until(d, dir, deadline);
}

static void sm_dmabuf_invalidate(struct ib_sync_mem_client *client,
				 enum ib_sync_mem_inval reason)
{
	/* The device is going: no attachment may outlive it. */
	sm_dmabuf_detach(ib_sync_mem_client_priv(sm_dmabuf_owner, client));
}

static void sm_dmabuf_release(struct ib_sync_mem_client *client)
{
	sm_dmabuf_put(ib_sync_mem_client_priv(sm_dmabuf_owner, client));
}

static int sm_dmabuf_fill_info(struct ib_sync_mem_client *client,
			       struct sk_buff *msg)
{
	struct sm_dmabuf *d = ib_sync_mem_client_priv(sm_dmabuf_owner, client);

	if (nla_put_u64_64bit(msg, IB_SYNC_MEM_A_DMABUF_SIZE, d->buf->size,
			      IB_SYNC_MEM_A_DMABUF_PAD) ||
	    nla_put_string(msg, IB_SYNC_MEM_A_DMABUF_EXPORTER,
			   d->buf->exp_name ?: "") ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_DMABUF_INODE,
			      file_inode(d->buf->file)->i_ino,
			      IB_SYNC_MEM_A_DMABUF_PAD))
		return -EMSGSIZE;
	return 0;
}

static int sm_dmabuf_dma_show(struct seq_file *m, void *v)
{
	struct sm_dmabuf *d = m->private;

	mutex_lock(&d->lock);
	if (d->umem) {
		/* A dynamic attachment is mapped and unmapped under it. */
		dma_resv_lock(d->buf->resv, NULL);
		if (d->umem->sgt)
			sm_debugfs_sgt_show(m, d->umem->sgt);
		dma_resv_unlock(d->buf->resv);
	}
	mutex_unlock(&d->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sm_dmabuf_dma);

/*
 * The reservation lock of @resv, by @deadline (-ETIMEDOUT): its holder may
 * be the exporter, busy with the buffer for as long as it likes. A
 * ww_mutex has no timed lock: tries, between naps that double up to 1 ms.
 */
static int sm_dmabuf_lock_until(struct dma_resv *resv, ktime_t deadline)
{
	unsigned long nap = 20;

	while (!dma_resv_trylock(resv)) {
		if (!ktime_before(ktime_get(), deadline))
			return -ETIMEDOUT;
		usleep_range(nap, nap + nap / 4);
		nap = min(2 * nap, 1000UL);
	}
	return 0;
}

/*
 * ->revalidate of a dynamic attachment that moved: map it again, once the
 * exporter's fences of the move signalled (bounded here:
 * ib_umem_dmabuf_map_pages() would wait for them without a limit; with the
 * lock held no new one comes). The lock itself is waited for until the
 * deadline too.
 */
static int sm_dmabuf_revalidate(struct ib_sync_mem_client *client, u64 offset,
				u64 len, ktime_t deadline)
{
	struct sm_dmabuf *d = ib_sync_mem_client_priv(sm_dmabuf_owner, client);
	struct dma_resv *resv = d->buf->resv;
	long t;
	int ret;

	ret = sm_dmabuf_lock_until(resv, deadline);
	if (ret)
		return ret;
	t = dma_resv_wait_timeout(resv, DMA_RESV_USAGE_KERNEL, false,
				  ib_sync_mem_jiffies_left(deadline));
	if (t <= 0)
		ret = t ? t : -ETIMEDOUT;
	else
		/* The registry never runs this after ->invalidate: d->umem is there. */
		ret = ib_umem_dmabuf_map_pages(d->umem);
	dma_resv_unlock(resv);
	return ret;
}

/*
 * A virtual-DMA device: the buffer mapped by the kernel, and the address of
 * its first byte in the linear map (the device's DMA address of it), the
 * inbound flush's target. 0; -EOPNOTSUPP if the exporter maps no memory
 * the CPU reads as such (for good: the mapping stays), or the error of a
 * mapping that failed otherwise (the next flush tries again). Under
 * d->lock, with no mapping yet.
 */
static int sm_dmabuf_map_cpu(struct sm_dmabuf *d)
{
	struct page *page;
	void *vaddr;
	int ret;

	ret = dma_buf_vmap_unlocked(d->buf, &d->map);
	if (ret) {
		iosys_map_clear(&d->map);
		/* An exporter without ->vmap: -EINVAL. */
		return ret == -ENOMEM ? ret : -EOPNOTSUPP;
	}
	if (d->map.is_iomem)
		return -EOPNOTSUPP;
	vaddr = d->map.vaddr;
	page = is_vmalloc_addr(vaddr) ? vmalloc_to_page(vaddr) :
					virt_to_page(vaddr);
	if (!page || !page_address(page))
		return -EOPNOTSUPP;
	d->inbound = (uintptr_t)page_address(page) + offset_in_page(vaddr);
	return 0;
}

/*
 * The inbound flush's target: the buffer's first byte on the device. The
 * registry never runs this after ->invalidate: what was mapped is there.
 */
static int sm_dmabuf_inbound_target(struct ib_sync_mem_client *client,
				    u64 *dma_addr)
{
	struct sm_dmabuf *d = ib_sync_mem_client_priv(sm_dmabuf_owner, client);
	int ret = 0;

	if (d->umem) {
		if (dma_buf_is_dynamic(d->buf))
			return -EOPNOTSUPP;
		*dma_addr = sg_dma_address(d->umem->umem.sgt_append.sgt.sgl);
		return 0;
	}
	mutex_lock(&d->lock);
	if (iosys_map_is_null(&d->map))
		ret = sm_dmabuf_map_cpu(d);
	else if (!d->inbound)
		ret = -EOPNOTSUPP;
	*dma_addr = d->inbound;
	mutex_unlock(&d->lock);
	return ret;
}

/*
 * What an asynchronous sync in @dir waits for, by a callback, before its
 * ->sync runs: the fences sm_dmabuf_wait() waits for, as the reservation
 * holds them now (an inbound flush waits for none: it reads through the
 * NIC). Unlocked, as dma_resv_wait_timeout() reads them.
 */
static struct dma_fence *sm_dmabuf_deps(struct ib_sync_mem_client *client,
					enum ib_sync_mem_dir dir)
{
	struct sm_dmabuf *d = ib_sync_mem_client_priv(sm_dmabuf_owner, client);
	struct dma_fence *f = NULL;
	int ret;

	if (dir == IB_SYNC_MEM_INBOUND)
		return NULL;
	ret = dma_resv_get_singleton(d->buf->resv, sm_dmabuf_usage(dir), &f);
	return ret ? ERR_PTR(ret) : f;
}

static const struct ib_sync_mem_ops sm_dmabuf_ops = {
	.owner = THIS_MODULE,
	.sync = sm_dmabuf_sync,
	.deps = sm_dmabuf_deps,
	.inbound_target = sm_dmabuf_inbound_target,
	.revalidate = sm_dmabuf_revalidate,
	.invalidate = sm_dmabuf_invalidate,
	.release = sm_dmabuf_release,
	.fill_info = sm_dmabuf_fill_info,
};

/*
 * The exporter moves the buffer (its reservation lock held): let go of the
 * mapping now, and report the move once the client is registered (until
 * then sm_dmabuf_create() looks).
 */
static void sm_dmabuf_moved(struct dma_buf_attachment *attach)
{
	struct ib_umem_dmabuf *umem = attach->importer_priv;
	struct sm_dmabuf *d = umem->private;

	dma_resv_assert_held(attach->dmabuf->resv);
	ib_umem_dmabuf_unmap_pages(umem);
	if (d && d->client)
		ib_sync_mem_invalidate_range(sm_dmabuf_owner, d->client, 0,
					     d->buf->size);
}

static const struct dma_buf_attach_ops sm_dmabuf_attach_ops = {
	.SM_DMABUF_MOVED = sm_dmabuf_moved,
};

/* A dynamic attachment, mapped now; the move notice finds @d from here. */
static struct ib_umem_dmabuf *sm_dmabuf_get_dynamic(struct sm_dmabuf *d,
						    struct ib_device *ibdev,
						    int fd)
{
	struct ib_umem_dmabuf *umem;
	int ret;

	umem = ib_umem_dmabuf_get(ibdev, 0, d->buf->size, fd,
				  IB_ACCESS_LOCAL_WRITE, &sm_dmabuf_attach_ops);
	if (IS_ERR(umem))
		return umem;
	dma_resv_lock(umem->attach->dmabuf->resv, NULL);
	umem->private = d;
	ret = ib_umem_dmabuf_map_pages(umem);
	dma_resv_unlock(umem->attach->dmabuf->resv);
	if (ret) {
		ib_umem_release(&umem->umem);
		return ERR_PTR(ret);
	}
	return umem;
}

/*
 * A device with a DMA device: an attachment on it, as the RDMA stack
 * imports dma-bufs for memory regions: pinned, or dynamic if the exporter
 * moves its buffers. The umem takes its own reference on the buffer
 * behind @fd, which must still be ours.
 */
static int sm_dmabuf_attach(struct sm_dmabuf *d, struct ib_device *ibdev,
			    int fd, struct netlink_ext_ack *extack)
{
	struct ib_umem_dmabuf *umem;

	if (dma_buf_is_dynamic(d->buf))
		umem = sm_dmabuf_get_dynamic(d, ibdev, fd);
	else
		umem = ib_umem_dmabuf_get_pinned(ibdev, 0, d->buf->size, fd,
						 IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(umem)) {
		NL_SET_ERR_MSG(extack, "cannot attach and map the dma-buf for the device");
		return PTR_ERR(umem);
	}
	if (umem->attach->dmabuf != d->buf) {
		ib_umem_release(&umem->umem);
		NL_SET_ERR_MSG(extack, "the dma-buf fd changed during registration");
		return -EBADF;
	}
	d->umem = umem;
	return 0;
}

static struct ib_sync_mem_client *
sm_dmabuf_create(struct ib_device *ibdev, const char *name, u32 flags,
		 struct nlattr **attrs, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[IB_SYNC_MEM_A_DMABUF_MAX + 1] = {};
	struct nlattr *nest = attrs[IB_SYNC_MEM_A_DMABUF];
	struct ib_sync_mem_reg reg = {
		.owner = sm_dmabuf_owner,
		.name = name,
		.ops = &sm_dmabuf_ops,
		.flags = flags,
		.kind = IB_SYNC_MEM_KIND_DMABUF,
	};
	struct ib_sync_mem_client *c;
	struct sm_dmabuf *d;
	int ret, fd;

	if (!nest) {
		NL_SET_ERR_MSG(extack, "dma-buf client needs IB_SYNC_MEM_A_DMABUF");
		return ERR_PTR(-EINVAL);
	}
	ret = nla_parse_nested(tb, IB_SYNC_MEM_A_DMABUF_MAX, nest, NULL, extack);
	if (ret)
		return ERR_PTR(ret);
	if (!tb[IB_SYNC_MEM_A_DMABUF_FD]) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "dma-buf needs FD");
		return ERR_PTR(-EINVAL);
	}

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	kref_init(&d->ref);
	mutex_init(&d->lock);
	init_waitqueue_head(&d->idle);
	INIT_WORK(&d->work, sm_bracket_work);
	spin_lock_init(&d->wlock);
	fd = nla_get_s32(tb[IB_SYNC_MEM_A_DMABUF_FD]);
	d->buf = dma_buf_get(fd);
	if (IS_ERR(d->buf)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[IB_SYNC_MEM_A_DMABUF_FD],
				    "not a dma-buf fd");
		mutex_destroy(&d->lock);
		kfree(d);
		return ERR_PTR(-EBADF);
	}
	if (!ib_uses_virt_dma(ibdev)) {
		ret = sm_dmabuf_attach(d, ibdev, fd, extack);
		if (ret)
			goto err_put;
	}

	reg.priv = d;
	reg.size = d->buf->size;
	c = ib_sync_mem_register(ibdev, &reg);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		goto err_put;
	}
	if (d->umem) {
		d->dma_file = sm_debugfs_dma_create(ib_sync_mem_client_id(c), d,
						    &sm_dmabuf_dma_fops);
		/* A move before this was not reported: report it now. */
		dma_resv_lock(d->buf->resv, NULL);
		d->client = c;
		if (!d->umem->sgt)
			ib_sync_mem_invalidate_range(sm_dmabuf_owner, c, 0,
						     d->buf->size);
		dma_resv_unlock(d->buf->resv);
	}
	return c;

err_put:
	sm_dmabuf_put(d);
	return ERR_PTR(ret);
}

/*
 * Unregister, then detach before returning rather than when the last
 * reference goes (a sync batch may hold one past the device's removal).
 */
static void sm_dmabuf_destroy(struct ib_sync_mem_client *client)
{
	struct sm_dmabuf *d = ib_sync_mem_client_priv(sm_dmabuf_owner, client);

	ib_sync_mem_get(client);
	ib_sync_mem_unregister(sm_dmabuf_owner, client);
	sm_dmabuf_detach(d);
	ib_sync_mem_put(client);
}

struct ib_sync_mem_client_kind sm_dmabuf_kind = {
	.id = IB_SYNC_MEM_KIND_DMABUF,
	.name = "dma-buf",
	.owner = THIS_MODULE,
	.unprivileged = true,	/* the caller's own dma-buf fd, charged to it */
	.create = sm_dmabuf_create,
	.destroy = sm_dmabuf_destroy,
};

int sm_dmabuf_init(void)
{
	sm_dmabuf_owner = ib_sync_mem_owner_create(THIS_MODULE, "dma-buf");
	if (IS_ERR(sm_dmabuf_owner))
		return PTR_ERR(sm_dmabuf_owner);
	sm_dmabuf_wq = alloc_workqueue("ib_sync_mem_dmabuf", WQ_UNBOUND, 0);
	if (!sm_dmabuf_wq) {
		ib_sync_mem_owner_destroy(sm_dmabuf_owner);
		return -ENOMEM;
	}
	return 0;
}

/* Waits for brackets still held by their fences: the module stays until then. */
void sm_dmabuf_exit(void)
{
	destroy_workqueue(sm_dmabuf_wq);
	ib_sync_mem_owner_destroy(sm_dmabuf_owner);
}
