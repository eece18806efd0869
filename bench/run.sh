#!/usr/bin/env bash
# make bench: boot the VM (the newest Debian kernel; KVER= picks another),
# run every benchmark suite in it, and turn the results into a table.
#
#   bench/run.sh            full run; results in bench/results/<kver>/ and
#                           the table in BENCHMARKS.md
#   bench/run.sh --smoke    tiny counts, results in build/bench-smoke only
#   bench/run.sh --profile 'CMD'
#                           one bench module command under perf in the
#                           guest; the profile in build/bench-profile/perf.txt
#
# The VM must be quiet for the figures to mean anything: nothing else
# should run on the machine meanwhile. Method: BENCHMARKS.md.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
smoke=
[ "${1:-}" = --smoke ] && smoke=--smoke
if [ "${1:-}" = --profile ]; then
	out=$top/build/bench-profile
	rm -rf "$out"
	mkdir -p "$out"
	vm/run.sh --bench "$out" --profile "${2:?usage: bench/run.sh --profile 'CMD'}"
	cat "$out/raw.txt" "$out/perf.txt"
	exit 0
fi

if [ -n "$smoke" ]; then
	out=$top/build/bench-smoke
else
	out=$top/build/bench
fi
rm -rf "$out"
mkdir -p "$out"
vm/run.sh --bench "$out" $smoke
python3 bench/report.py --check "$out"
kver=$(sed -n 's/^kernel=//p' "$out/env.txt")
[ -n "$smoke" ] && { cat "$out/table.md"; exit 0; }

dest=bench/results/$kver
mkdir -p "$dest"
cp "$out"/{raw.txt,env.txt,results.json,table.md} "$dest/"
# The latest table goes into BENCHMARKS.md between the markers.
python3 - "$dest/table.md" <<'PY'
import re, sys
table = open(sys.argv[1]).read()
path = "BENCHMARKS.md"
text = open(path).read()
begin, end = "<!-- bench:table:begin -->", "<!-- bench:table:end -->"
if begin not in text or end not in text:
    sys.exit(f"{path}: no {begin} ... {end} markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(f"{head}{begin}\n{table}{end}{tail}")
PY
cat "$dest/table.md"
echo "bench: results in $dest, table in BENCHMARKS.md" >&2
