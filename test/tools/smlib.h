/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsyncmem for the C test tools that also speak the family and the
 * ioctls raw (smnl.c, the UAPI headers): the clients such a tool makes
 * the way a program does, through the library, on a file the tool opened
 * (and may have opened unprivileged: unpriv.h). Requests the library
 * will not send (a kind that needs CAP_NET_ADMIN, an unknown kind, a
 * malformed nest) stay with smnl_create(). Link with build/lib/libsyncmem.a.
 */
#ifndef SM_TOOLS_SMLIB_H
#define SM_TOOLS_SMLIB_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <syncmem.h>

/*
 * A region client of @fd's file over @len bytes at @addr, with @access
 * and @flags, made by syncmem_region_create() on a handle of a duplicate
 * of @fd (the file's client: the handle's close leaves it, the file's
 * last close deletes it). Its id, or -errno with the kernel's reason in
 * @msg (when @msg_len) as syncmem_errmsg() gives it.
 */
static inline int sm_lib_region(int fd, const char *dev, const char *name,
				void *addr, uint64_t len, uint32_t access,
				uint32_t flags, char *msg, size_t msg_len)
{
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	struct syncmem *sm = dfd < 0 ? NULL : syncmem_open_fd(dfd);
	uint32_t id = 0;
	int ret;

	if (!sm) {
		ret = -errno;
		if (dfd >= 0)
			close(dfd);
		return ret;
	}
	ret = syncmem_region_create(sm, dev, name, addr, len, access, flags,
				    &id);
	if (msg_len)
		snprintf(msg, msg_len, "%s", syncmem_errmsg(sm));
	syncmem_close(sm);
	return ret ? ret : (int)id;
}

#endif
