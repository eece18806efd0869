#!/usr/bin/env bash
# The build (and module) root of Debian's newest kernel series, 7.x from
# trixie-backports. Its kbuild tools are linked against trixie's glibc and
# do not run on bookworm, so the module is built inside a trixie root made
# by debootstrap; the host's apt sources are never touched.
#
#   vm/trixie-root.sh           create the root if it is not ready; print its path
#   vm/trixie-root.sh --update  also look for a newer 7.x kernel and move to it
#   vm/trixie-root.sh --path    print the path if it is ready, fail otherwise
#
# The root (~/.cache/syncmem/trixie-root, about 1.5 GB) holds: make,
# binutils (without `as`, gcc-14's flag probes fail silently), sparse and
# dkms, the newest linux-headers-7.*+deb13-amd64, and that kernel's image
# and modules (linux-binary-*, linux-modules-*), unpacked with dpkg-deb -x
# so that no initramfs is made: vm/kernels.sh boots
# <root>/usr/lib/modules/<ver>/vmlinuz, and virtme-ng links the guest's
# /lib/modules/<ver> to that directory. The newest version is looked up
# each time (never hardcoded); an older one is removed when a newer one is
# installed (--update; the first run takes the newest there is).
set -euo pipefail
. "$(dirname "$0")/../test/vm/lib.sh"

root=$SYNCMEM_CACHE/trixie-root
MIRROR=${SYNCMEM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
log() { printf 'trixie-root: %s\n' "$*" >&2; }

case ${1:-} in
--path)
	[ -f "$root/.syncmem-ready" ] || exit 1
	echo "$root"
	exit 0
	;;
--update) ;;
*)
	if [ -f "$root/.syncmem-ready" ]; then
		echo "$root"
		exit 0
	fi
	;;
esac

if [ ! -x "$root/usr/bin/apt-get" ]; then
	log "debootstrap trixie into $root (once per machine)"
	rm -rf "$root"
	mkdir -p "$root"
	debootstrap --variant=minbase --include=ca-certificates trixie "$root" "$MIRROR" \
		>"$SYNCMEM_CACHE/trixie-debootstrap.log" 2>&1 ||
		{ tail -n 20 "$SYNCMEM_CACHE/trixie-debootstrap.log" >&2; exit 1; }
fi
cat >"$root/etc/apt/sources.list" <<EOF
deb $MIRROR trixie main
deb $MIRROR trixie-backports main
EOF
# Recommends stay out; the image's postinst (initramfs) never runs.
printf 'APT::Install-Recommends "false";\n' >"$root/etc/apt/apt.conf.d/90syncmem"

log "apt-get update in the root"
in_root "$root" apt-get update -qq >/dev/null
ver=$(in_root "$root" apt-cache search --names-only '^linux-headers-7\.[0-9]+\.[0-9]+\+deb13-amd64$' |
	awk '{ print $1 }' | sed 's/^linux-headers-//' | sort -V | tail -n1)
[ -n "$ver" ] || { log "no linux-headers-7.*+deb13-amd64 in trixie-backports"; exit 1; }
if [ -f "$root/.syncmem-ready" ] && [ "$(cat "$root/.syncmem-ready")" = "$ver" ]; then
	echo "$root"
	exit 0
fi

log "newest 7.x kernel: $ver; installing its headers and the build tools"
in_root "$root" apt-get install -y -qq make binutils sparse dkms kmod xz-utils \
	"linux-headers-$ver" >/dev/null
# The image and modules, files only (dpkg-deb -x: no maintainer scripts).
rm -f "$root"/tmp/*.deb
in_root "$root" sh -c "cd /tmp && apt-get download -qq linux-binary-$ver linux-modules-$ver"
for d in "$root"/tmp/*.deb; do
	in_root "$root" dpkg-deb -x "/tmp/${d##*/}" /
done
rm -f "$root"/tmp/*.deb
in_root "$root" depmod -a "$ver"
[ -f "$root/usr/lib/modules/$ver/vmlinuz" ] ||
	{ log "no $root/usr/lib/modules/$ver/vmlinuz after unpacking the image"; exit 1; }
# Older 7.x kernels go: one target per series.
for old in "$root"/usr/lib/modules/7.*; do
	[ "${old##*/}" = "$ver" ] && continue
	[ -e "$old" ] || continue
	log "removing the older ${old##*/}"
	rm -rf "$old"
	in_root "$root" apt-get purge -y -qq "linux-headers-${old##*/}" >/dev/null 2>&1 || true
done
in_root "$root" apt-get clean
echo "$ver" >"$root/.syncmem-ready"
log "ready: $ver"
echo "$root"
