#!/usr/bin/env bash
# Two hosts, run on each of them (vm/run.sh --two-hosts): host A's CPU
# writes, A syncs to-device, A's rxe0 writes into host B's memory over the
# wire, B syncs to-cpu and compares every byte; then B's data the other
# way, by RDMA READ from A. wire_canary's results become this suite's, as
# "wire_canary: <test>"; both hosts report every round.
. "$(dirname "$0")/../vm/lib.sh"
suite_begin
: "${SYNCMEM_WIRE_ROLE:?not on a two-host run (vm/run.sh --two-hosts)}"

peer_answers() { ping -c 1 -W 1 "$SYNCMEM_WIRE_PEER"; }

check "rxe0 is on the wire ($SYNCMEM_WIRE_NIC, $SYNCMEM_WIRE_IP)" \
	rdma_link_on rxe0 "$SYNCMEM_WIRE_NIC"
check "insmod ib_sync_mem" sm_load
# The other guest boots at its own pace: its first answer is the event.
check "the peer $SYNCMEM_WIRE_PEER answers over the wire" wait_until 120 peer_answers
run_prog wire_canary --role "$SYNCMEM_WIRE_ROLE" --dev rxe0 \
	--ip "$SYNCMEM_WIRE_IP" --peer "$SYNCMEM_WIRE_PEER" --size 1048576 --rounds 8
ip -s link show dev "$SYNCMEM_WIRE_NIC" >&2
if counters_zero; then
	ok "no client left behind"
else
	not_ok "no client left behind # $(short "$(cat "$DEBUGFS/counters")")"
fi
check "rmmod ib_sync_mem" sm_unload
finish
