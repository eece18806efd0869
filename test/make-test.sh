#!/usr/bin/env bash
# make test: everything, from a bare machine to the verdict.
#
#   set-up (vm/setup.sh), the debug kernel (built once, cached), the
#   modules and programs (make all), the host tier (test/host.sh), the
#   regression gate (bench/gate.sh: the hot paths' instruction counts
#   against bench/budgets, one VM of about a minute), the VM
#   tier on every target kernel (vm/run.sh), two hosts on the newest
#   (vm/run.sh --two-hosts), and test/summary.sh's verdict with the time
#   each phase took; then those times as Markdown in RESULTS/timings.md
#   (test/timings.sh).
#
# Every phase runs even when an earlier one failed (the summary decides);
# a phase that fails outright leaves a failing result of its own.
# SYNCMEM_DEBUG_KERNEL=0 leaves the debug kernel out (quick local runs; CI
# always has it). RESULTS=DIR puts the results elsewhere.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
results=${RESULTS:-$top/results}
rm -rf "$results"
mkdir -p "$results/phases"
: >"$results/phases.txt"

# phase NAME CMD...: run CMD, time it; if it fails, a KTAP file says so.
phase() {
	local name=$1 t0=$SECONDS rc
	shift
	echo "== $name"
	"$@"
	rc=$?
	echo "$name $((SECONDS - t0))" >>"$results/phases.txt"
	{
		echo "KTAP version 1"
		if [ $rc -eq 0 ]; then echo "ok 1 phase:$name"; else echo "not ok 1 phase:$name # exit $rc"; fi
		echo "1..1"
	} >"$results/phases/$name.ktap"
	return $rc
}

phase setup vm/setup.sh
if [ "${SYNCMEM_DEBUG_KERNEL:-1}" != 0 ]; then
	phase debug-kernel bash -c 'vm/debug-kernel.sh >/dev/null'
fi
phase build make --no-print-directory all
phase host test/host.sh "$results/host"
phase gate bench/gate.sh --results "$results/gate"
phase vm vm/run.sh --results "$results"
phase two-hosts vm/run.sh --two-hosts --results "$results"
echo "== summary"
test/summary.sh "$results"
rc=$?
# The time tables as Markdown (make docs-timings puts them in
# docs/testing.md); they never change the verdict.
test/timings.sh "$results" >"$results/timings.md" ||
	echo "make-test.sh: no time tables in $results/timings.md" >&2
exit $rc
