#!/usr/bin/env bash
# Build the modules for one kernel into build/<kver>/kmod.
#
#   kmod/build.sh <kver> [make args...]
#
# Kbuild of these kernels cannot put an external module's objects outside its
# source directory, so each kernel gets a directory of symlinks to the
# sources and Kbuild runs there. The build is always W=1; the log is kept in
# build/<kver>/build.log for the warning checks.
set -euo pipefail

kver=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/kmod
out=$top/build/$kver/kmod
kdir=$("$top/vm/kernels.sh" --kdir "$kver")

[ -e "$kdir/Makefile" ] || { echo "build.sh: no build tree at $kdir" >&2; exit 1; }

mkdir -p "$out"
# Refresh the symlink forest: drop links whose source is gone, add new ones.
find "$out" -maxdepth 1 -type l ! -exec test -e {} \; -delete
for f in "$src"/*; do
	case ${f##*/} in build.sh) continue ;; esac
	ln -sfn "$f" "$out/${f##*/}"
done

make -C "$kdir" M="$out" W=1 "$@" modules 2>&1 | tee "$top/build/$kver/build.log"
exit "${PIPESTATUS[0]}"
