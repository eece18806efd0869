// SPDX-License-Identifier: GPL-2.0
/*
 * train_loop: the training-loop workload benchmark (bench/guest.sh suite 8,
 * issue 17). A step shaped like an ML training step, over B buffers:
 *
 *   the CPU fills each source buffer with a pattern new to the step; the
 *   sources are synced to-device; each is RDMA-WRITten from an RC QP on the
 *   device into its peer buffer, behind an RC QP on the same device (rxe
 *   loopback: two struct rc_end of rcqp.h on one device, one GID); the
 *   completions are polled; the peers are synced to-cpu and the CPU reads
 *   a few words of each (every word with --smoke), which must be the
 *   step's pattern.
 *
 * Every buffer, source and peer, is a region client of ib_sync_mem,
 * registered over netlink (owned by the socket, writable by the device:
 * a device-wide to-cpu sync covers the sources too, and a read-only
 * region refuses to-cpu). The sync modes:
 *
 *   single   one IB_SYNC_MEM_CMD_SYNC per buffer per direction
 *   batch    one request per direction per step naming the step's buffers
 *            (IB_SYNC_MEM_A_SYNC_CLIENTS)
 *   device   one device-wide request per direction per step: it syncs
 *            every client of the device, sources and peers alike, in both
 *            directions, twice the clients the step needs (the price of
 *            that mode)
 *   changed  only max(1, B / changed_every) buffers change per step (a
 *            different set each step): the step writes, sends, syncs and
 *            checks only those, in one batch per direction
 *   ioctl    as single, through /dev/ib_sync_mem: one blocking
 *            IB_SYNC_MEM_IOC_SYNC per buffer per direction
 *
 * "changed" is the userspace form of lazy sync. The kernel's lazy clients
 * (IB_SYNC_MEM_F_LAZY, synced only once ib_sync_mem_mark_dirty() marked
 * them) are an in-kernel API: netlink can create a lazy client, but no
 * command marks one dirty, and nothing marks a region client dirty, so a
 * lazy region client would be skipped by every sync. A userspace caller
 * that knows what changed names those buffers instead.
 *
 * Per step the program measures (CLOCK_MONOTONIC) the whole step and the
 * time inside sync requests (each netlink round trip, from send to the
 * parsed reply, or each ioctl). For each B it registers 2 B clients, runs a warm-up of
 * every mode, then R repeats of S steps per mode, the modes interleaved
 * repeat by repeat so that drift hits all alike, and prints one line per
 * (repeat, mode) on stdout for bench/report.py:
 *
 *   train mode=M buffers=B rep=N steps=S step_ns=T sync_ns=T bytes=N
 *         size=N requests=N
 *
 * step_ns and sync_ns are means per step, bytes the bytes written (and
 * sent) per step, requests the sync requests per step. Anything else
 * (verbs set-up, notes) goes to stderr. Any error (a sync request or a
 * client's sync failing, an error completion, a word that is not the
 * step's pattern after the to-cpu sync) ends the program with a message
 * on stderr and exit status 1. No timing decides anything: the waits for
 * completions are bounded (times SYNCMEM_SLOW) as hang guards only.
 *
 *   train_loop [-d rxe0] [-a 192.168.77.1] [-b 1,8,64] [-s bytes]
 *              [-n steps] [-r reps] [-w warmup_steps] [-c changed_every]
 *              [--smoke]
 *
 * -a: an IPv4 address of the device's netdev (its RoCE v2 GID is both QPs'
 * GID). --smoke: 2 steps, 2 repeats, 1 warm-up step (unless given) and
 * every word of every peer buffer checked: the harness works, no timing.
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

#define BENCH_PROG "train_loop"

#include "ktap.h"
#include "smnl.h"
#include "rcqp.h"
#include "benchtool.h"

#define TL_MAX_BUFFERS	512	/* 2 B clients, B ids in one request */
#define TL_WINDOW	4	/* WRITEs in flight: rc_setup()'s max_send_wr */

enum tl_mode { TL_SINGLE, TL_BATCH, TL_DEVICE, TL_CHANGED, TL_IOCTL, TL_MODES };

static const char *const tl_mode_name[TL_MODES] = {
	[TL_SINGLE] = "single",
	[TL_BATCH] = "batch",
	[TL_DEVICE] = "device",
	[TL_CHANGED] = "changed",
	[TL_IOCTL] = "ioctl",
};

static struct smnl nl;
static int devfd;		/* /dev/ib_sync_mem, for mode ioctl */
static FILE *out;		/* the result lines: the stdout we were given */
static const char *dev = "rxe0";
static const char *addr = "192.168.77.1";
static size_t bufsize = 64 * 1024;
static unsigned int changed_every = 8;
static int full_check;
static uint64_t gen;		/* steps run, every mode: each step's pattern */

/* The buffers of one B: sources and peers, each B slices of one mapping. */
struct tl_set {
	unsigned int n;
	struct rc_end src, dst;
	struct rc_peer dst_peer;
	uint32_t *src_id, *dst_id;	/* their clients */
	unsigned int *sel;		/* the buffers of this step */
	uint32_t *ids;			/* what a request names */
	uint64_t *seed;			/* the pattern each buffer has */
	int others_noted;
};

/* Per (mode, repeat): sums over its steps. */
struct tl_acc {
	uint64_t step_ns, sync_ns, bytes, requests;
};

/* The pattern of buffer @b in step @g; word @k of it. */
static inline uint64_t tl_seed(uint64_t g, unsigned int b)
{
	return ((g << 16) | b) * 0x9e3779b97f4a7c15ull + 1;
}

static inline uint64_t tl_word(uint64_t seed, size_t k)
{
	return seed ^ (k * 0xd6e8feb86659fd93ull);
}

static unsigned char *tl_src(const struct tl_set *s, unsigned int b)
{
	return s->src.buf + (size_t)b * bufsize;
}

static const uint64_t *tl_dst(const struct tl_set *s, unsigned int b)
{
	return (const uint64_t *)(s->dst.buf + (size_t)b * bufsize);
}

static void tl_fill(struct tl_set *s, unsigned int b, uint64_t seed)
{
	uint64_t *w = (uint64_t *)tl_src(s, b);
	size_t k, words = bufsize / sizeof(*w);

	for (k = 0; k < words; k++)
		w[k] = tl_word(seed, k);
}

/* The CPU reads peer @b after its to-cpu sync: the step's pattern. */
static void tl_check(const struct tl_set *s, unsigned int b, const char *mode)
{
	const uint64_t *w = tl_dst(s, b);
	size_t words = bufsize / sizeof(*w);
	size_t at[4] = { 0, words / 2, words - 1, (gen * 7919 + b) % words };
	size_t i, k;

	for (i = 0; i < (full_check ? words : 4); i++) {
		k = full_check ? i : at[i];
		if (w[k] != tl_word(s->seed[b], k))
			die("%s, B=%u, step %llu: peer buffer %u word %zu is 0x%016llx after the to-cpu sync, want 0x%016llx",
			    mode, s->n, (unsigned long long)gen, b, k,
			    (unsigned long long)w[k],
			    (unsigned long long)tl_word(s->seed[b], k));
	}
}

/*
 * RDMA WRITE each selected source into its peer, at most TL_WINDOW in
 * flight, every one signalled; returns once all completed successfully.
 */
static void tl_write(struct tl_set *s, unsigned int k)
{
	struct ibv_wc wc[TL_WINDOW];
	unsigned int posted = 0, done = 0;
	uint64_t t0 = now_ns();
	int n, i, ret;

	while (done < k) {
		while (posted < k && posted - done < TL_WINDOW) {
			unsigned int b = s->sel[posted];
			struct ibv_sge sge = {
				.addr = (uintptr_t)tl_src(s, b),
				.length = bufsize,
				.lkey = s->src.mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = b,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
			}, *bad;

			wr.wr.rdma.remote_addr = s->dst_peer.addr +
						 (uint64_t)b * bufsize;
			wr.wr.rdma.rkey = s->dst_peer.rkey;
			ret = ibv_post_send(s->src.qp, &wr, &bad);
			if (ret)
				die("B=%u: post RDMA WRITE of buffer %u: %s",
				    s->n, b, strerror(ret));
			posted++;
		}
		n = ibv_poll_cq(s->src.cq, TL_WINDOW, wc);
		if (n < 0)
			die("B=%u: ibv_poll_cq failed", s->n);
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_RDMA_WRITE)
				die("B=%u: RDMA WRITE of buffer %llu: completion %s (opcode %d, vendor err 0x%x)",
				    s->n, (unsigned long long)wc[i].wr_id,
				    ibv_wc_status_str(wc[i].status),
				    wc[i].opcode, wc[i].vendor_err);
		done += n;
		if (n)
			continue;
		/* A hang guard, not a measurement. */
		if (now_ns() - t0 > (uint64_t)bound_ms(RC_CQ_TIMEOUT_MS) * 1000000)
			die("B=%u: %u of %u RDMA WRITEs not completed after %d ms",
			    s->n, k - done, k, bound_ms(RC_CQ_TIMEOUT_MS));
		sched_yield();	/* rxe's work may need this CPU */
	}
}

static const char *tl_dir_name(uint32_t dir)
{
	return dir == IB_SYNC_MEM_SYNC_TO_DEVICE ? "to-device" : "to-cpu";
}

/*
 * One direction of a step's syncs in @mode, over the selected buffers of
 * one side (@side: the client ids of the sources or the peers). Returns
 * the time spent in sync requests; adds the requests made to @acc.
 */
static uint64_t tl_sync(struct tl_set *s, enum tl_mode mode, uint32_t dir,
			const uint32_t *side, unsigned int k, struct tl_acc *acc)
{
	const char *what = tl_mode_name[mode];
	struct smnl_sync_result res;
	uint64_t t0, t;
	unsigned int i;
	int ret;

	for (i = 0; i < k; i++)
		s->ids[i] = side[s->sel[i]];
	switch (mode) {
	case TL_SINGLE:
		t0 = now_ns();
		for (i = 0; i < k; i++) {
			ret = smnl_sync_client_full(&nl, s->ids[i], dir, 0, &res);
			if (ret || res.err || res.client_err)
				die("%s, B=%u: sync %s of client %u: %s, client %s \"%s\"",
				    what, s->n, tl_dir_name(dir), s->ids[i],
				    errstr(ret), errstr(res.client_err),
				    nl.extack);
		}
		t = now_ns() - t0;
		acc->requests += k;
		return t;
	case TL_IOCTL:
		t0 = now_ns();
		for (i = 0; i < k; i++) {
			struct ib_sync_mem_ioc_sync r = {
				.id = s->ids[i], .dir = dir,
			};

			if (ioctl(devfd, IB_SYNC_MEM_IOC_SYNC, &r))
				die("%s, B=%u: ioctl sync %s of client %u: %s",
				    what, s->n, tl_dir_name(dir), s->ids[i],
				    strerror(errno));
		}
		t = now_ns() - t0;
		acc->requests += k;
		return t;
	case TL_BATCH:
	case TL_CHANGED:
		t0 = now_ns();
		ret = smnl_sync_batch(&nl, s->ids, k, dir, 0, &res);
		t = now_ns() - t0;
		if (ret || res.err || res.errors || res.client_err ||
		    res.run != k || res.results != k)
			die("%s, B=%u: batch sync %s of %u clients: %s, err %s, run %u, errors %u, %u results, first client error %s \"%s\"",
			    what, s->n, tl_dir_name(dir), k, errstr(ret),
			    errstr(res.err), res.run, res.errors, res.results,
			    errstr(res.client_err), nl.extack);
		break;
	case TL_DEVICE:
		t0 = now_ns();
		ret = smnl_sync_dev(&nl, dev, dir, 0, &res);
		t = now_ns() - t0;
		if (ret || res.err || res.errors || res.client_err ||
		    res.run < 2 * s->n)
			die("%s, B=%u: device-wide sync %s of %s: %s, err %s, run %u (want at least %u), errors %u, skipped %u, first client error %s \"%s\"",
			    what, s->n, tl_dir_name(dir), dev, errstr(ret),
			    errstr(res.err), res.run, 2 * s->n, res.errors,
			    res.skipped, errstr(res.client_err), nl.extack);
		if (res.run > 2 * s->n && !s->others_noted) {
			fprintf(stderr, "train_loop: note: %s has %u clients besides the %u of B=%u: device mode syncs them too\n",
				dev, res.run - 2 * s->n, 2 * s->n, s->n);
			s->others_noted = 1;
		}
		break;
	default:
		die("no mode %d", mode);
	}
	acc->requests++;
	return t;
}

static void tl_step(struct tl_set *s, enum tl_mode mode, struct tl_acc *acc)
{
	unsigned int k = s->n, first = 0, i, b;
	uint64_t t0 = now_ns();

	gen++;
	if (mode == TL_CHANGED) {
		k = s->n / changed_every;
		if (!k)
			k = 1;
		first = (unsigned int)((gen * k) % s->n);
	}
	for (i = 0; i < k; i++)
		s->sel[i] = (first + i) % s->n;
	for (i = 0; i < k; i++) {
		b = s->sel[i];
		s->seed[b] = tl_seed(gen, b);
		tl_fill(s, b, s->seed[b]);
	}
	acc->sync_ns += tl_sync(s, mode, IB_SYNC_MEM_SYNC_TO_DEVICE, s->src_id,
				k, acc);
	tl_write(s, k);
	acc->sync_ns += tl_sync(s, mode, IB_SYNC_MEM_SYNC_TO_CPU, s->dst_id,
				k, acc);
	for (i = 0; i < k; i++)
		tl_check(s, s->sel[i], tl_mode_name[mode]);
	acc->step_ns += now_ns() - t0;
	acc->bytes += (uint64_t)k * bufsize;
}

static uint32_t tl_register(unsigned char *p, unsigned int n, const char *side,
			    unsigned int b)
{
	char name[IB_SYNC_MEM_NAME_LEN];
	struct smnl_new req = {
		.dev = dev,
		.name = name,
		.kind = IB_SYNC_MEM_KIND_REGION,
		.flags = IB_SYNC_MEM_CLIENT_F_OWNED,
		.region_nest = 1,
		.region_addr = (uintptr_t)p,
		.region_len = bufsize,
		.region_access = IB_SYNC_MEM_REGION_F_WRITE,
	};
	int id;

	snprintf(name, sizeof(name), "train-%u-%s%u", n, side, b);
	id = smnl_register(&nl, &req);
	if (id <= 0)
		die("register %s as a region client on %s: %s \"%s\"", name,
		    dev, errstr(id), nl.extack);
	return id;
}

static void tl_setup(struct tl_set *s, unsigned int n)
{
	size_t len = (size_t)n * bufsize;
	struct rc_peer src_peer;
	unsigned int b;
	int ret;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->src_id = calloc(n, sizeof(*s->src_id));
	s->dst_id = calloc(n, sizeof(*s->dst_id));
	s->sel = calloc(n, sizeof(*s->sel));
	s->ids = calloc(n, sizeof(*s->ids));
	s->seed = calloc(n, sizeof(*s->seed));
	if (!s->src_id || !s->dst_id || !s->sel || !s->ids || !s->seed)
		die("out of memory");
	s->src.dev = s->dst.dev = dev;
	s->src.ip = s->dst.ip = addr;
	s->src.size = s->dst.size = len;
	s->src.buf = bench_map(len);
	s->dst.buf = bench_map(len);
	for (b = 0; b < n; b++) {
		s->src_id[b] = tl_register(tl_src(s, b), n, "s", b);
		s->dst_id[b] = tl_register((unsigned char *)tl_dst(s, b), n,
					   "p", b);
	}
	ret = rc_setup(&s->src);
	if (!ret)
		ret = rc_setup(&s->dst);
	if (ret)
		die("B=%u: verbs set-up on %s (%s): %s", n, dev, addr,
		    errstr(ret));
	rc_describe(&s->src, &src_peer);
	rc_describe(&s->dst, &s->dst_peer);
	ret = rc_connect(&s->src, &s->dst_peer);
	if (!ret)
		ret = rc_connect(&s->dst, &src_peer);
	if (ret)
		die("B=%u: connecting the two RC QPs on %s: %s", n, dev,
		    errstr(ret));
}

static void tl_teardown(struct tl_set *s)
{
	size_t len = (size_t)s->n * bufsize;
	unsigned int b;
	int ret;

	rc_teardown(&s->src);
	rc_teardown(&s->dst);
	for (b = 0; b < s->n; b++) {
		ret = smnl_unregister(&nl, s->src_id[b]);
		if (!ret)
			ret = smnl_unregister(&nl, s->dst_id[b]);
		if (ret)
			die("B=%u: unregister buffer %u's clients: %s \"%s\"",
			    s->n, b, errstr(ret), nl.extack);
	}
	munmap(s->src.buf, len);
	munmap(s->dst.buf, len);
	free(s->src_id);
	free(s->dst_id);
	free(s->sel);
	free(s->ids);
	free(s->seed);
}

static void tl_run(unsigned int n, int steps, int reps, int warmup)
{
	struct tl_acc acc;
	struct tl_set s;
	int m, r, i;

	tl_setup(&s, n);
	for (m = 0; m < TL_MODES; m++) {
		memset(&acc, 0, sizeof(acc));
		for (i = 0; i < warmup; i++)
			tl_step(&s, m, &acc);
	}
	for (r = 0; r < reps; r++) {
		for (m = 0; m < TL_MODES; m++) {
			memset(&acc, 0, sizeof(acc));
			for (i = 0; i < steps; i++)
				tl_step(&s, m, &acc);
			fprintf(out, "train mode=%s buffers=%u rep=%d steps=%d step_ns=%llu sync_ns=%llu bytes=%llu size=%zu requests=%llu\n",
				tl_mode_name[m], n, r, steps,
				(unsigned long long)((acc.step_ns + steps / 2) / steps),
				(unsigned long long)((acc.sync_ns + steps / 2) / steps),
				(unsigned long long)(acc.bytes / steps), bufsize,
				(unsigned long long)(acc.requests / steps));
			fflush(out);
		}
	}
	tl_teardown(&s);
}

static void usage(void)
{
	fprintf(stderr, "usage: train_loop [-d rxe0] [-a 192.168.77.1] [-b 1,8,64] [-s bytes] [-n steps] [-r reps] [-w warmup_steps] [-c changed_every] [--smoke]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "smoke", no_argument, NULL, 'S' },
		{ 0 },
	};
	unsigned int bs[16], nb = 0, i;
	const char *blist = "1,8,64";
	int steps = -1, reps = -1, warmup = -1, smoke = 0, o, fd, ret;
	long page = sysconf(_SC_PAGESIZE);
	char *list, *tok, *save;

	while ((o = getopt_long(argc, argv, "d:a:b:s:n:r:w:c:", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			dev = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'b':
			blist = optarg;
			break;
		case 's':
			bufsize = bench_num(optarg, page, 64L << 20);
			break;
		case 'n':
			steps = bench_num(optarg, 1, 1000000);
			break;
		case 'r':
			reps = bench_num(optarg, 1, 1000);
			break;
		case 'w':
			warmup = bench_num(optarg, 0, 1000000);
			break;
		case 'c':
			changed_every = bench_num(optarg, 1, 1 << 20);
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
	if (bufsize % page) {
		fprintf(stderr, "train_loop: -s %zu: not a multiple of the page size (%ld)\n",
			bufsize, page);
		usage();
	}
	list = strdup(blist);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (nb == sizeof(bs) / sizeof(bs[0]))
			usage();
		bs[nb++] = bench_num(tok, 1, TL_MAX_BUFFERS);
	}
	free(list);
	if (!nb)
		usage();
	if (steps < 0)
		steps = smoke ? 2 : 50;
	if (reps < 0)
		reps = smoke ? 2 : 5;
	if (warmup < 0)
		warmup = smoke ? 1 : 2;
	full_check = smoke;

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

	devfd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (devfd < 0)
		die("open /dev/%s: %s", IB_SYNC_MEM_DEV_NAME, strerror(errno));
	ret = smnl_open(&nl);
	if (ret)
		die("the ib_sync_mem family: %s (is ib_sync_mem loaded?)",
		    errstr(ret));
	fprintf(stderr, "train_loop: %s (%s), buffers of %zu bytes, %d steps x %d repeats per mode after %d warm-up steps, 1 in %u changing in mode changed%s\n",
		dev, addr, bufsize, steps, reps, warmup, changed_every,
		full_check ? ", every word checked" : "");
	for (i = 0; i < nb; i++)
		tl_run(bs[i], steps, reps, warmup);
	smnl_close(&nl);
	if (fclose(out))
		die("writing the results: %s", strerror(errno));
	return 0;
}
