// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_dmadev's exporter: dma-bufs whose pages move.
 *
 * A GPU driver migrates a buffer between VRAM and system memory. An
 * importer that maps it dynamically is told in its attachment's
 * move_notify (invalidate_mappings on 7.x), under the buffer's reservation
 * lock, must let go of its mapping there, and maps the buffer again when
 * it next needs it. This exporter does the same with pages of system
 * memory, on request (SMD_IOC_MOVE, dmadev_uapi.h): every importer is told
 * first; if they all let go, the contents are copied to new pages and the
 * old ones freed. A buffer an importer pinned does not move (EBUSY): the
 * dma-buf core pins it for a dynamic importer where
 * CONFIG_DMABUF_MOVE_NOTIFY is off (Debian's 6.1 and 6.12). Nor does one
 * an importer still maps after the notice (EBUSY: the importer broke the
 * rule, and nothing moved).
 *
 * Its CPU access bracket syncs every attachment's mapping (for the CPU at
 * the beginning, for the device at the end), as the system dma-heap does.
 * It has no mmap: the tests reach the bytes through the test device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "../ib_sync_mem/compat.h"
#include "dmadev.h"
#include "dmadev_uapi.h"

MODULE_IMPORT_NS("DMA_BUF");

#define SMX_MAX_SIZE	SZ_16M

/**
 * struct smx_buf - an exported buffer
 * @dmabuf: its dma-buf
 * @npages: its size in pages
 * @pages: its pages (replaced by a move, under the reservation lock)
 * @lock: protects @atts and each one's mapping
 * @atts: its attachments (struct smx_att)
 * @pinned: pins (under the reservation lock)
 * @maps: mappings made (under the reservation lock)
 * @unmaps: mappings released (under the reservation lock)
 * @moves: moves done (under the reservation lock)
 */
struct smx_buf {
	struct dma_buf *dmabuf;
	unsigned int npages;
	struct page **pages;
	struct mutex lock;	/* @atts, each one's @sgt */
	struct list_head atts;
	unsigned int pinned;
	u64 maps;
	u64 unmaps;
	u64 moves;
};

/**
 * struct smx_att - an attachment
 * @node: in its buffer's atts
 * @attach: the dma-buf core's attachment
 * @sgt: its mapping, or NULL
 * @dir: the mapping's direction
 */
struct smx_att {
	struct list_head node;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	enum dma_data_direction dir;
};

static const struct dma_buf_ops smx_ops;

static void smx_free_pages(struct page **pages, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (pages[i])
			__free_page(pages[i]);
	kvfree(pages);
}

static struct page **smx_alloc_pages(unsigned int n)
{
	struct page **pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL);
	unsigned int i;

	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pages[i]) {
			smx_free_pages(pages, n);
			return NULL;
		}
	}
	return pages;
}

static int smx_attach(struct dma_buf *dmabuf,
		      struct dma_buf_attachment *attach)
{
	struct smx_buf *b = dmabuf->priv;
	struct smx_att *a = kzalloc(sizeof(*a), GFP_KERNEL);

	if (!a)
		return -ENOMEM;
	a->attach = attach;
	attach->priv = a;
	mutex_lock(&b->lock);
	list_add_tail(&a->node, &b->atts);
	mutex_unlock(&b->lock);
	return 0;
}

static void smx_detach(struct dma_buf *dmabuf,
		       struct dma_buf_attachment *attach)
{
	struct smx_buf *b = dmabuf->priv;
	struct smx_att *a = attach->priv;

	mutex_lock(&b->lock);
	list_del(&a->node);
	mutex_unlock(&b->lock);
	kfree(a);
}

static int smx_pin(struct dma_buf_attachment *attach)
{
	struct smx_buf *b = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	b->pinned++;
	return 0;
}

static void smx_unpin(struct dma_buf_attachment *attach)
{
	struct smx_buf *b = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	b->pinned--;
}

static struct sg_table *smx_map(struct dma_buf_attachment *attach,
				enum dma_data_direction dir)
{
	struct smx_buf *b = attach->dmabuf->priv;
	struct smx_att *a = attach->priv;
	struct sg_table *sgt;
	int ret;

	dma_resv_assert_held(attach->dmabuf->resv);
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table_from_pages(sgt, b->pages, b->npages, 0,
					(size_t)b->npages << PAGE_SHIFT,
					GFP_KERNEL);
	if (ret)
		goto err_free;
	ret = dma_map_sgtable(attach->dev, sgt, dir, 0);
	if (ret)
		goto err_table;
	mutex_lock(&b->lock);
	a->sgt = sgt;
	a->dir = dir;
	mutex_unlock(&b->lock);
	b->maps++;
	return sgt;

err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void smx_unmap(struct dma_buf_attachment *attach,
		      struct sg_table *sgt, enum dma_data_direction dir)
{
	struct smx_buf *b = attach->dmabuf->priv;
	struct smx_att *a = attach->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	mutex_lock(&b->lock);
	if (a->sgt == sgt)
		a->sgt = NULL;
	mutex_unlock(&b->lock);
	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
	b->unmaps++;
}

static void smx_release(struct dma_buf *dmabuf)
{
	struct smx_buf *b = dmabuf->priv;

	smx_free_pages(b->pages, b->npages);
	mutex_destroy(&b->lock);
	kfree(b);
}

/* Sync every attachment's mapping for the CPU (@for_cpu) or its device. */
static void smx_sync(struct smx_buf *b, enum dma_data_direction dir,
		     bool for_cpu)
{
	struct smx_att *a;

	mutex_lock(&b->lock);
	list_for_each_entry(a, &b->atts, node) {
		if (!a->sgt)
			continue;
		if (for_cpu)
			dma_sync_sgtable_for_cpu(a->attach->dev, a->sgt, dir);
		else
			dma_sync_sgtable_for_device(a->attach->dev, a->sgt, dir);
	}
	mutex_unlock(&b->lock);
}

static int smx_begin_cpu_access(struct dma_buf *dmabuf,
				enum dma_data_direction dir)
{
	smx_sync(dmabuf->priv, dir, true);
	return 0;
}

static int smx_end_cpu_access(struct dma_buf *dmabuf,
			      enum dma_data_direction dir)
{
	smx_sync(dmabuf->priv, dir, false);
	return 0;
}

static const struct dma_buf_ops smx_ops = {
	.attach = smx_attach,
	.detach = smx_detach,
	.pin = smx_pin,
	.unpin = smx_unpin,
	.map_dma_buf = smx_map,
	.unmap_dma_buf = smx_unmap,
	.release = smx_release,
	.begin_cpu_access = smx_begin_cpu_access,
	.end_cpu_access = smx_end_cpu_access,
};

static long smx_export(struct smd_export __user *uarg)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct dma_buf *dmabuf;
	struct smd_export req;
	struct smx_buf *b;
	int fd;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!req.size || req.size > SMX_MAX_SIZE || !PAGE_ALIGNED(req.size))
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->npages = req.size >> PAGE_SHIFT;
	b->pages = smx_alloc_pages(b->npages);
	if (!b->pages) {
		kfree(b);
		return -ENOMEM;
	}
	mutex_init(&b->lock);
	INIT_LIST_HEAD(&b->atts);
	exp.ops = &smx_ops;
	exp.size = req.size;
	exp.flags = O_RDWR;
	exp.priv = b;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf)) {
		smx_free_pages(b->pages, b->npages);
		mutex_destroy(&b->lock);
		kfree(b);
		return PTR_ERR(dmabuf);
	}
	b->dmabuf = dmabuf;
	/* The fd goes in only once its number reached the caller. */
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	req.fd = fd;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		put_unused_fd(fd);
		dma_buf_put(dmabuf);
		return -EFAULT;
	}
	fd_install(fd, dmabuf->file);
	return 0;
}

/* The buffer of ours behind dma-buf fd @fd, referenced; or an ERR_PTR. */
static struct dma_buf *smx_get(int fd)
{
	struct dma_buf *dmabuf = dma_buf_get(fd);

	if (IS_ERR(dmabuf))
		return dmabuf;
	if (dmabuf->ops != &smx_ops) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-EINVAL);
	}
	return dmabuf;
}

/* How many attachments @b has: *@attached, and the ones mapped (returned). */
static u32 smx_count(struct smx_buf *b, u32 *attached)
{
	struct smx_att *a;
	u32 n = 0, mapped = 0;

	mutex_lock(&b->lock);
	list_for_each_entry(a, &b->atts, node) {
		n++;
		mapped += !!a->sgt;
	}
	mutex_unlock(&b->lock);
	if (attached)
		*attached = n;
	return mapped;
}

static long smx_move(int __user *uarg)
{
	struct page **new, **old;
	struct dma_buf *dmabuf;
	struct smx_buf *b;
	unsigned int i;
	int fd, ret;

	if (get_user(fd, uarg))
		return -EFAULT;
	dmabuf = smx_get(fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	b = dmabuf->priv;
	new = smx_alloc_pages(b->npages);
	if (!new) {
		dma_buf_put(dmabuf);
		return -ENOMEM;
	}
	dma_resv_lock(dmabuf->resv, NULL);
	old = new;
	ret = -EBUSY;
	if (b->pinned)
		goto unlock;
	/* Every importer lets go of its mapping of the old pages here... */
	sm_dma_buf_moved(dmabuf);
	/* ...or the buffer stays where it is. */
	if (smx_count(b, NULL))
		goto unlock;
	for (i = 0; i < b->npages; i++)
		copy_highpage(new[i], b->pages[i]);
	old = b->pages;
	b->pages = new;
	b->moves++;
	ret = 0;
unlock:
	dma_resv_unlock(dmabuf->resv);
	smx_free_pages(old, b->npages);
	dma_buf_put(dmabuf);
	return ret;
}

static long smx_stat(struct smd_stat __user *uarg)
{
	struct dma_buf *dmabuf;
	struct smd_stat st;
	struct smx_buf *b;

	if (copy_from_user(&st, uarg, sizeof(st)))
		return -EFAULT;
	dmabuf = smx_get(st.fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	b = dmabuf->priv;
	dma_resv_lock(dmabuf->resv, NULL);
	st.mapped = smx_count(b, &st.attached);
	st.pinned = b->pinned;
	st.maps = b->maps;
	st.unmaps = b->unmaps;
	st.moves = b->moves;
	dma_resv_unlock(dmabuf->resv);
	dma_buf_put(dmabuf);
	return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
}

/*
 * SMD_IOC_HOLD: an exporter busy with a buffer holds its reservation lock
 * (a move waiting for its fences). One hold at a time, of one file.
 */
static struct {
	struct mutex lock;	/* the fields below */
	struct file *file;	/* compared, never used */
	struct dma_buf *dmabuf;
	struct work_struct work;
	struct completion held;
	struct completion release;
	bool timed_out;
} smx_hold = { .lock = __MUTEX_INITIALIZER(smx_hold.lock) };

static void smx_hold_work(struct work_struct *work)
{
	struct dma_resv *resv = smx_hold.dmabuf->resv;

	dma_resv_lock(resv, NULL);
	complete(&smx_hold.held);
	smx_hold.timed_out = !wait_for_completion_timeout(&smx_hold.release,
							  60 * HZ);
	dma_resv_unlock(resv);
}

/* Let the hold go. Under smx_hold.lock. */
static int smx_hold_end(void)
{
	lockdep_assert_held(&smx_hold.lock);
	complete(&smx_hold.release);
	flush_work(&smx_hold.work);
	dma_buf_put(smx_hold.dmabuf);
	smx_hold.dmabuf = NULL;
	smx_hold.file = NULL;
	return smx_hold.timed_out ? -ETIMEDOUT : 0;
}

static long smx_hold_ioctl(struct file *file, struct smd_hold __user *uarg)
{
	struct dma_buf *dmabuf;
	struct smd_hold h;
	long ret;

	if (copy_from_user(&h, uarg, sizeof(h)))
		return -EFAULT;
	mutex_lock(&smx_hold.lock);
	if (!h.on) {
		ret = smx_hold.file == file ? smx_hold_end() : -EINVAL;
		goto out;
	}
	ret = -EBUSY;
	if (smx_hold.dmabuf)
		goto out;
	dmabuf = smx_get(h.fd);
	ret = PTR_ERR_OR_ZERO(dmabuf);
	if (ret)
		goto out;
	smx_hold.dmabuf = dmabuf;
	smx_hold.file = file;
	init_completion(&smx_hold.held);
	init_completion(&smx_hold.release);
	INIT_WORK(&smx_hold.work, smx_hold_work);
	queue_work(system_dfl_wq, &smx_hold.work);
	wait_for_completion(&smx_hold.held);
out:
	mutex_unlock(&smx_hold.lock);
	return ret;
}

/* A file that still holds a buffer's lock lets it go. */
static int smx_file_release(struct inode *inode, struct file *file)
{
	mutex_lock(&smx_hold.lock);
	if (smx_hold.file == file)
		smx_hold_end();
	mutex_unlock(&smx_hold.lock);
	return 0;
}

static long smx_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case SMD_IOC_HOLD:
		return smx_hold_ioctl(file, uarg);
	case SMD_IOC_EXPORT:
		return smx_export(uarg);
	case SMD_IOC_MOVE:
		return smx_move(uarg);
	case SMD_IOC_STAT:
		return smx_stat(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations smx_fops = {
	.owner = THIS_MODULE,
	.release = smx_file_release,
	.unlocked_ioctl = smx_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

void smx_init(struct dentry *root)
{
	debugfs_create_file("exporter", 0600, root, NULL, &smx_fops);
}
