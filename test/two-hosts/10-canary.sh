#!/usr/bin/env bash
# Two hosts, run on each of them (vm/run.sh --two-hosts): host A's CPU
# writes, A syncs to-device, A's rxe0 writes into host B's memory over the
# wire, B syncs to-cpu and compares every byte; then B's data the other
# way, by RDMA READ from A; then A's WRITEs into an accelerator's memory on
# B, stale until B flushes inbound. wire_canary's results become this
# suite's, as "wire_canary: <test>"; both hosts report every round.
. "$(dirname "$0")/../vm/lib.sh"
suite_begin
: "${SYNCMEM_WIRE_ROLE:?not on a two-host run (vm/run.sh --two-hosts)}"

SIZE=1048576 ROUNDS=8
nic_bytes() { cat "/sys/class/net/$SYNCMEM_WIRE_NIC/statistics/$1_bytes"; }
# at_least V MIN: V is a number of at least MIN
at_least() { echo "$1 >= $2" >&2; is_num "$1" && [ "$1" -ge "$2" ]; }

# no_other_network: lo and the wire are the only links, and no route
# leaves 198.18.0.0/15 (no default route).
no_other_network() {
	ip -br link >&2
	ip route show >&2
	[ "$(ls /sys/class/net | grep -vxF -e lo -e "$SYNCMEM_WIRE_NIC")" = "" ] &&
		[ -z "$(ip route show default)" ] &&
		! ip route show | grep -vqE '^198\.1[89]\.'
}

check "rxe0 is on the wire ($SYNCMEM_WIRE_NIC, $SYNCMEM_WIRE_IP)" \
	rdma_link_on rxe0 "$SYNCMEM_WIRE_NIC"
check "no other network: lo and the wire, no default route" no_other_network
check "insmod ib_sync_mem" sm_load
tx0=$(nic_bytes tx) rx0=$(nic_bytes rx)
# The other guest boots at its own pace: wire_canary's TCP connect,
# retried, is the meeting point.
run_prog wire_canary --role "$SYNCMEM_WIRE_ROLE" --dev rxe0 \
	--ip "$SYNCMEM_WIRE_IP" --peer "$SYNCMEM_WIRE_PEER" --size "$SIZE" --rounds "$ROUNDS"
ip -s link show dev "$SYNCMEM_WIRE_NIC" >&2
# A's WRITEs and B's READ responses: each way at least the rounds' bytes.
check "the wire carried the data out ($((ROUNDS * SIZE)) bytes or more)" \
	at_least "$(($(nic_bytes tx) - tx0))" $((ROUNDS * SIZE))
check "the wire carried the data in ($((ROUNDS * SIZE)) bytes or more)" \
	at_least "$(($(nic_bytes rx) - rx0))" $((ROUNDS * SIZE))
# The inbound canary: B's buffer is a sim accelerator's memory. After A's
# WRITE lands, B's accelerator still reads the last round's bytes; after
# an inbound flush, the new ones, every byte.
check "insmod ib_sync_mem_sim" sim_load
run_prog wire_canary --role "$SYNCMEM_WIRE_ROLE" --dev rxe0 --tcp-port 18517 \
	--ip "$SYNCMEM_WIRE_IP" --peer "$SYNCMEM_WIRE_PEER" --size 262144 --rounds 4 --inbound
check "rmmod ib_sync_mem_sim" sim_unload
no_client_left "no client left behind"
check "rmmod ib_sync_mem" sm_unload
finish
