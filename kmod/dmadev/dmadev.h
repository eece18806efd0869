/* SPDX-License-Identifier: GPL-2.0 */
/* ib_sync_mem_dmadev: what its files share. */
#ifndef _SMD_DMADEV_H
#define _SMD_DMADEV_H

struct dentry;

/* exporter.c: the exporter's debugfs file under @root */
void smx_init(struct dentry *root);

#endif /* _SMD_DMADEV_H */
