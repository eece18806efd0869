#!/usr/bin/env bash
# The registry core: the in-kernel KTAP suite of ib_sync_mem_test (its
# results land in kernel-core.ktap beside this suite's), the device-removal
# storm driven from here, and the module reference rules seen from a shell.
. "$(dirname "$0")/lib.sh"

kernel_ktap=$SYNCMEM_RESULTS/kernel-core.ktap

check "load ib_sync_mem" sm_load
# KASAN and lockdep make the debug kernel many times slower under TCG.
iters=2000
[ "${SYNCMEM_ON_DEBUG_KERNEL:-0}" = 1 ] && iters=300
check "load ib_sync_mem_test" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0 churn_iters=$iters
cases=$(cat "$KTFS/list")

# The tracepoints: all nine exist, and one client's life reads in order.
TR=/sys/kernel/tracing
events="sync_start sync_end client_sync client_register client_unregister
client_invalidate domain_add domain_remove"
missing=0
for e in $events; do
	[ -d "$TR/events/ib_sync_mem/$e" ] || { echo "missing event $e" >&2; missing=1; }
done
check "tracepoints present" test $missing = 0
echo > "$TR/trace"
echo 1 > "$TR/events/ib_sync_mem/enable"
for t in $cases; do
	echo "--- kernel test $t" >&2
	echo "$t" > "$KTFS/run" || echo "run $t failed" >&2
	[ "$t" = register_unregister ] && echo 0 > "$TR/events/ib_sync_mem/enable"
done
# register_unregister registers one client, syncs it once and unregisters.
life=$(awk '!/^#/ { for (i = 1; i <= NF; i++) if ($i ~ /^(sync_start|sync_end|client_sync|client_register|client_unregister):$/) print $i }' "$TR/trace" | tr -d : | tr '\n' ' ')
echo "trace: $life" >&2
check "trace shows register, sync start, client sync, sync end, unregister" \
	test "$life" = "client_register sync_start client_sync sync_end client_unregister "

# Device removal while syncs and registrations are in flight.
check "rdma link add rxe1" rdma link add rxe1 type rxe netdev veth1
echo "storm_start rxe1" > "$KTFS/run"
sleep 2
check "rdma link delete rxe1 during the storm" rdma link delete rxe1
echo storm_check > "$KTFS/run"
check "rxe1 is gone from the registry" lacks_device rxe1

cat "$KTFS/results" > "$kernel_ktap"
expect=$(($(echo "$cases" | wc -w) + 1))
got=$(grep -cE '^(not )?ok ' "$kernel_ktap")
if [ "$got" -eq "$expect" ]; then
	ok "in-kernel suite reported all $expect tests"
else
	not_ok "in-kernel suite reported all tests # $got of $expect"
fi
check "object counters back to zero" counters_zero
check "unload ib_sync_mem_test" rmmod ib_sync_mem_test

# Module references: a sim client pins the sim module; the sim module
# pins ib_sync_mem.
check "load ib_sync_mem_sim" sim_load
id=$(sim_new rxe0 pinned latency_us=0)
check "sim client created" test -n "$id"
check_fail "rmmod ib_sync_mem_sim refused while its client lives" sim_unload
check_fail "rmmod ib_sync_mem refused while ib_sync_mem_sim is loaded" sm_unload
check "delete the sim client" sim_del "$id"
check_fail "deleting it again fails" sim_del "$id"
check "rmmod ib_sync_mem_sim" sim_unload
check "object counters zero before unload" counters_zero
check "rmmod ib_sync_mem" sm_unload
finish
