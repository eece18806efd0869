#!/usr/bin/env bash
# Syncs under traffic between two hosts (vm/run.sh --two-hosts): perftest's
# ib_write_bw and ib_read_bw from host A to host B over rxe0 (500 messages
# of 64 KiB, 32 MiB a run), each run twice, alone and with churn storms on both hosts (build/bin/churn:
# registers and deletes sim, region and dma-buf clients, syncs one, a batch
# and the whole device, dumps) for as long as the traffic lasts. Traffic
# completes, the storms meet no error they cannot explain, and A reports
# the bandwidth with the storm beside the bandwidth without it (a ratio in
# one run: a diagnostic, never pass/fail).
. "$(dirname "$0")/../vm/lib.sh"
suite_begin
: "${SYNCMEM_WIRE_ROLE:?not on a two-host run (vm/run.sh --two-hosts)}"

PORT=18516 ITERS=500 SIZE=65536
BIN=$SYNCMEM_BIN
gid=$(roce_v2_gid rxe0 "$SYNCMEM_WIRE_IP")

check "rxe0's RoCE v2 GID for $SYNCMEM_WIRE_IP" is_num "$gid"
check "insmod ib_sync_mem" sm_load
check "insmod ib_sync_mem_sim" sim_load
check "modprobe vgem" modprobe vgem

# perf TOOL OUT: one perftest run of ITERS messages of SIZE bytes, B
# serving and A connecting (retried while B's server is not up yet); on A,
# OUT's last line is the run's MiB/s by the wall clock, connection set-up
# included. Not perftest's own figure: under TCG its CPU clock sample
# sometimes fails ("Correlation coefficient r^2 < 0.9") and it reports
# 0 MiB/s for traffic that completed; re-running one side would break the
# pairing.
perf() {
	local tool=$1 out=$2 end=$((SECONDS + 120 * SYNCMEM_SLOW)) rc t0 t1
	# -u 20: about 4.3 s a retry (perftest's 14 is half a second in all):
	# a guest the host does not run for a moment is not a lost peer.
	local args=(-d rxe0 -x "$gid" -p "$PORT" -F -n "$ITERS" -s "$SIZE" -u 20)
	if [ "$SYNCMEM_WIRE_ROLE" = b ]; then
		timeout $((180 * SYNCMEM_SLOW)) "$tool" "${args[@]}" >"$out" 2>&1
		rc=$?
		cat "$out" >&2
		return $rc
	fi
	t0=$(date +%s%N)
	until timeout $((120 * SYNCMEM_SLOW)) "$tool" "${args[@]}" "$SYNCMEM_WIRE_PEER" >"$out" 2>&1; do
		rc=$?
		cat "$out" >&2
		grep -q "Couldn't connect" "$out" || return $rc
		[ "$SECONDS" -lt "$end" ] || return $rc
		sleep 0.5
		t0=$(date +%s%N)
	done
	t1=$(date +%s%N)
	cat "$out" >&2
	awk -v n="$ITERS" -v s="$SIZE" -v ns=$((t1 - t0)) \
		'BEGIN { printf "%.2f\n", n * s / 1048576 / (ns / 1e9) }' >>"$out"
}

# storm_start / storm_stop NAME: a churn worker on rxe0 until stopped; it
# must stop cleanly, with no unexpected error and device-wide syncs done.
storm_start() {
	"$BIN/churn" run --dev rxe0 --iters 0 --tag "$1" >"/tmp/$1.out" 2>&1 &
	storm_pid=$!
}
storm_stop() {
	local rc devsyncs
	kill -TERM "$storm_pid"
	ended_ok "$storm_pid" 60
	rc=$?
	cat "/tmp/$1.out" >&2
	devsyncs=$(sed -n 's/^counts .* sync_dev=\([0-9]*\) .*unexpected=0$/\1/p' "/tmp/$1.out")
	[ $rc -eq 0 ] && is_num "$devsyncs" && [ "$devsyncs" -gt 0 ]
}

bw_of() { tail -n1 "$1" | tr -d ' '; }

for tool in ib_write_bw ib_read_bw; do
	check "$tool A -> B alone" perf "$tool" "/tmp/$tool.base"
	storm_start "storm-$tool"
	check "$tool A -> B with a churn storm on both hosts" perf "$tool" "/tmp/$tool.storm"
	check "the storm beside $tool ran device-wide syncs and ended cleanly" storm_stop "storm-$tool"
	if [ "$SYNCMEM_WIRE_ROLE" = a ]; then
		base=$(bw_of "/tmp/$tool.base") storm=$(bw_of "/tmp/$tool.storm")
		echo "# $tool: $base MiB/s alone, $storm MiB/s beside the storms, ratio $(awk -v a="$storm" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')"
	fi
done

check "rmmod ib_sync_mem_sim" sim_unload
no_client_left "no client left behind"
check "rmmod ib_sync_mem" sm_unload
check "modprobe -r vgem" modprobe -r vgem
finish
