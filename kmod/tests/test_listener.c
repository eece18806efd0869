// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem_test: the device listener (ib_sync_mem_listen()), in two
 * steps around device churn the shell makes:
 *
 *   listener_start   listen: the replay tells of every attached device at
 *	once (the dev parameter's among them); on each add the listener
 *	registers a client on the device, on each remove it unregisters it
 *   `rdma link add/delete` of other devices, any number of times
 *   listener_check   unlisten: every device was added and removed the same
 *	number of times, those attached at the start and at the end once;
 *	no client of the listener saw an ->invalidate (remove comes before
 *	the device's clients are invalidated), each was released once
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include "sync_mem_test.h"

/* Devices told of, by name; more than the suites ever make. */
#define LS_DEVS		16
/* Clients registered on adds, over the whole run. */
#define LS_CLIENTS	256

struct ls_dev {
	char name[IB_DEVICE_NAME_MAX];
	unsigned int adds, removes;
	struct tc *live;	/* its client while added */
};

struct ls_state {
	struct ib_sync_mem_listener l;
	struct ls_dev devs[LS_DEVS];
	struct tc *pool;
	unsigned int used, unknown, errors;
	int listen_null;	/* ib_sync_mem_listen(NULL) */
	bool replayed;		/* the dev device added once, before listen returned */
	bool listening;
};

static struct ls_state *ls;

static struct ls_dev *ls_dev(struct ib_device *ibdev, bool create)
{
	const char *name = dev_name(&ibdev->dev);
	int i;

	for (i = 0; i < LS_DEVS; i++) {
		if (!strcmp(ls->devs[i].name, name))
			return &ls->devs[i];
		if (!ls->devs[i].name[0] && create) {
			strscpy(ls->devs[i].name, name, sizeof(ls->devs[i].name));
			return &ls->devs[i];
		}
	}
	ls->unknown++;
	return NULL;
}

static void ls_add(struct ib_sync_mem_listener *l, struct ib_device *ibdev)
{
	struct ls_dev *d = ls_dev(ibdev, true);
	struct tc *t;

	if (!d)
		return;
	d->adds++;
	if (d->live || ls->used == LS_CLIENTS) {
		ls->errors++;
		return;
	}
	t = &ls->pool[ls->used++];
	if (IS_ERR(tc_register(ibdev, t, 0))) {
		ls->errors++;
		return;
	}
	d->live = t;
}

static void ls_remove(struct ib_sync_mem_listener *l, struct ib_device *ibdev)
{
	struct ls_dev *d = ls_dev(ibdev, false);

	if (!d)
		return;
	d->removes++;
	if (!d->live) {
		ls->errors++;
		return;
	}
	/* The device is whole: its client is live, a sync of it runs. */
	if (ib_sync_mem_sync(d->live->client, IB_SYNC_MEM_TO_DEVICE, 0))
		ls->errors++;
	tc_unregister(d->live);
	d->live = NULL;
}

int listener_start(struct ib_device *ibdev)
{
	struct ls_dev *d;
	int ret;

	if (ls)
		return -EBUSY;
	ls = kzalloc(sizeof(*ls), GFP_KERNEL);
	if (!ls)
		return -ENOMEM;
	ls->pool = tc_alloc(LS_CLIENTS);
	if (!ls->pool) {
		kfree(ls);
		ls = NULL;
		return -ENOMEM;
	}
	ls->l.add = ls_add;
	ls->l.remove = ls_remove;
	/* What start sees is checked by listener_check (its result). */
	ls->listen_null = ib_sync_mem_listen(NULL);
	ret = ib_sync_mem_listen(&ls->l);
	if (ret) {
		tc_free(ls->pool);
		kfree(ls);
		ls = NULL;
		return ret;
	}
	ls->listening = true;
	/* The replay is over when listen returns: the dev device is in it. */
	d = ls_dev(ibdev, false);
	ls->replayed = d && d->adds == 1 && d->live;
	return 0;
}

void test_listener_check(void)
{
	unsigned int added = 0, attached = 0, i;
	struct ls_dev *d;

	if (!ls) {
		kt_diag("listener_check without listener_start");
		kt_fail++;
		return;
	}
	KT_EXPECT_EQ(ls->listen_null, -EINVAL);
	KT_EXPECT(ls->replayed);
	if (ls->listening)
		ib_sync_mem_unlisten(&ls->l);
	for (i = 0; i < LS_DEVS; i++) {
		d = &ls->devs[i];
		if (!d->name[0])
			continue;
		kt_diag("listener: %s added %u, removed %u", d->name, d->adds,
			d->removes);
		KT_EXPECT_EQ(d->adds, d->removes);
		KT_EXPECT(!d->live);
		added += d->adds;
		attached++;
	}
	KT_EXPECT_EQ(ls->unknown, 0);
	KT_EXPECT_EQ(ls->errors, 0);
	/* The churn came and went: more adds than devices. */
	KT_EXPECT(added > attached);
	KT_EXPECT_EQ(ls->used, added);
	for (i = 0; i < ls->used; i++) {
		KT_EXPECT_EQ(atomic_read(&ls->pool[i].invalidates), 0);
		KT_EXPECT_EQ(atomic_read(&ls->pool[i].releases), 1);
		KT_EXPECT_EQ(atomic_read(&ls->pool[i].syncs), 1);
	}
	tc_free(ls->pool);
	kfree(ls);
	ls = NULL;
}

/* Module unload with a listener still there (a case never checked). */
void test_listener_exit(void)
{
	if (!ls)
		return;
	if (ls->listening)
		ib_sync_mem_unlisten(&ls->l);
	tc_free(ls->pool);
	kfree(ls);
	ls = NULL;
}
