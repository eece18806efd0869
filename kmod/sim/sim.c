// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_sim: a simulated accelerator, netdevsim-style.
 *
 * Clients are created through the ib_sync_mem netlink family (kind
 * IB_SYNC_MEM_KIND_SIM, settings in IB_SYNC_MEM_A_SIM) or through debugfs.
 *
 * Its clients are software models of accelerator memory: a sync takes a set
 * latency, can be made to fail the next N times with an errno, and counts
 * what it was asked to do. Tests, the demo and the benchmarks reach every
 * path of the registry through it. Under /sys/kernel/debug/ib_sync_mem_sim/:
 *
 *   new_client   write "DEV NAME [latency_us=N] [lazy] [batch] [size=N]"
 *   del_client   write "ID" (of a client created here: one the netlink
 *                family created is its to delete, -EBUSY)
 *   last_id      id of the last client created through new_client
 *   hold_create  write N: the next N netlink creations stop after the
 *                client is registered, before the netlink family records
 *                it, until 0 is written (or 120 s pass): a window for tests
 *   held         how many creations are stopped there now
 *   fail_create  write N (a positive errno): the next netlink creation
 *                fails with it after that window (its client, registered,
 *                is deleted again), as a kind whose set-up fails late
 *   clients/ID/  latency_us (rw), fail_next (rw), fail_errno (rw, positive),
 *                to_device, to_cpu, bidirectional, inbound, prepares,
 *                finishes, invalidations (ro), dirty (w: mark dirty:
 *                "to-device", the default, "to-cpu" or "bidirectional"),
 *                view (ro, a client with memory: its device's view),
 *                hold (w: N: its next N syncs in the caller's task stop
 *                once counted, until 0 is written or 120 s pass; the
 *                client's deletion writes 0), held (ro: how many are
 *                stopped there now)
 *
 * An asynchronous sync of a whole sim client (not lazy) runs on the sim's
 * own engine (->sync_async): the same counts and failures, its latency an
 * hrtimer's, its fence the sim's, signalled from the timer (softirq), or
 * at once without latency; the caller never sleeps for it.
 *
 * A client created over memory of the creating process (netlink,
 * IB_SYNC_MEM_A_SIM_ADDR) models what accelerators get wrong after RDMA:
 * the device reads its own view of the memory (a copy, view above), which
 * the NIC's writes into the memory do not reach until an inbound sync
 * refreshes it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <net/netlink.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sync_mem.h>
#include <uapi/linux/ib_sync_mem.h>

#include "../ib_sync_mem/compat.h"
#include "sim.h"

/* A simulated cache line: the alignment of a sim client's ranges. */
#define SIM_LINE	64
/* Most memory a sim client may stand for (IB_SYNC_MEM_A_SIM_ADDR). */
#define SIM_MEM_MAX	SZ_64M

static struct dentry *sim_root, *sim_clients_dir;
static DEFINE_MUTEX(sim_lock);	/* protects sim_list and sim_last_id */
static LIST_HEAD(sim_list);
/* The owner of every sim client. */
static struct ib_sync_mem_owner *sim_owner;
static u32 sim_last_id;

/*
 * Test windows (struct sim_hold, sim.h). In the netlink kind's path,
 * hold_create: after a creation registered, before the family records it;
 * hold_destroy: after a deletion unregistered, before it returns, as a
 * kind that releases what it holds of the device there (a region's umem).
 * And each client's own, in its syncs in the caller's task (sim_work()).
 */
#define SIM_HOLD_INIT(h) {						\
	.open = true,							\
	.wq = __WAIT_QUEUE_HEAD_INITIALIZER((h).wq),			\
}

static struct sim_hold sim_hold_create = SIM_HOLD_INIT(sim_hold_create);
static struct sim_hold sim_hold_destroy = SIM_HOLD_INIT(sim_hold_destroy);
/* fail_create: the errno the next netlink creation fails with, late. */
static atomic_t sim_fail_create;

/* Stop at @h if it is armed, for at most 120 s. */
static void sim_hold_wait(struct sim_hold *h)
{
	if (atomic_dec_if_positive(&h->armed) < 0)
		return;
	atomic_inc(&h->held);
	wait_event_timeout(h->wq, READ_ONCE(h->open), 120 * HZ);
	atomic_dec(&h->held);
}

/* The next @n calls stop at @h; 0: none, and those stopped go on. */
static void sim_hold_set(struct sim_hold *h, u32 n)
{
	WRITE_ONCE(h->open, !n);
	atomic_set(&h->armed, n);
	if (!n)
		wake_up_all(&h->wq);
}

static ssize_t sim_hold_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	u32 n;
	int ret;

	ret = kstrtou32_from_user(ubuf, count, 0, &n);
	if (ret)
		return ret;
	sim_hold_set(file->private_data, n);
	return count;
}

static ssize_t sim_fail_create_write(struct file *file,
				     const char __user *ubuf, size_t count,
				     loff_t *ppos)
{
	u32 n;
	int ret;

	ret = kstrtou32_from_user(ubuf, count, 0, &n);
	if (ret)
		return ret;
	if (n > MAX_ERRNO)
		return -EINVAL;
	atomic_set(&sim_fail_create, n);
	return count;
}

static const struct file_operations sim_fail_create_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sim_fail_create_write,
	.llseek = noop_llseek,
};

static const struct file_operations sim_hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sim_hold_write,
	.llseek = noop_llseek,
};

/*
 * Sleep until @end on the monotonic clock, the clock the core times clients
 * with. A simulated latency is a floor, so not fsleep(): for long sleeps it
 * is msleep() (on 7.3 from 16 ms), which counts jiffies, and since 6.13 no
 * longer adds one for the tick under way (a 20 ms latency measured 19.3 ms).
 * An absolute hrtimer never fires before @end; the loop covers wake-ups.
 * The slack is fsleep()'s: a quarter of the sleep.
 */
static void sim_sleep_until(ktime_t end)
{
	ktime_t now;

	while (ktime_before(now = ktime_get(), end)) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule_hrtimeout_range(&end, ktime_sub(end, now) >> 2,
					 HRTIMER_MODE_ABS);
	}
}

/*
 * What every sync of @s begins with: count it, and fail it if told to (its
 * errno, *@end 0); else *@end is when it ends, from *@now: its latency, or
 * @deadline if that comes first (then -ETIMEDOUT, like a fence wait that
 * gives up); 0 for no latency.
 */
static int sim_begin(struct sim_client *s, enum ib_sync_mem_dir dir,
		     ktime_t deadline, ktime_t *now, ktime_t *end)
{
	u32 lat = READ_ONCE(s->latency_us);

	*end = 0;
	atomic64_inc(&s->calls[dir]);
	if (atomic_dec_if_positive(&s->fail_next) >= 0)
		return -(int)READ_ONCE(s->fail_errno);
	if (!lat)
		return 0;
	*now = ktime_get();
	*end = ktime_add_us(*now, lat);
	if (ktime_after(*end, deadline)) {
		*end = deadline;
		return -ETIMEDOUT;
	}
	return 0;
}

/* A sync of @s in the caller's task: sim_begin(), then its latency. */
static int sim_work(struct sim_client *s, enum ib_sync_mem_dir dir,
		    ktime_t deadline)
{
	ktime_t now, end;
	int err = sim_begin(s, dir, deadline, &now, &end);

	/* Counted, not over: a test window (its time is the latency's). */
	sim_hold_wait(&s->hold);
	if (end)
		sim_sleep_until(end);
	return err;
}

static int sim_sync(struct ib_sync_mem_client *client,
		    enum ib_sync_mem_dir dir, ktime_t deadline)
{
	return sim_work(ib_sync_mem_client_priv(sim_owner, client), dir,
			deadline);
}

/**
 * struct sim_fence - a sync on the sim's engine
 * @base: its fence
 * @lock: the fence's
 * @timer: ends the sync's latency
 */
struct sim_fence {
	struct dma_fence base;
	spinlock_t lock;	/* the fence's */
	struct hrtimer timer;
};

static const char *sim_fence_driver_name(struct dma_fence *f)
{
	return KBUILD_MODNAME;
}

static const char *sim_fence_timeline_name(struct dma_fence *f)
{
	return "engine";
}

static void sim_fence_free_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct sim_fence, base.rcu));
	/* sim_exit()'s rcu_barrier() waits for this function to return. */
	module_put(THIS_MODULE);
}

static void sim_fence_release(struct dma_fence *f)
{
	call_rcu(&f->rcu, sim_fence_free_rcu);
}

static const struct dma_fence_ops sim_fence_ops = {
	.get_driver_name = sim_fence_driver_name,
	.get_timeline_name = sim_fence_timeline_name,
	.release = sim_fence_release,
};

/* The latency is over: the timer's reference goes with the signal. */
static enum hrtimer_restart sim_fence_timer(struct hrtimer *t)
{
	struct sim_fence *sf = container_of(t, struct sim_fence, timer);

	dma_fence_signal(&sf->base);
	dma_fence_put(&sf->base);
	return HRTIMER_NORESTART;
}

/*
 * sim_work() on the engine: sim_begin(), then signal at once, or when the
 * latency (or the deadline) is over: an absolute hrtimer never fires
 * early, and it has sim_sleep_until()'s slack, a quarter of the wait, so
 * that the two paths take the same time.
 */
static struct dma_fence *sim_sync_async(struct ib_sync_mem_client *client,
					enum ib_sync_mem_dir dir,
					ktime_t deadline)
{
	struct sim_client *s = ib_sync_mem_client_priv(sim_owner, client);
	struct sim_fence *sf;
	ktime_t now, end;
	int err;

	sf = kzalloc(sizeof(*sf), GFP_KERNEL);
	if (!sf)
		return ERR_PTR(-ENOMEM);
	__module_get(THIS_MODULE);
	spin_lock_init(&sf->lock);
	/* Latencies change: each sync is a timeline of its own. */
	dma_fence_init(&sf->base, &sim_fence_ops, &sf->lock,
		       dma_fence_context_alloc(1), 1);
	err = sim_begin(s, dir, deadline, &now, &end);
	if (err)
		dma_fence_set_error(&sf->base, err);
	if (!end) {
		dma_fence_signal(&sf->base);
		return &sf->base;
	}
	/* The timer's reference. */
	dma_fence_get(&sf->base);
	hrtimer_setup(&sf->timer, sim_fence_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
	hrtimer_start_range_ns(&sf->timer, end,
			       max_t(s64, ktime_sub(end, now), 0) >> 2,
			       HRTIMER_MODE_ABS_SOFT);
	return &sf->base;
}

/* The device's view of its memory becomes what the memory holds now. */
static void sim_view_refresh(struct sim_client *s)
{
	unsigned long i;

	mutex_lock(&s->view_lock);
	for (i = 0; i < s->size >> PAGE_SHIFT; i++)
		memcpy_from_page(s->view + (i << PAGE_SHIFT), s->pages[i], 0,
				 PAGE_SIZE);
	mutex_unlock(&s->view_lock);
}

/*
 * Inbound, for a sim with memory: what the NIC wrote there reaches the
 * device's view only now (an HDP-style flush of the accelerator's side).
 */
static int sim_flush_inbound(struct ib_sync_mem_client *client,
			     ktime_t deadline)
{
	struct sim_client *s = ib_sync_mem_client_priv(sim_owner, client);
	int ret;

	ret = sim_work(s, IB_SYNC_MEM_INBOUND, deadline);
	if (!ret)
		sim_view_refresh(s);
	return ret;
}

/*
 * A range: the same work over fewer bytes. Ranges of a sim client are in
 * whole cache lines (SIM_LINE), as an accelerator's cache maintenance is.
 */
static int sim_sync_range(struct ib_sync_mem_client *client,
			  enum ib_sync_mem_dir dir, u64 offset, u64 len,
			  ktime_t deadline)
{
	return sim_sync(client, dir, deadline);
}

static void sim_invalidate(struct ib_sync_mem_client *client,
			   enum ib_sync_mem_inval reason)
{
	struct sim_client *s = ib_sync_mem_client_priv(sim_owner, client);

	atomic_inc(&s->invalidations);
}

static void sim_prepare(struct ib_sync_mem_client *client,
			enum ib_sync_mem_dir dir)
{
	struct sim_client *s = ib_sync_mem_client_priv(sim_owner, client);

	atomic_inc(&s->prepares);
}

static void sim_finish(struct ib_sync_mem_client *client,
		       enum ib_sync_mem_dir dir)
{
	struct sim_client *s = ib_sync_mem_client_priv(sim_owner, client);

	atomic_inc(&s->finishes);
}

/* Unpin the memory of @s and free its view (either may be missing). */
static void sim_mem_free(struct sim_client *s)
{
	if (s->addr)
		unpin_user_pages(s->pages, s->size >> PAGE_SHIFT);
	kvfree(s->pages);
	kvfree(s->view);
	s->pages = NULL;
	s->view = NULL;
	s->addr = 0;
}

static void sim_release(struct ib_sync_mem_client *client)
{
	struct sim_client *s = ib_sync_mem_client_priv(sim_owner, client);

	debugfs_remove_recursive(s->dir);
	sim_mem_free(s);
	kfree(s);
}

static int sim_fill_info(struct ib_sync_mem_client *client,
			 struct sk_buff *msg)
{
	struct sim_client *s = ib_sync_mem_client_priv(sim_owner, client);

	if (nla_put_u32(msg, IB_SYNC_MEM_A_SIM_LATENCY_US,
			READ_ONCE(s->latency_us)) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_SIM_FAIL_NEXT,
			atomic_read(&s->fail_next)) ||
	    nla_put_u32(msg, IB_SYNC_MEM_A_SIM_FAIL_ERRNO,
			READ_ONCE(s->fail_errno)) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SIM_SIZE, s->size,
			      IB_SYNC_MEM_A_SIM_PAD) ||
	    (s->batch && nla_put_flag(msg, IB_SYNC_MEM_A_SIM_BATCH)) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SIM_CALLS_TO_DEVICE,
			      atomic64_read(&s->calls[IB_SYNC_MEM_TO_DEVICE]),
			      IB_SYNC_MEM_A_SIM_PAD) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SIM_CALLS_TO_CPU,
			      atomic64_read(&s->calls[IB_SYNC_MEM_TO_CPU]),
			      IB_SYNC_MEM_A_SIM_PAD) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SIM_CALLS_BIDIRECTIONAL,
			      atomic64_read(&s->calls[IB_SYNC_MEM_BIDIRECTIONAL]),
			      IB_SYNC_MEM_A_SIM_PAD) ||
	    nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SIM_CALLS_INBOUND,
			      atomic64_read(&s->calls[IB_SYNC_MEM_INBOUND]),
			      IB_SYNC_MEM_A_SIM_PAD) ||
	    (s->addr && nla_put_u64_64bit(msg, IB_SYNC_MEM_A_SIM_ADDR, s->addr,
					  IB_SYNC_MEM_A_SIM_PAD)))
		return -EMSGSIZE;
	return 0;
}

static const struct ib_sync_mem_ops sim_ops = {
	.owner = THIS_MODULE,
	.sync = sim_sync,
	.sync_async = sim_sync_async,
	.sync_range = sim_sync_range,
	.invalidate = sim_invalidate,
	.release = sim_release,
	.fill_info = sim_fill_info,
};

/* A sim with memory: an inbound sync refreshes its device's view. */
static const struct ib_sync_mem_ops sim_mem_ops = {
	.owner = THIS_MODULE,
	.sync = sim_sync,
	.sync_async = sim_sync_async,
	.sync_range = sim_sync_range,
	.flush_inbound = sim_flush_inbound,
	.invalidate = sim_invalidate,
	.release = sim_release,
	.fill_info = sim_fill_info,
};

static const struct ib_sync_mem_ops sim_batch_ops = {
	.owner = THIS_MODULE,
	.sync = sim_sync,
	.sync_async = sim_sync_async,
	.sync_range = sim_sync_range,
	.invalidate = sim_invalidate,
	.release = sim_release,
	.prepare = sim_prepare,
	.finish = sim_finish,
	.fill_info = sim_fill_info,
};

/* "to-device" (the CPU wrote; also the default), "to-cpu", "bidirectional". */
static ssize_t sim_dirty_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	static const char *const dirs[] = {
		[IB_SYNC_MEM_TO_DEVICE] = "to-device",
		[IB_SYNC_MEM_TO_CPU] = "to-cpu",
		[IB_SYNC_MEM_BIDIRECTIONAL] = "bidirectional",
	};
	struct sim_client *s = file->private_data;
	enum ib_sync_mem_dir dir = IB_SYNC_MEM_TO_DEVICE;
	char buf[16] = "";
	int i;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	strim(buf);
	if (*buf) {
		i = match_string(dirs, ARRAY_SIZE(dirs), buf);
		if (i < 0)
			return -EINVAL;
		dir = i;
	}
	ib_sync_mem_mark_dirty(s->client, dir);
	return count;
}

static const struct file_operations sim_dirty_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sim_dirty_write,
	.llseek = noop_llseek,
};

static ssize_t sim_view_read(struct file *file, char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	struct sim_client *s = file->private_data;
	ssize_t ret;

	mutex_lock(&s->view_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, s->view, s->size);
	mutex_unlock(&s->view_lock);
	return ret;
}

static const struct file_operations sim_view_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sim_view_read,
	.llseek = default_llseek,
};

static void sim_debugfs_add(struct sim_client *s)
{
	char name[16];

	snprintf(name, sizeof(name), "%u", ib_sync_mem_client_id(s->client));
	s->dir = debugfs_create_dir(name, sim_clients_dir);
	debugfs_create_u32("latency_us", 0644, s->dir, &s->latency_us);
	debugfs_create_atomic_t("fail_next", 0644, s->dir, &s->fail_next);
	debugfs_create_u32("fail_errno", 0644, s->dir, &s->fail_errno);
	debugfs_create_atomic_t("prepares", 0444, s->dir, &s->prepares);
	debugfs_create_atomic_t("finishes", 0444, s->dir, &s->finishes);
	debugfs_create_atomic_t("invalidations", 0444, s->dir,
				&s->invalidations);
	debugfs_create_file("dirty", 0200, s->dir, s, &sim_dirty_fops);
	debugfs_create_file("hold", 0200, s->dir, &s->hold, &sim_hold_fops);
	debugfs_create_atomic_t("held", 0444, s->dir, &s->hold.held);
	debugfs_create_u64("to_device", 0444, s->dir,
			   (u64 *)&s->calls[IB_SYNC_MEM_TO_DEVICE]);
	debugfs_create_u64("to_cpu", 0444, s->dir,
			   (u64 *)&s->calls[IB_SYNC_MEM_TO_CPU]);
	debugfs_create_u64("bidirectional", 0444, s->dir,
			   (u64 *)&s->calls[IB_SYNC_MEM_BIDIRECTIONAL]);
	debugfs_create_u64("inbound", 0444, s->dir,
			   (u64 *)&s->calls[IB_SYNC_MEM_INBOUND]);
	if (s->addr)
		debugfs_create_file("view", 0400, s->dir, s, &sim_view_fops);
}

/*
 * Pin the @s->size bytes at user address @addr of the calling process and
 * take the device's first view of them. The caller checked the range.
 */
static int sim_mem_pin(struct sim_client *s, u64 addr)
{
	unsigned long n = s->size >> PAGE_SHIFT;
	long pinned;

	s->pages = kvcalloc(n, sizeof(*s->pages), GFP_KERNEL);
	s->view = kvmalloc(s->size, GFP_KERNEL);
	if (!s->pages || !s->view) {
		sim_mem_free(s);
		return -ENOMEM;
	}
	pinned = pin_user_pages_fast(addr, n, FOLL_WRITE | FOLL_LONGTERM,
				     s->pages);
	if (pinned != n) {
		if (pinned > 0)
			unpin_user_pages(s->pages, pinned);
		sim_mem_free(s);
		return pinned < 0 ? pinned : -EFAULT;
	}
	s->addr = addr;
	sim_view_refresh(s);
	return 0;
}

/**
 * sim_client_create() - register a simulated client
 * @ibdev: RDMA device
 * @name: client name
 * @cfg: latency, failure, size and flags
 *
 * Return: the sim client, registered and listed, or an ERR_PTR from
 * ib_sync_mem_register() or -ENOMEM.
 */
struct sim_client *sim_client_create(struct ib_device *ibdev, const char *name,
				     const struct sim_config *cfg)
{
	struct ib_sync_mem_reg reg = {
		.owner = sim_owner,
		.name = name,
		.ops = cfg->addr ? &sim_mem_ops :
		       cfg->batch ? &sim_batch_ops : &sim_ops,
		.size = cfg->size,
		.flags = cfg->flags,
		.kind = cfg->kind ?: IB_SYNC_MEM_KIND_SIM,
		.range_align = SIM_LINE,
	};
	struct ib_sync_mem_client *client;
	struct sim_client *s;
	int ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->latency_us = cfg->latency_us;
	s->size = cfg->size;
	s->batch = cfg->batch;
	s->netlink = cfg->netlink;
	s->fail_errno = cfg->fail_errno ?: EIO;
	atomic_set(&s->fail_next, cfg->fail_next);
	mutex_init(&s->view_lock);
	s->hold.open = true;
	init_waitqueue_head(&s->hold.wq);
	reg.priv = s;
	if (cfg->addr) {
		ret = sim_mem_pin(s, cfg->addr);
		if (ret) {
			kfree(s);
			return ERR_PTR(ret);
		}
	}

	client = ib_sync_mem_register(ibdev, &reg);
	if (IS_ERR(client)) {
		sim_mem_free(s);
		kfree(s);
		return ERR_CAST(client);
	}
	s->client = client;
	sim_debugfs_add(s);

	mutex_lock(&sim_lock);
	list_add_tail(&s->node, &sim_list);
	sim_last_id = ib_sync_mem_client_id(client);
	mutex_unlock(&sim_lock);
	return s;
}
EXPORT_SYMBOL_GPL(sim_client_create);

/**
 * sim_client_destroy() - unregister a sim client made by sim_client_create()
 * @s: the client; freed when its last reference goes
 */
void sim_client_destroy(struct sim_client *s)
{
	mutex_lock(&sim_lock);
	list_del_init(&s->node);
	mutex_unlock(&sim_lock);
	/* A sync held in it would keep the unregister waiting. */
	sim_hold_set(&s->hold, 0);
	ib_sync_mem_unregister(sim_owner, s->client);
}
EXPORT_SYMBOL_GPL(sim_client_destroy);

static int sim_parse_new(char *buf, char **dev, char **name,
			 struct sim_config *cfg)
{
	char *tok;
	int ret = 0;

	buf = strim(buf);
	*dev = strsep(&buf, " ");
	*name = strsep(&buf, " ");
	if (!*dev || !**dev || !*name || !**name)
		return -EINVAL;
	while (!ret && (tok = strsep(&buf, " "))) {
		if (!*tok)
			continue;
		if (!strcmp(tok, "lazy"))
			cfg->flags |= IB_SYNC_MEM_F_LAZY;
		else if (!strcmp(tok, "batch"))
			cfg->batch = true;
		else if (str_has_prefix(tok, "latency_us="))
			ret = kstrtou32(tok + 11, 0, &cfg->latency_us);
		else if (str_has_prefix(tok, "size="))
			ret = kstrtou64(tok + 5, 0, &cfg->size);
		else
			ret = -EINVAL;
	}
	return ret;
}

static ssize_t sim_new_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	struct sim_config cfg = {};
	struct ib_device *ibdev;
	struct sim_client *s;
	char *buf, *dev, *name;
	int ret;

	if (count > 256)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	ret = sim_parse_new(buf, &dev, &name, &cfg);
	if (ret)
		goto out;
	ibdev = ib_sync_mem_device_get(dev);
	if (!ibdev) {
		ret = -ENODEV;
		goto out;
	}
	s = sim_client_create(ibdev, name, &cfg);
	ib_device_put(ibdev);
	ret = PTR_ERR_OR_ZERO(s);
out:
	kfree(buf);
	return ret ?: count;
}

static const struct file_operations sim_new_fops = {
	.owner = THIS_MODULE,
	.write = sim_new_write,
	.llseek = noop_llseek,
};

static ssize_t sim_del_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	struct sim_client *s, *found = NULL;
	u32 id;
	int ret;

	ret = kstrtou32_from_user(ubuf, count, 0, &id);
	if (ret)
		return ret;

	/*
	 * Found and taken off the list under the lock: a second writer of
	 * the same id finds nothing. Clients the netlink family created are
	 * its to delete, not debugfs's.
	 */
	mutex_lock(&sim_lock);
	list_for_each_entry(s, &sim_list, node) {
		if (ib_sync_mem_client_id(s->client) == id) {
			found = s;
			break;
		}
	}
	if (found && found->netlink)
		ret = -EBUSY;
	else if (found)
		list_del_init(&found->node);
	mutex_unlock(&sim_lock);
	if (!found)
		return -ENOENT;
	if (ret)
		return ret;
	ib_sync_mem_unregister(sim_owner, found->client);
	return count;
}

static const struct file_operations sim_del_fops = {
	.owner = THIS_MODULE,
	.write = sim_del_write,
	.llseek = noop_llseek,
};

static int sim_last_id_show(struct seq_file *m, void *v)
{
	mutex_lock(&sim_lock);
	seq_printf(m, "%u\n", sim_last_id);
	mutex_unlock(&sim_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_last_id);

static struct ib_sync_mem_client *
sim_nl_create(struct ib_device *ibdev, const char *name, u32 flags,
	      struct nlattr **attrs, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[IB_SYNC_MEM_A_SIM_MAX + 1] = {};
	struct sim_config cfg = {
		.flags = flags,
		.kind = IB_SYNC_MEM_KIND_SIM,
	};
	struct sim_client *s;
	int ret;

	/* The family's policy has validated the nest already. */
	if (attrs[IB_SYNC_MEM_A_SIM]) {
		ret = nla_parse_nested(tb, IB_SYNC_MEM_A_SIM_MAX,
				       attrs[IB_SYNC_MEM_A_SIM], NULL, extack);
		if (ret)
			return ERR_PTR(ret);
	}
	if (tb[IB_SYNC_MEM_A_SIM_LATENCY_US])
		cfg.latency_us = nla_get_u32(tb[IB_SYNC_MEM_A_SIM_LATENCY_US]);
	if (tb[IB_SYNC_MEM_A_SIM_FAIL_NEXT])
		cfg.fail_next = nla_get_u32(tb[IB_SYNC_MEM_A_SIM_FAIL_NEXT]);
	if (tb[IB_SYNC_MEM_A_SIM_FAIL_ERRNO])
		cfg.fail_errno = nla_get_u32(tb[IB_SYNC_MEM_A_SIM_FAIL_ERRNO]);
	if (tb[IB_SYNC_MEM_A_SIM_SIZE])
		cfg.size = nla_get_u64(tb[IB_SYNC_MEM_A_SIM_SIZE]);
	cfg.batch = nla_get_flag(tb[IB_SYNC_MEM_A_SIM_BATCH]);
	if (tb[IB_SYNC_MEM_A_SIM_ADDR]) {
		cfg.addr = nla_get_u64(tb[IB_SYNC_MEM_A_SIM_ADDR]);
		if (!PAGE_ALIGNED(cfg.addr) || !cfg.addr) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IB_SYNC_MEM_A_SIM_ADDR],
					    "a sim's memory starts on a page");
			return ERR_PTR(-EINVAL);
		}
		if (!cfg.size || !PAGE_ALIGNED(cfg.size) ||
		    cfg.size > SIM_MEM_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IB_SYNC_MEM_A_SIM_ADDR],
					    "a sim's memory is 1 to 16384 pages (SIZE)");
			return ERR_PTR(-EINVAL);
		}
		if (cfg.batch) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IB_SYNC_MEM_A_SIM_BATCH],
					    "a sim with memory has no batch hooks");
			return ERR_PTR(-EINVAL);
		}
	}

	cfg.netlink = true;
	s = sim_client_create(ibdev, name, &cfg);
	if (IS_ERR(s))
		return ERR_CAST(s);
	/* Registered, not yet recorded by the netlink family: a test window. */
	sim_hold_wait(&sim_hold_create);
	ret = atomic_xchg(&sim_fail_create, 0);
	if (ret) {
		sim_client_destroy(s);
		NL_SET_ERR_MSG(extack, "sim: the creation failed late (fail_create)");
		return ERR_PTR(-ret);
	}
	return s->client;
}

static void sim_nl_destroy(struct ib_sync_mem_client *client)
{
	sim_client_destroy(ib_sync_mem_client_priv(sim_owner, client));
	/* Unregistered, the deletion not yet over: a test window. */
	sim_hold_wait(&sim_hold_destroy);
}

static struct ib_sync_mem_client_kind sim_kind = {
	.id = IB_SYNC_MEM_KIND_SIM,
	.name = "sim",
	.owner = THIS_MODULE,
	.create = sim_nl_create,
	.destroy = sim_nl_destroy,
};

/*
 * Tests only: an unprivileged file of /dev/ib_sync_mem may create sim
 * clients (their syncs take the time asked, for tests of syncs in flight).
 */
module_param_named(unprivileged, sim_kind.unprivileged, bool, 0644);
MODULE_PARM_DESC(unprivileged,
		 "Files of /dev/ib_sync_mem opened without CAP_NET_ADMIN may create sim clients (tests; default N)");

static int __init sim_init(void)
{
	int ret;

	sim_owner = ib_sync_mem_owner_create(THIS_MODULE, "sim");
	if (IS_ERR(sim_owner))
		return PTR_ERR(sim_owner);
	ret = ib_sync_mem_kind_register(&sim_kind);
	if (ret) {
		ib_sync_mem_owner_destroy(sim_owner);
		return ret;
	}
	sim_root = debugfs_create_dir("ib_sync_mem_sim", NULL);
	sim_clients_dir = debugfs_create_dir("clients", sim_root);
	debugfs_create_file("new_client", 0200, sim_root, NULL, &sim_new_fops);
	debugfs_create_file("del_client", 0200, sim_root, NULL, &sim_del_fops);
	debugfs_create_file("last_id", 0444, sim_root, NULL,
			    &sim_last_id_fops);
	debugfs_create_file("hold_create", 0200, sim_root, &sim_hold_create,
			    &sim_hold_fops);
	debugfs_create_atomic_t("held", 0444, sim_root, &sim_hold_create.held);
	debugfs_create_file("fail_create", 0200, sim_root, NULL,
			    &sim_fail_create_fops);
	debugfs_create_file("hold_destroy", 0200, sim_root, &sim_hold_destroy,
			    &sim_hold_fops);
	debugfs_create_atomic_t("held_destroy", 0444, sim_root,
				&sim_hold_destroy.held);
	return 0;
}

static void __exit sim_exit(void)
{
	/*
	 * Every registered sim client holds a reference on this module, so
	 * none is left, and no creation is held in hold_create either.
	 */
	WARN_ON(!list_empty(&sim_list));
	ib_sync_mem_kind_unregister(&sim_kind);
	debugfs_remove_recursive(sim_root);
	ib_sync_mem_owner_destroy(sim_owner);
	/* Every fence was freed (each held the module): wait for their RCU. */
	rcu_barrier();
}

module_init(sim_init);
module_exit(sim_exit);

MODULE_AUTHOR("syncmem developers");
MODULE_DESCRIPTION("Simulated accelerator clients for ib_sync_mem");
MODULE_LICENSE("GPL");
