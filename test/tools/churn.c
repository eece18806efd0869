// SPDX-License-Identifier: GPL-2.0
/*
 * churn: one worker of test/vm/75-churn.sh. Registers and deletes clients
 * of every kind, syncs them (one, a batch, a whole device) and dumps, in a
 * random order, while the suite deletes and re-adds devices, reloads the sim
 * module and kills other workers.
 *
 *   churn run --dev rxe0[,rxe1...] --iters N [--seed S] [--tag NAME]
 *                               (--iters 0: until SIGTERM, a storm beside
 *                               something else, then the counts as usual)
 *   churn hold --dev DEV [--tag NAME] [--owned-only]
 *
 * run: N iterations. Errors that the suite's own churn explains are
 * counted and accepted: -ENODEV (the device was deleted), -ENOENT (a client
 * went with its device), -ENXIO (a region whose memory we unmapped),
 * -EOPNOTSUPP (the sim module is being reloaded), -EINTR (a dump retried
 * too often while clients came and went). Anything else is unexpected:
 * printed, and the exit status is 1. The last line of output holds the
 * counts: "counts reg_sim=... ".
 *
 * hold: registers a sim, a region and a dma-buf client owned by its socket
 * (and, without --owned-only, one of each that is not), prints
 * "ready ID..." and sleeps until killed.
 *
 * Needs ib_sync_mem (ib_sync_mem_sim for sim clients, vgem for dma-bufs),
 * root, debugfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ktap.h"
#include "smnl_raw.h"
#include "vgem.h"

#define SIMFS		"/sys/kernel/debug/ib_sync_mem_sim"
#define SLOTS		8
#define MAX_DEVS	4

enum { K_SIM, K_REGION, K_DMABUF, K_SIMFS, K_N };
static const char *const kname[K_N] = { "sim", "region", "dmabuf", "simfs" };

struct slot {
	uint32_t id;
	int kind;
	int owned;
	void *buf;		/* region memory */
	size_t len;
	int unmapped;		/* region memory unmapped before the delete */
	int fd;			/* dma-buf fd we keep, or -1 */
};

static struct smnl nl;
static struct slot slots[SLOTS];
static char *devs[MAX_DEVS];
static int ndevs;
static const char *tag = "churn";
static int drm = -1;
static unsigned int seed;
static long page_size;

static struct {
	long reg[K_N], refused, del, single, batch, device, dumps, reopen;
	long owned_gone, unexpected;
} cnt;

static unsigned int rnd(unsigned int n)
{
	return (unsigned int)rand_r(&seed) % n;
}

static void unexpected(const char *what, int err)
{
	cnt.unexpected++;
	printf("unexpected: %s: %s (%s)\n", what, strerror(-err), nl.extack);
	fflush(stdout);
}

/* -errno that the churn explains? */
static int expected(int err, const char *allowed)
{
	static const struct { int e; char c; } map[] = {
		{ ENODEV, 'd' }, { ENOENT, 'e' }, { ENXIO, 'x' },
		{ EOPNOTSUPP, 'o' }, { EINTR, 'i' }, { EIO, 'I' },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (-err == map[i].e && strchr(allowed, map[i].c))
			return 1;
	return 0;
}

static const char *pick_dev(void)
{
	return devs[rnd(ndevs)];
}

/* ---- registration ---- */

static int reg_sim(const char *dev, const char *name, uint32_t flags)
{
	struct smnl_new req = {
		.dev = dev, .name = name, .kind = IB_SYNC_MEM_KIND_SIM,
		.flags = flags, .sim_nest = 1, .sim_latency_us = rnd(50),
		.sim_size = 4096,
	};

	return smnl_register(&nl, &req);
}

static int reg_region(const char *dev, const char *name, uint32_t flags,
		      struct slot *s)
{
	struct smnl_new req = {
		.dev = dev, .name = name, .kind = IB_SYNC_MEM_KIND_REGION,
		.flags = flags, .region_nest = 1,
		.region_access = IB_SYNC_MEM_REGION_F_WRITE,
	};
	int ret;

	s->len = (1 + rnd(4)) * page_size;
	s->buf = mmap(NULL, s->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->buf == MAP_FAILED) {
		s->buf = NULL;
		return -errno;
	}
	memset(s->buf, 0x3c, s->len);
	req.region_addr = (uintptr_t)s->buf;
	req.region_len = s->len;
	ret = smnl_register(&nl, &req);
	if (ret < 0) {
		munmap(s->buf, s->len);
		s->buf = NULL;
	}
	return ret;
}

static int reg_dmabuf(const char *dev, const char *name, uint32_t flags,
		      struct slot *s)
{
	struct smnl_new req = {
		.dev = dev, .name = name, .kind = IB_SYNC_MEM_KIND_DMABUF,
		.flags = flags, .dmabuf_nest = 1,
	};
	int fd, ret;

	fd = vgem_dmabuf(drm, 4 * 4096, NULL);
	if (fd < 0)
		return fd;
	req.dmabuf_fd = fd;
	ret = smnl_register(&nl, &req);
	/* Half the time the client alone keeps the buffer. */
	if (ret < 0 || rnd(2)) {
		close(fd);
		fd = -1;
	}
	s->fd = fd;
	return ret;
}

/* Through the sim module's debugfs; the id is found by its name. */
static int reg_simfs(const char *dev, const char *name)
{
	struct smnl_client c;
	char line[128];
	int fd, len, ret;

	fd = open(SIMFS "/new_client", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		/* Gone, or going: the sim module is being reloaded. */
		return errno == ENOENT || errno == ENXIO ? -EOPNOTSUPP : -errno;
	len = snprintf(line, sizeof(line), "%s %s latency_us=%u", dev, name,
		       rnd(20));
	ret = write(fd, line, len) == len ? 0 : -errno;
	close(fd);
	if (ret)
		return ret;
	ret = smnl_client_find(&nl, name, &c);
	if (ret == -ENOENT)
		return -ENOENT - 1000;	/* created, then not found: a bug */
	return ret ? ret : (int)c.id;
}

static int del_simfs(uint32_t id)
{
	char line[32];
	int fd, len, ret;

	fd = open(SIMFS "/del_client", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(line, sizeof(line), "%u", id);
	ret = write(fd, line, len) == len ? 0 : -errno;
	close(fd);
	return ret;
}

static void slot_release(struct slot *s)
{
	if (s->buf && !s->unmapped)
		munmap(s->buf, s->len);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* Delete the client of a slot. */
static void slot_delete(struct slot *s)
{
	int ret;

	if (s->kind == K_SIMFS) {
		ret = del_simfs(s->id);
		/* The sim module cannot unload while the client lives. */
		if (ret)
			unexpected("delete a debugfs sim client", ret);
	} else {
		if (s->kind == K_REGION && !s->unmapped && rnd(6) == 0) {
			/* Unmap first: the client turns invalidated. */
			munmap(s->buf, s->len);
			s->unmapped = 1;
			ret = smnl_sync_client(&nl, s->id, 1 + rnd(3), 0, NULL,
					       NULL);
			cnt.single++;
			/* -ENODEV if its device went first. */
			if (ret && !expected(ret, "xed"))
				unexpected("sync an unmapped region", ret);
		}
		ret = smnl_unregister(&nl, s->id);
		if (ret && !expected(ret, "e")) {
			struct smnl_client c;
			int gret = smnl_client_get(&nl, s->id, &c);

			unexpected("delete a client", ret);
			printf("  client %u (%s, owned %d): get %d: %s on %s kind %u origin %u state %u reason %u\n",
			       s->id, kname[s->kind], s->owned, gret, c.name,
			       c.dev, c.kind, c.origin, c.state, c.inval_reason);
		}
	}
	cnt.del++;
	slot_release(s);
}

static void do_register(int iter)
{
	struct slot *s = NULL;
	uint32_t flags = 0;
	const char *dev = pick_dev();
	char name[32];
	int i, kind, ret;

	for (i = 0; i < SLOTS; i++)
		if (!slots[i].id) {
			s = &slots[i];
			break;
		}
	if (!s)
		return;
	kind = rnd(100);
	kind = kind < 35 ? K_SIM : kind < 60 ? K_REGION : kind < 85 ? K_DMABUF :
	       K_SIMFS;
	if (kind == K_DMABUF && drm < 0)
		kind = K_SIM;
	if (rnd(2))
		flags |= IB_SYNC_MEM_CLIENT_F_OWNED;
	/* Only sim clients can be marked dirty: the others refuse lazy. */
	if (rnd(4) == 0 && (kind == K_SIM || kind == K_SIMFS))
		flags |= IB_SYNC_MEM_CLIENT_F_LAZY;
	snprintf(name, sizeof(name), "%.16s-%d", tag, iter);
	s->fd = -1;
	switch (kind) {
	case K_SIM:
		ret = reg_sim(dev, name, flags);
		break;
	case K_REGION:
		ret = reg_region(dev, name, flags, s);
		break;
	case K_DMABUF:
		ret = reg_dmabuf(dev, name, flags, s);
		break;
	default:
		ret = reg_simfs(dev, name);
		flags = 0;
		break;
	}
	if (ret < 0) {
		if (expected(ret, kind == K_SIMFS ? "doI" : "do"))
			cnt.refused++;
		else if (ret < -1000)
			unexpected("sim debugfs client created but not listed",
				   ret + 1000);
		else
			unexpected(kind == K_SIMFS ? "register through sim debugfs" :
				   "register", ret);
		slot_release(s);
		return;
	}
	cnt.reg[kind]++;
	s->id = ret;
	s->kind = kind;
	s->owned = !!(flags & IB_SYNC_MEM_CLIENT_F_OWNED);
	/*
	 * Sim clients come and go at once half the time (debugfs ones
	 * always), so that the sim module finds moments to unload.
	 */
	if (kind == K_SIMFS || (kind == K_SIM && rnd(2))) {
		ret = smnl_sync_client(&nl, s->id, 1 + rnd(3), 0, NULL, NULL);
		cnt.single++;
		if (ret && !expected(ret, "ed"))
			unexpected("sync a new sim client", ret);
		slot_delete(s);
	}
}

static struct slot *random_slot(void)
{
	int i, start = rnd(SLOTS);

	for (i = 0; i < SLOTS; i++)
		if (slots[(start + i) % SLOTS].id)
			return &slots[(start + i) % SLOTS];
	return NULL;
}

static void do_sync_one(void)
{
	struct slot *s = random_slot();
	int ret, cerr = 0;

	if (!s)
		return;
	ret = smnl_sync_client(&nl, s->id, 1 + rnd(3), 0, &cerr, NULL);
	cnt.single++;
	if (ret && !expected(ret, "exd"))
		unexpected("sync one client", ret);
	/* Our clients do not fail a sync while they are live. */
	if (!ret && cerr)
		unexpected("sync one client: the client's error", cerr);
}

static void do_sync_batch(void)
{
	struct smnl_msg *m = malloc(sizeof(*m));
	size_t nest;
	int i, n = 0, ret;

	if (!m)
		return;
	smnl_msg_init(&nl, m, IB_SYNC_MEM_CMD_SYNC, 0);
	nest = smnl_nest_start(m, IB_SYNC_MEM_A_SYNC_CLIENTS);
	for (i = 0; i < SLOTS; i++)
		if (slots[i].id) {
			smnl_put_u32(m, IB_SYNC_MEM_A_CLIENT_ID, slots[i].id);
			n++;
		}
	smnl_nest_end(m, nest);
	smnl_put_u32(m, IB_SYNC_MEM_A_SYNC_DIR, 1 + rnd(3));
	if (n) {
		ret = smnl_talk(&nl, m, NULL, NULL);
		cnt.batch++;
		if (ret && !expected(ret, "e"))
			unexpected("sync a batch", ret);
	}
	free(m);
}

static void do_sync_device(void)
{
	struct smnl_msg *m = malloc(sizeof(*m));
	int ret;

	if (!m)
		return;
	smnl_msg_init(&nl, m, IB_SYNC_MEM_CMD_SYNC, 0);
	smnl_put_str(m, IB_SYNC_MEM_A_DEV_NAME, pick_dev());
	smnl_put_u32(m, IB_SYNC_MEM_A_SYNC_DIR, 1 + rnd(3));
	ret = smnl_talk(&nl, m, NULL, NULL);
	cnt.device++;
	if (ret && !expected(ret, "d"))
		unexpected("sync a device", ret);
	free(m);
}

static int count_cb(const struct smnl_client *c, void *arg)
{
	(void)c;
	(*(int *)arg)++;
	return 0;
}

static void do_dump(void)
{
	struct smnl_msg *m;
	int n = 0, ret;

	switch (rnd(3)) {
	case 0:
		ret = smnl_client_dump(&nl, rnd(2) ? pick_dev() : NULL, count_cb,
				       &n);
		if (ret && !expected(ret, "di"))
			unexpected("client dump", ret);
		break;
	case 1:
		m = malloc(sizeof(*m));
		if (!m)
			return;
		smnl_msg_init(&nl, m, IB_SYNC_MEM_CMD_DEV_GET, NLM_F_DUMP);
		ret = smnl_talk(&nl, m, NULL, NULL);
		free(m);
		if (ret && !expected(ret, "i"))
			unexpected("device dump", ret);
		break;
	default:
		m = malloc(sizeof(*m));
		if (!m)
			return;
		smnl_msg_init(&nl, m, IB_SYNC_MEM_CMD_STATS_GET, 0);
		if (rnd(2))
			smnl_put_str(m, IB_SYNC_MEM_A_DEV_NAME, pick_dev());
		ret = smnl_talk(&nl, m, NULL, NULL);
		free(m);
		if (ret && !expected(ret, "d"))
			unexpected("stats", ret);
		break;
	}
	cnt.dumps++;
}

/* Close the socket: owned clients must go with it. */
static void do_reopen(void)
{
	uint32_t gone[SLOTS];
	struct smnl_client c;
	int i, n = 0, ret;

	for (i = 0; i < SLOTS; i++) {
		if (!slots[i].id || !slots[i].owned)
			continue;
		gone[n++] = slots[i].id;
		cnt.del++;
		slot_release(&slots[i]);
	}
	smnl_close(&nl);
	ret = smnl_open(&nl);
	if (ret) {
		unexpected("reopen the socket", ret);
		exit(1);
	}
	cnt.reopen++;
	for (i = 0; i < n; i++) {
		/* Deleted shortly after the close (the release's work item). */
		ret = smnl_wait_gone(&nl, gone[i], bound_ms(30000));
		if (!ret)
			ret = -ENOENT;
		else if (ret == -ETIMEDOUT)
			ret = smnl_client_get(&nl, gone[i], &c);
		/*
		 * One that its device's removal is deleting right now is
		 * left to that (invalidated, reason device).
		 */
		if (ret == -ENOENT ||
		    (!ret && c.state == IB_SYNC_MEM_CLIENT_INVALIDATED &&
		     c.inval_reason == IB_SYNC_MEM_INVAL_REASON_DEVICE)) {
			cnt.owned_gone++;
			continue;
		}
		unexpected("owned client outlives its socket", ret ?: -EEXIST);
		printf("  client %u: %s on %s kind %u state %u reason %u\n",
		       gone[i], c.name, c.dev, c.kind, c.state, c.inval_reason);
	}
}

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

static int run(int iters)
{
	struct sigaction sa = { .sa_handler = on_term, .sa_flags = SA_RESTART };
	int i, r;

	for (i = 0; i < SLOTS; i++)
		slots[i].fd = -1;
	/* iteration boundaries only: a call in flight completes (SA_RESTART) */
	if (!iters)
		sigaction(SIGTERM, &sa, NULL);
	for (i = 0; (!iters || i < iters) && !stopping; i++) {
		r = rnd(100);
		if (r < 30)
			do_register(i);
		else if (r < 45) {
			struct slot *s = random_slot();

			if (s)
				slot_delete(s);
		} else if (r < 70)
			do_sync_one();
		else if (r < 80)
			do_sync_batch();
		else if (r < 87)
			do_sync_device();
		else if (r < 96)
			do_dump();
		else
			do_reopen();
	}
	for (i = 0; i < SLOTS; i++)
		if (slots[i].id)
			slot_delete(&slots[i]);
	printf("counts reg_sim=%ld reg_region=%ld reg_dmabuf=%ld reg_simfs=%ld refused=%ld del=%ld sync_single=%ld sync_batch=%ld sync_dev=%ld dumps=%ld reopen=%ld owned_gone=%ld unexpected=%ld\n",
	       cnt.reg[K_SIM], cnt.reg[K_REGION], cnt.reg[K_DMABUF],
	       cnt.reg[K_SIMFS], cnt.refused, cnt.del, cnt.single, cnt.batch,
	       cnt.device, cnt.dumps, cnt.reopen, cnt.owned_gone,
	       cnt.unexpected);
	return cnt.unexpected ? 1 : 0;
}

static int hold(int owned_only)
{
	static struct slot h[6];
	const char *dev = devs[0];
	char name[32];
	int i, ret;

	for (i = 0; i < 6; i++) {
		uint32_t flags = i < 3 ? IB_SYNC_MEM_CLIENT_F_OWNED : 0;

		if (i >= 3 && owned_only)
			break;
		h[i].fd = -1;
		snprintf(name, sizeof(name), "%.16s-%s%s", tag, kname[i % 3],
			 flags ? "-own" : "");
		switch (i % 3) {
		case K_SIM:
			ret = reg_sim(dev, name, flags);
			break;
		case K_REGION:
			ret = reg_region(dev, name, flags, &h[i]);
			break;
		default:
			ret = reg_dmabuf(dev, name, flags, &h[i]);
			break;
		}
		if (ret < 0) {
			printf("failed: register %s: %s (%s)\n", name,
			       strerror(-ret), nl.extack);
			return 1;
		}
		h[i].id = ret;
	}
	printf("ready");
	for (i = 0; i < 6 && h[i].id; i++)
		printf(" %u", h[i].id);
	printf("\n");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "iters", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "tag", required_argument, NULL, 't' },
		{ "owned-only", no_argument, NULL, 'o' },
		{ 0 }
	};
	int opt, iters = 100, owned_only = 0, ret;
	char *devlist = NULL, *p;
	const char *mode;

	if (argc < 2) {
		fprintf(stderr, "usage: churn run|hold --dev DEV[,DEV] [--iters N] [--seed S] [--tag NAME] [--owned-only]\n");
		return 2;
	}
	mode = argv[1];
	optind = 2;
	seed = getpid();
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			devlist = optarg;
			break;
		case 'n':
			iters = atoi(optarg);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 't':
			tag = optarg;
			break;
		case 'o':
			owned_only = 1;
			break;
		default:
			return 2;
		}
	}
	if (!devlist)
		devlist = "rxe0";
	for (p = strtok(devlist, ","); p && ndevs < MAX_DEVS; p = strtok(NULL, ","))
		devs[ndevs++] = p;
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	ret = smnl_open(&nl);
	if (ret) {
		printf("failed: netlink: %s\n", strerror(-ret));
		return 1;
	}
	drm = vgem_open();
	if (!strcmp(mode, "hold")) {
		if (drm < 0) {
			printf("failed: no vgem card\n");
			return 1;
		}
		return hold(owned_only);
	}
	if (strcmp(mode, "run"))
		return 2;
	printf("churn %s: seed %u, %d iterations on %s%s\n", tag, seed, iters,
	       devs[0], ndevs > 1 ? " and more" : "");
	return run(iters);
}
