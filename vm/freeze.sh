#!/usr/bin/env bash
# What a frozen guest's record shows (sourced by vm/run.sh; test/freeze.sh
# checks it on recorded answers): freeze_verdict decides whether a lane that
# froze may be booted again, sysrq_answer cuts the guest kernel's answer out
# of a console or kernel log. Needs test/vm/lib.sh (SPLAT, HARNESS_MARK).

# OURS: a stack frame of one of our modules ("func+0x1/0x2 [ib_sync_mem]",
# "[ib_sync_mem_test]", with or without a build id).
OURS='\[ib_sync_mem[a-z_]*( [0-9a-f]+)?\]'

# vcpus_halted: QEMU's "info registers -a" answer on stdin; prints how
# many vCPUs it shows and how many of them halt (HLT=1), "N H".
vcpus_halted() {
	awk '/^CPU#/ { n++ } /HLT=1/ { h++ } END { print n + 0, h + 0 }'
}

# lapic_timers: QEMU's "info lapic N" answers on stdin, one per vCPU;
# prints how many of those vCPUs have their local APIC timer counting down
# (current_count above 0: an interrupt will come), then each vCPU's timer
# and pending interrupts, "N cpu0 timer C IRR V, cpu1 ...".
lapic_timers() {
	awk '
		/^dumping local APIC state for CPU/ { n++; cpu[n] = $NF; t[n] = "?"; irr[n] = "?" }
		n && /^Timer/ {
			v = $0; sub(/.*current_count = /, "", v); t[n] = v + 0
			if (v + 0 > 0) counting++
		}
		n && /^IRR/ { v = $0; sub(/^IRR[ \t]+/, "", v); sub(/[ \t]+$/, "", v); irr[n] = v }
		END {
			for (i = 1; i <= n; i++) d = d (i > 1 ? ", " : "") "cpu" cpu[i] " timer " t[i] " IRR " irr[i]
			print counting + 0, d
		}'
}

# freeze_verdict DIR MONRC MARK: one line, "verdict: outside ours: DIGEST"
# only when the record positively shows the freeze outside our code: the
# kernel's log before the probe (DIR/kmsg.live from the harness's mark on,
# DIR/console.log's first MARK lines) has no splat and no frame of ours;
# QEMU's monitor answered (MONRC 0) and named its vCPUs; the guest kernel
# answered sysrq t, w and l on the console (DIR/frozen.console); every
# blocked task it listed came with its stack; every vCPU has its NMI
# backtrace (idle, or with its stack); and no line of that answer has a
# frame of our modules: not a blocked task's (w), not a sleeping one's (t:
# a deadlock in interruptible waits leaves nothing in state D). Anything
# else, "verdict: not booted again: WHY;
# read: DIGEST". DIGEST is one line of what was read.
freeze_verdict() {
	local dir=$1 monrc=$2 mark=${3:-0} ncpu halted before
	before=$({
		awk -v m="$HARNESS_MARK" 'index($0, m) { on = 1 } on' "$dir/kmsg.live"
		head -n "$mark" "$dir/console.log"
	} 2>/dev/null | grep -m1 -E "$OURS|$SPLAT" | tr -d '\r' | cut -c1-160)
	if [ -n "$before" ]; then
		echo "verdict: not booted again: the kernel's log had a splat or a frame of ours before the probe; read: $before"
		return
	fi
	if [ "$monrc" != 0 ]; then
		echo "verdict: not booted again: QEMU's monitor did not answer or failed (exit $monrc); read: $(grep -h -m1 '^monitor:' "$dir/frozen.monitor" "$dir/frozen.sendkey" 2>/dev/null | head -n 1 | cut -c1-120)"
		return
	fi
	read -r ncpu halted < <(vcpus_halted <"$dir/frozen.monitor")
	awk -v ncpu="$ncpu" -v halted="$halted" -v ours="$OURS" '
		function where(f) { sub(/^\[[ 0-9.]*\] +/, "", f); sub(/^\? /, "", f); sub(/\+0x.*/, "", f); return f }
		/sysrq: Show State/ { sec = "t"; t = 1; cur = ""; next }
		sec == "t" && / task:[^ ]+ +state:/ { all++; cur = "s" all; next }
		/sysrq: Show Blocked State/ { sec = "w"; w = 1; cur = ""; next }
		/sysrq: Show backtrace of all active CPUs/ { sec = "l"; l = 1; cur = ""; next }
		$0 ~ ours { n_ours++; if (!first_ours) first_ours = $0 }
		sec == "w" && / task:[^ ]+ +state:/ {
			t = $0; sub(/.* task:/, "", t); sub(/ .*/, "", t)
			tasks++; task[tasks] = t; cur = "t" tasks; next
		}
		sec == "l" && /NMI backtrace for cpu [0-9]+/ {
			c = $0; sub(/.*NMI backtrace for cpu /, "", c); c += 0
			seen[c] = 1
			if ($0 ~ /skipped: idling/) { cpu[c] = "idle"; cur = "" } else { cur = "c" c; cpu[c] = "" }
			next
		}
		sec == "l" && cur ~ /^c/ && /RIP: [0-9a-f]+:/ {
			r = $0; sub(/.*RIP: [0-9a-f]+:/, "", r); rip[substr(cur, 2)] = where(r); next
		}
		cur != "" && /^\[[ 0-9.]*\]  [A-Za-z0-9_.?]/ && /\+0x/ {
			frames[cur]++; nframes++
			f = where($0)
			if ($0 ~ /^\[[ 0-9.]*\] +\? /) next
			if (cur ~ /^t/ && !top[cur] && f !~ /^(__)?schedule|^context_switch|^io_schedule/) top[cur] = f
			if (cur ~ /^c/ && f ~ /^(sysrq_handle_showallcpus|__handle_sysrq)/) sysrq_cpu[substr(cur, 2)] = 1
			if (cur ~ /^c/ && !top[cur] && f !~ /^(dump_stack|__dump_stack|nmi_|arch_trigger|show_regs|trigger_)/) top[cur] = f
		}
		END {
			d = "monitor answered, " ncpu " vCPUs (" halted " halted); "
			d = d "sysrq t: " (t ? all + 0 " tasks" : "no answer") "; sysrq w: " (w ? tasks + 0 " blocked" : "no answer")
			for (i = 1; i <= tasks && i <= 3; i++) d = d (i == 1 ? " (" : ", ") task[i] " in " (top["t" i] ? top["t" i] : "?")
			if (tasks) d = d (tasks > 3 ? ", ...)" : ")")
			d = d "; sysrq l: " (l ? "" : "no answer")
			for (c = 0; l && c < ncpu; c++) {
				s = !seen[c] ? "no backtrace" : cpu[c] == "idle" ? "idle" : sysrq_cpu[c] ? "running the sysrq handler" : "in " (rip[c] ? rip[c] : top["c" c] ? top["c" c] : "?")
				d = d (c ? ", " : "") "cpu" c " " s
			}
			d = d "; " nframes + 0 " frames, " (n_ours ? n_ours " of ours" : "none of ours")
			why = ""
			if (ncpu < 1) why = "the monitor named no vCPU"
			else if (!t && !w && !l) why = "the guest kernel did not answer sysrq (no stack captured)"
			else if (!t) why = "the guest kernel did not answer sysrq t (every task)"
			else if (!w) why = "the guest kernel did not answer sysrq w (blocked tasks)"
			else if (!l) why = "the guest kernel did not answer sysrq l (running CPUs)"
			else if (n_ours) why = "a frame of our modules on the stacks: " first_ours
			else if (!nframes) why = "no stack frame could be read from the answer"
			else {
				for (i = 1; i <= tasks; i++) if (!frames["t" i]) { why = "blocked task " task[i] " came without its stack"; break }
				for (c = 0; !why && c < ncpu; c++) {
					if (!seen[c]) why = "no backtrace of cpu" c
					else if (cpu[c] != "idle" && !frames["c" c] && !rip[c]) why = "the backtrace of cpu" c " came without its stack"
				}
			}
			gsub(/[ \t]+/, " ", why)
			if (why == "") print "verdict: outside ours: " d
			else print "verdict: not booted again: " why "; read: " d
		}' "$dir/frozen.console" 2>/dev/null ||
		echo "verdict: not booted again: the guest kernel's answer could not be read (no frozen.console)"
}

# sysrq_answer: from a console or kernel log, the tasks sysrq w found
# blocked and the CPUs sysrq l found running, each with its first frames.
sysrq_answer() {
	awk '/sysrq: (Show Blocked State|Show backtrace of all active CPUs)/ { on = 1; print; next }
		!on { next }
		/syncmem-harness/ { exit }
		/ task:|NMI backtrace for cpu|CPU: [0-9]+ PID/ { print; frames = 0; next }
		frames < 8 && /^\[[ 0-9.]*\]  [A-Za-z0-9_.?]/ && /\+0x/ { print; frames++ }'
}
