// SPDX-License-Identifier: GPL-2.0
/*
 * owned_reuse: an owned client belongs to the socket that created it, not
 * to its port id. netlink frees a closing socket's port id before it sends
 * NETLINK_URELEASE; a new socket of the same process then gets the same
 * port id (autobind tries the process id first) and may create an owned
 * client of its own before the late release arrives. That release must
 * delete the old socket's clients only.
 *
 * ib_sync_mem_test holds the release of one port id back (its "run" file:
 * urelease_hold PORTID, urelease_held, urelease_release), which makes the
 * window as wide as the test needs; ib_sync_mem_sim must be loaded. KTAP.
 *
 *   owned_reuse [--dev rxe0]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ktap.h"
#include "smnl.h"

#define KT_RUN	"/sys/kernel/debug/ib_sync_mem_test/run"

static const char *dev = "rxe0";

/* A command to ib_sync_mem_test: 0 or -errno of the write. */
static int kt_cmd(const char *cmd)
{
	int fd = open(KT_RUN, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, cmd, strlen(cmd)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int register_owned(struct smnl *nl, const char *name)
{
	struct smnl_new req = {
		.dev = dev,
		.name = name,
		.kind = IB_SYNC_MEM_KIND_SIM,
		.flags = IB_SYNC_MEM_CLIENT_F_OWNED,
	};

	return smnl_register(nl, &req);
}

static void *closer(void *arg)
{
	struct smnl *nl = arg;

	/* Blocks in netlink_release() until the release is let go. */
	close(nl->fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct smnl s1, s2, s3;
	struct smnl_client c;
	char cmd[64];
	pthread_t th;
	int id1, id2, ret, held = 0, i;

	if (argc == 3 && !strcmp(argv[1], "--dev"))
		dev = argv[2];
	ktap_start();

	if (!ktap_result(smnl_open(&s1) == 0 && smnl_open(&s3) == 0,
			 "open two netlink sockets")) {
		return ktap_finish();
	}
	ktap_diag("first socket port id %u (process %d), the watcher's %u",
		  s1.portid, getpid(), s3.portid);
	id1 = register_owned(&s1, "reuse-old");
	if (!ktap_result(id1 > 0, "the first socket creates an owned client")) {
		ktap_diag("register: %s \"%s\"", errstr(id1), s1.extack);
		return ktap_finish();
	}

	snprintf(cmd, sizeof(cmd), "urelease_hold %u", s1.portid);
	ret = kt_cmd(cmd);
	ktap_result(ret == 0, "hold back the release of port id %u", s1.portid);
	if (pthread_create(&th, NULL, closer, &s1)) {
		ktap_result(0, "close the first socket in a thread");
		kt_cmd("urelease_release");
		return ktap_finish();
	}
	for (i = 0; i < bound_ms(60000) / 20; i++) {
		if (!kt_cmd("urelease_held")) {
			held = 1;
			break;
		}
		usleep(20000);
	}
	ktap_result(held, "the first socket is closed; its release is held back");

	ret = smnl_open(&s2);
	ktap_result(ret == 0 && s2.portid == s1.portid,
		    "a new socket gets the same port id (%u, was %u)", s2.portid,
		    s1.portid);
	id2 = ret ? ret : register_owned(&s2, "reuse-new");
	ktap_result(id2 > 0, "the new socket creates an owned client");

	kt_cmd("urelease_release");
	pthread_join(th, NULL);

	ktap_result(!smnl_wait_gone(&s3, id1, bound_ms(30000)),
		    "the late release deletes the old socket's client");
	ret = id2 > 0 ? smnl_client_get(&s3, id2, &c) : -EINVAL;
	ktap_result(ret == 0, "and leaves the new socket's client alone (%s)",
		    errstr(ret));
	if (id2 > 0) {
		smnl_close(&s2);
		ktap_result(!smnl_wait_gone(&s3, id2, bound_ms(30000)),
			    "closing the new socket deletes its client");
	}
	smnl_close(&s3);
	return ktap_finish();
}
