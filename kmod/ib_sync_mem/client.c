// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem clients: registration, the sync paths and invalidation.
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

#include <linux/bitops.h>
#include <linux/dma-fence.h>
#include <linux/jump_label.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <uapi/linux/ib_sync_mem.h>

#include "sync_mem.h"
#include "trace.h"

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

bool sm_coalesce = true;
module_param_named(coalesce, sm_coalesce, bool, 0644);
MODULE_PARM_DESC(coalesce, "Concurrent device-wide syncs share passes (default Y)");
EXPORT_SYMBOL_NS_GPL(sm_coalesce, "IB_SYNC_MEM_INTERNAL");

/*
 * Per-client timing: a clock read after every ->sync, for the clients'
 * and domains' time counters and histograms and the per-client times of
 * a device sync's results. Off, no clock is read per client, except while
 * something is attached to the client_sync tracepoint, which still gets
 * every client's time.
 */
DEFINE_STATIC_KEY_TRUE(sm_timing_key);
EXPORT_SYMBOL_NS_GPL(sm_timing_key, "IB_SYNC_MEM_INTERNAL");

static int sm_set_timing(const char *val, const struct kernel_param *kp)
{
	bool on;
	int err = kstrtobool(val, &on);

	if (err)
		return err;
	if (on)
		static_branch_enable(&sm_timing_key);
	else
		static_branch_disable(&sm_timing_key);
	return 0;
}

static int sm_get_timing(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n",
			  static_key_enabled(&sm_timing_key) ? 'Y' : 'N');
}

static const struct kernel_param_ops sm_timing_ops = {
	.set = sm_set_timing,
	.get = sm_get_timing,
};

module_param_cb(client_timing, &sm_timing_ops, NULL, 0644);
MODULE_PARM_DESC(client_timing,
		 "Time every client's ->sync (counters, histograms, results; default Y)");

/* Does this pass or sync time each ->sync? Asked once per pass. */
static __always_inline bool sm_timed(void)
{
	return static_branch_likely(&sm_timing_key) ||
	       trace_client_sync_enabled();
}

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

static noinline void sm_fence_might_wait(void)
{
	lock_map_acquire(&sm_sync_map);
	dma_fence_wait_timeout(sm_stub_fence, false, 0);
	lock_map_release(&sm_sync_map);
}
#endif

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

void sm_pass_queue_init(struct sm_pass_queue *q)
{
	spin_lock_init(&q->lock);
	init_waitqueue_head(&q->wq);
}

/* The module's timeout of a sync that asks for none, in ms. */
unsigned int sm_sync_timeout_ms(void)
{
	return READ_ONCE(sync_timeout_ms);
}

/* The deadline of a sync begun at @now (its caller's ktime_get_ns()). */
static ktime_t sm_deadline(u64 now, unsigned int timeout_ms)
{
	return ktime_add_ms(ns_to_ktime(now), timeout_ms ?: sm_sync_timeout_ms());
}

void sm_stats_sum(struct sm_stats __percpu *stats, struct sm_stats_sum *sum)
{
	int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct sm_stats *s = per_cpu_ptr(stats, cpu);

		sum->syncs += READ_ONCE(s->syncs);
		sum->errors += READ_ONCE(s->errors);
		sum->ns += READ_ONCE(s->ns);
		sum->bytes += READ_ONCE(s->bytes);
		sum->max_ns = max(sum->max_ns, READ_ONCE(s->max_ns));
		for (i = 0; i < SM_HIST_BUCKETS; i++)
			sum->hist[i] += READ_ONCE(s->hist[i]);
	}
}
EXPORT_SYMBOL_NS_GPL(sm_stats_sum, "IB_SYNC_MEM_INTERNAL");

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

static unsigned int sm_hist_bucket(u64 ns)
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

/* A new longest ->sync on this CPU (rare once warm: out of line). */
static noinline void sm_stats_max(struct sm_stats __percpu *stats, u64 ns)
{
	unsigned long flags;
	struct sm_stats *s;

	/* A kind's fence callback may count from an interrupt (async.c). */
	local_irq_save(flags);
	s = this_cpu_ptr(stats);
	if (ns > s->max_ns)
		WRITE_ONCE(s->max_ns, ns);
	local_irq_restore(flags);
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

/**
 * sm_client_pass_result() - did a device-wide pass sync a client, how long
 *	and with what result
 * @client: the client
 * @pass: the pass (struct ib_sync_mem_result.pass)
 * @ns: set to the time of the client's ->sync in that pass
 * @err: set to what that ->sync returned (a later sync of the client, in
 *	another pass or alone, does not change it)
 *
 * Return: true if @pass is the last pass that synced @client on the CPU
 * it ran on; false if it did not sync @client, or a later pass did on the
 * same CPU.
 */
bool sm_client_pass_result(const struct ib_sync_mem_client *client, u64 pass,
			   u64 *ns, int *err)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct sm_stats *s = per_cpu_ptr(client->stats, cpu);

		if (READ_ONCE(s->last_pass) == pass) {
			*ns = READ_ONCE(s->last_pass_ns);
			*err = READ_ONCE(s->last_pass_err);
			return true;
		}
	}
	return false;
}

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
static noinline int sm_revalidate(struct ib_sync_mem_client *c,
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

/* What sm_lazy_owed() found. */
enum sm_owed {
	SM_NOT_OWED,
	SM_OWED,		/* a ->sync of the whole client */
	SM_OWED_SPANS,		/* of the spans in the cover */
};

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
static noinline int sm_sync_other(struct ib_sync_mem_client *c,
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

/*
 * What sm_sync_other() made coherent: the spans' bytes (an inbound flush:
 * what it made visible), or all of a kind that syncs whole.
 */
static u64 sm_other_bytes(const struct ib_sync_mem_client *c,
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
static unsigned int sm_dirty_dirs(enum ib_sync_mem_dir dir)
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
 * sm_client_wait_idle() - wait for the callbacks of @c in flight
 * @c: a client whose state the caller changed from SM_LIVE (under
 *	dom->lock, before calling this)
 *
 * When it returns, every caller that saw @c live has left its callback,
 * and every later one sees the new state. Not interruptible; as long as
 * the longest of those callbacks, which their callers' deadlines bound. A
 * pass that called ->prepare of @c is counted until its ->finish.
 */
static void sm_client_wait_idle(struct ib_sync_mem_client *c)
{
	/* The state change before the count: pairs with sm_client_hold(). */
	smp_mb();
	/* Its inbound flush waiting for another client's ends now. */
	sm_inbound_unqueue(c);
	wait_event(c->dom->idle_wq, !atomic_read(&c->busy));
	/* No READ of its memory in flight, no MR over it, from here on. */
	sm_inbound_forget(c);
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

static void sm_client_release(struct kref *kref)
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
static void sm_unlist(struct ib_sync_mem_client *c)
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
 * No ->invalidate of @c runs in another task. A wait_event() condition: it
 * runs in a sleeping task state, so it must not block (no dom->lock); the
 * wake_up_all() after inval_task is cleared orders the two.
 */
static bool sm_inval_idle(struct ib_sync_mem_client *c)
{
	struct task_struct *task = READ_ONCE(c->inval_task);

	return !task || task == current;
}

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
static bool sm_owned(const struct ib_sync_mem_owner *owner,
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
