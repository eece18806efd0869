// SPDX-License-Identifier: GPL-2.0
/*
 * The core's events, heard by the layer above it: the netlink family
 * registers a listener (sm_listen()) when it comes up and removes it when
 * it goes. The core calls sm_event_*() and never the netlink layer by name.
 *
 * The listener is set before the ib_client registers (no device, hence no
 * client, exists before that) and cleared after it unregistered and every
 * client is gone, so a plain pointer read is enough.
 */
#include "sync_mem.h"

static const struct sm_listener *sm_listener;

/**
 * sm_listen() - set (or, with NULL, clear) the listener of the core's events
 * @l: the listener
 */
void sm_listen(const struct sm_listener *l)
{
	WRITE_ONCE(sm_listener, l);
}

void sm_event_client(struct ib_sync_mem_client *c, enum sm_event ev)
{
	const struct sm_listener *l = READ_ONCE(sm_listener);

	if (l && l->client)
		l->client(c, ev);
}

void sm_event_dev(struct ib_sync_mem_domain *dom, enum sm_event ev)
{
	const struct sm_listener *l = READ_ONCE(sm_listener);

	if (l && l->dev)
		l->dev(dom, ev);
}

void sm_event_sync_failed(struct ib_sync_mem_client *c,
			  enum ib_sync_mem_dir dir, int err)
{
	const struct sm_listener *l = READ_ONCE(sm_listener);

	if (l && l->sync_failed)
		l->sync_failed(c, dir, err);
}

void sm_event_domain_removed(struct ib_sync_mem_domain *dom)
{
	const struct sm_listener *l = READ_ONCE(sm_listener);

	if (l && l->domain_removed)
		l->domain_removed(dom);
}
