// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem invalidation: a client's memory or device going away
 * (ib_sync_mem_invalidate(), a device's removal), its ->invalidate call,
 * and moves (ib_sync_mem_invalidate_range()), which the next sync
 * revalidates (sm_revalidate(), sync.c).
 */
#include <linux/module.h>

#include "client.h"

/*
 * Run ->invalidate once, after the syncs of the client are over (the
 * caller waited for them), outside dom->lock; the caller holds a reference.
 * Not for a client being unregistered: unregister wins, and waits for an
 * ->invalidate already running. If ->invalidate unregisters its own
 * client, the registration's reference is dropped here, after it returned,
 * so that ->release never runs inside ->invalidate.
 */
static void sm_call_invalidate(struct ib_sync_mem_client *c)
{
	struct ib_sync_mem_domain *dom = c->dom;
	bool put;

	mutex_lock(&dom->lock);
	if (c->inval_called || c->state == SM_DEAD) {
		mutex_unlock(&dom->lock);
		/*
		 * One may run in another task (the memory went away as the
		 * device did): the caller returns only once it is over.
		 */
		wait_event(dom->inval_wq, sm_inval_idle(c));
		return;
	}
	c->inval_called = true;
	WRITE_ONCE(c->inval_task, current);
	mutex_unlock(&dom->lock);

	sm_generation_bump();
	trace_client_invalidate(c);
	sm_event_client(c, SM_EV_CLIENT_INVALIDATED);
	if (c->ops->invalidate)
		c->ops->invalidate(c, c->inval_reason);

	mutex_lock(&dom->lock);
	WRITE_ONCE(c->inval_task, NULL);
	put = c->unreg_in_inval;
	mutex_unlock(&dom->lock);
	wake_up_all(&dom->inval_wq);
	/* It unregistered itself: the reference unregister left to us. */
	if (put)
		kref_put(&c->kref, sm_client_release);
}

/* Record a move of [@offset, @offset + @len) of @c, checked by the caller. */
static int sm_move(struct ib_sync_mem_client *c, u64 offset, u64 len)
{
	unsigned long flags;
	int err;

	if (!c->ops->revalidate)
		return -EOPNOTSUPP;
	err = sm_state_errno(c);
	if (err)
		return err;
	spin_lock_irqsave(&c->move->lock, flags);
	if (c->move->start == c->move->end) {
		c->move->start = offset;
		c->move->end = offset + len;
	} else {
		c->move->start = min(c->move->start, offset);
		c->move->end = max(c->move->end, offset + len);
	}
	/* Read by sm_moved() without the lock. */
	WRITE_ONCE(c->moves, c->moves + 1);
	spin_unlock_irqrestore(&c->move->lock, flags);
	trace_client_move(c, offset, len, 0);
	return 0;
}

/**
 * ib_sync_mem_invalidate_range() - a range of a client's memory moved
 * @owner: the owner it was registered under
 * @client: the client (the caller holds a reference)
 * @offset: where the range starts, in bytes from the start of the memory
 * @len: its length in bytes
 *
 * The mapping of the range is gone and will come back
 * (IB_SYNC_MEM_INVAL_MOVED): the client stays live, and the next sync that
 * calls its ->sync calls its ->revalidate first, with the span of every
 * range moved since its last successful revalidation. A sync whose ->sync
 * began before this call may still be running on the old mapping when it
 * returns (a dma-buf mapping stays valid until the exporter's fences
 * signal). A range cannot go for good: memory that goes, goes whole
 * (ib_sync_mem_invalidate() with IB_SYNC_MEM_INVAL_MEMORY).
 *
 * Context: any; never sleeps and takes only a spinlock of the client: it
 * may be called from a dma-buf move_notify (the reservation lock held) or
 * an mmu_interval_notifier's invalidate, non-blocking ones included.
 * Return: 0, -EPERM (nothing done) if @client is not @owner's, -EOPNOTSUPP
 * if its ops have no ->revalidate, -EINVAL for @len 0, -ERANGE for a range
 * past the client's size (a client of size 0 takes any range), -ENXIO or
 * -ENODEV if the client is invalidated or unregistered.
 */
int ib_sync_mem_invalidate_range(struct ib_sync_mem_owner *owner,
				 struct ib_sync_mem_client *client,
				 u64 offset, u64 len)
{
	u64 end;

	if (!sm_owned(owner, client, __func__))
		return -EPERM;
	if (!len)
		return -EINVAL;
	if (check_add_overflow(offset, len, &end) ||
	    (client->size && end > client->size))
		return -ERANGE;
	return sm_move(client, offset, len);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_invalidate_range);

/**
 * ib_sync_mem_invalidate() - the memory behind a client went away
 * @owner: the owner it was registered under
 * @client: the client
 * @reason: IB_SYNC_MEM_INVAL_MEMORY, usually; IB_SYNC_MEM_INVAL_MOVED is
 *	ib_sync_mem_invalidate_range() of the whole client
 *
 * Marks the client invalidated, waits for its callbacks in flight (as
 * ib_sync_mem_unregister() does), then calls its ->invalidate once, in the
 * caller's context. Later syncs of the client
 * fail with -ENXIO (memory) or -ENODEV (device); device-wide syncs skip it.
 * The client stays registered until its owner unregisters it (which its
 * ->invalidate may do). The caller holds a reference on @client (its
 * registration's will do: if ->invalidate unregisters the client, the
 * client may be gone when this returns). Must not be called from a
 * callback of @client. Does nothing if the client is not live.
 *
 * Return: 0, -EPERM (and nothing done) if @client is not @owner's, -EINVAL
 * for an unknown @reason; for IB_SYNC_MEM_INVAL_MOVED, what
 * ib_sync_mem_invalidate_range() returns.
 */
int ib_sync_mem_invalidate(struct ib_sync_mem_owner *owner,
			   struct ib_sync_mem_client *client,
			   enum ib_sync_mem_inval reason)
{
	struct ib_sync_mem_domain *dom = client->dom;

	might_sleep();
	if (!sm_owned(owner, client, __func__))
		return -EPERM;
	if (reason == IB_SYNC_MEM_INVAL_MOVED)
		return sm_move(client, 0, client->size ?: U64_MAX);
	if (reason != IB_SYNC_MEM_INVAL_MEMORY &&
	    reason != IB_SYNC_MEM_INVAL_DEVICE)
		return -EINVAL;
	mutex_lock(&dom->lock);
	if (client->state != SM_LIVE) {
		mutex_unlock(&dom->lock);
		return 0;
	}
	/* Dumps see the generation move before they see the state. */
	sm_generation_bump();
	WRITE_ONCE(client->inval_reason, reason);
	WRITE_ONCE(client->state, SM_INVALIDATED);
	mutex_unlock(&dom->lock);

	sm_async_client_gone(client);
	sm_client_wait_idle(client);
	sm_call_invalidate(client);
	return 0;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_invalidate);

/**
 * sm_domain_invalidate_all() - the device is going away
 * @dom: its domain, already unreachable by lookups
 *
 * Refuses new registrations and passes, ends what only the removal would
 * end (inbound READs in flight, asynchronous syncs waiting for their
 * in-fence: a sync in flight may be waiting for such a sync's fence),
 * waits for syncs in flight, then takes every client off the list and,
 * once its own syncs are over (those on its kind's engine too), calls its
 * ->invalidate (outside the lock: it may unregister its client). The
 * clients stay valid for their owners, who still unregister them.
 */
void sm_domain_invalidate_all(struct ib_sync_mem_domain *dom)
{
	struct ib_sync_mem_client *c;

	mutex_lock(&dom->lock);
	WRITE_ONCE(dom->dying, true);
	/* A dump that sees some of these states sees the generation move. */
	sm_generation_begin();
	list_for_each_entry(c, &dom->clients, node) {
		if (c->state != SM_LIVE)
			continue;
		WRITE_ONCE(c->inval_reason, IB_SYNC_MEM_INVAL_DEVICE);
		WRITE_ONCE(c->state, SM_INVALIDATED);
	}
	sm_generation_end();
	mutex_unlock(&dom->lock);

	/* Inbound flushes in flight end now, with -ENODEV. */
	sm_inbound_stop(dom);
	/*
	 * Asynchronous syncs waiting for an in-fence end now (-ENODEV),
	 * before the waits below: a sync in flight may wait for one's fence
	 * (a dma-buf's reservation holds it), until its deadline otherwise.
	 */
	sm_async_domain_removed(dom);
	/*
	 * Every ->sync runs inside a read-side section: passes and syncs
	 * that saw the clients live are over after this.
	 */
	synchronize_srcu_expedited(&dom->srcu);
	sm_inbound_destroy(dom);

	for (;;) {
		mutex_lock(&dom->lock);
		c = list_first_entry_or_null(&dom->clients,
					     struct ib_sync_mem_client, node);
		if (c) {
			sm_unlist(c);
			kref_get(&c->kref);
		}
		mutex_unlock(&dom->lock);
		if (!c)
			break;
		/*
		 * A sync on its kind's engine counts in the client, outside
		 * any read-side section, until the engine's fence signalled.
		 */
		sm_client_wait_idle(c);
		sm_call_invalidate(c);
		ib_sync_mem_put(c);
	}
}
