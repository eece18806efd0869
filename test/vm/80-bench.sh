#!/usr/bin/env bash
# The benchmark harness, smoke-sized: every suite of `make bench` runs once
# with tiny counts and the report builds its table from the output. It
# checks that the harness works and its output is complete, never how fast
# anything is (guest time is emulated; timings are not pass/fail).
. "$(dirname "$0")/lib.sh"
suite_begin

out=$SYNCMEM_RESULTS/bench-smoke
check "bench/guest.sh --smoke runs every suite" bash bench/guest.sh --smoke "$out"
check "report.py builds the table from every suite" python3 bench/report.py --check "$out"
raw=$out/raw.txt
for s in fanout regunreg unregmany scale coalesce sizes slab netlink_rtt netlink_batch memory tracer train inbound ranges devpath overlap; do
	check "raw output has $s lines" grep -q "^$s " "$raw"
done
# Every measured figure is a positive number: a suite that timed nothing
# or counted nothing is broken, whatever its speed.
zeros=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^(sm_ns|floor_ns|clock_ns|syncs|ns|calls|passes|sync_ns|getfamily_ns|batch_ns|singles_ns|slab_size|single_ns|many_ns|idle_ns|step_ns|floor_med_ns|sm_med_ns|floor_p99_ns|sm_p99_ns|kernel_med_ns|range_ns|small_ns|whole_ns|nop_ns|ioctl_ns|async_ns|netlink_ns|enoent_ns|clean_ns|compute_ns|blocking_ns|overlap_ns|io_med_ns|io_p99_ns)=0$/) print }' "$raw" 2>/dev/null)
check "no zero figures in the raw output (which is there)" bash -c "[ -s '$raw' ] && [ -z '$zeros' ]"
[ -n "$zeros" ] && echo "$zeros" >&2
# The fan-out suite checks in the kernel that each pass reached all N
# clients; the coalescing suite must have run passes on both settings and
# never more passes than calls.
check "coalescing: never more passes than calls" \
	awk '$1 == "coalesce" { n++; for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } if (v["passes"] > v["calls"] || v["passes"] == 0) bad = 1 } END { exit bad || !n }' "$raw"
check "tracer suite ran attached and detached" \
	bash -c "grep -q '^tracer attached=1 ' '$raw' && grep -q '^tracer attached=0 ' '$raw'"
check "train: all five sync modes ran for 1, 8 and 64 buffers" \
	awk '$1 == "train" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } seen[v["mode"] "/" v["buffers"]] = 1 } END { n = 0; for (k in seen) n++; exit n != 15 }' "$raw"
check "table has a row per figure" test "$(grep -c '^| ' "$out/table.md")" -ge 20
check "modules unloaded after the harness" unloaded ib_sync_mem ib_sync_mem_sim ib_sync_mem_bench
finish
