#!/usr/bin/env bash
# Region clients through the Go library: pkg/genl's integration tests
# (pkg/genl/integration_test.go, built into build/bin/genl.test by
# `make genl-test`) run against the real module: AllocRegion, RegisterRegion,
# syncs both ways, munmap invalidating the client (reason memory, pages
# unpinned, syncs failing with ENXIO), events, owned clients dying with
# their connection; and client dumps raced against deletions, every dump
# that shows a state that never existed caught by its generations
# (TestIntegrationDumpRace, with sim clients); marks and range syncs of a
# lazy sim client, the bytes each one counts (TestIntegrationMarkDirty).
# Each Go test and subtest becomes one result here.
#
# A missing binary, a crash or a timeout, a test started without a result,
# no test run at all, or a skipped test (the tests must run here, never
# skip) is a failure.
. "$(dirname "$0")/lib.sh"
suite_begin

BIN=$SYNCMEM_BIN/genl.test
# A hang guard, scaled like every bound (the debug kernel is ~6x slower).
GENL_TIMEOUT=${GENL_TIMEOUT:-$((180 * SYNCMEM_SLOW))}

# run_genl_tests: run the integration tests and re-emit their results.
run_genl_tests() {
	local out line verdict name rc pid n=0 failed=0 skipped=0 t
	local re_result='^ *--- (PASS|FAIL|SKIP): ([^ ]+) \(' re_run='^=== RUN +([^ ]+)$'
	local -A started=() finished=()
	local -a order=()

	if [ ! -x "$BIN" ]; then
		not_ok "genl.test: present # $BIN is missing (make genl-test)"
		return
	fi
	out=$(mktemp)
	echo "--- SYNCMEM_INTEGRATION=1 $BIN -test.v -test.run Integration" >&2
	SYNCMEM_INTEGRATION=1 SYNCMEM_DEV=rxe0 timeout --kill-after=10 "$GENL_TIMEOUT" \
		"$BIN" -test.v -test.count=1 -test.timeout=$((GENL_TIMEOUT - 20))s \
		-test.run Integration >"$out" 2>&1 &
	pid=$!
	# A hang guard with a look inside: still running 40 s before its own
	# timeout panics, the binary is stuck (it needs seconds): what its
	# threads wait in and the netlink sockets' queues and drops go into
	# the log while it is still there to see.
	if ! wait_until $((GENL_TIMEOUT / SYNCMEM_SLOW - 40)) gone "$pid"; then
		echo "--- genl.test still running: its threads' kernel stacks, then /proc/net/netlink" >&2
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
			PASS) ok "genl: $name" ;;
			FAIL) failed=$((failed + 1)); not_ok "genl: $name" ;;
			SKIP) skipped=$((skipped + 1)); not_ok "genl: $name # skipped: it must run here" ;;
			esac
		fi
	done <"$out"
	# The output is sequential: results come after what they report on.
	for t in "${order[@]}"; do
		if [ -z "${finished[$t]:-}" ]; then
			failed=$((failed + 1))
			not_ok "genl: $t # started, no result (crash or timeout)"
		fi
	done
	if grep -qE '^(panic: |fatal error: )' "$out"; then
		not_ok "genl.test: ran to completion # $(grep -m1 -E '^(panic: |fatal error: )' "$out")"
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		not_ok "genl.test: ran to completion # timed out after ${GENL_TIMEOUT}s (exit $rc)"
	elif [ $rc -gt 128 ]; then
		not_ok "genl.test: ran to completion # killed by signal $((rc - 128))"
	elif [ $n -eq 0 ]; then
		not_ok "genl.test: ran to completion # no test ran (exit $rc)"
	elif [ $rc -ne 0 ] && [ $failed -eq 0 ]; then
		not_ok "genl.test: ran to completion # exit $rc with no failed test"
	elif [ $rc -eq 0 ] && [ $failed -ne 0 ]; then
		not_ok "genl.test: ran to completion # exit 0 despite $failed failed tests"
	else
		ok "genl.test: ran to completion ($n results, $failed failed, $skipped skipped)"
	fi
	rm -f "$out"
}

check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load
check "rxe0 attached" has_device rxe0
run_genl_tests
no_client_left "counters_zero: no client left behind" || unregister_all >&2
check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
finish
