// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem owners: who registered a client.
 *
 * A driver creates an owner once (its module and a name) and registers its
 * clients under it. The entry points that act on a client (lookup,
 * unregister, invalidate, its private data) take the owner and refuse a
 * client of another one, so that one driver cannot reach into another's
 * clients by id or by a stray pointer; a sync of one owner's clients of a
 * device (ib_sync_mem_sync_owner()) runs only those. The client kinds built
 * into the module (region, dma-buf) and the sim are owners like any other.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include "sync_mem.h"

/* Live owners, by name (unique among them). */
static LIST_HEAD(sm_owners);
static DEFINE_MUTEX(sm_owners_lock);
static u32 sm_owner_last_id;	/* under sm_owners_lock */

static void sm_owner_release(struct kref *kref)
{
	kfree(container_of(kref, struct ib_sync_mem_owner, kref));
}

/* The owner of that name, or NULL. Under sm_owners_lock. */
static struct ib_sync_mem_owner *sm_owner_named(const char *name)
{
	struct ib_sync_mem_owner *o;

	lockdep_assert_held(&sm_owners_lock);
	list_for_each_entry(o, &sm_owners, node)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

void sm_owner_get(struct ib_sync_mem_owner *owner)
{
	kref_get(&owner->kref);
}

void sm_owner_put(struct ib_sync_mem_owner *owner)
{
	kref_put(&owner->kref, sm_owner_release);
}

/**
 * ib_sync_mem_owner_create() - create an owner for a driver's clients
 * @module: the module that creates it (THIS_MODULE); for messages
 * @name: NUL-terminated, 1 to IB_SYNC_MEM_NAME_MAX - 1 bytes, unique among
 *	the owners that exist; userspace sees it beside each client and can
 *	list and sync by it
 *
 * Context: process context; may sleep.
 * Return: the owner, or an ERR_PTR: -EINVAL for a missing or empty name,
 * -ENAMETOOLONG, -EEXIST if an owner of that name exists, -ENOMEM.
 */
struct ib_sync_mem_owner *ib_sync_mem_owner_create(struct module *module,
						   const char *name)
{
	struct ib_sync_mem_owner *owner;
	size_t len;

	might_sleep();
	if (!name)
		return ERR_PTR(-EINVAL);
	len = strnlen(name, IB_SYNC_MEM_NAME_MAX);
	if (!len)
		return ERR_PTR(-EINVAL);
	if (len == IB_SYNC_MEM_NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);

	owner = kzalloc(sizeof(*owner), GFP_KERNEL);
	if (!owner)
		return ERR_PTR(-ENOMEM);
	kref_init(&owner->kref);
	owner->module = module;
	atomic_set(&owner->clients, 0);
	strscpy(owner->name, name, sizeof(owner->name));

	mutex_lock(&sm_owners_lock);
	if (sm_owner_named(name)) {
		mutex_unlock(&sm_owners_lock);
		kfree(owner);
		return ERR_PTR(-EEXIST);
	}
	owner->id = ++sm_owner_last_id;
	list_add_tail(&owner->node, &sm_owners);
	mutex_unlock(&sm_owners_lock);
	return owner;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_owner_create);

/**
 * ib_sync_mem_owner_destroy() - destroy an owner
 * @owner: an owner from ib_sync_mem_owner_create()
 *
 * Call it after unregistering every client registered under @owner (a
 * warning says how many were left; they keep the owner's memory until
 * they are unregistered). Its name is free for a new owner when this
 * returns.
 *
 * Context: process context; may sleep.
 */
void ib_sync_mem_owner_destroy(struct ib_sync_mem_owner *owner)
{
	int left;

	might_sleep();
	if (!owner)
		return;
	left = atomic_read(&owner->clients);
	WARN(left, "owner %s destroyed with %d clients registered\n",
	     owner->name, left);
	mutex_lock(&sm_owners_lock);
	list_del(&owner->node);
	mutex_unlock(&sm_owners_lock);
	sm_owner_put(owner);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_owner_destroy);

/**
 * ib_sync_mem_owner_name() - an owner's name
 * @owner: the owner
 *
 * Return: its name, valid while the owner exists.
 */
const char *ib_sync_mem_owner_name(const struct ib_sync_mem_owner *owner)
{
	return owner->name;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_owner_name);

/**
 * sm_owner_find() - an owner by name, for userspace's filters
 * @name: its name
 *
 * Return: the owner with a reference (sm_owner_put()), or NULL.
 */
struct ib_sync_mem_owner *sm_owner_find(const char *name)
{
	struct ib_sync_mem_owner *o;

	mutex_lock(&sm_owners_lock);
	o = sm_owner_named(name);
	if (o)
		sm_owner_get(o);
	mutex_unlock(&sm_owners_lock);
	return o;
}
