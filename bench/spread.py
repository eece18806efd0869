#!/usr/bin/env python3
"""Run-to-run spread: the same figures from several runs of one lane, side
by side.

    bench/spread.py DIR DIR [DIR...]

Each DIR holds a run's results.json (bench/report.py). Per figure present
in every run: each run's median (and median ratio), and the spread, the
largest median over the smallest less one, in percent. A figure's spread
within a run (its repeats' min and max) is in each run's own table; this
is the spread that says whether two runs agree, the one a budget's
margin must cover.
"""
import json
import sys


def load(d):
    with open(f"{d}/results.json") as f:
        doc = json.load(f)
    return doc["env"], {(r["suite"], r["measure"]): r for r in doc["results"]}


def spread(values):
    lo, hi = min(values), max(values)
    if lo <= 0:
        return None
    return 100 * (hi / lo - 1)


def pct(p):
    return "-" if p is None else f"{p:.1f} %"


def num(v):
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    runs = [load(d) for d in argv]
    clocks = {e.get("clock", "tcg") for e, _ in runs}
    kernels = {e.get("kernel") for e, _ in runs}
    if len(clocks) > 1:
        raise SystemExit(f"spread: runs on different clocks: {sorted(clocks)}")
    print(f"{len(runs)} runs, kernel {', '.join(sorted(kernels))}, clock "
          f"{clocks.pop()}: " + ", ".join(e.get("date", "?") for e, _ in runs))
    print()
    print("| suite | measure | medians | spread | ratio medians | ratio spread |")
    print("|---|---|---:|---:|---:|---:|")
    first = runs[0][1]
    for key in first:
        rs = [res.get(key) for _, res in runs]
        if any(r is None for r in rs):
            continue
        vals = [r["value"]["median"] for r in rs]
        row = [key[0], f"{key[1]} ({rs[0]['unit']})",
               " / ".join(num(v) for v in vals), pct(spread(vals))]
        if all("ratio" in r for r in rs):
            q = [r["ratio"]["median"] for r in rs]
            row += [" / ".join(f"{v:.3f}x" for v in q), pct(spread(q))]
        else:
            row += ["", ""]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
