// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem clients: registration, the sync paths and invalidation.
 *
 * The locking scheme is described at struct ib_sync_mem_domain (sync_mem.h).
 * In short: a sync walks the domain's client list inside an SRCU read-side
 * section and calls every live client; writers change the list and client
 * states under dom->lock and wait with synchronize_srcu_expedited() for
 * passes that may still see the old state. Expedited: a grace period of a
 * domain's own srcu_struct has no other readers to disturb, and the normal
 * one's timer-driven polling made every unregister take milliseconds
 * (BENCHMARKS.md, "register + unregister").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <uapi/linux/ib_sync_mem.h>

#include "sync_mem.h"
#include "trace.h"

static unsigned int max_clients = 65536;
module_param(max_clients, uint, 0644);
MODULE_PARM_DESC(max_clients, "Most clients registered at once, all devices (default 65536)");

static unsigned int max_clients_per_dev = 4096;
module_param(max_clients_per_dev, uint, 0644);
MODULE_PARM_DESC(max_clients_per_dev, "Most clients registered at once on one device (default 4096)");

bool sm_coalesce = true;
module_param_named(coalesce, sm_coalesce, bool, 0644);
MODULE_PARM_DESC(coalesce, "Concurrent device-wide syncs share passes (default Y)");
EXPORT_SYMBOL_NS_GPL(sm_coalesce, IB_SYNC_MEM_INTERNAL);

static unsigned int sync_timeout_ms = 10000;
module_param(sync_timeout_ms, uint, 0644);
MODULE_PARM_DESC(sync_timeout_ms, "Timeout of a sync that asks for none, in ms (default 10000)");

atomic_t sm_generation;

/* Unique ids of device-wide passes, for the per-client results. */
/* Pass ids: per-CPU sequences, made unique by the CPU number. */
static DEFINE_PER_CPU(u64, sm_pass_seq);

static u64 sm_pass_id(void)
{
	int cpu = get_cpu();
	u64 id = this_cpu_inc_return(sm_pass_seq) * nr_cpu_ids + cpu;

	put_cpu();
	return id;
}

/* Clients by id. Lookups take a reference under xa_lock. */
DEFINE_XARRAY_ALLOC1(sm_clients);
static u32 sm_next_id;
static struct kmem_cache *sm_client_cache;

int sm_client_init(void)
{
	sm_client_cache = KMEM_CACHE(ib_sync_mem_client, 0);
	return sm_client_cache ? 0 : -ENOMEM;
}

void sm_client_exit(void)
{
	kmem_cache_destroy(sm_client_cache);
}

void sm_pass_queue_init(struct sm_pass_queue *q)
{
	spin_lock_init(&q->lock);
	init_waitqueue_head(&q->wq);
}

static bool sm_dir_valid(enum ib_sync_mem_dir dir)
{
	return dir >= IB_SYNC_MEM_TO_DEVICE && dir <= IB_SYNC_MEM_BIDIRECTIONAL;
}

static ktime_t sm_deadline(unsigned int timeout_ms)
{
	return ktime_add_ms(ktime_get(), timeout_ms ?: READ_ONCE(sync_timeout_ms));
}

void sm_stats_sum(struct sm_stats __percpu *stats, struct sm_stats_sum *sum)
{
	int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct sm_stats *s = per_cpu_ptr(stats, cpu);
		u64 syncs, errors, ns, bytes;
		unsigned int start;

		do {
			start = u64_stats_fetch_begin(&s->syncp);
			syncs = u64_stats_read(&s->syncs);
			errors = u64_stats_read(&s->errors);
			ns = u64_stats_read(&s->ns);
			bytes = u64_stats_read(&s->bytes);
		} while (u64_stats_fetch_retry(&s->syncp, start));
		sum->syncs += syncs;
		sum->errors += errors;
		sum->ns += ns;
		sum->bytes += bytes;
		sum->max_ns = max(sum->max_ns, READ_ONCE(s->max_ns));
		for (i = 0; i < SM_HIST_BUCKETS; i++)
			sum->hist[i] += READ_ONCE(s->hist[i]);
	}
}

/*
 * Counters of one device-wide pass, added to the domain's and the module's
 * per-CPU counters once when the pass ends rather than once per client.
 */
struct sm_pass_acc {
	u64 syncs;
	u64 errors;
	u64 ns;
	u64 bytes;
	u64 max_ns;
	u32 hist[SM_HIST_BUCKETS];
};

static unsigned int sm_hist_bucket(u64 ns)
{
	return min_t(unsigned int, fls64(ns), SM_HIST_BUCKETS - 1);
}

static void sm_acc_add(struct sm_pass_acc *a, u64 ns, u64 bytes, int err)
{
	a->syncs++;
	a->ns += ns;
	if (err)
		a->errors++;
	else
		a->bytes += bytes;
	a->max_ns = max(a->max_ns, ns);
	a->hist[sm_hist_bucket(ns)]++;
}

static void sm_stats_merge(struct sm_stats __percpu *stats,
			   const struct sm_pass_acc *a)
{
	struct sm_stats *s;
	unsigned int b;

	if (!a->syncs)
		return;
	s = get_cpu_ptr(stats);
	u64_stats_update_begin(&s->syncp);
	u64_stats_add(&s->syncs, a->syncs);
	u64_stats_add(&s->ns, a->ns);
	u64_stats_add(&s->errors, a->errors);
	u64_stats_add(&s->bytes, a->bytes);
	u64_stats_update_end(&s->syncp);
	if (a->max_ns > s->max_ns)
		WRITE_ONCE(s->max_ns, a->max_ns);
	for (b = 0; b < SM_HIST_BUCKETS; b++)
		if (a->hist[b])
			WRITE_ONCE(s->hist[b], s->hist[b] + a->hist[b]);
	put_cpu_ptr(stats);
}

/* With @pass (clients only), also records the pass on this CPU. */
static void sm_stats_add(struct sm_stats __percpu *stats, u64 ns, u64 bytes,
			 int err, u64 pass)
{
	struct sm_stats *s = get_cpu_ptr(stats);
	unsigned int b = sm_hist_bucket(ns);

	u64_stats_update_begin(&s->syncp);
	u64_stats_inc(&s->syncs);
	u64_stats_add(&s->ns, ns);
	if (err)
		u64_stats_inc(&s->errors);
	else
		u64_stats_add(&s->bytes, bytes);
	u64_stats_update_end(&s->syncp);
	if (ns > s->max_ns)
		WRITE_ONCE(s->max_ns, ns);
	WRITE_ONCE(s->hist[b], s->hist[b] + 1);
	if (pass) {
		WRITE_ONCE(s->last_pass_ns, ns);
		WRITE_ONCE(s->last_pass, pass);
	}
	put_cpu_ptr(stats);
}

/**
 * sm_client_pass_ns() - did a device-wide pass sync a client, and how long
 * @client: the client
 * @pass: the pass (struct ib_sync_mem_result.pass)
 * @ns: set to the time of the client's ->sync in that pass
 *
 * Return: true if @pass is the last pass that synced @client on the CPU
 * it ran on; false if it did not sync @client, or a later pass did on the
 * same CPU.
 */
bool sm_client_pass_ns(const struct ib_sync_mem_client *client, u64 pass,
		       u64 *ns)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct sm_stats *s = per_cpu_ptr(client->stats, cpu);

		if (READ_ONCE(s->last_pass) == pass) {
			*ns = READ_ONCE(s->last_pass_ns);
			return true;
		}
	}
	return false;
}

/*
 * Call ->sync of a live client and account for it. Inside dom->srcu.
 * *@now is the time the call starts and becomes the time it ended, so
 * that a pass reads the clock once per client. With @acc (a pass), the
 * domain's and module's counters are left to the caller.
 */
static int sm_call_sync(struct ib_sync_mem_client *c, enum ib_sync_mem_dir dir,
			ktime_t deadline, u64 pass, u64 *now,
			struct sm_pass_acc *acc)
{
	u64 t0 = *now, ns;
	int err;

	err = c->ops->sync(c, dir, deadline);
	*now = ktime_get_ns();
	ns = *now - t0;

	if (err && (c->flags & IB_SYNC_MEM_F_LAZY))
		set_bit(SM_DIRTY, &c->bits);	/* retry next time */
	if (READ_ONCE(c->last_err) != err)
		WRITE_ONCE(c->last_err, err);
	if (err)
		sm_nl_notify_sync_failed(c, dir, err);
	sm_stats_add(c->stats, ns, c->size, err, pass);
	if (acc) {
		sm_acc_add(acc, ns, c->size, err);
	} else {
		sm_stats_add(c->dom->stats, ns, c->size, err, 0);
		sm_stats_add(sm_global_stats, ns, c->size, err, 0);
	}
	trace_client_sync(c, dir, ns, err);
	return err;
}

/* A lazy client that is clean has nothing to do. */
static bool sm_needs_sync(struct ib_sync_mem_client *c)
{
	return !(c->flags & IB_SYNC_MEM_F_LAZY) ||
	       test_and_clear_bit(SM_DIRTY, &c->bits);
}

static int sm_state_errno(const struct ib_sync_mem_client *c)
{
	switch (READ_ONCE(c->state)) {
	case SM_LIVE:
		return 0;
	case SM_INVALIDATED:
		/* -ENXIO: the memory is gone; -ENODEV: the device is. */
		return READ_ONCE(c->inval_reason) == IB_SYNC_MEM_INVAL_MEMORY ?
		       -ENXIO : -ENODEV;
	default:
		return -ENODEV;
	}
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

static void sm_client_release(struct kref *kref)
{
	struct ib_sync_mem_client *c =
		container_of(kref, struct ib_sync_mem_client, kref);
	struct module *owner = c->ops->owner;

	if (c->ops->release)
		c->ops->release(c);
	module_put(owner);
	free_percpu(c->stats);
	sm_domain_put(c->dom);
	kmem_cache_free(sm_client_cache, c);
	atomic_dec(&sm_counters.clients);
}

static int sm_reg_check(const struct ib_sync_mem_reg *reg)
{
	size_t len;

	if (!reg || !reg->ops || !reg->ops->sync || !reg->name)
		return -EINVAL;
	if (reg->flags & ~IB_SYNC_MEM_F_ALL)
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
 * @reg: name, ops, private data, size, flags and kind of the client
 *
 * The client is live when this returns: device-wide syncs that start after
 * it include it. It holds a reference on @reg->ops->owner until released.
 *
 * Return: the client, holding one reference that ib_sync_mem_unregister()
 * drops, or an ERR_PTR: -EINVAL for a missing name, ops or ->sync or unknown
 * flags, -ENAMETOOLONG for a name of IB_SYNC_MEM_NAME_MAX bytes or more,
 * -ENODEV if the device has no domain (not attached or being removed),
 * -EBUSY if the ops' module is going away, -ENOSPC past max_clients or
 * max_clients_per_dev, -ENOMEM.
 */
struct ib_sync_mem_client *
ib_sync_mem_register(struct ib_device *ibdev, const struct ib_sync_mem_reg *reg)
{
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_client *c;
	int ret;

	ret = sm_reg_check(reg);
	if (ret)
		return ERR_PTR(ret);
	if (!ibdev)
		return ERR_PTR(-ENODEV);

	dom = sm_domain_get(ibdev);
	if (!dom)
		return ERR_PTR(-ENODEV);

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
	c->ops = reg->ops;
	c->priv = reg->priv;
	c->size = reg->size;
	c->flags = reg->flags;
	c->kind = reg->kind;
	c->state = SM_LIVE;
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
	if (c->ops->prepare || c->ops->finish)
		dom->nbatch++;
	/* Passes that read next_seq past this client see it on the list. */
	smp_store_release(&dom->next_seq, c->seq + 1);
	xa_store(&sm_clients, c->id, c, GFP_KERNEL);
	atomic_inc(&sm_generation);
	trace_client_register(c);
	mutex_unlock(&dom->lock);
	sm_nl_notify_client(c, IB_SYNC_MEM_CMD_CLIENT_NEW);
	return c;

err_unlock:
	mutex_unlock(&dom->lock);
	xa_erase(&sm_clients, c->id);
err_count:
	atomic_dec(&sm_counters.registered);
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

/* Take a client off its domain's list. Under dom->lock. */
static void sm_unlist(struct ib_sync_mem_client *c)
{
	struct ib_sync_mem_domain *dom = c->dom;

	lockdep_assert_held(&dom->lock);
	if (!c->listed)
		return;
	list_del_rcu(&c->node);
	c->listed = false;
	dom->nclients--;
	if (c->ops->prepare || c->ops->finish)
		dom->nbatch--;
}

/* Run ->invalidate once, after syncs of the client are over. */
static void sm_call_invalidate(struct ib_sync_mem_client *c)
{
	lockdep_assert_held(&c->dom->lock);
	if (c->inval_called)
		return;
	c->inval_called = true;
	atomic_inc(&sm_generation);
	trace_client_invalidate(c);
	sm_nl_notify_client(c, IB_SYNC_MEM_CMD_CLIENT_INVALIDATED);
	if (c->ops->invalidate)
		c->ops->invalidate(c, c->inval_reason);
}

/**
 * ib_sync_mem_unregister() - unregister a client and drop its reference
 * @client: a client returned by ib_sync_mem_register()
 *
 * Waits for syncs running on the client's device to finish. When it returns
 * no callback of @client runs or will run, except ->release when the last
 * reference goes. Works on invalidated clients, also after their device is
 * gone. Must not be called from a callback of a client of the same device.
 */
void ib_sync_mem_unregister(struct ib_sync_mem_client *client)
{
	struct ib_sync_mem_domain *dom = client->dom;

	mutex_lock(&dom->lock);
	if (WARN_ON_ONCE(client->state == SM_DEAD)) {
		mutex_unlock(&dom->lock);
		return;
	}
	WRITE_ONCE(client->state, SM_DEAD);
	sm_unlist(client);
	mutex_unlock(&dom->lock);

	xa_erase(&sm_clients, client->id);
	synchronize_srcu_expedited(&dom->srcu);

	atomic_inc(&sm_generation);
	trace_client_unregister(client);
	sm_nl_notify_client(client, IB_SYNC_MEM_CMD_CLIENT_DEL);
	atomic_dec(&sm_counters.registered);
	kref_put(&client->kref, sm_client_release);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_unregister);

/**
 * ib_sync_mem_invalidate() - the memory behind a client went away
 * @client: the client
 * @reason: IB_SYNC_MEM_INVAL_MEMORY, usually
 *
 * Marks the client invalidated, waits for its syncs in flight, then calls
 * its ->invalidate once. Later syncs of the client fail with -ENXIO
 * (memory) or -ENODEV (device); device-wide syncs skip it. The client stays
 * registered until its owner unregisters it. Must not be called from the
 * client's own callbacks. Does nothing if the client is not live.
 */
void ib_sync_mem_invalidate(struct ib_sync_mem_client *client,
			    enum ib_sync_mem_inval reason)
{
	struct ib_sync_mem_domain *dom = client->dom;

	mutex_lock(&dom->lock);
	if (client->state != SM_LIVE) {
		mutex_unlock(&dom->lock);
		return;
	}
	WRITE_ONCE(client->inval_reason, reason);
	WRITE_ONCE(client->state, SM_INVALIDATED);
	mutex_unlock(&dom->lock);

	synchronize_srcu_expedited(&dom->srcu);

	mutex_lock(&dom->lock);
	if (client->state == SM_INVALIDATED)
		sm_call_invalidate(client);
	mutex_unlock(&dom->lock);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_invalidate);

/**
 * sm_domain_invalidate_all() - the device is going away
 * @dom: its domain, already unreachable by lookups
 *
 * Refuses new registrations and passes, waits for syncs in flight, then
 * takes every client off the list and calls its ->invalidate. The clients
 * stay valid for their owners, who still unregister them.
 */
void sm_domain_invalidate_all(struct ib_sync_mem_domain *dom)
{
	struct ib_sync_mem_client *c, *tmp;

	mutex_lock(&dom->lock);
	WRITE_ONCE(dom->dying, true);
	list_for_each_entry(c, &dom->clients, node) {
		if (c->state != SM_LIVE)
			continue;
		WRITE_ONCE(c->inval_reason, IB_SYNC_MEM_INVAL_DEVICE);
		WRITE_ONCE(c->state, SM_INVALIDATED);
	}
	mutex_unlock(&dom->lock);

	/* Passes and syncs that saw the clients live are over after this. */
	synchronize_srcu_expedited(&dom->srcu);

	mutex_lock(&dom->lock);
	list_for_each_entry_safe(c, tmp, &dom->clients, node) {
		sm_unlist(c);
		sm_call_invalidate(c);
	}
	mutex_unlock(&dom->lock);
}

/**
 * ib_sync_mem_sync() - make one client's memory coherent
 * @client: a client the caller holds a reference on
 * @dir: who uses the memory next
 * @timeout_ms: how long a wait inside ->sync may take; 0 for the module's
 *	sync_timeout_ms
 *
 * A lazy client that was not marked dirty since its last sync is not called
 * and the sync succeeds.
 *
 * Return: 0, the error of ->sync, -EINVAL for a bad @dir, -ENXIO if the
 * client's memory is gone, -ENODEV if its device is gone or it was
 * unregistered.
 */
int ib_sync_mem_sync(struct ib_sync_mem_client *client,
		     enum ib_sync_mem_dir dir, unsigned int timeout_ms)
{
	struct ib_sync_mem_domain *dom = client->dom;
	ktime_t deadline = sm_deadline(timeout_ms);
	u64 t0 = ktime_get_ns();
	u64 now;
	int idx, err, n = 0;

	if (!sm_dir_valid(dir))
		return -EINVAL;

	trace_sync_start(dom, client->id, dir);
	idx = srcu_read_lock(&dom->srcu);
	err = sm_state_errno(client);
	if (!err && sm_needs_sync(client)) {
		now = ktime_get_ns();
		err = sm_call_sync(client, dir, deadline, 0, &now, NULL);
		n = 1;
	}
	srcu_read_unlock(&dom->srcu, idx);
	trace_sync_end(dom, client->id, dir, n, n && err ? 1 : 0,
		       ktime_get_ns() - t0, err);
	return err;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync);

/*
 * One pass over the domain: every client registered before the pass began,
 * live, and (if lazy) dirty, is synced once, in registration order.
 */
static int sm_run_pass(struct ib_sync_mem_domain *dom, enum ib_sync_mem_dir dir,
		       ktime_t deadline, struct ib_sync_mem_result *res)
{
	struct ib_sync_mem_client *c;
	struct sm_pass_acc acc = {};
	u64 limit, now, t0 = ktime_get_ns();
	bool batch;
	int idx, ret, err = 0;

	memset(res, 0, sizeof(*res));
	res->pass = sm_pass_id();
	trace_sync_start(dom, 0, dir);
	idx = srcu_read_lock(&dom->srcu);
	if (READ_ONCE(dom->dying)) {
		err = -ENODEV;
		goto out;
	}
	/* Pairs with the release in ib_sync_mem_register(). */
	limit = smp_load_acquire(&dom->next_seq);
	batch = READ_ONCE(dom->nbatch);

	if (batch) {
		list_for_each_entry_srcu(c, &dom->clients, node,
					 srcu_read_lock_held(&dom->srcu)) {
			if (c->seq >= limit)
				break;
			if (c->ops->prepare)
				c->ops->prepare(c, dir);
		}
	}

	now = ktime_get_ns();
	list_for_each_entry_srcu(c, &dom->clients, node,
				 srcu_read_lock_held(&dom->srcu)) {
		if (c->seq >= limit)
			break;
		if (READ_ONCE(c->state) != SM_LIVE || !sm_needs_sync(c)) {
			res->skipped++;
			continue;
		}
		ret = sm_call_sync(c, dir, deadline, res->pass, &now, &acc);
		res->clients++;
		if (ret) {
			res->errors++;
			if (!err)
				err = ret;
		}
	}

	/*
	 * Clients unlinked meanwhile are still reachable from here, and
	 * their unregister waits for this section: finish pairs with every
	 * prepare above.
	 */
	if (batch) {
		list_for_each_entry_srcu(c, &dom->clients, node,
					 srcu_read_lock_held(&dom->srcu)) {
			if (c->seq >= limit)
				break;
			if (c->ops->finish)
				c->ops->finish(c, dir);
		}
	}
	this_cpu_inc(*dom->npasses);
out:
	srcu_read_unlock(&dom->srcu, idx);
	sm_stats_merge(dom->stats, &acc);
	sm_stats_merge(sm_global_stats, &acc);
	res->ns = ktime_get_ns() - t0;
	trace_sync_end(dom, 0, dir, res->clients, res->errors, res->ns, err);
	return err;
}

/* Serve a caller with the first pass that starts after it arrived. */
static int sm_sync_coalesced(struct ib_sync_mem_domain *dom,
			     enum ib_sync_mem_dir dir, ktime_t deadline,
			     struct ib_sync_mem_result *res)
{
	struct sm_pass_queue *q = &dom->passes[dir - 1];
	u64 want;
	long left;
	int err;

	spin_lock(&q->lock);
	want = q->started + 1;
	for (;;) {
		if (q->done >= want) {
			/* A pass that began after we arrived is complete. */
			err = q->err;
			*res = q->res;
			break;
		}
		if (q->started == q->done) {
			/* Idle: run the pass ourselves. */
			q->started = want;
			spin_unlock(&q->lock);
			err = sm_run_pass(dom, dir, deadline, res);
			spin_lock(&q->lock);
			q->done = want;
			q->err = err;
			q->res = *res;
			wake_up_all(&q->wq);
			break;
		}
		spin_unlock(&q->lock);
		left = ktime_to_ns(ktime_sub(deadline, ktime_get()));
		left = left > 0 ? nsecs_to_jiffies(left) + 1 : 0;
		left = wait_event_timeout(q->wq,
					  READ_ONCE(q->done) >= want ||
					  READ_ONCE(q->started) == READ_ONCE(q->done),
					  left);
		spin_lock(&q->lock);
		if (!left && q->done < want && q->started != q->done) {
			memset(res, 0, sizeof(*res));
			err = -ETIMEDOUT;
			break;
		}
	}
	spin_unlock(&q->lock);
	return err;
}

/**
 * sm_sync_domain() - ib_sync_mem_sync_device() for a domain in hand
 * @dom: the domain, referenced by the caller
 * @dir: a valid direction
 * @timeout_ms: as for ib_sync_mem_sync_device()
 * @res: counters of the serving pass; res->pass identifies it in the
 *	clients' counters (sm_client_pass_ns())
 *
 * Return: as ib_sync_mem_sync_device().
 */
int sm_sync_domain(struct ib_sync_mem_domain *dom, enum ib_sync_mem_dir dir,
		   unsigned int timeout_ms, struct ib_sync_mem_result *res)
{
	ktime_t deadline = sm_deadline(timeout_ms);

	if (READ_ONCE(sm_coalesce))
		return sm_sync_coalesced(dom, dir, deadline, res);
	return sm_run_pass(dom, dir, deadline, res);
}

/**
 * ib_sync_mem_sync_device() - make every client of a device coherent
 * @ibdev: the RDMA device
 * @dir: who uses the memory next
 * @timeout_ms: bound on waits, 0 for the module's sync_timeout_ms; each
 *	client's ->sync gets the same deadline
 * @result: optional; counters of the pass that served the caller
 *
 * Runs ->sync of every live client registered before the pass began (lazy
 * ones only if dirty), in registration order, each once. With coalescing on
 * (the default), a caller that arrives while a pass in the same direction
 * runs waits for the next pass and shares it with every caller that arrived
 * meanwhile.
 *
 * Return: 0, the first error of a client (the others still ran; each
 * client's own result is in ib_sync_mem_client_last_err()), -EINVAL for a
 * bad @dir, -ENODEV if the device is not attached or goes away,
 * -ETIMEDOUT if the caller's deadline passed while it waited for a pass.
 */
int ib_sync_mem_sync_device(struct ib_device *ibdev, enum ib_sync_mem_dir dir,
			    unsigned int timeout_ms,
			    struct ib_sync_mem_result *result)
{
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_result res;
	int idx, err;

	if (!sm_dir_valid(dir))
		return -EINVAL;
	/*
	 * The domain's own SRCU keeps it alive for the call, taken under RCU
	 * (sm_remove_one() waits for both): no reference count, xa_lock or
	 * other shared cache line written on the way in.
	 */
	rcu_read_lock();
	dom = xa_load(&sm_domains, ibdev->index);
	if (!dom || READ_ONCE(dom->ibdev) != ibdev) {
		rcu_read_unlock();
		return -ENODEV;
	}
	idx = srcu_read_lock(&dom->srcu);
	rcu_read_unlock();
	err = sm_sync_domain(dom, dir, timeout_ms, &res);
	srcu_read_unlock(&dom->srcu, idx);
	if (result)
		*result = res;
	return err;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync_device);

/**
 * ib_sync_mem_mark_dirty() - a lazy client's memory changed
 * @client: the client
 *
 * The next sync that reaches @client calls its ->sync. Any context.
 */
void ib_sync_mem_mark_dirty(struct ib_sync_mem_client *client)
{
	set_bit(SM_DIRTY, &client->bits);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_mark_dirty);

/**
 * ib_sync_mem_lookup() - find a registered client by id
 * @id: the client's id
 *
 * Return: the client with a reference (drop it with ib_sync_mem_put()), or
 * NULL if no registered client has that id.
 */
struct ib_sync_mem_client *ib_sync_mem_lookup(u32 id)
{
	struct ib_sync_mem_client *c;

	xa_lock(&sm_clients);
	c = xa_load(&sm_clients, id);
	if (c && (READ_ONCE(c->state) == SM_DEAD ||
		  !kref_get_unless_zero(&c->kref)))
		c = NULL;
	xa_unlock(&sm_clients);
	return c;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_lookup);

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
 * @client: the client
 *
 * Return: &ib_sync_mem_reg.priv given at registration.
 */
void *ib_sync_mem_client_priv(const struct ib_sync_mem_client *client)
{
	return client->priv;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_client_priv);

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
