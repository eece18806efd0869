#!/usr/bin/env bash
# Make the DKMS source tree of the modules: a copy of kmod/ (its Kbuild and
# sources, in their directories; not its build script) and
# packaging/dkms.conf with the version filled in.
#
#   packaging/dkms-src.sh DIR VERSION    DIR must not exist yet
set -euo pipefail

dir=${1:?directory}
version=${2:?version}
top=$(cd "$(dirname "$0")/.." && pwd)

case $version in
*/* | *' '* | '') echo "dkms-src.sh: bad version '$version'" >&2; exit 1 ;;
esac
[ ! -e "$dir" ] || { echo "dkms-src.sh: $dir exists" >&2; exit 1; }
mkdir -p "$dir"
(cd "$top/kmod" && find . \( -name Kbuild -o -name '*.[ch]' \) -print0 |
	xargs -0 cp --parents -t "$dir")
sed "s/@VERSION@/$version/" "$top/packaging/dkms.conf" >"$dir/dkms.conf"
