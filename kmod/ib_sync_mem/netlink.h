/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family, by job: netlink.c has the family, its
 * policies and commands table; nl_client.c the client kinds and the clients
 * userspace creates (create, delete, get, dump, ownership); nl_sync.c the
 * syncs and their results; nl_stats.c devices and statistics; nl_events.c
 * the multicast events (the core's listener). The protocol is documented in
 * include/uapi/linux/ib_sync_mem.h.
 */
#ifndef _IB_SYNC_MEM_NETLINK_H
#define _IB_SYNC_MEM_NETLINK_H

#include <net/genetlink.h>
#include <net/netlink.h>
#include <uapi/linux/ib_sync_mem.h>

#include "sync_mem.h"

extern struct genl_family sm_nl_family;
extern const struct nla_policy sm_nl_policy[IB_SYNC_MEM_A_MAX + 1];

/*
 * NL_REQ_ATTR_CHECK() with a message: the missing-attribute type alone
 * is not shown by every client. (Its locals must not shadow the ones
 * NL_REQ_ATTR_CHECK() declares, __extack among them.)
 */
#define SM_NL_REQUIRE_ATTR(extack, attrs, attr, msg) ({			\
	struct netlink_ext_ack *sm_ext_ = (extack);			\
	bool sm_missing_ = NL_REQ_ATTR_CHECK(sm_ext_, NULL, attrs, attr); \
	if (sm_missing_)						\
		NL_SET_ERR_MSG(sm_ext_, msg);				\
	sm_missing_;							\
})

/* SM_NL_REQUIRE_ATTR() of a request's attributes. */
#define SM_NL_REQUIRE(info, attr, msg) ({				\
	struct genl_info *sm_info_ = (info);				\
	SM_NL_REQUIRE_ATTR(sm_info_->extack, sm_info_->attrs, attr, msg); \
})

/* How much of a client a message shows. */
enum sm_nl_detail {
	SM_NL_EVENT,		/* no origin, stats or sensitive fields */
	SM_NL_PUBLIC,		/* everything but the sensitive fields */
	SM_NL_ADMIN,		/* everything */
};

/*
 * The state of a CLIENT_GET or DEV_GET dump, over cb->ctx. Each round puts
 * the generation it began at (cb->seq) in its messages; a request with
 * IB_SYNC_MEM_A_DUMP_END ends with the end message (sm_nl_dump_done()).
 */
struct sm_nl_dump {
	unsigned long next;	/* the client id or device index to go on from */
	u32 dev;		/* client dumps: device filter, index + 1; 0: none */
	u32 owner;		/* client dumps: owner filter, its id; 0: none */
	bool parsed;		/* the request was parsed (first round) */
	bool want_end;		/* it asked for the end message */
	bool ended;		/* the end message is out */
};

static inline struct sm_nl_dump *sm_nl_dump(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct sm_nl_dump) > sizeof(cb->ctx));
	return (struct sm_nl_dump *)cb->ctx;
}

/* netlink.c */
int sm_nl_dump_parse(struct netlink_callback *cb, struct nlattr **attrs);
bool sm_nl_dump_round(struct netlink_callback *cb);
int sm_nl_dump_done(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		    int ret);
enum sm_nl_detail sm_nl_detail_for(struct sk_buff *skb);
struct ib_sync_mem_domain *sm_nl_domain(struct nlattr **attrs,
					struct netlink_ext_ack *extack);
struct ib_sync_mem_client *sm_nl_client(struct nlattr **attrs,
					struct netlink_ext_ack *extack);
int sm_nl_put_dev(struct sk_buff *skb, struct ib_sync_mem_domain *dom);
int sm_nl_errno(int err);

/* nl_client.c */
int sm_nl_fill_client(struct sk_buff *skb, struct ib_sync_mem_client *c,
		      u32 portid, u32 seq, int flags, u8 cmd,
		      enum sm_nl_detail detail, const u32 *gen);
int sm_nl_client_new_doit(struct sk_buff *skb, struct genl_info *info);
int sm_nl_client_del_doit(struct sk_buff *skb, struct genl_info *info);
int sm_nl_client_get_doit(struct sk_buff *skb, struct genl_info *info);
int sm_nl_client_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
void sm_nl_domain_removed(struct ib_sync_mem_domain *dom);
struct ib_sync_mem_owner *sm_nl_owner(struct nlattr **attrs,
				      struct netlink_ext_ack *extack);
int sm_nl_clients_init(void);
void sm_nl_clients_exit(void);

/* nl_sync.c */
int sm_nl_sync_doit(struct sk_buff *skb, struct genl_info *info);
int sm_nl_mark_dirty_doit(struct sk_buff *skb, struct genl_info *info);

/* nl_stats.c */
int sm_nl_put_stats(struct sk_buff *skb, struct sm_stats __percpu *stats,
		    bool hist, u32 clients);
int sm_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info);
int sm_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int sm_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info);

/* nl_events.c */
enum sm_nl_groups {
	SM_NL_GRP_EVENTS,
};

extern const struct sm_listener sm_nl_listener;
void sm_nl_events_init(void);
void sm_nl_events_exit(void);

#endif /* _IB_SYNC_MEM_NETLINK_H */
