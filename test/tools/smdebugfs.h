/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sync_mem's debugfs (/sys/kernel/debug/ib_sync_mem), for the test
 * programs that use the module's test hooks (dmabuf_hold,
 * region_rechecks) and its object counters, and ib_sync_mem_test's fences
 * with no timer (KT_DEBUGFS/fence). Header-only, static functions; root and
 * a mounted debugfs.
 */
#ifndef SM_DEBUGFS_H
#define SM_DEBUGFS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ktap.h"

#define SM_DEBUGFS	"/sys/kernel/debug/ib_sync_mem"

#define KT_DEBUGFS	"/sys/kernel/debug/ib_sync_mem_test"

#define SIM_DEBUGFS	"/sys/kernel/debug/ib_sync_mem_sim"

#define DMADEV_DEBUGFS	"/sys/kernel/debug/ib_sync_mem_dmadev"

/*
 * The device's view of sim client @id's memory (a client created over
 * memory, IB_SYNC_MEM_A_SIM_ADDR): its @size bytes into @buf. 0 or -errno.
 */
static inline int sim_view_read(int id, unsigned char *buf, size_t size)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SIM_DEBUGFS "/clients/%d/view", id);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, size, 0);
	close(fd);
	return n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;
}

/* Write @val to @dir/@file: 0 or -errno. */
static inline int debugfs_write_at(const char *dir, const char *file, const char *val)
{
	char path[128];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* The number @dir/@file holds, or -errno. */
static inline long debugfs_long_at(const char *dir, const char *file)
{
	char path[128];
	long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fscanf(f, "%ld", &v) != 1)
		v = -EPROTO;
	fclose(f);
	return v;
}

/* ib_sync_mem_dmadev's ctl: "add NAME" or "del NAME". 0 or -errno. */
static inline int dmadev_ctl(const char *cmd)
{
	return debugfs_write_at(DMADEV_DEBUGFS, "ctl", cmd);
}

/*
 * The test device @dev's DMA: @n bytes at bus address @bus read into @buf
 * (@write 0) or written from it. 0 or -errno.
 */
static inline int dmadev_bus(const char *dev, uint64_t bus, void *buf,
			     size_t n, int write)
{
	char path[128];
	ssize_t done;
	int fd, err;

	snprintf(path, sizeof(path), DMADEV_DEBUGFS "/%s/bus", dev);
	fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	done = write ? pwrite(fd, buf, n, (off_t)bus) : pread(fd, buf, n, (off_t)bus);
	err = done < 0 ? -errno : (size_t)done == n ? 0 : -EIO;
	close(fd);
	return err;
}

/* A client's DMA segments (SM_DEBUGFS/dma/ID), in the order of its bytes. */
struct sm_dma_map {
	int n;
	uint64_t bus[256];
	uint32_t len[256];
};

/* Read client @id's segments into @m: 0 or -errno (-ENOENT: no file). */
static inline int sm_dma_map_read(int id, struct sm_dma_map *m)
{
	char path[128];
	unsigned long long bus;
	unsigned int len;
	FILE *f;

	snprintf(path, sizeof(path), SM_DEBUGFS "/dma/%d", id);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	m->n = 0;
	while (m->n < 256 && fscanf(f, "%llx %u", &bus, &len) == 2) {
		m->bus[m->n] = bus;
		m->len[m->n++] = len;
	}
	fclose(f);
	return 0;
}

/*
 * What the device @dev sees of @n bytes at @offset of a mapping (@write 0),
 * or writes there (@write 1), segment by segment. 0 or -errno (-ERANGE:
 * past the mapping).
 */
static inline int sm_dma_map_rw(const char *dev, const struct sm_dma_map *m,
				uint64_t offset, void *buf, size_t n, int write)
{
	unsigned char *b = buf;
	uint64_t pos = 0, skip, k;
	int i, err;

	for (i = 0; i < m->n && n; i++) {
		if (offset >= pos + m->len[i]) {
			pos += m->len[i];
			continue;
		}
		skip = offset - pos;
		k = m->len[i] - skip < n ? m->len[i] - skip : n;
		err = dmadev_bus(dev, m->bus[i] + skip, b, k, write);
		if (err)
			return err;
		b += k;
		n -= k;
		offset += k;
		pos += m->len[i];
	}
	return n ? -ERANGE : 0;
}

/* Write @val to SM_DEBUGFS/@file: 0 or -errno. */
static inline int sm_debugfs_write(const char *file, const char *val)
{
	return debugfs_write_at(SM_DEBUGFS, file, val);
}

/* The number SM_DEBUGFS/@file holds, or -errno. */
static inline long sm_debugfs_long(const char *file)
{
	return debugfs_long_at(SM_DEBUGFS, file);
}

/*
 * The number of the line "@key N" of SM_DEBUGFS/@file (a file of such
 * lines, like counters or region_rechecks), or -errno; -EPROTO if no line
 * has that key.
 */
static inline long sm_debugfs_key(const char *file, const char *key)
{
	char path[128], k[32];
	long v, found = -EPROTO;
	FILE *f;

	snprintf(path, sizeof(path), SM_DEBUGFS "/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fscanf(f, "%31s %ld", k, &v) == 2) {
		if (!strcmp(k, key)) {
			found = v;
			break;
		}
	}
	fclose(f);
	return found;
}

/**
 * struct sm_inbound_line - one line of SM_DEBUGFS/inbound: a device's
 *	inbound flusher
 * @reads: READs it completed
 * @regs: pages it registered for them
 * @last: the 8 bytes the last READ brought back
 * @recoveries: times its QP was reset after a WR failed
 * @answered: flushes another flush's READ of their target answered
 * @waiting: flushes waiting for the flusher now
 */
struct sm_inbound_line {
	unsigned long long reads, regs, last, recoveries, answered;
	unsigned int waiting;
};

/* @dev's line of SM_DEBUGFS/inbound: 0, -errno, -ENOENT if it has none. */
static inline int sm_inbound_line(const char *dev, struct sm_inbound_line *out)
{
	struct sm_inbound_line v = { 0 };
	char name[64], line[256];
	int ret = -ENOENT;
	FILE *f;

	f = fopen(SM_DEBUGFS "/inbound", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu %llu %llx %llu %llu %u", name, &v.reads,
			   &v.regs, &v.last, &v.recoveries, &v.answered,
			   &v.waiting) != 7)
			break;
		if (!strcmp(name, dev)) {
			*out = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * @dev's flushes another flush's READ answered, and those waiting for its
 * flusher now, with the READs it completed. 0, or -errno; -ENOENT if no
 * line is @dev's.
 */
static inline int sm_inbound_answered(const char *dev, uint64_t *reads,
				      uint64_t *answered, unsigned int *waiting)
{
	struct sm_inbound_line v = { 0 };
	int ret = sm_inbound_line(dev, &v);

	if (!ret) {
		*reads = v.reads;
		*answered = v.answered;
		*waiting = v.waiting;
	}
	return ret;
}

/*
 * What @dev's inbound flusher did: the READs it completed and the 8 bytes
 * the last one brought back. 0, or -errno; -ENOENT if no line is @dev's.
 */
static inline int sm_inbound_read(const char *dev, uint64_t *reads,
				  uint64_t *last)
{
	struct sm_inbound_line v = { 0 };
	int ret = sm_inbound_line(dev, &v);

	if (!ret) {
		*reads = v.reads;
		*last = v.last;
	}
	return ret;
}

/*
 * dmabuf_hold: hold every dma-buf sync between its fence wait and its CPU
 * access bracket (1), or let them go (0).
 */
static inline int sm_dmabuf_hold(int on)
{
	return sm_debugfs_write("dmabuf_hold", on ? "1" : "0");
}

/* Wait until @n syncs are held: 0, or -ETIMEDOUT. */
static inline int sm_dmabuf_wait_held(long n, int ms)
{
	double t0 = now_ms();

	while (sm_debugfs_long("dmabuf_hold") != n) {
		if (now_ms() - t0 > ms)
			return -ETIMEDOUT;
		usleep(2000);
	}
	return 0;
}

/*
 * Wait until every region re-check queued after an MMU_NOTIFY_CLEAR has
 * run (region_rechecks: "queued N", "done N" equal): 0, -ETIMEDOUT, or
 * -errno if the file cannot be read. The notifier queues a re-check during
 * the operation that clears, so once that operation has returned, a test
 * that waits here sees its outcome.
 */
static inline int sm_region_rechecks_settled(int ms)
{
	double t0 = now_ms();
	long queued, done;

	for (;;) {
		/* Every re-check queued before the first read has run. */
		queued = sm_debugfs_key("region_rechecks", "queued");
		done = sm_debugfs_key("region_rechecks", "done");
		if (queued < 0)
			return queued;
		if (done < 0)
			return done;
		if (queued <= done)
			return 0;
		if (now_ms() - t0 > ms)
			return -ETIMEDOUT;
		usleep(2000);
	}
}

/*
 * ib_sync_mem_test's fences (kmod/tests/test_fence.c): unlike vgem's, they
 * do not signal themselves after 10 s. Add one to dma-buf @dmabuf_fd: 0 or
 * -errno.
 */
static inline int kt_fence_add(int dmabuf_fd)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", dmabuf_fd);
	return debugfs_write_at(KT_DEBUGFS, "fence", v);
}

/* How many of them are unsignalled, or -errno. */
static inline long kt_fence_unsignalled(void)
{
	return debugfs_long_at(KT_DEBUGFS, "fence");
}

/* Signal them all: 0 or -errno. */
static inline int kt_fence_signal(void)
{
	return debugfs_write_at(KT_DEBUGFS, "fence", "signal");
}

#endif /* SM_DEBUGFS_H */
