#!/usr/bin/env bash
# vm/freeze.sh's freeze_verdict on recorded answers of a frozen guest: a
# lane is booted again only when the record positively shows the freeze
# outside our code. The records are written here as a frozen 7.3 guest
# writes them (QEMU's monitor, the serial console's answer to sysrq t, w
# and l); each case changes one thing and names the verdict it must get.
# Exits non-zero on the first wrong verdict. Run by the host tier.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. test/vm/lib.sh
. vm/freeze.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# record DIR: a frozen guest whose answer shows nothing of ours: two idle
# vCPUs, no blocked task, every task's stack (sysrq t) outside our modules.
record() {
	mkdir -p "$1"
	printf '[    1.0] boot\n[    9.0] %s\n[   20.0] syncmem-harness: suite 20-core begins\n' \
		"$HARNESS_MARK" >"$1/kmsg.live"
	printf 'console line %s\n' 1 2 3 >"$1/console.log"
	cat >"$1/frozen.monitor" <<-'EOF'
		(qemu) info status
		VM status: running
		(qemu) info registers -a
		CPU#0
		RIP=ffffffff81c4b2a4 RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
		CPU#1
		RIP=ffffffff81c4b2a4 RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
	EOF
	cat >"$1/frozen.console" <<-'EOF'
		[  300.100000] sysrq: Changing Loglevel
		[  300.100001] sysrq: Loglevel set to 9
		[  300.200000] sysrq: Show State
		[  300.200001] task:systemd         state:S stack:0     pid:1     tgid:1     ppid:0      flags:0x00000002
		[  300.200002] Call Trace:
		[  300.200003]  <TASK>
		[  300.200004]  __schedule+0x3a0/0xa00
		[  300.200005]  schedule+0x5e/0xd0
		[  300.200006]  schedule_hrtimeout_range_clock+0xc0/0x110
		[  300.200007]  do_epoll_wait+0x4c5/0x5e0
		[  300.200008]  </TASK>
		[  300.200009] task:bash            state:S stack:0     pid:412   tgid:412   ppid:1      flags:0x00000002
		[  300.200010] Call Trace:
		[  300.200011]  <TASK>
		[  300.200012]  __schedule+0x3a0/0xa00
		[  300.200013]  schedule+0x5e/0xd0
		[  300.200014]  do_wait+0x53/0x120
		[  300.200015]  kernel_wait4+0xe3/0x190
		[  300.200016]  </TASK>
		[  300.300000] sysrq: Show Blocked State
		[  300.400000] sysrq: Show backtrace of all active CPUs
		[  300.400001] NMI backtrace for cpu 0 skipped: idling at default_idle+0x14/0x20
		[  300.400002] NMI backtrace for cpu 1 skipped: idling at default_idle+0x14/0x20
	EOF
}

fail=0
# verdict NAME DIR WANT [MONRC]: freeze_verdict's line for DIR (QEMU's
# monitor exiting MONRC, 0 by default) starts with WANT.
verdict() {
	local got
	got=$(freeze_verdict "$2" "${4:-0}" 3)
	if [[ $got == "$3"* ]]; then
		echo "ok: $1: $got"
	else
		echo "FAIL: $1: want '$3...', got: $got"
		fail=1
	fi
}

record "$tmp/clean"
verdict "nothing of ours anywhere" "$tmp/clean" \
	"verdict: outside ours: monitor answered, 2 vCPUs (2 halted); sysrq t: 2 tasks; sysrq w: 0 blocked"

# A deadlock of ours in interruptible waits: no task in state D, both
# vCPUs idle; only sysrq t shows where a task sleeps.
record "$tmp/sleeping"
sed -i 's/^\(\[  300.200014\]\)  do_wait+0x53\/0x120$/\1  sm_nl_client_del_doit+0x12a\/0x200 [ib_sync_mem]/' \
	"$tmp/sleeping/frozen.console"
verdict "a task sleeping in our module (state S)" "$tmp/sleeping" \
	"verdict: not booted again: a frame of our modules on the stacks: "

record "$tmp/no-t"
sed -i '/sysrq: Show State/,/sysrq: Show Blocked State/{/Show Blocked State/!d}' "$tmp/no-t/frozen.console"
verdict "no answer to sysrq t" "$tmp/no-t" \
	"verdict: not booted again: the guest kernel did not answer sysrq t (every task)"

record "$tmp/blocked"
sed -i 's/^\(\[  300.300000\] sysrq: Show Blocked State\)$/\1\n[  300.300001] task:rdma            state:D stack:0     pid:500   tgid:500   ppid:412    flags:0x00004002\n[  300.300002] Call Trace:\n[  300.300003]  <TASK>\n[  300.300004]  __schedule+0x3a0\/0xa00\n[  300.300005]  sm_domain_invalidate_all+0x80\/0x200 [ib_sync_mem 0123abcd]\n[  300.300006]  <\/TASK>/' \
	"$tmp/blocked/frozen.console"
verdict "a blocked task in our module (state D)" "$tmp/blocked" \
	"verdict: not booted again: a frame of our modules on the stacks: "

record "$tmp/monitor"
verdict "QEMU's monitor failed" "$tmp/monitor" \
	"verdict: not booted again: QEMU's monitor did not answer or failed (exit 1)" 1

# lapic_timers on QEMU's "info lapic N" answers (7.2's format): how many
# vCPUs have their local APIC timer counting down, and each one's state.
# The freeze guard's NMI goes only to a guest where that count is 0.
lapic_answer() { # CPU CURRENT_COUNT IRR
	cat <<-EOF
		(qemu) info lapic $1
		dumping local APIC state for CPU $1 

		LVT0	 0x00010700 active-hi edge  masked                      ExtINT (vec 0)
		LVTT	 0x000000ec active-hi edge                 one-shot     Fixed  (vec 236)
		Timer	 DCR=0x3 (divide by 16) initial_count = 50815 current_count = $2
		SPIV	 0x000001ff APIC enabled, focus=off, spurious vec 255
		ISR	 (none)
		IRR	 $3
		APR 0x00 TPR 0x00 DFR 0x0f LDR 0x00 PPR 0x00
	EOF
}
timers() { # NAME WANT ANSWER
	local got
	got=$(lapic_timers <<<"$3")
	if [ "$got" = "$2" ]; then
		echo "ok: $1: $got"
	else
		echo "FAIL: $1: want '$2', got: '$got'"
		fail=1
	fi
}
timers "no timer counting, one interrupt pending: a stall" \
	"0 cpu0 timer 0 IRR 236, cpu1 timer 0 IRR (none)" \
	"$(lapic_answer 0 0 '236 '; lapic_answer 1 0 '(none)')"
timers "one vCPU's timer counting: idle, not stalled" \
	"1 cpu0 timer 0 IRR (none), cpu1 timer 13829200 IRR (none)" \
	"$(lapic_answer 0 0 '(none)'; lapic_answer 1 13829200 '(none)')"
timers "no answer: nothing counted" "0 " ""

exit "$fail"
