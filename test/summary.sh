#!/usr/bin/env bash
# Count every test result under a results directory (all *.ktap files, host
# and VM tiers, every kernel), print the failures and the closing line
# "N passed, N failed". Exits non-zero if anything failed or nothing ran.
set -uo pipefail

dir=${1:-results}
passed=0
failed=0
while IFS= read -r f; do
	p=$(grep -cE '^ok ' "$f")
	x=$(grep -cE '^not ok ' "$f")
	passed=$((passed + p))
	failed=$((failed + x))
	if [ "$x" -gt 0 ]; then
		echo "== ${f#"$dir"/}: $x failed"
		grep -E '^not ok ' "$f" | sed 's/^/   /'
	fi
done < <(find "$dir" -name '*.ktap' | sort)

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
