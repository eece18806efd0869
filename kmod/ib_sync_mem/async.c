// SPDX-License-Identifier: GPL-2.0
/*
 * Asynchronous syncs: ib_sync_mem_sync_async() and
 * ib_sync_mem_sync_device_async() return a dma_fence at once; a worker
 * runs the sync (after an optional in-fence) and signals the fence with
 * the sync's result.
 *
 * A job is its fence: struct sm_async embeds it and lives until the last
 * reference to the fence goes. While a job is pending its work item holds
 * one reference. A job with an in-fence waits for it by a callback, never
 * by blocking a worker; while it waits it is on its domain's
 * async_waiting list (a batch, whose clients may be on several devices, on
 * sm_batch_waiting), so that the device's removal, and the unregister or
 * invalidation of a job's client (one of a batch's), can take it off the
 * in-fence and signal it at once (sm_async_domain_removed(),
 * sm_async_client_gone(): -ENODEV, or what a sync of the invalidated
 * client returns). Exactly one
 * of the in-fence's callback (it queues the work), the canceller (it
 * signals itself) and the submitter (in-fence already signalled: it queues
 * the work) ends the wait: whoever takes the callback off the in-fence or
 * is called by it.
 *
 * The signalling path: everything from the fence's publication to its
 * signal. The submitter allocates the job and takes its references; the
 * in-fence is waited for by a callback, never by blocking. A job whose
 * clients are all IB_SYNC_MEM_F_FENCE_SAFE (a region's) runs its work item
 * inside one fence signalling section, from its start to the signal, as
 * drm/scheduler runs a job (lockdep checks it): the sync is
 * sm_sync_many() told so (SM_SYNC_SIGNALLING: no event sent, no inbound
 * flusher made or recovered), and what may allocate or take a lock comes
 * after the signal: the sync_failed events, the puts of the job's
 * references. Any other job (a device's, or one with a client that is not
 * fence-safe: a dma-buf client's ->sync brackets CPU access through the
 * exporter) runs the sync outside the section, as a blocking sync would,
 * and only the signal inside it. The fences a client's ->deps names (a
 * dma-buf's reservation's) are collected by the submitter and merged with
 * the in-fence into the one fence the job waits for by its callback
 * (sm_async_deps(), as drm/scheduler collects a job's dependencies): a
 * job never waits for them in a worker, and the cancellers end that wait
 * as they end an in-fence's; only the in-fence's error is the job's. A
 * ->sync must never wait for a fence that depends on an asynchronous sync
 * of its own client. The workqueue has a rescuer (WQ_MEM_RECLAIM):
 * reclaim may wait for these fences.
 *
 * Each fence holds a reference on this module, dropped after an RCU grace
 * period once the fence is freed; module exit waits for those
 * (rcu_barrier()), so no fence's ops outlive the module.
 *
 * A client whose kind has its own engine (->sync_async; whole, not lazy,
 * not inbound, not moved: sm_sync_kind_async() says) is synced there
 * instead: the submitter (or, after an in-fence, the work item) starts it,
 * and a callback on the kind's fence accounts for the sync and signals the
 * job's fence where the kind signalled (any context); a second work item
 * then sends the sync_failed event and drops what the job held.
 */
#include <linux/dma-fence.h>
#include <linux/dma-fence-unwrap.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "sync_mem.h"

/**
 * struct sm_async - an asynchronous sync and its fence
 * @base: the fence; first, dma_fence_free() style
 * @lock: the fence's lock
 * @work: runs the sync and signals
 * @cb: on @wait while the job waits for it
 * @in: the in-fence (a reference), or NULL: its error is the job's
 * @wait: what the job waits for before it runs (a reference): @in, or @in
 *	and the fences its clients' ->deps named at submission merged into
 *	one; NULL for nothing
 * @kind: the kind's fence of a sync on its engine (a reference), or NULL
 * @kind_cb: on @kind
 * @end_work: after @kind signalled: the event, the references
 * @t0: when the sync on the kind's engine began
 * @err: its result
 * @client: the one-client form's client (a reference), else NULL
 * @batch: the batch form's entries (each client referenced), else NULL
 * @n: how many
 * @dom: the job's domain (a reference); NULL for a batch, whose clients
 *	may be on several devices
 * @node: on @dom->async_waiting (a batch: sm_batch_waiting) while the job
 *	waits for @wait
 * @in_done: @wait's callback ran (under sm_async_waitlock())
 * @armed: the submitter is done with the job (under sm_async_waitlock()):
 *	@wait's callback queues the work from then on, the submitter before
 *	(the work may release what the submitter still reads)
 * @safe: every client is IB_SYNC_MEM_F_FENCE_SAFE: the work item runs
 *	inside a fence signalling section
 * @dir: the sync's direction
 * @offset: with @len, the range of the one-client form
 * @len: 0 for the whole client
 * @timeout_ms: each ->sync's deadline, from when the sync begins
 * @timeline: the client's or the device's name, for the fence's timeline
 */
struct sm_async {
	struct dma_fence base;
	spinlock_t lock;	/* the fence's */
	struct work_struct work;
	struct dma_fence_cb cb;
	struct dma_fence *in;
	struct dma_fence *wait;
	struct dma_fence *kind;
	struct dma_fence_cb kind_cb;
	struct work_struct end_work;
	u64 t0;
	int err;
	struct ib_sync_mem_client *client;
	struct ib_sync_mem_batch_entry *batch;
	unsigned int n;
	struct ib_sync_mem_domain *dom;
	struct list_head node;
	bool in_done;
	bool armed;
	bool safe;
	enum ib_sync_mem_dir dir;
	u64 offset;
	u64 len;
	unsigned int timeout_ms;
	char timeline[IB_DEVICE_NAME_MAX];
};

static struct workqueue_struct *sm_async_wq;

/*
 * The batches waiting for their in-fence, and their lock (the domains'
 * async_lock for the others'): a batch has no domain of its own. Taken
 * inside an in-fence's lock, as async_lock is.
 */
static DEFINE_SPINLOCK(sm_batch_lock);
static LIST_HEAD(sm_batch_waiting);

/* The lock of the list @job waits on for its in-fence. */
static spinlock_t *sm_async_waitlock(struct sm_async *job)
{
	return job->dom ? &job->dom->async_lock : &sm_batch_lock;
}

/* That list: its domain's, or the batches'. */
static struct list_head *sm_async_waitlist(struct sm_async *job)
{
	return job->dom ? &job->dom->async_waiting : &sm_batch_waiting;
}

static struct sm_async *to_job(struct dma_fence *f)
{
	return container_of(f, struct sm_async, base);
}

static const char *sm_fence_driver_name(struct dma_fence *f)
{
	return "ib_sync_mem";
}

static const char *sm_fence_timeline_name(struct dma_fence *f)
{
	return to_job(f)->timeline;
}

static void sm_fence_free_rcu(struct rcu_head *rcu)
{
	struct dma_fence *f = container_of(rcu, struct dma_fence, rcu);

	kfree(to_job(f));
	atomic_dec(&sm_counters.fences);
	/* Module exit's rcu_barrier() waits for this function to return. */
	module_put(THIS_MODULE);
}

/* The last reference: readers of the fence under RCU may still look. */
static void sm_fence_release(struct dma_fence *f)
{
	call_rcu(&f->rcu, sm_fence_free_rcu);
}

static const struct dma_fence_ops sm_fence_ops = {
	.get_driver_name = sm_fence_driver_name,
	.get_timeline_name = sm_fence_timeline_name,
	.release = sm_fence_release,
};

/* Signal @job's fence with @err, once. Any context. */
static void sm_async_signal_only(struct sm_async *job, int err)
{
	bool cookie = dma_fence_begin_signalling();

	if (err)
		dma_fence_set_error(&job->base, err);
	/* Before the signal: whoever waited for it sees the count exact. */
	atomic_dec(&sm_counters.fences_pending);
	dma_fence_signal(&job->base);
	dma_fence_end_signalling(cookie);
}

/* Drop what the signalled @job held, and the work item's reference. */
static void sm_async_release(struct sm_async *job)
{
	if (job->kind)
		dma_fence_put(job->kind);
	if (job->in)
		dma_fence_put(job->in);
	if (job->wait)
		dma_fence_put(job->wait);
	if (job->client)
		ib_sync_mem_put(job->client);
	while (job->n)
		ib_sync_mem_put(job->batch[--job->n].client);
	kvfree(job->batch);
	if (job->dom)
		sm_domain_put(job->dom);
	/* The work item's reference. */
	dma_fence_put(&job->base);
}

/* Signal @job's fence with @err, once, and drop what the job held. */
static void sm_async_signal(struct sm_async *job, int err)
{
	sm_async_signal_only(job, err);
	sm_async_release(job);
}

/* After the kind's fence signalled: process context. */
static void sm_async_kind_end(struct work_struct *work)
{
	struct sm_async *job = container_of(work, struct sm_async, end_work);

	if (job->err)
		sm_event_sync_failed(job->client, job->dir, job->err);
	sm_async_release(job);
}

/*
 * The kind's fence of @job's sync signalled: its lock held, in whatever
 * context the kind signals (or the submitter's, if it had already).
 */
static void sm_async_kind_signalled(struct dma_fence *kind,
				    struct dma_fence_cb *cb)
{
	struct sm_async *job = container_of(cb, struct sm_async, kind_cb);

	/* Set before the signal, and the signal came before this. */
	job->err = kind->error;
	sm_sync_kind_done(job->client, job->dir, job->err, job->t0);
	sm_async_signal_only(job, job->err);
	queue_work(sm_async_wq, &job->end_work);
}

/*
 * Start @job's sync on its client's engine if the client has one: 1 once
 * it started (the kind's fence's callback signals the job), 0 if the job
 * takes the ->sync path, or the errno the start failed with (the caller
 * signals it, then sm_async_kind_failed()). Process context.
 */
static int sm_async_kind(struct sm_async *job)
{
	struct dma_fence *f;

	if (!job->client || job->len)
		return 0;
	job->t0 = 0;
	f = sm_sync_kind_async(job->client, job->dir, job->timeout_ms,
			       &job->t0);
	if (!f)
		return 0;
	if (IS_ERR(f))
		return PTR_ERR(f);
	job->kind = f;
	if (dma_fence_add_callback(f, &job->kind_cb, sm_async_kind_signalled))
		sm_async_kind_signalled(f, &job->kind_cb);
	return 1;
}

/*
 * After the signal of a job whose start on its client's engine failed with
 * @err: the sync_failed event, if the kind's ->sync_async ran.
 */
static void sm_async_kind_failed(struct sm_async *job, int err)
{
	if (job->t0)
		sm_event_sync_failed(job->client, job->dir, err);
}

/*
 * The entries of a one-client or batch @job, *@n of them: its batch, or
 * @one made its one client.
 */
static struct ib_sync_mem_batch_entry *
sm_async_entries(struct sm_async *job, struct ib_sync_mem_batch_entry *one,
		 unsigned int *n)
{
	*n = job->batch ? job->n : 1;
	if (job->batch)
		return job->batch;
	*one = (struct ib_sync_mem_batch_entry){
		.client = job->client,
		.offset = job->offset,
		.len = job->len,
	};
	return one;
}

/* The sync of @job's @n entries @e, their results set: the first error. */
static int sm_async_sync_entries(struct sm_async *job,
				 struct ib_sync_mem_batch_entry *e,
				 unsigned int n)
{
	unsigned int i;
	int err;

	err = sm_sync_many(e, n, job->dir, job->timeout_ms,
			   job->safe ? SM_SYNC_SIGNALLING : 0);
	for (i = 0; !err && i < n; i++)
		err = e[i].err;
	return err;
}

/*
 * After the signal: the sync_failed events a sync inside the signalling
 * section left to its caller, one for each of @job's @n entries @e whose
 * ->sync ran and failed.
 */
static void sm_async_events(struct sm_async *job,
			    const struct ib_sync_mem_batch_entry *e,
			    unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (e[i].ran && e[i].err)
			sm_event_sync_failed(e[i].client, job->dir, e[i].err);
}

/*
 * The error the signalled in-fence @in feeds a job: the first of its
 * fences' errors, a container's (a dma_fence_array of a merged sync_file,
 * a chain) unwrapped. The job may have waited for those fences and not
 * for @in itself (sm_async_deps()), and a container never told to signal
 * tracks no error: asked, it finds its fences signalled and calls itself
 * signalled without one. So the container itself is not asked either.
 */
static int sm_in_fence_error(struct dma_fence *in)
{
	struct dma_fence_unwrap iter;
	struct dma_fence *f;
	int err = 0;

	/* To its end: the cursor holds a reference until then. */
	dma_fence_unwrap_for_each(f, &iter, in)
		if (!err)
			err = min(dma_fence_get_status(f), 0);
	return err;
}

static void sm_async_work(struct work_struct *work)
{
	struct sm_async *job = container_of(work, struct sm_async, work);
	struct ib_sync_mem_batch_entry one = {}, *e = NULL;
	struct ib_sync_mem_result res;
	unsigned int n = 0;
	bool safe = job->safe, cookie = false;
	int err = 0, kind = 0;

	/* From here to the signal: the fence's signalling path. */
	if (safe)
		cookie = dma_fence_begin_signalling();
	/* An in-fence that failed: what it fed this sync is not there. */
	if (job->in)
		err = sm_in_fence_error(job->in);
	if (!err) {
		/* On the client's engine: its fence's callback signals. */
		kind = sm_async_kind(job);
		if (kind > 0)
			goto out;
		err = kind;
	}
	if (!err && job->dom && !job->client)
		err = sm_sync_domain(job->dom, NULL, job->dir, job->timeout_ms,
				     false, &res) ?: res.err;
	else if (!err) {
		e = sm_async_entries(job, &one, &n);
		err = sm_async_sync_entries(job, e, n);
	}
	sm_async_signal_only(job, err);
out:
	/* With kind > 0 the job may be gone: the kind's callback ended it. */
	if (safe)
		dma_fence_end_signalling(cookie);
	if (kind > 0)
		return;
	/* After the signal: what the section left to do. */
	if (kind < 0)
		sm_async_kind_failed(job, kind);
	else if (job->safe)
		sm_async_events(job, e, n);	/* none if no sync ran */
	sm_async_release(job);
}

/* @job's in-fence signalled; its lock is held, interrupts off. */
static void sm_async_in_signalled(struct dma_fence *in, struct dma_fence_cb *cb)
{
	struct sm_async *job = container_of(cb, struct sm_async, cb);
	spinlock_t *lock = sm_async_waitlock(job);
	bool armed;

	spin_lock(lock);
	job->in_done = true;
	list_del_init(&job->node);
	armed = job->armed;
	spin_unlock(lock);
	if (armed)
		queue_work(sm_async_wq, &job->work);
}

/*
 * A job whose device or client went: if it still waits for its in-fence,
 * take it off and signal @err here and now; otherwise the callback queued
 * its work. Lock order: an in-fence's lock, then dom->async_lock (its
 * callback); so this takes the in-fence's lock only with async_lock
 * (sm_batch_lock) dropped.
 */
static void sm_async_cancel(struct sm_async *job, int err)
{
	if (dma_fence_remove_callback(job->wait, &job->cb))
		sm_async_signal(job, err);
}

/* Does waiting batch @job sync a client of @dom, or @c if not NULL? */
static bool sm_batch_has(const struct sm_async *job,
			 const struct ib_sync_mem_domain *dom,
			 const struct ib_sync_mem_client *c)
{
	unsigned int i;

	for (i = 0; i < job->n; i++)
		if (c ? job->batch[i].client == c :
		    job->batch[i].client->dom == dom)
			return true;
	return false;
}

/*
 * Signal with @err the jobs that wait for their in-fence: on @dom's list
 * all of them, or with @batches on the batches' list those with a client
 * on @dom; only @c's (those with @c) if @c is not NULL. One at a time,
 * each taken off its list under the list's lock and cancelled outside it:
 * its in-fence's callback may unlink the others meanwhile.
 */
static void sm_async_cancel_waiting(bool batches,
				    struct ib_sync_mem_domain *dom,
				    const struct ib_sync_mem_client *c,
				    int err)
{
	spinlock_t *lock = batches ? &sm_batch_lock : &dom->async_lock;
	struct list_head *list = batches ? &sm_batch_waiting :
					   &dom->async_waiting;
	struct sm_async *job, *j;
	struct dma_fence *wait = NULL;

	for (;;) {
		job = NULL;
		spin_lock_irq(lock);
		list_for_each_entry(j, list, node) {
			if (batches ? sm_batch_has(j, dom, c) :
			    !c || j->client == c) {
				job = j;
				break;
			}
		}
		if (job) {
			list_del_init(&job->node);
			/*
			 * Its callback has not run: the job is alive, and
			 * what it waits for. Both stay: once the lock is
			 * dropped the callback may run, and the work release
			 * the wait fence before dma_fence_remove_callback().
			 */
			dma_fence_get(&job->base);
			wait = dma_fence_get(job->wait);
		}
		spin_unlock_irq(lock);
		if (!job)
			break;
		sm_async_cancel(job, err);
		dma_fence_put(wait);
		dma_fence_put(&job->base);
	}
}

/**
 * sm_async_domain_removed() - the device of @dom is going away
 * @dom: the domain, its clients invalidated
 *
 * Jobs that wait for an in-fence are signalled with -ENODEV before this
 * returns, without waiting for it, batches with a client on it too; jobs
 * past it see the invalidated clients (-ENODEV) or have finished. Later
 * jobs on the domain do not wait for their in-fence. Process context.
 */
void sm_async_domain_removed(struct ib_sync_mem_domain *dom)
{
	spin_lock_irq(&dom->async_lock);
	WRITE_ONCE(dom->async_dead, true);
	spin_unlock_irq(&dom->async_lock);
	sm_async_cancel_waiting(false, dom, NULL, -ENODEV);
	sm_async_cancel_waiting(true, dom, NULL, -ENODEV);
}

/**
 * sm_async_client_gone() - @c was unregistered or invalidated
 * @c: the client; its state is no longer SM_LIVE
 *
 * Its jobs that wait for their in-fence, one-client ones and batches @c
 * is in, are signalled before this returns, with what a sync of @c
 * returns now (sm_state_errno(): -ENODEV, or -ENXIO for its memory gone),
 * without waiting for the in-fence, which may never signal; the jobs let
 * their clients go. Jobs past the wait see @c's state when they run.
 * Process context.
 */
void sm_async_client_gone(struct ib_sync_mem_client *c)
{
	int err = sm_state_errno(c);

	sm_async_cancel_waiting(false, c->dom, c, err);
	sm_async_cancel_waiting(true, c->dom, c, err);
}

/*
 * Why batch @job may not wait for its in-fence: the first of its clients
 * (in its order) whose device is going (-ENODEV) or that is no longer
 * live (its errno); 0 if none. Under sm_batch_lock.
 */
static int sm_batch_gone(const struct sm_async *job)
{
	unsigned int i;
	int err;

	for (i = 0; i < job->n; i++) {
		const struct ib_sync_mem_client *c = job->batch[i].client;

		if (READ_ONCE(c->dom->async_dead))
			return -ENODEV;
		err = sm_state_errno(c);
		if (err)
			return err;
	}
	return 0;
}

/*
 * What @job waits for before it runs (@job->wait): its in-fence and the
 * fences the ->deps of its @n clients @e name now, merged into one flat
 * fence (as drm/scheduler collects a job's dependencies before it arms
 * the job); the in-fence alone if no client has ->deps. Before the job's
 * fence is published, where it may allocate. 0, or -errno: a ->deps'
 * refusal, -ENOMEM.
 */
static int sm_async_deps(struct sm_async *job,
			 const struct ib_sync_mem_batch_entry *e,
			 unsigned int n)
{
	struct dma_fence_unwrap *cursors;
	struct dma_fence **f, *d;
	unsigned int i, k = 0;
	int err = 0;

	for (i = 0; i < n; i++)
		if (e[i].client->ops->deps)
			break;
	if (i == n) {
		job->wait = job->in ? dma_fence_get(job->in) : NULL;
		return 0;
	}
	f = kvmalloc_array(n + 1, sizeof(*f), GFP_KERNEL);
	cursors = kvmalloc_array(n + 1, sizeof(*cursors), GFP_KERNEL);
	if (!f || !cursors) {
		err = -ENOMEM;
		goto out;
	}
	if (job->in)
		f[k++] = dma_fence_get(job->in);
	for (; i < n; i++) {
		if (!e[i].client->ops->deps)
			continue;
		d = sm_client_deps(e[i].client, job->dir);
		if (IS_ERR(d)) {
			err = PTR_ERR(d);
			goto out;
		}
		if (d)
			f[k++] = d;
	}
	/*
	 * dma_fence_unwrap_merge()'s own implementation, for a count known
	 * only here: it flattens containers (a dma_fence_array may not hold
	 * one), takes its own references, and makes a signalled stub when
	 * nothing is pending.
	 */
	if (k) {
		job->wait = __dma_fence_unwrap_merge(k, f, cursors);
		if (!job->wait)
			err = -ENOMEM;
	}
out:
	while (k)
		dma_fence_put(f[--k]);
	kvfree(cursors);
	kvfree(f);
	return err;
}

/* Queue @job now, or once what it waits for signalled. */
static void sm_async_submit(struct sm_async *job)
{
	struct ib_sync_mem_domain *dom = job->dom;
	spinlock_t *lock = sm_async_waitlock(job);
	struct dma_fence *wait = NULL;
	bool done;
	int err = 0;

	/* Nothing to wait for: on the client's engine, if it has one, here. */
	if (!job->wait) {
		err = sm_async_kind(job);
		if (err < 0) {
			sm_async_signal_only(job, err);
			sm_async_kind_failed(job, err);
			sm_async_release(job);
		}
		if (err)
			return;
	}
	if (!job->wait ||
	    dma_fence_add_callback(job->wait, &job->cb, sm_async_in_signalled)) {
		/* Nothing to wait for, or it has signalled already. */
		queue_work(sm_async_wq, &job->work);
		return;
	}
	/*
	 * Under the list's lock, which the cancellers take after they
	 * changed the state: either one finds the job listed or it sees the
	 * state. Until @armed is set there, the callback leaves the work to
	 * this (@in_done), so the job's batch, client and wait fence are not
	 * released while this reads them.
	 */
	spin_lock_irq(lock);
	if (!dom)
		err = sm_batch_gone(job);
	else if (dom->async_dead)
		err = -ENODEV;
	else if (job->client)
		err = sm_state_errno(job->client);
	done = job->in_done;
	if (!err && !done)
		list_add_tail(&job->node, sm_async_waitlist(job));
	else if (err && !done)
		wait = dma_fence_get(job->wait);	/* as a canceller's */
	job->armed = true;
	spin_unlock_irq(lock);
	if (done) {
		/* Signalled meanwhile: the work sees what went, if anything. */
		queue_work(sm_async_wq, &job->work);
	} else if (err) {
		sm_async_cancel(job, err);
		dma_fence_put(wait);
	}
}

/*
 * Submit @job, which syncs the @n clients @e, after their ->deps: its
 * fence, or an ERR_PTR with the job dropped (its fence never published).
 */
static struct dma_fence *sm_async_start(struct sm_async *job,
					const struct ib_sync_mem_batch_entry *e,
					unsigned int n)
{
	int err = sm_async_deps(job, e, n);

	if (err) {
		sm_async_signal_only(job, err);
		sm_async_release(job);		/* the work item's reference */
		dma_fence_put(&job->base);	/* the caller's */
		return ERR_PTR(err);
	}
	sm_async_submit(job);
	return &job->base;
}

static struct sm_async *sm_async_new(struct ib_sync_mem_domain *dom,
				     const char *timeline,
				     enum ib_sync_mem_dir dir,
				     unsigned int timeout_ms,
				     struct dma_fence *in)
{
	struct sm_async *job;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return NULL;
	__module_get(THIS_MODULE);
	atomic_inc(&sm_counters.fences);
	atomic_inc(&sm_counters.fences_pending);
	spin_lock_init(&job->lock);
	/* Unordered: each fence is a timeline of its own. */
	dma_fence_init(&job->base, &sm_fence_ops, &job->lock,
		       dma_fence_context_alloc(1), 1);
	INIT_WORK(&job->work, sm_async_work);
	INIT_WORK(&job->end_work, sm_async_kind_end);
	INIT_LIST_HEAD(&job->cb.node);
	INIT_LIST_HEAD(&job->node);
	job->in = in ? dma_fence_get(in) : NULL;
	job->dom = dom;
	if (dom)
		kref_get(&dom->kref);
	job->dir = dir;
	job->timeout_ms = timeout_ms;
	strscpy(job->timeline, timeline, sizeof(job->timeline));
	/* The work item's reference; the caller gets the first. */
	dma_fence_get(&job->base);
	return job;
}

/**
 * ib_sync_mem_sync_async() - sync one client, asynchronously
 * @client: the client; the caller holds a reference
 * @dir: direction
 * @offset: with @len, sync [@offset, @offset + @len) only
 * @len: 0 for the whole client
 * @timeout_ms: bounds the sync from when it begins; 0 for the module's
 *	sync_timeout_ms
 * @in: optional; the sync begins once it signalled (its error, if any,
 *	becomes the fence's and no sync runs). The caller keeps its
 *	reference; the sync takes its own.
 *
 * Return: a fence (the caller's reference) signalled once when the sync
 * completed, with its error (dma_fence_get_status()): what
 * ib_sync_mem_sync() or ib_sync_mem_sync_range() would have returned. The
 * sync waits for @in and what @client's ->deps names now, by a callback.
 * If @client is unregistered or invalidated, or its device goes, while the
 * sync waits for them, the fence signals then, before that call returns:
 * -ENODEV, or -ENXIO for the client's memory gone. Bad input is
 * refused here: ERR_PTR(-EINVAL) (direction, range), -ERANGE, -EOPNOTSUPP
 * (inbound of a client that cannot), -ENOMEM.
 */
struct dma_fence *ib_sync_mem_sync_async(struct ib_sync_mem_client *client,
					 enum ib_sync_mem_dir dir, u64 offset,
					 u64 len, unsigned int timeout_ms,
					 struct dma_fence *in)
{
	struct ib_sync_mem_batch_entry one;
	struct sm_async *job;
	int err;

	err = sm_sync_refused(client, dir, offset, len);
	if (err)
		return ERR_PTR(err);
	job = sm_async_new(client->dom, client->name, dir, timeout_ms, in);
	if (!job)
		return ERR_PTR(-ENOMEM);
	job->client = ib_sync_mem_get(client);
	job->offset = offset;
	job->len = len;
	job->safe = client->flags & IB_SYNC_MEM_F_FENCE_SAFE;
	one = (struct ib_sync_mem_batch_entry){ .client = client };
	return sm_async_start(job, &one, 1);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync_async);

/**
 * ib_sync_mem_sync_device_async() - sync every client of a device,
 *	asynchronously
 * @ibdev: the RDMA device
 * @dir: direction
 * @timeout_ms: as for ib_sync_mem_sync_async()
 * @in: as for ib_sync_mem_sync_async()
 *
 * Return: a fence signalled once when a pass served the sync (as
 * ib_sync_mem_sync_device()), with the pass's first client error or why
 * no pass did (-ENODEV); ERR_PTR(-EINVAL) for a bad direction, -ENODEV
 * for a device the registry is not attached to, -ENOMEM.
 */
struct dma_fence *ib_sync_mem_sync_device_async(struct ib_device *ibdev,
						enum ib_sync_mem_dir dir,
						unsigned int timeout_ms,
						struct dma_fence *in)
{
	struct ib_sync_mem_domain *dom;
	struct dma_fence *f;

	dom = sm_domain_get(ibdev);
	if (!dom)
		return ERR_PTR(-ENODEV);
	f = sm_sync_domain_async(dom, dir, timeout_ms, in);
	sm_domain_put(dom);
	return f;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync_device_async);

/* ib_sync_mem_sync_device_async() of a domain the caller holds. */
struct dma_fence *sm_sync_domain_async(struct ib_sync_mem_domain *dom,
				       enum ib_sync_mem_dir dir,
				       unsigned int timeout_ms,
				       struct dma_fence *in)
{
	struct sm_async *job;
	char name[IB_DEVICE_NAME_MAX];

	if (!sm_dir_valid(dir))
		return ERR_PTR(-EINVAL);
	xa_lock(&sm_domains);
	strscpy(name, dom->name, sizeof(name));
	xa_unlock(&sm_domains);
	job = sm_async_new(dom, name, dir, timeout_ms, in);
	if (!job)
		return ERR_PTR(-ENOMEM);
	/* Its clients' ->deps are not collected: each ->sync waits. */
	return sm_async_start(job, NULL, 0);
}

/**
 * ib_sync_mem_sync_many_async() - ib_sync_mem_sync_many(), asynchronously
 * @e: the clients, with the ranges to sync (@client, @offset, @len of each
 *	entry; the caller keeps its references: the job takes its own)
 * @n: how many, at least 1
 * @dir: direction
 * @timeout_ms: as for ib_sync_mem_sync_async(), for each client
 * @in: as for ib_sync_mem_sync_async()
 *
 * The entries' results are not reported one by one: the fence carries the
 * first entry's error (in the batch's order), 0 if none failed. While it
 * waits for @in or what its clients' ->deps named, the unregister or
 * invalidation of any of its clients, or the removal of any of their
 * devices, signals it at once with that client's errno (-ENODEV, or
 * -ENXIO for its memory gone) and no entry synced, as for
 * ib_sync_mem_sync_async().
 *
 * Return: a fence, as ib_sync_mem_sync_async(); ERR_PTR(-EINVAL) for no
 * entry, a bad direction or range (then -ERANGE, -EOPNOTSUPP as there),
 * -ENOMEM.
 */
struct dma_fence *
ib_sync_mem_sync_many_async(const struct ib_sync_mem_batch_entry *e,
			    unsigned int n, enum ib_sync_mem_dir dir,
			    unsigned int timeout_ms, struct dma_fence *in)
{
	struct ib_sync_mem_batch_entry *batch;
	struct sm_async *job;
	unsigned int i;
	int err;

	err = sm_batch_refused(e, n, dir);
	if (err)
		return ERR_PTR(err);
	/* Up to 80 KiB. */
	batch = kvmalloc_array(n, sizeof(*batch), GFP_KERNEL);
	if (!batch)
		return ERR_PTR(-ENOMEM);
	job = sm_async_new(NULL, "batch", dir, timeout_ms, in);
	if (!job) {
		kvfree(batch);
		return ERR_PTR(-ENOMEM);
	}
	job->safe = true;
	for (i = 0; i < n; i++) {
		batch[i] = (struct ib_sync_mem_batch_entry){
			.client = ib_sync_mem_get(e[i].client),
			.offset = e[i].offset,
			.len = e[i].len,
		};
		if (!(e[i].client->flags & IB_SYNC_MEM_F_FENCE_SAFE))
			job->safe = false;
	}
	job->batch = batch;
	job->n = n;
	return sm_async_start(job, batch, n);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync_many_async);

int sm_async_init(void)
{
	sm_async_wq = alloc_workqueue("ib_sync_mem_async",
				      WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return sm_async_wq ? 0 : -ENOMEM;
}

void sm_async_exit(void)
{
	/* Every fence was freed (each held the module): wait for their RCU. */
	rcu_barrier();
	destroy_workqueue(sm_async_wq);
}
