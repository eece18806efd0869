// SPDX-License-Identifier: GPL-2.0
/*
 * smnlctl: a tiny CLI over smnl for test suites and debugging in the VM.
 *
 *   smnlctl list             one line per client: id name dev kind state pinned
 *   smnlctl get ID           the same for one client
 *   smnlctl del ID...        unregister clients
 *   smnlctl del-netlink      unregister every client created through netlink
 *                            (the clean-up after a test program that died)
 *   smnlctl sync-batch IDS   one SYNC request naming the clients IDS
 *                            (comma-separated, repeats allowed) in
 *                            IB_SYNC_MEM_A_SYNC_CLIENTS, sent as it is:
 *                            no limit checked here, the kernel's bound
 *                            answers; prints "run R errors E skipped S
 *                            results N"
 *
 * Exit status: 0, or 1 with "Error: <errno> (<extack>)" on stderr.
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

static int print_cb(const struct smnl_client *c, void *arg)
{
	(void)arg;
	printf("%u %s %s %s %s pinned=%u size=%llu last_err=%d\n", c->id,
	       c->name, c->dev, smnl_kind_name(c->kind), smnl_state_name(c->state),
	       c->pinned_pages, (unsigned long long)c->size, c->last_err);
	return 0;
}

struct ids {
	uint32_t id[4096];
	int n;
};

static int collect_cb(const struct smnl_client *c, void *arg)
{
	struct ids *ids = arg;

	if (c->origin == IB_SYNC_MEM_ORIGIN_NETLINK && ids->n < 4096)
		ids->id[ids->n++] = c->id;
	return 0;
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
			fprintf(stderr, "smnlctl: not a list of ids: %s\n", list);
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
	struct smnl_client c;
	int ret, i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: smnlctl list | get ID | del ID... | del-netlink | sync-batch IDS | sync-owner ID OWNER\n");
		return 2;
	}
	ret = smnl_open(&nl);
	if (ret)
		return fail("resolve the ib_sync_mem family", ret);
	if (!strcmp(argv[1], "list")) {
		ret = smnl_client_dump(&nl, NULL, print_cb, NULL);
		if (ret)
			return fail("dump", ret);
	} else if (!strcmp(argv[1], "get") && argc == 3) {
		ret = smnl_client_get(&nl, strtoul(argv[2], NULL, 0), &c);
		if (ret)
			return fail("get", ret);
		print_cb(&c, NULL);
	} else if (!strcmp(argv[1], "del")) {
		for (i = 2; i < argc; i++) {
			ret = smnl_unregister(&nl, strtoul(argv[i], NULL, 0));
			if (ret)
				rc = fail(argv[i], ret);
		}
	} else if (!strcmp(argv[1], "del-netlink")) {
		static struct ids ids;

		ret = smnl_client_dump(&nl, NULL, collect_cb, &ids);
		if (ret)
			return fail("dump", ret);
		for (i = 0; i < ids.n; i++) {
			ret = smnl_unregister(&nl, ids.id[i]);
			if (ret && ret != -ENOENT)
				rc = fail("unregister", ret);
			else
				printf("deleted %u\n", ids.id[i]);
		}
	} else if (!strcmp(argv[1], "sync-batch") && argc == 3) {
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
		fprintf(stderr, "smnlctl: unknown command %s\n", argv[1]);
		rc = 2;
	}
	smnl_close(&nl);
	return rc;
}
