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

BIN=$SYNCMEM_TOP/build/bin
PROG_TIMEOUT=${PROG_TIMEOUT:-$((300 * SYNCMEM_SLOW))}
DBG=/sys/kernel/debug

if [ ! -e /proc/self/fail-nth ]; then
	ok "fault injection on the register, sync and dump paths # SKIP kernel $(uname -r) has no CONFIG_FAULT_INJECTION (no /proc/self/fail-nth)"
	finish
fi

# run_prog PROG ARGS...: run build/bin/PROG and re-emit its results (as
# test/vm/50-memory.sh does).
run_prog() {
	local name=$1 prog=$BIN/$1 out rc line desc plan='' n=0 failed=0
	shift
	if [ ! -x "$prog" ]; then
		not_ok "$name: program present # $prog is missing (make tools)"
		return
	fi
	echo "--- $name $*" >&2
	out=$(mktemp)
	timeout --kill-after=10 "$PROG_TIMEOUT" "$prog" "$@" >"$out"
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "* | "not ok "*)
			desc=${line#not }
			desc=${desc#ok }
			case $desc in
			*" "*) desc=${desc#* } ;;
			*) desc="(no description)" ;;
			esac
			n=$((n + 1))
			if [ "${line%%ok *}" = "not " ]; then
				failed=$((failed + 1))
				not_ok "$name: $desc"
			else
				ok "$name: $desc"
			fi
			;;
		"# "*) echo "# $name: ${line#"# "}"; echo "$name: ${line#"# "}" >&2 ;;
		1..*) plan=${line#1..} ;;
		"KTAP version"*) ;;
		*) echo "$name: $line" >&2 ;;
		esac
	done <"$out"
	rm -f "$out"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		not_ok "$name: ran to completion # timed out after ${PROG_TIMEOUT}s (exit $rc)"
	elif [ $rc -gt 128 ]; then
		not_ok "$name: ran to completion # killed by signal $((rc - 128))"
	elif [ -z "$plan" ]; then
		not_ok "$name: ran to completion # no KTAP plan: output cut short (exit $rc)"
	elif [ "$plan" != "$n" ]; then
		not_ok "$name: ran to completion # plan 1..$plan but $n results (exit $rc)"
	elif [ $rc -ne 0 ] && [ $failed -eq 0 ]; then
		not_ok "$name: ran to completion # exit $rc with no failed test"
	elif [ $rc -eq 0 ] && [ $failed -ne 0 ]; then
		not_ok "$name: ran to completion # exit 0 despite $failed failed tests"
	else
		ok "$name: ran to completion ($n tests, $failed failed)"
	fi
}

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

run_prog failnth --dev rxe0

check "fault injection knobs restored" fi_restore
if counters_zero; then
	ok "no client left behind"
else
	not_ok "no client left behind # clients $(counter clients), registered $(counter registered)"
	"$BIN/smnlctl" list >&2
	"$BIN/smnlctl" del-netlink >&2
fi
check "unload ib_sync_mem_sim" sim_unload
check "modprobe -r vgem (no dma-buf still referenced)" modprobe -r vgem
check "object counters zero before unload" counters_zero
check "rmmod ib_sync_mem" sm_unload
finish
