#!/usr/bin/env bash
# syncmemctl trace: the eBPF latency histograms of pkg/trace on the real
# tracepoints. The record layout the BPF programs assume against the
# kernel's format files; exact counts per client, log2 slots that match
# the sim latencies, errors by errno, the device and client filters; an
# outside reader (bpftrace) counting the same burst; nothing of ours left
# loaded afterwards; and the error messages without the module and without
# privilege.
. "$(dirname "$0")/lib.sh"
suite_begin

TR=/sys/kernel/tracing
N=50		# syncs of each of the fast and the slow client
P=4		# device-wide passes
M=20		# rounds of the burst the outside reader counts (2 syncs each)
SLOW_US=1500	# the slow client's latency
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

# log2 slot of a value, as the tracer computes it: 1500 -> 10.
slot_of() {
	local v=$1 s=0
	while [ "$v" -gt 1 ]; do v=$((v >> 1)); s=$((s + 1)); done
	echo $s
}
SLOW_SLOT=$(slot_of $SLOW_US)
SLOW_SLOT_NS=$(slot_of $((SLOW_US * 1000)))

# Tracers run in the background; their JSON goes to $tmp/NAME.json.
# tracer_start NAME ARGS...: start `syncmemctl trace ARGS` and wait until
# it has attached (it says so on stderr).
tracer_start() {
	local name=$1
	shift
	local pid i
	# Background jobs start with SIGINT ignored; give it back.
	env --default-signal=INT syncmemctl trace "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" &
	pid=$!
	echo $pid >"$tmp/$name.pid"
	for ((i = 0; i < 600; i++)); do
		grep -q "^Tracing ib_sync_mem syncs" "$tmp/$name.err" && return 0
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	echo "tracer $name did not start:"
	cat "$tmp/$name.err"
	return 1
}
# tracer_stop NAME: Ctrl-C it; it must exit 0 and leave one JSON report.
tracer_stop() {
	local pid rc
	pid=$(cat "$tmp/$1.pid")
	kill -INT "$pid"
	ended_within "$pid" 60
	rc=${ENDED_RC:-killed}
	cat "$tmp/$1.err"
	[ "$rc" = 0 ] || { echo "tracer $1 exited $rc"; return 1; }
	jq -e . "$tmp/$1.json" >/dev/null || { echo "tracer $1 left no JSON"; return 1; }
}
# q NAME JQ-ARGS...: query a tracer's report (which must be there).
q() {
	local name=$1
	shift
	[ -s "$tmp/$name.json" ] || { echo "no report $tmp/$name.json" >&2; return 1; }
	jq -r "$@" "$tmp/$name.json"
}
# count NAME KIND CLIENT DIR: events in that histogram.
count() {
	q "$1" --arg k "$2" --argjson c "$3" --arg d "$4" \
		'[.histograms[] | select(.kind == $k and .id == $c and .dir == $d) | .count] | add // 0'
}
# mass NAME KIND CLIENT DIR FROM TO: events in slots FROM..TO.
mass() {
	q "$1" --arg k "$2" --argjson c "$3" --arg d "$4" --argjson lo "$5" --argjson hi "$6" \
		'[.histograms[] | select(.kind == $k and .id == $c and .dir == $d) |
		  .buckets[] | select(.slot >= $lo and .slot <= $hi) | .count] | add // 0'
}
# sync_n N ID DIR: N syncs of one client, in one batch that names it N
# times (one netlink request, N ->sync calls, N client_sync events); fails
# unless all N ran and none failed.
sync_n() {
	local ids
	ids=$(yes "$2" | head -n "$1" | paste -sd,)
	jq_of ".run == $1 and .errors == 0 and (.results | length) == $1" \
		syncmemctl sync --id "$ids" --dir "$3" -j
}
# Our programs and maps, by the names pkg/trace gives them.
our_progs() {
	bpftool prog show -j | jq -r '.[] | select(.name == "sm_client_sync" or .name == "sm_sync_end") | .id'
}
# our_links: links attaching programs of ours.
our_links() {
	bpftool link show -j | jq --argjson ids "$(our_progs | jq -s -c .)" \
		'[.[] | select(.prog_id as $p | $ids | index($p))] | length'
}
our_maps() {
	bpftool map show -j | jq -r '.[] | select((.name // "") | test("^sm_(hist|errors|dev_names|drops)$")) | .id'
}
# ours_gone: no program or map of ours is loaded.
ours_gone() {
	local p m
	p=$(our_progs | wc -l)
	m=$(our_maps | wc -l)
	[ "$p $m" = "0 0" ] && return 0
	echo "still loaded: $p programs, $m maps"
	return 1
}

check "nothing of ours is loaded before" ours_gone
check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load

# The record layout: what the format files say against the offsets the BPF
# programs read (pkg/trace/bpf/synctrace.h, pkg/trace/kernel.go).
layout() {
	awk -F'\t' '$2 ~ /^field:/ {
		decl = $2; sub(/^field:/, "", decl); sub(/;$/, "", decl)
		n = split(decl, w, " "); name = w[n]; sub(/\[.*/, "", name)
		off = $3; sub(/^offset:/, "", off); sub(/;$/, "", off)
		sz = $4; sub(/^size:/, "", sz); sub(/;$/, "", sz)
		print name, off, sz
	}' "$TR/events/ib_sync_mem/$1/format"
}
expect_layout() {
	local ev=$1 f got
	shift
	got=$(layout "$ev")
	for f in "$@"; do
		grep -qx "$f" <<<"$got" || { echo "$ev: no '$f' in:"; echo "$got"; return 1; }
	done
}
check "client_sync format has the offsets the BPF program reads" expect_layout client_sync \
	"dev_index 8 4" "client 12 4" "dir 16 4" "err 20 4" "ns 24 8"
check "sync_end format has the offsets the BPF program reads" expect_layout sync_end \
	"dev_index 8 4" "client 12 4" "dir 16 4" "clients 20 4" "errors 24 4" "err 28 4" \
	"ns 32 8" "dev 40 64"

# --dev resolves names through RDMA netlink: its index is rdma's "ifindex"
# and the module's device index (the tracepoints' dev_index).
rxe0_idx=$(rdma -j dev show rxe0 | jq -r '.[0].ifindex')
check "rdma's ifindex of rxe0 is the module's device index" \
	expect "rxe0 index" "$rxe0_idx" "$(sm_devices | awk '$1 == "rxe0" { print $2 }')"

check "rdma link add rxe1" rdma link add rxe1 type rxe netdev veth1
fast=$(syncmemctl register --dev rxe0 --name tr_fast --latency 0s)
slow=$(syncmemctl register --dev rxe0 --name tr_slow --latency ${SLOW_US}us)
other=$(syncmemctl register --dev rxe1 --name tr_other --latency 0s)
check "register the fast, slow and rxe1 clients" is_id "$fast" "$slow" "$other"

# Session A: rxe0 only, per client. N syncs of each client to-device, P
# passes to-cpu, then a client failing 3 of its 5 syncs with EIO. A sync
# of the rxe1 client must not show.
check "tracer A starts (--per-client --dev rxe0 -j)" tracer_start a --per-client --dev rxe0 -j
check "our programs are loaded while tracing" test "$(our_progs | wc -l)" = 2
check "both programs are attached through links" expect "links" "$(our_links)" 2
check "$N syncs of the fast client" sync_n $N "$fast" to-device
check "$N syncs of the slow client" sync_n $N "$slow" to-device
passes_ok() {
	local i
	for ((i = 0; i < P; i++)); do syncmemctl sync --dev rxe0 --dir to-cpu >/dev/null || return 1; done
}
check "$P device-wide passes on rxe0" passes_ok
flaky=$(syncmemctl register --dev rxe0 --name tr_flaky --fail-next 3 --fail-errno EIO)
check "register a client failing its next 3 syncs with EIO" is_id "$flaky"
for i in 1 2 3 4 5; do syncmemctl sync --id "$flaky" >/dev/null 2>&1; done
check "sync the rxe1 client (filtered out)" sync_n 1 "$other" to-device
check "tracer A stops on SIGINT with a report" tracer_stop a

check "A: unit is usecs" expect unit "$(q a .unit)" usecs
check "A: nothing dropped" expect dropped "$(q a .dropped)" 0
check "A: fast client to-device count is exactly $N" expect count "$(count a client "$fast" to-device)" $N
check "A: slow client to-device count is exactly $N" expect count "$(count a client "$slow" to-device)" $N
check "A: each client ran in each of the $P passes" \
	expect "to-cpu counts" "$(count a client "$fast" to-cpu) $(count a client "$slow" to-cpu)" "$P $P"
check "A: pass histogram counts $P passes" expect passes "$(count a pass 0 to-cpu)" $P
check "A: no pass to-device" expect passes "$(count a pass 0 to-device)" 0
check "A: passes are named rxe0" \
	expect dev "$(q a '[.histograms[] | select(.kind == "pass") | .dev] | unique | join(",")')" rxe0
check "A: passes take at least the slow client's time" \
	expect "passes below slot $SLOW_SLOT" "$(mass a pass 0 to-cpu 0 $((SLOW_SLOT - 1)))" 0
check "A: slow client, nothing below slot $SLOW_SLOT ($SLOW_US us)" \
	expect "below" "$(mass a client "$slow" to-device 0 $((SLOW_SLOT - 1)))" 0
# Where the rest of the mass lands is guest timing (a sleep overshoots, and
# a TCG vCPU can be descheduled by a loaded host): reported, not asserted.
in_slot=$(mass a client "$slow" to-device "$SLOW_SLOT" $((SLOW_SLOT + 1)))
fast_below=$(mass a client "$fast" to-device 0 $((SLOW_SLOT - 1)))
echo "# A: slow client: $in_slot of $N in slots $SLOW_SLOT-$((SLOW_SLOT + 1)); fast client: $fast_below of $N below slot $SLOW_SLOT"
check "A: the failing client's 5 syncs are counted" expect count "$(count a client "$flaky" to-device)" 5
check "A: errors are exactly 3 EIO of that client" \
	expect errors "$(q a '[.errors[] | "\(.kind) \(.id) \(.dir) \(.err) \(.count)"] | join(",")')" \
	"client $flaky to-device EIO 3"
check "A: only rxe0 traced" \
	expect devices "$(q a '[.histograms[].dev_index] | unique | map(tostring) | join(",")')" "$rxe0_idx"
# One histogram: trace's buckets are pkg/hist's, with the fields and the
# bounds of stats -j (bucket i holds 2^i..2^(i+1)-1, bucket 0 also 0).
bucket_keys='[.[] | keys | join(",")] | unique | join(";")'
check "A: the buckets' fields" \
	expect fields "$(q a "[.histograms[].buckets[]] | $bucket_keys")" "count,high,low,slot"
check "A: the buckets' bounds are 2^i..2^(i+1)-1" \
	expect bounds "$(q a '[.histograms[].buckets[] | .low == (if .slot == 0 then 0 else pow(2; .slot) end) and
		.high == pow(2; .slot + 1) - 1] | unique | map(tostring) | join(",")')" true
check "A: stats -j has the same bucket fields" \
	expect fields "$(syncmemctl -j stats id "$slow" | jq -r ".hist.buckets | $bucket_keys")" "count,high,low,slot"

check "our programs and maps are gone after tracer A" wait_until 10 ours_gone

# Session B: every device, with bpftrace counting client_sync events at the
# same time. M batches syncing the fast and slow clients; then rxe1 goes
# away, and with it the client userspace made there: a sync of it is refused
# by the netlink family (no such client) and no sync is traced.
check "tracer B starts (per-client -j, keywords)" tracer_start b per-client -j
env --default-signal=INT bpftrace -e 'tracepoint:ib_sync_mem:client_sync { @n = count(); }' \
	>"$tmp/bt.out" 2>"$tmp/bt.err" &
bt=$!
bt_attached() {
	bpftool perf show -j |
		jq -e --argjson p "$bt" '[.[] | select(.pid == $p and .tracepoint == "client_sync")] | length > 0'
}
check "bpftrace attached to client_sync" wait_until 120 bt_attached
burst() {
	local ids
	ids=$(yes "$fast,$slow" | head -n "$M" | paste -sd,)
	jq_of ".run == $((2 * M)) and .errors == 0" syncmemctl sync --id "$ids" -j
}
check "burst: $M times the fast and slow clients, in one batch" burst
check "rdma link delete rxe1" rdma link delete rxe1
gone_client() {
	syncmemctl sync --id "$other" 2>&1 | tee /dev/stderr | grep -q "no such client"
}
check "a sync of the rxe1 client fails: it went with rxe1" gone_client
kill -INT $bt
ended_within $bt 60
bt_rc=${ENDED_RC:-killed}
cat "$tmp/bt.err" >&2
check "bpftrace exits 0" expect "bpftrace exit" "$bt_rc" 0
check "tracer B stops on SIGINT with a report" tracer_stop b
bt_n=$(awk '/^@n:/ { print $2 }' "$tmp/bt.out")
b_n=$(q b '[.histograms[] | select(.kind == "client") | .count] | add // 0')
check "bpftrace counted the burst: $((2 * M)) events" expect bpftrace "${bt_n:-0}" $((2 * M))
check "the tracer counted what bpftrace counted" expect tracer "$b_n" "${bt_n:-0}"
check "B: $M of each client" \
	expect counts "$(count b client "$fast" to-device) $(count b client "$slow" to-device)" "$M $M"
check "B: no error traced (the gone client's sync never reached the registry)" \
	jq_file '.errors == []' "$tmp/b.json"

# Session C: one client in nanoseconds; the others do not show. With
# client_timing off: a tracer attached to client_sync still gets times.
check "client_timing off for session C" client_timing N
check "tracer C starts (id SLOW nsecs -j, keywords)" tracer_start c id "$slow" nsecs -j
check "5 syncs of the slow client" sync_n 5 "$slow" to-device
check "5 syncs of the fast client" sync_n 5 "$fast" to-device
check "tracer C stops on SIGINT with a report" tracer_stop c
check "C: unit is nsecs" expect unit "$(q c .unit)" nsecs
check "C: only the slow client" \
	expect series "$(q c '[.histograms[] | "\(.kind) \(.id) \(.count)"] | join(",")')" "client $slow 5"
check "C: nothing below slot $SLOW_SLOT_NS in ns" \
	expect below "$(mass c client "$slow" to-device 0 $((SLOW_SLOT_NS - 1)))" 0

# Session P: passes only, still with client_timing off. client_sync has
# no program on it, so the registry times no client: a device sync's
# per-client times stay 0 (with one attached, as in C, the slow client's
# would be its busy-wait).
check "tracer P starts (passes -j, keyword)" tracer_start p passes -j
check "P: one link of ours" expect links "$(our_links)" 1
check "P: a device sync to-device times no client" jq_of "
	.run >= 2 and .errors == 0 and any(.results[]; .id == $slow) and all(.results[]; .time_ns == 0)" \
	syncmemctl sync --dev rxe0 --dir to-device -j
check "$P device-wide passes on rxe0" passes_ok
check "tracer P stops on SIGINT with a report" tracer_stop p
check "P: pass histograms only, 1 to-device and $P to-cpu" \
	expect series "$(q p '[.histograms[] | "\(.kind) \(.dir) \(.count)"] | sort | join(",")')" \
	"pass to-cpu $P,pass to-device 1"
check "client_timing on again" client_timing Y

# --duration ends a tracer by itself; an idle one reports nothing.
timeout 60 syncmemctl trace -d 1 -j >"$tmp/d.json" 2>"$tmp/d.err"
rc=$?
cat "$tmp/d.err" >&2
check "trace -d 1 -j exits 0 on its own" expect rc $rc 0
check "idle: no histograms" expect histograms "$(jq '.histograms | length' "$tmp/d.json")" 0
check "idle text: no syncs traced" expect text "$(timeout 60 syncmemctl trace -d 1 2>/dev/null)" \
	"no syncs traced"
intervals() {
	local out
	# Ten intervals' worth of duration: at least two reports even if
	# loading the programs takes a while.
	out=$(timeout $((60 * SYNCMEM_SLOW)) syncmemctl trace -i $((300 * SYNCMEM_SLOW))ms \
		-d $((3000 * SYNCMEM_SLOW))ms -j 2>/dev/null) || return 1
	echo "$out"
	[ "$(wc -l <<<"$out")" -ge 2 ] && jq -e -s 'all(.[]; .histograms == [])' <<<"$out"
}
check "trace -i prints a JSON report per interval" intervals
check "trace --dev of an unknown device fails, naming it" fails_with \
	'^Error: --dev nosuch0: no such RDMA device "nosuch0" \(have: ' syncmemctl trace --dev nosuch0 -d 1
check "nothing of ours left loaded after the other tracers" wait_until 10 ours_gone

# Unprivileged: the module is there, loading BPF is refused.
install -m 0755 "$(command -v syncmemctl)" "$tmp/syncmemctl"
check "unprivileged: 'loading BPF needs root (CAP_BPF and CAP_PERFMON)'" \
	fails_with 'loading BPF needs root \(CAP_BPF and CAP_PERFMON\)' \
	nobody "$tmp/syncmemctl" trace -d 1

for id in "$fast" "$slow" "$flaky" "$other"; do
	syncmemctl unregister id "$id" >&2 || echo "unregister $id failed" >&2
done
check "object counters back to zero" counters_zero
check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem (no tracer holds it)" sm_unload

check "without the module: 'module ib_sync_mem is not loaded'" \
	fails_with '^Error: module ib_sync_mem is not loaded$' syncmemctl trace -d 1
check "unprivileged without the module: 'module ib_sync_mem is not loaded'" \
	fails_with '^Error: module ib_sync_mem is not loaded$' nobody "$tmp/syncmemctl" trace -d 1
finish
