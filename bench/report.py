#!/usr/bin/env python3
"""Turn one benchmark run (bench/guest.sh's raw.txt and env.txt) into
results.json and a Markdown table.

    bench/report.py DIR            writes DIR/results.json and DIR/table.md
    bench/report.py --check DIR    also fails unless every suite of the
                                   run's lane is present

Every ratio is of two figures from the same VM run, repeats interleaved;
medians, min and max are over the repeats. Each figure states its clock
(env.txt's clock): "instructions" on the icount lane (QEMU -icount
shift=0, one vCPU: a guest ns is one guest instruction, a path's length),
"TCG" otherwise, where guest time is emulated and absolute figures are
printed for scale only. On the instruction clock the targets are issue
49's.
"""
import json
import re
import statistics
import sys

# The suites each lane runs (bench/guest.sh --lane).
LANE_SUITES = {
    "all": {"fanout", "regunreg", "unregmany", "scoped", "scale", "coalesce",
            "sizes", "slab", "netlink_rtt", "netlink_batch", "memory",
            "tracer", "train", "inbound", "ranges", "devpath", "overlap",
            "uring"},
    "icount": {"fanout", "regunreg", "sizes", "slab", "train", "inbound",
               "ranges", "devpath", "uring"},
}


def parse(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            row = {"suite": fields[0]}
            for kv in fields[1:]:
                k, sep, v = kv.partition("=")
                if not sep:
                    raise SystemExit(f"{path}:{n}: not key=value: {kv!r}")
                try:
                    row[k] = int(v)
                except ValueError:
                    row[k] = v
            rows.append(row)
    return rows


def env(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            out[k] = v
    return out


def stats(values):
    if not values:
        raise SystemExit("report: a suite has no repeats")
    return {"median": statistics.median(values), "min": min(values),
            "max": max(values), "n": len(values)}


class Report:
    def __init__(self, rows):
        self.rows = rows
        self.results = []

    def pick(self, suite, **match):
        return [r for r in self.rows if r["suite"] == suite and
                all(r.get(k) == v for k, v in match.items())]

    def add(self, suite, measure, unit, values, base=None, base_label="",
            ratio=None, target=None, better="lower"):
        """values, base: per-repeat figures; ratio: per-repeat ratios."""
        res = {"suite": suite, "measure": measure, "unit": unit,
               "value": stats(values)}
        if base is not None:
            res["base"] = stats(base)
            res["base_label"] = base_label
        if ratio is not None:
            res["ratio"] = stats(ratio)
        if target is not None:
            res["target"] = target
            r = res["ratio"]["median"] if ratio is not None else res["value"]["median"]
            res["met"] = r <= target if better == "lower" else r >= target
            res["better"] = better
        self.results.append(res)


def build(rows, icount=False):
    """icount: the figures are instruction counts (the icount lane); the
    targets set on that clock (issue 49) replace TCG's where they differ."""
    rep = Report(rows)
    # 1. Fan-out.
    for n in sorted({r["n"] for r in rep.pick("fanout")}):
        rs = rep.pick("fanout", n=n)
        calls = [r["iters"] * n for r in rs]
        sm = [r["sm_ns"] / c for r, c in zip(rs, calls)]
        untimed = [r["untimed_ns"] / c for r, c in zip(rs, calls)]
        floor = [r["floor_ns"] / c for r, c in zip(rs, calls)]
        clock = [r["clock_ns"] / c for r, c in zip(rs, calls)]
        if icount:
            # Issue 49: 2x the floor at N >= 64, 3x at N = 1; timing on,
            # 1.3x the floor plus a clock read (at N >= 64, where the
            # pass's own cost is spread out).
            t_off = 2.0 if n >= 64 else 3.0 if n == 1 else None
            t_on = 1.3 if n >= 64 else None
        else:
            t_off = 1.3 if n >= 8 else 3.0
            t_on = 1.0 if n >= 8 else None
        rep.add("fan-out", f"N={n}: ns per client, client_timing off", "ns",
                untimed, floor, "indirect call",
                [a / b for a, b in zip(untimed, floor)], t_off)
        rep.add("fan-out", f"N={n}: ns per client, client_timing on", "ns",
                sm, clock, "floor + clock read",
                [a / b for a, b in zip(sm, clock)], t_on)
        rep.add("fan-out", f"N={n}: floor + clock read per client", "ns",
                clock, floor, "indirect call",
                [a / b for a, b in zip(clock, floor)])
    # 2. Register + unregister.
    rs = rep.pick("regunreg")
    sm = [r["sm_ns"] / r["iters"] for r in rs]
    floor = [r["floor_ns"] / r["iters"] for r in rs]
    rep.add("register+unregister", "ns per pair", "ns", sm, floor,
            "alloc+free", [a / b for a, b in zip(sm, floor)], 10)
    # ...and unregistering N at once while a kthread keeps syncing
    # (plain TCG only, as the next suites up to the netlink ones).
    if rep.pick("unregmany"):
        build_concurrency(rep)
    # 5. Netlink.
    if rep.pick("netlink_rtt"):
        build_netlink(rep)
    # 7. Memory.
    build_memory(rep)
    build_rest(rep, icount)
    return rep.results


def build_concurrency(rep):
    """unregmany, scoped, scaling and coalescing: plain TCG's suites."""
    rs = rep.pick("unregmany")
    n = rs[0]["n"]
    single = [r["single_ns"] for r in rs]
    many = [r["many_ns"] for r in rs]
    rep.add("register+unregister", f"{n} unregistered with syncs in flight: "
            "ib_sync_mem_unregister_many() vs one by one", "ns", many, single,
            "one by one", [b / a for a, b in zip(many, single)],
            better="higher")
    rep.add("register+unregister", f"{n} unregistered one by one: syncs in "
            "flight vs nothing syncing", "ns", single,
            [r["idle_ns"] for r in rs], "nothing syncing",
            [r["single_ns"] / r["idle_ns"] for r in rs])
    # ...and one unregistered beside a pass over N slow clients: it waits
    # for its own callbacks, never for the pass (issue 32's figure).
    rs = rep.pick("scoped")
    n, cb = rs[0]["n"], rs[0]["cb_us"]
    one_cb = [r["pass_ns"] / r["n"] for r in rs]
    rep.add("register+unregister", f"unregister beside a pass over {n} "
            f"clients of {cb} us each, against one callback", "ns",
            [r["unreg_ns"] for r in rs], one_cb, "one callback (pass / n)",
            [r["unreg_ns"] / c for r, c in zip(rs, one_cb)], target=1)
    # 3. Read-side scaling.
    def rate(impl, threads, churn):
        rs = rep.pick("scale", impl=impl, threads=threads, churn=churn)
        return [r["syncs"] * 1e9 / r["ns"] for r in rs], \
               [r["churn_ops"] * 1e9 / r["ns"] for r in rs]
    for impl in ("srcu", "rwlock", "rwsem"):
        for churn in (0, 1):
            one, _ = rate(impl, 1, churn)
            two, wr = rate(impl, 2, churn)
            rep.add("scaling", f"{impl}{' +churn' if churn else ''}: "
                    "syncs/s, 2 vCPUs vs 1", "syncs/s", two, one, "1 vCPU",
                    [a / b for a, b in zip(two, one)],
                    1.8 if impl == "srcu" and not churn else None, "higher")
            if churn:
                rep.add("scaling", f"{impl}: writer churn, 2 readers",
                        "regs/s", wr)
    srcu, _ = rate("srcu", 2, 1)
    for impl in ("rwlock", "rwsem"):
        alt, _ = rate(impl, 2, 1)
        rep.add("scaling", f"srcu vs {impl} under churn, 2 vCPUs",
                "syncs/s", srcu, alt, impl,
                [a / b for a, b in zip(srcu, alt)], 3.0, "higher")
    # 4. Coalescing.
    on = rep.pick("coalesce", coalesce=1)
    off = rep.pick("coalesce", coalesce=0)
    rep.add("coalescing", f"K={on[0]['k']}: passes per call, on", "passes",
            [r["passes"] / r["calls"] for r in on],
            [r["passes"] / r["calls"] for r in off], "off")
    ton = [r["calls"] * 1e9 / r["ns"] for r in on]
    toff = [r["calls"] * 1e9 / r["ns"] for r in off]
    rep.add("coalescing", f"K={on[0]['k']}: calls/s, on vs off", "calls/s",
            ton, toff, "off", [a / b for a, b in zip(ton, toff)])


def build_netlink(rep):
    """Netlink from Go, and the tracer: plain TCG's suites."""
    rs = rep.pick("netlink_rtt")
    sync = [r["sync_ns"] / r["iters"] for r in rs]
    fam = [r["getfamily_ns"] / r["iters"] for r in rs]
    rep.add("netlink", "one-client sync round trip", "ns", sync, fam,
            "GETFAMILY", [a / b for a, b in zip(sync, fam)], 1.3)
    rs = rep.pick("netlink_batch")
    batch = [r["batch_ns"] for r in rs]
    singles = [r["singles_ns"] for r in rs]
    rep.add("netlink", f"batch of {rs[0]['n']} vs {rs[0]['n']} singles",
            "ns", batch, singles, "singles",
            [b / a for a, b in zip(batch, singles)], 50, "higher")
    # 6. Tracer.
    for n, delay in sorted({(r["n"], r["delay_us"]) for r in rep.pick("tracer")}):
        det = rep.pick("tracer", attached=0, n=n, delay_us=delay)
        what = f"{delay} us" if delay else "no-op"
        # The per-client mode's cost is stated; the passes mode has targets.
        for mode, name, target in ((1, "per client", None),
                                   (2, "passes", 1.05 if delay else 1.3)):
            att = rep.pick("tracer", attached=mode, n=n, delay_us=delay)
            rep.add("tracer", f"fan-out over {n} {what} clients: ns per pass, "
                    f"attached {name} vs detached", "ns",
                    [r["sm_ns"] / r["iters"] for r in att],
                    [r["sm_ns"] / r["iters"] for r in det], "detached",
                    [a["sm_ns"] / d["sm_ns"] for a, d in zip(att, det)], target)


def build_memory(rep):
    """The client's size (both lanes); memory per client (nlbench memory,
    plain TCG's lane only)."""
    sizes = rep.pick("sizes")[0]
    slab = rep.pick("slab")[0]
    rep.add("memory", f"client object in its slab cache ({slab['cache']}, "
            f"object {slab['object_size']} B)", "bytes", [slab["slab_size"]],
            target=256)
    what = {"kernel": "in-kernel client (the registry's own)",
            "sim": "sim client (with its debugfs knobs)",
            "region": "one-page region client"}
    for kind in ("kernel", "sim", "region"):
        rs = rep.pick("memory", kind=kind)
        if not rs:
            continue
        r = rs[0]
        rep.add("memory", f"{what[kind]}: slab bytes per client "
                f"(caches that grew, bytes each: {r['grew'] or '-'})",
                "bytes", [r["slab_bytes"]])
    rep.add("memory", f"per-CPU counters per client ({sizes['stats_per_cpu']} B "
            f"x {sizes['possible_cpus']} possible CPUs), not slab", "bytes",
            [sizes["stats_per_cpu"] * sizes["possible_cpus"]])
    rep.add("memory", "sizeof(struct ib_sync_mem_client)", "bytes",
            [sizes["client"]])


def build_rest(rep, icount):
    """The training loop, the inbound flush, the data path, overlap and
    ranges (overlap on plain TCG only)."""
    # 8. Training loop: the share of a step spent in sync requests, per
    # mode; the best mode's share against the target, single's beside it.
    modes = ("single", "batch", "device", "changed", "ioctl")
    for b in sorted({r["buffers"] for r in rep.pick("train")}):
        def runs(mode):
            return sorted(rep.pick("train", mode=mode, buffers=b),
                          key=lambda r: r["rep"])
        for m in modes:
            if len(runs(m)) != len(runs("single")) or not runs(m):
                raise SystemExit(f"report: train, B={b}: {len(runs(m))} "
                                 f"repeats of {m}, {len(runs('single'))} "
                                 "of single")
        share = {m: [100 * r["sync_ns"] / r["step_ns"] for r in runs(m)]
                 for m in modes}
        step = {m: [r["step_ns"] for r in runs(m)] for m in modes}
        for m in modes:
            r0 = runs(m)[0]
            what = f"B={b}, {m}"
            if m == "changed":
                what += f" ({r0['bytes'] // r0['size']} of {b} buffers a step)"
            what += f", {r0['requests']} requests a step"
            rep.add("train", f"{what}: sync share of the step", "%", share[m])
            if m == "single":
                rep.add("train", f"{what}: step time", "ns", step[m])
            else:
                rep.add("train", f"{what}: step time", "ns", step[m],
                        step["single"], "single",
                        [a / c for a, c in zip(step[m], step["single"])])
        if b == 1:
            rep.add("train", "B=1, ioctl: sync share of the step (the "
                    "data path's target)", "%", share["ioctl"],
                    share["single"], "single", target=1, better="lower")
        best = min(modes, key=lambda m: statistics.median(share[m]))
        rep.add("train", f"B={b}: sync share of the step, best mode ({best})",
                "%", share[best], share["single"], "single", target=3,
                better="lower")
    # 9. Inbound flush: one inbound SYNC of a region client through the
    # module against the floor, a userspace 8-byte RDMA READ on a loopback
    # QP of the same device (test/tools/inbound_bench.c). Per repeat, the
    # median (and p99) of one flush of each. Absent from runs older than
    # the suite.
    rs = rep.pick("inbound")
    if rs:
        # Each flush timed from rest (inbound_bench -g; older runs: back
        # to back, no gap_us).
        rest = (f", each after {rs[0]['gap_us']} us of rest"
                if rs[0].get("gap_us") else "")
        for stat, name, target in (("med", "median", 1.2), ("p99", "p99", None)):
            sm = [r[f"sm_{stat}_ns"] for r in rs]
            fl = [r[f"floor_{stat}_ns"] for r in rs]
            rep.add("inbound", f"flush through the module (netlink SYNC, "
                    f"dir inbound, of a one-page region client), {name} of "
                    f"{rs[0]['iters']}{rest}", "ns", sm, fl,
                    "userspace RDMA READ", [a / b for a, b in zip(sm, fl)],
                    target)
        # The same flush through /dev/ib_sync_mem (absent from runs older
        # than the data path).
        if "io_med_ns" in rs[0]:
            # Issue 49: at most 1.1x on the instruction clock.
            for stat, name, target in (("med", "median",
                                        1.1 if icount else 1.2),
                                       ("p99", "p99", None)):
                io = [r[f"io_{stat}_ns"] for r in rs]
                fl = [r[f"floor_{stat}_ns"] for r in rs]
                rep.add("inbound", "flush through /dev/ib_sync_mem (SYNC "
                        f"ioctl, dir inbound, the same client), {name} of "
                        f"{rs[0]['iters']}{rest}", "ns", io, fl,
                        "userspace RDMA READ",
                        [a / b for a, b in zip(io, fl)], target)
        kn = [r["kernel_med_ns"] for r in rs]
        fl = [r["floor_med_ns"] for r in rs]
        rep.add("inbound", "of which in the kernel's sync (the module's READ "
                "and its wait), median", "ns", kn, fl, "userspace RDMA READ",
                [a / b for a, b in zip(kn, fl)])
        # The kernel's part of the ioctl flushes (a mean: the client's
        # counters less the netlink flushes'; absent from older runs).
        if "io_kernel_mean_ns" in rs[0]:
            ik = [r["io_kernel_mean_ns"] for r in rs]
            io = [r["io_med_ns"] for r in rs]
            rep.add("inbound", "of which in the kernel's sync, ioctl flushes, "
                    "mean", "ns", ik, io, "ioctl flush (median)",
                    [a / b for a, b in zip(ik, io)])
    # 11. The data path (test/tools/dev_bench.c): one client's blocking
    # ioctl sync against the no-op ioctl (the floor of a syscall path) and
    # against the netlink round trip; the async form beside them.
    rs = rep.pick("devpath")
    if rs:
        per = {k: [r[f"{k}_ns"] / r["iters"] for r in rs]
               for k in ("nop", "ioctl", "async", "netlink")}
        rep.add("devpath", "one-client SYNC ioctl (no-op sim client), per "
                "call", "ns", per["ioctl"], per["nop"], "NOP ioctl",
                [a / b for a, b in zip(per["ioctl"], per["nop"])], 1.5)
        rep.add("devpath", "netlink SYNC of the same client, per call, "
                "against the ioctl", "ns", per["netlink"], per["ioctl"],
                "SYNC ioctl", [a / b for a, b in zip(per["netlink"],
                                                     per["ioctl"])], 10,
                "higher")
        rep.add("devpath", "async SYNC ioctl, poll of its sync_file and "
                "close, per call", "ns", per["async"], per["ioctl"],
                "SYNC ioctl", [a / b for a, b in zip(per["async"],
                                                    per["ioctl"])])
        # Where the SYNC ioctl's time goes beyond the NOP's (absent from
        # older runs): the request and the lookup (an unknown id), then
        # the registry's sync around a client whose ->sync is not owed.
        if "enoent_ns" in rs[0]:
            for k, what in (("enoent", "SYNC ioctl of an unknown id (the "
                             "request's copy and the lookup), per call"),
                            ("clean", "SYNC ioctl of a clean lazy client "
                             "(no ->sync, clock read or counters), per "
                             "call")):
                v = [r[f"{k}_ns"] / r["iters"] for r in rs]
                rep.add("devpath", what, "ns", v, per["nop"], "NOP ioctl",
                        [a / b for a, b in zip(v, per["nop"])])
        # The permission rule's cost (absent from older runs): a file
        # opened without capabilities syncing a region it created, against
        # a privileged file syncing its own (issue 50: the same cost).
        if "unpriv_ns" in rs[0]:
            pv = [r["priv_ns"] / r["iters"] for r in rs]
            uv = [r["unpriv_ns"] / r["iters"] for r in rs]
            rep.add("devpath", "SYNC ioctl of a one-page region by the "
                    "unprivileged file that created it, per call", "ns",
                    uv, pv, "privileged file, its own region",
                    [a / b for a, b in zip(uv, pv)], 1.05)
    # 11b. io_uring (test/tools/uring_dev.c --bench): a command per
    # completed sync against the blocking ioctl of the same request, 8 in
    # flight and one; a region's sync runs at issue, a sim client's is an
    # asynchronous job, an inbound flush waits for its READ.
    rs = rep.pick("uring")
    if rs:
        for what, k, target in (
                ("a sim client's sync (an asynchronous job)", "sync", None),
                ("a one-page region's to-device sync (run at issue)",
                 "region", 1.3),
                ("a one-page region's inbound flush", "inbound", 1.1)):
            io = [r[f"ioctl_{k}_ns"] for r in rs]
            for depth in (8, 1):
                v = [r[f"ring{depth}_{k}_ns"] for r in rs]
                rep.add("uring", f"{what} through io_uring, {depth} in "
                        "flight, per completed command", "ns", v, io,
                        "blocking ioctl",
                        [a / b for a, b in zip(v, io)],
                        target if depth == 8 else None)
    # 12. Overlap: compute and a sync that leaves the CPU free, in steps;
    # the overlapped loop against max(compute, sync) and the blocking one.
    rs = rep.pick("overlap")
    if rs:
        st = rs[0]["steps"]
        step = {k: [r[f"{k}_ns"] / r["steps"] for r in rs]
                for k in ("compute", "sync", "blocking", "overlap")}
        top = [max(c, s) for c, s in zip(step["compute"], step["sync"])]
        rep.add("overlap", f"step with the next step's sync overlapped "
                f"(fence), {st} steps, sync of {rs[0]['latency_us']} us",
                "ns", step["overlap"], top, "max(compute, sync)",
                [a / b for a, b in zip(step["overlap"], top)], 1.1)
        rep.add("overlap", "step with a blocking sync after the compute",
                "ns", step["blocking"], step["overlap"], "overlapped",
                [a / b for a, b in zip(step["blocking"], step["overlap"])])
    # 10. Ranges: a range sync of a large client whose sync costs its bytes
    # against a whole sync of a client of the range's size (the same cache
    # lines written back); the large client whole for contrast.
    rs = rep.pick("ranges")
    if rs:
        big, rng = size_name(rs[0]["size"]), size_name(rs[0]["range"])
        part = [r["range_ns"] / r["iters"] for r in rs]
        small = [r["small_ns"] / r["iters"] for r in rs]
        whole = [r["whole_ns"] / r["whole_iters"] for r in rs]
        rep.add("ranges", f"ib_sync_mem_sync_range() of {rng} of a {big} "
                "client, per sync", "ns", part, small,
                f"whole {rng} client", [a / b for a, b in zip(part, small)],
                1.1)
        rep.add("ranges", f"whole {big} client, per sync", "ns", whole,
                part, f"{rng} of it", [a / b for a, b in zip(whole, part)])


def clocked(results, clock):
    """Each figure's clock, and its unit named after it: a guest ns is an
    instruction on the icount lane, emulated time ("ns of TCG") else."""
    icount = clock == "instructions"
    for r in results:
        # A size is a size on every clock.
        if r["unit"] == "bytes":
            r["clock"] = "-"
            continue
        r["clock"] = "instructions" if icount else "TCG"
        if r["unit"] == "ns":
            if icount:
                r["unit"] = "instructions"
                r["measure"] = re.sub(r"\bns\b", "instructions", r["measure"])
            else:
                r["unit"] = "ns of TCG"
    return results


def size_name(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt(v, unit):
    if unit in ("syncs/s", "calls/s", "regs/s"):
        return f"{v:,.0f}"
    if unit == "passes":
        return f"{v:.2f}"
    if unit == "%":
        return f"{v:.1f}"
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}"


def table(results, e):
    if e.get("clock") == "instructions":
        clock = ("clock: instructions (QEMU -icount shift=0,sleep=off, "
                 "one vCPU; a guest ns is one guest instruction)")
    else:
        clock = "clock: TCG's emulated time (ns of TCG)"
    lines = [
        f"Kernel {e.get('kernel')}, {e.get('vcpus')} vCPUs, "
        f"accelerator {e.get('accel')} ({e.get('cpu')}), {e.get('date')}; "
        f"{clock}; clock source {e.get('clocksource') or '?'}"
        + (" — SMOKE RUN, figures meaningless" if e.get("smoke") == "1" else ""),
        "",
        "| suite | measure | clock | median | min | max | against | its median | ratio (median, min–max) | target | met |",
        "|---|---|---|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for r in results:
        v, u = r["value"], r["unit"]
        cells = [r["suite"], f"{r['measure']} ({u})", r["clock"],
                 fmt(v["median"], u), fmt(v["min"], u), fmt(v["max"], u)]
        if "base" in r:
            cells += [r["base_label"], fmt(r["base"]["median"], u)]
        else:
            cells += ["", ""]
        if "ratio" in r:
            q = r["ratio"]
            cells.append(f"{q['median']:.2f}x ({q['min']:.2f}–{q['max']:.2f})")
        else:
            cells.append("")
        if "target" in r:
            op = "≤" if r["better"] == "lower" else "≥"
            unit = "x" if "ratio" in r else f" {u}"
            cells += [f"{op} {r['target']}{unit}", "yes" if r["met"] else "**no**"]
        else:
            cells += ["", ""]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv):
    check = False
    if argv and argv[0] == "--check":
        check = True
        argv = argv[1:]
    if len(argv) != 1:
        raise SystemExit(__doc__)
    d = argv[0]
    rows = parse(f"{d}/raw.txt")
    e = env(f"{d}/env.txt")
    lane = e.get("lane", "all")
    if lane not in LANE_SUITES:
        raise SystemExit(f"report: {d}/env.txt: unknown lane {lane!r}")
    if check:
        missing = LANE_SUITES[lane] - {r["suite"] for r in rows}
        if missing:
            raise SystemExit(f"report: no results from {', '.join(sorted(missing))}")
    clock = e.get("clock", "tcg")
    results = clocked(build(rows, clock == "instructions"), clock)
    with open(f"{d}/results.json", "w") as f:
        json.dump({"env": e, "results": results}, f, indent=1)
    with open(f"{d}/table.md", "w") as f:
        f.write(table(results, e))
    print(f"report: {len(results)} figures from {len(rows)} lines -> {d}/table.md")


if __name__ == "__main__":
    main(sys.argv[1:])
