#!/usr/bin/env bash
# Syncs from contexts that must not make them are reported by the debug
# kernel, whatever the clients do (their ->sync neither sleeps nor waits
# here): a sync under a spinlock by might_sleep(), a sync inside a fence
# signalling section by lockdep. The stock kernels have neither
# CONFIG_DEBUG_ATOMIC_SLEEP nor lockdep: test/expected-skips keeps this
# suite off their lanes.
#
# It runs last: after the report it asks for, lockdep is off for the rest
# of the boot. Before the first report it records debug_locks for the
# harness's lock-debugging check, and writes $SPLATS_MARK to the kernel
# log: vm/run.sh's dmesg-clean check reads the log above it, this suite the
# part below.
. "$(dirname "$0")/lib.sh"
suite_begin

# reported FROM PATTERN NAME...: the kernel log from its line FROM on has
# a report whose first line matches PATTERN and whose next 100 lines (the
# report and its call trace) name every NAME.
reported() {
	local from=$1 pat=$2 report name
	shift 2
	report=$(dmesg | tail -n +"$from" | grep -m1 -A100 -E "$pat")
	[ -n "$report" ] || { echo "no report matching '$pat'" >&2; return 1; }
	for name; do
		grep -qF -- "$name" <<<"$report" ||
			{ echo "the report does not name $name:" >&2; head -n 40 <<<"$report" >&2; return 1; }
	done
}

check "load ib_sync_mem" sm_load
check "load ib_sync_mem_test" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0
check "lock debugging is on before" grep -qE '^ *debug_locks: +1$' /proc/lockdep_stats
awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats >"$SYNCMEM_RESULTS/debug_locks"
echo "$SPLATS_MARK" >/dev/kmsg
from=$(($(dmesg | wc -l) + 1))

check "a sync under a spinlock runs" run_step splat_atomic
check "might_sleep() reports it, in ib_sync_mem_sync" reported "$from" \
	'BUG: sleeping function called from invalid context' \
	'splat_atomic_fn' 'ib_sync_mem_sync'
check "lock debugging is still on" grep -qE '^ *debug_locks: +1$' /proc/lockdep_stats

from=$(($(dmesg | wc -l) + 1))
check "a sync in a fence signalling section runs" run_step splat_signalling
check "lockdep reports the cycle of ib_sync_mem_sync and dma_fence_map" \
	reported "$from" 'possible circular locking dependency detected' \
	'(ib_sync_mem_sync)' 'dma_fence_map' 'splat_signalling_fn'

check "unload ib_sync_mem_test" rmmod ib_sync_mem_test
check "unload ib_sync_mem" sm_unload
finish
