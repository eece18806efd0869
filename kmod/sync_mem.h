/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal definitions of ib_sync_mem shared between its source files.
 */
#ifndef _IB_SYNC_MEM_INTERNAL_H
#define _IB_SYNC_MEM_INTERNAL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

/**
 * struct ib_sync_mem_domain - per-RDMA-device registry
 * @ibdev: the device, valid from the ib_client add hook until remove returns
 * @kref: holders of the domain; the registry holds one until remove
 * @node: entry in sm_domains, under sm_domains_lock
 * @name: device name at add time (renames are tracked by the rename hook)
 */
struct ib_sync_mem_domain {
	struct ib_device *ibdev;
	struct kref kref;
	struct list_head node;
	char name[IB_DEVICE_NAME_MAX];
};

extern struct mutex sm_domains_lock;
extern struct list_head sm_domains;

int sm_debugfs_init(void);
void sm_debugfs_exit(void);

#endif /* _IB_SYNC_MEM_INTERNAL_H */
