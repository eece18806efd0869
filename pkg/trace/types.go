package trace

import (
	"cmp"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
)

// Unit is the unit of histogram values, pkg/hist's. The bucket of a
// duration is taken in the kernel after dividing it by the unit, as
// biolatency does, so bucket bounds are powers of two in that unit.
// syncmemctl trace defaults to microseconds.
type Unit = hist.Unit

const (
	Nanoseconds  = hist.Nanoseconds
	Microseconds = hist.Microseconds
	Milliseconds = hist.Milliseconds
)

// Kind says what a histogram or an error count is about.
type Kind uint8

const (
	// KindClient: one client's ->sync call (tracepoint client_sync).
	KindClient Kind = 1
	// KindPass: a device-wide pass over all clients (sync_end, client 0).
	KindPass Kind = 2
	// KindRefused: a single-client sync that failed before its ->sync ran
	// (sync_end with no client run). Error counts only.
	KindRefused Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindClient:
		return "client"
	case KindPass:
		return "pass"
	case KindRefused:
		return "refused"
	}
	return fmt.Sprintf("kind-%d", uint8(k))
}

// Series identifies one histogram or error count. Client is 0 for passes
// and for all clients merged (Options.PerClient off); client ids start at 1.
type Series struct {
	Dev     uint32 // ib_device index
	DevName string // "" when unknown
	Kind    Kind
	Client  uint32
	Dir     genl.Direction
}

func (s Series) key() seriesKey { return seriesKey{s.Dev, s.Kind, s.Client, s.Dir} }

type seriesKey struct {
	dev    uint32
	kind   Kind
	client uint32
	dir    genl.Direction
}

func (a seriesKey) compare(b seriesKey) int {
	// Device, then passes before clients, then client id, then direction.
	return cmp.Or(cmp.Compare(a.dev, b.dev), cmp.Compare(kindOrder(a.kind), kindOrder(b.kind)),
		cmp.Compare(a.client, b.client), cmp.Compare(a.dir, b.dir))
}

func kindOrder(k Kind) int {
	if k == KindPass {
		return 0
	}
	return int(k)
}

// Hist is the log2 histogram of one series, in the snapshot's unit: the
// buckets of pkg/hist (the BPF side's slot floor(log2(v)), every slot
// from 31 on in the open-ended last bucket), trimmed after the last
// non-empty one.
type Hist struct {
	Series
	Log2    hist.Log2
	Count   uint64 // sum of Log2's counts
	TotalNs uint64 // sum of the durations, in ns
}

// ErrorCount is how often a series failed with one errno.
type ErrorCount struct {
	Series
	Errno syscall.Errno // positive
	Count uint64
}

// ErrnoName is the symbolic name of e ("EIO"), or "errno N":
// genl.ErrnoName.
func ErrnoName(e syscall.Errno) string { return genl.ErrnoName(e) }

// Snapshot is the state of the counters at one time: cumulative since
// Start or the last Reset, or an interval when made by Sub.
type Snapshot struct {
	Unit    Unit
	Since   time.Time    // start of the period counted
	Time    time.Time    // end of it: when the snapshot was taken
	Hists   []Hist       // sorted by device, kind (passes first), client, dir
	Errors  []ErrorCount // sorted like Hists, then by errno
	Dropped uint64       // updates lost because a BPF map was full
}

// Find returns the histogram of a series, or nil.
func (s *Snapshot) Find(dev uint32, kind Kind, client uint32, dir genl.Direction) *Hist {
	k := seriesKey{dev, kind, client, dir}
	for i := range s.Hists {
		if s.Hists[i].key() == k {
			return &s.Hists[i]
		}
	}
	return nil
}

// Empty reports whether nothing was counted.
func (s *Snapshot) Empty() bool {
	return len(s.Hists) == 0 && len(s.Errors) == 0 && s.Dropped == 0
}

// Sub returns what happened between prev and s: s minus prev, series by
// series. Series that did not change are left out. prev may be nil.
func (s *Snapshot) Sub(prev *Snapshot) *Snapshot {
	out := &Snapshot{Unit: s.Unit, Since: s.Since, Time: s.Time, Dropped: s.Dropped}
	if prev == nil {
		prev = &Snapshot{}
	} else {
		out.Since = prev.Time
	}
	out.Dropped -= min(prev.Dropped, s.Dropped)

	old := make(map[seriesKey]*Hist, len(prev.Hists))
	for i := range prev.Hists {
		old[prev.Hists[i].key()] = &prev.Hists[i]
	}
	for _, h := range s.Hists {
		d := Hist{Series: h.Series, Log2: h.Log2.Sub(hist.Log2{}), Count: h.Count, TotalNs: h.TotalNs}
		if p := old[h.key()]; p != nil {
			d.Log2 = h.Log2.Sub(p.Log2)
			d.Count -= min(p.Count, d.Count)
			d.TotalNs -= min(p.TotalNs, d.TotalNs)
		}
		if d.Count > 0 {
			out.Hists = append(out.Hists, d)
		}
	}

	type ekey struct {
		s seriesKey
		e syscall.Errno
	}
	olde := make(map[ekey]uint64, len(prev.Errors))
	for _, e := range prev.Errors {
		olde[ekey{e.key(), e.Errno}] = e.Count
	}
	for _, e := range s.Errors {
		e.Count -= min(olde[ekey{e.key(), e.Errno}], e.Count)
		if e.Count > 0 {
			out.Errors = append(out.Errors, e)
		}
	}
	return out
}

func (s *Snapshot) sort() {
	slices.SortFunc(s.Hists, func(a, b Hist) int { return a.key().compare(b.key()) })
	slices.SortFunc(s.Errors, func(a, b ErrorCount) int {
		return cmp.Or(a.key().compare(b.key()), cmp.Compare(a.Errno, b.Errno))
	})
}
