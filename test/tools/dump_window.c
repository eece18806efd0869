// SPDX-License-Identifier: GPL-2.0
/*
 * dump_window: one dump of every client, stopped after its first message
 * until a line comes on stdin, then what it saw of one device's clients
 * and whether the dump calls itself consistent.
 *
 *   dump_window DEV
 *
 * Prints "paused" once the first part of the dump is read (the kernel has
 * made the next part by then: netlink makes a dump's next datagram as the
 * caller reads one), then, at the end:
 *
 *   live L invalidated I consistent yes|no
 *
 * L and I count DEV's clients in each state; consistent is what a reader
 * of the family may rely on (pkg/genl's rule): no message carries
 * NLM_F_DUMP_INTR and every message's generation is the end message's end
 * generation. test/vm/35-review.sh stops a device's removal where the
 * clients change state and asks whether a dump that saw both states calls
 * itself consistent. Exit 0 when the dump ran, 1 when it failed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "smnl_raw.h"

struct window {
	const char *dev;
	unsigned int live, invalidated, msgs;
	int have_end, mismatch, intr;
	uint32_t end_gen, gens[2];	/* the first two generations seen */
	unsigned int ngens;
};

static void window_gen(struct window *w, uint32_t gen)
{
	if (w->ngens == 0 || (w->ngens == 1 && gen != w->gens[0]))
		w->gens[w->ngens++] = gen;
}

static int window_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[IB_SYNC_MEM_A_MAX + 1] = {};
	struct window *w = arg;
	char line[16], dev[64];
	uint32_t state;
	const void *p;
	size_t len;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		w->intr = 1;
	p = smnl_genl_payload(nlh, &len);
	if (!p)
		return 0;
	smnl_parse(p, len, tb, IB_SYNC_MEM_A_MAX);
	if (tb[IB_SYNC_MEM_A_GENERATION])
		window_gen(w, smnl_get_u32(tb[IB_SYNC_MEM_A_GENERATION]));
	if (tb[IB_SYNC_MEM_A_DUMP_END]) {
		w->have_end = 1;
		if (tb[IB_SYNC_MEM_A_END_GENERATION])
			w->end_gen = smnl_get_u32(tb[IB_SYNC_MEM_A_END_GENERATION]);
		else
			w->mismatch = 1;
	} else if (tb[IB_SYNC_MEM_A_CLIENT_ID] && tb[IB_SYNC_MEM_A_DEV_NAME] &&
		   tb[IB_SYNC_MEM_A_CLIENT_STATE]) {
		smnl_get_str(tb[IB_SYNC_MEM_A_DEV_NAME], dev, sizeof(dev));
		state = smnl_get_u32(tb[IB_SYNC_MEM_A_CLIENT_STATE]);
		if (!strcmp(dev, w->dev)) {
			if (state == IB_SYNC_MEM_CLIENT_LIVE)
				w->live++;
			else if (state == IB_SYNC_MEM_CLIENT_INVALIDATED)
				w->invalidated++;
		}
	}
	if (w->msgs++ == 0) {
		printf("paused\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			fprintf(stderr, "dump_window: stdin closed; going on\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct window w = { 0 };
	struct smnl_msg m;
	struct smnl nl;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: dump_window DEV\n");
		return 2;
	}
	w.dev = argv[1];
	ret = smnl_open(&nl);
	if (ret) {
		fprintf(stderr, "dump_window: %s\n", strerror(-ret));
		return 1;
	}
	smnl_msg_init(&nl, &m, IB_SYNC_MEM_CMD_CLIENT_GET, NLM_F_DUMP);
	smnl_put_flag(&m, IB_SYNC_MEM_A_DUMP_END);
	ret = smnl_talk(&nl, &m, window_cb, &w);
	smnl_close(&nl);
	/* smnl_talk says -EINTR for a part with NLM_F_DUMP_INTR. */
	if (ret && ret != -EINTR) {
		fprintf(stderr, "dump_window: %s\n", strerror(-ret));
		return 1;
	}
	if (!w.have_end) {
		fprintf(stderr, "dump_window: no end message\n");
		return 1;
	}
	if (w.ngens > 1 || (w.ngens == 1 && w.gens[0] != w.end_gen))
		w.mismatch = 1;
	fprintf(stderr, "dump_window: %u messages, generations %u%s, end %u, intr %d\n",
		w.msgs, w.gens[0], w.ngens > 1 ? " and others" : "", w.end_gen,
		w.intr);
	printf("live %u invalidated %u consistent %s\n", w.live, w.invalidated,
	       w.intr || w.mismatch ? "no" : "yes");
	return 0;
}
