// SPDX-License-Identifier: GPL-2.0
/*
 * nlsync: the family's SYNC command sent as it is, for the suites that ask
 * the kernel's own bounds (smnl, on the generated library; these were
 * smnlctl's until smnlctl moved to libsyncmem, which does not send
 * requests past its own rules, nor syncs over netlink).
 *
 *   nlsync sync-batch IDS       one SYNC request naming the clients IDS
 *                               (comma-separated, repeats allowed) in
 *                               IB_SYNC_MEM_A_SYNC_CLIENTS, sent as it is:
 *                               no limit checked here, the kernel's bound
 *                               answers; prints "run R errors E skipped S
 *                               results N"
 *   nlsync sync-owner ID OWNER  a SYNC naming a client and an owner, no
 *                               device; prints "run R"
 *
 * Exit status: 0, or 1 with "Error: <what>: <errno> (<extack>)" on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smnl.h"

static struct smnl nl;

static int fail(const char *what, int err)
{
	fprintf(stderr, "Error: %s: %s%s%s%s\n", what, strerror(-err),
		nl.extack[0] ? " (" : "", nl.extack, nl.extack[0] ? ")" : "");
	return 1;
}

/* sync-batch: the ids of @list ("1,2,2,3") in one batch request. */
static int sync_batch(const char *list)
{
	struct smnl_sync_result res;
	unsigned int n = 1, i = 0;
	const char *p;
	uint32_t *ids;
	char *end;
	int ret;

	for (p = list; *p; p++)
		n += *p == ',';
	ids = calloc(n, sizeof(*ids));
	if (!ids)
		return fail("sync-batch", -ENOMEM);
	for (p = list; i < n; p = end + 1) {
		errno = 0;
		ids[i++] = strtoul(p, &end, 10);
		if (errno || end == p || (*end != ',' && *end != '\0')) {
			fprintf(stderr, "nlsync: not a list of ids: %s\n", list);
			free(ids);
			return 2;
		}
	}
	ret = smnl_sync_batch(&nl, ids, n, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, &res);
	free(ids);
	if (ret)
		return fail("sync-batch", ret);
	printf("run %u errors %u skipped %u results %u\n", res.run, res.errors,
	       res.skipped, res.results);
	return 0;
}

int main(int argc, char **argv)
{
	int ret, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: nlsync sync-batch IDS | sync-owner ID OWNER\n");
		return 2;
	}
	ret = smnl_open(&nl);
	if (ret)
		return fail("resolve the ib_sync_mem family", ret);
	if (!strcmp(argv[1], "sync-batch") && argc == 3) {
		rc = sync_batch(argv[2]);
	} else if (!strcmp(argv[1], "sync-owner") && argc == 4) {
		/* A client and an owner, no device: as it is, for the kernel. */
		struct smnl_sync_result res;

		ret = smnl_sync_owner(&nl, NULL, strtoul(argv[2], NULL, 0),
				      argv[3], IB_SYNC_MEM_SYNC_TO_DEVICE, &res);
		if (ret)
			rc = fail("sync-owner", ret);
		else
			printf("run %u\n", res.run);
	} else {
		fprintf(stderr, "nlsync: unknown command %s\n", argv[1]);
		rc = 2;
	}
	smnl_close(&nl);
	return rc;
}
