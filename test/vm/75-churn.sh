#!/usr/bin/env bash
# Churn: clients, sockets, devices and modules coming and going at once,
# bounded by iteration counts (smaller on the debug kernel). Each round:
#
#   - rxe1 gets live clients of every kind: kernel (ib_sync_mem_test's
#     storm: 32 clients plus threads that sync the device and register),
#     sim (netlink and debugfs), region and dma-buf (build/bin/churn hold),
#     and is deleted under them;
#   - workers (build/bin/churn run, several processes) register and delete
#     clients of every kind on rxe0 and rxe1, sync them one by one, in
#     batches and device-wide, dump, and close their sockets with owned
#     clients on them;
#   - ib_sync_mem_test's churn case registers, unregisters and syncs rxe0
#     in the kernel meanwhile;
#   - `rdma link delete/add rxe1` in a loop, the sim module reloaded
#     whenever it can be, holders of owned clients (syncmemctl register
#     --hold and churn hold) killed with SIGKILL.
#
# Then rxe0 itself is deleted once with clients of every kind and re-added.
# Afterwards: no worker saw an unexpected error, every device deletion left
# its clients invalidated or gone, killed holders left nothing, object
# counters are zero, rmmod is clean; the host checks dmesg for splats (and
# kmemleak on the debug kernel). The operation counts end the output as
# KTAP diagnostics. rxe0 stays on veth0 and ib_sync_mem is unloaded, as the
# next suites expect.
. "$(dirname "$0")/lib.sh"
suite_begin

BIN=$SYNCMEM_BIN
tmp=$(mktemp -d)
S=$SYNCMEM_SLOW

if [ "$SYNCMEM_LANE" = soak ]; then
	ROUNDS=${CHURN_ROUNDS:-6} WORKERS=${CHURN_WORKERS:-4}
	ITERS=${CHURN_ITERS:-3000} CYCLES=${CHURN_CYCLES:-8}
	KILLS=${CHURN_KILLS:-8} KITERS=${CHURN_KITERS:-3000}
elif [ "${SYNCMEM_ON_DEBUG_KERNEL:-0}" = 1 ]; then
	# KASAN and lockdep under TCG: every device deletion under the storm
	# takes a minute or more there.
	ROUNDS=${CHURN_ROUNDS:-1} WORKERS=${CHURN_WORKERS:-2}
	ITERS=${CHURN_ITERS:-100} CYCLES=${CHURN_CYCLES:-2}
	KILLS=${CHURN_KILLS:-2} KITERS=${CHURN_KITERS:-100}
else
	ROUNDS=${CHURN_ROUNDS:-2} WORKERS=${CHURN_WORKERS:-3}
	ITERS=${CHURN_ITERS:-400} CYCLES=${CHURN_CYCLES:-4}
	KILLS=${CHURN_KILLS:-4} KITERS=${CHURN_KITERS:-400}
fi
echo "rounds $ROUNDS, $WORKERS workers x $ITERS iterations, $CYCLES device cycles, $KILLS kills per round, in-kernel churn $KITERS" >&2

# kinds_on DEV: the kinds of clients listed on DEV, sorted, one line.
kinds_on() {
	"$BIN/smnlctl" list | awk -v d="$1" '$3 == d { print $4 }' | sort -u | tr '\n' ' '
}
running() { local p n=0; for p; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done; echo $n; }
rxe1_busy() { [ "$(dev_clients rxe1)" -gt 0 ] 2>/dev/null; }
rxe1_add() { rdma link add rxe1 type rxe netdev veth1; }
rxe1_del() { rdma link delete rxe1; }
# storm_under_way DEV: the in-kernel storm started on DEV and has synced
# and registered there at least once.
storm_under_way() { run_step storm_start "$1" && run_step storm_wait; }
# names_left PATTERN: clients whose name matches PATTERN (awk regex);
# fails, printing nothing, when the list cannot be had.
names_left() {
	local list
	list=$("$BIN/smnlctl" list) || return 1
	awk -v p="$1" '$2 ~ p { n++ } END { print n + 0 }' <<<"$list"
}
names_left_are() { expect "clients named $1" "$(names_left "$1")" "$2"; }

dev_deletes=0 dev_deletes_busy=0 dev_deletes_full=0 reloads=0 reload_tries=0
kills=0 kills_live=0

# Kill holders of owned clients on rxe0 with SIGKILL: syncmemctl once it
# printed the id, churn hold at a random moment (during registration too).
killer() {
	local round=$1 i pid out n=0 live=0
	for i in $(seq "$KILLS"); do
		[ -e "$tmp/stop" ] && break
		out=$tmp/kill.$round.$i
		if [ $((i % 2)) = 1 ]; then
			syncmemctl register --dev rxe0 --name "kill$round-$i" --kind sim \
				--owned --hold 600s >"$out" 2>&1 &
			pid=$!
			wait_until 20 test -s "$out"
		else
			"$BIN/churn" hold --dev rxe0 --owned-only --tag "kh$round-$i" >"$out" 2>&1 &
			pid=$!
			sleep "0.$((RANDOM % 5))"
		fi
		if kill -0 "$pid" 2>/dev/null; then
			kill -KILL "$pid"
			n=$((n + 1))
			grep -qE '^(ready|[0-9]+$)' "$out" && live=$((live + 1))
		fi
		wait "$pid" 2>/dev/null
		sleep "0.$((RANDOM % 3))"
	done
	echo "$n $live" >"$tmp/killer.$round"
}

# Reload ib_sync_mem_sim whenever no sim client pins it.
reloader() {
	local round=$1 n=0 tries=0
	while [ ! -e "$tmp/stop" ]; do
		tries=$((tries + 1))
		if rmmod ib_sync_mem_sim 2>/dev/null; then
			if ! sim_load; then
				echo "insmod ib_sync_mem_sim failed after a reload" >&2
				echo fail >"$tmp/reload_fail"
				break
			fi
			n=$((n + 1))
		fi
		sleep "0.0$((RANDOM % 10))"
	done
	echo "$n $tries" >"$tmp/reloader.$round"
}

check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load
check "modprobe vgem" modprobe vgem
# shared: the in-kernel cases check their own clients, not the module-wide
# counts that the userspace churn beside them moves.
check "load ib_sync_mem_test (dev=rxe0, shared)" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0 \
	churn_iters="$KITERS" shared=1
has_device rxe1 || check "rdma link add rxe1 type rxe netdev veth1" rxe1_add

for round in $(seq "$ROUNDS"); do
	echo "=== round $round (t=${SECONDS}s)" >&2
	rm -f "$tmp/stop"
	has_device rxe1 || rxe1_add

	# rxe1 with clients of every kind, the in-kernel storm's among them.
	check "round $round: the storm syncs and registers on rxe1" storm_under_way rxe1
	simid=$(sim_new rxe1 "simfs-$round" latency_us=10)
	"$BIN/churn" hold --dev rxe1 --tag "hold$round" >"$tmp/hold.$round" 2>&1 &
	holder=$!
	wait_until 30 grep -q '^ready' "$tmp/hold.$round"

	kinds=$(kinds_on rxe1)
	echo "rxe1 kinds before deletion: $kinds" >&2
	if [ "$kinds" = "dmabuf kernel region sim " ]; then
		ok "round $round: rxe1 has live clients of every kind (kernel, sim, region, dma-buf)"
	else
		not_ok "round $round: rxe1 has live clients of every kind # got: $kinds"
	fi
	if rxe1_del; then
		dev_deletes=$((dev_deletes + 1)) dev_deletes_busy=$((dev_deletes_busy + 1))
		dev_deletes_full=$((dev_deletes_full + 1))
		ok "round $round: rdma link delete rxe1 under clients of every kind"
	else
		not_ok "round $round: rdma link delete rxe1 under clients of every kind"
	fi
	# The netlink-created clients went with the device; the debugfs sim
	# client is invalidated and stays until the sim module deletes it.
	check "round $round: the holder's clients went with rxe1" \
		names_left_are "^hold$round-" 0
	check "round $round: delete the invalidated debugfs sim client" sim_del "$simid"
	kill -KILL "$holder" && kills=$((kills + 1))
	wait "$holder" 2>/dev/null

	# Now everything at once, rxe1 coming and going under it.
	rxe1_add || echo "rdma link add rxe1 failed" >&2
	pids=()
	for w in $(seq "$WORKERS"); do
		"$BIN/churn" run --dev rxe0,rxe1 --iters "$ITERS" \
			--seed $((round * 1000 + w)) --tag "w$round-$w" \
			>"$tmp/worker.$round.$w" 2>&1 &
		pids+=($!)
	done
	(echo churn >"$KTFS/run") &
	kchurn=$!
	killer "$round" &
	killer_pid=$!
	reloader "$round" &
	reloader_pid=$!
	echo "device cycles from t=${SECONDS}s" >&2

	for c in $(seq 2 "$CYCLES"); do
		[ "$c" = 2 ] || rxe1_add || echo "rdma link add rxe1 failed (cycle $c)" >&2
		# Delete it under the workers' clients, if they are still at it.
		wait_until 3 rxe1_busy
		n=$(dev_clients rxe1)
		if rxe1_del; then
			dev_deletes=$((dev_deletes + 1))
			[ "${n:-0}" -gt 0 ] && dev_deletes_busy=$((dev_deletes_busy + 1))
			echo "rxe1 deleted with ${n:-?} clients, $(running "${pids[@]}") workers running" >&2
		else
			echo "rdma link delete rxe1 failed (cycle $c)" >&2
		fi
	done
	rxe1_add || echo "rdma link add rxe1 failed" >&2
	echo "device cycles done at t=${SECONDS}s" >&2

	failed=0
	for w in $(seq "$WORKERS"); do
		if ! wait "${pids[$((w - 1))]}"; then
			failed=$((failed + 1))
			echo "worker $round.$w failed (t=${SECONDS}s):" >&2
		fi
		grep -v '^counts ' "$tmp/worker.$round.$w" >&2
	done
	echo "workers done at t=${SECONDS}s" >&2
	if [ $failed = 0 ]; then
		ok "round $round: $WORKERS workers, no unexpected error"
	else
		not_ok "round $round: $WORKERS workers, no unexpected error # $failed failed"
		grep -h '^unexpected' "$tmp"/worker."$round".* | sort | uniq -c | head -n 10 | sed 's/^/# /'
	fi
	wait "$killer_pid"
	touch "$tmp/stop"
	wait "$reloader_pid"
	wait "$kchurn"
	echo storm_check >"$KTFS/run"

	read -r k kl <"$tmp/killer.$round"
	kills=$((kills + k)) kills_live=$((kills_live + kl))
	read -r r rt <"$tmp/reloader.$round"
	reloads=$((reloads + r)) reload_tries=$((reload_tries + rt))
	echo "round $round: $r reloads in $rt tries, $k kills ($kl after registering)" >&2
	# A killed holder's socket release queues the deletion of what it
	# owned (it does not wait for the syncs in flight): waited for.
	check "round $round: killed holders left no owned client" \
		wait_until 30 names_left_are "^(kill|kh)$round-" 0
	check "round $round: ib_sync_mem_sim loaded after the reloads" \
		test ! -e "$tmp/reload_fail"
	sim_loaded || sim_load
	if sim_unload && sim_load; then
		reloads=$((reloads + 1))
		ok "round $round: reload ib_sync_mem_sim once the churn is over"
	else
		not_ok "round $round: reload ib_sync_mem_sim once the churn is over"
	fi
	if wait_until 10 counters_zero; then
		ok "round $round: object counters back to zero"
	else
		not_ok "round $round: object counters back to zero # clients $(counter clients), registered $(counter registered)"
		"$BIN/smnlctl" list >&2
		cat "$DEBUGFS/clients" >&2
	fi
done

# rxe0 itself, once, under clients of every kind.
echo "=== rxe0" >&2
check "the storm syncs and registers on rxe0" storm_under_way rxe0
simid=$(sim_new rxe0 simfs-rxe0 latency_us=10)
"$BIN/churn" hold --dev rxe0 --tag hold0 >"$tmp/hold.0" 2>&1 &
holder=$!
wait_until 30 grep -q '^ready' "$tmp/hold.0"
kinds=$(kinds_on rxe0)
if [ "$kinds" = "dmabuf kernel region sim " ]; then
	ok "rxe0 has live clients of every kind"
else
	not_ok "rxe0 has live clients of every kind # got: $kinds"
fi
if rdma link delete rxe0; then
	dev_deletes=$((dev_deletes + 1)) dev_deletes_busy=$((dev_deletes_busy + 1))
	dev_deletes_full=$((dev_deletes_full + 1))
	ok "rdma link delete rxe0 under clients of every kind"
else
	not_ok "rdma link delete rxe0 under clients of every kind"
fi
echo storm_check >"$KTFS/run"
check "delete the invalidated debugfs sim client of rxe0" sim_del "$simid"
kill -KILL "$holder" && kills=$((kills + 1))
wait "$holder" 2>/dev/null
check "rdma link add rxe0 type rxe netdev veth0" rdma link add rxe0 type rxe netdev veth0
check "rxe0 attached again" wait_until 10 has_device rxe0

# The in-kernel cases' own results, one for one (kernel-churn.ktap is
# counted by test/summary.sh like every result).
cat "$KTFS/results" >"$SYNCMEM_RESULTS/kernel-churn.ktap"
grep -E '^ *# (churn|storm):' "$KTFS/results" >&2
check "in-kernel churn and storm cases all passed" \
	bash -c "grep -qE '^ok ' '$KTFS/results' && ! grep -qE '^not ok ' '$KTFS/results'"
kchurns=$(grep -cE '^(not )?ok [0-9]+ churn$' "$KTFS/results")
kstorms=$(grep -cE '^(not )?ok [0-9]+ device_removal_storm$' "$KTFS/results")
check "in-kernel churn ran every round ($kchurns of $ROUNDS) and the storm every deletion ($kstorms)" \
	test "$kchurns" = "$ROUNDS" -a "$kstorms" = $((ROUNDS + 1))
read -r kregs ksyncs < <(awk '
	/# churn:/ { for (i = 1; i <= NF; i++) { if ($(i + 1) ~ /^registrations/) r += $i; if ($(i + 1) == "device" && $(i + 2) ~ /^syncs/) s += $i } }
	/# storm:/ { for (i = 1; i <= NF; i++) { if ($(i + 1) ~ /^registrations/) r += $i; if ($(i + 1) == "syncs" && $(i + 2) == "ok,") s += $i } }
	END { print r + 0, s + 0 }' "$KTFS/results")

check "object counters zero" wait_until 10 counters_zero
check "unload ib_sync_mem_test" rmmod ib_sync_mem_test
check "unload ib_sync_mem_sim" sim_unload
check "modprobe -r vgem (no dma-buf still referenced)" modprobe -r vgem
check "rdma link delete rxe1" rxe1_del
check "rmmod ib_sync_mem" sm_unload
check "rxe0 on veth0 present for the next suites" \
	sh -c 'rdma link show rxe0/1 | grep -q "netdev veth0"'

# The operation counts.
sum() { awk -v k="$1" '/^counts / { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) s += kv[2] } } END { print s + 0 }' "$tmp"/worker.*; }
hold_regs=$(( (ROUNDS + 1) * 2 ))	# each churn hold of a round and rxe0: 2 of each kind
line="registrations: sim $(( $(sum reg_sim) + hold_regs )) (+ $(sum reg_simfs) through debugfs), region $(( $(sum reg_region) + hold_regs )), dma-buf $(( $(sum reg_dmabuf) + hold_regs )), kernel $kregs; refused (device or kind gone) $(sum refused)"
echo "# churn: $line"
echo "churn: $line" >&2
line="syncs: netlink $(( $(sum sync_single) + $(sum sync_batch) + $(sum sync_dev) )) (one $(sum sync_single), batch $(sum sync_batch), device $(sum sync_dev)), in-kernel $ksyncs; dumps $(sum dumps); deletes $(sum del); socket closes $(sum reopen) (owned clients gone $(sum owned_gone))"
echo "# churn: $line"
echo "churn: $line" >&2
line="device deletes $dev_deletes ($dev_deletes_busy with clients, $dev_deletes_full with every kind); sim reloads $reloads (of $reload_tries tries); SIGKILLs $kills ($kills_live of holders with live owned clients)"
echo "# churn: $line"
echo "churn: $line" >&2
check "every kind of operation happened" test "$(sum reg_sim)" -gt 0 -a "$(sum reg_region)" -gt 0 \
	-a "$(sum reg_dmabuf)" -gt 0 -a "$(sum reg_simfs)" -gt 0 -a "$reloads" -ge "$ROUNDS" \
	-a "$kills_live" -gt 0 -a "$dev_deletes_full" -gt "$ROUNDS"
rm -rf "$tmp"
finish
