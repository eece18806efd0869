#!/usr/bin/env bash
# The VM suites to run, one path per line: every test/vm/[0-9]*.sh, or the
# ones named in $SYNCMEM_SUITES ("30-netlink 50-memory"). An unknown name
# is an error, not an empty run. SYNCMEM_SUITE_DIR=test/two-hosts takes
# them from there (vm/run.sh --two-hosts).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${SYNCMEM_SUITE_DIR:-test/vm}
if [ -z "${SYNCMEM_SUITES:-}" ]; then
	ls "$dir"/[0-9]*.sh
	exit 0
fi
for name in $SYNCMEM_SUITES; do
	if [ ! -f "$dir/$name.sh" ]; then
		echo "suites.sh: no suite $dir/$name.sh" >&2
		exit 1
	fi
	echo "$dir/$name.sh"
done
