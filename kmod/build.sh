#!/usr/bin/env bash
# Build the modules for one kernel into build/<kver>/kmod.
#
#   kmod/build.sh <kver> [make args...]
#
# Kbuild of these kernels cannot put an external module's objects outside its
# source directory, so each kernel gets a directory of symlinks to the
# sources and Kbuild runs there. Its subdirectories (one per module, and
# include/) are real directories of file symlinks: through a symlinked
# directory Kbuild would write the objects into the source tree. The build
# is always W=1; the log is kept in build/<kver>/build.log for the warning
# checks. A 7.x kernel builds inside the trixie root (vm/trixie-root.sh,
# vm/kernels.sh --root), whose tools its kbuild needs.
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
# A directory that an older forest linked whole is made a real one.
find "$out" -type l ! -exec test -e {} \; -delete
while IFS= read -r -d '' d; do
	[ ! -L "$out/$d" ] || rm "$out/$d"
	mkdir -p "$out/$d"
done < <(cd "$src" && find . -mindepth 1 -type d -printf '%P\0')
while IFS= read -r -d '' f; do
	ln -sfn "$src/$f" "$out/$f"
done < <(cd "$src" && find . -type f ! -path ./build.sh -printf '%P\0')

if [ "$root" = / ]; then
	make -j"$(nproc)" -C "$kdir" M="$out" W=1 "$@" modules 2>&1 | tee "$top/build/$kver/build.log"
else
	# A kernel whose kbuild tools need another userland (7.x: trixie's).
	. "$top/test/vm/lib.sh"
	in_root "$root" make -j"$(nproc)" -C "$kdir" M="$out" W=1 "$@" modules 2>&1 | tee "$top/build/$kver/build.log"
fi
exit "${PIPESTATUS[0]}"
