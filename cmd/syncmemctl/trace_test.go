package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
	"github.com/syncmem/syncmem/pkg/trace"
)

// traceFake is a trace.Tracer stand-in returning canned cumulative
// snapshots, the last one forever; onSnap runs after each read.
type traceFake struct {
	snaps  []*trace.Snapshot
	reads  int
	closed int
	onSnap func(reads int)
}

func (f *traceFake) Snapshot() (*trace.Snapshot, error) {
	s := f.snaps[min(f.reads, len(f.snaps)-1)]
	f.reads++
	if f.onSnap != nil {
		f.onSnap(f.reads)
	}
	return s, nil
}

func (f *traceFake) Close() error { f.closed++; return nil }

type traceHarness struct {
	k      traceKernel
	fake   *traceFake
	opts   *trace.Options
	cancel context.CancelFunc
	ticks  chan time.Time
}

func newTraceHarness(snaps ...*trace.Snapshot) *traceHarness {
	h := &traceHarness{fake: &traceFake{snaps: snaps}, ticks: make(chan time.Time, 10)}
	h.k = traceKernel{
		check: func() error { return nil },
		resolve: func(name string) (uint32, error) {
			if name == "rxe0" {
				return 2, nil
			}
			return 0, fmt.Errorf("no such RDMA device %q (have: rxe0)", name)
		},
		start: func(o trace.Options) (traceSession, error) {
			h.opts = &o
			return h.fake, nil
		},
		now: func() time.Time { return time.Date(2025, 1, 2, 12, 0, 0, 0, time.UTC) },
		ticker: func(time.Duration) (<-chan time.Time, func()) {
			return h.ticks, func() {}
		},
		signals: func(ctx context.Context) (context.Context, func()) {
			ctx, h.cancel = context.WithCancel(ctx)
			return ctx, h.cancel
		},
	}
	return h
}

// run runs "syncmemctl trace args...", with the global flags.
func (h *traceHarness) run(args ...string) (string, error) {
	root := &cobra.Command{Use: "syncmemctl", SilenceUsage: true, SilenceErrors: true}
	out := &output{}
	out.addFlags(root)
	root.AddCommand(newTraceCmdWith(h.k, out))
	var stdout, errOut bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"trace"}, args...))
	err := root.ExecuteContext(context.Background())
	return stdout.String(), err
}

func traceSnap(count uint64, slots ...uint64) *trace.Snapshot {
	s := &trace.Snapshot{Unit: trace.Microseconds}
	if count > 0 {
		s.Hists = []trace.Hist{{
			Series: trace.Series{Dev: 2, DevName: "rxe0", Kind: trace.KindClient, Client: 3, Dir: genl.DirToDevice},
			Log2:   hist.Log2{Counts: slots}, Count: count, TotalNs: count * 2500,
		}}
	}
	return s
}

func TestTraceText(t *testing.T) {
	s := traceSnap(5, 0, 5)
	s.Errors = []trace.ErrorCount{{Series: s.Hists[0].Series, Errno: syscall.EIO, Count: 1}}
	h := newTraceHarness(s)
	out, err := h.run("-d", "1ms", "--per-client")
	if err != nil {
		t.Fatal(err)
	}
	want := `dev rxe0 id 3 dir to-device
     usecs               : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 5        |****************************************|
count 5, avg 2 usecs, total 12 usecs
errors: EIO 1
`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	if *h.opts != (trace.Options{PerClient: true, Unit: trace.Microseconds}) {
		t.Errorf("options %+v", *h.opts)
	}
	if h.fake.closed == 0 {
		t.Error("the tracer was not closed")
	}
}

func TestTraceIntervals(t *testing.T) {
	// Cumulative 2, then 5, then 5: the reports show 2, 3, and no final
	// one since nothing happened after the last tick.
	h := newTraceHarness(traceSnap(2, 0, 2), traceSnap(5, 0, 5), traceSnap(5, 0, 5))
	h.ticks <- time.Time{}
	h.ticks <- time.Time{}
	h.fake.onSnap = func(reads int) {
		if reads == 2 {
			h.cancel() // Ctrl-C after the second report
		}
	}
	out, err := h.run("-i", "1")
	if err != nil {
		t.Fatal(err)
	}
	want := `
12:00:00
dev rxe0 id 3 dir to-device
     usecs               : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 2        |****************************************|
count 2, avg 2 usecs, total 5 usecs

12:00:00
dev rxe0 id 3 dir to-device
     usecs               : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 3        |****************************************|
count 3, avg 2 usecs, total 7 usecs
`
	if out != want {
		t.Errorf("got:\n%q\nwant:\n%q", out, want)
	}
	if h.fake.reads != 3 {
		t.Errorf("%d snapshots read, want 3", h.fake.reads)
	}
}

func TestTraceJSON(t *testing.T) {
	h := newTraceHarness(traceSnap(5, 0, 5))
	out, err := h.run("-j", "-d", "1ms", "nsecs", "id", "3", "--dev", "rxe0")
	if err != nil {
		t.Fatal(err)
	}
	var r trace.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if len(r.Histograms) != 1 || r.Histograms[0].Dev != "rxe0" || r.Histograms[0].ID != 3 ||
		len(r.Histograms[0].Buckets) != 2 || !cmp.Equal(r.Histograms[0].Buckets[1], hist.JSONBucket{Slot: 1, Low: 2, High: new(uint64(3)), Count: 5}) ||
		r.Errors == nil {
		t.Errorf("report %+v", r)
	}
	want := trace.Options{FilterDev: true, DevIndex: 2, Client: 3, Unit: trace.Nanoseconds}
	if *h.opts != want {
		t.Errorf("options %+v, want %+v", *h.opts, want)
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("want one JSON line, got %q", out)
	}
}

func TestTraceEmpty(t *testing.T) {
	out, err := newTraceHarness(traceSnap(0)).run("-d", "1ms")
	if err != nil || out != "no syncs traced\n" {
		t.Errorf("got %q, %v", out, err)
	}
}

func TestTraceUnits(t *testing.T) {
	for args, want := range map[string]trace.Unit{
		"": trace.Microseconds, "-u": trace.Microseconds, "--usecs": trace.Microseconds,
		"-m": trace.Milliseconds, "--msecs": trace.Milliseconds,
		"-n": trace.Nanoseconds, "--nsecs": trace.Nanoseconds,
	} {
		h := newTraceHarness(traceSnap(0))
		a := []string{"-d", "1ms"}
		if args != "" {
			a = append(a, args)
		}
		if _, err := h.run(a...); err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if h.opts.Unit != want {
			t.Errorf("%q: unit %v, want %v", args, h.opts.Unit, want)
		}
	}
}

func TestTraceDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5": 5 * time.Second, "1.5": 1500 * time.Millisecond, "500ms": 500 * time.Millisecond, "2m": 2 * time.Minute,
	} {
		var d traceSeconds
		if err := d.Set(in); err != nil || time.Duration(d) != want {
			t.Errorf("%q: %v, %v; want %v", in, time.Duration(d), err, want)
		}
	}
	for _, in := range []string{"0", "-1", "soon", "-5ms"} {
		var d traceSeconds
		if err := d.Set(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestTraceBadFlags(t *testing.T) {
	cases := map[string][]string{
		`invalid --id "0": want a positive client id`:                                                                       {"--id", "0"},
		`invalid --id "x": want a positive client id`:                                                                       {"id", "x"},
		`trace follows one client at most: id ID`:                                                                           {"id", "3,4"},
		`--dev rxe9: no such RDMA device "rxe9" (have: rxe0)`:                                                               {"--dev", "rxe9"},
		`if any flags in the group [usecs msecs nsecs] are set none of the others can be; [msecs nsecs] were all set`:       {"-m", "-n"},
		`invalid argument "soon" for "-i, --interval" flag: want seconds or a duration such as 500ms or 2m`:                 {"-i", "soon"},
		`invalid argument "0" for "-d, --duration" flag: must be positive`:                                                  {"-d", "0"},
		`if any flags in the group [per-client passes] are set none of the others can be; [passes per-client] were all set`: {"passes", "per-client"},
		`passes traces no client: drop id ID, or passes`:                                                                    {"passes", "id", "3"},
		`syncmemctl trace: unknown keyword "x" (a device is named "dev x" or --dev x); keywords: dev, duration, id, ` +
			`interval, msecs, nsecs, passes, per-client, usecs`: {"x"},
	}
	for want, args := range cases {
		h := newTraceHarness(traceSnap(0))
		_, err := h.run(args...)
		if err == nil || err.Error() != want {
			t.Errorf("%v: got %v, want %q", args, err, want)
		}
		if h.opts != nil {
			t.Errorf("%v: the tracer was started", args)
		}
	}
}

func TestTraceKernelErrors(t *testing.T) {
	cases := []struct {
		check, start error
		want         string
	}{
		{genl.ErrNotLoaded, nil, "module ib_sync_mem is not loaded"},
		{&trace.TracepointError{Event: "client_sync"}, nil,
			"tracepoint ib_sync_mem:client_sync not found: wrong ib_sync_mem version?"},
		{nil, fmt.Errorf("loading BPF needs root (CAP_BPF and CAP_PERFMON): load BPF: map sm_hist: %w", syscall.EPERM),
			"loading BPF needs root (CAP_BPF and CAP_PERFMON): load BPF: map sm_hist: operation not permitted"},
		{nil, &trace.TracepointError{Event: "sync_end"},
			"tracepoint ib_sync_mem:sync_end not found: wrong ib_sync_mem version?"},
	}
	for _, c := range cases {
		h := newTraceHarness(traceSnap(0))
		h.k.check = func() error { return c.check }
		h.k.start = func(trace.Options) (traceSession, error) { return nil, c.start }
		// The module check comes before resolving --dev.
		h.k.resolve = func(string) (uint32, error) { return 0, fmt.Errorf("resolve called") }
		args := []string{"-d", "1ms"}
		if c.check != nil {
			args = append(args, "--dev", "rxe0")
		}
		_, err := h.run(args...)
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestTraceHelp(t *testing.T) {
	out, err := newTraceHarness(traceSnap(0)).run("--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Usage:", "Examples:", "syncmemctl trace interval 1 per-client",
		"--interval", "--duration", "--per-client", "--dev", "--id", "-u, --usecs",
		"-m, --msecs", "-n, --nsecs", "-j, --json", "CAP_BPF and CAP_PERFMON"} {
		if !strings.Contains(out, s) {
			t.Errorf("help lacks %q", s)
		}
	}
}

func TestTracePasses(t *testing.T) {
	for _, args := range [][]string{{"-d", "1ms", "--passes"}, {"duration", "1ms", "passes"}} {
		h := newTraceHarness(traceSnap(0))
		if _, err := h.run(args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if *h.opts != (trace.Options{Passes: true, Unit: trace.Microseconds}) {
			t.Errorf("%v: options %+v", args, *h.opts)
		}
	}
}
