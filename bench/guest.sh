#!/usr/bin/env bash
# The benchmark suites, inside the VM (vm/guest.sh bench runs this after
# its set-up: rxe0 on veth0, debugfs and tracefs mounted).
#
#   bench/guest.sh [--lane icount|gate] [--smoke | --profile 'CMD'] OUT
#
# Loads ib_sync_mem, ib_sync_mem_sim and ib_sync_mem_bench, runs every suite
# with a warm-up and repeats, and writes OUT/raw.txt (one line per repeat,
# "SUITE key=value ...", from the bench module, bench/nlbench,
# test/tools/train_loop, test/tools/inbound_bench and test/tools/dev_bench) and
# OUT/env.txt. --smoke runs each suite once with tiny counts: it checks that
# the harness works, not how fast anything is. bench/report.py turns raw.txt
# into the table. Every figure is compared only with figures of the same run.
# --profile runs one bench module command (e.g. 'fanout 64 20000 1'), or
# dev_bench or inbound_bench with its arguments (inbound_bench's -a: the
# set-up's 192.168.76.1 on veth0), or
# an nlbench command line ('nlbench -suite batch -n 1000 -reps 3'), under
# perf record (cpu-clock: TCG has no PMU) and writes OUT/perf.txt, the
# symbols (kernel and user) by share of the samples, instead of the
# suites. On the icount lane cpu-clock runs on the instruction clock: the
# samples fall every so many instructions (or ns slept).
#
# --lane icount (vm/run.sh --bench --icount: one vCPU, QEMU's instruction
# clock, where every guest ns is one guest instruction) runs only the
# suites that measure a path's length on one CPU: fan-out,
# register+unregister, ranges (and the client's size), the training loop,
# the inbound flush and the data path. The suites that measure
# concurrency (scaling, coalescing, the unregister of many or beside a
# pass with syncs in flight, the tracer with its reader, overlap), need a
# second vCPU or a host clock and stay on plain TCG, as do netlink from Go
# and memory per client, which the data path's and the size's figures
# stand for here. Without --lane every suite runs (make test's 80-bench
# runs --smoke so).
#
# --lane gate (vm/run.sh --bench --gate, the same VM as icount's: make
# test's regression gate, bench/gate.sh) runs only the hot paths the gate
# holds to bench/budgets: the fan-out at N = 64, the range sync, the
# inbound flush and the data path (NOP and SYNC ioctl), with the icount
# lane's counts but one whole sync of the 64 MiB client. Its figures are
# judged against budgets measured on this lane, never the icount lane's.
set -uo pipefail

smoke=0 profile= lane=all
while [ $# -gt 1 ]; do
	case $1 in
	--smoke) smoke=1; shift ;;
	--profile) profile=$2; shift 2 ;;
	--lane) lane=$2; shift 2 ;;
	*) break ;;
	esac
done
case $lane in all | icount | gate) ;; *) echo "bench: unknown lane $lane" >&2; exit 2 ;; esac
out=${1:?usage: bench/guest.sh [--lane icount|gate] [--smoke | --profile CMD] OUT}
mkdir -p "$out"
raw=$out/raw.txt
: > "$raw"
KO=${SYNCMEM_KO:?not in the VM harness}
B=/sys/kernel/debug/ib_sync_mem_bench

die() { echo "bench: $*" >&2; exit 1; }

if [ $smoke = 1 ]; then
	REPS=2 FAN_CALLS=2000 REG_ITERS=5 SCALE_MS=50 CO_ITERS=10 CO_DELAY=20 RTT_ITERS=50
	BATCH_N=20 MEM_N=50 TR_REPS=1 UNREG_N=20 UNREG_REPS=2
	TRAIN_CFGS="1:2 8:2 64:2" TRAIN_REPS=2 TRAIN_FLAGS=--smoke
	RANGE_ITERS=128 RANGE_WHOLE=2 INB_FLAGS=--smoke DEV_FLAGS=--smoke
	URING_ITERS=20
else
	REPS=7 FAN_CALLS=400000 REG_ITERS=200 SCALE_MS=500 CO_ITERS=50 CO_DELAY=200
	RTT_ITERS=2000 BATCH_N=1000 MEM_N=1000 TR_REPS=5 UNREG_N=1000 UNREG_REPS=5
	# Training loop, buffers:steps per repeat. A step of 64 buffers moves
	# 4 MiB through rxe (a CPU copy, slow under TCG): fewer steps there.
	TRAIN_CFGS="1:100 8:30 64:5" TRAIN_REPS=5 TRAIN_FLAGS="-w 2"
	# Ranges: range syncs of 4 KiB (and whole 4 KiB syncs) per repeat,
	# and whole syncs of the 64 MiB client (a million cache lines each).
	RANGE_ITERS=20000 RANGE_WHOLE=10
	INB_FLAGS="-n 1000 -r $REPS -w 100"
	# The data path: 20,000 calls of each per repeat (2,000 left the
	# SYNC ioctl's ratio to the NOP spread over 2.95-3.86x in one run).
	DEV_FLAGS="-n 20000 -s 50 -l 2000 -r $REPS"
	# io_uring: commands of each kind per repeat (an inbound flush is
	# some 30,000 instructions).
	URING_ITERS=1000
	if [ $lane != all ]; then
		# The same counts: the icount lane's suites took 24 s in the
		# guest with a quarter of them (6.12, 2026-12-07), no sleep
		# or wait costing host time there. Overlap stays on TCG: its
		# sync sleeps while the compute runs, which one vCPU cannot
		# show (with sleep=off a sleep just moves the clock by its
		# length). One short step of it (dev_bench runs both),
		# dropped from raw.txt.
		DEV_FLAGS="-n 20000 -s 1 -l 100 -r $REPS"
	fi
	if [ $lane = gate ]; then
		# The gate's counts (bench/budgets was measured with them):
		# the icount lane's (the data path's above) but one whole sync
		# of the 64 MiB client, which no budget holds. Not fewer: with
		# a quarter of the calls and 5 repeats the SYNC ioctl's
		# repeats spread over 1,299-1,499 instructions in one run
		# (6.12, 2026-12-07).
		RANGE_WHOLE=1
	fi
fi

{
	echo "kernel=$(uname -r)"
	echo "vcpus=$(nproc)"
	echo "accel=${SYNCMEM_ACCEL:-tcg}"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "smoke=$smoke"
	echo "lane=$lane"
	# What a guest ns is: one instruction on the icount and gate
	# lanes, else TCG's emulated time (the clock source says on which
	# device).
	if [ $lane != all ]; then
		echo "clock=instructions"
	else
		echo "clock=tcg"
	fi
	echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "tsc=$(dmesg | grep -m1 -oE 'tsc: (Refined TSC clocksource calibration|Detected): [0-9.]+ MHz' | grep -oE '[0-9.]+ MHz')"
	echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
} > "$out/env.txt"

grep -q '^ib_sync_mem ' /proc/modules && die "ib_sync_mem is already loaded (left by an earlier suite?)"
insmod "$KO/ib_sync_mem.ko" || die "cannot load ib_sync_mem"
insmod "$KO/ib_sync_mem_sim.ko" || die "cannot load ib_sync_mem_sim"
insmod "$KO/ib_sync_mem_bench.ko" dev=rxe0 || die "cannot load ib_sync_mem_bench"

# run CMD: one bench module command; its lines go to raw.txt.
run() {
	echo clear > $B/run || die "bench module: clear failed"
	echo "== $*" >&2
	echo "$*" > $B/run || die "bench module: '$*' failed (see dmesg)"
	cat $B/out >> "$raw"
}

if [ -n "$profile" ]; then
	command -v perf >/dev/null || die "no perf in the guest (Debian's linux-perf)"
	echo clear > $B/run || die "bench module: clear failed"
	# A command of the bench module, or nlbench itself (its output is
	# its result lines).
	case $profile in
	nlbench\ * | dev_bench\ * | inbound_bench\ *) cmd="$profile >> '$raw'" ;;
	*) cmd="echo '$profile' > $B/run" ;;
	esac
	perf record -q -e cpu-clock -F 2999 -a -g -o "$out/perf.data" -- \
		sh -c "$cmd" || die "perf record of '$profile' failed"
	cat $B/out >> "$raw"
	perf report -i "$out/perf.data" --stdio --no-children --sort dso,sym \
		--percent-limit 0.2 -g none > "$out/perf.txt" 2>"$out/perf.err" ||
		die "perf report failed: $(cat "$out/perf.err")"
	# ...and by binary (kernel, the program, its libraries).
	perf report -i "$out/perf.data" --stdio --no-children --sort dso \
		-g none >> "$out/perf.txt" 2>"$out/perf.err" ||
		die "perf report failed: $(cat "$out/perf.err")"
	exit 0
fi

# 1. Fan-out, against the indirect-call floor (the gate: N = 64 only).
fan_ns="1 8 64 1024"
[ $lane = gate ] && fan_ns=64
for n in $fan_ns; do
	iters=$((FAN_CALLS / n))
	[ $iters -lt 5 ] && iters=5
	run fanout $n $iters $REPS
done
# 2. Register + unregister, against allocating the same objects; then
# unregistering UNREG_N clients one by one and at once. Not in the gate:
# its deferred work lands in whichever timed loop runs (BENCHMARKS.md).
[ $lane = gate ] || run regunreg $REG_ITERS $REPS
# These two time a kthread syncing beside the unregister, the next two
# threads on two vCPUs: concurrency, plain TCG only.
if [ $lane = all ]; then
	run unregmany $UNREG_N $UNREG_REPS
	# ...and one unregister beside a pass over UNREG_N clients of 100 us each.
	run scoped $UNREG_N 100 $UNREG_REPS
	# 3. Read-side scaling, the registry against an rwlock/rwsem registry.
	for impl in srcu rwlock rwsem; do
		for threads in 1 2; do
			for churn in 0 1; do
				run scale $impl $threads $churn $SCALE_MS $REPS
			done
		done
	done
	# 4. Coalescing: 4 callers at once over 4 clients that busy-wait
	# CO_DELAY us each.
	for on in 1 0; do
		run coalesce $on 4 $CO_ITERS $CO_DELAY $REPS
	done
fi
# 10. Ranges: ib_sync_mem_sync_range() of 4 KiB of a 64 MiB client whose
# sync writes back each cache line it covers, against a sync of a whole
# 4 KiB client of the same kind; the 64 MiB client whole for contrast.
run ranges 65536 4 $RANGE_ITERS $RANGE_WHOLE $REPS
if [ $lane != gate ]; then
	run sizes
	# The client object as its slab cache sees it (the cache may be
	# merged with another of the same size; sysfs shows the one it
	# lives in).
	slab=/sys/kernel/slab/ib_sync_mem_client
	[ -d $slab ] || die "no $slab (SLUB sysfs) to read the client cache from"
	echo "slab cache=$(basename "$(readlink -f $slab)") object_size=$(cat $slab/object_size) slab_size=$(cat $slab/slab_size) aliases=$(cat $slab/aliases)" >> "$raw"
fi

if [ $lane = all ]; then
	# 5. Netlink from Go.
	echo "== nlbench" >&2
	nlbench -suite rtt -iters $RTT_ITERS -reps $REPS >> "$raw" || die "nlbench rtt failed"
	nlbench -suite batch -n $BATCH_N -reps $REPS >> "$raw" || die "nlbench batch failed"
	# 7. Memory per client.
	nlbench -suite memory -n $MEM_N >> "$raw" || die "nlbench memory failed"

	# 6. Tracer overhead: fan-out with `syncmemctl trace` detached (0),
	# attached per client (1, the default mode) and in its passes mode (2),
	# in turn, so drift hits all alike; over 64 no-op clients
	# (the tracer's cost against the registry's own) and over 8 clients that
	# take 10 us each (against a sync that does some work).
	tr_cfgs="64:$((FAN_CALLS / 64)):0 8:$((FAN_CALLS / 800)):10"
	for r in $(seq 0 $((TR_REPS - 1))); do
		for attached in 0 1 2; do
			pid=
			if [ $attached != 0 ]; then
				mode=
				[ $attached = 2 ] && mode=passes
				syncmemctl trace $mode -d 600 >/dev/null 2>"$out/trace.err" &
				pid=$!
				for _ in $(seq $((100 * ${SYNCMEM_SLOW:-1}))); do
					grep -q Tracing "$out/trace.err" 2>/dev/null && break
					sleep 0.2
				done
				grep -q Tracing "$out/trace.err" || die "syncmemctl trace did not attach: $(cat "$out/trace.err")"
			fi
			for cfg in $tr_cfgs; do
				IFS=: read -r n iters delay <<< "$cfg"
				echo clear > $B/run
				echo "fanout $n $iters 1 $delay" > $B/run || die "tracer run failed"
				sed "s/^fanout /tracer attached=$attached /; s/rep=0/rep=$r/" $B/out >> "$raw"
			done
			if [ -n "$pid" ]; then
				kill -INT "$pid"
				wait "$pid" || die "syncmemctl trace exited $?: $(cat "$out/trace.err")"
			fi
		done
	done
fi

# 8. Training loop (test/tools/train_loop.c): per step the CPU writes B
# buffers, syncs them to-device, RDMA-WRITEs each into a peer buffer over
# rxe0 (two RC QPs on rxe0, loopback), syncs the peers to-cpu and reads
# them; sync modes single, batch, device and changed interleaved repeat by
# repeat. The QPs' RoCE v2 GID needs an IPv4 address on rxe0's netdev.
train_ip=192.168.77.1
ip addr add $train_ip/24 dev veth0 || die "cannot add $train_ip to veth0 for train_loop"
if [ $lane != gate ]; then
	echo "== train_loop" >&2
	command -v train_loop >/dev/null || die "no train_loop in build/bin (make tools)"
	for cfg in $TRAIN_CFGS; do
		train_loop $TRAIN_FLAGS -d rxe0 -a $train_ip -b "${cfg%:*}" \
			-n "${cfg#*:}" -r $TRAIN_REPS >> "$raw" ||
			die "train_loop with ${cfg%:*} buffers failed"
	done
fi

# 9. Inbound flush (test/tools/inbound_bench.c): one inbound SYNC of a
# one-page region client through the module (its RDMA READ on its own
# loopback QP of rxe0) against the floor, a userspace 8-byte RDMA READ on
# a loopback RC QP of rxe0, alternating flush by flush. Its QP's RoCE v2
# GID is that of train_loop's address.
echo "== inbound_bench" >&2
command -v inbound_bench >/dev/null || die "no inbound_bench in build/bin (make tools)"
inbound_bench $INB_FLAGS -d rxe0 -a $train_ip >> "$raw" || die "inbound_bench failed"
ip addr del $train_ip/24 dev veth0 || die "cannot remove $train_ip from veth0"

# 10. The data path (test/tools/dev_bench.c): one client's SYNC ioctl
# against the NOP ioctl and the netlink round trip, interleaved in rounds
# of 100; then a step of compute and a sleeping sync, overlapped through
# the fence against compute, sync and the two in sequence.
echo "== dev_bench" >&2
command -v dev_bench >/dev/null || die "no dev_bench in build/bin (make tools)"
if [ $lane != all ]; then
	dev_bench $DEV_FLAGS -d rxe0 > "$out/dev_bench.txt" || die "dev_bench failed"
	grep -v '^overlap ' "$out/dev_bench.txt" >> "$raw"
else
	dev_bench $DEV_FLAGS -d rxe0 >> "$raw" || die "dev_bench failed"
fi

# 11. io_uring (test/tools/uring_dev.c --bench): per completed command, a
# sim client's sync (an asynchronous job), a one-page region's to-device
# sync (run at issue) and its inbound flush, each through the blocking
# ioctl, the ring with 8 in flight and the ring with one; a line a repeat.
# Not on the gate lane: no budget holds it.
if [ $lane != gate ]; then
	echo "== uring_dev" >&2
	command -v uring_dev >/dev/null || die "no uring_dev in build/bin (make tools)"
	for _ in $(seq "$REPS"); do
		uring_dev --dev rxe0 --bench "$URING_ITERS" >> "$raw" ||
			die "uring_dev --bench failed"
	done
fi

rmmod ib_sync_mem_bench ib_sync_mem_sim ib_sync_mem || die "cannot unload the modules"
echo "bench: $(wc -l < "$raw") result lines in $raw" >&2
