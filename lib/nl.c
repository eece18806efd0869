// SPDX-License-Identifier: LGPL-2.1 OR BSD-3-Clause
/*
 * libsyncmem's handle and its netlink part: the ib_sync_mem family
 * through the C code the kernel's YNL generator (tools/net/ynl/ynl-gen-c.py
 * --mode user) makes of spec/ib_sync_mem.yaml, and libynl (lib/lib.mk
 * builds both into the library, hidden).
 *
 * Written by hand here, because the generator cannot express it:
 * IB_SYNC_MEM_A_CLIENT_INFO, whose attributes are those of the sim, region
 * or dmabuf set by the client's kind. YNL has no nest whose attribute set
 * depends on a sibling attribute's value (the spec gives it as binary), so
 * its contents are read here with libynl's attribute helpers
 * (sm_client_info()). The rest is the generator's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>	/* before ynl.h, which uses it without including it */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ynl.h"
#include "ib_sync_mem-user.h"

#include "priv.h"

/* Dumps a registry's changes interrupted, asked again at most this often. */
#define SM_DUMP_TRIES	1000
#define SM_DRAIN_BUF	(64 * 1024)

/* ---- the handle ---- */

SM_API struct syncmem *syncmem_open(void)
{
	struct syncmem *sm = calloc(1, sizeof(*sm));
	int err;

	if (!sm)
		return NULL;
	sm->fd = open("/dev/ib_sync_mem", O_RDWR | O_CLOEXEC);
	if (sm->fd < 0) {
		err = errno;
		free(sm);
		errno = err;
		return NULL;
	}
	return sm;
}

SM_API struct syncmem *syncmem_open_fd(int fd)
{
	struct syncmem *sm;

	/* The one ioctl every file of the device answers, and nothing else. */
	if (ioctl(fd, IB_SYNC_MEM_IOC_NOP) < 0)
		return NULL;
	sm = calloc(1, sizeof(*sm));
	if (!sm)
		return NULL;
	sm->fd = fd;
	return sm;
}

SM_API void syncmem_close(struct syncmem *sm)
{
	if (!sm)
		return;
	if (sm->ys)
		ynl_sock_destroy(sm->ys);
	close(sm->fd);
	free(sm);
}

SM_API const char *syncmem_errmsg(const struct syncmem *sm)
{
	return sm->msg;
}

SM_API int syncmem_fd(const struct syncmem *sm)
{
	return sm->fd;
}

/* ---- libynl's errors ---- */

/*
 * What libynl's failed call was, as a negative errno: the kernel's, or that
 * of a local failure (libynl leaves it in errno with code 0).
 */
static int sm_ynl_errno(const struct ynl_error *e)
{
	if (e->code > YNL_ERROR_NONE && e->code < __YNL_ERRNO_END)
		return -(int)e->code;
	switch (e->code) {
	case YNL_ERROR_NONE:
		return errno > 0 ? -errno : -EIO;
	case YNL_ERROR_INPUT_TOO_BIG:
		return -EMSGSIZE;
	case YNL_ERROR_INPUT_INVALID:
		return -EINVAL;
	case YNL_ERROR_DUMP_INTER:
		return -EINTR;
	default:
		return -EPROTO;
	}
}

/*
 * The kernel's extack message out of libynl's sentence, "Kernel error:
 * '<message>'" and an optional " (bad attribute: ...)", into sm->msg.
 */
static void sm_ynl_msg(struct syncmem *sm, const struct ynl_error *e)
{
	static const char *const heads[] = { "Kernel error: '", "Kernel warning: '" };
	const char *msg = e->msg, *end = NULL, *p;
	size_t i;

	sm->msg[0] = '\0';
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (!strncmp(msg, heads[i], strlen(heads[i])))
			break;
	if (i == sizeof(heads) / sizeof(heads[0]))
		return;
	msg += strlen(heads[i]);
	for (p = strchr(msg, '\''); p; p = strchr(p + 1, '\''))
		end = p;	/* the last quote: the message may hold one */
	if (end)
		snprintf(sm->msg, sizeof(sm->msg), "%.*s", (int)(end - msg), msg);
}

/* The failure of the last call on sm->ys: its reason kept, its errno. */
static int sm_nl_fail(struct syncmem *sm)
{
	sm_ynl_msg(sm, &sm->ys->err);
	return sm_ynl_errno(&sm->ys->err);
}

/* The family's socket, opened on first use: 0 or a negative errno. */
static int sm_nl(struct syncmem *sm)
{
	struct ynl_error why;
	int fd;

	sm_begin(sm);
	if (sm->ys)
		return 0;
	memset(&why, 0, sizeof(why));
	errno = 0;
	sm->ys = ynl_sock_create(&ynl_ib_sync_mem_family, &why);
	if (!sm->ys) {
		sm_ynl_msg(sm, &why);
		return sm_ynl_errno(&why);
	}
	fd = ynl_socket_get_fd(sm->ys);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		int err = -errno;

		ynl_sock_destroy(sm->ys);
		sm->ys = NULL;
		return err;
	}
	return 0;
}

/* What is still queued of an interrupted dump, read and dropped. */
static int sm_nl_drain(struct syncmem *sm)
{
	int fd = ynl_socket_get_fd(sm->ys), ret = 0, done = 0;
	char *buf = malloc(SM_DRAIN_BUF);

	if (!buf)
		return -ENOMEM;
	while (!done) {
		ssize_t n = recv(fd, buf, SM_DRAIN_BUF, MSG_DONTWAIT);
		struct nlmsghdr *nlh;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ret = -errno;
			break;
		}
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, (size_t)n);
		     nlh = NLMSG_NEXT(nlh, n))
			if (nlh->nlmsg_type == NLMSG_DONE ||
			    nlh->nlmsg_type == NLMSG_ERROR)
				done = 1;
	}
	free(buf);
	return ret;
}

/* ---- clients ---- */

SM_API int syncmem_client_delete(struct syncmem *sm, uint32_t id)
{
	struct ib_sync_mem_client_del_req *r;
	int ret;

	/* The handle's own client: the device's DELETE, for any user. */
	ret = sm_dev_delete(sm, id);
	if (ret != -ENOENT && ret != -ENOTTY)
		return ret;
	/*
	 * Another's (or a module without DELETE): the family's CLIENT_DEL,
	 * CAP_NET_ADMIN's. Refused that, the device's answer stands: another
	 * file's client is not confirmed to exist.
	 */
	ret = sm_nl(sm);
	if (ret)
		return ret;
	r = ib_sync_mem_client_del_req_alloc();
	if (!r)
		return -ENOMEM;
	ib_sync_mem_client_del_req_set_client_id(r, id);
	if (ib_sync_mem_client_del(sm->ys, r) < 0)
		ret = sm_nl_fail(sm);
	ib_sync_mem_client_del_req_free(r);
	return ret == -EPERM ? -ENOENT : ret;
}

/*
 * The hand-written part (see the top of this file): a client's
 * IB_SYNC_MEM_A_CLIENT_INFO, @len bytes at @info, whose attributes are of
 * the set of c->kind. Only a region's are described by struct
 * syncmem_client; the others are passed over.
 */
static void sm_client_info(struct syncmem_client *c, const void *info,
			   unsigned int len)
{
	const struct nlattr *a;

	if (c->kind != IB_SYNC_MEM_KIND_REGION)
		return;
	ynl_attr_for_each_payload(info, len, a) {
		switch (ynl_attr_type(a)) {
		case IB_SYNC_MEM_A_REGION_ADDR:
			if (ynl_attr_data_len(a) == 8)
				c->region_addr = ynl_attr_get_u64(a);
			break;
		case IB_SYNC_MEM_A_REGION_LEN:
			if (ynl_attr_data_len(a) == 8)
				c->region_len = ynl_attr_get_u64(a);
			break;
		case IB_SYNC_MEM_A_REGION_ACCESS:
			if (ynl_attr_data_len(a) == 4)
				c->region_access = ynl_attr_get_u32(a);
			break;
		case IB_SYNC_MEM_A_REGION_SEGMENTS:
			if (ynl_attr_data_len(a) == 4)
				c->region_segments = ynl_attr_get_u32(a);
			break;
		}
	}
}

/* A client as the generated code decoded it, into @c. */
static void sm_client_from(struct syncmem_client *c,
			   const struct ib_sync_mem_client_get_rsp *r)
{
	memset(c, 0, sizeof(*c));
	c->id = r->client_id;
	if (r->_present.client_name_len)
		snprintf(c->name, sizeof(c->name), "%s", r->client_name);
	if (r->_present.dev_name_len)
		snprintf(c->dev, sizeof(c->dev), "%s", r->dev_name);
	if (r->_present.client_owner_len)
		snprintf(c->owner, sizeof(c->owner), "%s", r->client_owner);
	c->dev_index = r->dev_index;
	c->kind = r->client_kind;
	c->flags = r->client_flags;
	c->state = r->client_state;
	c->origin = r->client_origin;
	c->inval_reason = r->client_inval_reason;
	c->last_err = r->client_last_err;
	c->pinned_pages = r->client_pinned_pages;
	c->owner_pid = r->client_owner_pid;
	c->size = r->client_size;
	if (r->_present.stats) {
		c->syncs = r->stats.syncs;
		c->errors = r->stats.errors;
		c->sync_ns = r->stats.ns;
		c->max_ns = r->stats.max_ns;
		c->bytes = r->stats.bytes;
	}
	if (r->_present.client_info_len)
		sm_client_info(c, r->client_info, r->_present.client_info_len);
}

SM_API int syncmem_client_get(struct syncmem *sm, uint32_t id,
			      struct syncmem_client *c)
{
	struct ib_sync_mem_client_get_req *r;
	struct ib_sync_mem_client_get_rsp *rsp;
	int ret = sm_nl(sm);

	if (ret)
		return ret;
	r = ib_sync_mem_client_get_req_alloc();
	if (!r)
		return -ENOMEM;
	ib_sync_mem_client_get_req_set_client_id(r, id);
	rsp = ib_sync_mem_client_get(sm->ys, r);
	if (!rsp) {
		ret = sm_nl_fail(sm);
	} else {
		if (rsp->_present.client_id && rsp->client_id == id)
			sm_client_from(c, rsp);
		else
			ret = -EPROTO;
		ib_sync_mem_client_get_rsp_free(rsp);
	}
	ib_sync_mem_client_get_req_free(r);
	return ret;
}

SM_API int syncmem_client_foreach(struct syncmem *sm, const char *dev,
				  int (*cb)(const struct syncmem_client *c, void *arg),
				  void *arg)
{
	struct ib_sync_mem_client_get_req_dump *r;
	struct ib_sync_mem_client_get_list *list = NULL;
	struct syncmem_client c;
	int tries, ret = sm_nl(sm);

	if (ret)
		return ret;
	r = ib_sync_mem_client_get_req_dump_alloc();
	if (!r)
		return -ENOMEM;
	if (dev)
		ib_sync_mem_client_get_req_dump_set_dev_name(r, dev);
	for (tries = 0; tries < SM_DUMP_TRIES; tries++) {
		list = ib_sync_mem_client_get_dump(sm->ys, r);
		if (list)
			break;
		ret = sm_nl_fail(sm);
		if (sm->ys->err.code != YNL_ERROR_DUMP_INTER)
			break;
		/* The registry changed under the dump: the rest is stale. */
		ret = sm_nl_drain(sm);
		if (ret)
			break;
		ret = -EINTR;
	}
	ib_sync_mem_client_get_req_dump_free(r);
	if (!list)
		return ret;
	ret = 0;
	ynl_dump_foreach(list, obj) {
		if (!obj->_present.client_id)
			continue;	/* the dump's end marker */
		sm_client_from(&c, obj);
		ret = cb(&c, arg);
		if (ret)
			break;
	}
	ib_sync_mem_client_get_list_free(list);
	return ret;
}

SM_API int syncmem_dev_index(struct syncmem *sm, const char *dev,
			     uint32_t *index)
{
	struct ib_sync_mem_dev_get_req *r;
	struct ib_sync_mem_dev_get_rsp *rsp;
	int ret = sm_nl(sm);

	if (ret)
		return ret;
	r = ib_sync_mem_dev_get_req_alloc();
	if (!r)
		return -ENOMEM;
	ib_sync_mem_dev_get_req_set_dev_name(r, dev);
	rsp = ib_sync_mem_dev_get(sm->ys, r);
	if (!rsp) {
		ret = sm_nl_fail(sm);
	} else {
		if (rsp->_present.dev_index)
			*index = rsp->dev_index;
		else
			ret = -EPROTO;
		ib_sync_mem_dev_get_rsp_free(rsp);
	}
	ib_sync_mem_dev_get_req_free(r);
	return ret;
}

SM_API const char *syncmem_kind_name(uint32_t kind)
{
	const char *s = ib_sync_mem_kind_str((enum ib_sync_mem_kind)kind);

	return s ? s : "?";
}

SM_API const char *syncmem_state_name(uint32_t state)
{
	const char *s = ib_sync_mem_client_state_str((enum ib_sync_mem_client_state)state);

	return s ? s : "?";
}
