// SPDX-License-Identifier: LGPL-2.1 OR BSD-3-Clause
/*
 * libsyncmem's data path: /dev/ib_sync_mem's ioctls
 * (linux/ib_sync_mem_dev.h), and the sync_file fences they return.
 *
 * IB_SYNC_MEM_IOC_CREATE takes the attributes of the family's CLIENT_NEW
 * laid out as in its message. They are built here with what the YNL
 * generator made of the spec: its request object
 * (struct ib_sync_mem_client_new_req and its setters) and its nest encoder
 * (ib_sync_mem_region_put(), ..._dmabuf_put(), which set NLA_F_NESTED as
 * the family's strict policy wants). The generator emits the top level of
 * a request only inside the call that sends it over netlink
 * (ib_sync_mem_client_new()), so that level is put here, attribute for
 * attribute as that call puts it, with libynl's helpers, into a buffer of
 * IB_SYNC_MEM_IOC_ATTRS_MAX bytes instead of a socket's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>	/* before ynl.h, which uses it without including it */
#include <sys/ioctl.h>
#include <linux/sync_file.h>

#include "ynl.h"
#include "ib_sync_mem-user.h"
#include <linux/ib_sync_mem.h>
#include <linux/ib_sync_mem_dev.h>

#include "priv.h"

/*
 * The generated nest encoders: external functions of ib_sync_mem-user.c
 * (ynl-gen-c.py of 6.12 declares a nest's put only when a request of the
 * header's own calls needs it from outside; here the CREATE ioctl does).
 */
int ib_sync_mem_sim_put(struct nlmsghdr *nlh, unsigned int attr_type,
			struct ib_sync_mem_sim *obj);
int ib_sync_mem_region_put(struct nlmsghdr *nlh, unsigned int attr_type,
			   struct ib_sync_mem_region *obj);
int ib_sync_mem_dmabuf_put(struct nlmsghdr *nlh, unsigned int attr_type,
			   struct ib_sync_mem_dmabuf *obj);

/* syncmem.h's constants are the UAPI's. */
_Static_assert((int)SYNCMEM_TO_DEVICE == (int)IB_SYNC_MEM_SYNC_TO_DEVICE, "dir");
_Static_assert((int)SYNCMEM_TO_CPU == (int)IB_SYNC_MEM_SYNC_TO_CPU, "dir");
_Static_assert((int)SYNCMEM_BIDIRECTIONAL == (int)IB_SYNC_MEM_SYNC_BIDIRECTIONAL, "dir");
_Static_assert((int)SYNCMEM_INBOUND == (int)IB_SYNC_MEM_SYNC_INBOUND, "dir");
_Static_assert(SYNCMEM_REGION_WRITE == IB_SYNC_MEM_REGION_F_WRITE, "access");
_Static_assert(SYNCMEM_CLIENT_LAZY == IB_SYNC_MEM_CLIENT_F_LAZY, "flags");
_Static_assert(SYNCMEM_CLIENT_OWNED == IB_SYNC_MEM_CLIENT_F_OWNED, "flags");
_Static_assert(SYNCMEM_CLIENT_FILE == IB_SYNC_MEM_CLIENT_F_FILE, "flags");
_Static_assert(SYNCMEM_KIND_KERNEL == IB_SYNC_MEM_KIND_KERNEL, "kind");
_Static_assert(SYNCMEM_KIND_SIM == IB_SYNC_MEM_KIND_SIM, "kind");
_Static_assert(SYNCMEM_KIND_REGION == IB_SYNC_MEM_KIND_REGION, "kind");
_Static_assert(SYNCMEM_KIND_DMABUF == IB_SYNC_MEM_KIND_DMABUF, "kind");
_Static_assert(SYNCMEM_STATE_LIVE == IB_SYNC_MEM_CLIENT_LIVE, "state");
_Static_assert(SYNCMEM_STATE_INVALIDATED == IB_SYNC_MEM_CLIENT_INVALIDATED, "state");
_Static_assert(SYNCMEM_ORIGIN_KERNEL == IB_SYNC_MEM_ORIGIN_KERNEL, "origin");
_Static_assert(SYNCMEM_ORIGIN_NETLINK == IB_SYNC_MEM_ORIGIN_NETLINK, "origin");
_Static_assert(SYNCMEM_ORIGIN_DEVICE == IB_SYNC_MEM_ORIGIN_DEVICE, "origin");
_Static_assert(SYNCMEM_BATCH_MAX == IB_SYNC_MEM_SYNC_BATCH_MAX, "batch");
_Static_assert(SYNCMEM_TIMEOUT_MAX_MS == IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS, "timeout");
_Static_assert(SYNCMEM_NAME_LEN == IB_SYNC_MEM_NAME_LEN, "name");
/* A batch's entries go to the kernel as they are. */
_Static_assert(sizeof(struct syncmem_entry) == sizeof(struct ib_sync_mem_ioc_entry), "entry");
_Static_assert(offsetof(struct syncmem_entry, err) == offsetof(struct ib_sync_mem_ioc_entry, err), "entry");
_Static_assert(offsetof(struct syncmem_entry, offset) == offsetof(struct ib_sync_mem_ioc_entry, offset), "entry");
_Static_assert(offsetof(struct syncmem_entry, len) == offsetof(struct ib_sync_mem_ioc_entry, len), "entry");

/* An ioctl on the handle's device: 0 or a negative errno. */
static int sm_ioctl(struct syncmem *sm, unsigned long req, void *arg)
{
	sm_begin(sm);
	return ioctl(sm->fd, req, arg) ? -errno : 0;
}

/* ---- clients of the file ---- */

/*
 * IB_SYNC_MEM_IOC_CREATE of request @r (the generator's object): its
 * attributes encoded, the client created; its id in *@id.
 */
static int sm_create(struct syncmem *sm, struct ib_sync_mem_client_new_req *r,
		     uint32_t *id)
{
	union {
		struct nlmsghdr nlh;
		char buf[NLMSG_HDRLEN + IB_SYNC_MEM_IOC_ATTRS_MAX];
	} m;
	struct ib_sync_mem_ioc_create c;
	struct nlmsghdr *nlh;
	int ret;

	nlh = ynl_nlmsg_put_header(m.buf);
	nlh->nlmsg_pid = sizeof(m.buf);	/* libynl's bound on what is put */
	/* As ib_sync_mem_client_new() puts them (generated code). */
	if (r->_present.dev_index)
		ynl_attr_put_u32(nlh, IB_SYNC_MEM_A_DEV_INDEX, r->dev_index);
	if (r->_present.dev_name_len)
		ynl_attr_put_str(nlh, IB_SYNC_MEM_A_DEV_NAME, r->dev_name);
	if (r->_present.client_name_len)
		ynl_attr_put_str(nlh, IB_SYNC_MEM_A_CLIENT_NAME, r->client_name);
	if (r->_present.client_kind)
		ynl_attr_put_u32(nlh, IB_SYNC_MEM_A_CLIENT_KIND, r->client_kind);
	if (r->_present.client_flags)
		ynl_attr_put_u32(nlh, IB_SYNC_MEM_A_CLIENT_FLAGS, r->client_flags);
	if (r->_present.sim)
		ib_sync_mem_sim_put(nlh, IB_SYNC_MEM_A_SIM, &r->sim);
	if (r->_present.region)
		ib_sync_mem_region_put(nlh, IB_SYNC_MEM_A_REGION, &r->region);
	if (r->_present.dmabuf)
		ib_sync_mem_dmabuf_put(nlh, IB_SYNC_MEM_A_DMABUF, &r->dmabuf);
	if (nlh->nlmsg_pid == YNL_MSG_OVERFLOW)
		return -ENAMETOOLONG;	/* only strings can be long */

	memset(&c, 0, sizeof(c));
	c.attrs = (uintptr_t)ynl_nlmsg_data(nlh);
	c.attrs_len = ynl_nlmsg_data_len(nlh);
	c.msg = (uintptr_t)sm->msg;
	c.msg_len = sizeof(sm->msg);
	ret = sm_ioctl(sm, IB_SYNC_MEM_IOC_CREATE, &c);
	if (!ret)
		*id = c.id;
	return ret;
}

/* A CLIENT_NEW request on @dev named @name of @kind with @flags. */
static struct ib_sync_mem_client_new_req *
sm_new_req(const char *dev, const char *name, enum ib_sync_mem_kind kind,
	   uint32_t flags)
{
	struct ib_sync_mem_client_new_req *r = ib_sync_mem_client_new_req_alloc();

	if (!r)
		return NULL;
	ib_sync_mem_client_new_req_set_dev_name(r, dev);
	ib_sync_mem_client_new_req_set_client_name(r, name);
	ib_sync_mem_client_new_req_set_client_kind(r, kind);
	if (flags)
		ib_sync_mem_client_new_req_set_client_flags(r, flags);
	return r;
}

SM_API int syncmem_region_create(struct syncmem *sm, const char *dev,
				 const char *name, void *addr, size_t len,
				 uint32_t access, uint32_t flags, uint32_t *id)
{
	struct ib_sync_mem_client_new_req *r;
	int ret;

	sm_begin(sm);
	if (!dev || !name || !id)
		return -EINVAL;
	r = sm_new_req(dev, name, IB_SYNC_MEM_KIND_REGION, flags);
	if (!r)
		return -ENOMEM;
	ib_sync_mem_client_new_req_set_region_addr(r, (uintptr_t)addr);
	ib_sync_mem_client_new_req_set_region_len(r, len);
	ib_sync_mem_client_new_req_set_region_access(r, access);
	ret = sm_create(sm, r, id);
	ib_sync_mem_client_new_req_free(r);
	return ret;
}

SM_API int syncmem_dmabuf_create(struct syncmem *sm, const char *dev,
				 const char *name, int dmabuf_fd,
				 uint32_t flags, uint32_t *id)
{
	struct ib_sync_mem_client_new_req *r;
	int ret;

	sm_begin(sm);
	if (!dev || !name || !id)
		return -EINVAL;
	r = sm_new_req(dev, name, IB_SYNC_MEM_KIND_DMABUF, flags);
	if (!r)
		return -ENOMEM;
	ib_sync_mem_client_new_req_set_dmabuf_fd(r, dmabuf_fd);
	ret = sm_create(sm, r, id);
	ib_sync_mem_client_new_req_free(r);
	return ret;
}

SM_API int syncmem_client_own(struct syncmem *sm, uint32_t id)
{
	struct ib_sync_mem_ioc_own o = { .id = id };

	return sm_ioctl(sm, IB_SYNC_MEM_IOC_OWN, &o);
}

/* IB_SYNC_MEM_IOC_DELETE of a client @sm's file owns (syncmem_client_delete()). */
int sm_dev_delete(struct syncmem *sm, uint32_t id)
{
	struct ib_sync_mem_ioc_delete d = { .id = id };

	return sm_ioctl(sm, IB_SYNC_MEM_IOC_DELETE, &d);
}

/* ---- syncs ---- */

/* IB_SYNC_MEM_IOC_SYNC; with @fence, asynchronous: the fence or -errno. */
static int sm_sync(struct syncmem *sm, uint32_t id, enum syncmem_dir dir,
		   uint64_t offset, uint64_t len, uint32_t timeout_ms,
		   int async, int in_fence)
{
	struct ib_sync_mem_ioc_sync s = {
		.id = id,
		.dir = dir,
		.offset = offset,
		.len = len,
		.timeout_ms = timeout_ms,
		.in_fence = -1,
		.out_fence = -1,
	};
	int ret;

	if (async)
		s.flags |= IB_SYNC_MEM_IOC_F_ASYNC;
	sm_in_fence(in_fence, &s.flags, &s.in_fence);
	ret = sm_ioctl(sm, IB_SYNC_MEM_IOC_SYNC, &s);
	return ret ? ret : async ? s.out_fence : 0;
}

SM_API int syncmem_sync(struct syncmem *sm, uint32_t id, enum syncmem_dir dir,
			uint64_t offset, uint64_t len, uint32_t timeout_ms)
{
	return sm_sync(sm, id, dir, offset, len, timeout_ms, 0, -1);
}

SM_API int syncmem_sync_async(struct syncmem *sm, uint32_t id,
			      enum syncmem_dir dir, uint64_t offset,
			      uint64_t len, uint32_t timeout_ms, int in_fence)
{
	return sm_sync(sm, id, dir, offset, len, timeout_ms, 1, in_fence);
}

SM_API int syncmem_flush_inbound(struct syncmem *sm, uint32_t id,
				 uint32_t timeout_ms)
{
	return sm_sync(sm, id, SYNCMEM_INBOUND, 0, 0, timeout_ms, 0, -1);
}

SM_API int syncmem_flush_inbound_async(struct syncmem *sm, uint32_t id,
				       uint32_t timeout_ms)
{
	return sm_sync(sm, id, SYNCMEM_INBOUND, 0, 0, timeout_ms, 1, -1);
}

SM_API int syncmem_mark_dirty(struct syncmem *sm, uint32_t id,
			      enum syncmem_dir dir, uint64_t offset,
			      uint64_t len)
{
	struct ib_sync_mem_ioc_mark m = {
		.id = id,
		.dir = dir,
		.offset = offset,
		.len = len,
	};

	return sm_ioctl(sm, IB_SYNC_MEM_IOC_MARK_DIRTY, &m);
}

SM_API int syncmem_sync_batch(struct syncmem *sm, struct syncmem_entry *entries,
			      unsigned int n, enum syncmem_dir dir,
			      uint32_t timeout_ms, unsigned int *run,
			      unsigned int *errors)
{
	struct ib_sync_mem_ioc_sync_batch b = {
		.entries = (uintptr_t)entries,
		.n = n,
		.dir = dir,
		.timeout_ms = timeout_ms,
		.in_fence = -1,
		.out_fence = -1,
	};
	int ret = sm_ioctl(sm, IB_SYNC_MEM_IOC_SYNC_BATCH, &b);

	if (ret)
		return ret;
	if (run)
		*run = b.run;
	if (errors)
		*errors = b.errors;
	return 0;
}

SM_API int syncmem_sync_batch_async(struct syncmem *sm,
				    const struct syncmem_entry *entries,
				    unsigned int n, enum syncmem_dir dir,
				    uint32_t timeout_ms, int in_fence)
{
	struct ib_sync_mem_ioc_sync_batch b = {
		.entries = (uintptr_t)entries,
		.n = n,
		.dir = dir,
		.flags = IB_SYNC_MEM_IOC_F_ASYNC,
		.timeout_ms = timeout_ms,
		.in_fence = -1,
		.out_fence = -1,
	};
	int ret;

	sm_in_fence(in_fence, &b.flags, &b.in_fence);
	ret = sm_ioctl(sm, IB_SYNC_MEM_IOC_SYNC_BATCH, &b);
	return ret ? ret : b.out_fence;
}

SM_API int syncmem_sync_dev(struct syncmem *sm, uint32_t dev_index,
			    enum syncmem_dir dir, uint32_t timeout_ms,
			    struct syncmem_dev_result *res)
{
	struct ib_sync_mem_ioc_sync_dev d = {
		.dev_index = dev_index,
		.dir = dir,
		.timeout_ms = timeout_ms,
		.in_fence = -1,
		.out_fence = -1,
	};
	int ret = sm_ioctl(sm, IB_SYNC_MEM_IOC_SYNC_DEV, &d);

	if (!ret && res) {
		res->clients = d.clients;
		res->errors = d.errors;
		res->skipped = d.skipped;
		res->err = d.err;
		res->pass = d.pass;
	}
	return ret;
}

/* ---- fences ---- */

SM_API int syncmem_fence_status(int fence)
{
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fence, SYNC_IOC_FILE_INFO, &info))
		return errno == ENOTTY ? -EINVAL : -errno;
	return info.status;
}

SM_API int syncmem_fence_wait(int fence, int timeout_ms)
{
	struct pollfd p = { .fd = fence, .events = POLLIN };
	int n, status;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (p.revents & POLLNVAL)
		return -EBADF;
	status = syncmem_fence_status(fence);
	if (status < 0)
		return status;
	if (n == 0 || status == 0)
		return -ETIME;
	return 0;
}
