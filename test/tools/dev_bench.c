// SPDX-License-Identifier: GPL-2.0
/*
 * dev_bench: the data path /dev/ib_sync_mem against its floors
 * (bench/guest.sh, suites "devpath" and "overlap").
 *
 * devpath: one sim client of no latency (its ->sync returns at once), and
 * per repeat ITERS of each, in rounds of 100 interleaved (the order turned
 * every round) so that drift hits all alike:
 *
 *   nop     IB_SYNC_MEM_IOC_NOP on the device: the floor of any syscall
 *           path to the module
 *   ioctl   IB_SYNC_MEM_IOC_SYNC of the client, blocking
 *   async   IB_SYNC_MEM_IOC_SYNC with IB_SYNC_MEM_IOC_F_ASYNC, and a poll()
 *           of its sync_file until it signals, then its close()
 *   netlink IB_SYNC_MEM_CMD_SYNC of the client, request to parsed reply
 *   enoent  IB_SYNC_MEM_IOC_SYNC of an id no client has: the request's
 *           copy and the lookup, no sync (-ENOENT)
 *   clean   IB_SYNC_MEM_IOC_SYNC of a lazy sim client never marked dirty:
 *           all of the sync's path but ->sync, its clock read and its
 *           counters
 *   priv    IB_SYNC_MEM_IOC_SYNC to-device of a one-page region this
 *           file (privileged: opened with CAP_NET_ADMIN) created
 *   unpriv  the same through a file opened without capabilities (by a
 *           child, handed over: unpriv.h) of a region that file created:
 *           the permission rule's path, the same request
 *
 *   devpath rep=N iters=N nop_ns=T ioctl_ns=T async_ns=T netlink_ns=T
 *           enoent_ns=T clean_ns=T priv_ns=T unpriv_ns=T
 *
 * The last two split the ioctl's cost beyond the NOP's: the request, the
 * registry's sync around the client, the client's callback and counters.
 *
 * overlap: a training step shaped as compute then sync: COMPUTE, a CPU
 * loop over a 64 KiB buffer calibrated at start to take about as long as
 * the sync, and SYNC, one sync of a sim client whose ->sync sleeps
 * LATENCY us (a DMA engine's or an accelerator's flush: the CPU is free
 * meanwhile). Per repeat, STEPS steps of each, the loops interleaved:
 *
 *   compute  compute only
 *   sync     blocking ioctl syncs only
 *   blocking compute, then a blocking sync of what it wrote
 *   overlap  the sync of step N+1's buffer submitted asynchronously before
 *            step N's compute, and its fence waited for after it
 *
 *   overlap rep=N steps=N latency_us=N compute_ns=T sync_ns=T
 *           blocking_ns=T overlap_ns=T
 *
 * Any failure ends the program with a message on stderr and exit 1: it
 * never prints a figure it did not measure. No timing decides anything.
 *
 *   dev_bench [-d rxe0] [-n iters] [-s steps] [-l latency_us] [-r reps]
 *             [--smoke] [--only MODE]
 *
 * --only MODE (nop, ioctl, async, netlink, enoent, clean, priv, unpriv)
 * times that mode alone and skips overlap: for a profile of one path
 * (bench/run.sh --lane icount --profile 'dev_bench --only ioctl ...').
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <linux/ib_sync_mem_dev.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define BENCH_PROG "dev_bench"

#include "ktap.h"
#include "smnl.h"
#include "syncfile.h"
#include "smlib.h"
#include "unpriv.h"
#include "benchtool.h"

static struct smnl nl;
static const char *dev = "rxe0";
static int devfd;
static volatile uint64_t sink;	/* keeps the compute loop */

static void usage(void)
{
	fprintf(stderr, "usage: dev_bench [-d rxe0] [-n iters] [-s steps] [-l latency_us] [-r reps] [--smoke] [--only MODE]\n");
	exit(2);
}

static uint32_t new_sim(const char *name, uint32_t latency_us, uint32_t flags)
{
	struct smnl_new req = {
		.dev = dev, .name = name, .kind = IB_SYNC_MEM_KIND_SIM,
		.flags = IB_SYNC_MEM_CLIENT_F_OWNED | flags, .sim_nest = 1,
		.sim_latency_us = latency_us,
	};
	int id = smnl_register(&nl, &req);

	if (id <= 0)
		die("register sim client %s on %s: %s \"%s\"", name, dev,
		    errstr(id), nl.extack);
	return id;
}

static void dev_nop(void)
{
	if (ioctl(devfd, IB_SYNC_MEM_IOC_NOP))
		die("NOP: %s", strerror(errno));
}

static void dev_sync_on(int fd, uint32_t id)
{
	struct ib_sync_mem_ioc_sync r = { .id = id, .dir = 1 };

	if (ioctl(fd, IB_SYNC_MEM_IOC_SYNC, &r))
		die("SYNC of client %u: %s", id, strerror(errno));
}

static void dev_sync(uint32_t id)
{
	dev_sync_on(devfd, id);
}

/* A one-page region @fd creates (its own client) over fresh pages. */
static uint32_t new_region(int fd, const char *name)
{
	long page = sysconf(_SC_PAGESIZE);
	void *mem = mmap(NULL, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	int id;

	if (mem == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	id = sm_lib_region(fd, dev, name, mem, page, SYNCMEM_REGION_WRITE, 0,
			   NULL, 0);
	if (id <= 0)
		die("CREATE of region %s on %s: %s", name, dev, errstr(id));
	return id;
}

/* A SYNC of an id no client has: it must fail with ENOENT. */
static void dev_enoent(void)
{
	struct ib_sync_mem_ioc_sync r = { .id = 0x7ffffff0, .dir = 1 };

	if (!ioctl(devfd, IB_SYNC_MEM_IOC_SYNC, &r) || errno != ENOENT)
		die("SYNC of unknown id %u: %s, want ENOENT", r.id, strerror(errno));
}

/* An asynchronous sync of @id: its fence fd. */
static int dev_submit(uint32_t id)
{
	struct ib_sync_mem_ioc_sync r = {
		.id = id, .dir = 1, .flags = IB_SYNC_MEM_IOC_F_ASYNC,
	};

	if (ioctl(devfd, IB_SYNC_MEM_IOC_SYNC, &r))
		die("async SYNC of client %u: %s", id, strerror(errno));
	return r.out_fence;
}

/* Wait for fence @fd (a hang guard bounds it), check it, close it. */
static void fence_done(int fd)
{
	int st = sync_file_wait(fd, bound_ms(60000));

	if (!st)
		die("fence %d did not signal in %d ms", fd, bound_ms(60000));
	if (st != 1)
		die("fence %d: status %d", fd, st);
	close(fd);
}

static void nl_sync(uint32_t id)
{
	int err = 0, ret = smnl_sync_client(&nl, id, 1, 0, &err, NULL);

	if (ret || err)
		die("netlink SYNC of client %u: %s, client %s", id,
		    errstr(ret), errstr(err));
}

enum {
	DP_NOP, DP_IOCTL, DP_ASYNC, DP_NETLINK, DP_ENOENT, DP_CLEAN, DP_PRIV,
	DP_UNPRIV, DP_N
};

static const char *const dp_names[DP_N] = {
	"nop", "ioctl", "async", "netlink", "enoent", "clean", "priv", "unpriv",
};

/* --only MODE: devpath times that mode alone (for a profile), no overlap. */
static int only = -1;

static void devpath(int reps, int iters)
{
	uint32_t id = new_sim("dev-bench-noop", 0, 0);
	uint32_t clean = new_sim("dev-bench-clean", 0, IB_SYNC_MEM_CLIENT_F_LAZY);
	int ufd = sm_unpriv_devfd();
	uint32_t priv, unpriv;
	struct smnl_client c;
	uint64_t ns[DP_N], t0;
	int r, k, i, j, round = 0;

	if (ufd < 0)
		die("an unprivileged file of /dev/%s: %s", IB_SYNC_MEM_DEV_NAME,
		    errstr(ufd));
	priv = new_region(devfd, "dev-bench-priv");
	unpriv = new_region(ufd, "dev-bench-unpriv");
	for (r = -1; r < reps; r++) {	/* -1: the warm-up */
		memset(ns, 0, sizeof(ns));
		for (i = 0; i < iters; i += 100, round++) {
			for (k = 0; k < DP_N; k++) {
				int m = (k + round) % DP_N;
				int n = iters - i < 100 ? iters - i : 100;

				if (only >= 0 && m != only)
					continue;
				t0 = now_ns();
				for (j = 0; j < n; j++) {
					switch (m) {
					case DP_NOP:
						dev_nop();
						break;
					case DP_IOCTL:
						dev_sync(id);
						break;
					case DP_ASYNC:
						fence_done(dev_submit(id));
						break;
					case DP_ENOENT:
						dev_enoent();
						break;
					case DP_CLEAN:
						dev_sync(clean);
						break;
					case DP_PRIV:
						dev_sync_on(devfd, priv);
						break;
					case DP_UNPRIV:
						dev_sync_on(ufd, unpriv);
						break;
					default:
						nl_sync(id);
					}
				}
				ns[m] += now_ns() - t0;
			}
		}
		if (r >= 0)
			printf("devpath rep=%d iters=%d nop_ns=%llu ioctl_ns=%llu async_ns=%llu netlink_ns=%llu enoent_ns=%llu clean_ns=%llu priv_ns=%llu unpriv_ns=%llu\n",
			       r, iters, (unsigned long long)ns[DP_NOP],
			       (unsigned long long)ns[DP_IOCTL],
			       (unsigned long long)ns[DP_ASYNC],
			       (unsigned long long)ns[DP_NETLINK],
			       (unsigned long long)ns[DP_ENOENT],
			       (unsigned long long)ns[DP_CLEAN],
			       (unsigned long long)ns[DP_PRIV],
			       (unsigned long long)ns[DP_UNPRIV]);
	}
	/* The clean client's syncs must have run nothing. */
	if (smnl_client_get(&nl, clean, &c) || c.syncs)
		die("the clean lazy client ran %llu syncs, want 0",
		    (unsigned long long)c.syncs);
	smnl_unregister(&nl, clean);
	smnl_unregister(&nl, id);
	/* Each region ran every sync timed, warm-up included, and no other. */
	for (k = 0; k < 2; k++) {
		uint32_t rid = k ? unpriv : priv;
		int mode = k ? DP_UNPRIV : DP_PRIV;
		uint64_t want = only < 0 || only == mode ?
				(uint64_t)(reps + 1) * iters : 0;

		if (smnl_client_get(&nl, rid, &c) || c.syncs != want)
			die("region %u ran %llu syncs, want %llu", rid,
			    (unsigned long long)c.syncs,
			    (unsigned long long)want);
	}
	close(ufd);	/* its region goes with it */
	if (ioctl(devfd, IB_SYNC_MEM_IOC_DELETE, &(struct ib_sync_mem_ioc_delete){ .id = priv }))
		die("DELETE of region %u: %s", priv, strerror(errno));
}

static unsigned char buf[64 << 10];

/* The step's compute: @rounds passes over buf, each writing it. */
static void compute(long rounds)
{
	uint64_t h = sink;
	long r;
	size_t i;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < sizeof(buf); i += 64) {
			h = h * 31 + buf[i];
			buf[i] = (unsigned char)h;
		}
	sink = h;
}

/* The fastest of 5 runs of compute(@rounds), in ns. */
static uint64_t compute_ns(long rounds)
{
	uint64_t best = UINT64_MAX, t0, t;
	int i;

	for (i = 0; i < 5; i++) {
		t0 = now_ns();
		compute(rounds);
		t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	return best ? best : 1;
}

/*
 * Rounds of compute() that take about @ns: doubled until a run takes a
 * quarter of it, then scaled. The buffer's first touch (page faults) is
 * out of the figures: compute_ns() takes the fastest of its runs.
 */
static long calibrate(uint64_t ns)
{
	long rounds = 1;
	uint64_t t;

	compute(1);
	while ((t = compute_ns(rounds)) < ns / 4 && rounds < (1L << 24))
		rounds *= 2;
	return rounds * ns / t + 1;
}

enum { OV_COMPUTE, OV_SYNC, OV_BLOCKING, OV_OVERLAP, OV_N };

static void overlap(int reps, int steps, uint32_t latency_us)
{
	uint32_t id = new_sim("dev-bench-slow", latency_us, 0);
	uint64_t ns[OV_N], t0;
	long rounds = calibrate((uint64_t)latency_us * 1000);
	int r, k, s, fence;

	fprintf(stderr, "dev_bench: overlap: compute of %ld rounds over 64 KiB, sync of %u us\n",
		rounds, latency_us);
	for (r = -1; r < reps; r++) {
		memset(ns, 0, sizeof(ns));
		for (k = 0; k < OV_N; k++) {
			int m = (k + r + 1) % OV_N;

			t0 = now_ns();
			switch (m) {
			case OV_COMPUTE:
				for (s = 0; s < steps; s++)
					compute(rounds);
				break;
			case OV_SYNC:
				for (s = 0; s < steps; s++)
					dev_sync(id);
				break;
			case OV_BLOCKING:
				for (s = 0; s < steps; s++) {
					compute(rounds);
					dev_sync(id);
				}
				break;
			default:
				/* Step N's compute beside step N+1's sync. */
				fence = dev_submit(id);
				for (s = 0; s < steps; s++) {
					compute(rounds);
					fence_done(fence);
					if (s + 1 < steps)
						fence = dev_submit(id);
				}
			}
			ns[m] += now_ns() - t0;
		}
		if (r >= 0)
			printf("overlap rep=%d steps=%d latency_us=%u compute_ns=%llu sync_ns=%llu blocking_ns=%llu overlap_ns=%llu\n",
			       r, steps, latency_us,
			       (unsigned long long)ns[OV_COMPUTE],
			       (unsigned long long)ns[OV_SYNC],
			       (unsigned long long)ns[OV_BLOCKING],
			       (unsigned long long)ns[OV_OVERLAP]);
	}
	smnl_unregister(&nl, id);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "smoke", no_argument, NULL, 'S' },
		{ "only", required_argument, NULL, 'O' },
		{ 0 }
	};
	int iters = 2000, steps = 50, reps = 7, o, ret;
	uint32_t latency_us = 2000;

	while ((o = getopt_long(argc, argv, "d:n:s:l:r:", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			iters = bench_num(optarg, 1, 1 << 24);
			break;
		case 's':
			steps = bench_num(optarg, 1, 1 << 20);
			break;
		case 'l':
			latency_us = bench_num(optarg, 1, 1000000);
			break;
		case 'r':
			reps = bench_num(optarg, 1, 1000);
			break;
		case 'O':
			for (only = 0; only < DP_N; only++)
				if (!strcmp(optarg, dp_names[only]))
					break;
			if (only == DP_N)
				usage();
			break;
		case 'S':
			iters = 20;
			steps = 3;
			reps = 2;
			latency_us = 200;
			break;
		default:
			usage();
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = smnl_open(&nl);
	if (ret)
		die("the ib_sync_mem family: %s", errstr(ret));
	devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (devfd < 0)
		die("open /dev/%s: %s", IB_SYNC_MEM_DEV_NAME, strerror(errno));
	devpath(reps, iters);
	if (only < 0)
		overlap(reps, steps, latency_us);
	close(devfd);
	smnl_close(&nl);
	return 0;
}
