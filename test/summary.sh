#!/usr/bin/env bash
# The verdict of a test run: count every result under a results directory
# (all *.ktap files, host and VM tiers, every kernel; not those of a first
# attempt that vm/run.sh booted again, DIR/KVER/boot-1) and print
#
#   - the failures, each after the diagnostic lines that precede it, and a
#     shell check's with what its command printed (the suite's log);
#   - the skips by kernel, each checked against test/expected-skips: a skip
#     that is not listed for that kernel's class, or a listed one that did
#     not happen, is a failure;
#   - a kernel of DIR/kernels.expected without a vm.ktap (a VM that never
#     ran or whose checks were never written), or a VM tier that stopped
#     before DIR/vm-tier.done, as failures;
#   - the time table: seconds per phase (DIR/phases.txt), per suite and
#     kernel, per VM;
#   - why a VM did not finish, or needed a second boot (the diagnostics of
#     its harness-finished check);
#   - every second boot vm/run.sh gave a kernel, counted (also when 0) and
#     listed: kernel, suite, reason, how the second boot ended, what the
#     first attempt's record showed;
#   - the closing line "N passed, N failed, N skipped, N booted again".
#
# Exits non-zero if anything failed or nothing ran.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/vm/lib.sh"
dir=${1:-$top/results}
allow=$top/test/expected-skips
passed=0 failed=0 skipped=0
problems=()

# failures FILE: each "not ok" line of FILE, after the diagnostic lines
# ("# ...", indented or not) just before it, where an in-kernel case
# (kmod/tests) says which expectation failed; then, for a check of a shell
# suite, what its command printed: its section of the suite's log beside
# FILE (FILE.log: "--- [Ns] NAME: CMD", or "NAME (must fail): CMD", and
# the lines up to the next "--- "), the one of the check's Kth result of
# that NAME, each line after "| ". Of more than 12 lines, the first 9 (the
# first failure, the command) and the last 2 (the summary, the last word).
failures() {
	awk -v logf="${1%.ktap}.log" '
	function show(a, n, pre, gap,   i) {
		for (i = 0; i < n; i++) {
			if (n > 12 && i == 9)
				printf "   %s%s... %d lines left out\n", pre, gap, n - 11
			if (n <= 12 || i < 9 || i >= n - 2)
				print "   " pre a[i]
		}
	}
	# The section of the kth check named nm in the log, in sec[] (its
	# length returned; 0 if there is none).
	function section(nm, k,   h, i, m, t) {
		for (h = 1; h <= nh; h++) {
			t = what[h]
			if (index(t, nm ": ") != 1 && index(t, nm " (must fail): ") != 1)
				continue
			if (++m < k)
				continue
			sec[0] = hdr[h]
			for (i = 0; i < len[h]; i++)
				sec[i + 1] = body[h, i]
			return len[h] + 1
		}
		return 0
	}
	BEGIN {
		while ((getline line < logf) > 0) {
			if (line ~ /^--- /) {
				hdr[++nh] = line
				len[nh] = 0
				# "NAME: CMD", "NAME (must fail): CMD"
				what[nh] = line
				sub(/^--- (\[[0-9]+s\] )?/, "", what[nh])
			} else if (nh) {
				body[nh, len[nh]++] = line
			}
		}
	}
	/^ *#/ { d[n++] = $0; next }
	/^(not )?ok [0-9]+ / {
		nm = $0
		sub(/^(not )?ok [0-9]+ /, "", nm)
		sub(/ # .*/, "", nm)
		k = ++seen[nm]
	}
	/^not ok / {
		show(d, n, "", "# ")
		print "   " $0
		show(sec, section(nm, k), "  | ", "")
	}
	{ n = 0 }' "$1"
}

while IFS= read -r f; do
	p=$(grep -E '^ok ' "$f" | grep -cvE ' # SKIP( |$)')
	s=$(grep -cE '^ok .* # SKIP( |$)' "$f")
	x=$(grep -cE '^not ok ' "$f")
	passed=$((passed + p)) skipped=$((skipped + s)) failed=$((failed + x))
	if [ "$x" -gt 0 ]; then
		echo "== ${f#"$dir"/}: $x failed"
		failures "$f"
	fi
done < <(find "$dir" -name '*.ktap' -not -path '*/boot-1/*' | sort)

# The VM tier: every kernel it should have run has its checks.
if [ -f "$dir/kernels.expected" ] || [ -d "$dir/host" ]; then
	if [ ! -s "$dir/kernels.expected" ]; then
		problems+=("the VM tier never listed its kernels (vm/run.sh stopped before it began)")
	else
		while read -r k; do
			[ -n "$k" ] || continue
			if [ ! -f "$dir/$k/vm.ktap" ] || ! grep -qE '^1\.\.[1-9]' "$dir/$k/vm.ktap"; then
				problems+=("kernel $k: no vm.ktap (its VM never ran or its checks were never written)")
			fi
		done <"$dir/kernels.expected"
		[ -f "$dir/vm-tier.done" ] || problems+=("the VM tier stopped before its end (no vm-tier.done)")
	fi
fi

# Two hosts (vm/run.sh --two-hosts, in DIR/two-hosts or DIR itself): every
# host of hosts.expected has its checks, and the run reached its end.
th=
[ -f "$dir/two-hosts/hosts.expected" ] && th=two-hosts
[ -f "$dir/hosts.expected" ] && th=.
hosts=()
if [ -n "$th" ]; then
	for h in $(cat "$dir/$th/hosts.expected"); do
		hosts+=("$th/$h")
		if [ ! -f "$dir/$th/$h/vm.ktap" ] || ! grep -qE '^1\.\.[1-9]' "$dir/$th/$h/vm.ktap"; then
			problems+=("two hosts: host $h: no vm.ktap (its VM never ran or its checks were never written)")
		fi
	done
	[ -f "$dir/$th/done" ] || problems+=("two hosts: the run stopped before its end (no done)")
fi

# Skips against the allowlist, per kernel. A line of the allowlist:
#   CLASS | SUITE | CHECK
# CLASS is vm/kernels.sh --class (6.1, 6.12, 7.x, debug), host or two-hosts, SUITE the
# result file's name, CHECK the KTAP description before " # SKIP".
declare -A want=() seen=() ran=()
if [ -f "$allow" ]; then
	while IFS= read -r entry; do
		want["$entry"]=1
	done < <(expected_skips)
fi
classes=()
tiers=()
[ -d "$dir/host" ] && tiers+=(host)
[ -s "$dir/kernels.expected" ] && mapfile -t -O "${#tiers[@]}" tiers < <(grep . "$dir/kernels.expected")
tiers+=("${hosts[@]}")
if [ "${#tiers[@]}" -gt 0 ]; then
	for k in "${tiers[@]}"; do
		if [ "$k" = host ]; then
			c=host
		elif printf '%s\n' "${hosts[@]}" | grep -qxF "$k"; then
			c=two-hosts
		else
			c=$("$top/vm/kernels.sh" --class "$k" 2>/dev/null || echo "?")
		fi
		classes+=("$c")
		shown=0
		while IFS= read -r f; do
			suite=$(basename "$f" .ktap)
			ran["$c|$suite"]=1
			while IFS= read -r line; do
				d=${line#ok }
				d=${d#* }
				reason=${d#* # SKIP}
				d=${d%% # SKIP*}
				[ "$shown" = 1 ] || { echo "== skipped on $k ($c):"; shown=1; }
				echo "   $suite: $d -- ${reason# }"
				seen["$c|$suite|$d"]=1
				[ -n "${want["$c|$suite|$d"]:-}" ] ||
					problems+=("kernel $k ($c): unexpected skip: $suite: $d (not in test/expected-skips)")
			done < <(grep -E '^ok .* # SKIP( |$)' "$f")
		done < <(find "$dir/$k" -name '*.ktap' -not -path '*/boot-1/*' 2>/dev/null | sort)
	done
	# A listed skip of a suite that did not run on that class (a run of
	# some suites only) is not missed.
	for key in "${!want[@]}"; do
		c=${key%%|*}
		[ -n "${ran["${key%|*}"]:-}" ] || continue
		[ -n "${seen[$key]:-}" ] ||
			problems+=("class $c: an expected skip did not happen: ${key#*|} (test/expected-skips is out of date)")
	done
fi

for p in "${problems[@]}"; do
	echo "== not ok: $p"
	failed=$((failed + 1))
done

# Time table.
if [ -s "$dir/phases.txt" ]; then
	echo "== seconds per phase"
	awk '{ printf "   %-28s %6d\n", $1, $2 }' "$dir/phases.txt"
fi
if [ -s "$dir/kernels.expected" ] || [ "${#hosts[@]}" -gt 0 ]; then
	ks=()
	[ -s "$dir/kernels.expected" ] && mapfile -t ks < <(grep . "$dir/kernels.expected")
	ks+=("${hosts[@]}")
	suites=$(for k in "${ks[@]}"; do ls "$dir/$k"/*.secs 2>/dev/null; done |
		xargs -r -n1 basename | sed 's/\.secs$//' | grep -vx vm | sort -u)
	echo "== seconds per suite and kernel"
	printf '   %-16s' suite
	for k in "${ks[@]}"; do printf " %22s" "${k#./}"; done
	echo
	for s in $suites vm; do
		if [ "$s" = vm ]; then printf '   %-16s' "whole VM"; else printf '   %-16s' "$s"; fi
		for k in "${ks[@]}"; do printf ' %22s' "$(cat "$dir/$k/$s.secs" 2>/dev/null || echo -)"; done
		echo
	done
fi

# Why a VM did not finish, or finished only when booted again: the
# diagnostics of its harness-finished check, last, where the tail of a
# long log still shows them.
while IFS= read -r f; do
	awk -v name="${f#"$dir"/}" '/^(not )?ok [0-9]+ vm:.*:harness-finished/ { on = 1; hdr = $0; next }
		on && /^# / { if (!n++) print "== " name ": " hdr; print "   " $0; next }
		on { exit }' "$f" | head -n 30
done < <(find "$dir" -name vm.ktap -not -path '*/boot-1/*' | sort)

# Every second boot vm/run.sh gave a kernel (DIR/KVER/booted-again: a
# boot splat, a VM that died before the harness, a freeze whose record
# showed nothing of ours), counted even when there is none, one row each.
again=()
while IFS= read -r f; do
	while IFS= read -r line; do
		[ -n "$line" ] && again+=("$line")
	done <"$f"
done < <(find "$dir" -name booted-again -not -path '*/boot-1/*' | sort)
echo "== booted again: ${#again[@]}${again[0]:+ (kernel | suite | reason | the second boot | what the record of the first showed)}"
for line in "${again[@]}"; do
	IFS=$'\t' read -r k suite why shown end <<<"$line"
	echo "   $k | $suite | $why | $end | $shown"
done

# Every NMI vm/run.sh sent a guest whose vCPUs all halted with nothing
# changed (DIR/KVER/kicked), counted even when there is none.
kicked=()
while IFS= read -r f; do
	k=${f#"$dir"/}
	while IFS= read -r line; do
		[ -n "$line" ] && kicked+=("${k%/kicked} | $line")
	done <"$f"
done < <(find "$dir" -name kicked -not -path '*/boot-1/*' | sort)
echo "== kicked: ${#kicked[@]}${kicked[0]:+ (kernel | why)}"
for line in "${kicked[@]}"; do
	echo "   $line"
done

echo "$passed passed, $failed failed, $skipped skipped, ${#again[@]} booted again"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
