#!/usr/bin/env bash
# Boot one target kernel in virtme-ng and run a command in it.
#
#   vm/boot.sh KVER RWDIR CMD
#
# RWDIR is writable by the guest (results); the project directory is the
# guest's working directory. Debian kernels boot by image with the host's
# /lib/modules; the debug kernel boots from its build tree, where virtme-ng
# installs and finds the tree's own modules, and gets more memory for KASAN.
# SYNCMEM_ACCEL=kvm uses KVM (vm/kvm-probe.sh decides); otherwise TCG with
# one host thread per vCPU. SYNCMEM_ICOUNT=1 boots on the instruction
# clock instead: one vCPU, single-threaded TCG with QEMU's
# -icount shift=0,sleep=off (below; it overrides VM_CPUS and
# SYNCMEM_ACCEL). Standard input must not be closed (vng needs a
# terminal or /dev/null); the caller decides which.
set -uo pipefail

kver=$1 rw=$2 cmd=$3
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/vm/lib.sh"

icount=${SYNCMEM_ICOUNT:-0}
cpus=${VM_CPUS:-2}
# The instruction clock (vm/run.sh --bench --icount): the guest's clocks
# advance one ns per guest instruction, so a guest timing is a count of
# instructions, the path's length, which neither the host's load nor
# TCG's per-instruction costs move. QEMU allows it only with one thread
# for all vCPUs, and with two vCPUs on one clock the work of one is
# charged to the other's timed call (17-21 % run-to-run spread measured,
# against 2-5 % with one): one vCPU. sleep=off: while the guest idles,
# its clock jumps to the next timer instead of following the host's, so
# a sleep costs no host time and adds no host noise. KVM cannot count
# guest instructions this way: TCG always.
if [ "$icount" = 1 ]; then
	cpus=1
	export SYNCMEM_ACCEL=tcg
fi

# A 16 MiB kernel log: nothing a run prints is lost to a wrapped ring
# (vm/run.sh checks that the harness's first mark is still there).
args=(--cpus "$cpus" --append log_buf_len=16M)
# SYNCMEM_KCONSOLE=1 (vm/run.sh's test runs, output into a pipe): the
# kernel's console on vng's stderr too (vng --verbose), where vm/guest.sh
# lets through errors and worse once the harness begins (soft lockups,
# hung tasks, RCU stalls, oopses). A guest whose user space no longer runs
# still shows them there, where the live copy of the kernel log stops.
# QEMU reopens /proc/self/fd/1 and 2 for its chardevs (with O_TRUNC, each
# at its own offset): a pipe keeps their output whole, a file would not.
# The boot itself stays as quiet as without the console (loglevel=1, after
# vng's loglevel=7): an oops still prints (it raises the level itself), and
# a console busy with every boot message is one more thread running while
# the kernel patches its text (see the int3 oops in vm/run.sh's test_lane).
if [ "${SYNCMEM_KCONSOLE:-0}" = 1 ]; then
	args+=(--verbose --append loglevel=1)
fi
# SYNCMEM_SWIOTLB_FORCE=1 (vm/run.sh's test runs): every streaming DMA
# mapping bounces through swiotlb, so that a missing or misdirected sync
# on ib_sync_mem_dmadev's device (test/vm/56-dma.sh) shows stale bytes.
# Nothing else in the guest maps through dma-direct: rxe and siw use
# virtual DMA, and QEMU's virtio devices (no ACCESS_PLATFORM) bypass the
# DMA API.
if [ "${SYNCMEM_SWIOTLB_FORCE:-0}" = 1 ]; then
	args+=(--append swiotlb=force)
fi
if [ "$icount" = 1 ]; then
	# One vCPU: no other vCPU can run into a static key's text patch
	# (the int3 oops below), so every kernel keeps its TSC, which under
	# -icount ticks once per instruction (QEMU derives it from the same
	# virtual clock): a clock read is one rdtsc, not an HPET read
	# through QEMU (or, on kernels whose vDSO has no HPET, a syscall)
	# in every timed call. nowatchdog: nothing to compare it against
	# that runs on another clock.
	args+=(--disable-kvm --qemu-opts="-accel tcg -icount shift=0,sleep=off" --append tsc=nowatchdog)
elif [ "${SYNCMEM_ACCEL:-tcg}" != kvm ]; then
	args+=(--disable-kvm --qemu-opts="-accel tcg,thread=multi")
	# 6.12 and 7.x under TCG: the TSC passes the kernel's checks,
	# sched_clock is marked stable 1.3 to 2 s into boot (and unstable
	# again whenever the clocksource watchdog sees a skew on a loaded
	# host), and each change flips a static key inside sched_clock_cpu().
	# The other vCPU, taking an interrupt there, runs the patch's int3
	# after the kernel has finished the patch: "Oops: int3" in
	# sched_clock_cpu, "Fatal exception in interrupt" (7.3: 2 boots in 17
	# here, one CI run 15 s in; 6.12: a pre-flight 295 s in, right after
	# the watchdog's "Marking clocksource 'tsc' as unstable").
	# tsc=unstable keeps sched_clock unstable from the start, as 6.1
	# already is ("TSCs unsynchronized"): the key is never flipped. The
	# guest then clocks on the HPET, each read an exit to QEMU: the
	# benches (SYNCMEM_TSC=keep, vm/run.sh --bench) keep 6.12 on the TSC
	# with its watchdog off (tsc=nowatchdog: the boot's flip is left).
	if [ "${SYNCMEM_TSC:-}" = keep ] &&
		[ "$("$top/vm/kernels.sh" --class "$kver")" != 7.x ]; then
		args+=(--append tsc=nowatchdog)
	else
		args+=(--append tsc=unstable)
	fi
fi

# SYNCMEM_QEMU_MONITOR=SOCKET (vm/run.sh's test runs): QEMU's human
# monitor on a unix socket, for vm/run.sh to ask a frozen guest what it
# still shows (vm/monitor.py); vng's own monitor stays on its console.
# Its keyboard's sysrq keys all work (Debian's kernel.sysrq=438 leaves out
# the task and CPU dumps).
if [ -n "${SYNCMEM_QEMU_MONITOR:-}" ]; then
	args+=(--qemu-opts="-monitor unix:$SYNCMEM_QEMU_MONITOR,server=on,wait=off")
	args+=(--append sysrq_always_enabled)
fi
# SYNCMEM_QEMU=PATH: another QEMU binary for virtme-ng (vng --qemu), e.g.
# a wrapper that runs trixie's newer QEMU with trixie's loader, libraries
# and firmware, as vm/virtiofsd.sh does for virtiofsd. Unset: the host's.
if [ -n "${SYNCMEM_QEMU:-}" ]; then
	args+=(--qemu "$SYNCMEM_QEMU")
fi
# SYNCMEM_QEMU_NET: QEMU options for a NIC (vm/run.sh --two-hosts' wire).
# Without it the guest has no network device at all.
if [ -n "${SYNCMEM_QEMU_NET:-}" ]; then
	args+=(--qemu-opts="$SYNCMEM_QEMU_NET")
fi

if "$top/vm/kernels.sh" --is-debug "$kver"; then
	# 4-level paging for the KASAN kernel. TCG's "max" CPU has LA57, so
	# the guest runs 5-level with its direct map at 0xff11...; on 6.1,
	# identify_cpu() clears boot_cpu_data's capabilities while the boot
	# CPU takes interrupts, and an interrupt in that window computes
	# KASAN_SHADOW_START from a 47-bit __VIRTUAL_MASK_SHIFT
	# (pgtable_l5_enabled() reads X86_FEATURE_LA57, now 0) and reports
	# "wild-memory-access" for a valid irq_desc: the boot splat in
	# handle_edge_irq that 1 boot in 3 had before.
	args+=(--append no5lvl)
	cd "$("$top/vm/kernels.sh" --kdir "$kver")" || exit 1
	PATH=${VNG%/*}:$PATH exec "$VNG" "${args[@]}" --memory "${VM_DEBUG_MEMORY:-4G}" --cwd "$top" \
		--rwdir "$rw" -- "SYNCMEM_ON_DEBUG_KERNEL=1 $cmd"
fi
cd "$top" || exit 1
PATH=${VNG%/*}:$PATH exec "$VNG" "${args[@]}" --memory "${VM_MEMORY:-2G}" \
	-r "$("$top/vm/kernels.sh" --image "$kver")" --rwdir "$rw" -- "$cmd"
