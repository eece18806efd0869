#!/usr/bin/env bash
# The time tables of a test run as Markdown: the seconds each phase took
# (DIR/phases.txt) and the seconds per suite and kernel (DIR/<kver>/*.secs,
# the whole VM from DIR/<kver>/vm.secs), for the kernels of
# DIR/kernels.expected and the hosts of a two-host run, found as
# test/summary.sh finds them.
#
#   test/timings.sh DIR          print the tables
#   test/timings.sh DIR FILE     put them in FILE, in place, between the
#                                lines <!-- timings:begin --> and
#                                <!-- timings:end --> (make docs-timings:
#                                docs/testing.md)
#
# make test writes DIR/timings.md with it after the summary. Exits
# non-zero, FILE untouched, if DIR has no timings or FILE lacks the markers.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: test/timings.sh RESULTS_DIR [FILE]" >&2
	exit 2
fi
dir=$1 file=${2:-}
BEGIN='<!-- timings:begin -->'
END='<!-- timings:end -->'
export LC_ALL=C

[ -d "$dir" ] || { echo "timings.sh: no results directory $dir" >&2; exit 1; }

# The kernels of the VM tier, then the hosts of a two-host run (in
# DIR/two-hosts, or DIR itself for vm/run.sh --two-hosts alone): the
# columns, ks[i] the directory under DIR and titles[i] its title (the
# debug kernel's version with "(debug)" after it).
ks=() titles=()
if [ -s "$dir/kernels.expected" ]; then
	while read -r k; do
		[ -n "$k" ] || continue
		ks+=("$k")
		if "$top/vm/kernels.sh" --is-debug "$k" 2>/dev/null; then
			titles+=("$k (debug)")
		else
			titles+=("$k")
		fi
	done <"$dir/kernels.expected"
fi
th=
[ -f "$dir/two-hosts/hosts.expected" ] && th=two-hosts
[ -f "$dir/hosts.expected" ] && th=.
if [ -n "$th" ]; then
	while read -r -a hs; do
		for h in "${hs[@]}"; do
			ks+=("$th/$h")
			t=$th/$h
			titles+=("${t#./}")
		done
	done <"$dir/$th/hosts.expected"
fi

if [ ! -s "$dir/phases.txt" ] && [ "${#ks[@]}" -eq 0 ]; then
	echo "timings.sh: no timings in $dir (no phases.txt, no kernels.expected, no hosts.expected)" >&2
	exit 1
fi

# secs K SUITE: the seconds SUITE took on K, "-" if it did not run there.
secs() {
	local v
	v=$(cat "$dir/$1/$2.secs" 2>/dev/null)
	echo "${v:--}"
}

tables() {
	local when k s row suites
	when=$(date -u -r "$dir/phases.txt" +%F 2>/dev/null || date -u -r "$dir" +%F)
	echo "Seconds, from a run of $when; \`make docs-timings\` after a \`make test\` replaces these tables."
	if [ -s "$dir/phases.txt" ]; then
		echo
		echo "| phase | seconds |"
		echo "|---|---:|"
		awk 'NF >= 2 { printf "| %s | %d |\n", $1, $2; t += $2 }
			END { printf "| **all phases** | **%d** |\n", t }' "$dir/phases.txt"
	fi
	[ "${#ks[@]}" -gt 0 ] || return 0
	suites=$(for k in "${ks[@]}"; do ls "$dir/$k"/*.secs 2>/dev/null; done |
		xargs -r -n1 basename | sed 's/\.secs$//' | grep -vx vm | sort -u)
	echo
	row="| suite |"
	for k in "${titles[@]}"; do row+=" $k |"; done
	echo "$row"
	row="|---|"
	for k in "${ks[@]}"; do row+="---:|"; done
	echo "$row"
	for s in $suites vm; do
		if [ "$s" = vm ]; then row="| **whole VM** |"; else row="| $s |"; fi
		for k in "${ks[@]}"; do
			if [ "$s" = vm ]; then row+=" **$(secs "$k" "$s")** |"; else row+=" $(secs "$k" "$s") |"; fi
		done
		echo "$row"
	done
}

if [ -z "$file" ]; then
	tables
	exit
fi

[ -f "$file" ] || { echo "timings.sh: no file $file" >&2; exit 1; }
nb=$(grep -cxF "$BEGIN" "$file")
ne=$(grep -cxF "$END" "$file")
if [ "$nb" != 1 ] || [ "$ne" != 1 ] ||
	[ "$(grep -nxF "$BEGIN" "$file" | cut -d: -f1)" -gt "$(grep -nxF "$END" "$file" | cut -d: -f1)" ]; then
	echo "timings.sh: $file needs one line $BEGIN and, after it, one line $END" >&2
	exit 1
fi
new=$(tables) || exit 1
tmp=$(mktemp) && blk=$(mktemp) || exit 1
# The block's content comes from a file: awk -v would read its
# backslashes as escapes.
printf '\n%s\n\n' "$new" >"$blk"
awk -v b="$BEGIN" -v e="$END" -v blk="$blk" '
	$0 == b { print; while ((getline l < blk) > 0) print l; skip = 1; next }
	$0 == e { skip = 0 }
	!skip' "$file" >"$tmp" && cat "$tmp" >"$file"
rc=$?
rm -f "$tmp" "$blk"
[ $rc -eq 0 ] && echo "timings.sh: the time tables of $dir are in $file" >&2
exit $rc
