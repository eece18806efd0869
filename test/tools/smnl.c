// SPDX-License-Identifier: GPL-2.0
/*
 * smnl: a minimal generic-netlink client of the ib_sync_mem family. See
 * smnl.h for the API, kmod/include/uapi/linux/ib_sync_mem.h for the protocol.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "smnl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* ---- messages ---- */

void smnl_msg_init_family(struct smnl_msg *m, uint16_t family, uint8_t cmd,
			  uint8_t version, uint16_t flags)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
	struct genlmsghdr *g;

	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	g->cmd = cmd;
	g->version = version;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->overflow = 0;
}

void smnl_msg_init(struct smnl *nl, struct smnl_msg *m, uint8_t cmd,
		   uint16_t flags)
{
	smnl_msg_init_family(m, nl->family, cmd, IB_SYNC_MEM_GENL_VERSION,
			     flags);
}

void smnl_put(struct smnl_msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a;
	size_t total = NLA_HDRLEN + len;

	if (m->len + NLA_ALIGN(total) > sizeof(m->buf) || total > 0xffff) {
		m->overflow = 1;
		return;
	}
	a = (struct nlattr *)(m->buf + m->len);
	a->nla_type = type;
	a->nla_len = total;
	if (len)
		memcpy(m->buf + m->len + NLA_HDRLEN, data, len);
	memset(m->buf + m->len + total, 0, NLA_ALIGN(total) - total);
	m->len += NLA_ALIGN(total);
}

void smnl_put_u16(struct smnl_msg *m, uint16_t type, uint16_t v)
{
	smnl_put(m, type, &v, sizeof(v));
}

void smnl_put_u32(struct smnl_msg *m, uint16_t type, uint32_t v)
{
	smnl_put(m, type, &v, sizeof(v));
}

void smnl_put_s32(struct smnl_msg *m, uint16_t type, int32_t v)
{
	smnl_put(m, type, &v, sizeof(v));
}

void smnl_put_u64(struct smnl_msg *m, uint16_t type, uint64_t v)
{
	smnl_put(m, type, &v, sizeof(v));
}

void smnl_put_str(struct smnl_msg *m, uint16_t type, const char *s)
{
	smnl_put(m, type, s, strlen(s) + 1);
}

void smnl_put_flag(struct smnl_msg *m, uint16_t type)
{
	smnl_put(m, type, NULL, 0);
}

size_t smnl_nest_start(struct smnl_msg *m, uint16_t type)
{
	size_t off = m->len;

	smnl_put(m, type | NLA_F_NESTED, NULL, 0);
	return off;
}

void smnl_nest_end(struct smnl_msg *m, size_t off)
{
	struct nlattr *a = (struct nlattr *)(m->buf + off);

	if (m->overflow)
		return;
	a->nla_len = m->len - off;
}

/* ---- attributes ---- */

uint16_t smnl_type(const struct nlattr *a)
{
	return a->nla_type & NLA_TYPE_MASK;
}

const void *smnl_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

size_t smnl_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/* Values are copied: a u64 need not be 8-byte aligned in a message. */
uint16_t smnl_get_u16(const struct nlattr *a)
{
	uint16_t v = 0;

	memcpy(&v, smnl_data(a), smnl_len(a) < sizeof(v) ? smnl_len(a) : sizeof(v));
	return v;
}

uint32_t smnl_get_u32(const struct nlattr *a)
{
	uint32_t v = 0;

	memcpy(&v, smnl_data(a), smnl_len(a) < sizeof(v) ? smnl_len(a) : sizeof(v));
	return v;
}

int32_t smnl_get_s32(const struct nlattr *a)
{
	return (int32_t)smnl_get_u32(a);
}

uint64_t smnl_get_u64(const struct nlattr *a)
{
	uint64_t v = 0;

	memcpy(&v, smnl_data(a), smnl_len(a) < sizeof(v) ? smnl_len(a) : sizeof(v));
	return v;
}

void smnl_get_str(const struct nlattr *a, char *buf, size_t size)
{
	size_t n = smnl_len(a);

	if (!size)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(buf, smnl_data(a), n);
	buf[n] = '\0';
}

void smnl_parse(const void *data, size_t len, const struct nlattr **tb,
		int max)
{
	const struct nlattr *a;
	int rem;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	smnl_for_each(a, rem, data, len) {
		if (smnl_type(a) <= max)
			tb[smnl_type(a)] = a;
	}
}

void smnl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		       int max)
{
	smnl_parse(smnl_data(nest), smnl_len(nest), tb, max);
}

const void *smnl_genl_payload(const struct nlmsghdr *nlh, size_t *len)
{
	size_t hdr = NLMSG_HDRLEN + GENL_HDRLEN;

	if (nlh->nlmsg_len < hdr) {
		*len = 0;
		return NULL;
	}
	*len = nlh->nlmsg_len - hdr;
	return (const char *)nlh + hdr;
}

/* ---- the socket ---- */

static void smnl_ack_extack(struct smnl *nl, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off, len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	off = NLMSG_HDRLEN + sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
	if (off >= nlh->nlmsg_len)
		return;
	len = nlh->nlmsg_len - off;
	smnl_parse((const char *)nlh + off, len, tb, NLMSGERR_ATTR_MAX);
	if (tb[NLMSGERR_ATTR_MSG])
		smnl_get_str(tb[NLMSGERR_ATTR_MSG], nl->extack,
			     sizeof(nl->extack));
	if (tb[NLMSGERR_ATTR_OFFS])
		nl->extack_offs = smnl_get_u32(tb[NLMSGERR_ATTR_OFFS]);
	if (tb[NLMSGERR_ATTR_MISS_TYPE])
		nl->miss_type = smnl_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
}

int smnl_talk(struct smnl *nl, struct smnl_msg *m, smnl_cb cb, void *arg)
{
	struct nlmsghdr *req = (struct nlmsghdr *)m->buf;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int dump = (req->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	size_t bufsize = 65536;
	char *buf;
	int cb_ret = 0;
	uint32_t seq;

	nl->extack[0] = '\0';
	nl->extack_offs = 0;
	nl->miss_type = 0;
	if (m->overflow)
		return -EMSGSIZE;
	seq = ++nl->seq;
	req->nlmsg_len = m->len;
	req->nlmsg_seq = seq;
	req->nlmsg_pid = 0;
	if (!dump)
		req->nlmsg_flags |= NLM_F_ACK;
	if (sendto(nl->fd, m->buf, m->len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;

	buf = malloc(bufsize);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct nlmsghdr *nlh;
		ssize_t n;

		/* Peek at the size first: a big reply must not be cut. */
		n = recv(nl->fd, buf, 1, MSG_PEEK | MSG_TRUNC);
		if (n < 0) {
			int err = errno == EAGAIN ? -ETIMEDOUT : -errno;

			if (errno == EINTR)
				continue;
			free(buf);
			return err;
		}
		if ((size_t)n > bufsize) {
			char *nb = realloc(buf, n);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			bufsize = n;
		}
		n = recv(nl->fd, buf, bufsize, 0);
		if (n < 0) {
			int err = -errno;

			if (errno == EINTR)
				continue;
			free(buf);
			return err;
		}
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, (size_t)n);
		     nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_seq != seq)
				continue;	/* a stale answer */
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nlh);

				smnl_ack_extack(nl, nlh);
				free(buf);
				if (e->error)
					return e->error;
				return cb_ret;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				int status = 0;

				if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
					memcpy(&status, NLMSG_DATA(nlh),
					       sizeof(status));
				if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
					/* DONE carries the TLVs after its int */
					const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
					size_t off = NLMSG_HDRLEN + sizeof(int);

					if (nlh->nlmsg_len > off) {
						smnl_parse((const char *)nlh + off,
							   nlh->nlmsg_len - off,
							   tb, NLMSGERR_ATTR_MAX);
						if (tb[NLMSGERR_ATTR_MSG])
							smnl_get_str(tb[NLMSGERR_ATTR_MSG],
								     nl->extack,
								     sizeof(nl->extack));
					}
				}
				free(buf);
				return status ? status : cb_ret;
			}
			if (nlh->nlmsg_type == NLMSG_NOOP ||
			    nlh->nlmsg_type == NLMSG_OVERRUN)
				continue;
			if (cb) {
				int r = cb(nlh, arg);

				if (r && !cb_ret)
					cb_ret = r;
			}
			if (dump && (nlh->nlmsg_flags & NLM_F_DUMP_INTR) &&
			    !cb_ret)
				cb_ret = -EINTR;
		}
	}
}

static int smnl_family_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const void *p;
	size_t len;

	p = smnl_genl_payload(nlh, &len);
	smnl_parse(p, len, tb, CTRL_ATTR_MAX);
	if (!tb[CTRL_ATTR_FAMILY_ID])
		return -EPROTO;
	*(uint16_t *)arg = smnl_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return 0;
}

int smnl_open(struct smnl *nl)
{
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	socklen_t alen = sizeof(local);
	struct smnl_msg *m;
	int one = 1, ret;
	uint16_t id = 0;

	memset(nl, 0, sizeof(*nl));
	nl->timeout_ms = 60000;
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (struct sockaddr *)&local, sizeof(local)) < 0 ||
	    getsockname(nl->fd, (struct sockaddr *)&local, &alen) < 0)
		goto err_errno;
	nl->portid = local.nl_pid;
	/* Extack messages; acks without a copy of the request. */
	if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)))
		goto err_errno;
	if (nl->timeout_ms) {
		struct timeval tv = {
			.tv_sec = nl->timeout_ms / 1000,
			.tv_usec = (nl->timeout_ms % 1000) * 1000,
		};

		if (setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
			goto err_errno;
	}
	nl->seq = (uint32_t)getpid() << 8;

	m = malloc(sizeof(*m));
	if (!m) {
		ret = -ENOMEM;
		goto err;
	}
	smnl_msg_init_family(m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	smnl_put_str(m, CTRL_ATTR_FAMILY_NAME, IB_SYNC_MEM_GENL_NAME);
	ret = smnl_talk(nl, m, smnl_family_cb, &id);
	free(m);
	if (ret)
		goto err;
	if (!id) {
		ret = -ENOENT;
		goto err;
	}
	nl->family = id;
	return 0;

err_errno:
	ret = -errno;
err:
	close(nl->fd);
	nl->fd = -1;
	return ret;
}

void smnl_close(struct smnl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}

/* ---- clients ---- */

static int smnl_new_cb(const struct nlmsghdr *nlh, void *arg)
{
	return smnl_client_parse(nlh, arg);
}

int smnl_register(struct smnl *nl, const struct smnl_new *req)
{
	struct smnl_client c;
	struct smnl_msg *m;
	size_t nest;
	int ret;

	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_CLIENT_NEW, 0);
	if (req->dev)
		smnl_put_str(m, IB_SYNC_MEM_A_DEV_NAME, req->dev);
	else
		smnl_put_u32(m, IB_SYNC_MEM_A_DEV_INDEX, req->dev_index);
	if (req->name)
		smnl_put_str(m, IB_SYNC_MEM_A_CLIENT_NAME, req->name);
	smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_KIND, req->kind);
	if (req->flags)
		smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_FLAGS, req->flags);
	if (req->region_nest) {
		nest = smnl_nest_start(m, IB_SYNC_MEM_A_REGION);
		if (!req->region_omit_addr)
			smnl_put_u64(m, IB_SYNC_MEM_A_REGION_ADDR, req->region_addr);
		smnl_put_u64(m, IB_SYNC_MEM_A_REGION_LEN, req->region_len);
		smnl_put_u32(m, IB_SYNC_MEM_A_REGION_ACCESS, req->region_access);
		smnl_nest_end(m, nest);
	}
	if (req->dmabuf_nest) {
		nest = smnl_nest_start(m, IB_SYNC_MEM_A_DMABUF);
		smnl_put_s32(m, IB_SYNC_MEM_A_DMABUF_FD, req->dmabuf_fd);
		smnl_nest_end(m, nest);
	}
	if (req->sim_nest) {
		nest = smnl_nest_start(m, IB_SYNC_MEM_A_SIM);
		smnl_put_u32(m, IB_SYNC_MEM_A_SIM_LATENCY_US, req->sim_latency_us);
		if (req->sim_fail_next) {
			smnl_put_u32(m, IB_SYNC_MEM_A_SIM_FAIL_NEXT,
				     req->sim_fail_next);
			smnl_put_u32(m, IB_SYNC_MEM_A_SIM_FAIL_ERRNO,
				     req->sim_fail_errno);
		}
		if (req->sim_size)
			smnl_put_u64(m, IB_SYNC_MEM_A_SIM_SIZE, req->sim_size);
		if (req->sim_addr)
			smnl_put_u64(m, IB_SYNC_MEM_A_SIM_ADDR, req->sim_addr);
		smnl_nest_end(m, nest);
	}
	memset(&c, 0, sizeof(c));
	ret = smnl_talk(nl, m, smnl_new_cb, &c);
	free(m);
	if (ret)
		return ret;
	if (!c.id)
		return -EPROTO;	/* acked, but no client in the reply */
	return (int)c.id;
}

int smnl_register_region(struct smnl *nl, const char *dev, const char *name,
			 uint64_t addr, uint64_t len, uint32_t access)
{
	struct smnl_new req = {
		.dev = dev,
		.name = name,
		.kind = IB_SYNC_MEM_KIND_REGION,
		.region_nest = 1,
		.region_addr = addr,
		.region_len = len,
		.region_access = access,
	};

	return smnl_register(nl, &req);
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
	struct smnl_msg *m = malloc(sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_CLIENT_DEL, 0);
	smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_ID, id);
	ret = smnl_talk(nl, m, NULL, NULL);
	free(m);
	return ret;
}

/* The per-client results of one IB_SYNC_MEM_A_SYNC_RESULTS nest into @res. */
static void smnl_sync_results(struct smnl_sync_result *res,
			      const struct nlattr *nest)
{
	const struct nlattr *r, *a;
	int rem;

	smnl_for_each(r, rem, smnl_data(nest), smnl_len(nest)) {
		const struct nlattr *rt[IB_SYNC_MEM_A_MAX + 1];

		if (smnl_type(r) != IB_SYNC_MEM_A_SYNC_RESULT)
			continue;
		smnl_parse_nested(r, rt, IB_SYNC_MEM_A_MAX);
		a = rt[IB_SYNC_MEM_A_CLIENT_ID];
		if (!a || (res->client_id && smnl_get_u32(a) != res->client_id))
			continue;
		res->have_client = 1;
		res->results++;
		if (!res->client_id) {
			/* A batch or a device: the first error, the sum. */
			if (rt[IB_SYNC_MEM_A_SYNC_ERR] && !res->client_err)
				res->client_err =
					smnl_get_s32(rt[IB_SYNC_MEM_A_SYNC_ERR]);
			if (rt[IB_SYNC_MEM_A_SYNC_NS])
				res->client_ns +=
					smnl_get_u64(rt[IB_SYNC_MEM_A_SYNC_NS]);
			continue;
		}
		if (rt[IB_SYNC_MEM_A_SYNC_ERR])
			res->client_err = smnl_get_s32(rt[IB_SYNC_MEM_A_SYNC_ERR]);
		if (rt[IB_SYNC_MEM_A_SYNC_NS])
			res->client_ns = smnl_get_u64(rt[IB_SYNC_MEM_A_SYNC_NS]);
	}
}

static int smnl_sync_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct smnl_sync_result *res = arg;
	const struct nlattr *tb[IB_SYNC_MEM_A_MAX + 1];
	const struct nlattr *a;
	const void *p;
	size_t len;
	int rem;

	p = smnl_genl_payload(nlh, &len);
	smnl_parse(p, len, tb, IB_SYNC_MEM_A_MAX);
	if (tb[IB_SYNC_MEM_A_SYNC_ERR])
		res->err = smnl_get_s32(tb[IB_SYNC_MEM_A_SYNC_ERR]);
	if (tb[IB_SYNC_MEM_A_SYNC_RUN])
		res->run = smnl_get_u32(tb[IB_SYNC_MEM_A_SYNC_RUN]);
	if (tb[IB_SYNC_MEM_A_SYNC_ERRORS])
		res->errors = smnl_get_u32(tb[IB_SYNC_MEM_A_SYNC_ERRORS]);
	if (tb[IB_SYNC_MEM_A_SYNC_SKIPPED])
		res->skipped = smnl_get_u32(tb[IB_SYNC_MEM_A_SYNC_SKIPPED]);
	if (tb[IB_SYNC_MEM_A_SYNC_NS])
		res->ns = smnl_get_u64(tb[IB_SYNC_MEM_A_SYNC_NS]);
	/*
	 * Every RESULTS nest, in order (tb[] holds only the last): a long
	 * reply has several, each holding as many results as fit in 64 KiB.
	 */
	smnl_for_each(a, rem, p, len)
		if (smnl_type(a) == IB_SYNC_MEM_A_SYNC_RESULTS)
			smnl_sync_results(res, a);
	return 0;
}

/* The rest of a SYNC request after its target: send it, read @res, free @m. */
static int smnl_sync_send(struct smnl *nl, struct smnl_msg *m, uint32_t dir,
			  uint32_t timeout_ms, struct smnl_sync_result *res)
{
	int ret;

	smnl_put_u32(m, IB_SYNC_MEM_A_SYNC_DIR, dir);
	if (timeout_ms)
		smnl_put_u32(m, IB_SYNC_MEM_A_SYNC_TIMEOUT_MS, timeout_ms);
	ret = smnl_talk(nl, m, smnl_sync_cb, res);
	free(m);
	return ret;
}

/* A SYNC of client @id; of @len bytes at @offset of it when @len is set. */
static int smnl_sync_one(struct smnl *nl, uint32_t id, uint32_t dir,
			 uint32_t timeout_ms, uint64_t offset, uint64_t len,
			 struct smnl_sync_result *res)
{
	struct smnl_msg *m = malloc(sizeof(*m));
	int ret;

	memset(res, 0, sizeof(*res));
	res->client_id = id;
	if (!m)
		return -ENOMEM;
	smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_SYNC, 0);
	smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_ID, id);
	if (len) {
		smnl_put_u64(m, IB_SYNC_MEM_A_SYNC_OFFSET, offset);
		smnl_put_u64(m, IB_SYNC_MEM_A_SYNC_LEN, len);
	}
	ret = smnl_sync_send(nl, m, dir, timeout_ms, res);
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

int smnl_mark_dirty(struct smnl *nl, uint32_t id, uint32_t dir,
		    uint64_t offset, uint64_t len)
{
	struct smnl_msg *m = malloc(sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_MARK_DIRTY, 0);
	smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_ID, id);
	smnl_put_u32(m, IB_SYNC_MEM_A_SYNC_DIR, dir);
	if (len) {
		smnl_put_u64(m, IB_SYNC_MEM_A_SYNC_OFFSET, offset);
		smnl_put_u64(m, IB_SYNC_MEM_A_SYNC_LEN, len);
	}
	ret = smnl_talk(nl, m, NULL, NULL);
	free(m);
	return ret;
}

int smnl_sync_batch(struct smnl *nl, const uint32_t *ids, unsigned int n,
		    uint32_t dir, uint32_t timeout_ms,
		    struct smnl_sync_result *res)
{
	struct smnl_msg *m = malloc(sizeof(*m));
	unsigned int i;
	size_t nest;

	memset(res, 0, sizeof(*res));
	if (!m)
		return -ENOMEM;
	smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_SYNC, 0);
	nest = smnl_nest_start(m, IB_SYNC_MEM_A_SYNC_CLIENTS);
	for (i = 0; i < n; i++)
		smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_ID, ids[i]);
	smnl_nest_end(m, nest);
	return smnl_sync_send(nl, m, dir, timeout_ms, res);
}

int smnl_sync_dev(struct smnl *nl, const char *dev, uint32_t dir,
		  uint32_t timeout_ms, struct smnl_sync_result *res)
{
	struct smnl_msg *m = malloc(sizeof(*m));

	memset(res, 0, sizeof(*res));
	if (!m)
		return -ENOMEM;
	smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_SYNC, 0);
	smnl_put_str(m, IB_SYNC_MEM_A_DEV_NAME, dev);
	return smnl_sync_send(nl, m, dir, timeout_ms, res);
}

int smnl_sync_owner(struct smnl *nl, const char *dev, uint32_t id,
		    const char *owner, uint32_t dir,
		    struct smnl_sync_result *res)
{
	struct smnl_msg *m = malloc(sizeof(*m));

	memset(res, 0, sizeof(*res));
	if (!m)
		return -ENOMEM;
	smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_SYNC, 0);
	if (dev)
		smnl_put_str(m, IB_SYNC_MEM_A_DEV_NAME, dev);
	if (id)
		smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_ID, id);
	smnl_put_str(m, IB_SYNC_MEM_A_CLIENT_OWNER, owner);
	return smnl_sync_send(nl, m, dir, 0, res);
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

static void smnl_client_stats(struct smnl_client *c, const struct nlattr *nest)
{
	const struct nlattr *tb[IB_SYNC_MEM_A_STATS_MAX + 1];

	smnl_parse_nested(nest, tb, IB_SYNC_MEM_A_STATS_MAX);
	c->have_stats = 1;
	if (tb[IB_SYNC_MEM_A_STATS_SYNCS])
		c->syncs = smnl_get_u64(tb[IB_SYNC_MEM_A_STATS_SYNCS]);
	if (tb[IB_SYNC_MEM_A_STATS_ERRORS])
		c->errors = smnl_get_u64(tb[IB_SYNC_MEM_A_STATS_ERRORS]);
	if (tb[IB_SYNC_MEM_A_STATS_NS])
		c->sync_ns = smnl_get_u64(tb[IB_SYNC_MEM_A_STATS_NS]);
	if (tb[IB_SYNC_MEM_A_STATS_MAX_NS])
		c->max_ns = smnl_get_u64(tb[IB_SYNC_MEM_A_STATS_MAX_NS]);
	if (tb[IB_SYNC_MEM_A_STATS_BYTES])
		c->bytes = smnl_get_u64(tb[IB_SYNC_MEM_A_STATS_BYTES]);
}

/* INFO is kind-specific: the kind says which attribute numbering applies. */
static void smnl_client_info(struct smnl_client *c, const struct nlattr *nest)
{
	c->have_info = 1;
	if (c->kind == IB_SYNC_MEM_KIND_SIM) {
		const struct nlattr *tb[IB_SYNC_MEM_A_SIM_MAX + 1];

		smnl_parse_nested(nest, tb, IB_SYNC_MEM_A_SIM_MAX);
		if (tb[IB_SYNC_MEM_A_SIM_CALLS_TO_DEVICE])
			c->sim_calls_to_device =
				smnl_get_u64(tb[IB_SYNC_MEM_A_SIM_CALLS_TO_DEVICE]);
		if (tb[IB_SYNC_MEM_A_SIM_CALLS_TO_CPU])
			c->sim_calls_to_cpu =
				smnl_get_u64(tb[IB_SYNC_MEM_A_SIM_CALLS_TO_CPU]);
		if (tb[IB_SYNC_MEM_A_SIM_CALLS_BIDIRECTIONAL])
			c->sim_calls_bidi =
				smnl_get_u64(tb[IB_SYNC_MEM_A_SIM_CALLS_BIDIRECTIONAL]);
		if (tb[IB_SYNC_MEM_A_SIM_CALLS_INBOUND])
			c->sim_calls_inbound =
				smnl_get_u64(tb[IB_SYNC_MEM_A_SIM_CALLS_INBOUND]);
	} else if (c->kind == IB_SYNC_MEM_KIND_REGION) {
		const struct nlattr *tb[IB_SYNC_MEM_A_REGION_MAX + 1];

		smnl_parse_nested(nest, tb, IB_SYNC_MEM_A_REGION_MAX);
		c->have_region = 1;
		if (tb[IB_SYNC_MEM_A_REGION_ADDR])
			c->region_addr = smnl_get_u64(tb[IB_SYNC_MEM_A_REGION_ADDR]);
		if (tb[IB_SYNC_MEM_A_REGION_LEN])
			c->region_len = smnl_get_u64(tb[IB_SYNC_MEM_A_REGION_LEN]);
		if (tb[IB_SYNC_MEM_A_REGION_ACCESS])
			c->region_access =
				smnl_get_u32(tb[IB_SYNC_MEM_A_REGION_ACCESS]);
		if (tb[IB_SYNC_MEM_A_REGION_SEGMENTS])
			c->region_segments =
				smnl_get_u32(tb[IB_SYNC_MEM_A_REGION_SEGMENTS]);
	} else if (c->kind == IB_SYNC_MEM_KIND_DMABUF) {
		const struct nlattr *tb[IB_SYNC_MEM_A_DMABUF_MAX + 1];

		smnl_parse_nested(nest, tb, IB_SYNC_MEM_A_DMABUF_MAX);
		c->have_dmabuf = 1;
		if (tb[IB_SYNC_MEM_A_DMABUF_SIZE])
			c->dmabuf_size = smnl_get_u64(tb[IB_SYNC_MEM_A_DMABUF_SIZE]);
		if (tb[IB_SYNC_MEM_A_DMABUF_INODE])
			c->dmabuf_inode =
				smnl_get_u64(tb[IB_SYNC_MEM_A_DMABUF_INODE]);
		if (tb[IB_SYNC_MEM_A_DMABUF_EXPORTER])
			smnl_get_str(tb[IB_SYNC_MEM_A_DMABUF_EXPORTER],
				     c->dmabuf_exporter,
				     sizeof(c->dmabuf_exporter));
	}
}

int smnl_client_parse(const struct nlmsghdr *nlh, struct smnl_client *c)
{
	const struct nlattr *tb[IB_SYNC_MEM_A_MAX + 1];
	const void *p;
	size_t len;

	memset(c, 0, sizeof(*c));
	p = smnl_genl_payload(nlh, &len);
	if (!p)
		return -EPROTO;
	smnl_parse(p, len, tb, IB_SYNC_MEM_A_MAX);
	if (!tb[IB_SYNC_MEM_A_CLIENT_ID])
		return -EPROTO;
	c->id = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_ID]);
	if (tb[IB_SYNC_MEM_A_CLIENT_NAME])
		smnl_get_str(tb[IB_SYNC_MEM_A_CLIENT_NAME], c->name, sizeof(c->name));
	if (tb[IB_SYNC_MEM_A_DEV_INDEX])
		c->dev_index = smnl_get_u32(tb[IB_SYNC_MEM_A_DEV_INDEX]);
	if (tb[IB_SYNC_MEM_A_DEV_NAME])
		smnl_get_str(tb[IB_SYNC_MEM_A_DEV_NAME], c->dev, sizeof(c->dev));
	if (tb[IB_SYNC_MEM_A_CLIENT_KIND])
		c->kind = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_KIND]);
	if (tb[IB_SYNC_MEM_A_CLIENT_FLAGS])
		c->flags = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_FLAGS]);
	if (tb[IB_SYNC_MEM_A_CLIENT_STATE])
		c->state = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_STATE]);
	if (tb[IB_SYNC_MEM_A_CLIENT_INVAL_REASON])
		c->inval_reason = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_INVAL_REASON]);
	if (tb[IB_SYNC_MEM_A_CLIENT_ORIGIN])
		c->origin = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_ORIGIN]);
	if (tb[IB_SYNC_MEM_A_CLIENT_SIZE])
		c->size = smnl_get_u64(tb[IB_SYNC_MEM_A_CLIENT_SIZE]);
	if (tb[IB_SYNC_MEM_A_CLIENT_LAST_ERR])
		c->last_err = smnl_get_s32(tb[IB_SYNC_MEM_A_CLIENT_LAST_ERR]);
	if (tb[IB_SYNC_MEM_A_CLIENT_OWNER_PID]) {
		c->have_owner = 1;
		c->owner_pid = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_OWNER_PID]);
	}
	if (tb[IB_SYNC_MEM_A_CLIENT_OWNER_PORTID])
		c->owner_portid = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_OWNER_PORTID]);
	if (tb[IB_SYNC_MEM_A_CLIENT_PINNED_PAGES]) {
		c->have_pinned = 1;
		c->pinned_pages = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_PINNED_PAGES]);
	}
	if (tb[IB_SYNC_MEM_A_STATS])
		smnl_client_stats(c, tb[IB_SYNC_MEM_A_STATS]);
	if (tb[IB_SYNC_MEM_A_CLIENT_INFO])
		smnl_client_info(c, tb[IB_SYNC_MEM_A_CLIENT_INFO]);
	return 0;
}

static int smnl_get_cb(const struct nlmsghdr *nlh, void *arg)
{
	return smnl_client_parse(nlh, arg);
}

int smnl_client_get(struct smnl *nl, uint32_t id, struct smnl_client *c)
{
	struct smnl_msg *m = malloc(sizeof(*m));
	int ret;

	memset(c, 0, sizeof(*c));
	if (!m)
		return -ENOMEM;
	smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_CLIENT_GET, 0);
	smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_ID, id);
	ret = smnl_talk(nl, m, smnl_get_cb, c);
	free(m);
	if (!ret && c->id != id)
		return -EPROTO;
	return ret;
}

struct smnl_dump_ctx {
	int (*cb)(const struct smnl_client *c, void *arg);
	void *arg;
	int ret;
	int intr;
};

static int smnl_dump_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct smnl_dump_ctx *ctx = arg;
	struct smnl_client c;
	int r;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		ctx->intr = 1;
	if (smnl_client_parse(nlh, &c))
		return 0;
	r = ctx->cb(&c, ctx->arg);
	if (r && !ctx->ret)
		ctx->ret = r;
	return 0;
}

int smnl_client_dump(struct smnl *nl, const char *dev,
		     int (*cb)(const struct smnl_client *c, void *arg),
		     void *arg)
{
	struct smnl_dump_ctx ctx = { .cb = cb, .arg = arg };
	struct smnl_msg *m = malloc(sizeof(*m));
	int tries, ret = 0;

	if (!m)
		return -ENOMEM;
	for (tries = 0; tries < 10; tries++) {
		ctx.ret = 0;
		ctx.intr = 0;
		smnl_msg_init(nl, m, IB_SYNC_MEM_CMD_CLIENT_GET, NLM_F_DUMP);
		if (dev)
			smnl_put_str(m, IB_SYNC_MEM_A_DEV_NAME, dev);
		ret = smnl_talk(nl, m, smnl_dump_cb, &ctx);
		if (ret == -EINTR || (!ret && ctx.intr))
			continue;	/* the list changed under the dump */
		break;
	}
	free(m);
	return ret ? ret : ctx.ret;
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

const char *smnl_kind_name(uint32_t kind)
{
	switch (kind) {
	case IB_SYNC_MEM_KIND_KERNEL: return "kernel";
	case IB_SYNC_MEM_KIND_SIM: return "sim";
	case IB_SYNC_MEM_KIND_REGION: return "region";
	case IB_SYNC_MEM_KIND_DMABUF: return "dmabuf";
	}
	return "?";
}

const char *smnl_state_name(uint32_t state)
{
	switch (state) {
	case IB_SYNC_MEM_CLIENT_LIVE: return "live";
	case IB_SYNC_MEM_CLIENT_INVALIDATED: return "invalidated";
	}
	return "?";
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
