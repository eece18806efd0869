#!/usr/bin/env bash
# make mutants: seeded defects, to measure what the suites catch.
#
#   test/mutants/run.sh [NAME...]     every test/mutants/*.patch, or the
#                                     named ones (file names without .patch)
#   test/mutants/run.sh --check       only check that every patch applies
#                                     to the tree, has its header, and is
#                                     not a constant switch (the host tier
#                                     does this)
#
# Each patch is a realistic defect with a header:
#
#   Mutant: what the defect is
#   Suites: the VM suites (or go:PACKAGE for Go tests) that must catch it,
#           or gate (make test's regression gate, bench/gate.sh: a path
#           grown past its budget in bench/budgets)
#   Kernel: newest (the newest Debian kernel), bounce (the newest whose
#           ib_umem maps DMA that needs syncs: below 7.x), debug (the debug
#           kernel: leaks and races), two-hosts (two VMs of the newest
#           kernel on a wire, Suites from test/two-hosts), gate (the
#           kernel bench/budgets names; Suites: gate), or host (Go tests
#           only, no VM)
#   Breaks: the guarantee it breaks
#
# A mutant is the slip a developer would make (a wrong variable, an
# inverted test, an off-by-one at a limit, a missed unlock, an error path
# that skips a step), never a check switched off with a constant: --check
# refuses a patch whose added lines do that (constant_switch below).
#
# Before the first mutant of each kernel and set of suites, the unmutated
# tree (a copy of it, built the same way) runs those suites on that kernel:
# the baseline. A baseline that fails is an error of the run (its mutants
# are not run and count as errors, the exit status is non-zero), never a
# catch. One at a time, the patch is applied to that kernel's copy
# (build/mutants/baseline-KVER), the copy is built again for that kernel
# (only what the patch changed is rebuilt: same paths, same commands),
# only the named suites run there (SYNCMEM_SUITES=..., KVER=...), and the
# files the patch changed are put back from the tree (with a new time:
# the next build rebuilds them unmutated). A baseline run after a mutant
# rebuilds first. The mutant
# is *caught* when a check fails (the first failing checks are recorded),
# *survived* when everything passed. A gate mutant is caught only by a
# figure over its budget: a gate lane that did not run or measure is an
# error. A patch that does not apply, a copy
# that does not build (for Go mutants: `go build ./...` and the named
# packages' tests compiled, before any test runs) or a failing baseline is
# an error, not a catch. The table goes to
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

# constant_switch PATCH: the added lines of PATCH that switch a check off
# (or on) with a constant, one per line; nothing for a real slip. A
# heuristic, on the + lines of each hunk:
#   - a condition joined with a constant: `&& 0`, `&& false`, `|| 1`,
#     `|| true`, `0 &&`, `false &&`, `1 ||`, `true ||` (comparisons with a
#     constant, `x != 0 &&`, are taken out first);
#   - a condition that is a constant: `if (0)`, `if (1)`, `if false {`,
#     `if true {`, `while (0)` excepted;
#   - `return CONSTANT;` (true, false, nil, a number, an UPPER_CASE name)
#     added in a hunk that removes a `return` of anything else: a computed
#     answer replaced by a fixed one.
# A removed line (a check deleted outright) is not flagged: forgetting a
# flag or a call is a slip developers make.
constant_switch() {
	awk '
	function flush() {
		if (nconst && nret) for (i = 1; i <= nconst; i++) print consts[i]
		nconst = 0; nret = 0
	}
	/^@@/ { flush(); next }
	/^\+\+\+ / || /^--- / { next }
	/^\+/ {
		l = substr($0, 2); sub(/^[ \t]+/, "", l); sub(/[ \t]+$/, "", l)
		# A comparison with a constant (x != 0) is no constant condition.
		c = l
		gsub(/[=!<>]=[ \t]*[-A-Za-z0-9_.]+/, "CMP", c)
		gsub(/[<>][ \t]*[-A-Za-z0-9_.]+/, "CMP", c)
		if (c ~ /(&&|\|\|)[ \t]*!?[ \t]*(0|1|false|true)([^A-Za-z0-9_.]|$)/ ||
		    c ~ /(^|[^A-Za-z0-9_.])(0|1|false|true)[ \t]*(&&|\|\|)/ ||
		    c ~ /^(}[ \t]*else[ \t]+)?if[ \t]*\([ \t]*!?[ \t]*(0|1|false|true)[ \t]*\)/ ||
		    c ~ /^(}[ \t]*else[ \t]+)?if[ \t]+!?(false|true)[ \t]*\{/) {
			print l; next
		}
		if (l ~ /^return[ \t]+(true|false|nil|-?[0-9]+|-?[A-Z][A-Z0-9_]*);?$/)
			consts[++nconst] = l
		next
	}
	/^-/ {
		l = substr($0, 2); sub(/^[ \t]+/, "", l); sub(/[ \t]+$/, "", l)
		if (l ~ /^return[ \t]/ &&
		    l !~ /^return[ \t]+(true|false|nil|-?[0-9]+|-?[A-Z][A-Z0-9_]*);?$/)
			nret++
	}
	END { flush() }' "$1"
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
		consts=$(constant_switch "$p")
		if [ -n "$consts" ]; then
			echo "$p: a constant switch, not a slip a developer makes: $(paste -sd'|' <<<"$consts" | sed 's/|/ | /g')"
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
# The newest Debian kernel whose ib_umem still maps DMA that needs syncs
# (7.x maps only coherent DMA): where a region's syncs move bytes.
bounce=$(SYNCMEM_DEBUG_KERNEL=0 vm/kernels.sh | while read -r k; do
	[ "$(vm/kernels.sh --class "$k")" = 7.x ] || echo "$k"
done | tail -n1)
debugk=$(vm/kernels.sh | while read -r k; do vm/kernels.sh --is-debug "$k" && echo "$k"; done)
gatek=$(awk '$1 == "kernel" { print $2; exit }' bench/budgets)
work=$top/build/mutants
mkdir -p "$work"
rows=()
base_rows=()
status=0
t_all=$SECONDS
tree=$(git describe --always --dirty 2>/dev/null || echo '(no git)')

# copy_tree DIR: a fresh copy of the tracked tree in DIR.
copy_tree() {
	rm -rf "$1"
	mkdir -p "$1"
	git ls-files -z | xargs -0 cp --parents -t "$1"
}

# restore_copy DIR PATCH: the files PATCH changes in DIR as the tree has
# them again, with a new time (a file it added goes); the next build of
# DIR rebuilds them. A copy that cannot be put back is no copy to run
# another mutant in: the run stops.
restore_copy() {
	local d=$1 f
	[ -d "$d" ] || return 0
	for f in $(sed -n 's|^+++ b/||p' "$2"); do
		if [ -e "$top/$f" ]; then
			cp "$top/$f" "$d/$f" && touch "$d/$f"
		else
			rm -f "$d/$f"
		fi
		if [ -e "$top/$f" ] && ! cmp -s "$top/$f" "$d/$f"; then
			echo "mutants: cannot put $f back in $d; stopping" >&2
			exit 2
		fi
	done
}

# go_pkgs SUITES: the Go packages of go:PACKAGE suites.
go_pkgs() { tr ' ' '\n' <<<"$1" | sed -n 's/^go://p'; }

# build_copy DIR KVER SUITES LOG: build the copy as its suites need it. For
# a VM kernel: the modules for KVER, the Go binaries, the tools, libsyncmem
# and the examples. For Go
# tests (no KVER): every Go package, and the named packages' tests compiled
# without running one (-run '^$'), so that a mutant that does not compile
# is told apart from a test that fails.
build_copy() {
	local d=$1 kver=$2 suites=$3 log=$4
	if [ -n "$kver" ]; then
		(cd "$d" && kmod/build.sh "$kver" >/dev/null && make --no-print-directory go tools genl-test lib examples) >>"$log" 2>&1
	else
		# shellcheck disable=SC2046 # one word per package
		(cd "$d" && go build ./... && go test -count=1 -run '^$' $(go_pkgs "$suites")) >>"$log" 2>&1
	fi
}

# run_copy DIR KVER HOSTS SUITES LOG: run the suites in the built copy, the
# results in DIR/results.
run_copy() {
	local d=$1 kver=$2 hosts=$3 suites=$4 log=$5 res=$1/results
	rm -rf "$res"
	mkdir -p "$res"
	if [ "$suites" = gate ]; then
		# The copy's budgets are the tree's: its gate.ktap decides.
		(cd "$d" && bench/gate.sh --results "$res/gate") >>"$log" 2>&1
	elif [ -z "$kver" ]; then
		# Go tests: go:PACKAGE ...; KTAP from go test -v. The packages
		# compiled (build_copy): a package that fails without a failing
		# test panicked or timed out.
		# shellcheck disable=SC2046 # one word per package
		(cd "$d" && go test -count=1 -v $(go_pkgs "$suites")) >"$res/go.log" 2>&1
		{
			echo "KTAP version 1"
			sed -nE 's/^--- (PASS|FAIL): ([^ ]+).*/\1 \2/p' "$res/go.log" |
				awk '{ n++; print ($1 == "PASS" ? "ok " : "not ok ") n " go:" $2 } END { print "1.." n }'
		} >"$res/go.ktap"
		grep -q '^FAIL' "$res/go.log" && ! grep -q '^not ok' "$res/go.ktap" &&
			echo "not ok 999 go test # a package failed (panic or timeout)" >>"$res/go.ktap"
	else
		# A hang is a catch, not something to wait out: on a stock
		# kernel no suite is silent for a minute (none takes 30 s
		# whole), so the stall guard ends a hung mutant's suite after
		# MUTANT_STALL_SECS (60), not 150; the debug kernel keeps its
		# own bound. Baselines run the same way.
		local stall=
		vm/kernels.sh --is-debug "$kver" || stall=${MUTANT_STALL_SECS:-60}
		# shellcheck disable=SC2086 # HOSTS is one option or none
		(cd "$d" && env ${stall:+STALL_SECS=$stall} KVER="$kver" SYNCMEM_SUITES="$suites" \
			vm/run.sh $hosts --results "$res") >>"$log" 2>&1
	fi
}

# fails_of RES: the first failing checks, the suites' own first, then the
# harness's (vm.ktap). A lane booted again keeps its first boot's results
# in boot-1: the second boot's decide (its vm.ktap says how the first
# ended), as test/summary.sh counts them.
fails_of() {
	{
		find "$1" -name boot-1 -prune -o -name '*.ktap' ! -name vm.ktap -exec grep -h '^not ok ' {} +
		find "$1" -name boot-1 -prune -o -name vm.ktap -exec grep -h '^not ok ' {} +
	} | sed -E 's/^not ok [0-9]+ //; s/ #.*//' | head -n 3
}

# Baselines: the unmutated tree, built and run like a mutant, once per
# kernel and set of suites. base_verdict[KEY] is "passed" or why it is no
# good; a copy is built once per kernel (build/mutants/baseline-KVER).
declare -A base_verdict=() base_built=()
baseline() {
	local kind=$1 kver=$2 hosts=$3 suites=$4
	local key="$kind|$kver|$suites" tag=${kver:-host} d log t0 fails v rd
	[ -n "${base_verdict[$key]:-}" ] && return
	t0=$SECONDS
	d=$work/baseline-$tag
	log=$work/baseline-$tag.log
	echo "== baseline: the unmutated tree ($tag: $suites)" >&2
	if [ -z "${base_built[$tag]:-}" ] || [ -z "$kver" ]; then
		copy_tree "$d"
		: >"$log"
	fi
	# Again after a mutant: its objects go, the unmutated ones come back.
	if build_copy "$d" "$kver" "$suites" "$log"; then
		base_built[$tag]=ok
	else
		base_built[$tag]="the unmutated tree does not build (see build/mutants/baseline-$tag.log)"
	fi
	if [ "${base_built[$tag]}" != ok ]; then
		v=${base_built[$tag]}
	else
		run_copy "$d" "$kver" "$hosts" "$suites" "$log"
		fails=$(fails_of "$d/results")
		if [ -n "$fails" ]; then
			v="the unmutated tree fails: $(paste -sd ';' <<<"$fails" | sed 's/;/; /g')"
		elif find "$d/results" -name '*.ktap' -exec grep -qh '^ok ' {} + 2>/dev/null; then
			v=passed
		else
			v="the unmutated tree gave no result at all (see build/mutants/baseline-$tag.log)"
		fi
		rd=$work/baseline-$tag-$(printf %s "$suites" | tr -c 'A-Za-z0-9.-' _).results
		rm -rf "$rd"
		mv "$d/results" "$rd"
	fi
	base_verdict[$key]=$v
	echo "   baseline $tag ($suites): $v ($((SECONDS - t0)) s)" >&2
	if [ "$v" = passed ]; then
		base_rows+=("| ${kver:-host} | $suites | passed | $((SECONDS - t0)) |")
	else
		status=1
		base_rows+=("| ${kver:-host} | $suites | **failed**: ${v//|/\\|} | $((SECONDS - t0)) |")
	fi
}

for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	title=$(field "$p" Mutant) suites=$(field "$p" Suites) kind=$(field "$p" Kernel)
	echo "== mutant $name: $title ($kind: $suites)" >&2
	verdict= caught_by=
	hosts=
	case $kind in
	newest) kver=$newest ;;
	bounce) kver=$bounce ;;
	two-hosts) kver=$newest hosts=--two-hosts ;;
	gate) kver=$gatek ;;
	debug) kver=$debugk ;;
	host) kver= ;;
	*) verdict=error caught_by="unknown Kernel: $kind" ;;
	esac
	if [ -z "$verdict" ] && [ "$kind" = debug ] && [ -z "$kver" ]; then
		verdict=error caught_by="no debug kernel (make debug-kernel)"
	fi
	if [ -z "$verdict" ]; then
		baseline "$kind" "$kver" "$hosts" "$suites"
		b=${base_verdict["$kind|$kver|$suites"]}
		[ "$b" = passed ] || verdict=error caught_by="baseline: $b"
	fi
	t0=$SECONDS
	# The kernel's baseline copy, mutated in place and put back after.
	copy=$work/baseline-${kver:-host}
	: >"$work/$name.log"
	# The copy lies inside this work tree (build/ is ignored): git apply
	# run there would take the patch's paths as the work tree's, skip them
	# as outside its directory and succeed having changed nothing. The
	# ceiling keeps git from finding the work tree; every file the patch
	# names must then differ from the tree's.
	if [ -z "$verdict" ] && ! (cd "$copy" && GIT_CEILING_DIRECTORIES=$work git apply "$top/$p") \
		>>"$work/$name.log" 2>&1; then
		verdict=error caught_by="the patch does not apply"
	fi
	for f in $(sed -n 's|^+++ b/||p' "$p"); do
		if [ -z "$verdict" ] && cmp -s "$top/$f" "$copy/$f"; then
			verdict=error caught_by="the patch left $f unchanged"
		fi
	done
	if [ -z "$verdict" ] && ! build_copy "$copy" "$kver" "$suites" "$work/$name.log"; then
		verdict=error caught_by="the mutant does not build (see build/mutants/$name.log)"
	fi
	if [ -z "$verdict" ]; then
		res=$copy/results
		run_copy "$copy" "$kver" "$hosts" "$suites" "$work/$name.log"
		fails=$(fails_of "$res")
		if grep -qE '^vm:[^ ]+:boot$' <<<"$fails"; then
			# Nothing ran: not a catch.
			verdict=error caught_by="the VM did not boot (see build/mutants/$name.log)"
		elif grep -qE '^gate:(budgets|lane-ran|env|raw)$' <<<"$fails"; then
			# The gate measured nothing, or not on its clock.
			verdict=error caught_by="the gate lane did not measure: $(paste -sd ';' <<<"$fails" | sed 's/;/; /g') (see build/mutants/$name.log)"
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
	# The results stay for a look (build/mutants/NAME.results).
	rm -rf "$work/$name.results"
	[ -d "$copy/results" ] && mv "$copy/results" "$work/$name.results"
	restore_copy "$copy" "$p"
done
for t in "${!base_built[@]}"; do rm -rf "$work/baseline-$t"; done

# Only a run of every mutant rewrites the committed table.
out=$dir/RESULTS.md
[ $# -gt 0 ] && out=$work/RESULTS.md
{
	echo "# Seeded defects and the checks that catch them"
	echo
	echo "Written by \`make mutants\` (test/mutants/run.sh) on $(date -u +%Y-%m-%dT%H:%MZ), $((SECONDS - t_all)) s in all, on the tree of $tree."
	echo "Each mutant ran alone: patch applied to a copy, built, only its suites run."
	echo "First the unmutated tree ran the same suites on the same kernel (the baselines; a failing one makes its mutants errors)."
	echo
	echo "| kernel | suites | baseline | seconds |"
	echo "|---|---|---|---:|"
	[ "${#base_rows[@]}" -eq 0 ] || printf '%s\n' "${base_rows[@]}"
	echo
	echo "| mutant | defect | suites | kernel | result | first failing checks | seconds |"
	echo "|---|---|---|---|---|---|---:|"
	printf '%s\n' "${rows[@]}"
} >"$out"
echo "mutants: table in $out" >&2
caught=$(printf '%s\n' "${rows[@]}" | grep -c '\*\*caught\*\*')
echo "mutants: $caught of ${#rows[@]} caught" >&2
exit $status
