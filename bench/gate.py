#!/usr/bin/env python3
"""make test's regression gate: the hot paths' instruction counts of one
run of the gate lane (bench/guest.sh --lane gate: one vCPU, QEMU -icount
shift=0,sleep=off, a guest ns is one guest instruction) against their
committed budgets (bench/budgets).

    bench/gate.py check BUDGETS DIR [--vm-rc RC]
        judge DIR/raw.txt and DIR/env.txt: KTAP in DIR/gate.ktap, a table
        on stdout, exit 1 if any check failed (a figure over its budget
        by more than its margin, a figure missing or unparsable, a run on
        the wrong clock or kernel, a VM run that failed: RC non-zero)
    bench/gate.py spread DIR [DIR...]
        each figure of several runs side by side, and its spread, (max -
        min) / median of the runs' figures, in percent: what a margin
        must cover (and, for comparison, the spread of the runs' medians
        of the repeats)

A figure is a per-call count of guest instructions, the fewest of the
run's repeats: on this clock foreign work (a tick, RCU callbacks and
frees deferred from the data path's netlink and async rounds) only ever
adds to a repeat, and a path grown longer grows every repeat. Five runs
in a row (2026-12-07) moved the NOP and SYNC ioctls' minimum by 0.6 %,
their median by 1.3 and 2.0 %. It is a count, not a time: it does not
move with the host's load, which is why it may fail make test. Nothing
here ever passes on nothing: every figure of FIGURES must be in the
budgets, measured and within its limit for its check to say ok.
"""
import os
import re
import statistics
import sys

# name: (suite, its selector, what it is, the count per repeat).
FIGURES = {
    "nop_ioctl": ("devpath", {}, "NOP ioctl, per call",
                  lambda r: r["nop_ns"] / r["iters"]),
    "sync_ioctl": ("devpath", {}, "one-client SYNC ioctl (no-op sim client), per call",
                   lambda r: r["ioctl_ns"] / r["iters"]),
    "fanout64_untimed": ("fanout", {"n": 64}, "fan-out over 64 no-op clients, per client, client_timing off",
                         lambda r: r["untimed_ns"] / (r["iters"] * r["n"])),
    "fanout64_timed": ("fanout", {"n": 64}, "fan-out over 64 no-op clients, per client, client_timing on",
                       lambda r: r["sm_ns"] / (r["iters"] * r["n"])),
    "range_4k": ("ranges", {}, "ib_sync_mem_sync_range() of 4 KiB of a 64 MiB client, per sync",
                 lambda r: r["range_ns"] / r["iters"]),
    "inbound_ioctl": ("inbound", {}, "inbound flush through the SYNC ioctl, median of a repeat's flushes",
                      lambda r: r["io_med_ns"]),
}
# Fewer repeats than this is a run cut short (the lane runs 5).
MIN_REPEATS = 3


class Gate:
    def __init__(self):
        self.checks = []	# (ok, name, message, diagnostics)

    def check(self, ok, name, msg="", diag=()):
        self.checks.append((ok, name, msg, list(diag)))

    def ktap(self):
        out = ["KTAP version 1"]
        for n, (ok, name, msg, diag) in enumerate(self.checks, 1):
            out += [f"# {d}" for d in diag]
            out.append(f"{'ok' if ok else 'not ok'} {n} gate:{name}" + (f" # {msg}" if msg else ""))
        out.append(f"1..{len(self.checks)}")
        return "\n".join(out) + "\n"

    def failed(self):
        return [c for c in self.checks if not c[0]]


def read_budgets(path):
    """The kernel and {name: (instructions, margin %)}; a malformed file is
    an error (SystemExit with the line)."""
    kernel, budgets = None, {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise SystemExit(f"gate: cannot read the budgets: {e}")
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        where = f"{path}:{n}"
        if f[0] == "kernel" and len(f) == 2:
            kernel = f[1]
            continue
        m = re.fullmatch(r"([0-9.]+)%", f[2]) if len(f) == 3 else None
        if not m:
            raise SystemExit(f"gate: {where}: not 'NAME INSTRUCTIONS MARGIN%' nor 'kernel KVER': {line!r}")
        name = f[0]
        if name not in FIGURES:
            raise SystemExit(f"gate: {where}: no figure {name!r} (the gate measures {', '.join(FIGURES)})")
        if name in budgets:
            raise SystemExit(f"gate: {where}: {name} budgeted twice")
        try:
            val, margin = float(f[1]), float(m.group(1))
        except ValueError:
            raise SystemExit(f"gate: {where}: not numbers: {line!r}")
        if val <= 0 or not 0 < margin < 100:
            raise SystemExit(f"gate: {where}: a budget must be positive, a margin between 0 and 100 %")
        budgets[name] = (val, margin)
    if kernel is None:
        raise SystemExit(f"gate: {path}: no 'kernel KVER' line")
    missing = [k for k in FIGURES if k not in budgets]
    if missing:
        raise SystemExit(f"gate: {path}: no budget for {', '.join(missing)}")
    return kernel, budgets


def read_raw(path):
    """The rows of raw.txt ({key: int, or str}) and the lines that are not
    'SUITE key=value ...'."""
    rows, bad = [], []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            row = {"suite": fields[0]}
            for kv in fields[1:]:
                k, sep, v = kv.partition("=")
                if not sep:
                    bad.append(f"raw.txt:{n}: not key=value: {kv!r}")
                    continue
                try:
                    row[k] = int(v)
                except ValueError:
                    row[k] = v
            rows.append(row)
    return rows, bad


def read_env(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            out[k] = v
    return out


def measure(rows, name):
    """The per-repeat counts of a figure, or a string saying why there are
    none."""
    suite, sel, _, count = FIGURES[name]
    rs = [r for r in rows if r["suite"] == suite and all(r.get(k) == v for k, v in sel.items())]
    if not rs:
        what = " ".join(f"{k}={v}" for k, v in sel.items())
        return f"missing: no '{suite}{' ' + what if what else ''}' line in raw.txt"
    vals = []
    for r in rs:
        try:
            v = count(r)
        except KeyError as e:
            return f"missing: a '{suite}' line of repeat {r.get('rep', '?')} has no {e.args[0]}"
        except (TypeError, ZeroDivisionError):
            return f"unparsable: a '{suite}' line of repeat {r.get('rep', '?')}: {r}"
        if not v > 0:
            return f"unparsable: repeat {r.get('rep', '?')} gives {v}, not a positive count"
        vals.append(v)
    if len(vals) < MIN_REPEATS:
        return f"cut short: {len(vals)} repeats, at least {MIN_REPEATS}"
    return vals


def fmt(v):
    return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def check(budgets_path, d, vm_rc):
    g = Gate()
    table = []
    try:
        kernel, budgets = read_budgets(budgets_path)
    except SystemExit as e:
        g.check(False, "budgets", str(e))
        kernel, budgets = None, {}
    if vm_rc is not None:
        g.check(vm_rc == 0, "lane-ran", "" if vm_rc == 0 else
                f"the gate lane's VM run failed (exit {vm_rc}): see {d}/console.log")
    rows, env = None, None
    try:
        env = read_env(os.path.join(d, "env.txt"))
    except OSError as e:
        g.check(False, "env", f"no env.txt from the gate lane: {e}")
    if env is not None:
        wrong = []
        if env.get("clock") != "instructions":
            wrong.append(f"clock={env.get('clock')!r}, not instructions: a time, which never gates")
        if env.get("lane") != "gate":
            wrong.append(f"lane={env.get('lane')!r}, not gate: budgets hold for the gate lane's counts only")
        if env.get("vcpus") != "1":
            wrong.append(f"vcpus={env.get('vcpus')!r}, not 1")
        if kernel and env.get("kernel") != kernel:
            wrong.append(f"kernel={env.get('kernel')!r}, the budgets' is {kernel}")
        g.check(not wrong, "env", "; ".join(wrong))
    try:
        rows, bad = read_raw(os.path.join(d, "raw.txt"))
        g.check(not bad and bool(rows), "raw",
                "raw.txt is empty" if not rows else f"{len(bad)} unparsable fields" if bad else "",
                bad[:5])
    except OSError as e:
        g.check(False, "raw", f"no raw.txt from the gate lane: {e}")
    for name, (_, _, what, _) in FIGURES.items():
        vals = measure(rows, name) if rows is not None else "missing: no raw.txt"
        if name not in budgets:
            if budgets:
                g.check(False, name, "no budget")
            else:
                g.check(False, name, "no budgets to judge it by")
            continue
        budget, margin = budgets[name]
        limit = budget * (1 + margin / 100)
        if isinstance(vals, str):
            g.check(False, name, f"{what}: {vals}")
            table.append((name, "-", fmt(budget), f"{margin:g} %", fmt(limit), "**" + vals.split(":")[0] + "**"))
            continue
        fig = min(vals)
        over = 100 * (fig / budget - 1)
        rng = f"{fmt(fig)} ({fmt(statistics.median(vals))}, {fmt(max(vals))})"
        if fig > limit:
            g.check(False, name, f"{what}: {fmt(fig)} instructions, {over:+.1f} % against its budget "
                    f"of {fmt(budget)} (limit {fmt(limit)}, margin {margin:g} %); "
                    "if the path grew on purpose, change bench/budgets in the same commit and say why")
            verdict = f"**over, {over:+.1f} %**"
        else:
            note = []
            if fig < budget * (1 - margin / 100):
                note = [f"{name}: {fmt(fig)} instructions, {over:+.1f} % under its budget: "
                        "lower it in bench/budgets to keep the gain"]
            g.check(True, name, f"{fmt(fig)} instructions, {over:+.1f} % against {fmt(budget)}", note)
            verdict = f"ok, {over:+.1f} %" + (" (lower the budget)" if note else "")
        table.append((name, rng, fmt(budget), f"{margin:g} %", fmt(limit), verdict))
    with open(os.path.join(d, "gate.ktap"), "w") as f:
        f.write(g.ktap())
    print("| figure | instructions: fewest of the repeats (median, most) | budget | margin | limit | verdict |")
    print("|---|---:|---:|---:|---:|---|")
    for r in table:
        print("| " + " | ".join(r) + " |")
    fails = g.failed()
    for ok, name, msg, _ in fails:
        print(f"gate: FAILED gate:{name}: {msg}", file=sys.stderr)
    print(f"gate: {len(g.checks) - len(fails)} of {len(g.checks)} checks passed ({d}/gate.ktap)", file=sys.stderr)
    return 1 if fails else 0


def spread(dirs):
    runs = []
    for d in dirs:
        rows, bad = read_raw(os.path.join(d, "raw.txt"))
        if bad:
            raise SystemExit(f"gate: {d}: {bad[0]}")
        runs.append(rows)
    print("| figure | " + " | ".join(f"run {i}" for i in range(1, len(runs) + 1)) +
          " | median of the runs | spread (max-min)/median | spread of the repeats' medians |")
    print("|---|" + "---:|" * (len(runs) + 3))
    for name in FIGURES:
        figs, meds = [], []
        for d, rows in zip(dirs, runs):
            vals = measure(rows, name)
            if isinstance(vals, str):
                raise SystemExit(f"gate: {d}: {name}: {vals}")
            figs.append(min(vals))
            meds.append(statistics.median(vals))
        mid = statistics.median(figs)
        print(f"| {name} | " + " | ".join(fmt(m) for m in figs) +
              f" | {fmt(mid)} | {100 * (max(figs) - min(figs)) / mid:.2f} % |"
              f" {100 * (max(meds) - min(meds)) / statistics.median(meds):.2f} % |")
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "check":
        rc = None
        if len(argv) == 5 and argv[3] == "--vm-rc":
            rc = int(argv[4])
        elif len(argv) != 3:
            raise SystemExit(__doc__)
        return check(argv[1], argv[2], rc)
    if len(argv) >= 2 and argv[0] == "spread":
        return spread(argv[1:])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
