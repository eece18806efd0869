#!/usr/bin/env bash
# The VM suites to run, one path per line: every test/vm/[0-9]*.sh, or the
# ones named in $SYNCMEM_SUITES ("30-netlink 50-memory"). An unknown name
# is an error, not an empty run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SYNCMEM_SUITES:-}" ]; then
	ls test/vm/[0-9]*.sh
	exit 0
fi
for name in $SYNCMEM_SUITES; do
	if [ ! -f "test/vm/$name.sh" ]; then
		echo "suites.sh: no suite test/vm/$name.sh" >&2
		exit 1
	fi
	echo "test/vm/$name.sh"
done
