#!/usr/bin/env bash
# Fault injection: every allocation on the register (sim over netlink and
# debugfs, region, dma-buf), sync (one client, a device, a batch) and dump
# (client dump and get, device dump and get, stats of the module, a device,
# a client) paths is made to fail in turn, n = 1, 2, ... until the operation
# completes without an injected fault. The per-task fault injection
# (/proc/thread-self/fail-nth) aims failslab and fail_page_alloc at the
# program build/bin/failnth alone; genetlink doit handlers and the first part
# of a dump run in the sender's task, so the faults land in the module's
# allocations. Each injected fault must end in a clean -ENOMEM/-ENOBUFS with
# nothing left behind (no client, counters, VmPin and dma-buf references as
# before), or in a whole success; the module must still work afterwards.
# failnth's results become this suite's as "failnth: <test>", with the
# number of faults injected per path; kmemleak is scanned by vm/guest.sh at
# the end of the run on the debug kernel.
#
# Debian's kernels have no CONFIG_FAULT_INJECTION: there the suite says so
# in a SKIP line.
. "$(dirname "$0")/lib.sh"
suite_begin

BIN=$SYNCMEM_BIN
PROG_TIMEOUT=${PROG_TIMEOUT:-$((300 * SYNCMEM_SLOW))}
DBG=/sys/kernel/debug

if [ ! -e /proc/self/fail-nth ]; then
	skip "fault injection on the register, sync and dump paths" \
		"kernel $(uname -r) has no CONFIG_FAULT_INJECTION (no /proc/self/fail-nth)"
	finish
fi

# The knobs failnth needs: GFP_KERNEL allocations (which may wait) and
# order-0 pages must be able to fail, and an injected fault must print
# nothing (a stack dump reads as a splat). User pages (__GFP_HIGHMEM) stay
# exempt, so that no page fault of a program fails. Restored at the end.
KNOBS="failslab/ignore-gfp-wait=N failslab/verbose=0
fail_page_alloc/ignore-gfp-wait=N fail_page_alloc/min-order=0
fail_page_alloc/verbose=0"
saved=()
fi_setup() {
	local kv k v
	for kv in $KNOBS; do
		k=${kv%%=*} v=${kv#*=}
		[ -w "$DBG/$k" ] || { echo "missing $DBG/$k" >&2; return 1; }
		saved+=("$k=$(cat "$DBG/$k")")
		echo "$v" > "$DBG/$k" || return 1
		echo "$k: ${saved[-1]#*=} -> $(cat "$DBG/$k")" >&2
	done
}
fi_restore() {
	local kv rc=0
	for kv in "${saved[@]}"; do
		echo "${kv#*=}" > "$DBG/${kv%%=*}" || rc=1
	done
	return $rc
}

check "failslab and fail_page_alloc set to fail GFP_KERNEL and order-0 allocations, quietly" fi_setup
check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load
check "modprobe vgem" modprobe vgem

run_prog --timeout "$PROG_TIMEOUT" failnth --dev rxe0

check "fault injection knobs restored" fi_restore
no_client_left "no client left behind" || "$BIN/smnlctl" del-netlink >&2
check "unload ib_sync_mem_sim" sim_unload
check "modprobe -r vgem (no dma-buf still referenced)" modprobe -r vgem
check "object counters zero before unload" counters_zero
check "rmmod ib_sync_mem" sm_unload
finish
