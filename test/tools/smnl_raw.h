/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smnl_raw: requests of the ib_sync_mem family built by hand, attribute by
 * attribute, and their answers read message by message, on the socket of
 * an smnl (smnl.h). Only for what the generated library cannot send or
 * would hide: requests missing an attribute or holding an empty nest, a
 * command replayed under fault injection, a dump paused between messages,
 * a reply left unread. Everything else goes through smnl.h's calls.
 */
#ifndef SMNL_RAW_H
#define SMNL_RAW_H

#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>

#include "smnl.h"

/* ---- messages ---- */

#define SMNL_MSG_MAX	32768
#define SMNL_NEST_MAX	8

struct smnl_msg {
	unsigned char buf[SMNL_MSG_MAX];
	size_t len;
	int overflow;		/* set when an attribute did not fit */
};

/* A request of the family: header, genl header, no attributes yet. */
void smnl_msg_init(struct smnl *nl, struct smnl_msg *m, uint8_t cmd,
		   uint16_t flags);
/* A request of any generic family (the controller, to resolve ids). */
void smnl_msg_init_family(struct smnl_msg *m, uint16_t family, uint8_t cmd,
			  uint8_t version, uint16_t flags);
void smnl_put(struct smnl_msg *m, uint16_t type, const void *data, size_t len);
void smnl_put_u16(struct smnl_msg *m, uint16_t type, uint16_t v);
void smnl_put_u32(struct smnl_msg *m, uint16_t type, uint32_t v);
void smnl_put_s32(struct smnl_msg *m, uint16_t type, int32_t v);
void smnl_put_u64(struct smnl_msg *m, uint16_t type, uint64_t v);
void smnl_put_str(struct smnl_msg *m, uint16_t type, const char *s);
void smnl_put_flag(struct smnl_msg *m, uint16_t type);
/*
 * The attributes put in @m so far, without its headers: a bare attribute
 * buffer (IB_SYNC_MEM_IOC_CREATE's), *@len bytes.
 */
const void *smnl_msg_attrs(const struct smnl_msg *m, size_t *len);
/* Open a nest (NLA_F_NESTED set); returns its offset for smnl_nest_end(). */
size_t smnl_nest_start(struct smnl_msg *m, uint16_t type);
void smnl_nest_end(struct smnl_msg *m, size_t off);

/*
 * Send @m and read the answer. @cb runs for every reply message of this
 * request (also every part of a dump); a non-zero return of @cb is kept
 * and returned after the answer is read to its end. Returns the ack's errno
 * (0 or negative), the dump's NLMSG_DONE status, or a local -errno; leaves
 * the ack's extack message in nl->extack, its NLMSGERR_ATTR_OFFS in
 * nl->extack_offs and its NLMSGERR_ATTR_MISS_TYPE in nl->miss_type.
 */
typedef int (*smnl_cb)(const struct nlmsghdr *nlh, void *arg);
int smnl_talk(struct smnl *nl, struct smnl_msg *m, smnl_cb cb, void *arg);

/* ---- attributes of replies ---- */

#define SMNL_ATTR_MAX	64

/* The attributes of a genl message (after its genl header). */
const void *smnl_genl_payload(const struct nlmsghdr *nlh, size_t *len);
/* tb[type] = last attribute of that type, types above @max ignored. */
void smnl_parse(const void *data, size_t len, const struct nlattr **tb,
		int max);
void smnl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		       int max);
uint16_t smnl_type(const struct nlattr *a);
const void *smnl_data(const struct nlattr *a);
size_t smnl_len(const struct nlattr *a);
uint16_t smnl_get_u16(const struct nlattr *a);
uint32_t smnl_get_u32(const struct nlattr *a);
int32_t smnl_get_s32(const struct nlattr *a);
uint64_t smnl_get_u64(const struct nlattr *a);
/* Copies a string attribute into @buf (always terminated). */
void smnl_get_str(const struct nlattr *a, char *buf, size_t size);

/* Iterate over the attributes in @data/@len (a nest's payload, ...). */
#define smnl_for_each(pos, rem, data, len)				\
	for ((pos) = (const struct nlattr *)(data), (rem) = (int)(len);	\
	     (rem) >= (int)sizeof(struct nlattr) &&			\
	     (pos)->nla_len >= sizeof(struct nlattr) &&			\
	     (pos)->nla_len <= (rem);					\
	     (rem) -= NLA_ALIGN((pos)->nla_len),			\
	     (pos) = (const struct nlattr *)((const char *)(pos) +	\
					     NLA_ALIGN((pos)->nla_len)))

/* ---- the socket ---- */

/*
 * For smnl_open(): the port id of nl->fd, and the family id resolved by a
 * hand-built request (the library keeps its own private). 0 or -errno.
 */
int smnl_raw_attach(struct smnl *nl);

/*
 * What is left of a dump the library gave up (an interrupted one: it
 * stops reading at the first NLM_F_DUMP_INTR message), read and dropped
 * so that the next request's answer comes first. The kernel makes the
 * next part of a dump while its reader takes one, so nothing queued means
 * the dump had ended. 0 or -errno.
 */
#define SMNL_DRAIN_BUF	(128 * 1024)
int smnl_raw_drain(struct smnl *nl);

#endif /* SMNL_RAW_H */
