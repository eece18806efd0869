#!/usr/bin/env bash
# make mutants: seeded defects, to measure what the suites catch.
#
#   test/mutants/run.sh [NAME...]     every test/mutants/*.patch, or the
#                                     named ones (file names without .patch)
#   test/mutants/run.sh --check       only check that every patch applies
#                                     to the tree (the host tier does this)
#
# Each patch is a realistic defect with a header:
#
#   Mutant: what the defect is
#   Suites: the VM suites (or go:PACKAGE for Go tests) that must catch it
#   Kernel: newest (the newest Debian kernel), debug (the debug kernel:
#           leaks and races), two-hosts (two VMs of the newest kernel on a
#           wire, Suites from test/two-hosts), or host (Go tests only, no VM)
#   Breaks: the guarantee it breaks
#
# One at a time, the patch is applied to a throw-away copy of the tracked
# tree (build/mutants/NAME), the copy is built for that kernel, and only the
# named suites run there (SYNCMEM_SUITES=..., KVER=...). The mutant is
# *caught* when a check fails (the first failing checks are recorded),
# *survived* when everything passed. A patch that does not apply or a copy
# that does not build is an error, not a catch. The table goes to
# test/mutants/RESULTS.md (committed); the exit status is non-zero if any
# mutant survived or errored. A survivor means a missing or weak test: fix
# the test, not the mutant.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. test/vm/lib.sh
dir=test/mutants

# field PATCH NAME: a header field of a patch.
field() { sed -n "s/^$2: *//p" "$1" | head -n1; }

# crash_of RESULTS: where a guest was when the kernel splatted or the VM
# died: the case that was running and the first splat line.
crash_of() {
	local log last splat
	log=$(ls -t "$1"/*/[0-9]*.log 2>/dev/null | head -n1)
	[ -n "$log" ] && last=$(grep -E '^--- ' "$log" | tail -n1 | sed -E 's/^--- (\[[0-9]+s\] )?//')
	splat=$(cat "$1"/*/dmesg.txt "$1"/*/console.log 2>/dev/null | grep -m1 -oE "($SPLAT).*" | cut -c1-120)
	[ -n "$last" ] && printf ' (during %s: %s)' "$(basename "$log" .log)" "$last"
	[ -n "$splat" ] && printf ' (kernel: %s)' "$splat"
}

shopt -s nullglob
if [ "${1:-}" = --check ]; then
	bad=0
	all=("$dir"/*.patch)
	if [ "${#all[@]}" -lt 15 ]; then
		echo "only ${#all[@]} seeded defects in $dir (at least 15)"
		bad=1
	fi
	for p in "${all[@]}"; do
		for f in Mutant Suites Kernel Breaks; do
			[ -n "$(field "$p" "$f")" ] || { echo "$p: no $f: line"; bad=1; }
		done
		if ! git apply --check "$p" 2>&1; then
			echo "$p: does not apply to the tree"
			bad=1
		fi
	done
	exit $bad
fi

patches=()
if [ $# -gt 0 ]; then
	for n; do patches+=("$dir/${n%.patch}.patch"); done
else
	patches=("$dir"/*.patch)
fi

newest=$(SYNCMEM_DEBUG_KERNEL=0 vm/kernels.sh | tail -n1)
debugk=$(vm/kernels.sh | while read -r k; do vm/kernels.sh --is-debug "$k" && echo "$k"; done)
work=$top/build/mutants
mkdir -p "$work"
rows=()
status=0
t_all=$SECONDS
tree=$(git describe --always --dirty 2>/dev/null || echo '(no git)')

for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	title=$(field "$p" Mutant) suites=$(field "$p" Suites) kind=$(field "$p" Kernel)
	t0=$SECONDS
	echo "== mutant $name: $title ($kind: $suites)" >&2
	copy=$work/$name
	rm -rf "$copy"
	mkdir -p "$copy"
	git ls-files -z | xargs -0 cp --parents -t "$copy"
	verdict= caught_by=
	# The copy lies inside this work tree (build/ is ignored): git apply
	# run there would take the patch's paths as the work tree's, skip them
	# as outside its directory and succeed having changed nothing. The
	# ceiling keeps git from finding the work tree; every file the patch
	# names must then differ from the tree's.
	if ! (cd "$copy" && GIT_CEILING_DIRECTORIES=$work git apply "$top/$p") \
		>"$work/$name.log" 2>&1; then
		verdict=error caught_by="the patch does not apply"
	fi
	for f in $(sed -n 's|^+++ b/||p' "$p"); do
		if [ -z "$verdict" ] && cmp -s "$top/$f" "$copy/$f"; then
			verdict=error caught_by="the patch left $f unchanged"
		fi
	done
	hosts=
	case $kind in
	newest) kver=$newest ;;
	two-hosts) kver=$newest hosts=--two-hosts ;;
	debug) kver=$debugk ;;
	host) kver= ;;
	*) verdict=error caught_by="unknown Kernel: $kind" ;;
	esac
	if [ -z "$verdict" ] && [ "$kind" = debug ] && [ -z "$kver" ]; then
		verdict=error caught_by="no debug kernel (make debug-kernel)"
	fi
	if [ -z "$verdict" ] && [ -n "$kver" ]; then
		if ! (cd "$copy" && kmod/build.sh "$kver" >/dev/null && make --no-print-directory go tools genl-test) \
			>>"$work/$name.log" 2>&1; then
			verdict=error caught_by="the mutant does not build (see build/mutants/$name.log)"
		fi
	fi
	if [ -z "$verdict" ]; then
		res=$copy/results
		rm -rf "$res"
		mkdir -p "$res"
		if [ -z "$kver" ]; then
			# Go tests: go:PACKAGE ...; KTAP from go test -v.
			pkgs=$(tr ' ' '\n' <<<"$suites" | sed -n 's/^go://p')
			(cd "$copy" && go test -count=1 -v $pkgs) >"$res/go.log" 2>&1
			{
				echo "KTAP version 1"
				sed -nE 's/^--- (PASS|FAIL): ([^ ]+).*/\1 \2/p' "$res/go.log" |
					awk '{ n++; print ($1 == "PASS" ? "ok " : "not ok ") n " go:" $2 } END { print "1.." n }'
			} >"$res/go.ktap"
			grep -q '^FAIL' "$res/go.log" && ! grep -q '^not ok' "$res/go.ktap" &&
				echo "not ok 999 go test # build or package failure" >>"$res/go.ktap"
		else
			(cd "$copy" && KVER=$kver SYNCMEM_SUITES="$suites" vm/run.sh $hosts --results "$res") \
				>>"$work/$name.log" 2>&1
		fi
		# The suites' own checks first, then the harness's (vm.ktap).
		fails=$({
			find "$res" -name '*.ktap' ! -name vm.ktap -exec grep -h '^not ok ' {} +
			find "$res" -name vm.ktap -exec grep -h '^not ok ' {} +
		} | sed -E 's/^not ok [0-9]+ //; s/ #.*//' | head -n 3)
		if grep -qE '^vm:[^ ]+:boot$' <<<"$fails"; then
			# Nothing ran: not a catch.
			verdict=error caught_by="the VM did not boot (see build/mutants/$name.log)"
		elif [ -n "$fails" ]; then
			verdict=caught
			caught_by=$(paste -sd ';' <<<"$fails" | sed 's/;/; /g')
			# Only the harness's own checks (the VM died, a splat):
			# say what the guest was doing and what the kernel said.
			if ! grep -qv '^vm:' <<<"$fails"; then
				caught_by+=$(crash_of "$res")
			fi
		elif find "$res" -name '*.ktap' -exec grep -qh '^ok ' {} + 2>/dev/null; then
			verdict=survived caught_by="every check passed"
		else
			verdict=error caught_by="no result at all (see build/mutants/$name.log)"
		fi
	fi
	secs=$((SECONDS - t0))
	echo "   $verdict: $caught_by ($secs s)" >&2
	[ "$verdict" = caught ] || status=1
	rows+=("| \`$name\` | $title | $suites | ${kver:-host} | **$verdict** | ${caught_by//|/\\|} | $secs |")
	# The results stay for a look (build/mutants/NAME.results); the copy goes.
	rm -rf "$work/$name.results"
	[ -d "$copy/results" ] && mv "$copy/results" "$work/$name.results"
	rm -rf "$copy"
done

# Only a run of every mutant rewrites the committed table.
out=$dir/RESULTS.md
[ $# -gt 0 ] && out=$work/RESULTS.md
{
	echo "# Seeded defects and the checks that catch them"
	echo
	echo "Written by \`make mutants\` (test/mutants/run.sh) on $(date -u +%Y-%m-%dT%H:%MZ), $((SECONDS - t_all)) s in all, on the tree of $tree."
	echo "Each mutant ran alone: patch applied to a copy, built, only its suites run."
	echo
	echo "| mutant | defect | suites | kernel | result | first failing checks | seconds |"
	echo "|---|---|---|---|---|---|---:|"
	printf '%s\n' "${rows[@]}"
} >"$out"
echo "mutants: table in $out" >&2
caught=$(printf '%s\n' "${rows[@]}" | grep -c '\*\*caught\*\*')
echo "mutants: $caught of ${#rows[@]} caught" >&2
exit $status
