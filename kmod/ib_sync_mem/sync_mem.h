/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal definitions of ib_sync_mem shared between its source files.
 */
#ifndef _IB_SYNC_MEM_INTERNAL_H
#define _IB_SYNC_MEM_INTERNAL_H

#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sync_mem.h>

#include "compat.h"

/*
 * log2 latency buckets, those of the libbpf-tools: bucket i counts ns in
 * [2^i, 2^(i+1)), bucket 0 also 0, the last one every ns >= 2^31 (about
 * 2.1 s). pkg/hist and the tracer's BPF programs count the same way.
 */
#define SM_HIST_BUCKETS	32

/* Directions, enum ib_sync_mem_dir: 1 to SM_NR_DIRS. */
#define SM_NR_DIRS	IB_SYNC_MEM_INBOUND

static inline bool sm_dir_valid(enum ib_sync_mem_dir dir)
{
	return dir >= IB_SYNC_MEM_TO_DEVICE && dir <= SM_NR_DIRS;
}

/**
 * struct sm_stats - per-CPU sync counters of a client, a domain or the module
 * @syncs: ->sync calls made
 * @errors: ->sync calls that failed
 * @ns: total time in ->sync
 * @bytes: bytes made coherent by successful syncs
 * @max_ns: longest ->sync seen on this CPU
 * @hist: log2 histogram of ->sync times in ns
 * @last_pass: clients only: the last device-wide pass that synced the
 *	client on this CPU and had a caller reading its clients (0: none)
 * @last_pass_ns: time of its ->sync in that pass
 * @last_pass_err: what its ->sync returned in that pass
 *
 * Kept per CPU so that a pass writes no cache line shared with passes on
 * other CPUs; sm_client_pass_result() finds a pass's entry. Each counter is
 * written with this_cpu operations, which need neither preemption nor
 * interrupts off (one instruction each on x86-64), and read with
 * READ_ONCE(): a 64-bit kernel, as every target is, never tears them.
 * @max_ns and the @last_pass triple are written with preemption off.
 */
struct sm_stats {
	u64 syncs;
	u64 errors;
	u64 ns;
	u64 bytes;
	u64 max_ns;
	u64 hist[SM_HIST_BUCKETS];
	u64 last_pass;
	u64 last_pass_ns;
	int last_pass_err;
};

/* Sum of struct sm_stats over the CPUs. */
struct sm_stats_sum {
	u64 syncs;
	u64 errors;
	u64 ns;
	u64 bytes;
	u64 max_ns;
	u64 hist[SM_HIST_BUCKETS];
};

/**
 * struct sm_pass_queue - coalescing of device-wide syncs in one direction
 * @lock: protects the fields below
 * @started: passes begun
 * @done: passes finished; a pass is running when @started != @done
 * @err: result of pass @done
 * @res: counters of pass @done
 * @deadline: the deadline pass @done ran with
 * @timed_out: a client of pass @done gave up at that deadline (-ETIMEDOUT)
 * @interrupted: a client of pass @done was interrupted by a signal to the
 *	caller that ran it
 * @wq: callers waiting for a pass to finish
 *
 * A caller that arrives at sequence @started needs a pass numbered
 * @started + 1: one that begins after it arrived. If none runs, it runs it;
 * otherwise it sleeps, and the first waiter to find the queue idle runs the
 * pass that serves every caller that arrived meanwhile. A pass runs with
 * the deadline and in the task of the caller that runs it: a waiter takes
 * its result unless it depended on that caller (a timeout before the
 * waiter's own deadline, or a signal), and then waits for, or runs, the
 * next pass.
 */
struct sm_pass_queue {
	spinlock_t lock;		/* protects the fields below */
	u64 started;
	u64 done;
	int err;
	struct ib_sync_mem_result res;
	ktime_t deadline;
	bool timed_out;
	bool interrupted;
	wait_queue_head_t wq;
};

struct sm_inbound;

/**
 * struct ib_sync_mem_domain - the registry of one RDMA device
 * @ibdev: the device; NULL once the ib_client remove hook ran
 * @index: ibdev->index, the key in sm_domains
 * @name: device name (kept current by the rename hook)
 * @kref: the registry holds one reference until remove, each client one
 * @srcu: read side of @clients and of the clients' memory
 * @lock: serialises writers of @clients, @dying, client state changes and
 *	->invalidate calls
 * @clients: registered clients in registration order
 * @nclients: length of @clients
 * @next_seq: registration sequence of the next client (release/acquire)
 * @dying: set by the remove hook; no registration or pass after it
 * @nbatch: clients on @clients whose ops have ->prepare or ->finish
 * @passes: coalescing queues, one per enum ib_sync_mem_dir
 * @inval_wq: unregisters waiting for an ->invalidate running elsewhere
 * @idle_wq: writers waiting for a client's callbacks in flight to end
 *	(sm_client_wait_idle())
 * @nl_creating: netlink creations on this device between a kind's create()
 *	and the record of their client (nl_client.c; changed under its lock)
 * @result_readers: callers that will read more of their pass's result
 *	than its error: its time and its clients' entries (sm_sync_domain());
 *	passes measure and record those only while there are any
 * @npasses: passes run on this domain, per CPU (sm_domain_passes())
 * @stats: per-CPU sync counters of all clients of this domain
 * @inbound_lock: the creation of @inbound, its teardown, and the
 *	teardowns of clients that use it (sm_inbound_forget()); never held
 *	across a flush's wait (the flushes take turns on @inbound itself)
 * @inbound: the kernel QP of the module's inbound flushes, made when the
 *	first client that uses it registers (inbound.c)
 * @inbound_err: why the last creation of @inbound failed (under
 *	@inbound_lock; read without it), 0 if none did
 * @async_lock: protects @async_waiting and @async_dead; taken inside an
 *	in-fence's lock (async.c), interrupts off
 * @async_waiting: asynchronous syncs waiting for their in-fence
 * @async_dead: the device is going away: no job waits for its in-fence
 *
 * Read-side scheme, in two parts. The list and the client objects on it
 * are read under sleepable RCU, as mm/mmu_notifier.c does: callbacks may
 * sleep (a fence wait does), which plain RCU forbids. A device-wide sync
 * takes srcu_read_lock() once (per-CPU counters, no shared lock) for the
 * whole call and walks the list; a client object is freed only after a
 * grace period (call_srcu() from its release), so a walk may still look at
 * one that was unregistered meanwhile.
 *
 * A client's callbacks are guarded by the client itself: a caller counts
 * itself in client->busy before it reads the client's state and calls a
 * callback only if the state allows it (sm_client_enter()); a writer
 * changes the state under @lock and then waits until client->busy is zero
 * (sm_client_wait_idle()). That makes "after unregister returns, no
 * callback runs" hold, and scopes the wait: an unregister or invalidation
 * waits for the callbacks of its own client in flight, each bounded by its
 * caller's deadline, never for a pass over the rest of the device. The
 * count is an atomic on the client's own cache line, written twice per
 * callback; only callers of the same client share it. Removal, which must
 * wait for everything, waits for an SRCU grace period
 * (sm_domain_invalidate_all()).
 */
struct ib_sync_mem_domain {
	struct ib_device *ibdev;
	u32 index;
	char name[IB_DEVICE_NAME_MAX];
	struct kref kref;
	struct srcu_struct srcu;
	struct mutex lock;		/* writers; see above */
	struct list_head clients;
	u32 nclients;
	u64 next_seq;
	bool dying;
	u32 nbatch;
	struct sm_pass_queue passes[SM_NR_DIRS];
	wait_queue_head_t inval_wq;
	wait_queue_head_t idle_wq;
	atomic_t nl_creating;
	atomic_t result_readers;
	u64 __percpu *npasses;
	struct sm_stats __percpu *stats;
	struct mutex inbound_lock;	/* see above */
	struct sm_inbound *inbound;
	int inbound_err;
	spinlock_t async_lock;		/* see above */
	struct list_head async_waiting;
	bool async_dead;
};

/**
 * struct ib_sync_mem_owner - who registers clients (owner.c)
 * @kref: the creator holds one reference, each client one
 * @module: the module that created it
 * @clients: clients registered under it, not yet unregistered
 * @id: unique among the owners created since the module loaded (filters
 *	of netlink dumps keep it, not a pointer)
 * @node: on the list of owners (under its mutex)
 * @name: unique among the owners that exist
 */
struct ib_sync_mem_owner {
	struct kref kref;
	struct module *module;
	atomic_t clients;
	u32 id;
	struct list_head node;
	char name[IB_SYNC_MEM_NAME_MAX];
};

enum sm_client_state {
	SM_LIVE = 1,		/* listed, callbacks may run */
	SM_INVALIDATED,		/* device or memory gone; syncs fail */
	SM_DEAD,		/* unregistered */
};

/*
 * The dirty state of a lazy client, per direction: [SM_CPU_WROTE] the CPU
 * wrote, a to-device sync is owed; [SM_DEVICE_WROTE] the device wrote, a
 * to-cpu sync is owed; [SM_NIC_WROTE] the NIC wrote, an inbound flush is
 * owed. A bidirectional sync covers the first two.
 */
enum {
	SM_CPU_WROTE,
	SM_DEVICE_WROTE,
	SM_NIC_WROTE,
	SM_DIRTY_DIRS,
};

/* Dirty spans a ranged lazy client keeps per direction (ranges.c). */
#define SM_SPANS	4

/*
 * Bytes [@start, @end) of a client; for a dirty span, @gen is the
 * generation of the newest mark it holds (unused elsewhere).
 */
struct sm_span {
	u64 start;
	u64 end;
	s64 gen;
};

/*
 * The dirty spans of a ranged lazy client (lazy, with ->sync_range and a
 * size), under @lock: per direction, up to SM_SPANS disjoint spans sorted
 * by start, each with the generation of the newest mark it holds (a mark
 * that joins one makes it that of the mark). A span whose generation a
 * completed sync covered (c->clean) is dropped.
 */
struct sm_dirty_spans {
	spinlock_t lock;	/* any context: ib_sync_mem_mark_dirty() */
	u8 n[SM_DIRTY_DIRS];
	struct sm_span s[SM_DIRTY_DIRS][SM_SPANS + 1];	/* one more while merging */
};

/*
 * What one sync of a client covers: the dirty generations it saw
 * (sm_lazy_owed()), and the whole client (@n == 0) or @n spans of it
 * (sorted, disjoint) totalling @bytes.
 */
struct sm_cover {
	s64 gen[SM_DIRTY_DIRS];
	u32 n;
	u64 bytes;
	struct sm_span span[2 * SM_SPANS];
};

/**
 * struct ib_sync_mem_client - a registered memory sync client
 * @node: entry in the domain's clients list (SRCU)
 * @dom: the domain; a reference is held for the client's lifetime
 * @owner: who registered it; a reference is held for the client's lifetime
 * @ops: the owner's ops; read only while the client is registered (a
 *	driver without a module reference may unload once it unregistered)
 * @module: ops->owner, pinned while the client exists (may be NULL)
 * @release: ops->release, kept for the last put
 * @priv: the owner's private data
 * @seq: registration sequence within the domain
 * @size: bytes behind the client
 * @kref: the registration holds one reference, lookups take more
 * @busy: callers inside a callback of the client, or about to decide
 *	whether to call one (sm_client_enter()); a pass that prepared the
 *	client counts from ->prepare to ->finish
 * @batch: its ops have ->prepare or ->finish
 * @has_info: its ops have ->fill_info
 * @id: unique id, not reused soon (cyclic allocation)
 * @flags: IB_SYNC_MEM_F_*
 * @kind: userspace kind number
 * @state: enum sm_client_state; written under dom->lock, read anywhere
 * @inval_reason: enum ib_sync_mem_inval once invalidated
 * @listed: on @dom's list (under dom->lock)
 * @inval_called: ->invalidate has run or runs (under dom->lock)
 * @inval_task: the task in ->invalidate, NULL when none (written under
 *	dom->lock; read without it by an unregister waiting on @dom->inval_wq)
 * @unreg_in_inval: ->invalidate unregistered the client (under dom->lock)
 * @unregistering: ib_sync_mem_unregister_many() took it off the list and
 *	still has to finish its unregister (only that task uses it)
 * @lazy: lazy clients only (their dirty state), else NULL
 * @last_err: result of the last sync (written only when it changes)
 * @pinned_pages: pages the client keeps pinned (region clients)
 * @moves: ranges moved (ib_sync_mem_invalidate_range() calls), ever
 *	(under @move's lock)
 * @revalidated: @moves a successful ->revalidate covered; the client must
 *	be revalidated before its next ->sync while the two differ
 * @move: clients that can move only (ops->revalidate), else NULL
 * @stats: per-CPU counters
 * @rcu: frees the object after the SRCU grace period that follows release
 * @name: NUL-terminated name
 * @spans: ranged lazy clients only (see struct sm_dirty_spans), else NULL
 * @range_align: ranges of the client start and end on this (a power of
 *	two; the end may also be the client's end)
 * @file: the open file of /dev/ib_sync_mem that owns it (it created it or
 *	took it over), NULL if none: set by nl_client.c once, before any such
 *	file learns the id, and compared, never used, by dev.c (the client is
 *	unregistered before the file is freed)
 */
/**
 * struct sm_lazy - the dirty state of a lazy client
 * @dirty: per direction, the generation of the owner's writes, bumped by
 *	ib_sync_mem_mark_dirty()
 * @clean: per direction, the newest generation a ->sync that completed
 *	successfully had seen before it began
 */
struct sm_lazy {
	atomic64_t dirty[SM_DIRTY_DIRS];
	atomic64_t clean[SM_DIRTY_DIRS];
};

/**
 * struct sm_move - the moves of a client that can move (ops->revalidate)
 * @lock: protects the client's @moves and the span below (never held
 *	across a callback: ib_sync_mem_invalidate_range() may be called in
 *	atomic context, the exporter's reservation lock held)
 * @start: start of the span moved since the last revalidation
 * @end: its end (exclusive)
 * @reval_lock: one ->revalidate at a time
 */
struct sm_move {
	spinlock_t lock;	/* see above */
	u64 start;
	u64 end;
	struct mutex reval_lock;	/* see above */
};

/*
 * Laid out for the fan-out: what a pass reads of every client first; the
 * state of lazy and movable clients, of invalidation and of dumps after.
 */
struct ib_sync_mem_client {
	struct list_head node;
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_owner *owner;
	const struct ib_sync_mem_ops *ops;
	struct module *module;
	void (*release)(struct ib_sync_mem_client *client);
	void *priv;
	u64 seq;
	u64 size;
	struct kref kref;
	atomic_t busy;
	u32 id;
	u32 flags;
	u32 kind;
	u8 state;
	u8 inval_reason;
	bool batch;
	bool has_info;
	bool listed;
	bool inval_called;
	bool unreg_in_inval;
	bool unregistering;
	u32 range_align;
	struct task_struct *inval_task;
	struct sm_lazy *lazy;
	int last_err;
	atomic_t pinned_pages;
	u64 moves;
	u64 revalidated;
	struct sm_move *move;
	struct sm_stats __percpu *stats;
	struct rcu_head rcu;
	char name[IB_SYNC_MEM_NAME_MAX];
	/* Off the lines a fan-out reads: only ranged lazy clients use them. */
	struct sm_dirty_spans *spans;
	const struct file *file;
};

/*
 * sm_counters, sm_coalesce, sm_timing_key, sm_domain_get() and
 * sm_domain_put() are exported in the IB_SYNC_MEM_INTERNAL namespace for
 * the in-kernel test and bench modules only; they are not API.
 */
/* Object counters; all return to zero before the module can unload. */
struct sm_counters {
	atomic_t domains;	/* domain objects allocated */
	atomic_t clients;	/* client objects allocated */
	atomic_t registered;	/* clients registered, not yet unregistered */
	atomic_t fences;	/* asynchronous syncs' fences not yet freed */
	atomic_t fences_pending;	/* those fences not yet signalled */
};

extern struct sm_counters sm_counters;
extern struct xarray sm_domains;
extern struct xarray sm_clients;
extern struct sm_stats __percpu *sm_global_stats;
extern bool sm_coalesce;
DECLARE_STATIC_KEY_TRUE(sm_timing_key);	/* client_timing */

/**
 * sm_range_check() - may @c be synced or marked over [@offset, +@len)?
 * @c: the client
 * @offset: first byte
 * @len: bytes
 *
 * Return: 0; -EINVAL for no length, or a start or end off the client's
 * range alignment (the client's end is always a valid end); -ERANGE for
 * a range that does not lie inside the client.
 */
static inline int sm_range_check(const struct ib_sync_mem_client *c,
				 u64 offset, u64 len)
{
	u64 end;

	if (!len)
		return -EINVAL;
	if (check_add_overflow(offset, len, &end) || end > c->size)
		return -ERANGE;
	if (!IS_ALIGNED(offset, c->range_align) ||
	    (!IS_ALIGNED(end, c->range_align) && end != c->size))
		return -EINVAL;
	return 0;
}

/* ranges.c */
void sm_spans_mark(struct ib_sync_mem_client *c, unsigned int dirs,
		   u64 start, u64 end);
void sm_spans_owed(struct ib_sync_mem_client *c, unsigned int dirs,
		   struct sm_cover *cv);
void sm_spans_synced(struct ib_sync_mem_client *c, unsigned int dirs);

/* sync_mem.c */
struct ib_sync_mem_domain *sm_domain_get(struct ib_device *ibdev);
struct ib_sync_mem_domain *sm_domain_get_by_name(const char *name);
struct ib_sync_mem_domain *sm_domain_get_by_index(u32 index);
struct ib_device *sm_domain_device_get(struct ib_sync_mem_domain *dom);
void sm_domain_put(struct ib_sync_mem_domain *dom);
u64 sm_domain_passes(struct ib_sync_mem_domain *dom);

/*
 * The registry's generation, for dump consistency, a sequence count: even
 * while nothing changes, odd while a change of several objects (a device's
 * clients invalidated at its removal) is being made visible. A change of
 * one object moves it by two (sm_generation_bump()) before it becomes
 * visible; a change of several opens a window (sm_generation_begin()) before
 * the first and closes it (sm_generation_end()) after the last. A dump round
 * begins at an even generation (sm_generation_read_begin() waits out a
 * window) and reads it again once its walk ended (sm_generation_read()):
 * a walk that saw part of a change sees the generation move.
 */
extern atomic_t sm_generation;

static inline void sm_generation_bump(void)
{
	atomic_add(2, &sm_generation);
	/* Pairs with the barriers of sm_generation_read(). */
	smp_mb__after_atomic();
}

static inline void sm_generation_begin(void)
{
	atomic_inc(&sm_generation);
	/* Odd before the first change is visible. */
	smp_mb__after_atomic();
}

static inline void sm_generation_end(void)
{
	/* Even only after the last change is visible... */
	smp_mb__before_atomic();
	atomic_inc(&sm_generation);
	/* ...and before what the caller does next. */
	smp_mb__after_atomic();
}

static inline u32 sm_generation_read(void)
{
	u32 gen;

	/* After the reads of the walk before, if this ends a walk... */
	smp_rmb();
	gen = atomic_read(&sm_generation);
	/* ...and before those of the walk after, if this begins one. */
	smp_rmb();
	return gen;
}

/*
 * The generation a walk begins at: never inside a window (the windows are
 * short: a loop under a domain's lock, no sleep).
 */
static inline u32 sm_generation_read_begin(void)
{
	u32 gen;

	while ((gen = sm_generation_read()) & 1)
		cond_resched();
	return gen;
}

/*
 * sm_read_lock() - enter @dom's read side: its client list and the client
 * objects on it. The caller keeps @dom alive (a reference, a client's, or
 * RCU until this returns). Returns the SRCU index for sm_read_unlock().
 */
static inline int sm_read_lock(struct ib_sync_mem_domain *dom)
{
	return srcu_read_lock(&dom->srcu);
}

static inline void sm_read_unlock(struct ib_sync_mem_domain *dom, int idx)
{
	srcu_read_unlock(&dom->srcu, idx);
}

/* owner.c */
void sm_owner_get(struct ib_sync_mem_owner *owner);
void sm_owner_put(struct ib_sync_mem_owner *owner);
struct ib_sync_mem_owner *sm_owner_find(const char *name);

/* client.c */
int sm_client_init(void);
void sm_client_exit(void);
int sm_client_state(const struct ib_sync_mem_client *client);
struct ib_sync_mem_client *sm_client_next(unsigned long *id);
struct ib_sync_mem_client *sm_client_lookup(u32 id);
void sm_unregister(struct ib_sync_mem_client *client);
int sm_client_fill_info(struct ib_sync_mem_client *c, struct sk_buff *msg);
struct dma_fence *sm_client_deps(struct ib_sync_mem_client *c,
				 enum ib_sync_mem_dir dir);

unsigned int sm_lookup_batch(const u32 *ids,
			     struct ib_sync_mem_batch_entry *e,
			     unsigned int n);

/* invalidate.c */
void sm_domain_invalidate_all(struct ib_sync_mem_domain *dom);

/* stats.c */
void sm_stats_sum(struct sm_stats __percpu *stats, struct sm_stats_sum *sum);
bool sm_client_pass_result(const struct ib_sync_mem_client *client, u64 pass,
			   u64 *ns, int *err);

/* sync.c */
int sm_state_errno(const struct ib_sync_mem_client *c);
extern unsigned int sync_timeout_ms;

/* The module's timeout of a sync that asks for none, in ms. */
static inline unsigned int sm_sync_timeout_ms(void)
{
	return READ_ONCE(sync_timeout_ms);
}

/* pass.c */
void sm_pass_queue_init(struct sm_pass_queue *q);
int sm_sync_domain(struct ib_sync_mem_domain *dom,
		   struct ib_sync_mem_owner *owner, enum ib_sync_mem_dir dir,
		   unsigned int timeout_ms, bool read_result,
		   struct ib_sync_mem_result *res);

/*
 * What the core reports to the layer above it (the netlink family), which
 * registers a listener: the core never calls up into that layer by name.
 */
enum sm_event {
	SM_EV_CLIENT_NEW,
	SM_EV_CLIENT_DEL,
	SM_EV_CLIENT_INVALIDATED,
	SM_EV_DEV_NEW,
	SM_EV_DEV_DEL,
};

/**
 * struct sm_listener - the upper layer's side of the core's events
 * @client: a client was registered, unregistered or invalidated
 * @dev: a device was attached or removed
 * @sync_failed: a client's ->sync failed
 * @domain_removed: the device of @dom is going away and its clients are
 *	invalidated: the clients the upper layer created there go with it
 *	(returns when they are unregistered)
 *
 * Called from process context, outside the domain's lock; each may sleep.
 */
struct sm_listener {
	void (*client)(struct ib_sync_mem_client *c, enum sm_event ev);
	void (*dev)(struct ib_sync_mem_domain *dom, enum sm_event ev);
	void (*sync_failed)(struct ib_sync_mem_client *c,
			    enum ib_sync_mem_dir dir, int err);
	void (*domain_removed)(struct ib_sync_mem_domain *dom);
};

void sm_listen(const struct sm_listener *l);
void sm_event_client(struct ib_sync_mem_client *c, enum sm_event ev);
void sm_event_dev(struct ib_sync_mem_domain *dom, enum sm_event ev);
void sm_event_sync_failed(struct ib_sync_mem_client *c,
			  enum ib_sync_mem_dir dir, int err);
void sm_event_domain_removed(struct ib_sync_mem_domain *dom);

/* netlink.c: the generic netlink family (and its listener) */
int sm_nl_init(void);
void sm_nl_exit(void);

#include "kinds.h"

/* inbound.c: the module's inbound flush, an RDMA READ through the NIC */
/* Pages a device's flusher keeps registered: a few receive buffers. */
#define SM_INBOUND_MRS	4
int sm_inbound_flush(struct ib_sync_mem_client *c, ktime_t deadline,
		     unsigned int flags);
void sm_inbound_prepare(struct ib_sync_mem_domain *dom);
extern u32 sm_inbound_fail_create;
void sm_inbound_unqueue(struct ib_sync_mem_client *c);
void sm_inbound_forget(struct ib_sync_mem_client *c);
void sm_inbound_stop(struct ib_sync_mem_domain *dom);
void sm_inbound_destroy(struct ib_sync_mem_domain *dom);
void sm_inbound_set_hold(bool hold);
int sm_inbound_parked(void);
/**
 * struct sm_inbound_stats - what a device's inbound flusher did
 * @reads: READs that completed successfully
 * @regs: pages registered for them (a READ of a page kept registered
 *	needs none)
 * @last: the 8 bytes the last READ brought back
 * @recoveries: times its QP was reset and connected again after a WR
 *	failed
 * @answered: flushes answered by another flush's READ of their target
 * @waiting: flushes waiting for the flusher now
 * @inflight: a READ is in flight (or parked by inbound_hold)
 * @broken: a WR failed and the QP has not been recovered yet
 * @held: the pages its MRs hold registered, 0 for an MR that holds none
 * @buf: where its READs land, and @buf_size: the bytes allocated there
 * @buf_size: see @buf
 */
struct sm_inbound_stats {
	u64 reads;
	u64 regs;
	u64 last;
	u64 recoveries;
	u64 answered;
	unsigned int waiting;
	bool inflight;
	bool broken;
	u64 held[SM_INBOUND_MRS];
	const void *buf;
	size_t buf_size;
};

void sm_inbound_stats(struct ib_sync_mem_domain *dom,
		      struct sm_inbound_stats *st);

/* async.c: asynchronous syncs, as dma_fences */
int sm_async_init(void);
void sm_async_exit(void);
void sm_async_domain_removed(struct ib_sync_mem_domain *dom);
void sm_async_client_gone(struct ib_sync_mem_client *c);
struct dma_fence *sm_sync_domain_async(struct ib_sync_mem_domain *dom,
				       enum ib_sync_mem_dir dir,
				       unsigned int timeout_ms,
				       struct dma_fence *in);
struct dma_fence *sm_sync_kind_async(struct ib_sync_mem_client *c,
				     enum ib_sync_mem_dir dir,
				     unsigned int timeout_ms, u64 *t0);
void sm_sync_kind_done(struct ib_sync_mem_client *c, enum ib_sync_mem_dir dir,
		       int err, u64 t0);
int sm_sync_refused(const struct ib_sync_mem_client *c,
		    enum ib_sync_mem_dir dir, u64 offset, u64 len);
int sm_batch_refused(const struct ib_sync_mem_batch_entry *e, unsigned int n,
		     enum ib_sync_mem_dir dir);
/* A sync inside a fence's signalling section: sm_sync_many(). */
#define SM_SYNC_SIGNALLING	BIT(0)
int sm_sync_many(struct ib_sync_mem_batch_entry *e, unsigned int n,
		 enum ib_sync_mem_dir dir, unsigned int timeout_ms,
		 unsigned int flags);

/* dev.c: /dev/ib_sync_mem, the data path */
int sm_dev_init(void);
void sm_dev_exit(void);
/* Its request checks, shared with uring.c: the ioctls' rules. */
struct ib_sync_mem_ioc_sync_batch;
struct ib_sync_mem_ioc_entry;
bool sm_dev_req_ok(u32 flags, u32 timeout_ms);
struct ib_sync_mem_client *sm_dev_lookup(const struct file *file, u32 id);
struct dma_fence *sm_dev_in_fence(u32 flags, int fd);
int sm_dev_sync_blocking(struct ib_sync_mem_client *c, u32 dir, u64 offset,
			 u64 len, u32 timeout_ms, struct dma_fence *in);
struct ib_sync_mem_batch_entry *
sm_dev_batch_get(const struct file *file,
		 const struct ib_sync_mem_ioc_sync_batch *req,
		 struct ib_sync_mem_ioc_entry **uent);

/* uring.c: IORING_OP_URING_CMD on /dev/ib_sync_mem */
struct io_uring_cmd;
int sm_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);

/* nl_client.c: netlink-created clients an open file of the device owns */
int sm_nl_own(u32 id, const struct file *file);
void sm_nl_file_released(const struct file *file);
int sm_nl_file_create(const struct nlattr *data, int len,
		      const struct file *file, bool admin,
		      struct netlink_ext_ack *extack, u32 *id);
void sm_nl_file_delete(u32 id, const struct file *file);
int sm_nl_file_delete_wait(u32 id, const struct file *file);

/* debugfs.c */
void sm_debugfs_init(void);
void sm_debugfs_exit(void);

#endif /* _IB_SYNC_MEM_INTERNAL_H */
