#!/usr/bin/env bash
# libsyncmem's ABI against its committed baseline, for test/host.sh (and by
# hand after make lib):
#
#   lib/abi-check.sh [SO]     SO: build/lib/libsyncmem.so.0 (the SONAME's link)
#
# Fails when
#  - the SONAME is not libsyncmem.so.0;
#  - the shared library exports a symbol lib/libsyncmem.map does not list,
#    or misses one it lists, or one is not of the version of the map's
#    node that lists it (SYNCMEM_0.1, SYNCMEM_0.2, ...);
#  - the static library defines a global symbol outside the map (libynl's
#    and the generated code's must be local there too);
#  - abidiff finds any difference between lib/abi/libsyncmem.abi and SO's
#    ABI as syncmem.h describes it (a type, a function, a symbol, added or
#    changed: exit status non-zero).
# A change of the ABI made on purpose writes the baseline again
# (make abi-dump) in the same commit; one made by mistake fails here.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
so=${1:-build/lib/libsyncmem.so.0}
a=${so%/*}/libsyncmem.a
base=lib/abi/libsyncmem.abi
fail=0

soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" = libsyncmem.so.0 ]; then
	echo "SONAME $soname"
else
	echo "SONAME is '$soname', not libsyncmem.so.0"
	fail=1
fi

# name@@NODE for every symbol of the map, as nm -D prints a default version.
want=$(awk '/^SYNCMEM_[0-9.]+ *\{/ { node = $1 }
	/^[[:space:]]*syncmem_[a-z_]*;$/ { sub(/;$/, "", $1); print $1 "@@" node }' \
	lib/libsyncmem.map | sort)
have=$(nm -D --defined-only "$so" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }' | sort)
if [ "$have" = "$want" ]; then
	echo "exports: the $(wc -l <<<"$want") functions of lib/libsyncmem.map, each of its node's version" \
		"($(sed 's/.*@@//' <<<"$want" | sort | uniq -c | awk '{ printf "%s%s %d", (NR > 1 ? ", " : ""), $2, $1 }'))"
else
	echo "exports differ from lib/libsyncmem.map:"
	diff <(echo "$want") <(echo "$have") || true
	fail=1
fi
want=$(sed 's/@@.*//' <<<"$want")

shave=$(nm --defined-only "$a" | awk 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3 }' | sort)
if [ "$shave" = "$want" ]; then
	echo "static library: globals are the map's only"
else
	echo "static library's globals differ from lib/libsyncmem.map:"
	diff <(echo "$want") <(echo "$shave") || true
	fail=1
fi

rc=0
abidiff --no-show-locs \
	"$base" "$so" || rc=$?
if [ $rc -eq 0 ]; then
	echo "abidiff: no ABI change against $base"
else
	echo "abidiff: exit status $rc: the ABI differs from $base" \
		"(on purpose: make abi-dump, and commit the baseline with the change)"
	fail=1
fi
exit $fail
