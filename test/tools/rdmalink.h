/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RDMA links for the test programs that remove a device under the module
 * (iproute2's rdma tool). Header-only, static functions.
 */
#ifndef SM_RDMALINK_H
#define SM_RDMALINK_H

#include <sys/wait.h>
#include <unistd.h>

#include "ktap.h"

/*
 * rdma link ACTION NAME [type rxe netdev NETDEV], waited for (a hang guard):
 * its exit status, or -1.
 */
static inline int rdma_link(const char *action, const char *name, const char *netdev)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (netdev)
			execlp("rdma", "rdma", "link", action, name, "type", "rxe",
			       "netdev", netdev, (char *)NULL);
		else
			execlp("rdma", "rdma", "link", action, name, (char *)NULL);
		_exit(127);
	}
	status = wait_child(pid, bound_ms(120000));
	if (status == -1) {
		ktap_diag("rdma link %s %s: still running after %d ms", action, name,
			  bound_ms(120000));
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* rdma link add @name type rxe netdev @netdev: its exit status, or -1. */
static inline int rdma_link_add(const char *name, const char *netdev)
{
	return rdma_link("add", name, netdev);
}

/* rdma link delete @name: its exit status, or -1. */
static inline int rdma_link_delete(const char *name)
{
	return rdma_link("delete", name, NULL);
}

#endif
