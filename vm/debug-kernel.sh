#!/usr/bin/env bash
# Build (once per machine) a debug kernel from Debian's linux-source-6.1:
# virtme-ng's minimal config plus what ib_sync_mem needs and the kernel
# submit checklist's debug options (KASAN, lockdep, PROVE_RCU, kmemleak,
# fault injection, ...). Debian's own kernels have none of those.
#
#   vm/debug-kernel.sh          build if missing; print the tree's path
#   vm/debug-kernel.sh --path   print the path if built, fail otherwise
#
# The tree is cached outside the checkout, under
# ~/.cache/syncmem/debug-kernel/<key>, keyed by the source package version
# and this script's config, so it is built once per machine (about 15 min
# on 2 cores; about 5 GB).
set -euo pipefail
. "$(dirname "$0")/../test/vm/lib.sh"

# Not under /var: virtme-ng gives the guest a fresh /var, and the guest must
# see the tree (its modules) at the same path.
CACHE=$SYNCMEM_CACHE/debug-kernel
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)
[ -n "$tarball" ] || { echo "debug-kernel: linux-source-6.1 is not installed (run vm/setup.sh)" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)

CONFIG=(
	# What the module and its tests need.
	INFINIBAND=y INFINIBAND_USER_ACCESS=m RDMA_RXE=m VETH=y
	DRM=y DRM_VGEM=m UDMABUF=y DMABUF_HEAPS=y DMABUF_HEAPS_SYSTEM=y
	DMA_SHARED_BUFFER=y MMU_NOTIFIER=y
	BPF_SYSCALL=y BPF_EVENTS=y BPF_JIT=y KPROBES=y FTRACE=y
	DEBUG_FS=y KUNIT=y
	# The user-namespace checks of 70-hostile.
	NAMESPACES=y USER_NS=y
	# No DWARF and so no BTF: pkg/trace reads the tracepoints' records
	# by the offsets their format files give (no CO-RE), bpftrace's
	# tracepoint probes do too, and splats are symbolised by kallsyms.
	# Without debug info the build is faster and the tree much smaller.
	DEBUG_INFO_NONE=y DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=n DEBUG_INFO=n
	DEBUG_INFO_BTF=n
	# A 1 MiB log buffer: an early splat is not lost to a wrapped ring.
	LOG_BUF_SHIFT=20
	# The kernel submit checklist's debug options.
	KASAN=y KASAN_GENERIC=y KASAN_INLINE=y
	PROVE_LOCKING=y PROVE_RCU=y DEBUG_ATOMIC_SLEEP=y
	DEBUG_OBJECTS=y DEBUG_OBJECTS_RCU_HEAD=y DEBUG_KMEMLEAK=y
	DEBUG_KMEMLEAK_AUTO_SCAN=n DEBUG_LIST=y
	FAULT_INJECTION=y FAILSLAB=y FAIL_PAGE_ALLOC=y
	FAULT_INJECTION_DEBUG_FS=y
	# Nothing the guest uses: less to build. i915 alone was a tenth of
	# the objects (249 of 2,603) and of their size; the guest boots with
	# no display (-vga none), so no GPU driver at all: vgem needs only
	# the DRM core.
	KVM=n SOUND=n DRM_I915=n DRM_VIRTIO_GPU=n DRM_BOCHS=n
	# Module loading from an out-of-tree build.
	MODULES=y MODULE_UNLOAD=y MODVERSIONS=n MODULE_SIG=n
)

key=$(printf '%s\n' "$srcver" "${CONFIG[@]}" | sha1sum | cut -c1-12)
tree=$CACHE/$key/linux-source-6.1

if [ "${1:-}" = --path ]; then
	[ -f "$tree/.syncmem-built" ] || exit 1
	echo "$tree"
	exit 0
fi
if [ -f "$tree/.syncmem-built" ]; then
	echo "$tree"
	exit 0
fi

log() { printf 'debug-kernel: %s\n' "$*" >&2; }
log "building a debug kernel from linux-source-6.1 $srcver into $tree"
log "(once per machine: about 15 minutes on 2 cores)"
rm -rf "$CACHE/$key"
mkdir -p "$CACHE/$key"
tar -C "$CACHE/$key" -xf "$tarball"
cd "$tree"

items=()
for c in "${CONFIG[@]}"; do
	items+=(--configitem "CONFIG_$c")
done
vng --kconfig "${items[@]}" </dev/null >kconfig.log 2>&1 ||
	{ cat kconfig.log >&2; exit 1; }
# virtme-ng appends defaults of its own after the items (debug info among
# them): set every item again on its result, then resolve dependencies.
for c in "${CONFIG[@]}"; do
	case ${c#*=} in
	y) scripts/config --enable "${c%%=*}" ;;
	m) scripts/config --module "${c%%=*}" ;;
	n) scripts/config --disable "${c%%=*}" ;;
	*) scripts/config --set-val "${c%%=*}" "${c#*=}" ;;
	esac
done
make olddefconfig >>kconfig.log 2>&1 || { cat kconfig.log >&2; exit 1; }
# Check that every option asked for took (a typo or a missing dependency
# would otherwise give a kernel without the check we count on).
missing=0
for c in "${CONFIG[@]}"; do
	name=${c%%=*}
	want=${c#*=}
	if [ "$want" = n ]; then
		grep -q "^CONFIG_$name=" .config && { log "CONFIG_$name is set, wanted off"; missing=1; }
	else
		grep -q "^CONFIG_$name=$want" .config || grep -q "^CONFIG_$name=y" .config ||
			{ log "CONFIG_$name=$want did not take: $(grep "CONFIG_$name[= ]" .config || echo unset)"; missing=1; }
	fi
done
[ $missing -eq 0 ] || { log "the config lacks options asked for (see above)"; exit 1; }

make -j"$(($(nproc) + 1))" bzImage modules >build.log 2>&1 ||
	{ tail -n 40 build.log >&2; log "build failed; log in $tree/build.log"; exit 1; }
touch .syncmem-built
log "done"
echo "$tree"
