/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the test module (tests/) and the bench module (bench/) share: a
 * debugfs "run" file that takes one command per write and runs it under
 * the module's lock, and the seq_buf the commands print their output to.
 */
#ifndef _IB_SYNC_MEM_DEBUGFS_CMD_H
#define _IB_SYNC_MEM_DEBUGFS_CMD_H

#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/**
 * cmd_out_init() - allocate the output buffer of the commands
 * @out: the seq_buf the commands print to
 * @size: its size in bytes
 *
 * Return: the buffer behind @out (kvfree() it), or NULL.
 */
static inline char *cmd_out_init(struct seq_buf *out, size_t size)
{
	char *buf = kvmalloc(size, GFP_KERNEL);

	if (buf)
		seq_buf_init(out, buf, size);
	return buf;
}

/**
 * cmd_write() - run the command written to a debugfs "run" file
 * @ubuf: what was written
 * @count: its length
 * @cmd: room for the command, @size bytes
 * @size: the longest command + 1: a longer write fails with -E2BIG
 * @lock: held while @run runs: one command at a time
 * @run: runs the command, white space around it stripped: 0 or -errno
 *
 * Return: @count, or the error of @run.
 */
static inline ssize_t cmd_write(const char __user *ubuf, size_t count,
				char *cmd, size_t size, struct mutex *lock,
				int (*run)(char *cmd))
{
	int ret;

	if (count >= size)
		return -E2BIG;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';

	mutex_lock(lock);
	ret = run(strim(cmd));
	mutex_unlock(lock);
	return ret ?: count;
}

#endif /* _IB_SYNC_MEM_DEBUGFS_CMD_H */
