/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ib_sync_mem_dmadev's exporter: ioctls on
 * /sys/kernel/debug/ib_sync_mem_dmadev/exporter, for the tests only (the
 * module is never installed). A buffer it exports is a dynamic dma-buf
 * whose pages the exporter can move, as a GPU driver migrates VRAM.
 */
#ifndef _SMD_DMADEV_UAPI_H
#define _SMD_DMADEV_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* SMD_IOC_EXPORT: a buffer of @size bytes (whole pages); @fd is its dma-buf. */
struct smd_export {
	__u64 size;
	__s32 fd;
	__u32 pad;
};

/*
 * SMD_IOC_STAT of the buffer behind @fd: its attachments, those mapped
 * now, its pins, and how many times it was mapped, unmapped and moved.
 */
struct smd_stat {
	__s32 fd;
	__u32 attached;
	__u32 mapped;
	__u32 pinned;
	__u64 maps;
	__u64 unmaps;
	__u64 moves;
};

#define SMD_IOC_EXPORT	_IOWR('S', 1, struct smd_export)
/* Move the buffer behind the dma-buf fd (an __s32) to new pages: EBUSY if pinned. */
#define SMD_IOC_MOVE	_IOW('S', 2, __s32)
#define SMD_IOC_STAT	_IOWR('S', 3, struct smd_stat)

#endif /* _SMD_DMADEV_UAPI_H */
