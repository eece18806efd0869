#!/usr/bin/env bash
# The main job, run inside the VM by `make demo` (vm/guest.sh has brought up
# rxe0 on a veth pair): load ib_sync_mem and the simulated accelerator,
# register clients, sync them while the eBPF tracer watches, and show what
# the registry saw.
set -euo pipefail

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
quiet() { "$@" >/dev/null; }

step rdma link show
step insmod "$SYNCMEM_KO/ib_sync_mem.ko"
step insmod "$SYNCMEM_KO/ib_sync_mem_sim.ko"
step syncmemctl devices

# Three simulated accelerator buffers: fast, slow, and one that fails once.
gpu=$(syncmemctl register dev rxe0 name gpu0-vram kind sim latency 20us size 64M)
fpga=$(syncmemctl register dev rxe0 name fpga-window kind sim latency 400us size 1M)
nic=$(syncmemctl register dev rxe0 name nic-ring kind sim fail-next 1 fail-errno EIO size 4K)
echo "registered clients $gpu $fpga $nic"
step syncmemctl list
step syncmemctl -j -p list id "$gpu"

# The tracer watches while the syncs run.
syncmemctl trace per-client dev rxe0 duration 8 > /tmp/trace.out 2>&1 &
tracer=$!
sleep 3

step syncmemctl sync dev rxe0 dir to-device || true
step syncmemctl sync id "$gpu,$fpga" dir to-cpu
for _ in $(seq 20); do
	quiet syncmemctl sync dev rxe0 dir to-device
	quiet syncmemctl sync id "$fpga" dir to-cpu
done
echo "ran 20 more device-wide syncs and 20 single syncs of fpga-window"

step syncmemctl stats id "$fpga"
step syncmemctl stats
wait "$tracer"
printf '\n\033[1m$ syncmemctl trace per-client dev rxe0 duration 8\033[0m\n'
cat /tmp/trace.out

step syncmemctl unregister id "$gpu,$fpga,$nic"
step rmmod ib_sync_mem_sim ib_sync_mem
