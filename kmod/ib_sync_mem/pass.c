// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem passes: the syncs of every client of a device
 * (ib_sync_mem_sync_device()) or of one owner's (ib_sync_mem_sync_owner()),
 * one pass over the domain's list each, its counters merged once at its
 * end, and the coalescing that lets concurrent callers share a pass (the
 * coalesce parameter).
 */
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "client.h"

bool sm_coalesce = true;
module_param_named(coalesce, sm_coalesce, bool, 0644);
MODULE_PARM_DESC(coalesce, "Concurrent device-wide syncs share passes (default Y)");
EXPORT_SYMBOL_NS_GPL(sm_coalesce, "IB_SYNC_MEM_INTERNAL");

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

void sm_pass_queue_init(struct sm_pass_queue *q)
{
	spin_lock_init(&q->lock);
	init_waitqueue_head(&q->wq);
}

static void sm_stats_merge(struct sm_stats __percpu *stats,
			   const struct sm_pass_acc *a)
{
	unsigned long mask = a->hmask;
	unsigned int b;

	BUILD_BUG_ON(BITS_PER_TYPE(a->hmask) < SM_HIST_BUCKETS);
	if (!a->syncs)
		return;
	this_cpu_add(stats->syncs, a->syncs);
	if (a->errors)
		this_cpu_add(stats->errors, a->errors);
	if (a->bytes)
		this_cpu_add(stats->bytes, a->bytes);
	if (a->ns)
		this_cpu_add(stats->ns, a->ns);
	/* A racy peek: sm_stats_max() checks again with preemption off. */
	if (a->max_ns > this_cpu_read(stats->max_ns))
		sm_stats_max(stats, a->max_ns);
	for_each_set_bit(b, &mask, SM_HIST_BUCKETS)
		this_cpu_add(stats->hist[b], a->hist[b]);
}

/* Errors a caller's signal causes, not the memory. */
static bool sm_err_interrupted(int err)
{
	return err == -EINTR || err == -ERESTARTSYS || err == -ERESTARTNOINTR ||
	       err == -ERESTARTNOHAND || err == -ERESTART_RESTARTBLOCK;
}

/* What a pass's result owes to the caller that ran it. */
struct sm_pass_dep {
	bool timed_out;		/* a client gave up at that caller's deadline */
	bool interrupted;	/* a signal to that caller interrupted one */
};

/* Batch clients a pass prepares, on the stack up to this many. */
#define SM_PREP_STACK	16

/*
 * One pass over the domain: every client registered before the pass began
 * (under @owner, if not NULL), live, and (if lazy) owed a sync, is synced
 * once, in registration order.
 * Clients with batch hooks get ->prepare before the first ->sync and
 * ->finish after the last, each exactly once, also if they are unlisted
 * meanwhile: the pass counts itself in their busy count from ->prepare to
 * ->finish, so their unregister waits for that.
 *
 * Inside the caller's dom->srcu section. Returns 0 once the pass ran (the
 * first error of a client is in res->err: a result, not the command's
 * failure), or why it could not run: -ENODEV (the device is going away),
 * -ENOMEM.
 */
static int sm_run_pass(struct ib_sync_mem_domain *dom, enum ib_sync_mem_dir dir,
		       ktime_t deadline,
		       const struct ib_sync_mem_owner *owner,
		       struct ib_sync_mem_result *res,
		       struct sm_pass_dep *dep)
{
	struct ib_sync_mem_client *stack_prep[SM_PREP_STACK];
	struct ib_sync_mem_client **prep = stack_prep, *c;
	struct sm_pass_acc acc = {};
	/*
	 * A pass records its clients only for a caller reading its result,
	 * and times itself only for one or for the sync_end tracepoint.
	 */
	bool read = atomic_read(&dom->result_readers);
	bool self_timed = read || trace_sync_end_enabled();
	u64 limit, now, t0 = self_timed ? ktime_get_ns() : 0;
	u32 nbatch, nprep = 0, i, ran = 0, errors = 0, skipped = 0;
	enum sm_owed owed;
	struct sm_cover cv __uninitialized;	/* written before read */
	int ret, err = 0;
	u64 record;
	bool timed;

	memset(res, 0, sizeof(*res));
	memset(dep, 0, sizeof(*dep));
	/*
	 * Only a result reader looks the pass up by its id: it joined
	 * result_readers before the pass began, so it always gets one.
	 */
	if (read)
		res->pass = sm_pass_id();
	trace_sync_start(dom, 0, dir);
	if (READ_ONCE(dom->dying)) {
		err = -ENODEV;
		goto out;
	}
	/* Pairs with the release in ib_sync_mem_register(). */
	limit = smp_load_acquire(&dom->next_seq);
	/*
	 * Read after limit: at least as many as the batch clients before
	 * limit still listed now (clients listed later come after limit).
	 */
	nbatch = READ_ONCE(dom->nbatch);

	if (nbatch > SM_PREP_STACK) {
		prep = kmalloc_array(nbatch, sizeof(*prep), GFP_KERNEL);
		if (!prep) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (nbatch) {
		list_for_each_entry_srcu(c, &dom->clients, node,
					 srcu_read_lock_held(&dom->srcu)) {
			if (c->seq >= limit)
				break;
			if (!c->batch || (owner && c->owner != owner))
				continue;
			if (WARN_ON_ONCE(nprep == nbatch))
				break;
			/* Live or invalidated, not unregistered. */
			sm_client_hold(c);
			if (READ_ONCE(c->state) == SM_DEAD) {
				sm_client_leave(c);
				continue;
			}
			prep[nprep++] = c;
			if (c->ops->prepare)
				c->ops->prepare(c, dir);
		}
	}

	record = read ? res->pass : 0;
	timed = sm_timed();
	now = timed ? ktime_get_ns() : 0;
	/* Counted in locals and stored once: @res would be stored per client. */
	list_for_each_entry_srcu(c, &dom->clients, node,
				 srcu_read_lock_held(&dom->srcu)) {
		if (c->seq >= limit)
			break;
		if (owner && c->owner != owner)
			continue;
		if (!sm_client_enter(c)) {
			skipped++;
			continue;
		}
		owed = sm_lazy_owed(c, dir, &cv);
		if (!owed) {
			sm_client_leave(c);
			skipped++;
			continue;
		}
		ret = sm_call_sync(c, dir, owed == SM_OWED_SPANS ? &cv : NULL,
				   deadline, record, timed ? &now : NULL, &acc,
				   0);
		sm_client_leave(c);
		ran++;
		if (!ret) {
			sm_lazy_synced(c, dir, &cv);
			continue;
		}
		errors++;
		if (!res->err)
			res->err = ret;
		if (ret == -ETIMEDOUT)
			dep->timed_out = true;
		else if (sm_err_interrupted(ret))
			dep->interrupted = true;
	}

	/*
	 * The clients prepared above, unlinked meanwhile or not: their
	 * unregister waits for the count each holds until here.
	 */
	for (i = 0; i < nprep; i++) {
		if (prep[i]->ops->finish)
			prep[i]->ops->finish(prep[i], dir);
		sm_client_leave(prep[i]);
	}
	if (prep != stack_prep)
		kfree(prep);
	this_cpu_inc(*dom->npasses);
	res->clients = ran;
	res->errors = errors;
	res->skipped = skipped;
out:
	sm_stats_merge(dom->stats, &acc);
	sm_stats_merge(sm_global_stats, &acc);
	if (self_timed) {
		res->ns = ktime_get_ns() - t0;
		trace_sync_end(dom, 0, dir, res->clients, res->errors, res->ns,
			       err ?: res->err);
	}
	return err;
}

/*
 * Can a caller with @deadline take the result of pass q->done? Not if it
 * depended on the caller that ran it: a client gave up at a deadline
 * earlier than this caller's, or was interrupted by that caller's signal.
 */
static bool sm_pass_serves(const struct sm_pass_queue *q, ktime_t deadline)
{
	if (q->interrupted)
		return false;
	return !q->timed_out || !ktime_before(q->deadline, deadline);
}

/*
 * Serve a caller with the first pass that starts after it arrived and
 * whose result does not depend on another caller. The wait is killable
 * (-EINTR) and bounded by the caller's deadline (-ETIMEDOUT).
 *
 * Called inside the caller's section *@idx of dom->srcu. A caller that
 * waits for another caller's pass leaves its section for the wait, so that
 * a writer on the device waits for the passes in flight, never for their
 * waiters; it holds a reference on @dom instead, which *@held tells the
 * caller to drop after its last sm_read_unlock(). The pass it runs, it
 * runs inside a section again.
 */
static int sm_sync_coalesced(struct ib_sync_mem_domain *dom,
			     enum ib_sync_mem_dir dir, ktime_t deadline,
			     struct ib_sync_mem_result *res, int *idx,
			     bool *held)
	__must_hold(&dom->srcu)
{
	struct sm_pass_queue *q = &dom->passes[dir - 1];
	struct sm_pass_dep dep;
	u64 want;
	long left;
	int err;

	spin_lock(&q->lock);
	want = q->started + 1;
	for (;;) {
		if (q->done >= want) {
			if (sm_pass_serves(q, deadline)) {
				/* A pass that began after we arrived. */
				err = q->err;
				*res = q->res;
				break;
			}
			/* Not ours to take: the next one (which began later). */
			want = q->done + 1;
			continue;
		}
		if (q->started == q->done) {
			/* Idle: run the pass ourselves. */
			q->started = want;
			spin_unlock(&q->lock);
			err = sm_run_pass(dom, dir, deadline, NULL, res, &dep);
			spin_lock(&q->lock);
			q->done = want;
			q->err = err;
			q->res = *res;
			q->deadline = deadline;
			q->timed_out = dep.timed_out;
			q->interrupted = dep.interrupted;
			/* Pairs with the barrier in the waiters' prepare_to_wait. */
			if (wq_has_sleeper(&q->wq))
				wake_up_all(&q->wq);
			break;
		}
		spin_unlock(&q->lock);
		/*
		 * Inside the section the registry's reference cannot be
		 * dropped yet (removal waits for the section first).
		 */
		if (!*held) {
			kref_get(&dom->kref);
			*held = true;
		}
		sm_read_unlock(dom, *idx);
		left = wait_event_killable_timeout(q->wq,
						   READ_ONCE(q->done) >= want ||
						   READ_ONCE(q->started) == READ_ONCE(q->done),
						   ib_sync_mem_jiffies_left(deadline));
		*idx = sm_read_lock(dom);
		spin_lock(&q->lock);
		if (left < 0) {
			memset(res, 0, sizeof(*res));
			err = -EINTR;
			break;
		}
		if (!left && q->done < want && q->started != q->done) {
			memset(res, 0, sizeof(*res));
			err = -ETIMEDOUT;
			break;
		}
	}
	spin_unlock(&q->lock);
	return err;
}

/*
 * sm_sync_domain() inside the caller's section *@idx of dom->srcu, which
 * a wait for another caller's pass leaves and enters again (see
 * sm_sync_coalesced() for *@held).
 */
static __always_inline int
__sm_sync_domain(struct ib_sync_mem_domain *dom,
		 struct ib_sync_mem_owner *owner, enum ib_sync_mem_dir dir,
		 unsigned int timeout_ms, bool read_result,
		 struct ib_sync_mem_result *res, int *idx, bool *held)
{
	ktime_t deadline = sm_deadline(ktime_get_ns(), timeout_ms);
	struct sm_pass_dep dep;
	int err;

	/*
	 * Before the pass queue's lock: the pass that serves us starts after
	 * we took it, and its runner reads result_readers after taking it.
	 */
	if (read_result)
		atomic_inc(&dom->result_readers);
	/*
	 * One owner's passes do not coalesce: another caller's pass would not
	 * serve, and a device-wide one runs other owners' clients too.
	 */
	if (!owner && READ_ONCE(sm_coalesce))
		err = sm_sync_coalesced(dom, dir, deadline, res, idx, held);
	else
		err = sm_run_pass(dom, dir, deadline, owner, res, &dep);
	if (read_result)
		atomic_dec(&dom->result_readers);
	return err;
}

/**
 * sm_sync_domain() - ib_sync_mem_sync_device() for a domain in hand
 * @dom: the domain, referenced by the caller
 * @owner: NULL for every client of the device; an owner for only its
 *	clients, in a pass of the caller's own (ib_sync_mem_sync_owner())
 * @dir: a valid direction
 * @timeout_ms: as for ib_sync_mem_sync_device()
 * @read_result: the caller reads res->ns or the pass's clients; without it
 *	the pass may leave res->ns 0 and record no client entries
 * @res: counters of the serving pass, and in res->err its first client
 *	error; res->pass identifies it in the clients' counters
 *	(sm_client_pass_result()) if @read_result
 *
 * Return: 0 when a pass served the caller, whatever its clients returned
 * (res->err); otherwise why none did: -ENODEV the device is going away,
 * -ETIMEDOUT the caller's deadline passed while it waited for a pass,
 * -EINTR it was killed meanwhile, -ENOMEM.
 */
int sm_sync_domain(struct ib_sync_mem_domain *dom,
		   struct ib_sync_mem_owner *owner, enum ib_sync_mem_dir dir,
		   unsigned int timeout_ms, bool read_result,
		   struct ib_sync_mem_result *res)
{
	bool held = false;
	int idx, err;

	idx = sm_read_lock(dom);
	err = __sm_sync_domain(dom, owner, dir, timeout_ms, read_result, res,
			       &idx, &held);
	sm_read_unlock(dom, idx);
	if (held)
		sm_domain_put(dom);
	return err;
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
 * meanwhile; it waits outside the device's read side, so that writers on
 * the device do not wait for it.
 *
 * Return: 0, the first error of a client (the others still ran; each
 * client's own result is in ib_sync_mem_client_last_err(), the first also
 * in @result->err), -EINVAL for a bad @dir, -ENODEV if the device is not
 * attached or goes away, -ETIMEDOUT if the caller's deadline passed while
 * it waited for a pass, -EINTR if it was killed meanwhile. With @result,
 * @result->err tells the two kinds apart: a client's error is there too,
 * a pass that did not run leaves it 0.
 */
int ib_sync_mem_sync_device(struct ib_device *ibdev, enum ib_sync_mem_dir dir,
			    unsigned int timeout_ms,
			    struct ib_sync_mem_result *result)
{
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_result res;
	bool held = false;
	int idx, err;

	sm_sync_might_wait();
	if (!sm_dir_valid(dir))
		return -EINVAL;
	/*
	 * The domain's own SRCU keeps it alive for the call, taken under RCU
	 * (sm_remove_one() waits for both): no reference count, xa_lock or
	 * other shared cache line written on the way in. The same section
	 * covers the pass that serves the call; only a wait for another
	 * caller's pass takes a reference instead.
	 */
	rcu_read_lock();
	dom = xa_load(&sm_domains, ibdev->index);
	if (!dom || READ_ONCE(dom->ibdev) != ibdev) {
		rcu_read_unlock();
		return -ENODEV;
	}
	idx = sm_read_lock(dom);
	rcu_read_unlock();
	err = __sm_sync_domain(dom, NULL, dir, timeout_ms, !!result, &res,
			       &idx, &held);
	sm_read_unlock(dom, idx);
	if (held)
		sm_domain_put(dom);
	if (result)
		*result = res;
	return err ?: res.err;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync_device);

/**
 * ib_sync_mem_sync_owner() - make one owner's clients of a device coherent
 * @ibdev: the RDMA device
 * @owner: the owner whose clients to sync
 * @dir: who uses the memory next
 * @timeout_ms: as for ib_sync_mem_sync_device()
 * @result: optional; counters of the pass
 *
 * ib_sync_mem_sync_device() restricted to the clients registered under
 * @owner: one pass, in the caller's task, over those live when it began,
 * in registration order; other owners' clients are neither run nor
 * counted. It does not share passes with other callers.
 *
 * Context: process context; may sleep.
 * Return: 0, the first error of a client (the others still ran), -EINVAL
 * for a bad @dir or no @owner, -ENODEV if the device is not attached or
 * goes away, -ENOMEM.
 */
int ib_sync_mem_sync_owner(struct ib_device *ibdev,
			   struct ib_sync_mem_owner *owner,
			   enum ib_sync_mem_dir dir, unsigned int timeout_ms,
			   struct ib_sync_mem_result *result)
{
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_result res;
	int err;

	sm_sync_might_wait();
	if (!owner || !sm_dir_valid(dir))
		return -EINVAL;
	dom = sm_domain_get(ibdev);
	if (!dom)
		return -ENODEV;
	err = sm_sync_domain(dom, owner, dir, timeout_ms, !!result, &res);
	sm_domain_put(dom);
	if (result)
		*result = res;
	return err ?: res.err;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync_owner);
