// SPDX-License-Identifier: GPL-2.0
/*
 * failnth: fault injection on the register, sync and dump paths of
 * ib_sync_mem, with the kernel's per-task fault injection
 * (/proc/thread-self/fail-nth: the n-th failslab or fail_page_alloc fault
 * point this thread reaches fails).
 *
 *   failnth [--dev rxe0] [--max N]
 *
 * For every path, n = 1, 2, ... until the operation completes without an
 * injected fault: arm fail-nth with n, send the request (generic netlink
 * doit and the first part of a dump run in the sender's task), read the
 * answer, disarm. Each attempt must end in one of two ways:
 *
 *   - a clean negative errno (-ENOMEM, -ENOBUFS), and nothing left behind:
 *     no client, object counters, pinned pages (VmPin) and dma-buf
 *     references as before;
 *   - success with a whole object: the client reads back complete, syncs,
 *     and deletes; a sync or dump answers completely.
 *
 * Needs ib_sync_mem, ib_sync_mem_sim and vgem loaded, root, and failslab /
 * fail_page_alloc set up to fail GFP_KERNEL allocations (ignore-gfp-wait=N,
 * min-order=0, verbose=0; test/vm/72-faults.sh does it). Output is KTAP;
 * without /proc/thread-self/fail-nth (no CONFIG_FAULT_INJECTION) it says so
 * in a SKIP line.
 *
 * While armed, the program makes no call that allocates in its own memory:
 * messages and buffers are static, and mlockall() has faulted everything in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "ktap.h"
#include "smdebugfs.h"
#include "smnl_raw.h"
#include "syncfile.h"
#include "vgem.h"
#include <linux/ib_sync_mem_dev.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define FAILNTH		"/proc/thread-self/fail-nth"
#define SIMFS		"/sys/kernel/debug/ib_sync_mem_sim"
#define REGION_PAGES	4
#define DMABUF_SIZE	(16 * 4096)

static const char *dev = "rxe0";
static int max_n = 5000;
static struct smnl nl;		/* fault-free requests */
static int nth_fd = -1;
static int drm = -1;
static int events_fd = -1;
static long page_size;
static long total_faults;

/* Static, so that nothing is allocated while a fault is armed. */
static struct smnl_msg req;
static unsigned char rx[256 * 1024];

/* ---- fail-nth ---- */

static void nth_arm(int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	if (pwrite(nth_fd, buf, len, 0) != len) {
		perror("fail-nth");
		exit(2);
	}
}

/* Disarm; returns 1 if the armed fault was injected. */
static int nth_disarm(void)
{
	char buf[16] = "";
	ssize_t n = pread(nth_fd, buf, sizeof(buf) - 1, 0);

	if (pwrite(nth_fd, "0", 1, 0) != 1 || n <= 0) {
		perror("fail-nth");
		exit(2);
	}
	buf[n] = '\0';
	return atoi(buf) == 0;
}

/* ---- requests with a fault armed ---- */

struct answer {
	int ret;		/* 0, or the negative errno of the request */
	int injected;		/* the armed fault was injected */
	int replies;		/* reply messages (not errors, not DONE) */
	int intr;		/* a dump part carried NLM_F_DUMP_INTR */
	char extack[SMNL_EXTACK_LEN];
};

typedef void (*reply_cb)(const struct nlmsghdr *nlh, void *arg);

static void answer_extack(struct answer *a, const struct nlmsghdr *nlh,
			  size_t off)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off >= nlh->nlmsg_len)
		return;
	smnl_parse((const char *)nlh + off, nlh->nlmsg_len - off, tb,
		   NLMSGERR_ATTR_MAX);
	if (tb[NLMSGERR_ATTR_MSG])
		smnl_get_str(tb[NLMSGERR_ATTR_MSG], a->extack,
			     sizeof(a->extack));
}

/*
 * Send req on @s with the n-th fault point armed (n 0: none) and read the
 * answer: a doit's one reply or error (no NLM_F_ACK: a reply needs no ack,
 * so an allocation failing after the reply cannot be mistaken for the
 * command failing), or a dump up to NLMSG_DONE.
 */
static void talk(struct smnl *s, int n, reply_cb cb, void *arg,
		 struct answer *a)
{
	struct nlmsghdr *h = (struct nlmsghdr *)req.buf;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int dump = (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	uint32_t seq = ++s->seq;

	memset(a, 0, sizeof(*a));
	h->nlmsg_len = req.len;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = 0;
	if (req.overflow) {
		a->ret = -EMSGSIZE;
		return;
	}
	if (n)
		nth_arm(n);
	if (sendto(s->fd, req.buf, req.len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		a->ret = -errno;
		goto out;
	}
	for (;;) {
		struct nlmsghdr *nlh;
		ssize_t len = recv(s->fd, rx, sizeof(rx), 0);

		if (len < 0) {
			if (errno == EINTR)
				continue;
			a->ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		for (nlh = (struct nlmsghdr *)rx; NLMSG_OK(nlh, (size_t)len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nlh);

				a->ret = e->error;
				answer_extack(a, nlh, NLMSG_HDRLEN + sizeof(*e));
				goto out;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				int status = 0;

				if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
					memcpy(&status, NLMSG_DATA(nlh),
					       sizeof(status));
				a->ret = status;
				answer_extack(a, nlh, NLMSG_HDRLEN + sizeof(int));
				goto out;
			}
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				a->intr = 1;
			a->replies++;
			if (cb)
				cb(nlh, arg);
			if (!dump)
				goto out;
		}
	}
out:
	if (n)
		a->injected = nth_disarm();
}

/* The errnos a failed allocation may turn into. */
static int clean_errno(int ret)
{
	return ret == -ENOMEM || ret == -ENOBUFS;
}

/* ---- fault-free state ---- */

struct state {
	int clients, registered;	/* ib_sync_mem's object counters */
	long vmpin_kb;			/* this process's pinned memory */
};

static int read_counters(int *clients, int *registered)
{
	long c = sm_debugfs_key("counters", "clients");
	long r = sm_debugfs_key("counters", "registered");

	if (c < 0 || r < 0)
		return c < 0 ? c : r;
	*clients = c;
	*registered = r;
	return 0;
}

static void state_get(struct state *s)
{
	memset(s, 0, sizeof(*s));
	if (read_counters(&s->clients, &s->registered))
		s->clients = s->registered = -1;
	s->vmpin_kb = vm_pin_kb();
}

/* "" if @now equals @then, else what differs, in @why. */
static int state_same(const struct state *then, char *why, size_t len)
{
	struct state now;

	state_get(&now);
	if (now.clients == then->clients && now.registered == then->registered &&
	    now.vmpin_kb == then->vmpin_kb)
		return 1;
	snprintf(why, len, "state changed: clients %d -> %d, registered %d -> %d, VmPin %ld -> %ld kB",
		 then->clients, now.clients, then->registered, now.registered,
		 then->vmpin_kb, now.vmpin_kb);
	return 0;
}

/* The client named @name, fault-free: 1 found (*c), 0 not, -errno. */
static int find_client(const char *name, struct smnl_client *c)
{
	int ret = smnl_client_find(&nl, name, c);

	if (ret == -ENOENT)
		return 0;
	return ret ? ret : 1;
}

static long events_drain(void);

/* ---- the path driver ---- */

/*
 * One attempt with the n-th fault point armed: 0 when the invariants hold
 * (*injected says whether the fault was injected), -1 with @why when not.
 */
typedef int (*attempt_fn)(int n, int *injected, int *errored, char *why,
			  size_t len);

static void run_path(const char *name, attempt_fn attempt)
{
	int n, injected = 0, errored, bad = 0, errors = 0, absorbed = 0;
	char why[512];

	for (n = 1; n <= max_n; n++) {
		why[0] = '\0';
		errored = 0;
		if (attempt(n, &injected, &errored, why, sizeof(why))) {
			bad++;
			ktap_diag("%s: fault %d: %s", name, n, why);
			if (bad >= 5)
				break;
		}
		events_drain();
		if (!injected)
			break;
		total_faults++;
		if (errored)
			errors++;
		else
			absorbed++;
	}
	if (n > max_n) {
		ktap_result(0, "%s: completes within %d faults", name, max_n);
		return;
	}
	ktap_diag("%s: %d faults injected: %d failed cleanly with an errno, %d absorbed (the operation still succeeded whole)",
		  name, n - 1, errors, absorbed);
	/* A path no fault reached was not tested: that is a failure too. */
	if (n == 1)
		ktap_diag("%s: not one fault was injected: the path was never exercised", name);
	ktap_result(!bad && n > 1,
		    "%s: every injected fault fails cleanly or not at all (%d faults)",
		    name, n - 1);
}

/* ---- register paths ---- */

static void put_dev(void)
{
	smnl_put_str(&req, IB_SYNC_MEM_A_DEV_NAME, dev);
}

static void new_sim_msg(const char *name)
{
	size_t nest;

	smnl_msg_init(&nl, &req, IB_SYNC_MEM_CMD_CLIENT_NEW, 0);
	put_dev();
	smnl_put_str(&req, IB_SYNC_MEM_A_CLIENT_NAME, name);
	smnl_put_u32(&req, IB_SYNC_MEM_A_CLIENT_KIND, IB_SYNC_MEM_KIND_SIM);
	nest = smnl_nest_start(&req, IB_SYNC_MEM_A_SIM);
	smnl_put_u32(&req, IB_SYNC_MEM_A_SIM_LATENCY_US, 0);
	smnl_put_u64(&req, IB_SYNC_MEM_A_SIM_SIZE, 4096);
	smnl_nest_end(&req, nest);
}

static void new_region_msg(const char *name, void *buf, size_t len)
{
	size_t nest;

	smnl_msg_init(&nl, &req, IB_SYNC_MEM_CMD_CLIENT_NEW, 0);
	put_dev();
	smnl_put_str(&req, IB_SYNC_MEM_A_CLIENT_NAME, name);
	smnl_put_u32(&req, IB_SYNC_MEM_A_CLIENT_KIND, IB_SYNC_MEM_KIND_REGION);
	nest = smnl_nest_start(&req, IB_SYNC_MEM_A_REGION);
	smnl_put_u64(&req, IB_SYNC_MEM_A_REGION_ADDR, (uintptr_t)buf);
	smnl_put_u64(&req, IB_SYNC_MEM_A_REGION_LEN, len);
	smnl_put_u32(&req, IB_SYNC_MEM_A_REGION_ACCESS, IB_SYNC_MEM_REGION_F_WRITE);
	smnl_nest_end(&req, nest);
}

static void new_dmabuf_msg(const char *name, int fd)
{
	size_t nest;

	smnl_msg_init(&nl, &req, IB_SYNC_MEM_CMD_CLIENT_NEW, 0);
	put_dev();
	smnl_put_str(&req, IB_SYNC_MEM_A_CLIENT_NAME, name);
	smnl_put_u32(&req, IB_SYNC_MEM_A_CLIENT_KIND, IB_SYNC_MEM_KIND_DMABUF);
	nest = smnl_nest_start(&req, IB_SYNC_MEM_A_DMABUF);
	smnl_put_s32(&req, IB_SYNC_MEM_A_DMABUF_FD, fd);
	smnl_nest_end(&req, nest);
}

/* The client a CLIENT_NEW reply names (its id; 0 when none). */
static void parse_client_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[IB_SYNC_MEM_A_MAX + 1];
	struct smnl_client *c = arg;
	const void *p;
	size_t len;

	p = smnl_genl_payload(nlh, &len);
	smnl_parse(p, len, tb, IB_SYNC_MEM_A_MAX);
	if (tb[IB_SYNC_MEM_A_CLIENT_ID])
		c->id = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_ID]);
}

/*
 * After a CLIENT_NEW attempt: a whole client (id in the reply, reads back
 * live with its kind, syncs, deletes) or none named @name. Deletes it.
 */
static int check_new(const struct answer *a, const struct smnl_client *got,
		     const char *name, uint32_t kind, int *errored, char *why,
		     size_t len)
{
	struct smnl_client c;
	int ret, cerr = 0;

	if (a->ret) {
		*errored = 1;
		ret = find_client(name, &c);
		if (ret != 0) {
			snprintf(why, len, "CLIENT_NEW failed with %s (%s) but %s",
				 errstr(a->ret), a->extack,
				 ret > 0 ? "the client exists" : "the dump failed");
			if (ret > 0)
				smnl_unregister(&nl, c.id);
			return -1;
		}
		if (!clean_errno(a->ret)) {
			snprintf(why, len, "CLIENT_NEW failed with %s (%s), not -ENOMEM/-ENOBUFS",
				 errstr(a->ret), a->extack);
			return -1;
		}
		return 0;
	}
	if (!got->id) {
		snprintf(why, len, "CLIENT_NEW succeeded without a client in its reply");
		return -1;
	}
	ret = smnl_client_get(&nl, got->id, &c);
	if (ret || c.kind != kind || c.state != IB_SYNC_MEM_CLIENT_LIVE ||
	    strcmp(c.name, name) || !c.have_info || !c.have_stats) {
		snprintf(why, len, "client %u after CLIENT_NEW: get %s, kind %u, state %u, info %d, stats %d",
			 got->id, errstr(ret), c.kind, c.state, c.have_info,
			 c.have_stats);
		smnl_unregister(&nl, got->id);
		return -1;
	}
	if (kind == IB_SYNC_MEM_KIND_REGION &&
	    (c.pinned_pages != REGION_PAGES || c.region_segments < 1)) {
		snprintf(why, len, "region client %u: pinned %u, segments %u",
			 c.id, c.pinned_pages, c.region_segments);
		smnl_unregister(&nl, got->id);
		return -1;
	}
	ret = smnl_sync_client(&nl, got->id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0,
			       &cerr, NULL);
	if (ret || cerr) {
		snprintf(why, len, "client %u does not sync: %s, client %s",
			 got->id, errstr(ret), errstr(cerr));
		smnl_unregister(&nl, got->id);
		return -1;
	}
	ret = smnl_unregister(&nl, got->id);
	if (ret) {
		snprintf(why, len, "client %u does not delete: %s", got->id,
			 errstr(ret));
		return -1;
	}
	return 0;
}

static int attempt_new_sim(int n, int *injected, int *errored, char *why,
			   size_t len)
{
	struct smnl_client got = { 0 };
	struct state before;
	struct answer a;

	state_get(&before);
	new_sim_msg("fi-sim");
	talk(&nl, n, parse_client_cb, &got, &a);
	*injected = a.injected;
	if (check_new(&a, &got, "fi-sim", IB_SYNC_MEM_KIND_SIM, errored, why,
		      len))
		return -1;
	return state_same(&before, why, len) ? 0 : -1;
}

static void *region_buf;

static int attempt_new_region(int n, int *injected, int *errored, char *why,
			      size_t len)
{
	struct smnl_client got = { 0 };
	struct state before;
	struct answer a;

	state_get(&before);
	new_region_msg("fi-region", region_buf, REGION_PAGES * page_size);
	talk(&nl, n, parse_client_cb, &got, &a);
	*injected = a.injected;
	if (check_new(&a, &got, "fi-region", IB_SYNC_MEM_KIND_REGION, errored,
		      why, len))
		return -1;
	return state_same(&before, why, len) ? 0 : -1;
}

static int attempt_new_dmabuf(int n, int *injected, int *errored, char *why,
			      size_t len)
{
	struct smnl_client got = { 0 };
	struct state before;
	struct answer a;
	long count0 = 0, count = 0;
	int att0 = 0, att = 0, fd, ret;
	uint64_t ino = 0;

	fd = vgem_dmabuf(drm, DMABUF_SIZE, &ino);
	if (fd < 0) {
		snprintf(why, len, "vgem buffer: %s", errstr(fd));
		*injected = 1;	/* not this attempt's fault: go on */
		return -1;
	}
	vgem_bufinfo(ino, &count0, &att0);
	state_get(&before);
	new_dmabuf_msg("fi-dmabuf", fd);
	talk(&nl, n, parse_client_cb, &got, &a);
	*injected = a.injected;
	ret = check_new(&a, &got, "fi-dmabuf", IB_SYNC_MEM_KIND_DMABUF, errored,
			why, len);
	if (!ret && !state_same(&before, why, len))
		ret = -1;
	if (!ret && (vgem_bufinfo(ino, &count, &att) != 1 || count != count0 ||
		     att != att0)) {
		snprintf(why, len, "dma-buf references %ld -> %ld, attachments %d -> %d",
			 count0, count, att0, att);
		ret = -1;
	}
	close(fd);
	if (!ret && vgem_bufinfo(ino, &count, &att) != 0) {
		snprintf(why, len, "dma-buf still there after its last fd closed (references %ld)",
			 count);
		ret = -1;
	}
	return ret;
}

/* A sim client through the sim module's debugfs (a write(2)). */
static int attempt_new_simfs(int n, int *injected, int *errored, char *why,
			     size_t len)
{
	char line[64];
	struct state before;
	struct smnl_client c;
	int fd, ret, found, l;
	ssize_t w;

	l = snprintf(line, sizeof(line), "%s fi-simfs latency_us=0", dev);
	fd = open(SIMFS "/new_client", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "open new_client: %s", strerror(errno));
		*injected = 1;
		return -1;
	}
	state_get(&before);
	nth_arm(n);
	w = write(fd, line, l);
	ret = w < 0 ? -errno : 0;
	*injected = nth_disarm();
	close(fd);
	found = find_client("fi-simfs", &c);
	if (ret) {
		*errored = 1;
		if (found) {
			snprintf(why, len, "new_client failed with %s but %s",
				 errstr(ret), found > 0 ? "the client exists" :
				 "the dump failed");
			if (found > 0) {
				fd = open(SIMFS "/del_client", O_WRONLY);
				dprintf(fd, "%u", c.id);
				close(fd);
			}
			return -1;
		}
		if (!clean_errno(ret)) {
			snprintf(why, len, "new_client failed with %s", errstr(ret));
			return -1;
		}
	} else {
		if (found != 1 || c.state != IB_SYNC_MEM_CLIENT_LIVE) {
			snprintf(why, len, "new_client succeeded but the client is %s",
				 found == 1 ? "not live" : "missing");
			return -1;
		}
		fd = open(SIMFS "/del_client", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || dprintf(fd, "%u", c.id) < 0) {
			snprintf(why, len, "del_client %u: %s", c.id,
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return state_same(&before, why, len) ? 0 : -1;
}

/* ---- sync and dump paths, on three clients of every kind ---- */

static uint32_t ids[3];
static int fix_dmabuf = -1;

static int fixture_up(void)
{
	uint64_t ino = 0;
	int ret;

	ret = smnl_register_sim(&nl, dev, "fi-fix-sim", 0);
	if (ret < 0)
		return ret;
	ids[0] = ret;
	ret = smnl_register_region(&nl, dev, "fi-fix-region", (uintptr_t)region_buf,
				   REGION_PAGES * page_size,
				   IB_SYNC_MEM_REGION_F_WRITE);
	if (ret < 0)
		return ret;
	ids[1] = ret;
	fix_dmabuf = vgem_dmabuf(drm, DMABUF_SIZE, &ino);
	if (fix_dmabuf < 0)
		return fix_dmabuf;
	ret = smnl_register_dmabuf(&nl, dev, "fi-fix-dmabuf", fix_dmabuf);
	if (ret < 0)
		return ret;
	ids[2] = ret;
	return 0;
}

/* Delete the three; the counters then say whether a reference leaked. */
static int fixture_down(struct state *base, char *why, size_t len)
{
	int i, ret = 0;

	for (i = 0; i < 3; i++) {
		if (ids[i] && smnl_unregister(&nl, ids[i]))
			ret = -1;
		ids[i] = 0;
	}
	if (fix_dmabuf >= 0)
		close(fix_dmabuf);
	fix_dmabuf = -1;
	if (ret) {
		snprintf(why, len, "cannot delete the fixture clients");
		return -1;
	}
	return state_same(base, why, len) ? 0 : -1;
}

/* Every fixture client still live after the attempt. */
static int fixture_live(char *why, size_t len)
{
	struct smnl_client c;
	int i, ret;

	for (i = 0; i < 3; i++) {
		ret = smnl_client_get(&nl, ids[i], &c);
		if (ret || c.state != IB_SYNC_MEM_CLIENT_LIVE) {
			snprintf(why, len, "fixture client %u: %s, state %u",
				 ids[i], errstr(ret), c.state);
			return 0;
		}
	}
	return 1;
}

struct sync_reply {
	int have_run;
	uint32_t run, errors;
	int32_t err;
	int results;		/* per-client results */
	int ours;		/* of them, for fixture clients */
	int bad;		/* of ours, with an error */
};

static void sync_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct sync_reply *r = arg;
	const struct nlattr *tb[IB_SYNC_MEM_A_MAX + 1], *x;
	const void *p;
	size_t plen;
	int rem, i;

	p = smnl_genl_payload(nlh, &plen);
	smnl_parse(p, plen, tb, IB_SYNC_MEM_A_MAX);
	if (tb[IB_SYNC_MEM_A_SYNC_RUN]) {
		r->have_run = 1;
		r->run = smnl_get_u32(tb[IB_SYNC_MEM_A_SYNC_RUN]);
	}
	if (tb[IB_SYNC_MEM_A_SYNC_ERRORS])
		r->errors = smnl_get_u32(tb[IB_SYNC_MEM_A_SYNC_ERRORS]);
	if (tb[IB_SYNC_MEM_A_SYNC_ERR])
		r->err = smnl_get_s32(tb[IB_SYNC_MEM_A_SYNC_ERR]);
	if (!tb[IB_SYNC_MEM_A_SYNC_RESULTS])
		return;
	smnl_for_each(x, rem, smnl_data(tb[IB_SYNC_MEM_A_SYNC_RESULTS]),
		      smnl_len(tb[IB_SYNC_MEM_A_SYNC_RESULTS])) {
		const struct nlattr *rt[IB_SYNC_MEM_A_MAX + 1];
		uint32_t id;

		smnl_parse_nested(x, rt, IB_SYNC_MEM_A_MAX);
		if (!rt[IB_SYNC_MEM_A_CLIENT_ID])
			continue;
		r->results++;
		id = smnl_get_u32(rt[IB_SYNC_MEM_A_CLIENT_ID]);
		for (i = 0; i < 3; i++) {
			if (id != ids[i])
				continue;
			r->ours++;
			if (rt[IB_SYNC_MEM_A_SYNC_ERR] &&
			    smnl_get_s32(rt[IB_SYNC_MEM_A_SYNC_ERR]))
				r->bad++;
		}
	}
}

enum sync_kind { SYNC_SINGLE, SYNC_DEVICE, SYNC_BATCH };
static enum sync_kind sync_kind;

static int attempt_sync(int n, int *injected, int *errored, char *why,
			size_t len)
{
	struct sync_reply r = { 0 };
	struct state before;
	struct answer a;
	size_t nest;
	int i, want;

	state_get(&before);
	smnl_msg_init(&nl, &req, IB_SYNC_MEM_CMD_SYNC, 0);
	switch (sync_kind) {
	case SYNC_SINGLE:
		smnl_put_u32(&req, IB_SYNC_MEM_A_CLIENT_ID, ids[1]);
		smnl_put_u32(&req, IB_SYNC_MEM_A_SYNC_DIR, IB_SYNC_MEM_SYNC_TO_CPU);
		want = 1;
		break;
	case SYNC_DEVICE:
		put_dev();
		smnl_put_u32(&req, IB_SYNC_MEM_A_SYNC_DIR, IB_SYNC_MEM_SYNC_TO_DEVICE);
		want = 3;
		break;
	default:
		nest = smnl_nest_start(&req, IB_SYNC_MEM_A_SYNC_CLIENTS);
		for (i = 0; i < 3; i++)
			smnl_put_u32(&req, IB_SYNC_MEM_A_CLIENT_ID, ids[i]);
		smnl_nest_end(&req, nest);
		smnl_put_u32(&req, IB_SYNC_MEM_A_SYNC_DIR,
			     IB_SYNC_MEM_SYNC_BIDIRECTIONAL);
		want = 3;
		break;
	}
	talk(&nl, n, sync_cb, &r, &a);
	*injected = a.injected;
	if (a.ret) {
		*errored = 1;
		if (!clean_errno(a.ret)) {
			snprintf(why, len, "SYNC failed with %s (%s)",
				 errstr(a.ret), a.extack);
			return -1;
		}
	} else if (!r.have_run || r.run < (uint32_t)want || r.ours != want ||
		   r.bad || r.err) {
		snprintf(why, len, "SYNC answered incompletely: run %u (want %d), %d of our results, %d with errors, err %s",
			 r.run, want, r.ours, r.bad, errstr(r.err));
		return -1;
	}
	if (!fixture_live(why, len))
		return -1;
	return state_same(&before, why, len) ? 0 : -1;
}

/*
 * The data path's batch (IB_SYNC_MEM_IOC_SYNC_BATCH on /dev/ib_sync_mem)
 * of the three, blocking or asynchronous: its request's copies, the
 * entries' lookups, an asynchronous job and its sync_file are fault
 * points. A fault must fail the ioctl cleanly; kmemleak (the debug
 * kernel's, read by the host at the end of the run) sees a request's
 * buffer lost on the way.
 */
static int devfd = -1;
static int batch_async;
static struct ib_sync_mem_ioc_entry batch_ent[3];

static int attempt_dev_batch(int n, int *injected, int *errored, char *why,
			     size_t len)
{
	struct ib_sync_mem_ioc_sync_batch b = {
		.entries = (uintptr_t)batch_ent, .n = 3,
		.dir = IB_SYNC_MEM_SYNC_TO_DEVICE, .out_fence = -1,
		.flags = batch_async ? IB_SYNC_MEM_IOC_F_ASYNC : 0,
	};
	struct state before;
	int i, ret, st;

	state_get(&before);
	for (i = 0; i < 3; i++)
		batch_ent[i] = (struct ib_sync_mem_ioc_entry){ .id = ids[i], .err = 12345 };
	nth_arm(n);
	ret = ioctl(devfd, IB_SYNC_MEM_IOC_SYNC_BATCH, &b) ? -errno : 0;
	*injected = nth_disarm();
	if (ret) {
		*errored = 1;
		if (!clean_errno(ret)) {
			snprintf(why, len, "SYNC_BATCH failed with %s", errstr(ret));
			return -1;
		}
	} else if (batch_async) {
		st = b.out_fence >= 0 ? sync_file_wait(b.out_fence, 60000) : -EBADF;
		if (b.out_fence >= 0)
			close(b.out_fence);
		if (st != 1) {
			snprintf(why, len, "async SYNC_BATCH: its fence signalled %s",
				 st == 1 ? "ok" : errstr(st));
			return -1;
		}
	} else if (b.run != 3 || b.errors || batch_ent[0].err ||
		   batch_ent[1].err || batch_ent[2].err) {
		snprintf(why, len, "SYNC_BATCH answered incompletely: run %u errors %u, errs %d %d %d",
			 b.run, b.errors, batch_ent[0].err, batch_ent[1].err,
			 batch_ent[2].err);
		return -1;
	}
	if (!fixture_live(why, len))
		return -1;
	return state_same(&before, why, len) ? 0 : -1;
}

/* Dumps and gets: a fresh socket for each, since a dump cut short by a
 * failed allocation stays half-done on its socket. */
enum dump_kind {
	DUMP_CLIENTS, GET_CLIENT, DUMP_DEVS, GET_DEV,
	STATS_MODULE, STATS_DEV, STATS_CLIENT,
};
static enum dump_kind dump_kind;

struct dump_seen {
	int ours;		/* fixture clients, or our device */
	int stats;		/* a STATS nest */
};

static void dump_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_seen *d = arg;
	const struct nlattr *tb[IB_SYNC_MEM_A_MAX + 1];
	char name[64];
	const void *p;
	size_t plen;
	int i;

	p = smnl_genl_payload(nlh, &plen);
	smnl_parse(p, plen, tb, IB_SYNC_MEM_A_MAX);
	if (tb[IB_SYNC_MEM_A_STATS])
		d->stats++;
	switch (dump_kind) {
	case DUMP_CLIENTS:
	case GET_CLIENT:
		if (!tb[IB_SYNC_MEM_A_CLIENT_ID] || !tb[IB_SYNC_MEM_A_STATS])
			return;
		for (i = 0; i < 3; i++)
			if (smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_ID]) == ids[i])
				d->ours++;
		break;
	default:
		if (!tb[IB_SYNC_MEM_A_DEV_NAME])
			return;
		smnl_get_str(tb[IB_SYNC_MEM_A_DEV_NAME], name, sizeof(name));
		if (!strcmp(name, dev))
			d->ours++;
		break;
	}
}

static int attempt_dump(int n, int *injected, int *errored, char *why,
			size_t len)
{
	struct dump_seen d = { 0 };
	struct state before;
	struct answer a;
	struct smnl s;
	int want_ours = 1, want_stats = 1, ret;

	ret = smnl_open(&s);
	if (ret) {
		snprintf(why, len, "socket: %s", errstr(ret));
		*injected = 1;
		return -1;
	}
	state_get(&before);
	switch (dump_kind) {
	case DUMP_CLIENTS:
		smnl_msg_init(&s, &req, IB_SYNC_MEM_CMD_CLIENT_GET, NLM_F_DUMP);
		want_ours = 3;
		want_stats = 3;
		break;
	case GET_CLIENT:
		smnl_msg_init(&s, &req, IB_SYNC_MEM_CMD_CLIENT_GET, 0);
		smnl_put_u32(&req, IB_SYNC_MEM_A_CLIENT_ID, ids[2]);
		break;
	case DUMP_DEVS:
		smnl_msg_init(&s, &req, IB_SYNC_MEM_CMD_DEV_GET, NLM_F_DUMP);
		want_stats = 0;	/* one per device, any number */
		break;
	case GET_DEV:
		smnl_msg_init(&s, &req, IB_SYNC_MEM_CMD_DEV_GET, 0);
		smnl_put_str(&req, IB_SYNC_MEM_A_DEV_NAME, dev);
		break;
	case STATS_MODULE:
		smnl_msg_init(&s, &req, IB_SYNC_MEM_CMD_STATS_GET, 0);
		want_ours = 0;
		break;
	case STATS_DEV:
		smnl_msg_init(&s, &req, IB_SYNC_MEM_CMD_STATS_GET, 0);
		smnl_put_str(&req, IB_SYNC_MEM_A_DEV_NAME, dev);
		break;
	case STATS_CLIENT:
		smnl_msg_init(&s, &req, IB_SYNC_MEM_CMD_STATS_GET, 0);
		smnl_put_u32(&req, IB_SYNC_MEM_A_CLIENT_ID, ids[0]);
		want_ours = 0;
		break;
	}
	talk(&s, n, dump_cb, &d, &a);
	*injected = a.injected;
	smnl_close(&s);
	if (a.ret) {
		*errored = 1;
		if (!clean_errno(a.ret)) {
			snprintf(why, len, "failed with %s (%s)", errstr(a.ret),
				 a.extack);
			return -1;
		}
	} else if (d.ours < want_ours || d.stats < want_stats || a.intr) {
		snprintf(why, len, "answered incompletely: %d of %d expected entries, %d stats (want %d), intr %d",
			 d.ours, want_ours, d.stats, want_stats, a.intr);
		return -1;
	}
	if (!fixture_live(why, len))
		return -1;
	return state_same(&before, why, len) ? 0 : -1;
}

/* ---- events: a listener, so that the notification paths allocate ---- */

struct grp_ctx {
	uint32_t id;
};

static int grp_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct grp_ctx *g = arg;
	const struct nlattr *tb[CTRL_ATTR_MAX + 1], *x;
	const void *p;
	size_t len;
	int rem;

	p = smnl_genl_payload(nlh, &len);
	smnl_parse(p, len, tb, CTRL_ATTR_MAX);
	if (!tb[CTRL_ATTR_MCAST_GROUPS])
		return 0;
	smnl_for_each(x, rem, smnl_data(tb[CTRL_ATTR_MCAST_GROUPS]),
		      smnl_len(tb[CTRL_ATTR_MCAST_GROUPS])) {
		const struct nlattr *gt[CTRL_ATTR_MCAST_GRP_MAX + 1];
		char name[32];

		smnl_parse_nested(x, gt, CTRL_ATTR_MCAST_GRP_MAX);
		if (!gt[CTRL_ATTR_MCAST_GRP_NAME] || !gt[CTRL_ATTR_MCAST_GRP_ID])
			continue;
		smnl_get_str(gt[CTRL_ATTR_MCAST_GRP_NAME], name, sizeof(name));
		if (!strcmp(name, IB_SYNC_MEM_GENL_MCGRP_EVENTS))
			g->id = smnl_get_u32(gt[CTRL_ATTR_MCAST_GRP_ID]);
	}
	return 0;
}

static int events_open(void)
{
	struct smnl s;
	struct smnl_msg *m = &req;
	struct grp_ctx g = { 0 };
	int ret;

	ret = smnl_open(&s);
	if (ret)
		return ret;
	smnl_msg_init_family(m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	smnl_put_str(m, CTRL_ATTR_FAMILY_NAME, IB_SYNC_MEM_GENL_NAME);
	ret = smnl_talk(&s, m, grp_cb, &g);
	if (!ret && !g.id)
		ret = -ENOENT;
	if (!ret && setsockopt(s.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			       &g.id, sizeof(g.id)))
		ret = -errno;
	if (ret) {
		smnl_close(&s);
		return ret;
	}
	events_fd = s.fd;
	return 0;
}

static long events_drain(void)
{
	long n = 0;

	if (events_fd < 0)
		return 0;
	while (recv(events_fd, rx, sizeof(rx), MSG_DONTWAIT) > 0 ||
	       errno == ENOBUFS)
		n++;
	return n;
}

/* ---- main ---- */

/* Fault in a deep stack now, so that no armed call faults it in later. */
static void __attribute__((noinline)) touch_stack(void)
{
	volatile char buf[256 * 1024];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 1024)
		buf[i] = 1;
}

static void run_sync_path(const char *name, enum sync_kind k)
{
	sync_kind = k;
	run_path(name, attempt_sync);
}

static void run_dump_path(const char *name, enum dump_kind k)
{
	dump_kind = k;
	run_path(name, attempt_dump);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "max", required_argument, NULL, 'm' },
		{ 0 }
	};
	struct state base;
	char why[512];
	int opt, ret, cerr;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'm':
			max_n = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: failnth [--dev rxe0] [--max N]\n");
			return 2;
		}
	}
	ktap_start();
	nth_fd = open(FAILNTH, O_RDWR | O_CLOEXEC);
	if (nth_fd < 0) {
		ktap_skip("no " FAILNTH ": kernel without CONFIG_FAULT_INJECTION",
			  "fault injection on the register, sync and dump paths");
		return ktap_finish();
	}
	page_size = sysconf(_SC_PAGESIZE);
	touch_stack();
	if (!ktap_result(mlockall(MCL_CURRENT | MCL_FUTURE) == 0,
			 "mlockall: nothing of ours faults in while a fault is armed"))
		ktap_diag("mlockall: %s", strerror(errno));
	ret = smnl_open(&nl);
	if (!ktap_result(ret == 0, "netlink socket, family resolved"))
		return ktap_finish();
	drm = vgem_open();
	if (!ktap_result(drm >= 0, "vgem card open (dma-buf exporter)"))
		return ktap_finish();
	ret = events_open();
	ktap_result(ret == 0, "listening to events (their allocations are fault points too)");
	region_buf = mmap(NULL, REGION_PAGES * page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!ktap_result(region_buf != MAP_FAILED, "region buffer mapped"))
		return ktap_finish();
	memset(region_buf, 0x5a, REGION_PAGES * page_size);

	state_get(&base);
	ktap_diag("before: clients %d, registered %d, VmPin %ld kB",
		  base.clients, base.registered, base.vmpin_kb);
	/* Sanity: without a fault armed, every path works. */
	{
		int inj = 0, err = 0;

		why[0] = '\0';
		ret = attempt_new_sim(0, &inj, &err, why, sizeof(why));
		if (!ktap_result(!ret && !err, "register without a fault armed"))
			ktap_diag("%s", why);
	}

	run_path("register sim (netlink)", attempt_new_sim);
	run_path("register region", attempt_new_region);
	run_path("register dma-buf", attempt_new_dmabuf);
	run_path("register sim (debugfs)", attempt_new_simfs);

	ret = fixture_up();
	if (!ktap_result(ret == 0, "three clients for the sync and dump paths (sim, region, dma-buf)")) {
		ktap_diag("fixture: %s (%s)", errstr(ret), nl.extack);
		fixture_down(&base, why, sizeof(why));
		return ktap_finish();
	}
	run_sync_path("sync one client", SYNC_SINGLE);
	run_sync_path("sync a device", SYNC_DEVICE);
	run_sync_path("sync a batch", SYNC_BATCH);
	devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (ktap_result(devfd >= 0, "/dev/" IB_SYNC_MEM_DEV_NAME " open")) {
		run_path("sync a batch (/dev/ib_sync_mem)", attempt_dev_batch);
		batch_async = 1;
		run_path("sync a batch asynchronously (/dev/ib_sync_mem)",
			 attempt_dev_batch);
		close(devfd);
	}
	run_dump_path("client dump", DUMP_CLIENTS);
	run_dump_path("client get", GET_CLIENT);
	run_dump_path("device dump", DUMP_DEVS);
	run_dump_path("device get", GET_DEV);
	run_dump_path("stats of the module", STATS_MODULE);
	run_dump_path("stats of a device", STATS_DEV);
	run_dump_path("stats of a client", STATS_CLIENT);
	why[0] = '\0';
	if (!ktap_result(fixture_down(&base, why, sizeof(why)) == 0,
			 "fixture deleted: counters and VmPin back where they started (no reference leaked)"))
		ktap_diag("%s", why);

	/* Still works. */
	ret = smnl_register_sim(&nl, dev, "fi-after", 0);
	cerr = -1;
	if (ret > 0) {
		smnl_sync_client(&nl, ret, IB_SYNC_MEM_SYNC_TO_CPU, 0, &cerr, NULL);
		smnl_unregister(&nl, ret);
	}
	ktap_result(ret > 0 && cerr == 0, "the module still registers, syncs and deletes afterwards");
	ktap_diag("events received meanwhile: %ld", events_drain());
	ktap_diag("faults injected: %ld in total", total_faults);
	return ktap_finish();
}
