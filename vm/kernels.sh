#!/usr/bin/env bash
# Print the target kernels, one version per line: every kernel that has both
# a build tree (/lib/modules/<ver>/build) and a bootable image
# (/boot/vmlinuz-<ver>). KVER=<ver> restricts the list to that one kernel and
# fails if it is not a target. Nothing here knows an ABI number.
set -euo pipefail

list() {
	local d k
	for d in /lib/modules/*/build; do
		[ -e "$d/Makefile" ] || continue
		k=${d#/lib/modules/}
		k=${k%/build}
		[ -f "/boot/vmlinuz-$k" ] || continue
		echo "$k"
	done | sort -V
}

if [ -n "${KVER:-}" ]; then
	if ! list | grep -qxF -- "$KVER"; then
		echo "kernels.sh: KVER=$KVER is not an installed target kernel; have:" >&2
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
