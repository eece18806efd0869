#!/usr/bin/env bash
# make test's regression gate: the hot paths on the instruction clock,
# against their committed budgets (bench/budgets).
#
#   bench/gate.sh [--results DIR]
#           boot the budgets' kernel with one vCPU on QEMU's instruction
#           clock (vm/run.sh --bench --gate: bench/guest.sh --lane gate),
#           measure the NOP and SYNC ioctls, the fan-out per client at
#           N = 64 (client_timing off and on), the range sync and the
#           inbound flush, and judge them (bench/gate.py check): KTAP in
#           DIR/gate.ktap (default build/gate), a table on stdout; exits
#           non-zero when a figure is over its budget by more than its
#           margin, missing or unparsable, or the lane did not run
#   bench/gate.sh --judge DIR
#           judge a run already in DIR (no VM)
#   bench/gate.sh --runs N [--results DIR]
#           N runs in a row (DIR/1 ... DIR/N), each judged, then the
#           spread of each figure over them (bench/gate.py spread): what
#           a margin must cover; run it before changing a margin
#
# A figure is a count of guest instructions (QEMU -icount shift=0,
# sleep=off), not a time: it does not move with the host's load, so it
# may fail make test. BENCHMARKS.md ("The regression gate") has the
# margins' measurement. The lane takes about a minute with its boot.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
budgets=bench/budgets
results=$top/build/gate
judge= runs=
while [ $# -gt 0 ]; do
	case $1 in
	--results) results=${2:?--results DIR}; shift 2 ;;
	--judge) judge=${2:?--judge DIR}; shift 2 ;;
	--runs) runs=${2:?--runs N}; shift 2 ;;
	*) echo "gate.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

if [ -n "$judge" ]; then
	python3 bench/gate.py check "$budgets" "$judge"
	exit
fi

# The gate's kernel: the budgets hold for it alone.
kver=$(awk '$1 == "kernel" { print $2; exit }' "$budgets")
if [ -z "$kver" ]; then
	echo "gate.sh: $budgets names no kernel ('kernel KVER')" >&2
	exit 2
fi

# run_once DIR: one run of the gate lane into DIR, judged there.
run_once() {
	local dir=$1 rc t0=$SECONDS
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "gate: the hot paths on $kver, on the instruction clock (results in $dir)" >&2
	KVER=$kver vm/run.sh --bench "$dir" --gate
	rc=$?
	echo "gate: the lane took $((SECONDS - t0)) s, its VM $(cat "$dir/vm.secs" 2>/dev/null || echo '?') s" >&2
	python3 bench/gate.py check "$budgets" "$dir" --vm-rc "$rc"
}

if [ -z "$runs" ]; then
	run_once "$results"
	exit
fi
status=0
dirs=()
for i in $(seq "$runs"); do
	run_once "$results/$i" || status=1
	dirs+=("$results/$i")
done
python3 bench/gate.py spread "${dirs[@]}" || status=1
exit $status
