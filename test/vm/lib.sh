# shellcheck shell=bash
# KTAP helpers for the in-guest suites. Each suite sources this, calls
# check/ok/not_ok for every test, and `finish` at the end, which prints the
# plan. Diagnostics go to stderr (the suite's .log file in the results).

KTAP_N=0
KTAP_FAILED=0
echo "KTAP version 1"

ok() {
	KTAP_N=$((KTAP_N + 1))
	echo "ok $KTAP_N $*"
}

not_ok() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_FAILED=$((KTAP_FAILED + 1))
	echo "not ok $KTAP_N $*"
}

# check NAME CMD...: one test that passes when CMD exits 0.
check() {
	local name=$1
	shift
	echo "--- $name: $*" >&2
	if "$@" >&2; then
		ok "$name"
	else
		not_ok "$name # command failed: $*"
	fi
}

# check_fail NAME CMD...: one test that passes when CMD exits non-zero.
check_fail() {
	local name=$1
	shift
	echo "--- $name (must fail): $*" >&2
	if "$@" >&2; then
		not_ok "$name # command unexpectedly succeeded: $*"
	else
		ok "$name"
	fi
}

finish() {
	echo "1..$KTAP_N"
	exit 0
}

KO=${SYNCMEM_KO:?SYNCMEM_KO is not set; run under vm/guest.sh}
# Multiply waits by this: the debug kernel (KASAN, lockdep) under TCG is
# several times slower than Debian's kernels. Never a reason to skip.
SYNCMEM_SLOW=${SYNCMEM_SLOW:-1}
DEBUGFS=/sys/kernel/debug/ib_sync_mem

sm_load() { insmod "$KO/ib_sync_mem.ko" "$@"; }
sm_unload() { rmmod ib_sync_mem; }
sm_loaded() { grep -q '^ib_sync_mem ' /proc/modules; }
sm_devices() { cat "$DEBUGFS/devices"; }
# has_device NAME: the module's device list (name index clients passes)
# contains NAME.
has_device() { sm_devices | awk -v d="$1" '$1 == d { f = 1 } END { exit !f }'; }
lacks_device() { ! has_device "$1"; }
SIMFS=/sys/kernel/debug/ib_sync_mem_sim
KTFS=/sys/kernel/debug/ib_sync_mem_test

sim_load() { insmod "$KO/ib_sync_mem_sim.ko"; }
sim_unload() { rmmod ib_sync_mem_sim; }
# sim_new DEV NAME [opts...]: create a sim client, print its id.
sim_new() {
	echo "$*" > "$SIMFS/new_client" && cat "$SIMFS/last_id"
}
sim_del() { echo "$1" > "$SIMFS/del_client"; }
# counter NAME: an object counter of ib_sync_mem.
counter() { awk -v k="$1" '$1 == k { print $2 }' "$DEBUGFS/counters"; }
counters_zero() {
	[ "$(counter clients)" = 0 ] && [ "$(counter registered)" = 0 ]
}
