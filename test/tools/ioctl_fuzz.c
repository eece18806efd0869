// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl_fuzz: random requests to /dev/ib_sync_mem (test/vm/65-fuzz.sh), as
 * KTAP. Each request is one of the device's ioctls (or an unknown number)
 * with its fields drawn from values that matter (ids of live, deleted and
 * unknown clients; directions 0 to 5; every flag bit; fds of fences, of
 * the device itself, of a pipe, closed and negative; ranges inside, across
 * and past a client; timeouts; bad pointers; CREATE's attributes, well
 * formed or not, and its reason buffer). Invariants:
 *
 *   - every ioctl returns 0 or an errno the UAPI documents for it
 *   - a refused CREATE's reason is NUL-terminated inside its buffer and
 *     writes nothing past it; every client CREATE made is gone once the
 *     file is closed
 *   - every fence returned signals, with status 1 or a documented errno
 *   - the module keeps answering: a last NOP and a valid sync succeed
 *   - at the end no fence is pending and, once every fd is closed, none
 *     is left (the registry's counters fences_pending and fences)
 *
 *   ioctl_fuzz [--dev rxe0] [--seed N] [--count N]
 *
 * Needs ib_sync_mem and ib_sync_mem_sim loaded, root with CAP_NET_ADMIN.
 * The seed is printed; the same seed replays the same requests.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <linux/ib_sync_mem.h>
#include <linux/ib_sync_mem_dev.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "ktap.h"
#include "smdebugfs.h"
#include "smnl.h"
#include "smnl_raw.h"
#include "syncfile.h"

#define FUZZ_FENCES	64	/* fences held at once, then waited for */

static struct smnl nl;
static int devfd, pipefd[2], closedfd;
static uint32_t ids[4];		/* live sims; the last one is deleted */
static uint64_t rng;
static int fences[FUZZ_FENCES], nfences;
static unsigned long bad, made, by_errno[256];
static unsigned long created;		/* clients CREATE made */
static const char *dev_name = "rxe0";
static void *pages;			/* 4 pages a region may pin */

static uint64_t rnd(void)
{
	/* xorshift64 */
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t pick_id(void)
{
	switch (rnd() % 4) {
	case 0:
		return ids[rnd() % 4];
	case 1:
		return (uint32_t)rnd();
	case 2:
		return 0;
	default:
		return ids[rnd() % 3];
	}
}

static int pick_fd(void)
{
	switch (rnd() % 7) {
	case 0:
		return nfences ? fences[rnd() % nfences] : -1;
	case 1:
		return devfd;
	case 2:
		return pipefd[rnd() % 2];
	case 3:
		return closedfd;
	case 4:
		return -1;
	case 5:
		return (int)(rnd() % 4096);
	default:
		return nfences ? fences[nfences - 1] : -1;
	}
}

static uint64_t pick_u64(void)
{
	switch (rnd() % 5) {
	case 0:
		return 0;
	case 1:
		return (rnd() % 64) * 64;
	case 2:
		return 1ULL << (rnd() % 64);
	case 3:
		return rnd();
	default:
		return 4096 - 64;
	}
}

/* The errnos the UAPI documents for the device's ioctls (and a sync's). */
static int documented(int e)
{
	switch (e) {
	case 0: case EINVAL: case ERANGE: case ENOENT: case ENODEV: case EBADF:
	case EOPNOTSUPP: case ENOTTY: case EFAULT: case ETIMEDOUT: case EIO:
	case ENXIO: case EMFILE: case ENOMEM: case EBUSY: case EPERM:
	case E2BIG: case ENOSPC:
		return 1;
	}
	return 0;
}

static void keep_fence(int fd)
{
	if (fd < 0)
		return;
	made++;
	if (nfences == FUZZ_FENCES) {
		close(fences[0]);
		memmove(fences, fences + 1, (FUZZ_FENCES - 1) * sizeof(int));
		nfences--;
	}
	fences[nfences++] = fd;
}

/* Wait for every held fence, check its status, close it. */
static void drain_fences(void)
{
	int i, st;

	for (i = 0; i < nfences; i++) {
		st = sync_file_wait(fences[i], bound_ms(60000));
		if (!st) {
			ktap_diag("fence fd %d never signalled", fences[i]);
			bad++;
		} else if (st != 1 && !(st < 0 && documented(-st))) {
			ktap_diag("fence fd %d: status %d", fences[i], st);
			bad++;
		}
		close(fences[i]);
	}
	nfences = 0;
}

/*
 * CREATE's attributes in @m: mostly those of a sim or a region client,
 * each left out, doubled or of a wrong value at times; sometimes bytes.
 */
static void fuzz_attrs(struct smnl_msg *m)
{
	static const uint32_t kinds[] = {
		IB_SYNC_MEM_KIND_SIM, IB_SYNC_MEM_KIND_REGION,
		IB_SYNC_MEM_KIND_DMABUF, 0, 0x7fff,
	};
	uint32_t kind = kinds[rnd() % 5];
	unsigned int i, n;
	size_t nest;

	smnl_msg_init_family(m, 0, 0, 0, 0);
	if (rnd() % 8 == 0) {
		n = rnd() % 256;
		for (i = 0; i < n; i++)
			m->buf[m->len + i] = rnd();
		m->len += n;
		return;
	}
	if (rnd() % 8)
		smnl_put_str(m, IB_SYNC_MEM_A_CLIENT_NAME, rnd() % 16 ? "fuzz-made" : "");
	if (rnd() % 8)
		smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_KIND, kind);
	if (rnd() % 8)
		smnl_put_str(m, IB_SYNC_MEM_A_DEV_NAME, rnd() % 8 ? dev_name : "nosuchdev0");
	else if (rnd() % 2)
		smnl_put_u32(m, IB_SYNC_MEM_A_DEV_INDEX, rnd() % 4);
	if (rnd() % 2)
		smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_FLAGS, rnd() % 4 ? rnd() % 4 : (uint32_t)rnd());
	if (kind == IB_SYNC_MEM_KIND_SIM && rnd() % 2) {
		/* No latency: a device's pass runs every client made. */
		nest = smnl_nest_start(m, IB_SYNC_MEM_A_SIM);
		smnl_put_u64(m, IB_SYNC_MEM_A_SIM_SIZE, pick_u64());
		if (rnd() % 2)
			smnl_put_u32(m, IB_SYNC_MEM_A_SIM_FAIL_NEXT, rnd() % 4);
		smnl_nest_end(m, nest);
	} else if (kind == IB_SYNC_MEM_KIND_REGION && rnd() % 4) {
		nest = smnl_nest_start(m, IB_SYNC_MEM_A_REGION);
		smnl_put_u64(m, IB_SYNC_MEM_A_REGION_ADDR,
			     rnd() % 4 ? (uintptr_t)pages + 4096 * (rnd() % 4) : pick_u64());
		smnl_put_u64(m, IB_SYNC_MEM_A_REGION_LEN, rnd() % 4 ? 4096 * (rnd() % 5) : pick_u64());
		smnl_nest_end(m, nest);
	}
	if (rnd() % 16 == 0)	/* an attribute of another command */
		smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_ID, rnd());
}

/* One CREATE through devfd, its reason checked; its errno. */
static int fuzz_create(void)
{
	static struct smnl_msg m;
	char msg[64 + 16];
	struct ib_sync_mem_ioc_create c = { 0 };
	unsigned int i;
	size_t len;
	int ret, e;

	fuzz_attrs(&m);
	c.attrs = (uintptr_t)smnl_msg_attrs(&m, &len);
	c.attrs_len = len;
	if (rnd() % 16 == 0)
		c.attrs_len = rnd() % 2 ? IB_SYNC_MEM_IOC_ATTRS_MAX + rnd() % 8 : (uint32_t)rnd();
	if (rnd() % 32 == 0)
		c.attrs = rnd() % 2 ? 0 : rnd();
	c.flags = rnd() % 16 ? 0 : (uint32_t)rnd();
	c.msg_len = rnd() % 4 ? 64 : rnd() % 4;
	c.msg = rnd() % 8 ? (uintptr_t)msg : rnd() % 2 ? 0 : 16;
	memset(msg, 'x', sizeof(msg));
	ret = ioctl(devfd, IB_SYNC_MEM_IOC_CREATE, &c);
	e = ret ? errno : 0;
	if (!ret) {
		created++;
		return 0;
	}
	if (c.msg != (uintptr_t)msg || !c.msg_len)
		return e;
	for (i = c.msg_len; i < sizeof(msg); i++)
		if (msg[i] != 'x')
			break;
	if (!memchr(msg, 0, c.msg_len) || i < sizeof(msg)) {
		ktap_diag("CREATE: %s, its reason not NUL-terminated inside %u bytes, or written past them",
			  strerror(e), c.msg_len);
		bad++;
	}
	return e;
}

static void one(void)
{
	unsigned int which = rnd() % 8;
	struct ib_sync_mem_ioc_entry ent[4];
	union {
		struct ib_sync_mem_ioc_sync s;
		struct ib_sync_mem_ioc_sync_dev d;
		struct ib_sync_mem_ioc_sync_batch b;
		struct ib_sync_mem_ioc_mark m;
		struct ib_sync_mem_ioc_own o;
		unsigned char raw[64];
	} u;
	unsigned long cmd;
	void *arg = &u;
	int ret, e, i;

	for (i = 0; i < (int)sizeof(u.raw); i++)
		u.raw[i] = rnd();
	switch (which) {
	case 0:
		cmd = IB_SYNC_MEM_IOC_SYNC;
		u.s.id = pick_id();
		u.s.dir = rnd() % 6;
		/* Half whole, half ranges of every kind. */
		u.s.offset = rnd() % 2 ? 0 : pick_u64();
		u.s.len = u.s.offset || rnd() % 2 ? pick_u64() : 0;
		/* Mostly async, the in-fence a quarter of the time. */
		u.s.flags = rnd() % 4 ? IB_SYNC_MEM_IOC_F_ASYNC : 0;
		if (rnd() % 4 == 0)
			u.s.flags |= IB_SYNC_MEM_IOC_F_IN_FENCE;
		if (rnd() % 8 == 0)
			u.s.flags = (uint32_t)rnd();
		u.s.timeout_ms = rnd() % 3 ? 0 : rnd() % 100;
		u.s.in_fence = pick_fd();
		break;
	case 1:
		cmd = IB_SYNC_MEM_IOC_SYNC_DEV;
		u.d.dev_index = rnd() % 4 ? 1 + rnd() % 3 : (uint32_t)rnd();
		u.d.dir = rnd() % 6;
		u.d.flags = rnd() % 4 ? IB_SYNC_MEM_IOC_F_ASYNC : 0;
		if (rnd() % 4 == 0)
			u.d.flags |= IB_SYNC_MEM_IOC_F_IN_FENCE;
		if (rnd() % 8 == 0)
			u.d.flags = (uint32_t)rnd();
		u.d.timeout_ms = rnd() % 3 ? 0 : rnd() % 100;
		u.d.in_fence = pick_fd();
		break;
	case 2:
		cmd = IB_SYNC_MEM_IOC_MARK_DIRTY;
		u.m.id = pick_id();
		u.m.dir = rnd() % 6;
		u.m.offset = pick_u64();
		u.m.len = pick_u64();
		break;
	case 3:
		cmd = IB_SYNC_MEM_IOC_NOP;
		break;
	case 4:
		cmd = IB_SYNC_MEM_IOC_SYNC_BATCH;
		for (i = 0; i < 4; i++) {
			ent[i].id = pick_id();
			ent[i].err = (int32_t)rnd();
			ent[i].offset = rnd() % 2 ? 0 : pick_u64();
			ent[i].len = ent[i].offset || rnd() % 2 ? pick_u64() : 0;
		}
		u.b.entries = rnd() % 16 ? (uintptr_t)ent : rnd() % 2 ? 0 : rnd();
		u.b.n = rnd() % 8 ? rnd() % 5 : (uint32_t)rnd();
		u.b.dir = rnd() % 6;
		u.b.flags = rnd() % 4 ? IB_SYNC_MEM_IOC_F_ASYNC : 0;
		if (rnd() % 4 == 0)
			u.b.flags |= IB_SYNC_MEM_IOC_F_IN_FENCE;
		if (rnd() % 8 == 0)
			u.b.flags = (uint32_t)rnd();
		u.b.timeout_ms = rnd() % 3 ? 0 : rnd() % 100;
		u.b.in_fence = pick_fd();
		break;
	case 5:
		/* The file takes the clients over: they die with it. */
		cmd = IB_SYNC_MEM_IOC_OWN;
		u.o.id = pick_id();
		u.o.flags = rnd() % 8 ? 0 : (uint32_t)rnd();
		break;
	case 6:
		e = fuzz_create();
		by_errno[e & 255]++;
		if (!documented(e)) {
			ktap_diag("CREATE: %s (%d)", strerror(e), e);
			bad++;
		}
		return;
	default:
		cmd = _IOC(rnd() % 4, IB_SYNC_MEM_IOC_MAGIC, rnd() % 8,
			   rnd() % 64);
	}
	if (rnd() % 50 == 0)
		arg = (void *)(uintptr_t)(rnd() % 2 ? 0 : 16);
	ret = ioctl(devfd, cmd, arg);
	e = ret ? errno : 0;
	by_errno[e & 255]++;
	if (!documented(e)) {
		ktap_diag("ioctl %#lx: %s (%d)", cmd, strerror(e), e);
		bad++;
	}
	if (!ret && arg == &u) {
		if (cmd == IB_SYNC_MEM_IOC_SYNC &&
		    (u.s.flags & IB_SYNC_MEM_IOC_F_ASYNC))
			keep_fence(u.s.out_fence);
		else if (cmd == IB_SYNC_MEM_IOC_SYNC_DEV &&
			 (u.d.flags & IB_SYNC_MEM_IOC_F_ASYNC))
			keep_fence(u.d.out_fence);
		else if (cmd == IB_SYNC_MEM_IOC_SYNC_BATCH &&
			 (u.b.flags & IB_SYNC_MEM_IOC_F_ASYNC))
			keep_fence(u.b.out_fence);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ 0 }
	};
	long count = 20000, i, n;
	uint64_t seed = 0;
	int o, e;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			dev_name = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			count = strtol(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: ioctl_fuzz [--dev DEV] [--seed N] [--count N]\n");
			return 2;
		}
	}
	if (!seed)
		seed = (uint64_t)time(NULL) * 2654435761u;
	rng = seed | 1;
	ktap_start();
	ktap_diag("ioctl_fuzz: seed %llu count %ld", (unsigned long long)seed, count);
	if (smnl_open(&nl)) {
		ktap_result(0, "netlink: the ib_sync_mem family");
		return ktap_finish();
	}
	devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (pipe(pipefd) || devfd < 0) {
		ktap_result(0, "open /dev/%s and a pipe", IB_SYNC_MEM_DEV_NAME);
		return ktap_finish();
	}
	pages = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	closedfd = open("/dev/null", O_RDONLY);
	close(closedfd);
	for (i = 0; i < 4; i++) {
		struct smnl_new req = {
			.dev = dev_name, .name = "ioctl-fuzz", .kind = IB_SYNC_MEM_KIND_SIM,
			.flags = (i == 1 ? IB_SYNC_MEM_CLIENT_F_LAZY : 0) |
				 IB_SYNC_MEM_CLIENT_F_OWNED,
			.sim_nest = 1, .sim_size = 4096, .sim_latency_us = i == 2 ? 50 : 0,
			.sim_fail_next = i == 0 ? 1000000 : 0, .sim_fail_errno = EIO,
		};

		o = smnl_register(&nl, &req);
		if (!ktap_result(o > 0, "sim client %ld on %s (%d)", i, dev_name, o))
			return ktap_finish();
		ids[i] = o;
	}
	smnl_unregister(&nl, ids[3]);	/* a deleted id */

	for (i = 0; i < count; i++) {
		one();
		if (i % 1000 == 999)
			drain_fences();
	}
	drain_fences();
	ktap_diag("ioctl_fuzz: %ld requests, %lu fences; by errno: 0=%lu EINVAL=%lu ENOENT=%lu ENODEV=%lu EBADF=%lu ERANGE=%lu ENOTTY=%lu EFAULT=%lu EIO=%lu",
		  count, made, by_errno[0], by_errno[EINVAL], by_errno[ENOENT],
		  by_errno[ENODEV], by_errno[EBADF], by_errno[ERANGE],
		  by_errno[ENOTTY], by_errno[EFAULT], by_errno[EIO]);
	ktap_result(bad == 0, "every ioctl and every fence ended with a documented result (%lu not)", bad);
	ktap_result(made > 0 && by_errno[0] > 0 && by_errno[EINVAL] > 0 && by_errno[EBADF] > 0 &&
		    created > 0,
		    "the requests reached the paths: %lu fences, %lu ok, %lu EINVAL, %lu EBADF, %lu clients created",
		    made, by_errno[0], by_errno[EINVAL], by_errno[EBADF], created);
	{
		struct ib_sync_mem_ioc_sync s = { .id = ids[2], .dir = 1 };

		e = ioctl(devfd, IB_SYNC_MEM_IOC_NOP) ? errno : 0;
		o = ioctl(devfd, IB_SYNC_MEM_IOC_SYNC, &s) ? errno : 0;
		ktap_result(!e && !o, "the module still answers: NOP %d, SYNC %d", e, o);
	}
	for (i = 0; i < 3; i++)
		smnl_unregister(&nl, ids[i]);
	close(devfd);
	{
		struct smnl_client c;

		o = smnl_client_find(&nl, "fuzz-made", &c);
		ktap_result(o == -ENOENT, "the %lu clients CREATE made went with the file (find: %d)",
			    created, o);
	}
	n = sm_debugfs_key("counters", "fences_pending");
	ktap_result(n == 0, "no fence pending: fences_pending %ld", n);
	for (i = 0; i < bound_ms(60000) / 20; i++) {
		n = sm_debugfs_key("counters", "fences");
		if (n == 0)
			break;
		usleep(20000);
	}
	ktap_result(n == 0, "every fence freed: fences %ld", n);
	smnl_close(&nl);
	return ktap_finish();
}
