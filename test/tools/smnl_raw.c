// SPDX-License-Identifier: GPL-2.0
/*
 * smnl_raw: requests of the ib_sync_mem family built attribute by attribute,
 * for the tests that must send what the generated library cannot (a
 * request missing an attribute, an empty nest, a command replayed under
 * fault injection, a dump read message by message). See smnl_raw.h; the
 * socket is the library's (smnl.c), so a client owned by it is owned alike.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "smnl_raw.h"

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

const void *smnl_msg_attrs(const struct smnl_msg *m, size_t *len)
{
	*len = m->len - NLMSG_HDRLEN - GENL_HDRLEN;
	return m->buf + NLMSG_HDRLEN + GENL_HDRLEN;
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

int smnl_raw_attach(struct smnl *nl)
{
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	socklen_t alen = sizeof(local);
	struct smnl_msg *m;
	uint16_t id = 0;
	int ret;

	if (getsockname(nl->fd, (struct sockaddr *)&local, &alen) < 0)
		return -errno;
	nl->portid = local.nl_pid;
	nl->seq = (uint32_t)getpid() << 8;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	smnl_msg_init_family(m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	smnl_put_str(m, CTRL_ATTR_FAMILY_NAME, IB_SYNC_MEM_GENL_NAME);
	ret = smnl_talk(nl, m, smnl_family_cb, &id);
	free(m);
	if (ret)
		return ret;
	if (!id)
		return -ENOENT;
	nl->family = id;
	return 0;
}

int smnl_raw_drain(struct smnl *nl)
{
	char *buf = malloc(SMNL_DRAIN_BUF);
	int ret = 0, done = 0;

	if (!buf)
		return -ENOMEM;
	while (!done) {
		ssize_t n = recv(nl->fd, buf, SMNL_DRAIN_BUF, MSG_DONTWAIT);
		struct nlmsghdr *nlh;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ret = -errno;
			break;	/* nothing queued: the dump had ended */
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
