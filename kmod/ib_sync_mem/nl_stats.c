// SPDX-License-Identifier: GPL-2.0
/*
 * Devices and statistics: DEV_GET (do and dump) and STATS_GET, and the
 * counters nest every object's reply carries.
 */
#include "netlink.h"

int sm_nl_put_stats(struct sk_buff *skb, struct sm_stats __percpu *stats,
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

/* One device's message; @gen as for sm_nl_fill_client(). */
static int sm_nl_dev_fill(struct sk_buff *skb, struct ib_sync_mem_domain *dom,
			  u32 portid, u32 seq, int flags, const u32 *gen)
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
	    sm_nl_put_stats(skb, dom->stats, false, U32_MAX) ||
	    (gen && nla_put_u32(skb, IB_SYNC_MEM_A_GENERATION, *gen))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

int sm_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
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
	ret = sm_nl_dev_fill(msg, dom, info->snd_portid, info->snd_seq, 0, NULL);
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	ret = genlmsg_reply(msg, info);
out:
	sm_domain_put(dom);
	return ret;
}

int sm_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr *attrs[IB_SYNC_MEM_A_MAX + 1];
	struct sm_nl_dump *d = sm_nl_dump(cb);
	struct ib_sync_mem_domain *dom;
	unsigned long index = d->next;
	struct nlmsghdr *nlh;
	u32 gen;
	int ret;

	ret = sm_nl_dump_parse(cb, attrs);
	if (ret < 0)
		return ret;
	if (!sm_nl_dump_round(cb))
		return 0;
	gen = cb->seq;
	ret = 0;
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
				     cb->nlh->nlmsg_seq, NLM_F_MULTI, &gen);
		sm_domain_put(dom);
		if (ret)
			break;
		nl_dump_check_consistent(cb, nlh);
		index++;
	}
	d->next = index;
	return sm_nl_dump_done(skb, cb, IB_SYNC_MEM_CMD_DEV_GET, ret);
}

int sm_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct ib_sync_mem_domain *dom = NULL;
	struct ib_sync_mem_client *c = NULL;
	struct sk_buff *msg;
	void *hdr;
	int ret = -EMSGSIZE;

	if (attrs[IB_SYNC_MEM_A_CLIENT_ID]) {
		c = sm_nl_client(attrs, info->extack);
		if (IS_ERR(c))
			return PTR_ERR(c);
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
