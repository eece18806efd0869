// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_URING_CMD on /dev/ib_sync_mem (uapi/linux/ib_sync_mem_dev.h,
 * "io_uring"): a sync of one client or a batch, completed in the ring's CQ.
 *
 * A command is checked at issue as the ioctl checks it (dev.c's helpers:
 * the same errnos, the same permission rule). One that waits for nothing
 * but the NIC runs there, in io_uring_enter(): a sync of one fence-safe
 * client (a region's: the CPU's cache maintenance and the DMA API's, no
 * fence wait), without an in-fence; an inbound flush too, which waits for
 * its RDMA READ (a round trip, bounded by the command's timeout) as the
 * ioctl's does, and no longer than a job's worker would. It is the
 * blocking ioctl's sync, and its result is posted at once: no job, no
 * worker, no fence. (With IORING_SETUP_SQPOLL the ring's SQ thread issues
 * it, and the program does not wait at all.) Any other command is an
 * asynchronous sync of async.c, submitted; the job's fence is the
 * command's state.
 * A callback on the fence defers the completion to the submitter's task
 * work (the callback runs where the fence signals: under its lock,
 * interrupts off, where io_uring_cmd_done() may not be called), and the
 * task work posts the fence's status as cqe->res.
 *
 * Exactly once: the fence's callback list decides. The callback runs at
 * most once and only if it was added; the canceller (->uring_cmd with
 * IO_URING_F_CANCEL, at ring exit or exec) completes the command only if
 * it took the callback off the fence (dma_fence_remove_callback() true),
 * and then no callback will run; the submitter completes it only if the
 * fence had signalled before its callback could be added, and then it
 * was never on the fence for the canceller to take. The command is marked
 * cancelable before its callback is added: once the callback may run, the
 * command may be gone, and nothing may touch it.
 *
 * The command holds one reference to the fence (the job holds the client
 * and what else the sync needs, until it signalled). The file (and so the
 * module) is held by io_uring until the command completed.
 */
#define SM_URING_API
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <uapi/linux/ib_sync_mem_dev.h>

#include "sync_mem.h"

/**
 * struct sm_uring_pdu - a pending command, in its io_uring_cmd's pdu
 * @fence: the sync's fence (the command's reference)
 * @cb: on @fence until it signalled or the command was cancelled
 */
struct sm_uring_pdu {
	struct dma_fence *fence;
	struct dma_fence_cb cb;
};

static_assert(sizeof(struct sm_uring_pdu) <=
	      sizeof_field(struct io_uring_cmd, pdu));
/* The payloads fit a 128-byte SQE's command area. */
static_assert(sizeof(struct ib_sync_mem_uring_sync) <= 80);
static_assert(sizeof(struct ib_sync_mem_uring_batch) <= 80);

static struct sm_uring_pdu *sm_uring_pdu(struct io_uring_cmd *cmd)
{
	return (struct sm_uring_pdu *)cmd->pdu;
}

static struct io_uring_cmd *sm_uring_cmd_of(struct sm_uring_pdu *pdu)
{
	return (struct io_uring_cmd *)((u8 *)pdu -
				       offsetof(struct io_uring_cmd, pdu));
}

/* Post the signalled fence's result: task context, the command's end. */
static void sm_uring_complete(struct io_uring_cmd *cmd,
			      unsigned int issue_flags)
{
	struct dma_fence *f = sm_uring_pdu(cmd)->fence;
	int ret = min(dma_fence_get_status(f), 0);

	io_uring_cmd_done(cmd, ret, issue_flags);
	dma_fence_put(f);
}

SM_URING_CMD_TW(sm_uring_tw, sm_uring_complete)

/* The fence signalled: its lock held, any context. */
static void sm_uring_signalled(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct sm_uring_pdu *pdu = container_of(cb, struct sm_uring_pdu, cb);

	/* One CQE per command: the lazy wake-up's rule holds. */
	io_uring_cmd_do_in_task_lazy(sm_uring_cmd_of(pdu), sm_uring_tw);
}

/*
 * The ring or its task goes: end the command now with -ECANCELED, unless
 * its fence's callback ran (then its task work completes it). The sync
 * itself runs on, holding what it needs; its fence is let go of here.
 */
static int sm_uring_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct sm_uring_pdu *pdu = sm_uring_pdu(cmd);
	struct dma_fence *f = pdu->fence;

	if (dma_fence_remove_callback(f, &pdu->cb)) {
		io_uring_cmd_done(cmd, -ECANCELED, issue_flags);
		dma_fence_put(f);
	}
	return 0;
}

/* A sync that runs at issue (see the top of this file). */
static bool sm_uring_at_issue(const struct ib_sync_mem_client *c,
			      const struct ib_sync_mem_uring_sync *req)
{
	return !(req->flags & IB_SYNC_MEM_IOC_F_IN_FENCE) &&
	       (c->flags & IB_SYNC_MEM_F_FENCE_SAFE);
}

/*
 * IB_SYNC_MEM_URING_CMD_SYNC: the checks of IB_SYNC_MEM_IOC_SYNC's async.
 * Return: the sync's fence; NULL when it ran at issue, its result in
 * *@res; or an ERR_PTR(), the command refused.
 */
static struct dma_fence *sm_uring_sync(struct file *file,
				       const struct ib_sync_mem_uring_sync *u,
				       int *res)
{
	struct ib_sync_mem_uring_sync req;
	struct ib_sync_mem_client *c;
	struct dma_fence *in, *f;

	/* Read once: the SQE may be in memory the program shares. */
	req = *u;
	if (req.reserved || (req.flags & IB_SYNC_MEM_IOC_F_ASYNC) ||
	    !sm_dev_req_ok(req.flags, req.timeout_ms))
		return ERR_PTR(-EINVAL);
	c = sm_dev_lookup(file, req.id);
	if (!c)
		return ERR_PTR(-ENOENT);
	if (sm_uring_at_issue(c, &req)) {
		*res = sm_dev_sync_blocking(c, req.dir, req.offset, req.len,
					    req.timeout_ms, NULL);
		f = NULL;
		goto out;
	}
	in = sm_dev_in_fence(req.flags, req.in_fence);
	if (IS_ERR(in)) {
		f = ERR_CAST(in);
		goto out;
	}
	f = ib_sync_mem_sync_async(c, req.dir, req.offset, req.len,
				   req.timeout_ms, in);
	if (in)
		dma_fence_put(in);
out:
	ib_sync_mem_put(c);
	return f;
}

/* IB_SYNC_MEM_URING_CMD_SYNC_BATCH: those of IB_SYNC_MEM_IOC_SYNC_BATCH. */
static struct dma_fence *sm_uring_batch(struct file *file,
					const struct ib_sync_mem_uring_batch *u)
{
	struct ib_sync_mem_ioc_sync_batch req = {};
	struct ib_sync_mem_uring_batch b;
	struct ib_sync_mem_batch_entry *e;
	struct ib_sync_mem_ioc_entry *ue;
	struct dma_fence *in, *f;
	unsigned int i;

	b = *u;
	if (b.reserved || (b.flags & IB_SYNC_MEM_IOC_F_ASYNC) ||
	    !sm_dev_req_ok(b.flags, b.timeout_ms))
		return ERR_PTR(-EINVAL);
	req.entries = b.entries;
	req.n = b.n;
	e = sm_dev_batch_get(file, &req, &ue);
	if (IS_ERR(e))
		return ERR_CAST(e);
	in = sm_dev_in_fence(b.flags, b.in_fence);
	if (IS_ERR(in)) {
		f = ERR_CAST(in);
		goto out;
	}
	f = ib_sync_mem_sync_many_async(e, b.n, b.dir, b.timeout_ms, in);
	if (in)
		dma_fence_put(in);
out:
	for (i = 0; i < b.n; i++)
		ib_sync_mem_put(e[i].client);
	kvfree(e);
	kvfree(ue);
	return f;
}

/**
 * sm_uring_cmd() - file_operations.uring_cmd of /dev/ib_sync_mem
 * @cmd: the command
 * @issue_flags: io_uring's
 *
 * Return: -EIOCBQUEUED once the sync is submitted (its CQE comes from
 * sm_uring_complete() or sm_uring_cancel()) or ran at issue (its CQE
 * posted already); a negative errno, the CQE's res, if it was refused; 0
 * for a cancellation.
 */
int sm_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct sm_uring_pdu *pdu = sm_uring_pdu(cmd);
	struct dma_fence *f;
	int res = 0;

	if (issue_flags & IO_URING_F_CANCEL)
		return sm_uring_cancel(cmd, issue_flags);
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	switch (cmd->cmd_op) {
	case IB_SYNC_MEM_URING_CMD_SYNC:
		f = sm_uring_sync(cmd->file,
				  sm_uring_sqe_cmd(cmd, struct ib_sync_mem_uring_sync),
				  &res);
		break;
	case IB_SYNC_MEM_URING_CMD_SYNC_BATCH:
		f = sm_uring_batch(cmd->file,
				   sm_uring_sqe_cmd(cmd, struct ib_sync_mem_uring_batch));
		break;
	default:
		return -ENOTTY;
	}
	if (IS_ERR(f))
		return PTR_ERR(f);
	if (!f) {
		/*
		 * Ran at issue. Posted here, not returned: a result of -EAGAIN
		 * would have io_uring issue the command again from a worker.
		 */
		io_uring_cmd_done(cmd, res, issue_flags);
		return -EIOCBQUEUED;
	}
	pdu->fence = f;
	INIT_LIST_HEAD(&pdu->cb.node);
	/* Before the callback may run: see the top of this file. */
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
	if (dma_fence_add_callback(f, &pdu->cb, sm_uring_signalled))
		/* Signalled already: never on the fence, ours to complete. */
		sm_uring_complete(cmd, issue_flags);
	return -EIOCBQUEUED;
}
