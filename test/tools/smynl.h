/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smynl: what every caller of the ib_sync_mem C library generated from the
 * YNL spec shares. The library is the kernel's: ib_sync_mem-user.h/.c made
 * by ynl-gen-c.py from spec/ib_sync_mem.yaml, and libynl (test/tools/ynl.mk
 * builds both into build/ynl). This header opens the family's socket,
 * turns the library's errors into what the other tools have (smnl.h): a
 * negative errno, and the kernel's extack message, and has the calls the
 * canaries' receive paths make as a net plugin would: register an
 * accelerator's memory, flush it inbound.
 *
 * The library's rules, which its callers follow: a request is
 * *_req_alloc()ed, filled by its *_req_set_*() setters (strings are
 * copied) and *_req_free()d by the caller once the call returned, whatever
 * it returned. A do call with a reply returns it (the caller's, to
 * *_rsp_free()) or NULL; one without a reply returns 0 or -1. After a
 * failure, ys->err says why (smynl_errno(), smynl_extack(), smynl_msg():
 * libynl's whole sentence); the next request clears it.
 */
#ifndef SMYNL_H
#define SMYNL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>	/* before ynl.h, which uses it without including it */
#include <sys/socket.h>
#include <sys/time.h>

#include "ynl.h"
#include "ib_sync_mem-user.h"

/* A hang guard on every answer, as smnl_open() sets: 60 s. */
#define SMYNL_TIMEOUT_MS	60000
#define SMYNL_EXTACK_LEN	256

/*
 * What the failed call of @e was: a negative errno (the kernel's, or that
 * of a local failure, which libynl leaves in errno with e->code 0; a
 * timeout is -ETIMEDOUT), -EMSGSIZE for a request past libynl's buffer,
 * -EPROTO for a reply it could not take.
 */
static inline int smynl_error_errno(const struct ynl_error *e)
{
	if (e->code > YNL_ERROR_NONE && e->code < __YNL_ERRNO_END)
		return -(int)e->code;
	switch (e->code) {
	case YNL_ERROR_NONE:
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -ETIMEDOUT;	/* SO_RCVTIMEO */
		return errno > 0 ? -errno : -EIO;
	case YNL_ERROR_INPUT_TOO_BIG:
		return -EMSGSIZE;
	case YNL_ERROR_INPUT_INVALID:
		return -EINVAL;
	default:
		return -EPROTO;
	}
}

/* The last failed call on @ys: as smynl_error_errno(). */
static inline int smynl_errno(const struct ynl_sock *ys)
{
	return smynl_error_errno(&ys->err);
}

/*
 * The kernel's extack message of @e into @buf (NLMSGERR_ATTR_MSG, as smnl's
 * nl->extack has it), empty when it sent none. libynl keeps only its own
 * sentence: "Kernel error: '<message>'", followed by " (bad attribute:
 * ...)" or " (missing attribute: ...)" when the ack names one.
 */
static inline const char *smynl_error_extack(const struct ynl_error *e,
					     char *buf, size_t size)
{
	static const char *const heads[] = { "Kernel error: '", "Kernel warning: '" };
	static const char *const tails[] = { "' (bad attribute: ", "' (missing attribute: " };
	const char *msg = e->msg, *end = NULL, *p;
	size_t i, len;

	buf[0] = '\0';
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (!strncmp(msg, heads[i], strlen(heads[i])))
			break;
	if (i == sizeof(heads) / sizeof(heads[0]))
		return buf;	/* no message from the kernel */
	msg += strlen(heads[i]);
	for (i = 0; !end && i < sizeof(tails) / sizeof(tails[0]); i++)
		for (p = strstr(msg, tails[i]); p; p = strstr(p + 1, tails[i]))
			end = p;	/* the last one: the message may hold "'" */
	len = strlen(msg);
	if (!end && len && msg[len - 1] == '\'')
		end = msg + len - 1;
	if (!end)
		return buf;	/* not libynl's sentence */
	snprintf(buf, size, "%.*s", (int)(end - msg), msg);
	return buf;
}

static inline const char *smynl_extack(const struct ynl_sock *ys, char *buf,
				       size_t size)
{
	return smynl_error_extack(&ys->err, buf, size);
}

/*
 * libynl's sentence on why the kernel refused the last call on @ys, for a
 * diagnostic; empty when it did not (after an ack ys->err.msg is
 * "Success"; after a local failure it is empty: smynl_errno() says it).
 */
static inline const char *smynl_msg(const struct ynl_sock *ys)
{
	return ys->err.code ? ys->err.msg : "";
}

/*
 * A socket of the family, the family resolved, closed on exec, with a
 * hang guard on answers: 0, or a negative errno (-ENOENT: no such family)
 * with libynl's reason in @why.
 */
static inline int smynl_open(struct ynl_sock **ysp, struct ynl_error *why)
{
	struct timeval tv = {
		.tv_sec = SMYNL_TIMEOUT_MS / 1000,
		.tv_usec = (SMYNL_TIMEOUT_MS % 1000) * 1000,
	};
	struct ynl_sock *ys;
	int ret;

	memset(why, 0, sizeof(*why));
	errno = 0;
	ys = ynl_sock_create(&ynl_ib_sync_mem_family, why);
	*ysp = ys;
	if (!ys) {
		ret = smynl_error_errno(why);
		if (!why->msg[0])
			snprintf(why->msg, sizeof(why->msg), "%s", strerror(-ret));
		return ret;
	}
	/* Not inherited by the programs a test runs: it owns clients. */
	if (fcntl(ynl_socket_get_fd(ys), F_SETFD, FD_CLOEXEC) ||
	    setsockopt(ynl_socket_get_fd(ys), SOL_SOCKET, SO_RCVTIMEO, &tv,
		       sizeof(tv))) {
		ret = -errno;
		snprintf(why->msg, sizeof(why->msg), "FD_CLOEXEC, SO_RCVTIMEO: %s",
			 strerror(errno));
		ynl_sock_destroy(ys);
		*ysp = NULL;
		return ret;
	}
	return 0;
}

/* Close a socket of smynl_open() (NULL: nothing). */
static inline void smynl_close(struct ynl_sock *ys)
{
	if (ys)
		ynl_sock_destroy(ys);
}

/*
 * Client @id's own result in a SYNC reply (a result of its
 * IB_SYNC_MEM_A_SYNC_RESULTS nests): 0 with the client's errno (0 or
 * negative) in *@err, or -EPROTO when the reply does not report the client.
 */
static inline int smynl_sync_result(const struct ib_sync_mem_sync_rsp *rsp,
				    __u32 id, int *err)
{
	const struct ib_sync_mem_sync_result *res;
	unsigned int i, j;

	for (i = 0; i < rsp->n_sync_results; i++) {
		for (j = 0; j < rsp->sync_results[i].n_sync_result; j++) {
			res = &rsp->sync_results[i].sync_result[j];
			if (res->_present.client_id && res->client_id == id) {
				*err = res->_present.sync_err ? res->sync_err : 0;
				return 0;
			}
		}
	}
	return -EPROTO;
}

/*
 * The client a CLIENT_NEW reply describes: its id (> 0), or -EPROTO when
 * the command was acked without one.
 */
static inline int
smynl_client_id(const struct ib_sync_mem_client_new_rsp *rsp)
{
	if (!rsp->_present.client_id || !rsp->client_id ||
	    rsp->client_id > INT32_MAX)
		return -EPROTO;
	return (int)rsp->client_id;
}

/*
 * An accelerator's memory as a net plugin registers it: a sim client
 * (IB_SYNC_MEM_CMD_CLIENT_NEW, kind SIM, the sim nest's size and address)
 * on device @dev, named @name, with @flags (IB_SYNC_MEM_CLIENT_F_*), for
 * the @size bytes at @addr (page-aligned). Its id (> 0), or a negative
 * errno: the command's (smynl_msg() says why), -EPROTO when the reply has
 * no client, -ENOMEM.
 */
static inline int smynl_register_sim(struct ynl_sock *ys, const char *dev,
				     const char *name, __u32 flags,
				     const void *addr, size_t size)
{
	struct ib_sync_mem_client_new_req *req;
	struct ib_sync_mem_client_new_rsp *rsp;
	int ret;

	req = ib_sync_mem_client_new_req_alloc();
	if (!req)
		return -ENOMEM;
	ib_sync_mem_client_new_req_set_dev_name(req, dev);
	ib_sync_mem_client_new_req_set_client_name(req, name);
	ib_sync_mem_client_new_req_set_client_kind(req, IB_SYNC_MEM_KIND_SIM);
	if (flags)
		ib_sync_mem_client_new_req_set_client_flags(req, flags);
	ib_sync_mem_client_new_req_set_sim_size(req, size);
	ib_sync_mem_client_new_req_set_sim_addr(req, (uintptr_t)addr);
	rsp = ib_sync_mem_client_new(ys, req);
	ret = rsp ? smynl_client_id(rsp) : smynl_errno(ys);
	ib_sync_mem_client_new_req_free(req);
	if (rsp)
		ib_sync_mem_client_new_rsp_free(rsp);
	return ret;
}

/*
 * Flush client @id inbound, as a net plugin does once an RDMA WRITE into
 * its memory completed (IB_SYNC_MEM_CMD_SYNC of the client, direction
 * INBOUND, within @timeout_ms). Returns the command's errno (ys->err says
 * why; -EPROTO: the reply does not report the client); 0 when the sync
 * ran: *@client_err is then the client's, 0 or a negative errno.
 */
static inline int smynl_flush_inbound(struct ynl_sock *ys, __u32 id,
				      __u32 timeout_ms, int *client_err)
{
	struct ib_sync_mem_sync_req *req;
	struct ib_sync_mem_sync_rsp *rsp;
	int ret;

	*client_err = 0;
	req = ib_sync_mem_sync_req_alloc();
	if (!req)
		return -ENOMEM;
	ib_sync_mem_sync_req_set_client_id(req, id);
	ib_sync_mem_sync_req_set_sync_dir(req, IB_SYNC_MEM_SYNC_INBOUND);
	ib_sync_mem_sync_req_set_sync_timeout_ms(req, timeout_ms);
	rsp = ib_sync_mem_sync(ys, req);
	ret = rsp ? smynl_sync_result(rsp, id, client_err) : smynl_errno(ys);
	ib_sync_mem_sync_req_free(req);
	if (rsp)
		ib_sync_mem_sync_rsp_free(rsp);
	return ret;
}

#endif /* SMYNL_H */
