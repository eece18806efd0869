/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of a client share (client.c, invalidate.c, stats.c,
 * sync.c, pass.c): the functions they call across, and the inline helpers
 * of the sync paths: the busy count, one ->sync's call and its accounting,
 * the lazy state, deadlines. The helpers are inlined into the hot paths
 * (ib_sync_mem_sync(), the ranges, a device's pass), whose code the
 * regression gate measures: keep them inline.
 */
#ifndef _IB_SYNC_MEM_CLIENT_H
#define _IB_SYNC_MEM_CLIENT_H

#include <linux/bitops.h>
#include <linux/jump_label.h>

#include "sync_mem.h"
#include "trace.h"

/* client.c */
#ifdef CONFIG_LOCKDEP
void sm_fence_might_wait(void);
#endif
void sm_client_wait_idle(struct ib_sync_mem_client *c);
void sm_client_release(struct kref *kref);
void sm_unlist(struct ib_sync_mem_client *c);
bool sm_owned(const struct ib_sync_mem_owner *owner,
	      const struct ib_sync_mem_client *client, const char *fn);

/* stats.c */
void sm_stats_max(struct sm_stats __percpu *stats, u64 ns);

/* sync.c */
int sm_revalidate(struct ib_sync_mem_client *c, ktime_t deadline);
int sm_sync_other(struct ib_sync_mem_client *c, enum ib_sync_mem_dir dir,
		  ktime_t deadline, const struct sm_cover *spans,
		  unsigned int flags);
/* Does this pass or sync time each ->sync? Asked once per pass. */
static __always_inline bool sm_timed(void)
{
	return static_branch_likely(&sm_timing_key) ||
	       trace_client_sync_enabled();
}

/*
 * Every sync may sleep and may wait for dma_fences (a dma-buf client's
 * ->sync does): say so where the caller is, whatever its clients do, so
 * that a sync from atomic context (might_sleep()) or from a fence
 * signalling section (lockdep, on debug kernels) is reported at once.
 */
static __always_inline void sm_sync_might_wait(void)
{
	might_sleep();
#ifdef CONFIG_LOCKDEP
	sm_fence_might_wait();
#endif
}

/* The deadline of a sync begun at @now (its caller's ktime_get_ns()). */
static inline ktime_t sm_deadline(u64 now, unsigned int timeout_ms)
{
	return ktime_add_ms(ns_to_ktime(now), timeout_ms ?: sm_sync_timeout_ms());
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
	u32 hmask;	/* the buckets of @hist in use */
	u32 hist[SM_HIST_BUCKETS];
};

static inline unsigned int sm_hist_bucket(u64 ns)
{
	return ns ? min_t(unsigned int, fls64(ns) - 1, SM_HIST_BUCKETS - 1) : 0;
}

/* @timed: @ns is a ->sync's time; not timed, the time counters stay. */
static __always_inline void sm_acc_add(struct sm_pass_acc *a, bool timed,
				       u64 ns, u64 bytes, int err)
{
	unsigned int b;

	a->syncs++;
	if (err)
		a->errors++;
	else
		a->bytes += bytes;
	if (!timed)
		return;
	a->ns += ns;
	a->max_ns = max(a->max_ns, ns);
	b = sm_hist_bucket(ns);
	a->hist[b]++;
	a->hmask |= BIT(b);
}

/*
 * With @pass (clients only), also records the pass on this CPU. @timed as
 * for sm_acc_add(); an untimed pass records 0 as the client's time in it.
 * No preemption toggling on the common path: each counter is one this_cpu
 * operation, and a counter that lands on another CPU than the one before
 * (the task moved in between) still sums right.
 */
static __always_inline void sm_stats_add(struct sm_stats __percpu *stats,
					 bool timed, u64 ns, u64 bytes,
					 int err, u64 pass)
{
	struct sm_stats *s;
	unsigned int b;

	this_cpu_inc(stats->syncs);
	if (err)
		this_cpu_inc(stats->errors);
	else
		this_cpu_add(stats->bytes, bytes);
	if (timed) {
		b = sm_hist_bucket(ns);
		this_cpu_add(stats->ns, ns);
		this_cpu_inc(stats->hist[b]);
		if (unlikely(ns > this_cpu_read(stats->max_ns)))
			sm_stats_max(stats, ns);
	}
	if (pass) {
		/* One CPU's triple: sm_client_pass_result() reads it. */
		s = get_cpu_ptr(stats);
		WRITE_ONCE(s->last_pass_ns, ns);
		WRITE_ONCE(s->last_pass_err, err);
		WRITE_ONCE(s->last_pass, pass);
		put_cpu_ptr(stats);
	}
}

/* What sm_lazy_owed() found. */
enum sm_owed {
	SM_NOT_OWED,
	SM_OWED,		/* a ->sync of the whole client */
	SM_OWED_SPANS,		/* of the spans in the cover */
};

/*
 * What sm_sync_other() made coherent: the spans' bytes (an inbound flush:
 * what it made visible), or all of a kind that syncs whole.
 */
static inline u64 sm_other_bytes(const struct ib_sync_mem_client *c,
				 enum ib_sync_mem_dir dir, const struct sm_cover *spans)
{
	if (spans && (dir == IB_SYNC_MEM_INBOUND || c->ops->sync_range))
		return spans->bytes;
	return c->size;
}

/*
 * Account for a ->sync of @c that took @ns (if @timed) over @bytes with
 * result @err: its last error, its counters (and those of its device and
 * of the module, or @acc's of a pass), the client_sync tracepoint. Any
 * context (the sync_failed event is not here).
 */
static __always_inline void sm_sync_counted(struct ib_sync_mem_client *c,
					    enum ib_sync_mem_dir dir,
					    bool timed, u64 ns, u64 bytes,
					    int err, u64 pass,
					    struct sm_pass_acc *acc)
{
	if (READ_ONCE(c->last_err) != err)
		WRITE_ONCE(c->last_err, err);
	sm_stats_add(c->stats, timed, ns, bytes, err, pass);
	if (acc) {
		sm_acc_add(acc, timed, ns, bytes, err);
	} else {
		sm_stats_add(c->dom->stats, timed, ns, bytes, err, 0);
		sm_stats_add(sm_global_stats, timed, ns, bytes, err, 0);
	}
	trace_client_sync(c, dir, ns, err);
}

/* Has @c moved since its last revalidation? */
static __always_inline bool sm_moved(struct ib_sync_mem_client *c)
{
	/* Pairs with the releases of the move lock's unlock and above. */
	return READ_ONCE(c->moves) != smp_load_acquire(&c->revalidated);
}

/*
 * Call ->sync of a live client (over @spans, NULL for the whole client)
 * and account for it (@now and @acc: the comment before sm_revalidate()).
 * @flags: SM_SYNC_*; in a fence's signalling section (SM_SYNC_SIGNALLING)
 * the sync_failed event is its caller's to send, after the signal.
 */
static __always_inline int sm_call_sync(struct ib_sync_mem_client *c,
					enum ib_sync_mem_dir dir,
					const struct sm_cover *spans,
					ktime_t deadline, u64 pass, u64 *now,
					struct sm_pass_acc *acc,
					unsigned int flags)
{
	u64 t, ns = 0, bytes = c->size;
	unsigned long other;
	bool timed = now;
	int err = 0;

	if (unlikely(sm_moved(c)))
		err = sm_revalidate(c, deadline);
	/* One test on the common path (a branch is dear under emulation). */
	other = (unsigned long)spans;
	other |= dir == IB_SYNC_MEM_INBOUND;
	if (likely(!other)) {
		if (!err)
			err = c->ops->sync(c, dir, deadline);
	} else if (dir != IB_SYNC_MEM_INBOUND && spans->n == 1 &&
		   c->ops->sync_range) {
		/* One range (a range sync's): no call around the callback. */
		if (!err)
			err = c->ops->sync_range(c, dir, spans->span[0].start,
						 spans->bytes, deadline);
		bytes = spans->bytes;
	} else {
		if (!err)
			err = sm_sync_other(c, dir, deadline, spans, flags);
		bytes = sm_other_bytes(c, dir, spans);
	}
	if (timed) {
		t = ktime_get_ns();
		ns = t - *now;
		*now = t;
	}

	if (err && !(flags & SM_SYNC_SIGNALLING))
		sm_event_sync_failed(c, dir, err);
	sm_sync_counted(c, dir, timed, ns, bytes, err, pass, acc);
	return err;
}

/* Which dirty generations a sync in @dir covers. */
static inline unsigned int sm_dirty_dirs(enum ib_sync_mem_dir dir)
{
	switch (dir) {
	case IB_SYNC_MEM_TO_DEVICE:
		return BIT(SM_CPU_WROTE);
	case IB_SYNC_MEM_TO_CPU:
		return BIT(SM_DEVICE_WROTE);
	case IB_SYNC_MEM_INBOUND:
		return BIT(SM_NIC_WROTE);
	default:
		return BIT(SM_CPU_WROTE) | BIT(SM_DEVICE_WROTE);
	}
}

/*
 * Is a ->sync in @dir owed? Always for a client that is not lazy; for a
 * lazy one, if a generation of writes in a direction @dir covers is newer
 * than what a completed ->sync saw. The generations it saw now go to
 * @cv, for sm_lazy_synced() once the ->sync succeeded, and so do the
 * spans owed of a ranged client. Nothing is written to @cv for a client
 * that is not lazy: the fan-out's common path keeps off the stack.
 *
 * The acquire pairs with the full barrier of ib_sync_mem_mark_dirty():
 * the ->sync that follows sees the writes made before the mark. A ->sync
 * still running (another caller's, another pass's) does not count, so a
 * caller whose sync returns 0 always has a completed ->sync behind it that
 * began after its last mark.
 */
static __always_inline enum sm_owed sm_lazy_owed(struct ib_sync_mem_client *c,
						 enum ib_sync_mem_dir dir,
						 struct sm_cover *cv)
{
	unsigned int dirs = sm_dirty_dirs(dir);
	bool owed = false;
	int d;

	if (!(c->flags & IB_SYNC_MEM_F_LAZY))
		return SM_OWED;
	for (d = 0; d < SM_DIRTY_DIRS; d++) {
		if (!(dirs & BIT(d)))
			continue;
		cv->gen[d] = atomic64_read_acquire(&c->lazy->dirty[d]);
		if (atomic64_read_acquire(&c->lazy->clean[d]) < cv->gen[d])
			owed = true;
	}
	/*
	 * No span left means a sync that began after those generations has
	 * completed meanwhile (it dropped them): nothing is owed any more.
	 */
	if (owed && c->spans) {
		sm_spans_owed(c, dirs, cv);
		return cv->n ? SM_OWED_SPANS : SM_NOT_OWED;
	}
	return owed ? SM_OWED : SM_NOT_OWED;
}

/*
 * A ->sync that began after seeing @cv's generations succeeded: those are
 * coherent, and so are the spans they cover.
 */
static __always_inline void sm_lazy_synced(struct ib_sync_mem_client *c,
					   enum ib_sync_mem_dir dir,
					   const struct sm_cover *cv)
{
	unsigned int dirs = sm_dirty_dirs(dir);
	s64 old;
	int d;

	if (!(c->flags & IB_SYNC_MEM_F_LAZY))
		return;
	for (d = 0; d < SM_DIRTY_DIRS; d++) {
		if (!(dirs & BIT(d)))
			continue;
		/* Concurrent ->syncs finish in any order: keep the newest. */
		old = atomic64_read(&c->lazy->clean[d]);
		while (old < cv->gen[d] &&
		       !atomic64_try_cmpxchg_release(&c->lazy->clean[d], &old,
						     cv->gen[d]))
			;
	}
	if (c->spans)
		sm_spans_synced(c, dirs);
}

/*
 * The busy count of a client (struct ib_sync_mem_domain, sync_mem.h):
 * sm_client_hold() counts the caller before it reads the client's state,
 * sm_client_leave() uncounts it, and a writer that changed the state waits
 * in sm_client_wait_idle() until nobody is counted. Either the writer sees
 * the caller counted, or the caller sees the writer's state: both sides
 * have a full barrier between their write and their read.
 */
static __always_inline void sm_client_hold(struct ib_sync_mem_client *c)
{
	atomic_inc(&c->busy);
	/* Counted before the state is read: pairs with sm_client_wait_idle(). */
	smp_mb__after_atomic();
}

static __always_inline void sm_client_leave(struct ib_sync_mem_client *c)
{
	/*
	 * A value-returning atomic is a full barrier: the callback's accesses
	 * come before the count drops, and the state is read after it. A
	 * writer changed the state before it waits: it sees zero or is woken.
	 */
	if (atomic_dec_and_test(&c->busy) && READ_ONCE(c->state) != SM_LIVE)
		wake_up_all(&c->dom->idle_wq);
}

/*
 * sm_client_enter() - may the caller run ->sync or ->fill_info of @c?
 * True if @c is live: the caller is counted and calls sm_client_leave()
 * after the callback. False: not counted (the state says why).
 */
static __always_inline bool sm_client_enter(struct ib_sync_mem_client *c)
{
	sm_client_hold(c);
	if (likely(READ_ONCE(c->state) == SM_LIVE))
		return true;
	sm_client_leave(c);
	return false;
}

/*
 * No ->invalidate of @c runs in another task. A wait_event() condition: it
 * runs in a sleeping task state, so it must not block (no dom->lock); the
 * wake_up_all() after inval_task is cleared orders the two.
 */
static inline bool sm_inval_idle(struct ib_sync_mem_client *c)
{
	struct task_struct *task = READ_ONCE(c->inval_task);

	return !task || task == current;
}

#endif /* _IB_SYNC_MEM_CLIENT_H */
