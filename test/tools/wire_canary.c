// SPDX-License-Identifier: GPL-2.0
/*
 * wire_canary: the canary across two hosts. Each host runs one side: a
 * buffer registered as an ib_sync_mem region client on its device, and an
 * RC QP on the same device connected to the other host's over RoCE v2. The
 * sides meet over TCP on the wire itself (host B listens, A connects) and
 * swap what RDMA needs (GID, QPN, rkey, address), then run in lock step:
 *
 *   WRITE rounds: B poisons its buffer and syncs it to-device; A writes a
 *   round's pattern, syncs to-device and RDMA-WRITEs its buffer into B's; B
 *   syncs to-cpu and compares every byte.
 *   READ rounds: B writes a pattern and syncs to-device; A poisons its own
 *   buffer, syncs it to-device, RDMA-READs B's into it, syncs to-cpu and
 *   compares every byte.
 *
 * Every step's outcome goes to the other side, so both print the same
 * verdicts in KTAP (and both fail when one side does).
 *
 *   wire_canary --role a|b --dev rxe0 --ip A.B.C.D --peer A.B.C.D
 *               [--tcp-port N] [--size BYTES] [--rounds N] [--no-sync]
 *               [--peer-may-vanish] [--link-delete [--ready-file FILE]]
 *               [--inbound]
 *
 * --inbound (both sides): B's buffer is an accelerator's memory, a sim
 * client over it whose device reads its own view. WRITE rounds only: B
 * does not poison or sync before A's WRITE; after it, B's view must still
 * hold the previous round's bytes (the stale read the model exists to
 * show), and after an inbound flush the new pattern, every byte. B's
 * receive path is written as a net plugin (NCCL's, RCCL's) would run it,
 * receive_inbound(): the RDMA WRITE posted and its completion reaped (by
 * A, which says so), flush inbound, hand the buffer to the accelerator;
 * B's accelerator client is registered and flushed through the C library
 * the kernel's ynl-gen-c.py generates from the family's YNL spec (smynl.h,
 * test/tools/ynl.mk), the rest goes through smnl.
 *
 * --peer-may-vanish: the other side is killed mid-run (a fault case). Its
 * going (the TCP connection reset or closed) after at least one passed
 * round ends the rounds as a pass, and this side's own client must still
 * be live and syncable both ways.
 *
 * --link-delete (both sides; B with --ready-file): after the WRITE rounds
 * (no READ rounds), A writes into B's buffer without lock step, one RDMA
 * WRITE after another, while B's device is deleted under it. B creates
 * FILE once A's writes land in its buffer (the suite then runs "rdma link
 * delete"), and waits for its client to be invalidated by the removal. rxe
 * cannot disassociate a user context, so the removal waits for B's verbs
 * resources: B closes them and tells A. A's writes must then end in an
 * error completion with A's QP in the error state, and A's own client must
 * stay live and syncable both ways; both sides report A's verdict.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ktap.h"
#include "smnl.h"
#include "smynl.h"
#include "smdebugfs.h"
#include "rcqp.h"

#define CONNECT_WAIT_MS	180000	/* the other guest still booting */
#define STEP_WAIT_MS	120000	/* the other side's slowest step */
/*
 * --link-delete: a write into a QP that no longer answers fails after
 * rc_connect()'s 7 finite tries of about 4.3 s; the removal comes first.
 */
#define LINK_WAIT_MS	180000
#define POLL_US		10000

enum { MSG_HELLO = 1, MSG_READY, MSG_DONE, MSG_VERDICT, MSG_BYE, MSG_STREAM, MSG_GONE };

struct msg {
	uint32_t kind;
	uint32_t round;
	int32_t status;		/* 0 or a negative errno */
	uint32_t pad;
	struct rc_peer peer;	/* MSG_HELLO only */
};

static struct smnl nl;
/* --inbound, B: the accelerator's socket, on the generated library */
static struct ynl_sock *ys;
static int use_sync = 1, sock = -1, may_vanish, link_delete, inbound;
static const char *ready_file;
static const char *role_name;

static int send_msg(uint32_t kind, uint32_t round, int status,
		    const struct rc_peer *p)
{
	struct msg m = { .kind = kind, .round = round, .status = status };

	if (p)
		m.peer = *p;
	if (send(sock, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		return -errno ? -errno : -EIO;
	return 0;
}

/* The next message, which must be @kind for @round; its status, or -errno. */
static int recv_msg(uint32_t kind, uint32_t round, struct msg *m)
{
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(*m)) {
		n = recv(sock, (char *)m + got, sizeof(*m) - got, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		got += n;
	}
	if (m->kind != kind || m->round != round) {
		ktap_diag("protocol: got message %u for round %u, want %u for %u",
			  m->kind, m->round, kind, round);
		return -EPROTO;
	}
	return m->status;
}

/* B listens on its wire address, A connects (retrying while B starts). */
static int meet(const char *role, const char *ip, const char *peer, int port)
{
	struct timeval tv = { .tv_sec = bound_ms(STEP_WAIT_MS) / 1000 };
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	double t0 = now_ms();
	int one = 1, fd, ret;

	if (inet_pton(AF_INET, *role == 'b' ? ip : peer, &sa.sin_addr) != 1)
		return -EINVAL;
	if (*role == 'b') {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
			ret = -errno;
			close(fd);
			return ret;
		}
		/* accept() honours SO_RCVTIMEO: a peer that never comes fails */
		sock = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		ret = sock < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno) : 0;
		close(fd);
		if (ret)
			return ret;
	} else {
		for (;;) {
			sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (sock < 0)
				return -errno;
			if (!connect(sock, (struct sockaddr *)&sa, sizeof(sa)))
				break;
			ret = -errno;
			close(sock);
			sock = -1;
			if (now_ms() - t0 > bound_ms(CONNECT_WAIT_MS))
				return ret;
			usleep(200000);
		}
	}
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static int sync_buf(int client, uint32_t dir, const char *what)
{
	int ret, cerr = 0;
	uint64_t ns = 0;

	if (!use_sync)
		return 0;
	if (client <= 0)
		return client ? client : -ENOENT;
	ret = smnl_sync_client(&nl, client, dir, 1000, &cerr, &ns);
	if (ret || cerr)
		ktap_diag("%s: sync %s: %s, client err %s \"%s\"", role_name, what,
			  errstr(ret), errstr(cerr), nl.extack);
	return ret ? ret : cerr;
}

/* The first byte of @buf that differs from round @r's pattern, or @size. */
static size_t first_difference(const unsigned char *buf, size_t size, unsigned int r)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (buf[i] != rc_pattern(i, r))
			break;
	return i;
}

/* Every byte of @buf against round @r's pattern: 0, or -EBADMSG. */
static int verify(const unsigned char *buf, size_t size, unsigned int r)
{
	size_t i = first_difference(buf, size, r);

	if (i == size)
		return 0;
	ktap_diag("%s: round %u: first difference at byte %zu: 0x%02x, want 0x%02x",
		  role_name, r, i, buf[i], rc_pattern(i, r));
	return -EBADMSG;
}

static void fill(unsigned char *buf, size_t size, unsigned int r)
{
	size_t i;

	for (i = 0; i < size; i++)
		buf[i] = rc_pattern(i, r);
}

static void poison(unsigned char *buf, size_t size, unsigned int r)
{
	memset(buf, (unsigned char)~rc_pattern(0, r), size);
}

/*
 * --inbound, B: flush @client's buffer inbound through the generated
 * library (smynl_flush_inbound()): 0, or a negative errno.
 */
static int flush_inbound(int client)
{
	int ret, cerr;

	if (client <= 0)
		return client ? client : -ENOENT;
	ret = smynl_flush_inbound(ys, client, 1000, &cerr);
	if (ret || cerr)
		ktap_diag("%s: flush inbound: %s, client err %s \"%s\"", role_name,
			  errstr(ret), errstr(cerr), smynl_msg(ys));
	return ret ? ret : cerr;
}

/*
 * --inbound, B: round @r's receive path into the accelerator's memory, as
 * a net plugin runs it. The RDMA WRITE was posted and its completion
 * reaped: A's MSG_DONE said so. Flush the buffer inbound, hand it to the
 * accelerator, which reads its view of it (@view: room for it). Before the
 * flush B reads the view too: it must still hold round @r - 1's bytes
 * (zeros before the first), what the accelerator would read without the
 * flush. 0 when the accelerator reads round @r's, every byte; or -errno
 * (-ESTALE: the view was not stale before the flush).
 */
static int receive_inbound(int client, struct rc_end *e, unsigned int r,
			   unsigned char *view)
{
	size_t i;
	int ret;

	ret = sim_view_read(client, view, e->size);
	for (i = 0; !ret && i < e->size; i++)
		if (view[i] != (r > 1 ? rc_pattern(i, r - 1) : 0))
			break;
	if (!ret && i < e->size) {
		ktap_diag("%s: round %u: the view was not stale at byte %zu", role_name,
			  r, i);
		return -ESTALE;
	}
	/* flush inbound */
	if (!ret)
		ret = flush_inbound(client);
	/* hand the buffer to the accelerator: what it reads of it */
	if (!ret)
		ret = sim_view_read(client, view, e->size);
	return ret ? ret : verify(view, e->size, r);
}

/*
 * One WRITE round, A into B: 0 when B saw every byte. Both sides return
 * the same outcome: each step's status crosses the wire. With --inbound,
 * B's bytes are its accelerator's view (@view: room for them).
 */
static int write_round(int is_a, struct rc_end *e, const struct rc_peer *p,
		       int client, unsigned int r, double *ms, unsigned char *view)
{
	struct msg m;
	int ret = 0;

	if (!is_a) {
		if (!inbound) {
			poison(e->buf, e->size, r);
			ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_DEVICE,
				       "target to-device");
		}
		if (send_msg(MSG_READY, r, ret, NULL))
			return -ECONNRESET;
		if (ret)
			return ret;
		/* A's RDMA WRITE completed */
		ret = recv_msg(MSG_DONE, r, &m);
		if (!ret && inbound) {
			ret = receive_inbound(client, e, r, view);
		} else if (!ret) {
			ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_CPU, "target to-cpu");
			if (!ret)
				ret = verify(e->buf, e->size, r);
		}
		if (ret != -ECONNRESET && send_msg(MSG_VERDICT, r, ret, NULL))
			return -ECONNRESET;
		return ret;
	}
	ret = recv_msg(MSG_READY, r, &m);
	if (ret)
		return ret;
	fill(e->buf, e->size, r);
	ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_DEVICE, "source to-device");
	if (!ret)
		ret = rc_rdma(e, IBV_WR_RDMA_WRITE, p, ms);
	if (send_msg(MSG_DONE, r, ret, NULL))
		return -ECONNRESET;
	if (ret)
		return ret;
	return recv_msg(MSG_VERDICT, r, &m);
}

/* One READ round, A from B: 0 when A read every byte B wrote. */
static int read_round(int is_a, struct rc_end *e, const struct rc_peer *p,
		      int client, unsigned int r, double *ms)
{
	struct msg m;
	int ret;

	if (!is_a) {
		fill(e->buf, e->size, r);
		ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_DEVICE, "source to-device");
		if (send_msg(MSG_READY, r, ret, NULL))
			return -ECONNRESET;
		return ret ? ret : recv_msg(MSG_VERDICT, r, &m);
	}
	ret = recv_msg(MSG_READY, r, &m);
	if (ret)
		return ret;
	poison(e->buf, e->size, r);
	ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_DEVICE, "target to-device");
	if (!ret)
		ret = rc_rdma(e, IBV_WR_RDMA_READ, p, ms);
	if (!ret)
		ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_CPU, "target to-cpu");
	if (!ret)
		ret = verify(e->buf, e->size, r);
	if (send_msg(MSG_VERDICT, r, ret, NULL))
		return -ECONNRESET;
	return ret;
}

/* The client's state (IB_SYNC_MEM_CLIENT_*), 0 once it is gone, or -errno. */
static int client_state(int client)
{
	struct smnl_client c;
	int ret = smnl_client_get(&nl, client, &c);

	if (ret == -ENOENT)
		return 0;
	return ret ? ret : (int)c.state;
}

/*
 * After the peer or its device went: this host's client is still live and
 * syncs both ways. 0, or -errno (-ESTALE: not live).
 */
static int still_syncable(int client, const char *when)
{
	int ret = client > 0 ? client_state(client) : client;
	char what[80];

	if (ret >= 0)
		ret = ret == IB_SYNC_MEM_CLIENT_LIVE ? 0 : -ESTALE;
	snprintf(what, sizeof(what), "%s, to-device", when);
	if (!ret)
		ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_DEVICE, what);
	snprintf(what, sizeof(what), "%s, to-cpu", when);
	if (!ret)
		ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_CPU, what);
	if (ret)
		ktap_diag("%s: %s: %s", role_name, when, errstr(ret));
	return ret;
}

/*
 * --link-delete, B: wait (syncing to-cpu) until A's streamed writes show in
 * the buffer, say so through the ready file, wait for the client to be
 * invalidated by the device's removal, close the verbs resources the
 * removal waits for, and tell A; then report A's verdict.
 */
static int link_delete_b(struct rc_end *e, int client, unsigned int r)
{
	double t0 = now_ms();
	struct msg m;
	int ret, state, fd;

	ret = recv_msg(MSG_STREAM, r, &m);
	if (ret)
		return ret;
	for (;;) {
		ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_CPU, "target to-cpu");
		if (ret || first_difference(e->buf, e->size, r) == e->size)
			break;
		if (now_ms() - t0 > bound_ms(LINK_WAIT_MS)) {
			ret = -ETIMEDOUT;
			break;
		}
		usleep(POLL_US);
	}
	if (!ktap_result(!ret, "link delete: A's writes land in B's buffer (synced to-cpu)"))
		return ret;
	fd = open(ready_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	ktap_diag("%s: A is writing; waiting for %s to be deleted", role_name, e->dev);
	t0 = now_ms();
	while ((state = client_state(client)) == IB_SYNC_MEM_CLIENT_LIVE &&
	       now_ms() - t0 < bound_ms(LINK_WAIT_MS))
		usleep(POLL_US);
	ktap_result(state == IB_SYNC_MEM_CLIENT_INVALIDATED || state == 0,
		    "link delete: B's client invalidated when %s was deleted under A's writes (%s)",
		    e->dev, state == IB_SYNC_MEM_CLIENT_INVALIDATED ? "invalidated" :
		    state == 0 ? "already gone with the device" : "still live");
	if (state < 0)
		ktap_diag("%s: client %d: %s", role_name, client, errstr(state));
	/* the removal waits for these: rxe has no disassociate */
	rc_teardown(e);
	ret = send_msg(MSG_GONE, r, state == IB_SYNC_MEM_CLIENT_LIVE ? -EBUSY : 0, NULL);
	if (!ret)
		ret = recv_msg(MSG_VERDICT, r, &m);
	ktap_result(!ret, "link delete: A's writes failed with its QP in error, A's client live and syncable (A's verdict)");
	return ret;
}

/*
 * --link-delete, A: write into B until a write fails, then check the QP's
 * state and this host's client, and send B the verdict.
 */
static int link_delete_a(struct rc_end *e, const struct rc_peer *p, int client,
			 unsigned int r)
{
	int ret, writes = 0, failed, in_error, gone;
	double t0 = now_ms(), ms;
	struct msg m;

	fill(e->buf, e->size, r);
	ret = sync_buf(client, IB_SYNC_MEM_SYNC_TO_DEVICE, "source to-device");
	if (!ret)
		ret = send_msg(MSG_STREAM, r, 0, NULL);
	if (ret)
		return ret;
	do {
		ret = rc_rdma_within(e, IBV_WR_RDMA_WRITE, p, &ms, LINK_WAIT_MS);
		writes += !ret;
	} while (!ret && now_ms() - t0 < bound_ms(LINK_WAIT_MS));
	failed = ktap_result(ret == -EIO && e->wc_status != IBV_WC_SUCCESS,
			     "link delete: A's writes end in an error completion once B's device is gone (%d writes before it: %s)",
			     writes, ret == -EIO ? ibv_wc_status_str(e->wc_status) : errstr(ret));
	ret = rc_qp_state(e);
	in_error = ktap_result(ret == IBV_QPS_ERR, "link delete: A's QP is in the error state (%d)",
			       ret);
	gone = recv_msg(MSG_GONE, r, &m);
	ktap_result(!gone, "link delete: B saw its client invalidated and closed its device (B's verdict)");
	ret = still_syncable(client, "after B's device went");
	ktap_result(!ret, "link delete: A's client is still live and syncable both ways");
	if (!ret && !(failed && in_error))
		ret = -EPROTO;
	if (send_msg(MSG_VERDICT, r, ret, NULL))
		return -ECONNRESET;
	return ret ? ret : gone;
}

static void usage(void)
{
	fprintf(stderr, "usage: wire_canary --role a|b --dev DEV --ip ADDR --peer ADDR\n"
		"                   [--tcp-port N] [--size BYTES] [--rounds N] [--no-sync]\n"
		"                   [--peer-may-vanish] [--link-delete [--ready-file FILE]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "role", required_argument, NULL, 'R' },
		{ "dev", required_argument, NULL, 'D' },
		{ "ip", required_argument, NULL, 'i' },
		{ "peer", required_argument, NULL, 'p' },
		{ "tcp-port", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 'z' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "no-sync", no_argument, NULL, 'n' },
		{ "peer-may-vanish", no_argument, NULL, 'V' },
		{ "link-delete", no_argument, NULL, 'L' },
		{ "ready-file", required_argument, NULL, 'F' },
		{ "inbound", no_argument, NULL, 'I' },
		{ 0 },
	};
	struct rc_end e = { .dev = "rxe0" };
	const char *peer_ip = NULL, *role = NULL;
	int rounds = 8, port = 18515, o, ret, is_a, client = 0, r, phase, phases, vanished = 0;
	unsigned long long verified[2] = { 0, 0 };
	int passed[2] = { 0, 0 };
	double ms, total_ms[2] = { 0, 0 };
	struct rc_peer mine, theirs;
	struct smnl_client c;
	struct ynl_error why;
	size_t size = 1 << 20;
	unsigned char *view;
	struct msg m;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'R': role = optarg; break;
		case 'D': e.dev = optarg; break;
		case 'i': e.ip = optarg; break;
		case 'p': peer_ip = optarg; break;
		case 't': port = atoi(optarg); break;
		case 'z': size = strtoull(optarg, NULL, 0); break;
		case 'r': rounds = atoi(optarg); break;
		case 'n': use_sync = 0; break;
		case 'V': may_vanish = 1; break;
		case 'L': link_delete = 1; break;
		case 'F': ready_file = optarg; break;
		case 'I': inbound = 1; break;
		default: usage();
		}
	}
	if (!role || (strcmp(role, "a") && strcmp(role, "b")) || !e.ip ||
	    !peer_ip || rounds < 1 || !size || size % sysconf(_SC_PAGESIZE))
		usage();
	is_a = *role == 'a';
	/* --link-delete needs the module; B, and only B, names the ready file */
	if ((link_delete && (!use_sync || may_vanish || is_a == !!ready_file)) ||
	    (ready_file && !link_delete) ||
	    (inbound && (!use_sync || link_delete || may_vanish)))
		usage();
	role_name = is_a ? "host A" : "host B";
	ktap_start();
	ktap_diag("%s: %s on %s, peer %s, %d rounds each way of %zu KiB", role_name,
		  e.ip, e.dev, peer_ip, rounds, size / 1024);

	e.size = size;
	e.buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	view = inbound && !is_a ? malloc(size) : NULL;
	if (!ktap_result(e.buf != MAP_FAILED && (view || !inbound || is_a),
			 "map a page-aligned %zu KiB buffer", size / 1024))
		return ktap_finish();
	memset(e.buf, 0, size);

	if (use_sync) {
		/* --inbound, B: an accelerator's memory (a sim client over it) */
		int accelerator = inbound && !is_a;
		const char *why_not = nl.extack;

		ret = smnl_open(&nl);
		/* the accelerator's socket too, on the generated library */
		if (!ret && accelerator) {
			ret = smynl_open(&ys, &why);
			if (ret)
				ktap_diag("the generated library's socket: %s", why.msg);
		}
		/* owned: it dies with this process (the kill case) */
		struct smnl_new req = {
			.dev = e.dev,
			.name = is_a ? "wire-a" : "wire-b",
			.kind = IB_SYNC_MEM_KIND_REGION,
			.flags = IB_SYNC_MEM_CLIENT_F_OWNED,
			.region_nest = 1,
			.region_addr = (uintptr_t)e.buf,
			.region_len = size,
			.region_access = IB_SYNC_MEM_REGION_F_WRITE,
		};

		if (!ktap_result(ret == 0, "resolve the ib_sync_mem family"))
			client = ret;
		else if (accelerator)	/* owned too, by the library's socket */
			client = smynl_register_sim(ys, e.dev, "wire-b-acc",
						    IB_SYNC_MEM_CLIENT_F_OWNED, e.buf, size);
		else
			client = smnl_register(&nl, &req);
		if (accelerator && client <= 0 && ys)
			why_not = smynl_msg(ys);
		ret = client > 0 ? smnl_client_get(&nl, client, &c) : client;
		if (!ktap_result(client > 0 && !ret && c.state == IB_SYNC_MEM_CLIENT_LIVE &&
				 (accelerator ||
				  c.pinned_pages == size / sysconf(_SC_PAGESIZE)),
				 accelerator ? "register the buffer as an owned sim accelerator's memory on %s" :
				 "register the buffer as an owned region client on %s (pinned)",
				 e.dev))
			ktap_diag("register: %s \"%s\"", errstr(client > 0 ? ret : client),
				  why_not);
	} else {
		ktap_diag("--no-sync: ib_sync_mem is not used");
	}

	/* --link-delete: A's QP must give up on B's device once it is gone */
	e.finite_retries = link_delete && is_a;
	ret = rc_setup(&e);
	if (!ret) {
		ret = meet(role, e.ip, peer_ip, port);
		if (ret)
			ktap_diag("meet the peer over TCP port %d: %s", port, errstr(ret));
	}
	if (!ret) {
		rc_describe(&e, &mine);
		ret = send_msg(MSG_HELLO, 0, 0, &mine);
		if (!ret)
			ret = recv_msg(MSG_HELLO, 0, &m);
		theirs = m.peer;
		if (!ret && theirs.size != size)
			ret = -EMSGSIZE;
	}
	if (!ret)
		ret = rc_connect(&e, &theirs);
	if (!ktap_result(ret == 0, "RC QP on %s (%s) connected to the peer's (%s) over the wire",
			 e.dev, e.ip, peer_ip)) {
		ktap_diag("set-up: %s", errstr(ret));
		rounds = 0;
	} else {
		ktap_diag("peer QP %u, rkey 0x%x", theirs.qpn, theirs.rkey);
	}

	phases = link_delete || inbound ? 1 : 2;
	for (phase = 0; phase < phases && rounds; phase++) {
		const char *what = phase ? "READ" : "WRITE";

		for (r = 1; r <= rounds; r++) {
			unsigned int round = phase * rounds + r;

			ms = 0;
			ret = phase ? read_round(is_a, &e, &theirs, client, round, &ms)
				    : write_round(is_a, &e, &theirs, client, round, &ms, view);
			if (ret == -ECONNRESET && may_vanish && passed[0]) {
				vanished = 1;
				break;
			}
			if (ktap_result(!ret, "%s round %d: RDMA %s %zu KiB A %s B, %s",
					what, r, what, size / 1024,
					phase ? "<-" : "->",
					inbound ? "B's accelerator reads the old bytes, flushed inbound every new one" :
					"synced on both hosts, every byte equal")) {
				passed[phase]++;
				/* the side that compared counts the bytes */
				if (is_a == phase)
					verified[phase] += size;
				total_ms[phase] += ms;
			} else {
				ktap_diag("%s round %d: %s", what, r, errstr(ret));
				break;	/* lock step lost, or the QP is in error */
			}
		}
		if (vanished)
			break;
	}
	if (vanished) {
		ktap_result(1, "the peer went away after %d WRITE and %d READ rounds (--peer-may-vanish)",
			    passed[0], passed[1]);
		ktap_result(!still_syncable(client, "after the peer went"),
			    "this host's client is still live and syncable both ways");
		rounds = 0;	/* nothing more to count */
	}
	if (link_delete && rounds && passed[0] == rounds) {
		ret = is_a ? link_delete_a(&e, &theirs, client, rounds + 1)
			   : link_delete_b(&e, client, rounds + 1);
		if (ret)
			ktap_diag("%s: link delete: %s", role_name, errstr(ret));
	}
	if (rounds) {
		ktap_diag("%s: WRITE %.1f ms, READ %.1f ms in RDMA operations", role_name,
			  total_ms[0], total_ms[1]);
		if (send_msg(MSG_BYE, 0, 0, NULL) == 0)
			recv_msg(MSG_BYE, 0, &m);
	}

	if (link_delete && !is_a && client > 0) {
		/* B's client: created on the device, deleted with it */
		ktap_result(client_state(client) == 0, "link delete: B's client went with %s",
			    e.dev);
		client = 0;
	}
	if (use_sync && client > 0 && rounds) {
		/*
		 * Three syncs a round on each host: A to-device (WRITE),
		 * to-device and to-cpu (READ); B the other way round. With
		 * --link-delete, A's stream adds three.
		 */
		ret = smnl_client_get(&nl, client, &c);
		ktap_result(!ret && c.syncs == (uint64_t)(is_a ? passed[0] + 2 * passed[1] + 3 * link_delete
							       : (2 - inbound) * passed[0] + passed[1]) &&
			    c.sim_calls_inbound == (uint64_t)(inbound && !is_a ? passed[0] : 0) &&
			    !c.errors, "client stats: one sync per step, no errors");
		ktap_diag("%s: client %d: %llu syncs, %llu errors, %llu bytes", role_name,
			  client, (unsigned long long)c.syncs,
			  (unsigned long long)c.errors, (unsigned long long)c.bytes);
	}
	if (!vanished)
		ktap_result(rounds > 0 && passed[0] == rounds && passed[1] == rounds * (phases - 1),
			    "canary across hosts: %d of %d WRITE and %d of %d READ rounds passed, %llu bytes verified on %s%s",
			    passed[0], rounds, passed[1], rounds * (phases - 1),
			    verified[0] + verified[1], role_name,
			    use_sync ? "" : " (without ib_sync_mem)");

	if (sock >= 0)
		close(sock);
	rc_teardown(&e);
	if (use_sync && client > 0)
		ktap_result(smnl_unregister(&nl, client) == 0, "unregister the client");
	if (use_sync)
		smnl_close(&nl);
	/* after the unregister: B's accelerator client is owned by it */
	smynl_close(ys);
	munmap(e.buf, size);
	free(view);
	return ktap_finish();
}
