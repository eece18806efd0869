/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sync_file fds, as /dev/ib_sync_mem hands out its fences, for the test
 * programs that take them (async_dev, ioctl_fuzz, dev_bench). Header-only.
 */
#ifndef SM_SYNCFILE_H
#define SM_SYNCFILE_H

#include <linux/sync_file.h>
#include <poll.h>
#include <sys/ioctl.h>

/* What sync_file_status() returns when SYNC_IOC_FILE_INFO itself fails. */
#define SYNC_FILE_NO_STATUS	(-1000)

/*
 * SYNC_IOC_FILE_INFO's status of @fd: 1 signalled without error, 0
 * pending, a negative errno signalled with that error;
 * SYNC_FILE_NO_STATUS if the ioctl fails.
 */
static inline int sync_file_status(int fd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return SYNC_FILE_NO_STATUS;
	return info.status;
}

/*
 * Wait up to @ms (a hang guard, never a measurement) for @fd to signal:
 * its status, or 0 if it did not signal.
 */
static inline int sync_file_wait(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return 0;
	return sync_file_status(fd);
}

#endif /* SM_SYNCFILE_H */
