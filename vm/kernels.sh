#!/usr/bin/env bash
# The target kernels.
#
#   vm/kernels.sh               one version per line: every Debian kernel with
#                               /lib/modules/<ver>/build and /boot/vmlinuz-<ver>,
#                               the 7.x kernel of the trixie root
#                               (vm/trixie-root.sh), then the debug kernel if
#                               vm/debug-kernel.sh built it
#   vm/kernels.sh --kdir VER    its build tree (for Kbuild; inside the
#                               build root, see --root)
#   vm/kernels.sh --root VER    the root Kbuild runs in for it: "/" for the
#                               host, the trixie root for 7.x
#   vm/kernels.sh --image VER   its bootable image
#   vm/kernels.sh --is-debug VER  exit 0 for the debug kernel
#   vm/kernels.sh --class VER   "debug" for the debug kernel, "7.x" for
#                               the newest (trixie-backports, which moves),
#                               else its series ("6.1", "6.12"): what
#                               test/expected-skips keys on
#
# KVER=<ver> restricts the list to that one kernel and fails if it is not a
# target. SYNCMEM_DEBUG_KERNEL=0 leaves the debug kernel out. Nothing here
# knows an ABI number.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

debug_tree() {
	[ "${SYNCMEM_DEBUG_KERNEL:-1}" != 0 ] || return 1
	"$here/debug-kernel.sh" --path 2>/dev/null
}

debug_release() {
	local tree
	tree=$(debug_tree) || return 1
	cat "$tree/include/config/kernel.release"
}

trixie_root() { "$here/trixie-root.sh" --path 2>/dev/null; }

# The kernels of the trixie root: image and headers both there.
trixie_list() {
	local root d k
	root=$(trixie_root) || return 0
	for d in "$root"/usr/lib/modules/*/vmlinuz; do
		[ -f "$d" ] || continue
		k=${d%/vmlinuz}
		k=${k##*/}
		[ -e "$root/usr/src/linux-headers-$k/Makefile" ] && echo "$k"
	done
}

is_trixie() { trixie_list | grep -qxF -- "$1"; }

list() {
	local d k
	{
		for d in /lib/modules/*/build; do
			[ -e "$d/Makefile" ] || continue
			k=${d#/lib/modules/}
			k=${k%/build}
			[ -f "/boot/vmlinuz-$k" ] || continue
			echo "$k"
		done
		trixie_list
	} | sort -V
	debug_release || true
}

case ${1:-} in
--class)
	ver=${2:?version}
	if [ "$ver" = "$(debug_release || true)" ]; then
		echo debug
	elif is_trixie "$ver"; then
		echo "${ver%%.*}.x"
	else
		echo "$ver" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/'
	fi
	exit 0
	;;
--kdir|--image|--is-debug|--root)
	what=$1 ver=${2:?version}
	if [ "$ver" = "$(debug_release || true)" ]; then
		tree=$(debug_tree)
		case $what in
		--kdir) echo "$tree" ;;
		--image) echo "$tree/arch/x86/boot/bzImage" ;;
		--is-debug) exit 0 ;;
		--root) echo / ;;
		esac
	elif is_trixie "$ver"; then
		case $what in
		--kdir) echo "/usr/src/linux-headers-$ver" ;;
		--image) echo "$(trixie_root)/usr/lib/modules/$ver/vmlinuz" ;;
		--is-debug) exit 1 ;;
		--root) trixie_root ;;
		esac
	else
		case $what in
		--kdir) echo "/lib/modules/$ver/build" ;;
		--image) echo "/boot/vmlinuz-$ver" ;;
		--is-debug) exit 1 ;;
		--root) echo / ;;
		esac
	fi
	exit 0
	;;
esac

if [ -n "${KVER:-}" ]; then
	if ! list | grep -qxF -- "$KVER"; then
		echo "kernels.sh: KVER=$KVER is not a target kernel; have:" >&2
		list | sed 's/^/  /' >&2
		exit 1
	fi
	echo "$KVER"
	exit 0
fi

out=$(list)
if [ -z "$out" ]; then
	echo "kernels.sh: no target kernel (need /lib/modules/<ver>/build and /boot/vmlinuz-<ver>); run vm/setup.sh" >&2
	exit 1
fi
echo "$out"
