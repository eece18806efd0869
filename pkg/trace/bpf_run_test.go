package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
	"golang.org/x/sys/unix"
)

// The BPF programs run on the host without the module: loaded as
// BPF_PROG_TYPE_SYSCALL (which BPF_PROG_TEST_RUN runs with any context
// and which reads its context the way a tracepoint program does) and fed
// tracepoint records built here, they fill the real maps, read back
// through Snapshot. Needs root and Linux 5.14; the VM suite
// (test/vm/40-trace.sh) runs the same programs on the real tracepoints.

type runner struct {
	t  *testing.T
	tr *Tracer
}

func loadRunner(t *testing.T, opts Options) *runner {
	t.Helper()
	tr, err := load(opts, func(spec *ebpf.CollectionSpec) {
		for _, p := range spec.Programs {
			p.Type = ebpf.Syscall
			p.Flags |= unix.BPF_F_SLEEPABLE
			p.AttachType = ebpf.AttachNone
		}
	})
	if errors.Is(err, genl.ErrPermission) {
		t.Skipf("SKIP: running the BPF programs on the host needs root: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return &runner{t, tr}
}

func (r *runner) run(p *ebpf.Program, rec any) {
	r.t.Helper()
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, rec); err != nil {
		r.t.Fatal(err)
	}
	if _, err := p.Run(&ebpf.RunOptions{Context: b.Bytes()}); err != nil {
		r.t.Fatalf("run %v: %v", p, err)
	}
}

func (r *runner) clientSync(dev, client uint32, dir genl.Direction, ns uint64, err syscall.Errno) {
	r.t.Helper()
	r.run(r.tr.objs.SmClientSync, synctraceSmClientSyncRec{
		DevIndex: dev, Client: client, Dir: uint32(dir), Err: -int32(err), Ns: ns})
}

func (r *runner) syncEnd(dev uint32, name string, client uint32, dir genl.Direction, clients uint32,
	ns uint64, err syscall.Errno) {
	r.t.Helper()
	rec := synctraceSmSyncEndRec{DevIndex: dev, Client: client, Dir: uint32(dir),
		Clients: clients, Err: -int32(err), Ns: ns}
	for i := range min(len(name), len(rec.Dev)-1) {
		rec.Dev[i] = int8(name[i])
	}
	r.run(r.tr.objs.SmSyncEnd, rec)
}

func (r *runner) snap() *Snapshot {
	r.t.Helper()
	s, err := r.tr.Snapshot()
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// feed runs a fixed mix of events on two devices.
func (r *runner) feed() {
	for range 50 {
		r.clientSync(0, 3, genl.DirToDevice, 1_500_000, 0) // 1500 us: slot 10
		r.clientSync(0, 4, genl.DirToDevice, 3_000, 0)     // 3 us: slot 1
	}
	r.clientSync(0, 5, genl.DirToDevice, 100, syscall.EIO)
	r.clientSync(0, 5, genl.DirToDevice, 100, syscall.EIO)
	r.clientSync(0, 5, genl.DirToCPU, 100, syscall.ETIMEDOUT)
	r.clientSync(1, 3, genl.DirBidirectional, 10_000, 0)
	r.syncEnd(0, "rxe0", 0, genl.DirToDevice, 2, 2_000_000, 0)           // a pass
	r.syncEnd(0, "rxe0", 0, genl.DirToDevice, 2, 4_000_000, syscall.EIO) // a failed pass
	r.syncEnd(0, "rxe0", 6, genl.DirToDevice, 0, 1_000, syscall.ENXIO)   // refused
	r.syncEnd(0, "rxe0", 3, genl.DirToDevice, 1, 1_600_000, 0)           // single, ran
	r.syncEnd(0, "rxe0", 5, genl.DirToDevice, 1, 1_000, syscall.EIO)     // single, ran
	r.syncEnd(1, "mlx5_0", 0, genl.DirBidirectional, 1, 30_000, 0)
}

func TestBPFPerClient(t *testing.T) {
	r := loadRunner(t, Options{PerClient: true, Unit: Microseconds})
	r.feed()
	s := r.snap()

	check := func(dev uint32, kind Kind, client uint32, dir genl.Direction, count uint64, slots map[int]uint64) {
		t.Helper()
		h := s.Find(dev, kind, client, dir)
		if h == nil {
			t.Errorf("no histogram dev %d %v client %d %v", dev, kind, client, dir)
			return
		}
		if h.Count != count {
			t.Errorf("dev %d %v client %d %v: count %d, want %d", dev, kind, client, dir, h.Count, count)
		}
		for slot, n := range slots {
			if slot >= len(h.Log2.Counts) || h.Log2.Counts[slot] != n {
				t.Errorf("dev %d %v client %d %v: slots %v, want slot %d = %d", dev, kind, client, dir,
					h.Log2.Counts, slot, n)
			}
		}
	}
	check(0, KindClient, 3, genl.DirToDevice, 50, map[int]uint64{10: 50})
	check(0, KindClient, 4, genl.DirToDevice, 50, map[int]uint64{1: 50})
	check(0, KindClient, 5, genl.DirToDevice, 2, map[int]uint64{0: 2})
	check(0, KindClient, 5, genl.DirToCPU, 1, map[int]uint64{0: 1})
	check(1, KindClient, 3, genl.DirBidirectional, 1, map[int]uint64{3: 1})
	check(0, KindPass, 0, genl.DirToDevice, 2, map[int]uint64{10: 1, 11: 1})
	check(1, KindPass, 0, genl.DirBidirectional, 1, map[int]uint64{4: 1})
	if len(s.Hists) != 7 {
		t.Errorf("%d histograms, want 7: %+v", len(s.Hists), s.Hists)
	}
	if h := s.Find(0, KindClient, 3, genl.DirToDevice); h != nil && h.TotalNs != 50*1_500_000 {
		t.Errorf("total ns %d", h.TotalNs)
	}
	if h := s.Find(0, KindPass, 0, genl.DirToDevice); h != nil && h.DevName != "rxe0" {
		t.Errorf("device name %q, want rxe0", h.DevName)
	}
	if h := s.Find(1, KindPass, 0, genl.DirBidirectional); h != nil && h.DevName != "mlx5_0" {
		t.Errorf("device name %q, want mlx5_0", h.DevName)
	}

	wantErrs := []struct {
		kind   Kind
		client uint32
		dir    genl.Direction
		errno  syscall.Errno
		count  uint64
	}{
		{KindPass, 0, genl.DirToDevice, syscall.EIO, 1},
		{KindClient, 5, genl.DirToDevice, syscall.EIO, 2},
		{KindClient, 5, genl.DirToCPU, syscall.ETIMEDOUT, 1},
		{KindRefused, 6, genl.DirToDevice, syscall.ENXIO, 1},
	}
	if len(s.Errors) != len(wantErrs) {
		t.Fatalf("errors %+v, want %+v", s.Errors, wantErrs)
	}
	for i, w := range wantErrs {
		e := s.Errors[i]
		if e.Dev != 0 || e.Kind != w.kind || e.Client != w.client || e.Dir != w.dir ||
			e.Errno != w.errno || e.Count != w.count {
			t.Errorf("error %d: %+v, want %+v", i, e, w)
		}
	}
	if s.Dropped != 0 {
		t.Errorf("dropped %d", s.Dropped)
	}

	// Reset empties everything; counting goes on afterwards.
	if err := r.tr.Reset(); err != nil {
		t.Fatal(err)
	}
	if s := r.snap(); !s.Empty() {
		t.Errorf("after Reset: %+v", s)
	}
	r.clientSync(0, 3, genl.DirToDevice, 1_500_000, 0)
	if h := r.snap().Find(0, KindClient, 3, genl.DirToDevice); h == nil || h.Count != 1 {
		t.Errorf("after Reset and one sync: %+v", h)
	}
	if err := r.tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.tr.Snapshot(); err == nil {
		t.Error("Snapshot after Close worked")
	}
	if err := r.tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestBPFMergedClients(t *testing.T) {
	r := loadRunner(t, Options{Unit: Microseconds})
	r.feed()
	s := r.snap()
	h := s.Find(0, KindClient, 0, genl.DirToDevice)
	if h == nil || h.Count != 102 || h.Log2.Counts[10] != 50 || h.Log2.Counts[1] != 50 || h.Log2.Counts[0] != 2 {
		t.Fatalf("merged clients: %+v", h)
	}
	for _, e := range s.Errors {
		if e.Kind != KindPass && e.Client != 0 {
			t.Errorf("per-client error with the split off: %+v", e)
		}
	}
	if s.Find(0, KindPass, 0, genl.DirToDevice) == nil {
		t.Error("passes missing")
	}
}

func TestBPFFilters(t *testing.T) {
	r := loadRunner(t, Options{FilterDev: true, DevIndex: 1, Unit: Microseconds})
	r.feed()
	s := r.snap()
	for _, h := range s.Hists {
		if h.Dev != 1 {
			t.Errorf("device filter let through %+v", h.Series)
		}
	}
	if len(s.Hists) != 2 || len(s.Errors) != 0 {
		t.Errorf("dev 1: %+v %+v", s.Hists, s.Errors)
	}

	r = loadRunner(t, Options{Client: 5, Unit: Microseconds})
	if !r.tr.Options().PerClient {
		t.Error("a client filter must key by client")
	}
	r.feed()
	s = r.snap()
	if len(s.Hists) != 2 || s.Find(0, KindClient, 5, genl.DirToDevice) == nil || s.Find(0, KindClient, 5, genl.DirToCPU) == nil {
		t.Errorf("client 5: %+v", s.Hists)
	}
	if len(s.Errors) != 2 {
		t.Errorf("client 5 errors: %+v", s.Errors)
	}
}

func TestBPFUnits(t *testing.T) {
	for _, c := range []struct {
		u    Unit
		slot int
	}{{Nanoseconds, 20}, {Microseconds, 10}, {Milliseconds, 0}} {
		r := loadRunner(t, Options{Unit: c.u, PerClient: true})
		r.clientSync(0, 3, genl.DirToDevice, 1_500_000, 0)
		s := r.snap()
		h := s.Find(0, KindClient, 3, genl.DirToDevice)
		if s.Unit != c.u || h == nil || len(h.Log2.Counts) != c.slot+1 || h.Log2.Counts[c.slot] != 1 {
			t.Errorf("%v: 1.5 ms landed in %+v, want slot %d", c.u, h, c.slot)
		}
	}
}

// TestBPFOpenBucket: the BPF side's slots past 31 (here 33 and 34, syncs
// of 10 and 20 s in ns) count in pkg/hist's open-ended last bucket.
func TestBPFOpenBucket(t *testing.T) {
	r := loadRunner(t, Options{Unit: Nanoseconds, PerClient: true})
	r.clientSync(0, 3, genl.DirToDevice, 10_000_000_000, 0)
	r.clientSync(0, 3, genl.DirToDevice, 20_000_000_000, 0)
	h := r.snap().Find(0, KindClient, 3, genl.DirToDevice)
	if h == nil || h.Count != 2 || len(h.Log2.Counts) != hist.Buckets || h.Log2.Counts[hist.Buckets-1] != 2 {
		t.Fatalf("10 s and 20 s landed in %+v, want 2 in bucket 31", h)
	}
}

// TestBPFManySeries: with --per-client, 520 clients whose syncs cover all
// 32 slots are 520 series; sm_hist holds a series per entry, so none is
// dropped (a map keyed by slot would need 16,640 entries).
func TestBPFManySeries(t *testing.T) {
	const clients = 520
	r := loadRunner(t, Options{Unit: Nanoseconds, PerClient: true})
	for c := uint32(1); c <= clients; c++ {
		for slot := range hist.Buckets {
			r.clientSync(0, c, genl.DirToDevice, 1<<slot, 0)
		}
	}
	s := r.snap()
	if s.Dropped != 0 || len(s.Hists) != clients {
		t.Fatalf("%d series, %d updates dropped; want %d series, none dropped", len(s.Hists), s.Dropped, clients)
	}
	for _, h := range s.Hists {
		if h.Count != hist.Buckets || len(h.Log2.Counts) != hist.Buckets {
			t.Fatalf("client %d: %d syncs in %d buckets, want %d in %d", h.Client, h.Count, len(h.Log2.Counts),
				hist.Buckets, hist.Buckets)
		}
	}
}

// TestBPFInbound: a record of direction 4 (inbound) lands in a series of
// its own, beside the other directions of the same client, and is named
// "inbound" in the report and the text.
func TestBPFInbound(t *testing.T) {
	r := loadRunner(t, Options{PerClient: true, Unit: Microseconds})
	r.clientSync(0, 3, genl.DirToDevice, 3_000, 0) // 3 us: slot 1
	for range 3 {
		r.clientSync(0, 3, genl.DirInbound, 1_500_000, 0) // 1500 us: slot 10
	}
	r.clientSync(0, 3, genl.DirInbound, 100, syscall.EOPNOTSUPP)
	r.syncEnd(0, "rxe0", 0, genl.DirInbound, 1, 2_000_000, syscall.EOPNOTSUPP) // a pass, 2000 us: slot 10
	s := r.snap()

	want := []struct {
		kind   Kind
		client uint32
		dir    genl.Direction
		count  uint64
		counts []uint64
	}{
		{KindPass, 0, genl.DirInbound, 1, []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{KindClient, 3, genl.DirToDevice, 1, []uint64{0, 1}},
		{KindClient, 3, genl.DirInbound, 4, []uint64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}},
	}
	if len(s.Hists) != len(want) {
		t.Fatalf("%d histograms, want %d: %+v", len(s.Hists), len(want), s.Hists)
	}
	for i, w := range want {
		h := s.Hists[i]
		if h.Dev != 0 || h.DevName != "rxe0" || h.Kind != w.kind || h.Client != w.client || h.Dir != w.dir ||
			h.Count != w.count || !slices.Equal(h.Log2.Counts, w.counts) {
			t.Errorf("histogram %d: %+v, want %+v", i, h, w)
		}
	}
	if h := s.Find(0, KindClient, 3, genl.DirInbound); h == nil || h.TotalNs != 3*1_500_000+100 {
		t.Errorf("inbound total ns: %+v", h)
	}
	wantErrs := []ErrorCount{
		{Series: Series{Dev: 0, DevName: "rxe0", Kind: KindPass, Dir: genl.DirInbound}, Errno: syscall.EOPNOTSUPP, Count: 1},
		{Series: Series{Dev: 0, DevName: "rxe0", Kind: KindClient, Client: 3, Dir: genl.DirInbound},
			Errno: syscall.EOPNOTSUPP, Count: 1},
	}
	if !slices.Equal(s.Errors, wantErrs) || s.Dropped != 0 {
		t.Errorf("errors %+v, dropped %d; want %+v, none dropped", s.Errors, s.Dropped, wantErrs)
	}

	rep := s.Report()
	if len(rep.Histograms) != 3 || rep.Histograms[0].Dir != "inbound" || rep.Histograms[0].Kind != "pass" ||
		rep.Histograms[1].Dir != "to-device" || rep.Histograms[2].Dir != "inbound" ||
		rep.Histograms[2].ID != 3 || rep.Histograms[2].Count != 4 {
		t.Errorf("report histograms: %+v", rep.Histograms)
	}
	if len(rep.Errors) != 2 || rep.Errors[1].Dir != "inbound" || rep.Errors[1].Err != "EOPNOTSUPP" ||
		rep.Errors[1].ID != 3 || rep.Errors[1].Count != 1 {
		t.Errorf("report errors: %+v", rep.Errors)
	}
	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"dev rxe0 pass dir inbound\n", "dev rxe0 id 3 dir inbound\n",
		"count 4, avg 1125 usecs, total 4500 usecs\nerrors: EOPNOTSUPP 1\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, b.String())
		}
	}
}
