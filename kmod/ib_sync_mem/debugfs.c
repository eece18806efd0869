// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs view of ib_sync_mem, for tests and people; the stable interface is
 * the generic netlink family. Under /sys/kernel/debug/ib_sync_mem/:
 *
 *   devices    one attached RDMA device per line: name index clients passes
 *   clients    id device name state syncs errors last_err
 *   counters   object counters: domains, clients, registered, fences
 *              (asynchronous syncs' fences not freed), fences_pending
 *              (not signalled)
 *   dmabuf_hold  write 1 to hold every dma-buf sync between its fence wait
 *              and its CPU access bracket (until 0 is written, its deadline
 *              passes or its caller is killed); reads how many are held
 *   inbound_hold  write 1 to park every inbound flush's RDMA READ that
 *              completes (its flush waits as for a READ in flight, until
 *              0 is written, its deadline passes, its caller is killed or
 *              the device goes); reads how many devices have one parked
 *   inbound    one RDMA device per line: name, the READs its inbound
 *              flusher completed, the pages it registered for them, and
 *              the 8 bytes the last READ brought back (a u64 in hex, as
 *              they lie in memory): what the tests check a flush read;
 *              the times its QP was reset after a WR failed; the flushes
 *              another flush's READ of their target answered; and the
 *              flushes waiting for the flusher now
 *   inbound_fail_create  an errno (positive): the inbound flusher's
 *              creation fails with it until 0 is written (at a
 *              registration, or a blocking flush with no flusher)
 *   region_rechecks  "queued N" and "done N": region re-checks after an
 *              MMU_NOTIFY_CLEAR (equal when none is pending)
 *   dma/ID     the DMA mapping of client ID on its device (a region or a
 *              dma-buf attachment on a device with a DMA device): one
 *              "BUS_ADDRESS LENGTH" line per segment, in hex and decimal,
 *              in the order of the bytes; empty once the mapping is
 *              released. The tests read what the device sees there
 *              (ib_sync_mem_dmadev's bus file).
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>

#include "kinds.h"
#include "sync_mem.h"

static struct dentry *sm_debugfs_root;
static struct dentry *sm_debugfs_dma;

static int sm_devices_show(struct seq_file *m, void *v)
{
	struct ib_sync_mem_domain *dom;
	unsigned long index;

	xa_lock(&sm_domains);
	xa_for_each(&sm_domains, index, dom)
		seq_printf(m, "%s %u %u %lld\n", dom->name, dom->index,
			   READ_ONCE(dom->nclients),
			   (long long)sm_domain_passes(dom));
	xa_unlock(&sm_domains);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sm_devices);

static const char *const sm_state_names[] = {
	[SM_LIVE] = "live",
	[SM_INVALIDATED] = "invalidated",
	[SM_DEAD] = "dead",
};

static int sm_clients_show(struct seq_file *m, void *v)
{
	struct ib_sync_mem_client *c;
	struct sm_stats_sum sum;
	unsigned long id;

	for (id = 0; (c = sm_client_next(&id)); id++) {
		sm_stats_sum(c->stats, &sum);
		seq_printf(m, "%u %s %s %s %llu %llu %d\n", c->id, c->dom->name,
			   c->name, sm_state_names[sm_client_state(c)],
			   sum.syncs, sum.errors, READ_ONCE(c->last_err));
		ib_sync_mem_put(c);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sm_clients);

static int sm_counters_show(struct seq_file *m, void *v)
{
	seq_printf(m, "domains %d\nclients %d\nregistered %d\nfences %d\nfences_pending %d\n",
		   atomic_read(&sm_counters.domains),
		   atomic_read(&sm_counters.clients),
		   atomic_read(&sm_counters.registered),
		   atomic_read(&sm_counters.fences),
		   atomic_read(&sm_counters.fences_pending));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sm_counters);

static int sm_inbound_show(struct seq_file *m, void *v)
{
	struct ib_sync_mem_domain *dom, *d;
	struct sm_inbound_stats st;
	unsigned long index;

	/* Each domain referenced: its stats take its inbound_lock. */
	xa_for_each(&sm_domains, index, d) {
		dom = sm_domain_get_by_index(index);
		if (!dom)
			continue;
		sm_inbound_stats(dom, &st);
		seq_printf(m, "%s %llu %llu %016llx %llu %llu %u\n", dom->name,
			   st.reads, st.regs, st.last, st.recoveries,
			   st.answered, st.waiting);
		sm_domain_put(dom);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sm_inbound);

static int sm_rechecks_show(struct seq_file *m, void *v)
{
	int queued, done;

	sm_region_rechecks(&queued, &done);
	seq_printf(m, "queued %d\ndone %d\n", queued, done);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sm_rechecks);

/* A test's hold: debugfs dmabuf_hold, inbound_hold. */
struct sm_hold {
	int (*held)(void);
	void (*set)(bool hold);
};

static const struct sm_hold sm_dmabuf_hold = {
	.held = sm_dmabuf_held,
	.set = sm_dmabuf_set_hold,
};

static const struct sm_hold sm_inbound_hold = {
	.held = sm_inbound_parked,
	.set = sm_inbound_set_hold,
};

static ssize_t sm_hold_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	const struct sm_hold *h = file->private_data;
	char buf[16];
	int len = scnprintf(buf, sizeof(buf), "%d\n", h->held());

	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static ssize_t sm_hold_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	const struct sm_hold *h = file->private_data;
	bool hold;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &hold);
	if (ret)
		return ret;
	h->set(hold);
	return count;
}

static const struct file_operations sm_hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sm_hold_read,
	.write = sm_hold_write,
	.llseek = default_llseek,
};

/* dma/ID for client @id, showing @data with @fops. */
struct dentry *sm_debugfs_dma_create(u32 id, void *data,
				     const struct file_operations *fops)
{
	char name[16];

	snprintf(name, sizeof(name), "%u", id);
	return debugfs_create_file(name, 0400, sm_debugfs_dma, data, fops);
}

/* The DMA segments of @sgt, for a dma/ID file. */
void sm_debugfs_sgt_show(struct seq_file *m, struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i)
		seq_printf(m, "%pad %u\n", &sg_dma_address(sg), sg_dma_len(sg));
}

void sm_debugfs_init(void)
{
	sm_debugfs_root = debugfs_create_dir("ib_sync_mem", NULL);
	debugfs_create_file("devices", 0444, sm_debugfs_root, NULL,
			    &sm_devices_fops);
	debugfs_create_file("clients", 0444, sm_debugfs_root, NULL,
			    &sm_clients_fops);
	debugfs_create_file("counters", 0444, sm_debugfs_root, NULL,
			    &sm_counters_fops);
	debugfs_create_file("dmabuf_hold", 0600, sm_debugfs_root,
			    (void *)&sm_dmabuf_hold, &sm_hold_fops);
	debugfs_create_file("inbound_hold", 0600, sm_debugfs_root,
			    (void *)&sm_inbound_hold, &sm_hold_fops);
	debugfs_create_file("inbound", 0444, sm_debugfs_root, NULL,
			    &sm_inbound_fops);
	debugfs_create_u32("inbound_fail_create", 0600, sm_debugfs_root,
			   &sm_inbound_fail_create);
	debugfs_create_file("region_rechecks", 0444, sm_debugfs_root, NULL,
			    &sm_rechecks_fops);
	sm_debugfs_dma = debugfs_create_dir("dma", sm_debugfs_root);
}

void sm_debugfs_exit(void)
{
	debugfs_remove_recursive(sm_debugfs_root);
}
