/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgem buffers as dma-bufs, and /sys/kernel/debug/dma_buf/bufinfo, for the
 * test programs that need dma-buf clients without fences (churn, failnth).
 * Header-only, static functions; vgem_sync.c has its own richer copy.
 */
#ifndef SM_VGEM_H
#define SM_VGEM_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdrm/drm.h>
#include <libdrm/drm_mode.h>

#define VGEM_BUFINFO	"/sys/kernel/debug/dma_buf/bufinfo"

/* The vgem card: an fd, or -ENODEV. */
static inline int vgem_open(void)
{
	int i;

	for (i = 0; i < 64; i++) {
		char name[32] = "", path[32];
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

/*
 * A dma-buf of @size bytes (a multiple of 4096) from vgem: its fd, or
 * -errno. The GEM handle is closed: the dma-buf fd alone keeps the buffer.
 * *ino gets the buffer's inode (NULL: not wanted).
 */
static inline int vgem_dmabuf(int drm, uint32_t size, uint64_t *ino)
{
	struct drm_mode_create_dumb c = {
		.width = 1024, .height = size / 4096, .bpp = 32,
	};
	struct drm_prime_handle p = { 0 };
	struct drm_gem_close gc = { 0 };
	struct stat st;
	int ret = 0;

	if (ioctl(drm, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	p.handle = c.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	if (ioctl(drm, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		ret = -errno;
	gc.handle = c.handle;
	ioctl(drm, DRM_IOCTL_GEM_CLOSE, &gc);
	if (ret)
		return ret;
	if (ino) {
		if (fstat(p.fd, &st)) {
			ret = -errno;
			close(p.fd);
			return ret;
		}
		*ino = st.st_ino;
	}
	return p.fd;
}

/*
 * The buffer with inode @ino in bufinfo: 1 (found; *count file references,
 * *attached devices attached), 0 (not there), or -errno.
 */
static inline int vgem_bufinfo(uint64_t ino, long *count, int *attached)
{
	char line[512];
	FILE *f = fopen(VGEM_BUFINFO, "r");
	int in_ours = 0, found = 0;

	if (!f)
		return -errno;
	*count = 0;
	*attached = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long size, flags, mode, lino;
		long cnt;
		char exp[64];

		if (sscanf(line, "%lu %lx %lx %ld %63s %lu", &size, &flags,
			   &mode, &cnt, exp, &lino) == 6) {
			in_ours = lino == ino;
			if (in_ours) {
				found = 1;
				*count = cnt;
			}
			continue;
		}
		if (in_ours && sscanf(line, "Total %d devices attached",
				      attached) == 1)
			in_ours = 0;
	}
	fclose(f);
	return found;
}

#endif /* SM_VGEM_H */
