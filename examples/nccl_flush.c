// SPDX-License-Identifier: BSD-3-Clause
/*
 * nccl_flush: the GPUDirect receive pattern of an NCCL net plugin, with
 * the flush done by ib_sync_mem through libsyncmem instead of by hand.
 *
 * A receiver registers its receive buffer twice: with the verbs device,
 * for the peer to write into (ibv_reg_mr), and as a region client of
 * ib_sync_mem (syncmem_region_create()), for the flush. Then, per
 * message:
 *
 *   1. it posts a receive (the immediate consumes one);
 *   2. the sender posts an RDMA WRITE with immediate of the message into
 *      the buffer;
 *   3. the receiver polls its completion (IBV_WC_RECV_RDMA_WITH_IMM): the
 *      bytes are in the buffer as far as the NIC is concerned, but a GPU
 *      reading its memory now could still see stale data (writes still in
 *      flight behind the completion on the PCIe path);
 *   4. it flushes inbound (syncmem_flush_inbound(); or
 *      syncmem_flush_inbound_async() and a wait on the fence; or an SQE of
 *      the plugin's io_uring, syncmem_uring_prep_sync() with
 *      SYNCMEM_INBOUND, reaped as a CQE: no fd per flush): the module
 *      reads through the NIC, behind the writes, what NCCL's plugins do
 *      with an RDMA READ of their own;
 *   5. the buffer is the accelerator's to read (here: the CPU checks it).
 *
 * Here both ends are in one process, two RC QPs on one device connected to
 * each other (soft-RoCE, rxe, in the project's tests). On rxe the bytes are
 * right with or without the flush; --verify also reads, before and after
 * each flush, the module's count of the READs its inbound flusher
 * completed (debugfs, root only), and fails a flush that read nothing, or
 * whose READ did not bring back the first 8 bytes of this message.
 * A plugin leaves --verify out.
 *
 *   nccl_flush [-d DEV] [-a IPV4] [-s BYTES] [-n MESSAGES] [--verify]
 *              [--user UID]
 *
 * DEV (rxe0) is the verbs device and IPV4 (192.168.76.1, the address the
 * project's VMs give rxe0's netdev) an address of its port: its RoCE v2 GID
 * is the QPs' (waited for up to 10 s while the GID table fills). Message M
 * is flushed blocking when M % 3 is 1, through a fence when 2, through
 * the ring when 0. Prints a line per message; exit status 0 when every
 * message arrived whole and every flush succeeded, 1 otherwise.
 *
 * --user UID: started as root (for --verify's debugfs file), the program
 * becomes UID (its group too, no supplementary groups) once it opened
 * that file, and does everything else as UID, as a plugin in a training
 * job would: the verbs device (rdma-core's udev rule makes
 * /dev/infiniband/uverbs* 0666; uverbs refuses a file opened before a
 * change of credentials), and /dev/ib_sync_mem, which serves any user
 * over the clients its file created, the pinned pages charged to the
 * process's RLIMIT_MEMLOCK.
 *
 * Build: cc nccl_flush.c $(pkg-config --cflags --libs syncmem liburing) -libverbs
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <liburing.h>
#include <syncmem.h>

#define PORT		1
#define CQ_WAIT_MS	30000
#define FLUSH_TIMEOUT_MS	10000
#define INBOUND_DEBUGFS	"/sys/kernel/debug/ib_sync_mem/inbound"

static const char *dev = "rxe0";
static const char *ip = "192.168.76.1";
static size_t size = 1 << 20;
static unsigned int messages = 8;
static int verify;

struct end {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index = -1;
static enum ibv_mtu mtu;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "nccl_flush: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

/* ---- verbs: the device, the GID of @ip, two connected RC QPs ---- */

static int open_device(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct in_addr a;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		return -ENODEV;
	if (inet_pton(AF_INET, ip, &a) != 1)
		return -EINVAL;
	for (double t0 = now_ms(); gid_index < 0; usleep(100000)) {
		if (ibv_query_port(ctx, PORT, &pa))
			return -errno;
		mtu = pa.active_mtu;
		for (i = 0; i < pa.gid_tbl_len && gid_index < 0; i++) {
			struct ibv_gid_entry g;

			if (ibv_query_gid_ex(ctx, PORT, i, &g, 0) ||
			    g.gid_type != IBV_GID_TYPE_ROCE_V2 ||
			    memcmp(g.gid.raw + 12, &a, 4) || g.gid.raw[10] != 0xff)
				continue;
			gid = g.gid;
			gid_index = i;
		}
		if (gid_index < 0 && now_ms() - t0 > 10000) {
			fprintf(stderr, "nccl_flush: %s: no RoCE v2 GID of %s\n", dev, ip);
			return -ENOENT;
		}
	}
	pd = ibv_alloc_pd(ctx);
	return pd ? 0 : -ENOMEM;
}

static int make_end(struct end *e, unsigned char *buf)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = PORT,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};

	e->buf = buf;
	e->cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!e->cq)
		return -ENOMEM;
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(pd, &qa);
	if (!e->qp)
		return -errno;
	e->mr = ibv_reg_mr(pd, buf, size, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr)
		return -errno;
	return -ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* @e's QP to RTR and RTS towards the QP numbered @peer_qpn. */
static int connect_end(struct end *e, uint32_t peer_qpn)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = PORT;
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return -ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 20;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return -ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* One completion of @e's CQ, polled: 0 with it in *@wc, or -errno. */
static int poll_one(struct end *e, struct ibv_wc *wc)
{
	double t0 = now_ms();
	int n;

	while ((n = ibv_poll_cq(e->cq, 1, wc)) == 0) {
		if (now_ms() - t0 > CQ_WAIT_MS)
			return -ETIMEDOUT;
		sched_yield();	/* rxe's work in the kernel may want this CPU */
	}
	if (n < 0)
		return -EIO;
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "nccl_flush: completion: %s\n",
			ibv_wc_status_str(wc->status));
		return -EIO;
	}
	return 0;
}

/* ---- --verify: the module's inbound READs on @dev (debugfs, root) ---- */

/*
 * The READs the module's inbound flusher of @dev completed, and the 8
 * bytes the last one brought back, from the open debugfs file @fd
 * (lines "name reads registrations last recoveries"). 0, or -errno.
 */
static int inbound_reads(int fd, uint64_t *reads, uint64_t *last)
{
	char text[4096], name[64], *line, *save;
	unsigned long long r, regs, l;
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s %llu %llu %llx", name, &r, &regs, &l) == 4 &&
		    !strcmp(name, dev)) {
			*reads = r;
			*last = l;
			return 0;
		}
	}
	*reads = 0;	/* no flush on @dev yet: its flusher is made at the first */
	*last = 0;
	return 0;
}

/*
 * The inbound flush of client @id as a command of @ring, completed there:
 * what a plugin's test() would submit, then reap with its other
 * completions. Here one at a time. The CQE's res, or a negative errno.
 */
static int ring_flush(struct io_uring *ring, struct syncmem *sm, uint32_t id,
		      uint64_t tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	ret = syncmem_uring_prep_sync(sqe, sm, id, SYNCMEM_INBOUND, 0, 0,
				      FLUSH_TIMEOUT_MS, -1);
	if (ret)
		return ret;
	io_uring_sqe_set_data64(sqe, tag);
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->user_data == tag ? cqe->res : -EPROTO;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

static void pattern(unsigned char *buf, unsigned int msg)
{
	size_t i;

	for (i = 0; i < size; i++)
		buf[i] = (unsigned char)((i * 2654435761u >> 7) ^ (msg * 40503u) ^ msg);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "addr", required_argument, NULL, 'a' },
		{ "size", required_argument, NULL, 's' },
		{ "messages", required_argument, NULL, 'n' },
		{ "verify", no_argument, NULL, 'v' },
		{ "user", required_argument, NULL, 'u' },
		{ 0 },
	};
	unsigned char *recv_buf = NULL, *send_buf = NULL;
	struct end tx = { 0 }, rx = { 0 };
	struct io_uring_params rp = { .flags = SYNCMEM_URING_SETUP_FLAGS };
	unsigned int m, failed = 0, blocking = 0, async = 0, ringed = 0;
	struct io_uring ring;
	uint64_t reads0 = 0, reads = 0, last = 0, all0 = 0;
	struct syncmem *sm;
	uint32_t id;
	int c, ret, dfs = -1;
	long uid = -1;

	while ((c = getopt_long(argc, argv, "d:a:s:n:vu:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'a': ip = optarg; break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'n': messages = strtoul(optarg, NULL, 0); break;
		case 'v': verify = 1; break;
		case 'u': uid = strtol(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: nccl_flush [-d DEV] [-a IPV4] [-s BYTES] [-n MESSAGES] [--verify] [--user UID]\n");
			return 2;
		}
	}
	if (size < 8 || !messages)
		return die("size and messages", EINVAL);

	/* Root's part, before any privilege is dropped: the debugfs file. */
	if (verify) {
		dfs = open(INBOUND_DEBUGFS, O_RDONLY | O_CLOEXEC);
		if (dfs < 0)
			return die(INBOUND_DEBUGFS, errno);
	}
	/* From here on, an unprivileged user's program (--user). */
	if (uid >= 0) {
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid))
			return die("dropping privileges", errno);
		printf("running as uid %ld, gid %ld, no supplementary group\n",
		       (long)geteuid(), (long)getegid());
	}
	ret = open_device();
	if (ret)
		return die(dev, ret);

	if (posix_memalign((void **)&recv_buf, 4096, size) ||
	    posix_memalign((void **)&send_buf, 4096, size))
		return die("memory", ENOMEM);
	memset(recv_buf, 0, size);

	ret = make_end(&tx, send_buf);
	if (!ret)
		ret = make_end(&rx, recv_buf);
	if (!ret)
		ret = connect_end(&tx, rx.qp->qp_num);
	if (!ret)
		ret = connect_end(&rx, tx.qp->qp_num);
	if (ret)
		return die("two RC QPs", ret);

	/* The receive buffer, a client of ib_sync_mem for its flushes. */
	sm = syncmem_open();
	if (!sm)
		return die("syncmem_open", errno);
	ret = syncmem_region_create(sm, dev, "nccl-recv", recv_buf, size,
				    SYNCMEM_REGION_WRITE, 0, &id);
	if (ret) {
		fprintf(stderr, "nccl_flush: syncmem_region_create: %s (%s)\n",
			strerror(-ret), syncmem_errmsg(sm));
		return 1;
	}
	/* The plugin's ring, where its flushes complete. */
	ret = io_uring_queue_init_params(16, &ring, &rp);
	if (ret)
		return die("io_uring_queue_init_params", ret);
	printf("%s: %zu-byte receive buffer, region client %u; QPs %u -> %u\n",
	       dev, size, id, tx.qp->qp_num, rx.qp->qp_num);
	if (verify && (ret = inbound_reads(dfs, &all0, &last)))
		return die(INBOUND_DEBUGFS, ret);

	for (m = 1; m <= messages; m++) {
		struct ibv_sge rsge = { (uintptr_t)recv_buf, 0, rx.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = m, .sg_list = &rsge, .num_sge = 1 }, *rbad;
		struct ibv_sge sge = { (uintptr_t)send_buf, (uint32_t)size, tx.mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = m,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED,
			.imm_data = htonl(m),
		}, *bad;
		static const char *const hows[] = { "ring", "blocking", "fence" };
		const char *how = hows[m % 3];
		struct ibv_wc wc;
		uint64_t first;
		double t0;
		int fence;

		pattern(send_buf, m);
		wr.wr.rdma.remote_addr = (uintptr_t)recv_buf;
		wr.wr.rdma.rkey = rx.mr->rkey;
		/* 1, 2: a receive for the immediate, the peer's WRITE. */
		if ((ret = ibv_post_recv(rx.qp, &rwr, &rbad)) ||
		    (ret = ibv_post_send(tx.qp, &wr, &bad)))
			return die("post", ret);
		/* 3: the receiver's completion (and the sender's). */
		if ((ret = poll_one(&rx, &wc)))
			return die("receive completion", ret);
		if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || ntohl(wc.imm_data) != m)
			return die("receive completion: not this WRITE's immediate", EPROTO);
		if ((ret = poll_one(&tx, &wc)))
			return die("send completion", ret);

		if (verify && (ret = inbound_reads(dfs, &reads0, &last)))
			return die(INBOUND_DEBUGFS, ret);
		/* 4: the flush, blocking, through a fence or the ring. */
		t0 = now_ms();
		if (m % 3 == 1) {
			ret = syncmem_flush_inbound(sm, id, FLUSH_TIMEOUT_MS);
			blocking++;
		} else if (m % 3 == 2) {
			fence = syncmem_flush_inbound_async(sm, id, FLUSH_TIMEOUT_MS);
			ret = fence < 0 ? fence : syncmem_fence_wait(fence, FLUSH_TIMEOUT_MS);
			if (fence >= 0)
				close(fence);
			async++;
		} else {
			ret = ring_flush(&ring, sm, id, m);
			ringed++;
		}
		if (ret) {
			printf("message %u: flush (%s): %s (%s)\n", m, how,
			       strerror(-ret), syncmem_errmsg(sm));
			failed++;
			continue;
		}
		printf("message %u: WRITE with immediate %u, %zu bytes; flush (%s) %.0f us",
		       m, m, size, how, (now_ms() - t0) * 1e3);
		if (verify) {
			if ((ret = inbound_reads(dfs, &reads, &last)))
				return die(INBOUND_DEBUGFS, ret);
			memcpy(&first, recv_buf, sizeof(first));
			printf("; module READs +%llu, it read %016llx",
			       (unsigned long long)(reads - reads0),
			       (unsigned long long)last);
			if (reads != reads0 + 1 || last != first) {
				printf(" -- FAILED: the flush did not read this message (want +1, %016llx)",
				       (unsigned long long)first);
				failed++;
			}
		}
		/* 5: the buffer is the reader's. */
		if (memcmp(recv_buf, send_buf, size)) {
			printf(" -- FAILED: the bytes differ\n");
			failed++;
			continue;
		}
		printf("; bytes ok\n");
	}
	if (verify)
		printf("%u flushes (%u blocking, %u through a fence, %u through the ring), %llu module READs\n",
		       blocking + async + ringed, blocking, async, ringed,
		       (unsigned long long)(reads - all0));
	printf("%s\n", failed ? "FAILED" : "every message arrived whole and was flushed");

	io_uring_queue_exit(&ring);
	syncmem_close(sm);	/* the client dies with the handle's file */
	ibv_destroy_qp(tx.qp);
	ibv_destroy_qp(rx.qp);
	ibv_dereg_mr(tx.mr);
	ibv_dereg_mr(rx.mr);
	ibv_destroy_cq(tx.cq);
	ibv_destroy_cq(rx.cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(send_buf);
	free(recv_buf);
	if (dfs >= 0)
		close(dfs);
	return failed ? 1 : 0;
}
