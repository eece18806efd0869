// SPDX-License-Identifier: GPL-2.0
/*
 * region_test: KTAP tests of region clients (IB_SYNC_MEM_KIND_REGION),
 * memory of the calling process pinned and DMA-mapped on an RDMA device.
 *
 *   region_test [--dev rxe0]
 *   region_test --remove rxe1
 *
 * --remove: only the inbound flush of a region on DEV (which must have a
 * RoCE v2 GID) with its READ in flight (debugfs inbound_hold): a kill, a
 * deadline, a region deleted after its flush gave up (the READ is over
 * when the delete returns), then DEV removed meanwhile (rdma link
 * delete).
 *
 * Needs ib_sync_mem loaded and root (CAP_NET_ADMIN; CAP_IPC_LOCK is dropped
 * in a child for the RLIMIT_MEMLOCK test).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ib_sync_mem_dev.h>
#include <sys/ioctl.h>

#include "ktap.h"
#include "rdmalink.h"
#include "smdebugfs.h"
#include "smnl.h"
#include "syncfile.h"

static const char *dev = "rxe0";
static struct smnl nl;
static long page;

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void fill(void *p, size_t len, unsigned int seed)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 131 + seed);
}

/*
 * Poll CLIENT_GET until the client is invalidated with its pages unpinned
 * (and, if @pin_base >= 0, VmPin back at @pin_base), or @ms pass. Returns
 * 0 or -ETIMEDOUT (or CLIENT_GET's error); *state_ms is when the state
 * flipped, *all_ms when everything was done.
 */
static int wait_invalidated(uint32_t id, int ms, long pin_base,
			    struct smnl_client *c, double *state_ms,
			    double *all_ms)
{
	double t0 = now_ms(), t;
	int ret;

	*state_ms = *all_ms = -1;
	for (;;) {
		ret = smnl_client_get(&nl, id, c);
		t = now_ms() - t0;
		if (ret)
			return ret;
		if (c->state == IB_SYNC_MEM_CLIENT_INVALIDATED && *state_ms < 0)
			*state_ms = t;
		if (c->state == IB_SYNC_MEM_CLIENT_INVALIDATED &&
		    c->have_pinned && c->pinned_pages == 0 &&
		    (pin_base < 0 || vm_pin_kb() == pin_base)) {
			*all_ms = t;
			return 0;
		}
		if (t > ms)
			return -ETIMEDOUT;
		usleep(5000);
	}
}

/* A registration that must fail with @want and an extack saying why. */
static void expect_refused(const char *what, uint64_t addr, uint64_t len,
			   uint32_t access, int want, const char *words)
{
	int ret = smnl_register_region(&nl, dev, "rt-bad", addr, len, access);

	ktap_result(ret == want && says(nl.extack, words),
		    "refused: %s -> %s, extack says why (%s)", what, errstr(want),
		    words);
	ktap_diag("addr 0x%llx len 0x%llx: %s, extack \"%s\"",
		  (unsigned long long)addr, (unsigned long long)len,
		  ret > 0 ? "registered!" : errstr(ret), nl.extack);
	if (ret > 0)
		smnl_unregister(&nl, ret);
}

static void test_basic(void)
{
	const size_t len = 64 * 1024;
	const uint32_t pages = len / page;
	struct smnl_client c;
	long pin0, pin1, pin2;
	int ret, id, cerr;
	uint64_t ns;
	void *buf;

	buf = map(len);
	if (!buf) {
		ktap_result(0, "mmap 64 KiB");
		return;
	}
	fill(buf, len, 7);
	pin0 = vm_pin_kb();
	id = smnl_register_region(&nl, dev, "rt-basic", (uintptr_t)buf, len,
				  IB_SYNC_MEM_REGION_F_WRITE);
	if (!ktap_result(id > 0, "register a 64 KiB mmap'd buffer")) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, len);
		return;
	}
	pin1 = vm_pin_kb();

	ret = smnl_client_get(&nl, id, &c);
	ktap_result(ret == 0 && c.kind == IB_SYNC_MEM_KIND_REGION &&
		    c.state == IB_SYNC_MEM_CLIENT_LIVE && c.size == len,
		    "CLIENT_GET: kind region, live, size 64 KiB");
	ktap_result(ret == 0 && c.have_pinned && c.pinned_pages == pages,
		    "CLIENT_GET: %u pinned pages", pages);
	ktap_diag("pinned %u (have %d), size %llu, state %s", c.pinned_pages,
		  c.have_pinned, (unsigned long long)c.size,
		  smnl_state_name(c.state));
	ktap_result(ret == 0 && c.have_region &&
		    c.region_addr == (uintptr_t)buf && c.region_len == len &&
		    c.region_access == IB_SYNC_MEM_REGION_F_WRITE &&
		    c.region_segments >= 1 && c.region_segments <= pages,
		    "CLIENT_GET info: address, length, access, 1..%u DMA segments",
		    pages);
	ktap_diag("info: addr 0x%llx len %llu access %u segments %u",
		  (unsigned long long)c.region_addr,
		  (unsigned long long)c.region_len, c.region_access,
		  c.region_segments);
	ktap_result(pin0 >= 0 && pin1 - pin0 == (long)(len / 1024),
		    "VmPin grows by 64 kB while registered (%ld -> %ld kB)",
		    pin0, pin1);

	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "sync to-device: 0 (%llu ns)",
		    (unsigned long long)ns);
	if (ret || cerr)
		ktap_diag("sync: %s/%s \"%s\"", errstr(ret), errstr(cerr), nl.extack);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_CPU, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "sync to-cpu: 0 (%llu ns)",
		    (unsigned long long)ns);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_BIDIRECTIONAL, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "sync bidirectional: 0");
	/* The module's RDMA READ of the region through the device. */
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "sync inbound: 0 (%llu ns)",
		    (unsigned long long)ns);
	if (ret || cerr)
		ktap_diag("sync: %s/%s \"%s\"", errstr(ret), errstr(cerr), nl.extack);
	ret = smnl_client_get(&nl, id, &c);
	ktap_result(ret == 0 && c.syncs == 4 && c.errors == 0,
		    "the client's stats count 4 syncs, 0 errors");
	ktap_diag("syncs %llu errors %llu bytes %llu",
		  (unsigned long long)c.syncs, (unsigned long long)c.errors,
		  (unsigned long long)c.bytes);

	ret = smnl_unregister(&nl, id);
	pin2 = vm_pin_kb();
	ktap_result(ret == 0, "unregister: 0");
	ktap_result(pin2 == pin0, "VmPin back after unregister (%ld kB)", pin2);
	ret = smnl_client_get(&nl, id, &c);
	ktap_result(ret == -ENOENT, "the client is gone: -ENOENT");
	munmap(buf, len);
}

/*
 * A read-only region (pinned without write): the device may only read it,
 * so nothing is ever synced from the device into its pages. to-device
 * syncs; to-cpu, bidirectional and inbound are refused with -EACCES. A writable
 * registration of memory the process cannot write is refused at pinning.
 */
static void test_read_only(void)
{
	const size_t len = 16 * 1024;
	int ret, id, cerr;
	uint64_t ns;
	void *buf;

	buf = map(len);
	if (!buf || mprotect(buf, len, PROT_READ)) {
		ktap_result(0, "read-only: mmap 16 KiB, mprotect(PROT_READ)");
		return;
	}
	id = smnl_register_region(&nl, dev, "rt-ro-w", (uintptr_t)buf, len,
				  IB_SYNC_MEM_REGION_F_WRITE);
	ktap_result(id < 0, "read-only: a writable region over PROT_READ memory is refused (%s \"%s\")",
		    errstr(id), nl.extack);
	if (id > 0)
		smnl_unregister(&nl, id);
	id = smnl_register_region(&nl, dev, "rt-ro", (uintptr_t)buf, len, 0);
	if (!ktap_result(id > 0, "read-only: a region without write access registers over it")) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, len);
		return;
	}
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "read-only: sync to-device: 0");
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_CPU, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == -EACCES, "read-only: sync to-cpu refused: -EACCES (%s/%s)",
		    errstr(ret), errstr(cerr));
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_BIDIRECTIONAL, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == -EACCES, "read-only: sync bidirectional refused: -EACCES (%s/%s)",
		    errstr(ret), errstr(cerr));
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == -EACCES, "read-only: sync inbound refused: -EACCES (%s/%s)",
		    errstr(ret), errstr(cerr));
	ktap_result(smnl_unregister(&nl, id) == 0, "read-only: unregister: 0");
	munmap(buf, len);
}

static void test_munmap(void)
{
	const size_t len = 64 * 1024;
	struct smnl_client c;
	int ret, id, cerr;
	long pin0, pin1, pin2;
	double state_ms, all_ms;
	uint64_t ns;
	void *buf;

	buf = map(len);
	if (!buf) {
		ktap_result(0, "mmap 64 KiB");
		return;
	}
	fill(buf, len, 9);
	pin0 = vm_pin_kb();
	id = smnl_register_region(&nl, dev, "rt-unmap", (uintptr_t)buf, len, 0);
	if (!ktap_result(id > 0, "register a buffer that will be unmapped")) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, len);
		return;
	}
	pin1 = vm_pin_kb();
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "sync before munmap: 0");

	munmap(buf, len);
	ret = wait_invalidated(id, bound_ms(30000), pin0, &c, &state_ms, &all_ms);
	pin2 = vm_pin_kb();
	ktap_result(ret == 0,
		    "munmap: the client is invalidated, 0 pages pinned, VmPin back down");
	ktap_diag("state %s after %.0f ms, all done after %.0f ms (%s): pinned %u, VmPin %ld -> %ld -> %ld kB",
		  smnl_state_name(c.state), state_ms, all_ms, errstr(ret),
		  c.pinned_pages, pin0, pin1, pin2);
	ktap_result(c.inval_reason == IB_SYNC_MEM_INVAL_REASON_MEMORY,
		    "invalidation reason: memory (%u)", c.inval_reason);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, &ns);
	ktap_result(ret == -ENXIO && nl.extack[0],
		    "sync of the invalidated client: -ENXIO with extack");
	ktap_diag("sync: %s, client err %s, \"%s\"", errstr(ret), errstr(cerr),
		  nl.extack);
	ret = smnl_client_get(&nl, id, &c);
	ktap_diag("LAST_ERR of the invalidated client after that sync: %d", c.last_err);
	ret = smnl_unregister(&nl, id);
	ktap_result(ret == 0, "unregister the invalidated client: 0");
}

/* Where user space ends: 47 bits, or 56 with 5-level paging (la57). */
static uint64_t user_end(void)
{
	char line[4096];
	int la57 = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && strstr(line, " la57")) {
			la57 = 1;
			break;
		}
	if (f)
		fclose(f);
	return la57 ? 1ULL << 56 : 1ULL << 47;
}

/*
 * A region where malloc() puts one: at buf + 100, 2 pages less 50 bytes
 * long, so it spans 3 pages; and one of 90 bytes inside a page. Both
 * register and sync; the pages they span are pinned and counted; a range
 * ending at the region's end is synced, one a byte longer refused with
 * -ERANGE.
 */
static void test_unaligned(void)
{
	const size_t map_len = 8 * page, len = 2 * page - 50;
	struct smnl_client c;
	long pin0, pin1, pin2;
	struct smnl_sync_result res;
	int ret, id, tiny, cerr;
	uint64_t ns;
	char *buf;

	buf = map(map_len);
	if (!buf) {
		ktap_result(0, "unaligned: mmap 32 KiB");
		return;
	}
	fill(buf, map_len, 19);
	pin0 = vm_pin_kb();
	id = smnl_register_region(&nl, dev, "rt-unaligned", (uintptr_t)buf + 100,
				  len, IB_SYNC_MEM_REGION_F_WRITE);
	if (!ktap_result(id > 0, "unaligned: register %zu bytes at buf + 100", len)) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, map_len);
		return;
	}
	pin1 = vm_pin_kb();
	ret = smnl_client_get(&nl, id, &c);
	ktap_result(ret == 0 && c.size == len && c.have_region &&
		    c.region_addr == (uintptr_t)buf + 100 && c.region_len == len,
		    "unaligned: CLIENT_GET: size, address and length as given");
	ktap_result(ret == 0 && c.have_pinned && c.pinned_pages == 3 &&
		    pin1 - pin0 == 3 * page / 1024,
		    "unaligned: the 3 pages it spans are pinned (%u; VmPin %ld -> %ld kB)",
		    c.pinned_pages, pin0, pin1);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "unaligned: sync to-device: 0");
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_CPU, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "unaligned: sync to-cpu: 0");
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "unaligned: sync inbound: 0 (%s/%s)",
		    errstr(ret), errstr(cerr));
	ret = smnl_sync_range(&nl, id, IB_SYNC_MEM_SYNC_TO_CPU, len - 7, 7, &res);
	ktap_result(ret == 0 && res.client_err == 0,
		    "unaligned: a range ending at its end: 0");
	ret = smnl_sync_range(&nl, id, IB_SYNC_MEM_SYNC_TO_CPU, len - 7, 8, &res);
	ktap_result(ret == -ERANGE && says(nl.extack, "not inside the client"),
		    "unaligned: a range one byte past its end -> -ERANGE, extack says why");
	ktap_diag("one byte past the end: %s \"%s\"", errstr(ret), nl.extack);

	tiny = smnl_register_region(&nl, dev, "rt-tiny", (uintptr_t)buf + 5 * page + 4000,
				    90, IB_SYNC_MEM_REGION_F_WRITE);
	ret = tiny > 0 ? smnl_client_get(&nl, tiny, &c) : tiny;
	ktap_result(ret == 0 && c.pinned_pages == 1 && c.size == 90,
		    "unaligned: 90 bytes inside a page: registered, 1 page pinned");
	if (ret)
		ktap_diag("register 90 bytes: %s \"%s\"", errstr(ret), nl.extack);
	if (tiny > 0) {
		ret = smnl_sync_client(&nl, tiny, IB_SYNC_MEM_SYNC_BIDIRECTIONAL, 1000, &cerr, &ns);
		ktap_result(ret == 0 && cerr == 0, "unaligned: its bidirectional sync: 0");
		smnl_unregister(&nl, tiny);
	}

	ret = smnl_unregister(&nl, id);
	pin2 = vm_pin_kb();
	ktap_result(ret == 0 && pin2 == pin0, "unaligned: unregistered, VmPin back (%ld kB)", pin2);
	munmap(buf, map_len);
}

static void test_bad_ranges(void)
{
	const size_t len = 64 * 1024;
	struct smnl_new req;
	void *buf, *gone;
	int ret;

	buf = map(len);
	gone = map(len);
	if (!buf || !gone) {
		ktap_result(0, "mmap test buffers");
		return;
	}
	fill(buf, len, 1);
	munmap(gone, len);

	expect_refused("zero length", (uintptr_t)buf, 0, 0, -EINVAL, "length");
	expect_refused("length over 1 GiB", (uintptr_t)buf, (1ULL << 30) + page,
		       0, -EINVAL, "length|GiB");
	expect_refused("not mapped (a freed mmap)", (uintptr_t)gone, len, 0,
		       -EFAULT, "mapped");
	expect_refused("kernel address 0xffff888000000000", 0xffff888000000000ULL,
		       page, 0, -EINVAL, "user memory");
	expect_refused("range wraps around 2^64", 0ULL - 16 * page, 1ULL << 20,
		       0, -EINVAL, "wrap");
	expect_refused("range crosses the end of user space",
		       user_end() - 2 * page, 4 * page, 0, -EINVAL, "user memory");
	expect_refused("unknown access bit", (uintptr_t)buf, page, 1U << 7,
		       -EINVAL, "bit|access");

	/* Malformed requests. */
	memset(&req, 0, sizeof(req));
	req.dev = dev;
	req.name = "rt-bad";
	req.kind = IB_SYNC_MEM_KIND_REGION;
	ret = smnl_register(&nl, &req);
	ktap_result(ret == -EINVAL && says(nl.extack, "REGION"),
		    "refused: region kind without the REGION nest -> -EINVAL, extack says why");
	ktap_diag("%s \"%s\"", ret > 0 ? "registered!" : errstr(ret), nl.extack);
	if (ret > 0)
		smnl_unregister(&nl, ret);
	req.region_nest = 1;
	req.region_omit_addr = 1;
	req.region_len = page;
	ret = smnl_register(&nl, &req);
	ktap_result(ret == -EINVAL && says(nl.extack, "ADDR"),
		    "refused: REGION nest without ADDR -> -EINVAL, extack says why");
	ktap_diag("%s \"%s\"", ret > 0 ? "registered!" : errstr(ret), nl.extack);
	if (ret > 0)
		smnl_unregister(&nl, ret);

	munmap(buf, len);
}

/* What other changes of the mapping do to a registered region. */
enum vma_op { OP_MPROTECT, OP_MUNMAP_PAGE, OP_DONTNEED, OP_MREMAP };

/*
 * After an operation that must leave region @id alone: once every re-check
 * it queued has run, the client is live with all @pages pinned and a sync
 * in @dir returns 0. What it found goes to the diagnostics as @what.
 */
static int left_alone(uint32_t id, uint32_t dir, uint32_t pages, const char *what)
{
	struct smnl_client c = { 0 };
	int ret, cerr = -1;
	uint64_t ns;

	ret = sm_region_rechecks_settled(bound_ms(30000));
	if (!ret)
		ret = smnl_client_get(&nl, id, &c);
	if (!ret)
		ret = smnl_sync_client(&nl, id, dir, 1000, &cerr, &ns);
	ktap_diag("%s: state %s, %u of %u pages pinned, sync %s/%s", what,
		  smnl_state_name(c.state), c.pinned_pages, pages, errstr(ret),
		  errstr(cerr));
	return ret == 0 && cerr == 0 && c.state == IB_SYNC_MEM_CLIENT_LIVE &&
	       c.pinned_pages == pages;
}

static void test_vma_op(enum vma_op op, const char *what, int invalidates)
{
	const size_t len = 64 * 1024;
	double state_ms, all_ms;
	struct smnl_client c;
	int ret, id, done;
	void *buf, *to;

	buf = map(len);
	to = map(len);
	if (!buf || !to) {
		ktap_result(0, "mmap 64 KiB");
		return;
	}
	fill(buf, len, 11);
	id = smnl_register_region(&nl, dev, "rt-vma", (uintptr_t)buf, len, 0);
	if (id <= 0) {
		ktap_result(0, "%s: register", what);
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, len);
		munmap(to, len);
		return;
	}
	switch (op) {
	case OP_MPROTECT:
		done = !mprotect(buf, len, PROT_READ);
		break;
	case OP_MUNMAP_PAGE:
		done = !munmap((char *)buf + 4 * page, page);
		break;
	case OP_DONTNEED:
		done = !madvise(buf, len, MADV_DONTNEED);
		break;
	case OP_MREMAP:
		done = mremap(buf, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to) == to;
		if (done)
			buf = to;	/* the old range is gone */
		break;
	default:
		done = 0;
	}
	if (invalidates) {
		ret = done ? wait_invalidated(id, bound_ms(30000), -1, &c, &state_ms, &all_ms) : -1;
		ktap_result(ret == 0 && c.inval_reason == IB_SYNC_MEM_INVAL_REASON_MEMORY,
			    "%s invalidates the region, unpinned, reason memory", what);
		ktap_diag("%s: state %s after %.0f ms, unpinned after %.0f ms, reason %u",
			  what, smnl_state_name(c.state), state_ms, all_ms,
			  c.inval_reason);
	} else {
		ktap_result(done && left_alone(id, IB_SYNC_MEM_SYNC_TO_DEVICE, len / page, what),
			    "%s leaves the region live, pinned, syncing 0", what);
	}
	smnl_unregister(&nl, id);
	munmap(buf, len);
	if (op != OP_MREMAP)
		munmap(to, len);
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

/*
 * A THP collapse over pinned pages cannot replace them: the region stays
 * live, all its pages pinned, whatever the collapse answered (a clear it
 * raised is re-checked and found harmless).
 */
static void test_collapse(void)
{
	const size_t huge = 2 * 1024 * 1024;
	int id, col;
	char *raw, *buf;

	raw = map(2 * huge);
	if (!raw) {
		ktap_result(0, "collapse: mmap 4 MiB");
		return;
	}
	buf = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
	madvise(buf, huge, MADV_NOHUGEPAGE);	/* 4 KiB pages to collapse */
	fill(buf, huge, 13);
	madvise(buf, huge, MADV_HUGEPAGE);
	id = smnl_register_region(&nl, dev, "rt-thp", (uintptr_t)buf, huge,
				  IB_SYNC_MEM_REGION_F_WRITE);
	if (!ktap_result(id > 0, "collapse: register a 2 MiB aligned region of 4 KiB pages")) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(raw, 2 * huge);
		return;
	}
	col = madvise(buf, huge, MADV_COLLAPSE) ? -errno : 0;
	if (col == -EINVAL) {
		ktap_skip("kernel has no THP (MADV_COLLAPSE: EINVAL)",
			  "THP collapse (MADV_COLLAPSE) over pinned pages leaves the region live");
		smnl_unregister(&nl, id);
		munmap(raw, 2 * huge);
		return;
	}
	ktap_diag("MADV_COLLAPSE: %s", errstr(col));
	ktap_result(left_alone(id, IB_SYNC_MEM_SYNC_TO_CPU, huge / page, "collapse"),
		    "THP collapse (MADV_COLLAPSE) over pinned pages leaves the region live");
	smnl_unregister(&nl, id);
	munmap(raw, 2 * huge);
}

#define SOFT_OFFLINE	"/sys/devices/system/memory/soft_offline_page"

/* The page frame behind @addr (root reads PFNs in pagemap), or 0. */
static unsigned long pfn_of(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)addr / page * sizeof(e)) != sizeof(e))
		e = 0;
	close(fd);
	return (e >> 63) & 1 ? (unsigned long)(e & ((1ULL << 55) - 1)) : 0;
}

/*
 * A migration of a pinned page fails and leaves it mapped (the kernel
 * raises a clear for the attempt): the region stays live. Soft-offlining
 * the page (CONFIG_MEMORY_FAILURE) is the migration these one-node VMs can
 * ask for: it isolates the page and migrates it away.
 */
static void test_migration(size_t start, size_t rlen, uint32_t pages, const char *what)
{
	const size_t len = 64 * 1024;
	unsigned long pfn0, pfn1;
	int id, fd, off, live;
	char val[32];
	char *buf;

	if (access(SOFT_OFFLINE, W_OK)) {
		ktap_skip("kernel has no CONFIG_MEMORY_FAILURE (no " SOFT_OFFLINE ")",
			  "migration of a pinned page (soft offline) leaves %s live", what);
		return;
	}
	buf = map(len);
	if (!buf) {
		ktap_result(0, "migration: mmap 64 KiB");
		return;
	}
	fill(buf, len, 17);
	id = smnl_register_region(&nl, dev, "rt-migrate", (uintptr_t)buf + start, rlen,
				  IB_SYNC_MEM_REGION_F_WRITE);
	pfn0 = pfn_of(buf + start);
	if (id <= 0 || !pfn0) {
		ktap_result(0, "migration of a pinned page (soft offline) leaves %s live", what);
		ktap_diag("register: %s \"%s\", pfn %#lx", errstr(id), nl.extack, pfn0);
		munmap(buf, len);
		return;
	}
	snprintf(val, sizeof(val), "%#lx", pfn0 << 12);
	fd = open(SOFT_OFFLINE, O_WRONLY | O_CLOEXEC);
	off = fd < 0 || write(fd, val, strlen(val)) < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	live = left_alone(id, IB_SYNC_MEM_SYNC_TO_CPU, pages, "migration");
	pfn1 = pfn_of(buf + start);
	ktap_diag("soft offline of pfn %#lx: %s; now pfn %#lx", pfn0, errstr(off), pfn1);
	ktap_result(pfn1 == pfn0 && live,
		    "migration of a pinned page (soft offline) leaves %s live", what);
	smnl_unregister(&nl, id);
	munmap(buf, len);
}

/* fork() of the registering process is neither unmap nor exit. */
static void test_fork(void)
{
	const size_t len = 64 * 1024;
	struct smnl_client c;
	int ret, id, cerr, st;
	uint64_t ns;
	pid_t pid;
	void *buf;

	buf = map(len);
	if (!buf) {
		ktap_result(0, "mmap 64 KiB");
		return;
	}
	fill(buf, len, 3);
	id = smnl_register_region(&nl, dev, "rt-fork", (uintptr_t)buf, len,
				  IB_SYNC_MEM_REGION_F_WRITE);
	if (!ktap_result(id > 0, "register a buffer, then fork")) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, len);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		((volatile unsigned char *)buf)[0] ^= 1;	/* its own copy */
		_exit(0);
	}
	waitpid(pid, &st, 0);
	usleep(100000);
	ret = smnl_client_get(&nl, id, &c);
	ktap_result(ret == 0 && c.state == IB_SYNC_MEM_CLIENT_LIVE &&
		    c.pinned_pages == len / page,
		    "a forked child's write and exit leave the parent's region live and pinned");
	ktap_diag("state %s reason %u pinned %u", smnl_state_name(c.state),
		  c.inval_reason, c.pinned_pages);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_CPU, 1000, &cerr, &ns);
	ktap_result(ret == 0 && cerr == 0, "and it still syncs: 0");
	ktap_result(smnl_unregister(&nl, id) == 0, "unregister: 0");
	munmap(buf, len);
}

/* A child registers a region and exits: the client outlives it, invalidated. */
static void test_child_exit(void)
{
	struct smnl_client c;
	int p[2], st, id = 0, ret, cerr;
	double state_ms, all_ms;
	uint64_t ns;
	pid_t pid;

	if (pipe(p)) {
		ktap_result(0, "pipe");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct smnl cnl;
		const size_t len = 64 * 1024;
		void *buf = map(len);
		int cid = -ENOMEM;

		close(p[0]);
		if (buf) {
			fill(buf, len, 5);
			cid = smnl_open(&cnl);
			if (!cid)
				cid = smnl_register_region(&cnl, dev, "rt-child",
							   (uintptr_t)buf, len, 0);
		}
		if (write(p[1], &cid, sizeof(cid)) != sizeof(cid))
			_exit(2);
		_exit(0);	/* the netlink socket closes too: not owned */
	}
	close(p[1]);
	if (read(p[0], &id, sizeof(id)) != sizeof(id))
		id = -EPIPE;
	close(p[0]);
	waitpid(pid, &st, 0);
	if (!ktap_result(id > 0, "a child registers a region and exits")) {
		ktap_diag("child's register: %s", errstr(id));
		return;
	}
	ret = wait_invalidated(id, bound_ms(30000), -1, &c, &state_ms, &all_ms);
	ktap_result(ret == 0,
		    "the client outlives its process: invalidated, 0 pages pinned");
	ktap_diag("get: %s, state %s after %.0f ms, unpinned after %.0f ms, pinned %u",
		  errstr(ret), smnl_state_name(c.state), state_ms, all_ms,
		  c.pinned_pages);
	ktap_result(c.inval_reason == IB_SYNC_MEM_INVAL_REASON_MEMORY,
		    "invalidation reason: memory (%u)", c.inval_reason);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 1000, &cerr, &ns);
	ktap_result(ret == -ENXIO, "sync of the dead process's region: -ENXIO (%s)",
		    errstr(ret));
	ktap_result(smnl_unregister(&nl, id) == 0, "unregister it from the parent: 0");
}

static int cap_drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	const uint32_t bit = 1U << CAP_IPC_LOCK;

	if (prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0))
		return -errno;
	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[0].effective &= ~bit;
	d[0].permitted &= ~bit;
	d[0].inheritable &= ~bit;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	if (syscall(SYS_capget, &h, d))
		return -errno;
	if (d[0].effective & bit)
		return -EPERM;
	if (!(d[0].effective & (1U << CAP_NET_ADMIN)))
		return -EPERM;
	return 0;
}

/*
 * In a child with RLIMIT_MEMLOCK at 32 KiB: results[] = {cap drop, under the
 * limit, over the limit}; the extack of the refusal goes through the pipe too.
 */
struct limit_report {
	int cap;
	int small;
	int big;
	char extack[SMNL_EXTACK_LEN];
};

static void limit_child(int fd, int drop)
{
	struct limit_report r = { 0 };
	struct rlimit rl = { 32 * 1024, 32 * 1024 };
	const size_t len = 64 * 1024;
	struct smnl cnl;
	void *buf = map(len);

	r.cap = drop ? cap_drop_ipc_lock() : 0;
	if (!r.cap && setrlimit(RLIMIT_MEMLOCK, &rl))
		r.cap = -errno;
	if (!r.cap && !buf)
		r.cap = -ENOMEM;
	if (!r.cap)
		r.cap = smnl_open(&cnl);
	if (!r.cap) {
		fill(buf, len, 2);
		r.small = smnl_register_region(&cnl, dev, "rt-small",
					       (uintptr_t)buf, 16 * 1024, 0);
		if (r.small > 0)
			smnl_unregister(&cnl, r.small);
		r.big = smnl_register_region(&cnl, dev, "rt-big",
					     (uintptr_t)buf, len, 0);
		memcpy(r.extack, cnl.extack, sizeof(r.extack));
		if (r.big > 0)
			smnl_unregister(&cnl, r.big);
	}
	if (write(fd, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

static int run_limit_child(int drop, struct limit_report *r)
{
	int p[2], st;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe(p))
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		limit_child(p[1], drop);
	}
	close(p[1]);
	if (read(p[0], r, sizeof(*r)) != sizeof(*r))
		r->cap = -EPIPE;
	close(p[0]);
	waitpid(pid, &st, 0);
	return 0;
}

static void test_memlock(void)
{
	struct limit_report r;

	run_limit_child(1, &r);
	if (!ktap_result(r.cap == 0,
			 "child dropped CAP_IPC_LOCK (bounding set, capset), kept CAP_NET_ADMIN, RLIMIT_MEMLOCK 32 KiB")) {
		ktap_diag("child set-up: %s", errstr(r.cap));
		return;
	}
	ktap_result(r.small > 0, "without CAP_IPC_LOCK: a 16 KiB region under the limit registers");
	if (r.small <= 0)
		ktap_diag("16 KiB: %s", errstr(r.small));
	ktap_result(r.big == -ENOMEM && says(r.extack, "RLIMIT_MEMLOCK|memlock"),
		    "without CAP_IPC_LOCK: a 64 KiB region over the limit -> -ENOMEM, extack names RLIMIT_MEMLOCK");
	ktap_diag("64 KiB: %s \"%s\"", r.big > 0 ? "registered!" : errstr(r.big),
		  r.extack);

	run_limit_child(0, &r);
	ktap_result(r.cap == 0 && r.big > 0,
		    "with CAP_IPC_LOCK the same 64 KiB region registers past the limit");
	if (r.cap || r.big <= 0)
		ktap_diag("set-up %s, 64 KiB: %s \"%s\"", errstr(r.cap),
			  errstr(r.big), r.extack);
}

/* The bytes client @id's counters say it made coherent, or -1. */
static long long bytes_of(uint32_t id)
{
	struct smnl_client c;

	if (smnl_client_get(&nl, id, &c) || !c.have_stats)
		return -1;
	return (long long)c.bytes;
}

/*
 * A lazy region client: its syncs are skipped until a program marks it
 * dirty (MARK_DIRTY), then run over the pages marked, which its counters
 * count; a range sync runs its own bytes, marked or not.
 */
static void test_lazy_region(void)
{
	const size_t len = 4 * page;
	struct smnl_new req = {
		.dev = dev, .name = "rt-lazy", .kind = IB_SYNC_MEM_KIND_REGION,
		.flags = IB_SYNC_MEM_CLIENT_F_LAZY, .region_nest = 1,
		.region_len = len, .region_access = IB_SYNC_MEM_REGION_F_WRITE,
	};
	struct smnl_sync_result res;
	void *buf = map(len);
	int id, ret;

	if (!buf) {
		ktap_result(0, "mmap for the lazy region");
		return;
	}
	req.region_addr = (uintptr_t)buf;
	id = smnl_register(&nl, &req);
	ktap_result(id > 0, "a lazy region client registers");
	if (id <= 0) {
		ktap_diag("register lazy: %s \"%s\"", errstr(id), nl.extack);
		munmap(buf, len);
		return;
	}
	ret = smnl_sync_client_full(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, &res);
	ktap_result(!ret && res.run == 0 && res.skipped == 1,
		    "lazy region: unmarked, its sync is skipped");
	ret = smnl_mark_dirty(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, page, page);
	ktap_result(!ret, "lazy region: MARK_DIRTY of its second page");
	ret = smnl_sync_client_full(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, &res);
	ktap_result(!ret && res.run == 1 && res.client_err == 0,
		    "lazy region: then its sync runs");
	ktap_result(bytes_of(id) == (long long)page,
		    "lazy region: over the page marked (bytes == one page)");
	ret = smnl_sync_range(&nl, id, IB_SYNC_MEM_SYNC_TO_CPU, 0, 2 * page, &res);
	ktap_result(!ret && res.run == 1 && res.client_err == 0 &&
		    bytes_of(id) == (long long)(3 * page),
		    "lazy region: a range sync of two pages runs, counts two more");
	ret = smnl_mark_dirty(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, len, page);
	ktap_result(ret == -ERANGE && says(nl.extack, "not inside the client"),
		    "lazy region: a mark past its end -> -ERANGE, extack says why");
	ktap_diag("mark past the end: %s \"%s\"", errstr(ret), nl.extack);
	smnl_unregister(&nl, id);
	munmap(buf, len);
}

/* A batch sync on a socket of its own, in a thread. */
struct batch_call {
	uint32_t ids[3];
	struct smnl_sync_result res;
	int ret;
	int done;
};

static void *batch_thread(void *arg)
{
	struct batch_call *b = arg;
	struct smnl own;

	b->ret = smnl_open(&own);
	if (!b->ret) {
		b->ret = smnl_sync_batch(&own, b->ids, 3, IB_SYNC_MEM_SYNC_TO_DEVICE,
					 60000, &b->res);
		smnl_close(&own);
	}
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The sim's count of to-device syncs of client @id, or -errno. */
static long sim_to_device(uint32_t id)
{
	char dir[96];

	snprintf(dir, sizeof(dir), "/sys/kernel/debug/ib_sync_mem_sim/clients/%u", id);
	return debugfs_long_at(dir, "to_device");
}

/*
 * CLIENT_DEL of a region a batch [slow, region, slow] holds, during the
 * first slow sync (2 s each): the delete waits for the callback in flight,
 * not for the rest of the batch, and returns with the pages unpinned and
 * unmapped, not when the batch drops its reference, which may be after the
 * device is gone. The batch counts the deleted entry as skipped, not run.
 */
static void test_del_during_batch(void)
{
	const size_t len = 16 * page;
	struct batch_call b = {};
	long pin0, pin1, pin2;
	pthread_t th;
	int id, slow, ret, busy;
	void *buf = map(len);

	if (!buf) {
		ktap_result(0, "mmap for the region held by a batch");
		return;
	}
	pin0 = vm_pin_kb();
	slow = smnl_register_sim(&nl, dev, "rt-slow", 2000000);
	id = smnl_register_region(&nl, dev, "rt-held", (uintptr_t)buf, len, 0);
	pin1 = vm_pin_kb();
	if (!ktap_result(slow > 0 && id > 0 && pin1 - pin0 == (long)(len / 1024),
			 "a 2 s sim client and a 16-page region, pinned")) {
		ktap_diag("sim %s, region %s \"%s\", VmPin %ld -> %ld kB",
			  errstr(slow), errstr(id), nl.extack, pin0, pin1);
		goto out;
	}
	b.ids[0] = slow;
	b.ids[1] = id;
	b.ids[2] = slow;
	if (pthread_create(&th, NULL, batch_thread, &b)) {
		ktap_result(0, "start the batch");
		goto out;
	}
	ktap_result(wait_for(60000, sim_to_device(slow) == 1),
		    "the batch [slow, region] is in the slow client's sync");
	ret = smnl_unregister(&nl, id);
	pin2 = vm_pin_kb();
	busy = !__atomic_load_n(&b.done, __ATOMIC_ACQUIRE);
	ktap_result(ret == 0 && busy,
		    "CLIENT_DEL of the region returns before the batch ends");
	ktap_result(pin2 == pin0,
		    "the region's pages are unpinned when the delete returns (VmPin %ld -> %ld -> %ld kB)",
		    pin0, pin1, pin2);
	pthread_join(th, NULL);
	ktap_result(b.ret == 0 && b.res.run == 2 && b.res.errors == 0 &&
		    b.res.skipped == 1 && b.res.err == -ENODEV,
		    "the batch: 2 run, 0 errors, 1 skipped (the deleted region: -ENODEV)");
	ktap_diag("batch: %s, run %u errors %u skipped %u err %s", errstr(b.ret),
		  b.res.run, b.res.errors, b.res.skipped, errstr(b.res.err));
	id = 0;
out:
	if (id > 0)
		smnl_unregister(&nl, id);
	if (slow > 0)
		smnl_unregister(&nl, slow);
	munmap(buf, len);
}

/* Park (1) or let go (0) the inbound flushes' READs: 0 or -errno. */
static int inbound_hold(int on)
{
	return debugfs_write_at(SM_DEBUGFS, "inbound_hold", on ? "1" : "0");
}

/* How many devices have an inbound READ parked, or -errno. */
static long inbound_parked(void)
{
	return debugfs_long_at(SM_DEBUGFS, "inbound_hold");
}

/* The result of a flush in a child: smnl_sync_client()'s and the client's. */
struct flush_res {
	int ret;
	int err;
};

/*
 * An inbound flush of region @id with a timeout of @timeout_ms, in a child
 * that writes its result to @wfd (which the parent then closes): its pid,
 * or -errno. In a child, so that a flush a test gives up on can be killed.
 */
static pid_t flush_child(uint32_t id, uint32_t timeout_ms, int wfd)
{
	struct flush_res r = {};
	struct smnl own;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid)
		return pid;
	r.ret = smnl_open(&own);
	if (!r.ret)
		r.ret = smnl_sync_client(&own, id, IB_SYNC_MEM_SYNC_INBOUND,
					 timeout_ms, &r.err, NULL);
	_exit(write(wfd, &r, sizeof(r)) == sizeof(r) ? 0 : 1);
}

/*
 * Flushes of one region queued behind its READ in flight are answered by
 * the next READ: with a first flush's READ parked, 4 more wait for the
 * flusher (debugfs inbound: waiting 4); let go, each of the 5 returns 0,
 * and the device made exactly 2 READs for them (the first's, and one of
 * the 4's, posted after the other 3 were asked), 3 flushes answered.
 */
/*
 * The flushes of the @n children @pid (0: not started) that wrote their
 * results to @rfd: how many returned 0 with the client's result 0. Reaps
 * the children.
 */
static int flushes_ok(int rfd, const pid_t *pid, int n)
{
	struct flush_res r;
	int i, ok = 0;

	for (i = 0; i < n; i++)
		if (pid[i] > 0 && read(rfd, &r, sizeof(r)) == sizeof(r) &&
		    !r.ret && !r.err)
			ok++;
	for (i = 0; i < n; i++)
		if (pid[i] > 0)
			wait_child(pid[i], bound_ms(30000));
	return ok;
}

/*
 * A READ answers only flushes of its own region: with a flush of region
 * @id parked on its READ, one of a second region and another of @id wait
 * (both asked before either's READ); let go, the 3 return 0 after a READ
 * each (whichever of the two goes first, its READ is not the other's),
 * none answered.
 */
static void answered_other(const char *name, int id)
{
	uint64_t reads0 = 0, ans0 = 0, reads = 0, ans = 0;
	int other = 0, ok = 0, p[2] = { -1, -1 };
	unsigned int waiting = 0;
	pid_t pid[3] = { 0 };
	void *buf = map(page);

	if (!buf || pipe(p)) {
		ktap_result(0, "answered: mmap and a pipe for another region");
		goto out;
	}
	other = smnl_register_region(&nl, name, "rt-inbound-other", (uintptr_t)buf,
				     page, IB_SYNC_MEM_REGION_F_WRITE);
	if (!ktap_result(other > 0 && !sm_inbound_answered(name, &reads0, &ans0, &waiting),
			 "answered: another region on %s (%d)", name, other))
		goto out;
	inbound_hold(1);
	pid[0] = flush_child(id, bound_ms(60000), p[1]);
	ktap_result(pid[0] > 0 && wait_for(bound_ms(30000), inbound_parked() == 1),
		    "answered: a flush of the first region's READ is parked");
	pid[1] = flush_child(other, bound_ms(60000), p[1]);
	pid[2] = flush_child(id, bound_ms(60000), p[1]);
	close(p[1]);
	p[1] = -1;
	ok = wait_for(bound_ms(30000),
		      !sm_inbound_answered(name, &reads, &ans, &waiting) &&
		      waiting == 2);
	ktap_result(ok, "answered: a flush of the other region and one more of the first wait (waiting %u)",
		    waiting);
	ok = 0;
	inbound_hold(0);
	ok = flushes_ok(p[0], pid, 3);
	sm_inbound_answered(name, &reads, &ans, &waiting);
	ktap_result(ok == 3 && reads == reads0 + 3 && ans == ans0,
		    "answered: let go, the 3 return 0 after a READ each, none answered by the other region's (%d ok; READs +%llu, answered +%llu)",
		    ok, (unsigned long long)(reads - reads0),
		    (unsigned long long)(ans - ans0));
out:
	if (other > 0)
		smnl_unregister(&nl, other);
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (buf)
		munmap(buf, page);
}

static void test_inbound_answered(const char *name)
{
	uint64_t reads0 = 0, ans0 = 0, reads = 0, ans = 0;
	int id, ret, err = 0, i, ok = 0, p[2] = { -1, -1 };
	unsigned int waiting = 0;
	pid_t pid[5] = { 0 };
	void *buf = map(page);

	if (!buf || pipe(p)) {
		ktap_result(0, "answered: mmap and a pipe");
		goto out_buf;
	}
	fill(buf, page, 7);
	id = smnl_register_region(&nl, name, "rt-inbound-ans", (uintptr_t)buf,
				  page, IB_SYNC_MEM_REGION_F_WRITE);
	ret = id > 0 ? smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND,
					bound_ms(10000), &err, NULL) : id;
	ret = ret ?: err ?: sm_inbound_answered(name, &reads0, &ans0, &waiting);
	if (!ktap_result(id > 0 && ret == 0 && waiting == 0,
			 "answered: a region on %s, its inbound flush: 0 (%s)",
			 name, errstr(ret)))
		goto out;
	inbound_hold(1);
	pid[0] = flush_child(id, bound_ms(60000), p[1]);
	ktap_result(pid[0] > 0 && wait_for(bound_ms(30000), inbound_parked() == 1),
		    "answered: a first flush's READ is parked");
	for (i = 1; i < 5; i++)
		pid[i] = flush_child(id, bound_ms(60000), p[1]);
	close(p[1]);
	p[1] = -1;
	ok = wait_for(bound_ms(30000),
		      !sm_inbound_answered(name, &reads, &ans, &waiting) &&
		      waiting == 4);
	ktap_result(ok, "answered: 4 more flushes of it wait for the flusher (waiting %u)",
		    waiting);
	ok = 0;
	inbound_hold(0);
	ok = flushes_ok(p[0], pid, 5);
	ret = sm_inbound_answered(name, &reads, &ans, &waiting);
	ktap_result(ok == 5 && !ret && reads == reads0 + 2 && ans == ans0 + 3 &&
		    waiting == 0,
		    "answered: let go, the 5 flushes return 0; 2 READs for them, 3 answered (%d ok; READs +%llu, answered +%llu)",
		    ok, (unsigned long long)(reads - reads0),
		    (unsigned long long)(ans - ans0));
	answered_other(name, id);
out:
	if (id > 0)
		smnl_unregister(&nl, id);
out_buf:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (buf)
		munmap(buf, page);
}

/*
 * A region whose inbound flush gave up at its deadline, its READ in
 * flight (parked), then deleted: that READ is over when CLIENT_DEL
 * returns, before the region's pages go.
 */
static void test_inbound_delete(const char *name)
{
	int id, ret, err = 0;
	void *buf = map(page);

	if (!buf) {
		ktap_result(0, "delete: mmap of a region");
		return;
	}
	fill(buf, page, 5);
	id = smnl_register_region(&nl, name, "rt-inbound-del", (uintptr_t)buf,
				  page, IB_SYNC_MEM_REGION_F_WRITE);
	ret = id > 0 ? smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND,
					bound_ms(10000), &err, NULL) : id;
	if (!ktap_result(id > 0 && ret == 0 && err == 0,
			 "delete: another region on %s, its inbound flush: 0",
			 name))
		goto out;
	inbound_hold(1);
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND, 200, &err,
			       NULL);
	ktap_result(ret == 0 && err == -ETIMEDOUT && inbound_parked() == 1,
		    "delete: its flush gives up at its deadline (-ETIMEDOUT), its READ in flight");
	ktap_diag("flush: %s/%s, parked %ld", errstr(ret), errstr(err),
		  inbound_parked());
	ret = smnl_unregister(&nl, id);
	id = 0;
	ktap_result(ret == 0 && inbound_parked() == 0,
		    "delete: that READ is over when CLIENT_DEL returns (nothing parked)");
	ktap_diag("delete: %s, parked %ld", errstr(ret), inbound_parked());
	inbound_hold(0);
out:
	if (id > 0)
		smnl_unregister(&nl, id);
	munmap(buf, page);
}

/*
 * An inbound flush of a region on @name while its READ is in flight (rxe
 * completes one at once: inbound_hold parks it): the flush is killable;
 * the next flush waits for that READ first and gives up at its deadline
 * (-ETIMEDOUT); once the READ completes, flushes work again; and when
 * @name is removed during a flush, the flush ends with -ENODEV, the
 * removal returns and takes the parked READ (its QP) and the client with
 * it. That flush's deadline is the longest there is (600 s), past the
 * removal's hang guard: a removal that waited for it fails the guard.
 */
static void test_inbound_removal(const char *name)
{
	const size_t len = 4 * page;
	struct flush_res r = {};
	int id, ret, err, status, p[2] = { -1, -1 };
	pid_t pid;
	void *buf = map(len);

	if (!buf || pipe(p)) {
		ktap_result(0, "mmap and a pipe for the removal's region");
		goto out_buf;
	}
	fill(buf, len, 3);
	id = smnl_register_region(&nl, name, "rt-inbound", (uintptr_t)buf, len,
				  IB_SYNC_MEM_REGION_F_WRITE);
	err = 0;
	ret = id > 0 ? smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND,
					bound_ms(10000), &err, NULL) : id;
	if (!ktap_result(id > 0 && ret == 0 && err == 0,
			 "a region on %s, its inbound flush: 0", name)) {
		ktap_diag("register %s \"%s\", flush %s/%s", errstr(id),
			  nl.extack, errstr(ret), errstr(err));
		goto out;
	}
	ret = inbound_hold(1);
	ktap_result(ret == 0 && inbound_parked() == 0,
		    "inbound_hold set, nothing parked yet");

	/* Killed while it waits for its READ. */
	pid = flush_child(id, bound_ms(60000), -1);
	ktap_result(pid > 0 && wait_for(bound_ms(30000), inbound_parked() == 1),
		    "kill: a flush's READ is parked (inbound_hold reads 1)");
	ktap_result(pid > 0 && waitpid(pid, &status, WNOHANG) == 0,
		    "kill: ... its flush still waits for it");
	if (pid > 0)
		kill(pid, SIGKILL);
	status = pid > 0 ? wait_child(pid, bound_ms(30000)) : -1;
	ktap_result(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		    "kill: SIGKILL ends the waiting flush");
	ktap_diag("the flush's wait status %#x", status);

	/* The READ the killed flush left in flight is waited for first. */
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND, 200, &err, NULL);
	ktap_result(ret == 0 && err == -ETIMEDOUT && inbound_parked() == 1,
		    "deadline: the next flush waits for that READ, then gives up: -ETIMEDOUT");
	ktap_diag("flush: %s/%s, parked %ld", errstr(ret), errstr(err),
		  inbound_parked());
	ret = inbound_hold(0);
	ktap_result(ret == 0 && inbound_parked() == 0,
		    "inbound_hold let go: the READ completes (nothing parked)");
	ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND, bound_ms(10000),
			       &err, NULL);
	ktap_result(ret == 0 && err == 0, "... and the next flush: 0");

	test_inbound_delete(name);
	test_inbound_answered(name);

	/* The device goes while a flush waits for its READ. */
	inbound_hold(1);
	pid = flush_child(id, 600000, p[1]);
	close(p[1]);
	p[1] = -1;
	ktap_result(pid > 0 && wait_for(bound_ms(30000), inbound_parked() == 1),
		    "removal: the flush's READ is parked");
	ret = rdma_link_delete(name);
	ktap_result(ret == 0,
		    "removal: rdma link delete %s returns 0, without waiting for the flush's deadline",
		    name);
	/* Past the guard: the flush, killed, lets the removal end. */
	if (ret && pid > 0)
		kill(pid, SIGKILL);
	ret = read(p[0], &r, sizeof(r));
	ktap_result(ret == sizeof(r) && r.ret == 0 && r.err == -ENODEV,
		    "removal: the flush in flight ends with ENODEV");
	ktap_diag("flush: %s/%s (%d bytes of its result)", errstr(r.ret),
		  errstr(r.err), ret);
	if (pid > 0)
		wait_child(pid, bound_ms(30000));
	ktap_result(inbound_parked() == 0,
		    "removal: its parked READ went with the device's QP");
	ret = smnl_wait_gone(&nl, id, bound_ms(30000));
	ktap_result(ret == 0, "removal: the client went with its device");
	id = 0;
	inbound_hold(0);
out:
	if (id > 0)
		smnl_unregister(&nl, id);
out_buf:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (buf)
		munmap(buf, len);
}

/*
 * An asynchronous sync of region @id in @dir through @fd: the fence's
 * status once it signalled (1: no error), or a negative errno of the
 * ioctl; 0 if the fence did not signal within the hang guard.
 */
static int async_sync(int fd, uint32_t id, uint32_t dir)
{
	struct ib_sync_mem_ioc_sync req = {
		.id = id,
		.dir = dir,
		.flags = IB_SYNC_MEM_IOC_F_ASYNC,
		.timeout_ms = 5000,
		.in_fence = -1,
	};
	int status;

	if (ioctl(fd, IB_SYNC_MEM_IOC_SYNC, &req))
		return -errno;
	status = sync_file_wait(req.out_fence, bound_ms(60000));
	close(req.out_fence);
	return status;
}

/*
 * Asynchronous syncs of regions through /dev/ib_sync_mem. A region is
 * fence-safe (IB_SYNC_MEM_F_FENCE_SAFE): its job runs inside its fence's
 * signalling section from start to signal, which lockdep checks on the
 * debug kernel (dmesg-clean). Each direction signals no error; the inbound
 * flush made its READ of the region's first 8 bytes (debugfs inbound);
 * a read-only region's to-cpu signals -EACCES, and a batch of both the
 * first entry's error.
 */
static void test_async(void)
{
	const size_t len = 16 * 1024;
	static const uint32_t dirs[] = {
		IB_SYNC_MEM_SYNC_TO_DEVICE, IB_SYNC_MEM_SYNC_TO_CPU,
		IB_SYNC_MEM_SYNC_BIDIRECTIONAL,
	};
	struct ib_sync_mem_ioc_entry e[2] = { { 0 } };
	struct ib_sync_mem_ioc_sync_batch b = {
		.entries = (uintptr_t)e,
		.n = 2,
		.dir = IB_SYNC_MEM_SYNC_TO_CPU,
		.flags = IB_SYNC_MEM_IOC_F_ASYNC,
		.timeout_ms = 5000,
		.in_fence = -1,
	};
	uint64_t reads0 = 0, reads1 = 0, last = 0;
	int fd, id, ro, ret;
	void *buf, *rbuf;
	unsigned int i;

	buf = map(len);
	rbuf = map(len);
	fd = open("/dev/ib_sync_mem", O_RDWR | O_CLOEXEC);
	if (!ktap_result(buf && rbuf && fd >= 0,
			 "async: two buffers and /dev/ib_sync_mem")) {
		ktap_diag("open: %s", strerror(errno));
		goto out;
	}
	fill(buf, len, 11);
	fill(rbuf, len, 12);
	id = smnl_register_region(&nl, dev, "rt-async", (uintptr_t)buf, len,
				  IB_SYNC_MEM_REGION_F_WRITE);
	ro = smnl_register_region(&nl, dev, "rt-async-ro", (uintptr_t)rbuf,
				  len, 0);
	if (!ktap_result(id > 0 && ro > 0, "async: a writable and a read-only region")) {
		ktap_diag("register: %s %s \"%s\"", errstr(id), errstr(ro),
			  nl.extack);
		goto unreg;
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		ret = async_sync(fd, id, dirs[i]);
		ktap_result(ret == 1, "async: a region's sync (dir %u) signals no error (%d)",
			    dirs[i], ret);
	}
	*(volatile uint64_t *)buf = 0x5afe5afe5afe0001ULL;
	ret = sm_inbound_read(dev, &reads0, &last);
	ktap_result(ret == 0, "async: debugfs inbound has %s", dev);
	ret = async_sync(fd, id, IB_SYNC_MEM_SYNC_INBOUND);
	ktap_result(ret == 1, "async: a region's inbound flush signals no error (%d)", ret);
	ret = sm_inbound_read(dev, &reads1, &last);
	ktap_result(ret == 0 && reads1 == reads0 + 1 &&
		    last == 0x5afe5afe5afe0001ULL,
		    "async: the flush read the region's first 8 bytes, one READ");
	ktap_diag("READs %llu -> %llu, last 0x%llx",
		  (unsigned long long)reads0, (unsigned long long)reads1,
		  (unsigned long long)last);
	ret = async_sync(fd, ro, IB_SYNC_MEM_SYNC_TO_CPU);
	ktap_result(ret == -EACCES, "async: a read-only region's to-cpu signals -EACCES (%d)",
		    ret);
	e[0].id = id;
	e[1].id = ro;
	ret = ioctl(fd, IB_SYNC_MEM_IOC_SYNC_BATCH, &b) ? -errno :
	      sync_file_wait(b.out_fence, bound_ms(60000));
	if (b.out_fence > 0)
		close(b.out_fence);
	ktap_result(ret == -EACCES, "async: a batch of both signals the read-only one's -EACCES (%d)",
		    ret);
unreg:
	if (id > 0)
		smnl_unregister(&nl, id);
	if (ro > 0)
		smnl_unregister(&nl, ro);
out:
	if (fd >= 0)
		close(fd);
	if (buf)
		munmap(buf, len);
	if (rbuf)
		munmap(rbuf, len);
}

int main(int argc, char **argv)
{
	const char *remove_dev = NULL;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--dev")) {
		dev = argv[2];
	} else if (argc == 3 && !strcmp(argv[1], "--remove")) {
		remove_dev = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: region_test [--dev DEV | --remove DEV]\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	ktap_start();
	ret = smnl_open(&nl);
	if (!ktap_result(ret == 0, "resolve the ib_sync_mem family")) {
		ktap_diag("smnl_open: %s", errstr(ret));
		return ktap_finish();
	}
	if (remove_dev) {
		test_inbound_removal(remove_dev);
		smnl_close(&nl);
		return ktap_finish();
	}
	ktap_diag("page size %ld, device %s, VmPin %ld kB", page, dev, vm_pin_kb());

	test_basic();
	test_read_only();
	test_munmap();
	test_unaligned();
	test_bad_ranges();
	test_vma_op(OP_MPROTECT, "mprotect(PROT_READ) of the whole region", 0);
	test_vma_op(OP_MUNMAP_PAGE, "munmap of one page inside the region", 1);
	/* Like an ib_umem, the client keeps its pinned pages after a zap. */
	test_vma_op(OP_DONTNEED, "madvise(MADV_DONTNEED) of the region", 1);
	test_vma_op(OP_MREMAP, "mremap moving the region elsewhere", 1);
	test_collapse();
	test_migration(0, 64 * 1024, 64 * 1024 / page, "the region");
	/* Its re-check looks at the page a region of 90 bytes is on. */
	test_migration(4000, 90, 1, "a region of 90 bytes");
	test_fork();
	test_child_exit();
	test_memlock();
	test_lazy_region();
	test_del_during_batch();
	test_async();

	smnl_close(&nl);
	return ktap_finish();
}
