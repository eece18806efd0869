#!/usr/bin/env python3
"""Parse the trace of bench/inbound-trace.sh: per path, the medians of
the phases of one READ (see that script)."""
import re
import statistics
import sys

LINE = re.compile(r'^\s*(\S+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
IOC_SYNC = 'c028db01'  # IB_SYNC_MEM_IOC_SYNC


def main(path):
    ev = []
    for line in open(path):
        m = LINE.match(line)
        if m:
            ev.append((float(m.group(4)) * 1e6, int(m.group(2)),
                       m.group(5), m.group(6)))
    pids = [e[1] for e in ev if e[2] == 'sync_start']
    if not pids:
        sys.exit('inbound_trace: no sync_start in the trace')
    prog = pids[0]
    ops, cur = [], None
    for e in ev:
        t, pid, name, rest = e
        if pid == prog and name == 'sys_enter':
            nr = int(rest.split()[1])
            if nr == 24:        # sched_yield: the floor's poll
                continue
            if cur:
                cur['end'] = t
                ops.append(cur)
                cur = None
            path_ = {1: 'floor', 44: 'nl', 46: 'nl'}.get(nr)
            if nr == 16 and IOC_SYNC in rest:
                path_ = 'ioctl'
            if path_:
                cur = {'path': path_, 't0': t, 'ev': []}
            continue
        if cur:
            cur['ev'].append(e)
    phases = {}
    for op in ops:
        post = [e for e in op['ev'] if e[2] == 'post' and e[1] == prog]
        cq = [e for e in op['ev'] if e[2] == 'cqpost']
        if not post or not cq:
            continue
        tp, tc = post[0][0], cq[-1][0]
        wq = [e[0] for e in op['ev']
              if e[2] == 'workqueue_execute_start' and e[0] >= tp]
        seen = [e[0] for e in op['ev'] if e[2] == 'seen']
        d = phases.setdefault(op['path'], {k: [] for k in (
            'sys->post', 'post->wq', 'post->cq', 'cq->seen')})
        d['sys->post'].append(tp - op['t0'])
        if wq:
            d['post->wq'].append(wq[0] - tp)
        d['post->cq'].append(tc - tp)
        d['cq->seen'].append((seen[0] if seen else op['end']) - tc)
    for p in ('floor', 'ioctl', 'nl'):
        if p in phases:
            d = phases[p]
            print(f"inbound-trace path={p} n={len(d['post->cq'])} " +
                  ' '.join(f"{k}={statistics.median(v):.0f}us"
                           for k, v in d.items() if v))


if __name__ == '__main__':
    main(sys.argv[1])
