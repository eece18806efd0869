#!/usr/bin/env bash
# Packaging, in the guest: the modules DKMS built and installed in the host
# tier (test/host.sh runs `make install` into build/pkgroot and keeps the
# installed modules in build/dkms-modules) load and work; the Prometheus
# exporter (syncmemctl exporter, run unprivileged) serves the numbers
# `syncmemctl stats -j`, `list -j` and `devices -j` report, histograms
# included, queried afresh at every scrape; and the kernel's own YNL CLI
# (tools/net/ynl/cli.py of linux-source-6.12, vm/ynl-tree.sh), given only
# spec/ib_sync_mem.yaml, registers a sim client, syncs it, dumps the
# clients and receives the family's events. Its transcript is in this
# suite's log and in $SYNCMEM_RESULTS/ynl-transcript.txt.
# shellcheck disable=SC2317 # the helpers run through check
. "$(dirname "$0")/lib.sh"
suite_begin

tmp=$(mktemp -d)
exporter=
exporter2=
listener=
trap '[ -z "$exporter" ] || kill "$exporter" 2>/dev/null
	[ -z "$exporter2" ] || kill "$exporter2" 2>/dev/null
	[ -z "$listener" ] || kill -KILL "$listener" 2>/dev/null; rm -rf "$tmp"' EXIT

# As nobody, without capabilities (an array, so that `$!` of a background
# job is the command itself, not a subshell).
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all
	--bounding-set=-all)
# ko DIR NAME: the module NAME in DIR, compressed or not.
ko() {
	local f
	for f in "$1/$2.ko" "$1/$2.ko.xz" "$1/$2.ko.gz" "$1/$2.ko.zst"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
# build_id KO: the GNU build ID of a module file (.ko or compressed).
build_id() {
	local f=$1
	case $f in
	*.xz) xz -dc "$f" >"$tmp/bid.ko" && f=$tmp/bid.ko ;;
	*.gz) gzip -dc "$f" >"$tmp/bid.ko" && f=$tmp/bid.ko ;;
	*.zst) zstd -qdc "$f" >"$tmp/bid.ko" && f=$tmp/bid.ko ;;
	esac
	readelf -n "$f" | awk '/Build ID:/ { print $3 }'
}
# loaded_build_id MODULE: the build ID of the loaded MODULE (its
# .note.gnu.build-id: a 12-byte header, "GNU\0", then the ID).
loaded_build_id() {
	od -An -tx1 -v -j16 "/sys/module/$1/notes/.note.gnu.build-id" | tr -d ' \n'
}
# same_build MODULE KO: the loaded MODULE is the file KO, and not the
# module make built in build/<kver>/kmod (whose build ID differs).
same_build() {
	local got want other
	got=$(loaded_build_id "$1") want=$(build_id "$2") other=$(build_id "$KO/$1.ko")
	echo "loaded $got, $2 $want, $KO/$1.ko $other" >&2
	[ -n "$want" ] && [ "$got" = "$want" ] && [ "$got" != "$other" ]
}

# --- The DKMS-built modules. The debug kernel is not a DKMS target: it is
# built from source in ~/.cache (vm/debug-kernel.sh), not installed, so it
# has no /lib/modules/<ver>/build for DKMS to build against.
kver=$(uname -r)
dkms=build/dkms-modules/$kver/updates/dkms
if vm/kernels.sh --is-debug "$kver"; then
	ok "DKMS modules load # SKIP $kver is the debug kernel, built in ~/.cache and not installed: DKMS has no /lib/modules/$kver/build to build against"
elif [ ! -d "$dkms" ]; then
	not_ok "DKMS modules load # $SYNCMEM_TOP/$dkms is missing: the host tier makes it (make test-host, or make test, which runs it before the VM tier)"
else
	dko=$(ko "$dkms" ib_sync_mem) && dsim=$(ko "$dkms" ib_sync_mem_sim)
	check "DKMS built ib_sync_mem and ib_sync_mem_sim for $kver (host tier)" \
		test -n "${dko:-}" -a -n "${dsim:-}"
	check "DKMS module's vermagic is $kver's" \
		bash -c "modinfo -F vermagic '${dko:-none}' | grep -q '^$kver '"
	check "insmod the DKMS ib_sync_mem" timeout 60 insmod "${dko:-none}"
	check "insmod the DKMS ib_sync_mem_sim" timeout 60 insmod "${dsim:-none}"
	check "loaded ib_sync_mem is the DKMS build (build ID)" same_build ib_sync_mem "${dko:-none}"
	check "loaded ib_sync_mem_sim is the DKMS build (build ID)" same_build ib_sync_mem_sim "${dsim:-none}"
	id=$(ctl register --dev rxe0 --name dkms-a)
	check "DKMS module: register" is_id "$id"
	check "DKMS module: sync" jq_of '.run == 1 and .errors == 0' ctl sync --id "$id" -j
	check "DKMS module: unregister" ctl unregister id "$id"
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
check "sync ex-a alone" ctl sync --id "$ida"

ip link set lo up
URL=http://127.0.0.1:9710/metrics
"${NOBODY[@]}" syncmemctl exporter listen 127.0.0.1:9710 per-client 2>"$tmp/exporter.err" &
exporter=$!
check "exporter (unprivileged) says it serves" wait_until 60 \
	grep -qF "serving metrics on $URL" "$tmp/exporter.err"
uid_of() { awk '$1 == "Uid:" { print $2 }' "/proc/$1/status"; }
check "exporter runs as uid 65534" test "$(uid_of "$exporter")" = 65534
scrape() { curl -sf -m $((60 * SYNCMEM_SLOW)) "$URL" >"$tmp/m"; }
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
sa=$(ctl stats --id "$ida" -j)
sb=$(ctl stats --id "$idb" -j)
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
	"$(js "$devs" '.[] | select(.dev == "rxe0") | .passes')"
check "ex-a syncs = stats --id -j (3)" is "syncmem_client_syncs_total{$la}" "$(js "$sa" .syncs)"
check "ex-a synced 3 times" test "$(js "$sa" .syncs)" = 3
check "ex-b syncs (2)" is "syncmem_client_syncs_total{$lb}" "$(js "$sb" .syncs)"
check "ex-b errors (1)" is "syncmem_client_errors_total{$lb}" 1
check "ex-b bytes" is "syncmem_client_bytes_total{$lb}" "$(js "$sb" .bytes)"
check "ex-b seconds" is "syncmem_client_sync_seconds_total{$lb}" "$(js "$sb" '.time_ns / 1e9')"

# hist_is SCOPE_METRIC LABELS STATS_JSON: the histogram's buckets are the
# cumulative log2 buckets of stats -j (bucket i, 2^i..2^(i+1)-1 ns, is
# le = 2^(i+1) ns for i = 0..30; the open-ended 31 only in +Inf), its
# count the syncs and its sum the time in sync callbacks.
hist_is() {
	local name=$1 labels=$2 j=$3
	jq -r '.hist.buckets[] | "\(.slot) \(.count)"' <<<"$j" | awk '{ c[$1] = $2 }
		END { for (i = 0; i <= 30; i++) { cum += c[i]; printf "%.9g %d\n", 2^(i + 1) / 1e9, cum }
			for (k in c) if (k + 0 > 30) cum += c[k]; printf "+Inf %d\n", cum }' >"$tmp/want"
	grep -F "${name}_bucket{$labels${labels:+,}le=" "$tmp/m" |
		sed -E 's/.*le="([^"]*)"\} (.*)/\1 \2/' |
		awk '$1 == "+Inf" { print; next } { printf "%.9g %d\n", $1, $2 }' >"$tmp/got"
	diff "$tmp/want" "$tmp/got" >&2 || return 1
	is "${name}_count${labels:+{$labels\}}" "$(js "$j" .syncs)" &&
		is "${name}_sum${labels:+{$labels\}}" "$(js "$j" '.time_ns / 1e9')"
}
check "ex-a histogram = stats --id -j hist" hist_is syncmem_client_sync_duration_seconds "$la" "$sa"
check "ex-b histogram = stats --id -j hist" hist_is syncmem_client_sync_duration_seconds "$lb" "$sb"
check "device histogram" hist_is syncmem_device_sync_duration_seconds 'device="rxe0"' "$dev"
check "module histogram" hist_is syncmem_sync_duration_seconds "" "$mod"

# Every scrape asks the kernel afresh.
check "sync ex-a once more" ctl sync --id "$ida"
check "scrape again" scrape
check "ex-a syncs moved by exactly 1" is "syncmem_client_syncs_total{$la}" 4

# Per-client series are opt-in: an exporter without per-client has the
# module's and the devices' series, none of a client.
"${NOBODY[@]}" syncmemctl exporter listen 127.0.0.1:9711 2>"$tmp/exporter2.err" &
exporter2=$!
check "exporter without per-client says it serves" wait_until 60 \
	grep -qF "serving metrics on http://127.0.0.1:9711/metrics" "$tmp/exporter2.err"
check "scrape it" bash -c "curl -sf -m $((60 * SYNCMEM_SLOW)) http://127.0.0.1:9711/metrics >'$tmp/m2'"
check "its device series" grep -qF 'syncmem_device_syncs_total{device="rxe0"}' "$tmp/m2"
check "its module histogram" grep -q '^syncmem_sync_duration_seconds_count ' "$tmp/m2"
check "no client series without per-client" no_line '^syncmem_client_' "$tmp/m2"
kill -TERM "$exporter2"
check "that exporter exits 0 on SIGTERM" ended_ok "$exporter2" 60
exporter2=
check "unregister ex-b" ctl unregister id "$idb"
check "scrape after unregister" scrape
check "ex-b's series are gone" no_line "client_id=\"$idb\"" "$tmp/m"
check "unregister ex-a" ctl unregister id "$ida"
check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
check "scrape with the module unloaded" scrape
check "syncmem_up 0" is syncmem_up 0
check "no module series then" no_line '^syncmem_syncs_total' "$tmp/m"
kill -TERM "$exporter"
check "exporter exits 0 on SIGTERM" ended_ok "$exporter" 60
exporter=
cat "$tmp/exporter.err" >&2

# --- The kernel's YNL CLI, given only the spec. Every call and its output
# go to the transcript: this suite's log, and ynl-transcript.txt in the
# results. The 6.12 CLI cannot take an event in the same call as a
# request that causes one (--subscribe with --do): YnlFamily._ops() sets
# op = None for the notification and then crashes on op.attr_set at the
# next recv. So a second CLI process listens: `--subscribe events --sleep
# N` subscribes, sleeps N seconds, then prints the events it received.
# Once it sleeps (so it has subscribed) it is stopped (SIGSTOP); the
# requests run, however long they take, while the kernel queues the events
# on its socket; continued (SIGCONT), it finishes its sleep and prints them.
tree=$(vm/ynl-tree.sh --path)
check "linux-source-6.12 YNL tree unpacked (vm/ynl-tree.sh)" test -f "${tree:-/none}/tools/net/ynl/cli.py"
TRANSCRIPT=$tmp/ynl-transcript.txt
SCHEMA=$tree/Documentation/netlink/genetlink-c.yaml
CLI=("$tree/tools/net/ynl/cli.py" --spec spec/ib_sync_mem.yaml --output-json)
{
	echo "# The kernel's YNL CLI on $kver: cli.py is"
	echo "# $tree/tools/net/ynl/cli.py (linux-source-6.12),"
	echo "# always run with --spec spec/ib_sync_mem.yaml --output-json;"
	echo "# \$SCHEMA is $SCHEMA."
} >"$TRANSCRIPT"
# shown ARGS...: ARGS as a shell command line (JSON in single quotes).
shown() {
	local a out=
	for a in "$@"; do
		# shellcheck disable=SC2016 # the name, for the reader
		[ "$a" = "$SCHEMA" ] && a='$SCHEMA'
		[[ $a =~ ^[A-Za-z0-9_./=\$-]+$ ]] || a="'$a'"
		out+=" $a"
	done
	echo "${out# }"
}
# ynl ARGS...: one call of the CLI, in the transcript; prints its stdout.
ynl() {
	local rc
	echo "\$ cli.py $(shown "$@")" >>"$TRANSCRIPT"
	timeout $((120 * SYNCMEM_SLOW)) /usr/bin/python3 "${CLI[@]}" "$@" >"$tmp/ynl.out" 2>&1
	rc=$?
	cat "$tmp/ynl.out" >>"$TRANSCRIPT"
	[ $rc = 0 ] || echo "(exit $rc)" >>"$TRANSCRIPT"
	cat "$tmp/ynl.out"
	return $rc
}
# in_sleep PID: PID is in clock_nanosleep (x86-64 syscall 230): the
# listener's time.sleep, which follows its subscription.
in_sleep() { read -r nr _ <"/proc/$1/syscall" && [ "$nr" = 230 ]; }
# stop_asleep PID: once PID sleeps, stop it; it must still be asleep then.
stop_asleep() {
	wait_until 120 in_sleep "$1" || { echo "it never slept" >&2; return 1; }
	kill -STOP "$1" || return 1
	# Stopped before its sleep ended, it has printed nothing.
	wait_until 10 grep -q '^State:.*T' "/proc/$1/status" && [ ! -s "$tmp/listen" ]
}

check "load ib_sync_mem (YNL)" sm_load
check "load ib_sync_mem_sim (YNL)" sim_load
# The first call validates the spec with the kernel's schema (the host
# tier does too: test/packaging/spec-check.sh); the others skip that.
check "ynl: dump devices has rxe0 (spec checked by the kernel's schema)" \
	jq_of 'any(.[]; ."dev-name" == "rxe0")' ynl --schema "$SCHEMA" --dump dev-get
nap=$((10 * SYNCMEM_SLOW))
echo "\$ cli.py --no-schema --subscribe events --sleep $nap &   # the listener" >>"$TRANSCRIPT"
/usr/bin/python3 "${CLI[@]}" --no-schema --subscribe events --sleep "$nap" >"$tmp/listen" 2>&1 &
listener=$!
check "ynl listener: subscribed to events (asleep), stopped" stop_asleep "$listener"
echo "# (the listener sleeps, so it has subscribed: kill -STOP it)" >>"$TRANSCRIPT"
ynl --no-schema --do client-new --json \
	'{"dev-name": "rxe0", "client-name": "ynl-a", "client-kind": "sim", "sim": {"latency-us": 50}}' \
	>"$tmp/new"
check "ynl: client-new" test $? = 0
yid=$(jq -r '."client-id"' "$tmp/new" 2>/dev/null)
check "ynl: the reply is the new sim client" jq_file \
	'."client-name" == "ynl-a" and ."client-kind" == "sim" and ."client-state" == "live" and ."dev-name" == "rxe0"' \
	"$tmp/new"
is_id "$yid" || yid=0
check "syncmemctl sees the YNL client (latency 50 us)" \
	jq_of "any(.[]; .id == $yid and .name == \"ynl-a\" and .sim.latency_ns == 50000)" ctl list -j
check "ynl: sync it" jq_of '."sync-run" == 1 and ."sync-errors" == 0 and ."sync-err" == 0' \
	ynl --no-schema --do sync --json "{\"client-id\": $yid, \"sync-dir\": \"to-device\"}"
check "ynl: stats-get of it (1 sync)" jq_of '.stats.syncs == 1' \
	ynl --no-schema --do stats-get --json "{\"client-id\": $yid}"
check "syncmemctl agrees (1 sync, to the device)" \
	jq_of "any(.[]; .id == $yid and .stats.syncs == 1 and .sim.calls_to_device == 1)" ctl list -j
check "ynl: dump clients" jq_of "length == 1 and .[0].\"client-id\" == $yid and .[0].stats.syncs == 1" \
	ynl --no-schema --dump client-get
check "ynl: client-del" ynl --no-schema --do client-del --json "{\"client-id\": $yid}"
echo "# (kill -CONT the listener)" >>"$TRANSCRIPT"
kill -CONT "$listener"
if ended_ok "$listener" $((10 + 120)); then lrc=0; else lrc=$?; fi
listener=
{
	echo "# the listener (exit $lrc):"
	cat "$tmp/listen"
} >>"$TRANSCRIPT"
check "ynl listener: exit 0" test "$lrc" = 0
# shellcheck disable=SC2016 # $id is jq's
check "ynl listener: received client-new-ntf of ynl-a" jq_file \
	'any(.[]; .name == "client-new-ntf" and .msg."client-id" == $id and .msg."client-name" == "ynl-a" and .msg."client-kind" == "sim")' \
	"$tmp/listen" --argjson id "$yid"
# shellcheck disable=SC2016 # $id is jq's
check "ynl listener: received client-del-ntf of ynl-a" jq_file \
	'any(.[]; .name == "client-del-ntf" and .msg."client-id" == $id and .msg."client-name" == "ynl-a")' \
	"$tmp/listen" --argjson id "$yid"
# A reply at the documented limit: a device sync of as many clients as a
# device may have, through the kernel's CLI (the results come in one or
# more nests; the CLI's receive buffer is 128 KiB).
limit=$(awk '$2 == "IB_SYNC_MEM_SYNC_BATCH_MAX" { print $3 }' kmod/include/uapi/linux/ib_sync_mem.h)
limit=${limit:-2048}
check "load ib_sync_mem_test (YNL at the limit)" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0
check "$limit clients on rxe0" bash -c "echo 'bulk_register $limit' > $KTFS/run"
# shellcheck disable=SC2016 # jq's
check "ynl: a device sync of $limit clients has $limit results, each id once" jq_of \
	'def each: if type == "array" then .[] else . end;
	 [."sync-results" | each | ."sync-result" | each | ."client-id"] as $ids |
	 ."sync-run" == '"$limit"' and ($ids | length) == '"$limit"' and ($ids | unique | length) == '"$limit" \
	ynl --no-schema --do sync --json '{"dev-name": "rxe0", "sync-dir": "to-device"}'
check "unregister the $limit" bash -c "echo bulk_unregister > $KTFS/run"
check "unload ib_sync_mem_test (YNL)" rmmod ib_sync_mem_test
check "no clients left" jq_of 'length == 0' ctl list -j
check "rmmod ib_sync_mem_sim (YNL)" sim_unload
check "rmmod ib_sync_mem (YNL)" sm_unload
{
	echo "--- YNL transcript"
	cat "$TRANSCRIPT"
} >&2
check "YNL transcript in the results" cp "$TRANSCRIPT" "$SYNCMEM_RESULTS/ynl-transcript.txt"
finish
