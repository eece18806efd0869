#!/usr/bin/env bash
# make install / make uninstall.
#
#   packaging/install.sh install VERSION
#   packaging/install.sh uninstall
#
# install: the modules' DKMS source tree in /usr/src/ib-sync-mem-VERSION,
# registered with DKMS and built and installed for every target kernel but
# the debug one (vm/kernels.sh with SYNCMEM_DEBUG_KERNEL=0; KVER= picks
# one); build/bin/syncmemctl in /usr/local/bin, its man pages (docs/man) in
# /usr/local/share/man/man8, its bash completion in
# /usr/share/bash-completion/completions/syncmemctl; libsyncmem (lib/lib.mk)
# under /usr/local in its two parts: the runtime one (libsyncmem.so.0 and
# the file it names, in lib) and the development one (include/syncmem.h,
# lib/libsyncmem.so, lib/libsyncmem.a, lib/pkgconfig/syncmem.pc, its section
# 3 man pages), each listed as "lib-runtime" or "lib-dev"; the udev rule that
# keeps /dev/ib_sync_mem mode 0666 in /etc/udev/rules.d. What it installed is
# listed in /usr/local/share/syncmem/installed, which uninstall reads: it
# removes the DKMS module (every kernel) and its source tree, and every
# file listed, and nothing else.
#
# DESTDIR=DIR installs under DIR instead, DKMS included: its tree, source
# tree and module tree (--dkmstree, --sourcetree, --installtree) are in
# DIR, depmod is not run and the signing key DKMS makes is DIR's too, so the
# machine's DKMS state is not touched (test/packaging/install.sh).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
NAME=ib-sync-mem
D=${DESTDIR:-}
[ -z "$D" ] || D=$(mkdir -p "$D" && cd "$D" && pwd)
BINDIR=$D/usr/local/bin
MANDIR=$D/usr/local/share/man/man8
COMPDIR=$D/usr/share/bash-completion/completions
UDEVDIR=$D/etc/udev/rules.d
STATEDIR=$D/usr/local/share/syncmem
MANIFEST=$STATEDIR/installed
SRCTREE=$D/usr/src

log() { printf 'install: %s\n' "$*" >&2; }

# dkms_ [--root ROOT] ARGS...: DKMS, on DESTDIR's trees if there is one;
# with a ROOT other than /, the DKMS of that build root (a 7.x kernel's
# kbuild runs only in the trixie root, vm/trixie-root.sh), on the same
# trees, which the project's mount makes visible there.
dkms_() {
	local root=/
	if [ "$1" = --root ]; then
		root=$2
		shift 2
	fi
	if [ -n "$D" ]; then
		mkdir -p "$D/var/lib/dkms" "$D/lib/modules"
		if [ "$root" = / ]; then
			mok_signing_key=$D/var/lib/dkms/mok.key mok_certificate=$D/var/lib/dkms/mok.pub \
				dkms "$@" --dkmstree "$D/var/lib/dkms" --sourcetree "$SRCTREE" \
				--installtree "$D/lib/modules"
		else
			(. test/vm/lib.sh && in_root "$root" env mok_signing_key="$D/var/lib/dkms/mok.key" \
				mok_certificate="$D/var/lib/dkms/mok.pub" dkms "$@" \
				--dkmstree "$D/var/lib/dkms" --sourcetree "$SRCTREE" \
				--installtree "$D/lib/modules")
		fi
	elif [ "$root" = / ]; then
		dkms "$@"
	else
		log "skipping $* for a kernel built in $root: install it on its own system"
	fi
}

uninstall() {
	[ -f "$MANIFEST" ] || { log "nothing installed ($MANIFEST missing)"; return 0; }
	local kind what
	while read -r kind what; do
		case $kind in
		dkms)
			log "dkms remove $NAME/$what"
			if [ -n "$D" ]; then
				dkms_ remove -m "$NAME" -v "$what" --all --no-depmod >/dev/null || true
			else
				dkms_ remove -m "$NAME" -v "$what" --all >/dev/null || true
			fi
			rm -rf "${SRCTREE:?}/$NAME-$what"
			;;
		file | lib-runtime | lib-dev) rm -f "$D$what" ;;
		esac
	done < <(tac "$MANIFEST")
	rm -f "$MANIFEST"
	rmdir "$STATEDIR" 2>/dev/null || true
	[ -n "$D" ] || ldconfig
	log "uninstalled"
}

install_() {
	local version=$1 k kernels src
	[ -x build/bin/syncmemctl ] || { log "ERROR: build/bin/syncmemctl missing (make go)"; exit 1; }
	command -v dkms >/dev/null || { log "ERROR: dkms is not installed (make setup)"; exit 1; }
	kernels=$(SYNCMEM_DEBUG_KERNEL=0 vm/kernels.sh)
	# A previous installation goes first, whatever its version.
	uninstall
	mkdir -p "$STATEDIR" "$BINDIR" "$MANDIR" "$COMPDIR" "$UDEVDIR" "$SRCTREE"
	: >"$MANIFEST"

	src=$SRCTREE/$NAME-$version
	rm -rf "$src"
	packaging/dkms-src.sh "$src" "$version"
	echo "dkms $version" >>"$MANIFEST"
	log "dkms add $NAME/$version"
	dkms_ add -m "$NAME" -v "$version" >/dev/null
	for k in $kernels; do
		log "dkms build + install $NAME/$version for $k"
		kroot=$(vm/kernels.sh --root "$k")
		kopt=()
		[ "$kroot" = / ] || kopt=(--kernelsourcedir "$(vm/kernels.sh --kdir "$k")")
		dkms_ --root "$kroot" build -m "$NAME" -v "$version" -k "$k" "${kopt[@]}" >/dev/null
		if [ -n "$D" ]; then
			mkdir -p "$D/lib/modules/$k"
			dkms_ --root "$kroot" install -m "$NAME" -v "$version" -k "$k" "${kopt[@]}" \
				--no-depmod >/dev/null
		else
			dkms_ --root "$kroot" install -m "$NAME" -v "$version" -k "$k" "${kopt[@]}" >/dev/null
		fi
	done

	put() { # put MODE SRC DEST
		install -m "$1" "$2" "$3"
		echo "file ${3#"$D"}" >>"$MANIFEST"
	}
	put 755 build/bin/syncmemctl "$BINDIR/syncmemctl"
	for f in docs/man/*.8; do
		put 644 "$f" "$MANDIR/${f##*/}"
	done
	build/bin/syncmemctl completion bash >"$STATEDIR/completion.bash"
	put 644 "$STATEDIR/completion.bash" "$COMPDIR/syncmemctl"
	rm -f "$STATEDIR/completion.bash"
	# libsyncmem, built already (make install builds lib): its runtime
	# part, then its development part, each file in the manifest.
	local part f
	for part in runtime dev; do
		make -s --no-print-directory install-lib-$part DESTDIR="$D" PREFIX=/usr/local >/dev/null
		while read -r f; do
			[ -e "$D$f" ] || [ -L "$D$f" ] || { log "ERROR: libsyncmem: $f not installed"; exit 1; }
			echo "lib-$part $f" >>"$MANIFEST"
		done < <(make -s --no-print-directory lib-files-$part PREFIX=/usr/local)
	done
	[ -n "$D" ] || ldconfig
	put 644 packaging/60-ib-sync-mem.rules "$UDEVDIR/60-ib-sync-mem.rules"
	[ -n "$D" ] || ! command -v mandb >/dev/null || mandb -q 2>/dev/null || true
	log "installed $NAME $version for: $(echo $kernels)"
}

case ${1:-} in
install) install_ "${2:?version}" ;;
uninstall) uninstall ;;
*) echo "usage: $0 install VERSION | uninstall" >&2; exit 2 ;;
esac
