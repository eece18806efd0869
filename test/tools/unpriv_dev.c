// SPDX-License-Identifier: GPL-2.0
/*
 * unpriv_dev: /dev/ib_sync_mem without CAP_NET_ADMIN (57-async runs it as
 * uid 65534, no capabilities), as KTAP. A file's own clients work end to
 * end (CREATE of regions over its pages and of sim clients, SYNC blocking,
 * ranged, inbound and asynchronous, MARK_DIRTY, SYNC_BATCH, DELETE);
 * another file's client and an administrator's are ENOENT for each of
 * them, exactly as an id that does not exist; the device-wide sync and OWN
 * are EPERM, and so are the family's mutating commands; the pages pinned
 * are charged to RLIMIT_MEMLOCK (VmPin) and refused past it; a file
 * closed while its syncs are in flight, or a program killed in one, leaves
 * no client behind.
 *
 *   unpriv_dev [--dev rxe0] --foreign ID
 *	ID: a client an administrator made through the family
 *   unpriv_dev [--dev rxe0] --limit N
 *	the module's max_clients_per_user is N (57-async sets it): N clients
 *	of this user on the device succeed across its files, the next is
 *	EMFILE with its reason, a DELETE or a closed file gives room back
 *
 * Needs ib_sync_mem, and ib_sync_mem_sim loaded with unprivileged=1.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <linux/ib_sync_mem.h>
#include <linux/ib_sync_mem_dev.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ktap.h"
#include "smlib.h"
#include "smnl.h"
#include "smnl_raw.h"
#include "syncfile.h"

#define TO_DEV	IB_SYNC_MEM_SYNC_TO_DEVICE

static const char *dev_name = "rxe0";
static struct smnl nl;
static long page;

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static int dev_open(void)
{
	return open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
}

static uint64_t syncs_of(uint32_t id)
{
	struct smnl_client c;

	return smnl_client_get(&nl, id, &c) ? ~0ULL : c.syncs;
}

/* VmPin of this process, in pages, or -1. */
static long vm_pin(void)
{
	long kb = vm_pin_kb();

	return kb < 0 ? -1 : kb * 1024 / page;
}

/*
 * CREATE through @fd of a client of @kind (a sim of @latency_us), raw: the
 * library makes regions and dma-buf clients only. Its id, or -errno with
 * the reason in @msg.
 */
static int create(int fd, const char *name, uint32_t kind,
		  uint32_t latency_us, char *msg, size_t msg_len)
{
	struct smnl_new req = {
		.dev = dev_name, .name = name, .kind = kind,
		.sim_nest = latency_us != 0,
		.sim_latency_us = latency_us,
	};

	return smnl_create(fd, &req, msg, msg_len);
}

/*
 * A region of @fd's file over @len bytes at @addr, as a program makes one
 * (libsyncmem); the device writes it: every direction, inbound too.
 */
static int new_region(int fd, const char *name, void *addr, uint64_t len,
		      uint32_t flags, char *msg, size_t msg_len)
{
	return sm_lib_region(fd, dev_name, name, addr, len,
			     SYNCMEM_REGION_WRITE, flags, msg, msg_len);
}

static int new_sim(int fd, const char *name, uint32_t latency_us, char *msg,
		   size_t msg_len)
{
	return create(fd, name, IB_SYNC_MEM_KIND_SIM, latency_us, msg, msg_len);
}

static int del(int fd, uint32_t id)
{
	struct ib_sync_mem_ioc_delete d = { .id = id };

	return ioc(fd, IB_SYNC_MEM_IOC_DELETE, &d);
}

static int sync_full(int fd, uint32_t id, uint32_t dir, uint64_t off,
		     uint64_t len, uint32_t flags, int *out)
{
	struct ib_sync_mem_ioc_sync r = {
		.id = id, .dir = dir, .offset = off, .len = len,
		.flags = flags, .out_fence = -1,
	};
	int st = ioc(fd, IB_SYNC_MEM_IOC_SYNC, &r);

	if (out)
		*out = r.out_fence;
	return st;
}

static int sync_one(int fd, uint32_t id, uint32_t dir)
{
	return sync_full(fd, id, dir, 0, 0, 0, NULL);
}

/* An asynchronous sync's fence status (1 ok), or the ioctl's -errno. */
static int sync_async_wait(int fd, uint32_t id)
{
	int f = -1, st = sync_full(fd, id, TO_DEV, 0, 0, IB_SYNC_MEM_IOC_F_ASYNC, &f);

	if (st)
		return st;
	st = sync_file_wait(f, bound_ms(60000));
	close(f);
	return st;
}

static int mark(int fd, uint32_t id)
{
	struct ib_sync_mem_ioc_mark m = { .id = id, .dir = TO_DEV };

	return ioc(fd, IB_SYNC_MEM_IOC_MARK_DIRTY, &m);
}

static int batch(int fd, const uint32_t *ids, unsigned int n, uint32_t flags,
		 struct ib_sync_mem_ioc_sync_batch *b)
{
	struct ib_sync_mem_ioc_entry e[4] = { 0 };
	unsigned int i;
	int st;

	for (i = 0; i < n; i++)
		e[i].id = ids[i];
	*b = (struct ib_sync_mem_ioc_sync_batch){
		.entries = (uintptr_t)e, .n = n, .dir = TO_DEV, .flags = flags,
		.out_fence = -1,
	};
	st = ioc(fd, IB_SYNC_MEM_IOC_SYNC_BATCH, b);
	if (!st && (flags & IB_SYNC_MEM_IOC_F_ASYNC)) {
		st = sync_file_wait(b->out_fence, bound_ms(60000));
		close(b->out_fence);
		st = st == 1 ? 0 : st;
	}
	return st;
}

/* Its own clients: every ioctl of the data path, end to end. */
static void test_own(int fd, uint32_t *kept)
{
	struct ib_sync_mem_ioc_sync_batch b;
	char msg[256];
	uint32_t ids[2];
	long pin0 = vm_pin(), pin1;
	void *mem = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	struct smnl_client c;
	int r, lazy, st, get;

	r = mem == MAP_FAILED ? -ENOMEM : new_region(fd, "unpriv-region", mem, 4 * page, 0,
						     msg, sizeof(msg));
	pin1 = vm_pin();
	get = r > 0 ? smnl_client_get(&nl, r, &c) : r;
	ktap_result(r > 0 && get == 0 && c.have_pinned && c.pinned_pages == 4 &&
		    c.flags == IB_SYNC_MEM_CLIENT_F_FILE &&
		    c.origin == IB_SYNC_MEM_ORIGIN_DEVICE,
		    "CREATE of a region over 4 of its pages: its file's, 4 pinned (%d \"%s\", flags %#x)",
		    r, msg, get ? 0 : c.flags);
	ktap_result(pin0 >= 0 && pin1 == pin0 + 4,
		    "VmPin grew by exactly its 4 pages, as ib_umem_get charges them (%ld -> %ld)",
		    pin0, pin1);
	lazy = mem == MAP_FAILED ? -ENOMEM :
	       new_region(fd, "unpriv-lazy", (char *)mem + 4 * page, 4 * page,
			  IB_SYNC_MEM_CLIENT_F_LAZY, msg, sizeof(msg));
	ktap_result(lazy > 0, "CREATE of a lazy region (%d \"%s\")", lazy, msg);
	if (r <= 0 || lazy <= 0)
		return;
	kept[0] = r;
	kept[1] = lazy;

	st = sync_one(fd, r, TO_DEV);
	ktap_result(st == 0 && syncs_of(r) == 1, "SYNC to-device: 0, one sync (%d)", st);
	st = sync_one(fd, r, IB_SYNC_MEM_SYNC_TO_CPU);
	ktap_result(st == 0 && syncs_of(r) == 2, "SYNC to-cpu: 0 (%d)", st);
	st = sync_full(fd, r, TO_DEV, page, page, 0, NULL);
	ktap_result(st == 0 && syncs_of(r) == 3, "SYNC of its second page (a range): 0 (%d)", st);
	st = sync_full(fd, r, TO_DEV, 0, 5 * page, 0, NULL);
	ktap_result(st == -ERANGE, "SYNC of a range past it: ERANGE (%d)", st);
	st = sync_one(fd, r, IB_SYNC_MEM_SYNC_INBOUND);
	ktap_result(st == 0, "SYNC inbound (the module's RDMA READ): 0 (%d)", st);
	st = sync_async_wait(fd, r);
	ktap_result(st == 1, "async SYNC: its fence signals ok (%d)", st);
	st = sync_one(fd, lazy, TO_DEV);
	ktap_result(st == 0 && syncs_of(lazy) == 0, "the clean lazy region: SYNC runs nothing (%d)", st);
	st = mark(fd, lazy);
	st = st ?: sync_one(fd, lazy, TO_DEV);
	ktap_result(st == 0 && syncs_of(lazy) == 1, "MARK_DIRTY, then SYNC runs it once (%d, syncs %llu)",
		    st, (unsigned long long)syncs_of(lazy));
	ids[0] = r;
	ids[1] = lazy;
	st = mark(fd, lazy);
	st = st ?: batch(fd, ids, 2, 0, &b);
	ktap_result(st == 0 && b.run == 2 && b.errors == 0, "SYNC_BATCH of both: run 2 (%d, run %u)",
		    st, b.run);
	st = batch(fd, ids, 2, IB_SYNC_MEM_IOC_F_ASYNC, &b);
	ktap_result(st == 0, "async SYNC_BATCH of both: its fence signals ok (%d)", st);
}

/*
 * What another file's client, an administrator's client and an id that
 * does not exist get: the same ENOENT from every ioctl, nothing synced.
 */
static void test_foreign(int fd, uint32_t own, uint32_t foreign, const char *what)
{
	struct ib_sync_mem_ioc_sync_batch b;
	uint64_t before = syncs_of(foreign);
	uint32_t ids[2] = { own, foreign };
	int s, a, rg, in, m, bt, ba, d;

	s = sync_one(fd, foreign, TO_DEV);
	a = sync_full(fd, foreign, TO_DEV, 0, 0, IB_SYNC_MEM_IOC_F_ASYNC, NULL);
	rg = sync_full(fd, foreign, TO_DEV, 0, page, 0, NULL);
	in = sync_one(fd, foreign, IB_SYNC_MEM_SYNC_INBOUND);
	m = mark(fd, foreign);
	bt = batch(fd, ids, 2, 0, &b);
	ba = batch(fd, ids, 2, IB_SYNC_MEM_IOC_F_ASYNC, &b);
	d = del(fd, foreign);
	ktap_result(s == -ENOENT && a == -ENOENT && rg == -ENOENT && in == -ENOENT &&
		    m == -ENOENT && bt == -ENOENT && ba == -ENOENT && d == -ENOENT,
		    "%s: ENOENT from SYNC %d, async %d, range %d, inbound %d, MARK_DIRTY %d, batch %d, async batch %d, DELETE %d",
		    what, s, a, rg, in, m, bt, ba, d);
	if (before != ~0ULL)
		ktap_result(syncs_of(foreign) == before, "%s: not synced (syncs %llu, before %llu)",
			    what, (unsigned long long)syncs_of(foreign),
			    (unsigned long long)before);
}

/* What stays an administrator's: EPERM. */
static void test_admin_only(int fd, uint32_t own, uint32_t foreign)
{
	struct ib_sync_mem_ioc_sync_dev d = { .dir = TO_DEV };
	struct ib_sync_mem_ioc_own o = { .id = foreign };
	struct smnl_sync_result res;
	struct smnl_client c;
	int sd, sa, ow, own_own, n, cd, cs, cm, cdev;

	if (!smnl_client_get(&nl, own, &c))
		d.dev_index = c.dev_index;
	sd = ioc(fd, IB_SYNC_MEM_IOC_SYNC_DEV, &d);
	d.flags = IB_SYNC_MEM_IOC_F_ASYNC;
	d.out_fence = -1;
	sa = ioc(fd, IB_SYNC_MEM_IOC_SYNC_DEV, &d);
	ktap_result(sd == -EPERM && sa == -EPERM && d.out_fence == -1,
		    "SYNC_DEV of the device of its own client: EPERM, blocking %d and async %d",
		    sd, sa);
	ow = ioc(fd, IB_SYNC_MEM_IOC_OWN, &o);
	o.id = own;
	own_own = ioc(fd, IB_SYNC_MEM_IOC_OWN, &o);
	ktap_result(ow == -EPERM && own_own == -EPERM,
		    "OWN: EPERM, of an administrator's client %d and of its own %d", ow, own_own);

	/* The family's mutating commands. */
	n = smnl_register_sim(&nl, dev_name, "unpriv-nl", 0);
	cd = smnl_unregister(&nl, foreign);
	cs = smnl_sync_client(&nl, own, TO_DEV, 0, NULL, NULL);
	cm = smnl_mark_dirty(&nl, own, TO_DEV, 0, 0);
	cdev = smnl_sync_dev(&nl, dev_name, TO_DEV, 0, &res);
	ktap_result(n == -EPERM && cd == -EPERM && cs == -EPERM && cm == -EPERM && cdev == -EPERM,
		    "the family: CLIENT_NEW %d, CLIENT_DEL %d, SYNC of its own client %d, MARK_DIRTY %d, SYNC of the device %d: EPERM",
		    n, cd, cs, cm, cdev);
}

/* RLIMIT_MEMLOCK: the pins are charged, the limit holds exactly. */
static void test_memlock(int fd)
{
	struct rlimit old, lim;
	char msg[256], msg2[256];
	long pin0 = vm_pin();
	void *mem = mmap(NULL, 16 * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	int over, at, one, again, st;

	if (!ktap_result(mem != MAP_FAILED && pin0 >= 0 && !getrlimit(RLIMIT_MEMLOCK, &old),
			 "memory, VmPin %ld pages, RLIMIT_MEMLOCK", pin0))
		return;
	/* Room for 8 pages more than it has pinned. */
	lim.rlim_cur = (pin0 + 8) * page;
	lim.rlim_max = old.rlim_max;
	if (!ktap_result(!setrlimit(RLIMIT_MEMLOCK, &lim),
			 "ulimit -l: VmPin + 8 pages (%lu bytes)", (unsigned long)lim.rlim_cur))
		return;
	over = new_region(fd, "unpriv-over", mem, 9 * page, 0, msg, sizeof(msg));
	ktap_result(over == -ENOMEM && !strcmp(msg, "region exceeds RLIMIT_MEMLOCK") &&
		    vm_pin() == pin0,
		    "a region of 9 pages past it: ENOMEM, \"region exceeds RLIMIT_MEMLOCK\", nothing pinned (%d, \"%s\")",
		    over, msg);
	at = new_region(fd, "unpriv-at", mem, 8 * page, 0, msg, sizeof(msg));
	ktap_result(at > 0 && vm_pin() == pin0 + 8,
		    "a region of 8 pages, exactly to it: created, VmPin +8 (%d \"%s\", VmPin %ld)",
		    at, msg, vm_pin());
	one = new_region(fd, "unpriv-one", (char *)mem + 8 * page, page, 0, msg2, sizeof(msg2));
	ktap_result(one == -ENOMEM && !strcmp(msg2, "region exceeds RLIMIT_MEMLOCK"),
		    "one page more, through the same file: ENOMEM (%d, \"%s\")", one, msg2);
	st = at > 0 ? del(fd, at) : at;
	again = new_region(fd, "unpriv-one", (char *)mem + 8 * page, page, 0, msg2, sizeof(msg2));
	ktap_result(st == 0 && again > 0 && vm_pin() == pin0 + 1,
		    "after DELETE of the 8: the charge given back, one page fits (%d, %d, VmPin %ld)",
		    st, again, vm_pin());
	if (again > 0)
		del(fd, again);
	ktap_result(vm_pin() == pin0, "every pin given back (VmPin %ld)", vm_pin());
	setrlimit(RLIMIT_MEMLOCK, &old);
	munmap(mem, 16 * page);
}

/* DELETE of its own: gone before it returns, after a sync in flight. */
struct slow_sync {
	int fd;
	uint32_t id;
	int ret;
	struct timespec end;
	volatile pid_t tid;
};

static void *slow_sync_run(void *arg)
{
	struct slow_sync *s = arg;

	s->tid = gettid();
	s->ret = sync_one(s->fd, s->id, TO_DEV);
	clock_gettime(CLOCK_MONOTONIC, &s->end);
	return NULL;
}

/*
 * Wait (a hang guard, 10 s) until thread @s sleeps in its ioctl (x86-64's
 * syscall 16, /proc/self/task/TID/syscall): its sync is in flight, on any
 * kernel however slow. 0, or -ETIMEDOUT.
 */
static int wait_in_ioctl(struct slow_sync *s)
{
	char path[64], buf[64];
	int i, fd, n;

	for (i = 0; i < bound_ms(10000) / 10; i++, usleep(10000)) {
		if (!s->tid)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)s->tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n > 3 && !strncmp(buf, "16 ", 3)) {
			/* In it: give it time to reach the client's ->sync. */
			usleep(50000);
			return 0;
		}
	}
	return -ETIMEDOUT;
}

static double ts_sub(const struct timespec *a, const struct timespec *b)
{
	return (a->tv_sec - b->tv_sec) + (a->tv_nsec - b->tv_nsec) / 1e9;
}

static void test_delete(int fd, uint32_t r)
{
	struct ib_sync_mem_ioc_delete d = { .id = r, .flags = 1 };
	struct smnl_client c;
	struct slow_sync s = { .fd = fd };
	struct timespec end;
	pthread_t t;
	long pin0 = vm_pin();
	int st, get, slow, in;
	char msg[256];

	st = ioc(fd, IB_SYNC_MEM_IOC_DELETE, &d);
	ktap_result(st == -EINVAL && smnl_client_get(&nl, r, &c) == 0,
		    "DELETE with a flag: EINVAL, the client stays (%d)", st);
	st = del(fd, r);
	get = smnl_client_get(&nl, r, &c);
	ktap_result(st == 0 && get == -ENOENT && vm_pin() == pin0 - 4,
		    "DELETE of its region: 0, gone, its 4 pages unpinned before it returned (%d, %d, VmPin %ld -> %ld)",
		    st, get, pin0, vm_pin());
	st = del(fd, r);
	ktap_result(st == -ENOENT, "DELETE again: ENOENT (%d)", st);

	/* A DELETE waits for the sync in flight on it (500 ms). */
	slow = new_sim(fd, "unpriv-slow-del", 500000, msg, sizeof(msg));
	if (!ktap_result(slow > 0, "a sim client whose sync takes 500 ms (%d \"%s\")", slow, msg))
		return;
	s.id = slow;
	pthread_create(&t, NULL, slow_sync_run, &s);
	in = wait_in_ioctl(&s);
	st = del(fd, slow);
	clock_gettime(CLOCK_MONOTONIC, &end);
	pthread_join(t, NULL);
	get = smnl_client_get(&nl, slow, &c);
	ktap_result(in == 0 && st == 0 && s.ret == 0 && get == -ENOENT &&
		    ts_sub(&end, &s.end) > -0.05,
		    "DELETE during its sync: the sync completes (%d), DELETE returns after it (%d, %.3f s later), gone (%d; in the ioctl: %d)",
		    s.ret, st, ts_sub(&end, &s.end), get, in);
}

/*
 * Its file closed while syncs run on its clients (a blocking one on
 * another thread, an asynchronous one): the release comes when that
 * thread's ioctl ends, and deletes them; the async fence signals. A
 * program killed in a sync: its clients gone once it is reaped.
 */
static void test_close_mid_sync(void)
{
	struct slow_sync s = { 0 };
	char msg[256];
	struct smnl_client c;
	pthread_t t;
	int fd = dev_open(), a, b, f = -1, st, ga, gb, fs, in;
	int pp[2];
	pid_t pid;
	uint32_t kid = 0;

	a = fd < 0 ? -errno : new_sim(fd, "unpriv-close-a", 1000000, msg, sizeof(msg));
	b = a < 0 ? a : new_sim(fd, "unpriv-close-b", 1000000, msg, sizeof(msg));
	if (!ktap_result(a > 0 && b > 0, "two sim clients whose syncs take 1 s (%d %d \"%s\")",
			 a, b, msg))
		return;
	s.fd = fd;
	s.id = a;
	pthread_create(&t, NULL, slow_sync_run, &s);
	st = sync_full(fd, b, TO_DEV, 0, 0, IB_SYNC_MEM_IOC_F_ASYNC, &f);
	in = wait_in_ioctl(&s);
	close(fd);
	pthread_join(t, NULL);
	ga = smnl_client_get(&nl, a, &c);
	gb = smnl_client_get(&nl, b, &c);
	fs = st ? st : sync_file_wait(f, bound_ms(60000));
	ktap_result(in == 0 && s.ret == 0 && ga == -ENOENT && gb == -ENOENT &&
		    (fs == 1 || fs == -ENODEV),
		    "closed mid-sync: the blocking sync completes (%d), both clients gone once it returned (%d %d), the async fence signals (%d; in the ioctl: %d)",
		    s.ret, ga, gb, fs, in);
	if (f >= 0)
		close(f);

	if (pipe(pp))
		return;
	pid = fork();
	if (!pid) {
		int cfd = dev_open(), id;

		id = cfd < 0 ? -errno : new_sim(cfd, "unpriv-killed", 2000000, NULL, 0);
		if (write(pp[1], &id, sizeof(id)) != sizeof(id))
			_exit(1);
		sync_one(cfd, id, TO_DEV);
		_exit(0);
	}
	close(pp[1]);
	st = read(pp[0], &kid, sizeof(kid)) == sizeof(kid) ? 0 : -EIO;
	close(pp[0]);
	usleep(300000);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	ga = (int)kid > 0 ? smnl_client_get(&nl, kid, &c) : (int)kid;
	ktap_result(st == 0 && (int)kid > 0 && ga == -ENOENT,
		    "a program killed in a sync of its client: gone once it is reaped (id %d, %d)",
		    (int)kid, ga);
}

/* max_clients_per_user: @limit of this user's clients on the device. */
static void test_limit(int limit)
{
	int a = dev_open(), b = dev_open(), c = -1, i, st, ids[64], n = 0, fails = 0;
	char msg[256], name[32];

	if (!ktap_result(a >= 0 && b >= 0 && limit > 1 && limit <= 32,
			 "two files, a limit of %d", limit))
		return;
	for (i = 0; i < limit; i++) {
		snprintf(name, sizeof(name), "unpriv-lim-%d", i);
		ids[n] = new_sim(i % 2 ? b : a, name, 0, msg, sizeof(msg));
		if (ids[n] > 0)
			n++;
		else
			fails++;
	}
	ktap_result(n == limit, "%d clients across its two files: all created (%d, last \"%s\")",
		    limit, n, fails ? msg : "");
	st = new_sim(a, "unpriv-lim-over", 0, msg, sizeof(msg));
	ktap_result(st == -EMFILE &&
		    !strcmp(msg, "per-user client limit of the device reached (max_clients_per_user)"),
		    "client %d: EMFILE, \"per-user client limit of the device reached (max_clients_per_user)\" (%d, \"%s\")",
		    limit + 1, st, msg);
	st = new_region(b, "unpriv-lim-over", NULL, 0, 0, msg, sizeof(msg));
	ktap_result(st == -EMFILE, "through its other file, of another kind too: EMFILE (%d, \"%s\")",
		    st, msg);
	st = del(a, ids[0]);
	i = new_sim(b, "unpriv-lim-after-del", 0, msg, sizeof(msg));
	ktap_result(st == 0 && i > 0, "after a DELETE: one more is created (%d, %d \"%s\")", st, i, msg);
	st = new_sim(a, "unpriv-lim-over", 0, msg, sizeof(msg));
	ktap_result(st == -EMFILE, "... and then none (%d)", st);
	/* b holds limit / 2 + 1 of them now: its close gives them back. */
	close(b);
	c = dev_open();
	n = 0;
	for (i = 0; i < limit / 2 + 2; i++) {
		snprintf(name, sizeof(name), "unpriv-lim-c%d", i);
		st = new_sim(c, name, 0, msg, sizeof(msg));
		if (st > 0)
			n++;
		else
			break;
	}
	ktap_result(n == limit / 2 + 1 && st == -EMFILE,
		    "its other file closed: its %d clients given back, exactly that many created again (%d, then %d)",
		    limit / 2 + 1, n, st);
	close(a);
	close(c);
	a = dev_open();
	n = 0;
	for (i = 0; i < limit + 1; i++) {
		snprintf(name, sizeof(name), "unpriv-lim-a%d", i);
		st = new_sim(a, name, 0, msg, sizeof(msg));
		if (st > 0)
			n++;
		else
			break;
	}
	ktap_result(n == limit && st == -EMFILE,
		    "every file closed: %d created again, then EMFILE (%d, %d)", limit, n, st);
	close(a);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "foreign", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'l' },
		{ 0 }
	};
	unsigned int foreign = 0;
	int limit = 0, fd, other, o, st;
	uint32_t kept[2] = { 0 };
	struct smnl_client cl;
	char msg[256];
	struct stat sb;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'd')
			dev_name = optarg;
		else if (o == 'f')
			foreign = strtoul(optarg, NULL, 0);
		else if (o == 'l')
			limit = atoi(optarg);
		else
			return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	ktap_start();
	ktap_result(geteuid() == 65534 && getuid() == 65534, "runs as uid 65534 (%d)", (int)geteuid());
	if (smnl_open(&nl)) {
		ktap_result(0, "netlink: the ib_sync_mem family");
		return ktap_finish();
	}
	fd = dev_open();
	if (!ktap_result(fd >= 0, "open /dev/%s without privilege (%s)", IB_SYNC_MEM_DEV_NAME,
			 fd >= 0 ? "ok" : strerror(errno)))
		return ktap_finish();
	if (limit) {
		close(fd);
		test_limit(limit);
		smnl_close(&nl);
		return ktap_finish();
	}
	if (fstat(fd, &sb))
		memset(&sb, 0, sizeof(sb));
	ktap_result((sb.st_mode & 0777) == 0666 && sb.st_uid == 0,
		    "the node: mode 0666, root's (%o)", sb.st_mode & 0777);
	ktap_result(ioc(fd, IB_SYNC_MEM_IOC_NOP, NULL) == 0, "NOP");

	test_own(fd, kept);
	other = dev_open();
	st = other < 0 ? -errno : new_sim(other, "unpriv-other-file", 0, msg, sizeof(msg));
	ktap_result(st > 0, "another file of the same program creates a client (%d \"%s\")", st, msg);
	if (st > 0 && kept[0]) {
		test_foreign(fd, kept[0], st, "another file's client");
		test_foreign(other, st, kept[0], "... and the first file's, from the other");
	}
	if (foreign && kept[0])
		test_foreign(fd, kept[0], foreign, "an administrator's client");
	if (kept[0])
		test_foreign(fd, kept[0], 0x7ffffff0, "an id that does not exist");
	if (kept[0])
		test_admin_only(fd, kept[0], foreign);
	st = create(fd, "unpriv-nokind", 0x7fff, 0, msg, sizeof(msg));
	ktap_result(st == -EOPNOTSUPP, "CREATE of an unknown kind: EOPNOTSUPP (%d \"%s\")", st, msg);
	test_memlock(fd);
	if (kept[0])
		test_delete(fd, kept[0]);
	test_close_mid_sync();
	if (other >= 0)
		close(other);
	close(fd);
	st = smnl_client_find(&nl, "unpriv-lazy", &cl);
	ktap_result(st == -ENOENT, "its files closed: no client of it left (find: %d)", st);
	smnl_close(&nl);
	return ktap_finish();
}
