// SPDX-License-Identifier: GPL-2.0
/*
 * smnlctl: a tiny CLI for test suites and debugging in the VM, on
 * libsyncmem alone (lib/include/syncmem.h: no smnl, no libynl; the
 * family's SYNC sent as it is is nlsync's).
 *
 *   smnlctl list             one line per client: id name dev kind state
 *                            pinned=P size=S last_err=E
 *   smnlctl get ID           the same for one client
 *   smnlctl del ID...        unregister clients
 *   smnlctl del-netlink      unregister every client created through netlink
 *                            (the clean-up after a test program that died)
 *
 * Exit status: 0, or 1 with "Error: <what>: <errno> (<reason>)" on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <syncmem.h>

static struct syncmem *sm;

static int fail(const char *what, int err)
{
	const char *why = sm ? syncmem_errmsg(sm) : "";

	fprintf(stderr, "Error: %s: %s%s%s%s\n", what, strerror(-err),
		why[0] ? " (" : "", why, why[0] ? ")" : "");
	return 1;
}

static int print_cb(const struct syncmem_client *c, void *arg)
{
	(void)arg;
	printf("%u %s %s %s %s pinned=%u size=%llu last_err=%d\n", c->id,
	       c->name, c->dev, syncmem_kind_name(c->kind),
	       syncmem_state_name(c->state), c->pinned_pages,
	       (unsigned long long)c->size, c->last_err);
	return 0;
}

struct ids {
	uint32_t id[4096];
	int n;
};

static int collect_cb(const struct syncmem_client *c, void *arg)
{
	struct ids *ids = arg;

	if (c->origin == SYNCMEM_ORIGIN_NETLINK && ids->n < 4096)
		ids->id[ids->n++] = c->id;
	return 0;
}

int main(int argc, char **argv)
{
	struct syncmem_client c;
	int ret, i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: smnlctl list | get ID | del ID... | del-netlink\n");
		return 2;
	}
	sm = syncmem_open();
	if (!sm)
		return fail("open /dev/ib_sync_mem", -errno);
	if (!strcmp(argv[1], "list")) {
		ret = syncmem_client_foreach(sm, NULL, print_cb, NULL);
		if (ret)
			rc = fail("dump", ret);
	} else if (!strcmp(argv[1], "get") && argc == 3) {
		ret = syncmem_client_get(sm, strtoul(argv[2], NULL, 0), &c);
		if (ret)
			rc = fail("get", ret);
		else
			print_cb(&c, NULL);
	} else if (!strcmp(argv[1], "del")) {
		for (i = 2; i < argc; i++) {
			ret = syncmem_client_delete(sm, strtoul(argv[i], NULL, 0));
			if (ret)
				rc = fail(argv[i], ret);
		}
	} else if (!strcmp(argv[1], "del-netlink")) {
		static struct ids ids;

		ret = syncmem_client_foreach(sm, NULL, collect_cb, &ids);
		if (ret) {
			rc = fail("dump", ret);
			ids.n = 0;
		}
		for (i = 0; i < ids.n; i++) {
			ret = syncmem_client_delete(sm, ids.id[i]);
			if (ret && ret != -ENOENT)
				rc = fail("unregister", ret);
			else
				printf("deleted %u\n", ids.id[i]);
		}
	} else {
		fprintf(stderr, "smnlctl: unknown command %s\n", argv[1]);
		rc = 2;
	}
	syncmem_close(sm);
	return rc;
}
