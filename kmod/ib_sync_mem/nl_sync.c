// SPDX-License-Identifier: GPL-2.0
/*
 * SYNC: a device in one pass, one client (or a range of it), or a batch,
 * and the per-client results; MARK_DIRTY of a lazy client. The results
 * come in one or more IB_SYNC_MEM_A_SYNC_RESULTS nests, in order, each
 * holding as many results as fit in a nest's 64 KiB; the documented
 * limits (IB_SYNC_MEM_SYNC_BATCH_MAX clients in a batch,
 * IB_SYNC_MEM_DEV_CLIENTS_MAX on a device) keep the reply well under what
 * the YNL CLI and pkg/genl receive at once.
 */
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/stringify.h>

#include "netlink.h"

#define SM_NL_BATCH_MSG \
	"a batch names 1 to " __stringify(IB_SYNC_MEM_SYNC_BATCH_MAX) " clients"

/* Bytes of one result nest. */
#define SM_NL_RESULT_SIZE	(nla_total_size(0) + 2 * nla_total_size(sizeof(u32)) + \
				 nla_total_size_64bit(sizeof(u64)))

/* Bytes of the results of @n clients, the nests' own headers included. */
static size_t sm_nl_results_size(u32 n)
{
	size_t per_nest = (U16_MAX - nla_total_size(0)) / SM_NL_RESULT_SIZE;

	return (size_t)n * SM_NL_RESULT_SIZE +
	       (n / per_nest + 1) * nla_total_size(0);
}

/* Results being written: the open nest, a new one when it is full. */
struct sm_nl_results {
	struct sk_buff *msg;
	struct nlattr *nest;
};

static int sm_nl_results_begin(struct sm_nl_results *r, struct sk_buff *msg)
{
	r->msg = msg;
	r->nest = nla_nest_start(msg, IB_SYNC_MEM_A_SYNC_RESULTS);
	return r->nest ? 0 : -EMSGSIZE;
}

static int sm_nl_put_result(struct sm_nl_results *r, u32 id, int err, u64 ns)
{
	struct sk_buff *msg = r->msg;
	struct nlattr *res;

	/* nla_len is a u16: past it, the results go on in another nest. */
	if (skb_tail_pointer(msg) - (unsigned char *)r->nest +
	    SM_NL_RESULT_SIZE > U16_MAX) {
		nla_nest_end(msg, r->nest);
		r->nest = nla_nest_start(msg, IB_SYNC_MEM_A_SYNC_RESULTS);
		if (!r->nest)
			return -EMSGSIZE;
	}
	res = nla_nest_start(msg, IB_SYNC_MEM_A_SYNC_RESULT);
	if (!res || nla_put_u32(msg, IB_SYNC_MEM_A_CLIENT_ID, id) ||
	    nla_put_s32(msg, IB_SYNC_MEM_A_SYNC_ERR, sm_nl_errno(err)) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SYNC_NS, ns, IB_SYNC_MEM_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(msg, res);
	return 0;
}

static void sm_nl_results_end(struct sm_nl_results *r)
{
	nla_nest_end(r->msg, r->nest);
}

static int sm_nl_put_totals(struct sk_buff *msg, int err, u32 run, u32 errors,
			    u32 skipped, u64 ns)
{
	if (nla_put_s32(msg, IB_SYNC_MEM_A_SYNC_ERR, sm_nl_errno(err)) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_SYNC_RUN, run) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_SYNC_ERRORS, errors) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_SYNC_SKIPPED, skipped) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SYNC_NS, ns, IB_SYNC_MEM_A_PAD))
		return -EMSGSIZE;
	return 0;
}

static int sm_nl_sync_device(struct genl_info *info, enum ib_sync_mem_dir dir,
			     unsigned int timeout_ms)
{
	struct ib_sync_mem_owner *owner = NULL;
	struct ib_sync_mem_result res;
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_client *c;
	struct sm_nl_results results;
	struct sk_buff *msg;
	int idx, err, cerr, ret;
	void *hdr;
	u64 ns;

	if (info->attrs[IB_SYNC_MEM_A_CLIENT_OWNER]) {
		owner = sm_nl_owner(info->attrs, info->extack);
		if (IS_ERR(owner))
			return PTR_ERR(owner);
	}
	dom = sm_nl_domain(info->attrs, info->extack);
	if (IS_ERR(dom)) {
		if (owner)
			sm_owner_put(owner);
		return PTR_ERR(dom);
	}

	/*
	 * An error here means no pass ran for the caller; the errors of
	 * clients are results (res.err and each client's entry). A pass of
	 * one owner's clients records, and so replies with, only theirs.
	 */
	err = sm_sync_domain(dom, owner, dir, timeout_ms, true, &res);
	if (err) {
		if (err == -ENODEV)
			NL_SET_ERR_MSG(info->extack, "RDMA device went away");
		else if (err == -ETIMEDOUT)
			NL_SET_ERR_MSG(info->extack,
				       "timed out waiting for a sync pass");
		else if (err == -EINTR)
			NL_SET_ERR_MSG(info->extack,
				       "interrupted waiting for a sync pass");
		ret = err;
		goto out;
	}

	msg = genlmsg_new(NLMSG_GOODSIZE +
			  sm_nl_results_size(READ_ONCE(dom->nclients)),
			  GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	hdr = genlmsg_put_reply(msg, info, &sm_nl_family, 0, IB_SYNC_MEM_CMD_SYNC);
	ret = -EMSGSIZE;
	if (!hdr || sm_nl_put_dev(msg, dom) ||
	    sm_nl_put_totals(msg, res.err, res.clients, res.errors,
			     res.skipped, res.ns) ||
	    sm_nl_results_begin(&results, msg))
		goto err_msg;
	idx = sm_read_lock(dom);
	list_for_each_entry_srcu(c, &dom->clients, node,
				 srcu_read_lock_held(&dom->srcu)) {
		if (!sm_client_pass_result(c, res.pass, &ns, &cerr))
			continue;
		if (sm_nl_put_result(&results, c->id, cerr, ns))
			break;	/* clients registered since: no room, no need */
	}
	sm_read_unlock(dom, idx);
	sm_nl_results_end(&results);
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
	goto out;

err_msg:
	nlmsg_free(msg);
out:
	sm_domain_put(dom);
	if (owner)
		sm_owner_put(owner);
	return ret;
}

/* Why the client @attr names cannot be synced (@err), for the extack. */
static void sm_nl_unsyncable(struct genl_info *info, struct nlattr *attr,
			     int err)
{
	if (err == -ENXIO)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "client's memory is gone (invalidated)");
	else if (err == -ENODEV)
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "client's device is gone");
	else
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "client's kind cannot sync inbound");
}

/*
 * The range a request gives for client @c: *@offset and *@len (0: none,
 * the whole client), or an errno with the extack's reason.
 */
static int sm_nl_range(struct genl_info *info, struct ib_sync_mem_client *c,
		       u64 *offset, u64 *len)
{
	struct nlattr *off = info->attrs[IB_SYNC_MEM_A_SYNC_OFFSET];
	struct nlattr *l = info->attrs[IB_SYNC_MEM_A_SYNC_LEN];
	int err;

	*offset = off ? nla_get_u64(off) : 0;
	*len = l ? nla_get_u64(l) : 0;
	if (!l) {
		if (!off)
			return 0;
		NL_SET_ERR_MSG_ATTR(info->extack, off,
				    "a range needs its length (SYNC_LEN)");
		return -EINVAL;
	}
	err = sm_range_check(c, *offset, *len);
	if (err == -ERANGE)
		NL_SET_ERR_MSG_ATTR(info->extack, l,
				    "range is not inside the client");
	else if (err)
		NL_SET_ERR_MSG_ATTR(info->extack, l,
				    "range is off the client's alignment");
	return err;
}

/*
 * Take a reference on every client a request names, or fail naming one.
 * @ids is scratch room for @n ids.
 */
static int sm_nl_resolve(struct genl_info *info,
			 struct ib_sync_mem_batch_entry *r, u32 *ids, u32 n)
{
	struct nlattr *single = info->attrs[IB_SYNC_MEM_A_CLIENT_ID];
	struct nlattr *attr = single;
	u32 i = 0, found;
	int rem;

	if (single) {
		ids[0] = nla_get_u32(single);
	} else {
		nla_for_each_nested(attr, info->attrs[IB_SYNC_MEM_A_SYNC_CLIENTS],
				    rem)
			ids[i++] = nla_get_u32(attr);
	}
	found = sm_lookup_batch(ids, r, n);
	if (found == n)
		return 0;
	/* The attribute of the first id not found, for the extack. */
	if (!single) {
		i = 0;
		nla_for_each_nested(attr, info->attrs[IB_SYNC_MEM_A_SYNC_CLIENTS],
				    rem)
			if (i++ == found)
				break;
	}
	NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such client");
	return -ENOENT;
}

static int sm_nl_sync_clients(struct genl_info *info, enum ib_sync_mem_dir dir,
			      unsigned int timeout_ms)
{
	struct nlattr *single = info->attrs[IB_SYNC_MEM_A_CLIENT_ID];
	struct sm_nl_results results;
	u32 n = 0, i, run = 0, errors = 0, *ids;
	struct ib_sync_mem_batch_entry *r;
	int rem, first = 0, ret;
	struct nlattr *attr;
	struct sk_buff *msg;
	u64 total;
	void *hdr;

	if (single) {
		n = 1;
	} else {
		nla_for_each_nested(attr, info->attrs[IB_SYNC_MEM_A_SYNC_CLIENTS],
				    rem)
			n++;
		if (!n || n > IB_SYNC_MEM_SYNC_BATCH_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[IB_SYNC_MEM_A_SYNC_CLIENTS],
					    SM_NL_BATCH_MSG);
			return -EINVAL;
		}
	}
	r = kvcalloc(n, sizeof(*r), GFP_KERNEL);
	ids = kvcalloc(n, sizeof(*ids), GFP_KERNEL);
	if (!r || !ids) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* Every id resolves before anything is synced. */
	ret = sm_nl_resolve(info, r, ids, n);
	if (ret)
		goto out_free;
	if (single) {
		ret = sm_nl_range(info, r[0].client, &r[0].offset, &r[0].len);
		if (ret)
			goto out;
	}

	total = ktime_get_ns();
	ret = ib_sync_mem_sync_many(r, n, dir, timeout_ms);
	if (ret)
		goto out;
	total = ktime_get_ns() - total;
	/*
	 * As for a device: RUN counts the ->syncs that ran, ERRORS those of
	 * them that failed, SKIPPED the rest (lazy and clean, or
	 * invalidated: their entries carry -ENXIO or -ENODEV); ERR is the
	 * first error of any entry.
	 */
	for (i = 0; i < n; i++) {
		run += r[i].ran;
		if (r[i].ran && r[i].err)
			errors++;
		first = first ?: r[i].err;
	}

	/*
	 * One client that cannot be synced at all fails the command; one
	 * whose ->sync ran and returned these errnos is a result.
	 */
	if (single && !r[0].ran &&
	    (first == -ENXIO || first == -ENODEV || first == -EOPNOTSUPP)) {
		sm_nl_unsyncable(info, single, first);
		ret = first;
		goto out;
	}

	ret = -ENOMEM;
	msg = genlmsg_new(NLMSG_GOODSIZE + sm_nl_results_size(n), GFP_KERNEL);
	if (!msg)
		goto out;
	ret = -EMSGSIZE;
	hdr = genlmsg_put_reply(msg, info, &sm_nl_family, 0, IB_SYNC_MEM_CMD_SYNC);
	if (!hdr || sm_nl_put_totals(msg, first, run, errors, n - run, total) ||
	    sm_nl_results_begin(&results, msg))
		goto err_msg;
	for (i = 0; i < n; i++)
		if (sm_nl_put_result(&results, r[i].client->id, r[i].err,
				     r[i].ns))
			goto err_msg;
	sm_nl_results_end(&results);
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
	goto out;

err_msg:
	nlmsg_free(msg);
out:
	for (i = 0; i < n; i++)
		ib_sync_mem_put(r[i].client);
out_free:
	kvfree(ids);
	kvfree(r);
	return ret;
}

int sm_nl_sync_doit(struct sk_buff *skb, struct genl_info *info)
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
	if ((attrs[IB_SYNC_MEM_A_SYNC_OFFSET] || attrs[IB_SYNC_MEM_A_SYNC_LEN]) &&
	    !attrs[IB_SYNC_MEM_A_CLIENT_ID]) {
		NL_SET_ERR_MSG(info->extack,
			       "a range is of one client: name it with CLIENT_ID");
		return -EINVAL;
	}
	if (attrs[IB_SYNC_MEM_A_CLIENT_OWNER] &&
	    !attrs[IB_SYNC_MEM_A_DEV_INDEX] && !attrs[IB_SYNC_MEM_A_DEV_NAME]) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[IB_SYNC_MEM_A_CLIENT_OWNER],
				    "an owner selects clients of a device: name the device");
		return -EINVAL;
	}
	if (attrs[IB_SYNC_MEM_A_DEV_INDEX] || attrs[IB_SYNC_MEM_A_DEV_NAME])
		return sm_nl_sync_device(info,
					 nla_get_u32(attrs[IB_SYNC_MEM_A_SYNC_DIR]),
					 timeout_ms);
	return sm_nl_sync_clients(info, nla_get_u32(attrs[IB_SYNC_MEM_A_SYNC_DIR]),
				  timeout_ms);
}

int sm_nl_mark_dirty_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *id = info->attrs[IB_SYNC_MEM_A_CLIENT_ID];
	struct ib_sync_mem_client *c;
	enum ib_sync_mem_dir dir;
	u64 offset, len;
	int err;

	if (SM_NL_REQUIRE(info, IB_SYNC_MEM_A_CLIENT_ID,
			  "missing client (CLIENT_ID)") ||
	    SM_NL_REQUIRE(info, IB_SYNC_MEM_A_SYNC_DIR,
			  "missing sync direction (SYNC_DIR)"))
		return -EINVAL;
	dir = nla_get_u32(info->attrs[IB_SYNC_MEM_A_SYNC_DIR]);
	c = sm_nl_client(info->attrs, info->extack);
	if (IS_ERR(c))
		return PTR_ERR(c);
	err = sm_state_errno(c);
	if (err) {
		sm_nl_unsyncable(info, id, err);
		goto out;
	}
	if (!(c->flags & IB_SYNC_MEM_F_LAZY)) {
		NL_SET_ERR_MSG_ATTR(info->extack, id,
				    "client is not lazy: every sync runs it");
		err = -EINVAL;
		goto out;
	}
	err = sm_nl_range(info, c, &offset, &len);
	if (err)
		goto out;
	if (len)
		err = ib_sync_mem_mark_dirty_range(c, dir, offset, len);
	else
		ib_sync_mem_mark_dirty(c, dir);
out:
	ib_sync_mem_put(c);
	return err;
}
