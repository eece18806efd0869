#!/usr/bin/env bash
# The module's word where an outside reading (issue 31) found it broken,
# checked from userspace: a device sync whose client failed is a reply with
# every result, not a failed command; a writer on a device (an unregister)
# waits for the callback in flight, not for the rest of a batch nor for a
# caller waiting for another caller's pass; a CLIENT_NEW whose reply is
# lost leaves no client; a device's removal waits for a CLIENT_DEL still
# letting go of the device and for an ->invalidate that runs in another
# task; a dump that saw part of a removal never calls itself consistent.
# (region_test, in 50-memory, has the region a batch holds and the lazy
# flag refused.)
# shellcheck disable=SC2317 # the helpers run through check
. "$(dirname "$0")/lib.sh"
suite_begin

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# sim_calls ID: to-device syncs of sim client ID; calls_are ID N: exactly N.
sim_calls() { cat "$SIMFS/clients/$1/to_device"; }
calls_are() { expect "to-device syncs of client $1" "$(sim_calls "$1")" "$2"; }
# calls_from ID N: at least N (a wait's condition: the count moves on);
# calls_below ID N: fewer than N, and says how many.
calls_from() { local n; n=$(sim_calls "$1") && is_num "$n" && [ "$n" -ge "$2" ]; }
calls_below() {
	local n
	n=$(sim_calls "$1") && is_num "$n" || return 1
	echo "to-device syncs of client $1: $n, want fewer than $2"
	[ "$n" -lt "$2" ]
}
# SLEEPING: where a task sleeps inside a sim client's ->sync (its wchan:
# sim_sleep_until, or the function it is inlined into, sim_work, itself
# inlined into sim_sync or not, as the kernel's compiler chose).
# HELD: where it waits in a sim client's hold (clients/ID/hold), the same
# way. waiting_or_gone PID FUNC...: PID sleeps in one of FUNC, or has ended
# (a removal that does not wait returns: the check after says so).
waiting_or_gone() { gone "$1" || waits_in "$@"; }
SLEEPING="sim_sleep_until sim_work sim_sync"
HELD="sim_hold_wait sim_work sim_sync"

check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load

# A device sync with a client that gives up at the caller's timeout: the
# sync ran, so the reply carries the totals and the client's result; the
# CLI prints them and exits 1 naming the client's error.
slow=$(ctl register --dev rxe0 --name rv-slow --latency 100ms)
check "rv-slow (100 ms) registered" is_id "$slow"
ctl sync --dev rxe0 --timeout 10ms -j >"$tmp/sync.json" 2>"$tmp/sync.err"
rc=$?
cat "$tmp/sync.json" "$tmp/sync.err" >&2
check "device sync past a client's timeout: exit 1" expect exit "$rc" 1
check "... its reply: 1 run, 1 error, the client's ETIMEDOUT" jq_file \
	".run == 1 and .errors == 1 and .skipped == 0 and .err == \"ETIMEDOUT\" and
	 [.results[] | [.id, .err]] == [[$slow, \"ETIMEDOUT\"]]" "$tmp/sync.json"
check "... the error is the client's, not the command's" grep -qx \
	"Error: sync: 1 of 1 clients failed, the first with ETIMEDOUT" "$tmp/sync.err"

# A client whose own ->sync fails with ENXIO (or ENODEV) is a result too:
# the command fails only when the client could not be synced at all
# (before: the reply was an error ack saying its memory was gone).
nxio=$(ctl register --dev rxe0 --name rv-nxio --fail-next 1 --fail-errno ENXIO)
check "rv-nxio (its next sync fails with ENXIO) registered" is_id "$nxio"
ctl sync --id "$nxio" -j >"$tmp/nxio.json" 2>"$tmp/nxio.err"
rc=$?
cat "$tmp/nxio.json" "$tmp/nxio.err" >&2
check "a sync whose ->sync returned ENXIO: exit 1" expect exit "$rc" 1
check "... its reply: 1 run, 1 error, ENXIO, the client live" jq_file \
	".run == 1 and .errors == 1 and .err == \"ENXIO\" and [.results[].err] == [\"ENXIO\"]" "$tmp/nxio.json"
check "... the error is the client's, not 'memory is gone'" grep -qx \
	"Error: sync: 1 of 1 clients failed, the first with ENXIO" "$tmp/nxio.err"
check "... and rv-nxio is still live" jq_of '.[0].state == "live"' ctl list --id "$nxio" -j
check "unregister rv-nxio" ctl unregister id "$nxio"

# A device sync's reply carries each client's result in the pass that
# served it, not whatever the client's last sync was when the reply was
# built: rv-px fails that pass with EIO; while the pass still runs rv-py
# (slow), a sync of rv-px alone succeeds (before: the reply said ok).
# rv-py's latency scales with SYNCMEM_SLOW up to the sim's 10 s; the pass
# waits for it (a 60 s timeout, past the module's default). The pass is in
# rv-py once rv-py's count moved: rv-slow (100 ms) and rv-px come first.
py_ms=$((2000 * SYNCMEM_SLOW))
[ "$py_ms" -le 10000 ] || py_ms=10000
px=$(ctl register --dev rxe0 --name rv-px --fail-next 1 --fail-errno EIO)
py=$(ctl register --dev rxe0 --name rv-py --latency "${py_ms}ms")
check "rv-px (fails its next sync) and rv-py (${py_ms} ms) registered" is_id "$px" "$py"
syncmemctl sync --dev rxe0 --timeout 60s -j >"$tmp/pass.json" 2>"$tmp/pass.err" &
pass=$!
check "the device pass reached rv-py" wait_until 60 calls_from "$py" 1
# shellcheck disable=SC2086
check "... and sleeps in it" wait_until 60 waits_in "$pass" $SLEEPING
check "... rv-px failed in it" expect "rv-px's syncs" "$(sim_calls "$px")" 1
check "a sync of rv-px alone meanwhile succeeds" ctl sync --id "$px"
ended_within "$pass" 60
check "the device sync ends (exit 1: a client failed)" expect exit "${ENDED_RC:-killed}" 1
cat "$tmp/pass.json" "$tmp/pass.err" >&2
check "... its reply: rv-px EIO (its result in the pass), rv-py ok" jq_file \
	"[.results[] | select(.id == $px or .id == $py) | [.id, .err // \"ok\"]] == [[$px, \"EIO\"], [$py, \"ok\"]]" \
	"$tmp/pass.json"
check "unregister rv-px and rv-py" ctl unregister id "$px,$py"

# A batch of 50 syncs of a 200 ms client; an unregister of another client
# of the device returns after the callback in flight, while the batch goes
# on (before: after the whole batch, one read-side section for it all):
# fewer than 50 of its syncs have begun, and it still sleeps in one. Where
# it sleeps is waited for, not sampled once: a sample can find it between
# two syncs, woken from one and not yet in the next.
# The latencies scale with SYNCMEM_SLOW: the checks race a process start.
echo $((200000 * SYNCMEM_SLOW)) > "$SIMFS/clients/$slow/latency_us"
other=$(ctl register --dev rxe0 --name rv-other)
check "rv-other registered" is_id "$other"
c0=$(sim_calls "$slow")
check "rv-slow's count readable" is_num "$c0"
syncmemctl sync --id "$(yes "$slow" | head -n 50 | paste -sd,)" --timeout 60s \
	>"$tmp/batch.out" 2>&1 &
batch=$!
check "a batch of 50 is in rv-slow's syncs" wait_until 60 calls_from "$slow" $((c0 + 1))
check "unregister rv-other during the batch" ctl unregister id "$other"
check "... it returned before the batch's last sync began" calls_below "$slow" $((c0 + 50))
echo "# batch: $(($(sim_calls "$slow") - c0)) of 50 syncs begun when the unregister returned"
# shellcheck disable=SC2086 # SLEEPING is a list of names
check "... and the batch still syncs" wait_until 60 waits_in "$batch" $SLEEPING
kill -KILL "$batch"
check "the batch, killed, ends" wait_until $((30 + 60)) gone "$batch"

# A batch of 10 syncs of a 2 s client on rxe1, which is removed meanwhile:
# the removal waits for the callback in flight, then the batch's other
# entries fail with ENODEV (a removal that waited for the whole batch would
# let all 10 run). 2 s: the removal reaches the client's state well within
# one callback of reading the count.
check "rdma link add rxe1 (a removal during a batch)" rdma link add rxe1 type rxe netdev veth1
rs_ms=$((2000 * SYNCMEM_SLOW))
[ "$rs_ms" -le 10000 ] || rs_ms=10000
rslow=$(ctl register --dev rxe1 --name rv-rslow --latency "${rs_ms}ms")
check "rv-rslow registered on rxe1" is_id "$rslow"
c0=$(sim_calls "$rslow")
syncmemctl sync --id "$(yes "$rslow" | head -n 10 | paste -sd,)" --timeout 60s -j \
	>"$tmp/rbatch.json" 2>"$tmp/rbatch.err" &
batch=$!
check "a batch of 10 is in rv-rslow's syncs" wait_until 60 calls_from "$rslow" $((c0 + 1))
c1=$(sim_calls "$rslow")
check "rv-rslow's count readable" is_num "$c1"
check "rdma link delete rxe1 during the batch" rdma link delete rxe1
ended_within "$batch" $((10 * 2 + 60))
check "the batch ends (exit 1: its clients failed)" expect exit "${ENDED_RC:-killed}" 1
cat "$tmp/rbatch.json" "$tmp/rbatch.err" >&2
ran=$(jq '[.results[] | select(.err == null)] | length' "$tmp/rbatch.json")
enodev=$(jq '[.results[] | select(.err == "ENODEV")] | length' "$tmp/rbatch.json")
echo "# removal: $((c1 - c0)) syncs begun before it, $ran ran in all, $enodev ENODEV" >&2
check "... the removal waited for at most the sync in flight" \
	test "$ran" -ge $((c1 - c0)) -a "$ran" -le $((c1 - c0 + 1))
check "... every other entry failed with ENODEV" expect "ENODEV entries" "$enodev" $((10 - ran))

# Caller A runs a device pass that stops in rv-slow (the client's hold);
# caller B arrives and waits for the next pass. An unregister of rv-x
# meanwhile waits for neither: not for B (before issue 31, a waiter held
# the read side), and not for A's pass over the others (before issue 32,
# the wait was for the device). The hold, not a latency, keeps A there
# while the checks run: each starts a process, and on TCG those took all
# of a 2 s latency.
echo 0 > "$SIMFS/clients/$slow/latency_us"
x=$(ctl register --dev rxe0 --name rv-x)
check "rv-x registered" is_id "$x"
c1=$(sim_calls "$slow")
echo 1 > "$SIMFS/clients/$slow/hold"
syncmemctl sync --dev rxe0 --timeout 60s >"$tmp/a.out" 2>&1 &
a=$!
check "pass A is held in rv-slow" wait_until 60 sim_held "clients/$slow/held" 1
syncmemctl sync --dev rxe0 --timeout 60s >"$tmp/b.out" 2>&1 &
b=$!
check "caller B waits for the next pass" wait_until 60 waits_in "$b" sm_sync_coalesced sm_sync_domain
check "unregister rv-x" ctl unregister id "$x"
# shellcheck disable=SC2086
check "... it returned while A's pass is still in rv-slow" waits_in "$a" $HELD
check "... and B still waits for the next pass" waits_in "$b" sm_sync_coalesced sm_sync_domain
echo 0 > "$SIMFS/clients/$slow/hold"
check "A ends 0" ended_ok "$a" 60
check "B ends 0" ended_ok "$b" 60
check "rv-slow synced once by each pass" calls_are "$slow" $((c1 + 2))
check "unregister rv-slow" ctl unregister id "$slow"

# A CLIENT_NEW whose reply cannot be delivered (the caller's receive buffer
# is full) deletes the client it made: the events show it come and go.
syncmemctl monitor -j >"$tmp/mon.json" 2>"$tmp/mon.err" &
mon=$!
check "monitor subscribed" wait_until 30 grep -q "monitoring ib_sync_mem events" "$tmp/mon.err"
run_prog reply_lost --dev rxe0 --name rv-lost
check "events: rv-lost created, then deleted" wait_until 30 jq_file \
	'[.[] | select(.name == "rv-lost") | .event] == ["client-new", "client-del"]' "$tmp/mon.json" -s
kill -TERM "$mon"
check "the monitor exits 0 on SIGTERM" ended_ok "$mon" 30
# What a broken module left behind, so that the checks below stand alone.
lost=$(ctl list -j | jq -r '.[] | select(.name == "rv-lost") | .id')
[ -z "$lost" ] || ctl unregister id "$lost"

# A CLIENT_DEL whose kind still lets go of what it holds of the device
# after the unregister (a region unpins its umem there) when the device
# goes: the removal waits for that deletion to end (before: it skipped the
# client being deleted and returned while its deletion still ran). The sim
# kind stops its next deletion after the unregister (hold_destroy).
check "rdma link add rxe1 (a deletion in flight)" rdma link add rxe1 type rxe netdev veth1
gone_del=$(ctl register --dev rxe1 --name rv-del)
check "rv-del registered on rxe1" is_id "$gone_del"
echo 1 > "$SIMFS/hold_destroy"
syncmemctl unregister id "$gone_del" >"$tmp/cdel.out" 2>&1 &
cdel=$!
check "deletion: CLIENT_DEL of rv-del stops after its unregister" wait_until 60 sim_held held_destroy 1
rdma link delete rxe1 >"$tmp/del.out" 2>&1 &
del=$!
DEL_WAIT="sm_nl_wait_dying sm_nl_domain_removed"
# shellcheck disable=SC2086
check "deletion: the removal reaches the wait, or returns" wait_until 120 waiting_or_gone "$del" $DEL_WAIT
# shellcheck disable=SC2086
check "deletion: the removal waits for the deletion in flight" waits_in "$del" $DEL_WAIT
check "deletion: ... and CLIENT_DEL still waits for it" waits_in "$cdel" sm_nl_obj_delete_wait sm_nl_client_del_doit
echo 0 > "$SIMFS/hold_destroy"
check "deletion: CLIENT_DEL ends 0" ended_ok "$cdel" 60
cat "$tmp/cdel.out" >&2
check "deletion: then the removal returns" ended_ok "$del" 120
check "deletion: nothing stopped at the window" sim_held held_destroy 0
check "deletion: rxe1 is gone" lacks_device rxe1

check "load ib_sync_mem_test" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0

# A client a kernel driver registered cannot be deleted over netlink: EBUSY,
# saying whose it is (not ENOENT, not deleted).
check "a driver's client on rxe0" run_step bulk_register 1
drv=$(ctl list --dev rxe0 -j | jq -r '[.[] | select(.origin == "kernel") | .id] | if length == 1 then .[0] else empty end')
check "... one, listed with origin kernel" is_id "$drv"
check "CLIENT_DEL of it: EBUSY, a kernel driver's" fails_with \
	"^Error: $drv: Device or resource busy \(client was registered by a kernel driver\)\$" \
	"$SYNCMEM_BIN/smnlctl" del "$drv"
check "... and it is still registered" jq_of '.[0].state == "live"' ctl list --id "$drv" -j
check "the driver unregisters it" run_step bulk_unregister

# A client's memory goes away and its ->invalidate blocks in another task;
# the device is removed meanwhile. The removal waits for that ->invalidate
# (before: it saw the call made and returned while it still ran).
check "rdma link add rxe1" rdma link add rxe1 type rxe netdev veth1
check "race: a memory ->invalidate blocks on rxe1" run_step inval_race_start rxe1
rdma link delete rxe1 >"$tmp/del.out" 2>&1 &
del=$!
INVAL_WAIT="sm_call_invalidate sm_domain_invalidate_all"
# shellcheck disable=SC2086
check "race: the removal reaches the wait, or returns" wait_until 120 waiting_or_gone "$del" $INVAL_WAIT
# shellcheck disable=SC2086
check "race: the removal waits for the ->invalidate running elsewhere" waits_in "$del" $INVAL_WAIT
check "race: the ->invalidate returns" run_step inval_race_check
check "race: then the removal returns" ended_ok "$del" 120
check "race: the in-kernel checks passed" kt_case_ok removal_waits_for_invalidate
check "race: rxe1 is gone" lacks_device rxe1

# A client whose sync runs on its kind's own engine (->sync_async: a fence
# the test signals) when its device goes: the removal waits for that sync
# before it calls ->invalidate (before: it waited only for the SRCU readers,
# and called ->invalidate while the engine still ran).
check "rdma link add rxe1 (an engine's sync)" rdma link add rxe1 type rxe netdev veth1
check "engine: a client's sync runs on its kind's engine on rxe1" run_step kind_removal_start rxe1
rdma link delete rxe1 >"$tmp/del.out" 2>&1 &
del=$!
IDLE_WAIT="sm_client_wait_idle sm_domain_invalidate_all"
# shellcheck disable=SC2086
check "engine: the removal reaches the wait, or returns" wait_until 120 waiting_or_gone "$del" $IDLE_WAIT
check "engine: the engine's sync ends" run_step kind_removal_engine
check "engine: then the removal returns" ended_ok "$del" 120
check "engine: no ->invalidate before the engine's sync ended, one after" run_step kind_removal_check
check "engine: the in-kernel checks passed" kt_case_ok removal_waits_for_engine
check "engine: rxe1 is gone" lacks_device rxe1

# A blocking sync of client X waits in its ->sync for the fence of client
# Y's asynchronous sync J, which waits for an in-fence nobody signals (a
# dma-buf client whose reservation holds J's fence). The removal cancels J
# (-ENODEV) before it waits for X's sync, which ends with J's error (before:
# it waited for X's sync first, which ended only at its own deadline).
check "rdma link add rxe1 (a sync waiting for a job)" rdma link add rxe1 type rxe netdev veth1
check "cancel: X's sync waits for J, J for an in-fence" run_step fence_removal_start rxe1
check "cancel: rdma link delete rxe1" timeout $((120 * SYNCMEM_SLOW)) rdma link delete rxe1
check "cancel: J signalled -ENODEV, X's sync ended with it, nothing run" run_step fence_removal_check
check "cancel: the in-kernel checks passed" kt_case_ok removal_cancels_before_waiting
check "cancel: rxe1 is gone" lacks_device rxe1

# A dump across a device's removal. 2,000 clients on rxe2 and a sync in
# flight that the removal waits for; the test module holds the device's
# domain lock, so the removal stops after it took the device off the list
# (its first generation bump), before it changes its clients' state. A dump
# begins there and stops after its first part (all live); the removal then
# invalidates every client and waits for the sync; the dump reads the rest
# (invalidated). It saw both states, so it must not call itself consistent
# (before: the generation moved only after that wait, so it did).
check "rdma link add rxe2 (a dump across its removal)" rdma link add rxe2 type rxe netdev veth1
check "dump: 2,000 clients and a sync in flight on rxe2, its lock held" run_step dump_window_start rxe2
rdma link delete rxe2 >"$tmp/del.out" 2>&1 &
del=$!
check "dump: the removal took rxe2 off the list" wait_until 30 lacks_device rxe2
mkfifo "$tmp/go"
"$SYNCMEM_BIN/dump_window" rxe2 <"$tmp/go" >"$tmp/dw.out" 2>"$tmp/dw.err" &
dw=$!
exec 7>"$tmp/go"
check "dump: its first part is read" wait_until 30 grep -qx paused "$tmp/dw.out"
check "dump: the removal invalidates every client, then waits for the sync" run_step dump_window_flip
echo go >&7
exec 7>&-
check "dump: the dump ends" ended_ok "$dw" 60
cat "$tmp/dw.out" "$tmp/dw.err" >&2
check "dump: ... it saw rxe2's clients live, then invalidated" \
	grep -qE '^live [1-9][0-9]* invalidated [1-9][0-9]* ' "$tmp/dw.out"
check "dump: ... and does not call itself consistent" grep -qE ' consistent no$' "$tmp/dw.out"
check "dump: the in-kernel checks, then the removal returns" run_step dump_window_check
check "dump: the removal returns" ended_ok "$del" 120
check "dump: the in-kernel checks passed" kt_case_ok dump_across_removal
# A dump across one client's invalidation (its memory went): 2,000 clients
# of a driver on rxe0, a dump stopped after its first part; the first of
# them is invalidated while a sync of it is in flight, which holds the
# invalidation after its state change, before its ->invalidate (whose own
# generation bump would hide a missing one); the dump reads the rest.
# The registry changed under it: it must not call itself consistent (a
# careless edit: an invalidation that does not move the generation).
n0=$(ctl list --dev rxe0 -j | jq 'length')
check "inval: rxe0's clients counted" is_num "$n0"
check "inval: 2,000 clients of a driver on rxe0" run_step bulk_register 2000
mkfifo "$tmp/go-inval"
"$SYNCMEM_BIN/dump_window" rxe0 <"$tmp/go-inval" >"$tmp/dwi.out" 2>"$tmp/dwi.err" &
dw=$!
exec 7>"$tmp/go-inval"
check "inval: the dump's first part is read" wait_until 30 grep -qx paused "$tmp/dwi.out"
check "inval: the first client's memory goes, a sync of it in flight" run_step bulk_invalidate_held
echo go >&7
exec 7>&-
check "inval: the dump ends" ended_ok "$dw" 60
check "inval: the sync and the invalidation end, one ->invalidate" run_step bulk_invalidate_release
cat "$tmp/dwi.out" "$tmp/dwi.err" >&2
check "inval: ... it saw each of rxe0's clients once" \
	expect clients "$(awk '$1 == "live" { print $2 + $4 }' "$tmp/dwi.out")" $((n0 + 2000))
check "inval: ... and does not call itself consistent" grep -qE ' consistent no$' "$tmp/dwi.out"
check "inval: the driver unregisters them" run_step bulk_unregister
check "unload ib_sync_mem_test" rmmod ib_sync_mem_test

check "no client left" counters_zero
check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
finish
