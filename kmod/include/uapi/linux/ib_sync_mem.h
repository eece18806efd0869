/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * ib_sync_mem: the registry of memory sync clients per RDMA device, as seen
 * from userspace through generic netlink.
 *
 * Family IB_SYNC_MEM_GENL_NAME ("ib_sync_mem"), version 1, multicast group
 * IB_SYNC_MEM_GENL_MCGRP_EVENTS ("events"). Every command is strictly
 * validated by the family's policy, one for all commands: attributes the
 * family does not know and wrong types are rejected with -EINVAL, values
 * out of the documented ranges with -ERANGE, each with an extack message
 * and the offset of the offending attribute. An attribute the family knows
 * that a command does not use (IB_SYNC_MEM_A_SYNC_DIR in CLIENT_NEW) is
 * validated and then ignored. A nest (IB_SYNC_MEM_A_SIM, _REGION, _DMABUF,
 * _SYNC_CLIENTS) must carry NLA_F_NESTED in its type, as strict validation
 * requires of every nest (-EINVAL without it).
 * Errors below are negative errnos returned in the netlink ack, each with
 * an extack message.
 *
 * Network namespaces: the family is not netns-aware. It exists only in the
 * initial network namespace, where RDMA devices are shared by default;
 * elsewhere resolving the family fails (-ENOENT).
 *
 * Permissions: IB_SYNC_MEM_CMD_DEV_GET, IB_SYNC_MEM_CMD_CLIENT_GET and
 * IB_SYNC_MEM_CMD_STATS_GET are open to every user; without CAP_NET_ADMIN
 * the sensitive attributes (IB_SYNC_MEM_A_CLIENT_OWNER_PORTID,
 * IB_SYNC_MEM_A_CLIENT_OWNER_PID and IB_SYNC_MEM_A_CLIENT_INFO) are left out.
 * IB_SYNC_MEM_CMD_CLIENT_NEW, IB_SYNC_MEM_CMD_CLIENT_DEL,
 * IB_SYNC_MEM_CMD_SYNC and IB_SYNC_MEM_CMD_MARK_DIRTY need CAP_NET_ADMIN in
 * the initial user namespace
 * (-EPERM otherwise; CAP_NET_ADMIN inside a user namespace is not enough).
 *
 * Client lifetime: a client created with IB_SYNC_MEM_CMD_CLIENT_NEW persists
 * until IB_SYNC_MEM_CMD_CLIENT_DEL deletes it or its device goes away, so
 * separate processes may create, sync and delete it. With
 * IB_SYNC_MEM_CLIENT_F_OWNED it is deleted when the netlink socket that
 * created it is closed (also when its process dies); with
 * IB_SYNC_MEM_CLIENT_F_FILE, when the open file of /dev/ib_sync_mem that took
 * it over, or created it (IB_SYNC_MEM_IOC_CREATE), is released
 * (linux/ib_sync_mem_dev.h). Clients registered by
 * kernel drivers are listed and synced like the others, but only their
 * driver deletes them.
 *
 * IB_SYNC_MEM_CMD_DEV_GET
 * -----------------------
 *
 * do: IB_SYNC_MEM_A_DEV_NAME or IB_SYNC_MEM_A_DEV_INDEX picks the device.
 * dump: one message per device (and IB_SYNC_MEM_A_DUMP_END: see "Dumps").
 * Reply, per device:
 *
 *    IB_SYNC_MEM_A_DEV_INDEX: NLA_U32
 *    IB_SYNC_MEM_A_DEV_NAME: NLA_NUL_STRING
 *    IB_SYNC_MEM_A_DEV_CLIENTS: NLA_U32, clients registered on it
 *    IB_SYNC_MEM_A_DEV_PASSES: NLA_U64, device-wide passes run
 *    IB_SYNC_MEM_A_STATS: NLA_NESTED, counters of all its clients (below)
 *
 * Errors: -ENODEV no such device, -EINVAL neither or a bad attribute.
 *
 * IB_SYNC_MEM_CMD_CLIENT_NEW (CAP_NET_ADMIN)
 * ------------------------------------------
 *
 *    IB_SYNC_MEM_A_DEV_NAME or IB_SYNC_MEM_A_DEV_INDEX: the device (required)
 *    IB_SYNC_MEM_A_CLIENT_NAME: NLA_NUL_STRING, 1 to 31 bytes (required)
 *    IB_SYNC_MEM_A_CLIENT_KIND: NLA_U32, enum ib_sync_mem_kind (required)
 *    IB_SYNC_MEM_A_CLIENT_FLAGS: NLA_U32, IB_SYNC_MEM_CLIENT_F_* (optional)
 *    IB_SYNC_MEM_A_SIM: NLA_NESTED, settings of a sim client (optional):
 *       IB_SYNC_MEM_A_SIM_LATENCY_US: NLA_U32, time one sync takes, <= 10 s
 *       IB_SYNC_MEM_A_SIM_FAIL_NEXT: NLA_U32, fail the next N syncs
 *       IB_SYNC_MEM_A_SIM_FAIL_ERRNO: NLA_U32, positive errno of those, 1..4095
 *       IB_SYNC_MEM_A_SIM_SIZE: NLA_U64, bytes the client stands for
 *       IB_SYNC_MEM_A_SIM_BATCH: NLA_FLAG, use the prepare/finish hooks
 *       IB_SYNC_MEM_A_SIM_ADDR: NLA_U64, page-aligned address of memory of
 *          the calling process the client stands for (SIZE bytes, a
 *          multiple of the page, at most 64 MiB; pinned until the client
 *          is deleted). The sim then models an accelerator's view of it:
 *          a copy taken at creation that only an inbound sync refreshes,
 *          the way an accelerator may read stale data after the NIC wrote
 *          its memory; debugfs ib_sync_mem_sim/clients/ID/view reads it
 *    IB_SYNC_MEM_A_REGION: NLA_NESTED, a region client (required for that
 *    kind): memory of the calling process, pinned and DMA-mapped on the
 *    device until the client is deleted; pinned pages count against
 *    RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK:
 *       IB_SYNC_MEM_A_REGION_ADDR: NLA_U64, user address, any byte (as
 *          malloc() returns one)
 *       IB_SYNC_MEM_A_REGION_LEN: NLA_U64, bytes, 1 byte to 1 GiB. The
 *          whole pages that hold [ADDR, ADDR + LEN) are pinned and mapped
 *          (and counted); a sync moves the region's bytes and no other
 *          byte of its first and last pages, and a range's offset counts
 *          from ADDR
 *       IB_SYNC_MEM_A_REGION_ACCESS: NLA_U32, IB_SYNC_MEM_REGION_F_*
 *    IB_SYNC_MEM_A_DMABUF: NLA_NESTED, a dma-buf client (required for that
 *    kind): the buffer is referenced, attached to the device's DMA device
 *    and mapped until the client is deleted:
 *       IB_SYNC_MEM_A_DMABUF_FD: NLA_S32, a dma-buf fd of the calling process
 *
 * Reply: the new client, as IB_SYNC_MEM_CMD_CLIENT_GET describes it. A
 * client whose reply cannot be delivered (the caller's receive buffer is
 * full) is deleted again: the caller, who never learnt its id, gets the
 * error. IB_SYNC_MEM_CLIENT_F_LAZY is taken by every kind (a lazy client
 * syncs only after IB_SYNC_MEM_CMD_MARK_DIRTY). Errors: -ENODEV no such
 * device, -EOPNOTSUPP kind not available (its
 * module is not loaded), -ENOSPC past the module's max_clients or
 * max_clients_per_dev (at most IB_SYNC_MEM_DEV_CLIENTS_MAX), -EINVAL bad
 * or missing attribute (an empty or over-long name too; for a region:
 * zero or too long, wrapping around, or not user memory),
 * -EFAULT region not mapped, -ENOMEM region
 * past RLIMIT_MEMLOCK, -EBADF not a dma-buf fd, -EPERM.
 *
 * IB_SYNC_MEM_CMD_CLIENT_DEL (CAP_NET_ADMIN)
 * ------------------------------------------
 *
 *    IB_SYNC_MEM_A_CLIENT_ID: NLA_U32 (required)
 *
 * Returns when the client is unregistered: none of its callbacks runs after.
 * Unregistering waits for the syncs in flight on the device (as long as
 * their timeouts); a caller killed meanwhile returns at once (-EINTR) and
 * the client is deleted all the same. Errors: -ENOENT no such client (or
 * being deleted), -EBUSY registered by a kernel driver, -EPERM.
 *
 * IB_SYNC_MEM_CMD_CLIENT_GET
 * --------------------------
 *
 * do: IB_SYNC_MEM_A_CLIENT_ID. dump: optional IB_SYNC_MEM_A_DEV_NAME or
 * IB_SYNC_MEM_A_DEV_INDEX restricts the dump to one device, optional
 * IB_SYNC_MEM_A_CLIENT_OWNER to one owner's clients (and
 * IB_SYNC_MEM_A_DUMP_END: see "Dumps"). Reply, per client:
 *
 *    IB_SYNC_MEM_A_CLIENT_ID: NLA_U32
 *    IB_SYNC_MEM_A_CLIENT_NAME: NLA_NUL_STRING
 *    IB_SYNC_MEM_A_CLIENT_OWNER: NLA_NUL_STRING, the in-kernel owner it is
 *       registered under: a driver's (ib_sync_mem_owner_create()), or that
 *       of the kind that made it ("region", "dma-buf", "sim"). Not the
 *       netlink socket that created it (OWNER_PORTID, OWNER_PID below).
 *    IB_SYNC_MEM_A_DEV_INDEX: NLA_U32
 *    IB_SYNC_MEM_A_DEV_NAME: NLA_NUL_STRING
 *    IB_SYNC_MEM_A_CLIENT_KIND: NLA_U32, enum ib_sync_mem_kind
 *    IB_SYNC_MEM_A_CLIENT_FLAGS: NLA_U32, IB_SYNC_MEM_CLIENT_F_*
 *    IB_SYNC_MEM_A_CLIENT_STATE: NLA_U32, enum ib_sync_mem_client_state
 *    IB_SYNC_MEM_A_CLIENT_INVAL_REASON: NLA_U32, enum ib_sync_mem_inval_reason,
 *       only when invalidated
 *    IB_SYNC_MEM_A_CLIENT_ORIGIN: NLA_U32, enum ib_sync_mem_origin
 *    IB_SYNC_MEM_A_CLIENT_SIZE: NLA_U64, bytes behind the client
 *    IB_SYNC_MEM_A_CLIENT_LAST_ERR: NLA_S32, 0 or the negative errno its last
 *       sync callback returned (a sync refused before the callback, e.g.
 *       -ENXIO of an invalidated client, does not change it)
 *    IB_SYNC_MEM_A_CLIENT_OWNER_PORTID: NLA_U32, netlink port of the creator
 *       (sensitive; origin netlink only)
 *    IB_SYNC_MEM_A_CLIENT_OWNER_PID: NLA_U32, pid of the creator, in the
 *       initial pid namespace (sensitive; origins netlink and device)
 *    IB_SYNC_MEM_A_STATS: NLA_NESTED, its counters (below, no histogram)
 *    IB_SYNC_MEM_A_CLIENT_PINNED_PAGES: NLA_U32, pages it keeps pinned
 *       (region clients; 0 once the invalidation has released them, a few
 *       milliseconds after the state turns invalidated)
 *    IB_SYNC_MEM_A_CLIENT_INFO: NLA_NESTED, kind-specific (sensitive):
 *       sim: IB_SYNC_MEM_A_SIM_* as above plus
 *          IB_SYNC_MEM_A_SIM_CALLS_TO_DEVICE, _TO_CPU, _BIDIRECTIONAL,
 *          _INBOUND: NLA_U64
 *       region: IB_SYNC_MEM_A_REGION_ADDR, _LEN, _ACCESS, and
 *          IB_SYNC_MEM_A_REGION_SEGMENTS: NLA_U32, DMA segments mapped
 *       dma-buf: IB_SYNC_MEM_A_DMABUF_SIZE: NLA_U64,
 *          IB_SYNC_MEM_A_DMABUF_EXPORTER: NLA_NUL_STRING, the exporter's
 *             name (e.g. "drm" for buffers of DRM drivers such as vgem),
 *          IB_SYNC_MEM_A_DMABUF_INODE: NLA_U64, the buffer's inode number
 *          (as in /proc/<pid>/fdinfo and /sys/kernel/debug/dma_buf/bufinfo)
 *
 * Errors: -ENOENT no such client or owner (dump filter), -ENODEV no such
 * device (dump filter).
 *
 * IB_SYNC_MEM_CMD_SYNC (CAP_NET_ADMIN)
 * ------------------------------------
 *
 * Exactly one target:
 *
 *    IB_SYNC_MEM_A_DEV_NAME or IB_SYNC_MEM_A_DEV_INDEX: every client of the
 *       device, in one pass (concurrent device-wide syncs share passes);
 *       with IB_SYNC_MEM_A_CLIENT_OWNER, only that owner's clients of the
 *       device, in a pass of its own (the reply counts and lists those)
 *    IB_SYNC_MEM_A_CLIENT_ID: one client
 *    IB_SYNC_MEM_A_SYNC_CLIENTS: NLA_NESTED, 1 to IB_SYNC_MEM_SYNC_BATCH_MAX
 *       IB_SYNC_MEM_A_BATCH_CLIENT_ID attributes (the number of
 *       IB_SYNC_MEM_A_CLIENT_ID): a batch, synced in that order
 *       (an id may repeat: it is synced that many times)
 *
 * and
 *
 *    IB_SYNC_MEM_A_SYNC_DIR: NLA_U32, enum ib_sync_mem_sync_dir (required)
 *    IB_SYNC_MEM_A_SYNC_TIMEOUT_MS: NLA_U32, bound on each client's waits,
 *       1..IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS; default: the module's
 *       sync_timeout_ms
 *    IB_SYNC_MEM_A_SYNC_OFFSET: NLA_U64, IB_SYNC_MEM_A_SYNC_LEN: NLA_U64,
 *       with IB_SYNC_MEM_A_CLIENT_ID only: sync the LEN bytes from OFFSET
 *       (default 0) of the client, not all of it (see "Ranges" below)
 *
 * The command succeeds when the sync ran, even if clients failed (also
 * with -ETIMEDOUT at the caller's timeout): read the results. An error of
 * the command means no sync ran for the caller. Unknown ids in a batch
 * reject the whole request before anything is synced. Reply:
 *
 *    IB_SYNC_MEM_A_SYNC_ERR: NLA_S32, first client error (a negative errno)
 *       or 0
 *    IB_SYNC_MEM_A_SYNC_RUN: NLA_U32, clients whose sync ran
 *    IB_SYNC_MEM_A_SYNC_ERRORS: NLA_U32, of them, how many failed
 *    IB_SYNC_MEM_A_SYNC_SKIPPED: NLA_U32, not run: lazy and clean, or
 *       invalidated or deleted (a batch's entry of such a client carries
 *       -ENXIO or -ENODEV as its result)
 *    IB_SYNC_MEM_A_SYNC_NS: NLA_U64, wall time of the sync in the kernel
 *    IB_SYNC_MEM_A_SYNC_RESULTS: NLA_NESTED, one or more (a nest holds at
 *    most 64 KiB, about 2,000 results; the next results follow in the next
 *    nest, in order), per client:
 *       IB_SYNC_MEM_A_SYNC_RESULT: NLA_NESTED
 *          IB_SYNC_MEM_A_CLIENT_ID: NLA_U32
 *          IB_SYNC_MEM_A_SYNC_ERR: NLA_S32, 0 or the client's errno
 *          IB_SYNC_MEM_A_SYNC_NS: NLA_U64, time in its sync callback
 *
 * The reply of a batch of IB_SYNC_MEM_SYNC_BATCH_MAX clients, or of a
 * device with IB_SYNC_MEM_DEV_CLIENTS_MAX, is about 64 KiB: one datagram,
 * well inside the default netlink receive buffer. A wait interrupted by a
 * signal is -EINTR (never a kernel-internal -ERESTART* value); a caller
 * killed while it waits for a pass returns at once.
 *
 * What a sync does per kind: a region syncs every DMA segment for the
 * direction (dma_sync_*_for_device / _for_cpu); a dma-buf waits, bounded by
 * the timeout, for its implicit fences (writers before the CPU reads, all
 * before the device writes: -ETIMEDOUT if they do not signal in time), then
 * brackets CPU access: to-cpu opens it (dma_buf_begin_cpu_access), to-device
 * closes it (dma_buf_end_cpu_access), bidirectional does both. A sync is
 * never a dma_fence itself. An invalidated client syncs to -ENXIO (its
 * memory is gone: unmapped, or its process exited) or -ENODEV (its device
 * is gone) until it is deleted.
 *
 * For a device-wide sync the results list the clients the serving pass ran,
 * each with its result in that pass (a sync of the client alone meanwhile
 * does not change it); a client synced again by a later pass on the same
 * CPU before the reply was built is left out. Errors: -ENODEV no such device or it went
 * away, -ENOENT unknown client id or owner, -ENXIO a single client whose
 * memory is gone, -ETIMEDOUT waited past the timeout for a pass, -EINTR
 * killed while waiting, -EINVAL (a batch past IB_SYNC_MEM_SYNC_BATCH_MAX,
 * an owner without a device, a range without one client, a bad range, too),
 * -ERANGE a range outside the client, -EOPNOTSUPP an inbound sync of one
 * client whose kind cannot flush inbound, -EPERM.
 *
 * Ranges: a range must lie inside the client (-ERANGE otherwise), have a
 * length (LEN 1 or more: 0 is -ERANGE) and start and end on the
 * client's range alignment if its kind has one (-EINVAL; a sim client's is
 * 64 bytes, a cache line). OFFSET counts from the client's first byte (a
 * region's ADDR, wherever in its page that is). A kind that syncs ranges
 * (region, sim) syncs only those bytes, and its byte counters count them;
 * another syncs the whole client (and counts it all). A range sync runs
 * whatever the client's laziness: its caller says what was written. An
 * inbound flush makes every write the NIC completed visible, whatever the
 * range. One rule here and in the ioctls of linux/ib_sync_mem_dev.h: no
 * length means the whole client, and an offset needs a length (-EINVAL);
 * here no length is LEN absent (OFFSET absent too), there it is len 0
 * (offset 0 too).
 *
 * IB_SYNC_MEM_CMD_MARK_DIRTY (CAP_NET_ADMIN)
 * ------------------------------------------
 *
 *    IB_SYNC_MEM_A_CLIENT_ID: NLA_U32, a lazy client (required)
 *    IB_SYNC_MEM_A_SYNC_DIR: NLA_U32, the sync now owed (required):
 *       to-device when the CPU wrote, to-cpu when the device wrote,
 *       inbound when the NIC wrote, bidirectional for both of the first two
 *    IB_SYNC_MEM_A_SYNC_OFFSET, IB_SYNC_MEM_A_SYNC_LEN: the bytes written
 *       (optional, as for a sync; default: all of the client)
 *
 * The next sync of the client in a direction that covers the mark runs its
 * callback, and, for a kind that syncs ranges, only over the bytes marked
 * since its last sync that way (at most 4 spans per direction: more are
 * merged, nearest first). No reply beyond the ack. Errors: -ENOENT unknown
 * client, -EINVAL a client that is not lazy (a mark would mean nothing) or
 * a bad range, -ERANGE a range outside the client, -ENXIO or -ENODEV an
 * invalidated client, -EPERM.
 *
 * IB_SYNC_MEM_CMD_STATS_GET
 * -------------------------
 *
 * do: IB_SYNC_MEM_A_CLIENT_ID for a client, IB_SYNC_MEM_A_DEV_NAME or
 * IB_SYNC_MEM_A_DEV_INDEX for a device, neither for the whole module.
 * Reply: the same selector attributes, then
 *
 *    IB_SYNC_MEM_A_STATS: NLA_NESTED
 *       IB_SYNC_MEM_A_STATS_SYNCS: NLA_U64, sync callbacks run
 *       IB_SYNC_MEM_A_STATS_ERRORS: NLA_U64, of them failed
 *       IB_SYNC_MEM_A_STATS_NS: NLA_U64, total time in sync callbacks
 *       IB_SYNC_MEM_A_STATS_MAX_NS: NLA_U64, longest sync callback
 *       IB_SYNC_MEM_A_STATS_BYTES: NLA_U64, bytes made coherent
 *       IB_SYNC_MEM_A_STATS_HIST: NLA_NESTED, log2 histogram of sync
 *          callback times, non-empty slots only:
 *          IB_SYNC_MEM_A_HIST_SLOT: NLA_NESTED
 *             IB_SYNC_MEM_A_HIST_LOG2: NLA_U32, slot i counts times t with
 *                2^i <= t < 2^(i+1) ns (slot 0: also t = 0; the last slot,
 *                31, every t >= 2^31 ns): the buckets of the libbpf-tools
 *             IB_SYNC_MEM_A_HIST_COUNT: NLA_U64
 *
 * Module-wide and device stats also carry IB_SYNC_MEM_A_STATS_CLIENTS:
 * NLA_U32, clients registered. Errors: -ENOENT, -ENODEV.
 *
 * Dumps
 * -----
 *
 * A dump runs in rounds, one per datagram, and clients or devices may come
 * and go between and during them. Every message of a CLIENT_GET or DEV_GET
 * dump carries
 *
 *    IB_SYNC_MEM_A_GENERATION: NLA_U32, the registry's generation when the
 *       round that produced the message began: a counter of the changes
 *       dumps list (clients and devices registered, deleted, invalidated)
 *
 * and a request with IB_SYNC_MEM_A_DUMP_END (NLA_FLAG) gets one more message
 * at the end of the dump, after every client or device, with the command of
 * the dump and only
 *
 *    IB_SYNC_MEM_A_DUMP_END: NLA_FLAG, marks the end message
 *    IB_SYNC_MEM_A_GENERATION: NLA_U32, as in every message
 *    IB_SYNC_MEM_A_END_GENERATION: NLA_U32, the generation once the dump
 *       had seen everything
 *
 * The dump shows a state the registry was in when every GENERATION equals
 * the END_GENERATION; otherwise it may not (it may show a client that was
 * gone before another one it leaves out went), and the caller should run
 * it again. The kernel also sets NLM_F_DUMP_INTR on a message of a round
 * that began at another generation than the one before, but for a dump that
 * fits one datagram only NLMSG_DONE can carry it, which libraries drop.
 *
 * Events (multicast group "events")
 * ---------------------------------
 *
 *    IB_SYNC_MEM_CMD_CLIENT_NEW: a client was registered (any origin); the
 *       attributes of IB_SYNC_MEM_CMD_CLIENT_GET without the sensitive ones,
 *       IB_SYNC_MEM_A_CLIENT_ORIGIN and IB_SYNC_MEM_A_STATS
 *    IB_SYNC_MEM_CMD_CLIENT_DEL: a client was unregistered: CLIENT_ID,
 *       CLIENT_NAME, DEV_INDEX, DEV_NAME
 *    IB_SYNC_MEM_CMD_CLIENT_INVALIDATED: as CLIENT_DEL plus
 *       IB_SYNC_MEM_A_CLIENT_INVAL_REASON
 *    IB_SYNC_MEM_CMD_DEV_NEW, IB_SYNC_MEM_CMD_DEV_DEL: a device was
 *       attached or removed: DEV_INDEX, DEV_NAME
 *    IB_SYNC_MEM_CMD_SYNC_FAILED: a client's sync failed: CLIENT_ID,
 *       DEV_INDEX, DEV_NAME, IB_SYNC_MEM_A_SYNC_DIR, IB_SYNC_MEM_A_SYNC_ERR.
 *       Rate-limited to a burst of 10 per 5 s; the rest are dropped.
 */
#ifndef _UAPI_LINUX_IB_SYNC_MEM_H
#define _UAPI_LINUX_IB_SYNC_MEM_H

#define IB_SYNC_MEM_GENL_NAME		"ib_sync_mem"
#define IB_SYNC_MEM_GENL_VERSION	1
#define IB_SYNC_MEM_GENL_MCGRP_EVENTS	"events"

#define IB_SYNC_MEM_NAME_LEN		32	/* with the NUL */

/* Most clients one IB_SYNC_MEM_A_SYNC_CLIENTS batch may name. */
#define IB_SYNC_MEM_SYNC_BATCH_MAX	2048
/* Most clients one device may have (the module's max_clients_per_dev). */
#define IB_SYNC_MEM_DEV_CLIENTS_MAX	2048
/*
 * The longest timeout a sync may be given, in ms (IB_SYNC_MEM_A_SYNC_TIMEOUT_MS,
 * and the timeout_ms of the /dev/ib_sync_mem ioctls).
 */
#define IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS	600000

enum ib_sync_mem_cmd {
	IB_SYNC_MEM_CMD_UNSPEC,
	IB_SYNC_MEM_CMD_DEV_GET,
	IB_SYNC_MEM_CMD_CLIENT_NEW,
	IB_SYNC_MEM_CMD_CLIENT_DEL,
	IB_SYNC_MEM_CMD_CLIENT_GET,
	IB_SYNC_MEM_CMD_SYNC,
	IB_SYNC_MEM_CMD_STATS_GET,
	IB_SYNC_MEM_CMD_CLIENT_INVALIDATED,	/* event only */
	IB_SYNC_MEM_CMD_DEV_NEW,		/* event only */
	IB_SYNC_MEM_CMD_DEV_DEL,		/* event only */
	IB_SYNC_MEM_CMD_SYNC_FAILED,		/* event only */
	IB_SYNC_MEM_CMD_MARK_DIRTY,

	__IB_SYNC_MEM_CMD_MAX,
	IB_SYNC_MEM_CMD_MAX = __IB_SYNC_MEM_CMD_MAX - 1
};

enum ib_sync_mem_attr {
	IB_SYNC_MEM_A_UNSPEC,
	IB_SYNC_MEM_A_PAD,
	IB_SYNC_MEM_A_DEV_INDEX,
	IB_SYNC_MEM_A_DEV_NAME,
	IB_SYNC_MEM_A_DEV_CLIENTS,
	IB_SYNC_MEM_A_DEV_PASSES,
	IB_SYNC_MEM_A_CLIENT_ID,
	IB_SYNC_MEM_A_CLIENT_NAME,
	IB_SYNC_MEM_A_CLIENT_KIND,
	IB_SYNC_MEM_A_CLIENT_FLAGS,
	IB_SYNC_MEM_A_CLIENT_STATE,
	IB_SYNC_MEM_A_CLIENT_INVAL_REASON,
	IB_SYNC_MEM_A_CLIENT_ORIGIN,
	IB_SYNC_MEM_A_CLIENT_SIZE,
	IB_SYNC_MEM_A_CLIENT_LAST_ERR,
	IB_SYNC_MEM_A_CLIENT_OWNER_PORTID,
	IB_SYNC_MEM_A_CLIENT_OWNER_PID,
	IB_SYNC_MEM_A_CLIENT_INFO,
	IB_SYNC_MEM_A_SIM,
	IB_SYNC_MEM_A_SYNC_DIR,
	IB_SYNC_MEM_A_SYNC_TIMEOUT_MS,
	IB_SYNC_MEM_A_SYNC_CLIENTS,
	IB_SYNC_MEM_A_SYNC_ERR,
	IB_SYNC_MEM_A_SYNC_RUN,
	IB_SYNC_MEM_A_SYNC_ERRORS,
	IB_SYNC_MEM_A_SYNC_SKIPPED,
	IB_SYNC_MEM_A_SYNC_NS,
	IB_SYNC_MEM_A_SYNC_RESULTS,
	IB_SYNC_MEM_A_SYNC_RESULT,
	IB_SYNC_MEM_A_STATS,
	IB_SYNC_MEM_A_REGION,
	IB_SYNC_MEM_A_DMABUF,
	IB_SYNC_MEM_A_CLIENT_PINNED_PAGES,
	IB_SYNC_MEM_A_GENERATION,
	IB_SYNC_MEM_A_DUMP_END,
	IB_SYNC_MEM_A_END_GENERATION,
	IB_SYNC_MEM_A_CLIENT_OWNER,
	IB_SYNC_MEM_A_SYNC_OFFSET,
	IB_SYNC_MEM_A_SYNC_LEN,

	__IB_SYNC_MEM_A_MAX,
	IB_SYNC_MEM_A_MAX = __IB_SYNC_MEM_A_MAX - 1
};

/*
 * Inside IB_SYNC_MEM_A_SYNC_CLIENTS: the batch's client ids, one attribute
 * each. The number is IB_SYNC_MEM_A_CLIENT_ID's; the enum of its own lets
 * the YNL spec say that it repeats (its set sync-clients).
 */
enum ib_sync_mem_batch_attr {
	IB_SYNC_MEM_A_BATCH_CLIENT_ID = IB_SYNC_MEM_A_CLIENT_ID,

	__IB_SYNC_MEM_A_BATCH_MAX,
	IB_SYNC_MEM_A_BATCH_MAX = __IB_SYNC_MEM_A_BATCH_MAX - 1
};

/* Inside IB_SYNC_MEM_A_STATS. */
enum ib_sync_mem_stats_attr {
	IB_SYNC_MEM_A_STATS_UNSPEC,
	IB_SYNC_MEM_A_STATS_PAD,
	IB_SYNC_MEM_A_STATS_SYNCS,
	IB_SYNC_MEM_A_STATS_ERRORS,
	IB_SYNC_MEM_A_STATS_NS,
	IB_SYNC_MEM_A_STATS_MAX_NS,
	IB_SYNC_MEM_A_STATS_BYTES,
	IB_SYNC_MEM_A_STATS_HIST,
	IB_SYNC_MEM_A_STATS_CLIENTS,

	__IB_SYNC_MEM_A_STATS_MAX,
	IB_SYNC_MEM_A_STATS_MAX = __IB_SYNC_MEM_A_STATS_MAX - 1
};

/* Inside IB_SYNC_MEM_A_STATS_HIST: IB_SYNC_MEM_A_HIST_SLOT nests. */
enum ib_sync_mem_hist_attr {
	IB_SYNC_MEM_A_HIST_UNSPEC,
	IB_SYNC_MEM_A_HIST_PAD,
	IB_SYNC_MEM_A_HIST_SLOT,
	IB_SYNC_MEM_A_HIST_LOG2,
	IB_SYNC_MEM_A_HIST_COUNT,

	__IB_SYNC_MEM_A_HIST_MAX,
	IB_SYNC_MEM_A_HIST_MAX = __IB_SYNC_MEM_A_HIST_MAX - 1
};

/* Inside IB_SYNC_MEM_A_SIM and a sim client's IB_SYNC_MEM_A_CLIENT_INFO. */
enum ib_sync_mem_sim_attr {
	IB_SYNC_MEM_A_SIM_UNSPEC,
	IB_SYNC_MEM_A_SIM_PAD,
	IB_SYNC_MEM_A_SIM_LATENCY_US,
	IB_SYNC_MEM_A_SIM_FAIL_NEXT,
	IB_SYNC_MEM_A_SIM_FAIL_ERRNO,
	IB_SYNC_MEM_A_SIM_SIZE,
	IB_SYNC_MEM_A_SIM_BATCH,
	IB_SYNC_MEM_A_SIM_CALLS_TO_DEVICE,
	IB_SYNC_MEM_A_SIM_CALLS_TO_CPU,
	IB_SYNC_MEM_A_SIM_CALLS_BIDIRECTIONAL,
	IB_SYNC_MEM_A_SIM_CALLS_INBOUND,
	IB_SYNC_MEM_A_SIM_ADDR,

	__IB_SYNC_MEM_A_SIM_MAX,
	IB_SYNC_MEM_A_SIM_MAX = __IB_SYNC_MEM_A_SIM_MAX - 1
};

/* Inside IB_SYNC_MEM_A_REGION and a region client's IB_SYNC_MEM_A_CLIENT_INFO. */
enum ib_sync_mem_region_attr {
	IB_SYNC_MEM_A_REGION_UNSPEC,
	IB_SYNC_MEM_A_REGION_PAD,
	IB_SYNC_MEM_A_REGION_ADDR,
	IB_SYNC_MEM_A_REGION_LEN,
	IB_SYNC_MEM_A_REGION_ACCESS,
	IB_SYNC_MEM_A_REGION_SEGMENTS,

	__IB_SYNC_MEM_A_REGION_MAX,
	IB_SYNC_MEM_A_REGION_MAX = __IB_SYNC_MEM_A_REGION_MAX - 1
};

/*
 * IB_SYNC_MEM_A_REGION_ACCESS. Without IB_SYNC_MEM_REGION_F_WRITE the pages
 * are pinned for reading and the device only reads them: a to-cpu,
 * bidirectional or inbound sync of such a region fails with EACCES.
 */
#define IB_SYNC_MEM_REGION_F_WRITE	(1U << 0)	/* the device writes it */

/* Inside IB_SYNC_MEM_A_DMABUF and a dma-buf client's IB_SYNC_MEM_A_CLIENT_INFO. */
enum ib_sync_mem_dmabuf_attr {
	IB_SYNC_MEM_A_DMABUF_UNSPEC,
	IB_SYNC_MEM_A_DMABUF_PAD,
	IB_SYNC_MEM_A_DMABUF_FD,
	IB_SYNC_MEM_A_DMABUF_SIZE,
	IB_SYNC_MEM_A_DMABUF_EXPORTER,
	IB_SYNC_MEM_A_DMABUF_INODE,

	__IB_SYNC_MEM_A_DMABUF_MAX,
	IB_SYNC_MEM_A_DMABUF_MAX = __IB_SYNC_MEM_A_DMABUF_MAX - 1
};

/*
 * IB_SYNC_MEM_A_SYNC_DIR; the same numbers as enum ib_sync_mem_dir.
 * Inbound: the NIC wrote the memory (an RDMA WRITE or a READ's response
 * landed, its completion arrived); the accelerator or the CPU reads next.
 * It makes the NIC's writes visible there: the client's own flush (an
 * accelerator's HDP-style flush), or the module's read-back through the
 * NIC (an RDMA READ of a few bytes of the memory on a kernel QP in
 * loopback, ordered behind the NIC's earlier writes). A client that can do
 * neither fails it with EOPNOTSUPP. Bidirectional does not include it.
 */
enum ib_sync_mem_sync_dir {
	IB_SYNC_MEM_SYNC_TO_DEVICE = 1,
	IB_SYNC_MEM_SYNC_TO_CPU = 2,
	IB_SYNC_MEM_SYNC_BIDIRECTIONAL = 3,
	IB_SYNC_MEM_SYNC_INBOUND = 4,
};

/*
 * IB_SYNC_MEM_A_CLIENT_KIND. New kinds get new numbers; a kind whose module
 * is not loaded is refused with -EOPNOTSUPP. IB_SYNC_MEM_KIND_KERNEL is what
 * clients registered by kernel drivers report; it cannot be created.
 */
enum ib_sync_mem_kind {
	IB_SYNC_MEM_KIND_KERNEL = 0,
	IB_SYNC_MEM_KIND_SIM = 1,	/* ib_sync_mem_sim: a simulated accelerator */
	IB_SYNC_MEM_KIND_REGION = 2,	/* pinned memory of the calling process */
	IB_SYNC_MEM_KIND_DMABUF = 3,	/* a dma-buf */
};

/* IB_SYNC_MEM_A_CLIENT_FLAGS */
#define IB_SYNC_MEM_CLIENT_F_LAZY	(1U << 0)	/* sync only when dirty */
#define IB_SYNC_MEM_CLIENT_F_OWNED	(1U << 1)	/* dies with its socket */
/* dies with the /dev/ib_sync_mem file that took it over (IB_SYNC_MEM_IOC_OWN) */
#define IB_SYNC_MEM_CLIENT_F_FILE	(1U << 2)

/* IB_SYNC_MEM_A_CLIENT_STATE */
enum ib_sync_mem_client_state {
	IB_SYNC_MEM_CLIENT_LIVE = 1,
	IB_SYNC_MEM_CLIENT_INVALIDATED = 2,
};

/* IB_SYNC_MEM_A_CLIENT_INVAL_REASON; the same numbers as the kernel API. */
enum ib_sync_mem_inval_reason {
	IB_SYNC_MEM_INVAL_REASON_DEVICE = 1,	/* its device went away */
	IB_SYNC_MEM_INVAL_REASON_MEMORY = 2,	/* its memory went away */
};

/* IB_SYNC_MEM_A_CLIENT_ORIGIN */
enum ib_sync_mem_origin {
	IB_SYNC_MEM_ORIGIN_KERNEL = 1,	/* registered by a kernel driver */
	IB_SYNC_MEM_ORIGIN_NETLINK = 2,	/* IB_SYNC_MEM_CMD_CLIENT_NEW */
	IB_SYNC_MEM_ORIGIN_DEVICE = 3,	/* IB_SYNC_MEM_IOC_CREATE */
};

#endif /* _UAPI_LINUX_IB_SYNC_MEM_H */
