#!/usr/bin/env bash
# The target kernels.
#
#   vm/kernels.sh               one version per line: every Debian kernel with
#                               /lib/modules/<ver>/build and /boot/vmlinuz-<ver>,
#                               then the debug kernel if vm/debug-kernel.sh built it
#   vm/kernels.sh --kdir VER    its build tree (for Kbuild)
#   vm/kernels.sh --image VER   its bootable image
#   vm/kernels.sh --is-debug VER  exit 0 for the debug kernel
#   vm/kernels.sh --class VER   "debug" for the debug kernel, else its
#                               series ("6.1", "6.12"): what
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

list() {
	local d k
	for d in /lib/modules/*/build; do
		[ -e "$d/Makefile" ] || continue
		k=${d#/lib/modules/}
		k=${k%/build}
		[ -f "/boot/vmlinuz-$k" ] || continue
		echo "$k"
	done | sort -V
	debug_release || true
}

case ${1:-} in
--class)
	ver=${2:?version}
	if [ "$ver" = "$(debug_release || true)" ]; then
		echo debug
	else
		echo "$ver" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/'
	fi
	exit 0
	;;
--kdir|--image|--is-debug)
	what=$1 ver=${2:?version}
	if [ "$ver" = "$(debug_release || true)" ]; then
		tree=$(debug_tree)
		case $what in
		--kdir) echo "$tree" ;;
		--image) echo "$tree/arch/x86/boot/bzImage" ;;
		--is-debug) exit 0 ;;
		esac
	else
		case $what in
		--kdir) echo "/lib/modules/$ver/build" ;;
		--image) echo "/boot/vmlinuz-$ver" ;;
		--is-debug) exit 1 ;;
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
