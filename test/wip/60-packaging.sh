#!/usr/bin/env bash
# Packaging, in the guest: the modules DKMS built and installed in the host
# tier (test/host.sh keeps them in build/dkms-modules) load and work; the
# Prometheus exporter (syncmemctl exporter, run unprivileged) serves the
# numbers `syncmemctl stats -j`, `list -j` and `devices -j` report,
# histograms included, queried afresh at every scrape; and the kernel's own
# YNL CLI (tools/net/ynl/cli.py of linux-source-6.12, vm/ynl-tree.sh), given
# only spec/ib_sync_mem.yaml, registers a sim client, syncs it, dumps the
# clients and receives the event.
# shellcheck disable=SC2317 # the helpers run through check
. "$(dirname "$0")/../vm/lib.sh"

tmp=$(mktemp -d)
exporter=
trap '[ -z "$exporter" ] || kill "$exporter" 2>/dev/null; rm -rf "$tmp"' EXIT

ctl() { syncmemctl "$@"; }
nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all "$@"
}
is_id() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
wait_until() {
	local end=$((SECONDS + $1 * SYNCMEM_SLOW))
	shift
	until "$@" 2>/dev/null; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}
jq_of() {
	local filter=$1 out
	shift
	out=$("$@") || return 1
	echo "$out" >&2
	jq -e "$filter" <<<"$out" >/dev/null
}
# ko DIR NAME: the module NAME in DIR, compressed or not.
ko() {
	local f
	for f in "$1/$2.ko" "$1/$2.ko.xz" "$1/$2.ko.gz" "$1/$2.ko.zst"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

# --- The DKMS-built modules (Debian kernels: the debug kernel is not a
# DKMS target, see test/host.sh).
kver=$(uname -r)
if vm/kernels.sh --is-debug "$kver"; then
	ok "DKMS modules load # SKIP the debug kernel is not a DKMS target"
else
	dkms=build/dkms-modules/$kver/updates/dkms
	dko=$(ko "$dkms" ib_sync_mem) && dsim=$(ko "$dkms" ib_sync_mem_sim)
	check "DKMS built ib_sync_mem and ib_sync_mem_sim for $kver (host tier)" \
		test -n "${dko:-}" -a -n "${dsim:-}"
	check "DKMS module's vermagic is $kver's" \
		bash -c "modinfo -F vermagic '${dko:-none}' | grep -q '^$kver '"
	check "insmod the DKMS ib_sync_mem" timeout 60 insmod "${dko:-none}"
	check "insmod the DKMS ib_sync_mem_sim" timeout 60 insmod "${dsim:-none}"
	check "loaded module is the DKMS build (srcversion)" test \
		"$(cat /sys/module/ib_sync_mem/srcversion 2>/dev/null)" = \
		"$(modinfo -F srcversion "${dko:-none}" 2>/dev/null)"
	id=$(ctl register --dev rxe0 --name dkms-a)
	check "DKMS module: register" is_id "$id"
	check "DKMS module: sync" jq_of '.run == 1 and .errors == 0' ctl sync --client "$id" -j
	check "DKMS module: unregister" ctl unregister "$id"
	check "rmmod the DKMS ib_sync_mem_sim" sim_unload
	check "rmmod the DKMS ib_sync_mem" sm_unload
fi

# --- The exporter.
check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load
ida=$(ctl register --dev rxe0 --name ex-a --latency 100us --size 4K)
check "register ex-a" is_id "$ida"
idb=$(ctl register --dev rxe0 --name ex-b --latency 1ms --size 64K --fail-next 1)
check "register ex-b, failing its first sync" is_id "$idb"
ctl sync --dev rxe0 -j >&2
check "sync rxe0 (ex-b's first sync fails)" test $? -ne 0
check "sync rxe0 again" ctl sync --dev rxe0 --dir to-cpu
check "sync ex-a alone" ctl sync --client "$ida"

ip link set lo up
URL=http://127.0.0.1:9710/metrics
nobody syncmemctl exporter --listen 127.0.0.1:9710 2>"$tmp/exporter.err" &
exporter=$!
check "exporter (unprivileged) says it serves" wait_until 10 \
	grep -qF "serving metrics on $URL" "$tmp/exporter.err"
scrape() { curl -sf -m 10 "$URL" >"$tmp/m"; }
check "scrape with curl" scrape
cat "$tmp/m" >&2

# metric SERIES: the value of SERIES in the last scrape.
metric() {
	awk -v s="$1" 'substr($0, 1, length(s) + 1) == s " " { print $NF; f = 1 } END { exit !f }' "$tmp/m"
}
# is SERIES VALUE: SERIES has VALUE (numerically, 1e-9 relative).
is() {
	local v
	v=$(metric "$1") || { echo "no $1" >&2; return 1; }
	echo "$1 = $v, want $2" >&2
	awk -v a="$v" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b
		exit !(d <= 1e-9 * m + 1e-12) }'
}
js() { jq -r "$2" <<<"$1"; }
mod=$(ctl stats -j)
dev=$(ctl stats --dev rxe0 -j)
devs=$(ctl devices -j)
sa=$(ctl stats --client "$ida" -j)
sb=$(ctl stats --client "$idb" -j)
echo "$mod $dev $sa $sb" >&2
la="client_id=\"$ida\",client_name=\"ex-a\",device=\"rxe0\",kind=\"sim\""
lb="client_id=\"$idb\",client_name=\"ex-b\",device=\"rxe0\",kind=\"sim\""

check "syncmem_up 1" is syncmem_up 1
check "syncmem_clients = list -j length" is syncmem_clients "$(ctl list -j | jq length)"
check "module syncs = stats -j" is syncmem_syncs_total "$(js "$mod" .syncs)"
check "module errors = stats -j (1)" is syncmem_errors_total "$(js "$mod" .errors)"
check "module bytes = stats -j" is syncmem_bytes_total "$(js "$mod" .bytes)"
check "module seconds = stats -j time_ns" is syncmem_sync_seconds_total "$(js "$mod" '.time_ns / 1e9')"
check "device syncs = stats --dev -j" is 'syncmem_device_syncs_total{device="rxe0"}' "$(js "$dev" .syncs)"
check "device errors" is 'syncmem_device_errors_total{device="rxe0"}' "$(js "$dev" .errors)"
check "device bytes" is 'syncmem_device_bytes_total{device="rxe0"}' "$(js "$dev" .bytes)"
check "device clients" is 'syncmem_device_clients{device="rxe0"}' 2
check "device passes = devices -j" is 'syncmem_device_passes_total{device="rxe0"}' \
	"$(js "$devs" '.[] | select(.name == "rxe0") | .passes')"
check "ex-a syncs = stats --client -j (3)" is "syncmem_client_syncs_total{$la}" "$(js "$sa" .syncs)"
check "ex-a synced 3 times" test "$(js "$sa" .syncs)" = 3
check "ex-b syncs (2)" is "syncmem_client_syncs_total{$lb}" "$(js "$sb" .syncs)"
check "ex-b errors (1)" is "syncmem_client_errors_total{$lb}" 1
check "ex-b bytes" is "syncmem_client_bytes_total{$lb}" "$(js "$sb" .bytes)"
check "ex-b seconds" is "syncmem_client_sync_seconds_total{$lb}" "$(js "$sb" '.time_ns / 1e9')"

# hist_is SCOPE_METRIC LABELS STATS_JSON: the histogram's buckets are the
# cumulative log2 slots (le = 2^i ns for i = 0..30, then +Inf), its count
# the syncs and its sum the time in sync callbacks.
hist_is() {
	local name=$1 labels=$2 j=$3
	jq -r '.hist[] | "\(.slot) \(.count)"' <<<"$j" | awk '{ c[$1] = $2 }
		END { for (i = 0; i <= 30; i++) { cum += c[i]; printf "%.9g %d\n", 2^i / 1e9, cum }
			for (k in c) if (k + 0 > 30) cum += c[k]; printf "+Inf %d\n", cum }' >"$tmp/want"
	grep -F "${name}_bucket{$labels${labels:+,}le=" "$tmp/m" |
		sed -E 's/.*le="([^"]*)"\} (.*)/\1 \2/' |
		awk '$1 == "+Inf" { print; next } { printf "%.9g %d\n", $1, $2 }' >"$tmp/got"
	diff "$tmp/want" "$tmp/got" >&2 || return 1
	is "${name}_count${labels:+{$labels\}}" "$(js "$j" .syncs)" &&
		is "${name}_sum${labels:+{$labels\}}" "$(js "$j" '.time_ns / 1e9')"
}
check "ex-a histogram = stats --client -j hist" hist_is syncmem_client_sync_duration_seconds "$la" "$sa"
check "ex-b histogram = stats --client -j hist" hist_is syncmem_client_sync_duration_seconds "$lb" "$sb"
check "device histogram" hist_is syncmem_device_sync_duration_seconds 'device="rxe0"' "$dev"
check "module histogram" hist_is syncmem_sync_duration_seconds "" "$mod"

# Every scrape asks the kernel afresh.
check "sync ex-a once more" ctl sync --client "$ida"
check "scrape again" scrape
check "ex-a syncs moved by exactly 1" is "syncmem_client_syncs_total{$la}" 4
check "unregister ex-b" ctl unregister "$idb"
check "scrape after unregister" scrape
check "ex-b's series are gone" bash -c "! grep -qF 'client_id=\"$idb\"' '$tmp/m'"
check "unregister ex-a" ctl unregister "$ida"
check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
check "scrape with the module unloaded" scrape
check "syncmem_up 0" is syncmem_up 0
check "no module series then" bash -c "! grep -q '^syncmem_syncs_total' '$tmp/m'"
# ended_ok PID SECONDS: the background job PID exits 0 within SECONDS.
ended_ok() {
	local pid=$1 end=$((SECONDS + $2))
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$SECONDS" -ge "$end" ]; then
			kill -KILL "$pid"
			wait "$pid"
			return 1
		fi
		sleep 0.1
	done
	wait "$pid"
}
kill -TERM "$exporter"
check "exporter exits 0 on SIGTERM" ended_ok "$exporter" 10
exporter=

# --- The kernel's YNL CLI, given only the spec.
tree=$(vm/ynl-tree.sh --path)
check "linux-source-6.12 YNL tree unpacked (vm/ynl-tree.sh)" test -f "${tree:-/none}/tools/net/ynl/cli.py"
ynl() {
	timeout 60 /usr/bin/python3 "$tree/tools/net/ynl/cli.py" --spec spec/ib_sync_mem.yaml \
		--schema "$tree/Documentation/netlink/genetlink-c.yaml" --output-json "$@"
}
check "load ib_sync_mem (YNL)" sm_load
check "load ib_sync_mem_sim (YNL)" sim_load
ynl --subscribe events --do client-new \
	--json '{"dev-name": "rxe0", "client-name": "ynl-a", "client-kind": 1, "sim": {"latency-us": 50}}' \
	>"$tmp/new" 2>&2
check "ynl: client-new" test $? = 0
cat "$tmp/new" >&2
yid=$(head -n1 "$tmp/new" | jq -r '."client-id"')
check "ynl: the reply is the new client" jq -e \
	'."client-name" == "ynl-a" and ."client-kind" == "sim" and ."client-state" == "live" and ."dev-name" == "rxe0"' \
	<(head -n1 "$tmp/new")
check "ynl: received the client-new-ntf event" jq -e --argjson id "${yid:-0}" \
	'any(.[]; .name == "client-new-ntf" and .msg."client-id" == $id and .msg."client-name" == "ynl-a")' \
	<(sed -n 2p "$tmp/new")
check "syncmemctl sees the YNL client" jq_of "any(.[]; .id == ${yid:-0} and .name == \"ynl-a\" and .sim.latency_ns == 50000)" ctl list -j
check "ynl: sync it" jq_of '."sync-run" == 1 and ."sync-errors" == 0 and ."sync-err" == 0' \
	ynl --do sync --json "{\"client-id\": ${yid:-0}, \"sync-dir\": 1}"
check "ynl: stats-get of it (1 sync)" jq_of '.stats.syncs == 1' \
	ynl --do stats-get --json "{\"client-id\": ${yid:-0}}"
check "ynl: dump clients" jq_of "length == 1 and .[0].\"client-id\" == ${yid:-0} and .[0].stats.syncs == 1" \
	ynl --dump client-get
check "ynl: dump devices has rxe0" jq_of 'any(.[]; ."dev-name" == "rxe0")' ynl --dump dev-get
check "ynl: client-del" ynl --do client-del --json "{\"client-id\": ${yid:-0}}"
check "no clients left" jq_of 'length == 0' ctl list -j
check "rmmod ib_sync_mem_sim (YNL)" sim_unload
check "rmmod ib_sync_mem (YNL)" sm_unload
finish
