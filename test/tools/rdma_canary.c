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
 *               [--size BYTES] [--rounds N] [--no-sync]
 *
 * --no-sync leaves ib_sync_mem out (the data path alone, for bring-up).
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
#include <infiniband/verbs.h>

#include "ktap.h"
#include "smnl.h"

#define PORT		1
#define CQ_TIMEOUT_MS	30000
#define GID_WAIT_MS	10000

static struct smnl nl;
static int use_sync = 1;

struct side {
	const char *dev;
	const char *ip;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	unsigned char *buf;
	size_t size;
	int client;		/* ib_sync_mem client id, or -errno */
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* The RoCE v2 GID of @ip (::ffff:a.b.c.d); polls while the table fills. */
static int find_gid(struct side *s)
{
	double t0 = now_ms();
	struct in_addr a;
	int i;

	if (inet_pton(AF_INET, s->ip, &a) != 1)
		return -EINVAL;
	do {
		if (ibv_query_port(s->ctx, PORT, &s->port))
			return -errno;
		for (i = 0; i < s->port.gid_tbl_len; i++) {
			struct ibv_gid_entry e;
			static const unsigned char v4mapped[12] = {
				0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
			};

			if (ibv_query_gid_ex(s->ctx, PORT, i, &e, 0))
				continue;	/* an empty slot */
			if (memcmp(e.gid.raw, v4mapped, 12) ||
			    memcmp(e.gid.raw + 12, &a, 4) ||
			    e.gid_type != IBV_GID_TYPE_ROCE_V2)
				continue;
			s->gid = e.gid;
			s->gid_index = i;
			return 0;
		}
		usleep(100000);
	} while (now_ms() - t0 < bound_ms(GID_WAIT_MS));
	return -ENOENT;
}

static int setup_side(struct side *s)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 4, .max_recv_wr = 1,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = PORT,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	int ret;

	s->ctx = open_dev(s->dev);
	if (!s->ctx) {
		ktap_diag("%s: no such verbs device", s->dev);
		return -ENODEV;
	}
	ret = find_gid(s);
	if (ret) {
		ktap_diag("%s: no RoCE v2 GID for %s: %s", s->dev, s->ip, errstr(ret));
		return ret;
	}
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, 8, NULL, NULL, 0) : NULL;
	if (!s->cq)
		return -ENOMEM;
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (!s->qp)
		return -errno ? -errno : -ENOMEM;
	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return -ret;
	s->mr = ibv_reg_mr(s->pd, s->buf, s->size,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		return -errno ? -errno : -ENOMEM;
	ktap_diag("%s: %s is GID index %d, active MTU %d, QP %u", s->dev, s->ip,
		  s->gid_index, 128 << s->port.active_mtu, s->qp->qp_num);
	return 0;
}

static int connect_qp(struct side *s, struct side *peer)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = s->port.active_mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = s->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = PORT;
	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret) {
		ktap_diag("%s: QP to RTR: %s", s->dev, strerror(ret));
		return -ret;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret) {
		ktap_diag("%s: QP to RTS: %s", s->dev, strerror(ret));
		return -ret;
	}
	return 0;
}

static void teardown(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
}

static unsigned char pattern(size_t i, unsigned int round)
{
	uint32_t x = (uint32_t)i * 2654435761u + round * 40503u + (uint32_t)(i >> 12);

	return (unsigned char)(x ^ (x >> 13) ^ round);
}

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
		ktap_diag("%s: sync %s: %s, client err %s \"%s\"", s->dev, what,
			  errstr(ret), errstr(cerr), nl.extack);
	return ret ? ret : cerr;
}

static int rdma_write(struct side *src, struct side *dst, double *ms)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src->buf,
		.length = src->size,
		.lkey = src->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	double t0 = now_ms();
	int n, ret;

	wr.wr.rdma.remote_addr = (uintptr_t)dst->buf;
	wr.wr.rdma.rkey = dst->mr->rkey;
	ret = ibv_post_send(src->qp, &wr, &bad);
	if (ret) {
		ktap_diag("post RDMA WRITE: %s", strerror(ret));
		return -ret;
	}
	for (;;) {
		n = ibv_poll_cq(src->cq, 1, &wc);
		if (n < 0)
			return -EIO;
		if (n == 1)
			break;
		if (now_ms() - t0 > bound_ms(CQ_TIMEOUT_MS)) {
			ktap_diag("no completion after %d ms", bound_ms(CQ_TIMEOUT_MS));
			return -ETIMEDOUT;
		}
		usleep(200);
	}
	*ms = now_ms() - t0;
	if (wc.status != IBV_WC_SUCCESS) {
		ktap_diag("completion: %s (vendor err 0x%x)",
			  ibv_wc_status_str(wc.status), wc.vendor_err);
		return -EIO;
	}
	return 0;
}

static void register_side(struct side *s, uint32_t access, const char *name)
{
	struct smnl_client c;
	int ret;

	s->client = smnl_register_region(&nl, s->dev, name, (uintptr_t)s->buf,
					 s->size, access);
	ret = s->client > 0 ? smnl_client_get(&nl, s->client, &c) : s->client;
	ktap_result(s->client > 0 && ret == 0 &&
		    c.state == IB_SYNC_MEM_CLIENT_LIVE &&
		    c.pinned_pages == s->size / sysconf(_SC_PAGESIZE),
		    "register the %s buffer as a region client on %s (%zu KiB, pinned)",
		    name, s->dev, s->size / 1024);
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
		{ 0 },
	};
	struct side src = { .dev = "rxe0", .ip = "192.168.77.1" };
	struct side dst = { .dev = "rxe1", .ip = "192.168.77.2" };
	size_t size = 1 << 20, i, bad_at = 0;
	unsigned long long verified = 0;
	int rounds = 8, r, o, ret, passed = 0;
	struct smnl_client cs, cd;
	double ms, total_ms = 0;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'S': src.dev = optarg; break;
		case 'D': dst.dev = optarg; break;
		case 's': src.ip = optarg; break;
		case 'd': dst.ip = optarg; break;
		case 'z': size = strtoull(optarg, NULL, 0); break;
		case 'r': rounds = atoi(optarg); break;
		case 'n': use_sync = 0; break;
		default:
			fprintf(stderr, "usage: see the top of rdma_canary.c\n");
			return 2;
		}
	}
	src.size = dst.size = size;
	ktap_start();

	src.buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst.buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ktap_result(src.buf != MAP_FAILED && dst.buf != MAP_FAILED,
			 "map two page-aligned %zu KiB buffers", size / 1024))
		return ktap_finish();
	memset(src.buf, 0, size);
	memset(dst.buf, 0, size);

	if (use_sync) {
		ret = smnl_open(&nl);
		if (!ktap_result(ret == 0, "resolve the ib_sync_mem family"))
			ktap_diag("smnl_open: %s", errstr(ret));
		else {
			register_side(&src, 0, "canary-src");
			register_side(&dst, IB_SYNC_MEM_REGION_F_WRITE, "canary-dst");
		}
	} else {
		ktap_diag("--no-sync: ib_sync_mem is not used");
	}

	ret = setup_side(&src);
	if (!ret)
		ret = setup_side(&dst);
	if (!ret)
		ret = connect_qp(&src, &dst);
	if (!ret)
		ret = connect_qp(&dst, &src);
	if (!ktap_result(ret == 0, "RC QPs on %s (%s) and %s (%s) connected over RoCE v2",
			 src.dev, src.ip, dst.dev, dst.ip)) {
		ktap_diag("set-up: %s", errstr(ret));
		rounds = 0;
	}

	for (r = 1; r <= rounds; r++) {
		int s_src, s_dst_dev, s_dst_cpu, w, same = 0;

		for (i = 0; i < size; i++)
			src.buf[i] = pattern(i, r);
		s_src = sync_side(&src, IB_SYNC_MEM_SYNC_TO_DEVICE, "source to-device");
		/* poison the target: stale data must not pass for the new */
		memset(dst.buf, (unsigned char)~pattern(0, r), size);
		s_dst_dev = sync_side(&dst, IB_SYNC_MEM_SYNC_TO_DEVICE, "target to-device");
		w = rdma_write(&src, &dst, &ms);
		s_dst_cpu = w ? 0 : sync_side(&dst, IB_SYNC_MEM_SYNC_TO_CPU, "target to-cpu");
		if (!w) {
			for (i = 0; i < size; i++)
				if (dst.buf[i] != pattern(i, r))
					break;
			same = i == size;
			bad_at = i;
			total_ms += ms;
		}
		if (same)
			verified += size;
		if (ktap_result(!s_src && !s_dst_dev && !s_dst_cpu && !w && same,
				"round %d: sync source to-device, RDMA WRITE %zu KiB %s -> %s, sync target to-cpu, every byte equal",
				r, size / 1024, src.dev, dst.dev))
			passed++;
		else
			ktap_diag("round %d: syncs %s/%s/%s, write %s, %s", r,
				  errstr(s_src), errstr(s_dst_dev), errstr(s_dst_cpu),
				  errstr(w), w ? "not compared" : same ? "bytes equal" :
				  "MISMATCH");
		if (!w && !same)
			ktap_diag("first difference at byte %zu: 0x%02x, want 0x%02x",
				  bad_at, dst.buf[bad_at], pattern(bad_at, r));
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
			    cd.syncs == 2ULL * passed && !cs.errors && !cd.errors,
			    "client stats: source synced once a round, target twice, no errors");
		ktap_diag("source: %llu syncs %llu errors %llu bytes; target: %llu syncs %llu errors %llu bytes",
			  (unsigned long long)cs.syncs, (unsigned long long)cs.errors,
			  (unsigned long long)cs.bytes, (unsigned long long)cd.syncs,
			  (unsigned long long)cd.errors, (unsigned long long)cd.bytes);
	}
	ktap_result(rounds > 0 && passed == rounds && verified == (unsigned long long)rounds * size,
		    "canary: %d of %d rounds passed, %llu bytes verified%s", passed,
		    rounds, verified, use_sync ? "" : " (without ib_sync_mem)");

	teardown(&src);
	teardown(&dst);
	if (use_sync) {
		if (src.client > 0)
			ktap_result(smnl_unregister(&nl, src.client) == 0,
				    "unregister the source client");
		if (dst.client > 0)
			ktap_result(smnl_unregister(&nl, dst.client) == 0,
				    "unregister the target client");
		smnl_close(&nl);
	}
	return ktap_finish();
}
