// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_outside: a driver as one outside this tree would write it,
 * against the public header only (no ib_sync_mem internals): it is the
 * test that the API is enough.
 *
 * At load it creates its owner ("outside") and listens for RDMA devices;
 * on each device it registers one client (a page of its own memory,
 * flushed by ->sync), which its remove unregisters before the device's
 * clients are invalidated. debugfs ib_sync_mem_outside/state prints, per
 * device: "DEV ID syncs SYNCS invalidates N", and the module's counts of
 * adds and removes; writing "sync DEV" there runs one owner pass on DEV.
 * Unload unlistens, which unregisters every client left.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_sync_mem.h>
#include <rdma/ib_verbs.h>

/* One device's client: a page the "accelerator" shares with the NIC. */
struct out_buf {
	struct list_head node;
	struct ib_device *ibdev;
	struct ib_sync_mem_client *client;
	void *page;
	atomic_t syncs;
	atomic_t invalidates;
};

static struct ib_sync_mem_owner *out_owner;
static LIST_HEAD(out_bufs);
static DEFINE_MUTEX(out_lock);	/* out_bufs and the counts */
static unsigned int out_adds, out_removes, out_errors;
static struct dentry *out_root;

static int out_sync(struct ib_sync_mem_client *client,
		    enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct out_buf *b = ib_sync_mem_client_priv(out_owner, client);

	if (!b)
		return -EINVAL;
	/* A real driver flushes its caches for @dir here, by @deadline. */
	atomic_inc(&b->syncs);
	return 0;
}

static void out_invalidate(struct ib_sync_mem_client *client,
			   enum ib_sync_mem_inval reason)
{
	struct out_buf *b = ib_sync_mem_client_priv(out_owner, client);

	if (b)
		atomic_inc(&b->invalidates);
}

/*
 * No module reference (.owner NULL): the module unregisters every client
 * in its listener's remove, at the latest when it unlistens in its exit,
 * so it may unload with clients registered; hence no ->release either.
 */
static const struct ib_sync_mem_ops out_ops = {
	.sync = out_sync,
	.invalidate = out_invalidate,
};

static void out_add(struct ib_sync_mem_listener *l, struct ib_device *ibdev)
{
	struct out_buf *b = kzalloc(sizeof(*b), GFP_KERNEL);
	struct ib_sync_mem_reg reg = {
		.owner = out_owner, .name = "outside", .ops = &out_ops,
		.size = PAGE_SIZE,
	};

	mutex_lock(&out_lock);
	out_adds++;
	if (b)
		b->page = (void *)get_zeroed_page(GFP_KERNEL);
	if (!b || !b->page) {
		out_errors++;
		goto err;
	}
	reg.priv = b;
	b->ibdev = ibdev;
	b->client = ib_sync_mem_register(ibdev, &reg);
	if (IS_ERR(b->client)) {
		pr_warn("register on %s: %ld\n", dev_name(&ibdev->dev),
			PTR_ERR(b->client));
		out_errors++;
		goto err;
	}
	list_add_tail(&b->node, &out_bufs);
	mutex_unlock(&out_lock);
	return;
err:
	mutex_unlock(&out_lock);
	if (b)
		free_page((unsigned long)b->page);
	kfree(b);
}

static void out_remove(struct ib_sync_mem_listener *l,
		       struct ib_device *ibdev)
{
	struct out_buf *b, *tmp;

	mutex_lock(&out_lock);
	out_removes++;
	list_for_each_entry_safe(b, tmp, &out_bufs, node) {
		if (b->ibdev != ibdev)
			continue;
		list_del(&b->node);
		/* No callback of it runs after this: the page can go. */
		if (ib_sync_mem_unregister(out_owner, b->client))
			out_errors++;
		free_page((unsigned long)b->page);
		kfree(b);
	}
	mutex_unlock(&out_lock);
}

static struct ib_sync_mem_listener out_listener = {
	.add = out_add,
	.remove = out_remove,
};

static int out_state_show(struct seq_file *m, void *v)
{
	struct out_buf *b;

	mutex_lock(&out_lock);
	list_for_each_entry(b, &out_bufs, node)
		seq_printf(m, "%s %u syncs %d invalidates %d\n",
			   dev_name(&b->ibdev->dev),
			   ib_sync_mem_client_id(b->client),
			   atomic_read(&b->syncs), atomic_read(&b->invalidates));
	seq_printf(m, "adds %u removes %u errors %u\n", out_adds, out_removes,
		   out_errors);
	mutex_unlock(&out_lock);
	return 0;
}

static int out_state_open(struct inode *inode, struct file *file)
{
	return single_open(file, out_state_show, NULL);
}

/* "sync DEV": one pass over this driver's clients of DEV. */
static ssize_t out_state_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct ib_sync_mem_result res;
	struct ib_device *ibdev;
	char cmd[32 + IB_DEVICE_NAME_MAX];
	int ret;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	strim(cmd);
	if (strncmp(cmd, "sync ", 5))
		return -EINVAL;
	ibdev = ib_sync_mem_device_get(cmd + 5);
	if (!ibdev)
		return -ENODEV;
	ret = ib_sync_mem_sync_owner(ibdev, out_owner, IB_SYNC_MEM_TO_DEVICE,
				     0, &res);
	ib_device_put(ibdev);
	return ret ?: count;
}

static const struct file_operations out_state_fops = {
	.owner = THIS_MODULE,
	.open = out_state_open,
	.read = seq_read,
	.write = out_state_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int __init out_init(void)
{
	int ret;

	out_owner = ib_sync_mem_owner_create(THIS_MODULE, "outside");
	if (IS_ERR(out_owner))
		return PTR_ERR(out_owner);
	ret = ib_sync_mem_listen(&out_listener);
	if (ret) {
		ib_sync_mem_owner_destroy(out_owner);
		return ret;
	}
	out_root = debugfs_create_dir("ib_sync_mem_outside", NULL);
	debugfs_create_file("state", 0600, out_root, NULL, &out_state_fops);
	return 0;
}

static void __exit out_exit(void)
{
	debugfs_remove_recursive(out_root);
	/* Its remove runs for every device left: every client goes. */
	ib_sync_mem_unlisten(&out_listener);
	ib_sync_mem_owner_destroy(out_owner);
}

module_init(out_init);
module_exit(out_exit);

MODULE_AUTHOR("syncmem developers");
MODULE_DESCRIPTION("A driver of ib_sync_mem that uses only its public API (tests)");
MODULE_LICENSE("GPL");
