#!/usr/bin/env bash
# Where the hot paths' instructions go (BENCHMARKS.md, issue 49): each
# ablation of bench/ablate.py (one guarantee's code taken out) applied to
# a scratch worktree of HEAD (build/ablate/tree), built for the gate's
# kernel, and measured by the gate lane on the instruction clock.
#
#   bench/ablate.sh NAME...       e.g. base no-busy ioctl-direct
#   bench/ablate.sh --list        the names
#
# Each run's lane in build/ablate/NAME; one line of figures per NAME on
# stdout (fewest of the repeats, then median and most). The copies are
# not correct code: never adopt one; the gate's verdicts on them mean
# nothing, only their counts. About 90 s per name after a first set-up.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[ "${1:-}" = --list ] && exec python3 "$top/bench/ablate.py" --list
[ $# -gt 0 ] || { echo "usage: bench/ablate.sh NAME... | --list" >&2; exit 2; }
kver=$(awk '$1 == "kernel" { print $2 }' "$top/bench/budgets")
[ -n "$kver" ] || { echo "ablate: no kernel= in bench/budgets" >&2; exit 1; }
out=$top/build/ablate
tree=$out/tree
mkdir -p "$out"
git -C "$top" worktree remove --force "$tree" >/dev/null 2>&1 || true
git -C "$top" worktree add --detach "$tree" HEAD >/dev/null
trap 'git -C "$top" worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
python3 "$top/bench/ablate.py" "$tree" --tolerant
(cd "$tree" && make --no-print-directory go tools lib >"$out/setup.log" 2>&1) ||
	{ echo "ablate: the scratch tree's tools do not build (see $out/setup.log)" >&2; exit 1; }
for name in "$@"; do
	git -C "$tree" checkout -q -- kmod
	python3 "$top/bench/ablate.py" "$tree" "$name"
	if ! (cd "$tree" && kmod/build.sh "$kver") >"$out/$name.build" 2>&1; then
		echo "$name: does not build (see $out/$name.build)"
		continue
	fi
	rm -rf "${out:?}/$name"
	"$tree/bench/gate.sh" --results "$out/$name" >"$out/$name.log" 2>&1 || true
	printf '%s:' "$name"
	grep -E '^\| (nop_ioctl|sync_ioctl|fanout64_untimed|fanout64_timed|range_4k) ' "$out/$name.log" |
		awk -F'|' '{ gsub(/ /, "", $2); printf " %s=%s", $2, $3 }'
	# dev_bench's own lines, kept even when a later step of it failed:
	# each mode's fewest instructions a call.
	[ -f "$out/$name/dev_bench.txt" ] &&
		awk '/^devpath / { for (i = 2; i <= NF; i++) { split($i, kv, "=")
				v[kv[1]] = kv[2] }
			for (k in v) if (k ~ /_ns$/) { x = v[k] / v["iters"]
				if (!(k in m) || x < m[k]) m[k] = x } }
			END { printf " devpath:"; for (k in m) printf " %s=%.1f", k, m[k] }' \
			"$out/$name/dev_bench.txt"
	echo
done
