// SPDX-License-Identifier: GPL-2.0
/*
 * Clients userspace creates, and the kinds it may create: CLIENT_NEW,
 * CLIENT_DEL, CLIENT_GET (do and dump), and the same creation for an open
 * file of /dev/ib_sync_mem (IB_SYNC_MEM_IOC_CREATE).
 *
 * A client created by userspace is kept in sm_nl_objs with who created
 * it, so that it can be deleted by userspace, die with its owning socket
 * or file, or go with its device. Ownership is the socket's, not its port
 * id's: netlink frees a closing socket's port id before NETLINK_URELEASE
 * arrives, and a new socket (of the same process, most likely) can have
 * that port id meanwhile. The object holds the creating socket and the
 * release deletes the clients of a socket that is dead (SOCK_DEAD is set
 * before the release is sent) with that port id.
 *
 * Deleting a client unregisters it, which waits for the syncs in flight on
 * its device: that runs in a work item (sm_nl_wq), so that the deleting
 * caller's wait can be killed and a closing socket's release does not wait
 * at all. A device's removal deletes its clients itself, synchronously.
 *
 * A file opened without CAP_NET_ADMIN creates clients only of the kinds
 * that allow it (ib_sync_mem_client_kind.unprivileged), at most
 * max_clients_per_user of them per device for each user (the opener's
 * uid): each such client is counted on a struct sm_nl_user from before
 * its kind creates it until its object is destroyed, whatever destroys it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "netlink.h"

/*
 * What a message shows of who created a client and what it dies with (a
 * copy, under xa_lock).
 */
struct sm_nl_owner {
	u32 origin;		/* IB_SYNC_MEM_ORIGIN_NETLINK or _DEVICE */
	bool owned;		/* dies with its socket */
	/*
	 * Or with this open file of /dev/ib_sync_mem, which created it or
	 * took it over (IB_SYNC_MEM_IOC_OWN): compared, never used, the
	 * client being deleted before the file is freed.
	 */
	const struct file *file;
	u32 portid;
	u32 pid;
};

/*
 * How many clients one user's unprivileged files have on one device, on
 * sm_nl_users while there is one (under sm_nl_lock).
 */
struct sm_nl_user {
	struct list_head node;
	const struct ib_sync_mem_domain *dom;	/* compared only */
	kuid_t uid;
	unsigned int clients;
};

/**
 * struct sm_nl_obj - a client created through netlink
 * @client: the client (its registration reference is the object's)
 * @dom: its domain, only to be compared with (the client may be gone
 *	while the object is being destroyed)
 * @kind: its kind, whose module the object holds
 * @owner: who created it
 * @sk: the creating socket, held for an owned client (its identity)
 * @dying: being deleted (under sm_nl_lock)
 * @ref: the table's reference, and each waiter's
 * @gone: completed when the client is unregistered
 * @destroy_work: deletes it (CLIENT_DEL, NETLINK_URELEASE)
 * @doomed: on the way out (sm_nl_destroy_matching())
 * @user: the count it is on (an unprivileged file's client), else NULL
 */
struct sm_nl_obj {
	struct ib_sync_mem_client *client;
	const struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_client_kind *kind;
	struct sm_nl_owner owner;
	struct sock *sk;
	bool dying;
	struct kref ref;
	struct completion gone;
	struct work_struct destroy_work;
	struct list_head doomed;
	struct sm_nl_user *user;
};

static DEFINE_MUTEX(sm_kinds_lock);	/* protects sm_kinds */
static LIST_HEAD(sm_kinds);
/* Netlink-created clients by id; xa_lock for readers, sm_nl_lock for writers. */
static DEFINE_XARRAY(sm_nl_objs);
static DEFINE_MUTEX(sm_nl_lock);	/* serialises changes of sm_nl_objs */
static struct workqueue_struct *sm_nl_wq;
static LIST_HEAD(sm_nl_users);		/* under sm_nl_lock */

static int sm_set_max_per_user(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, IB_SYNC_MEM_DEV_CLIENTS_MAX);
}

static const struct kernel_param_ops sm_max_per_user_ops = {
	.set = sm_set_max_per_user,
	.get = param_get_uint,
};

static unsigned int max_clients_per_user = 256;
module_param_cb(max_clients_per_user, &sm_max_per_user_ops,
		&max_clients_per_user, 0644);
MODULE_PARM_DESC(max_clients_per_user,
		 "Most clients the files of /dev/ib_sync_mem one user opened without CAP_NET_ADMIN have on one device, 1 to 2048 (default 256)");

/*
 * Count a new client of @uid's on @dom: its count, or an ERR_PTR:
 * -EMFILE at max_clients_per_user, -ENOMEM. Under sm_nl_lock.
 */
static struct sm_nl_user *sm_nl_user_charge(const struct ib_sync_mem_domain *dom,
					    kuid_t uid)
{
	struct sm_nl_user *u;

	lockdep_assert_held(&sm_nl_lock);
	list_for_each_entry(u, &sm_nl_users, node) {
		if (u->dom != dom || !uid_eq(u->uid, uid))
			continue;
		if (u->clients >= READ_ONCE(max_clients_per_user))
			return ERR_PTR(-EMFILE);
		u->clients++;
		return u;
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return ERR_PTR(-ENOMEM);
	u->dom = dom;
	u->uid = uid;
	u->clients = 1;
	list_add(&u->node, &sm_nl_users);
	return u;
}

/* Give back a client counted by sm_nl_user_charge(). Under sm_nl_lock. */
static void sm_nl_user_uncharge(struct sm_nl_user *u)
{
	lockdep_assert_held(&sm_nl_lock);
	if (!u || --u->clients)
		return;
	list_del(&u->node);
	kfree(u);
}

/*
 * Creations between a kind's create() and the record of their client (the
 * client is registered, not yet in sm_nl_objs) are counted on their domain
 * (dom->nl_creating, under sm_nl_lock): a device's removal waits for those
 * on its device, then deletes what they recorded.
 */
static DECLARE_WAIT_QUEUE_HEAD(sm_nl_created);

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

/*
 * One client's message; @gen, when not NULL, is the generation of the dump
 * round it is part of.
 */
int sm_nl_fill_client(struct sk_buff *skb, struct ib_sync_mem_client *c,
		      u32 portid, u32 seq, int flags, u8 cmd,
		      enum sm_nl_detail detail, const u32 *gen)
{
	struct sm_nl_owner o = {};
	struct sm_nl_obj *obj;
	struct nlattr *info;
	int state = sm_client_state(c);
	void *hdr;
	int ret;

	hdr = genlmsg_put(skb, portid, seq, &sm_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;

	xa_lock(&sm_nl_objs);
	obj = xa_load(&sm_nl_objs, c->id);
	if (obj && obj->client == c)
		o = obj->owner;
	xa_unlock(&sm_nl_objs);

	if (nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_ID, c->id) ||
	    nla_put_string(skb, IB_SYNC_MEM_A_CLIENT_NAME, c->name) ||
	    nla_put_string(skb, IB_SYNC_MEM_A_CLIENT_OWNER, c->owner->name) ||
	    sm_nl_put_dev(skb, c->dom) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_KIND, c->kind) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_FLAGS,
			(c->flags & IB_SYNC_MEM_F_LAZY ?
			 IB_SYNC_MEM_CLIENT_F_LAZY : 0) |
			(o.owned ? IB_SYNC_MEM_CLIENT_F_OWNED : 0) |
			(o.file ? IB_SYNC_MEM_CLIENT_F_FILE : 0)) ||
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_STATE,
			state == SM_LIVE ? IB_SYNC_MEM_CLIENT_LIVE :
			IB_SYNC_MEM_CLIENT_INVALIDATED) ||
	    nla_put_u64_64bit(skb, IB_SYNC_MEM_A_CLIENT_SIZE, c->size,
			      IB_SYNC_MEM_A_PAD) ||
	    nla_put_s32(skb, IB_SYNC_MEM_A_CLIENT_LAST_ERR,
			READ_ONCE(c->last_err)))
		goto cancel;
	if (gen && nla_put_u32(skb, IB_SYNC_MEM_A_GENERATION, *gen))
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
			o.origin ?: IB_SYNC_MEM_ORIGIN_KERNEL) ||
	    sm_nl_put_stats(skb, c->stats, false, U32_MAX))
		goto cancel;
	if (detail != SM_NL_ADMIN)
		goto done;

	if (o.origin == IB_SYNC_MEM_ORIGIN_NETLINK &&
	    nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_OWNER_PORTID, o.portid))
		goto cancel;
	if (o.origin && nla_put_u32(skb, IB_SYNC_MEM_A_CLIENT_OWNER_PID, o.pid))
		goto cancel;
	if (c->has_info) {
		info = nla_nest_start(skb, IB_SYNC_MEM_A_CLIENT_INFO);
		if (!info)
			goto cancel;
		/* Under the same guarantee as every callback (client.c). */
		ret = sm_client_fill_info(c, skb);
		if (ret == -ENOENT)
			nla_nest_cancel(skb, info);
		else if (ret)
			goto cancel;
		else
			nla_nest_end(skb, info);
	}
done:
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static void sm_nl_obj_release(struct kref *ref)
{
	struct sm_nl_obj *obj = container_of(ref, struct sm_nl_obj, ref);

	if (obj->sk)
		sock_put(obj->sk);
	kfree(obj);
}

static void sm_nl_obj_put(struct sm_nl_obj *obj)
{
	kref_put(&obj->ref, sm_nl_obj_release);
}

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
	sm_nl_user_uncharge(obj->user);
	obj->user = NULL;
	mutex_unlock(&sm_nl_lock);
	module_put(kind->owner);
	complete_all(&obj->gone);
	sm_nl_obj_put(obj);
}

static void sm_nl_obj_destroy_work(struct work_struct *work)
{
	sm_nl_obj_destroy(container_of(work, struct sm_nl_obj, destroy_work));
}

/* @sk: the creating socket, for a client it owns; NULL otherwise. */
static void sm_nl_obj_init(struct sm_nl_obj *obj, struct ib_sync_mem_client *c,
			   struct ib_sync_mem_client_kind *kind,
			   const struct sm_nl_owner *creator, struct sock *sk)
{
	obj->client = c;
	obj->dom = c->dom;
	obj->kind = kind;
	obj->owner = *creator;
	/* Before the caller learns the id: dev.c finds it by this. */
	WRITE_ONCE(c->file, creator->file);
	if (sk) {
		obj->sk = sk;
		sock_hold(sk);
	}
}

static struct sm_nl_obj *sm_nl_obj_alloc(void)
{
	struct sm_nl_obj *obj = kzalloc(sizeof(*obj), GFP_KERNEL);

	if (obj) {
		kref_init(&obj->ref);
		init_completion(&obj->gone);
		INIT_WORK(&obj->destroy_work, sm_nl_obj_destroy_work);
	}
	return obj;
}

/* Free an object whose client was never made (or NULL). */
static void sm_nl_obj_free(struct sm_nl_obj *obj)
{
	kfree(obj);
}

/*
 * Mark every object @match selects dying and destroy it, here or (@queue)
 * from sm_nl_wq.
 */
static void sm_nl_destroy_matching(bool (*match)(struct sm_nl_obj *obj,
						 const void *arg),
				   const void *arg, bool queue)
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
	list_for_each_entry_safe(obj, tmp, &doomed, doomed) {
		if (queue)
			queue_work(sm_nl_wq, &obj->destroy_work);
		else
			sm_nl_obj_destroy(obj);
	}
}

static bool sm_nl_match_domain(struct sm_nl_obj *obj, const void *dom)
{
	return obj->client->dom == dom;
}

/*
 * Wait for the deletions of @dom's clients that others began (CLIENT_DEL's
 * and closing sockets' work items, a failed creation's undo): each ends
 * only once its kind let go of what it held of the device.
 */
static void sm_nl_wait_dying(const struct ib_sync_mem_domain *dom)
{
	struct sm_nl_obj *obj;
	unsigned long id;

	for (;;) {
		mutex_lock(&sm_nl_lock);
		xa_for_each(&sm_nl_objs, id, obj) {
			if (obj->dying && obj->dom == dom) {
				kref_get(&obj->ref);
				break;
			}
		}
		mutex_unlock(&sm_nl_lock);
		if (!obj)
			return;
		/* Gone from sm_nl_objs before it completes: no second visit. */
		wait_for_completion(&obj->gone);
		sm_nl_obj_put(obj);
	}
}

void sm_nl_domain_removed(struct ib_sync_mem_domain *dom)
{
	sm_nl_destroy_matching(sm_nl_match_domain, dom, false);
	/*
	 * Clients registered before the removal, recorded after it began.
	 * The count drops under sm_nl_lock, after the record, and the
	 * second walk takes that lock: it finds what they recorded.
	 */
	wait_event(sm_nl_created, !atomic_read(&dom->nl_creating));
	sm_nl_destroy_matching(sm_nl_match_domain, dom, false);
	/* The device's removal returns only when all of them are gone. */
	sm_nl_wait_dying(dom);
}

/* An owned client of a socket that closed with this port id. */
static bool sm_nl_match_released(struct sm_nl_obj *obj, const void *portid)
{
	return obj->owner.owned && obj->owner.portid == *(const u32 *)portid &&
	       sock_flag(obj->sk, SOCK_DEAD);
}

static bool sm_nl_match_all(struct sm_nl_obj *obj, const void *arg)
{
	return true;
}

static bool sm_nl_match_file(struct sm_nl_obj *obj, const void *file)
{
	return obj->owner.file == file;
}

/**
 * sm_nl_own() - an open file of /dev/ib_sync_mem takes a client over
 * @id: a client created through the family (CLIENT_NEW)
 * @file: the file: the client is deleted when it is released
 *
 * A client its socket owned is no longer deleted with that socket.
 *
 * Return: 0, also when @file owns it already; -ENOENT for no such client
 * or one being deleted, -EPERM for a kernel driver's client (only its
 * driver deletes it), -EBUSY for one another file owns.
 */
int sm_nl_own(u32 id, const struct file *file)
{
	struct ib_sync_mem_client *c;
	struct sm_nl_obj *obj;
	int ret = 0;

	mutex_lock(&sm_nl_lock);
	obj = xa_load(&sm_nl_objs, id);
	if (!obj || obj->dying) {
		ret = -ENOENT;
	} else if (obj->owner.file) {
		ret = obj->owner.file == file ? 0 : -EBUSY;
	} else {
		/* sm_nl_fill_client() copies the owner under xa_lock. */
		xa_lock(&sm_nl_objs);
		obj->owner.file = file;
		obj->owner.owned = false;
		xa_unlock(&sm_nl_objs);
		WRITE_ONCE(obj->client->file, file);
	}
	mutex_unlock(&sm_nl_lock);
	if (obj)
		return ret;
	c = sm_client_lookup(id);
	if (!c)
		return -ENOENT;
	ib_sync_mem_put(c);
	return -EPERM;
}

/**
 * sm_nl_file_released() - delete the clients @file owns
 * @file: an open file of /dev/ib_sync_mem, being released
 *
 * Returns once they are gone (each after its syncs in flight).
 */
void sm_nl_file_released(const struct file *file)
{
	sm_nl_destroy_matching(sm_nl_match_file, file, false);
}

static int sm_nl_urelease(struct notifier_block *nb, unsigned long event,
			  void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	/* The closing process does not wait for the syncs in flight. */
	sm_nl_destroy_matching(sm_nl_match_released, &n->portid, true);
	return NOTIFY_DONE;
}

static struct notifier_block sm_nl_notifier = {
	.notifier_call = sm_nl_urelease,
};

/*
 * Delete client @id if its record is one @match selects, unless a
 * CLIENT_DEL or the device's removal is deleting it already.
 */
static void sm_nl_delete_matching_id(u32 id,
				     bool (*match)(struct sm_nl_obj *obj,
						   const void *arg),
				     const void *arg)
{
	struct sm_nl_obj *obj;

	mutex_lock(&sm_nl_lock);
	obj = xa_load(&sm_nl_objs, id);
	if (obj && (obj->dying || !match(obj, arg)))
		obj = NULL;
	if (obj)
		obj->dying = true;
	mutex_unlock(&sm_nl_lock);
	if (obj)
		sm_nl_obj_destroy(obj);
}

static bool sm_nl_match_obj(struct sm_nl_obj *obj, const void *arg)
{
	return obj == arg;
}

/*
 * Register a client as CLIENT_NEW's @attrs ask (validated by the family's
 * policy) and record it as @creator's; @sk is the socket of a client it
 * owns, else NULL. @user, for a file opened without CAP_NET_ADMIN, is its
 * opener's uid: only a kind that allows it, counted against
 * max_clients_per_user (NULL: neither).
 *
 * Return: the client, with a reference for the caller (the record's may go
 * at once: CLIENT_DEL, the device's removal), its record in *@objp; or an
 * ERR_PTR, with an extack message.
 */
static struct ib_sync_mem_client *
sm_nl_create(struct nlattr **attrs, struct netlink_ext_ack *extack,
	     const struct sm_nl_owner *creator, struct sock *sk,
	     const kuid_t *user, struct sm_nl_obj **objp)
{
	struct ib_sync_mem_client_kind *kind;
	struct sm_nl_user *counted = NULL;
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_client *c;
	struct ib_device *ibdev;
	struct sm_nl_obj *obj;
	const char *name;
	u32 flags = 0;
	int ret;

	if (SM_NL_REQUIRE_ATTR(extack, attrs, IB_SYNC_MEM_A_CLIENT_NAME,
			       "missing client name (CLIENT_NAME)") ||
	    SM_NL_REQUIRE_ATTR(extack, attrs, IB_SYNC_MEM_A_CLIENT_KIND,
			       "missing client kind (CLIENT_KIND)"))
		return ERR_PTR(-EINVAL);
	name = nla_data(attrs[IB_SYNC_MEM_A_CLIENT_NAME]);
	if (!*name) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[IB_SYNC_MEM_A_CLIENT_NAME],
				    "client name is empty");
		return ERR_PTR(-EINVAL);
	}
	if (attrs[IB_SYNC_MEM_A_CLIENT_FLAGS])
		flags = nla_get_u32(attrs[IB_SYNC_MEM_A_CLIENT_FLAGS]);

	kind = sm_kind_get(nla_get_u32(attrs[IB_SYNC_MEM_A_CLIENT_KIND]));
	if (!kind) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[IB_SYNC_MEM_A_CLIENT_KIND],
				    "client kind not available (module not loaded?)");
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (user && !READ_ONCE(kind->unprivileged)) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[IB_SYNC_MEM_A_CLIENT_KIND],
				    "client kind needs CAP_NET_ADMIN");
		c = ERR_PTR(-EPERM);
		goto err_kind;
	}

	dom = sm_nl_domain(attrs, extack);
	if (IS_ERR(dom)) {
		c = ERR_CAST(dom);
		goto err_kind;
	}
	ibdev = sm_domain_device_get(dom);
	if (!ibdev) {
		NL_SET_ERR_MSG(extack, "RDMA device is going away");
		c = ERR_PTR(-ENODEV);
		goto err_dom;
	}
	mutex_lock(&sm_nl_lock);
	if (user) {
		counted = sm_nl_user_charge(dom, *user);
		if (IS_ERR(counted)) {
			mutex_unlock(&sm_nl_lock);
			if (PTR_ERR(counted) == -EMFILE)
				NL_SET_ERR_MSG(extack,
					       "per-user client limit of the device reached (max_clients_per_user)");
			c = ERR_CAST(counted);
			ib_device_put(ibdev);
			goto err_dom;
		}
	}
	atomic_inc(&dom->nl_creating);
	mutex_unlock(&sm_nl_lock);

	obj = sm_nl_obj_alloc();
	if (!obj) {
		c = ERR_PTR(-ENOMEM);
		goto err_creating;
	}
	/* Given back by sm_nl_obj_destroy() from now on. */
	obj->user = counted;
	c = kind->create(ibdev, name,
			 flags & IB_SYNC_MEM_CLIENT_F_LAZY ? IB_SYNC_MEM_F_LAZY : 0,
			 attrs, extack);
	if (IS_ERR(c)) {
		obj->user = NULL;
		sm_nl_obj_free(obj);
		/* The kind may have said why already; keep its message. */
		if (extack && extack->_msg)
			goto err_creating;
		if (PTR_ERR(c) == -ENOSPC)
			NL_SET_ERR_MSG(extack,
				       "client limit reached (max_clients or max_clients_per_dev)");
		else if (PTR_ERR(c) == -ENODEV)
			NL_SET_ERR_MSG(extack, "RDMA device is going away");
		else
			NL_SET_ERR_MSG(extack, "cannot register the client");
		goto err_creating;
	}
	sm_nl_obj_init(obj, c, kind, creator, sk);

	/*
	 * Once recorded, CLIENT_DEL or the device's removal may delete the
	 * client at any time: hold it for the caller. A removal that began
	 * meanwhile waits for the record, then takes the client along.
	 */
	ib_sync_mem_get(c);
	mutex_lock(&sm_nl_lock);
	ret = xa_insert(&sm_nl_objs, c->id, obj, GFP_KERNEL);
	atomic_dec(&dom->nl_creating);
	mutex_unlock(&sm_nl_lock);
	wake_up_all(&sm_nl_created);
	ib_device_put(ibdev);
	sm_domain_put(dom);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot record the client");
		ib_sync_mem_put(c);
		sm_nl_obj_destroy(obj);
		return ERR_PTR(ret);
	}
	*objp = obj;
	return c;

err_creating:
	mutex_lock(&sm_nl_lock);
	sm_nl_user_uncharge(counted);
	atomic_dec(&dom->nl_creating);
	mutex_unlock(&sm_nl_lock);
	wake_up_all(&sm_nl_created);
	ib_device_put(ibdev);
err_dom:
	sm_domain_put(dom);
err_kind:
	module_put(kind->owner);
	return c;
}

int sm_nl_client_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *fattr = info->attrs[IB_SYNC_MEM_A_CLIENT_FLAGS];
	bool owned = fattr &&
		     nla_get_u32(fattr) & IB_SYNC_MEM_CLIENT_F_OWNED;
	const struct sm_nl_owner creator = {
		.origin = IB_SYNC_MEM_ORIGIN_NETLINK,
		.owned = owned,
		.portid = info->snd_portid,
		.pid = task_tgid_nr(current),
	};
	struct ib_sync_mem_client *c;
	struct sm_nl_obj *obj;
	struct sk_buff *msg;
	u32 id;
	int ret;

	/*
	 * The reply is allocated before the client exists: failing to
	 * answer must not leave a client the caller never heard of.
	 */
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	c = sm_nl_create(info->attrs, info->extack, &creator,
			 owned ? NETLINK_CB(skb).sk : NULL, NULL, &obj);
	if (IS_ERR(c)) {
		nlmsg_free(msg);
		return PTR_ERR(c);
	}
	id = c->id;
	ret = sm_nl_fill_client(msg, c, info->snd_portid, info->snd_seq, 0,
				IB_SYNC_MEM_CMD_CLIENT_NEW, SM_NL_ADMIN, NULL);
	ib_sync_mem_put(c);
	if (ret)
		nlmsg_free(msg);
	else
		ret = genlmsg_reply(msg, info);
	/*
	 * The caller never learns of a client whose reply it did not get
	 * (its receive buffer was full): it must not stay registered.
	 */
	if (ret)
		sm_nl_delete_matching_id(id, sm_nl_match_obj, obj);
	return ret;
}

/**
 * sm_nl_file_create() - IB_SYNC_MEM_IOC_CREATE: a client @file owns
 * @data: CLIENT_NEW's attributes, as in its message
 * @len: their length
 * @file: the open file of /dev/ib_sync_mem that creates it
 * @admin: its opener had CAP_NET_ADMIN; otherwise only a kind that allows
 *	it, counted against max_clients_per_user for the opener's uid
 * @extack: for the reason of a failure
 * @id: set to the new client's id
 *
 * Return: 0, or CLIENT_NEW's errno; -EINVAL for IB_SYNC_MEM_CLIENT_F_OWNED;
 * without @admin, -EPERM for a kind that needs it and -EMFILE at the limit.
 */
int sm_nl_file_create(const struct nlattr *data, int len,
		      const struct file *file, bool admin,
		      struct netlink_ext_ack *extack, u32 *id)
{
	const struct sm_nl_owner creator = {
		.origin = IB_SYNC_MEM_ORIGIN_DEVICE,
		.file = file,
		.pid = task_tgid_nr(current),
	};
	struct nlattr *attrs[IB_SYNC_MEM_A_MAX + 1];
	struct ib_sync_mem_client *c;
	struct nlattr *fattr;
	struct sm_nl_obj *obj;
	int ret;

	ret = nla_parse(attrs, IB_SYNC_MEM_A_MAX, data, len, sm_nl_policy,
			extack);
	if (ret)
		return ret;
	fattr = attrs[IB_SYNC_MEM_A_CLIENT_FLAGS];
	if (fattr && nla_get_u32(fattr) & IB_SYNC_MEM_CLIENT_F_OWNED) {
		NL_SET_ERR_MSG_ATTR(extack, fattr,
				    "a client created through the device is its file's, not a socket's (CLIENT_F_OWNED)");
		return -EINVAL;
	}
	c = sm_nl_create(attrs, extack, &creator, NULL,
			 admin ? NULL : &file->f_cred->uid, &obj);
	if (IS_ERR(c))
		return PTR_ERR(c);
	*id = c->id;
	ib_sync_mem_put(c);
	return 0;
}

/**
 * sm_nl_file_delete() - delete a client @file owns
 * @id: the client
 * @file: the open file of /dev/ib_sync_mem
 *
 * Does nothing if @file does not own it or it is being deleted.
 */
void sm_nl_file_delete(u32 id, const struct file *file)
{
	sm_nl_delete_matching_id(id, sm_nl_match_file, file);
}

/*
 * Delete the client of @obj (marked dying by the caller, with a reference
 * that this drops) and wait for it to be gone, killably.
 *
 * Unregistering waits for the syncs in flight on the device, as long as
 * their deadlines: that wait runs in a work item, and this one can be
 * killed (-EINTR). The client goes either way.
 */
static int sm_nl_obj_delete_wait(struct sm_nl_obj *obj)
{
	int ret;

	queue_work(sm_nl_wq, &obj->destroy_work);
	ret = wait_for_completion_killable(&obj->gone) ? -EINTR : 0;
	sm_nl_obj_put(obj);
	return ret;
}

/**
 * sm_nl_file_delete_wait() - IB_SYNC_MEM_IOC_DELETE: delete a client @file
 *	owns and wait until it is gone
 * @id: the client
 * @file: the open file of /dev/ib_sync_mem
 *
 * Return: 0 once it is gone; -EINTR if the wait was killed (it still
 * goes); -ENOENT if @file does not own it or it is being deleted.
 */
int sm_nl_file_delete_wait(u32 id, const struct file *file)
{
	struct sm_nl_obj *obj;

	mutex_lock(&sm_nl_lock);
	obj = xa_load(&sm_nl_objs, id);
	if (obj && (obj->dying || obj->owner.file != file))
		obj = NULL;
	if (obj) {
		obj->dying = true;
		kref_get(&obj->ref);
	}
	mutex_unlock(&sm_nl_lock);
	return obj ? sm_nl_obj_delete_wait(obj) : -ENOENT;
}

int sm_nl_client_del_doit(struct sk_buff *skb, struct genl_info *info)
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
		kref_get(&obj->ref);
	}
	mutex_unlock(&sm_nl_lock);
	if (obj)
		return sm_nl_obj_delete_wait(obj);
	if (dying) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "no such client (being deleted)");
		return -ENOENT;
	}

	c = sm_client_lookup(id);
	if (c) {
		ib_sync_mem_put(c);
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "client was registered by a kernel driver");
		return -EBUSY;
	}
	NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such client");
	return -ENOENT;
}

int sm_nl_client_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ib_sync_mem_client *c;
	struct sk_buff *msg;
	int ret;

	if (SM_NL_REQUIRE(info, IB_SYNC_MEM_A_CLIENT_ID,
			  "missing client id (CLIENT_ID)"))
		return -EINVAL;
	c = sm_nl_client(info->attrs, info->extack);
	if (IS_ERR(c))
		return PTR_ERR(c);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	ret = sm_nl_fill_client(msg, c, info->snd_portid, info->snd_seq, 0,
				IB_SYNC_MEM_CMD_CLIENT_GET,
				sm_nl_detail_for(skb), NULL);
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
 * The device and owner filters of a client dump go to the dump state in
 * the first round rather than in .start, where some kernels (6.1) have no
 * extack to say what went wrong; an error here ends the dump with the
 * error and its message in NLMSG_DONE.
 */
static int sm_nl_client_dump_filter(struct netlink_callback *cb)
{
	struct nlattr *attrs[IB_SYNC_MEM_A_MAX + 1];
	struct ib_sync_mem_owner *owner;
	struct ib_sync_mem_domain *dom;
	int ret;

	ret = sm_nl_dump_parse(cb, attrs);
	if (ret <= 0)
		return ret;
	if (attrs[IB_SYNC_MEM_A_CLIENT_OWNER]) {
		owner = sm_nl_owner(attrs, cb->extack);
		if (IS_ERR(owner))
			return PTR_ERR(owner);
		sm_nl_dump(cb)->owner = owner->id;
		sm_owner_put(owner);
	}
	if (!attrs[IB_SYNC_MEM_A_DEV_INDEX] && !attrs[IB_SYNC_MEM_A_DEV_NAME])
		return 0;
	dom = sm_nl_domain(attrs, cb->extack);
	if (IS_ERR(dom))
		return PTR_ERR(dom);
	sm_nl_dump(cb)->dev = dom->index + 1;
	sm_domain_put(dom);
	return 0;
}

int sm_nl_client_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	enum sm_nl_detail detail = sm_nl_detail_for(cb->skb);
	struct sm_nl_dump *d = sm_nl_dump(cb);
	struct ib_sync_mem_client *c;
	struct nlmsghdr *nlh;
	unsigned long id;
	u32 gen;
	int ret;

	ret = sm_nl_client_dump_filter(cb);
	if (ret)
		return ret;
	if (!sm_nl_dump_round(cb))
		return 0;
	gen = cb->seq;
	for (id = d->next; (c = sm_client_next(&id)); id++) {
		if ((d->dev && c->dom->index + 1 != d->dev) ||
		    (d->owner && c->owner->id != d->owner)) {
			ib_sync_mem_put(c);
			continue;
		}
		nlh = (struct nlmsghdr *)skb_tail_pointer(skb);
		ret = sm_nl_fill_client(skb, c, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI,
					IB_SYNC_MEM_CMD_CLIENT_GET, detail, &gen);
		ib_sync_mem_put(c);
		if (ret)
			break;
		nl_dump_check_consistent(cb, nlh);
	}
	d->next = id;
	return sm_nl_dump_done(skb, cb, IB_SYNC_MEM_CMD_CLIENT_GET, ret);
}

int sm_nl_clients_init(void)
{
	int ret;

	sm_nl_wq = alloc_workqueue("ib_sync_mem_nl", WQ_UNBOUND, 0);
	if (!sm_nl_wq)
		return -ENOMEM;
	ret = netlink_register_notifier(&sm_nl_notifier);
	if (ret)
		destroy_workqueue(sm_nl_wq);
	return ret;
}

void sm_nl_clients_exit(void)
{
	netlink_unregister_notifier(&sm_nl_notifier);
	/* Deletions queued by CLIENT_DEL and closing sockets finish first. */
	destroy_workqueue(sm_nl_wq);
	sm_nl_destroy_matching(sm_nl_match_all, NULL, false);
	WARN_ON(!xa_empty(&sm_nl_objs));
	/* Every client gone, every user's count gave its places back. */
	WARN_ON(!list_empty(&sm_nl_users));
}
