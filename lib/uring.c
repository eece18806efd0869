// SPDX-License-Identifier: LGPL-2.1 OR BSD-3-Clause
/*
 * libsyncmem's io_uring commands: SQEs of IORING_OP_URING_CMD on the
 * handle's /dev/ib_sync_mem ("io_uring" in linux/ib_sync_mem_dev.h).
 *
 * Only the SQE is made here, as liburing's io_uring_prep_*() make theirs:
 * the caller owns the ring (liburing's, or its own on io_uring_setup()),
 * submits and reaps, so the library needs neither liburing nor a ring of
 * its own, and a program mixes these commands with its other I/O in one
 * completion queue.
 */
#include <errno.h>
#include <string.h>
#include <linux/io_uring.h>

#include <linux/ib_sync_mem.h>
#include <linux/ib_sync_mem_dev.h>

#include "priv.h"

_Static_assert(SYNCMEM_URING_SETUP_FLAGS == IORING_SETUP_SQE128, "setup");
_Static_assert(SYNCMEM_URING_SQE_SIZE == 2 * sizeof(struct io_uring_sqe), "sqe");

/*
 * Fill the whole of @sqe (SQE128: two struct io_uring_sqe) with the
 * command @op on @sm's file, @pl (@n bytes) at the start of its cmd area.
 */
static void sm_uring_prep(struct io_uring_sqe *sqe, const struct syncmem *sm,
			  __u32 op, const void *pl, size_t n)
{
	memset(sqe, 0, SYNCMEM_URING_SQE_SIZE);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = sm->fd;
	sqe->cmd_op = op;
	memcpy(sqe->cmd, pl, n);
}

SM_API int syncmem_uring_prep_sync(struct io_uring_sqe *sqe,
				   const struct syncmem *sm, uint32_t id,
				   enum syncmem_dir dir, uint64_t offset,
				   uint64_t len, uint32_t timeout_ms,
				   int in_fence)
{
	struct ib_sync_mem_uring_sync s = {
		.id = id,
		.dir = dir,
		.offset = offset,
		.len = len,
		.timeout_ms = timeout_ms,
		.in_fence = -1,
	};

	if (!sqe || !sm)
		return -EINVAL;
	sm_in_fence(in_fence, &s.flags, &s.in_fence);
	sm_uring_prep(sqe, sm, IB_SYNC_MEM_URING_CMD_SYNC, &s, sizeof(s));
	return 0;
}

SM_API int syncmem_uring_prep_batch(struct io_uring_sqe *sqe,
				    const struct syncmem *sm,
				    const struct syncmem_entry *entries,
				    unsigned int n, enum syncmem_dir dir,
				    uint32_t timeout_ms, int in_fence)
{
	struct ib_sync_mem_uring_batch b = {
		.entries = (uintptr_t)entries,
		.n = n,
		.dir = dir,
		.timeout_ms = timeout_ms,
		.in_fence = -1,
	};

	if (!sqe || !sm)
		return -EINVAL;
	sm_in_fence(in_fence, &b.flags, &b.in_fence);
	sm_uring_prep(sqe, sm, IB_SYNC_MEM_URING_CMD_SYNC_BATCH, &b, sizeof(b));
	return 0;
}
