#!/usr/bin/env bash
# test/summary.sh on a made-up results directory: a failed in-kernel case
# is printed after the diagnostic lines that say which expectation failed
# (only its own, not a passing case's; of more than 12 the first 9 and the
# last 2), a failed shell check with its reason and its own section of the
# suite's log (of two checks of one name, the second's), and the counts and
# exit status are exact.
# Exits non-zero on the first wrong answer. Run by the host tier.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/k"
{
	echo "KTAP version 1"
	echo "    # churn: 2 writers"
	echo "ok 1 churn"
	echo "    # test_core.c:983: expected regs_other == 0, got 1 != 0"
	for i in $(seq 12); do echo "    # line $i"; done
	echo "    # storm: 32 clients"
	echo "not ok 2 device_removal_storm"
	echo "not ok 3 a shell check # command failed: false"
	for i in $(seq 12); do echo "    # all $i"; done
	echo "not ok 4 twelve lines, all printed"
	echo "ok 5 skipped one # SKIP why"
	echo "1..5"
} >"$tmp/k/kernel-churn.ktap"

# A shell suite: its log has a section per check; "again" runs twice and
# fails the second time, whose section has 13 lines (2 left out).
{
	echo "ok 1 again"
	echo "ok 2 other: not a prefix"
	echo "not ok 3 again # command failed: waits_in 7 f"
	echo "not ok 4 refused # command unexpectedly succeeded: true"
	echo "1..4"
} >"$tmp/k/10-shell.ktap"
{
	echo "--- [1s] again: waits_in 5 f"
	echo "first run's output"
	echo "--- [2s] other: not a prefix: true"
	echo "--- [3s] again: waits_in 7 f"
	for i in $(seq 12); do echo "out $i"; done
	echo "--- [4s] refused (must fail): true"
} >"$tmp/k/10-shell.log"
want_shell="== k/10-shell.ktap: 2 failed
   not ok 3 again # command failed: waits_in 7 f
     | --- [3s] again: waits_in 7 f
$(for i in $(seq 8); do echo "     | out $i"; done)
     | ... 2 lines left out
     | out 11
     | out 12
   not ok 4 refused # command unexpectedly succeeded: true
     | --- [4s] refused (must fail): true"

out=$("$top/test/summary.sh" "$tmp")
rc=$?
want="== k/kernel-churn.ktap: 3 failed
       # test_core.c:983: expected regs_other == 0, got 1 != 0
$(for i in $(seq 8); do echo "       # line $i"; done)
   # ... 3 lines left out
       # line 12
       # storm: 32 clients
   not ok 2 device_removal_storm
   not ok 3 a shell check # command failed: false
$(for i in $(seq 12); do echo "       # all $i"; done)
   not ok 4 twelve lines, all printed"
# same WHAT WANT SED_RANGE: the lines of the summary in SED_RANGE are WANT.
same() {
	local got
	got=$(sed -n "$3p" <<<"$out")
	[ "$got" = "$2" ] && return 0
	printf '%s: want\n%s\ngot\n%s\n' "$1" "$2" "$got"
	exit 1
}
same "summary's failures" "$want" '/^== k\/kernel-churn.ktap/,/^   not ok 4/'
same "summary's failures of a shell suite" "$want_shell" '/^== k\/10-shell.ktap/,/^     | --- \[4s\]/'
if [ "$rc" = 0 ]; then
	echo "summary exited 0 on 5 failures"
	exit 1
fi
last=$(tail -n 1 <<<"$out")
if [ "$last" != "3 passed, 5 failed, 1 skipped, 0 booted again" ]; then
	echo "summary's closing line: $last"
	exit 1
fi
