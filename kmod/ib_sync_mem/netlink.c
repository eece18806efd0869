// SPDX-License-Identifier: GPL-2.0
/*
 * The ib_sync_mem generic netlink family: its policies, its commands and
 * the helpers they share. The protocol is documented in
 * include/uapi/linux/ib_sync_mem.h; the commands live in nl_client.c,
 * nl_sync.c and nl_stats.c, the events in nl_events.c (netlink.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/module.h>

#include "netlink.h"

static struct netlink_range_validation sm_latency_range = {
	.max = 10 * USEC_PER_SEC,
};

static struct netlink_range_validation sm_timeout_range = {
	.min = 1,
	.max = IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS,
};

static const struct nla_policy sm_sim_policy[IB_SYNC_MEM_A_SIM_MAX + 1] = {
	[IB_SYNC_MEM_A_SIM_LATENCY_US] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &sm_latency_range),
	[IB_SYNC_MEM_A_SIM_FAIL_NEXT] = { .type = NLA_U32 },
	[IB_SYNC_MEM_A_SIM_FAIL_ERRNO] = NLA_POLICY_RANGE(NLA_U32, 1, 4095),
	[IB_SYNC_MEM_A_SIM_SIZE] = { .type = NLA_U64 },
	[IB_SYNC_MEM_A_SIM_BATCH] = { .type = NLA_FLAG },
	[IB_SYNC_MEM_A_SIM_ADDR] = { .type = NLA_U64 },
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

static const struct nla_policy sm_batch_policy[IB_SYNC_MEM_A_BATCH_MAX + 1] = {
	[IB_SYNC_MEM_A_BATCH_CLIENT_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

const struct nla_policy sm_nl_policy[IB_SYNC_MEM_A_MAX + 1] = {
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
				 IB_SYNC_MEM_SYNC_INBOUND),
	[IB_SYNC_MEM_A_SYNC_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &sm_timeout_range),
	[IB_SYNC_MEM_A_SYNC_CLIENTS] = NLA_POLICY_NESTED(sm_batch_policy),
	[IB_SYNC_MEM_A_REGION] = NLA_POLICY_NESTED(sm_region_policy),
	[IB_SYNC_MEM_A_DMABUF] = NLA_POLICY_NESTED(sm_dmabuf_policy),
	[IB_SYNC_MEM_A_DUMP_END] = { .type = NLA_FLAG },
	[IB_SYNC_MEM_A_CLIENT_OWNER] = { .type = NLA_NUL_STRING,
					 .len = IB_SYNC_MEM_NAME_MAX - 1 },
	[IB_SYNC_MEM_A_SYNC_OFFSET] = { .type = NLA_U64 },
	[IB_SYNC_MEM_A_SYNC_LEN] = NLA_POLICY_MIN(NLA_U64, 1),
};

static const struct genl_multicast_group sm_nl_mcgrps[] = {
	[SM_NL_GRP_EVENTS] = { .name = IB_SYNC_MEM_GENL_MCGRP_EVENTS },
};

/* The domain a request names by index or name, with a reference. */
struct ib_sync_mem_domain *sm_nl_domain(struct nlattr **attrs,
					struct netlink_ext_ack *extack)
{
	struct ib_sync_mem_domain *dom = NULL;
	struct nlattr *attr;

	if (attrs[IB_SYNC_MEM_A_DEV_INDEX]) {
		attr = attrs[IB_SYNC_MEM_A_DEV_INDEX];
		dom = sm_domain_get_by_index(nla_get_u32(attr));
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

/* The owner a request names (IB_SYNC_MEM_A_CLIENT_OWNER), with a reference. */
struct ib_sync_mem_owner *sm_nl_owner(struct nlattr **attrs,
				      struct netlink_ext_ack *extack)
{
	struct nlattr *attr = attrs[IB_SYNC_MEM_A_CLIENT_OWNER];
	struct ib_sync_mem_owner *owner = sm_owner_find(nla_data(attr));

	if (!owner) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "no such owner");
		return ERR_PTR(-ENOENT);
	}
	return owner;
}

/*
 * The client a request names (IB_SYNC_MEM_A_CLIENT_ID, present), with a
 * reference the caller puts.
 */
struct ib_sync_mem_client *sm_nl_client(struct nlattr **attrs,
					struct netlink_ext_ack *extack)
{
	struct nlattr *attr = attrs[IB_SYNC_MEM_A_CLIENT_ID];
	struct ib_sync_mem_client *c = sm_client_lookup(nla_get_u32(attr));

	if (!c) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "no such client");
		return ERR_PTR(-ENOENT);
	}
	return c;
}

int sm_nl_put_dev(struct sk_buff *skb, struct ib_sync_mem_domain *dom)
{
	if (nla_put_u32(skb, IB_SYNC_MEM_A_DEV_INDEX, dom->index) ||
	    nla_put_string(skb, IB_SYNC_MEM_A_DEV_NAME, dom->name))
		return -EMSGSIZE;
	return 0;
}

enum sm_nl_detail sm_nl_detail_for(struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_NET_ADMIN) ? SM_NL_ADMIN : SM_NL_PUBLIC;
}

/*
 * The first round of a dump parses its request into @attrs (genl validated
 * it already; its info is laid out differently across kernels) and notes
 * IB_SYNC_MEM_A_DUMP_END. Returns 1 in that round, 0 in the later ones, or
 * a negative errno, with an extack message for NLMSG_DONE.
 */
int sm_nl_dump_parse(struct netlink_callback *cb, struct nlattr **attrs)
{
	struct sm_nl_dump *d = sm_nl_dump(cb);
	int ret;

	if (d->parsed)
		return 0;
	ret = nlmsg_parse(cb->nlh, GENL_HDRLEN, attrs, IB_SYNC_MEM_A_MAX,
			  sm_nl_policy, cb->extack);
	if (ret)
		return ret;
	d->want_end = nla_get_flag(attrs[IB_SYNC_MEM_A_DUMP_END]);
	d->parsed = true;
	return 1;
}

/*
 * A round of a dump begins: its messages carry the generation read here.
 * False once the end message is out: the dump is over.
 */
bool sm_nl_dump_round(struct netlink_callback *cb)
{
	if (sm_nl_dump(cb)->ended)
		return false;
	cb->seq = sm_generation_read_begin();
	return true;
}

static int sm_nl_dump_put_end(struct sk_buff *skb, struct netlink_callback *cb,
			      u8 cmd)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)skb_tail_pointer(skb);
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &sm_nl_family, NLM_F_MULTI, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_flag(skb, IB_SYNC_MEM_A_DUMP_END) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_GENERATION, cb->seq) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_END_GENERATION,
			sm_generation_read())) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	nl_dump_check_consistent(cb, nlh);
	return 0;
}

/*
 * A round of a dump ends with @ret, the result of its walk: 0 when it went
 * past the last object, which is when the end message goes out (in the
 * next round if this one's skb is full), or -EMSGSIZE for a full skb, when
 * the next round goes on from where this one stopped.
 */
int sm_nl_dump_done(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		    int ret)
{
	struct sm_nl_dump *d = sm_nl_dump(cb);

	if (!ret && d->want_end) {
		ret = sm_nl_dump_put_end(skb, cb, cmd);
		d->ended = !ret;
	}
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
}

/*
 * What userspace sees of a kernel error: a wait interrupted by a signal is
 * -EINTR there (-ERESTARTSYS and its kin never leave the kernel).
 */
int sm_nl_errno(int err)
{
	switch (err) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		return -EINTR;
	default:
		return err;
	}
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
	{
		.cmd = IB_SYNC_MEM_CMD_MARK_DIRTY,
		.doit = sm_nl_mark_dirty_doit,
		.flags = GENL_ADMIN_PERM,
	},
};

struct genl_family sm_nl_family __ro_after_init = {
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

	ret = sm_nl_clients_init();
	if (ret)
		return ret;
	ret = genl_register_family(&sm_nl_family);
	if (ret) {
		sm_nl_clients_exit();
		return ret;
	}
	sm_nl_events_init();
	sm_listen(&sm_nl_listener);
	return 0;
}

void sm_nl_exit(void)
{
	sm_listen(NULL);
	sm_nl_events_exit();
	genl_unregister_family(&sm_nl_family);
	/* Kinds live in modules that depend on this one: none are left. */
	sm_nl_clients_exit();
}
