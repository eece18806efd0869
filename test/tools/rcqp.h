/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One end of an RC queue pair over RoCE v2, for the canaries: a verbs device,
 * the GID of an IPv4 address on it, a PD, a CQ, an RC QP and one memory
 * region over a caller's buffer. rdma_canary connects two ends in one
 * process; wire_canary connects an end on each of two hosts, exchanging
 * struct rc_peer over TCP. Header-only, with ktap.h and smnl.h (now_ms,
 * bound_ms, errstr) included before it.
 */
#ifndef SM_RCQP_H
#define SM_RCQP_H

#include <arpa/inet.h>
#include <stdint.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define RC_PORT		1
#define RC_CQ_TIMEOUT_MS	30000
#define RC_GID_WAIT_MS	10000
/* What the memory region allows: the peer writes into it and reads it. */
#define RC_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

struct rc_end {
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
	enum ibv_wc_status wc_status;	/* of the last completion */
	int finite_retries;	/* rc_connect(): give up on a silent peer */
};

/* What the other end needs to reach an end's QP and memory region. */
struct rc_peer {
	uint8_t gid[16];
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
	uint64_t size;
};

static inline struct ibv_context *rc_open_dev(const char *name)
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

/* The RoCE v2 GID of @e->ip (::ffff:a.b.c.d); polls while the table fills. */
static inline int rc_find_gid(struct rc_end *e)
{
	static const unsigned char v4mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};
	double t0 = now_ms();
	struct in_addr a;
	int i;

	if (inet_pton(AF_INET, e->ip, &a) != 1)
		return -EINVAL;
	do {
		if (ibv_query_port(e->ctx, RC_PORT, &e->port))
			return -errno;
		for (i = 0; i < e->port.gid_tbl_len; i++) {
			struct ibv_gid_entry g;

			if (ibv_query_gid_ex(e->ctx, RC_PORT, i, &g, 0))
				continue;	/* an empty slot */
			if (memcmp(g.gid.raw, v4mapped, 12) ||
			    memcmp(g.gid.raw + 12, &a, 4) ||
			    g.gid_type != IBV_GID_TYPE_ROCE_V2)
				continue;
			e->gid = g.gid;
			e->gid_index = i;
			return 0;
		}
		usleep(100000);
	} while (now_ms() - t0 < bound_ms(RC_GID_WAIT_MS));
	return -ENOENT;
}

/* Device, GID, PD, CQ, a QP in INIT and the memory region over e->buf. */
static inline int rc_setup(struct rc_end *e)
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
		.port_num = RC_PORT,
		.qp_access_flags = RC_ACCESS,
	};
	int ret;

	e->ctx = rc_open_dev(e->dev);
	if (!e->ctx) {
		ktap_diag("%s: no such verbs device", e->dev);
		return -ENODEV;
	}
	ret = rc_find_gid(e);
	if (ret) {
		ktap_diag("%s: no RoCE v2 GID for %s: %s", e->dev, e->ip, errstr(ret));
		return ret;
	}
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 8, NULL, NULL, 0) : NULL;
	if (!e->cq)
		return -ENOMEM;
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->qp)
		return -errno ? -errno : -ENOMEM;
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return -ret;
	e->mr = ibv_reg_mr(e->pd, e->buf, e->size, RC_ACCESS);
	if (!e->mr)
		return -errno ? -errno : -ENOMEM;
	ktap_diag("%s: %s is GID index %d, active MTU %d, QP %u", e->dev, e->ip,
		  e->gid_index, 128 << e->port.active_mtu, e->qp->qp_num);
	return 0;
}

static inline void rc_describe(const struct rc_end *e, struct rc_peer *p)
{
	memcpy(p->gid, e->gid.raw, sizeof(p->gid));
	p->qpn = e->qp->qp_num;
	p->rkey = e->mr->rkey;
	p->addr = (uintptr_t)e->buf;
	p->size = e->size;
}

/* The QP to RTR and RTS towards @p. */
static inline int rc_connect(struct rc_end *e, const struct rc_peer *p)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = e->port.active_mtu;
	a.dest_qp_num = p->qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, p->gid, sizeof(p->gid));
	a.ah_attr.grh.sgid_index = e->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = RC_PORT;
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret) {
		ktap_diag("%s: QP to RTR: %s", e->dev, strerror(ret));
		return -ret;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	/*
	 * 4.096 us * 2^20, about 4.3 s a try: a peer guest that the host
	 * does not run for a while (two guests on two cores) is not a lost
	 * peer. The common 14 gave up after about half a second. rxe takes
	 * a retry count of 7 as "retry without end" (rxe_comp.c), so a QP
	 * whose peer is gone for good goes to error only with finite
	 * retries: 6, about 30 s.
	 */
	a.timeout = 20;
	a.retry_cnt = e->finite_retries ? 6 : 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret) {
		ktap_diag("%s: QP to RTS: %s", e->dev, strerror(ret));
		return -ret;
	}
	return 0;
}

/*
 * One signalled RDMA WRITE of e's whole buffer into @p's (or READ of p's
 * into e's), polled to its completion within @wait_ms (scaled by
 * SYNCMEM_SLOW); *ms is how long it took. A completion in error is -EIO,
 * its status in e->wc_status.
 */
static inline int rc_rdma_within(struct rc_end *e, enum ibv_wr_opcode op,
				 const struct rc_peer *p, double *ms, int wait_ms)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf,
		.length = e->size,
		.lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	const char *what = op == IBV_WR_RDMA_READ ? "READ" : "WRITE";
	struct ibv_wc wc;
	double t0 = now_ms();
	int n, ret;

	wr.wr.rdma.remote_addr = p->addr;
	wr.wr.rdma.rkey = p->rkey;
	ret = ibv_post_send(e->qp, &wr, &bad);
	if (ret) {
		ktap_diag("post RDMA %s: %s", what, strerror(ret));
		return -ret;
	}
	for (;;) {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n < 0)
			return -EIO;
		if (n == 1)
			break;
		if (now_ms() - t0 > bound_ms(wait_ms)) {
			ktap_diag("RDMA %s: no completion after %d ms", what,
				  bound_ms(wait_ms));
			return -ETIMEDOUT;
		}
		usleep(200);
	}
	*ms = now_ms() - t0;
	e->wc_status = wc.status;
	if (wc.status != IBV_WC_SUCCESS) {
		ktap_diag("RDMA %s completion: %s (vendor err 0x%x)", what,
			  ibv_wc_status_str(wc.status), wc.vendor_err);
		return -EIO;
	}
	return 0;
}

/* rc_rdma_within() with the usual bound, RC_CQ_TIMEOUT_MS. */
static inline int rc_rdma(struct rc_end *e, enum ibv_wr_opcode op,
			  const struct rc_peer *p, double *ms)
{
	return rc_rdma_within(e, op, p, ms, RC_CQ_TIMEOUT_MS);
}

/* The QP's state as the device has it (IBV_QPS_*), or -errno. */
static inline int rc_qp_state(struct rc_end *e)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int ret;

	ret = ibv_query_qp(e->qp, &a, IBV_QP_STATE, &init);
	return ret ? -ret : (int)a.qp_state;
}

/* Everything rc_setup() made, closed; the end can be torn down again. */
static inline void rc_teardown(struct rc_end *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
	e->qp = NULL;
	e->mr = NULL;
	e->cq = NULL;
	e->pd = NULL;
	e->ctx = NULL;
}

/* The canaries' byte pattern for round @round. */
static inline unsigned char rc_pattern(size_t i, unsigned int round)
{
	uint32_t x = (uint32_t)i * 2654435761u + round * 40503u + (uint32_t)(i >> 12);

	return (unsigned char)(x ^ (x >> 13) ^ round);
}

#endif /* SM_RCQP_H */
