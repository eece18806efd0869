#!/usr/bin/env bash
# The registry core: the in-kernel KTAP suite of ib_sync_mem_test (its
# results land in kernel-core.ktap beside this suite's, one for one), with
# the steps that need userspace in the middle driven from here: a device
# removed during a sync storm, a dump inside ->fill_info while its client is
# unregistered, a netlink sync and a netlink delete killed while they wait
# for a pass, a device removed under clients that unregister from
# ->invalidate; then replies at the documented limits (a device sync and a
# batch of IB_SYNC_MEM_SYNC_BATCH_MAX clients) and the module reference
# rules seen from a shell.
. "$(dirname "$0")/lib.sh"
suite_begin

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kernel_ktap=$SYNCMEM_RESULTS/kernel-core.ktap
TR=/sys/kernel/tracing

if [ "$SYNCMEM_LANE" = soak ]; then
	iters=5000
elif [ "${SYNCMEM_ON_DEBUG_KERNEL:-0}" = 1 ]; then
	# KASAN and lockdep make the debug kernel many times slower under TCG.
	iters=200
else
	iters=1000
fi

check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load
check "load ib_sync_mem_test" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0 churn_iters=$iters
cases=$(cat "$KTFS/list")
check "the test module lists its cases" test -n "$cases"

# The tracepoints: all of them exist, and one client's life reads in order.
events="sync_start sync_end client_sync client_register client_unregister
client_invalidate client_move client_revalidate domain_add domain_remove"
missing=0
for e in $events; do
	[ -d "$TR/events/ib_sync_mem/$e" ] || { echo "missing event $e" >&2; missing=1; }
done
check "tracepoints present" test $missing = 0
echo > "$TR/trace"
echo 1 > "$TR/events/ib_sync_mem/enable"
# The stress cases run beside a dump loop with CAP_NET_ADMIN, which calls
# every live client's ->fill_info while the cases unregister them.
dumps_start() {
	rm -f "$tmp/stop-dumps"
	(while [ ! -e "$tmp/stop-dumps" ]; do syncmemctl list -j >/dev/null 2>&1; done) &
	dumper=$!
}
dumps_stop() { touch "$tmp/stop-dumps"; wait "$dumper"; }
for t in $cases; do
	echo "--- kernel test $t" >&2
	case $t in churn | batch_churn | lazy_stress) dumps_start ;; esac
	run_step "$t" || echo "run $t failed" >&2
	case $t in churn | batch_churn | lazy_stress) dumps_stop ;; esac
	[ "$t" = register_unregister ] && echo 0 > "$TR/events/ib_sync_mem/enable"
done
# register_unregister registers one client, syncs it once and unregisters.
life=$(awk '!/^#/ { for (i = 1; i <= NF; i++) if ($i ~ /^(sync_start|sync_end|client_sync|client_register|client_unregister):$/) print $i }' "$TR/trace" | tr -d : | tr '\n' ' ')
echo "trace: $life" >&2
check "trace shows register, sync start, client sync, sync end, unregister" \
	expect trace "$life" "client_register sync_start client_sync sync_end client_unregister "

# Device removal while syncs and registrations are in flight.
check "rdma link add rxe1" rdma link add rxe1 type rxe netdev veth1
check "storm started on rxe1" run_step storm_start rxe1
# Delete the device once the storm has synced and registered on it.
check "the storm syncs and registers on rxe1" run_step storm_wait
check "rdma link delete rxe1 during the storm" rdma link delete rxe1
check "storm checked" run_step storm_check
check "rxe1 is gone from the registry" lacks_device rxe1

# A device listener: the replay tells of rxe0 before listen returns; rxe1
# comes and goes twice. Each add registers a client that the remove syncs
# and unregisters before the device's clients are invalidated.
check "listener: listen (the replay adds rxe0)" run_step listener_start
for round in 1 2; do
	check "listener: rdma link add rxe1 (round $round)" rdma link add rxe1 type rxe netdev veth1
	check "listener: rdma link delete rxe1 (round $round)" rdma link delete rxe1
done
check "listener: adds and removes paired, no ->invalidate" run_step listener_check

# A dump inside a client's ->fill_info while the client is unregistered.
check "fill_info: a client whose ->fill_info waits" run_step fill_info_start
syncmemctl list -j >"$tmp/fill.json" 2>"$tmp/fill.err" &
dump=$!
check "fill_info: unregister waits for the dump's ->fill_info" run_step fill_info_check
check "fill_info: the dump completes" ended_ok "$dump" 120

# Callers waiting for a pass that does not end: SIGKILL ends them.
check "killable: a pass blocks in a client" run_step killable_start
syncmemctl sync --dev rxe0 --timeout 600s >"$tmp/kw.out" 2>&1 &
waiter=$!
check "killable: a netlink device sync waits for the pass" \
	wait_until 60 grep -q "^to-device 1 " "$KTFS/waiters"
kill -KILL "$waiter"
check "killable: SIGKILL ends the waiting netlink sync" wait_until 30 gone "$waiter"
# A delete of another client waits for its own callbacks, not the pass.
kid=$(ctl register --dev rxe0 --name killable-other)
check "killable: a netlink client on the device" is_id "$kid"
check "killable: deleting it does not wait for the blocked pass" ctl unregister id "$kid"
# A delete that waits (the sim holds its deletion after the unregister).
kid=$(ctl register --dev rxe0 --name killable-del)
check "killable: another netlink client on the device" is_id "$kid"
echo 1 > "$SIMFS/hold_destroy"
syncmemctl unregister id "$kid" >"$tmp/kd.out" 2>&1 &
deleter=$!
check "killable: its deletion is held after the unregister" wait_until 60 sim_held held_destroy 1
check "killable: its netlink delete waits for the deletion" wait_until 60 waits_in "$deleter" sm_nl_obj_delete_wait sm_nl_client_del_doit
kill -KILL "$deleter"
check "killable: SIGKILL ends the waiting netlink delete" wait_until 30 gone "$deleter"
echo 0 > "$SIMFS/hold_destroy"
check "killable: the pass ends" run_step killable_check
check "killable: the killed delete still deleted the client" wait_until 60 lacks_client "$kid"

# Clients that unregister themselves from ->invalidate, on device removal.
check "rdma link add rxe1 (invalidate)" rdma link add rxe1 type rxe netdev veth1
check "invalidate: clients that unregister on invalidation" run_step inval_dev_start rxe1
check "invalidate: rdma link delete rxe1" timeout $((120 * SYNCMEM_SLOW)) rdma link delete rxe1
check "invalidate: every client unregistered and released" run_step inval_dev_check

# Asynchronous syncs waiting for an in-fence when their device goes.
check "rdma link add rxe1 (async)" rdma link add rxe1 type rxe netdev veth1
check "async: a client's and the device's syncs wait for an in-fence" run_step async_dev_start rxe1
check "async: rdma link delete rxe1" timeout $((120 * SYNCMEM_SLOW)) rdma link delete rxe1
check "async: both fences signalled -ENODEV by the removal, once, nothing run" run_step async_dev_check

# Inbound flushes across a link that went down and up: a READ fails while
# veth0 is down, and the flusher's QP recovers once it is up (for the old
# client and for a new one). The flushes wait for rxe0's port and a RoCE
# v2 GID to be back first.
rxe_ready() {
	local g i
	grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" || return 1
	for g in /sys/class/infiniband/"$1"/ports/1/gid_attrs/types/*; do
		i=${g##*/}
		[ "$(cat "$g" 2>/dev/null)" = "RoCE v2" ] || continue
		[ "$(cat "/sys/class/infiniband/$1/ports/1/gids/$i")" != \
		  0000:0000:0000:0000:0000:0000:0000:0000 ] && return 0
	done
	return 1
}
check "inbound recovery: a client on rxe0 flushed" run_step inbound_recover_start
check "inbound recovery: ip link set veth0 down" ip link set veth0 down
check "inbound recovery: a flush with veth0 down fails the QP" run_step inbound_recover_down
check "inbound recovery: ip link set veth0 up" ip link set veth0 up
check "inbound recovery: rxe0 active with a RoCE v2 GID again" wait_until 60 rxe_ready rxe0
check "inbound recovery: the old and a new client flush again" run_step inbound_recover_check
dmesg | grep -E 'inbound' | tail -n 5 >&2

# A device whose inbound flusher cannot be made (debugfs
# inbound_fail_create, set and cleared by the steps): its flushes fail with
# the creation's errno and return, twice (no lock left held), asynchronous
# ones never make it, a blocking one does once it can; the device's removal
# returns. rxe1 needs a RoCE v2 GID: an address on veth1 for the test.
check "rdma link add rxe1 (no flusher)" rdma link add rxe1 type rxe netdev veth1
check "inbound no flusher: an address on veth1" ip addr add 192.168.75.2/32 dev veth1
check "inbound no flusher: rxe1 active with a RoCE v2 GID" wait_until 60 rxe_ready rxe1
# A flush that never returns (a lock its creation kept) would hold the step
# for ever, and the removal behind that lock: the step runs aside, bounded.
rm -f "$tmp/nocreate.rc"
(run_step inbound_nocreate_start rxe1; echo $? > "$tmp/nocreate.rc") &
check "inbound no flusher: flushes fail with its errno, return, then a blocking one makes it" \
	wait_until $((120 * SYNCMEM_SLOW)) test -s "$tmp/nocreate.rc"
if [ "$(cat "$tmp/nocreate.rc" 2>/dev/null)" = 0 ]; then
	check "inbound no flusher: rdma link delete rxe1" timeout $((120 * SYNCMEM_SLOW)) rdma link delete rxe1
else
	not_ok "inbound no flusher: rdma link delete rxe1 # not tried: the step did not return"
fi
check "inbound no flusher: the address off veth1" ip addr del 192.168.75.2/32 dev veth1
check "inbound no flusher: every expectation held" run_step inbound_nocreate_check

# Replies at the documented limits: a device sync of as many clients as a
# device may have and a batch of as many as a request may name.
limit=$(awk '$2 == "IB_SYNC_MEM_SYNC_BATCH_MAX" { print $3 }' \
	"$SYNCMEM_TOP/kmod/include/uapi/linux/ib_sync_mem.h")
limit=${limit:-2048}
echo "# limits: batch and device $limit clients"
check "limits: $limit clients on rxe0" run_step bulk_register "$limit"
check "limits: a device sync of $limit clients, $limit results" jq_of \
	"type == \"object\" and .run == $limit and .errors == 0 and (.results | length) == $limit and
	 ([.results[].id] | unique | length) == $limit" ctl sync --dev rxe0 -j
ids=$(ctl list --dev rxe0 -j | jq -r '[.[].id] | join(",")')
check "limits: list --dev rxe0 shows all $limit" test "$(tr ',' '\n' <<<"$ids" | grep -c .)" = "$limit"
check "limits: a batch of $limit, results in request order" jq_of \
	".run == $limit and .errors == 0 and ([.results[].id] | map(tostring) | join(\",\")) == \"$ids\"" \
	ctl sync --id "$ids" -j
# syncmemctl's pkg/genl refuses a batch past the limit before the kernel
# is asked: the kernel's own bound is asked through nlsync, which sends
# the batch as it is.
check "limits: the kernel runs a batch of $limit sent as it is" expect "nlsync sync-batch" \
	"$("$SYNCMEM_BIN/nlsync" sync-batch "$ids")" "run $limit errors 0 skipped 0 results $limit"
check "limits: the kernel refuses a batch of $((limit + 1)) with EINVAL" fails_with \
	"^Error: sync-batch: Invalid argument \\(a batch names 1 to $limit clients\\)\$" \
	"$SYNCMEM_BIN/nlsync" sync-batch "$ids,${ids%%,*}"
check "limits: client $((limit + 1)) on rxe0 is refused" \
	fails_with "client limit reached" ctl register --dev rxe0 --name one-too-many
check "limits: unregister the $limit" run_step bulk_unregister
unregister_all >/dev/null 2>&1

cat "$KTFS/results" > "$kernel_ktap"
# The listed cases, and the two-step ones here: device_removal_storm,
# fill_info_after_unregister, killable_waits, invalidate_unregister_device,
# device_listener, async_across_removal, inbound_recovery,
# inbound_no_flusher.
expect=$(($(echo "$cases" | wc -w) + 8))
got=$(grep -cE '^(not )?ok ' "$kernel_ktap")
check "in-kernel suite reported all $expect results" expect results "$got" "$expect"
check "object counters back to zero" wait_until 30 counters_zero
check "unload ib_sync_mem_test" rmmod ib_sync_mem_test

# Module references: a sim client pins the sim module; the sim module
# pins ib_sync_mem.
id=$(sim_new rxe0 pinned latency_us=0)
check "sim client created" is_id "$id"
check "rmmod ib_sync_mem_sim refused while its client lives" rmmod_busy ib_sync_mem_sim
check "rmmod ib_sync_mem refused while ib_sync_mem_sim is loaded" fails_as \
	'^rmmod: ERROR: Module ib_sync_mem is in use by: ib_sync_mem_sim$' rmmod ib_sync_mem
check "delete the sim client" sim_del "$id"
check "deleting it again fails with ENOENT" fails_as 'write error: No such file or directory$' sim_del "$id"
check "rmmod ib_sync_mem_sim" sim_unload
check "object counters zero before unload" counters_zero
check "rmmod ib_sync_mem" sm_unload
finish
