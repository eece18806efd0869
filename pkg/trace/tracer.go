package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
	"golang.org/x/sys/unix"
)

// Options choose what a Tracer counts. The zero value traces every device
// and client, merges the clients of a device, and uses microseconds.
type Options struct {
	// FilterDev restricts tracing to the ib_device with index DevIndex
	// (see DeviceIndex to resolve a name).
	FilterDev bool
	DevIndex  uint32
	// Client, when not 0, restricts tracing to that client id. Device-wide
	// pass histograms are then not kept, and the client's histogram is
	// always keyed by its id.
	Client uint32
	// PerClient keys client histograms by client id; otherwise all clients
	// of a device and direction share one histogram (client 0).
	PerClient bool
	// Passes traces device-wide passes only: the client_sync program is
	// loaded but not attached, so the registry pays nothing per client
	// for the tracer (and, with its client_timing parameter off, reads no
	// clock per client). There are no client histograms; single-client
	// syncs refused before ->sync are still counted. Excludes Client and
	// PerClient.
	Passes bool
	// Unit of the histogram buckets; the zero value is nanoseconds.
	Unit Unit
}

// Tracer is a loaded and attached set of BPF programs. Its methods are
// safe for concurrent use.
type Tracer struct {
	mu    sync.Mutex
	opts  Options
	since time.Time // Start or the last Reset
	objs  *synctraceObjects
	links []link.Link
}

// Start loads the BPF programs with opts and attaches them to the
// ib_sync_mem tracepoints. The errors to expect are genl.ErrNotLoaded,
// genl.ErrPermission, ErrTracepointMissing (a *TracepointError) and
// ErrNoTracefs. Close the Tracer to unload everything.
func Start(opts Options) (*Tracer, error) {
	if opts.Passes && (opts.Client != 0 || opts.PerClient) {
		return nil, errors.New("trace: Passes traces no client: Client and PerClient must be unset")
	}
	if err := defaultPaths.check(); err != nil {
		return nil, err
	}
	t, err := load(opts, nil)
	if err != nil {
		return nil, err
	}
	progs := map[string]*ebpf.Program{
		"client_sync": t.objs.SmClientSync,
		"sync_end":    t.objs.SmSyncEnd,
	}
	for _, ev := range events {
		if opts.Passes && ev == "client_sync" {
			continue
		}
		l, err := link.Tracepoint(system, ev, progs[ev], nil)
		if err != nil {
			t.Close()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &TracepointError{Event: ev}
			}
			return nil, classify("attach to "+system+":"+ev, err)
		}
		t.links = append(t.links, l)
	}
	return t, nil
}

// load loads the BPF object configured for opts, without attaching it.
// edit, when not nil, may change the spec first (tests load the programs
// as another type to run them).
func load(opts Options, edit func(*ebpf.CollectionSpec)) (*Tracer, error) {
	if opts.Client != 0 {
		opts.PerClient = true
	}
	spec, err := loadSynctrace()
	if err != nil {
		return nil, err
	}
	if err := configure(spec, opts); err != nil {
		return nil, err
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, err
	}
	sizeMaps(spec, ncpu)
	if edit != nil {
		edit(spec)
	}
	// As cilium/ebpf advises: before 5.11 BPF memory counts against
	// RLIMIT_MEMLOCK. Where it is charged to the memory cgroup (5.11 on,
	// every kernel the module supports) this changes nothing: the
	// package's init probe (one array map created under a zero limit,
	// at the start of every syncmemctl command) found memcg accounting.
	// Its failure (no CAP_SYS_RESOURCE, or an unprivileged caller whose
	// probe could create no map) matters only if the load fails too.
	memlock := rlimit.RemoveMemlock()

	t := &Tracer{opts: opts, objs: new(synctraceObjects), since: time.Now()}
	if err := spec.LoadAndAssign(t.objs, nil); err != nil {
		if memlock != nil {
			err = fmt.Errorf("%w (raising RLIMIT_MEMLOCK failed too: %v)", err, memlock)
		}
		return nil, classify("load BPF", err)
	}
	return t, nil
}

// configure rewrites the cfg_* constants of the BPF object.
func configure(spec *ebpf.CollectionSpec, opts Options) error {
	set := map[string]any{
		synctraceVarCfgFilterDev: b2u(opts.FilterDev),
		synctraceVarCfgDev:       opts.DevIndex,
		synctraceVarCfgClient:    opts.Client,
		synctraceVarCfgPerClient: b2u(opts.PerClient),
		synctraceVarCfgUnitDiv:   opts.Unit.Divisor(),
	}
	for name, v := range set {
		vs, ok := spec.Variables[name]
		if !ok {
			return fmt.Errorf("BPF object has no variable %s", name)
		}
		if err := vs.Set(v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	return nil
}

// percpuBudget bounds the memory of each per-CPU map: preallocated, it
// takes max_entries * value size * possible CPUs.
const percpuBudget = 16 << 20

// minEntries is what each per-CPU map keeps however many CPUs there are:
// sm_hist 256 series (128 clients in both directions with --per-client;
// 17 MiB at 256 CPUs, a series' value being 264 bytes), sm_errors 1024.
var minEntries = map[string]uint32{synctraceMapSmHist: 256, synctraceMapSmErrors: 1024}

// sizeMaps shrinks the per-CPU maps on machines with many CPUs, down to
// minEntries. Updates that find a map full are counted as dropped. An
// sm_hist entry is a whole series (all its slots), so the map holds as
// many series as it has entries: 4096 up to 15 CPUs.
func sizeMaps(spec *ebpf.CollectionSpec, ncpu int) {
	for name, least := range minEntries {
		ms := spec.Maps[name]
		n := uint32(min(percpuBudget/(int(ms.ValueSize)*max(ncpu, 1)), 1<<30))
		ms.MaxEntries = max(min(n, ms.MaxEntries), min(least, ms.MaxEntries))
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// permissionError is a bpf() or perf_event_open() refused for want of a
// capability: it matches genl.ErrPermission and the syscall's error.
type permissionError struct {
	what string
	err  error
}

func (e *permissionError) Error() string {
	return "loading BPF needs root (CAP_BPF and CAP_PERFMON): " + e.what + ": " + e.err.Error()
}

func (e *permissionError) Unwrap() []error { return []error{genl.ErrPermission, e.err} }

// classify turns refusals of the bpf and perf_event_open syscalls into a
// *permissionError (genl.ErrPermission): EPERM, or EACCES when it is not
// the verifier's verdict (the verifier rejects programs with EACCES too,
// with a log).
func classify(what string, err error) error {
	var ve *ebpf.VerifierError
	if errors.Is(err, unix.EPERM) || (errors.Is(err, unix.EACCES) && !errors.As(err, &ve)) {
		return &permissionError{what: what, err: err}
	}
	if ve != nil {
		return fmt.Errorf("%s: %w\n%+v", what, err, ve)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Options returns the options the Tracer runs with.
func (t *Tracer) Options() Options { return t.opts }

// Close detaches and unloads the programs and frees the maps. It is safe
// to call more than once.
func (t *Tracer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, l := range t.links {
		errs = append(errs, l.Close())
	}
	t.links = nil
	if t.objs != nil {
		errs = append(errs, t.objs.Close())
		t.objs = nil
	}
	return errors.Join(errs...)
}

var errClosed = errors.New("trace: tracer is closed")

// Snapshot reads the counters: everything since Start or the last Reset.
func (t *Tracer) Snapshot() (*Snapshot, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.objs == nil {
		return nil, errClosed
	}
	snap := &Snapshot{Unit: t.opts.Unit, Since: t.since, Time: time.Now()}
	names := t.devNames()

	hists := map[seriesKey]*Hist{}
	var hk synctraceSmHistKey
	var hv []synctraceSmHistVal
	seen := map[synctraceSmHistKey]bool{}
	it := t.objs.SmHist.Iterate()
	for it.Next(&hk, &hv) {
		if seen[hk] {
			continue // the iteration restarted
		}
		seen[hk] = true
		s := Series{Dev: hk.DevIndex, DevName: names[hk.DevIndex], Kind: Kind(hk.Kind),
			Client: hk.Client, Dir: genl.Direction(hk.Dir)}
		h := hists[s.key()]
		if h == nil {
			h = &Hist{Series: s, Log2: hist.Log2{Unit: t.opts.Unit}}
			hists[s.key()] = h
		}
		for _, v := range hv {
			for slot, n := range v.Slots {
				h.Log2.Add(slot, n)
				h.Count += n
			}
			h.TotalNs += v.Ns
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read sm_hist: %w", err)
	}
	for _, h := range hists {
		if h.Count == 0 {
			continue
		}
		h.Log2 = h.Log2.Trim()
		snap.Hists = append(snap.Hists, *h)
	}

	var ek synctraceSmErrKey
	var ev []uint64
	seenErr := map[synctraceSmErrKey]bool{}
	it = t.objs.SmErrors.Iterate()
	for it.Next(&ek, &ev) {
		if seenErr[ek] {
			continue
		}
		seenErr[ek] = true
		e := ErrorCount{Series: Series{Dev: ek.DevIndex, DevName: names[ek.DevIndex],
			Kind: Kind(ek.Kind), Client: ek.Client, Dir: genl.Direction(ek.Dir)}, Errno: syscall.Errno(ek.Err)}
		for _, v := range ev {
			e.Count += v
		}
		if e.Count > 0 {
			snap.Errors = append(snap.Errors, e)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read sm_errors: %w", err)
	}

	var drops []uint64
	if err := t.objs.SmDrops.Lookup(uint32(0), &drops); err != nil {
		return nil, fmt.Errorf("read sm_drops: %w", err)
	}
	for _, d := range drops {
		snap.Dropped += d
	}
	snap.sort()
	return snap, nil
}

// devNames maps device indexes to names: as the module last reported them
// in a sync_end event, else as RDMA netlink knows them.
func (t *Tracer) devNames() map[uint32]string {
	names, err := Devices()
	if err != nil {
		names = map[uint32]string{}
	}
	var k uint32
	var v synctraceSmDevName
	it := t.objs.SmDevNames.Iterate()
	for it.Next(&k, &v) {
		b := make([]byte, 0, len(v.Name))
		for _, c := range v.Name {
			b = append(b, byte(c))
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		if len(b) > 0 {
			names[k] = string(b)
		}
	}
	return names
}

// Reset zeroes the counters. Events that land between the last Snapshot
// and Reset are lost; to measure intervals without loss, keep counting
// and use Snapshot.Sub instead.
func (t *Tracer) Reset() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.objs == nil {
		return errClosed
	}
	if err := clearMap[synctraceSmHistKey](t.objs.SmHist); err != nil {
		return fmt.Errorf("reset sm_hist: %w", err)
	}
	if err := clearMap[synctraceSmErrKey](t.objs.SmErrors); err != nil {
		return fmt.Errorf("reset sm_errors: %w", err)
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return fmt.Errorf("reset sm_drops: %w", err)
	}
	if err := t.objs.SmDrops.Put(uint32(0), make([]uint64, ncpu)); err != nil {
		return fmt.Errorf("reset sm_drops: %w", err)
	}
	t.since = time.Now()
	return nil
}

// clearMap deletes every key of a hash map.
func clearMap[K any](m *ebpf.Map) error {
	var keys []K
	var next K
	err := m.NextKey(nil, &next)
	for err == nil && len(keys) <= int(m.MaxEntries()) {
		keys = append(keys, next)
		err = m.NextKey(keys[len(keys)-1], &next)
	}
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return err
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
	}
	return nil
}
