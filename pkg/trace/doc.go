// Package trace measures how long ib_sync_mem syncs take, with eBPF: log2
// latency histograms per device, client and direction, like libbpf-tools'
// funclatency and biolatency, plus failure counts by errno.
//
// Two BPF programs (bpf/synctrace.bpf.c, built by bpf2go, object committed)
// attach to the module's tracepoints:
//
//   - ib_sync_mem:client_sync, one per client ->sync call, feeds the client
//     histograms (KindClient): one per (device, client, direction), or per
//     (device, direction) with all clients merged when Options.PerClient is
//     off.
//   - ib_sync_mem:sync_end with client 0, one per device-wide pass, feeds
//     the pass histograms (KindPass): how long a whole pass over a device
//     took. A single-client sync that fails before its ->sync runs (the
//     client was invalidated or unregistered) is counted under KindRefused
//     in the error counts.
//
// The kernel measures every duration itself, so nothing pairs start and
// end events. Counts live in per-CPU hash maps that the programs only
// increment; Snapshot sums the CPUs, Snapshot.Sub gives interval deltas.
//
// Usage:
//
//	idx, err := trace.DeviceIndex("rxe0") // optional: RDMA netlink lookup
//	t, err := trace.Start(trace.Options{FilterDev: true, DevIndex: idx, PerClient: true})
//	if err != nil {
//		// errors.Is: genl.ErrNotLoaded, genl.ErrPermission,
//		// ErrTracepointMissing, ErrNoTracefs
//	}
//	defer t.Close() // detaches, unloads the programs, frees the maps
//	prev, _ := t.Snapshot()
//	...
//	cur, _ := t.Snapshot()
//	trace.WriteText(os.Stdout, cur.Sub(prev)) // or json.Marshal(cur.Sub(prev))
//
// Snapshot returns everything since Start or the last Reset; Sub turns two
// snapshots into an interval without losing events, which Reset would.
package trace
