#!/usr/bin/env bash
# Host-tier checks of libsyncmem (lib/), each subcommand one check of
# test/host.sh, exit 0 when it holds:
#
#   check.sh abi             lib/abi-check.sh: SONAME, exports, the static
#                            library's globals, abidiff against the baseline
#   check.sh c ROOT          a C99 program (-pedantic) includes syncmem.h
#                            and links, against the copy `make install`
#                            put in ROOT (pkg-config, PKG_CONFIG_SYSROOT_DIR)
#   check.sh cxx ROOT        test/lib/cxx_link.cpp (C++11, -pedantic):
#                            syncmem.h's extern "C", every function linked,
#                            shared and static, from ROOT's copy, run
#   check.sh man ROOT        every installed section 3 page renders, the
#                            link pages to their page
#   check.sh doc             syncmem.h's comments are kernel-doc without a
#                            warning (the kernel's scripts/kernel-doc), one
#                            for every function of lib/libsyncmem.map
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
what=${1:?check}
root=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libdir=$root/usr/local/lib

# pkg ARGS...: pkg-config of ROOT's installed syncmem.pc.
pkg() {
	PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_LIBDIR=$libdir/pkgconfig \
		PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@" syncmem
}

case $what in
abi)
	lib/abi-check.sh
	;;
c)
	cat >"$tmp/c.c" <<'C'
#include <syncmem.h>
#include <errno.h>
#include <stdio.h>
int main(void)
{
	struct syncmem *sm = syncmem_open();

	if (sm)
		syncmem_close(sm);
	printf("C99: syncmem_open() %s, %s\n", sm ? "opened" : "NULL",
	       syncmem_kind_name(SYNCMEM_KIND_REGION));
	return !sm && errno != ENOENT;
}
C
	echo "pkg-config: $(pkg --cflags --libs)"
	gcc -std=c99 -Wall -Wextra -Werror -pedantic $(pkg --cflags) -o "$tmp/c" "$tmp/c.c" $(pkg --libs)
	LD_LIBRARY_PATH=$libdir "$tmp/c"
	;;
cxx)
	g++ -std=c++11 -Wall -Wextra -Werror -pedantic $(pkg --cflags) \
		-o "$tmp/cxx" test/lib/cxx_link.cpp $(pkg --libs)
	ldd_out=$(LD_LIBRARY_PATH=$libdir ldd "$tmp/cxx")
	grep -F "libsyncmem.so.0 => $libdir/libsyncmem.so.0" <<<"$ldd_out"
	LD_LIBRARY_PATH=$libdir "$tmp/cxx"
	# Static: the archive alone, nothing of libynl visible.
	g++ -std=c++11 -Wall -Wextra -Werror -pedantic $(pkg --cflags) \
		-o "$tmp/cxx-static" test/lib/cxx_link.cpp "$libdir/libsyncmem.a"
	! LD_LIBRARY_PATH=$libdir ldd "$tmp/cxx-static" | grep -q libsyncmem
	"$tmp/cxx-static" | tail -n 1
	echo "static: linked from libsyncmem.a, no libsyncmem.so needed"
	;;
doc)
	kdoc=${KERNEL_DOC:-/usr/src/linux-source-6.1/scripts/kernel-doc}
	perl "$kdoc" -none -Werror lib/include/syncmem.h
	documented=$(perl "$kdoc" -rst lib/include/syncmem.h 2>/dev/null |
		sed -n 's/^\.\. c:function:: .*[ *]\(syncmem_[a-z_]*\) *(.*/\1/p' | sort)
	exported=$(sed -n 's/^[[:space:]]*\(syncmem_[a-z_]*\);$/\1/p' lib/libsyncmem.map | sort)
	[ "$documented" = "$exported" ] ||
		{ diff <(echo "$exported") <(echo "$documented"); exit 1; }
	echo "$(wc -l <<<"$documented") functions documented in kernel-doc"
	;;
man)
	man3=$root/usr/local/share/man/man3
	n=0
	for f in "$man3"/*.3; do
		out=$(cd "${man3%/man3}" && MANWIDTH=80 man -l "man3/${f##*/}" 2>&1 >/dev/null) ||
			{ echo "$f: $out" >&2; exit 1; }
		[ -z "$out" ] || { echo "$f: $out" >&2; exit 1; }
		n=$((n + 1))
	done
	(cd "${man3%/man3}" && MANWIDTH=80 man -l man3/syncmem_flush_inbound.3 2>/dev/null) |
		grep -q 'syncmem_flush_inbound_async'
	# Every exported function has its page (its own or a .so link).
	for fn in $(sed -n 's/^[[:space:]]*\(syncmem_[a-z_]*\);$/\1/p' lib/libsyncmem.map); do
		[ -f "$man3/$fn.3" ] || { echo "no man page for $fn" >&2; exit 1; }
	done
	echo "$n pages, one for each of the map's functions"
	;;
*)
	echo "check.sh: unknown check $what" >&2
	exit 2
	;;
esac
