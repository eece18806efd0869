// SPDX-License-Identifier: GPL-2.0
/*
 * dma-buf clients: a buffer shared by its exporter (a GPU driver, vgem,
 * udmabuf), attached to the RDMA device's DMA device and mapped for as long
 * as the client lives.
 *
 * A sync waits, bounded by the request's deadline, for the buffer's
 * implicit fences: the writers before the CPU reads (to-cpu), all of them
 * before the device may write (to-device, bidirectional). Then it brackets
 * CPU access: to-cpu opens it with dma_buf_begin_cpu_access(), to-device
 * closes it with dma_buf_end_cpu_access() (or flushes with a begin/end pair
 * if none is open), bidirectional does both. A sync waits on fences but is
 * never a dma_fence itself, so it cannot become an indefinite fence.
 *
 * rxe has no DMA device: it uses virtual DMA, which is why upstream rxe
 * cannot import dma-bufs. For such devices the module attaches to a
 * DMA-capable stand-in, a platform device of its own, as vgem does for
 * itself; real devices get their own DMA device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <net/netlink.h>
#include <uapi/linux/ib_sync_mem.h>

#include "sync_mem.h"

MODULE_IMPORT_NS("DMA_BUF");

static struct platform_device *sm_dma_standin;

/**
 * struct sm_dmabuf - a dma-buf client's private data
 * @buf: the buffer (a reference)
 * @attach: its attachment to the DMA device (NULL once torn down)
 * @sgt: the mapped attachment
 * @lock: serialises the CPU access bracket between concurrent syncs
 * @cpu_open: dma_buf_begin_cpu_access() is in effect
 */
struct sm_dmabuf {
	struct dma_buf *buf;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	struct mutex lock;	/* the CPU access bracket */
	bool cpu_open;
};

/*
 * A test's hold in the window between a sync's bounded fence wait and its
 * CPU access bracket (debugfs dmabuf_hold), where a fence can be added
 * after the wait saw none. A held sync waits until the hold is let go, its
 * deadline passes or its caller is killed.
 */
static bool sm_dmabuf_hold;
static atomic_t sm_dmabuf_nheld;
static DECLARE_WAIT_QUEUE_HEAD(sm_dmabuf_hold_wq);

void sm_dmabuf_set_hold(bool hold)
{
	WRITE_ONCE(sm_dmabuf_hold, hold);
	wake_up_all(&sm_dmabuf_hold_wq);
}

int sm_dmabuf_held(void)
{
	return atomic_read(&sm_dmabuf_nheld);
}

static void sm_dmabuf_window(ktime_t deadline)
{
	s64 left;

	if (likely(!READ_ONCE(sm_dmabuf_hold)))
		return;
	atomic_inc(&sm_dmabuf_nheld);
	left = ktime_to_ns(ktime_sub(deadline, ktime_get()));
	if (left > 0)
		wait_event_killable_timeout(sm_dmabuf_hold_wq,
					    !READ_ONCE(sm_dmabuf_hold),
					    nsecs_to_jiffies(left) + 1);
	atomic_dec(&sm_dmabuf_nheld);
}

static struct device *sm_dma_device(struct ib_device *ibdev)
{
	return ib_uses_virt_dma(ibdev) ? &sm_dma_standin->dev : ibdev->dma_device;
}

static int sm_dmabuf_wait(struct sm_dmabuf *d, enum ib_sync_mem_dir dir,
			  ktime_t deadline)
{
	enum dma_resv_usage usage = dir == IB_SYNC_MEM_TO_CPU ?
		DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ;
	s64 left = ktime_to_ns(ktime_sub(deadline, ktime_get()));
	long ret;

	ret = dma_resv_wait_timeout(d->buf->resv, usage, true,
				    left > 0 ? nsecs_to_jiffies(left) : 0);
	if (ret < 0)
		return ret;
	return ret ? 0 : -ETIMEDOUT;
}

static int sm_dmabuf_sync(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_dir dir, ktime_t deadline)
{
	struct sm_dmabuf *d = ib_sync_mem_client_priv(client);
	int ret;

	ret = sm_dmabuf_wait(d, dir, deadline);
	if (ret)
		return ret;
	sm_dmabuf_window(deadline);

	mutex_lock(&d->lock);
	switch (dir) {
	case IB_SYNC_MEM_TO_CPU:
		if (!d->cpu_open) {
			ret = dma_buf_begin_cpu_access(d->buf, DMA_FROM_DEVICE);
			d->cpu_open = !ret;
		}
		break;
	case IB_SYNC_MEM_TO_DEVICE:
		if (!d->cpu_open)
			ret = dma_buf_begin_cpu_access(d->buf, DMA_TO_DEVICE);
		if (!ret)
			ret = dma_buf_end_cpu_access(d->buf, DMA_TO_DEVICE);
		d->cpu_open = false;
		break;
	case IB_SYNC_MEM_BIDIRECTIONAL:
		if (!d->cpu_open)
			ret = dma_buf_begin_cpu_access(d->buf, DMA_BIDIRECTIONAL);
		if (!ret)
			ret = dma_buf_end_cpu_access(d->buf, DMA_BIDIRECTIONAL);
		d->cpu_open = false;
		break;
	}
	mutex_unlock(&d->lock);
	return ret;
}

/* Close the CPU bracket, unmap and detach. Idempotent. */
static void sm_dmabuf_detach(struct sm_dmabuf *d)
{
	if (!d->attach)
		return;
	if (d->cpu_open)
		dma_buf_end_cpu_access(d->buf, DMA_BIDIRECTIONAL);
	d->cpu_open = false;
	dma_buf_unmap_attachment_unlocked(d->attach, d->sgt, DMA_BIDIRECTIONAL);
	dma_buf_detach(d->buf, d->attach);
	d->attach = NULL;
}

static void sm_dmabuf_invalidate(struct ib_sync_mem_client *client,
				 enum ib_sync_mem_inval reason)
{
	/* The device is going: no attachment may outlive it. */
	sm_dmabuf_detach(ib_sync_mem_client_priv(client));
}

static void sm_dmabuf_free(struct sm_dmabuf *d)
{
	sm_dmabuf_detach(d);
	dma_buf_put(d->buf);
	mutex_destroy(&d->lock);
	kfree(d);
}

static void sm_dmabuf_release(struct ib_sync_mem_client *client)
{
	sm_dmabuf_free(ib_sync_mem_client_priv(client));
}

static int sm_dmabuf_fill_info(struct ib_sync_mem_client *client,
			       struct sk_buff *msg)
{
	struct sm_dmabuf *d = ib_sync_mem_client_priv(client);

	if (nla_put_u64_64bit(msg, IB_SYNC_MEM_A_DMABUF_SIZE, d->buf->size,
			      IB_SYNC_MEM_A_DMABUF_PAD) ||
	    nla_put_string(msg, IB_SYNC_MEM_A_DMABUF_EXPORTER,
			   d->buf->exp_name ?: "") ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_DMABUF_INODE,
			      file_inode(d->buf->file)->i_ino,
			      IB_SYNC_MEM_A_DMABUF_PAD))
		return -EMSGSIZE;
	return 0;
}

static const struct ib_sync_mem_ops sm_dmabuf_ops = {
	.owner = THIS_MODULE,
	.sync = sm_dmabuf_sync,
	.invalidate = sm_dmabuf_invalidate,
	.release = sm_dmabuf_release,
	.fill_info = sm_dmabuf_fill_info,
};

static struct ib_sync_mem_client *
sm_dmabuf_create(struct ib_device *ibdev, const char *name, u32 flags,
		 struct nlattr **attrs, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[IB_SYNC_MEM_A_DMABUF_MAX + 1] = {};
	struct nlattr *nest = attrs[IB_SYNC_MEM_A_DMABUF];
	struct ib_sync_mem_reg reg = {
		.name = name,
		.ops = &sm_dmabuf_ops,
		.flags = flags,
		.kind = IB_SYNC_MEM_KIND_DMABUF,
	};
	struct ib_sync_mem_client *c;
	struct sm_dmabuf *d;
	int ret;

	if (!nest) {
		NL_SET_ERR_MSG(extack, "dma-buf client needs IB_SYNC_MEM_A_DMABUF");
		return ERR_PTR(-EINVAL);
	}
	ret = nla_parse_nested(tb, IB_SYNC_MEM_A_DMABUF_MAX, nest, NULL, extack);
	if (ret)
		return ERR_PTR(ret);
	if (!tb[IB_SYNC_MEM_A_DMABUF_FD]) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "dma-buf needs FD");
		return ERR_PTR(-EINVAL);
	}

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	mutex_init(&d->lock);
	d->buf = dma_buf_get(nla_get_s32(tb[IB_SYNC_MEM_A_DMABUF_FD]));
	if (IS_ERR(d->buf)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[IB_SYNC_MEM_A_DMABUF_FD],
				    "not a dma-buf fd");
		ret = -EBADF;
		goto err_free;
	}
	d->attach = dma_buf_attach(d->buf, sm_dma_device(ibdev));
	if (IS_ERR(d->attach)) {
		ret = PTR_ERR(d->attach);
		d->attach = NULL;
		NL_SET_ERR_MSG(extack, "cannot attach the dma-buf to the device");
		goto err_put;
	}
	d->sgt = dma_buf_map_attachment_unlocked(d->attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(d->sgt)) {
		ret = PTR_ERR(d->sgt);
		dma_buf_detach(d->buf, d->attach);
		d->attach = NULL;
		NL_SET_ERR_MSG(extack, "cannot map the dma-buf for the device");
		goto err_put;
	}

	reg.priv = d;
	reg.size = d->buf->size;
	c = ib_sync_mem_register(ibdev, &reg);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		goto err_put;
	}
	return c;

err_put:
	sm_dmabuf_free(d);
	return ERR_PTR(ret);
err_free:
	mutex_destroy(&d->lock);
	kfree(d);
	return ERR_PTR(ret);
}

static void sm_dmabuf_destroy(struct ib_sync_mem_client *client)
{
	ib_sync_mem_unregister(client);
}

struct ib_sync_mem_client_kind sm_dmabuf_kind = {
	.id = IB_SYNC_MEM_KIND_DMABUF,
	.name = "dma-buf",
	.owner = THIS_MODULE,
	.create = sm_dmabuf_create,
	.destroy = sm_dmabuf_destroy,
};

int sm_dmabuf_init(void)
{
	int ret;

	sm_dma_standin = platform_device_register_simple("ib_sync_mem_dma",
							 PLATFORM_DEVID_NONE,
							 NULL, 0);
	if (IS_ERR(sm_dma_standin))
		return PTR_ERR(sm_dma_standin);
	ret = dma_coerce_mask_and_coherent(&sm_dma_standin->dev,
					   DMA_BIT_MASK(64));
	if (ret)
		platform_device_unregister(sm_dma_standin);
	return ret;
}

void sm_dmabuf_exit(void)
{
	platform_device_unregister(sm_dma_standin);
}
