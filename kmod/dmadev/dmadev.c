// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_dmadev: a test-only RDMA device whose DMA is real.
 *
 * rxe and siw use virtual DMA: ib_umem and dma-buf imports map nothing on
 * them, and every sync of theirs is a no-op. This module registers an
 * ib_device whose DMA device is a platform device using the DMA API
 * (dma-direct in these guests, no IOMMU), so ib_uses_virt_dma() is false
 * and ib_umem_get(), ib_umem_dmabuf_get_pinned() and every dma_sync_*()
 * take the path a real HCA's memory takes. On a kernel booted with
 * swiotlb=force each streaming mapping goes through a bounce buffer: a
 * missing or misdirected sync leaves the device, or the CPU, with stale
 * bytes, as a non-coherent device would.
 *
 * It does no I/O. It has the verbs ib_core requires (a protection domain
 * works; a CQ, QP or MR cannot be made), no user verbs, and a "DMA engine"
 * the tests drive from debugfs, reading and writing memory at bus
 * addresses as the device does:
 *
 *   /sys/kernel/debug/ib_sync_mem_dmadev/
 *     ctl         "add NAME" registers RDMA device NAME (and a DMA device
 *                 for it), "del NAME" unregisters it: the write returns
 *                 once every ib_client's remove has run
 *     NAME/bus    the device's view of memory: pread()/pwrite() at an
 *                 offset that is a bus (DMA) address, as the device's DMA
 *                 would read or write there (no IOMMU: any page of RAM)
 *     exporter    ioctls (dmadev_uapi.h) that export dma-bufs whose pages
 *                 move (exporter.c)
 *
 * Loaded only by the suites (root, debugfs), never by a user.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "dmadev.h"

#define SMD_DRV_NAME	"ib_sync_mem_dmadev"

/**
 * struct smd_dev - one test device
 * @ibdev: the RDMA device (first: ib_alloc_device())
 * @pdev: its DMA device
 * @dir: its debugfs directory
 * @node: in smd_devs
 */
struct smd_dev {
	struct ib_device ibdev;
	struct platform_device *pdev;
	struct dentry *dir;
	struct list_head node;
};

/* Every device, under smd_lock (add and del are serialised by it too). */
static LIST_HEAD(smd_devs);
static DEFINE_MUTEX(smd_lock);
static struct dentry *smd_root;

static int smd_query_device(struct ib_device *ibdev,
			    struct ib_device_attr *attr,
			    struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_pd = 1024;
	return 0;
}

static int smd_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *attr)
{
	attr->state = IB_PORT_ACTIVE;
	attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = IB_MTU_4096;
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = SZ_1G;
	attr->active_width = IB_WIDTH_1X;
	attr->active_speed = IB_SPEED_SDR;
	return 0;
}

static int smd_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *im)
{
	/* No protocol: no MAD, CM or GID management of ib_core's. */
	im->core_cap_flags = 0;
	im->gid_tbl_len = 1;
	im->pkey_tbl_len = 1;
	im->max_mad_size = 0;
	return 0;
}

static enum rdma_link_layer smd_get_link_layer(struct ib_device *ibdev,
					       u32 port)
{
	return IB_LINK_LAYER_UNSPECIFIED;
}

static int smd_query_gid(struct ib_device *ibdev, u32 port, int index,
			 union ib_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	return 0;
}

static int smd_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			  u16 *pkey)
{
	*pkey = 0xffff;
	return 0;
}

static int smd_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static int smd_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static int smd_create_qp(struct ib_qp *qp, struct ib_qp_init_attr *init,
			 struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int smd_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr,
			 int mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int smd_destroy_qp(struct ib_qp *qp, struct ib_udata *udata)
{
	return 0;
}

static int smd_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad)
{
	*bad = wr;
	return -EOPNOTSUPP;
}

static int smd_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad)
{
	*bad = wr;
	return -EOPNOTSUPP;
}

#ifdef SM_HAVE_CREATE_CQ_ATTRS
static int smd_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
			 struct uverbs_attr_bundle *attrs)
#else
static int smd_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
			 struct ib_udata *udata)
#endif
{
	return -EOPNOTSUPP;
}

static int smd_destroy_cq(struct ib_cq *cq, struct ib_udata *udata)
{
	return 0;
}

static int smd_poll_cq(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	return 0;
}

static int smd_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags)
{
	return 0;
}

static struct ib_mr *smd_get_dma_mr(struct ib_pd *pd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

#ifdef SM_HAVE_REG_USER_MR_DMAH
static struct ib_mr *smd_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				     u64 virt, int access, struct ib_dmah *dmah,
				     struct ib_udata *udata)
#else
static struct ib_mr *smd_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				     u64 virt, int access,
				     struct ib_udata *udata)
#endif
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int smd_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	return 0;
}

static const struct ib_device_ops smd_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.query_device = smd_query_device,
	.query_port = smd_query_port,
	.get_port_immutable = smd_get_port_immutable,
	.get_link_layer = smd_get_link_layer,
	.query_gid = smd_query_gid,
	.query_pkey = smd_query_pkey,
	.alloc_pd = smd_alloc_pd,
	.dealloc_pd = smd_dealloc_pd,
	.create_qp = smd_create_qp,
	.modify_qp = smd_modify_qp,
	.destroy_qp = smd_destroy_qp,
	.post_send = smd_post_send,
	.post_recv = smd_post_recv,
	.create_cq = smd_create_cq,
	.destroy_cq = smd_destroy_cq,
	.poll_cq = smd_poll_cq,
	.req_notify_cq = smd_req_notify_cq,
	.get_dma_mr = smd_get_dma_mr,
	.reg_user_mr = smd_reg_user_mr,
	.dereg_mr = smd_dereg_mr,
	/* ib_core allocates these objects; nothing of ours is in them. */
	.size_ib_pd = sizeof(struct ib_pd),
	.size_ib_cq = sizeof(struct ib_cq),
	.size_ib_qp = sizeof(struct ib_qp),
};

/*
 * The device's DMA: @count bytes at bus address *@ppos, read into @ubuf
 * or written from it, page by page through the kernel's mapping of RAM.
 * A bus address is the physical one here (dma-direct, no IOMMU).
 */
static ssize_t smd_bus_rw(struct smd_dev *d, char __user *ubuf, size_t count,
			  loff_t *ppos, bool write)
{
	size_t done = 0, off, n;
	unsigned long left, pfn;
	phys_addr_t phys;
	void *va;

	if (*ppos < 0)
		return -EINVAL;
	while (done < count) {
		phys = dma_to_phys(&d->pdev->dev, *ppos + done);
		pfn = PHYS_PFN(phys);
		/* Where the device's DMA would fault. */
		if (!pfn_valid(pfn))
			break;
		off = offset_in_page(phys);
		n = min_t(size_t, count - done, PAGE_SIZE - off);
		va = kmap_local_page(pfn_to_page(pfn));
		if (write)
			left = copy_from_user(va + off, ubuf + done, n);
		else
			left = copy_to_user(ubuf + done, va + off, n);
		kunmap_local(va);
		done += n - left;
		if (left)
			break;
	}
	if (!done && count)
		return -EFAULT;
	*ppos += done;
	return done;
}

static ssize_t smd_bus_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	return smd_bus_rw(file->private_data, ubuf, count, ppos, false);
}

static ssize_t smd_bus_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	return smd_bus_rw(file->private_data, (char __user *)ubuf, count,
			  ppos, true);
}

static const struct file_operations smd_bus_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = smd_bus_read,
	.write = smd_bus_write,
	.llseek = default_llseek,
};

static struct smd_dev *smd_find(const char *name)
{
	struct smd_dev *d;

	list_for_each_entry(d, &smd_devs, node)
		if (!strcmp(dev_name(&d->ibdev.dev), name))
			return d;
	return NULL;
}

/* Called with smd_lock held. */
static int smd_add(const char *name)
{
	struct platform_device *pdev;
	struct smd_dev *d;
	int ret;

	if (smd_find(name))
		return -EEXIST;
	pdev = platform_device_register_simple(SMD_DRV_NAME,
					       PLATFORM_DEVID_AUTO, NULL, 0);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_pdev;
	/* What one bounce buffer holds (swiotlb's IO_TLB_SEGSIZE slots). */
	dma_set_max_seg_size(&pdev->dev, SZ_64K);

	d = ib_alloc_device(smd_dev, ibdev);
	if (!d) {
		ret = -ENOMEM;
		goto err_pdev;
	}
	d->pdev = pdev;
	d->ibdev.node_type = RDMA_NODE_UNSPECIFIED;
	d->ibdev.phys_port_cnt = 1;
	d->ibdev.num_comp_vectors = 1;
	d->ibdev.dev.parent = &pdev->dev;
	ib_set_device_ops(&d->ibdev, &smd_ops);
	ret = ib_register_device(&d->ibdev, name, &pdev->dev);
	if (ret)
		goto err_dealloc;
	d->dir = debugfs_create_dir(name, smd_root);
	debugfs_create_file("bus", 0600, d->dir, d, &smd_bus_fops);
	list_add(&d->node, &smd_devs);
	return 0;

err_dealloc:
	ib_dealloc_device(&d->ibdev);
err_pdev:
	platform_device_unregister(pdev);
	return ret;
}

/* Called with smd_lock held, @d on smd_devs. */
static void smd_del(struct smd_dev *d)
{
	struct platform_device *pdev = d->pdev;

	list_del(&d->node);
	/* Waits for a read or write of bus in progress. */
	debugfs_remove_recursive(d->dir);
	/* Returns once every ib_client's remove has run. */
	ib_unregister_device(&d->ibdev);
	ib_dealloc_device(&d->ibdev);
	platform_device_unregister(pdev);
}

static bool smd_name_ok(const char *name)
{
	size_t len = strlen(name), i;

	if (!len || len >= IB_DEVICE_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && name[i] != '_')
			return false;
	return true;
}

static ssize_t smd_ctl_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char buf[8 + IB_DEVICE_NAME_MAX], *name;
	struct smd_dev *d;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	strim(buf);
	if (strncmp(buf, "add ", 4) && strncmp(buf, "del ", 4))
		return -EINVAL;
	name = strim(buf + 4);
	if (!smd_name_ok(name))
		return -EINVAL;

	mutex_lock(&smd_lock);
	if (buf[0] == 'a') {
		ret = smd_add(name);
	} else {
		d = smd_find(name);
		ret = d ? 0 : -ENODEV;
		if (d)
			smd_del(d);
	}
	mutex_unlock(&smd_lock);
	return ret ?: count;
}

static const struct file_operations smd_ctl_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = smd_ctl_write,
	.llseek = noop_llseek,
};

static int __init smd_init(void)
{
	smd_root = debugfs_create_dir(SMD_DRV_NAME, NULL);
	debugfs_create_file("ctl", 0200, smd_root, NULL, &smd_ctl_fops);
	smx_init(smd_root);
	return 0;
}

static void __exit smd_exit(void)
{
	struct smd_dev *d, *tmp;

	/* No file of ours is open: each holds a reference on the module. */
	list_for_each_entry_safe(d, tmp, &smd_devs, node)
		smd_del(d);
	debugfs_remove_recursive(smd_root);
}

module_init(smd_init);
module_exit(smd_exit);

MODULE_DESCRIPTION("ib_sync_mem's test RDMA device with a real DMA device");
MODULE_LICENSE("GPL");
