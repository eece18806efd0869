#!/usr/bin/env bash
# The parts of Debian's linux-source-6.12 that the YNL spec needs, unpacked
# once into a cache outside the checkout: Documentation/netlink (the specs'
# JSON schemas) and tools/net/ynl (ynl-gen-c.py, cli.py, the lib). Prints
# the tree's path. Nothing from it is copied into the repository.
#
#   vm/ynl-tree.sh          unpack if needed, print the path
#   vm/ynl-tree.sh --path   print the path, fail if not unpacked
set -euo pipefail

cache=${SYNCMEM_CACHE:-${HOME:-/root}/.cache/syncmem}
tree=$cache/linux-source-6.12
stamp=$tree/.unpacked

if [ "${1:-}" = --path ]; then
	[ -f "$stamp" ] || { echo "ynl-tree.sh: $tree not unpacked; run vm/setup.sh" >&2; exit 1; }
	echo "$tree"
	exit 0
fi

tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1)
[ -n "$tarball" ] || { echo "ynl-tree.sh: linux-source-6.12 tarball missing" >&2; exit 1; }
if [ ! -f "$stamp" ] || [ "$tarball" -nt "$stamp" ]; then
	echo "ynl-tree.sh: unpacking Documentation/netlink and tools/net/ynl of $tarball" >&2
	rm -rf "$tree"
	mkdir -p "$cache"
	tar -C "$cache" -xf "$tarball" \
		linux-source-6.12/Documentation/netlink linux-source-6.12/tools/net/ynl \
		linux-source-6.12/include/uapi/linux/netlink.h \
		linux-source-6.12/include/uapi/linux/genetlink.h
	touch "$stamp"
fi
echo "$tree"
