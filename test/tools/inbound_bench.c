// SPDX-License-Identifier: GPL-2.0
/*
 * inbound_bench: the inbound flush through the module against the floor a
 * user would otherwise write by hand (bench/guest.sh, suite "inbound").
 * Both run in one process, on one device:
 *
 *   floor   an RC QP of this process connected to itself on the device
 *           (rcqp.h), over one page of its memory: one 8-byte RDMA READ
 *           of that page posted and its completion polled, what NCCL's
 *           flush does after a receive (busy polling, with a sched_yield()
 *           while the CQ is empty: rxe's work in the kernel may need this
 *           CPU)
 *   module  a writable region client over another page of this process
 *           (registered over netlink, owned by the socket), and one
 *           IB_SYNC_MEM_CMD_SYNC of it with dir inbound: the module posts
 *           its RDMA READ of 8 bytes of the page on its own loopback RC
 *           QP of the device, waits for its completion and replies
 *   ioctl   the same inbound sync of the same client through
 *           /dev/ib_sync_mem (IB_SYNC_MEM_IOC_SYNC): the module's READ
 *           without the netlink round trip
 *
 * After a warm-up of all three, each repeat times ITERS of each, one by
 * one, the order turned every round so that drift hits all alike, and
 * prints one line on stdout for bench/report.py:
 *
 *   inbound rep=N iters=N gap_us=N floor_ns=T sm_ns=T floor_med_ns=T
 *           sm_med_ns=T floor_p99_ns=T sm_p99_ns=T kernel_med_ns=T
 *           io_med_ns=T io_p99_ns=T io_kernel_mean_ns=T
 *
 * Each timed flush starts with the device at rest: GAP_US (-g, default
 * 500) before it, untimed, in which this program keeps its CPU busy (as
 * a net plugin's progress thread polls) while rxe's work of the flush
 * before (its tasks run on in kworkers after the completion is posted)
 * ends, so that every path begins in the same state. Back to back (-g 0),
 * a flush's time depends on which went before it, not on its own path:
 * two of the three paths share the module's QP, and a READ posted while
 * that QP's task still runs waits for it. In VM runs of 6.12 here, the
 * ioctl's median against the floor's was 1.7x to 2.0x back to back in
 * this order, 0.55x with the floor put between every two of the module's
 * flushes, 1.3x with each path in blocks of 50; 1.03x to 1.06x after 300
 * us or 1 ms of busy rest. A rest spent asleep idles the vCPUs: their
 * wake-up joins every flush, and the p99s take a timer tick.
 *
 * floor_ns and sm_ns are the repeat's totals; *_med_ns and *_p99_ns the
 * median and 99th percentile (nearest rank) of one flush (CLOCK_MONOTONIC
 * around it: post to completion, request to parsed reply); kernel_med_ns
 * the median of the client's sync time as the kernel's reply gives it
 * (inside the registry: the module's READ and its wait); io_kernel_mean_ns
 * the same time's mean over the repeat's ioctl flushes (the client's
 * counted sync time over the repeat, less its netlink flushes' part, which
 * their replies give one by one). Anything else goes
 * to stderr. Any failure (set-up, a READ completing in error or reading
 * the wrong bytes, a sync refused or failing) ends the program with a
 * message on stderr and exit status 1: it never prints a figure it did not
 * measure. No timing decides anything; the waits are bounded (times
 * SYNCMEM_SLOW) as hang guards only.
 *
 *   inbound_bench [-d rxe0] [-a 192.168.77.1] [-n iters] [-r reps]
 *                 [-w warmup] [-g gap_us] [--smoke]
 *
 * -a: an IPv4 address of the device's netdev (its RoCE v2 GID is the QP's).
 * --smoke: 20 flushes of each, 2 repeats, 5 warm-up rounds (unless given).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/ib_sync_mem_dev.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BENCH_PROG "inbound_bench"

#include "ktap.h"
#include "smnl.h"
#include "rcqp.h"
#include "benchtool.h"

/* In the floor's page: the word READ, and where it lands. */
#define IB_SRC		0
#define IB_DST		64
#define IB_LEN		8

static struct smnl nl;
static int devfd;		/* /dev/ib_sync_mem */
static FILE *out;		/* the result lines: the stdout we were given */
static const char *dev = "rxe0";
static const char *addr = "192.168.77.1";
static long page;

static struct rc_end floor_qp;	/* connected to itself */
static struct rc_peer self;
static unsigned char *client_page;
static uint32_t client_id;
static uint64_t module_syncs;	/* inbound syncs asked for */
static int gap_us = 500;	/* rest before each timed flush */

static void ib_setup(void)
{
	struct smnl_new req = {
		.dev = dev,
		.name = "inbound-bench",
		.kind = IB_SYNC_MEM_KIND_REGION,
		.flags = IB_SYNC_MEM_CLIENT_F_OWNED,
		.region_nest = 1,
		.region_len = page,
		.region_access = IB_SYNC_MEM_REGION_F_WRITE,
	};
	int id, ret;

	floor_qp.dev = dev;
	floor_qp.ip = addr;
	floor_qp.size = page;
	floor_qp.buf = bench_map(page);
	ret = rc_setup(&floor_qp);
	if (ret)
		die("verbs set-up on %s (%s): %s", dev, addr, errstr(ret));
	rc_describe(&floor_qp, &self);
	ret = rc_connect(&floor_qp, &self);
	if (ret)
		die("connecting the RC QP on %s to itself: %s", dev,
		    errstr(ret));

	client_page = bench_map(page);
	req.region_addr = (uintptr_t)client_page;
	id = smnl_register(&nl, &req);
	if (id <= 0)
		die("register a page as a writable region client on %s: %s \"%s\"",
		    dev, errstr(id), nl.extack);
	client_id = id;
}

/* GAP_US on this CPU, busy, untimed: the device comes to rest meanwhile. */
static void ib_rest(void)
{
	uint64_t end = now_ns() + (uint64_t)gap_us * 1000;

	while (gap_us && now_ns() < end)
		;
}

/* The floor: one 8-byte RDMA READ of the QP's own page, polled. */
static uint64_t ib_floor_one(void)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)floor_qp.buf + IB_DST,
		.length = IB_LEN,
		.lkey = floor_qp.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	uint64_t t0, t;
	int n, ret;

	wr.wr.rdma.remote_addr = self.addr + IB_SRC;
	wr.wr.rdma.rkey = self.rkey;
	t0 = now_ns();
	ret = ibv_post_send(floor_qp.qp, &wr, &bad);
	if (ret)
		die("post an RDMA READ on the loopback QP: %s", strerror(ret));
	for (;;) {
		n = ibv_poll_cq(floor_qp.cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq failed");
		if (n)
			break;
		/* A hang guard, not a measurement. */
		if (now_ns() - t0 > (uint64_t)bound_ms(RC_CQ_TIMEOUT_MS) * 1000000)
			die("the loopback RDMA READ did not complete in %d ms",
			    bound_ms(RC_CQ_TIMEOUT_MS));
		sched_yield();
	}
	t = now_ns() - t0;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RDMA_READ)
		die("loopback RDMA READ: completion %s (opcode %d, vendor err 0x%x)",
		    ibv_wc_status_str(wc.status), wc.opcode, wc.vendor_err);
	return t;
}

/* The module: one inbound SYNC of the region client; *kns its kernel time. */
static uint64_t ib_module_one(uint64_t *kns)
{
	uint64_t t0, t;
	int ret, cerr;

	t0 = now_ns();
	ret = smnl_sync_client(&nl, client_id, IB_SYNC_MEM_SYNC_INBOUND, 0,
			       &cerr, kns);
	t = now_ns() - t0;
	if (ret || cerr)
		die("inbound sync of client %u: %s, client %s \"%s\"",
		    client_id, errstr(ret), errstr(cerr), nl.extack);
	module_syncs++;
	return t;
}

/* The same inbound sync through /dev/ib_sync_mem. */
static uint64_t ib_ioctl_one(void)
{
	struct ib_sync_mem_ioc_sync r = {
		.id = client_id, .dir = IB_SYNC_MEM_SYNC_INBOUND,
	};
	uint64_t t0, t;
	int ret;

	t0 = now_ns();
	ret = ioctl(devfd, IB_SYNC_MEM_IOC_SYNC, &r);
	t = now_ns() - t0;
	if (ret)
		die("inbound sync of client %u through /dev/%s: %s", client_id,
		    IB_SYNC_MEM_DEV_NAME, strerror(errno));
	module_syncs++;
	return t;
}

/* The word the floor's READs fetch, and a check that they brought it. */
static void ib_floor_word(uint64_t v)
{
	memcpy(floor_qp.buf + IB_SRC, &v, sizeof(v));
}

static void ib_floor_check(uint64_t v, const char *when)
{
	uint64_t got;

	memcpy(&got, floor_qp.buf + IB_DST, sizeof(got));
	if (got != v)
		die("%s: the loopback READs brought 0x%016llx, want 0x%016llx",
		    when, (unsigned long long)got, (unsigned long long)v);
}

static int ib_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of the @n values of @v, sorting them. */
static uint64_t ib_median(uint64_t *v, int n)
{
	qsort(v, n, sizeof(*v), ib_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2] + 1) / 2;
}

/* The @pct-th percentile (nearest rank) of @v, sorted. */
static uint64_t ib_pct(const uint64_t *v, int n, int pct)
{
	int k = (n * pct + 99) / 100;	/* ceil(n * pct / 100) */

	return v[k > 0 ? k - 1 : 0];
}

/* The client as CLIENT_GET gives it, with its counters. */
static void ib_client(struct smnl_client *c)
{
	int ret = smnl_client_get(&nl, client_id, c);

	if (ret || !c->have_stats)
		die("CLIENT_GET of client %u: %s \"%s\"", client_id,
		    errstr(ret), nl.extack);
}

/* The client's counted sync time (ns) so far. */
static uint64_t ib_client_ns(void)
{
	struct smnl_client c;

	ib_client(&c);
	return c.sync_ns;
}

static void ib_run(int iters, int reps, int warmup)
{
	uint64_t *fl, *sm, *kn, *io, kns, fsum, ssum, ksum, cns, word;
	int r, i, k;

	fl = calloc(iters, sizeof(*fl));
	sm = calloc(iters, sizeof(*sm));
	kn = calloc(iters, sizeof(*kn));
	io = calloc(iters, sizeof(*io));
	if (!fl || !sm || !kn || !io)
		die("out of memory");

	word = 0x5eedf100d0000000ull;
	ib_floor_word(word);
	for (i = 0; i < warmup; i++) {
		ib_floor_one();
		ib_module_one(&kns);
		ib_ioctl_one();
	}
	ib_floor_check(word, "warm-up");

	for (r = 0; r < reps; r++) {
		ib_floor_word(++word);
		fsum = 0;
		ssum = 0;
		ksum = 0;
		cns = ib_client_ns();
		for (i = 0; i < iters; i++) {
			for (k = 0; k < 3; k++) {
				ib_rest();
				switch ((i + k) % 3) {
				case 0:
					fl[i] = ib_floor_one();
					break;
				case 1:
					sm[i] = ib_module_one(&kn[i]);
					break;
				default:
					io[i] = ib_ioctl_one();
				}
			}
			fsum += fl[i];
			ssum += sm[i];
			ksum += kn[i];
		}
		cns = ib_client_ns() - cns;
		ib_floor_check(word, "a repeat");
		fprintf(out, "inbound rep=%d iters=%d gap_us=%d floor_ns=%llu sm_ns=%llu",
			r, iters, gap_us, (unsigned long long)fsum,
			(unsigned long long)ssum);
		fprintf(out, " floor_med_ns=%llu",
			(unsigned long long)ib_median(fl, iters));
		fprintf(out, " sm_med_ns=%llu",
			(unsigned long long)ib_median(sm, iters));
		fprintf(out, " floor_p99_ns=%llu sm_p99_ns=%llu",
			(unsigned long long)ib_pct(fl, iters, 99),
			(unsigned long long)ib_pct(sm, iters, 99));
		fprintf(out, " kernel_med_ns=%llu",
			(unsigned long long)ib_median(kn, iters));
		/* ib_median() sorts: the percentile after it. */
		fprintf(out, " io_med_ns=%llu",
			(unsigned long long)ib_median(io, iters));
		fprintf(out, " io_p99_ns=%llu",
			(unsigned long long)ib_pct(io, iters, 99));
		fprintf(out, " io_kernel_mean_ns=%llu\n",
			(unsigned long long)(cns > ksum ? (cns - ksum) / iters : 0));
		fflush(out);
	}
	free(fl);
	free(sm);
	free(kn);
	free(io);
}

/* The client's own counters agree: every sync ran, none failed. */
static void ib_check_stats(void)
{
	struct smnl_client c;

	ib_client(&c);
	if (c.syncs != module_syncs || c.errors)
		die("client %u counts %llu syncs and %llu errors, want %llu and 0",
		    client_id, (unsigned long long)c.syncs,
		    (unsigned long long)c.errors,
		    (unsigned long long)module_syncs);
}

static void ib_teardown(void)
{
	int ret;

	rc_teardown(&floor_qp);
	ret = smnl_unregister(&nl, client_id);
	if (ret)
		die("unregister client %u: %s \"%s\"", client_id, errstr(ret),
		    nl.extack);
	munmap(floor_qp.buf, page);
	munmap(client_page, page);
}

static void usage(void)
{
	fprintf(stderr, "usage: inbound_bench [-d rxe0] [-a 192.168.77.1] [-n iters] [-r reps] [-w warmup] [-g gap_us] [--smoke]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "smoke", no_argument, NULL, 'S' },
		{ 0 },
	};
	int iters = -1, reps = -1, warmup = -1, smoke = 0, o, fd, ret;

	page = sysconf(_SC_PAGESIZE);
	while ((o = getopt_long(argc, argv, "d:a:n:r:w:g:", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			dev = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'n':
			iters = bench_num(optarg, 1, 1000000);
			break;
		case 'r':
			reps = bench_num(optarg, 1, 1000);
			break;
		case 'w':
			warmup = bench_num(optarg, 0, 1000000);
			break;
		case 'g':
			gap_us = bench_num(optarg, 0, 100000);
			break;
		case 'S':
			smoke = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (iters < 0)
		iters = smoke ? 20 : 1000;
	if (reps < 0)
		reps = smoke ? 2 : 7;
	if (warmup < 0)
		warmup = smoke ? 5 : 100;

	/*
	 * stdout carries only the result lines: they go to the stdout we were
	 * given, and everything printed on stdout from here on (rcqp.h's
	 * diagnostics) goes to stderr.
	 */
	fd = dup(STDOUT_FILENO);
	out = fd < 0 ? NULL : fdopen(fd, "w");
	if (!out || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		die("cannot set up stdout: %s", strerror(errno));
	setvbuf(stdout, NULL, _IOLBF, 0);

	ret = smnl_open(&nl);
	if (ret)
		die("the ib_sync_mem family: %s (is ib_sync_mem loaded?)",
		    errstr(ret));
	devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (devfd < 0)
		die("open /dev/%s: %s", IB_SYNC_MEM_DEV_NAME, strerror(errno));
	ib_setup();
	fprintf(stderr, "inbound_bench: %s (%s), client %u, %d flushes of each x %d repeats after %d warm-up rounds, %d us of rest before each\n",
		dev, addr, client_id, iters, reps, warmup, gap_us);
	ib_run(iters, reps, warmup);
	ib_check_stats();
	ib_teardown();
	smnl_close(&nl);
	if (fclose(out))
		die("writing the results: %s", strerror(errno));
	return 0;
}
