// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem clients: registration, ids and lookup, references, the busy
 * count, unregistration. A client's syncs are in sync.c, a device's passes
 * in pass.c, invalidation and moves in invalidate.c, counters in stats.c;
 * client.h holds what they share.
 *
 * The locking scheme is described at struct ib_sync_mem_domain (sync_mem.h).
 * In short: a sync walks the domain's client list inside an SRCU read-side
 * section (sm_read_lock()) and calls every live client, counted in that
 * client's busy count (sm_client_enter()); writers change the list and
 * client states under dom->lock and wait for the callbacks in flight of
 * the client they changed (sm_client_wait_idle()). ->invalidate runs
 * outside both, once, after the client's syncs are over; unregister waits
 * for it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-fence.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <uapi/linux/ib_sync_mem.h>

#include "client.h"

static unsigned int max_clients = 65536;
module_param(max_clients, uint, 0644);
MODULE_PARM_DESC(max_clients, "Most clients registered at once, all devices (default 65536)");

/* A device sync's reply has room for this many results (uapi header). */
static int sm_set_max_per_dev(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, IB_SYNC_MEM_DEV_CLIENTS_MAX);
}

static const struct kernel_param_ops sm_max_per_dev_ops = {
	.set = sm_set_max_per_dev,
	.get = param_get_uint,
};

static unsigned int max_clients_per_dev = IB_SYNC_MEM_DEV_CLIENTS_MAX;
module_param_cb(max_clients_per_dev, &sm_max_per_dev_ops, &max_clients_per_dev, 0644);
MODULE_PARM_DESC(max_clients_per_dev,
		 "Most clients registered at once on one device, 1 to 2048 (default 2048)");

atomic_t sm_generation;

/* Clients by id. Lookups take a reference under RCU. */
DEFINE_XARRAY_ALLOC1(sm_clients);
static u32 sm_next_id;
static struct kmem_cache *sm_client_cache;

#ifdef CONFIG_LOCKDEP
/*
 * What lockdep knows of a sync, on kernels with it: every sync takes
 * sm_sync_map for a moment and, inside it, waits for a signalled fence (the
 * kernel's own might-wait annotation, __dma_fence_might_wait(), is not
 * exported; dma_fence_wait_timeout() makes it). That records "a sync may
 * wait for fences" (sm_sync_map, then dma_fence_map) whatever the clients
 * do. A sync inside a fence signalling section (dma_fence_map held) records
 * the reverse order and lockdep reports the cycle. The fence wait alone
 * would not: __dma_fence_might_wait() lets go of a signalling section's
 * map before it takes it. Nothing is held across a callback: a ->sync may
 * sync other clients.
 */
static struct lockdep_map sm_sync_map = {
	.name = "ib_sync_mem_sync",
};

static struct dma_fence *sm_stub_fence;

noinline void sm_fence_might_wait(void)
{
	lock_map_acquire(&sm_sync_map);
	dma_fence_wait_timeout(sm_stub_fence, false, 0);
	lock_map_release(&sm_sync_map);
}
#endif

int sm_client_init(void)
{
	sm_client_cache = KMEM_CACHE(ib_sync_mem_client, 0);
	if (!sm_client_cache)
		return -ENOMEM;
#ifdef CONFIG_LOCKDEP
	sm_stub_fence = dma_fence_get_stub();
#endif
	return 0;
}

void sm_client_exit(void)
{
#ifdef CONFIG_LOCKDEP
	dma_fence_put(sm_stub_fence);
#endif
	/* The domains' srcu_barrier() ran: only sm_client_free_rcu() left. */
	rcu_barrier();
	kmem_cache_destroy(sm_client_cache);
}

/**
 * sm_client_state() - the client's state for userspace
 * @client: the client
 *
 * Return: SM_LIVE, SM_INVALIDATED or SM_DEAD.
 */
int sm_client_state(const struct ib_sync_mem_client *client)
{
	return READ_ONCE(client->state);
}

/*
 * sm_client_wait_idle() - wait for the callbacks of @c in flight
 * @c: a client whose state the caller changed from SM_LIVE (under
 *	dom->lock, before calling this)
 *
 * When it returns, every caller that saw @c live has left its callback,
 * and every later one sees the new state. Not interruptible; as long as
 * the longest of those callbacks, which their callers' deadlines bound. A
 * pass that called ->prepare of @c is counted until its ->finish.
 */
void sm_client_wait_idle(struct ib_sync_mem_client *c)
{
	/* The state change before the count: pairs with sm_client_hold(). */
	smp_mb();
	/* Its inbound flush waiting for another client's ends now. */
	sm_inbound_unqueue(c);
	wait_event(c->dom->idle_wq, !atomic_read(&c->busy));
	/* No READ of its memory in flight, no MR over it, from here on. */
	sm_inbound_forget(c);
}

static void sm_client_free_rcu(struct rcu_head *rcu)
{
	struct ib_sync_mem_client *c =
		container_of(rcu, struct ib_sync_mem_client, rcu);

	free_percpu(c->stats);
	kfree(c->spans);
	kfree(c->lazy);
	kfree(c->move);
	kmem_cache_free(sm_client_cache, c);
}

/*
 * After the SRCU grace period that follows release: no walk sees it any
 * more. Then after an RCU one: sm_client_lookup() reads the object it
 * found by id under RCU alone (the id is gone before release).
 */
static void sm_client_free(struct rcu_head *rcu)
{
	call_rcu(rcu, sm_client_free_rcu);
}

void sm_client_release(struct kref *kref)
{
	struct ib_sync_mem_client *c =
		container_of(kref, struct ib_sync_mem_client, kref);
	struct ib_sync_mem_domain *dom = c->dom;

	/* Not c->ops: its module may be gone if it holds none (see register). */
	if (c->release)
		c->release(c);
	module_put(c->module);
	sm_owner_put(c->owner);
	atomic_dec(&sm_counters.clients);
	/*
	 * A walk of the list that began before the client was unlisted may
	 * still read the object and its counters (never its ops or private
	 * data: it is not live). The domain waits for this in its release.
	 */
	call_srcu(&dom->srcu, &c->rcu, sm_client_free);
	sm_domain_put(dom);
}

static int sm_reg_check(const struct ib_sync_mem_reg *reg)
{
	size_t len;

	if (!reg || !reg->owner || !reg->ops || !reg->ops->sync || !reg->name)
		return -EINVAL;
	/* Without a module reference nothing may be called after unregister. */
	if (!reg->ops->owner && reg->ops->release)
		return -EINVAL;
	if (reg->flags & ~IB_SYNC_MEM_F_ALL)
		return -EINVAL;
	/* ->revalidate maps again: not on a fence's signalling path. */
	if ((reg->flags & IB_SYNC_MEM_F_FENCE_SAFE) && reg->ops->revalidate)
		return -EINVAL;
	if (reg->range_align && !is_power_of_2(reg->range_align))
		return -EINVAL;
	len = strnlen(reg->name, IB_SYNC_MEM_NAME_MAX);
	if (!len)
		return -EINVAL;
	if (len == IB_SYNC_MEM_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/**
 * ib_sync_mem_register() - register a memory sync client on a device
 * @ibdev: the RDMA device whose users must see the memory coherent
 * @reg: owner, name, ops, private data, size, flags and kind of the client
 *
 * The client is live when this returns: device-wide syncs that start after
 * it include it. It holds a reference on @reg->ops->owner until released.
 *
 * Return: the client, holding one reference that ib_sync_mem_unregister()
 * drops, or an ERR_PTR: -EINVAL for a missing owner, name, ops or ->sync,
 * unknown flags, IB_SYNC_MEM_F_FENCE_SAFE with ->revalidate, a range
 * alignment that is not a power of two, or
 * ->release without ops->owner, -ENAMETOOLONG for a
 * name of IB_SYNC_MEM_NAME_MAX bytes or more, -ENODEV if the device has
 * no domain (not attached or being removed), -EBUSY if the ops' module is
 * going away, -ENOSPC past max_clients or max_clients_per_dev, -ENOMEM.
 */
struct ib_sync_mem_client *
ib_sync_mem_register(struct ib_device *ibdev, const struct ib_sync_mem_reg *reg)
{
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_client *c;
	int ret;

	might_sleep();
	ret = sm_reg_check(reg);
	if (ret)
		return ERR_PTR(ret);
	if (!ibdev)
		return ERR_PTR(-ENODEV);

	dom = sm_domain_get(ibdev);
	if (!dom)
		return ERR_PTR(-ENODEV);
	/* Its flushes, asynchronous ones too, find the flusher made. */
	if (reg->ops->inbound_target && !reg->ops->flush_inbound)
		sm_inbound_prepare(dom);

	if (!try_module_get(reg->ops->owner)) {
		ret = -EBUSY;
		goto err_dom;
	}

	c = kmem_cache_zalloc(sm_client_cache, GFP_KERNEL);
	if (!c) {
		ret = -ENOMEM;
		goto err_module;
	}
	atomic_inc(&sm_counters.clients);
	c->stats = alloc_percpu(struct sm_stats);
	if (!c->stats) {
		ret = -ENOMEM;
		goto err_free;
	}
	c->dom = dom;
	c->owner = reg->owner;
	c->ops = reg->ops;
	c->module = reg->ops->owner;
	c->release = reg->ops->release;
	c->has_info = !!reg->ops->fill_info;
	c->priv = reg->priv;
	c->size = reg->size;
	c->flags = reg->flags;
	c->kind = reg->kind;
	c->state = SM_LIVE;
	c->batch = reg->ops->prepare || reg->ops->finish;
	c->range_align = reg->range_align ?: 1;
	/* The state only lazy or movable clients have, beside the object. */
	ret = -ENOMEM;
	if (reg->flags & IB_SYNC_MEM_F_LAZY) {
		c->lazy = kzalloc(sizeof(*c->lazy), GFP_KERNEL);
		if (!c->lazy)
			goto err_parts;
	}
	/* A lazy client that syncs ranges keeps what was marked where. */
	if ((reg->flags & IB_SYNC_MEM_F_LAZY) && reg->ops->sync_range &&
	    reg->size) {
		c->spans = kzalloc(sizeof(*c->spans), GFP_KERNEL);
		if (!c->spans)
			goto err_parts;
		spin_lock_init(&c->spans->lock);
	}
	if (reg->ops->revalidate) {
		c->move = kzalloc(sizeof(*c->move), GFP_KERNEL);
		if (!c->move)
			goto err_parts;
		spin_lock_init(&c->move->lock);
		mutex_init(&c->move->reval_lock);
	}
	kref_init(&c->kref);
	strscpy(c->name, reg->name, sizeof(c->name));

	if (atomic_inc_return(&sm_counters.registered) > READ_ONCE(max_clients)) {
		ret = -ENOSPC;
		goto err_count;
	}

	/* Published in sm_clients only once it is on the list, below. */
	ret = xa_alloc_cyclic(&sm_clients, &c->id, NULL, XA_LIMIT(1, INT_MAX),
			      &sm_next_id, GFP_KERNEL);
	if (ret < 0)
		goto err_count;

	mutex_lock(&dom->lock);
	if (dom->dying) {
		ret = -ENODEV;
		goto err_unlock;
	}
	if (dom->nclients >= READ_ONCE(max_clients_per_dev)) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	c->seq = dom->next_seq;
	c->listed = true;
	list_add_tail_rcu(&c->node, &dom->clients);
	dom->nclients++;
	if (c->batch)
		dom->nbatch++;
	/* Passes that read next_seq past this client see it on the list. */
	smp_store_release(&dom->next_seq, c->seq + 1);
	sm_generation_bump();
	xa_store(&sm_clients, c->id, c, GFP_KERNEL);
	sm_owner_get(c->owner);
	atomic_inc(&c->owner->clients);
	trace_client_register(c);
	mutex_unlock(&dom->lock);
	sm_event_client(c, SM_EV_CLIENT_NEW);
	return c;

err_unlock:
	mutex_unlock(&dom->lock);
	xa_erase(&sm_clients, c->id);
err_count:
	atomic_dec(&sm_counters.registered);
err_parts:
	kfree(c->move);
	kfree(c->lazy);
	kfree(c->spans);
	free_percpu(c->stats);
err_free:
	kmem_cache_free(sm_client_cache, c);
	atomic_dec(&sm_counters.clients);
err_module:
	module_put(reg->ops->owner);
err_dom:
	sm_domain_put(dom);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_register);

/**
 * ib_sync_mem_register_many() - register several clients on a device
 * @ibdev: the RDMA device
 * @regs: @n registration requests (each with its owner, name and ops)
 * @n: how many
 * @clients: set to the @n clients, in the order of @regs, on success
 *
 * ib_sync_mem_register() of each, all or nothing: if one fails, the ones
 * registered before it are unregistered again (a device-wide pass may have
 * synced them meanwhile) and @clients is left untouched. Their ->release
 * is called as for any unregistered client, once its last reference goes
 * (before this returns unless a lookup still holds one): a caller must not
 * free their private data itself after the failure, only that of the
 * requests from the failed one on, which were never registered.
 *
 * Context: process context; may sleep.
 * Return: 0, or the error of the first registration that failed.
 */
int ib_sync_mem_register_many(struct ib_device *ibdev,
			      const struct ib_sync_mem_reg *regs,
			      unsigned int n,
			      struct ib_sync_mem_client **clients)
{
	struct ib_sync_mem_client **c;
	unsigned int i;
	int ret = 0;

	might_sleep();
	c = kvcalloc(n, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		c[i] = ib_sync_mem_register(ibdev, &regs[i]);
		if (IS_ERR(c[i])) {
			ret = PTR_ERR(c[i]);
			break;
		}
	}
	if (ret) {
		while (i--)
			sm_unregister(c[i]);
	} else {
		memcpy(clients, c, n * sizeof(*c));
	}
	kvfree(c);
	return ret;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_register_many);

/* Take a client off its domain's list. Under dom->lock. */
void sm_unlist(struct ib_sync_mem_client *c)
{
	struct ib_sync_mem_domain *dom = c->dom;

	lockdep_assert_held(&dom->lock);
	if (!c->listed)
		return;
	list_del_rcu(&c->node);
	c->listed = false;
	dom->nclients--;
	if (c->batch)
		dom->nbatch--;
}

/*
 * Called from @c's own ->invalidate: leave the last put to it. Only after
 * unregister's wait on inval_wq, when inval_task is NULL or current for
 * good: the client is SM_DEAD, so no ->invalidate starts any more
 * (sm_call_invalidate()), and only this task clears its own. The lock is
 * taken only to hand the put over.
 */
static bool sm_inval_own(struct ib_sync_mem_client *c)
{
	if (READ_ONCE(c->inval_task) != current)
		return false;
	mutex_lock(&c->dom->lock);
	c->unreg_in_inval = true;
	mutex_unlock(&c->dom->lock);
	return true;
}

/*
 * First half of unregister: no pass or lookup finds the client from here
 * on. False (and a warning) if it was unregistered already.
 */
static bool sm_unregister_begin(struct ib_sync_mem_client *client)
{
	struct ib_sync_mem_domain *dom = client->dom;

	mutex_lock(&dom->lock);
	if (WARN_ON_ONCE(client->state == SM_DEAD)) {
		mutex_unlock(&dom->lock);
		return false;
	}
	/* Dumps skip it from here on. */
	sm_generation_bump();
	WRITE_ONCE(client->state, SM_DEAD);
	sm_unlist(client);
	mutex_unlock(&dom->lock);

	xa_erase(&sm_clients, client->id);
	/* Its asynchronous syncs waiting for an in-fence end now. */
	sm_async_client_gone(client);
	return true;
}

/*
 * Second half, after sm_client_wait_idle(): wait for an ->invalidate
 * running elsewhere, report, and drop the registration's reference.
 */
static void sm_unregister_end(struct ib_sync_mem_client *client)
{
	wait_event(client->dom->inval_wq, sm_inval_idle(client));

	trace_client_unregister(client);
	sm_event_client(client, SM_EV_CLIENT_DEL);
	atomic_dec(&client->owner->clients);
	atomic_dec(&sm_counters.registered);
	if (!sm_inval_own(client))
		kref_put(&client->kref, sm_client_release);
}

/*
 * Is @client @owner's? A driver that passes another owner's client (or
 * none) has a bug: it is told, and the call does nothing.
 */
bool sm_owned(const struct ib_sync_mem_owner *owner,
	      const struct ib_sync_mem_client *client, const char *fn)
{
	if (likely(owner && client->owner == owner))
		return true;
	pr_err_ratelimited("%s: client %u is owned by %s, not by %s: refused\n",
			   fn, client->id, client->owner->name,
			   owner ? owner->name : "(none)");
	return false;
}

/* ib_sync_mem_unregister() of any owner's client, for the module itself. */
void sm_unregister(struct ib_sync_mem_client *client)
{
	might_sleep();
	if (!sm_unregister_begin(client))
		return;
	sm_client_wait_idle(client);
	sm_unregister_end(client);
}

/**
 * ib_sync_mem_unregister() - unregister a client and drop its reference
 * @owner: the owner it was registered under
 * @client: a client returned by ib_sync_mem_register()
 *
 * Waits for the callbacks of @client in flight (its ->sync and ->fill_info
 * calls; a pass that called its ->prepare, until its ->finish) and for its
 * ->invalidate if one runs in another task; never for other clients. When
 * it returns no callback of @client runs or will run, except ->release
 * when the last reference goes. Works on invalidated clients, also after
 * their device is gone, and from the client's own ->invalidate (or a work
 * item it queued). Must not be called from a callback of @client other
 * than ->invalidate: it would wait for itself. The wait is not
 * interruptible; it is as long as the longest of those callbacks, which
 * their callers' deadlines bound, and none when none runs.
 *
 * Return: 0, or -EPERM (and nothing done) if @client is not @owner's.
 */
int ib_sync_mem_unregister(struct ib_sync_mem_owner *owner,
			   struct ib_sync_mem_client *client)
{
	if (!sm_owned(owner, client, __func__))
		return -EPERM;
	sm_unregister(client);
	return 0;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_unregister);

/**
 * ib_sync_mem_unregister_many() - unregister several clients
 * @owner: the owner they were registered under
 * @clients: clients returned by ib_sync_mem_register(), each at most once
 * @n: how many
 *
 * ib_sync_mem_unregister() of each, with the same guarantees and rules for
 * every client of @clients once it returns. All are taken off their lists
 * first, so no pass that begins meanwhile calls any of them; then it waits
 * for each one's callbacks in flight. The clients are unregistered in
 * order.
 *
 * Return: 0, or -EPERM (and nothing done) if one is not @owner's.
 */
int ib_sync_mem_unregister_many(struct ib_sync_mem_owner *owner,
				struct ib_sync_mem_client **clients,
				unsigned int n)
{
	unsigned int i;

	might_sleep();
	for (i = 0; i < n; i++)
		if (!sm_owned(owner, clients[i], __func__))
			return -EPERM;
	for (i = 0; i < n; i++)
		clients[i]->unregistering = sm_unregister_begin(clients[i]);

	for (i = 0; i < n; i++) {
		struct ib_sync_mem_client *c = clients[i];

		if (!c->unregistering)
			continue;
		c->unregistering = false;
		sm_client_wait_idle(c);
		sm_unregister_end(c);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_unregister_many);

/**
 * sm_client_fill_info() - ->fill_info, with the guarantees of every callback
 * @c: the client
 * @msg: the netlink message being built (inside IB_SYNC_MEM_A_CLIENT_INFO)
 *
 * Calls ->fill_info only while the client is live, counted in its busy
 * count inside the device's read side, so that unregister, invalidation
 * and removal wait for it, as they do for ->sync.
 *
 * Return: 0, -ENOENT if there is nothing to call (no ->fill_info, or the
 * client is not live), or the callback's -EMSGSIZE.
 */
int sm_client_fill_info(struct ib_sync_mem_client *c, struct sk_buff *msg)
{
	int idx, ret = -ENOENT;

	if (!c->has_info)
		return -ENOENT;
	idx = sm_read_lock(c->dom);
	if (sm_client_enter(c)) {
		ret = c->ops->fill_info(c, msg);
		sm_client_leave(c);
	}
	sm_read_unlock(c->dom, idx);
	return ret;
}

/**
 * sm_client_deps() - ->deps, with the guarantees of every callback
 * @c: a client whose kind has ->deps
 * @dir: the asynchronous sync's direction
 *
 * Calls ->deps only while the client is live, counted in its busy count
 * inside the device's read side, as ->sync and ->fill_info are: never
 * after its unregister returned, never beside its ->invalidate.
 *
 * Return: what ->deps returns; NULL (no call) if the client is not live:
 * the job's submission then finds it gone and signals why.
 */
struct dma_fence *sm_client_deps(struct ib_sync_mem_client *c,
				 enum ib_sync_mem_dir dir)
{
	struct dma_fence *f = NULL;
	int idx;

	idx = sm_read_lock(c->dom);
	if (sm_client_enter(c)) {
		f = c->ops->deps(c, dir);
		sm_client_leave(c);
	}
	sm_read_unlock(c->dom, idx);
	return f;
}

/**
 * sm_client_lookup() - find a registered client by id, whoever owns it
 * @id: the client's id
 *
 * For the netlink family, which serves userspace's requests by id.
 *
 * Return: the client with a reference (drop it with ib_sync_mem_put()), or
 * NULL if no registered client has that id.
 */
struct ib_sync_mem_client *sm_client_lookup(u32 id)
{
	struct ib_sync_mem_client *c;

	/* Freed an RCU grace period after its SRCU one: sm_client_free(). */
	rcu_read_lock();
	c = xa_load(&sm_clients, id);
	if (c && (READ_ONCE(c->state) == SM_DEAD ||
		  !kref_get_unless_zero(&c->kref)))
		c = NULL;
	rcu_read_unlock();
	return c;
}

/**
 * ib_sync_mem_lookup() - find one of an owner's registered clients by id
 * @owner: the owner
 * @id: the client's id
 *
 * Return: the client with a reference (drop it with ib_sync_mem_put()), or
 * NULL if no registered client of @owner has that id: another owner's
 * client is not found.
 */
struct ib_sync_mem_client *ib_sync_mem_lookup(struct ib_sync_mem_owner *owner,
					      u32 id)
{
	struct ib_sync_mem_client *c = sm_client_lookup(id);

	if (c && c->owner != owner) {
		ib_sync_mem_put(c);
		c = NULL;
	}
	return c;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_lookup);

/* Lookups of a batch under one hold of the lock, at most this many. */
#define SM_LOOKUP_CHUNK	64

/**
 * sm_lookup_batch() - sm_client_lookup() of each of @ids
 * @ids: client ids
 * @e: entries; @client is set, referenced, for each id
 * @n: how many
 *
 * One hold of the id table's lock per SM_LOOKUP_CHUNK lookups instead of
 * one per id (a batch names up to IB_SYNC_MEM_SYNC_BATCH_MAX).
 *
 * Return: @n, or the index of the first id with no registered client
 * (then no entry holds a reference).
 */
unsigned int sm_lookup_batch(const u32 *ids,
			     struct ib_sync_mem_batch_entry *e,
			     unsigned int n)
{
	struct ib_sync_mem_client *c = NULL;
	unsigned int i = 0, end, missing;

	while (i < n) {
		end = min(n, i + SM_LOOKUP_CHUNK);
		xa_lock(&sm_clients);
		for (; i < end; i++) {
			c = xa_load(&sm_clients, ids[i]);
			if (c && (READ_ONCE(c->state) == SM_DEAD ||
				  !kref_get_unless_zero(&c->kref)))
				c = NULL;
			if (!c)
				break;
			e[i].client = c;
		}
		xa_unlock(&sm_clients);
		if (!c)
			break;
	}
	if (i == n)
		return n;
	missing = i;
	while (i--)
		ib_sync_mem_put(e[i].client);
	return missing;
}

/**
 * ib_sync_mem_get() - take a reference on a client
 * @client: a client the caller already holds a reference on
 *
 * Return: @client.
 */
struct ib_sync_mem_client *ib_sync_mem_get(struct ib_sync_mem_client *client)
{
	kref_get(&client->kref);
	return client;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_get);

/**
 * ib_sync_mem_put() - drop a reference on a client
 * @client: the client
 *
 * The last put calls ->release and frees the client. May sleep.
 */
void ib_sync_mem_put(struct ib_sync_mem_client *client)
{
	might_sleep();
	kref_put(&client->kref, sm_client_release);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_put);

/**
 * ib_sync_mem_client_priv() - the owner's private data
 * @owner: the owner the client was registered under
 * @client: the client
 *
 * Return: &ib_sync_mem_reg.priv given at registration, or NULL (and an
 * error logged) if @client is not @owner's.
 */
void *ib_sync_mem_client_priv(const struct ib_sync_mem_owner *owner,
			      const struct ib_sync_mem_client *client)
{
	if (!sm_owned(owner, client, __func__))
		return NULL;
	return client->priv;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_client_priv);

/**
 * ib_sync_mem_client_set_pinned() - how many pages a client keeps pinned
 * @client: the client
 * @pages: its pinned pages now (0 once released)
 *
 * For userspace's view of the client (IB_SYNC_MEM_A_CLIENT_PINNED_PAGES,
 * reported for region clients). Any context.
 */
void ib_sync_mem_client_set_pinned(struct ib_sync_mem_client *client,
				   u32 pages)
{
	atomic_set(&client->pinned_pages, pages);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_client_set_pinned);

/**
 * ib_sync_mem_client_id() - the client's id
 * @client: the client
 *
 * Return: a non-zero id, unique among registered clients.
 */
u32 ib_sync_mem_client_id(const struct ib_sync_mem_client *client)
{
	return client->id;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_client_id);

/**
 * ib_sync_mem_client_name() - the client's name
 * @client: the client
 *
 * Return: the NUL-terminated name given at registration.
 */
const char *ib_sync_mem_client_name(const struct ib_sync_mem_client *client)
{
	return client->name;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_client_name);

/**
 * ib_sync_mem_client_last_err() - result of the client's last sync
 * @client: the client
 *
 * Return: 0 or the negative errno its last ->sync returned.
 */
int ib_sync_mem_client_last_err(const struct ib_sync_mem_client *client)
{
	return READ_ONCE(client->last_err);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_client_last_err);

/**
 * sm_client_next() - the registered client with the lowest id >= *id
 * @id: where to start; set to the id found
 *
 * For walks over all clients (dumps): a client registered or unregistered
 * during the walk may or may not be seen, every other one is seen once.
 *
 * Return: the client with a reference, or NULL past the last one.
 */
struct ib_sync_mem_client *sm_client_next(unsigned long *id)
{
	struct ib_sync_mem_client *c;

	xa_lock(&sm_clients);
	xa_for_each_start(&sm_clients, *id, c, *id) {
		if (READ_ONCE(c->state) != SM_DEAD &&
		    kref_get_unless_zero(&c->kref))
			break;
	}
	xa_unlock(&sm_clients);
	return c;
}
