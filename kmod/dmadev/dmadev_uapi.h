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

/*
 * SMD_IOC_HOLD: @on 1: a worker takes the reservation lock of the buffer
 * behind @fd and keeps it (an exporter busy with the buffer) until @on 0
 * on the same file, the file's release, or 60 s; one hold at a time
 * (EBUSY). @on 0 returns 0 if the lock was still held then, ETIMEDOUT if
 * the 60 s had passed, EINVAL if there is no hold.
 */
struct smd_hold {
	__s32 fd;
	__u32 on;
};

#define SMD_IOC_EXPORT	_IOWR('S', 1, struct smd_export)
/* Move the buffer behind the dma-buf fd (an __s32) to new pages: EBUSY if pinned. */
#define SMD_IOC_MOVE	_IOW('S', 2, __s32)
#define SMD_IOC_STAT	_IOWR('S', 3, struct smd_stat)
#define SMD_IOC_HOLD	_IOW('S', 4, struct smd_hold)

#endif /* _SMD_DMADEV_UAPI_H */
