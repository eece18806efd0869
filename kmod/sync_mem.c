// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem: a registry of memory sync clients per RDMA device.
 *
 * The module attaches to every RDMA device through an ib_client and keeps one
 * domain per device, created in the add hook and torn down in remove.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include "sync_mem.h"

/* Protects sm_domains; taken by the add/remove hooks and readers of the list. */
DEFINE_MUTEX(sm_domains_lock);
LIST_HEAD(sm_domains);

static struct ib_client sm_ib_client;

static void sm_domain_release(struct kref *kref)
{
	struct ib_sync_mem_domain *dom =
		container_of(kref, struct ib_sync_mem_domain, kref);

	kfree(dom);
}

static int sm_add_one(struct ib_device *ibdev)
{
	struct ib_sync_mem_domain *dom;

	dom = kzalloc(sizeof(*dom), GFP_KERNEL);
	if (!dom)
		return -ENOMEM;

	dom->ibdev = ibdev;
	kref_init(&dom->kref);
	strscpy(dom->name, dev_name(&ibdev->dev), sizeof(dom->name));

	mutex_lock(&sm_domains_lock);
	list_add_tail(&dom->node, &sm_domains);
	mutex_unlock(&sm_domains_lock);

	ib_set_client_data(ibdev, &sm_ib_client, dom);
	return 0;
}

static void sm_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct ib_sync_mem_domain *dom = client_data;

	mutex_lock(&sm_domains_lock);
	list_del(&dom->node);
	mutex_unlock(&sm_domains_lock);

	kref_put(&dom->kref, sm_domain_release);
}

static void sm_rename(struct ib_device *ibdev, void *client_data)
{
	struct ib_sync_mem_domain *dom = client_data;

	mutex_lock(&sm_domains_lock);
	strscpy(dom->name, dev_name(&ibdev->dev), sizeof(dom->name));
	mutex_unlock(&sm_domains_lock);
}

static struct ib_client sm_ib_client = {
	.name = "ib_sync_mem",
	.add = sm_add_one,
	.remove = sm_remove_one,
	.rename = sm_rename,
	/* Nothing here needs kernel verbs; attach to every device. */
	.no_kverbs_req = 1,
};

static int __init ib_sync_mem_init(void)
{
	int ret;

	ret = sm_debugfs_init();
	if (ret)
		return ret;

	ret = ib_register_client(&sm_ib_client);
	if (ret)
		goto err_debugfs;

	return 0;

err_debugfs:
	sm_debugfs_exit();
	return ret;
}

static void __exit ib_sync_mem_exit(void)
{
	ib_unregister_client(&sm_ib_client);
	sm_debugfs_exit();
}

module_init(ib_sync_mem_init);
module_exit(ib_sync_mem_exit);

MODULE_AUTHOR("syncmem developers");
MODULE_DESCRIPTION("Registry of memory sync clients per RDMA device");
MODULE_LICENSE("GPL");
