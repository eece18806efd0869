#!/usr/bin/env bash
# The DMA path of real hardware, on ib_sync_mem_dmadev: an RDMA device
# whose DMA device uses the DMA API (not virtual DMA, as rxe does), on a
# kernel booted with swiotlb=force (vm/boot.sh): every streaming mapping
# bounces, so a missing or misdirected sync shows stale bytes.
#
#   dma_path   regions on the device: the device's view (its bus file at
#              the bus addresses of debugfs dma/ID) against the CPU's, in
#              every direction, whole and in ranges; a region at buf +
#              100 of an odd length (as malloc returns one): its bytes
#              move, none of the others of its pages; a dma-buf attached on
#              the device, a writer's fence bounding its to-cpu; a
#              buffer whose exporter moves it (7.x; 6.x pins it): the
#              mapping let go at the move, the new pages mapped at the
#              next sync and not before; the
#              device deleted under both: unpinned and detached when the
#              delete returns, once
#
# On 7.x, where ib_umem maps only coherent DMA, the region's refusal is
# what is checked (its errno and message).
. "$(dirname "$0")/lib.sh"
suite_begin

# dmadev CMD: ib_sync_mem_dmadev's ctl ("add NAME", "del NAME").
dmadev() { echo "$1" > /sys/kernel/debug/ib_sync_mem_dmadev/ctl; }

check "load ib_sync_mem" sm_load
check "modprobe vgem" modprobe vgem
check "load ib_sync_mem_dmadev" insmod "$KO/ib_sync_mem_dmadev.ko"
check "add smdma0" dmadev "add smdma0"
check "smdma0 is an RDMA device" rdma dev show smdma0
check "ib_sync_mem attached to smdma0" has_device smdma0
check "a second smdma0 is refused: EEXIST" fails_as "File exists" dmadev "add smdma0"
check "a name with a slash is refused: EINVAL" fails_as "Invalid argument" dmadev "add sm/dma"
check "an unknown command is refused: EINVAL" fails_as "Invalid argument" dmadev "list"
check "deleting an unknown device is refused: ENODEV" fails_as "No such device" dmadev "del smdma9"
check "load ib_sync_mem_test (fences with no timer)" insmod "$KO/ib_sync_mem_test.ko" dev=smdma0
run_prog dma_path --dev smdma0
check "its fences all signalled" test "$(cat "$KTFS/fence")" = 0
check "unload ib_sync_mem_test" rmmod ib_sync_mem_test
check "smdma0 is gone (dma_path deleted it)" lacks_device smdma0
check "rmmod ib_sync_mem_dmadev" rmmod ib_sync_mem_dmadev

no_client_left "no client left behind" || "$SYNCMEM_BIN/smnlctl" del-netlink >&2
check "modprobe -r vgem (no dma-buf still referenced)" modprobe -r vgem
check "object counters zero before unload" counters_zero
check "rmmod ib_sync_mem" sm_unload
finish
