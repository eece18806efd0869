#!/usr/bin/env bash
# What one command costs inside a guest: the floor under every check of
# the VM suites. Run in a VM, e.g.
#   KVER=6.1.192 vm/run.sh --cmd 'bash bench/exec-cost.sh'
set -uo pipefail
runs=${1:-5}
cost() {
	local s e i
	s=$(date +%s.%N)
	for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1; done
	e=$(date +%s.%N)
	printf '%-45s %6.3f s per run\n' "$*" "$(echo "($e - $s) / $runs" | bc -l)"
}
echo "kernel $(uname -r), $runs runs each, $(grep -qw la57 /proc/cpuinfo && echo 5 || echo 4)-level paging"
cost /bin/true
# Bookworm's jq 1.6 and gojq (what jq is in the guest, vm/guest.sh).
cost /usr/bin/jq -n 1
cost gojq -n 1
json=$(mktemp)
echo '{"a":[1,2],"b":{"c":"x"}}' >"$json"
cost /usr/bin/jq -e '.a[0] == 1' "$json"
cost gojq -e '.a[0] == 1' "$json"
rm -f "$json"
cost python3 -c 1
cost rdma link show
cost syncmemctl --version
cost syncmemctl devices -j
cost setpriv --reuid 65534 --regid 65534 --clear-groups syncmemctl --version
# Where the cost of a Go binary goes: the file read over the shared
# filesystem, the runtime's threads, the binary's size.
shm=$(mktemp -d /dev/shm/exec-cost.XXXXXX)
cp "$(command -v syncmemctl)" "$shm/syncmemctl"
cost "$shm/syncmemctl" --version
cost env GOMAXPROCS=1 syncmemctl --version
cost env GOGC=off syncmemctl --version
strip -o "$shm/syncmemctl.s" "$shm/syncmemctl"
cost "$shm/syncmemctl.s" --version
cost build/bin/smnlctl --help
rm -rf "$shm"
mount | grep -E ' / | /work| 9p|virtiofs' | head -5
