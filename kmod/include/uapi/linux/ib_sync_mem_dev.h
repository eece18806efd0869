/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * ib_sync_mem's data path: /dev/ib_sync_mem, a misc character device.
 *
 * The generic netlink family (linux/ib_sync_mem.h) creates, lists and
 * deletes clients; this device syncs them from a program's hot path, and
 * carries what netlink cannot: dma_fences, as sync_file file descriptors.
 * A program may also create clients here that die with its file
 * (IB_SYNC_MEM_IOC_CREATE), with no netlink socket at all.
 * It knows the same client ids, directions and device indexes as the
 * family.
 *
 * The node: the module registers the misc device "ib_sync_mem"; devtmpfs
 * creates /dev/ib_sync_mem, mode 0666, owned by root (the packaging's udev
 * rule says the same), as rdma-core's rules make /dev/infiniband/uverbs*:
 * anyone may open it, and each ioctl decides what the file reaches.
 *
 * Permissions are the opener's, judged once, when the file is opened (as
 * file_ns_capable() would judge them): a file is privileged if the task
 * that opened it had CAP_NET_ADMIN in the initial user namespace (the
 * rule of the family's mutating commands), unprivileged otherwise.
 *
 *  - A privileged file reaches every client by id, syncs whole devices
 *    (IB_SYNC_MEM_IOC_SYNC_DEV) and takes clients over (IB_SYNC_MEM_IOC_OWN).
 *  - An unprivileged file reaches only the clients it owns: those it
 *    created (IB_SYNC_MEM_IOC_CREATE) and none other. For SYNC (blocking,
 *    ranged, inbound or asynchronous), SYNC_BATCH, MARK_DIRTY and DELETE
 *    any other id (another file's client, even of the same program or
 *    user; one created through the family; a kernel driver's) is -ENOENT,
 *    exactly as an id that does not exist: its existence is not
 *    confirmed. SYNC_DEV and OWN are -EPERM, whatever they name. CREATE
 *    makes only clients of the kinds that allow it (region clients over
 *    the caller's own pages, dma-buf clients of a dma-buf fd the caller
 *    holds; another kind is -EPERM, "client kind needs CAP_NET_ADMIN"),
 *    at most max_clients_per_user (a parameter of the module, default
 *    256) per device for each user, counted on the real uid of the
 *    opener across all of that user's unprivileged files: one more is
 *    -EMFILE, with the reason "per-user client limit of the device
 *    reached (max_clients_per_user)" in the request's msg (an ioctl has
 *    no extended ack). The place is given back when the client goes
 *    (IB_SYNC_MEM_IOC_DELETE, the file's release, the family's
 *    CLIENT_DEL, its device's removal, the module's unload). A privileged
 *    file's clients are not counted: its opener may create any number
 *    through the family anyway (the family's own limits, max_clients and
 *    max_clients_per_dev, hold for both: -ENOSPC).
 *  - IB_SYNC_MEM_IOC_NOP is open to every file.
 *
 * A region's pages are pinned by ib_umem_get(), which charges them to the
 * calling process's mm (pinned_vm, VmPin in /proc/PID/status) and refuses
 * them past its RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK: CREATE is then
 * -ENOMEM, "region exceeds RLIMIT_MEMLOCK". The charge is given back when
 * the client goes. It is judged on the calling process alone, whatever
 * the file's privilege: CAP_NET_ADMIN is not CAP_IPC_LOCK.
 *
 * A file descriptor passed to another process (SCM_RIGHTS, fork, pidfd_getfd)
 * carries the opener's rights and its clients, as a uverbs fd does: its
 * holder may do whatever the opener could through it (a privileged
 * opener's fd lets an unprivileged holder sync any client), and reaches
 * the clients the file owns, wherever they were created. Memory is
 * always the calling process's: a region CREATE'd by the holder pins the
 * holder's pages and charges its RLIMIT_MEMLOCK, while the file's place
 * under max_clients_per_user stays the opener's uid. The clients live as
 * long as the file: until its last descriptor, in any process, is closed.
 * Pass a file only to a process you would let do all of that.
 *
 * Fences: IB_SYNC_MEM_IOC_F_ASYNC returns at once with a new sync_file fd
 * (O_CLOEXEC) in out_fence; its fence signals when the sync completed,
 * with the sync's error as its status (SYNC_IOC_FILE_INFO's status: 1
 * signalled without error, a negative errno otherwise, 0 while pending).
 * poll() on it works as for every sync_file. Each fence signals exactly
 * once, whatever happens: a client deleted (-ENODEV) or invalidated
 * meanwhile (-ENXIO for its memory gone, -ENODEV for its device), a
 * client deleted or invalidated, or a device removed, while the sync
 * waited for its in-fence or, for a dma-buf client, for the fences its
 * buffer's reservation held when the sync was asked for (that errno at
 * once, not when those fences signal; a batch's by any of its clients or
 * their devices, and none of its entries is synced), an in-fence that
 * signalled with an error (that error, and no sync runs; the errors of a
 * reservation's fences are not the sync's, as for a blocking sync). An
 * asynchronous sync of dma-buf clients (one, or a batch) waits for their
 * reservations' fences, as they are when it is asked for, before it runs,
 * as it waits for an in-fence: no kernel thread is held meanwhile. Once
 * it runs, a sync ends within its timeout whatever it waits for: one that
 * waits for its own fence (imported into the dma-buf it syncs) ends with
 * -ETIMEDOUT. Closing /dev/ib_sync_mem or the
 * sync_file, or the death of the program, does not cancel a sync (it may
 * delete the client, IB_SYNC_MEM_IOC_OWN: then -ENODEV). A fence
 * keeps the module loaded until its last reference is gone.
 * IB_SYNC_MEM_IOC_F_IN_FENCE makes the sync wait for a sync_file first
 * (without it in_fence is ignored): a blocking sync waits, killable and
 * bounded by its timeout; an asynchronous one returns at once.
 *
 * Errors (negative errno from ioctl()): -EINVAL for a bad direction,
 * flags, timeout_ms or reserved field, or an in_fence that is not a
 * sync_file;
 * -EBADF for an in_fence that is not an open fd; -ENOENT for an unknown
 * client id or one out of an unprivileged file's reach, -EPERM for what
 * needs a privileged file (above), -ENODEV for an unknown device index
 * (as the family's);
 * -EINVAL or -ERANGE for a bad range (as the family's); -ENOTTY for an
 * unknown ioctl. A blocking sync returns its
 * client's result as the family's IB_SYNC_MEM_CMD_SYNC does (-ETIMEDOUT,
 * -EIO, ...).
 */
#ifndef _UAPI_LINUX_IB_SYNC_MEM_DEV_H
#define _UAPI_LINUX_IB_SYNC_MEM_DEV_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define IB_SYNC_MEM_DEV_NAME	"ib_sync_mem"

/* ioctl flags (struct ib_sync_mem_ioc_sync.flags, _sync_dev.flags) */
#define IB_SYNC_MEM_IOC_F_ASYNC		(1U << 0)	/* out_fence, no wait */
#define IB_SYNC_MEM_IOC_F_IN_FENCE	(1U << 1)	/* wait for in_fence */
#define IB_SYNC_MEM_IOC_F_ALL		(IB_SYNC_MEM_IOC_F_ASYNC | \
					 IB_SYNC_MEM_IOC_F_IN_FENCE)

/**
 * struct ib_sync_mem_ioc_sync - IB_SYNC_MEM_IOC_SYNC: one client
 * @id: the client (IB_SYNC_MEM_A_CLIENT_ID)
 * @dir: enum ib_sync_mem_sync_dir
 * @offset: with @len, sync [@offset, @offset + @len) only; 0 without
 *	(-EINVAL otherwise: the family's rule for ranges)
 * @len: 0 for the whole client
 * @flags: IB_SYNC_MEM_IOC_F_*
 * @timeout_ms: the client's ->sync deadline from when it begins, 1 to
 *	IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS (linux/ib_sync_mem.h; more is
 *	-EINVAL); 0 for the module's sync_timeout_ms
 * @in_fence: with IB_SYNC_MEM_IOC_F_IN_FENCE, a sync_file fd
 * @out_fence: set with IB_SYNC_MEM_IOC_F_ASYNC: a new sync_file fd
 */
struct ib_sync_mem_ioc_sync {
	__u32 id;
	__u32 dir;
	__u64 offset;
	__u64 len;
	__u32 flags;
	__u32 timeout_ms;
	__s32 in_fence;
	__s32 out_fence;
};

/**
 * struct ib_sync_mem_ioc_sync_dev - IB_SYNC_MEM_IOC_SYNC_DEV: one device,
 *	every client of it (a privileged file's ioctl: -EPERM otherwise)
 * @dev_index: the device (IB_SYNC_MEM_A_DEV_INDEX)
 * @dir: enum ib_sync_mem_sync_dir
 * @flags: IB_SYNC_MEM_IOC_F_*
 * @timeout_ms: as in struct ib_sync_mem_ioc_sync
 * @in_fence: as in struct ib_sync_mem_ioc_sync
 * @out_fence: as in struct ib_sync_mem_ioc_sync
 * @clients: set by a blocking sync: clients whose ->sync ran in its pass
 * @errors: set likewise: how many of them failed
 * @skipped: set likewise: clients not run (lazy and clean, invalidated)
 * @err: set likewise: the pass's first client error, 0 if none (the
 *	ioctl itself then returns 0: a client's error is a result)
 * @pass: set likewise: the pass's id
 */
struct ib_sync_mem_ioc_sync_dev {
	__u32 dev_index;
	__u32 dir;
	__u32 flags;
	__u32 timeout_ms;
	__s32 in_fence;
	__s32 out_fence;
	__u32 clients;
	__u32 errors;
	__u32 skipped;
	__s32 err;
	__u64 pass;
};

/**
 * struct ib_sync_mem_ioc_entry - one client of IB_SYNC_MEM_IOC_SYNC_BATCH
 * @id: the client
 * @err: set by a blocking batch: its result, 0 or a negative errno
 * @offset: with @len, sync [@offset, @offset + @len) of it only
 * @len: 0 for the whole client
 */
struct ib_sync_mem_ioc_entry {
	__u32 id;
	__s32 err;
	__u64 offset;
	__u64 len;
};

/**
 * struct ib_sync_mem_ioc_sync_batch - IB_SYNC_MEM_IOC_SYNC_BATCH: clients
 *	in the order given, as the family's batch
 * @entries: user pointer to @n struct ib_sync_mem_ioc_entry
 * @n: 1 to IB_SYNC_MEM_SYNC_BATCH_MAX (linux/ib_sync_mem.h; an id may
 *	repeat)
 * @dir: enum ib_sync_mem_sync_dir
 * @flags: IB_SYNC_MEM_IOC_F_*
 * @timeout_ms: as in struct ib_sync_mem_ioc_sync, for each client
 * @in_fence: as in struct ib_sync_mem_ioc_sync
 * @out_fence: as in struct ib_sync_mem_ioc_sync; its fence's status is
 *	the first entry's error (in the batch's order), 1 if none failed.
 *	An asynchronous batch that waits for its in-fence (or its dma-buf
 *	clients' fences) ends at once with -ENODEV when the device of any
 *	of its clients is removed, and none of its entries is synced (the
 *	Fences paragraph above); once it runs, a client whose device went
 *	fails with -ENODEV.
 * @run: set by a blocking batch: entries whose ->sync ran
 * @errors: set likewise: entries that failed (each entry's @err says
 *	how; the ioctl returns 0: a client's error is a result)
 *
 * An unknown id fails the whole request with -ENOENT, nothing run.
 */
struct ib_sync_mem_ioc_sync_batch {
	__u64 entries;
	__u32 n;
	__u32 dir;
	__u32 flags;
	__u32 timeout_ms;
	__s32 in_fence;
	__s32 out_fence;
	__u32 run;
	__u32 errors;
};

/**
 * struct ib_sync_mem_ioc_mark - IB_SYNC_MEM_IOC_MARK_DIRTY
 * @id: a lazy client (IB_SYNC_MEM_CLIENT_F_LAZY; another is -EINVAL)
 * @dir: the direction of the sync now owed
 * @offset: with @len, the span written
 * @len: 0 for the whole client
 */
struct ib_sync_mem_ioc_mark {
	__u32 id;
	__u32 dir;
	__u64 offset;
	__u64 len;
};

/**
 * struct ib_sync_mem_ioc_own - IB_SYNC_MEM_IOC_OWN: this file takes a
 *	client over
 * @id: a client created through the family (IB_SYNC_MEM_CMD_CLIENT_NEW)
 * @flags: 0
 *
 * The client is deleted when the open file is released (its last fd
 * closed, also at the death of the program), after its syncs in flight,
 * before that close returns; its fences still signal (-ENODEV). It shows
 * IB_SYNC_MEM_CLIENT_F_FILE. A client its socket owned
 * (IB_SYNC_MEM_CLIENT_F_OWNED) no longer dies with that socket. Taking
 * over a client the file owns already does nothing. A privileged file's
 * ioctl (an unprivileged one's is -EPERM). Errors: -ENOENT for an unknown
 * client or one being deleted, -EPERM for a kernel driver's client,
 * -EBUSY for one another open file owns, -EINVAL for flags.
 */
struct ib_sync_mem_ioc_own {
	__u32 id;
	__u32 flags;
};

/* The most bytes of attributes IB_SYNC_MEM_IOC_CREATE takes. */
#define IB_SYNC_MEM_IOC_ATTRS_MAX	4096

/**
 * struct ib_sync_mem_ioc_create - IB_SYNC_MEM_IOC_CREATE: a client this
 *	file owns
 * @attrs: user pointer to the attributes of the family's
 *	IB_SYNC_MEM_CMD_CLIENT_NEW (linux/ib_sync_mem.h), laid out as in its
 *	message after the genetlink header: struct nlattr each, NLA_ALIGNed.
 *	The family's policy validates them, strictly; the kinds read them
 *	as from CLIENT_NEW.
 * @attrs_len: their length in bytes, 1 to IB_SYNC_MEM_IOC_ATTRS_MAX (0 is
 *	-EINVAL, more -E2BIG)
 * @flags: 0
 * @msg: 0, or a user pointer to @msg_len bytes that a failure (once the
 *	request itself was read) fills with its reason, cut to fit and
 *	NUL-terminated (what CLIENT_NEW's extended ack says); an empty
 *	string when there is none. Success leaves it as it was.
 * @msg_len: the size of @msg's buffer
 * @id: set on success: the new client's id (IB_SYNC_MEM_A_CLIENT_ID)
 *
 * The client is registered as CLIENT_NEW would register it, with
 * IB_SYNC_MEM_ORIGIN_DEVICE and IB_SYNC_MEM_CLIENT_F_FILE: the file owns
 * it, as after IB_SYNC_MEM_IOC_OWN (deleted when the file is released;
 * the family's CLIENT_DEL deletes it too). Memory a kind takes from the
 * caller (a region's pages, a dma-buf fd) is the calling process's; a
 * region is any bytes of it, at any address (CLIENT_NEW's
 * IB_SYNC_MEM_A_REGION). Offsets of the sync and mark ioctls count from
 * the client's first byte.
 * Errors: CLIENT_NEW's (-EINVAL for a missing or malformed attribute,
 * -EOPNOTSUPP for a kind not loaded, -ENODEV, -ENOSPC, -ENOMEM past
 * RLIMIT_MEMLOCK, ...); from an unprivileged file, -EPERM for a kind that
 * needs a privileged one and -EMFILE past max_clients_per_user (checked in
 * that order, after the kind and device are known and before the kind
 * reads its own attributes); and -EINVAL
 * for IB_SYNC_MEM_CLIENT_F_OWNED (a socket's ownership: the file owns it)
 * or a flag, -EINVAL for an @attrs_len of 0 and -E2BIG for one past
 * IB_SYNC_MEM_IOC_ATTRS_MAX, -EFAULT for @attrs, @msg or the
 * request (no client is left: one whose @id cannot be written is deleted).
 */
struct ib_sync_mem_ioc_create {
	__u64 attrs;
	__u32 attrs_len;
	__u32 flags;
	__u64 msg;
	__u32 msg_len;
	__u32 id;
};

/**
 * struct ib_sync_mem_ioc_delete - IB_SYNC_MEM_IOC_DELETE: delete a client
 *	this file owns
 * @id: a client the file created (IB_SYNC_MEM_IOC_CREATE) or took over
 *	(IB_SYNC_MEM_IOC_OWN)
 * @flags: 0
 *
 * Deletes it as the file's release would: unregistered, after the syncs
 * in flight on it (each ends within its own timeout), its memory let go
 * of (a region's pages unpinned and their RLIMIT_MEMLOCK charge given
 * back) and its place under max_clients_per_user given back, all before
 * the ioctl returns; its pending fences signal (-ENODEV). The wait can be
 * killed (-EINTR): the client still goes, soon after. Errors: -ENOENT for
 * any id the file does not own (another file's client, one created
 * through the family, a kernel driver's, one being deleted, an unknown
 * one: the same errno whoever opened the file; the family's CLIENT_DEL
 * deletes the others), -EINVAL for @flags.
 */
struct ib_sync_mem_ioc_delete {
	__u32 id;
	__u32 flags;
};

/*
 * io_uring: completions without an fd per sync.
 *
 * IORING_OP_URING_CMD on an open /dev/ib_sync_mem (sqe->fd, or a
 * registered file with IOSQE_FIXED_FILE) syncs one client or a batch and
 * posts the result in the ring's completion queue: no sync_file, no fd,
 * no poll per sync, any number in flight (the ring's size bounds what one
 * io_uring_enter() submits, not what is pending), reaped in bulk. The
 * sync_file path (IB_SYNC_MEM_IOC_F_ASYNC) stays for fences that go to
 * other drivers.
 *
 * The ring must be set up with IORING_SETUP_SQE128: the command's payload
 * is the struct its sqe->cmd_op names, at the start of sqe->cmd (80 bytes
 * there; a 64-byte SQE has 16), the rest of the 80 bytes ignored. The
 * SQE's other fields are io_uring's: user_data comes back in the CQE;
 * sqe->uring_cmd_flags and the fields io_uring_cmd_prep() checks must be
 * 0 (io_uring's own -EINVAL). IORING_SETUP_IOPOLL rings are refused by
 * io_uring (-EOPNOTSUPP: no polled completion here). CQE32 rings work;
 * big_cqe[0] is then 0.
 *
 * A sync of one client that waits for nothing but the NIC runs when the
 * command is issued, in io_uring_enter() itself, as the blocking
 * IB_SYNC_MEM_IOC_SYNC runs it: a region client (IB_SYNC_MEM_KIND_REGION:
 * its sync is cache maintenance, no wait; also a kernel driver's client
 * declared safe to sync inside a fence's signalling path,
 * rdma/ib_sync_mem.h's IB_SYNC_MEM_F_FENCE_SAFE), without
 * IB_SYNC_MEM_IOC_F_IN_FENCE, inbound flushes included: the issuing
 * io_uring_enter() then waits for the module's RDMA READ, one round trip
 * on the NIC, as the ioctl does (at most the command's timeout_ms; with
 * IORING_SETUP_SQPOLL the ring's SQ thread waits, not the program). Its
 * CQE is posted before the io_uring_enter() that issues it returns (the
 * submitting one, unless io_uring issues it later: see below), and it
 * costs no job, worker or fence; it is never -ECANCELED. Every other
 * command (a batch, another kind's client, one with an in-fence) is an
 * asynchronous sync, completed later.
 *
 * The payload is read once, when the command is issued; the entries of a
 * batch too, from user memory (@entries): keep them valid until the
 * command's CQE (io_uring may issue a command after io_uring_enter()
 * returned: IOSQE_ASYNC, links, a full io-wq). Nothing is written back
 * to user memory: the CQE is the whole answer.
 *
 * Permissions are the ioctls', by the same code: the file's opener
 * decides (see the top of this file), not the task that submits; an
 * unprivileged file reaches only its own clients, another id is -ENOENT.
 *
 * cqe->res is 0, or a negative errno:
 *
 *  - at submission, at once, the command refused and no sync run, with
 *    the errno IB_SYNC_MEM_IOC_SYNC (F_ASYNC) or IB_SYNC_MEM_IOC_SYNC_BATCH
 *    returns for the same request: -EINVAL for a bad direction, flags
 *    (unknown ones, and IB_SYNC_MEM_IOC_F_ASYNC: every ring command is
 *    asynchronous), timeout_ms, a nonzero @reserved, a range with an
 *    offset and no length, an in_fence that is not a sync_file, a batch's
 *    @n of 0 or past IB_SYNC_MEM_SYNC_BATCH_MAX; -EBADF for an in_fence
 *    that is not an open fd; -ENOENT for an unknown id or one out of the
 *    file's reach (a batch naming one: nothing run); -ERANGE, -EINVAL for
 *    a bad range (as the family's); -EOPNOTSUPP for an inbound flush of a
 *    client whose kind cannot; -EFAULT for a batch's @entries; -ENOMEM;
 *    and -EINVAL for a ring without IORING_SETUP_SQE128, -ENOTTY for an
 *    unknown cmd_op. (A kernel or module without the hook at all: io_uring
 *    answers -EOPNOTSUPP.)
 *  - at completion, the sync's result, exactly what the fence of the same
 *    request made with IB_SYNC_MEM_IOC_F_ASYNC signals (see "Fences"
 *    above), 0 for its status 1: -EIO, -ETIMEDOUT and the like from the
 *    client; -ENODEV for a client deleted, or a device removed, also while
 *    the command waits for its in-fence (a one-client command then
 *    completes at once); -ENXIO for a client whose memory went; the
 *    in-fence's error if it signalled with one (no sync runs); for a
 *    batch, its first entry's error in the batch's order (one CQE per
 *    batch: no per-entry results, use the ioctl for those).
 *  - -ECANCELED when the ring goes before the sync completed: its last
 *    fd closed (ring exit, also when the program dies) or its submitting
 *    task calls execve(), on kernels with IORING_URING_CMD_CANCELABLE
 *    (6.7 and later; 6.12, 7.x).
 *    Only the command ends: the sync itself runs to its end (it cannot be
 *    taken back from a client's engine), holding what it needs, and lets
 *    go of it then. On kernels without it (6.1) io_uring cannot ask a
 *    driver to cancel: the ring's teardown (and the exiting task) waits
 *    for each pending command to complete normally, which it always does
 *    (the sync ends within its timeout_ms once it began; its in-fence, as
 *    every dma_fence, signals in finite time, and a client deleted or a
 *    device removed meanwhile ends the wait at once).
 *
 * Each command completes exactly once. Closing the /dev/ib_sync_mem fd
 * cancels nothing: io_uring holds the file while a command is pending,
 * and the file's release (deleting the clients it owns) comes after the
 * last one completed. IORING_OP_ASYNC_CANCEL does not reach these
 * commands.
 */

/**
 * struct ib_sync_mem_uring_sync - IB_SYNC_MEM_URING_CMD_SYNC: one client,
 *	any direction (an inbound flush too), in the SQE's cmd area
 * @id: as in struct ib_sync_mem_ioc_sync
 * @dir: as in struct ib_sync_mem_ioc_sync
 * @offset: as in struct ib_sync_mem_ioc_sync
 * @len: as in struct ib_sync_mem_ioc_sync
 * @flags: 0 or IB_SYNC_MEM_IOC_F_IN_FENCE
 * @timeout_ms: as in struct ib_sync_mem_ioc_sync
 * @in_fence: with IB_SYNC_MEM_IOC_F_IN_FENCE, a sync_file fd of the
 *	submitting task, looked up at issue (it may be closed once
 *	io_uring_submit() returned, unless the command is issued later: see
 *	above); the sync begins once it signalled
 * @reserved: 0
 */
struct ib_sync_mem_uring_sync {
	__u32 id;
	__u32 dir;
	__u64 offset;
	__u64 len;
	__u32 flags;
	__u32 timeout_ms;
	__s32 in_fence;
	__u32 reserved;
};

/**
 * struct ib_sync_mem_uring_batch - IB_SYNC_MEM_URING_CMD_SYNC_BATCH:
 *	clients in the order given, as IB_SYNC_MEM_IOC_SYNC_BATCH with
 *	IB_SYNC_MEM_IOC_F_ASYNC, in the SQE's cmd area
 * @entries: user pointer to @n struct ib_sync_mem_ioc_entry (their @err
 *	is neither read nor written)
 * @n: 1 to IB_SYNC_MEM_SYNC_BATCH_MAX
 * @dir: as in struct ib_sync_mem_ioc_sync_batch
 * @flags: 0 or IB_SYNC_MEM_IOC_F_IN_FENCE
 * @timeout_ms: as in struct ib_sync_mem_ioc_sync_batch
 * @in_fence: as in struct ib_sync_mem_uring_sync; a client's device
 *	removed ends the batch's wait for it at once, as the ioctl's batch's
 * @reserved: 0
 */
struct ib_sync_mem_uring_batch {
	__u64 entries;
	__u32 n;
	__u32 dir;
	__u32 flags;
	__u32 timeout_ms;
	__s32 in_fence;
	__u32 reserved;
};

#define IB_SYNC_MEM_IOC_MAGIC	0xDB

/* Does nothing: the floor of any syscall path to the module (benches). */
#define IB_SYNC_MEM_IOC_NOP	_IO(IB_SYNC_MEM_IOC_MAGIC, 0)
#define IB_SYNC_MEM_IOC_SYNC	_IOWR(IB_SYNC_MEM_IOC_MAGIC, 1, \
				      struct ib_sync_mem_ioc_sync)
#define IB_SYNC_MEM_IOC_SYNC_DEV _IOWR(IB_SYNC_MEM_IOC_MAGIC, 2, \
				       struct ib_sync_mem_ioc_sync_dev)
#define IB_SYNC_MEM_IOC_MARK_DIRTY _IOW(IB_SYNC_MEM_IOC_MAGIC, 3, \
					struct ib_sync_mem_ioc_mark)
#define IB_SYNC_MEM_IOC_SYNC_BATCH _IOWR(IB_SYNC_MEM_IOC_MAGIC, 4, \
					 struct ib_sync_mem_ioc_sync_batch)
#define IB_SYNC_MEM_IOC_OWN	_IOW(IB_SYNC_MEM_IOC_MAGIC, 5, \
				     struct ib_sync_mem_ioc_own)
#define IB_SYNC_MEM_IOC_CREATE	_IOWR(IB_SYNC_MEM_IOC_MAGIC, 6, \
				      struct ib_sync_mem_ioc_create)
#define IB_SYNC_MEM_IOC_DELETE	_IOW(IB_SYNC_MEM_IOC_MAGIC, 7, \
				     struct ib_sync_mem_ioc_delete)

/* sqe->cmd_op of IORING_OP_URING_CMD (see "io_uring" above). */
#define IB_SYNC_MEM_URING_CMD_SYNC	_IOW(IB_SYNC_MEM_IOC_MAGIC, 0x40, \
					     struct ib_sync_mem_uring_sync)
#define IB_SYNC_MEM_URING_CMD_SYNC_BATCH _IOW(IB_SYNC_MEM_IOC_MAGIC, 0x41, \
					      struct ib_sync_mem_uring_batch)

#endif /* _UAPI_LINUX_IB_SYNC_MEM_DEV_H */
