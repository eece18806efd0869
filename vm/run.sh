#!/usr/bin/env bash
# Boot target kernels with virtme-ng and run the in-guest harness in each.
#
#   vm/run.sh [--results DIR]        run every suite under test/vm on every
#                                    target kernel (KVER=<ver> picks one,
#                                    SYNCMEM_SUITES="30-netlink ..." picks
#                                    suites)
#   vm/run.sh --demo                 run vm/demo.sh (newest kernel by default)
#   vm/run.sh --shell                interactive shell with rxe0 and the module
#   vm/run.sh --cmd 'CMD'            run CMD after the harness set-up
#   vm/run.sh --bench DIR [--smoke]  run bench/guest.sh, results in DIR
#                                    (newest kernel by default)
#
# Per kernel the host then checks what came back and writes
# <results>/<kver>/vm.ktap: the VM booted, the harness finished, every suite
# left its result, and the guest's dmesg has no splat. Nothing skips: a kernel
# that does not boot is a failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

mode=test
results=$top/results
cmd=
smoke=
while [ $# -gt 0 ]; do
	case $1 in
	--results) results=$2; shift 2 ;;
	--demo) mode=demo; shift ;;
	--shell) mode=shell; shift ;;
	--cmd) mode=cmd; cmd=$2; shift 2 ;;
	--bench) mode=bench; results=$2; shift 2 ;;
	--smoke) smoke=--smoke; shift ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

# Per VM. The debug kernel (KASAN, lockdep, kmemleak) runs the same suites
# several times slower under TCG, so it gets its own bound.
VM_TIMEOUT=${VM_TIMEOUT:-1500}
VM_DEBUG_TIMEOUT=${VM_DEBUG_TIMEOUT:-4800}

kernels=$(vm/kernels.sh) || exit 1
vm/suites.sh >/dev/null || exit 2
if [ "$mode" != test ] && [ -z "${KVER:-}" ]; then
	# The newest Debian kernel by default, not the slow debug kernel.
	kernels=$(for k in $kernels; do vm/kernels.sh --is-debug "$k" || echo "$k"; done | tail -n1)
fi

# The accelerator for vm/boot.sh: KVM only where a probe boot shows it works.
if [ "$(vm/kvm-probe.sh)" = kvm ]; then
	echo "run.sh: KVM works on this machine, using it" >&2
	export SYNCMEM_ACCEL=kvm
else
	export SYNCMEM_ACCEL=tcg
fi

# Splats that fail a run (kernel WARN/BUG/oops, sanitizers, lockdep, RCU,
# refcount and list debugging, sleeping in atomic, kmemleak).
SPLAT='WARNING:|BUG:|Oops|general protection fault|KASAN:|UBSAN:|'
SPLAT+='possible circular locking dependency|possible recursive locking|'
SPLAT+='inconsistent lock state|suspicious RCU usage|refcount_t:|'
SPLAT+='list_add corruption|list_del corruption|Call Trace:|'
SPLAT+='sleeping function called from invalid context|unreferenced object|'
SPLAT+='blocked for more than'

check_kernel() {
	local kver=$1 rc=$2 dir=$3 n=0 s name
	ktap() { n=$((n + 1)); echo "$1 $n vm:$kver:$2"; }
	{
		echo "KTAP version 1"
		if [ -f "$dir/booted" ]; then
			ktap ok boot
		else
			ktap "not ok" "boot # the VM did not boot (vng exit $rc)"
		fi
		if [ -f "$dir/done" ]; then
			ktap ok harness-finished
		else
			ktap "not ok" "harness-finished # no done marker (vng exit $rc, timeout ${limit}s)"
		fi
		for s in $(vm/suites.sh); do
			name=$(basename "$s" .sh)
			if [ ! -s "$dir/$name.ktap" ]; then
				ktap "not ok" "result:$name # missing result file"
			elif [ "$(cat "$dir/$name.rc" 2>/dev/null)" != 0 ]; then
				ktap "not ok" "result:$name # suite exited $(cat "$dir/$name.rc" 2>/dev/null || echo '?')"
			elif ! grep -qE '^1\.\.[0-9]+' "$dir/$name.ktap"; then
				ktap "not ok" "result:$name # no KTAP plan line (suite cut short)"
			else
				ktap ok "result:$name"
			fi
		done
		if [ -f "$dir/kmemleak.txt" ]; then
			if [ -s "$dir/kmemleak.txt" ]; then
				ktap "not ok" "kmemleak-clean # kmemleak reports:"
				grep -E 'unreferenced object|\[<' "$dir/kmemleak.txt" | head -n 20 | sed 's/^/# /'
			else
				ktap ok kmemleak-clean
			fi
		elif vm/kernels.sh --is-debug "$kver"; then
			ktap "not ok" "kmemleak-clean # no kmemleak scan from the debug kernel"
		fi
		if [ ! -f "$dir/dmesg.txt" ]; then
			ktap "not ok" "dmesg-clean # no dmesg captured"
		elif grep -qE "$SPLAT" "$dir/dmesg.txt"; then
			ktap "not ok" "dmesg-clean # splat in guest dmesg:"
			grep -nE "$SPLAT" "$dir/dmesg.txt" | head -n 20 | sed 's/^/# /'
		else
			ktap ok dmesg-clean
		fi
		echo "1..$n"
	} > "$dir/vm.ktap"
}

status=0
for kver in $kernels; do
	limit=$VM_TIMEOUT
	vm/kernels.sh --is-debug "$kver" && limit=$VM_DEBUG_TIMEOUT
	case $mode in
	test)
		dir=$results/$kver
		rm -rf "$dir"
		mkdir -p "$dir"
		echo "run.sh: booting $kver (results in $dir)" >&2
		t0=$SECONDS
		timeout --kill-after=20 "$limit" \
			vm/boot.sh "$kver" "$dir" "SYNCMEM_SUITES='${SYNCMEM_SUITES:-}' vm/guest.sh test '$dir'" \
			</dev/null >"$dir/console.log" 2>&1
		rc=$?
		echo "$rc" > "$dir/vng.rc"
		echo $((SECONDS - t0)) > "$dir/vm.secs"
		check_kernel "$kver" "$rc" "$dir"
		grep -E '^(not ok|# )' "$dir/vm.ktap" >&2 || true
		;;
	demo)
		tmp=$(mktemp -d)
		timeout --kill-after=20 "$limit" \
			vm/boot.sh "$kver" "$tmp" "vm/guest.sh demo '$tmp'" </dev/null
		rc=$?
		rm -rf "$tmp"
		[ $rc -eq 0 ] || status=$rc
		;;
	cmd)
		tmp=$(mktemp -d)
		timeout --kill-after=20 "$limit" \
			vm/boot.sh "$kver" "$tmp" "vm/guest.sh cmd '$tmp' $(printf '%q' "$cmd")" </dev/null
		rc=$?
		rm -rf "$tmp"
		[ $rc -eq 0 ] || status=$rc
		;;
	bench)
		mkdir -p "$results"
		timeout --kill-after=20 "$limit" \
			vm/boot.sh "$kver" "$results" \
			"vm/guest.sh cmd '$results' $(printf '%q' "bash bench/guest.sh $smoke '$results'")" \
			</dev/null >"$results/console.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ] || [ ! -f "$results/done" ]; then
			echo "run.sh: the bench run on $kver failed (vng exit $rc); last lines of $results/console.log:" >&2
			tail -n 30 "$results/console.log" >&2
			status=1
		elif grep -qE "$SPLAT" "$results/dmesg.txt"; then
			echo "run.sh: splat in the guest's dmesg during the bench run:" >&2
			grep -nE "$SPLAT" "$results/dmesg.txt" | head -n 20 >&2
			status=1
		fi
		;;
	shell)
		tmp=$(mktemp -d)
		vm/boot.sh "$kver" "$tmp" "vm/guest.sh shell '$tmp'"
		status=$?
		rm -rf "$tmp"
		;;
	esac
done
exit $status
