#!/usr/bin/env bash
# Print "kvm" if a short KVM probe boot works on this machine, "tcg"
# otherwise. The answer is cached per host kernel and qemu version in
# the project's cache, so the probe costs its 20 s once per machine.
# SYNCMEM_ACCEL=tcg|kvm overrides the probe.
set -uo pipefail
. "$(dirname "$0")/../test/vm/lib.sh"

if [ -n "${SYNCMEM_ACCEL:-}" ]; then
	echo "$SYNCMEM_ACCEL"
	exit 0
fi
if [ ! -w /dev/kvm ]; then
	echo tcg
	exit 0
fi
image=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n1)
[ -n "$image" ] || { echo tcg; exit 0; }
cache=$SYNCMEM_CACHE
key=$(printf '%s %s %s' "$(uname -r)" "$(qemu-system-x86_64 --version | head -n1)" "$image" |
	sha1sum | cut -c1-16)
if [ -f "$cache/kvm-$key" ]; then
	cat "$cache/kvm-$key"
	exit 0
fi
mkdir -p "$cache"
echo "kvm-probe: probing KVM with a short boot (20 s at most)" >&2
if timeout --kill-after=5 20 env PATH="${VNG%/*}:$PATH" "$VNG" -r "$image" -- true </dev/null >/dev/null 2>&1; then
	echo kvm | tee "$cache/kvm-$key"
else
	echo "kvm-probe: KVM guest did not come up in 20 s, using TCG" >&2
	echo tcg | tee "$cache/kvm-$key"
fi
