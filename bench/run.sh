#!/usr/bin/env bash
# make bench: boot the VM (the newest Debian kernel; KVER= picks another),
# run the benchmark suites in it, and turn the results into tables. Two
# lanes, one boot each:
#
#   tcg     every suite on plain TCG, two vCPUs (guest time is TCG's
#           emulated time: ratios only)
#   icount  the path-length suites on the instruction clock: one vCPU,
#           QEMU -icount shift=0,sleep=off, a guest ns is one guest
#           instruction (vm/boot.sh SYNCMEM_ICOUNT, bench/guest.sh --lane)
#
#   bench/run.sh [--lane tcg|icount|both]
#                           both lanes by default; results in
#                           bench/results/<kver>/ (tcg) and
#                           bench/results/<kver>/icount/, each lane's table
#                           in BENCHMARKS.md between its markers
#   bench/run.sh [--lane L] --smoke
#                           tiny counts, results in build/bench-smoke/<lane>
#                           only
#   bench/run.sh [--lane L] --profile 'CMD'
#                           one bench module command under perf in the
#                           guest (tcg by default; on the icount lane perf's
#                           cpu-clock samples every so many instructions);
#                           the profile in build/bench-profile/perf.txt
#
# The tcg lane's VM must be quiet for its figures to mean anything: nothing
# else should run on the machine meanwhile. The icount lane's counts do not
# depend on the host. Method: BENCHMARKS.md.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
smoke= lanes="tcg icount" profile=
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=--smoke; shift ;;
	--lane)
		case ${2:-} in
		tcg | icount) lanes=$2 ;;
		both) lanes="tcg icount" ;;
		*) echo "bench/run.sh: --lane tcg, icount or both" >&2; exit 2 ;;
		esac
		shift 2 ;;
	--profile) profile=${2:?usage: bench/run.sh --profile 'CMD'}; shift 2 ;;
	*) echo "bench/run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

# lane_opts LANE: vm/run.sh's options for the lane.
lane_opts() { [ "$1" = icount ] && echo --icount || true; }

if [ -n "$profile" ]; then
	# One lane: --lane icount picks it, both (the default) means tcg.
	lane=tcg
	[ "$lanes" = icount ] && lane=icount
	out=$top/build/bench-profile
	rm -rf "$out"
	mkdir -p "$out"
	# shellcheck disable=SC2046 # lane_opts: zero or one word
	vm/run.sh --bench "$out" $(lane_opts $lane) --profile "$profile"
	cat "$out/raw.txt" "$out/perf.txt"
	exit 0
fi

# table_into_doc TABLE LANE: the lane's table into BENCHMARKS.md, between
# its markers (the tcg lane's are the older bench:table ones).
table_into_doc() {
	python3 - "$1" "$2" <<'PY'
import sys
table, lane = open(sys.argv[1]).read(), sys.argv[2]
tag = "table" if lane == "tcg" else lane
path = "BENCHMARKS.md"
text = open(path).read()
begin, end = f"<!-- bench:{tag}:begin -->", f"<!-- bench:{tag}:end -->"
if begin not in text or end not in text:
    sys.exit(f"{path}: no {begin} ... {end} markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(f"{head}{begin}\n{table}{end}{tail}")
PY
}

for lane in $lanes; do
	if [ -n "$smoke" ]; then
		out=$top/build/bench-smoke/$lane
	else
		out=$top/build/bench/$lane
	fi
	rm -rf "$out"
	mkdir -p "$out"
	echo "bench: the $lane lane (results in $out)" >&2
	# shellcheck disable=SC2046 # lane_opts: zero or one word
	vm/run.sh --bench "$out" $(lane_opts "$lane") $smoke
	python3 bench/report.py --check "$out"
	kver=$(sed -n 's/^kernel=//p' "$out/env.txt")
	if [ -n "$smoke" ]; then
		cat "$out/table.md"
		continue
	fi
	dest=bench/results/$kver
	[ "$lane" = icount ] && dest=$dest/icount
	mkdir -p "$dest"
	cp "$out"/{raw.txt,env.txt,results.json,table.md} "$dest/"
	table_into_doc "$dest/table.md" "$lane"
	cat "$dest/table.md"
	echo "bench: the $lane lane's results in $dest, its table in BENCHMARKS.md" >&2
done
