#!/usr/bin/env bash
# Hostile callers and hostile timing: another uid without capabilities
# (EPERM on every mutating command, no sensitive fields), CAP_NET_ADMIN in a
# user namespace only (EPERM: the family wants it in the initial one), the
# per-device and global client limits (ENOSPC, nothing leaks), unloading
# modules under live clients (refused while a client holds them), and RDMA
# devices going away under clients: rdma link delete, then rmmod rdma_rxe
# (their netlink clients go with them, the counters drop). rxe0 is
# recreated at the end so that later suites still have it.
# shellcheck disable=SC2317 # the helpers run through check
. "$(dirname "$0")/lib.sh"
suite_begin

tmp=$(mktemp -d)
PARAMS=/sys/module/ib_sync_mem/parameters
orig_per_dev=
orig_max=
restore() {
	if [ -n "$orig_per_dev" ] && [ -w "$PARAMS/max_clients_per_dev" ]; then
		echo "$orig_per_dev" >"$PARAMS/max_clients_per_dev"
	fi
	if [ -n "$orig_max" ] && [ -w "$PARAMS/max_clients" ]; then
		echo "$orig_max" >"$PARAMS/max_clients"
	fi
	# Later suites need rxe0 on veth0, as vm/guest.sh set it up.
	grep -q '^rdma_rxe ' /proc/modules || modprobe rdma_rxe
	rdma_link_on rxe0 veth0 || rdma link add rxe0 type rxe netdev veth0
	rdma_link_on rxe1 veth1 && rdma link delete rxe1
	rm -rf "$tmp"
}
trap restore EXIT

# userns CMD...: uid 65534 without capabilities, then root with every
# capability in a new user namespace (no new network namespace).
userns() { nobody unshare -Ur "$@"; }
EPERM='operation not permitted \(requires CAP_NET_ADMIN\)'
LIMIT='client limit reached \(max_clients or max_clients_per_dev\)'
sensitive='(has("owner_pid") or has("owner_portid") or has("sim") or has("region") or has("dmabuf") or has("info"))'

check "syncmemctl on PATH" command -v syncmemctl
check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load
check "no clients at start" expect clients "$(client_count)" 0

id1=$(ctl register --dev rxe0 --name h-a --latency 5us --size 8K)
check "register h-a" is_id "$id1"
id2=$(ctl register --dev rxe0 --name h-b)
check "register h-b" is_id "$id2"

# ---- another uid, no capabilities ----
check "uid 65534: register refused with EPERM" fails_with "$EPERM" \
	nobody syncmemctl register --dev rxe0 --name evil
check "uid 65534: unregister refused with EPERM" fails_with "$EPERM" \
	nobody syncmemctl unregister id "$id1"
check "uid 65534: unregister of an unknown id refused with EPERM, not ENOENT" \
	fails_with "$EPERM" nobody syncmemctl unregister id 999999
check "uid 65534: sync of one client refused with EPERM" fails_with "$EPERM" \
	nobody syncmemctl sync --id "$id1"
check "uid 65534: batch sync refused with EPERM" fails_with "$EPERM" \
	nobody syncmemctl sync --id "$id1,$id2"
check "uid 65534: device sync refused with EPERM" fails_with "$EPERM" \
	nobody syncmemctl sync --dev rxe0
check "root sees the sensitive fields (the control)" jq_list \
	"length == 2 and all(.[]; has(\"owner_pid\") and has(\"owner_portid\") and has(\"sim\"))"
check "uid 65534: list -j without owner_pid, owner_portid, info" jq_of \
	"length == 2 and all(.[]; $sensitive | not)" nobody syncmemctl list -j
check "uid 65534: list ID -j without them" jq_of \
	"length == 1 and all(.[]; $sensitive | not)" nobody syncmemctl list id "$id1" -j
check "both clients still there" jq_list "([.[].id] | sort) == ([$id1, $id2] | sort)"
check "no sync ran for h-a" jq_of '.syncs == 0' ctl stats --id "$id1" -j

# ---- CAP_NET_ADMIN in a user namespace only ----
echo "--- userns settings: $(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo -) max_user_namespaces $(cat /proc/sys/user/max_user_namespaces)" >&2
# shellcheck disable=SC2016 # awk's $2
capeff=$(userns awk '/^CapEff:/ { print $2 }' /proc/self/status 2>"$tmp/unshare.err")
if [ -n "$capeff" ]; then
	ok "uid 65534 can unshare -Ur"
	# CAP_NET_ADMIN is bit 12.
	if (((0x$capeff >> 12) & 1)); then
		ok "CAP_NET_ADMIN in the user namespace (CapEff $capeff)"
	else
		not_ok "CAP_NET_ADMIN in the user namespace # CapEff $capeff"
	fi
	check "userns: register refused with EPERM" fails_with "$EPERM" \
		userns syncmemctl register --dev rxe0 --name evil
	check "userns: unregister refused with EPERM" fails_with "$EPERM" \
		userns syncmemctl unregister id "$id1"
	check "userns: sync refused with EPERM" fails_with "$EPERM" \
		userns syncmemctl sync --id "$id1"
	check "userns: device sync refused with EPERM" fails_with "$EPERM" \
		userns syncmemctl sync --dev rxe0
	check "userns: list -j without the sensitive fields" jq_of \
		"length == 2 and all(.[]; $sensitive | not)" userns syncmemctl list -j
	check "both clients still there, unsynced" jq_of '.syncs == 0' ctl stats --id "$id1" -j
else
	why=$(head -c 300 "$tmp/unshare.err" | tr '\n' ' ')
	cfg=/boot/config-$(uname -r)
	# Without CONFIG_USER_NS there is no /proc/PID/ns/user (the debug
	# kernel has neither its config in /boot nor /proc/config.gz).
	if [ ! -e /proc/self/ns/user ] ||
		{ [ -r "$cfg" ] && grep -q '^# CONFIG_USER_NS is not set' "$cfg"; } ||
		{ [ -r /proc/config.gz ] && zgrep -q '^# CONFIG_USER_NS is not set' /proc/config.gz; }; then
		skip "uid 65534 can unshare -Ur" "CONFIG_USER_NS is not set: $why"
	else
		not_ok "uid 65534 can unshare -Ur # unshare failed: $why"
	fi
fi
check "unregister h-a, h-b" ctl unregister id "$id1,$id2"

# ---- client limits ----
orig_per_dev=$(cat "$PARAMS/max_clients_per_dev")
orig_max=$(cat "$PARAMS/max_clients")
echo "# limits: max_clients_per_dev=$orig_per_dev max_clients=$orig_max"
check "rdma link add rxe1" rdma link add rxe1 type rxe netdev veth1
check "max_clients_per_dev=3" bash -c "echo 3 > $PARAMS/max_clients_per_dev"
for i in 1 2 3; do
	id=$(ctl register --dev rxe0 --name "lim-$i")
	check "per-device limit 3: client $i on rxe0" is_id "$id"
done
check "per-device limit 3: the 4th on rxe0 fails with ENOSPC's message" \
	fails_with "$LIMIT" ctl register --dev rxe0 --name lim-4
check "per-device limit: rxe1 still takes one" is_id "$(ctl register --dev rxe1 --name lim-r1)"
check "per-device limit: 4 clients, nothing leaked" expect clients "$(client_count)" 4
check "per-device limit: registered counter 4" counter_is registered 4
check "per-device limit: clients counter 4" counter_is clients 4
check "restore max_clients_per_dev" bash -c "echo $orig_per_dev > $PARAMS/max_clients_per_dev"
check "rxe0 takes a 4th once restored" is_id "$(ctl register --dev rxe0 --name lim-4)"
check "unregister all (limit test 1)" unregister_all

check "max_clients=3" bash -c "echo 3 > $PARAMS/max_clients"
check "global limit 3: client 1 on rxe0" is_id "$(ctl register --dev rxe0 --name glob-1)"
check "global limit 3: client 2 on rxe1" is_id "$(ctl register --dev rxe1 --name glob-2)"
check "global limit 3: client 3 on rxe0" is_id "$(ctl register --dev rxe0 --name glob-3)"
check "global limit 3: a 4th on rxe1 fails with ENOSPC's message" \
	fails_with "$LIMIT" ctl register --dev rxe1 --name glob-4
check "global limit 3: a 4th on rxe0 fails too" \
	fails_with "$LIMIT" ctl register --dev rxe0 --name glob-4
check "global limit: the sim driver is refused too, with ENOSPC" \
	fails_as 'write error: No space left on device$' sim_new rxe1 glob-k
check "global limit: 3 clients, nothing leaked" expect clients "$(client_count)" 3
check "global limit: registered counter 3" counter_is registered 3
check "global limit: clients counter 3" counter_is clients 3
check "restore max_clients" bash -c "echo $orig_max > $PARAMS/max_clients"
check "a 4th once restored" is_id "$(ctl register --dev rxe1 --name glob-4)"
check "limits restored" test "$(cat "$PARAMS/max_clients_per_dev") $(cat "$PARAMS/max_clients")" = "$orig_per_dev $orig_max"
check "unregister all (limit test 2)" unregister_all
check "rdma link delete rxe1" rdma link delete rxe1

# ---- unloading under live clients ----
s1=$(ctl register --dev rxe0 --name live-1)
check "register live-1" is_id "$s1"
s2=$(ctl register --dev rxe0 --name live-2 --latency 10us)
check "register live-2" is_id "$s2"
check "rmmod ib_sync_mem_sim with live sim clients: in use" rmmod_busy ib_sync_mem_sim
check "ib_sync_mem_sim still loaded" loaded ib_sync_mem_sim
check "rmmod ib_sync_mem with live clients: in use" rmmod_busy ib_sync_mem
check "ib_sync_mem still loaded" loaded ib_sync_mem
check "the clients still sync" jq_of '.run == 2 and .errors == 0' \
	ctl sync --id "$s1,$s2" -j
check "the clients still live" jq_list "[.[] | select(.id == $s1 or .id == $s2) | .state] == [\"live\", \"live\"]"

# ---- the RDMA device goes away under its clients ----
check "registered counter 2 before rxe0 goes" counter_is registered 2
check "rdma link delete rxe0 (2 live clients)" rdma link delete rxe0
check "live-1 went with rxe0" wait_until 5 lacks_client "$s1"
check "live-2 went with rxe0" lacks_client "$s2"
check "registered counter dropped to 0" wait_until 5 counter_is registered 0
check "clients counter dropped to 0" wait_until 5 counter_is clients 0
check "rxe0 gone from devices" jq_of 'type == "array" and all(.[]; has("dev") and .dev != "rxe0")' ctl devices -j
check "unregister of a gone client: no such client" fails_with "no such client" ctl unregister id "$s1"
check "rdma link add rxe0 again" rdma link add rxe0 type rxe netdev veth0
check "rxe0 back in devices" jq_of 'any(.[]; .dev == "rxe0")' ctl devices -j

# rmmod rdma_rxe with a live client on each of two rxe devices.
check "rdma link add rxe1 (for rmmod rdma_rxe)" rdma link add rxe1 type rxe netdev veth1
s3=$(ctl register --dev rxe0 --name drv-1)
check "register drv-1 on rxe0" is_id "$s3"
s4=$(ctl register --dev rxe1 --name drv-2)
check "register drv-2 on rxe1" is_id "$s4"
check "rmmod rdma_rxe with live clients on its devices" rmmod rdma_rxe
check "rdma_rxe unloaded" unloaded rdma_rxe
check "drv-1 and drv-2 went with their devices" jq_of 'length == 0' ctl list -j
check "no rxe device left in devices" jq_of \
	'type == "array" and all(.[]; has("dev") and (.dev | startswith("rxe") | not))' ctl devices -j
check "counters zero after rmmod rdma_rxe" wait_until 5 counters_zero
check "modprobe rdma_rxe" modprobe rdma_rxe
check "rdma link add rxe0 (for the suites after this one)" rdma link add rxe0 type rxe netdev veth0
check "rxe0 listed again" jq_of 'any(.[]; .dev == "rxe0")' ctl devices -j
s5=$(ctl register --dev rxe0 --name after)
check "a client on the new rxe0" is_id "$s5"
check "it syncs" jq_of '.run == 1 and .errors == 0' ctl sync --id "$s5" -j
check "unregister it" ctl unregister id "$s5"

# ---- timing windows ----
# A device removed between a kind's create() and the netlink family
# recording the client: the client must still go with its device. The sim
# kind holds its next creation after it registered (hold_create); the
# removal starts meanwhile and, once the creation is let go, races it to the
# record. Three rounds.
window_round() {
	local r=$1 creator remover waiting=1 created=1 id
	rdma link add rxe1 type rxe netdev veth1 || return 1
	echo 1 > "$SIMFS/hold_create"
	syncmemctl register --dev rxe1 --name "in-window-$r" -j >"$tmp/window.json" 2>"$tmp/window.err" &
	creator=$!
	wait_until 60 sim_held held 1 || { echo 0 > "$SIMFS/hold_create"; return 1; }
	rdma link delete rxe1 >"$tmp/window-del.err" 2>&1 &
	remover=$!
	# The removal waits for the creation (which holds the device).
	wait_until 30 waits_in "$remover" sm_nl_domain_removed disable_device __ib_unregister_device ||
		{ echo "round $r: the removal is not waiting"; waiting=0; }
	echo 0 > "$SIMFS/hold_create"
	ended_ok "$creator" 60 || { echo "round $r: the creation failed"; created=0; }
	cat "$tmp/window.json" "$tmp/window.err" >&2
	ended_ok "$remover" 120 || { echo "round $r: the removal did not complete"; return 1; }
	[ "$waiting" = 1 ] && [ "$created" = 1 ] || return 1
	# The creation was answered with its client, which went with rxe1.
	id=$(jq -r .id "$tmp/window.json")
	is_id "$id" || { echo "round $r: no id in the reply"; return 1; }
	lacks_client "$id" || { echo "round $r: its client stayed"; return 1; }
	jq_list "all(.[]; .name != \"in-window-$r\")" || { echo "round $r: its client stayed"; return 1; }
	wait_until 30 counters_zero
}
for r in 1 2 3; do
	check "creation window, round $r: the client goes with its device, nothing left" window_round "$r"
done
# The same window, the creation failing there (fail_create: the kind undoes
# its client and fails late, EIO) while the removal waits for it: the
# removal still returns (a failed creation wakes it), the creation fails
# with its reason, nothing is left.
failed_window() {
	local creator remover
	rdma link add rxe1 type rxe netdev veth1 || return 1
	echo 1 > "$SIMFS/hold_create"
	echo 5 > "$SIMFS/fail_create"
	syncmemctl register --dev rxe1 --name in-window-failed -j >"$tmp/window.json" 2>"$tmp/window.err" &
	creator=$!
	wait_until 60 sim_held held 1 || { echo 0 > "$SIMFS/hold_create"; return 1; }
	rdma link delete rxe1 >"$tmp/window-del.err" 2>&1 &
	remover=$!
	wait_until 30 waits_in "$remover" sm_nl_domain_removed disable_device __ib_unregister_device ||
		{ echo 0 > "$SIMFS/hold_create"; echo "the removal is not waiting"; return 1; }
	echo 0 > "$SIMFS/hold_create"
	ended_within "$creator" 60 || return 1
	cat "$tmp/window.json" "$tmp/window.err" >&2
	[ "$ENDED_RC" != 0 ] || { echo "the creation succeeded"; return 1; }
	grep -q 'the creation failed late (fail_create)' "$tmp/window.err" ||
		{ echo "the creation failed without its reason"; return 1; }
	ended_ok "$remover" 120 || { echo "the removal did not complete"; return 1; }
	jq_list 'all(.[]; .name != "in-window-failed")' || { echo "its client stayed"; return 1; }
	wait_until 30 counters_zero
}
check "creation window, failing there: the removal still returns, nothing left" failed_window

# Owned clients belong to their socket: a late NETLINK_URELEASE of a
# closed socket whose port id a new socket already reuses (ib_sync_mem_test
# holds that release back) deletes the old socket's clients only.
check "load ib_sync_mem_test (a held release)" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0
run_prog owned_reuse --dev rxe0
check "unload ib_sync_mem_test" rmmod ib_sync_mem_test

# The sim module's debugfs deletes only what debugfs created, and two
# deleters of one client do not both delete it.
nid=$(ctl register --dev rxe0 --name nl-sim)
check "a sim client created through netlink" is_id "$nid"
check "debugfs del_client refuses a client the netlink family owns with EBUSY" \
	fails_as 'write error: Device or resource busy$' sim_del "$nid"
check "netlink deletes it" ctl unregister id "$nid"
# Each round counts; one that could not create its client ends the loop
# short of 20. The loser's write fails with ENOENT: it found nothing.
rounds=0 once=0
for i in $(seq 20); do
	rid=$(sim_new rxe0 "race-$i") || break
	rounds=$((rounds + 1))
	: >"$tmp/won"
	: >"$tmp/lost"
	(sim_del "$rid" 2>>"$tmp/lost" && echo >>"$tmp/won") &
	d1=$!
	(sim_del "$rid" 2>>"$tmp/lost" && echo >>"$tmp/won") &
	d2=$!
	wait "$d1" "$d2"
	cat "$tmp/lost" >&2
	[ "$(wc -l <"$tmp/won")" = 1 ] && [ "$(wc -l <"$tmp/lost")" = 1 ] &&
		grep -q 'write error: No such file or directory$' "$tmp/lost" && once=$((once + 1))
done
check "two debugfs deleters of one client: one wins, the other gets ENOENT, 20 rounds of 20" \
	expect "rounds, won once" "$rounds $once" "20 20"
check "no clients left" expect clients "$(client_count)" 0
check "object counters back to zero" counters_zero
check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
check "rxe0 on veth0 for later suites" rdma_link_on rxe0 veth0
check "no rxe1 left" rdma_link_gone rxe1
finish
