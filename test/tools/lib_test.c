// SPDX-License-Identifier: GPL-2.0
/*
 * lib_test: libsyncmem's calls against the module, from a program on the
 * library alone (lib/include/syncmem.h, linked with libsyncmem.a; no smnl,
 * no libynl): region clients of the handle's file, what the family says of
 * them (the hand-parsed client-info), blocking and asynchronous syncs,
 * fences, the inbound flush, mark-dirty, batches, the device pass, the
 * refusals' errnos and reasons, the io_uring commands' SQEs (on a
 * liburing ring, the one other library a caller needs), deletion over
 * netlink, and the file's clients gone with its close; with --spare, a
 * device removed under the clients of an unprivileged file (a handle
 * made by syncmem_open_fd() of a file opened without capabilities). KTAP.
 * Needs ib_sync_mem and rxe0; root.
 *
 *   lib_test [--dev rxe0] [--spare rxe1,veth1]
 *	--spare: an rxe device this program adds on that netdev, and
 *	removes under an unprivileged file's clients
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <liburing.h>
#include <syncmem.h>

#include "ktap.h"
#include "rdmalink.h"
#include "smdebugfs.h"
#include "unpriv.h"

#define LEN	(64 * 1024)
#define TMO	10000

static const char *dev = "rxe0";
static char spare_dev[32], spare_net[32];

struct find {
	uint32_t id;
	int found;
};

static int find_cb(const struct syncmem_client *c, void *arg)
{
	struct find *f = arg;

	if (c->id == f->id)
		f->found++;
	return 0;
}

static uint64_t syncs_of(struct syncmem *sm, uint32_t id)
{
	struct syncmem_client c;

	return syncmem_client_get(sm, id, &c) ? ~0ULL : c.syncs;
}

/*
 * One command on @ring: prepared by @ret's call already, given
 * user_data @ud, submitted, its CQE reaped within TMO. Its res, or -ETIME
 * (no errno a command answers) when none came, -EPROTO for another
 * user_data.
 */
static int ring_one(struct io_uring *ring, struct io_uring_sqe *sqe, int ret,
		    uint64_t ud)
{
	struct __kernel_timespec ts = { .tv_sec = TMO / 1000 };
	struct io_uring_cqe *cqe;

	if (ret)
		return ret;
	io_uring_sqe_set_data64(sqe, ud);
	if (io_uring_submit(ring) != 1)
		return -EBADE;
	if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
		return -ETIME;
	ret = cqe->user_data == ud ? cqe->res : -EPROTO;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/*
 * The io_uring commands through syncmem_uring_prep_*(): each argument
 * reaches the kernel (a wrong one changes the CQE's res or the count).
 */
static void ring_checks(struct syncmem *sm, uint32_t id, uint32_t ro)
{
	struct io_uring_params p = { .flags = SYNCMEM_URING_SETUP_FLAGS };
	struct __kernel_timespec ts = { .tv_sec = TMO / 1000 };
	struct syncmem_entry e[3] = {
		{ .id = id }, { .id = ro }, { .id = id, .offset = 4096, .len = 4096 },
	};
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	uint64_t before, seen = 0;
	int i, ret, fence, bad = 0;

	ret = io_uring_queue_init_params(16, &ring, &p);
	if (!ktap_result(!ret, "a ring with SYNCMEM_URING_SETUP_FLAGS: %s", errstr(ret)))
		return;
	ktap_result(syncmem_uring_prep_sync(NULL, sm, id, SYNCMEM_TO_DEVICE, 0, 0, TMO, -1) == -EINVAL,
		    "uring_prep_sync with no SQE: -EINVAL");

	/* Eight in flight, one submit, eight CQEs: each user_data once. */
	before = syncs_of(sm, id);
	for (i = 0; i < 8; i++) {
		sqe = io_uring_get_sqe(&ring);
		if (!sqe || syncmem_uring_prep_sync(sqe, sm, id, SYNCMEM_TO_DEVICE, 0, 0, TMO, -1))
			bad++;
		else
			io_uring_sqe_set_data64(sqe, 100 + i);
	}
	ret = io_uring_submit(&ring);
	for (i = 0; i < 8 && !bad; i++) {
		if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts)) {
			bad++;
			break;
		}
		if (cqe->res || cqe->user_data < 100 || cqe->user_data >= 108)
			bad++;
		else
			seen |= 1ULL << (cqe->user_data - 100);
		io_uring_cqe_seen(&ring, cqe);
	}
	ktap_result(ret == 8 && !bad && seen == 0xff && syncs_of(sm, id) == before + 8,
		    "uring_prep_sync: 8 syncs in one submit, 8 CQEs of res 0, each user_data once, syncs +8 (submit %d)",
		    ret);

	sqe = io_uring_get_sqe(&ring);
	before = syncs_of(sm, id);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_sync(sqe, sm, id, SYNCMEM_INBOUND, 0, 0, TMO, -1), 1);
	ktap_result(!ret && syncs_of(sm, id) == before + 1,
		    "uring_prep_sync SYNCMEM_INBOUND of a writable region: res 0, syncs +1 (%s)", errstr(ret));
	sqe = io_uring_get_sqe(&ring);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_sync(sqe, sm, ro, SYNCMEM_INBOUND, 0, 0, TMO, -1), 2);
	ktap_result(ret == -EACCES, "... of the read-only one: res -EACCES (%s)", errstr(ret));
	sqe = io_uring_get_sqe(&ring);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_sync(sqe, sm, ro, SYNCMEM_TO_DEVICE, 0, 0, TMO, -1), 3);
	ktap_result(!ret, "... to-device of the read-only one: res 0 (%s)", errstr(ret));
	sqe = io_uring_get_sqe(&ring);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_sync(sqe, sm, id, SYNCMEM_TO_CPU, LEN - 4096, 8192, TMO, -1), 4);
	ktap_result(ret == -ERANGE, "uring_prep_sync of a range past the client: res -ERANGE (%s)", errstr(ret));
	sqe = io_uring_get_sqe(&ring);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_sync(sqe, sm, id, SYNCMEM_TO_CPU, 0, 0,
							   SYNCMEM_TIMEOUT_MAX_MS + 1, -1), 5);
	ktap_result(ret == -EINVAL, "uring_prep_sync with a timeout past the most: res -EINVAL (%s)", errstr(ret));
	sqe = io_uring_get_sqe(&ring);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_sync(sqe, sm, 0x7fffff00, SYNCMEM_TO_CPU, 0, 0, TMO, -1), 6);
	ktap_result(ret == -ENOENT, "uring_prep_sync of no such client: res -ENOENT (%s)", errstr(ret));
	/* The in-fence goes with its flag: the device's fd is no sync_file. */
	sqe = io_uring_get_sqe(&ring);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_sync(sqe, sm, id, SYNCMEM_TO_CPU, 0, 0, TMO,
							   syncmem_fd(sm)), 7);
	ktap_result(ret == -EINVAL, "uring_prep_sync with an in-fence that is no sync_file: res -EINVAL (%s)",
		    errstr(ret));
	/* Its own sync counted before the ring's is asked: +1 exactly. */
	fence = syncmem_sync_async(sm, id, SYNCMEM_TO_DEVICE, 0, 0, TMO, -1);
	ret = fence >= 0 ? syncmem_fence_wait(fence, TMO) : fence;
	sqe = io_uring_get_sqe(&ring);
	before = syncs_of(sm, id);
	ret = ret ?: ring_one(&ring, sqe, syncmem_uring_prep_sync(sqe, sm, id, SYNCMEM_TO_CPU, 0, 0, TMO, fence), 8);
	ktap_result(!ret && syncs_of(sm, id) == before + 1,
		    "uring_prep_sync after a sync's signalled fence: res 0, syncs +1 (%s)", errstr(ret));
	if (fence >= 0)
		close(fence);

	/* A batch: one CQE, the first failure's errno; each entry run. */
	sqe = io_uring_get_sqe(&ring);
	before = syncs_of(sm, id);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_batch(sqe, sm, e, 3, SYNCMEM_TO_CPU, TMO, -1), 9);
	ktap_result(ret == -EACCES && syncs_of(sm, id) == before + 2,
		    "uring_prep_batch of 3 (the read-only one's to-cpu fails): res -EACCES, the writable one's syncs +2 (%s)",
		    errstr(ret));
	sqe = io_uring_get_sqe(&ring);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_batch(sqe, sm, e, 0, SYNCMEM_TO_CPU, TMO, -1), 10);
	ktap_result(ret == -EINVAL, "uring_prep_batch of none: res -EINVAL (%s)", errstr(ret));
	sqe = io_uring_get_sqe(&ring);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_batch(sqe, sm, e, 3, SYNCMEM_TO_DEVICE, TMO,
							    syncmem_fd(sm)), 11);
	ktap_result(ret == -EINVAL, "uring_prep_batch with an in-fence that is no sync_file: res -EINVAL (%s)",
		    errstr(ret));
	sqe = io_uring_get_sqe(&ring);
	before = syncs_of(sm, id);
	ret = ring_one(&ring, sqe, syncmem_uring_prep_batch(sqe, sm, e, 3, SYNCMEM_TO_DEVICE, TMO, -1), 12);
	ktap_result(!ret && syncs_of(sm, id) == before + 2,
		    "uring_prep_batch to-device: res 0, syncs +2 (%s)", errstr(ret));
	io_uring_queue_exit(&ring);
}

#define SM_PARAMS "/sys/module/ib_sync_mem/parameters"

/* max_clients_per_user set to @v: 0 or -errno. */
static int set_per_user(long v)
{
	char val[24];

	snprintf(val, sizeof(val), "%ld", v);
	return debugfs_write_at(SM_PARAMS, "max_clients_per_user", val);
}

/* Fresh pages of this process, pinned by nobody yet. */
static void *pages(size_t n)
{
	void *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The spare device removed under the clients of an unprivileged file: its
 * two regions there go with it (ids unknown after, pins given back at
 * once), the file's region on the other device stays and syncs, and the
 * file's close deletes that one. max_clients_per_user is 2 meanwhile: the
 * file's third client on the spare device is -EMFILE with its reason.
 */
static void removal_checks(struct syncmem *adm)
{
	uint32_t a = 0, b = 0, c3 = 0, keep = 0, idx;
	long limit = debugfs_long_at(SM_PARAMS, "max_clients_per_user"), pin0, pin;
	void *pa = pages(4), *pb = pages(1), *pc = pages(1), *pk = pages(1);
	struct syncmem_client c;
	struct syncmem *u = NULL;
	int ret, fd, tries;

	ret = rdma_link_add(spare_dev, spare_net);
	for (tries = 0; !ret && tries < 100 && syncmem_dev_index(adm, spare_dev, &idx); tries++)
		usleep(100000);
	if (!ktap_result(!ret && tries < 100 && pa && pb && pc && pk && limit > 0,
			 "removal: %s added on %s, attached (max_clients_per_user %ld)",
			 spare_dev, spare_net, limit))
		return;
	fd = sm_unpriv_devfd();
	u = fd >= 0 ? syncmem_open_fd(fd) : NULL;
	if (!ktap_result(u != NULL, "removal: syncmem_open_fd() of a file opened without capabilities (%s)",
			 errstr(fd < 0 ? fd : -errno))) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	ret = syncmem_sync_dev(u, idx, SYNCMEM_TO_DEVICE, TMO, NULL);
	ktap_result(ret == -EPERM, "removal: the handle is unprivileged: its device pass is -EPERM (%s)",
		    errstr(ret));
	ret = set_per_user(2);
	ktap_result(!ret, "removal: max_clients_per_user=2 (%s)", errstr(ret));
	pin0 = vm_pin_kb();
	ret = syncmem_region_create(u, spare_dev, "lib-rm-a", pa, 4 * 4096,
				    SYNCMEM_REGION_WRITE, 0, &a);
	ret = ret ?: syncmem_region_create(u, spare_dev, "lib-rm-b", pb, 4096,
					   SYNCMEM_REGION_WRITE, 0, &b);
	ret = ret ?: syncmem_region_create(u, dev, "lib-rm-keep", pk, 4096,
					   SYNCMEM_REGION_WRITE, 0, &keep);
	pin = vm_pin_kb();
	ktap_result(!ret && pin - pin0 == 6 * 4, "removal: two regions on %s (4 and 1 pages), one on %s: %ld kB more pinned (%s)",
		    spare_dev, dev, pin - pin0, errstr(ret));
	ret = syncmem_region_create(u, spare_dev, "lib-rm-c", pc, 4096, 0, 0, &c3);
	ktap_result(ret == -EMFILE && strstr(syncmem_errmsg(u), "max_clients_per_user"),
		    "removal: a third on %s is -EMFILE, \"%s\" (%s)", spare_dev,
		    syncmem_errmsg(u), errstr(ret));
	/* No inbound flush there: the spare netdev may have no address. */
	ret = syncmem_sync(u, a, SYNCMEM_TO_DEVICE, 0, 0, TMO);
	ret = ret ?: syncmem_sync(u, b, SYNCMEM_TO_CPU, 0, 0, TMO);
	ktap_result(!ret, "removal: its clients on %s sync (%s)", spare_dev, errstr(ret));

	ret = rdma_link_delete(spare_dev);
	pin = vm_pin_kb();
	ktap_result(!ret && pin - pin0 == 4, "removal: %s removed: its two regions' pins given back at once (%ld kB still pinned, the other device's region's 4)",
		    spare_dev, pin - pin0);
	ktap_result(syncmem_client_get(adm, a, &c) == -ENOENT &&
		    syncmem_client_get(adm, b, &c) == -ENOENT,
		    "removal: the family knows neither client any more");
	ret = syncmem_sync(u, a, SYNCMEM_TO_DEVICE, 0, 0, TMO);
	ktap_result(ret == -ENOENT, "removal: a sync of one by the file that made it: -ENOENT (%s)", errstr(ret));
	ret = syncmem_flush_inbound(u, b, TMO);
	ktap_result(ret == -ENOENT, "removal: the other's inbound flush: -ENOENT (%s)", errstr(ret));
	ret = syncmem_client_delete(u, a);
	ktap_result(ret == -ENOENT, "removal: deleting one: -ENOENT (%s)", errstr(ret));
	ret = syncmem_sync(u, keep, SYNCMEM_TO_DEVICE, 0, 0, TMO);
	ktap_result(!ret, "removal: the file's region on %s still syncs (%s)", dev, errstr(ret));
	syncmem_close(u);
	u = NULL;
	ktap_result(syncmem_client_get(adm, keep, &c) == -ENOENT && vm_pin_kb() == pin0,
		    "removal: the file closed: its last client gone, nothing pinned (%ld kB)",
		    vm_pin_kb() - pin0);
out:
	if (u)
		syncmem_close(u);
	if (limit > 0)
		ktap_result(!set_per_user(limit), "removal: max_clients_per_user back to %ld", limit);
	if (syncmem_dev_index(adm, spare_dev, &idx) == 0)
		ktap_result(!rdma_link_delete(spare_dev), "removal: %s deleted", spare_dev);
	munmap(pa, 4 * 4096);
	munmap(pb, 4096);
	munmap(pc, 4096);
	munmap(pk, 4096);
}

static int stop_cb(const struct syncmem_client *c, void *arg)
{
	(void)c;
	(*(int *)arg)++;
	return 7;
}

int main(int argc, char **argv)
{
	struct syncmem_entry e[3];
	struct syncmem_client c;
	struct syncmem_dev_result dr;
	struct syncmem *sm, *sm2;
	unsigned int run = 99, errors = 99;
	uint32_t id = 0, lazy = 0, ro = 0, bad = 0, index = 0;
	unsigned char *buf, *buf2, *buf3;
	struct find f;
	int ret, fence, n = 0;

	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "spare", required_argument, NULL, 's' },
		{ 0 }
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'd') {
			dev = optarg;
		} else if (opt != 's' ||
			   sscanf(optarg, "%31[^,],%31s", spare_dev, spare_net) != 2) {
			fprintf(stderr, "usage: lib_test [--dev DEV] [--spare RXE,NETDEV]\n");
			return 2;
		}
	}
	ktap_start();
	if (posix_memalign((void **)&buf, 4096, LEN) ||
	    posix_memalign((void **)&buf2, 4096, LEN) ||
	    posix_memalign((void **)&buf3, 4096, LEN))
		return 1;
	memset(buf, 1, LEN);
	memset(buf2, 2, LEN);
	memset(buf3, 3, LEN);

	sm = syncmem_open();
	if (!ktap_result(sm != NULL, "syncmem_open()")) {
		ktap_diag("errno %d", errno);
		return ktap_finish();
	}
	ktap_result(syncmem_fd(sm) >= 0, "syncmem_fd() is the device's descriptor");

	ret = syncmem_region_create(sm, dev, "lib-rw", buf, LEN,
				    SYNCMEM_REGION_WRITE, 0, &id);
	ktap_result(!ret && id > 0, "region_create: a writable region (id %u): %s", id, errstr(ret));
	ret = syncmem_region_create(sm, dev, "lib-lazy", buf2, LEN,
				    SYNCMEM_REGION_WRITE, SYNCMEM_CLIENT_LAZY, &lazy);
	ktap_result(!ret && lazy > 0, "region_create: a lazy one (id %u): %s", lazy, errstr(ret));
	ret = syncmem_region_create(sm, dev, "lib-ro", buf3, LEN, 0, 0, &ro);
	ktap_result(!ret && ro > 0, "region_create: a read-only one (id %u): %s", ro, errstr(ret));

	ret = syncmem_region_create(sm, "nosuchdev", "lib-nodev", buf3, LEN, 0, 0, &bad);
	ktap_diag("no such device: %s (%s)", errstr(ret), syncmem_errmsg(sm));
	ktap_result(ret == -ENODEV, "region_create on no such device: -ENODEV");
	ret = syncmem_region_create(sm, dev, "lib-flags", buf3, LEN, 0, 1U << 30, &bad);
	ktap_diag("unknown flag: %s (%s)", errstr(ret), syncmem_errmsg(sm));
	ktap_result(ret == -EINVAL && syncmem_errmsg(sm)[0],
		    "region_create with an unknown flag: -EINVAL, the kernel's reason kept");
	ret = syncmem_region_create(sm, dev, "lib-owned", buf3, LEN, 0, SYNCMEM_CLIENT_OWNED, &bad);
	ktap_result(ret == -EINVAL, "region_create with SYNCMEM_CLIENT_OWNED: -EINVAL (%s)", errstr(ret));
	ret = syncmem_region_create(sm, dev, "lib-empty", buf3, 0, 0, 0, &bad);
	ktap_diag("no length: %s (%s)", errstr(ret), syncmem_errmsg(sm));
	ktap_result(ret < 0, "region_create of 0 bytes is refused");

	/* What the family says of it, client-info parsed by hand. */
	memset(&c, 0xff, sizeof(c));
	ret = syncmem_client_get(sm, id, &c);
	ktap_result(!ret, "client_get: %s (%s)", errstr(ret), syncmem_errmsg(sm));
	ktap_diag("id %u name %s dev %s owner %s kind %s state %s origin %u flags %#x size %llu pinned %u region %#llx+%llu access %u segments %u",
		  c.id, c.name, c.dev, c.owner, syncmem_kind_name(c.kind),
		  syncmem_state_name(c.state), c.origin, c.flags,
		  (unsigned long long)c.size, c.pinned_pages,
		  (unsigned long long)c.region_addr, (unsigned long long)c.region_len,
		  c.region_access, c.region_segments);
	ktap_result(c.id == id && !strcmp(c.name, "lib-rw") && !strcmp(c.dev, dev),
		    "client_get: id, name, device");
	ktap_result(c.kind == SYNCMEM_KIND_REGION && c.state == SYNCMEM_STATE_LIVE &&
		    c.origin == SYNCMEM_ORIGIN_DEVICE && c.flags == SYNCMEM_CLIENT_FILE,
		    "client_get: a live region, created on the device, its file's");
	ktap_result(c.region_addr == (uintptr_t)buf && c.region_len == LEN &&
		    c.region_access == SYNCMEM_REGION_WRITE && c.region_segments >= 1 &&
		    c.size == LEN && c.pinned_pages == LEN / 4096,
		    "client_get: the region's address, length, access, segments, pins (client-info)");
	ktap_result(c.reserved[0] == 0 && c.reserved[7] == 0, "client_get: reserved is zero");
	ret = syncmem_dev_index(sm, dev, &index);
	ktap_result(!ret && index == c.dev_index, "dev_index(%s) = %u, the client's", dev, index);
	ret = syncmem_dev_index(sm, "nosuchdev", &index);
	ktap_result(ret == -ENODEV, "dev_index of no such device: -ENODEV (%s)", errstr(ret));
	f = (struct find){ .id = id };
	ret = syncmem_client_foreach(sm, dev, find_cb, &f);
	ktap_result(!ret && f.found == 1, "client_foreach(%s) sees it once", dev);
	ret = syncmem_client_foreach(sm, NULL, stop_cb, &n);
	ktap_result(ret == 7 && n == 1, "client_foreach: the callback's non-zero stops the walk, returned");

	/* Syncs. */
	ret = syncmem_sync(sm, id, SYNCMEM_TO_DEVICE, 0, 0, TMO);
	ktap_result(!ret, "sync to-device, blocking: %s", errstr(ret));
	ret = syncmem_sync(sm, id, SYNCMEM_TO_CPU, 4096, 8192, TMO);
	ktap_result(!ret, "sync to-cpu of a range: %s", errstr(ret));
	ret = syncmem_sync(sm, id, SYNCMEM_TO_CPU, LEN, 4096, TMO);
	ktap_result(ret == -ERANGE, "sync of a range past the client: -ERANGE (%s)", errstr(ret));
	ret = syncmem_sync(sm, id, 9, 0, 0, TMO);
	ktap_result(ret == -EINVAL, "sync in no direction: -EINVAL (%s)", errstr(ret));
	ret = syncmem_sync(sm, id, SYNCMEM_TO_DEVICE, 0, 0, SYNCMEM_TIMEOUT_MAX_MS + 1);
	ktap_result(ret == -EINVAL, "sync with a timeout past the most: -EINVAL (%s)", errstr(ret));
	ret = syncmem_sync(sm, 0x7fffff00, SYNCMEM_TO_DEVICE, 0, 0, TMO);
	ktap_result(ret == -ENOENT, "sync of no such client: -ENOENT (%s)", errstr(ret));
	fence = syncmem_sync_async(sm, id, SYNCMEM_TO_CPU, 0, 0, TMO, -1);
	ktap_result(fence >= 0, "sync_async: a fence (%d)", fence);
	if (fence >= 0) {
		ret = syncmem_fence_wait(fence, TMO);
		ktap_result(!ret, "fence_wait: signalled without error (%s)", errstr(ret));
		ktap_result(syncmem_fence_status(fence) == 1, "fence_status: 1");
		ret = syncmem_sync_async(sm, lazy, SYNCMEM_TO_DEVICE, 0, 0, TMO, fence);
		ktap_result(ret >= 0, "sync_async with an in-fence: a fence (%d)", ret);
		if (ret >= 0) {
			ktap_result(!syncmem_fence_wait(ret, TMO), "... which signals without error");
			close(ret);
		}
		close(fence);
	}
	ktap_result(syncmem_fence_status(syncmem_fd(sm)) == -EINVAL,
		    "fence_status of a descriptor that is no sync_file: -EINVAL");

	/* Inbound. */
	ret = syncmem_flush_inbound(sm, id, TMO);
	ktap_result(!ret, "flush_inbound of a writable region: %s", errstr(ret));
	fence = syncmem_flush_inbound_async(sm, id, TMO);
	ktap_result(fence >= 0 && !syncmem_fence_wait(fence, TMO),
		    "flush_inbound_async: a fence that signals without error");
	if (fence >= 0)
		close(fence);
	ret = syncmem_flush_inbound(sm, ro, TMO);
	ktap_result(ret == -EACCES, "flush_inbound of a read-only region: -EACCES (%s)", errstr(ret));
	fence = syncmem_flush_inbound_async(sm, ro, TMO);
	if (fence >= 0) {
		ret = syncmem_fence_wait(fence, TMO);
		close(fence);
	} else {
		ret = fence;
	}
	ktap_result(ret == -EACCES, "... asynchronous: -EACCES, from the call or its fence (%s)", errstr(ret));

	/* Lazy clients. */
	ret = syncmem_mark_dirty(sm, id, SYNCMEM_TO_DEVICE, 0, 0);
	ktap_result(ret == -EINVAL, "mark_dirty of a client that is not lazy: -EINVAL (%s)", errstr(ret));
	ret = syncmem_mark_dirty(sm, lazy, SYNCMEM_TO_DEVICE, 0, 4096);
	ktap_result(!ret, "mark_dirty of the lazy one: %s", errstr(ret));
	ret = syncmem_sync(sm, lazy, SYNCMEM_TO_DEVICE, 0, 0, TMO);
	ktap_result(!ret, "... and its sync: %s", errstr(ret));

	/* Batches. */
	memset(e, 0, sizeof(e));
	e[0].id = id;
	e[1].id = ro;
	e[2].id = id;
	e[2].offset = 0;
	e[2].len = 4096;
	e[1].err = 12345;
	ret = syncmem_sync_batch(sm, e, 3, SYNCMEM_TO_CPU, TMO, &run, &errors);
	ktap_diag("batch: %s, run %u errors %u, entries %d %d %d", errstr(ret), run,
		  errors, e[0].err, e[1].err, e[2].err);
	ktap_result(!ret && run == 3 && errors == 1 && !e[0].err && e[1].err == -EACCES && !e[2].err,
		    "sync_batch: three entries run, the read-only one's to-cpu fails with -EACCES");
	fence = syncmem_sync_batch_async(sm, e, 3, SYNCMEM_TO_CPU, TMO, -1);
	ret = fence >= 0 ? syncmem_fence_wait(fence, TMO) : fence;
	ktap_result(ret == -EACCES, "sync_batch_async: its fence has the failed entry's -EACCES (%s)", errstr(ret));
	if (fence >= 0)
		close(fence);
	e[1].id = 0x7fffff00;
	ret = syncmem_sync_batch(sm, e, 3, SYNCMEM_TO_CPU, TMO, NULL, NULL);
	ktap_result(ret == -ENOENT, "sync_batch naming no such client: -ENOENT (%s)", errstr(ret));
	ret = syncmem_sync_batch(sm, e, 0, SYNCMEM_TO_CPU, TMO, NULL, NULL);
	ktap_result(ret == -EINVAL, "sync_batch of none: -EINVAL (%s)", errstr(ret));

	ring_checks(sm, id, ro);

	/* The device. */
	memset(&dr, 0xff, sizeof(dr));
	ret = syncmem_sync_dev(sm, c.dev_index, SYNCMEM_TO_DEVICE, TMO, &dr);
	ktap_diag("sync_dev: %s, clients %u errors %u skipped %u err %d pass %llu",
		  errstr(ret), dr.clients, dr.errors, dr.skipped, dr.err,
		  (unsigned long long)dr.pass);
	ktap_result(!ret && dr.clients >= 2 && dr.errors == 0 && dr.err == 0,
		    "sync_dev to-device: the pass ran its clients");

	if (spare_dev[0])
		removal_checks(sm);

	/* Deletion over netlink, and the file's clients gone at close. */
	ret = syncmem_client_delete(sm, lazy);
	ktap_result(!ret, "client_delete of the lazy one: %s", errstr(ret));
	ret = syncmem_client_get(sm, lazy, &c);
	ktap_result(ret == -ENOENT, "... then client_get: -ENOENT (%s)", errstr(ret));
	ret = syncmem_client_delete(sm, lazy);
	ktap_result(ret == -ENOENT, "client_delete again: -ENOENT (%s)", errstr(ret));
	syncmem_close(sm);
	sm2 = syncmem_open();
	if (ktap_result(sm2 != NULL, "a second handle")) {
		ktap_result(syncmem_client_get(sm2, id, &c) == -ENOENT &&
			    syncmem_client_get(sm2, ro, &c) == -ENOENT,
			    "the closed handle's clients are gone when syncmem_close() returns");
		syncmem_close(sm2);
	}
	free(buf);
	free(buf2);
	free(buf3);
	return ktap_finish();
}
