// SPDX-License-Identifier: GPL-2.0
/*
 * The module's inbound flush: after the NIC wrote into memory and the
 * completion arrived, make its writes visible to the next reader (an
 * accelerator reading its own memory does not see writes still in flight
 * behind the completion). The technique GPU communication libraries write
 * by hand (NCCL's flush by RDMA READ): a read by the NIC of a few bytes of
 * that memory. PCIe orders a read behind the posted writes before it on
 * the same path, so when the read's response is back, the writes are home.
 *
 * Per RDMA device, made when the first client the module flushes inbound
 * registers (a blocking flush makes it if that failed) and gone with the
 * device: a PD,
 * a CQ the flushes poll, an RC QP connected to itself (loopback),
 * SM_INBOUND_MRS one-page fast-register MRs and a buffer the reads land
 * in, alone in its cache lines. A flush posts an RDMA READ of 8 bytes of
 * the client's target (ops->inbound_target(): a DMA address on the
 * device) and waits for the READ's completion, until the caller's deadline
 * (killable). The MRs keep the pages last flushed registered: a flush of a
 * page one of them holds is that READ alone (the floor a program's own
 * READ has); another page takes the least recently used MR (a local
 * invalidation if it held one, a registration, then the READ, chained;
 * each signalled, so that what an MR holds is what its completions said,
 * also after a failure).
 *
 * Flushes on one device take turns (one READ in flight at a time): the
 * one that owns the flusher posts and polls; the others wait for it, each
 * until its own deadline, its kill, the device's removal or its client's
 * unregister or invalidation (sm_inbound_unqueue() wakes them): a wait is
 * never longer than its caller asked, and an unregister never waits for
 * another client's flush. A flush that waits is answered by a READ of its
 * own target address posted after it was asked and completed successfully:
 * that READ went through to that memory behind every write the caller saw
 * complete, so the flush returns 0 without a READ of its own, and 8
 * flushes of a client queued behind one READ cost one more, not 8 turns
 * (counted: debugfs inbound's answered). A READ of another address answers
 * nothing (that memory may be behind another path). A flush that gave up
 * at its deadline (or was killed) leaves its READ in flight; the next one
 * waits for it first, and
 * the teardown of its client (sm_inbound_forget(), after the client's
 * busy count is zero, before its memory goes) waits for it too, polling
 * the CQ itself when no flush owns the flusher, then deregisters every MR
 * whose registration is that client's (another takes its place): no READ
 * of the client's memory is in flight, and no MR gives remote read of it,
 * once its unregister or invalidation returns.
 *
 * A WR that fails (the port went down, the GID went with it) leaves the
 * QP in the error state; it is logged, and the next flush recovers as a
 * ULP does: drains the QP, resets it and connects it again (to the GIDs
 * the port has then), says so in the log and counts it; if that fails
 * (the port still down), that flush fails with the errno and the next
 * tries again. A flush polls the CQ itself, as a program's flush does
 * (IB_POLL_DIRECT: no interrupt, no softirq between the completion and
 * the flush): busily for up to four times the last round trip (at most
 * SM_INBOUND_SPIN_NS; yielding at once to work woken on its CPU, such as
 * rxe's, also where the kernel asks only lazily), then between naps that grow by a quarter up to
 * SM_INBOUND_NAP_MAX_US, until its deadline (killable).
 *
 * When the device goes (sm_domain_invalidate_all()), the flusher is
 * stopped and the QP moved to the error state before the wait for syncs
 * in flight: a flush polling for its READ ends with -ENODEV at its next
 * poll, one waiting for its turn at once. Once no sync runs, the QP is
 * drained and everything is freed, before the ib_client remove hook
 * returns.
 *
 * rxe completes a READ of its own memory at once, so a test cannot catch
 * one in flight: debugfs inbound_hold parks the READs that complete while
 * it is set (their flushes wait as for a READ in flight) until it is let
 * go, for the tests of a removal, a deadline, a kill and a teardown during
 * a READ.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cache.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/ipv6.h>
#include <linux/log2.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "sync_mem.h"

/* Send queue: a flush posts up to three WRs; one may still be in flight. */
#define SM_INBOUND_SQ	16
#define SM_INBOUND_CQ	(SM_INBOUND_SQ + 4)
/* What a flush reads. */
#define SM_INBOUND_LEN	8
/* Most a flush polls busily for its READ before it naps between polls. */
#define SM_INBOUND_SPIN_NS	(500 * NSEC_PER_USEC)
/* Its first nap (each a quarter longer than the last) and its longest. */
#define SM_INBOUND_NAP_US	20UL
#define SM_INBOUND_NAP_MAX_US	1000UL

struct sm_inbound;

/**
 * struct sm_inbound_mr - a fast-register MR and the page it holds
 * @mr: the MR; NULL if a teardown retired it and could not allocate
 *	another (the slot is left unused)
 * @f: its flusher
 * @inv_cqe: the completion of its local invalidation
 * @reg_cqe: the completion of its registration
 * @client: the client whose READ went through it last: its registration
 *	is that client's until another flush takes it over
 * @inv_client: the client whose registration an invalidation posted and
 *	not yet completed ends (NULL: none)
 * @reg_posted: a registration is posted and has not completed
 * @page: the DMA address of the page registered (valid if @held)
 * @rkey: the key of that registration (valid if @held)
 * @reg_page: the page of the registration posted last
 * @reg_rkey: its key
 * @used: the flush count when a READ last went through it (LRU)
 * @held: a registration is in place (it must be invalidated first)
 *
 * Every field but @f and the cqes is under the flusher's lock. @held,
 * @page and @rkey change only when a WR completed successfully (each
 * invalidation and registration is signalled), so they say what the
 * device holds, also after a WR failed.
 */
struct sm_inbound_mr {
	struct ib_mr *mr;
	struct sm_inbound *f;
	struct ib_cqe inv_cqe;
	struct ib_cqe reg_cqe;
	const struct ib_sync_mem_client *client;
	const struct ib_sync_mem_client *inv_client;
	bool reg_posted;
	u64 page;
	u32 rkey;
	u64 reg_page;
	u32 reg_rkey;
	u64 used;
	bool held;
};

/**
 * struct sm_inbound - the inbound flusher of one RDMA device
 * @pd: its protection domain
 * @cq: the completion queue of @qp, polled only by the task that owns
 *	the flusher (@owner)
 * @qp: an RC QP connected to itself
 * @mrs: the fast-register MRs of the pages READs target
 * @flushes: READs posted (the LRU clock of @mrs; the owner's)
 * @rtt_ns: the last successful READ's round trip, as its flush saw it
 *	(the owner's)
 * @buf: where READs land (@buf_dma on the device), alone in its cache
 *	lines: @buf_size bytes, aligned to them
 * @buf_size: see @buf
 * @buf_dma: DMA address of @buf
 * @port: the port @qp uses
 * @read_cqe: the READ's completion
 * @wq: flushes waiting for the flusher, teardowns waiting for a READ or
 *	an invalidation of their client
 * @lock: protects the fields below, and those of @mrs
 * @owner: the task that owns the flusher (posts, polls the CQ, recovers
 *	the QP), NULL if none
 * @read_client: the client whose READ is in flight (NULL: none)
 * @inflight: a READ is posted and has not completed
 * @stopped: the device is going away: no more READs
 * @broken: a WR completed in error: the QP must be reset before a READ
 * @drainable: the QP was connected since its last reset (a drain moves
 *	it to the error state, which a QP in reset cannot go to)
 * @draining: a drain runs: no READ is parked
 * @status: the completion status of the last READ
 * @parked: a READ completed while inbound_hold was set, with status
 *	@parked_status: it stays in flight until the hold is let go
 * @parked_status: see @parked
 * @posted: READs posted (a flush that waits compares it with @ok_seq)
 * @ok_addr: the address the last READ that completed successfully read
 *	(its client's target)
 * @ok_seq: that READ's number in @posted
 * @answered: flushes answered by another flush's READ of their target
 * @waiting: flushes waiting for the flusher
 * @reads: READs that completed successfully
 * @regs: registrations that completed successfully
 * @recoveries: times the QP was reset and connected again
 * @last: the 8 bytes the last successful READ brought back
 */
struct sm_inbound {
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct sm_inbound_mr mrs[SM_INBOUND_MRS];
	u64 flushes;
	u64 rtt_ns;
	u64 *buf;
	size_t buf_size;
	u64 buf_dma;
	u32 port;
	struct ib_cqe read_cqe;
	wait_queue_head_t wq;
	spinlock_t lock;	/* see above */
	struct task_struct *owner;
	const struct ib_sync_mem_client *read_client;
	bool inflight;
	bool stopped;
	bool broken;
	bool drainable;
	bool draining;
	bool parked;
	enum ib_wc_status status;
	enum ib_wc_status parked_status;
	u64 posted;
	u64 ok_addr;
	u64 ok_seq;
	u64 answered;
	unsigned int waiting;
	u64 reads;
	u64 regs;
	u64 recoveries;
	u64 last;
};

/* debugfs inbound_hold: park the READs that complete while it is set. */
/* debugfs inbound_hold: park the READs that complete while it is set. */
static bool sm_inbound_hold;
/* Flushers with a READ parked. */
static atomic_t sm_inbound_nparked;

/*
 * A WR failed: the QP is in the error state until the next flush resets
 * it (sm_inbound_recover()). Under f->lock.
 */
static void sm_inbound_failed(struct sm_inbound *f, const char *what,
			      enum ib_wc_status status)
{
	/* A removal's flush of the WRs in flight is no failure. */
	if (!f->broken && !f->stopped)
		pr_warn("%s: inbound flushes: %s failed: %s (%d); the next flush resets the QP\n",
			dev_name(&f->pd->device->dev), what,
			ib_wc_status_msg(status), status);
	f->broken = true;
}

/* The READ in flight completed with @status. Under f->lock. */
static void sm_inbound_read_complete(struct sm_inbound *f,
				     enum ib_wc_status status)
{
	f->status = status;
	f->inflight = false;
	f->read_client = NULL;
	if (status == IB_WC_SUCCESS) {
		f->reads++;
		f->last = READ_ONCE(*f->buf);
	} else {
		sm_inbound_failed(f, "RDMA READ", status);
	}
}

static void sm_inbound_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sm_inbound *f = container_of(wc->wr_cqe, struct sm_inbound,
					    read_cqe);
	unsigned long flags;

	ib_dma_sync_single_for_cpu(f->pd->device, f->buf_dma, SM_INBOUND_LEN,
				   DMA_FROM_DEVICE);
	spin_lock_irqsave(&f->lock, flags);
	/* Read under the lock: sm_inbound_set_hold() unparks after it. */
	if (unlikely(READ_ONCE(sm_inbound_hold)) && !f->stopped &&
	    !f->draining) {
		f->parked = true;
		f->parked_status = wc->status;
		atomic_inc(&sm_inbound_nparked);
		spin_unlock_irqrestore(&f->lock, flags);
		/* A teardown waiting for it takes it as done. */
		wake_up_all(&f->wq);
		return;
	}
	sm_inbound_read_complete(f, wc->status);
	spin_unlock_irqrestore(&f->lock, flags);
	wake_up_all(&f->wq);
}

/* Let @f's parked READ complete, if it has one. Under f->lock. */
static bool sm_inbound_unpark_locked(struct sm_inbound *f)
{
	if (!f->parked)
		return false;
	f->parked = false;
	atomic_dec(&sm_inbound_nparked);
	sm_inbound_read_complete(f, f->parked_status);
	return true;
}

static void sm_inbound_unpark(struct sm_inbound *f)
{
	bool woke;

	spin_lock_irq(&f->lock);
	woke = sm_inbound_unpark_locked(f);
	spin_unlock_irq(&f->lock);
	if (woke)
		wake_up_all(&f->wq);
}

/**
 * sm_inbound_set_hold() - debugfs inbound_hold: park READs that complete
 * @hold: park them from now on; false: let the parked ones complete
 *
 * A flush whose READ is parked waits as for a READ in flight: until the
 * hold is let go, its deadline passes, its caller is killed or the device
 * goes (-ENODEV). The teardown of its client takes it as completed (it
 * did). For the tests.
 */
void sm_inbound_set_hold(bool hold)
{
	struct ib_sync_mem_domain *dom;
	struct sm_inbound *f;
	unsigned long index;

	WRITE_ONCE(sm_inbound_hold, hold);
	if (hold)
		return;
	/* A domain still here has its flusher (sm_domain_invalidate_all()). */
	xa_lock(&sm_domains);
	xa_for_each(&sm_domains, index, dom) {
		/* Pairs with the release in sm_inbound_get(). */
		f = smp_load_acquire(&dom->inbound);
		if (f)
			sm_inbound_unpark(f);
	}
	xa_unlock(&sm_domains);
}
EXPORT_SYMBOL_NS_GPL(sm_inbound_set_hold, "IB_SYNC_MEM_INTERNAL");

/* How many flushers have a READ parked. */
int sm_inbound_parked(void)
{
	return atomic_read(&sm_inbound_nparked);
}
EXPORT_SYMBOL_NS_GPL(sm_inbound_parked, "IB_SYNC_MEM_INTERNAL");

/*
 * An MR's invalidation completed: the registration is gone, or, if it
 * failed, still the one of the client it was (m->inv_client).
 */
static void sm_inbound_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sm_inbound_mr *m = container_of(wc->wr_cqe,
					       struct sm_inbound_mr, inv_cqe);
	struct sm_inbound *f = m->f;
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	if (wc->status == IB_WC_SUCCESS) {
		m->held = false;
	} else {
		m->client = m->inv_client;
		/* An error completion's opcode is not reliable. */
		sm_inbound_failed(f, "a local invalidation", wc->status);
	}
	m->inv_client = NULL;
	spin_unlock_irqrestore(&f->lock, flags);
	wake_up_all(&f->wq);
}

/* An MR's registration completed: it holds the page, or not (failed). */
static void sm_inbound_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sm_inbound_mr *m = container_of(wc->wr_cqe,
					       struct sm_inbound_mr, reg_cqe);
	struct sm_inbound *f = m->f;
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	if (wc->status == IB_WC_SUCCESS) {
		m->held = true;
		m->page = m->reg_page;
		m->rkey = m->reg_rkey;
		f->regs++;
	} else {
		sm_inbound_failed(f, "a registration", wc->status);
	}
	m->reg_posted = false;
	spin_unlock_irqrestore(&f->lock, flags);
	wake_up_all(&f->wq);
}

static int sm_inbound_gid(struct ib_device *ibdev, u32 port, int tbl_len,
			  union ib_gid *gid, u8 *mac)
{
	const struct ib_gid_attr *attr;
	int i, best = -ENOENT, rank = 0, r;

	for (i = 0; i < tbl_len; i++) {
		attr = rdma_get_gid_attr(ibdev, port, i);
		if (IS_ERR(attr))
			continue;
		r = 1;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP)
			r = ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw) ?
			    3 : 2;
		/* RoCE v2 over IPv6 needs the kernel's IPv6. */
		if (r == 2 && !IS_ENABLED(CONFIG_IPV6))
			r = 0;
		if (r > rank && !rdma_read_gid_l2_fields(attr, NULL, mac)) {
			rank = r;
			best = i;
			*gid = attr->gid;
		}
		rdma_put_gid_attr(attr);
	}
	return best;
}

/*
 * Connect @f->qp, in reset, to itself: INIT, RTR (to its own QP number),
 * RTS. Its owner's.
 */
static int sm_inbound_connect(struct sm_inbound *f)
{
	struct ib_device *ibdev = f->pd->device;
	struct ib_port_attr pattr;
	struct ib_qp_attr a = {};
	u8 mac[ETH_ALEN];
	union ib_gid gid;
	int ret, idx;

	ret = ib_query_port(ibdev, f->port, &pattr);
	if (ret)
		return ret;
	if (pattr.state != IB_PORT_ACTIVE)
		return -ENETDOWN;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = f->port;
	a.qp_access_flags = IB_ACCESS_REMOTE_READ;
	ret = ib_modify_qp(f->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	f->drainable = true;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = pattr.active_mtu;
	a.dest_qp_num = f->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.type = rdma_ah_find_type(ibdev, f->port);
	rdma_ah_set_port_num(&a.ah_attr, f->port);
	if (rdma_protocol_roce(ibdev, f->port)) {
		idx = sm_inbound_gid(ibdev, f->port, pattr.gid_tbl_len, &gid,
				     mac);
		if (idx < 0) {
			pr_err_ratelimited("%s: no GID to flush inbound from (without IPv6, RoCE v2 needs an IPv4 address on the net device)\n",
					   dev_name(&ibdev->dev));
			return -ENETUNREACH;
		}
		rdma_ah_set_grh(&a.ah_attr, &gid, 0, idx, 64, 0);
		memcpy(a.ah_attr.roce.dmac, mac, ETH_ALEN);
	} else if (rdma_protocol_ib(ibdev, f->port)) {
		rdma_ah_set_dlid(&a.ah_attr, pattr.lid);
	} else {
		/* iWARP connects through the iw_cm only. */
		return -EOPNOTSUPP;
	}
	ret = ib_modify_qp(f->qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 6;
	a.rnr_retry = 6;
	a.max_rd_atomic = 1;
	return ib_modify_qp(f->qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static void sm_inbound_free(struct sm_inbound *f)
{
	int i;

	if (f->qp)
		ib_destroy_qp(f->qp);
	for (i = 0; i < SM_INBOUND_MRS; i++)
		if (f->mrs[i].mr)
			ib_dereg_mr(f->mrs[i].mr);
	if (f->cq)
		ib_free_cq(f->cq);
	if (f->buf_dma)
		ib_dma_unmap_single(f->pd->device, f->buf_dma, SM_INBOUND_LEN,
				    DMA_FROM_DEVICE);
	kfree(f->buf);
	if (f->pd)
		ib_dealloc_pd(f->pd);
	kfree(f);
}

/* debugfs inbound_fail_create: a positive errno the creation fails with. */
u32 sm_inbound_fail_create;
EXPORT_SYMBOL_NS_GPL(sm_inbound_fail_create, "IB_SYNC_MEM_INTERNAL");

static struct sm_inbound *sm_inbound_create(struct ib_device *ibdev)
{
	struct ib_qp_init_attr qa = {};
	struct sm_inbound *f;
	int ret = -ENOMEM, i;
	u32 fail;
	u64 dma;

	fail = READ_ONCE(sm_inbound_fail_create);
	if (fail && fail < MAX_ERRNO)
		return ERR_PTR(-(int)fail);
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&f->lock);
	init_waitqueue_head(&f->wq);
	f->read_cqe.done = sm_inbound_read_done;
	f->port = rdma_start_port(ibdev);

	f->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(f->pd)) {
		ret = PTR_ERR(f->pd);
		f->pd = NULL;
		goto err;
	}
	/*
	 * The device writes here: nothing else may share its cache lines (a
	 * kmalloc of a power of two is aligned to its size).
	 */
	f->buf_size = max_t(size_t, SM_INBOUND_LEN, L1_CACHE_BYTES);
	f->buf_size = roundup_pow_of_two(max_t(size_t, f->buf_size,
					       dma_get_cache_alignment()));
	f->buf = kzalloc(f->buf_size, GFP_KERNEL);
	if (!f->buf)
		goto err;
	dma = ib_dma_map_single(ibdev, f->buf, SM_INBOUND_LEN,
				DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ibdev, dma))
		goto err;
	f->buf_dma = dma;
	f->cq = ib_alloc_cq(ibdev, f, SM_INBOUND_CQ, 0, IB_POLL_DIRECT);
	if (IS_ERR(f->cq)) {
		ret = PTR_ERR(f->cq);
		f->cq = NULL;
		goto err;
	}
	for (i = 0; i < SM_INBOUND_MRS; i++) {
		struct sm_inbound_mr *m = &f->mrs[i];
		struct ib_mr *mr = ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1);

		if (IS_ERR(mr)) {
			ret = PTR_ERR(mr);
			goto err;
		}
		m->mr = mr;
		m->f = f;
		m->inv_cqe.done = sm_inbound_inv_done;
		m->reg_cqe.done = sm_inbound_reg_done;
	}
	qa.send_cq = f->cq;
	qa.recv_cq = f->cq;
	qa.cap.max_send_wr = SM_INBOUND_SQ;
	qa.cap.max_recv_wr = 1;		/* ib_drain_qp() posts one */
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	f->qp = ib_create_qp(f->pd, &qa);
	if (IS_ERR(f->qp)) {
		ret = PTR_ERR(f->qp);
		f->qp = NULL;
		goto err;
	}
	ret = sm_inbound_connect(f);
	if (ret)
		goto err;
	return f;

err:
	sm_inbound_free(f);
	return ERR_PTR(ret);
}

/*
 * The device's flusher, made if it is not there yet (under
 * dom->inbound_lock, held only while it is made; a failure is kept in
 * dom->inbound_err).
 */
static struct sm_inbound *sm_inbound_get(struct ib_sync_mem_domain *dom)
{
	/* Pairs with the release below. */
	struct sm_inbound *f = smp_load_acquire(&dom->inbound);
	struct ib_device *ibdev;

	if (f)
		return f;
	if (mutex_lock_killable(&dom->inbound_lock))
		return ERR_PTR(-EINTR);
	f = dom->inbound;
	if (f)
		goto out;
	ibdev = READ_ONCE(dom->ibdev);
	if (!ibdev || READ_ONCE(dom->dying)) {
		f = ERR_PTR(-ENODEV);
		goto out;
	}
	f = sm_inbound_create(ibdev);
	if (IS_ERR(f)) {
		pr_err_ratelimited("%s: no QP for inbound flushes: %pe\n",
				   dom->name, f);
		WRITE_ONCE(dom->inbound_err, PTR_ERR(f));
		goto out;
	}
	WRITE_ONCE(dom->inbound_err, 0);
	/* sm_inbound_stop() and the flushes read it without the lock. */
	smp_store_release(&dom->inbound, f);
out:
	mutex_unlock(&dom->inbound_lock);
	return f;
}

/**
 * sm_inbound_prepare() - make @dom's flusher before a flush needs it
 * @dom: the domain of a client the module flushes inbound, registering
 *
 * An asynchronous flush runs inside its fence's signalling section, where
 * making a QP (allocations, a mutex held around them) is not allowed: it
 * uses the flusher this made, and fails with the errno of its creation
 * (dom->inbound_err) if there is none. A failure does not fail the
 * registration: it is logged, and a blocking flush tries again.
 * Process context.
 */
void sm_inbound_prepare(struct ib_sync_mem_domain *dom)
{
	sm_inbound_get(dom);
}

/* Own @f if nobody does: true if the caller does now. Under f->lock. */
static bool sm_inbound_trylock_locked(struct sm_inbound *f)
{
	bool got = !f->owner;

	if (got)
		f->owner = current;
	return got;
}

static bool sm_inbound_trylock(struct sm_inbound *f)
{
	bool got;

	spin_lock_irq(&f->lock);
	got = sm_inbound_trylock_locked(f);
	spin_unlock_irq(&f->lock);
	return got;
}

static void sm_inbound_unlock(struct sm_inbound *f)
{
	spin_lock_irq(&f->lock);
	f->owner = NULL;
	spin_unlock_irq(&f->lock);
	wake_up_all(&f->wq);
}

/*
 * Has a READ of @addr (a flush's target), posted after the flush saw
 * @f->posted at @seen, completed successfully? Then it answers that flush:
 * it went through to that memory behind the writes the flush's caller saw
 * complete.
 */
static bool sm_inbound_answered(struct sm_inbound *f, u64 addr, u64 seen)
{
	bool yes;

	spin_lock_irq(&f->lock);
	yes = f->ok_addr == addr && f->ok_seq > seen;
	if (yes)
		f->answered++;
	spin_unlock_irq(&f->lock);
	return yes;
}

/* A waiting flush's test: answered (*@answered), or the flusher is its. */
static bool sm_inbound_turn(struct sm_inbound *f, u64 addr, u64 seen,
			    bool *answered)
{
	*answered = sm_inbound_answered(f, addr, seen);
	return *answered || sm_inbound_trylock(f);
}

#define SM_INBOUND_ANSWERED	1

/*
 * Own @f for a flush of @c at @addr: wait while another flush owns it,
 * until a READ of @addr posted after this call began answers it
 * (SM_INBOUND_ANSWERED), @c's caller's @deadline (-ETIMEDOUT), its kill
 * (-EINTR), the device's removal (-ENODEV) or @c's unregister or
 * invalidation (its state's errno: sm_inbound_unqueue() wakes the wait).
 * 0 once the caller owns it.
 */
static int sm_inbound_acquire(struct sm_inbound *f,
			      struct ib_sync_mem_client *c, u64 addr,
			      ktime_t deadline)
{
	bool answered = false, got;
	long left;
	u64 seen;

	/* The READs posted before this flush, and its first try. */
	spin_lock_irq(&f->lock);
	seen = f->posted;
	got = sm_inbound_trylock_locked(f);
	if (!got)
		f->waiting++;
	spin_unlock_irq(&f->lock);
	if (got)
		return 0;
	left = ib_sync_mem_jiffies_left(deadline);
	if (left)
		left = wait_event_killable_timeout(f->wq,
						   sm_inbound_turn(f, addr, seen, &answered) ||
						   READ_ONCE(f->stopped) ||
						   READ_ONCE(c->state) != SM_LIVE,
						   left);
	spin_lock_irq(&f->lock);
	f->waiting--;
	spin_unlock_irq(&f->lock);
	if (READ_ONCE(f->owner) == current)
		return 0;
	if (answered)
		return SM_INBOUND_ANSWERED;
	if (left < 0)
		return -EINTR;
	if (!left)
		return -ETIMEDOUT;
	if (READ_ONCE(f->stopped))
		return -ENODEV;
	return sm_state_errno(c) ?: -ENODEV;
}

/*
 * Poll @f's CQ until no READ is in flight: busily for up to four times the
 * last round trip (at most SM_INBOUND_SPIN_NS; a READ's tail is about
 * three times its median), letting whatever wants the CPU run first
 * (schedule(); a lazy request too, as PREEMPT_LAZY makes for a woken
 * worker: the device's work that completes the READ may be on this CPU),
 * then between naps that
 * grow by a quarter up to SM_INBOUND_NAP_MAX_US (a poll at most a quarter
 * late). Ends when the device goes, the caller is killed or @deadline
 * passes. The owner's: the one poller of the CQ.
 */
static int sm_inbound_wait(struct sm_inbound *f, ktime_t deadline)
{
	u64 now = ktime_get_ns();
	u64 spin_end = now + min(4 * f->rtt_ns, SM_INBOUND_SPIN_NS);
	unsigned long nap = SM_INBOUND_NAP_US;

	for (;;) {
		ib_process_cq_direct(f->cq, SM_INBOUND_CQ);
		if (READ_ONCE(f->stopped))
			return -ENODEV;
		if (!READ_ONCE(f->inflight))
			return 0;
		if (fatal_signal_pending(current))
			return -EINTR;
		now = ktime_get_ns();
		if (now >= ktime_to_ns(deadline))
			return -ETIMEDOUT;
		if (now < spin_end) {
			/*
			 * The CPU is wanted, maybe by the device's work that
			 * completes the READ (a lazy request too: PREEMPT_LAZY):
			 * let it run now, then poll on.
			 */
			if (need_resched() || sm_resched_lazy())
				schedule();
			else
				cpu_relax();
			continue;
		}
		/* Not past the deadline by more than its slack. */
		nap = min(nap, (unsigned long)div_u64(ktime_to_ns(deadline) -
						     now, NSEC_PER_USEC) + 1);
		usleep_range_state(nap, nap + nap / 4, TASK_KILLABLE);
		nap = min(nap + nap / 4, SM_INBOUND_NAP_MAX_US);
	}
}

/*
 * A WR failed and the QP is in the error state (or a recovery before
 * failed half-way): drain it (every completion of the WRs before has run;
 * a READ the hold parked is taken as done: it is), reset it and connect it
 * again, as a ULP recovers a QP. The MRs are left as their completions
 * say they are. No READ is in flight. The owner's.
 */
static int sm_inbound_recover(struct sm_inbound *f)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	const char *name = dev_name(&f->pd->device->dev);
	int ret;

	if (f->drainable) {
		spin_lock_irq(&f->lock);
		f->draining = true;
		spin_unlock_irq(&f->lock);
		ib_drain_qp(f->qp);
		spin_lock_irq(&f->lock);
		f->draining = false;
		sm_inbound_unpark_locked(f);
		spin_unlock_irq(&f->lock);
	}
	ret = ib_modify_qp(f->qp, &a, IB_QP_STATE);
	if (!ret) {
		f->drainable = false;
		ret = sm_inbound_connect(f);
	}
	if (ret) {
		pr_warn_ratelimited("%s: inbound flushes: the QP could not be reset and connected again: %pe\n",
				    name, ERR_PTR(ret));
		return ret;
	}
	spin_lock_irq(&f->lock);
	f->broken = false;
	f->recoveries++;
	spin_unlock_irq(&f->lock);
	pr_info("%s: inbound flushes: the QP was reset and connected again\n",
		name);
	return 0;
}

/*
 * The MR holding the page of @page, or the least recently used one (whose
 * page the caller registers); NULL if a teardown left none. Under f->lock.
 */
static struct sm_inbound_mr *sm_inbound_mr(struct sm_inbound *f, u64 page)
{
	struct sm_inbound_mr *lru = NULL;
	int i;

	for (i = 0; i < SM_INBOUND_MRS; i++) {
		struct sm_inbound_mr *m = &f->mrs[i];

		if (!m->mr)
			continue;
		if (m->held && m->page == page)
			return m;
		if (!lru || m->used < lru->used)
			lru = m;
	}
	return lru;
}

/*
 * Post a READ of 8 bytes at @addr for @c: through the MR that holds its
 * page, or after invalidating the least recently used one (if it held a
 * page) and registering the page with it. No READ of @f is in flight. The
 * owner's.
 */
static int sm_inbound_post(struct sm_inbound *f, struct ib_sync_mem_client *c,
			   u64 addr)
{
	const struct ib_sync_mem_client *was;
	u64 page = addr & PAGE_MASK;
	struct ib_rdma_wr rdma = {};
	struct ib_send_wr inv = {};
	struct ib_reg_wr reg = {};
	struct ib_send_wr *first = &rdma.wr;
	const struct ib_send_wr *bad = NULL;
	struct sm_inbound_mr *m;
	struct scatterlist sg;
	struct ib_sge sge;
	int n, ret;

	spin_lock_irq(&f->lock);
	m = sm_inbound_mr(f, page);
	if (!m) {
		spin_unlock_irq(&f->lock);
		return -ENOMEM;
	}
	/* From here on no teardown but @c's retires it. */
	was = m->client;
	m->client = c;
	rdma.rkey = m->rkey;
	if (!m->held || m->page != page) {
		if (m->held) {
			inv.opcode = IB_WR_LOCAL_INV;
			inv.wr_cqe = &m->inv_cqe;
			inv.send_flags = IB_SEND_SIGNALED;
			inv.ex.invalidate_rkey = m->rkey;
			inv.next = &reg.wr;
			m->inv_client = was;
			first = &inv;
		} else {
			first = &reg.wr;
		}
		ib_update_fast_reg_key(m->mr, ib_inc_rkey(m->mr->rkey));
		m->reg_posted = true;
		m->reg_page = page;
		m->reg_rkey = m->mr->rkey;
		rdma.rkey = m->mr->rkey;
	}
	f->read_client = c;
	f->inflight = true;
	f->posted++;
	spin_unlock_irq(&f->lock);

	if (first != &rdma.wr) {
		sg_init_table(&sg, 1);
		sg_dma_address(&sg) = page;
		sg_dma_len(&sg) = PAGE_SIZE;
		n = ib_map_mr_sg(m->mr, &sg, 1, NULL, PAGE_SIZE);
		if (n != 1) {
			ret = n < 0 ? n : -EINVAL;
			bad = first;
			goto undo;
		}
		reg.wr.opcode = IB_WR_REG_MR;
		reg.wr.wr_cqe = &m->reg_cqe;
		reg.wr.send_flags = IB_SEND_SIGNALED;
		reg.wr.next = &rdma.wr;
		reg.mr = m->mr;
		reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ;
		reg.key = m->reg_rkey;
	}

	sge.addr = f->buf_dma;
	sge.length = SM_INBOUND_LEN;
	sge.lkey = f->pd->local_dma_lkey;
	rdma.wr.opcode = IB_WR_RDMA_READ;
	rdma.wr.wr_cqe = &f->read_cqe;
	rdma.wr.send_flags = IB_SEND_SIGNALED;
	rdma.wr.sg_list = &sge;
	rdma.wr.num_sge = 1;
	/* 8 bytes inside the page, whatever the target's alignment. */
	rdma.remote_addr = addr & ~7ULL;

	ret = ib_post_send(f->qp, first, &bad);
	if (!ret) {
		m->used = ++f->flushes;
		return 0;
	}
undo:
	/* What was posted completes; what was not is undone. */
	spin_lock_irq(&f->lock);
	f->read_client = NULL;
	f->inflight = false;
	if (bad == first) {
		m->inv_client = NULL;
		m->reg_posted = false;
		m->client = was;
	} else if (bad == &reg.wr) {
		m->reg_posted = false;
	}
	spin_unlock_irq(&f->lock);
	wake_up_all(&f->wq);
	return ret;
}

/**
 * sm_inbound_flush() - flush a client's inbound writes by a READ of the NIC
 * @c: the client, live, its caller counted in its busy count
 * @deadline: the caller's
 * @flags: SM_SYNC_*
 *
 * Waits for the flusher while another client's flush owns it, then for a
 * READ a flush before left in flight, recovers the QP if a WR failed,
 * posts the READ and waits for it.
 *
 * Return: 0 once the READ completed; -ETIMEDOUT at @deadline, -EINTR if
 * the caller was killed, -ENODEV if the device is going away or @c was
 * unregistered meanwhile (-ENXIO: its memory was invalidated), -EIO if
 * the READ failed, an errno of ops->inbound_target, of making the QP or
 * of connecting it again; -ENETUNREACH if the port has no GID the QP can
 * send from, -ENETDOWN if it is down. With SM_SYNC_SIGNALLING in @flags
 * (inside a fence's signalling section) it makes no flusher and recovers
 * no QP: the errno of the flusher's creation if there is none (-ENODEV
 * once the device is going), -EIO if a failed WR broke the QP.
 */
int sm_inbound_flush(struct ib_sync_mem_client *c, ktime_t deadline,
		     unsigned int flags)
{
	struct ib_sync_mem_domain *dom = c->dom;
	struct sm_inbound *f;
	u64 addr, t0;
	int ret;

	ret = c->ops->inbound_target(c, &addr);
	if (ret)
		return ret;
	if (flags & SM_SYNC_SIGNALLING) {
		/* Pairs with the release in sm_inbound_get(). */
		f = smp_load_acquire(&dom->inbound);
		if (!f)
			return READ_ONCE(dom->dying) ? -ENODEV :
			       READ_ONCE(dom->inbound_err) ?: -ENODEV;
	} else {
		f = sm_inbound_get(dom);
		if (IS_ERR(f))
			return PTR_ERR(f);
	}
	ret = sm_inbound_acquire(f, c, addr, deadline);
	if (ret)
		return ret == SM_INBOUND_ANSWERED ? 0 : ret;
	/* A READ a flush before gave up on first. */
	ret = sm_inbound_wait(f, deadline);
	if (!ret && READ_ONCE(f->broken))
		ret = flags & SM_SYNC_SIGNALLING ? -EIO : sm_inbound_recover(f);
	if (ret)
		goto out;
	t0 = ktime_get_ns();
	ret = sm_inbound_post(f, c, addr);
	if (ret)
		goto out;
	ret = sm_inbound_wait(f, deadline);
	if (!ret) {
		spin_lock_irq(&f->lock);
		if (f->status != IB_WC_SUCCESS) {
			ret = f->stopped ? -ENODEV : -EIO;
		} else {
			/* Ours is the last READ posted: the owner's. */
			f->ok_addr = addr;
			f->ok_seq = f->posted;
		}
		spin_unlock_irq(&f->lock);
	}
	if (!ret)
		f->rtt_ns = ktime_get_ns() - t0;
out:
	sm_inbound_unlock(f);
	return ret;
}

/**
 * sm_inbound_unqueue() - a client is no longer live: its flush waiting for
 *	the flusher ends
 * @c: the client, its state changed from SM_LIVE (before this is called)
 *
 * Called before the wait for @c's busy count: a flush of @c that waits
 * while another client's flush owns the flusher returns the errno of
 * @c's state at once, so that the wait is for @c's own flush only.
 */
void sm_inbound_unqueue(struct ib_sync_mem_client *c)
{
	struct ib_sync_mem_domain *dom = c->dom;
	struct sm_inbound *f;

	if (!c->ops->inbound_target || !READ_ONCE(dom->inbound))
		return;
	/* The lock keeps @f from sm_inbound_destroy(). */
	mutex_lock(&dom->inbound_lock);
	f = dom->inbound;
	if (f)
		wake_up_all(&f->wq);
	mutex_unlock(&dom->inbound_lock);
}

/*
 * Has @c a READ in flight, an invalidation of its registration posted and
 * not completed, or a WR posted on an MR whose registration is its? Under
 * f->lock (or a wait's unlocked look, then again under it).
 */
static bool sm_inbound_pending(struct sm_inbound *f,
			       const struct ib_sync_mem_client *c)
{
	int i;

	if (READ_ONCE(f->read_client) == c)
		return true;
	for (i = 0; i < SM_INBOUND_MRS; i++) {
		struct sm_inbound_mr *m = &f->mrs[i];

		if (READ_ONCE(m->inv_client) == c)
			return true;
		if (READ_ONCE(m->client) == c &&
		    (READ_ONCE(m->inv_client) || READ_ONCE(m->reg_posted)))
			return true;
	}
	return false;
}

/* sm_inbound_pending(), a READ of @c the hold parked taken as done. */
static bool sm_inbound_pending_unpark(struct sm_inbound *f,
				      const struct ib_sync_mem_client *c)
{
	bool pending;

	spin_lock_irq(&f->lock);
	if (f->read_client == c)
		sm_inbound_unpark_locked(f);
	pending = sm_inbound_pending(f, c);
	spin_unlock_irq(&f->lock);
	return pending;
}

/*
 * Wait until @c has nothing pending on @f, polling the CQ when no flush
 * owns the flusher (one that does polls it). A READ the hold parked is
 * taken as done: it is. Bounded by the QP's transport timeout: a READ
 * completes or fails within its retries.
 */
static void sm_inbound_wait_pending(struct sm_inbound *f,
				    const struct ib_sync_mem_client *c)
{
	unsigned long nap = SM_INBOUND_NAP_US;

	while (sm_inbound_pending_unpark(f, c)) {
		/* Woken by the owner's poll, a park, or the owner leaving. */
		wait_event(f->wq, !READ_ONCE(f->owner) ||
			   (READ_ONCE(f->parked) &&
			    READ_ONCE(f->read_client) == c) ||
			   !sm_inbound_pending(f, c));
		if (!sm_inbound_trylock(f))
			continue;
		for (;;) {
			ib_process_cq_direct(f->cq, SM_INBOUND_CQ);
			if (!sm_inbound_pending_unpark(f, c))
				break;
			usleep_range(nap, nap + nap / 4);
			nap = min(nap + nap / 4, SM_INBOUND_NAP_MAX_US);
		}
		sm_inbound_unlock(f);
	}
}

/**
 * sm_inbound_forget() - a client's memory may go: nothing of the flusher
 *	reads it any more
 * @c: the client, no longer live, its busy count zero (no flush of it
 *	runs)
 *
 * Called after the wait for @c's busy count, before its ->invalidate or
 * ->release lets its memory go. A flush of @c that gave up at its deadline
 * or was killed may have left its READ in flight: wait for it (not for
 * another client's flush: the owner polls, or this does). Then every MR
 * whose registration is @c's is deregistered (and another allocated in
 * its place): none is left with remote read over @c's pages.
 */
void sm_inbound_forget(struct ib_sync_mem_client *c)
{
	struct ib_sync_mem_domain *dom = c->dom;
	struct sm_inbound *f;
	struct ib_mr *mr;
	int i;

	if (!c->ops->inbound_target || !READ_ONCE(dom->inbound))
		return;
	/* The lock keeps @f from sm_inbound_destroy(). */
	mutex_lock(&dom->inbound_lock);
	f = dom->inbound;
	if (!f)
		goto out;
	sm_inbound_wait_pending(f, c);
	for (i = 0; i < SM_INBOUND_MRS; i++) {
		struct sm_inbound_mr *m = &f->mrs[i];

		spin_lock_irq(&f->lock);
		mr = m->client == c ? m->mr : NULL;
		if (mr) {
			m->mr = NULL;
			m->held = false;
			m->client = NULL;
		}
		spin_unlock_irq(&f->lock);
		if (!mr)
			continue;
		ib_dereg_mr(mr);
		mr = ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1);
		if (IS_ERR(mr)) {
			pr_warn_ratelimited("%s: inbound flushes: one MR fewer: %pe\n",
					    dom->name, mr);
			continue;
		}
		spin_lock_irq(&f->lock);
		m->mr = mr;
		spin_unlock_irq(&f->lock);
	}
out:
	mutex_unlock(&dom->inbound_lock);
}

/**
 * sm_inbound_stop() - the device is going away: end the READs in flight
 * @dom: its domain, dying
 *
 * A flush polling for its READ returns -ENODEV at its next poll, one
 * waiting for the flusher at once, and no flush posts another; the QP goes
 * to the error state. Does not wait.
 */
void sm_inbound_stop(struct ib_sync_mem_domain *dom)
{
	/* Pairs with the release in sm_inbound_get(). */
	struct sm_inbound *f = smp_load_acquire(&dom->inbound);
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

	if (!f)
		return;
	spin_lock_irq(&f->lock);
	f->stopped = true;
	spin_unlock_irq(&f->lock);
	wake_up_all(&f->wq);
	ib_modify_qp(f->qp, &a, IB_QP_STATE);
}

/**
 * sm_inbound_destroy() - free the device's flusher
 * @dom: its domain; no sync runs on it any more
 */
void sm_inbound_destroy(struct ib_sync_mem_domain *dom)
{
	struct sm_inbound *f;

	/* A teardown (sm_inbound_forget()) using it is over after this. */
	mutex_lock(&dom->inbound_lock);
	f = dom->inbound;
	dom->inbound = NULL;
	mutex_unlock(&dom->inbound_lock);
	if (!f)
		return;
	/* Every completion of the QP has run when this returns. */
	if (f->drainable)
		ib_drain_qp(f->qp);
	if (f->parked)
		atomic_dec(&sm_inbound_nparked);
	sm_inbound_free(f);
}

/**
 * sm_inbound_stats() - what the device's flusher did so far
 * @dom: the domain
 * @st: set to its counts (zero if it has made no flusher)
 *
 * For the tests.
 */
void sm_inbound_stats(struct ib_sync_mem_domain *dom,
		      struct sm_inbound_stats *st)
{
	struct sm_inbound *f;
	int i;

	memset(st, 0, sizeof(*st));
	mutex_lock(&dom->inbound_lock);
	f = dom->inbound;
	if (f) {
		spin_lock_irq(&f->lock);
		st->reads = f->reads;
		st->regs = f->regs;
		st->last = f->last;
		st->recoveries = f->recoveries;
		st->answered = f->answered;
		st->waiting = f->waiting;
		st->inflight = f->inflight || f->parked;
		st->broken = f->broken;
		for (i = 0; i < SM_INBOUND_MRS; i++)
			st->held[i] = f->mrs[i].held ? f->mrs[i].page : 0;
		st->buf = f->buf;
		st->buf_size = f->buf_size;
		spin_unlock_irq(&f->lock);
	}
	mutex_unlock(&dom->inbound_lock);
}
EXPORT_SYMBOL_NS_GPL(sm_inbound_stats, "IB_SYNC_MEM_INTERNAL");
