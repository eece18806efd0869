// SPDX-License-Identifier: GPL-2.0
/*
 * uring_dev: /dev/ib_sync_mem through io_uring (IORING_OP_URING_CMD,
 * uapi/linux/ib_sync_mem_dev.h "io_uring"), with liburing, as KTAP: one
 * client's sync and a region's inbound flush (debugfs inbound: exactly one
 * RDMA READ more per flush) completed in the CQ with their results, 8 in
 * flight at once each completing with its own user_data, batches, an
 * in-fence that holds a command until it signals (and one that failed),
 * bad input's exact errnos in cqe->res (each the ioctl's for the same
 * request), another file's client refused as the ioctl refuses it, the
 * device file closed and the ring closed with commands pending (nothing
 * left behind: the fences freed), and a device removed while a command
 * waits for its in-fence (-ENODEV).
 *
 *   uring_dev [--dev rxe0] [--spare rxe1,veth1]
 *	--spare: an rxe device this program adds and removes (on that
 *	netdev) for the removal case
 *   uring_dev [--dev rxe0] --bench ITERS
 *	no tests (bench/guest.sh, suite "uring"): the time per completed
 *	sync of a sim client of no latency (an asynchronous job), per
 *	to-device sync of a one-page region (run at issue) and per inbound
 *	flush of that region, ITERS of each, by the blocking ioctl and
 *	through the ring with 8 in flight (kept full, reaped as they come),
 *	one line:
 *	uring iters=N ioctl_sync_ns=T ring8_sync_ns=T ring1_sync_ns=T
 *	ioctl_region_ns=T ring8_region_ns=T ring1_region_ns=T
 *	ioctl_inbound_ns=T ring8_inbound_ns=T ring1_inbound_ns=T
 *	(ring1: one in flight at a time, the ring's own cost per command)
 *	(any failure: a message on stderr, exit 1, no figure)
 *
 * Needs ib_sync_mem and ib_sync_mem_sim loaded, root, debugfs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <linux/capability.h>
#include <linux/ib_sync_mem.h>
#include <linux/ib_sync_mem_dev.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "ktap.h"
#include "smdebugfs.h"
#include "smnl.h"
#include "smnl_raw.h"
#include "syncfile.h"
#include "smlib.h"
#include "unpriv.h"

#define TO_DEV	IB_SYNC_MEM_SYNC_TO_DEVICE

static const char *dev_name = "rxe0";
static char spare_dev[32] = "rxe1", spare_net[32] = "veth1";
static struct smnl nl;
static int devfd = -1;
static struct io_uring ring;

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static uint64_t syncs_of(uint32_t id)
{
	struct smnl_client c;

	return smnl_client_get(&nl, id, &c) ? ~0ULL : c.syncs;
}

static int new_sim_on(const char *dev, const char *name, uint32_t latency_us,
		      uint32_t fail_next)
{
	struct smnl_new req = {
		.dev = dev, .name = name, .kind = IB_SYNC_MEM_KIND_SIM,
		.sim_nest = 1, .sim_latency_us = latency_us,
		.sim_fail_next = fail_next, .sim_fail_errno = fail_next ? EIO : 0,
	};

	return smnl_register(&nl, &req);
}

static int new_sim(const char *name, uint32_t latency_us, uint32_t fail_next)
{
	return new_sim_on(dev_name, name, latency_us, fail_next);
}

static int ring_init(struct io_uring *r, unsigned int flags)
{
	struct io_uring_params p = { .flags = flags };

	return io_uring_queue_init_params(64, r, &p);
}

/* An SQE of @r for cmd_op @op on @fd with @pl (@n bytes), or NULL. */
static struct io_uring_sqe *prep(struct io_uring *r, int fd, uint32_t op,
				 const void *pl, size_t n, uint64_t ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);
	size_t size = (r->flags & IORING_SETUP_SQE128) ? 128 : 64;

	if (!sqe)
		return NULL;
	memset(sqe, 0, size);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	memcpy(sqe->cmd, pl, n < size - 48 ? n : size - 48);
	sqe->user_data = ud;
	return sqe;
}

static int submit_sync(struct io_uring *r, int fd,
		       const struct ib_sync_mem_uring_sync *s, uint64_t ud)
{
	if (!prep(r, fd, IB_SYNC_MEM_URING_CMD_SYNC, s, sizeof(*s), ud))
		return -EBUSY;
	return io_uring_submit(r);
}

static int submit_batch(struct io_uring *r, int fd,
			const struct ib_sync_mem_uring_batch *b, uint64_t ud)
{
	if (!prep(r, fd, IB_SYNC_MEM_URING_CMD_SYNC_BATCH, b, sizeof(*b), ud))
		return -EBUSY;
	return io_uring_submit(r);
}

/*
 * Reap one CQE within @ms (a hang guard): its res, its user_data in *@ud;
 * -ETIME (not an errno the commands answer) if none came.
 */
static int reap(struct io_uring *r, uint64_t *ud, int ms)
{
	struct __kernel_timespec ts = { .tv_sec = ms / 1000,
					.tv_nsec = (ms % 1000) * 1000000L };
	struct io_uring_cqe *cqe;
	int res;

	if (io_uring_wait_cqe_timeout(r, &cqe, &ts))
		return -ETIME;
	res = cqe->res;
	if (ud)
		*ud = cqe->user_data;
	io_uring_cqe_seen(r, cqe);
	return res;
}

/* Whether a CQE is there now (without waiting). */
static int cqe_ready(struct io_uring *r)
{
	struct io_uring_cqe *cqe;

	return io_uring_peek_cqe(r, &cqe) == 0;
}

/* One command through the ring, reaped: its res (user_data checked). */
static int ring_sync(const struct ib_sync_mem_uring_sync *s)
{
	uint64_t ud = 0;
	int st = submit_sync(&ring, devfd, s, 0x5100 + s->id);

	if (st != 1)
		return st < 0 ? st : -EPROTO;
	st = reap(&ring, &ud, bound_ms(60000));
	return ud == 0x5100 + s->id || st == -ETIME ? st : -EPROTO;
}

static int ring_batch(const struct ib_sync_mem_uring_batch *b)
{
	uint64_t ud = 0;
	int st = submit_batch(&ring, devfd, b, 0xba7c);

	if (st != 1)
		return st < 0 ? st : -EPROTO;
	st = reap(&ring, &ud, bound_ms(60000));
	return ud == 0xba7c || st == -ETIME ? st : -EPROTO;
}

/* The ioctl's answer to the same one-client request, made asynchronous. */
static int ioctl_sync(const struct ib_sync_mem_uring_sync *s)
{
	struct ib_sync_mem_ioc_sync r = {
		.id = s->id, .dir = s->dir, .offset = s->offset, .len = s->len,
		.flags = s->flags | IB_SYNC_MEM_IOC_F_ASYNC,
		.timeout_ms = s->timeout_ms, .in_fence = s->in_fence,
		.out_fence = -1,
	};
	int st = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);

	if (!st) {
		st = sync_file_wait(r.out_fence, bound_ms(60000));
		close(r.out_fence);
		st = st == 1 ? 0 : st;
	}
	return st;
}

/* An asynchronous ioctl sync's fence fd, or -errno. */
static int fence_of(uint32_t id)
{
	struct ib_sync_mem_ioc_sync r = {
		.id = id, .dir = TO_DEV, .flags = IB_SYNC_MEM_IOC_F_ASYNC,
		.out_fence = -1,
	};
	int st = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);

	return st ?: r.out_fence;
}

/* A one-client sync and a region's inbound flush through the ring. */
static void test_sync(uint32_t fast, uint32_t failing)
{
	struct ib_sync_mem_uring_sync s = { .id = fast, .dir = TO_DEV };
	uint64_t before = syncs_of(fast), reads0 = 0, reads1 = 0, last;
	long page = sysconf(_SC_PAGESIZE);
	int st, i, region, ready = 0, done = 0;
	char *buf;

	st = ring_sync(&s);
	ktap_result(st == 0 && syncs_of(fast) == before + 1,
		    "SYNC to-device through the ring: cqe res 0, its user_data, one sync (%s)",
		    errstr(st));
	s = (struct ib_sync_mem_uring_sync){ .id = failing, .dir = TO_DEV };
	st = ring_sync(&s);
	ktap_result(st == -EIO, "a client whose sync fails: cqe res -EIO, the sync's own error (%s)",
		    errstr(st));

	buf = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	region = buf == MAP_FAILED ? -ENOMEM :
		 smnl_register_region(&nl, dev_name, "uring-region", (uintptr_t)buf,
				      4 * page, IB_SYNC_MEM_REGION_F_WRITE);
	if (!ktap_result(region > 0, "a region client over 4 pages, the device writes it (%d)",
			 region))
		return;
	s = (struct ib_sync_mem_uring_sync){ .id = region, .dir = TO_DEV };
	st = ring_sync(&s);
	ktap_result(st == 0, "the region synced to-device through the ring (%s)", errstr(st));
	/*
	 * A region's sync without an in-fence runs at issue: its CQE is
	 * posted when io_uring_submit() returns, and the sync counted, each
	 * of 8 times (an asynchronous job would need its worker first).
	 */
	before = syncs_of(region);
	for (i = 0; i < 8; i++) {
		uint64_t ud = 0;

		st = submit_sync(&ring, devfd, &s, 0xa700 + i);
		ready += st == 1 && cqe_ready(&ring) && syncs_of(region) == before + i + 1;
		st = reap(&ring, &ud, bound_ms(60000));
		done += st == 0 && ud == 0xa700 + (uint64_t)i;
	}
	ktap_result(ready == 8 && done == 8 && syncs_of(region) == before + 8,
		    "a region's sync runs at issue: 8 times its CQE (res 0, its user_data) posted and the sync counted when io_uring_submit() returned (%d ready, %d done)",
		    ready, done);
	s.dir = IB_SYNC_MEM_SYNC_TO_CPU;
	s.offset = page;
	s.len = 2 * page;
	before = syncs_of(region);
	st = ring_sync(&s);
	ktap_result(st == 0 && syncs_of(region) == before + 1,
		    "a ranged SYNC to-cpu of its pages 1-2 through the ring: 0 (%s)", errstr(st));
	/*
	 * So does its inbound flush, as the ioctl's: its RDMA READ posted and
	 * completed, and its CQE posted, when io_uring_submit() returned;
	 * one READ each (nothing in flight to answer it), 8 times.
	 */
	s.offset = s.len = 0;
	s.dir = IB_SYNC_MEM_SYNC_INBOUND;
	ready = 0;
	done = 0;
	st = sm_inbound_read(dev_name, &reads0, &last);
	for (i = 0; !st && i < 8; i++) {
		uint64_t ud = 0;

		st = submit_sync(&ring, devfd, &s, 0xa800 + i);
		if (st != 1)
			break;
		ready += cqe_ready(&ring) &&
			 !sm_inbound_read(dev_name, &reads1, &last) &&
			 reads1 == reads0 + i + 1;
		st = reap(&ring, &ud, bound_ms(60000));
		done += st == 0 && ud == 0xa800 + (uint64_t)i;
	}
	st = st ?: sm_inbound_read(dev_name, &reads1, &last);
	ktap_result(st == 0 && ready == 8 && done == 8 && reads1 == reads0 + 8,
		    "a region's inbound flush runs at issue: 8 times its CQE (res 0, its user_data) posted and its RDMA READ counted in debugfs inbound when io_uring_submit() returned (%d ready, %d done, READs %llu -> %llu: %s)",
		    ready, done, (unsigned long long)reads0,
		    (unsigned long long)reads1, errstr(st));
	smnl_unregister(&nl, region);
	munmap(buf, 4 * page);
}

/* 8 in flight on 8 slow clients: all pending at once, each its user_data. */
static void test_in_flight(void)
{
	struct ib_sync_mem_uring_sync s = { .dir = TO_DEV };
	int ids[8], seen[8] = { 0 }, i, n = 0, ok = 1, st, bad = 0;
	long pending = -1;
	char name[32];
	uint64_t ud;

	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "uring-slow-%d", i);
		ids[i] = new_sim(name, 400000, 0);
		ok &= ids[i] > 0;
	}
	if (!ktap_result(ok, "8 sim clients whose syncs take 400 ms"))
		return;
	for (i = 0; i < 8; i++) {
		s.id = ids[i];
		ok &= prep(&ring, devfd, IB_SYNC_MEM_URING_CMD_SYNC, &s, sizeof(s),
			   0x8000 + i) != NULL;
	}
	st = io_uring_submit(&ring);
	pending = sm_debugfs_key("counters", "fences_pending");
	ktap_result(ok && st == 8 && pending == 8 && !cqe_ready(&ring),
		    "8 submitted in one io_uring_enter(): 8 pending at once (fences_pending %ld), no CQE yet (submit %d)",
		    pending, st);
	for (i = 0; i < 8; i++) {
		st = reap(&ring, &ud, bound_ms(60000));
		if (st == -ETIME)
			break;
		n++;
		if (st || ud < 0x8000 || ud >= 0x8008 || seen[ud - 0x8000]++)
			bad++;
	}
	for (i = 0; i < 8; i++)
		bad += syncs_of(ids[i]) != 1;
	ktap_result(n == 8 && !bad,
		    "8 CQEs, res 0, each user_data once, each client synced once (%d reaped, %d wrong)",
		    n, bad);
	for (i = 0; i < 8; i++)
		smnl_unregister(&nl, ids[i]);
}

static void test_batch(uint32_t fast, uint32_t fast2)
{
	struct ib_sync_mem_ioc_entry e[3] = { { .id = fast }, { .id = fast2 }, { .id = fast } };
	struct ib_sync_mem_uring_batch b = {
		.entries = (uintptr_t)e, .n = 3, .dir = TO_DEV,
	};
	uint64_t b1 = syncs_of(fast), b2 = syncs_of(fast2);
	int bfail = new_sim("uring-batch-fail", 0, 1);
	int st;

	st = ring_batch(&b);
	ktap_result(st == 0 && syncs_of(fast) == b1 + 2 && syncs_of(fast2) == b2 + 1,
		    "a batch of 3 through the ring: cqe res 0, each entry synced (%s)", errstr(st));
	if (!ktap_result(bfail > 0, "a sim client whose next sync fails (%d)", bfail))
		return;
	e[1].id = bfail;
	st = ring_batch(&b);
	ktap_result(st == -EIO && syncs_of(fast) == b1 + 4,
		    "a batch whose second entry fails: cqe res -EIO, the others ran (%s)", errstr(st));
	smnl_unregister(&nl, bfail);
}

/*
 * A region's sync runs at issue only without an in-fence: with one it
 * waits as any other (no CQE when io_uring_submit() returned, no sync,
 * while @slow's 1 s sync is pending), and a failed one is its result.
 */
static void in_fence_region(uint32_t slow, uint32_t failing)
{
	struct ib_sync_mem_uring_sync s = {
		.dir = TO_DEV, .flags = IB_SYNC_MEM_IOC_F_IN_FENCE,
	};
	long page = sysconf(_SC_PAGESIZE);
	uint64_t before, ud = 0;
	int f, st, held = 0, region;
	char *buf;

	buf = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	region = buf == MAP_FAILED ? -ENOMEM :
		 smnl_register_region(&nl, dev_name, "uring-in-region", (uintptr_t)buf,
				      page, IB_SYNC_MEM_REGION_F_WRITE);
	if (!ktap_result(region > 0, "a one-page region client (%d)", region))
		return;
	s.id = region;
	before = syncs_of(region);
	f = fence_of(slow);
	s.in_fence = f;
	st = f < 0 ? f : submit_sync(&ring, devfd, &s, 0x2f);
	if (f >= 0)
		close(f);
	if (st == 1) {
		held = !cqe_ready(&ring) && syncs_of(region) == before;
		st = reap(&ring, &ud, bound_ms(60000));
	}
	ktap_result(st == 0 && ud == 0x2f && held && syncs_of(region) == before + 1,
		    "a region's sync after the fence of a 1 s sync: not run at issue (no CQE, no sync when submitted), then res 0 and one sync (%s, held %d)",
		    errstr(st), held);
	f = fence_of(failing);
	s.in_fence = f;
	before = syncs_of(region);
	st = f < 0 ? f : ring_sync(&s);
	if (f >= 0)
		close(f);
	ktap_result(st == -EIO && syncs_of(region) == before,
		    "a region's sync after an in-fence that failed with EIO: cqe res -EIO, no sync ran (%s)",
		    errstr(st));
	smnl_unregister(&nl, region);
	munmap(buf, page);
}

/* An in-fence holds the command; a failed one is the command's result. */
static void test_in_fence(uint32_t fast, uint32_t failing)
{
	struct ib_sync_mem_uring_sync s = {
		.id = fast, .dir = TO_DEV, .flags = IB_SYNC_MEM_IOC_F_IN_FENCE,
	};
	int slow = new_sim("uring-in-slow", 1000000, 0);
	uint64_t before = syncs_of(fast), ud = 0;
	int f, st, held, fst;

	if (!ktap_result(slow > 0, "a sim client whose sync takes 1 s (%d)", slow))
		return;
	f = fence_of(slow);
	s.in_fence = f;
	st = f < 0 ? f : submit_sync(&ring, devfd, &s, 0x1f);
	if (f >= 0)
		close(f);	/* looked up at issue: the command holds it */
	usleep(300000);
	held = !cqe_ready(&ring) && syncs_of(fast) == before;
	st = st == 1 ? reap(&ring, &ud, bound_ms(60000)) : st;
	fst = syncs_of(slow) == 1;
	ktap_result(st == 0 && ud == 0x1f && held && fst && syncs_of(fast) == before + 1,
		    "a command after the fence of a 1 s sync (its fd closed after submit): no CQE while it is pending, then res 0 after it (%s, held %d)",
		    errstr(st), held);
	/* An in-fence that signals with an error: the command's, no sync. */
	f = fence_of(failing);
	s.in_fence = f;
	before = syncs_of(fast);
	st = f < 0 ? f : ring_sync(&s);
	if (f >= 0)
		close(f);
	ktap_result(st == -EIO && syncs_of(fast) == before,
		    "an in-fence that failed with EIO: cqe res -EIO, no sync ran (%s)", errstr(st));
	in_fence_region(slow, failing);
	smnl_unregister(&nl, slow);
}

/* Bad input: each cqe res, and the same request's ioctl answer. */
static void test_bad_input(uint32_t id, uint32_t fast2)
{
	struct ib_sync_mem_uring_sync s;
	struct ib_sync_mem_uring_batch b;
	struct ib_sync_mem_ioc_entry e = { .id = id }, *big;
	struct io_uring small;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	uint64_t before = syncs_of(id);
	struct {
		const char *what;
		struct ib_sync_mem_uring_sync s;
		int want;
	} cases[] = {
		{ "direction 0", { .id = id, .dir = 0 }, -EINVAL },
		{ "direction 9", { .id = id, .dir = 9 }, -EINVAL },
		{ "an unknown flag", { .id = id, .dir = 1, .flags = 1u << 7 }, -EINVAL },
		{ "timeout_ms past the most", { .id = id, .dir = 1,
		  .timeout_ms = IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS + 1 }, -EINVAL },
		{ "an unknown id", { .id = 0x7fffff00, .dir = 1 }, -ENOENT },
		{ "an offset without a length", { .id = id, .dir = 1, .offset = 64 }, -EINVAL },
		{ "a range past the client", { .id = id, .dir = 1, .len = 1ULL << 40 }, -ERANGE },
		{ "in_fence not an open fd", { .id = id, .dir = 1,
		  .flags = IB_SYNC_MEM_IOC_F_IN_FENCE, .in_fence = 1000 }, -EBADF },
		{ "in_fence not a sync_file (/dev/null)", { .id = id, .dir = 1,
		  .flags = IB_SYNC_MEM_IOC_F_IN_FENCE, .in_fence = null }, -EINVAL },
	};
	unsigned int i;
	int st, io;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st = ring_sync(&cases[i].s);
		io = ioctl_sync(&cases[i].s);
		ktap_result(st == cases[i].want && io == st,
			    "%s: cqe res %s, as the ioctl's (%s; ioctl %s)", cases[i].what,
			    errstr(cases[i].want), errstr(st), errstr(io));
	}
	close(null);
	s = (struct ib_sync_mem_uring_sync){ .id = id, .dir = 1, .flags = IB_SYNC_MEM_IOC_F_ASYNC };
	st = ring_sync(&s);
	ktap_result(st == -EINVAL, "IB_SYNC_MEM_IOC_F_ASYNC in a ring command: -EINVAL (%s)",
		    errstr(st));
	s = (struct ib_sync_mem_uring_sync){ .id = id, .dir = 1, .reserved = 1 };
	st = ring_sync(&s);
	ktap_result(st == -EINVAL, "a nonzero reserved field: -EINVAL (%s)", errstr(st));
	s = (struct ib_sync_mem_uring_sync){ .id = id, .dir = 1 };
	st = prep(&ring, devfd, _IOW(IB_SYNC_MEM_IOC_MAGIC, 0x4f, struct ib_sync_mem_uring_sync),
		  &s, sizeof(s), 0x99) ? io_uring_submit(&ring) : -EBUSY;
	st = st == 1 ? reap(&ring, NULL, bound_ms(60000)) : st;
	ktap_result(st == -ENOTTY, "an unknown cmd_op: -ENOTTY (%s)", errstr(st));
	st = ring_init(&small, 0);
	if (!st) {
		st = submit_sync(&small, devfd, &s, 1);
		st = st == 1 ? reap(&small, NULL, bound_ms(60000)) : st;
		io_uring_queue_exit(&small);
	}
	ktap_result(st == -EINVAL, "a ring without IORING_SETUP_SQE128: -EINVAL (%s)", errstr(st));

	b = (struct ib_sync_mem_uring_batch){ .entries = (uintptr_t)&e, .n = 0, .dir = 1 };
	st = ring_batch(&b);
	ktap_result(st == -EINVAL, "an empty batch: -EINVAL (%s)", errstr(st));
	big = calloc(IB_SYNC_MEM_SYNC_BATCH_MAX + 1, sizeof(*big));
	for (i = 0; big && i <= IB_SYNC_MEM_SYNC_BATCH_MAX; i++)
		big[i].id = id;
	b.entries = (uintptr_t)big;
	b.n = IB_SYNC_MEM_SYNC_BATCH_MAX + 1;
	st = big ? ring_batch(&b) : -ENOMEM;
	ktap_result(st == -EINVAL, "a batch of %d: -EINVAL (%s)", IB_SYNC_MEM_SYNC_BATCH_MAX + 1,
		    errstr(st));
	free(big);
	b = (struct ib_sync_mem_uring_batch){ .entries = 0, .n = 1, .dir = 1 };
	st = ring_batch(&b);
	ktap_result(st == -EFAULT, "a batch at a bad address: -EFAULT (%s)", errstr(st));
	{
		struct ib_sync_mem_ioc_entry two[2] = { { .id = fast2 }, { .id = 0x7fffff00 } };
		uint64_t b2 = syncs_of(fast2);

		b = (struct ib_sync_mem_uring_batch){ .entries = (uintptr_t)two, .n = 2, .dir = 1 };
		st = ring_batch(&b);
		ktap_result(st == -ENOENT && syncs_of(fast2) == b2,
			    "a batch naming an unknown id: -ENOENT, nothing run (%s)", errstr(st));
	}
	b = (struct ib_sync_mem_uring_batch){ .entries = (uintptr_t)&e, .n = 1, .dir = 1,
		.timeout_ms = IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS + 1 };
	st = ring_batch(&b);
	ktap_result(st == -EINVAL, "a batch with timeout_ms past the most: -EINVAL (%s)",
		    errstr(st));
	ktap_result(syncs_of(id) == before, "bad input ran no sync (syncs %llu, before %llu)",
		    (unsigned long long)syncs_of(id), (unsigned long long)before);
}

/*
 * An unprivileged file's ring: its own client (a region it created over
 * its pages) synced and flushed inbound; another file's client -ENOENT.
 */
static void test_permission(uint32_t id)
{
	int rc = -1, st;
	pid_t pid = fork();

	if (!pid) {
		struct ib_sync_mem_uring_sync s = { .id = id, .dir = 1 };
		struct ib_sync_mem_ioc_sync r = { .id = id, .dir = 1 };
		struct ib_sync_mem_ioc_entry e = { .id = id };
		struct ib_sync_mem_uring_batch b = {
			.entries = (uintptr_t)&e, .n = 1, .dir = 1,
		};
		long page = sysconf(_SC_PAGESIZE);
		struct io_uring r2;
		int fd, own;
		void *mem;

		if (sm_drop_caps())
			_exit(10);
		fd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
		if (fd < 0 || ring_init(&r2, IORING_SETUP_SQE128))
			_exit(11);
		if (ioc(fd, IB_SYNC_MEM_IOC_SYNC, &r) != -ENOENT)
			_exit(12);
		if (submit_sync(&r2, fd, &s, 1) != 1 || reap(&r2, NULL, 60000) != -ENOENT)
			_exit(13);
		if (submit_batch(&r2, fd, &b, 2) != 1 || reap(&r2, NULL, 60000) != -ENOENT)
			_exit(14);
		mem = mmap(NULL, page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		own = mem == MAP_FAILED ? -ENOMEM :
		      sm_lib_region(fd, dev_name, "uring-own-region", mem, page,
				    SYNCMEM_REGION_WRITE, 0, NULL, 0);
		if (own <= 0)
			_exit(15);
		s.id = own;
		s.dir = TO_DEV;
		if (submit_sync(&r2, fd, &s, 3) != 1 || reap(&r2, NULL, 60000) != 0)
			_exit(16);
		s.dir = IB_SYNC_MEM_SYNC_INBOUND;
		if (submit_sync(&r2, fd, &s, 4) != 1 || reap(&r2, NULL, 60000) != 0)
			_exit(17);
		e.id = own;
		b.dir = TO_DEV;
		if (submit_batch(&r2, fd, &b, 5) != 1 || reap(&r2, NULL, 60000) != 0)
			_exit(18);
		_exit(0);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		rc = WEXITSTATUS(st);
	ktap_result(rc == 0,
		    "an unprivileged file's ring: another file's client is -ENOENT to SYNC and SYNC_BATCH, as to the ioctl; a region it created synced, flushed inbound and batched, 0 each (child exit %d: 10-11 set-up, 12 ioctl, 13-14 ring refusals, 15 CREATE, 16-18 its own client)",
		    rc);
}

#define TRACEFS	"/sys/kernel/debug/tracing"

/* io_uring's io_uring_complete tracepoint on (1) or off (0), the trace emptied. */
static int trace_complete(int on)
{
	int fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return debugfs_write_at(TRACEFS "/events/io_uring/io_uring_complete",
				"enable", on ? "1" : "0");
}

/* CQEs the trace shows for user_data 0xca0 to 0xca4 with result @res. */
static int traced_cqes(int res)
{
	char line[512], want[32];
	FILE *f = fopen(TRACEFS "/trace", "r");
	int n = 0;

	if (!f)
		return -errno;
	snprintf(want, sizeof(want), "result %d,", res);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "io_uring_complete") && strstr(line, "user_data 0xca") &&
		    strstr(line, want))
			n++;
	fclose(f);
	return n;
}

/*
 * The device file closed with commands pending: they complete as usual.
 * The ring closed with commands pending (in a child that exits): nothing
 * is left once their syncs ended.
 */
static void test_close(void)
{
	struct ib_sync_mem_uring_sync s = { .dir = TO_DEV };
	int slow = new_sim("uring-close-slow", 300000, 0), fd, i, st, n = 0, bad = 0;
	int tr, cancelable;
	long fences;
	pid_t pid;

	if (!ktap_result(slow > 0, "a sim client whose syncs take 300 ms (%d)", slow))
		return;
	fd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	s.id = slow;
	for (i = 0; fd >= 0 && i < 4; i++)
		prep(&ring, fd, IB_SYNC_MEM_URING_CMD_SYNC, &s, sizeof(s), 0xc0 + i);
	st = fd >= 0 ? io_uring_submit(&ring) : -errno;
	if (fd >= 0)
		close(fd);
	for (i = 0; st == 4 && i < 4; i++) {
		st = reap(&ring, NULL, bound_ms(60000));
		n += st != -ETIME;
		bad += st != 0;
		st = 4;
	}
	ktap_result(n == 4 && !bad,
		    "4 commands on a /dev/ib_sync_mem fd closed right after submit: all complete, res 0 (%d, %d wrong)",
		    n, bad);

	tr = trace_complete(1);
	pid = fork();
	if (!pid) {
		struct ib_sync_mem_uring_sync w = {
			.dir = TO_DEV, .flags = IB_SYNC_MEM_IOC_F_IN_FENCE,
		};
		struct io_uring r2;
		int f;

		if (ring_init(&r2, IORING_SETUP_SQE128))
			_exit(10);
		s.id = slow;
		for (i = 0; i < 4; i++)
			prep(&r2, devfd, IB_SYNC_MEM_URING_CMD_SYNC, &s, sizeof(s), 0xca0 + i);
		f = fence_of(slow);
		w.id = slow;
		w.in_fence = f;
		prep(&r2, devfd, IB_SYNC_MEM_URING_CMD_SYNC, &w, sizeof(w), 0xca4);
		if (f < 0 || io_uring_submit(&r2) != 5)
			_exit(11);
		/* The ring goes with the program, its commands pending. */
		_exit(0);
	}
	st = wait_child(pid, bound_ms(60000));
	ktap_result(st == 0, "a program exits with 5 commands pending on its ring (wait status %d)",
		    st);
	fences = -1;
	st = wait_for(bound_ms(30000),
		      (fences = sm_debugfs_key("counters", "fences")) == 0 &&
		      sm_debugfs_key("counters", "fences_pending") == 0);
	ktap_result(st, "then every fence signalled and freed: nothing left (fences %ld)", fences);
	/*
	 * How they ended (io_uring's io_uring_complete tracepoint): cancelled
	 * at the task's exit where io_uring can ask (6.7 and later), their
	 * normal completion, each once, where it cannot (6.1).
	 */
	cancelable = kernel_at_least(6, 7);
	n = traced_cqes(cancelable ? -ECANCELED : 0);
	bad = traced_cqes(cancelable ? 0 : -ECANCELED);
	trace_complete(0);
	ktap_result(tr == 0 && n == 5 && bad == 0,
		    "the 5 commands completed once each with %s (io_uring_complete: %d, %d otherwise; tracing %s)",
		    cancelable ? "-ECANCELED, cancelled at the exit" : "0, their syncs' results (6.1: no cancelable commands)",
		    n, bad, errstr(tr));
	smnl_unregister(&nl, slow);
}

/* A device removed while a command waits for its in-fence: -ENODEV. */
static void test_removal(void)
{
	struct ib_sync_mem_uring_sync s = {
		.dir = TO_DEV, .flags = IB_SYNC_MEM_IOC_F_IN_FENCE,
	};
	char cmd[160];
	int slow = -1, waiter = -1, f = -1, st, tries;
	uint64_t ud = 0;

	snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s", spare_dev, spare_net);
	st = system(cmd);
	/* The module attaches to the new device soon after. */
	for (tries = 0; st == 0 && tries < 100 && slow <= 0; tries++) {
		slow = new_sim_on(spare_dev, "uring-removal-slow", 3000000, 0);
		if (slow <= 0)
			usleep(100000);
	}
	waiter = slow > 0 ? new_sim_on(spare_dev, "uring-removal-waiter", 0, 0) : -1;
	if (!ktap_result(st == 0 && slow > 0 && waiter > 0,
			 "%s added; on it a sim client whose sync takes 3 s, and another (%d %d %d)",
			 spare_dev, st, slow, waiter))
		return;
	f = fence_of(slow);
	s.id = waiter;
	s.in_fence = f;
	st = f < 0 ? f : submit_sync(&ring, devfd, &s, 0xdead);
	usleep(200000);
	ktap_result(st == 1 && !cqe_ready(&ring),
		    "a command waits for the in-fence of the 3 s sync (%d)", st);
	snprintf(cmd, sizeof(cmd), "rdma link delete %s", spare_dev);
	st = system(cmd);
	st = st ? -EPROTO : reap(&ring, &ud, bound_ms(60000));
	ktap_result(st == -ENODEV && ud == 0xdead && syncs_of(waiter) != 1,
		    "%s removed: the waiting command completes with -ENODEV, its sync never ran (%s)",
		    spare_dev, errstr(st));
	if (f >= 0) {
		sync_file_wait(f, bound_ms(60000));
		close(f);
	}
	smnl_unregister(&nl, slow);
	smnl_unregister(&nl, waiter);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "uring_dev: %s: %s\n", what, errstr(err));
	exit(1);
}

/*
 * Before a timed phase: a pause in which the work the phases before it
 * left behind runs (RCU callbacks freeing their jobs' fences, work items),
 * so that it is not counted to this one. The guest is idle meanwhile: on
 * the instruction clock a pause costs no instructions of the phase.
 */
static void settle(void)
{
	usleep(100000);
}

/* ns per blocking SYNC ioctl of @id in @dir. */
static double bench_ioctl(uint32_t id, uint32_t dir, int iters)
{
	struct ib_sync_mem_ioc_sync r = { .id = id, .dir = dir };
	int i, st;
	double t0;

	settle();
	t0 = now_ms();

	for (i = 0; i < iters; i++) {
		st = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);
		if (st)
			die("ioctl SYNC", st);
	}
	return (now_ms() - t0) * 1e6 / iters;
}

/* ns per completed ring SYNC of @id in @dir, @depth kept in flight. */
static double bench_ring(uint32_t id, uint32_t dir, int iters, int depth)
{
	struct ib_sync_mem_uring_sync s = { .id = id, .dir = dir };
	struct io_uring_cqe *cqe;
	int sub = 0, done = 0, st;
	double t0;

	settle();
	t0 = now_ms();

	while (done < iters) {
		while (sub - done < depth && sub < iters) {
			if (!prep(&ring, devfd, IB_SYNC_MEM_URING_CMD_SYNC, &s,
				  sizeof(s), sub))
				die("no SQE", -EBUSY);
			sub++;
		}
		st = io_uring_submit_and_wait(&ring, 1);
		if (st < 0)
			die("io_uring_submit_and_wait", st);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res)
				die("ring SYNC", cqe->res);
			io_uring_cqe_seen(&ring, cqe);
			done++;
		}
	}
	return (now_ms() - t0) * 1e6 / iters;
}

static int bench(int iters)
{
	long page = sysconf(_SC_PAGESIZE);
	double is, rs, ii, ri, r1s, r1i, ig, rg, r1g;
	int sim, region;
	char *buf;

	sim = new_sim("uring-bench-sim", 0, 0);
	buf = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	region = buf == MAP_FAILED ? -ENOMEM :
		 smnl_register_region(&nl, dev_name, "uring-bench-region",
				      (uintptr_t)buf, page, IB_SYNC_MEM_REGION_F_WRITE);
	if (sim <= 0 || region <= 0)
		die("bench clients", sim <= 0 ? sim : region);
	/* Warm both paths up, then measure (each phase after a pause). */
	bench_ioctl(sim, TO_DEV, iters / 10 + 1);
	bench_ring(sim, TO_DEV, iters / 10 + 1, 8);
	is = bench_ioctl(sim, TO_DEV, iters);
	rs = bench_ring(sim, TO_DEV, iters, 8);
	r1s = bench_ring(sim, TO_DEV, iters, 1);
	bench_ioctl(region, TO_DEV, iters / 10 + 1);
	bench_ring(region, TO_DEV, iters / 10 + 1, 8);
	ig = bench_ioctl(region, TO_DEV, iters);
	rg = bench_ring(region, TO_DEV, iters, 8);
	r1g = bench_ring(region, TO_DEV, iters, 1);
	ii = bench_ioctl(region, IB_SYNC_MEM_SYNC_INBOUND, iters);
	ri = bench_ring(region, IB_SYNC_MEM_SYNC_INBOUND, iters, 8);
	r1i = bench_ring(region, IB_SYNC_MEM_SYNC_INBOUND, iters, 1);
	printf("uring iters=%d ioctl_sync_ns=%.0f ring8_sync_ns=%.0f ring1_sync_ns=%.0f ioctl_region_ns=%.0f ring8_region_ns=%.0f ring1_region_ns=%.0f ioctl_inbound_ns=%.0f ring8_inbound_ns=%.0f ring1_inbound_ns=%.0f\n",
	       iters, is, rs, r1s, ig, rg, r1g, ii, ri, r1i);
	smnl_unregister(&nl, sim);
	smnl_unregister(&nl, region);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "spare", required_argument, NULL, 's' },
		{ "bench", required_argument, NULL, 'b' },
		{ 0 }
	};
	int fast, fast2, failing, o, st, iters = 0;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'd') {
			dev_name = optarg;
		} else if (o == 's' &&
			   sscanf(optarg, "%31[^,],%31s", spare_dev, spare_net) == 2) {
			continue;
		} else if (o == 'b' && sscanf(optarg, "%d", &iters) == 1 && iters > 0) {
			continue;
		} else {
			fprintf(stderr, "usage: uring_dev [--dev DEV] [--spare RXE,NETDEV] [--bench ITERS]\n");
			return 2;
		}
	}
	if (iters) {
		devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
		st = devfd < 0 ? -errno : ring_init(&ring, IORING_SETUP_SQE128);
		st = st ?: smnl_open(&nl);
		if (st)
			die("set-up", st);
		return bench(iters);
	}
	ktap_start();
	if (smnl_open(&nl)) {
		ktap_result(0, "netlink: the ib_sync_mem family");
		return ktap_finish();
	}
	devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	st = devfd < 0 ? -errno : ring_init(&ring, IORING_SETUP_SQE128);
	if (!ktap_result(st == 0, "open /dev/%s and an io_uring with 128-byte SQEs (%s)",
			 IB_SYNC_MEM_DEV_NAME, errstr(st)))
		return ktap_finish();
	fast = new_sim("uring-fast", 0, 0);
	fast2 = new_sim("uring-fast2", 0, 0);
	failing = new_sim("uring-fail", 0, 100);
	if (!ktap_result(fast > 0 && fast2 > 0 && failing > 0,
			 "three sim clients on %s, one failing its syncs with EIO (%d %d %d)",
			 dev_name, fast, fast2, failing))
		return ktap_finish();
	test_sync(fast, failing);
	test_in_flight();
	test_batch(fast, fast2);
	test_in_fence(fast, failing);
	test_bad_input(fast, fast2);
	test_permission(fast);
	test_close();
	test_removal();
	io_uring_queue_exit(&ring);
	smnl_unregister(&nl, fast);
	smnl_unregister(&nl, fast2);
	smnl_unregister(&nl, failing);
	close(devfd);
	return ktap_finish();
}
