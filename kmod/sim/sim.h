/* SPDX-License-Identifier: GPL-2.0 */
/* ib_sync_mem_sim: simulated accelerator clients (see sim.c). */
#ifndef _IB_SYNC_MEM_SIM_H
#define _IB_SYNC_MEM_SIM_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/wait.h>
#include <rdma/ib_sync_mem.h>

/**
 * struct sim_config - how a simulated client behaves
 * @latency_us: time one sync takes
 * @fail_next: fail this many syncs first
 * @fail_errno: positive errno those syncs fail with (default EIO)
 * @size: bytes the client stands for
 * @addr: a user address of @size bytes of the creating process to stand
 *	for (with a device view of them), or 0
 * @flags: IB_SYNC_MEM_F_*
 * @kind: userspace kind number
 * @batch: implement ->prepare and ->finish
 * @netlink: created by the netlink family (which deletes it)
 */
struct sim_config {
	u32 latency_us;
	u32 fail_next;
	u32 fail_errno;
	u64 size;
	u64 addr;
	u32 flags;
	u32 kind;
	bool batch;
	bool netlink;
};

/**
 * struct sim_hold - a test window: the next @armed calls that reach it stop
 *	there until it is opened again (or 120 s pass)
 * @armed: calls still to stop
 * @held: calls stopped there now
 * @open: no call stops
 * @wq: where they wait
 */
struct sim_hold {
	atomic_t armed;
	atomic_t held;
	bool open;
	wait_queue_head_t wq;
};

/**
 * struct sim_client - one simulated accelerator buffer
 * @client: its registry client
 * @node: entry in the module's list
 * @dir: its debugfs directory
 * @latency_us: time one sync takes
 * @fail_errno: positive errno of injected failures
 * @fail_next: injected failures left
 * @size: bytes it stands for
 * @batch: implements ->prepare and ->finish
 * @netlink: created by the netlink family, not through debugfs
 * @calls: syncs asked, by enum ib_sync_mem_dir
 * @addr: the user address it stands for (0: none, no memory below)
 * @pages: the pinned pages of that memory (@size / PAGE_SIZE)
 * @view: the device's view of them: a copy an inbound sync refreshes
 * @view_lock: one refresh or read of @view at a time
 * @prepares: ->prepare calls
 * @finishes: ->finish calls
 * @invalidations: ->invalidate calls
 * @hold: its syncs in the caller's task stop there, counted, before their
 *	latency
 */
struct sim_client {
	struct ib_sync_mem_client *client;
	struct list_head node;
	struct dentry *dir;
	u32 latency_us;
	u32 fail_errno;
	atomic_t fail_next;
	u64 size;
	bool batch;
	bool netlink;
	atomic64_t calls[IB_SYNC_MEM_INBOUND + 1];
	u64 addr;
	struct page **pages;
	void *view;
	struct mutex view_lock;	/* see above */
	atomic_t prepares;
	atomic_t finishes;
	atomic_t invalidations;
	struct sim_hold hold;
};

struct ib_device;

struct sim_client *sim_client_create(struct ib_device *ibdev, const char *name,
				     const struct sim_config *cfg);
void sim_client_destroy(struct sim_client *s);

#endif /* _IB_SYNC_MEM_SIM_H */
