/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The client kinds built into ib_sync_mem (region.c, dmabuf.c): what the
 * rest of the module sees of them. The kinds themselves use only the
 * public API (include/rdma/ib_sync_mem.h), as a driver outside would.
 */
#ifndef _IB_SYNC_MEM_KINDS_H
#define _IB_SYNC_MEM_KINDS_H

#include <linux/fs.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <rdma/ib_sync_mem.h>

/* region.c, dmabuf.c: the client kinds built into the module */
extern struct ib_sync_mem_client_kind sm_region_kind;
extern struct ib_sync_mem_client_kind sm_dmabuf_kind;
int sm_region_init(void);
void sm_region_exit(void);
int sm_dmabuf_init(void);
void sm_dmabuf_exit(void);
void sm_dmabuf_set_hold(bool hold);
int sm_dmabuf_held(void);
void sm_region_rechecks(int *queued, int *done);

/* debugfs.c: a client's DMA mapping, debugfs dma/ID */
struct dentry *sm_debugfs_dma_create(u32 id, void *data,
				     const struct file_operations *fops);
void sm_debugfs_sgt_show(struct seq_file *m, struct sg_table *sgt);

#endif /* _IB_SYNC_MEM_KINDS_H */
