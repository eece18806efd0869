/* SPDX-License-Identifier: LGPL-2.1 OR BSD-3-Clause */
/*
 * libsyncmem: the ib_sync_mem kernel module from C and C++.
 *
 * A handle (struct syncmem) holds an open /dev/ib_sync_mem, the data path
 * (plain ioctls: create a client over the caller's memory, sync it
 * blocking or with a sync_file fence, flush inbound, mark dirty, batch),
 * and, opened on first use, a socket of the ib_sync_mem generic netlink
 * family (the C code the kernel's YNL generator makes of the family's spec:
 * look clients up, delete them).
 *
 * Conventions, as libynl's and liburing's:
 *  - every call returns 0 (or a non-negative value it documents) on
 *    success and a negative errno on failure; errno itself is left alone,
 *    but for syncmem_open(), which returns NULL and sets errno;
 *  - after a failure syncmem_errmsg() has the kernel's reason when it gave
 *    one (the netlink extended ack, IB_SYNC_MEM_IOC_CREATE's message);
 *  - no global state: a handle is everything; one handle is used by one
 *    thread at a time (give each thread its own, or serialise);
 *  - every descriptor the library opens is close-on-exec.
 *
 * The protocol is that of the module's UAPI headers, linux/ib_sync_mem.h
 * and linux/ib_sync_mem_dev.h; this header needs neither: its constants
 * have the same values. The library's man pages: syncmem(3).
 */
#ifndef SYNCMEM_H
#define SYNCMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SYNCMEM_VERSION_MAJOR	0
#define SYNCMEM_VERSION_MINOR	3

struct syncmem;

/**
 * enum syncmem_dir - direction of a sync (enum ib_sync_mem_sync_dir)
 * @SYNCMEM_TO_DEVICE: the CPU wrote, the device reads next
 * @SYNCMEM_TO_CPU: the device wrote, the CPU reads next
 * @SYNCMEM_BIDIRECTIONAL: both of the above (not inbound)
 * @SYNCMEM_INBOUND: the NIC wrote (an RDMA WRITE landed); the accelerator
 *	or the CPU reads next
 */
enum syncmem_dir {
	SYNCMEM_TO_DEVICE = 1,
	SYNCMEM_TO_CPU = 2,
	SYNCMEM_BIDIRECTIONAL = 3,
	SYNCMEM_INBOUND = 4,
};

/* A region's access (IB_SYNC_MEM_REGION_F_*): the device writes it. */
#define SYNCMEM_REGION_WRITE	(1U << 0)

/* Client flags (IB_SYNC_MEM_CLIENT_F_*). */
#define SYNCMEM_CLIENT_LAZY	(1U << 0)	/* synced only when marked dirty */
#define SYNCMEM_CLIENT_OWNED	(1U << 1)	/* dies with its netlink socket */
#define SYNCMEM_CLIENT_FILE	(1U << 2)	/* dies with its handle's file */

/* Kinds (enum ib_sync_mem_kind). */
#define SYNCMEM_KIND_KERNEL	0
#define SYNCMEM_KIND_SIM	1
#define SYNCMEM_KIND_REGION	2
#define SYNCMEM_KIND_DMABUF	3

/* States (enum ib_sync_mem_client_state). */
#define SYNCMEM_STATE_LIVE		1
#define SYNCMEM_STATE_INVALIDATED	2

/* Origins (enum ib_sync_mem_origin). */
#define SYNCMEM_ORIGIN_KERNEL	1
#define SYNCMEM_ORIGIN_NETLINK	2
#define SYNCMEM_ORIGIN_DEVICE	3

/* Most entries one batch may name (IB_SYNC_MEM_SYNC_BATCH_MAX). */
#define SYNCMEM_BATCH_MAX	2048
/* The longest timeout of a sync, in ms (IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS). */
#define SYNCMEM_TIMEOUT_MAX_MS	600000
/* Longest client name, with its NUL (IB_SYNC_MEM_NAME_LEN). */
#define SYNCMEM_NAME_LEN	32

/* ---- the handle: syncmem_open(3) ---- */

/**
 * syncmem_open() - open a handle
 *
 * Opens /dev/ib_sync_mem (read-write, close-on-exec). The netlink socket is
 * opened by the first call that needs it.
 *
 * Return: the handle, or NULL with errno set: ENOENT when the module is
 * not loaded, EACCES when the device node is not the caller's to open,
 * ENOMEM.
 */
struct syncmem *syncmem_open(void);

/**
 * syncmem_open_fd() - a handle on a /dev/ib_sync_mem descriptor the caller has
 * @fd: an open file of /dev/ib_sync_mem, such as one a privileged process
 *	opened and passed over (SCM_RIGHTS)
 *
 * The handle takes @fd over: syncmem_close() closes it, and the caller
 * must not. Its rights are the file's, judged at its open (the UAPI
 * header's "Permissions"), not the caller's; the clients the file created
 * or owns are the handle's. Its close-on-exec flag is left as it is.
 *
 * Return: the handle, or NULL with errno set, @fd then left open: EBADF
 * (@fd is not open), ENOTTY or EINVAL (not a file of /dev/ib_sync_mem),
 * ENOMEM.
 */
struct syncmem *syncmem_open_fd(int fd);

/**
 * syncmem_close() - close a handle
 * @sm: the handle, or NULL (nothing is done)
 *
 * Closes its descriptors. The clients its file created or took over
 * (syncmem_region_create(), syncmem_client_own()) are deleted by the
 * close, after their syncs in flight, when its descriptor was the file's
 * last (a duplicate, in this process or another, keeps the file and its
 * clients); fences already returned still signal (-ENODEV for a sync
 * that had not run).
 */
void syncmem_close(struct syncmem *sm);

/**
 * syncmem_errmsg() - why the last call on a handle failed
 * @sm: the handle
 *
 * Return: the kernel's reason for the last failed call (a netlink extended
 * ack's message, IB_SYNC_MEM_IOC_CREATE's message), or "" when it gave
 * none. Valid until the next call on @sm.
 */
const char *syncmem_errmsg(const struct syncmem *sm);

/**
 * syncmem_fd() - the handle's /dev/ib_sync_mem descriptor
 * @sm: the handle
 *
 * For a caller that polls it or hands it to io_uring; the handle keeps
 * owning it (do not close it).
 *
 * Return: the descriptor (>= 0).
 */
int syncmem_fd(const struct syncmem *sm);

/* ---- clients: syncmem_region_create(3) ---- */

/**
 * syncmem_region_create() - make the caller's memory a client of its file
 * @sm: the handle
 * @dev: the RDMA device, by name (such as "rxe0")
 * @name: the client's name, at most SYNCMEM_NAME_LEN - 1 bytes
 * @addr: the first byte of the memory (page alignment not required)
 * @len: its length in bytes, > 0
 * @access: 0 or SYNCMEM_REGION_WRITE (the device writes it; an inbound
 *	flush needs it)
 * @flags: 0 or SYNCMEM_CLIENT_LAZY
 * @id: set on success: the new client's id
 *
 * IB_SYNC_MEM_IOC_CREATE of a region client: the module pins the pages
 * and maps them for @dev. The client belongs to @sm's file: it is deleted
 * when @sm is closed (or by syncmem_client_delete()).
 *
 * Return: 0, or a negative errno: -EINVAL (a bad argument or flag; the
 * reason in syncmem_errmsg()), -ENODEV (no such device), -ENOSPC (the
 * device has its most clients), -EOPNOTSUPP (region kind unavailable),
 * -EFAULT, -ENOMEM (also: the pages past the process's RLIMIT_MEMLOCK,
 * without CAP_IPC_LOCK), -EMFILE (the user has the module's
 * max_clients_per_user clients on the device), -EPERM (a kind that needs
 * CAP_NET_ADMIN), -ENAMETOOLONG (@dev or @name too long for the request).
 */
int syncmem_region_create(struct syncmem *sm, const char *dev,
			  const char *name, void *addr, size_t len,
			  uint32_t access, uint32_t flags, uint32_t *id);

/**
 * syncmem_dmabuf_create() - make a dma-buf a client of the handle's file
 * @sm: the handle
 * @dev: the RDMA device, by name
 * @name: the client's name
 * @dmabuf_fd: a dma-buf file descriptor of the caller
 * @flags: 0 or SYNCMEM_CLIENT_LAZY
 * @id: set on success: the new client's id
 *
 * As syncmem_region_create(), of the dma-buf behind @dmabuf_fd (which the
 * caller may close afterwards).
 *
 * Return: 0, or a negative errno as syncmem_region_create()'s, and -EBADF
 * for a @dmabuf_fd that is not a dma-buf.
 */
int syncmem_dmabuf_create(struct syncmem *sm, const char *dev,
			  const char *name, int dmabuf_fd, uint32_t flags,
			  uint32_t *id);

/**
 * syncmem_client_own() - take a client created over netlink over
 * @sm: the handle
 * @id: the client
 *
 * IB_SYNC_MEM_IOC_OWN: the client is deleted when @sm is closed.
 *
 * Return: 0, or -ENOENT (no such client), -EPERM (a kernel driver's
 * client), -EBUSY (another file owns it).
 */
int syncmem_client_own(struct syncmem *sm, uint32_t id);

/**
 * syncmem_client_delete() - delete a client
 * @sm: the handle
 * @id: the client
 *
 * A client @sm's file created or owns goes by the device's
 * IB_SYNC_MEM_IOC_DELETE, for any user; another (a CAP_NET_ADMIN caller's
 * business) by the family's IB_SYNC_MEM_CMD_CLIENT_DEL over netlink.
 * Returns when none of the client's callbacks runs and, for the handle's
 * own, its memory is let go of.
 *
 * Return: 0, or -ENOENT (not the handle's client and, for a CAP_NET_ADMIN
 * caller, no such client: an unprivileged caller is never told that
 * another file's client exists), -EINTR (the wait was killed; the client
 * still goes), a netlink error.
 */
int syncmem_client_delete(struct syncmem *sm, uint32_t id);

/**
 * struct syncmem_client - a client, as the family describes it
 * @id: its id
 * @name: its name
 * @dev: its RDMA device's name
 * @owner: the in-kernel owner it is registered under ("region", a driver's)
 * @dev_index: its device's index
 * @kind: SYNCMEM_KIND_*
 * @flags: SYNCMEM_CLIENT_*
 * @state: SYNCMEM_STATE_*
 * @origin: SYNCMEM_ORIGIN_*
 * @inval_reason: why it was invalidated (1 device, 2 memory), 0 if live
 * @last_err: 0 or the negative errno of its last sync
 * @pinned_pages: pages it pins
 * @owner_pid: the pid of its creator (0 when not reported)
 * @size: bytes behind it
 * @syncs: syncs run
 * @errors: syncs failed
 * @sync_ns: time in its syncs, in ns
 * @max_ns: its longest sync, in ns
 * @bytes: bytes synced
 * @region_addr: a region's first byte (kind region only)
 * @region_len: a region's length
 * @region_access: a region's access, SYNCMEM_REGION_*
 * @region_segments: a region's DMA segments
 * @reserved: zero; room for more without a new ABI
 */
struct syncmem_client {
	uint32_t id;
	char name[SYNCMEM_NAME_LEN];
	char dev[64];
	char owner[SYNCMEM_NAME_LEN];
	uint32_t dev_index;
	uint32_t kind;
	uint32_t flags;
	uint32_t state;
	uint32_t origin;
	uint32_t inval_reason;
	int32_t last_err;
	uint32_t pinned_pages;
	uint32_t owner_pid;
	uint64_t size;
	uint64_t syncs;
	uint64_t errors;
	uint64_t sync_ns;
	uint64_t max_ns;
	uint64_t bytes;
	uint64_t region_addr;
	uint64_t region_len;
	uint32_t region_access;
	uint32_t region_segments;
	uint64_t reserved[8];
};

/**
 * syncmem_client_get() - describe one client
 * @sm: the handle
 * @id: the client
 * @c: filled in on success
 *
 * The family's IB_SYNC_MEM_CMD_CLIENT_GET (open to every user).
 *
 * Return: 0, or -ENOENT (no such client), a netlink error.
 */
int syncmem_client_get(struct syncmem *sm, uint32_t id,
		       struct syncmem_client *c);

/**
 * syncmem_client_foreach() - describe every client
 * @sm: the handle
 * @dev: only this device's clients, or NULL for all
 * @cb: called for each client, in id order; a non-zero return stops the
 *	walk and is returned
 * @arg: passed to @cb
 *
 * A dump of IB_SYNC_MEM_CMD_CLIENT_GET. A dump that the registry's changes
 * interrupt is asked again (up to 1,000 times, then -EINTR); @cb sees only
 * a whole, consistent one.
 *
 * Return: 0, @cb's non-zero return, or a negative errno.
 */
int syncmem_client_foreach(struct syncmem *sm, const char *dev,
			   int (*cb)(const struct syncmem_client *c, void *arg),
			   void *arg);

/**
 * syncmem_dev_index() - an RDMA device's index
 * @sm: the handle
 * @dev: its name
 * @index: set on success
 *
 * Return: 0, or -ENODEV (the module knows no such device), a netlink error.
 */
int syncmem_dev_index(struct syncmem *sm, const char *dev, uint32_t *index);

/**
 * syncmem_kind_name() - a kind's name ("region", ...)
 * @kind: SYNCMEM_KIND_*
 *
 * Return: its name, or "?" for an unknown kind.
 */
const char *syncmem_kind_name(uint32_t kind);

/**
 * syncmem_state_name() - a state's name ("live", "invalidated")
 * @state: SYNCMEM_STATE_*
 *
 * Return: its name, or "?" for an unknown state.
 */
const char *syncmem_state_name(uint32_t state);

/* ---- syncs: syncmem_sync(3) ---- */

/**
 * syncmem_sync() - sync a client, blocking
 * @sm: the handle
 * @id: the client
 * @dir: the direction
 * @offset: with @len, the first byte of the range to sync; 0 without
 * @len: the range's length, 0 for the whole client
 * @timeout_ms: the client's deadline, 1 to SYNCMEM_TIMEOUT_MAX_MS, or 0
 *	for the module's default
 *
 * IB_SYNC_MEM_IOC_SYNC. Returns when the sync is done.
 *
 * Return: 0, the client's own error (-ETIMEDOUT, -EIO, ...), or -ENOENT
 * (no such client; for a handle opened without CAP_NET_ADMIN, any client
 * its file did not create or own), -EINVAL (bad direction, timeout or
 * range), -ERANGE (a range past the client).
 */
int syncmem_sync(struct syncmem *sm, uint32_t id, enum syncmem_dir dir,
		 uint64_t offset, uint64_t len, uint32_t timeout_ms);

/**
 * syncmem_sync_async() - sync a client, a fence for its completion
 * @sm: the handle
 * @id: the client
 * @dir: the direction
 * @offset: as syncmem_sync()'s
 * @len: as syncmem_sync()'s
 * @timeout_ms: as syncmem_sync()'s
 * @in_fence: a sync_file fd the sync waits for first, or -1
 *
 * IB_SYNC_MEM_IOC_SYNC with IB_SYNC_MEM_IOC_F_ASYNC: returns at once.
 * The fence signals exactly once, with the sync's error as its status
 * (syncmem_fence_wait()); the caller closes it.
 *
 * Return: the fence, a new sync_file fd (>= 0, close-on-exec), or a
 * negative errno as syncmem_sync()'s, -EBADF or -EINVAL for a bad
 * @in_fence.
 */
int syncmem_sync_async(struct syncmem *sm, uint32_t id, enum syncmem_dir dir,
		       uint64_t offset, uint64_t len, uint32_t timeout_ms,
		       int in_fence);

/**
 * syncmem_flush_inbound() - make what the NIC wrote into a client visible
 * @sm: the handle
 * @id: the client (a region needs SYNCMEM_REGION_WRITE)
 * @timeout_ms: as syncmem_sync()'s
 *
 * syncmem_sync() of the whole client, direction SYNCMEM_INBOUND: what a
 * receiver calls once an RDMA WRITE into the client completed, before the
 * accelerator or the CPU reads it (the module reads through the NIC).
 *
 * Return: 0, or a negative errno as syncmem_sync()'s; -EOPNOTSUPP for a
 * client that cannot flush inbound, -EACCES for a read-only region.
 */
int syncmem_flush_inbound(struct syncmem *sm, uint32_t id,
			  uint32_t timeout_ms);

/**
 * syncmem_flush_inbound_async() - the inbound flush, a fence for it
 * @sm: the handle
 * @id: the client
 * @timeout_ms: as syncmem_sync()'s
 *
 * Return: the fence (>= 0), or a negative errno as
 * syncmem_flush_inbound()'s.
 */
int syncmem_flush_inbound_async(struct syncmem *sm, uint32_t id,
				uint32_t timeout_ms);

/**
 * syncmem_mark_dirty() - a lazy client was written
 * @sm: the handle
 * @id: a client made with SYNCMEM_CLIENT_LAZY
 * @dir: the direction of the sync now owed
 * @offset: with @len, the first byte written
 * @len: how many bytes, 0 for the whole client
 *
 * IB_SYNC_MEM_IOC_MARK_DIRTY: its next sync in a direction covering @dir
 * runs, over the bytes marked.
 *
 * Return: 0, or -EINVAL (not a lazy client, a bad range or direction),
 * -ERANGE, -ENOENT (as for syncmem_sync()).
 */
int syncmem_mark_dirty(struct syncmem *sm, uint32_t id, enum syncmem_dir dir,
		       uint64_t offset, uint64_t len);

/**
 * struct syncmem_entry - one client of a batch (struct ib_sync_mem_ioc_entry)
 * @id: the client
 * @err: set by a blocking batch: its result, 0 or a negative errno
 * @offset: with @len, the first byte of its range
 * @len: its range's length, 0 for the whole client
 */
struct syncmem_entry {
	uint32_t id;
	int32_t err;
	uint64_t offset;
	uint64_t len;
};

/**
 * syncmem_sync_batch() - sync clients in the order given, blocking
 * @sm: the handle
 * @entries: the clients (an id may repeat); each one's @err is set
 * @n: how many, 1 to SYNCMEM_BATCH_MAX
 * @dir: the direction
 * @timeout_ms: each client's deadline, as syncmem_sync()'s
 * @run: set to the entries whose sync ran (NULL: not wanted)
 * @errors: set to the entries that failed (NULL: not wanted)
 *
 * IB_SYNC_MEM_IOC_SYNC_BATCH. A client's failure is a result, in its
 * entry: the call itself succeeds.
 *
 * Return: 0 when the batch ran, or a negative errno: -ENOENT (an id
 * syncmem_sync() would refuse so: nothing ran), -EINVAL (@n, direction or
 * timeout).
 */
int syncmem_sync_batch(struct syncmem *sm, struct syncmem_entry *entries,
		       unsigned int n, enum syncmem_dir dir,
		       uint32_t timeout_ms, unsigned int *run,
		       unsigned int *errors);

/**
 * syncmem_sync_batch_async() - a batch, a fence for its completion
 * @sm: the handle
 * @entries: the clients (their @err is not set)
 * @n: how many, 1 to SYNCMEM_BATCH_MAX
 * @dir: the direction
 * @timeout_ms: as syncmem_sync_batch()'s
 * @in_fence: a sync_file fd the batch waits for first, or -1
 *
 * The fence's status is the first failed entry's error (in the batch's
 * order), or success.
 *
 * Return: the fence (>= 0), or a negative errno as syncmem_sync_batch()'s.
 */
int syncmem_sync_batch_async(struct syncmem *sm,
			     const struct syncmem_entry *entries,
			     unsigned int n, enum syncmem_dir dir,
			     uint32_t timeout_ms, int in_fence);

/**
 * struct syncmem_dev_result - what a device's sync did
 * @clients: clients whose sync ran in its pass
 * @errors: how many of them failed
 * @skipped: clients not run (lazy and clean, invalidated)
 * @err: the pass's first client error, 0 if none
 * @pass: the pass's id
 */
struct syncmem_dev_result {
	uint32_t clients;
	uint32_t errors;
	uint32_t skipped;
	int32_t err;
	uint64_t pass;
};

/**
 * syncmem_sync_dev() - sync every client of a device in one pass, blocking
 * @sm: the handle
 * @dev_index: the device (syncmem_dev_index())
 * @dir: the direction
 * @timeout_ms: as syncmem_sync()'s
 * @res: set when the pass ran (NULL: not wanted)
 *
 * IB_SYNC_MEM_IOC_SYNC_DEV. A client's failure is a result (@res->err).
 *
 * Return: 0 when the pass ran, or -ENODEV (no such device), -EINVAL,
 * -EPERM (the handle was opened without CAP_NET_ADMIN: a device's pass
 * reaches every client).
 */
int syncmem_sync_dev(struct syncmem *sm, uint32_t dev_index,
		     enum syncmem_dir dir, uint32_t timeout_ms,
		     struct syncmem_dev_result *res);

/* ---- fences: syncmem_fence_wait(3) ---- */

/**
 * syncmem_fence_wait() - wait for a fence to signal
 * @fence: a sync_file fd (syncmem_sync_async() and the others)
 * @timeout_ms: how long at most; -1 for no bound
 *
 * Does not close @fence.
 *
 * Return: 0 when it signalled without error, the sync's negative errno
 * when it signalled with one, -ETIME when it did not signal in time,
 * -EINVAL when @fence is not a sync_file, or poll()'s error.
 */
int syncmem_fence_wait(int fence, int timeout_ms);

/**
 * syncmem_fence_status() - a fence's state, without waiting
 * @fence: a sync_file fd
 *
 * Return: 1 signalled without error, 0 pending, the sync's negative errno
 * when it signalled with one, or -EINVAL when @fence is not a sync_file.
 */
int syncmem_fence_status(int fence);

/* ---- io_uring: syncmem_uring_prep_sync(3) ---- */

/*
 * Completions without an fd per sync: IORING_OP_URING_CMD on the handle's
 * /dev/ib_sync_mem ("io_uring" in linux/ib_sync_mem_dev.h). These calls
 * only fill an SQE, as liburing's io_uring_prep_*() do: the caller owns
 * the ring, submits, and reaps each command's CQE, whose res is the sync's
 * result (0 or a negative errno, as the fence of the same request would
 * signal; an unknown or out-of-reach id is -ENOENT there, not here), once.
 * No fd, no poll per sync, any number in flight.
 *
 * The ring must be set up with SYNCMEM_URING_SETUP_FLAGS (128-byte SQEs:
 * the command's payload does not fit a 64-byte one). The file's opener
 * decides what the commands may reach, as for the ioctls. Closing the
 * handle while commands are pending cancels none: io_uring holds the file
 * until the last one completed. The ring's exit completes them with
 * -ECANCELED on kernels that can cancel (6.7 and later); on older ones it
 * waits for them.
 */

/* The io_uring_setup() flag the ring needs (IORING_SETUP_SQE128). */
#define SYNCMEM_URING_SETUP_FLAGS	(1U << 10)
/* The bytes of one SQE of such a ring, all of them filled by a prep. */
#define SYNCMEM_URING_SQE_SIZE		128

struct io_uring_sqe;	/* <linux/io_uring.h> */

/**
 * syncmem_uring_prep_sync() - an SQE that syncs a client, its result a CQE
 * @sqe: a free SQE of a ring set up with SYNCMEM_URING_SETUP_FLAGS (such
 *	as liburing's io_uring_get_sqe()); all SYNCMEM_URING_SQE_SIZE bytes
 *	are written
 * @sm: the handle whose file runs the command
 * @id: the client
 * @dir: the direction; SYNCMEM_INBOUND for an inbound flush (of the whole
 *	client: @offset and @len 0)
 * @offset: as syncmem_sync()'s
 * @len: as syncmem_sync()'s
 * @timeout_ms: as syncmem_sync()'s
 * @in_fence: a sync_file fd the sync waits for first, or -1; looked up
 *	when the command is issued (keep it open until then: io_uring may
 *	issue a command after io_uring_enter() returned)
 *
 * IB_SYNC_MEM_URING_CMD_SYNC. The SQE's user_data is 0: set it afterwards
 * (io_uring_sqe_set_data64()); set nothing else. Nothing is submitted and
 * nothing is checked but the arguments' presence: the kernel answers in
 * the CQE, with the errnos of syncmem_sync_async() for the same request.
 *
 * Return: 0, or -EINVAL when @sqe or @sm is NULL.
 */
int syncmem_uring_prep_sync(struct io_uring_sqe *sqe,
			    const struct syncmem *sm, uint32_t id,
			    enum syncmem_dir dir, uint64_t offset,
			    uint64_t len, uint32_t timeout_ms, int in_fence);

/**
 * syncmem_uring_prep_batch() - an SQE that syncs clients in order, one CQE
 * @sqe: as syncmem_uring_prep_sync()'s
 * @sm: the handle whose file runs the command
 * @entries: the clients (their @err is neither read nor written); the
 *	kernel reads them when the command is issued: keep them valid and
 *	unchanged until its CQE
 * @n: how many, 1 to SYNCMEM_BATCH_MAX
 * @dir: the direction
 * @timeout_ms: as syncmem_sync_batch()'s
 * @in_fence: as syncmem_uring_prep_sync()'s
 *
 * IB_SYNC_MEM_URING_CMD_SYNC_BATCH. The CQE's res is the first failed
 * entry's error in the batch's order, or 0 (syncmem_sync_batch() gives
 * each entry's).
 *
 * Return: 0, or -EINVAL when @sqe or @sm is NULL.
 */
int syncmem_uring_prep_batch(struct io_uring_sqe *sqe,
			     const struct syncmem *sm,
			     const struct syncmem_entry *entries,
			     unsigned int n, enum syncmem_dir dir,
			     uint32_t timeout_ms, int in_fence);

#ifdef __cplusplus
}
#endif

#endif /* SYNCMEM_H */
