#!/usr/bin/env bash
# The generic netlink family, driven through syncmemctl: devices, clients
# registered by separate invocations, syncs of one client, a device and a
# batch, statistics, events (and a monitor that outlives a module reload),
# owned clients that die with their socket, the unprivileged view,
# malformed requests (refused with the kernel's message, changing nothing),
# and the family's absence outside the initial netns.
# shellcheck disable=SC2317 # the helpers run through check
. "$(dirname "$0")/lib.sh"
suite_begin

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; ip netns del sm-t 2>/dev/null' EXIT

check "syncmemctl on PATH" command -v syncmemctl
check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load

# Devices.
check "devices lists rxe0" jq_of 'any(.[]; .dev == "rxe0")' ctl devices -j
check "devices table has a rxe0 row" bash -c 'syncmemctl devices | grep -q "^rxe0 "'
check "devices dev rxe0 -p is an array of one" jq_of 'length == 1 and .[0].dev == "rxe0"' ctl devices dev rxe0 -p
check "-j before the verb, a prefix of it" jq_of 'length == 1 and .[0].dev == "rxe0"' ctl -j dev dev rxe0
check "no clients at start" expect clients "$(client_count)" 0

# Two persistent clients, each registered by its own invocation.
id1=$(ctl register --dev rxe0 --name nl-a)
check "register nl-a prints an id" is_id "$id1"
id2=$(ctl register --dev rxe0 --name nl-b --latency 140ms --size 64K -j | jq -r .id)
check "register nl-b -j prints it" is_id "$id2"
check "list shows nl-a" jq_list ".[] | select(.id == $id1) |
	.name == \"nl-a\" and .dev == \"rxe0\" and .kind == \"sim\" and .state == \"live\" and
	.origin == \"netlink\" and .flags == []"
check "list shows nl-b with its latency and size" jq_list ".[] | select(.id == $id2) |
	.name == \"nl-b\" and .sim.latency_ns == 140000000 and .sim.size == 65536"
check "root sees who created them" jq_list \
	"length == 2 and all(.[]; has(\"owner_pid\") and has(\"owner_portid\") and has(\"sim\"))"
check "list --dev rxe0 has both" jq_of 'length == 2' ctl list --dev rxe0 -j
check "list ID shows one" jq_of "length == 1 and .[0].id == $id1" ctl list id "$id1" -j
check "list table shows nl-b, owned by sim" bash -c "syncmemctl list | grep -qE '^$id2 +rxe0 +nl-b +sim +sim +live '"

# Syncs: one client, the whole device, a batch; counters move.
g0=$(syncs_of)
a0=$(syncs_of --id "$id1")
b0=$(syncs_of --id "$id2")
d0=$(syncs_of --dev rxe0)
check "stats readable" is_num "$g0" "$a0" "$b0" "$d0"
check "sync one client" jq_of "
	.run == 1 and .errors == 0 and (has(\"err\") | not) and [.results[].id] == [$id1]" \
	ctl sync --id "$id1" -j
check "sync one client, table" bash -c \
	"syncmemctl sync --id $id1 --dir to-cpu | grep -qE '^$id1 +ok +[0-9.]+(ns|us|ms)$'"
check "sync the whole device" jq_of "
	.run == 2 and .errors == 0 and ([.results[].id] | sort) == ([$id1, $id2] | sort)" \
	ctl sync --dev rxe0 --dir bidirectional --timeout 5s -j
check "batch sync of two ids, in order" jq_of "
	.run == 2 and .errors == 0 and [.results[].id] == [$id2, $id1]" \
	ctl sync --id "$id2,$id1" -j
check "module-wide syncs moved by exactly 6" expect syncs "$(syncs_of)" $((g0 + 6))
check "nl-a synced exactly 4 times" expect syncs "$(syncs_of --id "$id1")" $((a0 + 4))
check "nl-b synced exactly 2 times" expect syncs "$(syncs_of --id "$id2")" $((b0 + 2))
check "nl-a's counters: its syncs, none failed" jq_of "
	.syncs == $((a0 + 4)) and .errors == 0" ctl stats --id "$id1" -j
# A batch at IB_SYNC_MEM_SYNC_BATCH_MAX (an id may repeat) encodes and runs
# whole, its reply of as many results in one datagram; one more is refused
# by pkg/genl before the kernel, saying what the limit is.
big=$(yes "$id1" | head -n 2048 | paste -sd,)
check "a batch of 2048 ids runs whole" jq_of '.run == 2048 and .errors == 0 and (.results | length) == 2048' \
	ctl sync --id "$big" -j
check "a batch of 2049 ids is refused by pkg/genl, naming the limit" fails_with \
	'a batch names at most 2048 clients, not 2049' ctl sync --id "$big,$id1"
# The kernel's own bound, asked without pkg/genl: nlsync sends a batch as
# it is. 2048 run whole; 2049 are refused whole with EINVAL and the
# kernel's extack.
check "the kernel runs a batch of 2048 sent as it is" expect "nlsync sync-batch" \
	"$("$SYNCMEM_BIN/nlsync" sync-batch "$big")" "run 2048 errors 0 skipped 0 results 2048"
a1=$(syncs_of --id "$id1")
check "the kernel refuses a batch of 2049 with EINVAL and its message" fails_with \
	'^Error: sync-batch: Invalid argument \(a batch names 1 to 2048 clients\)$' \
	"$SYNCMEM_BIN/nlsync" sync-batch "$big,$id1"
check "nothing of the refused batch ran" expect syncs "$(syncs_of --id "$id1")" "$a1"
# stats' histogram: pkg/hist's buckets in nanoseconds, empty ones from 0
# on, high = 2^(i+1)-1. nl-b's latency is a floor, and the sim's hrtimer
# may fire up to a quarter later: a sync of it takes 140 to 175 ms and the
# guest's wake-up, all in bucket 27 (134217728..268435455 ns), whose top is
# 93 ms further. (A 200us latency is no such slot: in a 6.12 guest on a
# busy host its syncs took 262144 ns to 8 ms, buckets 18 to 22, none in 17.)
check "nl-b histogram: its 2 syncs, both in bucket 27" jq_of \
	'.hist.unit == "nsecs" and .syncs == 2 and (.hist.buckets | length) == 28 and
	 all(.hist.buckets[]; .high == pow(2; .slot + 1) - 1 and .low == (if .slot == 0 then 0 else pow(2; .slot) end)) and
	 [.hist.buckets[] | select(.count > 0) | [.slot, .count]] == [[27, 2]] and
	 .max_ns >= 134217728 and .max_ns <= 268435455' \
	ctl stats --id "$id2" -j
# The slots are the ones the syncs fell in: the slowest sync (max_ns) is in
# the highest bucket that counted one; of several syncs, the slowest took
# less than all of them together.
check "nl-b: max_ns in its highest non-empty bucket, below the total time" jq_of \
	'([.hist.buckets[] | select(.count > 0)] | last) as $top |
	 .syncs >= 2 and .max_ns >= $top.low and .max_ns <= $top.high and .max_ns < .time_ns' \
	ctl stats --id "$id2" -j
# rxe0's syncs: the 6 above, two batches of 2048 that ran, none refused.
check "device stats" jq_of ".scope == \"device\" and .dev == \"rxe0\" and .clients == 2 and
	.syncs == $((d0 + 6 + 2048 + 2048))" ctl stats --dev rxe0 -j
check "stats prints a libbpf-style histogram" bash -c \
	"syncmemctl stats | grep -qE '^ +nsecs +: count +distribution$' &&
	 syncmemctl stats | grep -qE '^ +134217728 -> 268435455 +: [0-9]+ +\\|'"
# Inbound: a sim client has no way to make the NIC's writes visible. One
# sync of it is bad input (refused with the kernel's reason, nothing
# counted); a device pass runs both and reports each one's EOPNOTSUPP.
a2=$(syncs_of --id "$id1")
check "an inbound sync of a sim client is refused, with the kernel's reason" \
	fails_with "client's kind cannot sync inbound" ctl sync --id "$id1" --dir inbound
check "... and counted nothing" expect syncs "$(syncs_of --id "$id1")" "$a2"
check "an inbound device pass reports both sim clients' EOPNOTSUPP" jq_of '
	.dir == "inbound" and .run == 2 and .errors == 2 and .err == "EOPNOTSUPP" and
	([.results[].err] | unique) == ["EOPNOTSUPP"]' \
	bash -c 'syncmemctl sync --dev rxe0 --dir inbound -j; [ $? = 1 ]'
# Ranges and marks from userspace: a lazy sim client of 1 MiB is synced
# over the bytes marked, and its counters count exactly those; a range
# sync runs those bytes, lazy or not. Bad input is refused with the
# kernel's reason and changes nothing.
idl=$(ctl register dev rxe0 name nl-lazy size 1M lazy)
check "a lazy sim client of 1 MiB" is_id "$idl"
bytes_of() { jq_val .bytes ctl stats --id "$1" -j; }
check "mark 8K at 4K of it dirty" ctl mark-dirty id "$idl" offset 4K len 8K
check "mark 64 bytes at 1M-64 dirty, to-device" ctl mark-dirty id "$idl" dir to-device offset $((1048576 - 64)) len 64
check "its sync runs once, over the 8256 bytes marked" jq_of '.run == 1 and .skipped == 0' ctl sync id "$idl" -j
check "... and counts them" expect bytes "$(bytes_of "$idl")" 8256
check "synced again, it owes nothing" jq_of '.run == 0 and .skipped == 1' ctl sync id "$idl" -j
check "a range sync runs its bytes, though the client owes none" jq_of '.run == 1 and .offset == 0 and .len == 4096' \
	ctl sync id "$idl" offset 0 len 4K -j
check "... and counts them" expect bytes "$(bytes_of "$idl")" $((8256 + 4096))
check "a mark to-cpu is not owed to a to-device sync" bash -c \
	'syncmemctl mark-dirty id "$1" dir to-cpu len 64 && syncmemctl sync id "$1" -j | jq -e ".run == 0" >/dev/null &&
	 syncmemctl sync id "$1" dir to-cpu -j | jq -e ".run == 1" >/dev/null' _ "$idl"
check "... the to-cpu sync counted its 64 bytes" expect bytes "$(bytes_of "$idl")" $((8256 + 4096 + 64))
check "a range past the client's end: ERANGE, the kernel's reason" fails_with \
	"range is not inside the client" ctl mark-dirty id "$idl" offset 1M len 64
check "a range off the sim's 64-byte lines: EINVAL, the kernel's reason" fails_with \
	"range is off the client's alignment" ctl sync id "$idl" offset 32 len 64
check "marking a client that is not lazy: EINVAL, the kernel's reason" fails_with \
	"client is not lazy" ctl mark-dirty id "$id1"
check "marking an unknown client: ENOENT" fails_with "no such client" ctl mark-dirty id 999999
check "none of the refused ran or counted" expect bytes "$(bytes_of "$idl")" $((8256 + 4096 + 64))
check "nor left the client owing a sync" jq_of '.run == 0' ctl sync id "$idl" -j
check "unregister the lazy client" ctl unregister id "$idl"
# client_timing=N: no clock read per ->sync. Syncs and bytes still count
# and a device sync still names every client it ran; the time counters,
# max_ns and the histogram stay as they were, the clients' times are 0.
timing=/sys/module/ib_sync_mem/parameters/client_timing
check "client_timing is on by default" expect client_timing "$(cat $timing)" Y
# timing_of ID: "syncs time_ns max_ns histogram-count bytes" of a client.
timing_of() {
	jq_val '[.syncs, .time_ns, .max_ns, ([.hist.buckets[].count] | add), .bytes] | map(numbers) |
		if length == 5 then join(" ") else error("not 5 numbers") end' ctl stats --id "$1" -j
}
tb0=$(timing_of "$id2")
check "nl-b timed so far" bash -c '[[ $1 =~ ^[1-9][0-9]*\ [1-9][0-9]*\ [1-9][0-9]* ]]' _ "$tb0"
check "client_timing off" client_timing N
check "timing off: a device sync runs both, each time 0" jq_of "
	.run == 2 and .errors == 0 and ([.results[].id] | sort) == ([$id1, $id2] | sort) and
	all(.results[]; .time_ns == 0) and .time_ns > 0" ctl sync --dev rxe0 -j
read -r s0 t0 m0 h0 y0 <<<"$tb0"
check "timing off: nl-b synced once more, its 64K counted, time, max, histogram as before" \
	expect "syncs time max hist bytes" "$(timing_of "$id2")" \
	"$((s0 + 1)) $t0 $m0 $h0 $((y0 + 65536))"
check "client_timing on again" client_timing Y
check "timing on: nl-b's time in a device sync is its 140ms" jq_of "
	.run == 2 and any(.results[]; .id == $id2 and .time_ns >= 140000000)" ctl sync --dev rxe0 -j
check "client_timing refuses a non-boolean with EINVAL" fails_as 'write error: Invalid argument$' client_timing maybe
check "client_timing still Y" expect client_timing "$(cat $timing)" Y

# The grammar against the kernel: each verb in its keyword form, the JSON
# fields every command documents (one set of names: dev, dev_index, id,
# err), -j before the verb, and a verb by a prefix.
keys_are() { jq_of "$1 == $2" "${@:3}"; }
check "devices dev rxe0: the device's fields" keys_are '.[0] | keys' \
	'["clients","dev","dev_index","passes","stats"]' ctl devices dev rxe0 -j
idk=$(ctl register dev rxe0 name nl-kw latency 10us size 4K lazy)
check "register in keywords" is_id "$idk"
check "list id: the client's fields (root's view)" keys_are '.[0] | keys' \
	'["dev","dev_index","flags","id","kind","name","origin","owner","owner_pid","owner_portid","sim","size","state","stats"]' \
	ctl list id "$idk" -j
check "list id: the keywords' settings" jq_of '.[0] | .flags == ["lazy"] and .sim.latency_ns == 10000 and
	.sim.size == 4096 and .sim.fail_err == "EIO" and (.sim | keys) == ["batch","calls_bidirectional","calls_inbound","calls_to_cpu",
	"calls_to_device","fail_err","fail_next","latency_ns","size"] and (.stats | keys) == ["bytes","errors","max_ns","syncs","time_ns"]' \
	ctl list id "$idk" -j
check "sync id ... dir ...: the sync's fields" jq_of '(keys == ["dir","errors","results","run","skipped","time_ns"]) and
	.dir == "to-cpu" and (.results[0] | keys) == ["id","time_ns"]' ctl sync id "$idk" dir to-cpu -j
check "stats id: the client's counters" keys_are 'keys' \
	'["bytes","dev","dev_index","errors","hist","id","kind","max_ns","name","scope","size","state","syncs","time_ns"]' \
	ctl -j stats id "$idk"
check "li is list" jq_of "any(.[]; .id == $idk)" ctl li -j
check "list dev rxe0: its clients only, in keywords" jq_of \
	"length == 3 and all(.[]; .dev == \"rxe0\") and any(.[]; .id == $idk)" ctl list dev rxe0 -j
check "stats dev rxe0: the device's counters, dev_index even when 0" jq_of \
	'.scope == "device" and .dev == "rxe0" and (.dev_index | type) == "number" and .hist.unit == "nsecs"' \
	ctl -j stats dev rxe0
check "unregister id" ctl unregister id "$idk"
check "an old positional id is refused, saying how to name it" fails_with \
	'a client is named "id 999999" or --id 999999' ctl unregister 999999

# The policy's boundaries, both sides of each: the longest name (31
# characters and the NUL), the largest errno (4095), the longest simulated
# latency (10 s), the longest sync timeout (600 s); one more is refused by
# the kernel's policy, naming the attribute.
n31=$(printf 'n%.0s' {1..31})
idp=$(ctl register --dev rxe0 --name "$n31" --fail-errno 4095 --latency 10s)
check "policy: a 31-character name, errno 4095 and a 10 s latency are taken" is_id "$idp"
check "policy: the client has them" jq_of ".[0] | .name == \"$n31\" and .sim.latency_ns == 10000000000" \
	ctl list id "$idp" -j
check "policy: a 32-character name is refused" fails_with 'policy validation \(CLIENT_NAME="n{32}"\)' \
	ctl register --dev rxe0 --name "${n31}n"
check "policy: fail-errno 4096 is refused" fails_with 'out of range \(SIM_FAIL_ERRNO=4096\)' \
	ctl register --dev rxe0 --name x --fail-errno 4096
check "policy: a latency of 10 s and 1 us is refused" fails_with 'out of range \(SIM_LATENCY_US=10000001\)' \
	ctl register --dev rxe0 --name x --latency 10000001us
check "policy: unregister the 31-character client" ctl unregister id "$idp"
check "policy: a sync with a 600 s timeout runs" jq_of '.run == 1 and .errors == 0' \
	ctl sync --id "$id1" --timeout 600s -j
check "policy: a timeout of 600001 ms is refused" fails_with 'out of range \(SYNC_TIMEOUT_MS=600001\)' \
	ctl sync --id "$id1" --timeout 600001ms

# Events: client-new, sync-failed, client-del, dev-new, and a device
# removal taking its client along.
mon_out=$tmp/monitor.json
mon_err=$tmp/monitor.err
syncmemctl monitor count 8 -j >"$mon_out" 2>"$mon_err" &
mon=$!
check "monitor subscribed" wait_until 30 grep -q "monitoring ib_sync_mem events" "$mon_err"
idc=$(ctl register --dev rxe0 --name nl-c --fail-next 1 --fail-errno EIO)
check "register nl-c, failing its next sync" is_id "$idc"
check "a failing sync reports EIO and exits non-zero" fails_with \
	"1 of 1 clients failed, the first with EIO" ctl sync --id "$idc"
check "unregister nl-c" ctl unregister id "$idc"
check "rdma link add rxe1" rdma link add rxe1 type rxe netdev veth1
check "rxe1 listed" jq_of 'any(.[]; .dev == "rxe1")' ctl devices -j
idd=$(ctl register --dev rxe1 --name nl-d)
check "register nl-d on rxe1" is_id "$idd"
check "stats dev rxe1: its own one client, not the module's" jq_of \
	'.scope == "device" and .dev == "rxe1" and .clients == 1' ctl stats --dev rxe1 -j
check "rdma link delete rxe1" rdma link delete rxe1
check "nl-d went with rxe1" lacks_client "$idd"
check "monitor exits after 8 events" ended_ok "$mon" 60
cat "$mon_out" >&2
check "events in order" jq_of '. == ["client-new", "sync-failed", "client-del",
	"dev-new", "client-new", "client-invalidated", "client-del", "dev-del"]' \
	jq -s -c 'map(.event)' "$mon_out"
check "event details" jq_of "
	(.[0] | .id == $idc and .name == \"nl-c\" and .dev == \"rxe0\" and .kind == \"sim\") and
	(.[1] | .id == $idc and .err == \"EIO\" and .dir == \"to-device\") and
	(.[2] | .id == $idc and .name == \"nl-c\") and
	(.[3] | .dev == \"rxe1\") and
	(.[4] | .id == $idd and .dev == \"rxe1\") and
	(.[5] | .id == $idd and .inval_reason == \"device\") and
	(.[6] | .id == $idd) and (.[7] | .dev == \"rxe1\")" jq -s . "$mon_out"

# SYNC_FAILED is rate limited: 10 events in a window of 5 s. A batch fails
# 15 times, 30 ms apart (a 30 ms client between the failures), in a window
# of its own (5 s after nl-c's failure): 10 events when it took less than
# 5 s, and no more than one window's 10 for each 5 s it took. Then a
# client-new, after which every event of the batch has come.
syncmemctl monitor -j >"$tmp/rl.json" 2>"$tmp/rl.err" &
mon=$!
check "rate limit: monitor subscribed" wait_until 30 grep -q "monitoring ib_sync_mem events" "$tmp/rl.err"
idf=$(ctl register --dev rxe0 --name nl-fail --fail-next 15 --fail-errno EIO)
idg=$(ctl register --dev rxe0 --name nl-gap --latency 30ms)
check "rate limit: a failing client and a 30 ms one" is_id "$idf" "$idg"
batch=$(for _ in $(seq 15); do printf '%s,%s,' "$idf" "$idg"; done)
# sync_failing ARGS...: a sync whose clients fail: its JSON, exit 1.
sync_failing() { ctl sync "$@"; [ $? = 1 ]; }
sleep 5
t_rl=$(date +%s%N)
check "rate limit: the batch fails 15 times" jq_of '.run == 30 and .errors == 15' sync_failing --id "${batch%,}" -j
rl_ms=$((($(date +%s%N) - t_rl) / 1000000))
ids=$(ctl register --dev rxe0 --name nl-sentinel)
check "rate limit: the monitor saw the client-new after the batch" wait_until 30 jq_file \
	"any(.[]; .event == \"client-new\" and .id == $ids)" "$tmp/rl.json" -s
nf=$(jq -s "[.[] | select(.event == \"sync-failed\" and .id == $idf)] | length" "$tmp/rl.json")
echo "# rate limit: $nf sync-failed events of 15 failures in $rl_ms ms"
if [ "$rl_ms" -lt 5000 ]; then
	check "rate limit: 10 sync-failed events of 15 failures in one window" expect events "$nf" 10
else
	check "rate limit: 10 to $((10 * (1 + rl_ms / 5000))) sync-failed events of 15 in $rl_ms ms" \
		test "$nf" -ge 10 -a "$nf" -le $((10 * (1 + rl_ms / 5000)))
fi
kill -TERM "$mon"
check "rate limit: the monitor exits 0 on SIGTERM" ended_ok "$mon" 30
check "rate limit: unregister its clients" ctl unregister id "$idf,$idg,$ids"

# Owned clients die with their socket: when it closes, or when the process
# holding it is killed. (Background jobs run the binary itself, not ctl, so
# that $! is its pid.)
# The holder keeps its socket until SIGTERM, not for a fixed time, so that
# a slow guest cannot close it before the checks ran.
syncmemctl register --dev rxe0 --name nl-owned --owned --hold 600s >"$tmp/owned" &
holder=$!
check "owned client's id printed" wait_until 30 test -s "$tmp/owned"
ido=$(cat "$tmp/owned")
check "owned client listed while its socket is open" has_client "$ido"
check "owned client flagged owned" jq_list "any(.[]; .id == $ido and .flags == [\"owned\"])"
kill -TERM "$holder"
check "holder exits 0 on SIGTERM" ended_ok "$holder" 30
check "owned client gone once its socket closed" wait_until 30 lacks_client "$ido"
syncmemctl register --dev rxe0 --name nl-killed --owned --hold 60s >"$tmp/killed" &
holder=$!
check "second owned client's id printed" wait_until 30 test -s "$tmp/killed"
idk=$(cat "$tmp/killed")
check "second owned client listed" has_client "$idk"
kill -KILL "$holder"
wait "$holder" 2>/dev/null
check "owned client gone when its process is killed" wait_until 30 lacks_client "$idk"
check "persistent clients survive their creators" jq_list \
	"([.[].id] | sort) == ([$id1, $id2] | sort)"

# Owners: every client names the in-kernel owner it is registered under (the
# sim's kind: sim; a driver's: its own); a list and a device sync select by
# owner. A second owner on rxe0: one client of ib_sync_mem_test's.
check "load ib_sync_mem_test (a driver's client)" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0
check "a driver's client on rxe0" run_step bulk_register 1
drv=$(ctl list --dev rxe0 -j | jq -r '[.[] | select(.origin == "kernel") | .id] | if length == 1 then .[0] else empty end')
check "... one, listed with owner ib_sync_mem_test" jq_of \
	".[0].owner == \"ib_sync_mem_test\"" ctl list id "$drv" -j
check "the sim's clients are owned by sim" jq_list \
	"[.[] | select(.id == $id1 or .id == $id2) | .owner] == [\"sim\", \"sim\"]"
check "list owner sim: exactly nl-a and nl-b" jq_of "[.[].id] == [$id1, $id2]" ctl list owner sim -j
check "... also for an unprivileged caller" jq_of "[.[].id] == [$id1, $id2]" nobody syncmemctl list owner sim -j
check "list dev rxe0 owner ib_sync_mem_test: exactly the driver's" jq_of "[.[].id] == [$drv]" \
	ctl list dev rxe0 owner ib_sync_mem_test -j
check "list owner nosuch: ENOENT, the kernel's message" fails_with \
	'^Error: list clients owned by nosuch: no such owner' syncmemctl list owner nosuch
check "sync dev rxe0 owner sim: runs nl-a and nl-b, not the driver's" jq_of \
	".run == 2 and .errors == 0 and .skipped == 0 and ([.results[].id] | sort) == ([$id1, $id2] | sort)" \
	ctl sync dev rxe0 owner sim -j
check "sync dev rxe0 owner ib_sync_mem_test: runs the driver's only" jq_of \
	".run == 1 and [.results[].id] == [$drv]" ctl sync dev rxe0 owner ib_sync_mem_test -j
check "sync dev rxe0 owner nosuch: ENOENT, nothing runs" fails_with \
	'^Error: sync: no such owner' syncmemctl sync dev rxe0 owner nosuch
check "sync id ... owner sim: refused before the kernel" fails_with \
	'^Error: owner selects clients of a device: give dev DEV too$' syncmemctl sync id "$id1" owner sim
check "the kernel refuses an owner without a device: EINVAL, its message" fails_with \
	'an owner selects clients of a device: name the device' "$SYNCMEM_BIN/nlsync" sync-owner "$id1" sim
check "an owner name of 32 bytes: refused by the kernel's policy" fails_with \
	'^Error: list clients owned by [x]{32}: ' syncmemctl list owner "$(printf 'x%.0s' {1..32})"
check "the driver unregisters its client" run_step bulk_unregister
check "unload ib_sync_mem_test" rmmod ib_sync_mem_test

# A driver on the public API only (ib_sync_mem_outside): its listener
# registers one client per device under its owner, a device that comes
# gets one, one that goes takes it with it (unregistered in the listener's
# remove, never invalidated), and unload takes the rest: the driver holds
# no module reference and unregisters them itself.
OUTFS=/sys/kernel/debug/ib_sync_mem_outside/state
outside_devs() { ctl list -j | jq -c '[.[] | select(.owner == "outside") | .dev] | sort'; }
check "load ib_sync_mem_outside" insmod "$KO/ib_sync_mem_outside.ko"
check "outside: one client, on rxe0 (the listener's replay)" expect devices "$(outside_devs)" '["rxe0"]'
check "outside: its owner pass on rxe0" bash -c "echo 'sync rxe0' > $OUTFS"
check "outside: ... ran its client once" grep -qE '^rxe0 [0-9]+ syncs 1 invalidates 0$' "$OUTFS"
check "outside: rdma link add rxe1" rdma link add rxe1 type rxe netdev veth1
check "outside: rxe1 has its client too" expect devices "$(outside_devs)" '["rxe0","rxe1"]'
check "outside: rdma link delete rxe1" rdma link delete rxe1
check "outside: rxe1's went with it" expect devices "$(outside_devs)" '["rxe0"]'
check "outside: two adds, one remove, no error" grep -qx 'adds 2 removes 1 errors 0' "$OUTFS"
check "outside: ... and rxe0's never invalidated" grep -qE '^rxe0 [0-9]+ syncs 1 invalidates 0$' "$OUTFS"
check "outside: unload with its client registered" rmmod ib_sync_mem_outside
check "outside: no client of it left" expect devices "$(outside_devs)" '[]'

# Without CAP_NET_ADMIN: reading works, changing does not, and the
# sensitive fields are left out.
n=$(client_count)
check "client count readable" is_num "$n"
check "unprivileged register refused (CAP_NET_ADMIN)" fails_with CAP_NET_ADMIN \
	nobody syncmemctl register --dev rxe0 --name nope
check "unprivileged unregister refused (CAP_NET_ADMIN)" fails_with CAP_NET_ADMIN \
	nobody syncmemctl unregister id "$id1"
check "unprivileged sync refused (CAP_NET_ADMIN)" fails_with CAP_NET_ADMIN \
	nobody syncmemctl sync --dev rxe0
check "unprivileged devices" jq_of 'any(.[]; .dev == "rxe0")' nobody syncmemctl devices -j
check "unprivileged stats" jq_of '.scope == "module" and .clients == 2' nobody syncmemctl stats -j
check "unprivileged list lacks the sensitive fields" jq_of "length == $n and
	all(.[]; (has(\"owner_pid\") or has(\"owner_portid\") or has(\"sim\")) | not)" \
	nobody syncmemctl list -j
check "unprivileged list table" nobody syncmemctl list
check "nothing changed" expect clients "$(client_count)" "$n"

# Malformed requests: refused with the kernel's message, nothing changes.
g0=$(syncs_of)
check "sync count readable" is_num "$g0"
check "unregister of an unknown id" fails_with 'no such client \(CLIENT_ID=999999\)' \
	ctl unregister id 999999
check "sync of an unknown id" fails_with 'no such client \(CLIENT_ID=999999\)' \
	ctl sync --id 999999
check "batch with an unknown id refused whole" fails_with 'no such client \(CLIENT_ID=999999\)' \
	ctl sync --id "$id1,999999"
check "stats of an unknown client" fails_with "no such client" ctl stats --id 999999
check "register on an unknown device" fails_with 'no such RDMA device \(DEV_NAME="rxe9"\)' \
	ctl register --dev rxe9 --name x
check "sync of an unknown device" fails_with "no such RDMA device" ctl sync --dev rxe9
check "list of an unknown device" fails_with "no such RDMA device" ctl list --dev rxe9
check "over-long name (40 chars)" fails_with 'policy validation \(CLIENT_NAME="n{40}"\)' \
	ctl register --dev rxe0 --name "$(printf 'n%.0s' {1..40})"
check "empty name" fails_with "name is empty" ctl register --dev rxe0 --name ""
check "fail-errno 0" fails_with 'out of range \(SIM_FAIL_ERRNO=0\)' \
	ctl register --dev rxe0 --name x --fail-errno 0
check "fail-errno 5000" fails_with 'out of range \(SIM_FAIL_ERRNO=5000\)' \
	ctl register --dev rxe0 --name x --fail-errno 5000
check "latency past 10 s" fails_with 'out of range \(SIM_LATENCY_US=11000000\)' \
	ctl register --dev rxe0 --name x --latency 11s
check "timeout 0" fails_with 'out of range \(SYNC_TIMEOUT_MS=0\)' \
	ctl sync --dev rxe0 --timeout 0
check "timeout past 600 s" fails_with 'out of range \(SYNC_TIMEOUT_MS=660000\)' \
	ctl sync --dev rxe0 --timeout 11m
check "bad flags refused before the kernel" fails_with 'invalid --latency' \
	ctl register --dev rxe0 --name x --latency 1500ns
check "client count unchanged" expect clients "$(client_count)" "$n"
check "no sync ran" expect syncs "$(syncs_of)" "$g0"

# Outside the initial network namespace the family does not exist.
check "ip netns add sm-t" ip netns add sm-t
check "another netns: not available there" fails_with \
	"module ib_sync_mem is not available in this network namespace" \
	ip netns exec sm-t syncmemctl devices
check "ip netns del sm-t" ip netns del sm-t

# A creator in another pid namespace: OWNER_PID is its pid in the initial
# one (the UAPI's word), not the 1 it is in its own. syncmemctl is pid 1 of
# a new namespace; it waits for a line before it registers, so its pid
# outside can be read first.
mkfifo "$tmp/pidgo"
unshare --pid --fork sh -c 'read -r x && exec syncmemctl register --dev rxe0 --name in-pidns -j' \
	<"$tmp/pidgo" >"$tmp/pidns.json" 2>"$tmp/pidns.err" &
pidns=$!
exec 8>"$tmp/pidgo"
pidns_child() { grep -qE '^[0-9]+ ?$' /proc/"$pidns"/task/"$pidns"/children 2>/dev/null; }
check "pid namespace: its first process is there" wait_until 30 pidns_child
inner=$(tr -d ' ' </proc/"$pidns"/task/"$pidns"/children)
echo go >&8
exec 8>&-
check "pid namespace: the creation ends 0" ended_ok "$pidns" 60
cat "$tmp/pidns.json" "$tmp/pidns.err" >&2
check "pid namespace: owner_pid is the creator's pid outside ($inner), not 1" \
	jq_file ".name == \"in-pidns\" and .owner_pid == $inner and $inner != 1" "$tmp/pidns.json"
check "pid namespace: the list says the same" expect owner_pid \
	"$(ctl list -j | jq -r '.[] | select(.name == "in-pidns") | .owner_pid')" "$inner"
check "pid namespace: unregister it" ctl unregister id "$(jq -r .id "$tmp/pidns.json")"

# Clean up through the CLI, then unload.
mapfile -t ids < <(ctl list -j | jq -r '.[].id')
check "two clients left to unregister" test "${#ids[@]}" = 2
check "unregister every client" ctl unregister id "$(csv "${ids[@]}")"
check "unregister again fails" fails_with "no such client" ctl unregister id "$(csv "${ids[@]}")"
check "no clients left" expect clients "$(client_count)" 0
check "object counters back to zero" counters_zero

# The monitor outlives the module: it reports the family going away and
# coming back, then the new module's events.
rl_out=$tmp/reload.json
syncmemctl monitor -j >"$rl_out" 2>"$tmp/reload.err" &
mon=$!
check "reload: monitor subscribed" wait_until 30 grep -q "monitoring ib_sync_mem events" "$tmp/reload.err"
check "reload: rmmod ib_sync_mem_sim" sim_unload
check "reload: rmmod ib_sync_mem under a monitor" sm_unload
check "reload: the monitor reports the family gone" \
	wait_until 30 jq_file 'any(.[]; .event == "family-del")' "$rl_out" -s
check "reload: the monitor is still running" kill -0 "$mon"
check "reload: load ib_sync_mem again" sm_load
check "reload: load ib_sync_mem_sim again" sim_load
check "reload: the monitor reports the family back" \
	wait_until 30 jq_file 'any(.[]; .event == "family-new")' "$rl_out" -s
idr=$(ctl register --dev rxe0 --name nl-reload)
check "reload: register on the new module" is_id "$idr"
# Device events may come and go with the module too (rxe0's dev-del as it
# goes, its dev-new as it comes back, perhaps before the monitor has
# joined the new group): they are left out, the rest is exact and in order.
check "reload: the monitor shows the new module's event" wait_until 30 jq_file \
	"[.[] | select(.event | startswith(\"dev-\") | not)] |
	 map(.event) == [\"family-del\", \"family-new\", \"client-new\"] and .[2].id == $idr" "$rl_out" -s
echo "# reload: the monitor's events: $(jq -c -s 'map(.event)' "$rl_out")"
kill -TERM "$mon"
check "reload: the monitor exits 0 on SIGTERM" ended_ok "$mon" 30
check "reload: unregister" ctl unregister id "$idr"

check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
check "not loaded afterwards" fails_with '^Error: module ib_sync_mem is not loaded$' ctl devices
finish
