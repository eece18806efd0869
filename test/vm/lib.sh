# shellcheck shell=bash
# The shell helpers of the project, in one place: the in-guest suites
# (test/vm/*.sh) source this and call suite_begin, one check per test, and
# finish; vm/*.sh source it for what the harness shares with the suites
# (SPLAT, the cache, virtme-ng).
#
# The helpers are strict: a check passes only after an assertion about
# something that was produced. A JSON check fails on empty output (jq 1.6's
# -e passes on empty input) and asserts the shape it expects; an id must
# look like one ("null" and "" do not); a wait polls for an event with a
# generous bound scaled by SYNCMEM_SLOW and never asserts a duration.

# ---- the machine and the harness ----

# trim TEXT: TEXT without its leading and trailing blanks in REPLY (no
# quoting rules, unlike xargs: an apostrophe is text; no subshell: on the
# debug kernel under TCG every fork costs a good part of a second).
trim() {
	local x=$1
	x=${x#"${x%%[![:space:]]*}"}
	REPLY=${x%"${x##*[![:space:]]}"}
}

# Where the project keeps what it builds or downloads outside the checkout
# (the debug kernel, the trixie root, virtme-ng's virtual environment).
SYNCMEM_CACHE=${SYNCMEM_CACHE:-${HOME:-/root}/.cache/syncmem}
# virtme-ng, in the project's own virtual environment (vm/setup.sh).
VNG=$SYNCMEM_CACHE/venv/bin/vng
# vng NAME...: run virtme-ng (it runs its own virtme-run from PATH).
vng() { PATH=${VNG%/*}:$PATH "$VNG" "$@"; }

# The project's top directory (where this file is test/vm/lib.sh).
SYNCMEM_PROJECT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# in_root ROOT CMD...: CMD in the chroot ROOT (the trixie root of the 7.x
# kernel), in a mount namespace of its own: /proc, /sys, /dev and the
# project (at the same path, for Kbuild's absolute paths) are mounted there
# for CMD and gone when it ends.
in_root() {
	unshare -m --propagation private sh -c '
		root=$1 top=$2
		shift 2
		mount -t proc proc "$root/proc" &&
		mount --rbind /sys "$root/sys" &&
		mount --rbind /dev "$root/dev" &&
		mkdir -p "$root$top" && mount --bind "$top" "$root$top" &&
		exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C DEBIAN_FRONTEND=noninteractive "$@"' \
		sh "$1" "$SYNCMEM_PROJECT" "${@:2}"
}

# Kernel messages that fail a run: WARN/BUG/oops, sanitizers, lockdep,
# RCU, refcount and list debugging, sleeping in atomic, kmemleak, hung
# tasks.
SPLAT='WARNING:|BUG:|Oops|general protection fault|KASAN:|UBSAN:|'
SPLAT+='possible circular locking dependency|possible recursive locking|'
SPLAT+='inconsistent lock state|suspicious RCU usage|refcount_t:|'
SPLAT+='list_add corruption|list_del corruption|Call Trace:|'
SPLAT+='sleeping function called from invalid context|unreferenced object|'
SPLAT+='blocked for more than|'
# 7.x names each work item of ours queued on a workqueue it deprecates.
SPLAT+='\[ib_sync_mem[a-z_]*\] enqueued on deprecated workqueue'

# The marker vm/guest.sh writes to the kernel log once the set-up is done
# and before the first suite: a splat above it is the kernel's own (boot,
# rdma_rxe, veth), one below it happened while the suites ran.
HARNESS_MARK='syncmem-harness: suites begin'
# The marker test/vm/90-splats.sh writes before it makes the debug kernel
# report bad syncs on purpose: vm/run.sh's dmesg-clean check reads the log
# above it, that suite checks the reports below it.
SPLATS_MARK='syncmem-harness: expected splats begin'

# ---- KTAP ----

KTAP_N=0
KTAP_FAILED=0

# suite_begin: the KTAP header, and what every suite needs from vm/guest.sh.
suite_begin() {
	echo "KTAP version 1"
	KO=${SYNCMEM_KO:?SYNCMEM_KO is not set; run under vm/guest.sh}
}

ok() {
	KTAP_N=$((KTAP_N + 1))
	echo "ok $KTAP_N $*"
}

not_ok() {
	KTAP_N=$((KTAP_N + 1))
	KTAP_FAILED=$((KTAP_FAILED + 1))
	echo "not ok $KTAP_N $*"
}

# skip NAME REASON: a test that cannot run here. test/summary.sh counts it
# apart and fails the run unless test/expected-skips lists it for this
# kernel.
skip() {
	KTAP_N=$((KTAP_N + 1))
	echo "ok $KTAP_N $1 # SKIP $2"
}

# short TEXT...: TEXT on one line, cut to 200 characters (for KTAP lines).
short() {
	local t="$*"
	t=${t//$'\n'/ }
	[ ${#t} -le 200 ] && echo "$t" || echo "${t:0:200}..."
}

# check NAME CMD...: one test that passes when CMD exits 0.
check() {
	local name=$1
	shift
	echo "--- [${SECONDS}s] $name: $*" >&2
	if "$@" >&2; then
		ok "$name"
	else
		not_ok "$name # command failed: $(short "$*")"
	fi
}

# check_fail NAME CMD...: one test that passes when CMD exits non-zero.
# Any failure passes, a typo or a missing file as well: for a command that
# must be refused, check NAME fails_as PATTERN CMD... (or fails_with) says
# what the refusal must say.
check_fail() {
	local name=$1
	shift
	echo "--- [${SECONDS}s] $name (must fail): $*" >&2
	if "$@" >&2; then
		not_ok "$name # command unexpectedly succeeded: $(short "$*")"
	else
		ok "$name"
	fi
}

finish() {
	echo "1..$KTAP_N"
	exit 0
}

# ---- values ----

# is_id V...: every V is a client id (a positive decimal; "" and "null"
# are not); is_num V...: every V is a non-negative decimal.
is_id() {
	local v
	[ $# -gt 0 ] || { echo "no id given" >&2; return 1; }
	for v; do [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "not an id: '$v'" >&2; return 1; }; done
}
is_num() {
	local v
	[ $# -gt 0 ] || { echo "no number given" >&2; return 1; }
	for v; do [[ $v =~ ^[0-9]+$ ]] || { echo "not a number: '$v'" >&2; return 1; }; done
}

# csv V...: the values joined by commas, for syncmemctl's id lists.
csv() { local IFS=,; echo "$*"; }

# expect WHAT GOT WANT: GOT equals WANT, and is not empty (a command that
# printed nothing does not equal anything).
expect() {
	if [ -z "$2" ]; then
		echo "$1: got nothing, want '$3'"
		return 1
	fi
	[ "$2" = "$3" ] && return 0
	echo "$1: got '$2', want '$3'"
	return 1
}

# make test runs the default lane: every kind of check, with counts sized
# to the budget; make soak runs SYNCMEM_LANE=soak, the long stress (more
# fuzz messages, more churn rounds).
SYNCMEM_LANE=${SYNCMEM_LANE:-test}

# expected_skips: the entries of test/expected-skips, one "CLASS|SUITE|CHECK"
# line each, blanks trimmed, comments and empty lines left out.
expected_skips() {
	local c s d
	while IFS='|' read -r c s d; do
		trim "$c" && c=$REPLY && trim "$s" && s=$REPLY && trim "$d" && d=$REPLY
		[ -n "$c" ] && [ "${c:0:1}" != "#" ] || continue
		printf '%s|%s|%s\n' "$c" "$s" "$d"
	done <"$SYNCMEM_PROJECT/test/expected-skips"
}

# A line "CLASS | SUITE | the whole suite" of test/expected-skips keeps
# SUITE off that kernel class's lane: the guest writes one skipped check
# with this description in its place.
WHOLE_SUITE="the whole suite"
# lane_skips_suite CLASS SUITE: test/expected-skips keeps SUITE off CLASS.
# The allowlist is read once per shell, and matched without a process.
lane_skips_suite() {
	[ -n "${LANE_SKIPS+set}" ] || LANE_SKIPS=$'\n'$(expected_skips)$'\n'
	[ -n "$1" ] && [[ $LANE_SKIPS == *$'\n'"$1|$2|$WHOLE_SUITE"$'\n'* ]]
}

# ---- waiting for events ----

# Suites multiply their bounds by this: the debug kernel (KASAN, lockdep)
# under TCG is several times slower than Debian's kernels. A bound is a
# hang guard, never a measurement.
SYNCMEM_SLOW=${SYNCMEM_SLOW:-1}
# The debug kernel's factor on top (vm/guest.sh applies it in the guest,
# vm/run.sh's freeze guard on the host).
DEBUG_SLOW=6

# stall_secs SLOW: the stall guard's bound for a guest whose bounds scale by
# SLOW: a suite silent that long has stalled (STALL_SECS overrides it).
stall_secs() { echo "${STALL_SECS:-$((150 * $1))}"; }

# wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds, for at
# most SECONDS times SYNCMEM_SLOW; on time-out CMD runs once more with its
# output in the log, and the wait fails.
wait_until() {
	local end=$((SECONDS + $1 * SYNCMEM_SLOW))
	shift
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "timed out waiting for: $*" >&2
			"$@" >&2
			return 1
		fi
		sleep 0.1
	done
}

# proc_tree PID: PID and its descendants, each with its state, where it
# sleeps and its kernel stack's first frames.
proc_tree() {
	local p kids state wchan cmd threads
	[ -d /proc/"$1" ] || return 0
	state=$(sed -n 's/^State:\t\(.\).*/\1/p' /proc/"$1"/status 2>/dev/null)
	wchan=$(cat /proc/"$1"/wchan 2>/dev/null)
	cmd=$(tr '\0' ' ' </proc/"$1"/cmdline 2>/dev/null | cut -c1-100)
	echo "$1 $state $wchan: $cmd"
	sed -n '1,6s/^/    /p' /proc/"$1"/stack 2>/dev/null
	threads=$(for p in /proc/"$1"/task/*/wchan; do cat "$p"; echo; done 2>/dev/null)
	[ "$(wc -l <<<"$threads")" -gt 1 ] && echo "    threads in: $(paste -sd' ' <<<"$threads")"
	kids=$(cat /proc/"$1"/task/*/children 2>/dev/null)
	for p in $kids; do proc_tree "$p"; done
}

# ended_within PID SECONDS: the background job PID exits, with any status
# (in ENDED_RC), within SECONDS (times SYNCMEM_SLOW); if it does not, where
# it and its children are goes to stderr, it is killed and this fails.
ended_within() {
	local pid=$1 end=$((SECONDS + $2 * SYNCMEM_SLOW))
	ENDED_RC=
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "pid $pid still running after $2 s (x$SYNCMEM_SLOW):" >&2
			proc_tree "$pid" >&2
			kill -KILL "$pid"
			wait "$pid"
			return 1
		fi
		sleep 0.1
	done
	wait "$pid"
	ENDED_RC=$?
}

# ended_ok PID SECONDS: the same, and the job exited 0.
ended_ok() {
	ended_within "$@" || return 1
	return "$ENDED_RC"
}

# gone PID: every thread of the process has exited (a zombie not yet
# reaped counts; a killed process with a thread still stuck in the kernel
# does not).
gone() {
	! cat /proc/"$1"/task/*/stat 2>/dev/null | awk '$3 != "Z" && $3 != "X" { f = 1 } END { exit !f }'
}

# waits_in PID FUNC...: one of its threads sleeps in one of the kernel
# functions FUNC (its wchan: the first caller outside the scheduler and the
# wait primitives), or in a copy GCC made of one (FUNC.constprop.0,
# FUNC.isra.0, FUNC.part.0: which it makes depends on the compiler and the
# code around); if not, says where its threads are.
# A state-D check is not enough: a thread of a process that has not yet
# sent its request can sleep uninterruptibly elsewhere (a page fault, a
# lock), most often on the debug kernel.
waits_in() {
	local pid=$1 w f at=
	shift
	for w in /proc/"$pid"/task/*/wchan; do
		w=$(cat "$w" 2>/dev/null) || continue
		for f in "$@"; do
			[ "$w" = "$f" ] || [[ $w == "$f".* ]] && return 0
		done
		at+=" $w"
	done
	echo "pid $pid waits in:${at:- (gone)}, not in $*" >&2
	return 1
}

# ---- JSON ----

# no_line ERE FILE: FILE has something in it and no line of it matches
# ERE (grep's exit 1: a file it cannot read is not a pass).
no_line() {
	[ -s "$2" ] || { echo "$2 is missing or empty" >&2; return 1; }
	grep -nE -- "$1" "$2" >&2
	[ $? -eq 1 ]
}

# jq_of FILTER CMD...: CMD exits 0 and prints JSON for which FILTER holds.
# Empty output fails here first (jq 1.6's -e passes on empty input).
jq_of() {
	local filter=$1 out
	shift
	out=$("$@") || { echo "exit $?: $*" >&2; return 1; }
	echo "$out" >&2
	[ -n "$out" ] || { echo "no output: $*" >&2; return 1; }
	jq -e "$filter" <<<"$out" >/dev/null
}

# jq_file FILTER FILE [jq options]: the same for the JSON in FILE.
jq_file() {
	local filter=$1 f=$2
	shift 2
	[ -s "$f" ] || { echo "$f is missing or empty" >&2; return 1; }
	jq -e "$@" "$filter" "$f" >/dev/null
}

# jq_val FILTER CMD...: print FILTER of CMD's JSON output (jq -r); fails
# on empty output, on a null value and when CMD fails.
jq_val() {
	local filter=$1 out v
	shift
	out=$("$@") || return 1
	[ -n "$out" ] || { echo "no output: $*" >&2; return 1; }
	v=$(jq -e -r "$filter" <<<"$out") || { echo "no $filter in: $out" >&2; return 1; }
	echo "$v"
}

# ---- the modules ----

DEBUGFS=/sys/kernel/debug/ib_sync_mem
SIMFS=/sys/kernel/debug/ib_sync_mem_sim
KTFS=/sys/kernel/debug/ib_sync_mem_test
# run_step STEP: one write to the test module's "run" file (a case or a step).
run_step() { echo "$*" > "$KTFS/run"; }
# kt_case_ok CASE: the test module reported CASE ok; if not, its lines.
kt_case_ok() {
	grep -qE "^ok [0-9]+ $1\$" "$KTFS/results" && return 0
	awk -v c="$1" '{ b[n++] = $0 } /^(not )?ok / {
		if ($0 ~ "^not ok [0-9]+ " c "( |$)") for (i = 0; i < n; i++) print b[i]
		n = 0 }' "$KTFS/results" >&2
	return 1
}

sm_load() { insmod "$KO/ib_sync_mem.ko" "$@"; }
sm_unload() { rmmod ib_sync_mem; }
loaded() { grep -q "^$1 " /proc/modules; }
sm_loaded() { loaded ib_sync_mem; }
# unloaded MODULE...: /proc/modules is read and none of them is in it.
unloaded() {
	local mods m
	mods=$(cat /proc/modules) || return 1
	for m; do
		! grep -q "^$m " <<<"$mods" || { echo "$m is loaded" >&2; return 1; }
	done
}
# client_timing Y|N: set the module parameter and read it back.
client_timing() {
	local p=/sys/module/ib_sync_mem/parameters/client_timing
	echo "$1" > $p && [ "$(cat $p)" = "$1" ]
}
sim_load() { insmod "$KO/ib_sync_mem_sim.ko" "$@"; }
sim_unload() { rmmod ib_sync_mem_sim; }
sim_loaded() { loaded ib_sync_mem_sim; }
# rmmod_busy MODULE: rmmod fails because the module is in use (kmod's
# rmmod: "Module M is in use", "... is in use by: OTHER").
rmmod_busy() { fails_as "^rmmod: ERROR: Module $1 is in use( by: .+)?\$" rmmod "$1"; }

# The module's device list (name index clients passes).
sm_devices() { cat "$DEBUGFS/devices"; }
has_device() { sm_devices | awk -v d="$1" '$1 == d { f = 1 } END { exit !f }'; }
# lacks_device DEV: the list is read and DEV is not in it (a list that
# cannot be read lacks nothing).
lacks_device() {
	local list
	list=$(sm_devices) || return 1
	awk -v d="$1" '$1 == d { f = 1 } END { exit f }' <<<"$list"
}
# dev_clients DEV: clients on DEV by the module's count.
dev_clients() { awk -v d="$1" '$1 == d { print $3 }' "$DEBUGFS/devices"; }

# sim_held FILE N: exactly N calls of the sim kind stop at its test window
# FILE (held: hold_create's, held_destroy: hold_destroy's).
sim_held() { [ "$(cat "$SIMFS/$1")" = "$2" ]; }
# sim_new DEV NAME [opts...]: create a sim client through debugfs, print
# its id (and fail unless it is one).
sim_new() {
	local id
	echo "$*" > "$SIMFS/new_client" || return 1
	id=$(cat "$SIMFS/last_id") && is_id "$id" && echo "$id"
}
sim_del() { echo "$1" > "$SIMFS/del_client"; }

# counter NAME: an object counter of ib_sync_mem (domains, clients,
# registered).
counter() { awk -v k="$1" '$1 == k { print $2 }' "$DEBUGFS/counters"; }
counter_is() { local v; v=$(counter "$1"); echo "$1=$v" >&2; is_num "$v" && [ "$v" = "$2" ]; }
counters_zero() { counter_is clients 0 && counter_is registered 0; }
# no_fence_left: every asynchronous sync's fence signalled and freed.
no_fence_left() { counter_is fences 0 && counter_is fences_pending 0; }
# no_client_left NAME: one test, the client counters back to zero; if not,
# the counts in the result, the clients left in the log, and it fails (the
# caller deletes what is left its own way).
no_client_left() {
	if counters_zero; then
		ok "$1"
	else
		not_ok "$1 # clients $(counter clients), registered $(counter registered)"
		"$SYNCMEM_BIN/smnlctl" list >&2
		return 1
	fi
}

# rdma_link_on DEV NETDEV: the rxe device DEV exists on NETDEV (rdma link
# show wants DEV/PORT: a bare device name is "Wrong device name").
rdma_link_on() {
	local out
	out=$(rdma link show "$1/1" 2>&1)
	echo "$out" >&2
	grep -qE "^link $1/1 .* netdev $2( |\$)" <<<"$out"
}

# rdma_link_gone DEV: rdma link show answers and lists no port of DEV
# (rdma link show DEV/1 fails for a device that does not exist, and for
# any other reason too).
rdma_link_gone() {
	local out
	out=$(rdma link show 2>&1) || { echo "rdma link show failed: $out" >&2; return 1; }
	echo "$out" >&2
	! grep -q "^link $1/" <<<"$out"
}

# roce_v2_gid DEV IP: the index of DEV's RoCE v2 GID for IPv4 address IP
# (::ffff:a.b.c.d), as perftest's -x wants it.
roce_v2_gid() {
	local want g i
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ })
	for g in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		i=${g##*/}
		[ "$(cat "$g" 2>/dev/null)" = "$want" ] || continue
		[ "$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

# ---- the CLI ----

# Every syncmemctl call is bounded: a hang is a failure, not a stall.
CTL_TIMEOUT=${CTL_TIMEOUT:-$((60 * SYNCMEM_SLOW))}
ctl() { timeout "$CTL_TIMEOUT" syncmemctl "$@"; }
# nobody CMD...: CMD as uid 65534 without capabilities, bounded too.
nobody() {
	timeout "$CTL_TIMEOUT" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$@"
}

# jq_list FILTER: syncmemctl list -j is an array and FILTER holds on it.
jq_list() { jq_of "type == \"array\" and ($1)" ctl list -j; }
has_client() { is_id "$1" && jq_list "any(.[]; .id == $1)"; }
lacks_client() { is_id "$1" && jq_list "all(.[]; .id != $1)"; }
# client_count: how many clients syncmemctl lists (a number, or failure).
client_count() { jq_val 'if type == "array" then length else error("not an array") end' ctl list -j; }
# syncs_of [stats args]: the sync count of stats -j (a number, or failure).
syncs_of() { jq_val '.syncs | numbers' ctl stats "$@" -j; }
# unregister_all: delete every client syncmemctl lists.
unregister_all() {
	local json ids
	json=$(ctl list -j) || return 1
	mapfile -t ids < <(jq -r '.[].id' <<<"$json")
	[ "${#ids[@]}" = 0 ] || ctl unregister id "$(csv "${ids[@]}")"
}

# fails_as PATTERN CMD...: CMD exits non-zero, and what it printed on
# stderr (kept in FAILED_ERR) matches the extended regular expression
# PATTERN: refused for the reason expected, not for any reason. A write to
# a debugfs or sysfs file fails with bash's "write error: <strerror>".
fails_as() {
	local pat=$1 rc
	shift
	FAILED_ERR=$("$@" 2>&1 >/dev/null)
	rc=$?
	echo "exit $rc: $FAILED_ERR" >&2
	[ "$rc" -ne 0 ] && grep -qE -- "$pat" <<<"$FAILED_ERR"
}

# fails_with PATTERN CMD...: the same for syncmemctl and the C tools, which
# print "Error: ..." on stderr.
fails_with() { fails_as "$@" && grep -q '^Error: ' <<<"$FAILED_ERR"; }

# ---- programs that print KTAP ----

# run_prog [--timeout SECONDS] [--nobody] PROG ARGS...: run PROG (of
# build/bin, copied to $SYNCMEM_BIN by vm/guest.sh; as uid 65534 without
# capabilities with --nobody, as nobody() runs a command) and
# re-emit its results as "PROG: <test>". A program that is missing,
# crashes, hangs, stops before its plan or exits inconsistently with its
# results fails. Its output goes into the suite's log as it comes, as
# "PROG: <line>": a long program that reports its steps does not look
# stalled, and one that is ended still shows where it was.
run_prog() {
	local limit=$((240 * SYNCMEM_SLOW)) as=()
	if [ "$1" = --timeout ]; then
		limit=$2
		shift 2
	fi
	if [ "$1" = --nobody ]; then
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups
			--inh-caps=-all --bounding-set=-all)
		shift
	fi
	local name=$1 prog=$SYNCMEM_BIN/$1 out rc line desc plan='' n=0 failed=0
	shift
	if [ ! -x "$prog" ]; then
		not_ok "$name: program present # $prog is missing (make tools)"
		return
	fi
	echo "--- $name $*" >&2
	out=$(mktemp)
	timeout --kill-after=10 "$limit" "${as[@]}" "$prog" "$@" | tee "$out" | sed -u "s/^/$name: /" >&2
	rc=${PIPESTATUS[0]}
	while IFS= read -r line; do
		case $line in
		"ok "* | "not ok "*)
			desc=${line#not }
			desc=${desc#ok }
			case $desc in
			*" "*) desc=${desc#* } ;;	# its number
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
		"#"*) line=${line#"#"}; echo "# $name: ${line# }" ;;
		1..*) plan=${line#1..} ;;
		*) ;;	# KTAP's header; anything else is in the log already
		esac
	done <"$out"
	rm -f "$out"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		not_ok "$name: ran to completion # timed out after ${limit}s (exit $rc)"
	elif [ $rc -gt 128 ]; then
		not_ok "$name: ran to completion # killed by signal $((rc - 128))"
	elif [ -z "$plan" ]; then
		not_ok "$name: ran to completion # no KTAP plan: output cut short (exit $rc)"
	elif [ "$plan" != "$n" ] || [ "$n" -eq 0 ]; then
		not_ok "$name: ran to completion # plan 1..$plan but $n results (exit $rc)"
	elif [ $rc -ne 0 ] && [ $failed -eq 0 ]; then
		not_ok "$name: ran to completion # exit $rc with no failed test"
	elif [ $rc -eq 0 ] && [ $failed -ne 0 ]; then
		not_ok "$name: ran to completion # exit 0 despite $failed failed tests"
	else
		ok "$name: ran to completion ($n tests, $failed failed)"
	fi
}

# ---- the kernel log ----

# no_new_splat_since LINES: no splat in the kernel log after its first
# LINES lines (dmesg | wc -l taken when a suite began).
no_new_splat_since() {
	! dmesg | tail -n +"$(($1 + 1))" | grep -nE "$SPLAT" >&2
}

# run_go_tests NAME BIN: run the Go integration tests of test binary BIN
# (go test -c; TestIntegration*, SYNCMEM_INTEGRATION=1, on rxe0) and re-emit
# each test and subtest as a result "NAME: TEST". A missing binary, a crash
# or a timeout, a test started without a result, no test run at all, or a
# skipped test (they must run here, never skip) is a failure. The hang
# guard, GO_TEST_TIMEOUT seconds, is scaled like every bound.
run_go_tests() {
	local label=$1 bin=$2 timeout=${GO_TEST_TIMEOUT:-$((180 * SYNCMEM_SLOW))}
	local prog=${2##*/}
	local out line verdict name rc pid n=0 failed=0 skipped=0 t
	local re_result='^ *--- (PASS|FAIL|SKIP): ([^ ]+) \(' re_run='^=== RUN +([^ ]+)$'
	local -A started=() finished=()
	local -a order=()

	if [ ! -x "$bin" ]; then
		not_ok "$prog: present # $bin is missing (make all)"
		return
	fi
	out=$(mktemp)
	echo "--- SYNCMEM_INTEGRATION=1 $bin -test.v -test.run Integration" >&2
	SYNCMEM_INTEGRATION=1 SYNCMEM_DEV=rxe0 timeout --kill-after=10 "$timeout" \
		"$bin" -test.v -test.count=1 -test.timeout=$((timeout - 20))s \
		-test.run Integration >"$out" 2>&1 &
	pid=$!
	# A hang guard with a look inside: still running 40 s before its own
	# timeout panics, the binary is stuck (it needs seconds): what its
	# threads wait in and the netlink sockets' queues and drops go into
	# the log while it is still there to see.
	if ! wait_until $((timeout / SYNCMEM_SLOW - 40)) gone "$pid"; then
		echo "--- $prog still running: its threads' kernel stacks, then /proc/net/netlink" >&2
		# $pid is timeout(1)'s; the binary is its child.
		for t in /proc/"$(pgrep -P "$pid" | head -n1)"/task/*; do
			echo "thread ${t##*/}: $(cat "$t/wchan" 2>/dev/null)" >&2
			cat "$t/stack" >&2 2>/dev/null
		done
		cat /proc/net/netlink >&2
	fi
	wait "$pid"
	rc=$?
	cat "$out" >&2
	while IFS= read -r line; do
		if [[ $line =~ $re_run ]]; then
			name=${BASH_REMATCH[1]}
			[ -n "${started[$name]:-}" ] || order+=("$name")
			started[$name]=1
		elif [[ $line =~ $re_result ]]; then
			verdict=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]}
			finished[$name]=1
			n=$((n + 1))
			case $verdict in
			PASS) ok "$label: $name" ;;
			FAIL) failed=$((failed + 1)); not_ok "$label: $name" ;;
			SKIP) skipped=$((skipped + 1)); not_ok "$label: $name # skipped: it must run here" ;;
			esac
		fi
	done <"$out"
	# The output is sequential: results come after what they report on.
	for t in "${order[@]}"; do
		if [ -z "${finished[$t]:-}" ]; then
			failed=$((failed + 1))
			not_ok "$label: $t # started, no result (crash or timeout)"
		fi
	done
	if grep -qE '^(panic: |fatal error: )' "$out"; then
		not_ok "$prog: ran to completion # $(grep -m1 -E '^(panic: |fatal error: )' "$out")"
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		not_ok "$prog: ran to completion # timed out after ${timeout}s (exit $rc)"
	elif [ $rc -gt 128 ]; then
		not_ok "$prog: ran to completion # killed by signal $((rc - 128))"
	elif [ $n -eq 0 ]; then
		not_ok "$prog: ran to completion # no test ran (exit $rc)"
	elif [ $rc -ne 0 ] && [ $failed -eq 0 ]; then
		not_ok "$prog: ran to completion # exit $rc with no failed test"
	elif [ $rc -eq 0 ] && [ $failed -ne 0 ]; then
		not_ok "$prog: ran to completion # exit 0 despite $failed failed tests"
	else
		ok "$prog: ran to completion ($n results, $failed failed, $skipped skipped)"
	fi
	rm -f "$out"
}
