#!/usr/bin/env bash
# Memory clients from userspace: the C programs of test/tools (built into
# build/bin by `make tools`) drive ib_sync_mem over netlink, and their KTAP
# results become this suite's, one for one, as "<program>: <test>":
#
#   smnl_selftest  the netlink client itself, against sim clients
#   region_test    region clients: pinning, VmPin, munmap and exit
#                  invalidation, RLIMIT_MEMLOCK, bad ranges; with
#                  --remove, an inbound flush with its READ in flight:
#                  killed, past its deadline, its region deleted after it
#                  gave up (the READ over when the delete returns), its
#                  device removed (ENODEV)
#   vgem_sync      dma-buf clients: vgem fences bound the syncs, buffer
#                  references, an fd inherited by syncmemctl, udmabuf;
#                  a fence added after the fence wait, a stray signal, and
#                  rxe1 removed under a fence-held bracket do not hold a
#                  sync past its deadline
#   rdma_canary    source on rxe0, target on rxe1: sync, RDMA WRITE, sync,
#                  compare every byte, round after round; with --inbound
#                  the target is a sim accelerator's memory: stale in its
#                  view after the WRITE, every byte new after an inbound
#                  flush
#
# A program that is missing, crashes, hangs or stops before its plan fails.
. "$(dirname "$0")/lib.sh"
suite_begin

BIN=$SYNCMEM_BIN

dri_card() { compgen -G '/dev/dri/card*' >/dev/null; }

# The canary's network: rxe0 on veth0 (192.168.77.1) and rxe1 on veth1
# (192.168.77.2), one host. Routes bound to a device (rxe binds every route
# to its netdev) take the wire even to a local address; the other end must
# then accept packets whose source address is local too.
canary_net_up() {
	local d
	echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter || return 1
	for d in veth0 veth1; do
		echo 0 > "/proc/sys/net/ipv4/conf/$d/rp_filter" &&
		echo 1 > "/proc/sys/net/ipv4/conf/$d/accept_local" || return 1
	done
	ip addr add 192.168.77.1/24 dev veth0 &&
	ip addr add 192.168.77.2/24 dev veth1
}
canary_net_down() {
	ip addr del 192.168.77.1/24 dev veth0 && ip addr del 192.168.77.2/24 dev veth1
}

check "load ib_sync_mem" sm_load
check "modprobe vgem" modprobe vgem
check "a DRM card node exists" dri_card

check "load ib_sync_mem_sim" sim_load
run_prog smnl_selftest --dev rxe0
# region_test's batch holds a region behind a slow sim client.
run_prog region_test --dev rxe0
check "unload ib_sync_mem_sim" sim_unload
# vgem_sync deletes rxe1 under a client whose CPU bracket a fence holds,
# one of ib_sync_mem_test's (no timer: vgem's signal themselves after 10 s).
check "rdma link add rxe1 type rxe netdev veth1 (for vgem_sync to remove)" \
	rdma link add rxe1 type rxe netdev veth1
check "load ib_sync_mem_test (fences with no timer)" insmod "$KO/ib_sync_mem_test.ko" dev=rxe0
run_prog vgem_sync --dev rxe0 --remove rxe1
check "its fences all signalled" test "$(cat "$KTFS/fence")" = 0
check "unload ib_sync_mem_test" rmmod ib_sync_mem_test
check "rxe1 gone (vgem_sync removed it)" rdma_link_gone rxe1

check "rdma link add rxe1 type rxe netdev veth1" rdma link add rxe1 type rxe netdev veth1
check "IPv4 on veth0/veth1 for RoCE v2 (accept_local, no rp_filter)" canary_net_up
{ ip -br addr show dev veth0; ip -br addr show dev veth1; rdma link show; } >&2
# On the debug kernel, 6.1's rdma_rxe itself trips KASAN on this traffic
# (slab-out-of-bounds in rxe_mr_copy, seen on 6.1.192 in a full run; not
# in ib_sync_mem). Until that is understood, the canary runs on Debian's
# kernels only, and says so here.
if [ "${SYNCMEM_ON_DEBUG_KERNEL:-0}" = 1 ]; then
	skip rdma_canary "rdma_rxe of the debug kernel: KASAN slab-out-of-bounds in rxe_mr_copy"
	skip "rdma_canary --inbound" "rdma_rxe of the debug kernel: KASAN slab-out-of-bounds in rxe_mr_copy"
else
	run_prog rdma_canary --src-dev rxe0 --src-ip 192.168.77.1 \
		--dst-dev rxe1 --dst-ip 192.168.77.2 --size 1048576 --rounds 8
	# The target as an accelerator's memory (a sim client over it): the
	# WRITE lands, the accelerator still reads the old bytes, an inbound
	# flush makes it read the new ones.
	check "load ib_sync_mem_sim for the accelerator canary" sim_load
	run_prog rdma_canary --src-dev rxe0 --src-ip 192.168.77.1 \
		--dst-dev rxe1 --dst-ip 192.168.77.2 --size 262144 --rounds 4 --inbound
	check "unload ib_sync_mem_sim" sim_unload
fi
# An inbound flush of a region on rxe1 with its READ in flight (parked by
# inbound_hold): killable, bounded by its deadline, and ended with ENODEV
# when rxe1 is removed meanwhile (region_test removes it).
run_prog region_test --remove rxe1
check "rxe1 gone (region_test removed it)" rdma_link_gone rxe1
ip neigh show >&2
check "remove the canary's addresses" canary_net_down

no_client_left "no client left behind by the programs" || "$BIN/smnlctl" del-netlink >&2
check "modprobe -r vgem (no dma-buf still referenced)" modprobe -r vgem
check "object counters zero before unload" counters_zero
check "rmmod ib_sync_mem" sm_unload
finish
