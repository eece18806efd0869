#!/usr/bin/env bash
# The main job, run inside the VM by `make demo`: rxe0 is up (vm/guest.sh),
# load ib_sync_mem and show what it sees.
set -euo pipefail

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

step rdma link show
step insmod "$SYNCMEM_KO/ib_sync_mem.ko"
step cat /sys/kernel/debug/ib_sync_mem/devices
step rdma link add rxe1 type rxe netdev veth1
step cat /sys/kernel/debug/ib_sync_mem/devices
step rdma link delete rxe1
step cat /sys/kernel/debug/ib_sync_mem/devices
step rmmod ib_sync_mem
