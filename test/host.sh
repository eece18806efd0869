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
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2" >&3; }
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
# One build per kernel does both: C=1 runs sparse on every file it
# compiles. Sparse must have run (a CHECK line per file): Kbuild turns C=1
# off with a message and no "warning:" when its checker-valid.sh finds the
# checker unusable, which would pass on nothing checked.
sparse_off='C=1 specified, but sparse is not available or not up to date'
nsrc=$(find kmod -name '*.c' | wc -l)
for kver in $(vm/kernels.sh); do
	blog=build/$kver/build.log
	clean= built=1
	# make all builds with C=1: a log of a whole build (every source
	# compiled) newer than every source is the one to judge. Otherwise
	# (an incremental build compiled nothing) build it all again.
	if [ "$(grep -cE '^  CC \[M\] +([^ ]*/)?[a-z_0-9]+\.o$' "$blog" 2>/dev/null)" = "$nsrc" ] &&
		[ -z "$(find kmod -newer "$blog" -name '*.[ch]' | head -n1)" ]; then
		echo "--- build:$kver: the whole build of make all ($blog)" >>"$log"
	else
		find kmod -name '*.c' -exec touch {} +
		echo "--- build:$kver: kmod/build.sh $kver C=1" >>"$log"
		kmod/build.sh "$kver" C=1 >>"$log" 2>&1 || built=
	fi
	[ -n "$built" ] && ! grep -E 'warning:|error:' "$blog" >>"$log" && clean=1
	if [ -n "$clean" ]; then
		ok "build:$kver (W=1, no warnings)"
	else
		not_ok "build:$kver (W=1, no warnings) # see $blog"
	fi
	class=$(vm/kernels.sh --class "$kver")
	if grep -qF "$sparse_off" "$blog"; then
		skip "sparse:$class (C=1)" "Kbuild of $kver turned C=1 off: the sparse it builds with cannot parse __typeof_unqual__, which the kernel's checker-valid.sh requires"
	elif [ -n "$clean" ] && grep -q '^  CHECK ' "$blog"; then
		ok "sparse:$class (C=1, $(grep -c '^  CHECK ' "$blog") files, no warnings)"
	else
		not_ok "sparse:$class (C=1) # no CHECK line or a warning, see $blog"
	fi
done

# Kernel style.
CHECKPATCH=${CHECKPATCH:-/usr/src/linux-source-6.1/scripts/checkpatch.pl}
# trace.h is written the way every TRACE_EVENT header in the kernel is,
# which two layout checks cannot parse; the UAPI header is for userspace,
# which has no BIT() (checkpatch knows that only for in-tree include/uapi);
# compat.h is the one place a kernel version is tested.
# Everything else is checked in full.
for f in $(find kmod -name '*.[ch]' | sort); do
	ignore=()
	case $f in
	*/trace.h) ignore=(--ignore OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT) ;;
	*/uapi/*) ignore=(--ignore BIT_MACRO) ;;
	# The one place a kernel version is tested (an out-of-tree module
	# builds for several); checkpatch's rule is for in-tree code, and it
	# takes LINUX_VERSION_CODE for the constant of the comparison.
	*/compat.h) ignore=(--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON) ;;
	esac
	check "checkpatch --strict $f" "$CHECKPATCH" --no-tree --strict --quiet \
		"${ignore[@]}" -f "$f"
done

# Packaging: `make install` and `make uninstall` for real, into a throw-away
# root (DESTDIR) with DKMS's trees in it too, so the machine's DKMS state is
# left alone: DKMS builds and installs the modules for every Debian kernel.
# The debug kernel is not a DKMS target: its build tree lives in ~/.cache,
# not /lib/modules/<ver>/build, and nobody installs modules on it. The
# installed modules are kept in build/dkms-modules, for the VM tier's
# test/vm/60-packaging.sh, which loads them (make test runs this first).
pkgroot=$top/build/pkgroot
pkgver=$(git describe --always --dirty 2>/dev/null || echo dev)
rm -rf "$pkgroot" "$top/build/dkms-modules"
check "make install (DESTDIR, DKMS)" env DESTDIR="$pkgroot" \
	packaging/install.sh install "$pkgver"
check "install: every listed file" test/packaging/checks.sh installed "$pkgroot"
for kver in $(SYNCMEM_DEBUG_KERNEL=0 vm/kernels.sh); do
	check "dkms build+install:$kver" test/packaging/checks.sh dkms-built "$pkgroot" "$kver"
done
check "install: man pages render" test/packaging/checks.sh man "$pkgroot"
check "install: bash completion" test/packaging/checks.sh completion "$pkgroot"
# libsyncmem as a program outside the project takes it: from the installed
# copy (pkg-config of DESTDIR), from C and from C++, shared and static.
check "libsyncmem: section 3 man pages render" test/lib/check.sh man "$pkgroot"
check "libsyncmem: a C99 program includes syncmem.h, links (pkg-config)" test/lib/check.sh c "$pkgroot"
check "libsyncmem: a C++ program includes syncmem.h (extern \"C\"), links shared and static" \
	test/lib/check.sh cxx "$pkgroot"
check "keep the DKMS modules for the VM tier" cp -a "$pkgroot/lib/modules" "$top/build/dkms-modules"
check "make uninstall (DESTDIR)" env DESTDIR="$pkgroot" packaging/install.sh uninstall
check "uninstall: nothing left" test/packaging/checks.sh empty "$pkgroot"

# libsyncmem's ABI: its SONAME, its exports (the version script's only,
# also in the static library), and abidiff against lib/abi/libsyncmem.abi.
check "libsyncmem: ABI as lib/abi/libsyncmem.abi (abidiff), exports as lib/libsyncmem.map" \
	test/lib/check.sh abi
check "libsyncmem: syncmem.h is kernel-doc (scripts/kernel-doc -Werror), every function" \
	test/lib/check.sh doc

# The seeded defects of make mutants still apply to the tree.
check "mutants: every test/mutants patch applies" test/mutants/run.sh --check
check "freeze verdict: a lane is booted again only on a record showing nothing of ours" test/freeze.sh
check "summary: a failed case after its diagnostics, exact counts" test/summary-check.sh
check "gate: over budget, missing, unparsable or empty figures fail" test/gate-check.sh

# The YNL spec: valid by the kernel's schema, and the UAPI header the
# kernel's ynl-gen-c.py makes of it has the header's constants.
check "spec: genetlink-c schema" test/packaging/spec-check.sh schema
check "spec: ynl-gen-c uapi == ib_sync_mem.h" test/packaging/spec-check.sh uapi

echo "1..$n" >&3
