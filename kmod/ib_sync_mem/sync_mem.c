// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem: a registry of memory sync clients per RDMA device.
 *
 * This file holds the module and the device side: an ib_client whose add
 * hook creates a domain per RDMA device and whose remove hook invalidates
 * every client of the device and waits for all of it before it returns.
 * client.c holds the clients; sync.c and pass.c the sync paths.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include <uapi/linux/ib_sync_mem.h>

#include "sync_mem.h"
#include "trace.h"

/*
 * Domains by ib_device index. Lookups take a reference under xa_lock, or,
 * on the sync path, enter the domain's SRCU under RCU (sm_remove_one()
 * waits for both before it drops the registry's reference).
 */
DEFINE_XARRAY(sm_domains);

struct sm_counters sm_counters;
EXPORT_SYMBOL_NS_GPL(sm_counters, "IB_SYNC_MEM_INTERNAL");
struct sm_stats __percpu *sm_global_stats;

static struct ib_client sm_ib_client;

/*
 * Device listeners. sm_listen_lock orders their callbacks against the
 * domains' insertion in and removal from sm_domains, which happen under it
 * too: a listener is told of every device exactly once (by replay or when
 * the device comes) and told of its removal exactly once.
 */
static LIST_HEAD(sm_listeners);
static DEFINE_MUTEX(sm_listen_lock);

/**
 * ib_sync_mem_listen() - be told of RDMA devices as they come and go
 * @l: the listener, with ->add and ->remove set; it must stay valid until
 *	ib_sync_mem_unlisten()
 *
 * Calls @l->add for every device the registry is attached to now (the
 * replay), before it returns, and later for every device that comes;
 * @l->remove once for each of those when it goes, or at
 * ib_sync_mem_unlisten(). A driver needs no ib_client of its own, and no
 * client order: in ->add, clients can be registered on the device.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL for a listener without both callbacks.
 */
int ib_sync_mem_listen(struct ib_sync_mem_listener *l)
{
	struct ib_sync_mem_domain *dom;
	unsigned long index;

	might_sleep();
	if (!l || !l->add || !l->remove)
		return -EINVAL;
	mutex_lock(&sm_listen_lock);
	/* Insertion and removal take the lock: these are all attached. */
	xa_for_each(&sm_domains, index, dom)
		l->add(l, dom->ibdev);
	list_add_tail(&l->node, &sm_listeners);
	mutex_unlock(&sm_listen_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_listen);

/**
 * ib_sync_mem_unlisten() - stop being told of devices
 * @l: a listener given to ib_sync_mem_listen()
 *
 * Calls @l->remove for every device still attached (each was added), so
 * that a driver tears down in one place, then forgets @l: no callback of
 * it runs when this returns.
 *
 * Context: process context; may sleep.
 */
void ib_sync_mem_unlisten(struct ib_sync_mem_listener *l)
{
	struct ib_sync_mem_domain *dom;
	unsigned long index;

	might_sleep();
	mutex_lock(&sm_listen_lock);
	list_del(&l->node);
	xa_for_each(&sm_domains, index, dom)
		l->remove(l, dom->ibdev);
	mutex_unlock(&sm_listen_lock);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_unlisten);

static void sm_domain_release(struct kref *kref)
{
	struct ib_sync_mem_domain *dom =
		container_of(kref, struct ib_sync_mem_domain, kref);

	WARN_ON(!list_empty(&dom->clients));
	/* The clients' objects, freed after a grace period of this. */
	srcu_barrier(&dom->srcu);
	cleanup_srcu_struct(&dom->srcu);
	free_percpu(dom->npasses);
	free_percpu(dom->stats);
	kfree(dom);
	atomic_dec(&sm_counters.domains);
}

void sm_domain_put(struct ib_sync_mem_domain *dom)
{
	kref_put(&dom->kref, sm_domain_release);
}
EXPORT_SYMBOL_NS_GPL(sm_domain_put, "IB_SYNC_MEM_INTERNAL");

/**
 * sm_domain_get() - the domain of a device, with a reference
 * @ibdev: the RDMA device
 *
 * Return: the domain, or NULL if the device has none (not attached, or
 * being removed).
 */
struct ib_sync_mem_domain *sm_domain_get(struct ib_device *ibdev)
{
	struct ib_sync_mem_domain *dom;

	xa_lock(&sm_domains);
	dom = xa_load(&sm_domains, ibdev->index);
	if (dom && (dom->ibdev != ibdev || !kref_get_unless_zero(&dom->kref)))
		dom = NULL;
	xa_unlock(&sm_domains);
	return dom;
}
EXPORT_SYMBOL_NS_GPL(sm_domain_get, "IB_SYNC_MEM_INTERNAL");

/**
 * sm_domain_passes() - device-wide passes run on a domain
 * @dom: the domain
 *
 * Return: the sum of the per-CPU pass counters.
 */
u64 sm_domain_passes(struct ib_sync_mem_domain *dom)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*per_cpu_ptr(dom->npasses, cpu));
	return sum;
}
EXPORT_SYMBOL_NS_GPL(sm_domain_passes, "IB_SYNC_MEM_INTERNAL");

/**
 * sm_domain_get_by_name() - look a domain up by device name
 * @name: RDMA device name
 *
 * Return: the domain with a reference, or NULL.
 */
struct ib_sync_mem_domain *sm_domain_get_by_name(const char *name)
{
	struct ib_sync_mem_domain *dom;
	unsigned long index;

	xa_lock(&sm_domains);
	xa_for_each(&sm_domains, index, dom) {
		if (!strcmp(dom->name, name) && kref_get_unless_zero(&dom->kref))
			break;
	}
	xa_unlock(&sm_domains);
	return dom;
}

/**
 * sm_domain_get_by_index() - the domain of a device index, with a reference
 * @index: the device's index (ibdev->index)
 *
 * Return: the domain (drop it with sm_domain_put()), or NULL if none.
 */
struct ib_sync_mem_domain *sm_domain_get_by_index(u32 index)
{
	struct ib_sync_mem_domain *dom;

	xa_lock(&sm_domains);
	dom = xa_load(&sm_domains, index);
	if (dom && !kref_get_unless_zero(&dom->kref))
		dom = NULL;
	xa_unlock(&sm_domains);
	return dom;
}

/**
 * sm_domain_device_get() - the device of a domain, with a reference
 * @dom: the domain
 *
 * Return: the device (drop it with ib_device_put()), or NULL if it is gone
 * or going away.
 */
struct ib_device *sm_domain_device_get(struct ib_sync_mem_domain *dom)
{
	struct ib_device *ibdev;

	mutex_lock(&dom->lock);
	ibdev = dom->ibdev;
	if (ibdev && !ib_device_try_get(ibdev))
		ibdev = NULL;
	mutex_unlock(&dom->lock);
	return ibdev;
}

/**
 * ib_sync_mem_device_get() - an RDMA device the registry is attached to
 * @name: its name (rxe0)
 *
 * For drivers and tools that are told a device by name (debugfs, module
 * parameters). It looks through the registry's own domains, so it finds
 * exactly the devices clients can be registered on.
 *
 * Return: the device with a reference (drop it with ib_device_put()), or
 * NULL if no attached device has that name.
 */
struct ib_device *ib_sync_mem_device_get(const char *name)
{
	struct ib_sync_mem_domain *dom = sm_domain_get_by_name(name);
	struct ib_device *ibdev;

	if (!dom)
		return NULL;
	ibdev = sm_domain_device_get(dom);
	sm_domain_put(dom);
	return ibdev;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_device_get);

static int sm_add_one(struct ib_device *ibdev)
{
	struct ib_sync_mem_listener *l;
	struct ib_sync_mem_domain *dom;
	int i, ret;

	dom = kzalloc(sizeof(*dom), GFP_KERNEL);
	if (!dom)
		return -ENOMEM;

	dom->stats = alloc_percpu(struct sm_stats);
	dom->npasses = alloc_percpu(u64);
	if (!dom->stats || !dom->npasses) {
		ret = -ENOMEM;
		goto err_stats;
	}
	ret = init_srcu_struct(&dom->srcu);
	if (ret)
		goto err_stats;

	dom->ibdev = ibdev;
	dom->index = ibdev->index;
	strscpy(dom->name, dev_name(&ibdev->dev), sizeof(dom->name));
	kref_init(&dom->kref);
	mutex_init(&dom->lock);
	mutex_init(&dom->inbound_lock);
	spin_lock_init(&dom->async_lock);
	INIT_LIST_HEAD(&dom->async_waiting);
	INIT_LIST_HEAD(&dom->clients);
	for (i = 0; i < ARRAY_SIZE(dom->passes); i++)
		sm_pass_queue_init(&dom->passes[i]);
	init_waitqueue_head(&dom->inval_wq);
	init_waitqueue_head(&dom->idle_wq);
	atomic_set(&dom->nl_creating, 0);
	atomic_set(&dom->result_readers, 0);
	atomic_inc(&sm_counters.domains);

	mutex_lock(&sm_listen_lock);
	sm_generation_bump();
	ret = xa_insert(&sm_domains, dom->index, dom, GFP_KERNEL);
	if (ret)
		goto err_put;

	ib_set_client_data(ibdev, &sm_ib_client, dom);
	trace_domain_add(dom);
	sm_event_dev(dom, SM_EV_DEV_NEW);
	/* Clients can be registered on it now: the listeners may. */
	list_for_each_entry(l, &sm_listeners, node)
		l->add(l, ibdev);
	mutex_unlock(&sm_listen_lock);
	return 0;

err_put:
	mutex_unlock(&sm_listen_lock);
	sm_domain_put(dom);
	return ret;
err_stats:
	free_percpu(dom->npasses);
	free_percpu(dom->stats);
	kfree(dom);
	return ret;
}

static void sm_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct ib_sync_mem_domain *dom = client_data;
	struct ib_sync_mem_listener *l;

	/*
	 * The listeners first, while the device is whole: a driver
	 * unregisters its clients there, and they see no ->invalidate.
	 * Then no new lookups or dumps find the domain...
	 */
	mutex_lock(&sm_listen_lock);
	list_for_each_entry_reverse(l, &sm_listeners, node)
		l->remove(l, ibdev);
	sm_generation_bump();
	xa_erase(&sm_domains, dom->index);
	mutex_unlock(&sm_listen_lock);
	/*
	 * ...syncs that found it under RCU are inside its SRCU now (and
	 * sm_domain_invalidate_all() waits for them)...
	 */
	synchronize_rcu();
	/*
	 * ...and every client is invalidated once in-flight syncs are done
	 * (asynchronous syncs waiting for an in-fence end first, -ENODEV).
	 */
	sm_domain_invalidate_all(dom);
	/* Clients userspace created on the device go with it. */
	sm_event_domain_removed(dom);

	mutex_lock(&dom->lock);
	WRITE_ONCE(dom->ibdev, NULL);
	mutex_unlock(&dom->lock);

	trace_domain_remove(dom);
	sm_event_dev(dom, SM_EV_DEV_DEL);
	sm_domain_put(dom);
}

static void sm_rename(struct ib_device *ibdev, void *client_data)
{
	struct ib_sync_mem_domain *dom = client_data;

	mutex_lock(&dom->lock);
	xa_lock(&sm_domains);
	strscpy(dom->name, dev_name(&ibdev->dev), sizeof(dom->name));
	xa_unlock(&sm_domains);
	mutex_unlock(&dom->lock);
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

	sm_global_stats = alloc_percpu(struct sm_stats);
	if (!sm_global_stats)
		return -ENOMEM;

	ret = sm_client_init();
	if (ret)
		goto err_stats;
	ret = sm_async_init();
	if (ret)
		goto err_client;

	sm_debugfs_init();

	ret = sm_dmabuf_init();
	if (ret)
		goto err_debugfs;

	ret = sm_nl_init();
	if (ret)
		goto err_dmabuf;

	ret = sm_region_init();
	if (ret)
		goto err_nl;
	ret = ib_sync_mem_kind_register(&sm_region_kind);
	if (ret)
		goto err_region_owner;
	ret = ib_sync_mem_kind_register(&sm_dmabuf_kind);
	if (ret)
		goto err_region;

	ret = ib_register_client(&sm_ib_client);
	if (ret)
		goto err_kinds;
	ret = sm_dev_init();
	if (ret)
		goto err_ib_client;

	return 0;

err_ib_client:
	ib_unregister_client(&sm_ib_client);
err_kinds:
	ib_sync_mem_kind_unregister(&sm_dmabuf_kind);
err_region:
	ib_sync_mem_kind_unregister(&sm_region_kind);
err_region_owner:
	sm_region_exit();
err_nl:
	sm_nl_exit();
err_dmabuf:
	sm_dmabuf_exit();
err_debugfs:
	sm_debugfs_exit();
	sm_async_exit();
err_client:
	sm_client_exit();
err_stats:
	free_percpu(sm_global_stats);
	return ret;
}

static void __exit ib_sync_mem_exit(void)
{
	/*
	 * Every client holds a reference on the module of its ops (other
	 * modules, or this one for region and dma-buf clients), so none is
	 * left. Removing the ib_client tears the domains down.
	 */
	sm_dev_exit();
	ib_unregister_client(&sm_ib_client);
	/* Listeners' modules use this one: they unlistened before it unloads. */
	WARN_ON(!list_empty(&sm_listeners));
	ib_sync_mem_kind_unregister(&sm_dmabuf_kind);
	ib_sync_mem_kind_unregister(&sm_region_kind);
	sm_nl_exit();
	sm_region_exit();
	sm_dmabuf_exit();
	sm_debugfs_exit();
	sm_async_exit();
	sm_client_exit();
	WARN(atomic_read(&sm_counters.domains) ||
	     atomic_read(&sm_counters.clients),
	     "leaked %d domains, %d clients\n",
	     atomic_read(&sm_counters.domains),
	     atomic_read(&sm_counters.clients));
	free_percpu(sm_global_stats);
}

module_init(ib_sync_mem_init);
module_exit(ib_sync_mem_exit);

MODULE_AUTHOR("syncmem developers");
MODULE_DESCRIPTION("Registry of memory sync clients per RDMA device");
MODULE_LICENSE("GPL");
