#!/usr/bin/env bash
# The data path, /dev/ib_sync_mem (uapi/linux/ib_sync_mem_dev.h), from a
# program: test/tools/async_dev.c syncs sim clients blocking and
# asynchronously (fences as sync_file fds), chains in-fences, marks a lazy
# client dirty, syncs the device, and checks the exact errnos of bad input
# and the permission rule, and takes clients over with a file (they die
# with it); every fence it made must have signalled once and been freed. The fences' guarantees across unregister and device removal
# are the in-kernel cases async, async_device and async_across_removal
# (20-core). Then pkg/syncdev's integration tests, the same from Go, and
# libsyncmem: test/tools/lib_test.c, and examples/nccl_flush.c, the
# receive pattern on it.
. "$(dirname "$0")/lib.sh"
suite_begin

check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load
check "/dev/ib_sync_mem is there (devtmpfs)" test -c /dev/ib_sync_mem
run_prog async_dev --dev rxe0
# Through io_uring (IORING_OP_URING_CMD): test/tools/uring_dev.c syncs and
# flushes inbound through a ring, 8 in flight, batches, in-fences, bad
# input's errnos in cqe->res, another file's client, the device file and
# the ring closed with commands pending, and rxe1 removed while a command
# waits for its in-fence (-ENODEV).
run_prog uring_dev --dev rxe0 --spare rxe1,veth1
check "rxe1 is gone again" lacks_device rxe1
check "no fence left after the ring's commands" wait_until 30 no_fence_left

# Without privilege: test/tools/unpriv_dev.c as uid 65534, no capabilities.
# Its own clients work end to end; another file's and an administrator's
# are ENOENT; the device-wide sync, OWN and the family's mutating commands
# EPERM; RLIMIT_MEMLOCK holds; closing mid-sync leaves nothing. The sim
# offers its kind to unprivileged files (for syncs that take time).
SIMPARAM=/sys/module/ib_sync_mem_sim/parameters/unprivileged
USERPARAM=/sys/module/ib_sync_mem/parameters/max_clients_per_user
check "the sim's kind offered to unprivileged files" eval "echo 1 > $SIMPARAM"
adm_id=$(ctl register dev rxe0 name unpriv-admins)
check "an administrator's client" is_id "$adm_id"
run_prog --nobody unpriv_dev --dev rxe0 --foreign "$adm_id"
check "the administrator's client was not synced by it" expect syncs "$(syncs_of id "$adm_id")" 0
check "delete the administrator's client" ctl unregister id "$adm_id"
check "no client of uid 65534 left" jq_list 'all(.[]; (.name | startswith("unpriv-")) | not)'
check "the default max_clients_per_user is 256" expect max_clients_per_user "$(cat $USERPARAM)" 256
check "max_clients_per_user=4" eval "echo 4 > $USERPARAM"
run_prog --nobody unpriv_dev --dev rxe0 --limit 4
# The limit is an unprivileged opener's: the family's CLIENT_NEW is not
# counted.
for i in 1 2 3 4 5; do
	lim_ids[i]=$(ctl register dev rxe0 name "unpriv-admin-lim-$i")
done
check "an administrator registers 5 with max_clients_per_user=4" is_id "${lim_ids[5]}"
check "delete them" ctl unregister id "$(csv "${lim_ids[@]}")"
check "max_clients_per_user back to 256" eval "echo 256 > $USERPARAM"
check "the sim's kind withdrawn from unprivileged files" eval "echo 0 > $SIMPARAM"
check "no fence left after the unprivileged runs" wait_until 30 no_fence_left
# A kernel driver's client, which no file may take over.
check "load ib_sync_mem_outside" insmod "$KO/ib_sync_mem_outside.ko"
kid=$(ctl list -j | jq -r '[.[] | select(.owner == "outside" and .dev == "rxe0") | .id][0]')
check "outside's client on rxe0" is_id "$kid"
check "a file cannot take a kernel driver's client over: EPERM" \
	expect own "$("$SYNCMEM_BIN/async_dev" --own "$kid")" "own: -1"
check "unload ib_sync_mem_outside" rmmod ib_sync_mem_outside
check "rxe0 attached" has_device rxe0
run_go_tests syncdev "$SYNCMEM_BIN/syncdev.test"

# syncmemctl sync ... async: the fence's outcome, and its exit status.
ok_id=$(ctl register dev rxe0 name async-cli)
check "a sim client for the CLI" is_id "$ok_id"
fail_id=$(ctl register dev rxe0 name async-cli-fail fail-next 1 fail-errno EIO)
check "a sim client whose next sync fails with EIO" is_id "$fail_id"
check "sync id ID async: submitted, the fence signals ok" jq_of \
	"(.err // \"\") == \"\" and .id == $ok_id and .dir == \"to-device\" and .fence_fd >= 0" \
	ctl -j sync id "$ok_id" async
check "sync id ID async of a failing client: exit 1, the fence's EIO" \
	fails_with "the fence signalled with EIO" ctl sync id "$fail_id" async
check "sync dev rxe0 dir to-cpu async: the fence signals ok" jq_of \
	"(.err // \"\") == \"\" and .dev == \"rxe0\" and .dir == \"to-cpu\"" \
	ctl -j sync dev rxe0 dir to-cpu async
check "sync id A,B async: one fence for the batch, ok" jq_of \
	"(.err // \"\") == \"\" and .ids == [$ok_id, $fail_id]" \
	ctl -j sync id "$ok_id,$fail_id" async
check "delete the CLI's clients" ctl unregister id "$ok_id,$fail_id"

# A program killed while a blocking sync waits for its in-fence: it dies at
# once, the sync it asked for never runs, the in-fence's own sync still
# completes, and no fence is left.
slow_id=$(ctl register dev rxe0 name async-slow latency 5s)
check "a sim client whose sync takes 5 s" is_id "$slow_id"
wait_id=$(ctl register dev rxe0 name async-waiter)
check "a sim client for the waiting sync" is_id "$wait_id"
"$SYNCMEM_BIN/async_dev" --hold-in "$slow_id,$wait_id" >/tmp/hold-in.out 2>&1 &
holder=$!
check "the program waits in the in-fence (dma_fence_default_wait)" \
	wait_until 30 waits_in "$holder" dma_fence_default_wait
kill -KILL "$holder"
check "SIGKILL ends it while the in-fence is pending" wait_until 10 gone "$holder"
check "the slow client's sync still completes (its fence signalled, freed)" \
	wait_until 30 no_fence_left
check "the killed program's sync never ran" expect syncs "$(syncs_of id "$wait_id")" 0
check "the slow client synced once" expect syncs "$(syncs_of id "$slow_id")" 1
check "delete them" ctl unregister id "$slow_id,$wait_id"
# A program killed while a file of it owns a client: the client is gone by
# the time the program is reaped (the file's release deletes it), no wait.
own_id=$(ctl register dev rxe0 name async-owned-by-file)
check "a sim client for a file to own" is_id "$own_id"
"$SYNCMEM_BIN/async_dev" --own "$own_id" >/tmp/own.out 2>&1 &
owner=$!
check "the program's file owns it (flags: file)" \
	wait_until 30 jq_list "any(.[]; .id == $own_id and .flags == [\"file\"])"
# Its word comes after the ioctl the flag shows: waited for before the kill.
check "... and the program says so (own: 0)" wait_until 30 grep -qx 'own: 0' /tmp/own.out
kill -KILL "$owner"
wait "$owner" || true
check "killed and reaped: the client it owned is gone already" lacks_client "$own_id"
# libsyncmem's calls against the module, from a program on the library
# alone (test/tools/lib_test.c, linked with libsyncmem.a), and rxe1 removed
# under the clients of an unprivileged file (syncmem_open_fd()).
run_prog lib_test --dev rxe0 --spare rxe1,veth1
check "rxe1 is gone after lib_test" lacks_device rxe1
# The example's verbs need ib_uverbs: 6.12's rdma_rxe loads it, 7.3's
# does not, and without udev nothing else does when this suite runs alone.
check "ib_uverbs loaded, its node in /dev/infiniband" \
	eval "modprobe ib_uverbs && test -c /dev/infiniband/uverbs0"
# examples/nccl_flush.c, the receive pattern a net plugin's author would
# copy, on libsyncmem's shared library (build/lib, not installed here) and
# libibverbs: a receive buffer made a region client, two RC QPs on rxe0,
# RDMA WRITEs with immediate, their completions, the inbound flush blocking,
# through a fence and through an io_uring (liburing's ring, an SQE of
# syncmem_uring_prep_sync()), the bytes checked; --verify fails any flush after
# which the module's debugfs READ count did not grow by one with this
# message's first bytes (on rxe the bytes cannot tell). It runs as uid
# 65534 (--user: root only opens the debugfs file first), verbs and the
# module unprivileged: the uverbs nodes 0666 meanwhile, as rdma-core's
# udev rule makes them (the VM has no udev). Messages of 255 pages, not
# the example's 1 MiB: 6.1's rxe_mr_copy() reads one pointer past its MR's
# map array when a copy ends at the end of an MR of 256*k pages (its loop
# steps to the next map before it tests the length left; gone with 6.3's
# xarray MRs), which KASAN reports on the debug kernel.
nccl_flush() {
	local out rc=0 modes
	modes=$(stat -c '%a %n' /dev/infiniband/uverbs*) || return 1
	chmod 0666 /dev/infiniband/uverbs*
	out=$(LD_LIBRARY_PATH=$SYNCMEM_TOP/build/lib timeout --kill-after=10 $((120 * SYNCMEM_SLOW)) \
		"$SYNCMEM_BIN/nccl_flush" --dev rxe0 --addr 192.168.76.1 --messages 8 --verify \
		--size $((255 * 4096)) --user 65534) || rc=$?
	while read -r m n; do chmod "$m" "$n"; done <<<"$modes"
	echo "$out" >&2
	[ "$rc" = 0 ] &&
		grep -qx "running as uid 65534, gid 65534, no supplementary group" <<<"$out" &&
		grep -qx "8 flushes (3 blocking, 3 through a fence, 2 through the ring), 8 module READs" <<<"$out" &&
		grep -qx "every message arrived whole and was flushed" <<<"$out"
}
check "examples/nccl_flush as uid 65534: 8 WRITEs with immediate flushed through libsyncmem (blocking, fence, ring), READ counts and bytes right" \
	nccl_flush
nccl_flush_lib() {
	LD_LIBRARY_PATH=$SYNCMEM_TOP/build/lib LD_TRACE_LOADED_OBJECTS=1 "$SYNCMEM_BIN/nccl_flush" |
		grep -F "libsyncmem.so.0 => $SYNCMEM_TOP/build/lib/libsyncmem.so.0"
}
check "examples/nccl_flush runs on libsyncmem.so.0 of build/lib" nccl_flush_lib
no_client_left "no client left behind" || "$SYNCMEM_BIN/smnlctl" del-netlink >&2
check "no fence left: fences 0, fences_pending 0" \
	wait_until 30 no_fence_left
check "unload ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
finish
