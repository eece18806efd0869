#!/usr/bin/env bash
# Checks of `make install` / `make uninstall` in a throw-away root, for
# test/host.sh (each subcommand is one check, exit 0 when it holds).
#
#   checks.sh installed ROOT          every file the manifest lists exists
#   checks.sh dkms-built ROOT KVER    DKMS built the three modules for KVER
#                                     (in ROOT's DKMS tree), installed them in
#                                     ROOT/lib/modules/KVER/updates/dkms, and
#                                     their vermagic is KVER's
#   checks.sh man ROOT                man renders every installed page
#   checks.sh completion ROOT         the bash completion is installed and
#                                     the installed binary completes verbs
#   checks.sh empty ROOT              nothing of ours is left (DKMS's own
#                                     signing key, var/lib/dkms/mok.*, is
#                                     DKMS state, not ours)
set -euo pipefail

MODULES=(ib_sync_mem ib_sync_mem_sim ib_sync_mem_test)
what=${1:?check}
root=${2:?root}

# ko DIR NAME: the module file NAME.ko or NAME.ko.xz/.gz/.zst in DIR.
ko() {
	local f
	for f in "$1/$2.ko" "$1/$2.ko.xz" "$1/$2.ko.gz" "$1/$2.ko.zst"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	echo "no $2.ko* in $1" >&2
	return 1
}

case $what in
installed)
	m=$root/usr/local/share/syncmem/installed
	[ -s "$m" ] || { echo "no manifest $m" >&2; exit 1; }
	grep -q '^dkms ' "$m" || { echo "manifest lists no DKMS module" >&2; exit 1; }
	n=0
	while read -r kind f; do
		case $kind in file | lib-runtime | lib-dev) ;; *) continue ;; esac
		[ -f "$root$f" ] || { echo "missing $root$f" >&2; exit 1; }
		n=$((n + 1))
	done <"$m"
	# libsyncmem: both parts, the runtime one the SONAME's link to the
	# library, the development one its header, archive, pkg-config.
	for f in /usr/local/lib/libsyncmem.so.0 /usr/local/lib/libsyncmem.so.0.3.0; do
		grep -qxF "lib-runtime $f" "$m" || { echo "manifest lacks runtime $f" >&2; exit 1; }
	done
	[ "$(readlink "$root/usr/local/lib/libsyncmem.so.0")" = libsyncmem.so.0.3.0 ] ||
		{ echo "libsyncmem.so.0 does not name libsyncmem.so.0.3.0" >&2; exit 1; }
	for f in /usr/local/include/syncmem.h /usr/local/lib/libsyncmem.so \
		/usr/local/lib/libsyncmem.a /usr/local/lib/pkgconfig/syncmem.pc \
		/usr/local/share/man/man3/syncmem.3 /usr/local/share/man/man3/syncmem_sync.3; do
		grep -qxF "lib-dev $f" "$m" || { echo "manifest lacks dev $f" >&2; exit 1; }
	done
	for f in /usr/local/bin/syncmemctl /usr/share/bash-completion/completions/syncmemctl \
		/usr/local/share/man/man8/syncmemctl.8 /usr/local/share/man/man8/syncmemctl-sync.8 \
		/etc/udev/rules.d/60-ib-sync-mem.rules; do
		grep -qxF "file $f" "$m" || { echo "manifest lacks $f" >&2; exit 1; }
	done
	echo "$n files"
	;;
dkms-built)
	kver=${3:?kernel}
	ver=$(awk '$1 == "dkms" { print $2 }' "$root/usr/local/share/syncmem/installed")
	built=$root/var/lib/dkms/ib-sync-mem/$ver/$kver/x86_64/module
	inst=$root/lib/modules/$kver/updates/dkms
	for m in "${MODULES[@]}"; do
		ko "$built" "$m" >/dev/null
		f=$(ko "$inst" "$m")
		vm=$(modinfo -F vermagic "$f")
		echo "$f: $vm"
		[ "${vm%% *}" = "$kver" ] || { echo "vermagic $vm is not $kver's" >&2; exit 1; }
	done
	;;
man)
	for f in "$root"/usr/local/share/man/man8/*.8; do
		out=$(MANWIDTH=80 man -l "$f" 2>&1 >/dev/null) || { echo "$f: $out" >&2; exit 1; }
		[ -z "$out" ] || { echo "$f: $out" >&2; exit 1; }
	done
	MANWIDTH=80 man -l "$root/usr/local/share/man/man8/syncmemctl-exporter.8" 2>/dev/null |
		grep -q -- '--listen'
	;;
completion)
	# The script registers its function for syncmemctl, and the installed
	# binary answers the completion requests the script makes.
	f=$root/usr/share/bash-completion/completions/syncmemctl
	bash -n "$f"
	grep -q 'complete .*-F __start_syncmemctl syncmemctl' "$f"
	out=$("$root/usr/local/bin/syncmemctl" __complete sy)
	echo "$out"
	[ "$(head -n1 <<<"$out" | cut -f1)" = sync ]
	;;
empty)
	left=$(cd "$root" && find . \( -type f -o -type l \) ! -path './var/lib/dkms/mok.*')
	[ -z "$left" ] || { echo "left behind:"; echo "$left"; exit 1; } >&2
	;;
*)
	echo "checks.sh: unknown check $what" >&2
	exit 2
	;;
esac
