// SPDX-License-Identifier: GPL-2.0
/*
 * smnlctl: a tiny CLI for test suites and debugging in the VM, on the C
 * library the kernel's ynl-gen-c.py generates from the family's YNL spec
 * (smynl.h, test/tools/ynl.mk); sync-batch alone on smnl (below).
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
 *   smnlctl sync-owner ID OWNER  one SYNC naming client ID and OWNER, no
 *                            device, sent as it is; prints "run R"
 *
 * Exit status: 0, or 1 with "Error: <errno> (<extack>)" on stderr.
 *
 * sync-batch goes through smnl: the generated request holds one client id
 * in IB_SYNC_MEM_A_SYNC_CLIENTS, not a list (ynl-gen-c.py of 6.12 drops the
 * multi-attr of an attribute in a subset-of set, and the spec cannot mark
 * client-id repeated in the main set without making it a list everywhere).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smnl.h"
#include "smynl.h"

#define DUMP_TRIES	10

static struct ynl_sock *ys;

static int fail_with(const char *what, int err, const char *extack)
{
	fprintf(stderr, "Error: %s: %s%s%s%s\n", what, strerror(-err),
		extack[0] ? " (" : "", extack, extack[0] ? ")" : "");
	return 1;
}

/* A failed call on the library's socket: its errno and extack message. */
static int fail(const char *what, int err)
{
	char extack[SMYNL_EXTACK_LEN] = "";

	if (ys)
		smynl_extack(ys, extack, sizeof(extack));
	return fail_with(what, err, extack);
}

static const char *or_unknown(const char *name)
{
	return name ? name : "?";
}

static void print_client(const struct ib_sync_mem_client_get_rsp *c)
{
	printf("%u %s %s %s %s pinned=%u size=%llu last_err=%d\n", c->client_id,
	       c->client_name ? c->client_name : "", c->dev_name ? c->dev_name : "",
	       or_unknown(ib_sync_mem_kind_str(c->client_kind)),
	       or_unknown(ib_sync_mem_client_state_str(c->client_state)),
	       c->client_pinned_pages, (unsigned long long)c->client_size,
	       c->client_last_err);
}

/*
 * Every client: the dump's list (the caller's, to
 * ib_sync_mem_client_get_list_free()), or NULL with *@err. A dump the list
 * changed under (NLM_F_DUMP_INTR) runs again, DUMP_TRIES times at most;
 * libynl leaves such a dump unread, so each retry takes a fresh socket.
 */
static struct ib_sync_mem_client_get_list *dump_clients(int *err)
{
	struct ib_sync_mem_client_get_req_dump *req;
	struct ib_sync_mem_client_get_list *list = NULL;
	struct ynl_error why;
	int tries;

	req = ib_sync_mem_client_get_req_dump_alloc();
	if (!req) {
		*err = -ENOMEM;
		return NULL;
	}
	for (tries = 0; tries < DUMP_TRIES; tries++) {
		list = ib_sync_mem_client_get_dump(ys, req);
		*err = list ? 0 : smynl_errno(ys);
		if (*err != -EINTR || tries == DUMP_TRIES - 1)
			break;
		smynl_close(ys);
		*err = smynl_open(&ys, &why);
		if (*err)
			break;	/* ys is NULL: fail() has no extack */
	}
	ib_sync_mem_client_get_req_dump_free(req);
	return list;
}

/* One client, by CLIENT_GET: its reply (the caller's), or NULL with *@err. */
static struct ib_sync_mem_client_get_rsp *get_client(__u32 id, int *err)
{
	struct ib_sync_mem_client_get_req *req;
	struct ib_sync_mem_client_get_rsp *rsp;

	req = ib_sync_mem_client_get_req_alloc();
	if (!req) {
		*err = -ENOMEM;
		return NULL;
	}
	ib_sync_mem_client_get_req_set_client_id(req, id);
	rsp = ib_sync_mem_client_get(ys, req);
	*err = rsp ? 0 : smynl_errno(ys);
	ib_sync_mem_client_get_req_free(req);
	if (rsp && (!rsp->_present.client_id || rsp->client_id != id)) {
		ib_sync_mem_client_get_rsp_free(rsp);
		*err = -EPROTO;	/* not the client asked for */
		return NULL;
	}
	return rsp;
}

/* CLIENT_DEL of client @id: 0, or a negative errno. */
static int del_client(__u32 id)
{
	struct ib_sync_mem_client_del_req *req;
	int ret;

	req = ib_sync_mem_client_del_req_alloc();
	if (!req)
		return -ENOMEM;
	ib_sync_mem_client_del_req_set_client_id(req, id);
	ret = ib_sync_mem_client_del(ys, req) ? smynl_errno(ys) : 0;
	ib_sync_mem_client_del_req_free(req);
	return ret;
}

/* sync-batch: the ids of @list ("1,2,2,3") in one batch request, by smnl. */
static int sync_batch(const char *list)
{
	struct smnl_sync_result res;
	unsigned int n = 1, i = 0;
	struct smnl nl;
	const char *p;
	uint32_t *ids;
	char *end;
	int ret;

	for (p = list; *p; p++)
		n += *p == ',';
	ids = calloc(n, sizeof(*ids));
	if (!ids)
		return fail_with("sync-batch", -ENOMEM, "");
	for (p = list; i < n; p = end + 1) {
		errno = 0;
		ids[i++] = strtoul(p, &end, 10);
		if (errno || end == p || (*end != ',' && *end != '\0')) {
			fprintf(stderr, "smnlctl: not a list of ids: %s\n", list);
			free(ids);
			return 2;
		}
	}
	ret = smnl_open(&nl);
	if (ret) {
		free(ids);
		return fail_with("resolve the ib_sync_mem family", ret, nl.extack);
	}
	ret = smnl_sync_batch(&nl, ids, n, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, &res);
	free(ids);
	if (ret) {
		fail_with("sync-batch", ret, nl.extack);
		smnl_close(&nl);
		return 1;
	}
	smnl_close(&nl);
	printf("run %u errors %u skipped %u results %u\n", res.run, res.errors,
	       res.skipped, res.results);
	return 0;
}

/*
 * sync-owner: a SYNC naming client @id and @owner, no device, as it is:
 * the kernel decides what it means.
 */
static int sync_owner(__u32 id, const char *owner)
{
	struct ib_sync_mem_sync_req *req;
	struct ib_sync_mem_sync_rsp *rsp;
	int ret;

	req = ib_sync_mem_sync_req_alloc();
	if (!req)
		return fail("sync-owner", -ENOMEM);
	if (id)
		ib_sync_mem_sync_req_set_client_id(req, id);
	ib_sync_mem_sync_req_set_client_owner(req, owner);
	ib_sync_mem_sync_req_set_sync_dir(req, IB_SYNC_MEM_SYNC_TO_DEVICE);
	rsp = ib_sync_mem_sync(ys, req);
	ret = rsp ? 0 : smynl_errno(ys);
	ib_sync_mem_sync_req_free(req);
	if (!rsp)
		return fail("sync-owner", ret);
	printf("run %u\n", rsp->sync_run);
	ib_sync_mem_sync_rsp_free(rsp);
	return 0;
}

int main(int argc, char **argv)
{
	struct ib_sync_mem_client_get_list *list;
	struct ib_sync_mem_client_get_rsp *c;
	struct ynl_error why;
	int ret, i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: smnlctl list | get ID | del ID... | del-netlink | sync-batch IDS | sync-owner ID OWNER\n");
		return 2;
	}
	ret = smynl_open(&ys, &why);
	if (ret) {
		char extack[SMYNL_EXTACK_LEN];

		return fail_with("resolve the ib_sync_mem family", ret,
				 smynl_error_extack(&why, extack, sizeof(extack)));
	}
	if (!strcmp(argv[1], "list")) {
		list = dump_clients(&ret);
		if (!list) {
			rc = fail("dump", ret);
		} else {
			ynl_dump_foreach(list, it)
				if (it->_present.client_id)
					print_client(it);
			ib_sync_mem_client_get_list_free(list);
		}
	} else if (!strcmp(argv[1], "get") && argc == 3) {
		c = get_client(strtoul(argv[2], NULL, 0), &ret);
		if (!c) {
			rc = fail("get", ret);
		} else {
			print_client(c);
			ib_sync_mem_client_get_rsp_free(c);
		}
	} else if (!strcmp(argv[1], "del")) {
		for (i = 2; i < argc; i++) {
			ret = del_client(strtoul(argv[i], NULL, 0));
			if (ret)
				rc = fail(argv[i], ret);
		}
	} else if (!strcmp(argv[1], "del-netlink")) {
		list = dump_clients(&ret);
		if (!list) {
			rc = fail("dump", ret);
		} else {
			/* every client the dump listed made over netlink */
			ynl_dump_foreach(list, it) {
				if (!it->_present.client_id ||
				    it->client_origin != IB_SYNC_MEM_ORIGIN_NETLINK)
					continue;
				ret = del_client(it->client_id);
				if (ret && ret != -ENOENT)
					rc = fail("unregister", ret);
				else
					printf("deleted %u\n", it->client_id);
			}
			ib_sync_mem_client_get_list_free(list);
		}
	} else if (!strcmp(argv[1], "sync-batch") && argc == 3) {
		rc = sync_batch(argv[2]);
	} else if (!strcmp(argv[1], "sync-owner") && argc == 4) {
		rc = sync_owner(strtoul(argv[2], NULL, 0), argv[3]);
	} else {
		fprintf(stderr, "smnlctl: unknown command %s\n", argv[1]);
		rc = 2;
	}
	smynl_close(ys);
	return rc;
}
