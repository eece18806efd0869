#!/usr/bin/env bash
# Host tier: Go formatting, vet and unit tests; the modules for every target
# kernel built with W=1 and with sparse (C=1), both without a warning; and
# checkpatch --strict on the kernel sources. Writes KTAP to $1/host.ktap.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${1:-$top/results/host}
mkdir -p "$out"
log=$out/host.log
: > "$log"
exec 3>"$out/host.ktap"

n=0
ok() { n=$((n + 1)); echo "ok $n $*" >&3; }
not_ok() { n=$((n + 1)); echo "not ok $n $*" >&3; echo "not ok: $*" >&2; }
check() {
	local name=$1
	shift
	echo "--- $name: $*" >>"$log"
	if "$@" >>"$log" 2>&1; then ok "$name"; else not_ok "$name # see $log"; fi
}
echo "KTAP version 1" >&3

# Go.
gofmt_clean() { local l; l=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); [ -z "$l" ] || { echo "gofmt: $l"; return 1; }; }
check "gofmt" gofmt_clean
check "go vet" go vet ./...
go test -count=1 -v ./... >"$out/gotest.log" 2>&1
gorc=$?
while read -r verdict name; do
	case $verdict in
	PASS:) ok "go:$name" ;;
	FAIL:) not_ok "go:$name" ;;
	esac
done < <(sed -nE 's/^--- (PASS|FAIL): ([^ ]+).*/\1: \2/p' "$out/gotest.log")
if [ $gorc -ne 0 ]; then
	grep -E '^(FAIL|#|.*\.go:[0-9]+)' "$out/gotest.log" | head -n 20 | sed 's/^/# /' >&3
	not_ok "go test exit status # $gorc, see $out/gotest.log"
fi

# Kernel modules: W=1 and sparse, for every target kernel.
build_clean() {
	local kver=$1
	shift
	kmod/build.sh "$kver" "$@" || return 1
	! grep -E 'warning:|error:' "build/$kver/build.log"
}
for kver in $(vm/kernels.sh); do
	touch kmod/*.c
	check "build:$kver (W=1, no warnings)" build_clean "$kver"
	touch kmod/*.c
	check "sparse:$kver (C=1, no warnings)" build_clean "$kver" C=1
done

# Kernel style.
CHECKPATCH=${CHECKPATCH:-/usr/src/linux-source-6.1/scripts/checkpatch.pl}
# trace.h is written the way every TRACE_EVENT header in the kernel is,
# which two layout checks cannot parse; the UAPI header is for userspace,
# which has no BIT() (checkpatch knows that only for in-tree include/uapi).
# Everything else is checked in full.
for f in $(find kmod -name '*.[ch]' | sort); do
	ignore=()
	case $f in
	*/trace.h) ignore=(--ignore OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT) ;;
	*/uapi/*) ignore=(--ignore BIT_MACRO) ;;
	esac
	check "checkpatch --strict $f" "$CHECKPATCH" --no-tree --strict --quiet \
		"${ignore[@]}" -f "$f"
done

echo "1..$n" >&3
