#!/usr/bin/env bash
# Print "kvm" if a short KVM probe boot works on this machine, "tcg"
# otherwise. The answer is cached per host kernel and qemu version in
# the project's cache, so the probe costs its 20 s once per machine.
# SYNCMEM_ACCEL=tcg|kvm overrides the probe.
#
#   vm/kvm-probe.sh          the answer (why, on stderr, when it probes)
#   vm/kvm-probe.sh --why    the cached record of the last probe: the
#                            answer, why, and QEMU's own words
#
# When KVM fails, QEMU's own words are kept (the record, kvm-KEY.log in
# the cache) and the reason is said. On these machines /dev/kvm is
# kvm-pvm (the host is itself a guest: CPU flag "hypervisor", no vmx or
# svm), a software hypervisor that runs only kernels built as PVM guests
# (CONFIG_PVM_GUEST); any other guest code goes through KVM's instruction
# emulator, which stops a stock kernel in its bzImage decompressor at the
# first VEX instruction: QEMU prints "KVM internal error. Suberror: 1"
# ("emulation failure") and leaves the VM paused, which from outside
# looks like a hang after the boot loader. With virtme-ng's own QEMU
# options (-cpu host) bookworm's QEMU does not get that far: KVM refuses
# an MSR it sets up (0x10a) and QEMU aborts (docs/kernels.md, Booting).
set -uo pipefail
. "$(dirname "$0")/../test/vm/lib.sh"

if [ -n "${SYNCMEM_ACCEL:-}" ] && [ "${1:-}" != --why ]; then
	echo "$SYNCMEM_ACCEL"
	exit 0
fi
cache=$SYNCMEM_CACHE
image=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n1)
key=$(printf '%s %s %s' "$(uname -r)" "$(qemu-system-x86_64 --version | head -n1)" "$image" |
	sha1sum | cut -c1-16)
record=$cache/kvm-$key.log

if [ "${1:-}" = --why ]; then
	if [ -f "$record" ]; then
		cat "$record"
	elif [ -f "$cache/kvm-$key" ]; then
		echo "answer: $(cat "$cache/kvm-$key") (probed before probes kept a record)"
	else
		echo "no probe yet on this machine (key $key)"
	fi
	exit 0
fi
if [ ! -w /dev/kvm ]; then
	echo tcg
	exit 0
fi
[ -n "$image" ] || { echo tcg; exit 0; }
if [ -f "$cache/kvm-$key" ]; then
	cat "$cache/kvm-$key"
	exit 0
fi

# pvm_host: "kvm-pvm" if /dev/kvm is kvm-pvm's (its module, or the host
# kernel's line when it loaded), else nothing.
pvm_host() {
	if [ -d /sys/module/kvm_pvm ] || dmesg 2>/dev/null | grep -q 'kvm-pvm: loaded'; then
		echo kvm-pvm
	fi
}

# pvm_guest IMAGE: "yes" if the image's kernel is built as a PVM guest
# (its config beside it in /boot says so), "no" if its config says not,
# "unknown" without a config.
pvm_guest() {
	local config=/boot/config-${1#/boot/vmlinuz-}
	if [ ! -f "$config" ]; then
		echo unknown
	elif grep -q '^CONFIG_PVM_GUEST=y' "$config"; then
		echo yes
	else
		echo no
	fi
}

mkdir -p "$cache"
echo "kvm-probe: probing KVM with a short boot of $image (20 s at most)" >&2
log=$(mktemp)
timeout --kill-after=5 20 env PATH="${VNG%/*}:$PATH" "$VNG" -r "$image" -- true </dev/null >"$log" 2>&1
rc=$?
hv=$(pvm_host)
{
	echo "probe: $(date -u +%Y-%m-%dT%H:%MZ), $image, exit $rc${hv:+, /dev/kvm is $hv}"
	if [ "$rc" = 0 ]; then
		echo "answer: kvm"
	else
		echo "answer: tcg"
		# Why, as far as the machine tells.
		if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			echo "why: the KVM guest did not come up in 20 s"
		else
			echo "why: vng exited $rc"
		fi
		if grep -q 'KVM internal error' "$log"; then
			echo "why: QEMU stopped the VM on a KVM internal error and left it paused, which looks like a hang (its dump of the guest's registers is in QEMU's words below)"
		fi
		if grep -q 'failed to set MSR' "$log"; then
			echo "why: KVM refused QEMU's setting of a vCPU's MSR, and QEMU aborted before the guest ran"
		fi
		if [ -n "$hv" ]; then
			echo "why: /dev/kvm is kvm-pvm, a software hypervisor that runs only kernels built as PVM guests (CONFIG_PVM_GUEST); $image is $(pvm_guest "$image" | sed 's/^yes$/one/; s/^no$/not one (its config says so)/; s/^unknown$/of unknown config/'). Any other guest code goes through KVM's instruction emulator, which cannot run a stock kernel: where QEMU gets as far as starting it, it stops in the bzImage decompressor at the first VEX instruction (\"KVM internal error. Suberror: 1\", emulation failure)"
		fi
		echo "QEMU's own words (the probe's output, QEMU's and KVM's lines first):"
		{
			grep -E 'qemu-system|KVM|[Ss]uberror|emulation failure|kvm' "$log"
			echo "--- the whole output:"
			cat "$log"
		} | tr -d '\r' | sed 's/^/  /'
	fi
} >"$record"
rm -f "$log"
if [ "$rc" = 0 ]; then
	echo kvm | tee "$cache/kvm-$key"
else
	# Only the reasons here (the record has QEMU's words in full).
	grep -E '^why: ' "$record" | sed 's/^why: /kvm-probe: KVM does not work here: /' >&2
	sed '/^  --- the whole output:/,$d' "$record" |
		grep -m3 -E '^  .*(KVM internal error|[Ss]uberror|emulation failure|failed to set MSR|Assertion)' |
		sed 's/^  /kvm-probe: QEMU: /' >&2
	echo "kvm-probe: using TCG; the record: vm/kvm-probe.sh --why ($record)" >&2
	echo tcg | tee "$cache/kvm-$key"
fi
