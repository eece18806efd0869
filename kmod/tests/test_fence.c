// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: fences with no timer, for the dma-buf tests.
 *
 *   /sys/kernel/debug/ib_sync_mem_test/fence
 *	write FD	add an unsignalled write fence to the reservation of
 *			the writer's dma-buf FD
 *	write signal	signal every fence added so far
 *	read		how many of them are unsignalled
 *
 * vgem's fences signal themselves 10 s after they were made: a test that
 * asks whether something finished while a fence was still unsignalled
 * cannot tell, on a guest slow enough, a wait for the fence from a wait
 * that took that long anyway. These signal only when told to (or when the
 * module goes).
 */
#include <linux/debugfs.h>
#include <linux/dma-buf.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/kstrtox.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "sync_mem_test.h"

struct kt_fence {
	struct dma_fence base;
	struct list_head node;
};

static DEFINE_SPINLOCK(kt_fence_lock);	/* the fences' lock and the list's */
static LIST_HEAD(kt_fences);
static u64 kt_fence_context;
static u64 kt_fence_seqno;

static const char *kt_fence_name(struct dma_fence *f)
{
	return "ib_sync_mem_test";
}

static const struct dma_fence_ops kt_fence_ops = {
	.get_driver_name = kt_fence_name,
	.get_timeline_name = kt_fence_name,
};

static int kt_fence_add(int fd)
{
	struct dma_buf *buf = dma_buf_get(fd);
	struct kt_fence *f;
	int ret;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	spin_lock_irq(&kt_fence_lock);
	dma_fence_init(&f->base, &kt_fence_ops, &kt_fence_lock,
		       kt_fence_context, ++kt_fence_seqno);
	list_add_tail(&f->node, &kt_fences);	/* the list's reference */
	spin_unlock_irq(&kt_fence_lock);

	ret = dma_resv_lock_interruptible(buf->resv, NULL);
	if (!ret) {
		ret = dma_resv_reserve_fences(buf->resv, 1);
		if (!ret)
			dma_resv_add_fence(buf->resv, &f->base,
					   DMA_RESV_USAGE_WRITE);
		dma_resv_unlock(buf->resv);
	}
	if (ret) {
		/* Never added: signal it, so that nothing waits for it. */
		spin_lock_irq(&kt_fence_lock);
		list_del(&f->node);
		dma_fence_signal_locked(&f->base);
		spin_unlock_irq(&kt_fence_lock);
		dma_fence_put(&f->base);
	}
out:
	dma_buf_put(buf);
	return ret;
}

/* Wait (bounded: a hang guard) for @f; its status, or 0 if it never signalled. */
int kt_fence_wait(struct dma_fence *f)
{
	if (dma_fence_wait_timeout(f, false, 60 * HZ) <= 0)
		return 0;
	return dma_fence_get_status(f);
}

/**
 * kt_fence_new() - an unsignalled fence of its own timeline
 *
 * For in-fences of the asynchronous syncs' tests. It is on the list, so
 * that "signal" and the module's exit signal it if the test does not.
 *
 * Return: the fence with the caller's reference, or NULL.
 */
struct dma_fence *kt_fence_new(void)
{
	struct kt_fence *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return NULL;
	dma_fence_init(&f->base, &kt_fence_ops, &kt_fence_lock,
		       dma_fence_context_alloc(1), 1);
	spin_lock_irq(&kt_fence_lock);
	list_add_tail(&f->node, &kt_fences);	/* the list's reference */
	spin_unlock_irq(&kt_fence_lock);
	return dma_fence_get(&f->base);
}

/* Signal a fence of kt_fence_new(), with @err if not 0. */
void kt_fence_signal(struct dma_fence *f, int err)
{
	spin_lock_irq(&kt_fence_lock);
	if (err && !dma_fence_is_signaled_locked(f))
		dma_fence_set_error(f, err);
	dma_fence_signal_locked(f);
	spin_unlock_irq(&kt_fence_lock);
}

/* Signal every fence and drop the list's references. */
static void kt_fence_signal_all(void)
{
	struct kt_fence *f, *tmp;
	LIST_HEAD(done);

	spin_lock_irq(&kt_fence_lock);
	list_for_each_entry(f, &kt_fences, node)
		dma_fence_signal_locked(&f->base);
	list_splice_init(&kt_fences, &done);
	spin_unlock_irq(&kt_fence_lock);
	list_for_each_entry_safe(f, tmp, &done, node)
		dma_fence_put(&f->base);
}

static ssize_t kt_fence_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char cmd[16];
	int fd, ret;

	if (count >= sizeof(cmd))
		return -E2BIG;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	strim(cmd);
	if (!strcmp(cmd, "signal")) {
		kt_fence_signal_all();
		return count;
	}
	ret = kstrtoint(cmd, 10, &fd);
	if (!ret)
		ret = kt_fence_add(fd);
	return ret ?: count;
}

static int kt_fence_show(struct seq_file *m, void *v)
{
	unsigned int n = 0;
	struct kt_fence *f;

	spin_lock_irq(&kt_fence_lock);
	list_for_each_entry(f, &kt_fences, node)
		n += !dma_fence_is_signaled_locked(&f->base);
	spin_unlock_irq(&kt_fence_lock);
	seq_printf(m, "%u\n", n);
	return 0;
}

static int kt_fence_open(struct inode *inode, struct file *file)
{
	return single_open(file, kt_fence_show, NULL);
}

static const struct file_operations kt_fence_fops = {
	.owner = THIS_MODULE,
	.open = kt_fence_open,
	.read = seq_read,
	.write = kt_fence_write,
	.llseek = seq_lseek,
	.release = single_release,
};

void test_fence_init(struct dentry *root)
{
	kt_fence_context = dma_fence_context_alloc(1);
	debugfs_create_file("fence", 0600, root, NULL, &kt_fence_fops);
}

/*
 * After the debugfs file is gone. A buffer that outlives the module may
 * still hold one of these, signalled: unload the module only after the
 * buffers it fenced are closed (test/vm/50-memory.sh does).
 */
void test_fence_exit(void)
{
	kt_fence_signal_all();
}
