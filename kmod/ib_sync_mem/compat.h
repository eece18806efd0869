/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels ib_sync_mem builds for (6.1 to 7.x). The
 * sources are written for the newest kernel; each entry here maps an older
 * one onto that form, names the API and the release that changed it, and
 * is the only place a kernel version is tested. Include it after the
 * kernel headers it adapts.
 *
 * Not here because the module no longer needs it: ib_device_get_by_name(),
 * gone from ib_core by 7.2 (the module looks devices up in its own domains:
 * ib_sync_mem_device_get()).
 */
#ifndef _IB_SYNC_MEM_COMPAT_H
#define _IB_SYNC_MEM_COMPAT_H

#include <linux/export.h>
#include <linux/module.h>
#include <linux/version.h>

/*
 * Symbol namespaces are string literals since 6.13 (commit cdd30ebb1b9f,
 * "module: Convert symbol namespace to string literal"): the sources write
 * EXPORT_SYMBOL_NS_GPL(sym, "NS") and MODULE_IMPORT_NS("NS"). Before, both
 * macros stringified a bare token; here they take the literal as it is.
 * __EXPORT_SYMBOL() names the GPL license "GPL" since 6.5 ("kbuild:
 * generate KSYMTAB entries by modpost"), "_gpl" before.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns)		MODULE_INFO(import_ns, ns)
#undef EXPORT_SYMBOL_NS_GPL
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
#define EXPORT_SYMBOL_NS_GPL(sym, ns)	__EXPORT_SYMBOL(sym, "_gpl", ns)
#else
#define EXPORT_SYMBOL_NS_GPL(sym, ns)	__EXPORT_SYMBOL(sym, "GPL", ns)
#endif
#endif

/*
 * get_user_pages_remote() lost its vmas argument in 6.5 (commit ca5e863233e8,
 * "mm/gup: remove vmas parameter from get_user_pages_remote()"). The macro
 * names the function it expands to, which the preprocessor leaves alone.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
#include <linux/mm.h>
#define get_user_pages_remote(mm, start, nr, gup_flags, pages, locked) \
	get_user_pages_remote(mm, start, nr, gup_flags, pages, NULL, locked)
#endif

/*
 * ib_umem_get() is ib_umem_get_va() in 7.x (7.3's include/rdma/ib_umem.h,
 * beside ib_umem_get_attr() and the other uverbs-attribute forms; the
 * functions moved from ib_uverbs into ib_core). The release is not known
 * here, so Kbuild probes the header (SM_HAVE_IB_UMEM_GET_VA).
 */
#ifndef SM_HAVE_IB_UMEM_GET_VA
#include <rdma/ib_umem.h>
static inline struct ib_umem *ib_umem_get_va(struct ib_device *device,
					     unsigned long addr, size_t size,
					     int access)
{
	return ib_umem_get(device, addr, size, access);
}
#endif

/*
 * smp_mb__after_srcu_read_lock() makes srcu_read_lock() a two-way full
 * barrier; 6.1's headers do not have it (Kbuild probes for it,
 * SM_HAVE_SMP_MB_AFTER_SRCU_READ_LOCK), but its __srcu_read_lock() ends
 * with the same smp_mb() ("B" in kernel/rcu/srcutree.c) that the newer
 * helper relies on.
 */
#ifndef SM_HAVE_SMP_MB_AFTER_SRCU_READ_LOCK
#include <linux/srcu.h>
static inline void smp_mb__after_srcu_read_lock(void)
{
	/* __srcu_read_lock() has smp_mb() internally. */
}
#endif

/*
 * A dynamic dma-buf importer's notice that the buffer moves is
 * dma_buf_attach_ops.invalidate_mappings in 7.x, called by
 * dma_buf_invalidate_mappings(); before, move_notify and
 * dma_buf_move_notify(). Kbuild probes the header
 * (SM_HAVE_DMABUF_INVALIDATE_MAPPINGS). SM_DMABUF_MOVED names the op.
 */
#ifdef SM_HAVE_DMABUF_INVALIDATE_MAPPINGS
#define SM_DMABUF_MOVED			invalidate_mappings
#define sm_dma_buf_moved(dmabuf)	dma_buf_invalidate_mappings(dmabuf)
#else
#define SM_DMABUF_MOVED			move_notify
#define sm_dma_buf_moved(dmabuf)	dma_buf_move_notify(dmabuf)
#endif

/*
 * dma_buf_vmap_unlocked() came with the dma-buf locking rework of 6.2;
 * before it dma_buf_vmap() took the buffer's lock itself.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define dma_buf_vmap_unlocked(dmabuf, map)	dma_buf_vmap(dmabuf, map)
#define dma_buf_vunmap_unlocked(dmabuf, map)	dma_buf_vunmap(dmabuf, map)
#endif

/*
 * system_dfl_wq, the unbound workqueue, came in 6.17 (Debian's 6.12 has it
 * too); 7.x warns at every work queued on system_unbound_wq, its old name.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 17, 0)
#include <linux/workqueue.h>
#define system_dfl_wq system_unbound_wq
#endif

/* hrtimer_setup() replaced hrtimer_init() and ->function in 6.13. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#include <linux/hrtimer.h>
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * PREEMPT_LAZY (6.13, "sched: Add TIF_NEED_RESCHED_LAZY infrastructure"):
 * waking a fair task asks the running one to reschedule lazily, by
 * TIF_NEED_RESCHED_LAZY, which need_resched() does not test (on
 * architectures without it, the name is TIF_NEED_RESCHED's). Before, no
 * request is lazy.
 */
#ifdef TIF_NEED_RESCHED_LAZY
#define sm_resched_lazy()	test_thread_flag(TIF_NEED_RESCHED_LAZY)
#else
#define sm_resched_lazy()	false
#endif

#endif /* _IB_SYNC_MEM_COMPAT_H */
