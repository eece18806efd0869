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

/*
 * io_uring's driver API (IORING_OP_URING_CMD), for uring.c only: it defines
 * SM_URING_API before it includes sync_mem.h, the others do without
 * io_uring's headers. Written for 7.3's include/linux/io_uring/cmd.h; the
 * entries below map 6.12's and 6.1's onto it. Where the release of a
 * change is not pinned here (only 6.1's, 6.12's and 7.3's headers were
 * read), Kbuild probes the header, as for ib_umem_get_va().
 */
#ifdef SM_URING_API
/*
 * The header: include/linux/io_uring/cmd.h since io_uring's driver API was
 * split out of include/linux/io_uring.h (6.12 has it, 6.1 not; Kbuild
 * looks for the file, SM_HAVE_IO_URING_CMD_H: sparse has no __has_include).
 */
#ifdef SM_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

/*
 * io_uring_cmd_done() lost its res2 argument (the second u64 of a 32-byte
 * CQE; io_uring_cmd_done32() took that role) after 6.12: 6.12 and 6.1
 * have io_uring_cmd_done(cmd, ret, res2, issue_flags), 7.3 a static
 * inline io_uring_cmd_done(cmd, ret, issue_flags) over
 * __io_uring_cmd_done(). Kbuild probes for io_uring_cmd_done32
 * (SM_HAVE_IO_URING_CMD_DONE32). 6.1's takes issue_flags too (Debian's
 * 6.1.0-57 has the stable backport of "block/io_uring: pass in
 * issue_flags for uring_cmd task_work handling", 6.3).
 */
#ifndef SM_HAVE_IO_URING_CMD_DONE32
#define io_uring_cmd_done(cmd, ret, issue_flags) \
	io_uring_cmd_done(cmd, ret, 0, issue_flags)
#endif

/*
 * The task work a driver defers a completion to: 7.3 calls an
 * io_req_tw_func_t, (struct io_tw_req, io_tw_token_t), whose command is
 * io_uring_cmd_from_tw() and whose issue flags are
 * IO_URING_CMD_TASK_WORK_ISSUE_FLAGS; 6.12 and 6.1 call
 * void (*)(struct io_uring_cmd *, unsigned int issue_flags) (io_uring_cmd's
 * task_work_cb, gone in 7.3). Kbuild probes for io_uring_cmd_from_tw
 * (SM_HAVE_IO_URING_CMD_FROM_TW). SM_URING_CMD_TW(name, fn) defines the
 * callback @name, of the kernel's type, that calls
 * fn(struct io_uring_cmd *cmd, unsigned int issue_flags).
 */
#ifdef SM_HAVE_IO_URING_CMD_FROM_TW
#define SM_URING_CMD_TW(name, fn)					\
static void name(struct io_tw_req tw_req, io_tw_token_t tw)		\
{									\
	fn(io_uring_cmd_from_tw(tw_req), IO_URING_CMD_TASK_WORK_ISSUE_FLAGS); \
}
#else
#define SM_URING_CMD_TW(name, fn)					\
static void name(struct io_uring_cmd *cmd, unsigned int issue_flags)	\
{									\
	fn(cmd, issue_flags);						\
}
#endif

/*
 * io_uring_cmd_do_in_task_lazy() (a task work whose wake-up may wait until
 * the task waits for enough CQEs, IOU_F_TWQ_LAZY_WAKE) came in 6.5; before,
 * io_uring_cmd_complete_in_task(), which wakes at once.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
#define io_uring_cmd_do_in_task_lazy(cmd, cb) \
	io_uring_cmd_complete_in_task(cmd, cb)
#endif

/*
 * Cancelable commands (IORING_URING_CMD_CANCELABLE,
 * io_uring_cmd_mark_cancelable(), ->uring_cmd called again with
 * IO_URING_F_CANCEL at ring exit and task exit) came in 6.7, for ublk.
 * Before, io_uring has no way to ask a driver to end a command: its ring's
 * teardown waits for the command's own completion. Here the mark does
 * nothing and no call has IO_URING_F_CANCEL.
 */
#ifndef IORING_URING_CMD_CANCELABLE
#define IO_URING_F_CANCEL	0
static inline void io_uring_cmd_mark_cancelable(struct io_uring_cmd *cmd,
						unsigned int issue_flags)
{
}
#endif

/*
 * The command's payload, @type at the start of the SQE's cmd area: 7.3
 * reads it with io_uring_sqe128_cmd(cmd->sqe, type) (a 128-byte SQE's 80
 * bytes, checked at build time), 6.12 with io_uring_sqe_cmd(cmd->sqe),
 * 6.1 from cmd->cmd (struct io_uring_cmd had no sqe then: "io_uring: Pass
 * whole sqe to commands" gave it one; Kbuild probes for io_uring_sqe_cmd,
 * SM_HAVE_IO_URING_SQE_CMD).
 */
#if defined(io_uring_sqe128_cmd)
#define sm_uring_sqe_cmd(ioucmd, type) \
	io_uring_sqe128_cmd((ioucmd)->sqe, type)
#elif defined(SM_HAVE_IO_URING_SQE_CMD)
#define sm_uring_sqe_cmd(ioucmd, type) \
	((const type *)io_uring_sqe_cmd((ioucmd)->sqe))
#else
#define sm_uring_sqe_cmd(ioucmd, type)	((const type *)(ioucmd)->cmd)
#endif
#endif /* SM_URING_API */

#endif /* _IB_SYNC_MEM_COMPAT_H */
