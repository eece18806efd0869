#!/usr/bin/env bash
# In-guest harness, run by vm/run.sh inside the virtme-ng VM.
#
#   vm/guest.sh test  RESULTS   run every test/vm/[0-9]*.sh suite, or only
#                               those named in $SYNCMEM_SUITES (e.g.
#                               "30-netlink 50-memory")
#   vm/guest.sh demo  RESULTS   run vm/demo.sh
#   vm/guest.sh shell RESULTS   set up, then an interactive shell
#   vm/guest.sh cmd   RESULTS CMD
#
# Set-up: debugfs and tracefs mounted, rdma_rxe loaded, a veth pair
# veth0/veth1 and rxe0 on veth0. Suites find the module built for the running
# kernel in $SYNCMEM_KO and write KTAP on stdout; stderr goes to <suite>.log,
# the seconds each took to <suite>.secs.
#
# The kernel's own splats are told from ours: if the kernel log has one
# before the harness marks it (boot, rdma_rxe, veth: nothing of ours is
# loaded yet), the harness stops at once with RESULTS/boot-splat.txt, and
# vm/run.sh boots the kernel again. On the debug kernel RESULTS/debug_locks
# says at the end whether lock debugging was still on.
set -uo pipefail

mode=$1
out=$2
shift 2

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. test/vm/lib.sh
mkdir -p "$out"
echo booted > "$out/booted"

export SYNCMEM_TOP=$top
export SYNCMEM_KO=$top/build/$(uname -r)/kmod
export SYNCMEM_RESULTS=$out
# The project's programs (build/bin), copied to a tmpfs: run from the
# project's directory they were read over 9p at every exec, about a second
# per syncmemctl call under TCG against a tenth from here (measured before
# the root moved to virtio-fs, vm/virtiofsd.sh).
export SYNCMEM_BIN=/run/syncmem/bin
mkdir -p "$SYNCMEM_BIN" && cp -a "$top/build/bin/." "$SYNCMEM_BIN/"
# jq in the guest is gojq (go.mod's tool, built by make go): the suites
# call jq more than anything but syncmemctl, and bookworm's jq 1.6 spends
# most of a call compiling its builtins: 0.33 s a call against gojq's
# 0.07 (as much as /bin/true) on stock 6.1 (bench/exec-cost.sh).
ln -sf gojq "$SYNCMEM_BIN/jq"
export PATH=$SYNCMEM_BIN:$PATH

setup() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing 2>/dev/null || true
	# Trace events enabled without the comm recorder: with record-cmd on
	# (the default) the first event enabled registers probes on
	# sched_wakeup, sched_wakeup_new and sched_switch and the last one
	# disabled removes them, flipping those tracepoints' static keys in
	# the scheduler's text (20-core's events/ib_sync_mem/enable). Under
	# TCG (bookworm's QEMU 7.2) another vCPU waking a task runs into
	# that patch's int3: "Oops: int3" in ttwu_do_activate from
	# vring_interrupt, 14 s into a 7.3 boot on CI (2026-12-04); a loop
	# of such flips brought it back at ttwu_do_activate+0x93, right
	# after the sched_wakeup site, in both of two 7.3 boots (none in 330
	# flips under trixie's QEMU 10.0). No suite reads the trace's comms.
	if [ -w /sys/kernel/tracing/options/record-cmd ]; then
		echo 0 >/sys/kernel/tracing/options/record-cmd || return 1
	fi
	modprobe rdma_rxe || return 1
	if [ -n "${SYNCMEM_WIRE:-}" ]; then
		wire_up || return 1
	else
		modprobe veth || return 1
		ip link add veth0 type veth peer name veth1 || return 1
		ip link set veth0 up && ip link set veth1 up || return 1
		# An IPv4 address: a RoCE v2 GID the module's inbound flush
		# (a QP of rxe0 in loopback) can send from also without IPv6,
		# which the debug kernel does not have.
		ip addr add 192.168.76.1/32 dev veth0 || return 1
		rdma link add rxe0 type rxe netdev veth0 || return 1
	fi
	if [ ! -f "$SYNCMEM_KO/ib_sync_mem.ko" ]; then
		echo "guest: no module for $(uname -r) in $SYNCMEM_KO (run make first)" >&2
		return 1
	fi
	if [ ! -x "$SYNCMEM_BIN/gojq" ]; then
		echo "guest: no gojq in build/bin (run make go first)" >&2
		return 1
	fi
}

# Two hosts (vm/run.sh --two-hosts): SYNCMEM_WIRE is "ROLE MAC ADDR/LEN
# PEER"; the NIC of that MAC is the wire to the other guest (QEMU's socket
# network), the only NIC there is. It gets ADDR and rxe0; the suites find
# the rest in SYNCMEM_WIRE_ROLE, _IP and _PEER.
nic_of() {
	local a
	for a in /sys/class/net/*/address; do
		grep -qix "$1" "$a" && { a=${a%/address}; echo "${a##*/}"; return 0; }
	done
	return 1
}
wire_up() {
	local mac nic
	read -r SYNCMEM_WIRE_ROLE mac SYNCMEM_WIRE_CIDR SYNCMEM_WIRE_PEER <<<"$SYNCMEM_WIRE"
	export SYNCMEM_WIRE_ROLE SYNCMEM_WIRE_PEER SYNCMEM_WIRE_IP=${SYNCMEM_WIRE_CIDR%/*}
	modprobe virtio_net || return 1
	# The NIC appears once the driver has probed it (and named it).
	wait_until 10 nic_of "$mac"
	nic=$(nic_of "$mac")
	if [ -z "$nic" ]; then
		echo "guest: no NIC with the wire's MAC $mac" >&2
		ip -br link >&2
		return 1
	fi
	export SYNCMEM_WIRE_NIC=$nic
	ip addr add "$SYNCMEM_WIRE_CIDR" dev "$nic" && ip link set "$nic" up || return 1
	rdma link add rxe0 type rxe netdev "$nic" || return 1
	echo "guest: host $SYNCMEM_WIRE_ROLE: $SYNCMEM_WIRE_CIDR on $nic ($mac), rxe0 on it; peer $SYNCMEM_WIRE_PEER" >&2
}

# The debug kernel: clear what kmemleak saw during boot, so that the scan
# at the end reports what the suites leaked.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_begin() {
	[ "${SYNCMEM_ON_DEBUG_KERNEL:-0}" = 1 ] && [ -w $KMEMLEAK ] || return 0
	echo scan > $KMEMLEAK
	echo clear > $KMEMLEAK
}
kmemleak_end() {
	[ "${SYNCMEM_ON_DEBUG_KERNEL:-0}" = 1 ] && [ -w $KMEMLEAK ] || return 0
	# Two scans: objects freed by RCU or deferred work are gone by then.
	sleep 5
	echo scan > $KMEMLEAK
	sleep 5
	echo scan > $KMEMLEAK
	cat $KMEMLEAK > "$out/kmemleak.txt"
}
# kmsg TEXT: a line in the kernel log, to tell later what ran when.
kmsg() { echo "$*" > /dev/kmsg; }

export SYNCMEM_ON_DEBUG_KERNEL=${SYNCMEM_ON_DEBUG_KERNEL:-0}
export SYNCMEM_LANE
# Suites multiply their bounds by this: what the host asked for (a loaded
# host), six times that on the debug kernel.
export SYNCMEM_SLOW=${SYNCMEM_SLOW_HOST:-1}
[ "$SYNCMEM_ON_DEBUG_KERNEL" = 1 ] && SYNCMEM_SLOW=$((SYNCMEM_SLOW * DEBUG_SLOW))

if ! setup >"$out/setup.log" 2>&1; then
	echo "guest: set-up failed:" >&2
	cat "$out/setup.log" >&2
	dmesg > "$out/dmesg.txt"
	exit 1
fi

# The kernel's errors and worse on its console from here on, no more: in a
# test run it is the host's console.log (vm/boot.sh), which still shows a
# soft lockup, a hung task or an oops when nothing in the guest runs.
[ "$mode" = test ] && echo 4 >/proc/sys/kernel/printk

# Nothing of ours is loaded yet: a splat so far is the kernel's own.
if dmesg | grep -E "$SPLAT" >"$out/boot-splat.txt"; then
	echo "guest: the kernel splatted before the harness began; stopping" >&2
	dmesg > "$out/dmesg.txt"
	echo 3 > "$out/done"
	exit 3
fi
rm -f "$out/boot-splat.txt"
kmsg "$HARNESS_MARK"

# The kernel log as it is written, on the host too: if the kernel wedges,
# vm/run.sh shows its last lines.
dmesg --follow >"$out/kmsg.live" 2>&1 &

# restore_base NAME: after suite NAME failed a check or was ended, the
# state the next suite begins from: rxe0 on veth0 the only RDMA link, no
# client made over netlink, none of our modules loaded. What it undoes goes to NAME.log; what it cannot undo (a
# module still in use) stays, and the next suite's own checks say so. A
# failure of one suite is not made the next one's.
restore_base() {
	local l m
	for l in $(rdma link show 2>/dev/null | awk '{ sub(/\/.*/, "", $2); print $2 }' | sort -u); do
		# rxe0 stays; ib_sync_mem_dmadev's devices go with its rmmod.
		case $l in rxe0 | smdma*) continue ;; esac
		echo "harness: rdma link delete $l (left by $1)"
		in_time 30 rdma link delete "$l" || return 0
	done
	if [ -d /sys/module/ib_sync_mem ]; then
		echo "harness: delete the clients made over netlink (left by $1)"
		in_time 30 "$SYNCMEM_BIN/smnlctl" del-netlink || return 0
	fi
	for m in ib_sync_mem_test ib_sync_mem_bench ib_sync_mem_outside ib_sync_mem_dmadev ib_sync_mem_sim ib_sync_mem; do
		[ -d /sys/module/"$m" ] || continue
		echo "harness: rmmod $m (left by $1)"
		in_time 30 rmmod "$m" || return 0
	done
	if ! rdma link show rxe0/1 >/dev/null 2>&1; then
		echo "harness: rdma link add rxe0 (gone after $1)"
		modprobe rdma_rxe && rdma link add rxe0 type rxe netdev veth0
	fi
}

# in_time SECONDS CMD...: CMD ends within SECONDS, with status 0. One stuck
# in the kernel (the state a failed suite left) is left where it is, and
# said so: the harness goes on.
in_time() {
	local t=$1 pid i
	shift
	"$@" &
	pid=$!
	for ((i = 0; i < t * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
		sleep 0.1
	done
	echo "harness: '$*' did not end in ${t}s; left as it is"
	return 1
}

# watch_suite NAME PID: a hang guard, not a pass/fail timing. A suite that
# writes nothing for STALL_SECS has stalled: the blocked tasks and every
# CPU's stack go into the kernel log, NAME.stalled says where the suite
# was, and the suite is ended. If it cannot be ended (a task stuck in the
# kernel), the VM is powered off with what it has, instead of waiting for
# vm/run.sh's hard timeout; RESULTS/hung names the suite.
STALL_SECS=$(stall_secs "$SYNCMEM_SLOW")
watch_suite() {
	local name=$1 pid=$2 size last=-1 quiet=0 i
	while sleep 10; do
		size=$(stat -c %s "$out/$name.ktap" "$out/$name.log" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
		if [ "$size" != "$last" ]; then
			last=$size quiet=0
			continue
		fi
		quiet=$((quiet + 10))
		[ $quiet -ge "$STALL_SECS" ] && break
	done
	{
		echo "no output for ${quiet}s; its last lines:"
		tail -n 3 "$out/$name.log"
		echo "its processes (a wait in S state is not in sysrq w's list):"
		proc_tree "$pid"
	} >"$out/$name.stalled"
	kmsg "syncmem-harness: suite $name stalled"
	echo w > /proc/sysrq-trigger
	echo l > /proc/sysrq-trigger
	kill -TERM "$pid"
	for i in 1 2 3 4 5 6; do
		sleep 10
		kill -0 "$pid" 2>/dev/null || return 0
	done
	kmsg "syncmem-harness: suite $name cannot be ended; powering off"
	echo "$name" >"$out/hung"
	dmesg >"$out/dmesg.txt"
	sync
	echo o > /proc/sysrq-trigger
}

kmemleak_begin
rc=0
case $mode in
test)
	SUITE_TIMEOUT=${SUITE_TIMEOUT:-$((600 * SYNCMEM_SLOW))}
	[ "$SYNCMEM_LANE" = soak ] && SUITE_TIMEOUT=$((3600 * SYNCMEM_SLOW))
	for s in $(vm/suites.sh); do
		name=$(basename "$s" .sh)
		if lane_skips_suite "${SYNCMEM_CLASS:-}" "$name"; then
			echo "guest: suite $name: not on the ${SYNCMEM_CLASS} lane" >&2
			printf '1..1\nok 1 %s # SKIP not run on the %s lane (test/expected-skips)\n' \
				"$WHOLE_SUITE" "$SYNCMEM_CLASS" >"$out/$name.ktap"
			echo 0 > "$out/$name.rc"
			echo 0 > "$out/$name.secs"
			continue
		fi
		echo "guest: suite $name" >&2
		kmsg "syncmem-harness: suite $name begins"
		t0=$SECONDS
		timeout --kill-after=10 "$SUITE_TIMEOUT" bash "$s" \
			>"$out/$name.ktap" 2>"$out/$name.log" &
		spid=$!
		watch_suite "$name" "$spid" &
		wpid=$!
		wait "$spid"
		src=$?
		kill "$wpid" 2>/dev/null
		wait "$wpid" 2>/dev/null
		echo "$src" > "$out/$name.rc"
		echo $((SECONDS - t0)) > "$out/$name.secs"
		kmsg "syncmem-harness: suite $name ends"
		[ $src -eq 0 ] || rc=1
		if [ $src -ne 0 ] || grep -q '^not ok' "$out/$name.ktap"; then
			restore_base "$name" >>"$out/$name.log" 2>&1
		fi
		grep -E '^not ok' "$out/$name.ktap" >&2
	done
	;;
demo)
	bash vm/demo.sh
	rc=$?
	;;
shell)
	insmod "$SYNCMEM_KO/ib_sync_mem.ko"
	echo "syncmem: rxe0 on veth0, ib_sync_mem loaded from $SYNCMEM_KO" >&2
	bash -i
	rc=$?
	;;
cmd)
	bash -c "$1"
	rc=$?
	;;
esac

[ "$mode" = test ] && kmemleak_end
# Lock debugging turns itself off after the first splat or taint that
# makes it unreliable; a debug-lane pass needs it on until the end, or
# until test/vm/90-splats.sh asks for a report on purpose (it records it
# before).
if [ -r /proc/lockdep_stats ] && [ ! -e "$out/debug_locks" ]; then
	awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats > "$out/debug_locks"
fi
dmesg > "$out/dmesg.txt"
echo "$rc" > "$out/done"
exit $rc
