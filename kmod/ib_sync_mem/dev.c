// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ib_sync_mem: the data path for programs (uapi/linux/ib_sync_mem_dev.h).
 *
 * The ioctls sync a client or a device, blocking or asynchronously (a
 * sync_file fd of the fence of async.c), after an optional in-fence, and
 * mark lazy clients dirty. Clients are named by the netlink family's ids.
 * A file may create clients (IB_SYNC_MEM_IOC_CREATE, the family's
 * CLIENT_NEW attributes) or take clients created through the family over
 * (IB_SYNC_MEM_IOC_OWN): they are deleted when it is released or by
 * IB_SYNC_MEM_IOC_DELETE. Closing it cancels no sync.
 *
 * Anyone may open the node (mode 0666), as uverbs allows: a file whose
 * opener had CAP_NET_ADMIN in the initial user namespace reaches every
 * client; any other reaches only the clients it owns (client->file), and
 * another id is -ENOENT, as if it did not exist. The check is a compare
 * on the client the lookup found, not a second lookup.
 */
#include <linux/capability.h>
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/netlink.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/uaccess.h>
#include <uapi/linux/ib_sync_mem.h>
#include <uapi/linux/ib_sync_mem_dev.h>

#include "sync_mem.h"

/* file->private_data of a file whose opener may sync (sm_dev_open()). */
static const bool sm_dev_admin = true;

static bool sm_dev_is_admin(const struct file *file)
{
	return file->private_data == &sm_dev_admin;
}

/*
 * May @file reach client @c: its opener's privilege, or its own client.
 * Another is as unknown to it as an id that does not exist.
 */
static bool sm_dev_reaches(const struct file *file,
			   const struct ib_sync_mem_client *c)
{
	return sm_dev_is_admin(file) || READ_ONCE(c->file) == file;
}

/* Client @id, referenced, if @file may reach it; else NULL. */
struct ib_sync_mem_client *sm_dev_lookup(const struct file *file, u32 id)
{
	struct ib_sync_mem_client *c = sm_client_lookup(id);

	if (c && !sm_dev_reaches(file, c)) {
		ib_sync_mem_put(c);
		c = NULL;
	}
	return c;
}

/* The in-fence of a request, with a reference; NULL if it names none. */
struct dma_fence *sm_dev_in_fence(u32 flags, int fd)
{
	struct dma_fence *f;
	struct file *file;

	if (!(flags & IB_SYNC_MEM_IOC_F_IN_FENCE))
		return NULL;
	/* Tell a closed fd from an open one of another kind. */
	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	fput(file);
	f = sync_file_get_fence(fd);
	return f ?: ERR_PTR(-EINVAL);
}

/*
 * Wait for a blocking sync's in-fence: interruptible, bounded by the
 * sync's timeout. Its error, if it signalled with one, is the sync's.
 */
static int sm_dev_wait_in(struct dma_fence *in, unsigned int timeout_ms)
{
	long left;

	if (!in)
		return 0;
	left = dma_fence_wait_timeout(in, true, msecs_to_jiffies(timeout_ms ?:
						sm_sync_timeout_ms()));
	if (left < 0)
		return left;
	if (!left)
		return -ETIMEDOUT;
	return min(dma_fence_get_status(in), 0);
}

/*
 * Give the caller @f (a fence, whose reference this takes over, or an
 * ERR_PTR) as a new sync_file fd in *@fd_out, a field of @req, copied out
 * whole to @arg before the fd is installed.
 */
static int sm_dev_fence_fd(struct dma_fence *f, void __user *arg,
			   const void *req, size_t size, s32 *fd_out)
{
	struct sync_file *sf;
	int fd;

	if (IS_ERR(f))
		return PTR_ERR(f);
	sf = sync_file_create(f);
	dma_fence_put(f);
	if (!sf)
		return -ENOMEM;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		fput(sf->file);
		return fd;
	}
	*fd_out = fd;
	if (copy_to_user(arg, req, size)) {
		put_unused_fd(fd);
		fput(sf->file);
		return -EFAULT;
	}
	fd_install(fd, sf->file);
	return 0;
}

/*
 * The flags and timeout every sync request carries: known flags, and the
 * family's bound on a timeout (0 is the module's default).
 */
bool sm_dev_req_ok(u32 flags, u32 timeout_ms)
{
	return !(flags & ~IB_SYNC_MEM_IOC_F_ALL) &&
	       timeout_ms <= IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS;
}

/*
 * A blocking sync of @c as IB_SYNC_MEM_IOC_SYNC asks it, after @in (NULL:
 * none); also uring.c's commands that run at issue. Bad input is refused
 * before an in-fence is waited for; the syncs below refuse it alike (an
 * offset needs a length). Inlined into the ioctl (its hot path: a call
 * here costs it some 20 instructions of the gate's budget).
 */
static __always_inline int __sm_dev_sync_blocking(struct ib_sync_mem_client *c,
						  u32 dir, u64 offset, u64 len,
						  u32 timeout_ms,
						  struct dma_fence *in)
{
	int ret;

	ret = in || offset ? sm_sync_refused(c, dir, offset, len) : 0;
	ret = ret ?: sm_dev_wait_in(in, timeout_ms);
	if (ret)
		return ret;
	if (len)
		return ib_sync_mem_sync_range(c, dir, offset, len, timeout_ms);
	return ib_sync_mem_sync(c, dir, timeout_ms);
}

int sm_dev_sync_blocking(struct ib_sync_mem_client *c, u32 dir, u64 offset,
			 u64 len, u32 timeout_ms, struct dma_fence *in)
{
	return __sm_dev_sync_blocking(c, dir, offset, len, timeout_ms, in);
}

static long sm_dev_sync(struct file *file, void __user *arg)
{
	struct ib_sync_mem_ioc_sync req;
	struct ib_sync_mem_client *c;
	struct dma_fence *in, *f;
	long ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (!sm_dev_req_ok(req.flags, req.timeout_ms))
		return -EINVAL;
	c = sm_dev_lookup(file, req.id);
	if (!c)
		return -ENOENT;
	in = sm_dev_in_fence(req.flags, req.in_fence);
	if (IS_ERR(in)) {
		ret = PTR_ERR(in);
		goto out_client;
	}
	if (req.flags & IB_SYNC_MEM_IOC_F_ASYNC) {
		f = ib_sync_mem_sync_async(c, req.dir, req.offset, req.len,
					   req.timeout_ms, in);
		ret = sm_dev_fence_fd(f, arg, &req, sizeof(req),
				      &req.out_fence);
	} else {
		ret = __sm_dev_sync_blocking(c, req.dir, req.offset, req.len,
					     req.timeout_ms, in);
	}
	if (in)
		dma_fence_put(in);
out_client:
	ib_sync_mem_put(c);
	return ret;
}

static long sm_dev_sync_dev(void __user *arg)
{
	struct ib_sync_mem_ioc_sync_dev req;
	struct ib_sync_mem_domain *dom;
	struct ib_sync_mem_result res;
	struct dma_fence *in, *f;
	long ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (!sm_dev_req_ok(req.flags, req.timeout_ms) || !sm_dir_valid(req.dir))
		return -EINVAL;
	dom = sm_domain_get_by_index(req.dev_index);
	if (!dom)
		return -ENODEV;
	in = sm_dev_in_fence(req.flags, req.in_fence);
	if (IS_ERR(in)) {
		ret = PTR_ERR(in);
		goto out_dom;
	}
	if (req.flags & IB_SYNC_MEM_IOC_F_ASYNC) {
		f = sm_sync_domain_async(dom, req.dir, req.timeout_ms, in);
		ret = sm_dev_fence_fd(f, arg, &req, sizeof(req),
				      &req.out_fence);
		goto out_in;
	}
	ret = sm_dev_wait_in(in, req.timeout_ms) ?:
	      sm_sync_domain(dom, NULL, req.dir, req.timeout_ms, true, &res);
	if (ret)
		goto out_in;
	req.clients = res.clients;
	req.errors = res.errors;
	req.skipped = res.skipped;
	req.err = res.err;
	req.pass = res.pass;
	if (copy_to_user(arg, &req, sizeof(req)))
		ret = -EFAULT;
out_in:
	if (in)
		dma_fence_put(in);
out_dom:
	sm_domain_put(dom);
	return ret;
}

/*
 * The entries of a batch request, their clients looked up and referenced:
 * -ENOENT, nothing referenced, if one is missing or out of @file's reach.
 */
struct ib_sync_mem_batch_entry *
sm_dev_batch_get(const struct file *file,
		 const struct ib_sync_mem_ioc_sync_batch *req,
		 struct ib_sync_mem_ioc_entry **uent)
{
	struct ib_sync_mem_batch_entry *e;
	struct ib_sync_mem_ioc_entry *u;
	unsigned int i;
	u32 *ids;

	if (!req->n || req->n > IB_SYNC_MEM_SYNC_BATCH_MAX)
		return ERR_PTR(-EINVAL);
	/* Up to 48 KiB, 80 KiB and 8 KiB: kv, not kmalloc. */
	u = vmemdup_array_user(u64_to_user_ptr(req->entries), req->n,
			       sizeof(*u));
	if (IS_ERR(u))
		return ERR_CAST(u);
	e = kvcalloc(req->n, sizeof(*e), GFP_KERNEL);
	ids = kvmalloc_array(req->n, sizeof(*ids), GFP_KERNEL);
	if (!e || !ids) {
		kvfree(e);
		e = ERR_PTR(-ENOMEM);
		goto out;
	}
	for (i = 0; i < req->n; i++) {
		ids[i] = u[i].id;
		e[i].offset = u[i].offset;
		e[i].len = u[i].len;
	}
	if (sm_lookup_batch(ids, e, req->n) != req->n) {
		kvfree(e);
		e = ERR_PTR(-ENOENT);
		goto out;
	}
	for (i = 0; i < req->n; i++)
		if (!sm_dev_reaches(file, e[i].client))
			break;
	if (i < req->n) {
		for (i = 0; i < req->n; i++)
			ib_sync_mem_put(e[i].client);
		kvfree(e);
		e = ERR_PTR(-ENOENT);
	}
out:
	if (IS_ERR(e)) {
		kvfree(u);
		u = NULL;
	}
	kvfree(ids);
	*uent = u;
	return e;
}

static long sm_dev_sync_batch(struct file *file, void __user *arg)
{
	struct ib_sync_mem_ioc_sync_batch req;
	struct ib_sync_mem_batch_entry *e;
	struct ib_sync_mem_ioc_entry *u;
	struct dma_fence *in, *f;
	unsigned int i;
	long ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (!sm_dev_req_ok(req.flags, req.timeout_ms))
		return -EINVAL;
	e = sm_dev_batch_get(file, &req, &u);
	if (IS_ERR(e))
		return PTR_ERR(e);
	in = sm_dev_in_fence(req.flags, req.in_fence);
	if (IS_ERR(in)) {
		ret = PTR_ERR(in);
		goto out;
	}
	if (req.flags & IB_SYNC_MEM_IOC_F_ASYNC) {
		f = ib_sync_mem_sync_many_async(e, req.n, req.dir,
						req.timeout_ms, in);
		ret = sm_dev_fence_fd(f, arg, &req, sizeof(req),
				      &req.out_fence);
		goto out_in;
	}
	ret = sm_batch_refused(e, req.n, req.dir) ?:
	      sm_dev_wait_in(in, req.timeout_ms) ?:
	      ib_sync_mem_sync_many(e, req.n, req.dir, req.timeout_ms);
	if (ret)
		goto out_in;
	req.run = 0;
	req.errors = 0;
	for (i = 0; i < req.n; i++) {
		u[i].err = e[i].err;
		req.run += e[i].ran;
		req.errors += !!e[i].err;
	}
	if (copy_to_user(u64_to_user_ptr(req.entries), u,
			 array_size(req.n, sizeof(*u))) ||
	    copy_to_user(arg, &req, sizeof(req)))
		ret = -EFAULT;
out_in:
	if (in)
		dma_fence_put(in);
out:
	for (i = 0; i < req.n; i++)
		ib_sync_mem_put(e[i].client);
	kvfree(e);
	kvfree(u);
	return ret;
}

static long sm_dev_mark_dirty(struct file *file, void __user *arg)
{
	struct ib_sync_mem_ioc_mark req;
	struct ib_sync_mem_client *c;
	long ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	c = sm_dev_lookup(file, req.id);
	if (!c)
		return -ENOENT;
	ret = sm_state_errno(c);
	if (ret)
		goto out;
	if (!(c->flags & IB_SYNC_MEM_F_LAZY) || (req.offset && !req.len)) {
		ret = -EINVAL;
		goto out;
	}
	if (req.len) {
		ret = ib_sync_mem_mark_dirty_range(c, req.dir, req.offset,
						   req.len);
	} else if (!sm_dir_valid(req.dir)) {
		ret = -EINVAL;
	} else {
		ib_sync_mem_mark_dirty(c, req.dir);
	}
out:
	ib_sync_mem_put(c);
	return ret;
}

static long sm_dev_own(struct file *file, void __user *arg)
{
	struct ib_sync_mem_ioc_own req;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags)
		return -EINVAL;
	return sm_nl_own(req.id, file);
}

/* The reason of a failure, for IB_SYNC_MEM_IOC_CREATE's caller. */
static int sm_dev_put_msg(const struct ib_sync_mem_ioc_create *req,
			  const struct netlink_ext_ack *extack)
{
	char __user *u = u64_to_user_ptr(req->msg);
	const char *msg = extack->_msg ?: "";
	size_t n;

	if (!u || !req->msg_len)
		return 0;
	/* As much as fits, NUL-terminated. */
	n = min_t(size_t, strlen(msg), req->msg_len - 1);
	if (copy_to_user(u, msg, n) || put_user('\0', u + n))
		return -EFAULT;
	return 0;
}

static long sm_dev_create(struct file *file, void __user *arg)
{
	struct netlink_ext_ack extack = {};
	struct ib_sync_mem_ioc_create req;
	struct nlattr *attrs;
	long ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags) {
		NL_SET_ERR_MSG(&extack, "unknown flags");
		ret = -EINVAL;
		goto out;
	}
	if (!req.attrs_len || req.attrs_len > IB_SYNC_MEM_IOC_ATTRS_MAX) {
		NL_SET_ERR_MSG(&extack, "attrs_len: 1 to IB_SYNC_MEM_IOC_ATTRS_MAX bytes");
		ret = req.attrs_len ? -E2BIG : -EINVAL;
		goto out;
	}
	attrs = memdup_user(u64_to_user_ptr(req.attrs), req.attrs_len);
	if (IS_ERR(attrs)) {
		NL_SET_ERR_MSG(&extack, "cannot read attrs");
		ret = PTR_ERR(attrs);
		goto out;
	}
	ret = sm_nl_file_create(attrs, req.attrs_len, file,
				sm_dev_is_admin(file), &extack, &req.id);
	kfree(attrs);
	if (ret)
		goto out;
	if (copy_to_user(arg, &req, sizeof(req))) {
		/* Its creator would never learn of it. */
		sm_nl_file_delete(req.id, file);
		NL_SET_ERR_MSG(&extack, "cannot write the id back");
		ret = -EFAULT;
		goto out;
	}
	return 0;
out:
	return sm_dev_put_msg(&req, &extack) ?: ret;
}

static long sm_dev_delete(struct file *file, void __user *arg)
{
	struct ib_sync_mem_ioc_delete req;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags)
		return -EINVAL;
	return sm_nl_file_delete_wait(req.id, file);
}

static long sm_dev_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (cmd == IB_SYNC_MEM_IOC_NOP)
		return 0;
	switch (cmd) {
	case IB_SYNC_MEM_IOC_SYNC:
	case IB_SYNC_MEM_IOC_SYNC_BATCH:
	case IB_SYNC_MEM_IOC_MARK_DIRTY:
	case IB_SYNC_MEM_IOC_CREATE:
	case IB_SYNC_MEM_IOC_DELETE:
		/* Any opener: each decides which clients the file reaches. */
		break;
	case IB_SYNC_MEM_IOC_SYNC_DEV:
	case IB_SYNC_MEM_IOC_OWN:
		/* Beyond the file's own clients. */
		if (!sm_dev_is_admin(file))
			return -EPERM;
		break;
	default:
		return -ENOTTY;
	}
	switch (cmd) {
	case IB_SYNC_MEM_IOC_SYNC:
		return sm_dev_sync(file, uarg);
	case IB_SYNC_MEM_IOC_SYNC_DEV:
		return sm_dev_sync_dev(uarg);
	case IB_SYNC_MEM_IOC_SYNC_BATCH:
		return sm_dev_sync_batch(file, uarg);
	case IB_SYNC_MEM_IOC_OWN:
		return sm_dev_own(file, uarg);
	case IB_SYNC_MEM_IOC_CREATE:
		return sm_dev_create(file, uarg);
	case IB_SYNC_MEM_IOC_DELETE:
		return sm_dev_delete(file, uarg);
	default:
		return sm_dev_mark_dirty(file, uarg);
	}
}

/*
 * The family's rule for its mutating commands (CAP_NET_ADMIN in the
 * initial user namespace), decided once, at open, for the opener's
 * credentials: those file_ns_capable() would read at each ioctl. No audit
 * record for an opener who only needs its own clients.
 */
static int sm_dev_open(struct inode *inode, struct file *file)
{
	file->private_data = ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN) ?
			     (void *)&sm_dev_admin : NULL;
	return nonseekable_open(inode, file);
}

/* The last reference to an open file: the clients it owns go with it. */
static int sm_dev_release(struct inode *inode, struct file *file)
{
	sm_nl_file_released(file);
	return 0;
}

static const struct file_operations sm_dev_fops = {
	.owner = THIS_MODULE,
	.open = sm_dev_open,
	.release = sm_dev_release,
	.unlocked_ioctl = sm_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.uring_cmd = sm_uring_cmd,
};

static struct miscdevice sm_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = IB_SYNC_MEM_DEV_NAME,
	.fops = &sm_dev_fops,
	/* As uverbs: each ioctl decides what its file reaches. */
	.mode = 0666,
};

int sm_dev_init(void)
{
	return misc_register(&sm_miscdev);
}

void sm_dev_exit(void)
{
	misc_deregister(&sm_miscdev);
}
