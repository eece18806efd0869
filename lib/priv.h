/* SPDX-License-Identifier: LGPL-2.1 OR BSD-3-Clause */
/*
 * libsyncmem's insides, shared by its sources: the handle, and the one
 * attribute that marks a public function. Everything is built with
 * -fvisibility=hidden (lib/lib.mk): the library's own helpers, libynl and
 * the code ynl-gen-c.py made of the spec are invisible outside it, in the
 * shared library (with the version script, lib/libsyncmem.map) and in the
 * static one (localized by objcopy).
 */
#ifndef SYNCMEM_PRIV_H
#define SYNCMEM_PRIV_H

#include <linux/ib_sync_mem_dev.h>

#include "syncmem.h"

#define SM_API	__attribute__((visibility("default")))

#define SM_MSG_LEN	256

struct ynl_sock;

struct syncmem {
	int fd;			/* /dev/ib_sync_mem */
	struct ynl_sock *ys;	/* the family's socket, once opened */
	char msg[SM_MSG_LEN];	/* the kernel's reason for the last failure */
};

int sm_dev_delete(struct syncmem *sm, uint32_t id);

/*
 * A call's @in_fence (a sync_file fd, or -1 for none) into a request's
 * @flags and @fd (its in_fence field, left as it is without one).
 */
static inline void sm_in_fence(int in_fence, __u32 *flags, __s32 *fd)
{
	if (in_fence >= 0) {
		*flags |= IB_SYNC_MEM_IOC_F_IN_FENCE;
		*fd = in_fence;
	}
}

/* A new call on @sm: no reason yet. */
static inline void sm_begin(struct syncmem *sm)
{
	sm->msg[0] = '\0';
}

#endif /* SYNCMEM_PRIV_H */
