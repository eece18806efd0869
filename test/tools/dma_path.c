// SPDX-License-Identifier: GPL-2.0
/*
 * dma_path: KTAP tests of the DMA path a real HCA's memory takes, on
 * ib_sync_mem_dmadev's device (a real DMA device behind an RDMA device).
 *
 *   dma_path --dev smdma0
 *
 * The device must exist (the suite adds it); the tests delete it last.
 * On a kernel booted with swiotlb=force every mapping bounces: the device
 * reads and writes the bounce buffers (the dmadev bus file at the bus
 * addresses of debugfs dma/ID), the CPU its own pages, and only a sync in
 * the right direction copies between them. So the checks are exact, byte
 * for byte: what the device sees without a sync is the old copy, with it
 * the new one, and a range sync moves those bytes and no others. A region
 * at buf + 100, as malloc() returns one, shares its first and last pages
 * with other memory: no sync of it moves those other bytes.
 *
 * A kernel whose ib_umem maps only coherent DMA (7.x:
 * DMA_ATTR_REQUIRE_COHERENT) refuses such a region: that refusal, with
 * its errno and message, is what is tested there instead.
 *
 * Needs ib_sync_mem_test loaded (its write fences with no timer).
 *
 * dma-buf: a buffer of the system dma-heap (whose CPU access bracket syncs
 * every attachment, as the DMA API asks of an exporter) attached on the
 * device: the module's sync brackets move the bytes both ways through the
 * attachment's bounce buffers. A buffer of the test exporter, which
 * moves: the client lets go of its mapping when told, maps the new pages
 * at its next sync and not before (where the kernel lets buffers move:
 * 7.x; 6.x pins them for such an importer). A vgem buffer's attachment,
 * in bufinfo while the client lives, released once when the device is
 * deleted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/dma-heap.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../kmod/dmadev/dmadev_uapi.h"
#include "ktap.h"
#include "smdebugfs.h"
#include "smnl.h"
#include "vgem.h"

#define LEN	(64 * 1024)

static const char *dev = "smdma0";
static struct smnl nl;

static unsigned char want[LEN], seen[LEN];

static void fill(unsigned char *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 131 + seed * 7 + 1);
}

/* The first byte where @a and @b differ, or -1. */
static long first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

/* ib_umem maps only coherent DMA here (DMA_ATTR_REQUIRE_COHERENT, 7.x). */
static int umem_requires_coherent(void)
{
	return kernel_at_least(7, 0);
}

static int bounces(void)
{
	char line[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
	return strstr(line, "swiotlb=force") != NULL;
}

/* The device's view of all LEN bytes equals @exp. */
static int device_sees(const struct sm_dma_map *m, const unsigned char *exp,
		       const char *what)
{
	long d;
	int err = sm_dma_map_rw(dev, m, 0, seen, LEN, 0);

	d = err ? -2 : first_diff(seen, exp, LEN);
	if (!ktap_result(d == -1, "%s", what))
		ktap_diag("device read: %s; first difference at byte %ld", errstr(err), d);
	return d == -1;
}

static int cpu_sees(const unsigned char *buf, const unsigned char *exp,
		    const char *what)
{
	long d = first_diff(buf, exp, LEN);

	if (!ktap_result(d == -1, "%s", what))
		ktap_diag("first difference at byte %ld: 0x%02x, expected 0x%02x",
			  d, buf[d], exp[d]);
	return d == -1;
}

static int sync_ok(int id, uint32_t dir, uint64_t off, uint64_t len,
		   const char *what)
{
	struct smnl_sync_result r;
	int ret;

	if (len)
		ret = smnl_sync_range(&nl, id, dir, off, len, &r);
	else
		ret = smnl_sync_client_full(&nl, id, dir, 1000, &r);
	if (!ktap_result(ret == 0 && r.client_err == 0, "%s: 0", what))
		ktap_diag("%s/%s \"%s\"", errstr(ret), errstr(r.client_err), nl.extack);
	return !ret && !r.client_err;
}

/* Bytes the device writes at @off, and what is expected of them. */
static void device_writes(const struct sm_dma_map *m, uint64_t off, size_t n,
			  unsigned int seed, unsigned char *dev_copy)
{
	unsigned char tmp[LEN];
	int err;

	fill(tmp, n, seed);
	err = sm_dma_map_rw(dev, m, off, tmp, n, 1);
	if (err)
		ktap_diag("device write of %zu bytes at %llu: %s", n,
			  (unsigned long long)off, errstr(err));
	memcpy(dev_copy + off, tmp, n);
}

/*
 * A writable region: every direction, whole and in ranges, against the
 * device's own view. @dev_copy tracks what the device holds, @want what
 * the CPU should see.
 */
static void test_region(void)
{
	static unsigned char dev_copy[LEN];
	struct sm_dma_map m;
	uint64_t total = 0;
	unsigned char *buf;
	int id, i, ret;

	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		ktap_result(0, "mmap 64 KiB");
		return;
	}
	fill(buf, LEN, 1);
	memcpy(dev_copy, buf, LEN);
	id = smnl_register_region(&nl, dev, "dma-region", (uintptr_t)buf, LEN,
				  IB_SYNC_MEM_REGION_F_WRITE);
	if (umem_requires_coherent()) {
		if (!ktap_result(id == -EOPNOTSUPP, "region on a device that bounces: -EOPNOTSUPP (ib_umem maps only coherent DMA)"))
			ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		ktap_result(strstr(nl.extack, "coherent") != NULL,
			    "its message says why: \"%s\"", nl.extack);
		if (id > 0)
			smnl_unregister(&nl, id);
		munmap(buf, LEN);
		return;
	}
	if (!ktap_result(id > 0, "register a 64 KiB region on %s", dev)) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, LEN);
		return;
	}
	ret = sm_dma_map_read(id, &m);
	for (i = 0; i < m.n && !ret; i++)
		total += m.len[i];
	ktap_result(!ret && m.n >= 1 && total == LEN,
		    "debugfs dma/%d: %d segments, 65536 bytes", id, ret ? 0 : m.n);
	if (ret || total != LEN)
		goto out;

	/* The bounce buffer holds the bytes of the mapping's time. */
	fill(buf, LEN, 2);
	memcpy(want, buf, LEN);
	device_sees(&m, dev_copy, "CPU wrote, no sync: the device still reads the old bytes (bounced)");
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, 0, "sync to-device");
	memcpy(dev_copy, want, LEN);
	device_sees(&m, dev_copy, "after to-device: the device reads every byte the CPU wrote");

	device_writes(&m, 0, LEN, 3, dev_copy);
	cpu_sees(buf, want, "device wrote, no sync: the CPU still reads its own bytes");
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_CPU, 0, 0, "sync to-cpu");
	memcpy(want, dev_copy, LEN);
	cpu_sees(buf, want, "after to-cpu: the CPU reads every byte the device wrote");

	/* Ranges: the bytes of the range move, the others stay. */
	fill(buf + 4196, 5000, 4);
	fill(buf + 20000, 1000, 5);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 4196, 5000, "sync to-device of 5000 bytes at 4196");
	memcpy(dev_copy + 4196, buf + 4196, 5000);
	device_sees(&m, dev_copy, "the device reads the range's new bytes, and not those written at 20000");
	memcpy(want, buf, LEN);
	device_writes(&m, 30000, 1000, 6, dev_copy);
	device_writes(&m, 40000, 1000, 7, dev_copy);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_CPU, 30000, 1000, "sync to-cpu of 1000 bytes at 30000");
	memcpy(want + 30000, dev_copy + 30000, 1000);
	cpu_sees(buf, want, "the CPU reads the range's new bytes, and not those written at 40000");

	/* Bidirectional: the device's bytes come to the CPU, and stay the device's. */
	device_writes(&m, 0, LEN, 8, dev_copy);
	sync_ok(id, IB_SYNC_MEM_SYNC_BIDIRECTIONAL, 0, 0, "sync bidirectional");
	memcpy(want, dev_copy, LEN);
	cpu_sees(buf, want, "after bidirectional: the CPU reads the device's bytes");
	device_sees(&m, dev_copy, "after bidirectional: the device reads the same");

out:
	ret = smnl_unregister(&nl, id);
	ktap_result(ret == 0, "unregister: 0");
	ret = sm_dma_map_read(id, &m);
	ktap_result(ret == -ENOENT, "debugfs dma/%d is gone: -ENOENT", id);
	munmap(buf, LEN);
}

/*
 * A region as malloc() returns one: at buf + 100, an odd length, sharing
 * its first and last pages with other memory. ib_umem maps whole pages
 * (debugfs dma/ID lists them from the first page's start), so the device
 * sees the region at byte 100 of its mapping; the bytes before and after
 * it there are other memory, which no sync of the region may move: a
 * whole sync covers exactly [addr, addr + len), a range's offset counts
 * from addr, a range ending at the region's end moves its last byte and
 * not the next one, and one byte further is refused with -ERANGE. A lazy
 * region's sync moves the bytes marked. When the client is deleted
 * (ib_umem unmaps the pages), the memory around it keeps what the CPU
 * wrote there.
 */
#define UN_OFF	100
#define UN_LEN	20011

/* The device's view of the @n bytes of the mapping equals @exp. */
static int device_sees_n(const struct sm_dma_map *m, const unsigned char *exp,
			 size_t n, const char *what)
{
	long d;
	int err = sm_dma_map_rw(dev, m, 0, seen, n, 0);

	d = err ? -2 : first_diff(seen, exp, n);
	if (!ktap_result(d == -1, "%s", what))
		ktap_diag("device read: %s; first difference at byte %ld of the mapping (the region starts at %d)",
			  errstr(err), d, UN_OFF);
	return d == -1;
}

static int cpu_sees_n(const unsigned char *buf, const unsigned char *exp,
		      size_t n, const char *what)
{
	long d = first_diff(buf, exp, n);

	if (!ktap_result(d == -1, "%s", what))
		ktap_diag("first difference at byte %ld of the pages (the region starts at %d): 0x%02x, expected 0x%02x",
			  d, UN_OFF, buf[d], exp[d]);
	return d == -1;
}

/* A region at @base + UN_OFF of UN_LEN bytes: its id, or -errno. */
static int register_unaligned(unsigned char *base, const char *name,
			      uint32_t flags)
{
	struct smnl_new req = {
		.dev = dev, .name = name, .kind = IB_SYNC_MEM_KIND_REGION,
		.flags = flags, .region_nest = 1,
		.region_addr = (uintptr_t)(base + UN_OFF), .region_len = UN_LEN,
		.region_access = IB_SYNC_MEM_REGION_F_WRITE,
	};

	return smnl_register(&nl, &req);
}

static void test_unaligned(void)
{
	static unsigned char dev_copy[LEN];
	const size_t page = sysconf(_SC_PAGESIZE);
	const size_t span = (UN_OFF + UN_LEN + page - 1) / page * page;
	struct smnl_sync_result r;
	struct sm_dma_map m;
	uint64_t total = 0;
	unsigned char *base;
	int id, i, ret;

	base = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		ktap_result(0, "unaligned: mmap 64 KiB");
		return;
	}
	fill(base, LEN, 21);
	memcpy(dev_copy, base, LEN);
	id = register_unaligned(base, "dma-unaligned", 0);
	if (umem_requires_coherent()) {
		ktap_result(id == -EOPNOTSUPP,
			    "unaligned region on a device that bounces: -EOPNOTSUPP, as an aligned one (%s \"%s\")",
			    errstr(id), nl.extack);
		if (id > 0)
			smnl_unregister(&nl, id);
		munmap(base, LEN);
		return;
	}
	if (!ktap_result(id > 0, "register a region of %d bytes at buf + %d on %s",
			 UN_LEN, UN_OFF, dev)) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(base, LEN);
		return;
	}
	ret = sm_dma_map_read(id, &m);
	for (i = 0; i < m.n && !ret; i++)
		total += m.len[i];
	ktap_result(!ret && total == span,
		    "unaligned: debugfs dma/%d maps the %zu pages it spans (%llu bytes)",
		    id, span / page, (unsigned long long)total);
	if (ret || total != span)
		goto out;

	/* Whole to-device: the region's bytes, none of the others of its pages. */
	fill(base, LEN, 22);
	memcpy(want, base, LEN);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, 0, "unaligned: sync to-device");
	memcpy(dev_copy + UN_OFF, want + UN_OFF, UN_LEN);
	device_sees_n(&m, dev_copy, span,
		      "unaligned: after to-device the device reads the region's new bytes, not those around it in its pages");

	/* Whole to-cpu: the region's bytes come in, the memory around it keeps the CPU's. */
	device_writes(&m, 0, span, 23, dev_copy);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_CPU, 0, 0, "unaligned: sync to-cpu");
	memcpy(want + UN_OFF, dev_copy + UN_OFF, UN_LEN);
	cpu_sees_n(base, want, LEN,
		   "unaligned: after to-cpu the CPU reads the device's bytes in the region, its own around it");

	/* Ranges: the offset counts from the region's first byte. */
	fill(base, LEN, 24);
	memcpy(want, base, LEN);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 5000, 3001,
		"unaligned: sync to-device of 3001 bytes at 5000");
	memcpy(dev_copy + UN_OFF + 5000, want + UN_OFF + 5000, 3001);
	device_sees_n(&m, dev_copy, span,
		      "unaligned: the device reads those 3001 bytes at region byte 5000, and no others");
	device_writes(&m, 0, span, 25, dev_copy);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_CPU, 9000, 777,
		"unaligned: sync to-cpu of 777 bytes at 9000");
	memcpy(want + UN_OFF + 9000, dev_copy + UN_OFF + 9000, 777);
	cpu_sees_n(base, want, LEN,
		   "unaligned: the CPU reads those 777 bytes at region byte 9000, and no others");

	/* Its first bytes and its last ones: not one byte of the pages more. */
	fill(base, LEN, 26);
	memcpy(want, base, LEN);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, 10,
		"unaligned: sync to-device of its first 10 bytes");
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, UN_LEN - 50, 50,
		"unaligned: sync to-device of the 50 bytes ending at its end");
	memcpy(dev_copy + UN_OFF, want + UN_OFF, 10);
	memcpy(dev_copy + UN_OFF + UN_LEN - 50, want + UN_OFF + UN_LEN - 50, 50);
	device_sees_n(&m, dev_copy, span,
		      "unaligned: the device reads those 60 bytes, not the byte before the region nor the one after it");
	device_writes(&m, 0, span, 27, dev_copy);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_CPU, UN_LEN - 1, 1,
		"unaligned: sync to-cpu of its last byte");
	memcpy(want + UN_OFF + UN_LEN - 1, dev_copy + UN_OFF + UN_LEN - 1, 1);
	cpu_sees_n(base, want, LEN,
		   "unaligned: the CPU reads the device's last byte of the region, and its own next one");
	memset(&r, 0, sizeof(r));
	ret = smnl_sync_range(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, UN_LEN - 50, 51, &r);
	ktap_result(ret == -ERANGE,
		    "unaligned: a range one byte past its end -> -ERANGE (%s/%s \"%s\")",
		    errstr(ret), errstr(r.client_err), nl.extack);
	ret = smnl_sync_range(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, UN_LEN, 1, &r);
	ktap_result(ret == -ERANGE,
		    "unaligned: a range at its end -> -ERANGE (%s)", errstr(ret));
	device_sees_n(&m, dev_copy, span, "unaligned: the refused ranges moved nothing");

	/* Deleted: ib_umem unmaps whole pages; the memory around the region is the CPU's. */
	fill(base, LEN, 28);
	memcpy(want, base, LEN);
out:
	ret = smnl_unregister(&nl, id);
	ktap_result(ret == 0, "unaligned: unregister: 0");
	if (!ret && total == span) {
		cpu_sees_n(base, want, UN_OFF,
			   "unaligned: deleted, the bytes before the region in its first page are the CPU's");
		cpu_sees_n(base + UN_OFF + UN_LEN, want + UN_OFF + UN_LEN, LEN - UN_OFF - UN_LEN,
			   "unaligned: and those after it in its last page too");
	}
	munmap(base, LEN);
}

/*
 * A lazy unaligned region: its sync moves the bytes marked (offsets from
 * the region's start), no others.
 */
static void test_unaligned_lazy(void)
{
	static unsigned char dev_copy[LEN];
	const size_t page = sysconf(_SC_PAGESIZE);
	const size_t span = (UN_OFF + UN_LEN + page - 1) / page * page;
	struct sm_dma_map m;
	unsigned char *base;
	int id, ret;

	if (umem_requires_coherent())
		return;
	base = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		ktap_result(0, "unaligned lazy: mmap 64 KiB");
		return;
	}
	fill(base, LEN, 31);
	memcpy(dev_copy, base, LEN);
	id = register_unaligned(base, "dma-unaligned-lazy", IB_SYNC_MEM_CLIENT_F_LAZY);
	if (!ktap_result(id > 0, "register a lazy region of %d bytes at buf + %d", UN_LEN, UN_OFF)) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(base, LEN);
		return;
	}
	ret = sm_dma_map_read(id, &m);
	if (!ktap_result(!ret, "unaligned lazy: debugfs dma/%d", id))
		goto out;
	fill(base, LEN, 32);
	memcpy(want, base, LEN);
	ret = smnl_mark_dirty(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 12345, 4321);
	ktap_result(ret == 0, "unaligned lazy: MARK_DIRTY of 4321 bytes at 12345: 0 (%s)", errstr(ret));
	ret = smnl_mark_dirty(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, UN_LEN - 3, 3);
	ktap_result(ret == 0, "unaligned lazy: MARK_DIRTY of its last 3 bytes: 0 (%s)", errstr(ret));
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, 0, "unaligned lazy: sync to-device");
	memcpy(dev_copy + UN_OFF + 12345, want + UN_OFF + 12345, 4321);
	memcpy(dev_copy + UN_OFF + UN_LEN - 3, want + UN_OFF + UN_LEN - 3, 3);
	device_sees_n(&m, dev_copy, span,
		      "unaligned lazy: the device reads the bytes marked, and no others");
	ret = smnl_mark_dirty(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, UN_LEN - 3, 4);
	ktap_result(ret == -ERANGE, "unaligned lazy: a mark one byte past its end -> -ERANGE (%s)",
		    errstr(ret));
out:
	ktap_result(smnl_unregister(&nl, id) == 0, "unaligned lazy: unregister: 0");
	munmap(base, LEN);
}

/* A read-only region: the device reads what the CPU synced to it. */
static void test_read_only(void)
{
	struct sm_dma_map m;
	unsigned char *buf;
	int id, ret;

	if (umem_requires_coherent())
		return;
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		ktap_result(0, "mmap 64 KiB");
		return;
	}
	fill(buf, LEN, 9);
	id = smnl_register_region(&nl, dev, "dma-ro", (uintptr_t)buf, LEN, 0);
	if (!ktap_result(id > 0, "register a read-only region")) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, LEN);
		return;
	}
	ret = sm_dma_map_read(id, &m);
	ktap_result(ret == 0, "debugfs dma/%d of the read-only region", id);
	fill(buf, LEN, 10);
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, 0, "read-only region: sync to-device");
	if (!ret)
		device_sees(&m, buf, "read-only region: the device reads what the CPU wrote");
	smnl_unregister(&nl, id);
	munmap(buf, LEN);
}

/*
 * A system dma-heap buffer on the device: its attachment bounces like a
 * region's mapping; to-device closes the CPU's access (the heap syncs the
 * attachment for the device), to-cpu opens it (synced for the CPU).
 */
static void test_heap(void)
{
	struct dma_heap_allocation_data a = {
		.len = LEN, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	static unsigned char dev_copy[LEN];
	unsigned char *buf = MAP_FAILED;
	struct sm_dma_map m;
	int heap, id = 0, ret;

	heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (heap < 0 && errno == ENOENT) {
		ktap_skip("no system dma-heap (CONFIG_DMABUF_HEAPS_SYSTEM)",
			  "a system dma-heap buffer on the device");
		return;
	}
	ret = heap < 0 ? -errno : ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a) ? -errno : 0;
	if (!ret)
		buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, a.fd, 0);
	if (!ktap_result(!ret && buf != MAP_FAILED, "allocate and map a 64 KiB system dma-heap buffer")) {
		ktap_diag("%s", errstr(ret ? ret : -errno));
		goto out;
	}
	fill(buf, LEN, 11);
	memcpy(dev_copy, buf, LEN);
	id = smnl_register_dmabuf(&nl, dev, "dma-heap", a.fd);
	if (!ktap_result(id > 0, "register the heap buffer on %s", dev)) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		goto out;
	}
	ret = sm_dma_map_read(id, &m);
	if (!ktap_result(!ret && m.n >= 1, "debugfs dma/%d: the attachment's %d segments", id, ret ? 0 : m.n))
		goto out;

	fill(buf, LEN, 12);
	memcpy(want, buf, LEN);
	device_sees(&m, dev_copy, "heap: CPU wrote, no sync: the device reads the old bytes");
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, 0, "heap: sync to-device");
	device_sees(&m, want, "heap: after to-device: the device reads every byte the CPU wrote");
	device_writes(&m, 0, LEN, 13, dev_copy);
	cpu_sees(buf, want, "heap: device wrote, no sync: the CPU reads its own bytes");
	sync_ok(id, IB_SYNC_MEM_SYNC_TO_CPU, 0, 0, "heap: sync to-cpu");
	cpu_sees(buf, dev_copy, "heap: after to-cpu: the CPU reads every byte the device wrote");
out:
	if (id > 0)
		ktap_result(smnl_unregister(&nl, id) == 0, "heap: unregister: 0");
	if (buf != MAP_FAILED)
		munmap(buf, LEN);
	if (heap >= 0) {
		if (a.fd > 0)
			close(a.fd);
		close(heap);
	}
}

#define EXPORTER DMADEV_DEBUGFS "/exporter"

static int smd_stat_of(int ctl, int fd, struct smd_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->fd = fd;
	return ioctl(ctl, SMD_IOC_STAT, st) ? -errno : 0;
}

static int smd_move(int ctl, int fd)
{
	int32_t f = fd;

	return ioctl(ctl, SMD_IOC_MOVE, &f) ? -errno : 0;
}

/*
 * Buffers move where the dma-buf core lets them: 7.x always; Debian's 6.1
 * and 6.12 have CONFIG_DMABUF_MOVE_NOTIFY off (the core pins instead).
 */
static int buffers_move(void)
{
	return kernel_at_least(7, 0);
}

/*
 * The buffer moved, and its exporter is busy with it (it holds the
 * reservation lock, SMD_IOC_HOLD) when the next sync must map it again:
 * the sync gives up at its deadline (-ETIMEDOUT, 300 ms), while the lock
 * is still held, not when the exporter lets go (at most 60 s later). Once
 * it let go, the next sync maps the new pages.
 */
static void test_move_held(int ctl, int fd, int id)
{
	struct smd_hold h = { .fd = fd, .on = 1 };
	struct smd_stat st;
	int ret, hold, cerr = 0;

	ret = ioctl(ctl, SMD_IOC_HOLD, &h) ? -errno : 0;
	if (!ktap_result(!ret, "moves: the exporter holds the buffer's reservation lock (%s)",
			 errstr(ret)))
		return;
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 300, &cerr, NULL);
	h.on = 0;
	hold = ioctl(ctl, SMD_IOC_HOLD, &h) ? -errno : 0;
	ktap_result(!ret && cerr == -ETIMEDOUT && hold == 0,
		    "moves: a sync that must map it again gives up at its deadline, the lock still held: ETIMEDOUT (%s/%s, the hold: %s)",
		    errstr(ret), errstr(cerr), errstr(hold));
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, NULL);
	smd_stat_of(ctl, fd, &st);
	ktap_result(!ret && !cerr && st.mapped == 1 && st.maps == 3,
		    "moves: once the exporter let go, the next sync maps the new pages (%s/%s, maps %llu)",
		    errstr(ret), errstr(cerr), (unsigned long long)st.maps);
}

/*
 * A buffer of the test exporter, which moves its pages: the client's
 * attachment is dynamic; told of a move it lets go of its mapping there
 * (the move succeeds only if every importer did), and maps the new pages
 * at its next sync, not before. Where the core pins the buffer for a
 * dynamic importer, the move is refused and the mapping stays.
 */
static void test_moves(void)
{
	struct smd_export ex = { .size = LEN, .fd = -1 };
	struct smd_stat st;
	struct sm_dma_map m;
	int ctl, id = 0, ret, cerr;

	ctl = open(EXPORTER, O_RDWR | O_CLOEXEC);
	ret = ctl < 0 ? -errno : ioctl(ctl, SMD_IOC_EXPORT, &ex) ? -errno : 0;
	if (!ktap_result(!ret, "moves: export a 64 KiB buffer that moves")) {
		ktap_diag("%s", errstr(ret));
		goto out;
	}
	id = smnl_register_dmabuf(&nl, dev, "dma-moves", ex.fd);
	if (!ktap_result(id > 0, "moves: register it on %s", dev)) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		goto out;
	}
	ret = smd_stat_of(ctl, ex.fd, &st);
	ktap_result(!ret && st.attached == 1 && st.mapped == 1 && st.maps == 1 &&
		    st.pinned == (buffers_move() ? 0 : 1),
		    "moves: attached, mapped once, %s", buffers_move() ? "not pinned" : "pinned (no move notify)");
	ktap_diag("attached %u mapped %u pinned %u maps %llu unmaps %llu moves %llu",
		  st.attached, st.mapped, st.pinned, (unsigned long long)st.maps,
		  (unsigned long long)st.unmaps, (unsigned long long)st.moves);

	ret = smd_move(ctl, ex.fd);
	if (!buffers_move()) {
		ktap_result(ret == -EBUSY, "moves: a pinned buffer does not move: -EBUSY (%s)", errstr(ret));
		ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, NULL);
		smd_stat_of(ctl, ex.fd, &st);
		ktap_result(!ret && !cerr && st.maps == 1 && st.unmaps == 0,
			    "moves: the sync after it keeps the one mapping (maps %llu, unmaps %llu)",
			    (unsigned long long)st.maps, (unsigned long long)st.unmaps);
		goto out;
	}
	ktap_result(ret == 0, "moves: the buffer moves: 0 (%s)", errstr(ret));
	smd_stat_of(ctl, ex.fd, &st);
	ktap_result(st.moves == 1 && st.mapped == 0 && st.unmaps == 1 && st.maps == 1,
		    "moves: the client let go of its mapping at the move, mapped nothing since (mapped %u, maps %llu, unmaps %llu)",
		    st.mapped, (unsigned long long)st.maps, (unsigned long long)st.unmaps);
	ret = sm_dma_map_read(id, &m);
	ktap_result(!ret && m.n == 0, "moves: debugfs dma/%d is empty until a sync", id);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, NULL);
	ktap_result(!ret && !cerr, "moves: the next sync: 0 (%s/%s)", errstr(ret), errstr(cerr));
	smd_stat_of(ctl, ex.fd, &st);
	ktap_result(st.mapped == 1 && st.maps == 2 && st.unmaps == 1,
		    "moves: it mapped the new pages once (maps %llu)", (unsigned long long)st.maps);
	ret = sm_dma_map_read(id, &m);
	ktap_result(!ret && m.n >= 1, "moves: debugfs dma/%d shows the new mapping (%d segments)", id,
		    ret ? 0 : m.n);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_CPU, 1000, &cerr, NULL);
	smd_stat_of(ctl, ex.fd, &st);
	ktap_result(!ret && !cerr && st.maps == 2,
		    "moves: a sync with no move in between maps nothing (maps %llu)",
		    (unsigned long long)st.maps);
	ret = smd_move(ctl, ex.fd);
	ktap_result(ret == 0, "moves: a second move: 0");
	test_move_held(ctl, ex.fd, id);
out:
	if (id > 0) {
		ret = smnl_unregister(&nl, id);
		smd_stat_of(ctl, ex.fd, &st);
		ktap_result(!ret && st.attached == 0 && st.pinned == 0 && st.maps == st.unmaps,
			    "moves: unregistered: detached, unpinned, every mapping released (maps %llu, unmaps %llu)",
			    (unsigned long long)st.maps, (unsigned long long)st.unmaps);
	}
	if (ex.fd >= 0)
		close(ex.fd);
	if (ctl >= 0)
		close(ctl);
}

/*
 * Delete the device under a dma-buf client and a region: when the delete
 * returns, the attachment is released and the region unpinned; the
 * clients go with their device, and nothing is released a second time
 * (the debug kernel's KASAN and refcount checks watch that).
 */
static void test_remove(void)
{
	unsigned char *buf = MAP_FAILED;
	long count0 = -1, count, pin0 = vm_pin_kb(), pin;
	int drm, fd = -1, rid = 0, did = 0, att = -1, ret, cerr;
	uint64_t ino = 0;
	char cmd[64];

	drm = vgem_open();
	if (ktap_result(drm >= 0, "open vgem"))
		fd = vgem_dmabuf(drm, LEN, &ino);
	if (fd >= 0) {
		vgem_bufinfo(ino, &count0, &att);
		did = smnl_register_dmabuf(&nl, dev, "dma-buf", fd);
		if (!ktap_result(did > 0, "register a vgem dma-buf on %s", dev))
			ktap_diag("register: %s \"%s\"", errstr(did), nl.extack);
		ret = vgem_bufinfo(ino, &count, &att);
		ktap_result(ret == 1 && att == 1, "bufinfo: 1 device attached (%d)", att);
	}
	if (did > 0) {
		ret = smnl_sync_client(&nl, did, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, NULL);
		ktap_result(!ret && !cerr, "dma-buf: sync to-device over the attachment: 0");
		ret = smnl_sync_client(&nl, did, IB_SYNC_MEM_SYNC_TO_CPU, 1000, &cerr, NULL);
		ktap_result(!ret && !cerr, "dma-buf: sync to-cpu over the attachment: 0");
		/* A writer's fence (ib_sync_mem_test's, no timer) bounds to-cpu. */
		ret = kt_fence_add(fd);
		if (ktap_result(ret == 0, "a write fence with no timer on the attached buffer")) {
			ret = smnl_sync_client(&nl, did, IB_SYNC_MEM_SYNC_TO_CPU, 200, &cerr, NULL);
			ktap_result(!ret && cerr == -ETIMEDOUT,
				    "dma-buf: to-cpu waits for the writer: -ETIMEDOUT at its deadline (%s)",
				    errstr(ret ? ret : cerr));
			kt_fence_signal();
			ret = smnl_sync_client(&nl, did, IB_SYNC_MEM_SYNC_TO_CPU, 1000, &cerr, NULL);
			ktap_result(!ret && !cerr, "dma-buf: the fence signalled: to-cpu 0");
		} else {
			ktap_diag("fence: %s (ib_sync_mem_test loaded?)", errstr(ret));
		}
	}
	if (!umem_requires_coherent()) {
		buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf != MAP_FAILED) {
			memset(buf, 1, LEN);
			rid = smnl_register_region(&nl, dev, "dma-region-rm",
						   (uintptr_t)buf, LEN,
						   IB_SYNC_MEM_REGION_F_WRITE);
		}
		pin = vm_pin_kb();
		ktap_result(rid > 0 && pin - pin0 == LEN / 1024,
			    "register a region to delete the device under (VmPin %ld -> %ld kB)",
			    pin0, pin);
	}

	snprintf(cmd, sizeof(cmd), "del %s", dev);
	ret = dmadev_ctl(cmd);
	ktap_result(ret == 0, "delete %s: 0", dev);
	if (fd >= 0) {
		ret = vgem_bufinfo(ino, &count, &att);
		ktap_result(ret == 1 && att == 0,
			    "when the delete returned, the attachment is released (%d attached)", att);
	}
	if (rid > 0) {
		pin = vm_pin_kb();
		ktap_result(pin == pin0, "when the delete returned, the region is unpinned (VmPin %ld kB)",
			    pin);
	}
	if (did > 0) {
		ret = smnl_wait_gone(&nl, did, bound_ms(30000));
		ktap_result(ret == 0, "the dma-buf client went with its device");
		ret = vgem_bufinfo(ino, &count, &att);
		ktap_result(ret == 1 && att == 0 && count == count0,
			    "then: 0 attached, the buffer's references as before the client (%ld)",
			    count);
	}
	if (rid > 0) {
		ret = smnl_wait_gone(&nl, rid, bound_ms(30000));
		ktap_result(ret == 0, "the region went with its device");
		pin = vm_pin_kb();
		ktap_result(pin == pin0, "VmPin stays at %ld kB", pin);
	}
	if (fd >= 0)
		close(fd);
	if (drm >= 0)
		close(drm);
	if (buf != MAP_FAILED)
		munmap(buf, LEN);
}

int main(int argc, char **argv)
{
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--dev"))
		dev = argv[2];
	ktap_start();
	ret = smnl_open(&nl);
	if (!ktap_result(ret == 0, "resolve the ib_sync_mem family")) {
		ktap_diag("smnl_open: %s", errstr(ret));
		return ktap_finish();
	}
	if (!ktap_result(bounces(), "the kernel bounces every streaming mapping (swiotlb=force)"))
		return ktap_finish();
	ktap_diag("device %s; ib_umem requires coherent DMA: %s", dev,
		  umem_requires_coherent() ? "yes" : "no");
	test_region();
	test_read_only();
	test_unaligned();
	test_unaligned_lazy();
	test_heap();
	test_moves();
	test_remove();
	smnl_close(&nl);
	return ktap_finish();
}
