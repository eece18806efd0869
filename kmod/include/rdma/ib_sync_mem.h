/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sync_mem: a registry of memory sync clients per RDMA device.
 *
 * A *client* is memory that must be made coherent before a device or the CPU
 * uses it: a GPU buffer, an FPGA window, a pinned user region, a dma-buf.
 * Whoever owns that memory registers a client on an RDMA device with a table
 * of ops; a producer about to hand memory to the device (or back to the CPU)
 * syncs one client or fans a sync out to every client of the device.
 *
 * Guarantees (each is exercised by the in-kernel test module, sync_mem_test.c):
 *
 * - After ib_sync_mem_unregister() returns, no callback of that client is
 *   running and none will run again (except ops->release, which runs when the
 *   last reference is dropped).
 * - A device-wide sync runs ops->sync of every live client that was
 *   registered when the pass started, exactly once, in registration order. It
 *   returns the first error but still runs the rest, and records each
 *   client's result (see ib_sync_mem_client_last_err()).
 * - Callbacks may sleep. The read side (a sync) takes no lock that readers
 *   share; see struct ib_sync_mem_domain in sync_mem.h for the scheme.
 * - When the RDMA device goes away, syncs in flight finish, later ones fail
 *   with -ENODEV, every client gets ops->invalidate(IB_SYNC_MEM_INVAL_DEVICE),
 *   and the ib_client remove hook returns only when all of that is done. The
 *   owner still holds its client and must still unregister it.
 * - A client holds a reference on ops->owner: the module that implements the
 *   ops cannot be unloaded while one of its clients is registered.
 * - Concurrent device-wide syncs in the same direction coalesce: a caller
 *   that arrives while a pass runs waits for the next complete pass instead
 *   of starting its own (unless the module parameter coalesce=0).
 * - A client registered with IB_SYNC_MEM_F_LAZY is synced only if
 *   ib_sync_mem_mark_dirty() was called since its last successful sync.
 *
 * Context: every function here may sleep, except ib_sync_mem_mark_dirty(),
 * ib_sync_mem_get() and the accessors.
 */
#ifndef _RDMA_IB_SYNC_MEM_H
#define _RDMA_IB_SYNC_MEM_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/types.h>

struct ib_device;
struct ib_sync_mem_client;
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
 */
enum ib_sync_mem_dir {
	IB_SYNC_MEM_TO_DEVICE = 1,
	IB_SYNC_MEM_TO_CPU = 2,
	IB_SYNC_MEM_BIDIRECTIONAL = 3,
};

/**
 * enum ib_sync_mem_inval - why a client was invalidated
 * @IB_SYNC_MEM_INVAL_DEVICE: its RDMA device is going away
 * @IB_SYNC_MEM_INVAL_MEMORY: the memory behind it went away (unmapped,
 *	process exit, buffer released)
 */
enum ib_sync_mem_inval {
	IB_SYNC_MEM_INVAL_DEVICE = 1,
	IB_SYNC_MEM_INVAL_MEMORY = 2,
};

/* Client flags (struct ib_sync_mem_reg.flags). */
#define IB_SYNC_MEM_F_LAZY	BIT(0)	/* sync only when marked dirty */
#define IB_SYNC_MEM_F_ALL	(IB_SYNC_MEM_F_LAZY)

/**
 * struct ib_sync_mem_ops - what a client's owner implements
 * @owner: module implementing the ops; pinned while a client is registered
 * @sync: required. Make the client's memory coherent for @dir. @deadline is
 *	the absolute CLOCK_MONOTONIC time by which a wait must give up with
 *	-ETIMEDOUT. Returns 0 or a negative errno. May sleep.
 * @invalidate: optional. The device or the memory is gone (@reason); no sync
 *	runs after it. Called once, never concurrently with @sync. It must not
 *	call back into the registry for the same device.
 * @release: optional. The last reference is gone; free the private data.
 * @prepare: optional batching hook. A device-wide pass calls it for every
 *	client on the device's list when the pass began (live or already
 *	invalidated) before the first ->sync of the pass.
 * @finish: optional batching hook, called for every client @prepare was
 *	called for, after the last ->sync of the pass; never after ->release.
 * @fill_info: optional. Describe the client to userspace by adding netlink
 *	attributes to @msg (inside IB_SYNC_MEM_A_CLIENT_INFO, which only
 *	CAP_NET_ADMIN callers see). Returns 0 or -EMSGSIZE.
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
};

/**
 * struct ib_sync_mem_reg - a registration request
 * @name: NUL-terminated, 1 to IB_SYNC_MEM_NAME_MAX - 1 bytes
 * @ops: the client's ops; must outlive the client
 * @priv: owner's private data, returned by ib_sync_mem_client_priv()
 * @size: bytes of memory behind the client (counted per successful sync)
 * @flags: IB_SYNC_MEM_F_*
 * @kind: a client kind number for userspace (0 for in-kernel clients)
 */
struct ib_sync_mem_reg {
	const char *name;
	const struct ib_sync_mem_ops *ops;
	void *priv;
	u64 size;
	u32 flags;
	u32 kind;
};

/**
 * struct ib_sync_mem_result - outcome of a device-wide sync
 * @clients: clients whose ->sync ran in the pass that served the caller
 * @errors: how many of them failed
 * @skipped: clients not run (lazy and clean, or invalidated)
 * @pass: unique id of that pass (callers served by one pass see one id)
 * @ns: wall time of that pass
 */
struct ib_sync_mem_result {
	u32 clients;
	u32 errors;
	u32 skipped;
	u64 pass;
	u64 ns;
};

struct ib_sync_mem_client *
ib_sync_mem_register(struct ib_device *ibdev, const struct ib_sync_mem_reg *reg);
void ib_sync_mem_unregister(struct ib_sync_mem_client *client);

int ib_sync_mem_sync(struct ib_sync_mem_client *client,
		     enum ib_sync_mem_dir dir, unsigned int timeout_ms);
int ib_sync_mem_sync_device(struct ib_device *ibdev, enum ib_sync_mem_dir dir,
			    unsigned int timeout_ms,
			    struct ib_sync_mem_result *result);

void ib_sync_mem_mark_dirty(struct ib_sync_mem_client *client);
void ib_sync_mem_invalidate(struct ib_sync_mem_client *client,
			    enum ib_sync_mem_inval reason);

struct ib_device *ib_sync_mem_device_get(const char *name);

struct ib_sync_mem_client *ib_sync_mem_lookup(u32 id);
struct ib_sync_mem_client *ib_sync_mem_get(struct ib_sync_mem_client *client);
void ib_sync_mem_put(struct ib_sync_mem_client *client);

void *ib_sync_mem_client_priv(const struct ib_sync_mem_client *client);
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
 *	context, when userspace deletes it, its owning socket closes, or its
 *	device goes away.
 * @node: on the list of kinds
 */
struct ib_sync_mem_client_kind {
	u32 id;
	const char *name;
	struct module *owner;
	struct ib_sync_mem_client *(*create)(struct ib_device *ibdev,
					     const char *name, u32 flags,
					     struct nlattr **attrs,
					     struct netlink_ext_ack *extack);
	void (*destroy)(struct ib_sync_mem_client *client);
	struct list_head node;
};

int ib_sync_mem_kind_register(struct ib_sync_mem_client_kind *kind);
void ib_sync_mem_kind_unregister(struct ib_sync_mem_client_kind *kind);

#endif /* _RDMA_IB_SYNC_MEM_H */
