#!/usr/bin/env bash
# Where an inbound flush's time goes, against the floor's (a diagnosis,
# not a benchmark: tracing slows everything it sees). In the VM:
#
#   vm/run.sh --cmd 'bash bench/inbound-trace.sh [N]'
#
# Runs inbound_bench (N flushes of each path, default 300) with kprobes on
# rxe_post_send and rxe_cq_post, the module's READ completion
# (sm_inbound_read_done), rxe's work items and the program's syscalls
# traced, then prints, per path (floor: the program's own READ; ioctl and
# nl: the module's flush through /dev/ib_sync_mem and netlink), the
# medians of: the program's syscall to rxe's post (sys->post), the post to
# the first of rxe's work items to start (post->wq), the post to the
# READ's completion queued (post->cq), and the completion queued to its
# being seen (cq->seen: the module's handler, or the program's next
# syscall once its poll found it). bench/inbound_trace.py parses.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-300}
export PATH=$top/build/bin:$PATH
KO=${SYNCMEM_KO:?not in the VM harness}
T=/sys/kernel/tracing
ip addr add 192.168.77.1/24 dev veth0
insmod "$KO/ib_sync_mem.ko"
echo 0 > $T/tracing_on
echo 40000 > $T/buffer_size_kb
echo 'p:smkp/post rxe_post_send' >> $T/kprobe_events
echo 'p:smkp/cqpost rxe_cq_post' >> $T/kprobe_events
echo 'p:smkp/seen ib_sync_mem:sm_inbound_read_done' >> $T/kprobe_events
echo 1 > $T/events/smkp/enable
echo 'workqueue:workqueue_execute_start raw_syscalls:sys_enter ib_sync_mem:sync_start' >> $T/set_event
echo 1 > $T/tracing_on
inbound_bench -n "$n" -r 1 -w 20 -d rxe0 -a 192.168.77.1
echo 0 > $T/tracing_on
python3 "$top/bench/inbound_trace.py" $T/trace
echo > $T/set_event
echo 0 > $T/events/smkp/enable
echo > $T/kprobe_events
rmmod ib_sync_mem
