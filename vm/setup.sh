#!/usr/bin/env bash
# Idempotent setup for syncmem: Debian packages, both target kernels (6.1 via
# the meta-package, the newest 6.12 by its versioned names), virtme-ng pinned
# from PyPI, and the Go modules. Takes seconds when everything is present.
# Nothing here is hardcoded to a kernel ABI number.
set -euo pipefail

VIRTME_NG_VERSION=${VIRTME_NG_VERSION:-1.42}

log() { printf 'setup: %s\n' "$*" >&2; }

PKGS=(
	qemu-system-x86 kmod busybox-static python3 python3-venv
	linux-image-amd64 linux-headers-amd64
	iproute2 rdma-core ibverbs-utils rdmacm-utils perftest libibverbs-dev
	librdmacm-dev
	# io_uring for the ring's test programs (test/tools/uring_dev.c)
	liburing-dev
	clang llvm bpftool libbpf-dev libdrm-dev bpftrace
	sparse linux-source-6.1 xz-utils
	jq
	# packaging: DKMS, the exporter's VM test, the YNL spec (its schema and
	# tools/net/ynl come from linux-source-6.12, run by Debian's python3)
	dkms curl linux-source-6.12 python3-jsonschema python3-yaml
	# libsyncmem (lib/): its ABI check (abidw, abidiff: lib/abi-check.sh)
	# and the C++ caller's check (test/host.sh)
	abigail-tools g++
	# the debug kernel (vm/debug-kernel.sh)
	bc flex bison libelf-dev libssl-dev dwarves
	# the trixie root of the newest kernel, 7.x (vm/trixie-root.sh)
	debootstrap
)

# installed PATTERN...: a package matching one of the dpkg-query patterns
# is installed. The apt queries here are read whole, never piped into
# grep -q: under pipefail, grep quitting first fails the pipe.
installed() {
	local q
	q=$(dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null)
	grep -q 'ok installed' <<<"$q"
}

missing=()
for p in "${PKGS[@]}"; do
	installed "$p" || missing+=("$p")
done

have_612() {
	installed 'linux-headers-6.12.*+deb12-amd64' &&
	installed 'linux-image-6.12.*+deb12-amd64' 'linux-image-6.12.*+deb12-amd64-unsigned'
}

# candidate PKG: PKG can be installed from the apt sources.
candidate() {
	local p
	p=$(apt-cache policy "$1" 2>/dev/null) || return 1
	grep -qE '^ +Candidate: [^(]' <<<"$p"
}

export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ] || ! have_612; then
	log "apt-get update"
	apt-get update -qq
	if ! have_612; then
		# The newest 6.12 with headers and an image: the signed image
		# (linux-signed-amd64) can lag its -unsigned build in
		# bookworm-security by days (6.12.118's headers and -unsigned
		# image were out, the signed image not yet), and either is the
		# same kernel at /boot/vmlinuz-<ver>.
		v612= img612=
		for v in $(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
			awk '{print $1}' | sed 's/^linux-headers-//' | sort -rV); do
			candidate "linux-headers-$v" || continue
			for img in "linux-image-$v" "linux-image-$v-unsigned"; do
				if candidate "$img"; then
					v612=$v img612=$img
					break 2
				fi
			done
		done
		if [ -z "$v612" ]; then
			log "ERROR: no linux-headers-6.12.N+deb12-amd64 with an image to install in the apt sources"
			exit 1
		fi
		log "newest 6.12 kernel: $v612 ($img612)"
		missing+=("$img612" "linux-headers-$v612")
	fi
	log "installing: ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The 6.1 source tree carries scripts/checkpatch.pl for the style check.
if [ ! -x /usr/src/linux-source-6.1/scripts/checkpatch.pl ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)
	[ -n "$tarball" ] || { log "ERROR: linux-source-6.1 tarball missing"; exit 1; }
	log "unpacking $tarball (scripts/ and spelling data only)"
	tar -C /usr/src -xf "$tarball" \
		linux-source-6.1/scripts linux-source-6.1/Documentation/dev-tools \
		2>/dev/null || tar -C /usr/src -xf "$tarball" linux-source-6.1/scripts
fi

# The 6.12 source tree, for the YNL spec's schema (Documentation/netlink)
# and the kernel's YNL tools (tools/net/ynl): only those parts, in a cache
# outside the checkout.
"$(dirname "$0")/ynl-tree.sh" >/dev/null

# virtme-ng, pinned, in a virtual environment of the project's own
# (Debian's python3 is externally managed: packages go into a venv, never
# into the system's or a user's site-packages).
. "$(dirname "$0")/../test/vm/lib.sh"
venv=${VNG%/bin/vng}
# The installed version, read whole: `pip show | grep -q` under pipefail
# failed whenever grep quit before pip had written its last line, and the
# venv was made again under a run that was using it.
have=$("$venv/bin/python3" -c 'import importlib.metadata as m; print(m.version("virtme-ng"))' 2>/dev/null || true)
if [ ! -x "$VNG" ] || [ "$have" != "$VIRTME_NG_VERSION" ]; then
	log "virtme-ng==$VIRTME_NG_VERSION into $venv"
	rm -rf "$venv"
	mkdir -p "${venv%/*}"
	/usr/bin/python3 -m venv "$venv"
	"$venv/bin/python3" -m pip install -q --disable-pip-version-check \
		"virtme-ng==$VIRTME_NG_VERSION"
fi

# Debian's newest kernel series (7.x, trixie-backports) and the trixie
# root its kbuild runs in, made and cached once, updated when a newer 7.x
# kernel is out.
"$(dirname "$0")/trixie-root.sh" >/dev/null
# The guests' root over virtio-fs rather than 9p (vm/virtiofsd.sh).
"$(dirname "$0")/virtiofsd.sh"

# Go modules.
if [ -f go.mod ]; then
	go mod download
fi

log "ok"
