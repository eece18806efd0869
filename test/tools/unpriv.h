/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unprivileged files of /dev/ib_sync_mem for the C test tools: the
 * device judges a file by its opener's capabilities at open (the UAPI
 * header's "Permissions"), so a file opened without them is an
 * unprivileged program's, whoever uses it later.
 */
#ifndef SM_TOOLS_UNPRIV_H
#define SM_TOOLS_UNPRIV_H

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Drop every capability of this process: root's uid, no CAP_NET_ADMIN. */
static inline int sm_drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* The device's node (IB_SYNC_MEM_DEV_NAME; syncmem_open()'s). */
#define SM_DEV_PATH	"/dev/ib_sync_mem"

/*
 * A file of the device opened by a child without capabilities, handed to
 * this process (SCM_RIGHTS): an unprivileged file in a privileged
 * process, so that one loop can time both kinds of file, or one program
 * remove a device under it. The fd, or -errno: -EPERM if the child could
 * not drop its capabilities, -EIO for any other failure.
 */
static inline int sm_unpriv_devfd(void)
{
	char data = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm;
	int sv[2], fd = -EIO, st = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (!pid) {
		close(sv[0]);
		if (sm_drop_caps())
			_exit(1);
		fd = open(SM_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(2);
		memset(ctl, 0, sizeof(ctl));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		_exit(sendmsg(sv[1], &mh, 0) == 1 ? 0 : 3);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -errno;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		close(sv[0]);
		return WIFEXITED(st) && WEXITSTATUS(st) == 1 ? -EPERM : -EIO;
	}
	if (recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC) == 1) {
		cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	}
	close(sv[0]);
	return fd;
}

#endif
