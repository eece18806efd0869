// SPDX-License-Identifier: GPL-2.0
/*
 * smnl: the test programs' calls of the ib_sync_mem family, made through
 * the C library the kernel generates from the YNL spec (ib_sync_mem-user.h,
 * libynl; smynl.h has what the canaries share with this file). See smnl.h
 * for the API; requests built by hand share the socket (smnl_raw.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/ib_sync_mem_dev.h>

#include "smnl_raw.h"
#include "smynl.h"

/* ---- the socket ---- */

int smnl_open(struct smnl *nl)
{
	struct ynl_error why;
	int ret;

	memset(nl, 0, sizeof(*nl));
	nl->fd = -1;
	ret = smynl_open(&nl->ys, &why);
	if (ret)
		return ret;
	nl->fd = ynl_socket_get_fd(nl->ys);
	ret = smnl_raw_attach(nl);
	if (ret)
		smnl_close(nl);
	return ret;
}

void smnl_close(struct smnl *nl)
{
	smynl_close(nl->ys);	/* closes nl->fd */
	nl->ys = NULL;
	nl->fd = -1;
}

/*
 * The outcome of the library's last call on @nl, which @failed or not: its
 * ack's extack message and attribute offset kept in @nl, its errno
 * returned (0 when it did not fail).
 */
static int smnl_ack(struct smnl *nl, int failed)
{
	smynl_extack(nl->ys, nl->extack, sizeof(nl->extack));
	nl->extack_offs = nl->ys->err.attr_offs;
	nl->miss_type = 0;	/* libynl names it in its sentence only */
	return failed ? smynl_errno(nl->ys) : 0;
}

/* ---- clients ---- */

int smnl_register(struct smnl *nl, const struct smnl_new *req)
{
	struct ib_sync_mem_client_new_req *r;
	struct ib_sync_mem_client_new_rsp *rsp;
	int ret;

	r = ib_sync_mem_client_new_req_alloc();
	if (!r)
		return -ENOMEM;
	if (req->dev)
		ib_sync_mem_client_new_req_set_dev_name(r, req->dev);
	else
		ib_sync_mem_client_new_req_set_dev_index(r, req->dev_index);
	if (req->name)
		ib_sync_mem_client_new_req_set_client_name(r, req->name);
	ib_sync_mem_client_new_req_set_client_kind(r, req->kind);
	if (req->flags)
		ib_sync_mem_client_new_req_set_client_flags(r, req->flags);
	if (req->region_nest) {
		if (!req->region_omit_addr)
			ib_sync_mem_client_new_req_set_region_addr(r, req->region_addr);
		ib_sync_mem_client_new_req_set_region_len(r, req->region_len);
		ib_sync_mem_client_new_req_set_region_access(r, req->region_access);
	}
	if (req->dmabuf_nest)
		ib_sync_mem_client_new_req_set_dmabuf_fd(r, req->dmabuf_fd);
	if (req->sim_nest) {
		ib_sync_mem_client_new_req_set_sim_latency_us(r, req->sim_latency_us);
		if (req->sim_fail_next) {
			ib_sync_mem_client_new_req_set_sim_fail_next(r, req->sim_fail_next);
			ib_sync_mem_client_new_req_set_sim_fail_errno(r, req->sim_fail_errno);
		}
		if (req->sim_size)
			ib_sync_mem_client_new_req_set_sim_size(r, req->sim_size);
		if (req->sim_addr)
			ib_sync_mem_client_new_req_set_sim_addr(r, req->sim_addr);
	}
	rsp = ib_sync_mem_client_new(nl->ys, r);
	ret = smnl_ack(nl, !rsp);
	if (!ret)
		ret = smynl_client_id(rsp);
	ib_sync_mem_client_new_req_free(r);
	if (rsp)
		ib_sync_mem_client_new_rsp_free(rsp);
	return ret;
}

/* The request of a region over @len bytes at @addr with @access. */
static struct smnl_new smnl_region(const char *dev, const char *name,
				   uint64_t addr, uint64_t len, uint32_t access)
{
	return (struct smnl_new){
		.dev = dev,
		.name = name,
		.kind = IB_SYNC_MEM_KIND_REGION,
		.region_nest = 1,
		.region_addr = addr,
		.region_len = len,
		.region_access = access,
	};
}

int smnl_register_region(struct smnl *nl, const char *dev, const char *name,
			 uint64_t addr, uint64_t len, uint32_t access)
{
	struct smnl_new req = smnl_region(dev, name, addr, len, access);

	return smnl_register(nl, &req);
}

int smnl_create(int devfd, const struct smnl_new *req, char *msg,
		size_t msg_len)
{
	static struct smnl_msg m;
	struct ib_sync_mem_ioc_create c = {
		.msg = (uintptr_t)msg, .msg_len = msg_len,
	};
	size_t alen, nest;

	smnl_msg_init_family(&m, 0, 0, 0, 0);
	smnl_put_str(&m, IB_SYNC_MEM_A_CLIENT_NAME, req->name);
	smnl_put_u32(&m, IB_SYNC_MEM_A_CLIENT_KIND, req->kind);
	smnl_put_str(&m, IB_SYNC_MEM_A_DEV_NAME, req->dev);
	if (req->flags)
		smnl_put_u32(&m, IB_SYNC_MEM_A_CLIENT_FLAGS, req->flags);
	if (req->sim_nest) {
		nest = smnl_nest_start(&m, IB_SYNC_MEM_A_SIM);
		smnl_put_u32(&m, IB_SYNC_MEM_A_SIM_LATENCY_US, req->sim_latency_us);
		smnl_nest_end(&m, nest);
	}
	c.attrs = (uintptr_t)smnl_msg_attrs(&m, &alen);
	c.attrs_len = alen;
	if (msg && msg_len)
		msg[0] = '\0';
	if (ioctl(devfd, IB_SYNC_MEM_IOC_CREATE, &c))
		return -errno;
	return c.id;
}

int smnl_register_dmabuf(struct smnl *nl, const char *dev, const char *name,
			 int fd)
{
	struct smnl_new req = {
		.dev = dev,
		.name = name,
		.kind = IB_SYNC_MEM_KIND_DMABUF,
		.dmabuf_nest = 1,
		.dmabuf_fd = fd,
	};

	return smnl_register(nl, &req);
}

int smnl_register_sim(struct smnl *nl, const char *dev, const char *name,
		      uint32_t latency_us)
{
	struct smnl_new req = {
		.dev = dev,
		.name = name,
		.kind = IB_SYNC_MEM_KIND_SIM,
		.sim_nest = 1,
		.sim_latency_us = latency_us,
	};

	return smnl_register(nl, &req);
}

int smnl_unregister(struct smnl *nl, uint32_t id)
{
	struct ib_sync_mem_client_del_req *r;
	int ret;

	r = ib_sync_mem_client_del_req_alloc();
	if (!r)
		return -ENOMEM;
	ib_sync_mem_client_del_req_set_client_id(r, id);
	ret = smnl_ack(nl, ib_sync_mem_client_del(nl->ys, r) < 0);
	ib_sync_mem_client_del_req_free(r);
	return ret;
}

/* ---- syncs ---- */

/*
 * A SYNC reply into @res: the totals, and the per-client results of every
 * IB_SYNC_MEM_A_SYNC_RESULTS nest (a long reply has several), in order.
 * For one client (res->client_id set) only its own result is taken; for a
 * batch or a device the first error and the sum of the times.
 */
static void smnl_sync_fill(struct smnl_sync_result *res,
			   const struct ib_sync_mem_sync_rsp *rsp)
{
	const struct ib_sync_mem_sync_result *r;
	unsigned int i, j;

	if (rsp->_present.sync_err)
		res->err = rsp->sync_err;
	if (rsp->_present.sync_run)
		res->run = rsp->sync_run;
	if (rsp->_present.sync_errors)
		res->errors = rsp->sync_errors;
	if (rsp->_present.sync_skipped)
		res->skipped = rsp->sync_skipped;
	if (rsp->_present.sync_ns)
		res->ns = rsp->sync_ns;
	for (i = 0; i < rsp->n_sync_results; i++) {
		for (j = 0; j < rsp->sync_results[i].n_sync_result; j++) {
			r = &rsp->sync_results[i].sync_result[j];
			if (!r->_present.client_id ||
			    (res->client_id && r->client_id != res->client_id))
				continue;
			res->have_client = 1;
			res->results++;
			if (!res->client_id) {
				if (r->_present.sync_err && !res->client_err)
					res->client_err = r->sync_err;
				if (r->_present.sync_ns)
					res->client_ns += r->sync_ns;
				continue;
			}
			if (r->_present.sync_err)
				res->client_err = r->sync_err;
			if (r->_present.sync_ns)
				res->client_ns = r->sync_ns;
		}
	}
}

/*
 * The rest of a SYNC request after its target: the direction and the
 * timeout (0: left out); sent, its reply read into @res (whose client_id
 * says which result is wanted), @r freed. Returns the command's errno.
 */
static int smnl_sync_send(struct smnl *nl, struct ib_sync_mem_sync_req *r,
			  uint32_t dir, uint32_t timeout_ms,
			  struct smnl_sync_result *res)
{
	struct ib_sync_mem_sync_rsp *rsp;
	int ret;

	ib_sync_mem_sync_req_set_sync_dir(r, dir);
	if (timeout_ms)
		ib_sync_mem_sync_req_set_sync_timeout_ms(r, timeout_ms);
	rsp = ib_sync_mem_sync(nl->ys, r);
	ret = smnl_ack(nl, !rsp);
	if (rsp) {
		smnl_sync_fill(res, rsp);
		ib_sync_mem_sync_rsp_free(rsp);
	}
	ib_sync_mem_sync_req_free(r);
	return ret;
}

/* A SYNC request, @res cleared for it: NULL when out of memory. */
static struct ib_sync_mem_sync_req *smnl_sync_req(struct smnl_sync_result *res,
						  uint32_t id)
{
	memset(res, 0, sizeof(*res));
	res->client_id = id;
	return ib_sync_mem_sync_req_alloc();
}

/* A SYNC of client @id; of @len bytes at @offset of it when @len is set. */
static int smnl_sync_one(struct smnl *nl, uint32_t id, uint32_t dir,
			 uint32_t timeout_ms, uint64_t offset, uint64_t len,
			 struct smnl_sync_result *res)
{
	struct ib_sync_mem_sync_req *r = smnl_sync_req(res, id);
	int ret;

	if (!r)
		return -ENOMEM;
	ib_sync_mem_sync_req_set_client_id(r, id);
	if (len) {
		ib_sync_mem_sync_req_set_sync_offset(r, offset);
		ib_sync_mem_sync_req_set_sync_len(r, len);
	}
	ret = smnl_sync_send(nl, r, dir, timeout_ms, res);
	if (!ret && !res->have_client)
		return -EPROTO;	/* the reply must report the client */
	return ret;
}

int smnl_sync_client_full(struct smnl *nl, uint32_t id, uint32_t dir,
			  uint32_t timeout_ms, struct smnl_sync_result *res)
{
	return smnl_sync_one(nl, id, dir, timeout_ms, 0, 0, res);
}

int smnl_sync_range(struct smnl *nl, uint32_t id, uint32_t dir,
		    uint64_t offset, uint64_t len, struct smnl_sync_result *res)
{
	return smnl_sync_one(nl, id, dir, 0, offset, len, res);
}

int smnl_sync_client(struct smnl *nl, uint32_t id, uint32_t dir,
		     uint32_t timeout_ms, int *client_err, uint64_t *ns)
{
	struct smnl_sync_result res;
	int ret = smnl_sync_client_full(nl, id, dir, timeout_ms, &res);

	if (client_err)
		*client_err = ret ? 0 : res.client_err;
	if (ns)
		*ns = ret ? 0 : res.client_ns;
	return ret;
}

int smnl_sync_batch(struct smnl *nl, const uint32_t *ids, unsigned int n,
		    uint32_t dir, uint32_t timeout_ms,
		    struct smnl_sync_result *res)
{
	struct ib_sync_mem_sync_req *r;
	__u32 *copy;

	if (n > SMNL_BATCH_IDS_MAX)
		return -EMSGSIZE;
	r = smnl_sync_req(res, 0);
	copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!r || !copy) {
		free(copy);
		if (r)
			ib_sync_mem_sync_req_free(r);
		return -ENOMEM;
	}
	if (n)
		memcpy(copy, ids, n * sizeof(*copy));
	/* The request takes the array (freed with it). */
	__ib_sync_mem_sync_req_set_sync_clients_client_id(r, copy, n);
	return smnl_sync_send(nl, r, dir, timeout_ms, res);
}

int smnl_sync_dev(struct smnl *nl, const char *dev, uint32_t dir,
		  uint32_t timeout_ms, struct smnl_sync_result *res)
{
	struct ib_sync_mem_sync_req *r = smnl_sync_req(res, 0);

	if (!r)
		return -ENOMEM;
	ib_sync_mem_sync_req_set_dev_name(r, dev);
	return smnl_sync_send(nl, r, dir, timeout_ms, res);
}

int smnl_sync_owner(struct smnl *nl, const char *dev, uint32_t id,
		    const char *owner, uint32_t dir,
		    struct smnl_sync_result *res)
{
	struct ib_sync_mem_sync_req *r = smnl_sync_req(res, 0);

	if (!r)
		return -ENOMEM;
	if (dev)
		ib_sync_mem_sync_req_set_dev_name(r, dev);
	if (id)
		ib_sync_mem_sync_req_set_client_id(r, id);
	ib_sync_mem_sync_req_set_client_owner(r, owner);
	return smnl_sync_send(nl, r, dir, 0, res);
}

int smnl_mark_dirty(struct smnl *nl, uint32_t id, uint32_t dir,
		    uint64_t offset, uint64_t len)
{
	struct ib_sync_mem_mark_dirty_req *r;
	int ret;

	r = ib_sync_mem_mark_dirty_req_alloc();
	if (!r)
		return -ENOMEM;
	ib_sync_mem_mark_dirty_req_set_client_id(r, id);
	ib_sync_mem_mark_dirty_req_set_sync_dir(r, dir);
	if (len) {
		ib_sync_mem_mark_dirty_req_set_sync_offset(r, offset);
		ib_sync_mem_mark_dirty_req_set_sync_len(r, len);
	}
	ret = smnl_ack(nl, ib_sync_mem_mark_dirty(nl->ys, r) < 0);
	ib_sync_mem_mark_dirty_req_free(r);
	return ret;
}

/* ---- client descriptions ---- */

/*
 * A client's kind-specific IB_SYNC_MEM_A_CLIENT_INFO into @c. The spec
 * gives it as bytes (its attribute numbering depends on the kind), so its
 * attributes are read with libynl's own helpers.
 */
static void smnl_client_info(struct smnl_client *c, const void *info,
			     unsigned int len)
{
	const struct nlattr *a;

	c->have_info = 1;
	c->have_region = c->kind == IB_SYNC_MEM_KIND_REGION;
	c->have_dmabuf = c->kind == IB_SYNC_MEM_KIND_DMABUF;
	ynl_attr_for_each_payload(info, len, a) {
		unsigned int type = ynl_attr_type(a);

		switch (c->kind) {
		case IB_SYNC_MEM_KIND_SIM:
			if (type == IB_SYNC_MEM_A_SIM_CALLS_TO_DEVICE)
				c->sim_calls_to_device = ynl_attr_get_u64(a);
			else if (type == IB_SYNC_MEM_A_SIM_CALLS_TO_CPU)
				c->sim_calls_to_cpu = ynl_attr_get_u64(a);
			else if (type == IB_SYNC_MEM_A_SIM_CALLS_BIDIRECTIONAL)
				c->sim_calls_bidi = ynl_attr_get_u64(a);
			else if (type == IB_SYNC_MEM_A_SIM_CALLS_INBOUND)
				c->sim_calls_inbound = ynl_attr_get_u64(a);
			break;
		case IB_SYNC_MEM_KIND_REGION:
			if (type == IB_SYNC_MEM_A_REGION_ADDR)
				c->region_addr = ynl_attr_get_u64(a);
			else if (type == IB_SYNC_MEM_A_REGION_LEN)
				c->region_len = ynl_attr_get_u64(a);
			else if (type == IB_SYNC_MEM_A_REGION_ACCESS)
				c->region_access = ynl_attr_get_u32(a);
			else if (type == IB_SYNC_MEM_A_REGION_SEGMENTS)
				c->region_segments = ynl_attr_get_u32(a);
			break;
		case IB_SYNC_MEM_KIND_DMABUF:
			if (type == IB_SYNC_MEM_A_DMABUF_SIZE)
				c->dmabuf_size = ynl_attr_get_u64(a);
			else if (type == IB_SYNC_MEM_A_DMABUF_INODE)
				c->dmabuf_inode = ynl_attr_get_u64(a);
			else if (type == IB_SYNC_MEM_A_DMABUF_EXPORTER)
				snprintf(c->dmabuf_exporter,
					 sizeof(c->dmabuf_exporter), "%.*s",
					 (int)ynl_attr_data_len(a),
					 ynl_attr_get_str(a));
			break;
		}
	}
}

/* A client as the library decoded it (CLIENT_GET, do or dump) into @c. */
static void smnl_client_from(struct smnl_client *c,
			     const struct ib_sync_mem_client_get_rsp *r)
{
	const struct ib_sync_mem_stats *s = &r->stats;

	memset(c, 0, sizeof(*c));
	c->id = r->client_id;
	if (r->_present.client_name_len)
		snprintf(c->name, sizeof(c->name), "%s", r->client_name);
	c->dev_index = r->dev_index;
	if (r->_present.dev_name_len)
		snprintf(c->dev, sizeof(c->dev), "%s", r->dev_name);
	c->kind = r->client_kind;
	c->flags = r->client_flags;
	c->state = r->client_state;
	c->inval_reason = r->client_inval_reason;
	c->origin = r->client_origin;
	c->size = r->client_size;
	c->last_err = r->client_last_err;
	c->have_owner = r->_present.client_owner_pid;
	c->owner_pid = r->client_owner_pid;
	c->owner_portid = r->client_owner_portid;
	c->have_pinned = r->_present.client_pinned_pages;
	c->pinned_pages = r->client_pinned_pages;
	if (r->_present.stats) {
		c->have_stats = 1;
		c->syncs = s->syncs;
		c->errors = s->errors;
		c->sync_ns = s->ns;
		c->max_ns = s->max_ns;
		c->bytes = s->bytes;
	}
	if (r->_present.client_info_len)
		smnl_client_info(c, r->client_info, r->_present.client_info_len);
}

int smnl_client_get(struct smnl *nl, uint32_t id, struct smnl_client *c)
{
	struct ib_sync_mem_client_get_req *r;
	struct ib_sync_mem_client_get_rsp *rsp;
	int ret;

	memset(c, 0, sizeof(*c));
	r = ib_sync_mem_client_get_req_alloc();
	if (!r)
		return -ENOMEM;
	ib_sync_mem_client_get_req_set_client_id(r, id);
	rsp = ib_sync_mem_client_get(nl->ys, r);
	ret = smnl_ack(nl, !rsp);
	if (rsp) {
		if (rsp->_present.client_id)
			smnl_client_from(c, rsp);
		ib_sync_mem_client_get_rsp_free(rsp);
	}
	ib_sync_mem_client_get_req_free(r);
	if (!ret && c->id != id)
		return -EPROTO;
	return ret;
}

int smnl_client_dump(struct smnl *nl, const char *dev,
		     int (*cb)(const struct smnl_client *c, void *arg),
		     void *arg)
{
	struct ib_sync_mem_client_get_req_dump *r;
	struct ib_sync_mem_client_get_list *list = NULL;
	struct smnl_client c;
	int tries, ret = 0, cb_ret = 0;

	r = ib_sync_mem_client_get_req_dump_alloc();
	if (!r)
		return -ENOMEM;
	if (dev)
		ib_sync_mem_client_get_req_dump_set_dev_name(r, dev);
	for (tries = 0; tries < SMNL_DUMP_TRIES; tries++) {
		list = ib_sync_mem_client_get_dump(nl->ys, r);
		ret = smnl_ack(nl, !list);
		if (list || nl->ys->err.code != YNL_ERROR_DUMP_INTER)
			break;
		/* The list changed under the dump: the rest of it is stale. */
		ret = smnl_raw_drain(nl);
		if (ret)
			break;
		ret = -EINTR;
		nl->dump_retries++;
	}
	ib_sync_mem_client_get_req_dump_free(r);
	if (!list)
		return ret;
	ynl_dump_foreach(list, obj) {
		int one;

		if (!obj->_present.client_id)
			continue;	/* the dump's end marker */
		smnl_client_from(&c, obj);
		one = cb(&c, arg);
		if (one && !cb_ret)
			cb_ret = one;
	}
	ib_sync_mem_client_get_list_free(list);
	return cb_ret;
}

struct smnl_find_ctx {
	const char *name;
	struct smnl_client *c;
	int found;
};

static int smnl_find_cb(const struct smnl_client *c, void *arg)
{
	struct smnl_find_ctx *ctx = arg;

	if (!ctx->found && !strcmp(c->name, ctx->name)) {
		*ctx->c = *c;
		ctx->found = 1;
	}
	return 0;
}

int smnl_client_find(struct smnl *nl, const char *name, struct smnl_client *c)
{
	struct smnl_find_ctx ctx = { .name = name, .c = c };
	int ret = smnl_client_dump(nl, NULL, smnl_find_cb, &ctx);

	if (ret)
		return ret;
	return ctx.found ? 0 : -ENOENT;
}

int smnl_wait_gone(struct smnl *nl, uint32_t id, int ms)
{
	struct smnl_client c;
	struct timespec t0, t;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = smnl_client_get(nl, id, &c);
		if (ret == -ENOENT)
			return 0;
		if (ret)
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return -ETIMEDOUT;
		usleep(10000);
	}
}

/* ---- names ---- */

const char *smnl_kind_name(uint32_t kind)
{
	const char *s = ib_sync_mem_kind_str(kind);

	return s ? s : "?";
}

const char *smnl_state_name(uint32_t state)
{
	const char *s = ib_sync_mem_client_state_str(state);

	return s ? s : "?";
}
