#!/usr/bin/env bash
# Faults across the wire (vm/run.sh --two-hosts), in order on both hosts:
#
#   kill    host A's canary is SIGKILLed mid-run: its owned client goes
#           with it; host B's canary sees its peer go and its own client
#           stays live and syncable both ways
#   drop    the wire goes down on A in the middle of ib_write_bw: A's
#           traffic fails (the QP goes to error), both perftest ends exit
#           once the wire is back; no splat, no leak
#   delete  "rdma link delete rxe0" on B while A's canary writes into B's
#           region client: each of B's clients is invalidated exactly once
#           (the monitor's events), then goes with the device; A's writes
#           end in an error completion with its QP in error, and A's client
#           stays live and syncable; rxe0 is added back on B
#   resume  a fresh canary passes both ways over the restored wire and B's
#           new rxe0
#
# dmesg of both guests is checked by the harness (vm.ktap's dmesg-clean).
. "$(dirname "$0")/../vm/lib.sh"
suite_begin
: "${SYNCMEM_WIRE_ROLE:?not on a two-host run (vm/run.sh --two-hosts)}"

BIN=$SYNCMEM_BIN
NIC=$SYNCMEM_WIRE_NIC
gid=$(roce_v2_gid rxe0 "$SYNCMEM_WIRE_IP")
canary=(--role "$SYNCMEM_WIRE_ROLE" --dev rxe0 --ip "$SYNCMEM_WIRE_IP" --peer "$SYNCMEM_WIRE_PEER")
is_a() { [ "$SYNCMEM_WIRE_ROLE" = a ]; }
port_active() { rdma link show rxe0/1 | grep -q "state ACTIVE"; }

check "insmod ib_sync_mem" sm_load

# ---- kill: SIGKILL of the writer on A ----
if is_a; then
	"$BIN/wire_canary" "${canary[@]}" --tcp-port 18521 --rounds 100000 \
		--size 262144 >/tmp/kill.out 2>&1 &
	pid=$!
	check "kill: A's canary is mid-run (its WRITE round 2 passed)" \
		wait_until 180 grep -q "^ok .* WRITE round 2:" /tmp/kill.out
	check "kill: SIGKILL A's canary" kill -KILL "$pid"
	ended_within "$pid" 60
	check "kill: it died of SIGKILL" test "${ENDED_RC:-}" = 137
	cat /tmp/kill.out >&2
	check "kill: its client went with it" wait_until 60 counters_zero
else
	run_prog wire_canary "${canary[@]}" --tcp-port 18521 --rounds 100000 \
		--size 262144 --peer-may-vanish
	check "kill: B's client unregistered by its canary, nothing left" counters_zero
fi

# ---- drop: the wire down and up again under traffic ----
args=(-d rxe0 -x "$gid" -p 18522 -F -n 1000000 -s 65536)
sent_pkts() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts; }
# writer_running: A's ib_write_bw has its QP in RTS (the kernel's state,
# not perftest's buffered output) and rxe0 has sent 100 packets since
# $sent0. A QP in RTS alone is not traffic: perftest swaps one more
# message over its TCP socket after it, and a wire taken down then leaves
# both ends waiting on TCP, not failing on RDMA (CI, 2026-12-05).
writer_rts() {
	rdma res show qp link rxe0/1 2>/dev/null | grep "comm ib_write_bw" | grep -q "state RTS"
}
writer_running() {
	writer_rts || return 1
	[ -n "$rts_sent" ] || rts_sent=$(($(sent_pkts) - sent0))
	[ "$(sent_pkts)" -ge $((sent0 + 100)) ]
}
# start_writer: ib_write_bw in the background (pid in $pid) until its
# RDMA writes flow, started again while B's server is not up yet.
start_writer() {
	local end=$((SECONDS + 120 * SYNCMEM_SLOW)) sent0 rts_sent
	while [ "$SECONDS" -lt "$end" ]; do
		sent0=$(sent_pkts) || return 1
		rts_sent=
		ib_write_bw "${args[@]}" "$SYNCMEM_WIRE_PEER" >/tmp/drop.out 2>&1 &
		pid=$!
		while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do
			if writer_running; then
				echo "drop: rxe0 had sent $rts_sent packets when the QP was seen in RTS," \
					"$(($(sent_pkts) - sent0)) now" >&2
				return 0
			fi
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && break
		wait "$pid"
		cat /tmp/drop.out >&2
		sleep 0.5
	done
	rdma res show qp >&2
	return 1
}
if is_a; then
	check "drop: ib_write_bw A -> B is writing (1,000,000 messages: it cannot finish)" start_writer
	check "drop: ip link set $NIC down" ip link set "$NIC" down
	ended_within "$pid" 120
	check "drop: A's traffic fails while the wire is down" test "${ENDED_RC:-0}" -ne 0
	cat /tmp/drop.out >&2
	check "drop: ip link set $NIC up" ip link set "$NIC" up
	check "drop: rxe0's port is active again" wait_until 60 port_active
else
	ib_write_bw "${args[@]}" >/tmp/drop.out 2>&1 &
	pid=$!
	check "drop: B's ib_write_bw server ends once A's traffic failed and the wire is back" \
		ended_within "$pid" 300
	cat /tmp/drop.out >&2
	echo "drop: B's server exited $ENDED_RC" >&2
fi

# ---- delete: rxe0 deleted on B under A's writes ----
ld=(--tcp-port 18524 --rounds 2 --size 262144 --link-delete)
if is_a; then
	run_prog wire_canary "${canary[@]}" "${ld[@]}"
	check "delete: A's rxe0 is still active" port_active
else
	events=/tmp/delete.events
	syncmemctl -j monitor >"$events" 2>/tmp/delete.monitor &
	mon=$!
	check "delete: monitor subscribed" \
		wait_until 30 grep -q "monitoring ib_sync_mem events" /tmp/delete.monitor
	check "delete: insmod ib_sync_mem_sim" sim_load
	simid=$(ctl register dev rxe0 name delete-sim)
	check "delete: a sim client on rxe0 beside the canary's region" is_id "$simid"
	# The canary says when A's writes land; rxe cannot disassociate its
	# user context, so the deletion returns only once the canary closed
	# its verbs resources.
	rm -f /tmp/delete.ready
	(wait_until 300 test -e /tmp/delete.ready && rdma link delete rxe0) &
	del=$!
	run_prog wire_canary "${canary[@]}" "${ld[@]}" --ready-file /tmp/delete.ready
	check "delete: rdma link delete rxe0 returned once the canary closed its device" \
		ended_ok "$del" 120
	check "delete: the monitor saw rxe0 go" \
		wait_until 30 grep -q '"event":"dev-del"' "$events"
	kill -TERM "$mon"
	check "delete: the monitor exits on SIGTERM" ended_ok "$mon" 30
	cat "$events" >&2
	# Each of B's two clients: new, invalidated once (by the device), gone.
	check "delete: B's clients each invalidated exactly once, by the device, then deleted" jq_file "
		. as \$ev | [\$ev[] | select(.event == \"client-new\") | .id] as \$ids |
		(\$ids | length) == 2 and any(\$ids[]; . == $simid) and
		all(\$ids[]; . as \$i |
			([\$ev[] | select(.id == \$i and .event == \"client-invalidated\")] |
				length == 1 and .[0].inval_reason == \"device\") and
			([\$ev[] | select(.id == \$i and .event == \"client-del\")] | length == 1)) and
		([\$ev[] | select(.event == \"dev-del\")] | length == 1 and .[0].dev == \"rxe0\")" \
		"$events" -s
	check "delete: rdma link add rxe0 on the wire again" \
		rdma link add rxe0 type rxe netdev "$NIC"
	check "delete: rxe0's port is active" wait_until 60 port_active
	check "delete: rmmod ib_sync_mem_sim" sim_unload
fi

# ---- resume: the canary over the restored wire ----
run_prog wire_canary "${canary[@]}" --tcp-port 18523 --rounds 4 --size 1048576

no_client_left "no client left behind"
check "rmmod ib_sync_mem" sm_unload
finish
