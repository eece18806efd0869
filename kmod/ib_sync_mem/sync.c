// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem syncs of one client: whole (ib_sync_mem_sync()), of a range
 * (ib_sync_mem_sync_range()), of several in a batch
 * (ib_sync_mem_sync_many()), on a kind's engine (sm_sync_kind_async()),
 * what they refuse, the revalidation of a moved client and the inbound
 * and ranged calls, and the marks of lazy clients
 * (ib_sync_mem_mark_dirty()). A device's passes are in pass.c.
 */
#include <linux/dma-fence.h>
#include <linux/module.h>

#include "client.h"

unsigned int sync_timeout_ms = 10000;
module_param(sync_timeout_ms, uint, 0644);
MODULE_PARM_DESC(sync_timeout_ms, "Timeout of a sync that asks for none, in ms (default 10000)");

/*
 * Call ->sync of a live client and account for it. Inside dom->srcu.
 * Timed (@now not NULL), *@now is the time the call starts and becomes the
 * time it ended, so that a pass reads the clock once per client. With @acc
 * (a pass), the domain's and module's counters are left to the caller.
 */
/*
 * sm_revalidate() - map again what moved, before a ->sync of @c
 *
 * Called when @c->moves and @c->revalidated differ. Another caller may be
 * revalidating: wait for it (killable; its own deadline bounds it), then
 * look again. A move reported while ->revalidate ran leaves the client to
 * be revalidated again: that ->revalidate may have mapped the old place.
 */
noinline int sm_revalidate(struct ib_sync_mem_client *c,
			   ktime_t deadline)
{
	u64 moves, start, end;
	int err = 0;

	struct sm_move *m = c->move;

	if (mutex_lock_killable(&m->reval_lock))
		return -EINTR;
	spin_lock_irq(&m->lock);
	moves = c->moves;
	start = m->start;
	end = m->end;
	spin_unlock_irq(&m->lock);
	if (moves != c->revalidated) {
		err = c->ops->revalidate(c, start, end - start, deadline);
		trace_client_revalidate(c, start, end - start, err);
	}
	if (!err) {
		spin_lock_irq(&m->lock);
		if (c->moves == moves) {
			m->start = 0;
			m->end = 0;
		}
		/* Pairs with the acquire of sm_moved(). */
		smp_store_release(&c->revalidated, moves);
		spin_unlock_irq(&m->lock);
	}
	mutex_unlock(&m->reval_lock);
	return err;
}

/*
 * Is a sync of @c in @dir bad input: inbound, of a client that can do it
 * neither way? (Single and batch syncs refuse it; a pass runs it.)
 */
static bool sm_inbound_refused(const struct ib_sync_mem_client *c,
			       enum ib_sync_mem_dir dir)
{
	return dir == IB_SYNC_MEM_INBOUND && !c->ops->flush_inbound &&
	       !c->ops->inbound_target;
}

/*
 * Is entry @e of a batch in @dir bad input (its errno, 0 if not): inbound
 * of a client that cannot, or a bad range?
 */
static int sm_entry_refused(const struct ib_sync_mem_batch_entry *e,
			    enum ib_sync_mem_dir dir)
{
	if (sm_inbound_refused(e->client, dir))
		return -EOPNOTSUPP;
	return e->len ? sm_range_check(e->client, e->offset, e->len) : 0;
}

/**
 * sm_sync_refused() - is a sync of @c bad input?
 * @c: the client
 * @dir: the direction
 * @offset: with @len, the range to sync
 * @len: 0 for the whole client (then @offset must be 0)
 *
 * For callers that must refuse bad input before they accept the sync
 * (an asynchronous one): what ib_sync_mem_sync() or
 * ib_sync_mem_sync_range() would refuse with nothing run.
 *
 * Return: 0, or -EINVAL, -ERANGE or -EOPNOTSUPP.
 */
int sm_sync_refused(const struct ib_sync_mem_client *c,
		    enum ib_sync_mem_dir dir, u64 offset, u64 len)
{
	struct ib_sync_mem_batch_entry e = {
		.client = (struct ib_sync_mem_client *)c,
		.offset = offset,
		.len = len,
	};

	if (!sm_dir_valid(dir) || (offset && !len))
		return -EINVAL;
	return sm_entry_refused(&e, dir);
}

/**
 * sm_batch_refused() - is a batch sync of @e bad input?
 * @e: the entries (their client, offset and len)
 * @n: how many
 * @dir: the direction
 *
 * sm_sync_refused() of each entry, for callers that refuse a whole batch
 * before they accept it (asynchronous, or after an in-fence).
 *
 * Return: 0, -EINVAL for no entry, or the first entry's refusal.
 */
int sm_batch_refused(const struct ib_sync_mem_batch_entry *e, unsigned int n,
		     enum ib_sync_mem_dir dir)
{
	unsigned int i;
	int err;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		err = sm_sync_refused(e[i].client, dir, e[i].offset, e[i].len);
		if (err)
			return err;
	}
	return 0;
}

/* @cv covers [@offset, +@len) (checked): its sync is owed, over them. */
static enum sm_owed sm_cover_range(struct sm_cover *cv, u64 offset, u64 len)
{
	cv->n = 1;
	cv->span[0].start = offset;
	cv->span[0].end = offset + len;
	cv->bytes = len;
	return SM_OWED_SPANS;
}

/*
 * An inbound sync of @c: its owner's flush, else the module's read-back
 * through the NIC. (A pass runs a client that can do neither: its result.)
 */
static noinline int sm_flush_inbound(struct ib_sync_mem_client *c,
				     ktime_t deadline, unsigned int flags)
{
	if (c->ops->flush_inbound)
		return c->ops->flush_inbound(c, deadline);
	if (c->ops->inbound_target)
		return sm_inbound_flush(c, deadline, flags);
	return -EOPNOTSUPP;
}

/*
 * A sync other than a whole ->sync: inbound (the owner's flush or the
 * module's; it makes every write the NIC completed visible, whatever
 * @spans), or ->sync_range over each of @spans in order until one fails
 * (->sync of all of it for a kind without ->sync_range).
 */
noinline int sm_sync_other(struct ib_sync_mem_client *c,
			   enum ib_sync_mem_dir dir, ktime_t deadline,
			   const struct sm_cover *spans, unsigned int flags)
{
	unsigned int i;
	int err = 0;

	if (dir == IB_SYNC_MEM_INBOUND)
		return sm_flush_inbound(c, deadline, flags);
	if (!c->ops->sync_range)
		return c->ops->sync(c, dir, deadline);
	for (i = 0; i < spans->n && !err; i++)
		err = c->ops->sync_range(c, dir, spans->span[i].start,
					 spans->span[i].end -
					 spans->span[i].start, deadline);
	return err;
}

/* The errno a sync of @c fails with for its state, 0 while it is live. */
int sm_state_errno(const struct ib_sync_mem_client *c)
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
 * sm_sync_kind_async() - start one client's sync on its kind's engine
 * @c: the client (the caller holds a reference)
 * @dir: the direction
 * @timeout_ms: as for ib_sync_mem_sync()
 * @t0: set to when the sync began, for sm_sync_kind_done()
 *
 * For a client with ->sync_async that is not lazy and has not moved, in a
 * direction other than inbound: counts the caller in the client (as a
 * ->sync in flight) and calls ->sync_async. Process context.
 *
 * Return: the kind's fence: the client stays counted until the caller's
 * sm_sync_kind_done(); NULL: the client takes the ->sync path (nothing
 * done); or an ERR_PTR: the sync's result, accounted, *@t0 set: its
 * sync_failed event is the caller's to send (after its fence's signal);
 * or, *@t0 left alone, a client that is not live: its errno, uncounted,
 * as ib_sync_mem_sync() returns it.
 */
struct dma_fence *sm_sync_kind_async(struct ib_sync_mem_client *c,
				     enum ib_sync_mem_dir dir,
				     unsigned int timeout_ms, u64 *t0)
{
	struct ib_sync_mem_domain *dom = c->dom;
	struct dma_fence *f = NULL;
	int idx, err;

	if (!c->ops->sync_async || dir == IB_SYNC_MEM_INBOUND ||
	    (c->flags & IB_SYNC_MEM_F_LAZY))
		return NULL;
	idx = sm_read_lock(dom);
	if (!sm_client_enter(c)) {
		f = ERR_PTR(sm_state_errno(c));
		goto out;
	}
	if (sm_moved(c)) {
		/* Revalidated by the ->sync path, in a task that may wait. */
		sm_client_leave(c);
		goto out;
	}
	trace_sync_start(dom, c->id, dir);
	*t0 = ktime_get_ns();
	f = c->ops->sync_async(c, dir, sm_deadline(*t0, timeout_ms));
	if (WARN_ON_ONCE(!f))
		f = ERR_PTR(-EIO);
	if (IS_ERR(f)) {
		err = PTR_ERR(f);
		sm_sync_kind_done(c, dir, err, *t0);
	}
out:
	sm_read_unlock(dom, idx);
	return f;
}

/**
 * sm_sync_kind_done() - a sync sm_sync_kind_async() started has ended
 * @c: the client
 * @dir: the direction
 * @err: its result
 * @t0: when it began
 *
 * Accounts for it as for a ->sync (last error, counters, the client_sync
 * and sync_end tracepoints) and uncounts the caller from the client. The
 * sync_failed event of a sync that failed is the caller's, from process
 * context (sm_event_sync_failed()). Any context.
 */
void sm_sync_kind_done(struct ib_sync_mem_client *c, enum ib_sync_mem_dir dir,
		       int err, u64 t0)
{
	u64 ns = ktime_get_ns() - t0;

	sm_sync_counted(c, dir, true, ns, c->size, err, 0, NULL);
	trace_sync_end(c->dom, c->id, dir, 1, err ? 1 : 0, ns, err);
	sm_client_leave(c);
}

/*
 * One client's sync: whole (@len 0; a lazy client only if it is owed one)
 * or of [@offset, +@len) (whatever its marks say, and consuming none). The
 * body of ib_sync_mem_sync() and ib_sync_mem_sync_range(), inlined into
 * each: a whole sync carries no range code, a range sync no batch's.
 */
static __always_inline int sm_sync_one(struct ib_sync_mem_client *client,
				       enum ib_sync_mem_dir dir, u64 offset,
				       u64 len, unsigned int timeout_ms)
{
	struct ib_sync_mem_domain *dom = client->dom;
	/* One clock read: the deadline's, the tracepoint's and ->sync's. */
	u64 t0 = ktime_get_ns(), now = t0;
	ktime_t deadline = sm_deadline(t0, timeout_ms);
	bool traced = trace_sync_end_enabled();
	enum sm_owed owed;
	struct sm_cover cv __uninitialized;	/* written before read */
	int idx, err, n = 0;

	sm_sync_might_wait();
	if (!sm_dir_valid(dir))
		return -EINVAL;
	/* Bad input, not a sync that failed: nothing runs or is counted. */
	if (sm_inbound_refused(client, dir))
		return -EOPNOTSUPP;
	if (len) {
		err = sm_range_check(client, offset, len);
		if (err)
			return err;
	}

	trace_sync_start(dom, client->id, dir);
	idx = sm_read_lock(dom);
	if (!sm_client_enter(client)) {
		err = sm_state_errno(client);
	} else {
		err = 0;
		/* A range is what its caller says was written. */
		owed = len ? sm_cover_range(&cv, offset, len) :
			     sm_lazy_owed(client, dir, &cv);
		if (owed) {
			err = sm_call_sync(client, dir,
					   owed == SM_OWED_SPANS ? &cv : NULL,
					   deadline, 0, sm_timed() ? &now : NULL,
					   NULL, 0);
			if (!err && !len)
				sm_lazy_synced(client, dir, &cv);
			n = 1;
		}
		sm_client_leave(client);
	}
	sm_read_unlock(dom, idx);
	/* Its time is the tracepoint's only: a sync begun untraced has none. */
	if (traced)
		trace_sync_end(dom, client->id, dir, n, n && err ? 1 : 0,
			       ktime_get_ns() - t0, err);
	return err;
}

/**
 * ib_sync_mem_sync() - make one client's memory coherent
 * @client: a client the caller holds a reference on
 * @dir: who uses the memory next
 * @timeout_ms: how long a wait inside ->sync may take; 0 for the module's
 *	sync_timeout_ms
 *
 * A lazy client whose writes in @dir (ib_sync_mem_mark_dirty()) a completed
 * ->sync has covered already is not called, and the sync succeeds; if a
 * ->sync of it is still running elsewhere, this one runs another.
 *
 * Return: 0, the error of ->sync, -EINVAL for a bad @dir, -ENXIO if the
 * client's memory is gone, -ENODEV if its device is gone or it was
 * unregistered.
 */
int ib_sync_mem_sync(struct ib_sync_mem_client *client,
		     enum ib_sync_mem_dir dir, unsigned int timeout_ms)
{
	return sm_sync_one(client, dir, 0, 0, timeout_ms);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync);

/**
 * ib_sync_mem_sync_many() - ib_sync_mem_sync() of each of @n clients, in order
 * @e: the clients (each referenced by the caller; one may appear several
 *	times, it is synced that many times); each entry's @err, @ran and
 *	@ns are set when it was reached: the result, whether its ->sync ran
 *	(not for a lazy client already clean, nor an invalidated one), and
 *	the time of its call
 * @n: how many
 * @dir: who uses the memory next
 * @timeout_ms: as for ib_sync_mem_sync(), for each client from the start
 *	of its own sync
 *
 * What n calls of ib_sync_mem_sync() do, tracepoints included, with one
 * clock read per client: the end of one sync is the start of the next, its
 * deadline's base and the time the entry reports. Each entry is a
 * read-side section of its own, as a single sync is: a writer on the
 * device (unregister, invalidation, removal) waits for the one callback in
 * flight, bounded by its deadline, never for the rest of the batch. The
 * clients' counters are timed whatever client_timing says (the time is
 * read anyway).
 *
 * The netlink family's batch runs here too.
 *
 * Context: process context; may sleep.
 * Return: 0 (each entry's result is in its @err), -EINVAL for a bad @dir
 * (no entry ran), or -EINTR if a fatal signal stopped the batch (the
 * entries from there on did not run).
 */
int ib_sync_mem_sync_many(struct ib_sync_mem_batch_entry *e, unsigned int n,
			  enum ib_sync_mem_dir dir, unsigned int timeout_ms)
{
	sm_sync_might_wait();
	return sm_sync_many(e, n, dir, timeout_ms, 0);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync_many);

/**
 * sm_sync_many() - ib_sync_mem_sync_many(), told where it runs
 * @e: as there
 * @n: as there
 * @dir: as there
 * @timeout_ms: as there
 * @flags: SM_SYNC_SIGNALLING inside a fence's signalling section (an
 *	asynchronous sync of fence-safe clients): no sync_failed event is
 *	sent (the caller sends one for each entry that ran and failed, after
 *	the signal), and no inbound flusher is made or recovered
 *
 * Return: as ib_sync_mem_sync_many().
 */
int sm_sync_many(struct ib_sync_mem_batch_entry *e, unsigned int n,
		 enum ib_sync_mem_dir dir, unsigned int timeout_ms,
		 unsigned int flags)
{
	ktime_t timeout = ms_to_ktime(timeout_ms ?: READ_ONCE(sync_timeout_ms));
	bool traced = trace_sync_end_enabled();
	enum sm_owed owed;
	struct sm_cover cv __uninitialized;	/* written before read */
	u64 now = ktime_get_ns(), t0;
	unsigned int i;
	int idx;

	if (!sm_dir_valid(dir))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct ib_sync_mem_client *c = e[i].client;
		struct ib_sync_mem_domain *dom = c->dom;
		int err;

		/* A caller killed in a batch stops there. */
		if (fatal_signal_pending(current))
			return -EINTR;
		err = sm_entry_refused(&e[i], dir);
		if (err) {
			e[i].err = err;
			e[i].ran = false;
			e[i].ns = 0;
			continue;
		}
		t0 = now;
		trace_sync_start(dom, c->id, dir);
		idx = sm_read_lock(dom);
		e[i].ran = false;
		if (!sm_client_enter(c)) {
			err = sm_state_errno(c);
		} else {
			err = 0;
			/* A range is what its caller says was written. */
			owed = e[i].len ? sm_cover_range(&cv, e[i].offset,
							 e[i].len) :
					  sm_lazy_owed(c, dir, &cv);
			e[i].ran = owed;
			if (owed) {
				err = sm_call_sync(c, dir,
						   owed == SM_OWED_SPANS ? &cv : NULL,
						   ktime_add(ns_to_ktime(t0),
							     timeout),
						   0, &now, NULL, flags);
				if (!err && !e[i].len)
					sm_lazy_synced(c, dir, &cv);
			}
			sm_client_leave(c);
		}
		sm_read_unlock(dom, idx);
		e[i].err = err;
		e[i].ns = now - t0;
		if (traced)
			trace_sync_end(dom, c->id, dir, e[i].ran,
				       e[i].ran && err ? 1 : 0, now - t0, err);
	}
	return 0;
}

/**
 * ib_sync_mem_sync_range() - sync bytes of one client
 * @client: a client the caller holds a reference on
 * @dir: who uses the memory next
 * @offset: the first byte to make coherent
 * @len: how many
 * @timeout_ms: as for ib_sync_mem_sync()
 *
 * ib_sync_mem_sync() of [@offset, @offset + @len) of @client: its
 * ->sync_range over them, or, for a kind without it, its ->sync (the
 * whole client). It runs whether the client is lazy or not (the caller
 * says what was written) and consumes no mark. The range lies inside the
 * client and on its alignment (struct ib_sync_mem_reg.range_align).
 *
 * Return: as ib_sync_mem_sync(), and -EINVAL for no @len or a range off
 * the alignment, -ERANGE for one not inside the client.
 */
int ib_sync_mem_sync_range(struct ib_sync_mem_client *client,
			   enum ib_sync_mem_dir dir, u64 offset, u64 len,
			   unsigned int timeout_ms)
{
	if (!len)
		return -EINVAL;
	return sm_sync_one(client, dir, offset, len, timeout_ms);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_sync_range);

/**
 * ib_sync_mem_mark_dirty() - a lazy client's memory changed
 * @client: the client
 * @dir: the sync that is now owed: IB_SYNC_MEM_TO_DEVICE when the CPU
 *	wrote, IB_SYNC_MEM_TO_CPU when the device wrote, or both
 *
 * A sync of @client in a direction that covers @dir (bidirectional covers
 * both) calls its ->sync again, and returns 0 only once a ->sync that began
 * after this call has completed. A sync the other way does not consume the
 * mark. It is a full memory barrier: the caller's writes before it are seen
 * by that ->sync. Any context; a no-op for clients that are not lazy.
 */
void ib_sync_mem_mark_dirty(struct ib_sync_mem_client *client,
			    enum ib_sync_mem_dir dir)
{
	unsigned int dirs = sm_dirty_dirs(dir);
	int d;

	if (!(client->flags & IB_SYNC_MEM_F_LAZY) || !sm_dir_valid(dir))
		return;
	if (client->spans) {
		sm_spans_mark(client, dirs, 0, client->size);
		return;
	}
	for (d = 0; d < SM_DIRTY_DIRS; d++)
		if (dirs & BIT(d))
			atomic64_inc_return(&client->lazy->dirty[d]);	/* ordered */
}
EXPORT_SYMBOL_GPL(ib_sync_mem_mark_dirty);

/**
 * ib_sync_mem_mark_dirty_range() - bytes of a lazy client's memory changed
 * @client: a lazy client
 * @dir: as for ib_sync_mem_mark_dirty()
 * @offset: the first byte written
 * @len: how many
 *
 * What ib_sync_mem_mark_dirty() does, and for a client whose ops have
 * ->sync_range, the next sync that covers @dir calls it over the bytes
 * marked since its last sync that way (up to four spans per direction;
 * more merge, nearest first), not over the whole client. Any context.
 *
 * Return: 0; -EINVAL for a client that is not lazy, a bad @dir, no @len
 * or a range off the client's alignment; -ERANGE for a range that does
 * not lie inside the client.
 */
int ib_sync_mem_mark_dirty_range(struct ib_sync_mem_client *client,
				 enum ib_sync_mem_dir dir, u64 offset, u64 len)
{
	int err;

	if (!(client->flags & IB_SYNC_MEM_F_LAZY) || !sm_dir_valid(dir))
		return -EINVAL;
	err = sm_range_check(client, offset, len);
	if (err)
		return err;
	if (client->spans)
		sm_spans_mark(client, sm_dirty_dirs(dir), offset, offset + len);
	else
		ib_sync_mem_mark_dirty(client, dir);
	return 0;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_mark_dirty_range);
