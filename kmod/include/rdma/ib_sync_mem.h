/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sync_mem: a registry of memory sync clients per RDMA device.
 *
 * A *client* is memory that must be made coherent before a device or the CPU
 * uses it: a GPU buffer, an FPGA window, a pinned user region, a dma-buf.
 * Whoever owns that memory registers a client on an RDMA device with a table
 * of ops; a producer about to hand memory to the device (or back to the CPU)
 * syncs one client, the clients of one owner on the device, or every client
 * of the device.
 *
 * Owners: a driver creates an owner once (ib_sync_mem_owner_create()) and
 * registers every client under it. Lookup, unregister, invalidation and the
 * private data of a client take the owner: another owner's client is not
 * found (lookup), and a call with it does nothing and fails with -EPERM
 * (or NULL), logging the bug. Syncs take no owner: syncing memory is never
 * harmful, only late.
 *
 * Guarantees (each is exercised by the in-kernel test module, sync_mem_test.c
 * with test_core.c, test_guarantees.c and test_moves.c):
 *
 * - After ib_sync_mem_unregister() returns, no callback of that client is
 *   running and none will run again (except ops->release, which runs when the
 *   last reference is dropped). ->fill_info is no exception. The same holds
 *   for every client given to ib_sync_mem_unregister_many().
 * - A device-wide sync runs ops->sync of every live client that was
 *   registered when the pass started, exactly once, in registration order. It
 *   returns the first error but still runs the rest, and records each
 *   client's result (see ib_sync_mem_client_last_err()).
 * - Callbacks may sleep. The read side (a sync) holds no lock across a
 *   callback; device-wide syncs in one direction take their pass queue's
 *   spinlock briefly to share passes. Each caller counts itself in the
 *   client's own busy count around a callback, so that a writer waits for
 *   that client only. See struct ib_sync_mem_domain in sync_mem.h for the
 *   scheme.
 * - When the RDMA device goes away, syncs in flight finish, later ones fail
 *   with -ENODEV, every live client gets
 *   ops->invalidate(IB_SYNC_MEM_INVAL_DEVICE) (one already invalidated for
 *   another reason gets no second call, and its syncs keep failing with
 *   that reason's errno), and the ib_client remove hook returns only when
 *   all of that is done, including an ->invalidate of another reason still
 *   running in another task, and the deletions of the clients userspace
 *   created there, begun before or by the removal. The owner still holds
 *   its client and must still unregister it (it may do so from
 *   ->invalidate).
 * - A client holds a reference on ops->owner: the module that implements the
 *   ops cannot be unloaded while one of its clients exists. A driver that
 *   unregisters all its clients itself before it goes (from its module's
 *   exit, or a listener's ->remove) leaves ops->owner NULL: nothing of its
 *   module is used once unregister returned, so it has no ->release
 *   (registration refuses one, -EINVAL) and frees its data after
 *   unregister.
 * - Concurrent device-wide syncs in the same direction coalesce: a caller
 *   that arrives while a pass runs waits for the next complete pass instead
 *   of starting its own (unless the module parameter coalesce=0). A pass
 *   runs in the task and with the deadline of the caller that runs it; a
 *   caller it serves never sees -ETIMEDOUT before its own deadline, nor an
 *   -ERESTARTSYS or -EINTR caused by that caller's signal: such a pass does
 *   not serve it, the next one does.
 * - Lazy clients (IB_SYNC_MEM_F_LAZY) keep their dirty state per direction
 *   (ib_sync_mem_mark_dirty()). A sync that returns 0 has a ->sync of each
 *   client it covers behind it that began after the caller's last mark in
 *   that direction and completed: a ->sync still running elsewhere does not
 *   count, another one runs. A sync one way does not consume a mark the
 *   other way. A lazy client whose ops have ->sync_range is synced over
 *   the spans marked (ib_sync_mem_mark_dirty_range()), not whole, and its
 *   byte counters count those bytes.
 * - Every ->prepare is paired with exactly one ->finish, also when the
 *   client is unregistered or invalidated during the pass.
 * - A client that moved (ib_sync_mem_invalidate_range()) is revalidated
 *   once, with the span of what moved, before its next ->sync; a move
 *   reported while ->revalidate runs is revalidated by the sync after.
 *
 * Rules for callbacks:
 *
 * - ->sync, ->prepare, ->finish and ->fill_info must not call
 *   ib_sync_mem_unregister() or ib_sync_mem_invalidate() for their own
 *   client (those wait for the callback to end), and those of a client
 *   with ->prepare or ->finish must not do it for another client of the
 *   same device with them (a pass holds every such client it prepared
 *   until it finished them all). ->sync of one client may run concurrently
 *   with itself (two callers, or a pass and a single sync; in the same or
 *   other directions), never concurrently with or after its ->invalidate.
 * - ->invalidate runs once, in process context, outside every lock of the
 *   registry and after the client's syncs are over. It may sleep, and it may
 *   unregister its own client (or queue a work item that does): a concurrent
 *   ib_sync_mem_unregister() from another task waits for it to return.
 * - ->release runs when the last reference is dropped, from unregister or
 *   from the put of whoever held the client last.
 * - Memory that moves (a dma-buf exporter migrating a buffer, an
 *   mmu_interval_notifier range): the owner reports the move with
 *   ib_sync_mem_invalidate_range(), which never sleeps and takes only a
 *   spinlock of the client, so it may be called from a dma-buf importer's
 *   move_notify (the exporter's reservation lock held) or an
 *   mmu_interval_notifier's invalidate, even a non-blocking one. The next
 *   sync that runs the client's ->sync calls ->revalidate first, outside
 *   every registry lock (it may take the reservation lock). A lazy client
 *   that owes no sync is not revalidated until it does.
 * - What may be held where: ib_sync_mem_unregister() and
 *   ib_sync_mem_invalidate() wait for the client's ->sync and ->revalidate
 *   in flight, so they must not be called with a lock those take (for a
 *   dma-buf client, its reservation lock); ib_sync_mem_invalidate_range()
 *   may be. Callbacks run with no lock of the registry held.
 *
 * Waits: ib_sync_mem_unregister() and ib_sync_mem_invalidate() wait, not
 * interruptibly, for the callbacks of their own client in flight, never
 * for other clients: its ->sync, ->revalidate and ->fill_info calls, each
 * bounded by the deadline its caller gave, and, for a client with
 * ->prepare or ->finish, a pass that prepared it until that pass's
 * ->finish. None when none runs.
 * A caller waiting for another caller's pass in ib_sync_mem_sync_device()
 * is not in flight and can be killed (-EINTR). ib_sync_mem_unregister_many()
 * takes all its clients off their lists first, then waits for each. Device
 * removal waits for every callback in flight on the device.
 *
 * Asynchronous syncs (ib_sync_mem_sync_async(),
 * ib_sync_mem_sync_many_async(), ib_sync_mem_sync_device_async()) return
 * a dma_fence at once; a worker of the module runs the sync, after the
 * optional in-fence signalled (waited for by a callback, never by
 * blocking), and signals the fence exactly once with the sync's result as
 * its error: also when the client was unregistered (-ENODEV) or
 * invalidated meanwhile (-ENXIO for its memory, -ENODEV for its device),
 * or when its device goes. A sync still waiting for its in-fence is
 * signalled by the unregister, the invalidation or the removal itself,
 * before it returns, not when the in-fence signals (which it may never
 * do); so is a device's sync by the removal, and a batch by the
 * unregister or invalidation of any of its clients or the removal of any
 * of their devices (that client's errno; no entry synced). The
 * caller keeps its reference to the in-fence; the sync takes its own. A
 * fence signals within its timeout of the sync's start whatever the sync
 * waits for: a sync that waits for its own fence (imported into the
 * dma-buf it syncs) ends with -ETIMEDOUT at its deadline.
 * The fence's signalling path: a fence may sit in a buffer's reservation
 * that memory reclaim waits for, so everything between its publication
 * and its signal must neither allocate memory that can recurse into
 * reclaim nor take a lock held elsewhere around such an allocation or a
 * fence wait (the rules of dma_fence_begin_signalling()). A sync whose
 * clients are all IB_SYNC_MEM_F_FENCE_SAFE runs entirely inside a
 * signalling section, from the worker's start to the signal (lockdep
 * checks it on kernels with it); its sync_failed events are sent after
 * the signal, and its inbound flush uses the device's flusher made when
 * the client registered, never makes one, and fails with -EIO rather than
 * recover a QP a failed READ broke (the next blocking flush does). Any
 * other sync (a device's, or one with a client that is not fence-safe,
 * such as a dma-buf's, which brackets CPU access through the exporter)
 * runs its ->sync outside the section, as a blocking sync would: such a
 * fence may allocate before it signals and must not be put where reclaim
 * waits for it. What a client's ->deps names (a dma-buf's reservation
 * fences) is collected when the sync is submitted and waited for by a
 * callback, as the in-fence is, before the work item runs: no worker waits
 * for a fence, and an unregister, invalidation or removal ends that wait
 * at once. A client's
 * ->sync must never wait for a fence that depends on an asynchronous sync
 * of the same client.
 * Each fence holds a reference on this module until it is freed. A kind
 * with its own engine implements ->sync_async: an asynchronous sync of one
 * of its clients (whole, not lazy, not inbound, not moved since its last
 * revalidation) then starts there, in the submitter's task, and its fence
 * signals when the kind's does, with its error, without a worker of the
 * module in between.
 *
 * Context: every function here may sleep, except ib_sync_mem_mark_dirty(),
 * ib_sync_mem_mark_dirty_range(),
 * ib_sync_mem_invalidate_range(), ib_sync_mem_get() and the accessors;
 * the ones that may say so with might_sleep(). A sync may also wait for
 * dma_fences (a dma-buf client's does): every sync entry point tells
 * lockdep so (on kernels with it), so a sync from inside a fence
 * signalling section (dma_fence_begin_signalling()) is reported even when
 * no client waits.
 */
#ifndef _RDMA_IB_SYNC_MEM_H
#define _RDMA_IB_SYNC_MEM_H

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/types.h>

struct dma_fence;
struct ib_device;
struct ib_sync_mem_client;
struct ib_sync_mem_owner;
struct module;
struct netlink_ext_ack;
struct nlattr;
struct sk_buff;

/* Longest client name, including the terminating NUL. */
#define IB_SYNC_MEM_NAME_MAX	32

/**
 * enum ib_sync_mem_dir - which side is about to use the memory
 * @IB_SYNC_MEM_TO_DEVICE: the CPU wrote, the device reads next
 * @IB_SYNC_MEM_TO_CPU: the device wrote, the CPU reads next
 * @IB_SYNC_MEM_BIDIRECTIONAL: both of the above
 * @IB_SYNC_MEM_INBOUND: the NIC wrote (its completion arrived), the
 *	accelerator or the CPU reads next: make the NIC's writes visible
 *	there (ops->flush_inbound, or the module's read-back through the NIC
 *	for a client with ops->inbound_target). Not part of bidirectional.
 */
enum ib_sync_mem_dir {
	IB_SYNC_MEM_TO_DEVICE = 1,
	IB_SYNC_MEM_TO_CPU = 2,
	IB_SYNC_MEM_BIDIRECTIONAL = 3,
	IB_SYNC_MEM_INBOUND = 4,
};

/**
 * enum ib_sync_mem_inval - why a client was invalidated
 * @IB_SYNC_MEM_INVAL_DEVICE: its RDMA device is going away (terminal)
 * @IB_SYNC_MEM_INVAL_MEMORY: the memory behind it went away (unmapped,
 *	process exit, buffer released; terminal)
 * @IB_SYNC_MEM_INVAL_MOVED: the memory moved and its mapping will come
 *	back: not terminal. The client stays live; the next sync that calls
 *	its ->sync calls its ->revalidate first (see
 *	ib_sync_mem_invalidate_range()). Never given to ->invalidate.
 */
enum ib_sync_mem_inval {
	IB_SYNC_MEM_INVAL_DEVICE = 1,
	IB_SYNC_MEM_INVAL_MEMORY = 2,
	IB_SYNC_MEM_INVAL_MOVED = 3,
};

/*
 * Client flags (struct ib_sync_mem_reg.flags).
 *
 * IB_SYNC_MEM_F_LAZY: sync only what is marked dirty.
 * IB_SYNC_MEM_F_FENCE_SAFE: the owner's ->sync, ->sync_range,
 *	->sync_async, ->flush_inbound and ->inbound_target may run inside a
 *	dma_fence signalling section (an asynchronous sync's; see above):
 *	they allocate nothing with a GFP that may reclaim, wait for no
 *	dma_fence, and take no lock that is held elsewhere around such an
 *	allocation or a fence wait. A client that can move cannot promise it
 *	(its ->revalidate maps again): registration refuses the flag with
 *	->revalidate (-EINVAL). The module's region clients have it. A sync
 *	of such a client through io_uring (/dev/ib_sync_mem's uring_cmd) runs
 *	in the submitting task's io_uring_enter(), as the blocking ioctl's:
 *	->sync should not wait long there.
 */
#define IB_SYNC_MEM_F_LAZY		BIT(0)
#define IB_SYNC_MEM_F_FENCE_SAFE	BIT(1)
#define IB_SYNC_MEM_F_ALL	(IB_SYNC_MEM_F_LAZY | IB_SYNC_MEM_F_FENCE_SAFE)

/**
 * struct ib_sync_mem_ops - what a client's owner implements
 * @owner: module implementing the ops; pinned while a client exists, or
 *	NULL (then no @release) for a driver that unregisters every client
 *	before its module goes
 * @sync: required. Make the client's memory coherent for @dir (never
 *	IB_SYNC_MEM_INBOUND: see @flush_inbound). @deadline is the absolute
 *	CLOCK_MONOTONIC time by which a wait must give up with -ETIMEDOUT.
 *	Returns 0 or a negative errno. May sleep.
 * @flush_inbound: optional. Make what the NIC wrote into the memory
 *	visible to its next reader with the owner's own mechanism (an
 *	HDP-style flush register, a read through the accelerator's BAR).
 *	Called instead of @sync, like it, for IB_SYNC_MEM_INBOUND.
 * @inbound_target: optional, for a client without @flush_inbound: set
 *	*@dma_addr to a DMA address, on the client's RDMA device, of 8 bytes
 *	of the memory the NIC writes into. The module then flushes inbound by
 *	an RDMA READ of them on a kernel QP of the device in loopback: PCIe
 *	orders it behind the NIC's earlier writes. Called like @sync. Without
 *	either op, an inbound sync of the client fails with -EOPNOTSUPP.
 * @invalidate: optional. The device or the memory is gone (@reason); no sync
 *	runs after it. Called once, never concurrently with @sync, outside the
 *	registry's locks; it may unregister the client (see the rules above).
 * @release: optional. The last reference is gone; free the private data.
 * @prepare: optional batching hook. A device-wide pass calls it for every
 *	client on the device's list when the pass began (live or already
 *	invalidated) before the first ->sync of the pass.
 * @finish: optional batching hook, called exactly once for every client
 *	@prepare was called for, after the last ->sync of the pass, even if the
 *	client was unregistered or invalidated meanwhile; never after ->release.
 * @fill_info: optional. Describe the client to userspace by adding netlink
 *	attributes to @msg (inside IB_SYNC_MEM_A_CLIENT_INFO, which only
 *	CAP_NET_ADMIN callers see). Returns 0 or -EMSGSIZE. Called like @sync,
 *	only while the client is live: never after unregister returned, never
 *	concurrently with or after @invalidate.
 * @revalidate: optional; required to be moved (ib_sync_mem_invalidate_range()).
 *	Map again what moved: [@offset, @offset + @len) covers every range
 *	moved since the last successful revalidation (merged into one span).
 *	Called by a sync, before the ->sync it is about to call, in the
 *	syncing task, with @deadline as that ->sync gets, outside every lock
 *	of the registry: it may take the exporter's reservation lock. Returns
 *	0, or an errno that becomes the sync's result (no ->sync runs; the
 *	next sync calls it again). Never concurrently with itself, @invalidate
 *	or after it; it may run concurrently with a ->sync that began before
 *	the move (on the old mapping).
 * @sync_range: optional. @sync of [@offset, @offset + @len) of the memory
 *	only (inside the client, on its range_align), called like @sync
 *	(never for IB_SYNC_MEM_INBOUND) for a range sync
 *	(ib_sync_mem_sync_range()), and, for a lazy client, for each span
 *	marked dirty since its last sync in the direction, in order of
 *	offset. A client without it is synced whole by a range sync.
 * @sync_async: optional. Start @sync of the whole client for @dir (never
 *	IB_SYNC_MEM_INBOUND) on the owner's own engine and return a fence
 *	of the owner's that signals once it completed, with @sync's result
 *	as its error (dma_fence_set_error()), at the latest at @deadline
 *	(with -ETIMEDOUT); or an ERR_PTR, the sync's result, if it did not
 *	start. Called like @sync (process context, may sleep) by the
 *	asynchronous syncs of one client that is not lazy and has not moved
 *	since its last revalidation; the client counts as in its @sync until
 *	the fence signalled (unregister, invalidation and removal wait for
 *	it). The module keeps a reference to the fence until then and adds a
 *	callback, which runs where the owner signals (any context).
 * @deps: optional. The fences an asynchronous sync of the client in @dir
 *	must wait for before its @sync, @sync_range, @sync_async or inbound
 *	flush runs (a reservation's, say, that @sync would wait for): one
 *	fence, with a reference for the module, or NULL for none; an ERR_PTR
 *	refuses the asynchronous sync with that errno. Called by the
 *	submitter (process context: it may allocate and sleep), once per
 *	asynchronous sync, before its fence is published, and only while the
 *	client is live, counted as in its @sync (unregister, invalidation
 *	and removal wait for it; never after the unregister returned: such
 *	a sync then signals -ENODEV without it). The sync waits for
 *	it as for an in-fence, by a callback, holding no worker, and ends
 *	that wait at once when the client is unregistered or invalidated or
 *	its device goes. Its error is not the sync's (a @sync that waits for
 *	the same fences does not fail on theirs either); @sync still runs as
 *	it would, and may wait for fences added since.
 */
struct ib_sync_mem_ops {
	struct module *owner;
	int (*sync)(struct ib_sync_mem_client *client,
		    enum ib_sync_mem_dir dir, ktime_t deadline);
	void (*invalidate)(struct ib_sync_mem_client *client,
			   enum ib_sync_mem_inval reason);
	void (*release)(struct ib_sync_mem_client *client);
	void (*prepare)(struct ib_sync_mem_client *client,
			enum ib_sync_mem_dir dir);
	void (*finish)(struct ib_sync_mem_client *client,
		       enum ib_sync_mem_dir dir);
	int (*fill_info)(struct ib_sync_mem_client *client,
			 struct sk_buff *msg);
	int (*revalidate)(struct ib_sync_mem_client *client, u64 offset,
			  u64 len, ktime_t deadline);
	int (*flush_inbound)(struct ib_sync_mem_client *client,
			     ktime_t deadline);
	int (*inbound_target)(struct ib_sync_mem_client *client,
			      u64 *dma_addr);
	int (*sync_range)(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_dir dir, u64 offset, u64 len,
			  ktime_t deadline);
	struct dma_fence *(*sync_async)(struct ib_sync_mem_client *client,
					enum ib_sync_mem_dir dir,
					ktime_t deadline);
	struct dma_fence *(*deps)(struct ib_sync_mem_client *client,
				  enum ib_sync_mem_dir dir);
};

/**
 * struct ib_sync_mem_reg - a registration request
 * @owner: required; the owner the client is registered under
 * @name: NUL-terminated, 1 to IB_SYNC_MEM_NAME_MAX - 1 bytes
 * @ops: the client's ops; must outlive the client
 * @priv: owner's private data, returned by ib_sync_mem_client_priv()
 * @size: bytes of memory behind the client (counted per successful sync)
 * @flags: IB_SYNC_MEM_F_*
 * @kind: a client kind number for userspace (0 for in-kernel clients)
 * @range_align: ranges given for the client (syncs, marks) start and end
 *	on a multiple of this power of two (or end at @size); 0 for any byte
 */
struct ib_sync_mem_reg {
	struct ib_sync_mem_owner *owner;
	const char *name;
	const struct ib_sync_mem_ops *ops;
	void *priv;
	u64 size;
	u32 flags;
	u32 kind;
	u32 range_align;
};

/**
 * struct ib_sync_mem_result - outcome of a device-wide sync
 * @clients: clients whose ->sync ran in the pass that served the caller
 * @errors: how many of them failed
 * @skipped: clients not run (lazy and clean, or invalidated)
 * @err: the first error of a client in that pass, 0 if none failed
 * @pass: unique id of that pass (callers served by one pass see one id)
 * @ns: wall time of that pass
 */
struct ib_sync_mem_result {
	u32 clients;
	u32 errors;
	u32 skipped;
	int err;
	u64 pass;
	u64 ns;
};

struct ib_sync_mem_owner *ib_sync_mem_owner_create(struct module *module,
						   const char *name);
void ib_sync_mem_owner_destroy(struct ib_sync_mem_owner *owner);
const char *ib_sync_mem_owner_name(const struct ib_sync_mem_owner *owner);

/**
 * struct ib_sync_mem_batch_entry - one client of ib_sync_mem_sync_many()
 * @client: the client; the caller holds a reference
 * @offset: with @len, sync only [@offset, @offset + @len) of it, as
 *	ib_sync_mem_sync_range() does (a bad range is the entry's -EINVAL or
 *	-ERANGE, and nothing runs)
 * @len: 0 for the whole client
 * @err: set: its result (0, the error of ->sync, -ENXIO, -ENODEV)
 * @ran: set: whether its ->sync ran (not for a lazy client already clean,
 *	nor an invalidated or unregistered one)
 * @ns: set: the time of its sync
 */
struct ib_sync_mem_batch_entry {
	struct ib_sync_mem_client *client;
	u64 offset;
	u64 len;
	int err;
	bool ran;
	u64 ns;
};

struct ib_sync_mem_client *
ib_sync_mem_register(struct ib_device *ibdev, const struct ib_sync_mem_reg *reg);
int ib_sync_mem_register_many(struct ib_device *ibdev,
			      const struct ib_sync_mem_reg *regs,
			      unsigned int n,
			      struct ib_sync_mem_client **clients);
int ib_sync_mem_unregister(struct ib_sync_mem_owner *owner,
			   struct ib_sync_mem_client *client);
int ib_sync_mem_unregister_many(struct ib_sync_mem_owner *owner,
				struct ib_sync_mem_client **clients,
				unsigned int n);

int ib_sync_mem_sync(struct ib_sync_mem_client *client,
		     enum ib_sync_mem_dir dir, unsigned int timeout_ms);
int ib_sync_mem_sync_range(struct ib_sync_mem_client *client,
			   enum ib_sync_mem_dir dir, u64 offset, u64 len,
			   unsigned int timeout_ms);
int ib_sync_mem_sync_many(struct ib_sync_mem_batch_entry *e, unsigned int n,
			  enum ib_sync_mem_dir dir, unsigned int timeout_ms);
int ib_sync_mem_sync_owner(struct ib_device *ibdev,
			   struct ib_sync_mem_owner *owner,
			   enum ib_sync_mem_dir dir, unsigned int timeout_ms,
			   struct ib_sync_mem_result *result);
int ib_sync_mem_sync_device(struct ib_device *ibdev, enum ib_sync_mem_dir dir,
			    unsigned int timeout_ms,
			    struct ib_sync_mem_result *result);

struct dma_fence *ib_sync_mem_sync_async(struct ib_sync_mem_client *client,
					 enum ib_sync_mem_dir dir, u64 offset,
					 u64 len, unsigned int timeout_ms,
					 struct dma_fence *in);
struct dma_fence *
ib_sync_mem_sync_many_async(const struct ib_sync_mem_batch_entry *e,
			    unsigned int n, enum ib_sync_mem_dir dir,
			    unsigned int timeout_ms, struct dma_fence *in);
struct dma_fence *ib_sync_mem_sync_device_async(struct ib_device *ibdev,
						enum ib_sync_mem_dir dir,
						unsigned int timeout_ms,
						struct dma_fence *in);

void ib_sync_mem_mark_dirty(struct ib_sync_mem_client *client,
			    enum ib_sync_mem_dir dir);
int ib_sync_mem_mark_dirty_range(struct ib_sync_mem_client *client,
				 enum ib_sync_mem_dir dir, u64 offset, u64 len);
int ib_sync_mem_invalidate(struct ib_sync_mem_owner *owner,
			   struct ib_sync_mem_client *client,
			   enum ib_sync_mem_inval reason);
int ib_sync_mem_invalidate_range(struct ib_sync_mem_owner *owner,
				 struct ib_sync_mem_client *client,
				 u64 offset, u64 len);

struct ib_device *ib_sync_mem_device_get(const char *name);

struct ib_sync_mem_client *ib_sync_mem_lookup(struct ib_sync_mem_owner *owner,
					      u32 id);
struct ib_sync_mem_client *ib_sync_mem_get(struct ib_sync_mem_client *client);
void ib_sync_mem_put(struct ib_sync_mem_client *client);

void *ib_sync_mem_client_priv(const struct ib_sync_mem_owner *owner,
			      const struct ib_sync_mem_client *client);
void ib_sync_mem_client_set_pinned(struct ib_sync_mem_client *client,
				   u32 pages);

/**
 * ib_sync_mem_jiffies_left() - a ->sync deadline as a wait's timeout
 * @deadline: the absolute CLOCK_MONOTONIC time a ->sync was given
 *
 * Return: the jiffies left until @deadline, rounded up so that a wait
 * given them never ends before it; 0 once it has passed.
 */
static inline long ib_sync_mem_jiffies_left(ktime_t deadline)
{
	s64 left = ktime_to_ns(ktime_sub(deadline, ktime_get()));

	return left > 0 ? nsecs_to_jiffies(left) + 1 : 0;
}

u32 ib_sync_mem_client_id(const struct ib_sync_mem_client *client);
const char *ib_sync_mem_client_name(const struct ib_sync_mem_client *client);
int ib_sync_mem_client_last_err(const struct ib_sync_mem_client *client);

/**
 * struct ib_sync_mem_client_kind - a client kind userspace can create
 * @id: enum ib_sync_mem_kind number (uapi/linux/ib_sync_mem.h)
 * @name: for messages
 * @owner: module implementing it
 * @create: register a client of this kind on @ibdev. @attrs are the
 *	request's top-level attributes, already validated by the family's
 *	policy (the kind's settings are in its own nest, e.g.
 *	IB_SYNC_MEM_A_SIM). @flags are IB_SYNC_MEM_F_*. Return the client
 *	(its registration reference now belongs to the netlink family) or an
 *	ERR_PTR, with an extack message.
 * @destroy: unregister a client @create made. Called once, from process
 *	context, when userspace deletes it, its owning socket closes, its
 *	device goes away, the family cannot record it or deliver the reply
 *	to its CLIENT_NEW, or the module unloads.
 * @unprivileged: an open file of /dev/ib_sync_mem whose opener lacks
 *	CAP_NET_ADMIN may create clients of this kind. Set it only for a kind
 *	whose @create takes nothing but what the calling process owns (its
 *	memory, a file descriptor it holds) and charges what it pins to that
 *	process (RLIMIT_MEMLOCK, as ib_umem_get() does); @create then runs in
 *	that process's context with its credentials. Read at each creation.
 * @node: on the list of kinds
 */
struct ib_sync_mem_client_kind {
	u32 id;
	const char *name;
	struct module *owner;
	bool unprivileged;
	struct ib_sync_mem_client *(*create)(struct ib_device *ibdev,
					     const char *name, u32 flags,
					     struct nlattr **attrs,
					     struct netlink_ext_ack *extack);
	void (*destroy)(struct ib_sync_mem_client *client);
	struct list_head node;
};

/**
 * struct ib_sync_mem_listener - told of RDMA devices (ib_sync_mem_listen())
 * @add: a device is attached: at ib_sync_mem_listen() for each one
 *	attached then, later when one comes. Clients can be registered on it.
 * @remove: a device told of by @add is going away, or the listener
 *	unlistens. Called before the device's clients are invalidated: a
 *	client unregistered here sees no ->invalidate; one still registered
 *	after it gets ->invalidate(IB_SYNC_MEM_INVAL_DEVICE) as usual.
 * @node: private to ib_sync_mem
 *
 * Both run in process context, one at a time for all listeners, with the
 * registry's listener lock held and, when a device comes or goes, inside
 * the RDMA core's client add or remove hook: they may sleep, register,
 * sync and unregister clients, but must not call ib_sync_mem_listen() or
 * ib_sync_mem_unlisten(), nor register or unregister an ib_client.
 */
struct ib_sync_mem_listener {
	void (*add)(struct ib_sync_mem_listener *l, struct ib_device *ibdev);
	void (*remove)(struct ib_sync_mem_listener *l, struct ib_device *ibdev);
	struct list_head node;
};

int ib_sync_mem_listen(struct ib_sync_mem_listener *l);
void ib_sync_mem_unlisten(struct ib_sync_mem_listener *l);

int ib_sync_mem_kind_register(struct ib_sync_mem_client_kind *kind);
void ib_sync_mem_kind_unregister(struct ib_sync_mem_client_kind *kind);

#endif /* _RDMA_IB_SYNC_MEM_H */
