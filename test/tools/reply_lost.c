// SPDX-License-Identifier: GPL-2.0
/*
 * reply_lost: a CLIENT_NEW whose reply cannot be delivered must not leave
 * a client behind. The caller never learns its id, so nobody could delete
 * it. A socket with the smallest receive buffer is flooded with DEV_GET
 * requests it does not read, until netlink drops replies (the overrun is
 * reported as ENOBUFS); then a persistent sim client is created on it.
 *
 *   reply_lost [--dev rxe0] [--name NAME]
 *
 * The caller (test/vm/35-review.sh) watches the events: the client is
 * created, then deleted (a client left behind is left for it to see and
 * delete). Needs ib_sync_mem and ib_sync_mem_sim. KTAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ktap.h"
#include "smnl_raw.h"

static const char *dev = "rxe0";
static const char *name = "nl-lost";

/* Send @m on @nl without reading anything back: 0 or -errno. */
static int send_only(struct smnl *nl, struct smnl_msg *m)
{
	struct nlmsghdr *req = (struct nlmsghdr *)m->buf;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	req->nlmsg_len = m->len;
	req->nlmsg_seq = ++nl->seq;
	req->nlmsg_flags |= NLM_F_ACK;
	if (sendto(nl->fd, m->buf, m->len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

/*
 * Read what is queued on @nl without waiting: how many datagrams, and
 * whether an overrun (ENOBUFS) was reported among them.
 */
static int drain(struct smnl *nl, int *overrun)
{
	static char buf[65536];
	int n = 0;

	*overrun = 0;
	for (;;) {
		ssize_t r = recv(nl->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (r >= 0) {
			n++;
			continue;
		}
		if (errno == ENOBUFS) {
			*overrun = 1;
			continue;
		}
		if (errno == EINTR)
			continue;
		return n;
	}
}

int main(int argc, char **argv)
{
	struct smnl nl, lost;
	struct smnl_client c;
	struct smnl_msg m;
	int i, ret, sent = 0, overrun, queued, rcvbuf = 1;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--dev"))
			dev = argv[i + 1];
		else if (!strcmp(argv[i], "--name"))
			name = argv[i + 1];
	}
	ktap_start();
	if (!ktap_result(smnl_open(&nl) == 0 && smnl_open(&lost) == 0,
			 "two sockets on the family"))
		return ktap_finish();
	ret = smnl_client_find(&nl, name, &c);
	ktap_result(ret == -ENOENT, "no client named %s yet", name);

	/* The kernel rounds the smallest size up to its minimum. */
	ret = setsockopt(lost.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	ktap_result(ret == 0, "the flooded socket's receive buffer at its minimum");

	/* 200 replies of a device are far more than that buffer holds. */
	for (i = 0; i < 200; i++) {
		smnl_msg_init(&lost, &m, IB_SYNC_MEM_CMD_DEV_GET, 0);
		smnl_put_str(&m, IB_SYNC_MEM_A_DEV_NAME, dev);
		if (send_only(&lost, &m))
			break;
		sent++;
	}
	ktap_result(sent == 200, "200 DEV_GET requests sent, none read (%d)", sent);

	memset(&m, 0, sizeof(m));
	smnl_msg_init(&lost, &m, IB_SYNC_MEM_CMD_CLIENT_NEW, 0);
	smnl_put_str(&m, IB_SYNC_MEM_A_DEV_NAME, dev);
	smnl_put_str(&m, IB_SYNC_MEM_A_CLIENT_NAME, name);
	smnl_put_u32(&m, IB_SYNC_MEM_A_CLIENT_KIND, IB_SYNC_MEM_KIND_SIM);
	ret = send_only(&lost, &m);
	ktap_result(ret == 0, "CLIENT_NEW %s sent on the flooded socket", name);

	queued = drain(&lost, &overrun);
	ktap_result(overrun && queued > 0 && queued < 200,
		    "netlink dropped replies: ENOBUFS, %d of 201 answers queued",
		    queued);

	/* Left for the caller to see in the events, if it is there. */
	ret = smnl_client_find(&nl, name, &c);
	ktap_result(ret == -ENOENT,
		    "the client whose reply was lost is not registered");
	if (ret != -ENOENT)
		ktap_diag("find %s: %s (id %u)", name, errstr(ret), c.id);

	smnl_close(&lost);
	smnl_close(&nl);
	return ktap_finish();
}
