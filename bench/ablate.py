#!/usr/bin/env python3
"""Ablations of the hot paths, for BENCHMARKS.md's "where the instructions
go" (issue 49): each takes one guarantee's code out of a scratch copy of
the tree, never this one. bench/ablate.sh drives it.

  bench/ablate.py TREE NAME     apply ablation NAME to TREE (a scratch copy)
  bench/ablate.py --list        the names
  bench/ablate.py TREE --tolerant
                                make TREE's benchmark programs go on where
                                an ablation breaks their own checks (a
                                client's counters gone, a direct ->sync
                                that counts nothing), so that the other
                                figures of the lane are still measured

The copies are not correct code (some are unsafe): only their counts on
the instruction clock mean anything.
"""
import sys

top = None


def sub(f, old, new):
    p = top + '/' + f
    s = open(p).read()
    assert s.count(old) == 1, (f, old, s.count(old))
    open(p, 'w').write(s.replace(old, new))


E = {}
E['base'] = []
# per-client counters (syncs, bytes, errors) of the client
E['no-client-stats'] = [('kmod/ib_sync_mem/client.h', '	sm_stats_add(c->stats, timed, ns, bytes, err, pass);\n', '')]
# the busy count (unregister and invalidate wait for ->sync)
E['no-busy'] = [('kmod/ib_sync_mem/client.h', '	atomic_inc(&c->busy);\n	/* Counted before the state is read: pairs with sm_client_wait_idle(). */\n	smp_mb__after_atomic();\n', ''),
                ('kmod/ib_sync_mem/client.h', '	if (atomic_dec_and_test(&c->busy) && READ_ONCE(c->state) != SM_LIVE)\n', '	if (0)\n')]
# the client's last error
E['no-last-err'] = [('kmod/ib_sync_mem/client.h', '	if (READ_ONCE(c->last_err) != err)\n		WRITE_ONCE(c->last_err, err);\n', '')]
# moves (revalidation before ->sync)
E['no-moved'] = [('kmod/ib_sync_mem/client.h', '	if (unlikely(sm_moved(c)))\n		err = sm_revalidate(c, deadline);\n', '')]
# lazy clients
E['no-lazy'] = [('kmod/ib_sync_mem/client.h', '	if (!(c->flags & IB_SYNC_MEM_F_LAZY))\n		return SM_OWED;\n', '	return SM_OWED;\n')]
# the SRCU read section of a one-client sync (the deadline's clock read
# cannot be taken out alone: a deadline in the past changes what runs)
E['no-srcu'] = [('kmod/ib_sync_mem/sync.c', '	trace_sync_start(dom, client->id, dir);\n	idx = sm_read_lock(dom);\n', '	trace_sync_start(dom, client->id, dir);\n	idx = 0;\n'),
                ('kmod/ib_sync_mem/sync.c', '	sm_read_unlock(dom, idx);\n	/* Its time', '	(void)idx;\n	/* Its time')]
# the registry around the ioctl's ->sync: the client's callback called straight
E['ioctl-direct'] = [('kmod/ib_sync_mem/dev.c', '	return ib_sync_mem_sync(c, dir, timeout_ms);\n', '	return c->ops->sync(c, dir, 0);\n')]
# the lookup's reference (unsafe: measurement only)
E['lookup-no-ref'] = [('kmod/ib_sync_mem/client.c', '	if (c && (READ_ONCE(c->state) == SM_DEAD ||\n		  !kref_get_unless_zero(&c->kref)))\n', '	if (c && READ_ONCE(c->state) == SM_DEAD)\n'),
                      ('kmod/ib_sync_mem/dev.c', '''out_client:
	ib_sync_mem_put(c);
	return ret;
}

static long sm_dev_sync_dev''', '''out_client:
	return ret;
}

static long sm_dev_sync_dev''')]
# the in-fence wait's call when there is none
E['no-wait-in-call'] = [('kmod/ib_sync_mem/dev.c', '	ret = ret ?: sm_dev_wait_in(in, timeout_ms);\n', '	ret = ret ?: (in ? sm_dev_wait_in(in, timeout_ms) : 0);\n')]
# might_sleep()'s voluntary preemption point and the fence-wait annotation
E['no-might-wait'] = [('kmod/ib_sync_mem/sync.c', '	sm_sync_might_wait();\n	if (!sm_dir_valid(dir))\n', '	if (!sm_dir_valid(dir))\n')]
# coalescing of concurrent device syncs (the pass queue) off by default
E['no-coalesce'] = [('kmod/ib_sync_mem/pass.c', 'bool sm_coalesce = true;\n', 'bool sm_coalesce;\n')]
# the pass's counters merged into the domain's and the module's
E['no-pass-merge'] = [('kmod/ib_sync_mem/pass.c', '	sm_stats_merge(dom->stats, &acc);\n	sm_stats_merge(sm_global_stats, &acc);\n', '')]

TOLERANT = [
    ('test/tools/dev_bench.c', '\t\tdie("the clean lazy client ran %llu syncs, want 0",',
     '\t\tfprintf(stderr, "ablation: the clean lazy client ran %llu syncs, want 0\\n",'),
    ('test/tools/dev_bench.c', '\t\t\tdie("region %u ran %llu syncs, want %llu", rid,',
     '\t\t\tfprintf(stderr, "ablation: region %u ran %llu syncs, want %llu\\n", rid,'),
    ('bench/guest.sh', '>> "$raw" || die "inbound_bench failed"',
     '>> "$raw" || echo "ablation: inbound_bench failed" >&2'),
]

if __name__ == '__main__':
    if sys.argv[1:] == ['--list']:
        print(' '.join(E))
        sys.exit(0)
    top, name = sys.argv[1], sys.argv[2]
    edits = TOLERANT if name == '--tolerant' else E[name]
    for f, o, n in edits:
        sub(f, o, n)
