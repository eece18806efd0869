// SPDX-License-Identifier: GPL-2.0
/*
 * The family's multicast events (group "events"): what the core reports
 * through its listener, as the UAPI header and the YNL spec describe them.
 */
#include <linux/ratelimit.h>

#include "netlink.h"

static DEFINE_RATELIMIT_STATE(sm_nl_fail_rs, 5 * HZ, 10);

static void sm_nl_multicast(struct sk_buff *skb)
{
	genlmsg_multicast(&sm_nl_family, skb, 0, SM_NL_GRP_EVENTS, GFP_KERNEL);
}

static bool sm_nl_listening(void)
{
	return genl_has_listeners(&sm_nl_family, &init_net, SM_NL_GRP_EVENTS);
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

static void sm_nl_notify_client(struct ib_sync_mem_client *c, u8 cmd)
{
	struct sk_buff *skb;
	int ret;

	if (!sm_nl_listening())
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	if (cmd == IB_SYNC_MEM_CMD_CLIENT_NEW)
		ret = sm_nl_fill_client(skb, c, 0, 0, 0, cmd, SM_NL_EVENT, NULL);
	else
		ret = sm_nl_fill_client_gone(skb, c, cmd);
	if (ret) {
		nlmsg_free(skb);
		return;
	}
	sm_nl_multicast(skb);
}

static void sm_nl_notify_dev(struct ib_sync_mem_domain *dom, u8 cmd)
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

static void sm_nl_notify_sync_failed(struct ib_sync_mem_client *c,
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
	    nla_put_s32(skb, IB_SYNC_MEM_A_SYNC_ERR, sm_nl_errno(err))) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	sm_nl_multicast(skb);
}

static void sm_nl_client_event(struct ib_sync_mem_client *c, enum sm_event ev)
{
	switch (ev) {
	case SM_EV_CLIENT_NEW:
		sm_nl_notify_client(c, IB_SYNC_MEM_CMD_CLIENT_NEW);
		break;
	case SM_EV_CLIENT_DEL:
		sm_nl_notify_client(c, IB_SYNC_MEM_CMD_CLIENT_DEL);
		break;
	case SM_EV_CLIENT_INVALIDATED:
		sm_nl_notify_client(c, IB_SYNC_MEM_CMD_CLIENT_INVALIDATED);
		break;
	default:
		break;
	}
}

static void sm_nl_dev_event(struct ib_sync_mem_domain *dom, enum sm_event ev)
{
	sm_nl_notify_dev(dom, ev == SM_EV_DEV_NEW ? IB_SYNC_MEM_CMD_DEV_NEW :
			 IB_SYNC_MEM_CMD_DEV_DEL);
}

const struct sm_listener sm_nl_listener = {
	.client = sm_nl_client_event,
	.dev = sm_nl_dev_event,
	.sync_failed = sm_nl_notify_sync_failed,
	.domain_removed = sm_nl_domain_removed,
};

void sm_nl_events_init(void)
{
	ratelimit_set_flags(&sm_nl_fail_rs, RATELIMIT_MSG_ON_RELEASE);
}

void sm_nl_events_exit(void)
{
	ratelimit_state_exit(&sm_nl_fail_rs);
}
