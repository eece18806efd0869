// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_canary: the end-to-end canary over a real RDMA data path. One process
 * owns a source buffer registered as a region client on one device and a
 * target buffer registered as a region client on another, connects an RC QP
 * on each device to the other over RoCE v2, and per round: the CPU writes a
 * round-dependent pattern into the source, syncs the source to-device,
 * poisons the target and syncs it to-device, RDMA-WRITEs the whole source
 * into the target, polls the completion, syncs the target to-cpu and
 * compares every byte. Prints KTAP.
 *
 *   rdma_canary [--src-dev rxe0 --src-ip 192.168.77.1]
 *               [--dst-dev rxe1 --dst-ip 192.168.77.2]
 *               [--size BYTES] [--rounds N] [--no-sync | --inbound]
 *
 * --no-sync leaves ib_sync_mem out (the data path alone, for bring-up).
 *
 * --inbound: the target is an accelerator's memory, a sim client over the
 * target buffer, whose device reads its own view of it. Per round, after
 * the RDMA WRITE's completion, the view must still hold the previous
 * round's bytes (the stale data the model exists to show: without the
 * flush the accelerator reads them), then, after an inbound sync of the
 * target, the new pattern, every byte. The receive path is written as a
 * net plugin (NCCL's, RCCL's) would run it, receive_inbound(): post the
 * RDMA WRITE, reap the completion, flush inbound, hand the buffer to the
 * accelerator; the accelerator's client is registered and flushed through
 * the C library the kernel's ynl-gen-c.py generates from the family's YNL
 * spec (smynl.h, test/tools/ynl.mk), the rest goes through smnl.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ktap.h"
#include "smnl.h"
#include "smynl.h"
#include "smdebugfs.h"
#include "rcqp.h"

static struct smnl nl;
/* --inbound: the accelerator's socket, on the generated library */
static struct ynl_sock *ys;
static int use_sync = 1;
static int inbound;

struct side {
	struct rc_end rc;
	struct rc_peer peer;	/* rc as the other side reaches it */
	int client;		/* ib_sync_mem client id, or -errno */
};

/* Sync @s's client: 0, or a negative errno (command or client). */
static int sync_side(struct side *s, uint32_t dir, const char *what)
{
	int ret, cerr = 0;
	uint64_t ns = 0;

	if (!use_sync)
		return 0;
	if (s->client <= 0)
		return s->client ? s->client : -ENOENT;
	ret = smnl_sync_client(&nl, s->client, dir, 1000, &cerr, &ns);
	if (ret || cerr)
		ktap_diag("%s: sync %s: %s, client err %s \"%s\"", s->rc.dev, what,
			  errstr(ret), errstr(cerr), nl.extack);
	return ret ? ret : cerr;
}

/*
 * The target as an accelerator's memory: a sim client with a view of it,
 * registered through the generated library (smynl_register_sim()).
 */
static void register_accelerator(struct side *s)
{
	s->client = smynl_register_sim(ys, s->rc.dev, "canary-acc", 0, s->rc.buf,
				       s->rc.size);
	ktap_result(s->client > 0,
		    "register the target buffer as a sim accelerator's memory on %s (%zu KiB)",
		    s->rc.dev, s->rc.size / 1024);
	if (s->client <= 0)
		ktap_diag("register: %s \"%s\"", errstr(s->client), smynl_msg(ys));
}

/*
 * Flush @s's buffer inbound through the generated library
 * (smynl_flush_inbound()): 0, or a negative errno.
 */
static int flush_inbound(struct side *s)
{
	int ret, cerr;

	if (s->client <= 0)
		return s->client ? s->client : -ENOENT;
	ret = smynl_flush_inbound(ys, s->client, 1000, &cerr);
	if (ret || cerr)
		ktap_diag("%s: flush inbound: %s, client err %s \"%s\"", s->rc.dev,
			  errstr(ret), errstr(cerr), smynl_msg(ys));
	return ret ? ret : cerr;
}

/* The first byte of @view that is not round @r's pattern (0 for round 0). */
static size_t view_differs(const unsigned char *view, size_t size, int r)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (view[i] != (r > 0 ? rc_pattern(i, r) : 0))
			break;
	return i;
}

/*
 * --inbound: round @r's receive path into the accelerator's memory, as a
 * net plugin runs it: post the RDMA WRITE, reap its completion, flush the
 * buffer inbound, hand it to the accelerator, which reads its view of it
 * (@view: room for it). Between the completion and the flush the canary
 * reads the view too: still round @r - 1's bytes (zeros before the first),
 * what the accelerator would read without the flush. Returns the WRITE's
 * status (*@ms: its time); *@acc is the accelerator's: 0 when its view
 * was stale before the flush and new after it, every byte.
 */
static int receive_inbound(struct side *src, struct side *dst, int r,
			   unsigned char *view, double *ms, int *acc)
{
	size_t i = 0, size = dst->rc.size;
	int ret, stale, fresh;

	*acc = 0;
	/* post the RDMA WRITE, reap its completion */
	ret = rc_rdma(&src->rc, IBV_WR_RDMA_WRITE, &dst->peer, ms);
	if (ret)
		return ret;

	ret = sim_view_read(dst->client, view, size);
	if (!ret)
		i = view_differs(view, size, r - 1);
	stale = !ret && i == size;
	ktap_result(stale, "round %d: after the WRITE's completion the accelerator still reads the old bytes (every one)",
		    r);
	if (!stale)
		ktap_diag("view: %s, first byte not stale at %zu", errstr(ret), i);

	/* flush inbound */
	ret = flush_inbound(dst);
	/* hand the buffer to the accelerator: what it reads of it */
	if (!ret)
		ret = sim_view_read(dst->client, view, size);
	i = ret ? 0 : view_differs(view, size, r);
	fresh = !ret && i == size;
	ktap_result(fresh, "round %d: flushed inbound, it reads the new pattern, every byte", r);
	if (!fresh)
		ktap_diag("inbound: %s, first difference at byte %zu", errstr(ret), i);
	*acc = stale && fresh ? 0 : -EIO;
	return 0;
}

static void register_side(struct side *s, uint32_t access, const char *name)
{
	struct smnl_client c;
	int ret;

	s->client = smnl_register_region(&nl, s->rc.dev, name, (uintptr_t)s->rc.buf,
					 s->rc.size, access);
	ret = s->client > 0 ? smnl_client_get(&nl, s->client, &c) : s->client;
	ktap_result(s->client > 0 && ret == 0 &&
		    c.state == IB_SYNC_MEM_CLIENT_LIVE &&
		    c.pinned_pages == s->rc.size / sysconf(_SC_PAGESIZE),
		    "register the %s buffer as a region client on %s (%zu KiB, pinned)",
		    name, s->rc.dev, s->rc.size / 1024);
	if (s->client <= 0)
		ktap_diag("register: %s \"%s\"", errstr(s->client), nl.extack);
	else
		ktap_diag("client %d: %s, %u pinned pages, %u segments", s->client,
			  errstr(ret), c.pinned_pages, c.region_segments);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "src-dev", required_argument, NULL, 'S' },
		{ "dst-dev", required_argument, NULL, 'D' },
		{ "src-ip", required_argument, NULL, 's' },
		{ "dst-ip", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 'z' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "no-sync", no_argument, NULL, 'n' },
		{ "inbound", no_argument, NULL, 'i' },
		{ 0 },
	};
	struct side src = { .rc = { .dev = "rxe0", .ip = "192.168.77.1" } };
	struct side dst = { .rc = { .dev = "rxe1", .ip = "192.168.77.2" } };
	size_t size = 1 << 20, i, bad_at = 0;
	unsigned long long verified = 0;
	int rounds = 8, r, o, ret, passed = 0;
	struct smnl_client cs, cd;
	double ms, total_ms = 0;
	struct ynl_error why;
	unsigned char *view;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'S': src.rc.dev = optarg; break;
		case 'D': dst.rc.dev = optarg; break;
		case 's': src.rc.ip = optarg; break;
		case 'd': dst.rc.ip = optarg; break;
		case 'z': size = strtoull(optarg, NULL, 0); break;
		case 'r': rounds = atoi(optarg); break;
		case 'n': use_sync = 0; break;
		case 'i': inbound = 1; break;
		default:
			fprintf(stderr, "usage: see the top of rdma_canary.c\n");
			return 2;
		}
	}
	src.rc.size = dst.rc.size = size;
	if (inbound && !use_sync) {
		fprintf(stderr, "rdma_canary: --inbound needs ib_sync_mem\n");
		return 2;
	}
	ktap_start();
	view = inbound ? malloc(size) : NULL;
	if (inbound && !view) {
		fprintf(stderr, "rdma_canary: no memory for the view\n");
		return 1;
	}

	src.rc.buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst.rc.buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ktap_result(src.rc.buf != MAP_FAILED && dst.rc.buf != MAP_FAILED,
			 "map two page-aligned %zu KiB buffers", size / 1024))
		return ktap_finish();
	memset(src.rc.buf, 0, size);
	memset(dst.rc.buf, 0, size);

	if (use_sync) {
		ret = smnl_open(&nl);
		/* --inbound: the accelerator's socket too */
		if (!ret && inbound) {
			ret = smynl_open(&ys, &why);
			if (ret)
				ktap_diag("the generated library's socket: %s", why.msg);
		}
		if (!ktap_result(ret == 0, "resolve the ib_sync_mem family"))
			ktap_diag("open: %s", errstr(ret));
		else {
			register_side(&src, 0, "canary-src");
			if (inbound)
				register_accelerator(&dst);
			else
				register_side(&dst, IB_SYNC_MEM_REGION_F_WRITE,
					      "canary-dst");
		}
	} else {
		ktap_diag("--no-sync: ib_sync_mem is not used");
	}

	ret = rc_setup(&src.rc);
	if (!ret)
		ret = rc_setup(&dst.rc);
	if (!ret) {
		rc_describe(&src.rc, &src.peer);
		rc_describe(&dst.rc, &dst.peer);
		ret = rc_connect(&src.rc, &dst.peer);
	}
	if (!ret)
		ret = rc_connect(&dst.rc, &src.peer);
	if (!ktap_result(ret == 0, "RC QPs on %s (%s) and %s (%s) connected over RoCE v2",
			 src.rc.dev, src.rc.ip, dst.rc.dev, dst.rc.ip)) {
		ktap_diag("set-up: %s", errstr(ret));
		rounds = 0;
	}

	for (r = 1; r <= rounds; r++) {
		int s_src, s_dst_dev, s_dst_cpu, w, same = 0;

		for (i = 0; i < size; i++)
			src.rc.buf[i] = rc_pattern(i, r);
		s_src = sync_side(&src, IB_SYNC_MEM_SYNC_TO_DEVICE, "source to-device");
		/*
		 * Poison the target: stale data must not pass for the new. (An
		 * accelerator's memory keeps the last round's bytes: its view
		 * must be seen to hold them until the inbound flush.)
		 */
		s_dst_dev = 0;
		if (!inbound) {
			memset(dst.rc.buf, (unsigned char)~rc_pattern(0, r), size);
			s_dst_dev = sync_side(&dst, IB_SYNC_MEM_SYNC_TO_DEVICE,
					      "target to-device");
		}
		if (inbound) {
			w = receive_inbound(&src, &dst, r, view, &ms, &s_dst_cpu);
		} else {
			w = rc_rdma(&src.rc, IBV_WR_RDMA_WRITE, &dst.peer, &ms);
			s_dst_cpu = w ? 0 : sync_side(&dst, IB_SYNC_MEM_SYNC_TO_CPU,
						      "target to-cpu");
		}
		if (!w) {
			for (i = 0; i < size; i++)
				if (dst.rc.buf[i] != rc_pattern(i, r))
					break;
			same = i == size;
			bad_at = i;
			total_ms += ms;
		}
		if (same)
			verified += size;
		if (ktap_result(!s_src && !s_dst_dev && !s_dst_cpu && !w && same,
				"round %d: sync source to-device, RDMA WRITE %zu KiB %s -> %s, %s, every byte equal",
				r, size / 1024, src.rc.dev, dst.rc.dev,
				inbound ? "flush the target inbound" : "sync target to-cpu"))
			passed++;
		else
			ktap_diag("round %d: syncs %s/%s/%s, write %s, %s", r,
				  errstr(s_src), errstr(s_dst_dev), errstr(s_dst_cpu),
				  errstr(w), w ? "not compared" : same ? "bytes equal" :
				  "MISMATCH");
		if (!w && !same)
			ktap_diag("first difference at byte %zu: 0x%02x, want 0x%02x",
				  bad_at, dst.rc.buf[bad_at], rc_pattern(bad_at, r));
		if (w)
			break;	/* the QP is in error: later rounds cannot run */
	}
	if (rounds)
		ktap_diag("%d rounds, %.1f ms in RDMA WRITEs (%.1f MB/s)", r - (r > rounds),
			  total_ms, total_ms > 0 ? verified / total_ms / 1e3 : 0.0);

	if (use_sync && src.client > 0 && dst.client > 0 && rounds) {
		ret = smnl_client_get(&nl, src.client, &cs);
		if (!ret)
			ret = smnl_client_get(&nl, dst.client, &cd);
		ktap_result(ret == 0 && cs.syncs == (uint64_t)passed &&
			    cd.syncs == (inbound ? 1ULL : 2ULL) * passed &&
			    cd.sim_calls_inbound == (inbound ? (uint64_t)passed : 0) &&
			    !cs.errors && !cd.errors,
			    inbound ? "client stats: source synced once a round, target flushed inbound once, no errors" :
			    "client stats: source synced once a round, target twice, no errors");
		ktap_diag("source: %llu syncs %llu errors %llu bytes; target: %llu syncs %llu errors %llu bytes",
			  (unsigned long long)cs.syncs, (unsigned long long)cs.errors,
			  (unsigned long long)cs.bytes, (unsigned long long)cd.syncs,
			  (unsigned long long)cd.errors, (unsigned long long)cd.bytes);
	}
	ktap_result(rounds > 0 && passed == rounds && verified == (unsigned long long)rounds * size,
		    "canary: %d of %d rounds passed, %llu bytes verified%s", passed,
		    rounds, verified, use_sync ? "" : " (without ib_sync_mem)");

	rc_teardown(&src.rc);
	rc_teardown(&dst.rc);
	if (use_sync) {
		if (src.client > 0)
			ktap_result(smnl_unregister(&nl, src.client) == 0,
				    "unregister the source client");
		if (dst.client > 0)
			ktap_result(smnl_unregister(&nl, dst.client) == 0,
				    "unregister the target client");
		smnl_close(&nl);
		smynl_close(ys);
	}
	free(view);
	return ktap_finish();
}
