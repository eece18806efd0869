/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smnl: the calls the test programs make of the ib_sync_mem family, on the
 * C library the kernel generates from the family's YNL spec (ynl-gen-c.py
 * and libynl: smynl.h, test/tools/ynl.mk): a socket of the library, and
 * each command as the tests use it, its reply turned into a plain struct.
 * Requests the library cannot send are built by hand on the same socket
 * (smnl_raw.h).
 *
 * Every call returns 0 (or a client id) on success and a negative errno on
 * failure: the errno of the kernel's netlink ack, or of a local failure.
 * After each call nl->extack holds the ack's extack message (empty if the
 * kernel sent none), so that a test can show why the kernel said no.
 *
 * The protocol is kmod/include/uapi/linux/ib_sync_mem.h.
 */
#ifndef SMNL_H
#define SMNL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <linux/ib_sync_mem.h>

struct ynl_sock;

#define SMNL_EXTACK_LEN	256

struct smnl {
	struct ynl_sock *ys;	/* the generated library's socket */
	int fd;			/* its descriptor */
	uint32_t portid;	/* its port id */
	char extack[SMNL_EXTACK_LEN];	/* extack message of the last ack */
	uint32_t extack_offs;	/* NLMSGERR_ATTR_OFFS of the last ack, or 0 */
	unsigned int dump_retries;	/* interrupted dumps, each drained */
	/* For requests built by hand (smnl_raw.h) */
	uint16_t family;	/* the family id of "ib_sync_mem" */
	uint32_t seq;
	uint32_t miss_type;	/* NLMSGERR_ATTR_MISS_TYPE of the last ack, or 0 */
};

/* Open a socket and resolve the family: 0, or -errno (-ENOENT: no family). */
int smnl_open(struct smnl *nl);
void smnl_close(struct smnl *nl);

/* ---- the ib_sync_mem commands ---- */

/* A new client: what IB_SYNC_MEM_CMD_CLIENT_NEW takes. */
struct smnl_new {
	const char *dev;		/* device by name, or */
	uint32_t dev_index;		/* by index when dev is NULL */
	const char *name;
	uint32_t kind;			/* enum ib_sync_mem_kind */
	uint32_t flags;			/* IB_SYNC_MEM_CLIENT_F_* */
	/* kind REGION (region_nest: send the nest even for other kinds) */
	int region_nest;
	uint64_t region_addr, region_len;
	uint32_t region_access;
	int region_omit_addr;		/* leave ADDR out (malformed requests) */
	/* kind DMABUF */
	int dmabuf_nest;
	int32_t dmabuf_fd;
	/* kind SIM */
	int sim_nest;
	uint32_t sim_latency_us, sim_fail_next, sim_fail_errno;
	uint64_t sim_size;
	uint64_t sim_addr;		/* memory of this process it stands for */
};

/* Register a client: its id (> 0), or -errno. */
int smnl_register(struct smnl *nl, const struct smnl_new *req);
int smnl_register_region(struct smnl *nl, const char *dev, const char *name,
			 uint64_t addr, uint64_t len, uint32_t access);
/*
 * IB_SYNC_MEM_IOC_CREATE through @devfd (an open /dev/ib_sync_mem) of
 * @req (by @dev's name; the sim nest with its latency only), raw: for the
 * requests libsyncmem will not send (a sim, an unknown kind). Regions
 * and dma-buf clients are made through the library (smlib.h). Its id,
 * owned by that file, or -errno with the module's reason in @msg
 * (@msg_len bytes; none if NULL).
 */
int smnl_create(int devfd, const struct smnl_new *req, char *msg,
		size_t msg_len);
int smnl_register_dmabuf(struct smnl *nl, const char *dev, const char *name,
			 int fd);
int smnl_register_sim(struct smnl *nl, const char *dev, const char *name,
		      uint32_t latency_us);
int smnl_unregister(struct smnl *nl, uint32_t id);

/*
 * What a sync returned. For one client (client_id set) the client_* fields
 * are that client's result; for a batch or a device (client_id 0) they
 * cover every per-client result in the reply: client_err is the first
 * non-zero one, client_ns their sum.
 */
struct smnl_sync_result {
	int32_t err;		/* IB_SYNC_MEM_A_SYNC_ERR: first client error */
	uint32_t run, errors, skipped;
	uint64_t ns;		/* wall time in the kernel */
	int have_client;	/* a per-client result was there */
	uint32_t client_id;
	int32_t client_err;	/* the client's errno (0 or negative) */
	uint64_t client_ns;	/* time in its sync callback */
	uint32_t results;	/* per-client results counted */
};

/*
 * Sync one client. Returns the command's errno (0: the sync ran; read
 * *client_err). @timeout_ms 0 leaves IB_SYNC_MEM_A_SYNC_TIMEOUT_MS out.
 * @client_err and @ns (the client's callback time) may be NULL.
 */
int smnl_sync_client(struct smnl *nl, uint32_t id, uint32_t dir,
		     uint32_t timeout_ms, int *client_err, uint64_t *ns);
/* The same, with every field of the reply. */
int smnl_sync_client_full(struct smnl *nl, uint32_t id, uint32_t dir,
			  uint32_t timeout_ms, struct smnl_sync_result *res);
/* The same, of the @len bytes at @offset of the client only. */
int smnl_sync_range(struct smnl *nl, uint32_t id, uint32_t dir,
		    uint64_t offset, uint64_t len, struct smnl_sync_result *res);
/*
 * MARK_DIRTY of lazy client @id in @dir: the @len bytes at @offset, or (len
 * 0) all of it. Returns the command's errno.
 */
int smnl_mark_dirty(struct smnl *nl, uint32_t id, uint32_t dir,
		    uint64_t offset, uint64_t len);
/*
 * Sync a batch: one request naming the @n clients @ids
 * (IB_SYNC_MEM_A_SYNC_CLIENTS), synced in that order. The request holds
 * up to SMNL_BATCH_IDS_MAX ids (-EMSGSIZE past it: a nest's length is 16
 * bits), far past the kernel's IB_SYNC_MEM_SYNC_BATCH_MAX, so that its bound
 * can be asked. Returns the command's errno; the sync ran when it is 0:
 * read @res.
 */
#define SMNL_BATCH_IDS_MAX	8000
int smnl_sync_batch(struct smnl *nl, const uint32_t *ids, unsigned int n,
		    uint32_t dir, uint32_t timeout_ms,
		    struct smnl_sync_result *res);
/* Sync every client of device @dev in one pass; as smnl_sync_batch(). */
/*
 * A SYNC naming @owner, with the device @dev and the client @id when given
 * (NULL, 0: left out), sent as it is: the kernel decides what it means.
 */
int smnl_sync_owner(struct smnl *nl, const char *dev, uint32_t id,
		    const char *owner, uint32_t dir,
		    struct smnl_sync_result *res);
int smnl_sync_dev(struct smnl *nl, const char *dev, uint32_t dir,
		  uint32_t timeout_ms, struct smnl_sync_result *res);

/* A client as IB_SYNC_MEM_CMD_CLIENT_GET describes it. */
struct smnl_client {
	uint32_t id;
	char name[IB_SYNC_MEM_NAME_LEN];
	uint32_t dev_index;
	char dev[64];
	uint32_t kind, flags, state, origin;
	uint32_t inval_reason;		/* 0 when not invalidated */
	uint64_t size;
	int32_t last_err;
	int have_owner;
	uint32_t owner_portid, owner_pid;
	int have_pinned;
	uint32_t pinned_pages;
	int have_stats;
	uint64_t syncs, errors, sync_ns, max_ns, bytes;
	int have_info;
	/* sim */
	uint64_t sim_calls_to_device, sim_calls_to_cpu, sim_calls_bidi;
	uint64_t sim_calls_inbound;
	/* region */
	int have_region;
	uint64_t region_addr, region_len;
	uint32_t region_access, region_segments;
	/* dma-buf */
	int have_dmabuf;
	uint64_t dmabuf_size, dmabuf_inode;
	char dmabuf_exporter[64];
};

int smnl_client_get(struct smnl *nl, uint32_t id, struct smnl_client *c);
/*
 * Wait until client @id is gone (CLIENT_GET answers -ENOENT), polling for
 * at most @ms: 0 once it is, -ETIMEDOUT, or CLIENT_GET's other error. A
 * closing socket's owned clients are deleted shortly after the close, not
 * during it.
 */
int smnl_wait_gone(struct smnl *nl, uint32_t id, int ms);
/*
 * Dump every client (of @dev, or all if NULL): @cb runs for each; a non-zero
 * return stops nothing but is returned. A dump the registry's changes
 * interrupt (NLM_F_DUMP_INTR) is drained and asked again, up to
 * SMNL_DUMP_TRIES times in all (then -EINTR), each counted in
 * nl->dump_retries; @cb only sees a whole, consistent one.
 *
 * libynl gives a dump up on the flag on any of its messages, NLMSG_DONE
 * included: there it means the registry changed after the last part, the
 * list itself being consistent, and under 75-churn's in-kernel storm most
 * dumps of a few clients carry it (ten tries all failed, on three kernels).
 * Hence many tries: each is one short dump.
 */
#define SMNL_DUMP_TRIES	1000
int smnl_client_dump(struct smnl *nl, const char *dev,
		     int (*cb)(const struct smnl_client *c, void *arg),
		     void *arg);
/* The first client named @name (0), or -ENOENT. */
int smnl_client_find(struct smnl *nl, const char *name, struct smnl_client *c);

const char *smnl_kind_name(uint32_t kind);
const char *smnl_state_name(uint32_t state);

#endif /* SMNL_H */
