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
#include "smnl.h"

/* rdma link delete @name, waited for (a hang guard): its exit status, or -1. */
static inline int rdma_link_delete(const char *name)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		execlp("rdma", "rdma", "link", "delete", name, (char *)NULL);
		_exit(127);
	}
	status = wait_child(pid, bound_ms(120000));
	if (status == -1) {
		ktap_diag("rdma link delete %s: still running after %d ms", name, bound_ms(120000));
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
