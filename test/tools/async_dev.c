// SPDX-License-Identifier: GPL-2.0
/*
 * async_dev: /dev/ib_sync_mem from a program (uapi/linux/ib_sync_mem_dev.h),
 * as KTAP: blocking and asynchronous syncs of sim clients, fences as
 * sync_file fds (poll, SYNC_IOC_FILE_INFO), in-fences and their errors,
 * MARK_DIRTY, the device-wide forms, bad input and its exact errnos, the
 * permission rule, clients a file owns (IB_SYNC_MEM_IOC_OWN) or creates
 * (IB_SYNC_MEM_IOC_CREATE), and every fence signalled once and freed at
 * the end.
 *
 *   async_dev [--dev rxe0]
 *   async_dev --hold-in SLOW,ID
 *	submit an asynchronous sync of client SLOW, then a blocking sync of
 *	client ID with its fence as the in-fence (for 57-async to kill the
 *	program while it waits); prints the ioctl's result, exits 0
 *   async_dev --own ID
 *	take client ID over with a file of the device and print "own: 0"
 *	then wait to be killed (57-async: the client dies with the program),
 *	or print "own: -ERRNO" and exit 1
 *
 * Needs ib_sync_mem and ib_sync_mem_sim loaded, root with CAP_NET_ADMIN.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <linux/capability.h>
#include <linux/ib_sync_mem.h>
#include <linux/ib_sync_mem_dev.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "ktap.h"
#include "smdebugfs.h"
#include "smnl.h"
#include "smnl_raw.h"
#include "syncfile.h"
#include "unpriv.h"

static const char *dev_name = "rxe0";
static struct smnl nl;
static int devfd = -1;

/* ioctl(): 0 or -errno. */
static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static int sync_one(uint32_t id, uint32_t dir, uint32_t flags, int in,
		    int *out)
{
	struct ib_sync_mem_ioc_sync r = {
		.id = id, .dir = dir, .flags = flags, .in_fence = in,
		.out_fence = -1,
	};
	int ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);

	if (out)
		*out = r.out_fence;
	return ret;
}

/* An asynchronous sync's fence fd, or -errno. */
static int sync_async(uint32_t id, uint32_t dir, int in)
{
	int out, ret;

	ret = sync_one(id, dir, IB_SYNC_MEM_IOC_F_ASYNC |
		       (in >= 0 ? IB_SYNC_MEM_IOC_F_IN_FENCE : 0), in, &out);
	return ret ?: out;
}

/* Wait (a hang guard, not a measurement) for fence @fd; its status. */
static int fence_wait(int fd)
{
	return sync_file_wait(fd, bound_ms(60000));
}

static uint64_t syncs_of(uint32_t id)
{
	struct smnl_client c;

	return smnl_client_get(&nl, id, &c) ? ~0ULL : c.syncs;
}

/* A sim client made through @sock: its id, or -errno. */
static int new_sim_on(struct smnl *sock, const char *name, uint32_t latency_us,
		      uint32_t fail_next, uint32_t flags)
{
	struct smnl_new req = {
		.dev = dev_name, .name = name, .kind = IB_SYNC_MEM_KIND_SIM,
		.flags = flags, .sim_nest = 1, .sim_latency_us = latency_us,
		.sim_fail_next = fail_next, .sim_fail_errno = fail_next ? EIO : 0,
	};

	return smnl_register(sock, &req);
}

static int new_sim(const char *name, uint32_t latency_us, uint32_t fail_next,
		   uint32_t flags)
{
	return new_sim_on(&nl, name, latency_us, fail_next, flags);
}

static int own(int fd, uint32_t id, uint32_t flags)
{
	struct ib_sync_mem_ioc_own o = { .id = id, .flags = flags };

	return ioc(fd, IB_SYNC_MEM_IOC_OWN, &o);
}

/* Client @id's flags, or ~0 if CLIENT_GET fails; *@get its result. */
static uint32_t flags_of(uint32_t id, int *get)
{
	struct smnl_client c;

	*get = smnl_client_get(&nl, id, &c);
	return *get ? ~0u : c.flags;
}

/*
 * A file takes clients over (IB_SYNC_MEM_IOC_OWN): they die with it, when
 * its last fd is closed and before that close returns, not with the
 * socket that made them; another file cannot take them; a sync of one
 * waiting for its in-fence when the file goes ends with -ENODEV.
 */
static void test_own(void)
{
	int a, b, a2, owned, other, slow, in, f, get, pending, st;
	struct smnl sock;
	uint32_t fl;

	a = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	b = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (smnl_open(&sock))
		sock.fd = -1;
	owned = sock.fd < 0 ? -1 : new_sim_on(&sock, "own-taken", 0, 0, IB_SYNC_MEM_CLIENT_F_OWNED);
	other = sock.fd < 0 ? -1 : new_sim_on(&sock, "own-left", 0, 0, IB_SYNC_MEM_CLIENT_F_OWNED);
	slow = new_sim("own-slow", 5000000, 0, 0);
	if (!ktap_result(a >= 0 && b >= 0 && owned > 0 && other > 0 && slow > 0,
			 "two files, two clients owned by another socket, a slow one (%d %d %d %d %d)",
			 a, b, owned, other, slow))
		goto out;
	ktap_result(own(a, owned, 1) == -EINVAL, "OWN with a flag: EINVAL");
	ktap_result(own(a, 0x7ffffff0, 0) == -ENOENT, "OWN of an unknown id: ENOENT");
	st = own(a, owned, 0);
	fl = flags_of(owned, &get);
	ktap_result(st == 0 && fl == IB_SYNC_MEM_CLIENT_F_FILE,
		    "OWN: the file owns it, its flags are file alone (%d, flags %#x)", st, fl);
	ktap_result(own(a, owned, 0) == 0, "OWN again by the same file: 0");
	ktap_result(own(b, owned, 0) == -EBUSY, "OWN by another file: EBUSY");
	close(b);
	b = -1;
	fl = flags_of(owned, &get);
	ktap_result(get == 0 && fl == IB_SYNC_MEM_CLIENT_F_FILE,
		    "another file closed: the client stays (%d)", get);

	/* Its socket's other owned client goes with the socket; it stays. */
	smnl_close(&sock);
	st = smnl_wait_gone(&nl, other, bound_ms(30000));
	fl = flags_of(owned, &get);
	ktap_result(st == 0 && get == 0 && fl == IB_SYNC_MEM_CLIENT_F_FILE,
		    "the socket closed: its other client gone (%d), the one taken over stays (%d)",
		    st, get);

	/* A sync of it waits for an in-fence: the slow client's, 5 s. */
	in = sync_async(slow, IB_SYNC_MEM_SYNC_TO_DEVICE, -1);
	f = in < 0 ? in : sync_async(owned, IB_SYNC_MEM_SYNC_TO_DEVICE, in);
	a2 = dup(a);
	close(a);
	flags_of(owned, &get);
	ktap_result(a2 >= 0 && get == 0, "one fd of the file closed, another open: the client stays (%d)",
		    get);
	close(a2);
	pending = in >= 0 ? sync_file_status(in) == 0 : 0;
	flags_of(owned, &get);
	ktap_result(get == -ENOENT, "its last fd closed: the client was deleted before close returned (%d)",
		    get);
	st = f >= 0 ? fence_wait(f) : f;
	ktap_result(pending && st == -ENODEV,
		    "its sync waiting for the in-fence signals -ENODEV (%d; in-fence pending at the close: %d)",
		    st, pending);
	st = in >= 0 ? fence_wait(in) : in;
	ktap_result(st == 1, "the in-fence's own sync completes (%d)", st);
	if (f >= 0)
		close(f);
	if (in >= 0)
		close(in);
out:
	if (b >= 0)
		close(b);
	if (slow > 0)
		smnl_unregister(&nl, slow);
}

/*
 * CLIENT_NEW's attributes for IB_SYNC_MEM_IOC_CREATE (@m holds them after
 * its headers): a NULL @name or @dev, or a 0 @kind, is left out; so are
 * @flags when ~0.
 */
static void create_attrs(struct smnl_msg *m, const char *name, uint32_t kind,
			 const char *dev, uint32_t flags)
{
	smnl_msg_init_family(m, 0, 0, 0, 0);
	if (name)
		smnl_put_str(m, IB_SYNC_MEM_A_CLIENT_NAME, name);
	if (kind)
		smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_KIND, kind);
	if (dev)
		smnl_put_str(m, IB_SYNC_MEM_A_DEV_NAME, dev);
	if (flags != ~0u)
		smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_FLAGS, flags);
}

/* @c's attributes: @m's. */
static void set_attrs(struct ib_sync_mem_ioc_create *c, const struct smnl_msg *m)
{
	size_t len;

	c->attrs = (uintptr_t)smnl_msg_attrs(m, &len);
	c->attrs_len = len;
}

/* IB_SYNC_MEM_IOC_CREATE through @fd of @m's attributes: 0 or -errno. */
static int create(int fd, const struct smnl_msg *m,
		  struct ib_sync_mem_ioc_create *c)
{
	set_attrs(c, m);
	return ioc(fd, IB_SYNC_MEM_IOC_CREATE, c);
}

/* A failed CREATE's errno and message, against the ones expected. */
static void create_fails(int fd, const struct smnl_msg *m, uint32_t flags,
			 int want, const char *want_msg, const char *what)
{
	char msg[256];
	struct ib_sync_mem_ioc_create c = {
		.flags = flags, .msg = (uintptr_t)msg, .msg_len = sizeof(msg),
	};
	int st;

	memset(msg, 'x', sizeof(msg));
	st = create(fd, m, &c);
	ktap_result(st == want && !strcmp(msg, want_msg) && !c.id,
		    "CREATE %s: %s, \"%s\" (got %d, \"%.*s\", id %u)", what,
		    strerror(-want), want_msg, st, (int)strnlen(msg, sizeof(msg)),
		    msg, c.id);
}

/*
 * A file creates clients (IB_SYNC_MEM_IOC_CREATE): registered as
 * CLIENT_NEW would, owned by the file from the start, with the reasons of
 * bad input in the caller's buffer and nothing left behind by a failure.
 */
static void test_create(void)
{
	static struct smnl_msg m;
	struct ib_sync_mem_ioc_create c = { 0 }, *ro;
	struct smnl_client cl;
	char msg[16];
	long page = sysconf(_SC_PAGESIZE);
	int a, b, st, get, pinned = -1;
	uint32_t id = 0, rid = 0, fl;
	void *mem;

	a = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	b = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	create_attrs(&m, "made-here", IB_SYNC_MEM_KIND_SIM, dev_name,
		     IB_SYNC_MEM_CLIENT_F_LAZY);
	st = create(a, &m, &c);
	id = c.id;
	get = smnl_client_get(&nl, id, &cl);
	if (!ktap_result(a >= 0 && b >= 0 && st == 0 && id > 0 && get == 0,
			 "CREATE of a sim client: 0, a new id (%d, id %u, CLIENT_GET %d)",
			 st, id, get)) {
		goto out;
	}
	ktap_result(!strcmp(cl.name, "made-here") && cl.kind == IB_SYNC_MEM_KIND_SIM &&
		    cl.flags == (IB_SYNC_MEM_CLIENT_F_LAZY | IB_SYNC_MEM_CLIENT_F_FILE) &&
		    cl.origin == IB_SYNC_MEM_ORIGIN_DEVICE && cl.have_owner &&
		    cl.owner_pid == (uint32_t)getpid() && !strcmp(cl.dev, dev_name),
		    "it is what CLIENT_NEW would make, owned by the file: flags %#x, origin %u, pid %u",
		    cl.flags, cl.origin, cl.owner_pid);
	st = ioc(a, IB_SYNC_MEM_IOC_MARK_DIRTY,
		 &(struct ib_sync_mem_ioc_mark){ .id = id, .dir = IB_SYNC_MEM_SYNC_TO_DEVICE });
	st = st ?: sync_one(id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, -1, NULL);
	ktap_result(st == 0 && syncs_of(id) == 1,
		    "marked dirty and synced through the device: one sync (%d, syncs %llu)",
		    st, (unsigned long long)syncs_of(id));
	ktap_result(own(b, id, 0) == -EBUSY && own(a, id, 0) == 0,
		    "OWN by another file: EBUSY; by its creator: 0");

	/* The memory a kind takes is the caller's: a region of its pages. */
	mem = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	create_attrs(&m, "made-region", IB_SYNC_MEM_KIND_REGION, dev_name, ~0u);
	{
		size_t nest = smnl_nest_start(&m, IB_SYNC_MEM_A_REGION);

		smnl_put_u64(&m, IB_SYNC_MEM_A_REGION_ADDR, (uintptr_t)mem);
		smnl_put_u64(&m, IB_SYNC_MEM_A_REGION_LEN, 4 * page);
		smnl_nest_end(&m, nest);
	}
	memset(&c, 0, sizeof(c));
	st = mem == MAP_FAILED ? -ENOMEM : create(a, &m, &c);
	rid = c.id;
	if (!st && !smnl_client_get(&nl, rid, &cl) && cl.have_pinned)
		pinned = cl.pinned_pages;
	ktap_result(st == 0 && pinned == 4,
		    "CREATE of a region of 4 of its pages: pinned %d (%d)", pinned, st);

	/* Bad input: the errno and the reason, and no client. */
	create_attrs(&m, "made-bad", IB_SYNC_MEM_KIND_SIM, dev_name, ~0u);
	create_fails(a, &m, 1, -EINVAL, "unknown flags", "with a flag");
	create_attrs(&m, "made-bad", IB_SYNC_MEM_KIND_SIM, dev_name,
		     IB_SYNC_MEM_CLIENT_F_OWNED);
	create_fails(a, &m, 0, -EINVAL,
		     "a client created through the device is its file's, not a socket's (CLIENT_F_OWNED)",
		     "CLIENT_F_OWNED");
	create_attrs(&m, NULL, IB_SYNC_MEM_KIND_SIM, dev_name, ~0u);
	create_fails(a, &m, 0, -EINVAL, "missing client name (CLIENT_NAME)",
		     "without a name");
	create_attrs(&m, "made-bad", IB_SYNC_MEM_KIND_SIM, "nosuchdev0", ~0u);
	create_fails(a, &m, 0, -ENODEV, "no such RDMA device", "on no such device");
	create_attrs(&m, "made-bad", 0, dev_name, ~0u);
	smnl_put_u32(&m, IB_SYNC_MEM_A_CLIENT_KIND, 0x7fff);
	create_fails(a, &m, 0, -EOPNOTSUPP,
		     "client kind not available (module not loaded?)", "of an unknown kind");

	/* The reason cut to the buffer, NUL-terminated, nothing past it. */
	create_attrs(&m, "made-bad", IB_SYNC_MEM_KIND_SIM, "nosuchdev0", ~0u);
	memset(msg, 'x', sizeof(msg));
	c = (struct ib_sync_mem_ioc_create){ .msg = (uintptr_t)msg, .msg_len = 8 };
	st = create(a, &m, &c);
	ktap_result(st == -ENODEV && !memcmp(msg, "no such\0xxxxxxxx", 16),
		    "a reason longer than msg_len 8: its first 7 bytes and a NUL (%d, \"%.8s\")",
		    st, msg);

	create_attrs(&m, "made-bad", IB_SYNC_MEM_KIND_SIM, dev_name, ~0u);
	c = (struct ib_sync_mem_ioc_create){ 0 };
	set_attrs(&c, &m);
	c.attrs_len = 0;
	st = ioc(a, IB_SYNC_MEM_IOC_CREATE, &c);
	ktap_result(st == -EINVAL, "attrs_len 0: EINVAL (%d)", st);
	c.attrs_len = IB_SYNC_MEM_IOC_ATTRS_MAX + 1;
	st = ioc(a, IB_SYNC_MEM_IOC_CREATE, &c);
	ktap_result(st == -E2BIG, "attrs_len IB_SYNC_MEM_IOC_ATTRS_MAX + 1: E2BIG (%d)", st);
	c.attrs = 8;
	c.attrs_len = 64;
	st = ioc(a, IB_SYNC_MEM_IOC_CREATE, &c);
	ktap_result(st == -EFAULT, "attrs at a bad address: EFAULT (%d)", st);

	/* A request whose id cannot be written back: the client goes again. */
	ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	create_attrs(&m, "made-bad", IB_SYNC_MEM_KIND_SIM, dev_name, ~0u);
	if (ro != MAP_FAILED) {
		*ro = (struct ib_sync_mem_ioc_create){
			.msg = (uintptr_t)msg, .msg_len = sizeof(msg),
		};
		set_attrs(ro, &m);
		mprotect(ro, page, PROT_READ);
		memset(msg, 'x', sizeof(msg));
		st = ioc(a, IB_SYNC_MEM_IOC_CREATE, ro);
		munmap(ro, page);
	}
	ktap_result(ro != MAP_FAILED && st == -EFAULT && !strcmp(msg, "cannot write th"),
		    "a read-only request: EFAULT, \"cannot write th\", cut to 16 bytes (%d, \"%.*s\")", st,
		    (int)strnlen(msg, sizeof(msg)), msg);
	st = smnl_client_find(&nl, "made-bad", &cl);
	ktap_result(st == -ENOENT, "no failed CREATE left a client (find: %d)", st);

	/* Its clients die with the file, before close() returns. */
	close(a);
	a = -1;
	fl = flags_of(id, &get);
	st = smnl_client_get(&nl, rid, &cl);
	ktap_result(get == -ENOENT && st == -ENOENT,
		    "the file closed: both of its clients are gone (%d %d, flags %#x)", get, st, fl);
	if (mem != MAP_FAILED)
		munmap(mem, 4 * page);
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

/*
 * A creator in another pid namespace: OWNER_PID is its pid in the initial
 * one (the UAPI's word), not the 1 it is in its own. The namespace's
 * first process creates a client, says its id, and waits; its parent says
 * its pid outside.
 */
static void test_create_pidns(void)
{
	int idp[2], pidp[2], gop[2], st, get = -1, rc = -1;
	static struct smnl_msg m;
	struct smnl_client cl = { 0 };
	pid_t child, inner = 0;
	uint32_t id = 0;

	if (pipe(idp) || pipe(pidp) || pipe(gop)) {
		ktap_result(0, "CREATE in a pid namespace: pipes");
		return;
	}
	child = fork();
	if (!child) {
		struct ib_sync_mem_ioc_create c = { 0 };
		pid_t g;
		int fd;

		if (unshare(CLONE_NEWPID))
			_exit(10);
		g = fork();
		if (g > 0) {
			st = 0;
			if (write(pidp[1], &g, sizeof(g)) != sizeof(g) ||
			    waitpid(g, &st, 0) != g)
				_exit(11);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 12);
		}
		if (g < 0)
			_exit(13);
		fd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
		create_attrs(&m, "made-in-pidns", IB_SYNC_MEM_KIND_SIM, dev_name, ~0u);
		if (fd < 0 || create(fd, &m, &c))
			c.id = 0;
		if (write(idp[1], &c.id, sizeof(c.id)) != sizeof(c.id) ||
		    read(gop[0], &st, 1) != 1)
			_exit(14);
		_exit(getpid() == 1 ? 0 : 15);
	}
	close(idp[1]);
	close(pidp[1]);
	close(gop[0]);
	if (child > 0 && read(pidp[0], &inner, sizeof(inner)) == sizeof(inner) &&
	    read(idp[0], &id, sizeof(id)) == sizeof(id) && id)
		get = smnl_client_get(&nl, id, &cl);
	ktap_result(get == 0 && inner > 1 && cl.owner_pid == (uint32_t)inner,
		    "CREATE by pid 1 of a pid namespace: owner_pid is its pid outside, %d (got %u, CLIENT_GET %d)",
		    inner, cl.owner_pid, get);
	/* Let it exit: its file goes, and the client with it. */
	if (write(gop[1], "x", 1) == 1 && child > 0 && waitpid(child, &st, 0) == child &&
	    WIFEXITED(st))
		rc = WEXITSTATUS(st);
	get = id ? smnl_client_get(&nl, id, &cl) : -1;
	ktap_result(rc == 0 && get == -ENOENT,
		    "it ran as pid 1 there and its client went with it (exit %d, CLIENT_GET %d)", rc, get);
	close(idp[0]);
	close(pidp[0]);
	close(gop[1]);
}

/* In a child without capabilities: what open + NOP + SYNC + CREATE return. */
/* A child's exit status, or -1. */
static int child_rc(pid_t pid)
{
	int st;

	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		return WEXITSTATUS(st);
	return -1;
}

/*
 * Root of a user namespace of its own (uid 0 mapped to 0, every
 * capability there, CAP_NET_ADMIN included, none in the initial one): its
 * file is an unprivileged one, the rule being CAP_NET_ADMIN in the
 * initial namespace. Another's client is ENOENT to SYNC, SYNC_BATCH and
 * MARK_DIRTY (as if it did not exist); SYNC_DEV and OWN are EPERM, and
 * CREATE of a kind that needs CAP_NET_ADMIN (the sim, unless its
 * unprivileged parameter says otherwise). The child first shows it holds
 * CAP_NET_ADMIN where it is, so that the refusals are the namespace's
 * doing.
 */
static void test_userns(uint32_t id)
{
	struct ib_sync_mem_ioc_sync_dev d = { .dev_index = 0, .dir = 1 };
	struct ib_sync_mem_ioc_entry e = { .id = id };
	struct ib_sync_mem_ioc_sync_batch b = {
		.entries = (uintptr_t)&e, .n = 1, .dir = 1,
	};
	struct ib_sync_mem_ioc_sync r = { .id = id, .dir = 1 };
	struct ib_sync_mem_ioc_mark m = { .id = id, .dir = 1 };
	struct ib_sync_mem_ioc_own o = { .id = id };
	struct ib_sync_mem_ioc_create c = { 0 };
	static struct smnl_msg msg;
	struct smnl_client info;
	int rc, fd, map;
	pid_t pid;

	if (!smnl_client_get(&nl, id, &info))
		d.dev_index = info.dev_index;
	create_attrs(&msg, "made-in-userns", IB_SYNC_MEM_KIND_SIM, dev_name, ~0u);
	pid = fork();
	if (!pid) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct cap[2] = { 0 };

		if (unshare(CLONE_NEWUSER))
			_exit(10);
		map = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
		if (map < 0 || write(map, "0 0 1", 5) != 5)
			_exit(11);
		close(map);
		if (syscall(SYS_capget, &h, cap) ||
		    !(cap[0].effective & (1u << CAP_NET_ADMIN)))
			_exit(12);
		fd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(13);
		if (ioc(fd, IB_SYNC_MEM_IOC_NOP, NULL))
			_exit(14);
		if (ioc(fd, IB_SYNC_MEM_IOC_SYNC, &r) != -ENOENT)
			_exit(20);
		if (ioc(fd, IB_SYNC_MEM_IOC_SYNC_DEV, &d) != -EPERM)
			_exit(21);
		if (ioc(fd, IB_SYNC_MEM_IOC_SYNC_BATCH, &b) != -ENOENT)
			_exit(22);
		if (ioc(fd, IB_SYNC_MEM_IOC_MARK_DIRTY, &m) != -ENOENT)
			_exit(23);
		if (ioc(fd, IB_SYNC_MEM_IOC_OWN, &o) != -EPERM)
			_exit(24);
		if (create(fd, &msg, &c) != -EPERM)
			_exit(25);
		_exit(0);
	}
	rc = child_rc(pid);
	ktap_result(rc == 0,
		    "root of another user namespace (CAP_NET_ADMIN there, not in the initial one): NOP works; SYNC, SYNC_BATCH and MARK_DIRTY of another's client ENOENT; SYNC_DEV, OWN and CREATE of a sim EPERM (child exit %d: 10-14 set-up, 20-25 the ioctl that did not answer so)",
		    rc);
}

static void test_permission(uint32_t id)
{
	int st, rc = -1;
	pid_t pid = fork();

	if (!pid) {
		int fd, nop, sync, made;
		struct ib_sync_mem_ioc_sync r = { .id = id, .dir = 1 };
		char msg[64];
		struct ib_sync_mem_ioc_create c = {
			.msg = (uintptr_t)msg, .msg_len = sizeof(msg),
		};
		static struct smnl_msg m;

		if (sm_drop_caps())
			_exit(10);
		fd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(11);
		nop = ioc(fd, IB_SYNC_MEM_IOC_NOP, NULL);
		sync = ioc(fd, IB_SYNC_MEM_IOC_SYNC, &r);
		create_attrs(&m, "made-unprivileged", IB_SYNC_MEM_KIND_SIM, dev_name, ~0u);
		made = create(fd, &m, &c);
		_exit(nop == 0 && sync == -ENOENT && made == -EPERM &&
		      !strcmp(msg, "client kind needs CAP_NET_ADMIN") ? 0 : 12);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		rc = WEXITSTATUS(st);
	ktap_result(rc == 0,
		    "without CAP_NET_ADMIN: NOP works, SYNC of another's client is ENOENT, CREATE of a sim EPERM, \"client kind needs CAP_NET_ADMIN\" (child exit %d)",
		    rc);

	/* The opener's credentials count: root's file, used by a child without. */
	pid = fork();
	if (!pid) {
		struct ib_sync_mem_ioc_sync r = { .id = id, .dir = 1 };

		if (sm_drop_caps())
			_exit(10);
		_exit(ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r) == 0 ? 0 : 12);
	}
	rc = -1;
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		rc = WEXITSTATUS(st);
	ktap_result(rc == 0, "a file opened with CAP_NET_ADMIN syncs in a child without it (child exit %d)", rc);
	test_userns(id);
}

static int sync_batch(struct ib_sync_mem_ioc_entry *e, uint32_t n,
		      uint32_t flags, struct ib_sync_mem_ioc_sync_batch *b)
{
	*b = (struct ib_sync_mem_ioc_sync_batch){
		.entries = (uintptr_t)e, .n = n,
		.dir = IB_SYNC_MEM_SYNC_TO_DEVICE, .flags = flags,
		.out_fence = -1,
	};
	return ioc(devfd, IB_SYNC_MEM_IOC_SYNC_BATCH, b);
}

/* Batches: each entry's result in order, the async form's first error. */
static void test_batch(uint32_t fast)
{
	struct ib_sync_mem_ioc_entry e[3] = { { .id = fast }, { 0 }, { .id = fast } };
	struct ib_sync_mem_ioc_entry *big;
	struct ib_sync_mem_ioc_sync_batch b;
	uint64_t before = syncs_of(fast);
	int bfail = new_sim("async-batch-fail", 0, 1, 0);
	int st;

	if (!ktap_result(bfail > 0, "a sim client whose next sync fails (%d)", bfail))
		return;
	e[1].id = bfail;
	e[0].err = e[1].err = e[2].err = 12345;
	st = sync_batch(e, 3, 0, &b);
	ktap_result(st == 0 && b.run == 3 && b.errors == 1 && e[0].err == 0 &&
		    e[1].err == -EIO && e[2].err == 0 && syncs_of(fast) == before + 2,
		    "blocking SYNC_BATCH: run 3, errors 1, each entry's result (%d: run %u errors %u, errs %d %d %d)",
		    st, b.run, b.errors, e[0].err, e[1].err, e[2].err);
	st = sync_batch(e, 3, IB_SYNC_MEM_IOC_F_ASYNC, &b);
	st = st ?: fence_wait(b.out_fence);
	ktap_result(st == 1 && syncs_of(fast) == before + 4,
		    "async SYNC_BATCH: its fence signals ok, each entry synced (%d)", st);
	if (b.out_fence >= 0)
		close(b.out_fence);
	e[1].id = 0x7fffff00;
	st = sync_batch(e, 3, IB_SYNC_MEM_IOC_F_ASYNC, &b);
	ktap_result(st == -ENOENT && syncs_of(fast) == before + 4,
		    "a batch naming an unknown id: ENOENT, nothing run (%d)", st);
	st = sync_batch(e, 0, 0, &b);
	ktap_result(st == -EINVAL, "an empty batch: EINVAL (%d)", st);
	big = calloc(IB_SYNC_MEM_SYNC_BATCH_MAX + 1, sizeof(*big));
	for (st = 0; big && st <= IB_SYNC_MEM_SYNC_BATCH_MAX; st++)
		big[st].id = fast;
	st = big ? sync_batch(big, IB_SYNC_MEM_SYNC_BATCH_MAX + 1, 0, &b) : -ENOMEM;
	ktap_result(st == -EINVAL, "a batch of %d: EINVAL (%d)", IB_SYNC_MEM_SYNC_BATCH_MAX + 1, st);
	free(big);
	st = sync_batch(NULL, 3, 0, &b);
	ktap_result(st == -EFAULT && syncs_of(fast) == before + 4,
		    "a batch at a bad address: EFAULT, nothing run (%d)", st);
	smnl_unregister(&nl, bfail);
}

static void test_bad_input(uint32_t id, uint32_t lazy_id, uint32_t dev_index)
{
	struct ib_sync_mem_ioc_sync r = { .id = id, .dir = 1 };
	struct ib_sync_mem_ioc_sync_dev d = { .dev_index = 1u << 30, .dir = 1 };
	struct ib_sync_mem_ioc_mark m = { .id = id, .dir = 1 };
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	uint64_t before = syncs_of(id);
	int ret;

	ret = sync_one(id, 1, IB_SYNC_MEM_IOC_F_IN_FENCE, 1000, NULL);
	ktap_result(ret == -EBADF, "in_fence not an open fd: EBADF (got %d)", ret);
	ret = sync_one(id, 1, IB_SYNC_MEM_IOC_F_IN_FENCE | IB_SYNC_MEM_IOC_F_ASYNC, null, NULL);
	ktap_result(ret == -EINVAL, "in_fence not a sync_file (/dev/null): EINVAL (got %d)", ret);
	close(null);
	ret = sync_one(id, 1, 1u << 7, -1, NULL);
	ktap_result(ret == -EINVAL, "unknown flag: EINVAL (got %d)", ret);
	ret = sync_one(0x7fffff00, 1, 0, -1, NULL);
	ktap_result(ret == -ENOENT, "unknown client id: ENOENT (got %d)", ret);
	ret = sync_one(id, 9, IB_SYNC_MEM_IOC_F_ASYNC, -1, NULL);
	ktap_result(ret == -EINVAL, "direction 9, async: EINVAL, no fence (got %d)", ret);
	ret = sync_one(id, 0, 0, -1, NULL);
	ktap_result(ret == -EINVAL, "direction 0: EINVAL (got %d)", ret);
	r.offset = 64;
	ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);
	ktap_result(ret == -EINVAL, "an offset without a length: EINVAL (got %d)", ret);
	r.offset = 0;
	r.len = 1ULL << 40;
	r.flags = IB_SYNC_MEM_IOC_F_ASYNC;
	ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);
	ktap_result(ret == -ERANGE, "a range past the client, async: ERANGE (got %d)", ret);
	ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC_DEV, &d);
	ktap_result(ret == -ENODEV, "unknown device index: ENODEV (got %d)", ret);
	ret = ioc(devfd, _IO(IB_SYNC_MEM_IOC_MAGIC, 99), NULL);
	ktap_result(ret == -ENOTTY, "unknown ioctl: ENOTTY (got %d)", ret);
	ret = ioc(devfd, IB_SYNC_MEM_IOC_MARK_DIRTY, &m);
	ktap_result(ret == -EINVAL, "MARK_DIRTY of a client that is not lazy: EINVAL (got %d)", ret);
	m.id = lazy_id;
	m.dir = 7;
	ret = ioc(devfd, IB_SYNC_MEM_IOC_MARK_DIRTY, &m);
	ktap_result(ret == -EINVAL, "MARK_DIRTY in direction 7: EINVAL (got %d)", ret);
	/* The family's bound on a timeout: 0 (the default) to the most. */
	r = (struct ib_sync_mem_ioc_sync){ .id = id, .dir = 1,
		.timeout_ms = IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS + 1 };
	ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);
	ktap_result(ret == -EINVAL, "SYNC with timeout_ms %u: EINVAL (got %d)",
		    r.timeout_ms, ret);
	r.timeout_ms = UINT32_MAX;
	r.flags = IB_SYNC_MEM_IOC_F_ASYNC;
	r.out_fence = -1;
	ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);
	ktap_result(ret == -EINVAL && r.out_fence == -1,
		    "async SYNC with timeout_ms %u: EINVAL, no fence (got %d)",
		    r.timeout_ms, ret);
	d = (struct ib_sync_mem_ioc_sync_dev){ .dev_index = dev_index, .dir = 1,
		.timeout_ms = IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS + 1 };
	ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC_DEV, &d);
	ktap_result(ret == -EINVAL, "SYNC_DEV with timeout_ms %u: EINVAL (got %d)",
		    d.timeout_ms, ret);
	{
		struct ib_sync_mem_ioc_entry e = { .id = id };
		struct ib_sync_mem_ioc_sync_batch b = {
			.entries = (uintptr_t)&e, .n = 1, .dir = 1,
			.timeout_ms = IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS + 1,
		};

		ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC_BATCH, &b);
		ktap_result(ret == -EINVAL, "SYNC_BATCH with timeout_ms %u: EINVAL (got %d)",
			    b.timeout_ms, ret);
	}
	ktap_result(syncs_of(id) == before, "bad input ran no sync (syncs %llu, before %llu)",
		    (unsigned long long)syncs_of(id), (unsigned long long)before);
	r = (struct ib_sync_mem_ioc_sync){ .id = id, .dir = 1,
		.timeout_ms = IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS };
	ret = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);
	ktap_result(ret == 0 && syncs_of(id) == before + 1,
		    "SYNC with timeout_ms %u, the most: synced (got %d)", r.timeout_ms, ret);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "hold-in", required_argument, NULL, 'h' },
		{ "own", required_argument, NULL, 'o' },
		{ 0 }
	};
	unsigned int hold_slow = 0, hold_id = 0, own_id = 0;
	int fast, failing, slow, lazy, x, y, f, st, o;
	struct ib_sync_mem_ioc_sync_dev d = { 0 };
	struct ib_sync_mem_ioc_mark m = { 0 };
	struct smnl_client info;
	struct stat sb;
	long n;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'd') {
			dev_name = optarg;
		} else if (o == 'h' &&
			   sscanf(optarg, "%u,%u", &hold_slow, &hold_id) == 2) {
			continue;
		} else if (o == 'o' && sscanf(optarg, "%u", &own_id) == 1) {
			continue;
		} else {
			fprintf(stderr, "usage: async_dev [--dev DEV] | --hold-in SLOW,ID | --own ID\n");
			return 2;
		}
	}
	if (own_id) {
		/* Take the client over, say so, and wait to be killed. */
		devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
		st = devfd < 0 ? -errno : own(devfd, own_id, 0);
		printf("own: %d\n", st);
		fflush(stdout);
		if (st)
			return 1;
		for (;;)
			pause();
	}
	if (hold_id) {
		devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
		x = devfd < 0 ? -errno : sync_async(hold_slow, IB_SYNC_MEM_SYNC_TO_DEVICE, -1);
		st = x < 0 ? x : sync_one(hold_id, IB_SYNC_MEM_SYNC_TO_DEVICE,
					  IB_SYNC_MEM_IOC_F_IN_FENCE, x, NULL);
		printf("hold-in: %d\n", st);
		return 0;
	}
	ktap_start();
	if (smnl_open(&nl)) {
		ktap_result(0, "netlink: the ib_sync_mem family");
		return ktap_finish();
	}
	devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (!ktap_result(devfd >= 0, "open /dev/%s (%s)", IB_SYNC_MEM_DEV_NAME,
			 devfd >= 0 ? "ok" : strerror(errno)))
		return ktap_finish();
	ktap_result(!fstat(devfd, &sb) && S_ISCHR(sb.st_mode) &&
		    (sb.st_mode & 0777) == 0666 && sb.st_uid == 0,
		    "a character device, mode 0666, root's (mode %o)", sb.st_mode & 0777);
	ktap_result(ioc(devfd, IB_SYNC_MEM_IOC_NOP, NULL) == 0, "NOP");

	fast = new_sim("async-fast", 0, 0, 0);
	failing = new_sim("async-fail", 0, 3, 0);
	slow = new_sim("async-slow", 200000, 0, 0);
	lazy = new_sim("async-lazy", 0, 0, IB_SYNC_MEM_CLIENT_F_LAZY);
	if (!ktap_result(fast > 0 && failing > 0 && slow > 0 && lazy > 0,
			 "four sim clients on %s (%d %d %d %d)", dev_name,
			 fast, failing, slow, lazy))
		return ktap_finish();

	/* Blocking. */
	st = sync_one(fast, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, -1, NULL);
	ktap_result(st == 0 && syncs_of(fast) == 1, "blocking SYNC: 0, one sync (%d, syncs %llu)",
		    st, (unsigned long long)syncs_of(fast));
	st = sync_one(failing, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, -1, NULL);
	ktap_result(st == -EIO, "blocking SYNC of a failing client: EIO (got %d)", st);

	/* Asynchronous. */
	f = sync_async(fast, IB_SYNC_MEM_SYNC_TO_CPU, -1);
	ktap_result(f >= 0 && (fcntl(f, F_GETFD) & FD_CLOEXEC),
		    "async SYNC: a sync_file fd, close-on-exec (%d)", f);
	if (f >= 0) {
		st = fence_wait(f);
		ktap_result(st == 1 && syncs_of(fast) == 2,
			    "its fence signals ok: status 1, one more sync (%d, syncs %llu)",
			    st, (unsigned long long)syncs_of(fast));
		close(f);
	}
	f = sync_async(failing, IB_SYNC_MEM_SYNC_TO_DEVICE, -1);
	st = f >= 0 ? fence_wait(f) : f;
	ktap_result(st == -EIO, "async SYNC of a failing client: the fence's status is -EIO (got %d)", st);
	if (f >= 0)
		close(f);

	/* In-fences: y waits for x (a slow sync); x's error stops y. */
	x = sync_async(slow, IB_SYNC_MEM_SYNC_TO_DEVICE, -1);
	y = x >= 0 ? sync_async(fast, IB_SYNC_MEM_SYNC_TO_DEVICE, x) : -1;
	st = y >= 0 ? fence_wait(y) : y;
	ktap_result(st == 1 && sync_file_status(x) == 1,
		    "an in-fence: y signals ok, and x had signalled before it (y %d, x %d)",
		    st, x >= 0 ? sync_file_status(x) : x);
	ktap_result(syncs_of(fast) == 3, "y ran one sync (syncs %llu)",
		    (unsigned long long)syncs_of(fast));
	if (x >= 0)
		close(x);
	if (y >= 0)
		close(y);
	x = sync_async(failing, IB_SYNC_MEM_SYNC_TO_DEVICE, -1);
	y = x >= 0 ? sync_async(fast, IB_SYNC_MEM_SYNC_TO_DEVICE, x) : -1;
	st = y >= 0 ? fence_wait(y) : y;
	ktap_result(st == -EIO && syncs_of(fast) == 3,
		    "an in-fence that failed: its -EIO is y's, and y ran no sync (y %d, syncs %llu)",
		    st, (unsigned long long)syncs_of(fast));
	if (x >= 0)
		close(x);
	if (y >= 0)
		close(y);
	/* A blocking sync after an in-fence. */
	x = sync_async(slow, IB_SYNC_MEM_SYNC_TO_DEVICE, -1);
	st = x >= 0 ? sync_one(fast, IB_SYNC_MEM_SYNC_TO_DEVICE,
			       IB_SYNC_MEM_IOC_F_IN_FENCE, x, NULL) : x;
	ktap_result(st == 0 && x >= 0 && sync_file_status(x) == 1 && syncs_of(fast) == 4,
		    "a blocking SYNC waits for its in-fence first (%d, x %d, syncs %llu)",
		    st, x >= 0 ? sync_file_status(x) : x, (unsigned long long)syncs_of(fast));
	if (x >= 0)
		close(x);

	/* The sim's engine gives up at the deadline: 50 ms for 200. */
	{
		struct ib_sync_mem_ioc_sync r = {
			.id = slow, .dir = IB_SYNC_MEM_SYNC_TO_DEVICE,
			.flags = IB_SYNC_MEM_IOC_F_ASYNC, .timeout_ms = 50,
			.out_fence = -1,
		};

		st = ioc(devfd, IB_SYNC_MEM_IOC_SYNC, &r);
		x = st ? st : fence_wait(r.out_fence);
		ktap_result(x == -ETIMEDOUT,
			    "an async SYNC whose timeout is shorter than the client's latency: -ETIMEDOUT (%d)",
			    x);
		if (!st)
			close(r.out_fence);
	}

	/* Closing the device file cancels nothing. */
	x = sync_async(slow, IB_SYNC_MEM_SYNC_TO_CPU, -1);
	close(devfd);
	st = x >= 0 ? fence_wait(x) : x;
	ktap_result(st == 1, "/dev/%s closed with a sync pending: its fence still signals ok (%d)",
		    IB_SYNC_MEM_DEV_NAME, st);
	if (x >= 0)
		close(x);
	devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);

	/* MARK_DIRTY: a lazy client runs only when marked. */
	st = sync_one(lazy, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, -1, NULL);
	ktap_result(st == 0 && syncs_of(lazy) == 0, "a clean lazy client: SYNC runs nothing (%d, syncs %llu)",
		    st, (unsigned long long)syncs_of(lazy));
	m.id = lazy;
	m.dir = IB_SYNC_MEM_SYNC_TO_DEVICE;
	st = ioc(devfd, IB_SYNC_MEM_IOC_MARK_DIRTY, &m);
	f = sync_async(lazy, IB_SYNC_MEM_SYNC_TO_DEVICE, -1);
	ktap_result(st == 0 && f >= 0 && fence_wait(f) == 1 && syncs_of(lazy) == 1,
		    "MARK_DIRTY, then an async SYNC runs it once (%d, syncs %llu)",
		    st, (unsigned long long)syncs_of(lazy));
	if (f >= 0)
		close(f);

	/* The device: every client once; a client's error is a result. */
	if (smnl_client_get(&nl, fast, &info))
		info.dev_index = ~0u;
	d.dev_index = info.dev_index;
	d.dir = IB_SYNC_MEM_SYNC_TO_DEVICE;
	st = ioc(devfd, IB_SYNC_MEM_IOC_SYNC_DEV, &d);
	ktap_result(st == 0 && d.err == 0 && d.errors == 0 && d.pass > 0 && d.clients == 3 &&
		    d.skipped == 1 &&
		    syncs_of(fast) == 5 && syncs_of(slow) == 5,
		    "blocking SYNC_DEV: one pass, every client once (%d: clients %u errors %u skipped %u pass %llu)",
		    st, d.clients, d.errors, d.skipped, (unsigned long long)d.pass);
	d.flags = IB_SYNC_MEM_IOC_F_ASYNC;
	d.out_fence = -1;
	st = ioc(devfd, IB_SYNC_MEM_IOC_SYNC_DEV, &d);
	ktap_result(st == 0 && d.out_fence >= 0 && fence_wait(d.out_fence) == 1 &&
		    syncs_of(fast) == 6, "async SYNC_DEV: its fence signals ok (%d, fd %d)",
		    st, d.out_fence);
	if (d.out_fence >= 0)
		close(d.out_fence);

	test_batch(fast);
	test_bad_input(fast, lazy, info.dev_index);
	test_permission(fast);
	test_own();
	test_create();
	test_create_pidns();

	smnl_unregister(&nl, fast);
	smnl_unregister(&nl, failing);
	smnl_unregister(&nl, slow);
	smnl_unregister(&nl, lazy);
	close(devfd);
	n = sm_debugfs_key("counters", "fences_pending");
	ktap_result(n == 0, "every fence signalled exactly once: fences_pending %ld", n);
	for (o = 0; o < bound_ms(60000) / 20; o++) {
		n = sm_debugfs_key("counters", "fences");
		if (n == 0)
			break;
		usleep(20000);
	}
	ktap_result(n == 0, "every fence freed once its fds closed: fences %ld", n);
	smnl_close(&nl);
	return ktap_finish();
}
