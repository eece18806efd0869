#!/usr/bin/env bash
# Build the modules for one kernel into build/<kver>/kmod.
#
#   kmod/build.sh <kver> [make args...]
#
# Kbuild of these kernels cannot put an external module's objects outside its
# source directory, so each kernel gets a directory of symlinks to the
# sources and Kbuild runs there. The build is always W=1; the log is kept in
# build/<kver>/build.log for the warning checks. A 7.x kernel builds inside
# the trixie root (vm/trixie-root.sh, vm/kernels.sh --root), whose tools
# its kbuild needs.
set -euo pipefail

kver=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/kmod
out=$top/build/$kver/kmod
kdir=$("$top/vm/kernels.sh" --kdir "$kver")
root=$("$top/vm/kernels.sh" --root "$kver")

[ -e "$root$kdir/Makefile" ] || { echo "build.sh: no build tree at $root$kdir" >&2; exit 1; }

mkdir -p "$out"
# Refresh the symlink forest: drop links whose source is gone, add new ones.
find "$out" -maxdepth 1 -type l ! -exec test -e {} \; -delete
for f in "$src"/*; do
	case ${f##*/} in build.sh) continue ;; esac
	ln -sfn "$f" "$out/${f##*/}"
done

if [ "$root" = / ]; then
	make -j"$(nproc)" -C "$kdir" M="$out" W=1 "$@" modules 2>&1 | tee "$top/build/$kver/build.log"
else
	# A kernel whose kbuild tools need another userland (7.x: trixie's).
	. "$top/test/vm/lib.sh"
	in_root "$root" make -j"$(nproc)" -C "$kdir" M="$out" W=1 "$@" modules 2>&1 | tee "$top/build/$kver/build.log"
fi
exit "${PIPESTATUS[0]}"
