#!/usr/bin/env bash
# Fuzzing the generic netlink family with test/fuzz/nlfuzz, and the data
# path /dev/ib_sync_mem with test/tools/ioctl_fuzz.c. nlfuzz: random and
# mutated messages from a privileged socket, as many from uid 65534 without
# capabilities (setpriv), and a short run through nlfuzz's own setresuid
# drop. The message count is the goal (make test: 20 000 each on Debian's
# kernels, 4 000 on the debug kernel; make soak: 100 000); nlfuzz's
# --timeout is only a hang guard, far above what the count takes.
# nlfuzz checks its invariants itself (no EPERM for root; EPERM for every
# request the genetlink core hands to the permission check, i.e. a
# well-formed mutating "do", whatever its attributes; no sensitive
# attribute in events or unprivileged replies; the family answers at the
# end). Then the module must still answer, its counters must be sane, the
# kernel-origin client must have survived, everything is deleted, the
# counters return to zero and both modules unload. The seeds and counts are
# recorded in KTAP diagnostic lines; NLFUZZ_SEED picks the privileged seed
# (the others are derived from it) to replay a run, NLFUZZ_COUNT overrides
# the count.
# shellcheck disable=SC2317 # the helpers run through check
. "$(dirname "$0")/lib.sh"
suite_begin

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

dmesg_lines0=$(dmesg | wc -l)
# counters_sane: every object counter a number >= 0, clients == registered
# (nothing in flight), and as many clients as the netlink listing shows.
counters_sane() {
	local d c r n
	cat "$DEBUGFS/counters" >&2
	d=$(counter domains) c=$(counter clients) r=$(counter registered)
	n=$(client_count) || return 1
	echo "domains=$d clients=$c registered=$r listed=$n" >&2
	is_num "$d" && is_num "$c" && is_num "$r" && [ "$d" -ge 1 ] &&
		[ "$c" = "$r" ] && [ "$r" = "$n" ]
}

# run_fuzz NAME SECONDS CMD...: run nlfuzz, keep its output in $tmp/NAME.out,
# record its summary as KTAP diagnostics, pass when it exits 0.
run_fuzz() {
	local name=$1 secs=$2 rc
	shift 2
	echo "--- $name: $*" >&2
	# stderr (progress, violations) streams into the suite's log.
	timeout --kill-after=10 "$secs" "$@" >"$tmp/$name.out" 2> >(tee "$tmp/$name.err" >&2)
	rc=$?
	wait $! 2>/dev/null # the tee
	cat "$tmp/$name.out" >&2
	sed "s/^nlfuzz:/# $name:/" "$tmp/$name.out"
	head -n 5 "$tmp/$name.err" | sed "s/^/# $name stderr: /"
	if [ "$rc" = 0 ]; then
		ok "$name: nlfuzz exits 0 (no invariant violated)"
	else
		not_ok "$name: nlfuzz exits 0 (no invariant violated) # exit $rc"
	fi
}
sent_of() { sed -n 's/^nlfuzz: seed [0-9-]* sent \([0-9]*\) messages.*/\1/p' "$tmp/$1.out"; }
line_of() { grep -E "^nlfuzz: $2" "$tmp/$1.out"; }

seed=${NLFUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
if [ "$SYNCMEM_LANE" = soak ]; then
	count=100000 setuid_count=2000
elif [ "${SYNCMEM_ON_DEBUG_KERNEL:-0}" = 1 ]; then
	count=4000 setuid_count=500
else
	count=20000 setuid_count=1000
fi
count=${NLFUZZ_COUNT:-$count}
# The hang guard: minutes where the count takes seconds.
fuzz_secs=$((200 * SYNCMEM_SLOW))
[ "$SYNCMEM_LANE" = soak ] && fuzz_secs=$((1200 * SYNCMEM_SLOW))
echo "# nlfuzz seeds: privileged $seed, unprivileged $((seed + 1)), setuid $((seed + 2))"
echo "# nlfuzz counts: privileged $count, unprivileged $count, setuid $setuid_count (SYNCMEM_SLOW $SYNCMEM_SLOW)"

check "syncmemctl on PATH" command -v syncmemctl
check "nlfuzz on PATH" command -v nlfuzz
check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load

# A couple of clients for the fuzzer to aim at: two created over netlink
# (the fuzzer may delete those), one by the sim driver (origin kernel,
# which no netlink request can delete).
ida=$(ctl register --dev rxe0 --name fz-a)
check "register fz-a" is_id "$ida"
idb=$(ctl register --dev rxe0 --name fz-b --latency 10us --size 4K)
check "register fz-b" is_id "$idb"
idk=$(sim_new rxe0 fz-kernel)
check "sim driver client fz-kernel" is_id "$idk"
check "three clients listed" test "$(client_count)" = 3

run_fuzz privileged $((fuzz_secs + 60)) nlfuzz --seed "$seed" --count "$count" \
	--timeout "${fuzz_secs}s"
n=$(sent_of privileged)
check "privileged: sent all $count messages before the hang guard (${n:-none})" test "${n:-0}" -ge "$count"
check "privileged: acks received" line_of privileged 'acks by errno: (.* )?0=[1-9]'
check "privileged: no EPERM ack" no_line '^nlfuzz: acks by errno: .*EPERM=' "$tmp/privileged.out"
check "privileged: health ok" line_of privileged 'health ok; violations 0'
check "fz-kernel survived the privileged fuzzing" has_client "$idk"
check "counters sane after the privileged run" counters_sane

run_fuzz unprivileged $((fuzz_secs + 60)) setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=-all --bounding-set=-all nlfuzz --unprivileged --seed "$((seed + 1))" \
	--count "$count" --timeout "${fuzz_secs}s"
n=$(sent_of unprivileged)
check "unprivileged: sent all $count messages before the hang guard (${n:-none})" test "${n:-0}" -ge "$count"
check "unprivileged: ran as uid 65534" line_of unprivileged \
	"seed [0-9-]+ count $count timeout [^ ]+ uid 65534 unprivileged true"
check "unprivileged: EPERM acks checked" line_of unprivileged \
	'clients created 0, .*unprivileged EPERM acks checked [1-9]'
check "unprivileged: health ok" line_of unprivileged 'health ok; violations 0'
check "counters sane after the unprivileged run" counters_sane

run_fuzz setuid $((100 * SYNCMEM_SLOW)) nlfuzz --setuid 65534 --seed "$((seed + 2))" \
	--count "$setuid_count" --timeout $((90 * SYNCMEM_SLOW))s
n=$(sent_of setuid)
check "setuid: sent all $setuid_count messages before the hang guard (${n:-none})" test "${n:-0}" -ge "$setuid_count"
check "setuid: ran as uid 65534" line_of setuid \
	"seed [0-9-]+ count $setuid_count timeout [^ ]+ uid 65534 unprivileged true"
check "setuid: EPERM acks checked" line_of setuid \
	'clients created 0, .*unprivileged EPERM acks checked [1-9]'
check "setuid: health ok" line_of setuid 'health ok; violations 0'

# The data path: random ioctls to /dev/ib_sync_mem (test/tools/ioctl_fuzz.c
# checks its own invariants: documented errnos, every fence signalled,
# none left), with the same seed and count.
run_prog --timeout $((fuzz_secs + 60)) ioctl_fuzz --dev rxe0 --seed "$seed" --count "$count"

# The module after the storm.
check "devices still answers" ctl devices
check "devices -j lists rxe0" jq_of 'any(.[]; .dev == "rxe0")' ctl devices -j
check "list -j parses" jq_of 'type == "array" and all(.[]; .id > 0)' ctl list -j
# Every sync is timed (client_timing is Y): the histogram holds them all.
check "stats -j: the module's clients, and every sync in its histogram" jq_of \
	".scope == \"module\" and .clients == $(client_count) and ([.hist.buckets[]?.count] | add // 0) == .syncs" \
	ctl stats -j
s0=$(syncs_of)
check "module-wide syncs readable" is_num "$s0"
check "fz-kernel still there and live" jq_list ".[] | select(.id == $idk) |
	.origin == \"kernel\" and .state == \"live\""
check "fz-kernel still syncs" jq_of '.run == 1 and .errors == 0' ctl sync --id "$idk" -j
check "module-wide syncs moved by exactly 1" expect syncs "$(syncs_of)" $((s0 + 1))
check "counters sane" counters_sane
echo "# counters after fuzzing: $(tr '\n' ' ' <"$DEBUGFS/counters")"

# Delete everything: netlink clients through the CLI, the driver's through
# its debugfs file.
mapfile -t nl_ids < <(ctl list -j | jq -r '.[] | select(.origin == "netlink") | .id')
mapfile -t k_ids < <(ctl list -j | jq -r '.[] | select(.origin != "netlink") | .id')
echo "# left after fuzzing: ${#nl_ids[@]} netlink clients, ${#k_ids[@]} others"
if [ "${#nl_ids[@]}" -gt 0 ]; then
	check "unregister the netlink clients" ctl unregister id "$(csv "${nl_ids[@]}")"
fi
check "the driver's clients are fz-kernel alone" test "${k_ids[*]}" = "$idk"
for id in "${k_ids[@]}"; do
	check "sim_del $id" sim_del "$id"
done
check "no clients left" test "$(client_count)" = 0
check "object counters back to zero" counters_zero
check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
check "no splat in dmesg during the suite" no_new_splat_since "$dmesg_lines0"
check "rxe0 still on veth0 for later suites" bash -c "rdma link show rxe0/1 | grep -q ' netdev veth0'"
finish
