// SPDX-License-Identifier: GPL-2.0
/*
 * The ib_sync_mem generic netlink family. The protocol is documented in
 * include/uapi/linux/ib_sync_mem.h; this file implements it.
 *
 * Clients created through netlink are kept in sm_nl_objs with who created
 * them, so that they can be deleted by userspace, die with their owning
 * socket (NETLINK_URELEASE), or go with their device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <uapi/linux/ib_sync_mem.h>

#include "sync_mem.h"

/* Most client ids one batch sync may name. */
#define SM_NL_BATCH_MAX	65536

static struct netlink_range_validation sm_latency_range = {
	.max = 10 * USEC_PER_SEC,
};

static struct netlink_range_validation sm_timeout_range = {
	.min = 1,
	.max = 600 * MSEC_PER_SEC,
};

static const struct nla_policy sm_sim_policy[IB_SYNC_MEM_A_SIM_MAX + 1] = {
	[IB_SYNC_MEM_A_SIM_LATENCY_US] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &sm_latency_range),
	[IB_SYNC_MEM_A_SIM_FAIL_NEXT] = { .type = NLA_U32 },
	[IB_SYNC_MEM_A_SIM_FAIL_ERRNO] = NLA_POLICY_RANGE(NLA_U32, 1, 4095),
	[IB_SYNC_MEM_A_SIM_SIZE] = { .type = NLA_U64 },
	[IB_SYNC_MEM_A_SIM_BATCH] = { .type = NLA_FLAG },
};

static const struct nla_policy sm_region_policy[IB_SYNC_MEM_A_REGION_MAX + 1] = {
	[IB_SYNC_MEM_A_REGION_ADDR] = { .type = NLA_U64 },
	[IB_SYNC_MEM_A_REGION_LEN] = { .type = NLA_U64 },
	[IB_SYNC_MEM_A_REGION_ACCESS] =
		NLA_POLICY_MASK(NLA_U32, IB_SYNC_MEM_REGION_F_WRITE),
};

static const struct nla_policy sm_dmabuf_policy[IB_SYNC_MEM_A_DMABUF_MAX + 1] = {
	[IB_SYNC_MEM_A_DMABUF_FD] = { .type = NLA_S32 },
};

static const struct nla_policy sm_batch_policy[IB_SYNC_MEM_A_CLIENT_ID + 1] = {
	[IB_SYNC_MEM_A_CLIENT_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy sm_nl_policy[IB_SYNC_MEM_A_MAX + 1] = {
	[IB_SYNC_MEM_A_DEV_INDEX] = { .type = NLA_U32 },
	[IB_SYNC_MEM_A_DEV_NAME] = { .type = NLA_NUL_STRING,
				     .len = IB_DEVICE_NAME_MAX - 1 },
	[IB_SYNC_MEM_A_CLIENT_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[IB_SYNC_MEM_A_CLIENT_NAME] = { .type = NLA_NUL_STRING,
					.len = IB_SYNC_MEM_NAME_LEN - 1 },
	[IB_SYNC_MEM_A_CLIENT_KIND] = NLA_POLICY_MIN(NLA_U32, 1),
	[IB_SYNC_MEM_A_CLIENT_FLAGS] =
		NLA_POLICY_MASK(NLA_U32, IB_SYNC_MEM_CLIENT_F_LAZY |
					 IB_SYNC_MEM_CLIENT_F_OWNED),
	[IB_SYNC_MEM_A_SIM] = NLA_POLICY_NESTED(sm_sim_policy),
	[IB_SYNC_MEM_A_SYNC_DIR] =
		NLA_POLICY_RANGE(NLA_U32, IB_SYNC_MEM_SYNC_TO_DEVICE,
				 IB_SYNC_MEM_SYNC_BIDIRECTIONAL),
	[IB_SYNC_MEM_A_SYNC_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &sm_timeout_range),
	[IB_SYNC_MEM_A_SYNC_CLIENTS] = NLA_POLICY_NESTED(sm_batch_policy),
	[IB_SYNC_MEM_A_REGION] = NLA_POLICY_NESTED(sm_region_policy),
	[IB_SYNC_MEM_A_DMABUF] = NLA_POLICY_NESTED(sm_dmabuf_policy),
};

static struct genl_family sm_nl_family;

enum sm_nl_groups {
	SM_NL_GRP_EVENTS,
};

static const struct genl_multicast_group sm_nl_mcgrps[] = {
	[SM_NL_GRP_EVENTS] = { .name = IB_SYNC_MEM_GENL_MCGRP_EVENTS },
};

/* A client created through netlink. */
struct sm_nl_obj {
	struct ib_sync_mem_client *client;
	struct ib_sync_mem_client_kind *kind;
	u32 portid;
	u32 pid;
	bool owned;
	bool dying;			/* being deleted (under sm_nl_lock) */
	struct list_head doomed;	/* on the way out, see below */
};

static DEFINE_MUTEX(sm_kinds_lock);	/* protects sm_kinds */
static LIST_HEAD(sm_kinds);
/* Netlink-created clients by id; xa_lock for readers, sm_nl_lock for writers. */
static DEFINE_XARRAY(sm_nl_objs);
static DEFINE_MUTEX(sm_nl_lock);	/* serialises changes of sm_nl_objs */
static bool sm_nl_ready;

static DEFINE_RATELIMIT_STATE(sm_nl_fail_rs, 5 * HZ, 10);

/**
 * ib_sync_mem_kind_register() - offer a client kind to userspace
 * @kind: the kind; must stay valid until unregistered
 *
 * Return: 0, or -EEXIST if a kind with that id is registered.
 */
int ib_sync_mem_kind_register(struct ib_sync_mem_client_kind *kind)
{
	struct ib_sync_mem_client_kind *k;
	int ret = 0;

	mutex_lock(&sm_kinds_lock);
	list_for_each_entry(k, &sm_kinds, node) {
		if (k->id == kind->id) {
			ret = -EEXIST;
			goto out;
		}
	}
	list_add_tail(&kind->node, &sm_kinds);
out:
	mutex_unlock(&sm_kinds_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(ib_sync_mem_kind_register);

/**
 * ib_sync_mem_kind_unregister() - withdraw a client kind
 * @kind: a registered kind
 *
 * Clients of the kind hold a reference on its module, so none exist when
 * the module that offers the kind is unloading.
 */
void ib_sync_mem_kind_unregister(struct ib_sync_mem_client_kind *kind)
{
	mutex_lock(&sm_kinds_lock);
	list_del(&kind->node);
	mutex_unlock(&sm_kinds_lock);
}
EXPORT_SYMBOL_GPL(ib_sync_mem_kind_unregister);

/*
 * GENL_REQ_ATTR_CHECK() with a message: the missing-attribute type alone
 * is not shown by every client. (Its locals must not shadow the ones
 * GENL_REQ_ATTR_CHECK() declares, __info among them.)
 */
#define SM_NL_REQUIRE(info, attr, msg) ({				\
	struct genl_info *sm_info_ = (info);				\
	bool sm_missing_ = GENL_REQ_ATTR_CHECK(sm_info_, attr);	\
	if (sm_missing_)						\
		NL_SET_ERR_MSG(sm_info_->extack, msg);			\
	sm_missing_;							\
})

/* The kind with that id, with a reference on its module, or NULL. */
static struct ib_sync_mem_client_kind *sm_kind_get(u32 id)
{
	struct ib_sync_mem_client_kind *k;

	mutex_lock(&sm_kinds_lock);
	list_for_each_entry(k, &sm_kinds, node) {
		if (k->id == id && try_module_get(k->owner)) {
			mutex_unlock(&sm_kinds_lock);
			return k;
		}
	}
	mutex_unlock(&sm_kinds_lock);
	return NULL;
}

/* The domain a request names by index or name, with a reference. */
static struct ib_sync_mem_domain *sm_nl_domain(struct nlattr **attrs,
					       struct netlink_ext_ack *extack)
{
	struct ib_sync_mem_domain *dom = NULL;
	struct nlattr *attr;

	if (attrs[IB_SYNC_MEM_A_DEV_INDEX]) {
		attr = attrs[IB_SYNC_MEM_A_DEV_INDEX];
		xa_lock(&sm_domains);
		dom = xa_load(&sm_domains, nla_get_u32(attr));
		if (dom && !kref_get_unless_zero(&dom->kref))
			dom = NULL;
		xa_unlock(&sm_domains);
	} else if (attrs[IB_SYNC_MEM_A_DEV_NAME]) {
		attr = attrs[IB_SYNC_MEM_A_DEV_NAME];
		dom = sm_domain_get_by_name(nla_data(attr));
	} else {
		NL_SET_ERR_MSG(extack, "missing device (DEV_NAME or DEV_INDEX)");
		return ERR_PTR(-EINVAL);
	}
	if (!dom) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "no such RDMA device");
		return ERR_PTR(-ENODEV);
	}
	return dom;
}

static int sm_nl_put_stats(struct sk_buff *skb, struct sm_stats __percpu *stats,
			   bool hist, u32 clients)
{
	struct sm_stats_sum sum;
	struct nlattr *nest, *h, *slot;
	int i;

	sm_stats_sum(stats, &sum);
	nest = nla_nest_start(skb, IB_SYNC_MEM_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, IB_SYNC_MEM_A_STATS_SYNCS, sum.syncs,
			      IB_SYNC_MEM_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, IB_SYNC_MEM_A_STATS_ERRORS, sum.errors,
			      IB_SYNC_MEM_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, IB_SYNC_MEM_A_STATS_NS, sum.ns,
			      IB_SYNC_MEM_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, IB_SYNC_MEM_A_STATS_MAX_NS, sum.max_ns,
			      IB_SYNC_MEM_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, IB_SYNC_MEM_A_STATS_BYTES, sum.bytes,
			      IB_SYNC_MEM_A_STATS_PAD))
		goto cancel;
	if (clients != U32_MAX &&
	    nla_put_u32(skb, IB_SYNC_MEM_A_STATS_CLIENTS, clients))
		goto cancel;
	if (hist) {
		h = nla_nest_start(skb, IB_SYNC_MEM_A_STATS_HIST);
		if (!h)
			goto cancel;
		for (i = 0; i < SM_HIST_BUCKETS; i++) {
			if (!sum.hist[i])
				continue;
			slot = nla_nest_start(skb, IB_SYNC_MEM_A_HIST_SLOT);
			if (!slot ||
			    nla_put_u32(skb, IB_SYNC_MEM_A_HIST_LOG2, i) ||
			    nla_put_u64_64bit(skb, IB_SYNC_MEM_A_HIST_COUNT,
					      sum.hist[i], IB_SYNC_MEM_A_HIST_PAD))
				goto cancel;
			nla_nest_end(skb, slot);
		}
		nla_nest_end(skb, h);
	}
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int sm_nl_put_dev(struct sk_buff *skb, struct ib_sync_mem_domain *dom)
{
	if (nla_put_u32(skb, IB_SYNC_MEM_A_DEV_INDEX, dom->index) ||
	    nla_put_string(skb, IB_SYNC_MEM_A_DEV_NAME, dom->name))
		return -EMSGSIZE;
	return 0;
}

/* How much of a client a message shows. */
enum sm_nl_detail {
	SM_NL_EVENT,		/* no origin, stats or sensitive fields */
	SM_NL_PUBLIC,		/* everything but the sensitive fields */
	SM_NL_ADMIN,		/* everything */
};

static int sm_nl_fill_client(struct sk_buff *skb, struct ib_sync_mem_client *c,
			     u32 portid, u32 seq, int flags, u8 cmd,
			     enum sm_nl_detail detail)
{
	struct sm_nl_obj *obj, o = {};
	struct nlattr *info;
	int state = sm_client_state(c);
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &sm_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;

	xa_lock(&sm_nl_objs);
	obj = xa_load(&sm_nl_objs, c->id);
	if (obj && obj->client == c)
		o = *obj;
	xa_unlock(&sm_nl_objs);

	if (nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_ID, c->id) ||
	    nla_put_string(skb, IB_SYNC_MEM_A_CLIENT_NAME, c->name) ||
	    sm_nl_put_dev(skb, c->dom) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_KIND, c->kind) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_FLAGS,
			(c->flags & IB_SYNC_MEM_F_LAZY ?
			 IB_SYNC_MEM_CLIENT_F_LAZY : 0) |
			(o.owned ? IB_SYNC_MEM_CLIENT_F_OWNED : 0)) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_STATE,
			state == SM_LIVE ? IB_SYNC_MEM_CLIENT_LIVE :
			IB_SYNC_MEM_CLIENT_INVALIDATED) ||
	    nla_put_u64_64bit(skb, IB_SYNC_MEM_A_CLIENT_SIZE, c->size,
			      IB_SYNC_MEM_A_PAD) ||
	    nla_put_s32(skb, IB_SYNC_MEM_A_CLIENT_LAST_ERR,
			READ_ONCE(c->last_err)))
		goto cancel;
	/* A client deleted while live (CLIENT_DEL's event) has no reason. */
	if (state != SM_LIVE && READ_ONCE(c->inval_reason) &&
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_INVAL_REASON,
			READ_ONCE(c->inval_reason)))
		goto cancel;
	if (c->kind == IB_SYNC_MEM_KIND_REGION &&
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_PINNED_PAGES,
			atomic_read(&c->pinned_pages)))
		goto cancel;
	if (detail == SM_NL_EVENT)
		goto done;

	if (nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_ORIGIN,
			o.client ? IB_SYNC_MEM_ORIGIN_NETLINK :
			IB_SYNC_MEM_ORIGIN_KERNEL) ||
	    sm_nl_put_stats(skb, c->stats, false, U32_MAX))
		goto cancel;
	if (detail != SM_NL_ADMIN)
		goto done;

	if (o.client &&
	    (nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_OWNER_PORTID, o.portid) ||
	     nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_OWNER_PID, o.pid)))
		goto cancel;
	if (c->ops->fill_info && state == SM_LIVE) {
		info = nla_nest_start(skb, IB_SYNC_MEM_A_CLIENT_INFO);
		if (!info || c->ops->fill_info(c, skb))
			goto cancel;
		nla_nest_end(skb, info);
	}
done:
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static enum sm_nl_detail sm_nl_detail_for(struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_NET_ADMIN) ? SM_NL_ADMIN : SM_NL_PUBLIC;
}

/* ---- events ---- */

static void sm_nl_multicast(struct sk_buff *skb)
{
	genlmsg_multicast(&sm_nl_family, skb, 0, SM_NL_GRP_EVENTS, GFP_KERNEL);
}

static bool sm_nl_listening(void)
{
	return READ_ONCE(sm_nl_ready) &&
	       genl_has_listeners(&sm_nl_family, &init_net, SM_NL_GRP_EVENTS);
}

/*
 * CLIENT_DEL and CLIENT_INVALIDATED events: which client (and why, when
 * invalidated), as the UAPI header and the YNL spec say; nothing of its
 * state, which is on the way out.
 */
static int sm_nl_fill_client_gone(struct sk_buff *skb,
				  struct ib_sync_mem_client *c, u8 cmd)
{
	void *hdr;

	hdr = genlmsg_put(skb, 0, 0, &sm_nl_family, 0, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_ID, c->id) ||
	    nla_put_string(skb, IB_SYNC_MEM_A_CLIENT_NAME, c->name) ||
	    sm_nl_put_dev(skb, c->dom) ||
	    (cmd == IB_SYNC_MEM_CMD_CLIENT_INVALIDATED &&
	     nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_INVAL_REASON,
			 READ_ONCE(c->inval_reason)))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

void sm_nl_notify_client(struct ib_sync_mem_client *c, u8 cmd)
{
	struct sk_buff *skb;
	int ret;

	if (!sm_nl_listening())
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	if (cmd == IB_SYNC_MEM_CMD_CLIENT_NEW)
		ret = sm_nl_fill_client(skb, c, 0, 0, 0, cmd, SM_NL_EVENT);
	else
		ret = sm_nl_fill_client_gone(skb, c, cmd);
	if (ret) {
		nlmsg_free(skb);
		return;
	}
	sm_nl_multicast(skb);
}

void sm_nl_notify_dev(struct ib_sync_mem_domain *dom, u8 cmd)
{
	struct sk_buff *skb;
	void *hdr;

	if (!sm_nl_listening())
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &sm_nl_family, 0, cmd);
	if (!hdr || sm_nl_put_dev(skb, dom)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	sm_nl_multicast(skb);
}

void sm_nl_notify_sync_failed(struct ib_sync_mem_client *c,
			      enum ib_sync_mem_dir dir, int err)
{
	struct sk_buff *skb;
	void *hdr;

	if (!sm_nl_listening() || !__ratelimit(&sm_nl_fail_rs))
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &sm_nl_family, 0,
			  IB_SYNC_MEM_CMD_SYNC_FAILED);
	if (!hdr ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_ID, c->id) ||
	    sm_nl_put_dev(skb, c->dom) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_SYNC_DIR, dir) ||
	    nla_put_s32(skb, IB_SYNC_MEM_A_SYNC_ERR, err)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	sm_nl_multicast(skb);
}

/* ---- netlink-created clients ---- */

/*
 * Delete the client of an object marked dying (or never recorded), then
 * forget the object. It stays in sm_nl_objs until its client is gone, so
 * that a CLIENT_DEL meanwhile learns that the client is being deleted
 * rather than taking it for a kernel driver's.
 */
static void sm_nl_obj_destroy(struct sm_nl_obj *obj)
{
	struct ib_sync_mem_client_kind *kind = obj->kind;
	u32 id = obj->client->id;

	kind->destroy(obj->client);
	mutex_lock(&sm_nl_lock);
	xa_cmpxchg(&sm_nl_objs, id, obj, NULL, 0);
	mutex_unlock(&sm_nl_lock);
	module_put(kind->owner);
	kfree(obj);
}

/* Mark every object @match selects dying and destroy it. */
static void sm_nl_destroy_matching(bool (*match)(struct sm_nl_obj *obj,
						 const void *arg),
				   const void *arg)
{
	struct sm_nl_obj *obj, *tmp;
	unsigned long id;
	LIST_HEAD(doomed);

	mutex_lock(&sm_nl_lock);
	xa_for_each(&sm_nl_objs, id, obj) {
		if (obj->dying || !match(obj, arg))
			continue;
		obj->dying = true;
		list_add_tail(&obj->doomed, &doomed);
	}
	mutex_unlock(&sm_nl_lock);

	/* Unregistering sleeps for syncs in flight: not under the lock. */
	list_for_each_entry_safe(obj, tmp, &doomed, doomed)
		sm_nl_obj_destroy(obj);
}

static bool sm_nl_match_domain(struct sm_nl_obj *obj, const void *dom)
{
	return obj->client->dom == dom;
}

void sm_nl_domain_removed(struct ib_sync_mem_domain *dom)
{
	sm_nl_destroy_matching(sm_nl_match_domain, dom);
}

static bool sm_nl_match_portid(struct sm_nl_obj *obj, const void *portid)
{
	return obj->owned && obj->portid == *(const u32 *)portid;
}

static bool sm_nl_match_all(struct sm_nl_obj *obj, const void *arg)
{
	return true;
}

static int sm_nl_urelease(struct notifier_block *nb, unsigned long event,
			  void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	sm_nl_destroy_matching(sm_nl_match_portid, &n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block sm_nl_notifier = {
	.notifier_call = sm_nl_urelease,
};

/* ---- commands ---- */

static int sm_nl_dev_fill(struct sk_buff *skb, struct ib_sync_mem_domain *dom,
			  u32 portid, u32 seq, int flags)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &sm_nl_family, flags,
			  IB_SYNC_MEM_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (sm_nl_put_dev(skb, dom) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_DEV_CLIENTS, READ_ONCE(dom->nclients)) ||
	    nla_put_u64_64bit(skb, IB_SYNC_MEM_A_DEV_PASSES,
			      sm_domain_passes(dom), IB_SYNC_MEM_A_PAD) ||
	    sm_nl_put_stats(skb, dom->stats, false, U32_MAX)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int sm_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ib_sync_mem_domain *dom;
	struct sk_buff *msg;
	int ret;

	dom = sm_nl_domain(info->attrs, info->extack);
	if (IS_ERR(dom))
		return PTR_ERR(dom);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	ret = sm_nl_dev_fill(msg, dom, info->snd_portid, info->snd_seq, 0);
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	ret = genlmsg_reply(msg, info);
out:
	sm_domain_put(dom);
	return ret;
}

/* A full skb ends this round of a dump; the next round goes on from there. */
static int sm_nl_dump_ret(struct sk_buff *skb, int ret)
{
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
}

/*
 * Dump state in cb->args: [0] next device index (DEV_GET); [1] device
 * filter, index + 1, 0 for none, [2] next client id and [3] filter
 * resolved (CLIENT_GET).
 */
static int sm_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct ib_sync_mem_domain *dom;
	unsigned long index = cb->args[0];
	struct nlmsghdr *nlh;
	int ret = 0;

	cb->seq = atomic_read(&sm_generation);
	for (;;) {
		xa_lock(&sm_domains);
		dom = xa_find(&sm_domains, &index, ULONG_MAX, XA_PRESENT);
		if (dom && !kref_get_unless_zero(&dom->kref))
			dom = NULL;
		xa_unlock(&sm_domains);
		if (!dom)
			break;
		/* The message goes at the tail: flag that one, not the first. */
		nlh = (struct nlmsghdr *)skb_tail_pointer(skb);
		ret = sm_nl_dev_fill(skb, dom, NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq, NLM_F_MULTI);
		sm_domain_put(dom);
		if (ret)
			break;
		nl_dump_check_consistent(cb, nlh);
		index++;
	}
	cb->args[0] = index;
	return sm_nl_dump_ret(skb, ret);
}

static int sm_nl_client_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_client *c;
	struct ib_sync_mem_client_kind *kind;
	struct ib_device *ibdev;
	struct sm_nl_obj *obj;
	struct sk_buff *msg;
	const char *name;
	u32 flags = 0;
	int ret;

	if (SM_NL_REQUIRE(info, IB_SYNC_MEM_A_CLIENT_NAME,
			  "missing client name (CLIENT_NAME)") ||
	    SM_NL_REQUIRE(info, IB_SYNC_MEM_A_CLIENT_KIND,
			  "missing client kind (CLIENT_KIND)"))
		return -EINVAL;
	name = nla_data(attrs[IB_SYNC_MEM_A_CLIENT_NAME]);
	if (!*name) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[IB_SYNC_MEM_A_CLIENT_NAME],
				    "client name is empty");
		return -EINVAL;
	}
	if (attrs[IB_SYNC_MEM_A_CLIENT_FLAGS])
		flags = nla_get_u32(attrs[IB_SYNC_MEM_A_CLIENT_FLAGS]);

	kind = sm_kind_get(nla_get_u32(attrs[IB_SYNC_MEM_A_CLIENT_KIND]));
	if (!kind) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[IB_SYNC_MEM_A_CLIENT_KIND],
				    "client kind not available (module not loaded?)");
		return -EOPNOTSUPP;
	}

	dom = sm_nl_domain(attrs, info->extack);
	if (IS_ERR(dom)) {
		ret = PTR_ERR(dom);
		goto err_kind;
	}
	ibdev = sm_domain_device_get(dom);
	sm_domain_put(dom);
	if (!ibdev) {
		NL_SET_ERR_MSG(info->extack, "RDMA device is going away");
		ret = -ENODEV;
		goto err_kind;
	}

	/*
	 * The reply is allocated before the client exists: failing to
	 * answer must not leave a client the caller never heard of.
	 */
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	obj = kzalloc(sizeof(*obj), GFP_KERNEL);
	if (!obj || !msg) {
		ib_device_put(ibdev);
		ret = -ENOMEM;
		goto err_obj;
	}
	c = kind->create(ibdev, name,
			 flags & IB_SYNC_MEM_CLIENT_F_LAZY ? IB_SYNC_MEM_F_LAZY : 0,
			 attrs, info->extack);
	ib_device_put(ibdev);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		/* The kind may have said why already; keep its message. */
		if (info->extack && info->extack->_msg)
			goto err_obj;
		if (ret == -ENOSPC)
			NL_SET_ERR_MSG(info->extack,
				       "client limit reached (max_clients or max_clients_per_dev)");
		else if (ret == -ENODEV)
			NL_SET_ERR_MSG(info->extack, "RDMA device is going away");
		else
			NL_SET_ERR_MSG(info->extack, "cannot register the client");
		goto err_obj;
	}
	obj->client = c;
	obj->kind = kind;
	obj->portid = info->snd_portid;
	obj->pid = task_tgid_nr(current);
	obj->owned = flags & IB_SYNC_MEM_CLIENT_F_OWNED;

	/*
	 * Once recorded, CLIENT_DEL or the device's removal may delete the
	 * client at any time: hold it for the reply.
	 */
	ib_sync_mem_get(c);
	mutex_lock(&sm_nl_lock);
	ret = xa_insert(&sm_nl_objs, c->id, obj, GFP_KERNEL);
	mutex_unlock(&sm_nl_lock);
	if (ret) {
		NL_SET_ERR_MSG(info->extack, "cannot record the client");
		ib_sync_mem_put(c);
		sm_nl_obj_destroy(obj);
		nlmsg_free(msg);
		return ret;
	}

	ret = sm_nl_fill_client(msg, c, info->snd_portid, info->snd_seq, 0,
				IB_SYNC_MEM_CMD_CLIENT_NEW, SM_NL_ADMIN);
	ib_sync_mem_put(c);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);

err_obj:
	kfree(obj);
	nlmsg_free(msg);
err_kind:
	module_put(kind->owner);
	return ret;
}

static int sm_nl_client_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ib_sync_mem_client *c;
	struct sm_nl_obj *obj;
	struct nlattr *attr;
	bool dying = false;
	u32 id;

	if (SM_NL_REQUIRE(info, IB_SYNC_MEM_A_CLIENT_ID,
			  "missing client id (CLIENT_ID)"))
		return -EINVAL;
	attr = info->attrs[IB_SYNC_MEM_A_CLIENT_ID];
	id = nla_get_u32(attr);

	mutex_lock(&sm_nl_lock);
	obj = xa_load(&sm_nl_objs, id);
	if (obj && obj->dying) {
		dying = true;
		obj = NULL;
	} else if (obj) {
		obj->dying = true;
	}
	mutex_unlock(&sm_nl_lock);
	if (obj) {
		sm_nl_obj_destroy(obj);
		return 0;
	}
	if (dying) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "no such client (being deleted)");
		return -ENOENT;
	}

	c = ib_sync_mem_lookup(id);
	if (c) {
		ib_sync_mem_put(c);
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "client was registered by a kernel driver");
		return -EBUSY;
	}
	NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such client");
	return -ENOENT;
}

static int sm_nl_client_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ib_sync_mem_client *c;
	struct sk_buff *msg;
	int ret;

	if (SM_NL_REQUIRE(info, IB_SYNC_MEM_A_CLIENT_ID,
			  "missing client id (CLIENT_ID)"))
		return -EINVAL;
	c = ib_sync_mem_lookup(nla_get_u32(info->attrs[IB_SYNC_MEM_A_CLIENT_ID]));
	if (!c) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[IB_SYNC_MEM_A_CLIENT_ID],
				    "no such client");
		return -ENOENT;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	ret = sm_nl_fill_client(msg, c, info->snd_portid, info->snd_seq, 0,
				IB_SYNC_MEM_CMD_CLIENT_GET,
				sm_nl_detail_for(skb));
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	ret = genlmsg_reply(msg, info);
out:
	ib_sync_mem_put(c);
	return ret;
}

/*
 * Resolve a dump's device filter into cb->args[1]. Done in the first
 * dumpit call rather than in .start, where some kernels (6.1) have no
 * extack to say what went wrong; an error here ends the dump with the
 * error and its message in NLMSG_DONE.
 */
static int sm_nl_client_dump_filter(struct netlink_callback *cb)
{
	struct nlattr *attrs[IB_SYNC_MEM_A_MAX + 1];
	struct ib_sync_mem_domain *dom;
	int ret;

	/* Already validated by genl; parse again for the attributes. */
	ret = nlmsg_parse(cb->nlh, GENL_HDRLEN, attrs, IB_SYNC_MEM_A_MAX,
			  sm_nl_policy, cb->extack);
	if (ret)
		return ret;
	cb->args[1] = 0;
	if (!attrs[IB_SYNC_MEM_A_DEV_INDEX] && !attrs[IB_SYNC_MEM_A_DEV_NAME])
		return 0;
	dom = sm_nl_domain(attrs, cb->extack);
	if (IS_ERR(dom))
		return PTR_ERR(dom);
	cb->args[1] = (unsigned long)dom->index + 1;
	sm_domain_put(dom);
	return 0;
}

static int sm_nl_client_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	enum sm_nl_detail detail = sm_nl_detail_for(cb->skb);
	struct ib_sync_mem_client *c;
	struct nlmsghdr *nlh;
	unsigned long id;
	int ret = 0;

	if (!cb->args[3]) {
		ret = sm_nl_client_dump_filter(cb);
		if (ret)
			return ret;
		cb->args[3] = 1;
	}
	id = cb->args[2];
	cb->seq = atomic_read(&sm_generation);
	for (; (c = sm_client_next(&id)); id++) {
		if (cb->args[1] && c->dom->index + 1 != cb->args[1]) {
			ib_sync_mem_put(c);
			continue;
		}
		nlh = (struct nlmsghdr *)skb_tail_pointer(skb);
		ret = sm_nl_fill_client(skb, c, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI,
					IB_SYNC_MEM_CMD_CLIENT_GET, detail);
		ib_sync_mem_put(c);
		if (ret)
			break;
		nl_dump_check_consistent(cb, nlh);
	}
	cb->args[2] = id;
	return sm_nl_dump_ret(skb, ret);
}

static int sm_nl_put_result(struct sk_buff *msg, u32 id, int err, u64 ns)
{
	struct nlattr *r = nla_nest_start(msg, IB_SYNC_MEM_A_SYNC_RESULT);

	if (!r || nla_put_u32(msg, IB_SYNC_MEM_A_CLIENT_ID, id) ||
	    nla_put_s32(msg, IB_SYNC_MEM_A_SYNC_ERR, err) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SYNC_NS, ns, IB_SYNC_MEM_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(msg, r);
	return 0;
}

static int sm_nl_put_totals(struct sk_buff *msg, int err, u32 run, u32 errors,
			    u32 skipped, u64 ns)
{
	if (nla_put_s32(msg, IB_SYNC_MEM_A_SYNC_ERR, err) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_SYNC_RUN, run) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_SYNC_ERRORS, errors) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_SYNC_SKIPPED, skipped) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SYNC_NS, ns, IB_SYNC_MEM_A_PAD))
		return -EMSGSIZE;
	return 0;
}

/* Result nest entry size, generously. */
#define SM_NL_RESULT_SIZE	64

static int sm_nl_sync_device(struct genl_info *info, enum ib_sync_mem_dir dir,
			     unsigned int timeout_ms)
{
	struct ib_sync_mem_result res;
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_client *c;
	struct nlattr *results;
	struct sk_buff *msg;
	int idx, err, ret;
	void *hdr;
	u64 ns;

	dom = sm_nl_domain(info->attrs, info->extack);
	if (IS_ERR(dom))
		return PTR_ERR(dom);

	err = sm_sync_domain(dom, dir, timeout_ms, &res);
	if (err == -ENODEV || err == -ETIMEDOUT) {
		if (err == -ENODEV)
			NL_SET_ERR_MSG(info->extack, "RDMA device went away");
		else
			NL_SET_ERR_MSG(info->extack,
				       "timed out waiting for a sync pass");
		ret = err;
		goto out;
	}

	msg = genlmsg_new(NLMSG_GOODSIZE +
			  (size_t)READ_ONCE(dom->nclients) * SM_NL_RESULT_SIZE,
			  GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	hdr = genlmsg_put_reply(msg, info, &sm_nl_family, 0, IB_SYNC_MEM_CMD_SYNC);
	ret = -EMSGSIZE;
	if (!hdr || sm_nl_put_dev(msg, dom) ||
	    sm_nl_put_totals(msg, err, res.clients, res.errors, res.skipped,
			     res.ns))
		goto err_msg;
	results = nla_nest_start(msg, IB_SYNC_MEM_A_SYNC_RESULTS);
	if (!results)
		goto err_msg;
	idx = srcu_read_lock(&dom->srcu);
	list_for_each_entry_srcu(c, &dom->clients, node,
				 srcu_read_lock_held(&dom->srcu)) {
		if (!sm_client_pass_ns(c, res.pass, &ns))
			continue;
		if (sm_nl_put_result(msg, c->id, READ_ONCE(c->last_err), ns))
			break;	/* clients registered since: no room, no need */
	}
	srcu_read_unlock(&dom->srcu, idx);
	nla_nest_end(msg, results);
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
	goto out;

err_msg:
	nlmsg_free(msg);
out:
	sm_domain_put(dom);
	return ret;
}

struct sm_nl_result {
	struct ib_sync_mem_client *client;
	int err;
	u64 ns;
};

/* Take a reference on every client a request names, or fail naming one. */
static int sm_nl_resolve(struct genl_info *info, struct sm_nl_result *r, u32 n)
{
	struct nlattr *single = info->attrs[IB_SYNC_MEM_A_CLIENT_ID];
	struct nlattr *attr = single;
	u32 i = 0;
	int rem;

	if (single) {
		r[i].client = ib_sync_mem_lookup(nla_get_u32(single));
		if (r[i].client)
			i++;
	} else {
		nla_for_each_nested(attr, info->attrs[IB_SYNC_MEM_A_SYNC_CLIENTS],
				    rem) {
			r[i].client = ib_sync_mem_lookup(nla_get_u32(attr));
			if (!r[i].client)
				break;
			i++;
		}
	}
	if (i == n)
		return 0;
	NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such client");
	while (i--)
		ib_sync_mem_put(r[i].client);
	return -ENOENT;
}

static int sm_nl_sync_clients(struct genl_info *info, enum ib_sync_mem_dir dir,
			      unsigned int timeout_ms)
{
	struct nlattr *single = info->attrs[IB_SYNC_MEM_A_CLIENT_ID];
	struct nlattr *attr, *results;
	u32 n = 0, i, errors = 0;
	struct sm_nl_result *r;
	int rem, first = 0, ret;
	struct sk_buff *msg;
	u64 t0, total;
	void *hdr;

	if (single) {
		n = 1;
	} else {
		nla_for_each_nested(attr, info->attrs[IB_SYNC_MEM_A_SYNC_CLIENTS],
				    rem)
			n++;
		if (!n || n > SM_NL_BATCH_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[IB_SYNC_MEM_A_SYNC_CLIENTS],
					    "a batch names 1 to 65536 clients");
			return -EINVAL;
		}
	}
	r = kvcalloc(n, sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	/* Every id resolves before anything is synced. */
	ret = sm_nl_resolve(info, r, n);
	if (ret)
		goto out_free;

	total = ktime_get_ns();
	for (i = 0; i < n; i++) {
		t0 = ktime_get_ns();
		r[i].err = ib_sync_mem_sync(r[i].client, dir, timeout_ms);
		r[i].ns = ktime_get_ns() - t0;
		if (r[i].err) {
			errors++;
			first = first ?: r[i].err;
		}
	}
	total = ktime_get_ns() - total;

	/* One client that cannot be synced at all fails the command. */
	if (single && (first == -ENXIO || first == -ENODEV)) {
		if (first == -ENXIO)
			NL_SET_ERR_MSG_ATTR(info->extack, single,
					    "client's memory is gone (invalidated)");
		else
			NL_SET_ERR_MSG_ATTR(info->extack, single,
					    "client's device is gone");
		ret = first;
		goto out;
	}

	ret = -ENOMEM;
	msg = genlmsg_new(NLMSG_GOODSIZE + (size_t)n * SM_NL_RESULT_SIZE,
			  GFP_KERNEL);
	if (!msg)
		goto out;
	ret = -EMSGSIZE;
	hdr = genlmsg_put_reply(msg, info, &sm_nl_family, 0, IB_SYNC_MEM_CMD_SYNC);
	if (!hdr || sm_nl_put_totals(msg, first, n, errors, 0, total))
		goto err_msg;
	results = nla_nest_start(msg, IB_SYNC_MEM_A_SYNC_RESULTS);
	if (!results)
		goto err_msg;
	for (i = 0; i < n; i++)
		if (sm_nl_put_result(msg, r[i].client->id, r[i].err, r[i].ns))
			goto err_msg;
	nla_nest_end(msg, results);
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
	goto out;

err_msg:
	nlmsg_free(msg);
out:
	for (i = 0; i < n; i++)
		ib_sync_mem_put(r[i].client);
out_free:
	kvfree(r);
	return ret;
}

static int sm_nl_sync_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	unsigned int timeout_ms = 0;
	int targets;

	if (SM_NL_REQUIRE(info, IB_SYNC_MEM_A_SYNC_DIR,
			  "missing sync direction (SYNC_DIR)"))
		return -EINVAL;
	if (attrs[IB_SYNC_MEM_A_SYNC_TIMEOUT_MS])
		timeout_ms = nla_get_u32(attrs[IB_SYNC_MEM_A_SYNC_TIMEOUT_MS]);
	targets = !!(attrs[IB_SYNC_MEM_A_DEV_INDEX] ||
		     attrs[IB_SYNC_MEM_A_DEV_NAME]) +
		  !!attrs[IB_SYNC_MEM_A_CLIENT_ID] +
		  !!attrs[IB_SYNC_MEM_A_SYNC_CLIENTS];
	if (targets != 1) {
		NL_SET_ERR_MSG(info->extack,
			       "name exactly one target: a device, CLIENT_ID or SYNC_CLIENTS");
		return -EINVAL;
	}
	if (attrs[IB_SYNC_MEM_A_DEV_INDEX] || attrs[IB_SYNC_MEM_A_DEV_NAME])
		return sm_nl_sync_device(info,
					 nla_get_u32(attrs[IB_SYNC_MEM_A_SYNC_DIR]),
					 timeout_ms);
	return sm_nl_sync_clients(info, nla_get_u32(attrs[IB_SYNC_MEM_A_SYNC_DIR]),
				  timeout_ms);
}

static int sm_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct ib_sync_mem_domain *dom = NULL;
	struct ib_sync_mem_client *c = NULL;
	struct sk_buff *msg;
	void *hdr;
	int ret = -EMSGSIZE;

	if (attrs[IB_SYNC_MEM_A_CLIENT_ID]) {
		c = ib_sync_mem_lookup(nla_get_u32(attrs[IB_SYNC_MEM_A_CLIENT_ID]));
		if (!c) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[IB_SYNC_MEM_A_CLIENT_ID],
					    "no such client");
			return -ENOENT;
		}
	} else if (attrs[IB_SYNC_MEM_A_DEV_INDEX] || attrs[IB_SYNC_MEM_A_DEV_NAME]) {
		dom = sm_nl_domain(attrs, info->extack);
		if (IS_ERR(dom))
			return PTR_ERR(dom);
	}

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	hdr = genlmsg_put_reply(msg, info, &sm_nl_family, 0,
				IB_SYNC_MEM_CMD_STATS_GET);
	if (!hdr)
		goto err_msg;
	if (c) {
		if (nla_put_u32(msg, IB_SYNC_MEM_A_CLIENT_ID, c->id) ||
		    sm_nl_put_dev(msg, c->dom) ||
		    sm_nl_put_stats(msg, c->stats, true, U32_MAX))
			goto err_msg;
	} else if (dom) {
		if (sm_nl_put_dev(msg, dom) ||
		    sm_nl_put_stats(msg, dom->stats, true,
				    READ_ONCE(dom->nclients)))
			goto err_msg;
	} else {
		if (sm_nl_put_stats(msg, sm_global_stats, true,
				    atomic_read(&sm_counters.registered)))
			goto err_msg;
	}
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
	goto out;

err_msg:
	nlmsg_free(msg);
out:
	if (c)
		ib_sync_mem_put(c);
	if (!IS_ERR_OR_NULL(dom))
		sm_domain_put(dom);
	return ret;
}

static const struct genl_ops sm_nl_ops[] = {
	{
		.cmd = IB_SYNC_MEM_CMD_DEV_GET,
		.doit = sm_nl_dev_get_doit,
		.dumpit = sm_nl_dev_get_dumpit,
	},
	{
		.cmd = IB_SYNC_MEM_CMD_CLIENT_NEW,
		.doit = sm_nl_client_new_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = IB_SYNC_MEM_CMD_CLIENT_DEL,
		.doit = sm_nl_client_del_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = IB_SYNC_MEM_CMD_CLIENT_GET,
		.doit = sm_nl_client_get_doit,
		.dumpit = sm_nl_client_get_dumpit,
	},
	{
		.cmd = IB_SYNC_MEM_CMD_SYNC,
		.doit = sm_nl_sync_doit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = IB_SYNC_MEM_CMD_STATS_GET,
		.doit = sm_nl_stats_get_doit,
	},
};

static struct genl_family sm_nl_family __ro_after_init = {
	.name = IB_SYNC_MEM_GENL_NAME,
	.version = IB_SYNC_MEM_GENL_VERSION,
	.maxattr = IB_SYNC_MEM_A_MAX,
	.policy = sm_nl_policy,
	.netnsok = false,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = sm_nl_ops,
	.n_ops = ARRAY_SIZE(sm_nl_ops),
	.mcgrps = sm_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(sm_nl_mcgrps),
	/* resv_start_op stays 0: every command is strictly validated. */
};

int sm_nl_init(void)
{
	int ret;

	ret = genl_register_family(&sm_nl_family);
	if (ret)
		return ret;
	ret = netlink_register_notifier(&sm_nl_notifier);
	if (ret) {
		genl_unregister_family(&sm_nl_family);
		return ret;
	}
	ratelimit_set_flags(&sm_nl_fail_rs, RATELIMIT_MSG_ON_RELEASE);
	WRITE_ONCE(sm_nl_ready, true);
	return 0;
}

void sm_nl_exit(void)
{
	WRITE_ONCE(sm_nl_ready, false);
	netlink_unregister_notifier(&sm_nl_notifier);
	genl_unregister_family(&sm_nl_family);
	/* Kinds live in modules that depend on this one: none are left. */
	sm_nl_destroy_matching(sm_nl_match_all, NULL);
	WARN_ON(!xa_empty(&sm_nl_objs));
}
