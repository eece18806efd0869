// SPDX-License-Identifier: GPL-2.0
/*
 * vgem_sync: KTAP tests of dma-buf clients (IB_SYNC_MEM_KIND_DMABUF) with
 * vgem as the exporter: a sync waits for the buffer's implicit fences,
 * bounded by the timeout (writers before the CPU reads, every fence before
 * the device writes), the client holds a reference on the buffer until it
 * is unregistered, a dma-buf fd inherited by syncmemctl registers, and (on
 * kernels that have it) a udmabuf registers and syncs. The bounded-wait
 * cases: a fence added after the sync's fence wait (debugfs dmabuf_hold
 * holds it in that window) does not hold the sync past its deadline, a
 * stray signal never ends a sync with -ERESTARTSYS, and (--remove DEV2) a
 * device removal completes while a fence holds a bracket of one of its
 * clients. On a virtual-DMA device (rxe, siw: no DMA device) a client
 * attaches nothing to the buffer; only that path runs on these machines.
 *
 *   vgem_sync [--dev rxe0] [--remove rxe1]
 *
 * Needs ib_sync_mem and vgem loaded, debugfs mounted, root. syncmemctl is
 * taken from $SYNCMEMCTL, else from $PATH.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libdrm/drm.h>
#include <libdrm/drm_mode.h>
#include <linux/ib_sync_mem_dev.h>
#include <linux/udmabuf.h>

#include "ktap.h"
#include "rdmalink.h"
#include "smdebugfs.h"
#include "smnl.h"
#include "syncfile.h"

/*
 * vgem's two ioctls, from the kernel's include/uapi/drm/vgem_drm.h (not
 * shipped by libdrm-dev).
 */
#define DRM_VGEM_FENCE_ATTACH	0x1
#define DRM_VGEM_FENCE_SIGNAL	0x2
struct drm_vgem_fence_attach {
	__u32 handle;
	__u32 flags;
#define VGEM_FENCE_WRITE	0x1
	__u32 out_fence;
	__u32 pad;
};
struct drm_vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};
#define DRM_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_FENCE_ATTACH, struct drm_vgem_fence_attach)
#define DRM_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGEM_FENCE_SIGNAL, struct drm_vgem_fence_signal)

#define BUF_SIZE	(64 * 1024)
#define BUFINFO		"/sys/kernel/debug/dma_buf/bufinfo"
/*
 * A sync that must not wait for a fence gets the shortest bound there is,
 * 1 ms: it succeeds only if no unsignalled fence it waits for is there,
 * however slowly the guest runs (its time is never asserted).
 */
#define NO_WAIT_MS	1

static const char *dev = "rxe0";
static const char *dev_remove;	/* a device the tests may delete */
static struct smnl nl;
static int drm = -1;

/* ---- vgem ---- */

static int open_vgem(char *path, size_t size)
{
	int i;

	for (i = 0; i < 64; i++) {
		char name[32] = "";
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };
		int fd;

		snprintf(path, size, "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

struct vbuf {
	uint32_t handle;
	int fd;			/* the dma-buf */
	uint64_t ino;
};

static int vbuf_create(struct vbuf *b)
{
	struct drm_mode_create_dumb c = {
		.width = 1024, .height = BUF_SIZE / 4096, .bpp = 32,
	};
	struct drm_prime_handle p = { 0 };
	struct stat st;

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	if (ioctl(drm, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	b->handle = c.handle;
	p.handle = c.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	if (ioctl(drm, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		return -errno;
	b->fd = p.fd;
	if (fstat(b->fd, &st))
		return -errno;
	b->ino = st.st_ino;
	return 0;
}

static void vbuf_close_handle(struct vbuf *b)
{
	struct drm_gem_close gc = { .handle = b->handle };

	if (b->handle)
		ioctl(drm, DRM_IOCTL_GEM_CLOSE, &gc);
	b->handle = 0;
}

static void vbuf_close_fd(struct vbuf *b)
{
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}

/* Attach an unsignalled fence: its id, or -errno. */
static int fence_attach(struct vbuf *b, int write)
{
	struct drm_vgem_fence_attach a = {
		.handle = b->handle,
		.flags = write ? VGEM_FENCE_WRITE : 0,
	};

	if (ioctl(drm, DRM_IOCTL_VGEM_FENCE_ATTACH, &a))
		return -errno;
	return a.out_fence;
}

/* 0; -ETIMEDOUT if it had signalled by itself (vgem's 10 s) already. */
static int fence_signal(int fence)
{
	struct drm_vgem_fence_signal s = { .fence = fence };

	if (ioctl(drm, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s))
		return -errno;
	return 0;
}

/* ---- /sys/kernel/debug/dma_buf/bufinfo ---- */

struct bufinfo {
	int found;
	long count;		/* file references */
	int attached;		/* devices attached */
	char exporter[64];
};

/* Look the buffer with inode @ino up: 0 (see bi->found) or -errno. */
static int bufinfo_get(uint64_t ino, struct bufinfo *bi)
{
	char line[512];
	FILE *f = fopen(BUFINFO, "r");
	int in_ours = 0;

	memset(bi, 0, sizeof(*bi));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long size, flags, mode, lino;
		long count;
		char exp[64];

		if (sscanf(line, "%lu %lx %lx %ld %63s %lu", &size, &flags,
			   &mode, &count, exp, &lino) == 6) {
			in_ours = lino == ino;
			if (in_ours) {
				bi->found = 1;
				bi->count = count;
				snprintf(bi->exporter, sizeof(bi->exporter), "%s", exp);
			}
			continue;
		}
		if (in_ours && sscanf(line, "Total %d devices attached",
				      &bi->attached) == 1)
			in_ours = 0;
	}
	fclose(f);
	return 0;
}

/* ---- syncs ---- */

struct timed_sync {
	uint32_t id, dir, timeout_ms;
	int ret, err;
	uint64_t ns;
	double ms;		/* wall time seen from here */
	double t_end;		/* now_ms() when it returned */
	atomic_int started, done;
};

static void timed_sync(struct smnl *s, struct timed_sync *t)
{
	double t0 = now_ms();

	t->ret = smnl_sync_client(s, t->id, t->dir, t->timeout_ms, &t->err, &t->ns);
	t->ms = now_ms() - t0;
}

static void sync_now(struct timed_sync *t, uint32_t id, uint32_t dir,
		     uint32_t timeout_ms)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->dir = dir;
	t->timeout_ms = timeout_ms;
	timed_sync(&nl, t);
	ktap_diag("sync %s timeout %u ms: ret %s, client err %s, %.1f ms wall, %llu ns in the callback%s%s",
		  dir == IB_SYNC_MEM_SYNC_TO_CPU ? "to-cpu" :
		  dir == IB_SYNC_MEM_SYNC_TO_DEVICE ? "to-device" : "bidirectional",
		  timeout_ms, errstr(t->ret), errstr(t->err), t->ms,
		  (unsigned long long)t->ns, nl.extack[0] ? ", extack: " : "",
		  nl.extack);
}

/* The sync (given NO_WAIT_MS) returned 0 for the client: it did not wait. */
static int sync_unwaited(struct timed_sync *t)
{
	return t->ret == 0 && t->err == 0 && t->timeout_ms == NO_WAIT_MS;
}

static int sync_timed_out(struct timed_sync *t)
{
	return t->ret == 0 && t->err == -ETIMEDOUT;
}

static void *sync_thread(void *arg)
{
	struct timed_sync *t = arg;
	struct smnl s;

	t->ret = smnl_open(&s);
	atomic_store(&t->started, 1);
	if (!t->ret) {
		timed_sync(&s, t);
		smnl_close(&s);
	}
	t->t_end = now_ms();
	atomic_store(&t->done, 1);
	return NULL;
}

/* Start @t (already filled in) in a thread: 0, or -errno. */
static int sync_start(pthread_t *th, struct timed_sync *t)
{
	double t0 = now_ms();
	int ret = -pthread_create(th, NULL, sync_thread, t);

	while (!ret && !atomic_load(&t->started) && now_ms() - t0 < bound_ms(30000))
		usleep(1000);
	return ret;
}

/* ---- the tests ---- */

static void test_fences(struct vbuf *b, uint32_t id)
{
	struct timed_sync t, bg;
	struct smnl_client c;
	pthread_t th;
	int f, f2, ret, waiting;
	double t0;

	/* (a) no fences */
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_CPU, NO_WAIT_MS);
	ktap_result(sync_unwaited(&t), "no fences: sync to-cpu returns 0 without waiting (%llu ns in the kernel)",
		    (unsigned long long)t.ns);
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_DEVICE, NO_WAIT_MS);
	ktap_result(sync_unwaited(&t), "no fences: sync to-device returns 0 without waiting");
	sync_now(&t, id, IB_SYNC_MEM_SYNC_BIDIRECTIONAL, NO_WAIT_MS);
	ktap_result(sync_unwaited(&t), "no fences: sync bidirectional returns 0 without waiting");

	/* (b) an unsignalled write fence bounds the wait by the timeout */
	f = fence_attach(b, 1);
	if (!ktap_result(f > 0, "attach a vgem write fence")) {
		ktap_diag("fence attach: %s", errstr(f));
		return;
	}
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_CPU, 100);
	ktap_result(sync_timed_out(&t) && t.ms >= 90.0,
		    "write fence: sync to-cpu with a 100 ms timeout -> client err -ETIMEDOUT after about 100 ms (%.0f ms, >= 90)",
		    t.ms);
	ret = smnl_client_get(&nl, id, &c);
	ktap_result(ret == 0 && c.last_err == -ETIMEDOUT && c.state == IB_SYNC_MEM_CLIENT_LIVE,
		    "LAST_ERR records -ETIMEDOUT, the client stays live");

	/* (c) a sync waits for the fence and returns when it signals */
	memset(&bg, 0, sizeof(bg));
	bg.id = id;
	bg.dir = IB_SYNC_MEM_SYNC_TO_CPU;
	bg.timeout_ms = 5000;
	t0 = now_ms();
	if (sync_start(&th, &bg)) {
		ktap_result(0, "start a waiting sync in a thread");
		fence_signal(f);
		return;
	}
	usleep(300 * 1000);
	waiting = !atomic_load(&bg.done);
	ktap_result(waiting, "write fence: a sync to-cpu (timeout 5 s) is still waiting after 300 ms");
	ret = fence_signal(f);
	ktap_result(ret == 0, "signal the fence (before vgem's own 10 s timeout)");
	pthread_join(th, NULL);
	ktap_diag("waiting sync: ret %s, client err %s, %.1f ms in the netlink call, %.1f ms since the thread started, %llu ns in the callback",
		  errstr(bg.ret), errstr(bg.err), bg.ms, bg.t_end - t0,
		  (unsigned long long)bg.ns);
	ktap_result(bg.ret == 0 && bg.err == 0 && bg.t_end - t0 >= 300.0,
		    "the waiting sync returns 0 once the fence signals (%.0f ms wall, >= 300)",
		    bg.t_end - t0);

	/* (d) signalled: no wait */
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_CPU, NO_WAIT_MS);
	ktap_result(sync_unwaited(&t), "after the signal: sync to-cpu returns 0 without waiting");

	/* (e) a read fence: the CPU may read, the device must wait */
	f2 = fence_attach(b, 0);
	if (!ktap_result(f2 > 0, "attach a vgem read fence")) {
		ktap_diag("fence attach: %s", errstr(f2));
		return;
	}
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_CPU, NO_WAIT_MS);
	ktap_result(sync_unwaited(&t), "read fence: sync to-cpu does not wait for readers");
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 100);
	ktap_result(sync_timed_out(&t), "read fence: sync to-device waits for it -> -ETIMEDOUT");
	sync_now(&t, id, IB_SYNC_MEM_SYNC_BIDIRECTIONAL, 100);
	ktap_result(sync_timed_out(&t), "read fence: sync bidirectional waits for it -> -ETIMEDOUT");
	ktap_result(fence_signal(f2) == 0, "signal the read fence");
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_DEVICE, NO_WAIT_MS);
	ktap_result(sync_unwaited(&t), "after the signal: sync to-device returns 0 without waiting");

	/* and a write fence holds the device back too */
	f = fence_attach(b, 1);
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 100);
	ktap_result(f > 0 && sync_timed_out(&t), "write fence: sync to-device -> -ETIMEDOUT");
	if (f > 0)
		fence_signal(f);
	sync_now(&t, id, IB_SYNC_MEM_SYNC_BIDIRECTIONAL, NO_WAIT_MS);
	ktap_result(sync_unwaited(&t), "all signalled: sync bidirectional returns 0");
}

/*
 * A virtual-DMA RDMA device (rxe, siw) has no DMA device, hence no parent
 * device in sysfs: the module attaches nothing to its dma-bufs.
 */
static int virt_dma(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", name);
	return access(path, F_OK) != 0;
}

static void on_sigusr1(int sig)
{
	(void)sig;
}

/*
 * The deadline of the syncs a test fence holds: shorter than vgem's own
 * 10 s after which its fences signal by themselves, so that a sync that
 * waited for the fence is told apart by the fence having signalled.
 */
#define FENCED_MS	2000

/*
 * Start @t in a thread and hold it (debugfs dmabuf_hold) after its fence
 * wait found no fence; add a write fence to @b in that window (vgem's, or
 * with @timerless one of ib_sync_mem_test's, which never signals by
 * itself), then let the sync go on into its CPU bracket. The vgem fence's
 * handle, or 1 for a timerless one; the thread left running in *@th; or
 * -errno with the hold released and no thread left.
 */
static int sync_fenced_after_wait(struct vbuf *b, struct timed_sync *t,
				  pthread_t *th, bool timerless)
{
	int f, ret = sm_dmabuf_hold(1);

	if (ret)
		return ret;
	ret = sync_start(th, t);
	if (ret) {
		sm_dmabuf_hold(0);
		return ret;
	}
	ret = sm_dmabuf_wait_held(1, bound_ms(30000));
	if (ret)
		f = ret;
	else if (timerless)
		f = kt_fence_add(b->fd) ?: 1;
	else
		f = fence_attach(b, 1);
	sm_dmabuf_hold(0);
	if (f <= 0)
		pthread_join(*th, NULL);
	return f ? f : -EIO;
}

/*
 * A fence added in the window after the sync's fence wait saw none (the
 * debugfs hold keeps the sync there): dma_buf_begin_cpu_access() waits
 * for it without a limit, the sync must not. It returns -ETIMEDOUT while
 * the fence is still unsignalled, and the client syncs again once it
 * signals.
 */
static void test_bracket_bounded(struct vbuf *b, uint32_t id)
{
	struct timed_sync t;
	pthread_t th;
	int f, unsignalled;

	/* Close the CPU bracket: an open one would not wait for the fence. */
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_DEVICE, bound_ms(10000));
	memset(&t, 0, sizeof(t));
	t.id = id;
	t.dir = IB_SYNC_MEM_SYNC_TO_CPU;
	t.timeout_ms = FENCED_MS;
	f = sync_fenced_after_wait(b, &t, &th, false);
	if (!ktap_result(f > 0, "bracket: a write fence added while the sync is held after its fence wait found none")) {
		ktap_diag("holding the sync or adding the fence: %s", errstr(f));
		return;
	}
	pthread_join(th, NULL);
	unsignalled = fence_signal(f) == 0;
	ktap_diag("held sync: ret %s, client err %s, %.0f ms wall (timeout %u ms); fence %s when it returned",
		  errstr(t.ret), errstr(t.err), t.ms, t.timeout_ms,
		  unsignalled ? "still unsignalled" : "signalled already (vgem's 10 s)");
	ktap_result(sync_timed_out(&t) && unsignalled,
		    "bracket: the sync returns -ETIMEDOUT by its deadline, the fence still unsignalled");
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_CPU, bound_ms(30000));
	ktap_result(t.ret == 0 && t.err == 0,
		    "bracket: once the fence signals, the bracket left behind finishes and the client syncs: 0");
	sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_DEVICE, bound_ms(30000));
}

/*
 * A stray signal (a handler, no SA_RESTART) into a sync waiting for a
 * fence: the wait is not interruptible, the sync ends by its deadline with
 * -ETIMEDOUT, never -ERESTARTSYS (-512) or -EINTR.
 */
static void test_stray_signal(struct vbuf *b, uint32_t id)
{
	struct timed_sync t = { .id = id, .dir = IB_SYNC_MEM_SYNC_TO_CPU, .timeout_ms = FENCED_MS };
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	pthread_t th;
	int f, sent = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	f = fence_attach(b, 1);
	if (!ktap_result(f > 0, "signal: attach a vgem write fence")) {
		ktap_diag("fence attach: %s", errstr(f));
		return;
	}
	if (sync_start(&th, &t)) {
		ktap_result(0, "signal: start a sync to-cpu in a thread");
		fence_signal(f);
		return;
	}
	while (!atomic_load(&t.done)) {
		if (!pthread_kill(th, SIGUSR1))
			sent++;
		usleep(20000);
	}
	pthread_join(th, NULL);
	ktap_diag("signalled sync: %d SIGUSR1 sent, ret %s, client err %s (%d)",
		  sent, errstr(t.ret), errstr(t.err), t.err);
	ktap_result(sent > 0 && sync_timed_out(&t),
		    "signal: SIGUSR1 into a sync waiting for a fence: -ETIMEDOUT by its deadline, not -ERESTARTSYS (%d signals)",
		    sent);
	fence_signal(f);
	signal(SIGUSR1, SIG_DFL);
}

/*
 * A device removed while a fence holds the CPU bracket of one of its
 * clients: the removal completes while the fence is still unsignalled,
 * and the client goes with its device. The fence is ib_sync_mem_test's:
 * vgem's signals itself after 10 s, and a removal that slow (the debug
 * kernel on a loaded host) looked like one that waited for the fence.
 */
static void test_removal(const char *name)
{
	struct timed_sync t = { .dir = IB_SYNC_MEM_SYNC_TO_CPU, .timeout_ms = FENCED_MS };
	pthread_t th;
	struct vbuf b;
	int f, id, ret, unsignalled;

	ret = vbuf_create(&b);
	id = ret ? ret : smnl_register_dmabuf(&nl, name, "vs-removal", b.fd);
	if (!ktap_result(id > 0, "removal: register a dma-buf client on %s", name)) {
		ktap_diag("%s \"%s\"", errstr(id), nl.extack);
		goto out;
	}
	t.id = id;
	f = sync_fenced_after_wait(&b, &t, &th, true);
	if (!ktap_result(f > 0, "removal: the sync is held, a fence with no timer added")) {
		ktap_diag("holding the sync or adding the fence: %s", errstr(f));
		goto out;
	}
	ret = rdma_link_delete(name);
	unsignalled = kt_fence_unsignalled() == 1;
	kt_fence_signal();
	ktap_result(ret == 0 && unsignalled,
		    "removal: rdma link delete %s completes while the fence is still unsignalled", name);
	pthread_join(th, NULL);
	ktap_diag("sync during the removal: ret %s, client err %s, %.0f ms wall",
		  errstr(t.ret), errstr(t.err), t.ms);
	ret = smnl_wait_gone(&nl, id, bound_ms(30000));
	ktap_result(ret == 0, "removal: the client went with its device");
out:
	vbuf_close_fd(&b);
	vbuf_close_handle(&b);
}

/*
 * Request @req with @arg on a file of the device opened for it: the fence
 * the request put in *@out_fence (its fd), or -errno.
 */
static int dev_fence(unsigned long req, void *arg, const int32_t *out_fence)
{
	int fd = open("/dev/" IB_SYNC_MEM_DEV_NAME, O_RDWR | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, req, arg) ? -errno : *out_fence;
	close(fd);
	return ret;
}

/*
 * IB_SYNC_MEM_IOC_SYNC of @id with F_ASYNC, after sync_file @in_fd if it is
 * not -1 (F_IN_FENCE): the fence's fd, or -errno.
 */
static int sync_async_after(uint32_t id, uint32_t dir, uint32_t timeout_ms, int in_fd)
{
	struct ib_sync_mem_ioc_sync r = {
		.id = id, .dir = dir, .timeout_ms = timeout_ms, .in_fence = in_fd,
		.flags = IB_SYNC_MEM_IOC_F_ASYNC |
			 (in_fd >= 0 ? IB_SYNC_MEM_IOC_F_IN_FENCE : 0),
	};

	return dev_fence(IB_SYNC_MEM_IOC_SYNC, &r, &r.out_fence);
}

/* The same with no in-fence. */
static int sync_async(uint32_t id, uint32_t dir, uint32_t timeout_ms)
{
	return sync_async_after(id, dir, timeout_ms, -1);
}

/* The same of a batch of the one client @id. */
static int sync_batch_async(uint32_t id, uint32_t dir, uint32_t timeout_ms)
{
	struct ib_sync_mem_ioc_entry e = { .id = id };
	struct ib_sync_mem_ioc_sync_batch r = {
		.entries = (uintptr_t)&e, .n = 1, .dir = dir,
		.flags = IB_SYNC_MEM_IOC_F_ASYNC, .timeout_ms = timeout_ms,
	};

	return dev_fence(IB_SYNC_MEM_IOC_SYNC_BATCH, &r, &r.out_fence);
}

/*
 * An asynchronous sync of a dma-buf client waits for the fences its
 * buffer's reservation holds when it is submitted as it waits for an
 * in-fence: by a callback, holding no worker (as drm/scheduler waits for
 * a job's dependencies). So the client's deletion ends that wait at once:
 * the sync's fence signals -ENODEV and the deletion returns while the
 * reservation's fence (one of ib_sync_mem_test's, which never signals by
 * itself) is still unsignalled. A worker blocked in the client's ->sync
 * would hold the deletion until the sync's timeout (-ETIMEDOUT). The
 * same for a batch (@batch). And once the reservation's fence signals, a
 * second such sync runs: 1 (no error), one sync.
 */
static void test_async_deps_one(bool batch)
{
	const char *form = batch ? "batch" : "one client";
	int id, f = -1, ret, unsignalled, st;
	struct vbuf b;

	ret = vbuf_create(&b);
	id = ret ? ret : smnl_register_dmabuf(&nl, dev, "vs-async-deps", b.fd);
	if (!ktap_result(id > 0, "deps (%s): a dma-buf client", form)) {
		ktap_diag("%s \"%s\"", errstr(id), nl.extack);
		goto out;
	}
	ret = kt_fence_add(b.fd);
	f = ret ? ret : batch ? sync_batch_async(id, IB_SYNC_MEM_SYNC_TO_CPU, FENCED_MS) :
				sync_async(id, IB_SYNC_MEM_SYNC_TO_CPU, FENCED_MS);
	if (!ktap_result(f >= 0 && sync_file_status(f) == 0,
			 "deps (%s): an unsignalled write fence on its buffer, an asynchronous sync to-cpu: pending (%s)",
			 form, errstr(f < 0 ? f : 0)))
		goto out;
	ret = smnl_unregister(&nl, id);
	unsignalled = kt_fence_unsignalled() == 1;
	st = sync_file_wait(f, bound_ms(30000));
	ktap_diag("deleted: %s; the sync's fence %s; the buffer's fence %s",
		  errstr(ret), errstr(st), unsignalled ? "unsignalled" : "signalled");
	ktap_result(ret == 0 && unsignalled && st == -ENODEV,
		    "deps (%s): the client deleted while its sync waits for the buffer's fence: -ENODEV at once, that fence still unsignalled",
		    form);
out:
	kt_fence_signal();
	if (f >= 0)
		close(f);
	vbuf_close_fd(&b);
	vbuf_close_handle(&b);
}

static void test_async_deps(void)
{
	struct smnl_client c;
	int id, f2 = -1, ret, st;
	uint64_t syncs = ~0ULL;
	struct vbuf b;

	test_async_deps_one(false);
	test_async_deps_one(true);
	ret = vbuf_create(&b);
	id = ret ? ret : smnl_register_dmabuf(&nl, dev, "vs-async-deps", b.fd);
	ret = id > 0 ? kt_fence_add(b.fd) : id;
	f2 = ret ? ret : sync_async(id, IB_SYNC_MEM_SYNC_TO_CPU, FENCED_MS);
	if (f2 >= 0 && !smnl_client_get(&nl, id, &c))
		syncs = c.syncs;
	kt_fence_signal();
	st = f2 >= 0 ? sync_file_wait(f2, bound_ms(30000)) : f2;
	ktap_result(st == 1 && syncs == 0 && !smnl_client_get(&nl, id, &c) && c.syncs == 1,
		    "deps: another waits for the buffer's fence, then runs once it signalled: 1, 1 sync (status %d, %llu syncs before)",
		    st, (unsigned long long)syncs);
	if (id > 0)
		smnl_unregister(&nl, id);
	kt_fence_signal();
	if (f2 >= 0)
		close(f2);
	vbuf_close_fd(&b);
	vbuf_close_handle(&b);
}

/*
 * An in-fence's error is the sync's also when the client has dependencies
 * (a dma-buf's reservation) and the in-fence is a container: a sync_file
 * merged (SYNC_IOC_MERGE) from two pending fences, a dma_fence_array. The
 * job waits for the in-fence's fences and its dependencies merged into
 * one; which of them failed is the in-fence's error all the same. Here
 * both merged fences are asynchronous syncs of client A, waiting for the
 * fence on A's buffer; A's deletion signals both -ENODEV; then the sync of
 * client D after the merged fence must end -ENODEV, D not synced.
 */
static void test_async_merged_in_fence(void)
{
	int a = -1, d = -1, fa = -1, fb = -1, m = -1, fd = -1, ret, st = 0;
	struct sync_merge_data md = { .name = "vs-merged" };
	uint64_t syncs = ~0ULL;
	struct vbuf ba, bd;
	struct smnl_client c;

	ret = vbuf_create(&ba);
	a = ret ? ret : smnl_register_dmabuf(&nl, dev, "vs-merged-a", ba.fd);
	ret = vbuf_create(&bd);
	d = ret ? ret : smnl_register_dmabuf(&nl, dev, "vs-merged-d", bd.fd);
	ret = a > 0 && d > 0 ? kt_fence_add(ba.fd) : -EINVAL;
	fa = ret ? ret : sync_async(a, IB_SYNC_MEM_SYNC_TO_CPU, FENCED_MS);
	fb = fa < 0 ? fa : sync_async(a, IB_SYNC_MEM_SYNC_TO_DEVICE, FENCED_MS);
	if (fb >= 0) {
		md.fd2 = fb;
		m = ioctl(fa, SYNC_IOC_MERGE, &md) ? -errno : md.fence;
	}
	fd = m < 0 ? m : sync_async_after(d, IB_SYNC_MEM_SYNC_TO_CPU, FENCED_MS, m);
	if (!ktap_result(fd >= 0 && sync_file_status(m) == 0 && sync_file_status(fd) == 0,
			 "merged in-fence: two pending syncs of A merged, a sync of dma-buf client D after it: pending (%s)",
			 errstr(fd < 0 ? fd : 0)))
		goto out;
	ret = smnl_unregister(&nl, a);
	a = -1;
	st = sync_file_wait(fd, bound_ms(30000));
	if (!smnl_client_get(&nl, d, &c))
		syncs = c.syncs;
	ktap_diag("A deleted: %s; its syncs %d and %d; D's %d, D synced %llu times",
		  errstr(ret), sync_file_status(fa), sync_file_status(fb), st,
		  (unsigned long long)syncs);
	ktap_result(ret == 0 && sync_file_status(fa) == -ENODEV &&
		    sync_file_status(fb) == -ENODEV && st == -ENODEV && syncs == 0,
		    "merged in-fence: A deleted, both its syncs -ENODEV: D's sync ends -ENODEV, D not synced");
out:
	kt_fence_signal();
	if (fd >= 0)
		close(fd);
	if (m >= 0)
		close(m);
	if (fb >= 0)
		close(fb);
	if (fa >= 0)
		close(fa);
	if (a > 0)
		smnl_unregister(&nl, a);
	if (d > 0)
		smnl_unregister(&nl, d);
	vbuf_close_fd(&ba);
	vbuf_close_handle(&ba);
	vbuf_close_fd(&bd);
	vbuf_close_handle(&bd);
}

/*
 * Whose the buffer is: a client registered without IB_SYNC_MEM_CLIENT_F_OWNED
 * keeps its buffer after the registering process is gone (test_inherited_fd:
 * syncmemctl registers and exits); an owned one goes with its socket, and
 * the buffer's reference with it.
 */
static void test_owned(void)
{
	struct smnl_new req = { .dev = dev, .name = "vs-owned", .kind = IB_SYNC_MEM_KIND_DMABUF,
				.flags = IB_SYNC_MEM_CLIENT_F_OWNED, .dmabuf_nest = 1 };
	struct bufinfo before, with, after;
	struct smnl own;
	struct vbuf b;
	double t0;
	int id, ret;

	ret = vbuf_create(&b);
	if (ret || smnl_open(&own)) {
		ktap_result(0, "owned: a buffer and a second netlink socket");
		goto out;
	}
	bufinfo_get(b.ino, &before);
	req.dmabuf_fd = b.fd;
	id = smnl_register(&own, &req);
	bufinfo_get(b.ino, &with);
	ktap_result(id > 0 && with.count == before.count + 1,
		    "owned: a dma-buf client owned by its socket holds the buffer (count %ld -> %ld)",
		    before.count, with.count);
	smnl_close(&own);
	ret = id > 0 ? smnl_wait_gone(&nl, id, bound_ms(30000)) : id;
	/* The last fput of a file dropped by a work item is deferred. */
	t0 = now_ms();
	do {
		bufinfo_get(b.ino, &after);
	} while (after.count != before.count && now_ms() - t0 < bound_ms(30000) && !usleep(10000));
	ktap_result(ret == 0 && after.found && after.count == before.count,
		    "owned: closing the socket deletes the client and drops its reference (count %ld)",
		    after.count);
out:
	vbuf_close_fd(&b);
	vbuf_close_handle(&b);
}

static void test_lifetime(void)
{
	struct bufinfo before, with, after, gone;
	struct timed_sync t;
	struct smnl_client c;
	struct vbuf b;
	double t0;
	int ret, id;

	/* Order 1: unregister, then close: the buffer goes with the last. */
	ret = vbuf_create(&b);
	if (!ktap_result(ret == 0, "lifetime: create and export a second vgem buffer")) {
		ktap_diag("vgem: %s", errstr(ret));
		return;
	}
	ret = bufinfo_get(b.ino, &before);
	if (!ktap_result(ret == 0 && before.found,
			 "bufinfo lists the exported buffer (inode %llu)",
			 (unsigned long long)b.ino)) {
		ktap_diag("%s: %s, found %d", BUFINFO, errstr(ret), before.found);
		vbuf_close_fd(&b);
		vbuf_close_handle(&b);
		return;
	}
	id = smnl_register_dmabuf(&nl, dev, "vs-life1", b.fd);
	ret = bufinfo_get(b.ino, &with);
	ktap_result(id > 0 && with.found && with.count > before.count &&
		    with.attached == before.attached + !virt_dma(dev),
		    "registered: the client holds a file reference and %s (count %ld -> %ld, attached %d -> %d)",
		    virt_dma(dev) ? "no attachment (virtual DMA)" : "one attachment",
		    before.count, with.count, before.attached, with.attached);
	if (id > 0) {
		ret = smnl_unregister(&nl, id);
		bufinfo_get(b.ino, &after);
		ktap_result(ret == 0 && after.found && after.count == before.count &&
			    after.attached == before.attached,
			    "unregistered: reference and attachment dropped, the buffer stays while the fd is open (count %ld)",
			    after.count);
	} else {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
	}
	vbuf_close_fd(&b);
	vbuf_close_handle(&b);
	bufinfo_get(b.ino, &gone);
	ktap_result(!gone.found, "after close(fd) and GEM_CLOSE too, the buffer is gone");

	/* Order 2: close first: the client alone keeps the buffer alive. */
	ret = vbuf_create(&b);
	id = ret ? ret : smnl_register_dmabuf(&nl, dev, "vs-life2", b.fd);
	if (!ktap_result(id > 0, "lifetime: register a third buffer")) {
		ktap_diag("%s \"%s\"", errstr(id), nl.extack);
		vbuf_close_fd(&b);
		vbuf_close_handle(&b);
		return;
	}
	vbuf_close_fd(&b);
	vbuf_close_handle(&b);
	bufinfo_get(b.ino, &with);
	ktap_result(with.found && with.count >= 1,
		    "fd and GEM handle closed while registered: the buffer lives on (count %ld)",
		    with.count);
	sync_now(&t, id, IB_SYNC_MEM_SYNC_BIDIRECTIONAL, NO_WAIT_MS);
	ret = smnl_client_get(&nl, id, &c);
	ktap_result(sync_unwaited(&t) && ret == 0 && c.state == IB_SYNC_MEM_CLIENT_LIVE,
		    "and its client stays live and syncs: 0");
	ret = smnl_unregister(&nl, id);
	/* The last fput of a file dropped by a kernel thread is deferred. */
	t0 = now_ms();
	do {
		bufinfo_get(b.ino, &gone);
	} while (gone.found && now_ms() - t0 < bound_ms(30000) && !usleep(10000));
	ktap_result(ret == 0 && !gone.found, "unregister drops the last reference: the buffer is gone");
}

static int parse_id(const char *out)
{
	const char *p;
	char *end;
	long v;

	/* JSON ("id": N), "id N", "id=N", "id: N", or a lone number. */
	for (p = out; (p = strstr(p, "id")); p += 2) {
		const char *q = p + 2;

		if (p > out && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z')))
			continue;	/* "pid", "portid", "client_id"... */
		if (*q == '"')
			q++;
		while (*q == ' ' || *q == ':' || *q == '=' || *q == '\t')
			q++;
		v = strtol(q, &end, 10);
		if (end != q && v > 0)
			return (int)v;
	}
	v = strtol(out, &end, 10);
	while (*end == ' ' || *end == '\n')
		end++;
	if (end != out && !*end && v > 0)
		return (int)v;
	return -1;
}

/* Read all of @fd into @buf. */
static void slurp(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += r;
	buf[n] = '\0';
}

static void test_inherited_fd(void)
{
	const char *ctl = getenv("SYNCMEMCTL") ? getenv("SYNCMEMCTL") : "syncmemctl";
	char out[4096], err[4096], *nl_out;
	struct smnl_client c;
	struct bufinfo bi;
	int po[2], pe[2], st, id, ret;
	struct vbuf b;
	pid_t pid;

	ret = vbuf_create(&b);
	if (ret || pipe(po) || pipe(pe)) {
		ktap_result(0, "syncmemctl register --dmabuf-fd: set-up");
		ktap_diag("vgem: %s", errstr(ret));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		/* dup2 leaves the new fd without FD_CLOEXEC: it is inherited */
		if (dup2(b.fd, 7) != 7)
			_exit(126);
		execlp(ctl, ctl, "register", "--dev", dev, "--name", "vs-inherited",
		       "--kind", "dmabuf", "--dmabuf-fd", "7", (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", ctl, strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	slurp(po[0], out, sizeof(out));
	slurp(pe[0], err, sizeof(err));
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &st, 0);
	for (nl_out = out; (nl_out = strchr(nl_out, '\n')); )
		*nl_out = ' ';
	for (nl_out = err; (nl_out = strchr(nl_out, '\n')); )
		*nl_out = ' ';
	ktap_diag("%s register ... --dmabuf-fd 7: exit %d, stdout \"%s\", stderr \"%s\"",
		  ctl, WIFEXITED(st) ? WEXITSTATUS(st) : -1, out, err);
	id = parse_id(out);
	ktap_result(WIFEXITED(st) && WEXITSTATUS(st) == 0 && id > 0,
		    "syncmemctl register --kind dmabuf --dmabuf-fd 7 (an inherited fd) succeeds and prints the id");
	if (id <= 0) {
		/* Do not leak a client whose id we could not read. */
		if (!smnl_client_find(&nl, "vs-inherited", &c))
			id = c.id;
	}
	if (id > 0) {
		ret = smnl_client_get(&nl, id, &c);
		bufinfo_get(b.ino, &bi);
		ktap_result(ret == 0 && c.kind == IB_SYNC_MEM_KIND_DMABUF &&
			    !strcmp(c.name, "vs-inherited") && c.have_dmabuf &&
			    c.dmabuf_inode == b.ino && bi.count >= 2,
			    "the client exists, is a dma-buf client of our buffer (inode %llu) and holds it",
			    (unsigned long long)b.ino);
		ktap_diag("client %d: %s kind %s name %s inode %llu exporter %s; bufinfo count %ld",
			  id, errstr(ret), smnl_kind_name(c.kind), c.name,
			  (unsigned long long)c.dmabuf_inode, c.dmabuf_exporter,
			  bi.count);
		ktap_result(smnl_unregister(&nl, id) == 0, "unregister the syncmemctl client: 0");
	} else {
		ktap_result(0, "the client registered by syncmemctl exists");
	}
	vbuf_close_fd(&b);
	vbuf_close_handle(&b);
}

/* Whether the running kernel's config has CONFIG_@opt: 1, 0, -1 unknown. */
static int kconfig_has(const char *opt)
{
	char path[300], line[256], want[128], unset[128];
	struct utsname u;
	FILE *f;
	int r = -1;

	uname(&u);
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	snprintf(want, sizeof(want), "CONFIG_%s=", opt);
	snprintf(unset, sizeof(unset), "# CONFIG_%s is not set", opt);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want)))
			r = 1;
		else if (!strncmp(line, unset, strlen(unset)))
			r = 0;
	}
	fclose(f);
	return r;
}

/*
 * An inbound flush of dma-buf client @id: the module's RDMA READ through
 * the device reads the buffer itself, twice: each brings back the first 8
 * bytes the CPU wrote there last, through @map_fd (the buffer's memory),
 * and bytes 8 to 15 differ, so a READ a word off shows. @what names the
 * exporter. With @no_vmap (an exporter that maps nothing for the kernel)
 * the syncs fail with EOPNOTSUPP instead, and no READ is made.
 */
static void test_dmabuf_inbound(const char *what, int id, int map_fd,
				bool no_vmap)
{
	uint64_t *p, want, reads0, reads1, last;
	int i, ret, cerr;

	p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (!ktap_result(p != MAP_FAILED, "%s: map the buffer", what)) {
		ktap_diag("mmap: %s", strerror(errno));
		return;
	}
	for (i = 1; i <= 2; i++) {
		want = 0x5eed0000cafe0000ULL + i;
		p[0] = want;
		p[1] = ~want;
		reads0 = 0;
		ret = sm_inbound_read(dev, &reads0, &last);
		ktap_result(ret == 0, "%s: %s has a line in debugfs inbound", what, dev);
		ret = smnl_sync_client(&nl, id, IB_SYNC_MEM_SYNC_INBOUND, 5000,
				       &cerr, NULL);
		if (no_vmap)
			ktap_result(ret == 0 && cerr == -EOPNOTSUPP,
				    "%s: sync inbound (%d): EOPNOTSUPP (the exporter maps nothing for the kernel)",
				    what, i);
		else
			ktap_result(ret == 0 && cerr == 0,
				    "%s: sync inbound (%d): 0", what, i);
		if (ret || cerr)
			ktap_diag("sync: %s/%s \"%s\"", errstr(ret), errstr(cerr),
				  nl.extack);
		reads1 = last = 0;
		ret = sm_inbound_read(dev, &reads1, &last);
		if (no_vmap)
			ktap_result(ret == 0 && reads1 == reads0,
				    "%s: inbound (%d): no READ", what, i);
		else
			ktap_result(ret == 0 && reads1 == reads0 + 1 && last == want,
				    "%s: inbound (%d): one READ, of the buffer's first 8 bytes",
				    what, i);
		ktap_diag("READs %llu -> %llu, last %#llx (wrote %#llx)",
			  (unsigned long long)reads0, (unsigned long long)reads1,
			  (unsigned long long)last, (unsigned long long)want);
	}
	munmap(p, BUF_SIZE);
}

static void test_udmabuf(void)
{
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = BUF_SIZE };
	struct timed_sync t;
	struct smnl_client c;
	int memfd, ufd, devfd, id, ret, cfg;
	struct stat st;

	devfd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (devfd < 0) {
		int e = errno;

		cfg = kconfig_has("UDMABUF");
		if (e == ENOENT && cfg == 0) {
			ktap_skip("kernel has no udmabuf", "udmabuf");
			return;
		}
		ktap_result(0, "udmabuf: open /dev/udmabuf");
		ktap_diag("/dev/udmabuf: %s; CONFIG_UDMABUF %s", strerror(e),
			  cfg == 1 ? "is set" : cfg == 0 ? "is not set" :
			  "unknown (no /boot/config of this kernel)");
		return;
	}
	memfd = memfd_create("vgem_sync-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, BUF_SIZE) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		ktap_result(0, "udmabuf: memfd with F_SEAL_SHRINK");
		close(devfd);
		return;
	}
	uc.memfd = memfd;
	ufd = ioctl(devfd, UDMABUF_CREATE, &uc);
	if (!ktap_result(ufd >= 0, "udmabuf: UDMABUF_CREATE from a sealed memfd")) {
		ktap_diag("UDMABUF_CREATE: %s", strerror(errno));
		close(memfd);
		close(devfd);
		return;
	}
	fstat(ufd, &st);
	id = smnl_register_dmabuf(&nl, dev, "vs-udmabuf", ufd);
	if (ktap_result(id > 0, "udmabuf: register it")) {
		ret = smnl_client_get(&nl, id, &c);
		ktap_result(ret == 0 && c.have_dmabuf &&
			    !strcmp(c.dmabuf_exporter, "udmabuf") &&
			    c.dmabuf_size == BUF_SIZE && c.dmabuf_inode == st.st_ino,
			    "udmabuf: info says exporter udmabuf, 64 KiB, its inode");
		ktap_diag("exporter \"%s\" size %llu inode %llu", c.dmabuf_exporter,
			  (unsigned long long)c.dmabuf_size,
			  (unsigned long long)c.dmabuf_inode);
		sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_CPU, NO_WAIT_MS);
		ktap_result(sync_unwaited(&t), "udmabuf: sync to-cpu: 0");
		sync_now(&t, id, IB_SYNC_MEM_SYNC_TO_DEVICE, NO_WAIT_MS);
		ktap_result(sync_unwaited(&t), "udmabuf: sync to-device: 0");
		/* udmabuf maps its buffers for the kernel (->vmap) since 6.2. */
		test_dmabuf_inbound("udmabuf", id, memfd, !kernel_at_least(6, 2));
		ktap_result(smnl_unregister(&nl, id) == 0, "udmabuf: unregister: 0");
	} else {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
	}
	close(ufd);
	close(memfd);
	close(devfd);
}

int main(int argc, char **argv)
{
	struct bufinfo bi0, bi1, bi2;
	struct smnl_client c;
	struct smnl_new lazy;
	char path[64];
	struct vbuf b;
	int ret, id, fd;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--dev")) {
			dev = argv[i + 1];
		} else if (!strcmp(argv[i], "--remove")) {
			dev_remove = argv[i + 1];
		} else {
			fprintf(stderr, "usage: vgem_sync [--dev DEV] [--remove DEV2]\n");
			return 2;
		}
	}
	if (argc % 2 == 0) {
		fprintf(stderr, "usage: vgem_sync [--dev DEV] [--remove DEV2]\n");
		return 2;
	}
	ktap_start();
	ret = smnl_open(&nl);
	if (!ktap_result(ret == 0, "resolve the ib_sync_mem family")) {
		ktap_diag("smnl_open: %s", errstr(ret));
		return ktap_finish();
	}
	drm = open_vgem(path, sizeof(path));
	if (!ktap_result(drm >= 0, "open the vgem DRM device")) {
		ktap_diag("no /dev/dri/card* is vgem (modprobe vgem?)");
		return ktap_finish();
	}
	ktap_diag("vgem is %s", path);
	ret = vbuf_create(&b);
	if (!ktap_result(ret == 0, "create a 64 KiB dumb buffer and export it as a dma-buf")) {
		ktap_diag("vgem: %s", errstr(ret));
		return ktap_finish();
	}

	/* Not dma-bufs. */
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ret = smnl_register_dmabuf(&nl, dev, "vs-bad", fd);
	ktap_result(ret == -EBADF && says(nl.extack, "dma-buf|dmabuf|fd"),
		    "refused: an fd that is not a dma-buf -> -EBADF, extack says why");
	ktap_diag("%s \"%s\"", ret > 0 ? "registered!" : errstr(ret), nl.extack);
	if (ret > 0)
		smnl_unregister(&nl, ret);
	close(fd);
	ret = smnl_register_dmabuf(&nl, dev, "vs-bad", 1000);
	ktap_result(ret == -EBADF && says(nl.extack, "dma-buf|dmabuf|fd"),
		    "refused: an fd number that is not open -> -EBADF, extack says why");
	ktap_diag("%s \"%s\"", ret > 0 ? "registered!" : errstr(ret), nl.extack);
	if (ret > 0)
		smnl_unregister(&nl, ret);
	/*
	 * A lazy dma-buf client: skipped until marked dirty (MARK_DIRTY), then
	 * synced whole (a dma-buf syncs all of itself, range or not), and
	 * counted whole.
	 */
	memset(&lazy, 0, sizeof(lazy));
	lazy.dev = dev;
	lazy.name = "vs-lazy";
	lazy.kind = IB_SYNC_MEM_KIND_DMABUF;
	lazy.flags = IB_SYNC_MEM_CLIENT_F_LAZY;
	lazy.dmabuf_nest = 1;
	lazy.dmabuf_fd = b.fd;
	id = smnl_register(&nl, &lazy);
	if (!ktap_result(id > 0, "a lazy dma-buf client registers")) {
		ktap_diag("register lazy: %s \"%s\"", errstr(id), nl.extack);
	} else {
		struct smnl_sync_result res;

		memset(&c, 0, sizeof(c));
		ret = smnl_sync_client_full(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, &res);
		ktap_result(!ret && res.run == 0 && res.skipped == 1,
			    "lazy dma-buf: unmarked, its sync is skipped");
		ret = smnl_mark_dirty(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE, 0, 4096);
		if (!ret)
			ret = smnl_sync_client_full(&nl, id, IB_SYNC_MEM_SYNC_TO_DEVICE,
						    0, &res);
		ktap_result(!ret && res.run == 1 && res.client_err == 0 &&
			    !smnl_client_get(&nl, id, &c) && c.bytes == BUF_SIZE,
			    "lazy dma-buf: marked 4 KiB dirty, its sync runs, whole (bytes == 64 KiB)");
		ktap_diag("mark and sync: %s, client err %s, bytes %llu \"%s\"",
			  errstr(ret), errstr(res.client_err),
			  (unsigned long long)c.bytes, nl.extack);
		smnl_unregister(&nl, id);
	}

	bufinfo_get(b.ino, &bi0);
	id = smnl_register_dmabuf(&nl, dev, "vs-vgem", b.fd);
	if (!ktap_result(id > 0, "register the vgem dma-buf")) {
		ktap_diag("register: %s \"%s\"", errstr(id), nl.extack);
	} else {
		ret = smnl_client_get(&nl, id, &c);
		ktap_result(ret == 0 && c.kind == IB_SYNC_MEM_KIND_DMABUF &&
			    c.state == IB_SYNC_MEM_CLIENT_LIVE && c.size == BUF_SIZE &&
			    c.have_dmabuf && c.dmabuf_size == BUF_SIZE &&
			    bi0.found && !strcmp(c.dmabuf_exporter, bi0.exporter) &&
			    c.dmabuf_inode == b.ino,
			    "CLIENT_GET: dma-buf kind, live, 64 KiB, the buffer's exporter name and inode");
		/* vgem's buffers are exported by drm_prime: exp_name "drm" */
		ktap_diag("kind %s state %s size %llu exporter \"%s\" (bufinfo \"%s\") inode %llu (ours %llu)",
			  smnl_kind_name(c.kind), smnl_state_name(c.state),
			  (unsigned long long)c.dmabuf_size, c.dmabuf_exporter,
			  bi0.exporter, (unsigned long long)c.dmabuf_inode,
			  (unsigned long long)b.ino);

		test_fences(&b, id);
		test_bracket_bounded(&b, id);
		test_stray_signal(&b, id);
		test_dmabuf_inbound("vgem", id, b.fd, false);

		/* (f) the reference goes with the client */
		bufinfo_get(b.ino, &bi1);
		ret = smnl_unregister(&nl, id);
		ktap_result(ret == 0, "unregister: 0");
		bufinfo_get(b.ino, &bi2);
		ktap_result(bi0.found && bi1.found && bi2.found &&
			    bi1.count == bi0.count + 1 && bi2.count == bi0.count,
			    "bufinfo count: %ld before register, %ld registered, %ld after unregister",
			    bi0.count, bi1.count, bi2.count);
	}
	vbuf_close_fd(&b);
	vbuf_close_handle(&b);

	test_lifetime();
	test_inherited_fd();
	test_owned();
	test_udmabuf();
	if (dev_remove) {
		/* With ib_sync_mem_test's fences, which 50-memory loads here. */
		test_async_deps();
		test_async_merged_in_fence();
		test_removal(dev_remove);
	}

	close(drm);
	smnl_close(&nl);
	return ktap_finish();
}
