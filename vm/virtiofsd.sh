#!/usr/bin/env bash
# virtio-fs for the guests' root: virtme-ng shares the host's root with a
# guest over virtio-fs when it finds the Rust virtiofsd, else over 9p.
# Bookworm has no Rust virtiofsd (qemu's old C one, which virtme-ng
# refuses, is all it ships), so this takes trixie's package into the trixie
# root (vm/trixie-root.sh) and puts a `virtiofsd` in the venv's bin, the
# first directory of vng's PATH (vm/boot.sh), that runs it with trixie's
# loader and libraries. The export is what virtme-ng asks for: the root
# read-only (--readonly), the --rwdir results read-write.
#
#   vm/virtiofsd.sh   install if missing, write the wrapper (idempotent,
#                     seconds); fails if the wrapper does not run
#
# Measured: 6.1's whole lane of make test took 359 s over virtio-fs against
# 463 s over 9p (same tree, one run after the other).
set -euo pipefail
. "$(dirname "$0")/../test/vm/lib.sh"

wrapper=${VNG%/*}/virtiofsd
log() { printf 'virtiofsd: %s\n' "$*" >&2; }

root=$("$(dirname "$0")/trixie-root.sh")
bin=$root/usr/libexec/virtiofsd
if [ ! -x "$bin" ]; then
	log "installing trixie's virtiofsd into $root"
	in_root "$root" apt-get update -qq >/dev/null
	in_root "$root" apt-get install -y -qq virtiofsd >/dev/null
	in_root "$root" apt-get clean
fi
lib=$root/usr/lib/x86_64-linux-gnu
cat >"$wrapper.new" <<EOF
#!/bin/sh
# trixie's virtiofsd with trixie's loader and libraries (vm/virtiofsd.sh)
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$bin" "\$@"
EOF
chmod +x "$wrapper.new"
mv "$wrapper.new" "$wrapper"
"$wrapper" --version >/dev/null 2>&1 ||
	{ log "$wrapper does not run: $("$wrapper" --version 2>&1 | head -n1)"; exit 1; }
