#!/usr/bin/env bash
# Checks of the YNL spec spec/ib_sync_mem.yaml against the kernel's own
# tools (from linux-source-6.12, unpacked by vm/ynl-tree.sh), for
# test/host.sh; each subcommand is one check.
#
#   spec-check.sh schema    the spec validates against the kernel's
#                           genetlink-c schema (python3-jsonschema)
#   spec-check.sh uapi      ynl-gen-c.py --mode uapi makes a header of it
#                           whose constants equal the UAPI header's
#                           (test/packaging/cenums.py)
#
# Debian's python3 runs the tools: it has python3-yaml and
# python3-jsonschema, whatever python3 comes first on PATH.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
spec=$top/spec/ib_sync_mem.yaml
PY=/usr/bin/python3
tree=$("$top/vm/ynl-tree.sh" --path)
ynl=$tree/tools/net/ynl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case ${1:?check} in
schema)
	proto=$(sed -n 's/^protocol: *//p' "$spec")
	[ "$proto" = genetlink-c ] || { echo "protocol $proto, want genetlink-c" >&2; exit 1; }
	"$PY" - "$spec" "$tree/Documentation/netlink/$proto.yaml" <<'PYEOF'
import sys, yaml, jsonschema
spec = yaml.safe_load(open(sys.argv[1]))
schema = yaml.safe_load(open(sys.argv[2]))
jsonschema.validate(spec, schema)
print("valid:", sys.argv[1])
PYEOF
	;;
uapi)
	# ynl-gen-c.py wants the kernel's layout: the spec in
	# Documentation/netlink/specs, its schema one level up, a MAINTAINERS
	# file at the root.
	mkdir -p "$tmp/k/Documentation/netlink/specs"
	touch "$tmp/k/MAINTAINERS"
	ln -s "$tree/Documentation/netlink/genetlink-c.yaml" "$tmp/k/Documentation/netlink/"
	cp "$spec" "$tmp/k/Documentation/netlink/specs/"
	(cd "$ynl" && "$PY" ynl-gen-c.py --mode uapi --header \
		--spec "$tmp/k/Documentation/netlink/specs/ib_sync_mem.yaml" -o "$tmp/gen.h")
	gcc -fsyntax-only -Wall -Werror -x c "$tmp/gen.h"
	"$top/test/packaging/cenums.py" "$top/kmod/include/uapi/linux/ib_sync_mem.h" "$tmp/gen.h"
	;;
*)
	echo "spec-check.sh: unknown check $1" >&2
	exit 2
	;;
esac
