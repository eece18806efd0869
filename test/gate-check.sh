#!/usr/bin/env bash
# Checks of the regression gate's judge (bench/gate.py check, as
# bench/gate.sh runs it) on made-up runs, no VM: a run at its budgets
# passes; a figure over its budget by more than its margin fails, and so
# does every run it cannot judge: no output at all, an empty or
# unparsable raw.txt, a figure missing, a run cut short, a run on another
# clock, lane or kernel, a VM run that failed, a budgets file without a
# figure's budget. It must never pass on nothing. The host tier runs it.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# budget NAME [FILE]: a figure's budget in instructions.
budget() { awk -v n="$1" '$1 == n { print $2 }' "${2:-bench/budgets}"; }
kver=$(awk '$1 == "kernel" { print $2; exit }' bench/budgets)
# The figures bench/gate.py measures, each of which a passing run says ok.
FIGURES="nop_ioctl|sync_ioctl|fanout64_untimed|fanout64_timed|range_4k|inbound_ioctl"

# made_up DIR [REPS]: a gate run whose every figure is at its budget.
made_up() {
	local d=$1 reps=${2:-5} r
	mkdir -p "$d"
	printf 'kernel=%s\nvcpus=1\naccel=tcg\nlane=gate\nclock=instructions\n' "$kver" >"$d/env.txt"
	for r in $(seq 0 $((reps - 1))); do
		awk -v r="$r" -v nop="$(budget nop_ioctl)" -v sync="$(budget sync_ioctl)" \
			-v off="$(budget fanout64_untimed)" -v on="$(budget fanout64_timed)" \
			-v rng="$(budget range_4k)" -v inb="$(budget inbound_ioctl)" 'BEGIN {
			printf "fanout n=64 rep=%d iters=1000 delay_us=0 sm_ns=%d untimed_ns=%d floor_ns=1100000 clock_ns=3900000\n", r, on * 64000, off * 64000
			printf "ranges rep=%d size=67108864 range=4096 iters=1000 whole_iters=1 range_ns=%d small_ns=590000 whole_ns=4198057\n", r, rng * 1000
			printf "inbound rep=%d iters=1000 gap_us=100 floor_ns=1 sm_ns=1 floor_med_ns=28600 sm_med_ns=51525 kernel_med_ns=33437 io_med_ns=%d\n", r, inb
			printf "devpath rep=%d iters=1000 nop_ns=%d ioctl_ns=%d async_ns=1 netlink_ns=1 enoent_ns=1 clean_ns=1\n", r, nop * 1000, sync * 1000
		}' >>"$d/raw.txt"
	done
}

# expect NAME RC PATTERN DIR [ARGS]: bench/gate.py check on DIR exits RC
# and its KTAP and messages match PATTERN (grep -E); for a failing run,
# no figure's check says ok.
expect() {
	local name=$1 rc=$2 pat=$3 d=$4 got out
	shift 4
	out=$(python3 bench/gate.py check "${GATE_BUDGETS:-bench/budgets}" "$d" "$@" 2>&1)
	got=$?
	out+=$'\n'$(cat "$d/gate.ktap" 2>/dev/null)
	if [ "$got" != "$rc" ]; then
		echo "gate-check: $name: exit $got, not $rc:"
		echo "$out" | sed 's/^/  | /'
		fails=$((fails + 1))
	elif ! grep -qE "$pat" <<<"$out"; then
		echo "gate-check: $name: no /$pat/ in:"
		echo "$out" | sed 's/^/  | /'
		fails=$((fails + 1))
	elif [ "$rc" != 0 ] && ! grep -qE '^not ok [0-9]+ gate:' "$d/gate.ktap" 2>/dev/null; then
		echo "gate-check: $name: failed without a failing check in $d/gate.ktap"
		fails=$((fails + 1))
	elif [ "$rc" = 0 ] && [ "$(grep -cE "^ok [0-9]+ gate:($FIGURES)( |$)" "$d/gate.ktap")" != 6 ]; then
		echo "gate-check: $name: passed without an ok of each of the 6 figures"
		fails=$((fails + 1))
	fi
}

made_up "$tmp/good"
expect "a run at its budgets" 0 '^ok [0-9]+ gate:sync_ioctl' "$tmp/good" --vm-rc 0

mkdir -p "$tmp/nothing"
expect "no output at all" 1 'not ok [0-9]+ gate:nop_ioctl # .*missing: no raw.txt' "$tmp/nothing"

made_up "$tmp/empty"
: >"$tmp/empty/raw.txt"
expect "an empty raw.txt" 1 'not ok [0-9]+ gate:raw # raw.txt is empty' "$tmp/empty"

made_up "$tmp/nodev"
sed -i '/^devpath /d' "$tmp/nodev/raw.txt"
expect "the data path missing" 1 "not ok [0-9]+ gate:sync_ioctl # .*missing: no 'devpath' line" "$tmp/nodev"

made_up "$tmp/nokey"
sed -i 's/ io_med_ns=[0-9]*//' "$tmp/nokey/raw.txt"
expect "a figure's field missing" 1 'not ok [0-9]+ gate:inbound_ioctl # .*has no io_med_ns' "$tmp/nokey"

made_up "$tmp/text"
sed -i 's/ nop_ns=[0-9]*/ nop_ns=abc/' "$tmp/text/raw.txt"
expect "an unparsable figure" 1 'not ok [0-9]+ gate:nop_ioctl # .*unparsable' "$tmp/text"

made_up "$tmp/garbled"
echo "fanout n=64 garbage" >>"$tmp/garbled/raw.txt"
expect "a line that is not key=value" 1 'not ok [0-9]+ gate:raw # 1 unparsable' "$tmp/garbled"

made_up "$tmp/short" 2
expect "a run cut short" 1 'not ok [0-9]+ gate:range_4k # .*cut short' "$tmp/short"

made_up "$tmp/tcg"
sed -i 's/^clock=.*/clock=tcg/' "$tmp/tcg/env.txt"
expect "a run on TCG's clock" 1 "not ok [0-9]+ gate:env # clock='tcg'" "$tmp/tcg"

made_up "$tmp/kernel"
sed -i 's/^kernel=.*/kernel=7.3.4+deb13-amd64/' "$tmp/kernel/env.txt"
expect "a run on another kernel" 1 'not ok [0-9]+ gate:env # kernel=' "$tmp/kernel"

made_up "$tmp/vm"
expect "a VM run that failed" 1 'not ok [0-9]+ gate:lane-ran' "$tmp/vm" --vm-rc 1

# Over and within a margin: the SYNC ioctl at its limit and just above.
for what in within over; do
	made_up "$tmp/$what"
	b=$(budget sync_ioctl)
	m=$(awk '$1 == "sync_ioctl" { sub("%", "", $3); print $3 }' bench/budgets)
	awk -v b="$b" -v m="$m" -v w="$what" '$1 == "devpath" {
		v = b * (1 + m / 100) * (w == "over" ? 1.005 : 0.999)
		sub(/ioctl_ns=[0-9]+/, sprintf("ioctl_ns=%d", v * 1000))
	} { print }' "$tmp/$what/raw.txt" >"$tmp/$what/raw.new" && mv "$tmp/$what/raw.new" "$tmp/$what/raw.txt"
done
expect "the SYNC ioctl within its margin" 0 '^ok [0-9]+ gate:sync_ioctl # .*\+[0-9.]+ %' "$tmp/within"
expect "the SYNC ioctl over its margin" 1 'not ok [0-9]+ gate:sync_ioctl # .*limit' "$tmp/over"

# A budgets file without one figure's budget judges nothing.
grep -v '^fanout64_timed ' bench/budgets >"$tmp/budgets"
made_up "$tmp/nobudget"
GATE_BUDGETS=$tmp/budgets expect "a figure without a budget" 1 'not ok [0-9]+ gate:budgets # .*no budget for fanout64_timed' "$tmp/nobudget"

# bench/gate.sh --judge as make test would see it: nothing is a failure.
mkdir -p "$tmp/judge"
if bench/gate.sh --judge "$tmp/judge" >/dev/null 2>&1; then
	echo "gate-check: bench/gate.sh --judge passed an empty run"
	fails=$((fails + 1))
fi

if [ "$fails" -gt 0 ]; then
	echo "gate-check: $fails checks failed"
	exit 1
fi
echo "gate-check: every check passed"
