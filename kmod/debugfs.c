// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs view of ib_sync_mem: /sys/kernel/debug/ib_sync_mem/devices lists
 * one attached RDMA device per line.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "sync_mem.h"

static struct dentry *sm_debugfs_root;

static int sm_devices_show(struct seq_file *m, void *v)
{
	struct ib_sync_mem_domain *dom;

	mutex_lock(&sm_domains_lock);
	list_for_each_entry(dom, &sm_domains, node)
		seq_printf(m, "%s\n", dom->name);
	mutex_unlock(&sm_domains_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sm_devices);

int sm_debugfs_init(void)
{
	sm_debugfs_root = debugfs_create_dir("ib_sync_mem", NULL);
	debugfs_create_file("devices", 0444, sm_debugfs_root, NULL,
			    &sm_devices_fops);
	return 0;
}

void sm_debugfs_exit(void)
{
	debugfs_remove_recursive(sm_debugfs_root);
}
