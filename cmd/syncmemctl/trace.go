package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/trace"
)

// traceSession is what `trace` needs of a running *trace.Tracer; tests
// replace it.
type traceSession interface {
	Snapshot() (*trace.Snapshot, error)
	Close() error
}

// traceKernel is how `trace` reaches the kernel; tests replace it.
type traceKernel struct {
	check   func() error                                    // module and tracepoints present
	resolve func(name string) (uint32, error)               // device name to index
	start   func(trace.Options) (traceSession, error)       // load and attach
	now     func() time.Time                                // interval headers
	ticker  func(time.Duration) (<-chan time.Time, func())  // interval ticks
	signals func(context.Context) (context.Context, func()) // Ctrl-C
}

var realTraceKernel = traceKernel{
	check:   trace.CheckKernel,
	resolve: trace.DeviceIndex,
	start:   func(o trace.Options) (traceSession, error) { return trace.Start(o) },
	now:     time.Now,
	ticker: func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	},
	signals: func(ctx context.Context) (context.Context, func()) {
		return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	},
}

func newTraceCmd(out *output) *cobra.Command { return newTraceCmdWith(realTraceKernel, out) }

type traceFlags struct {
	interval, duration  traceSeconds
	perClient, passes   bool
	dev                 string
	ids                 []string
	usecs, msecs, nsecs bool
	out                 *output
}

func newTraceCmdWith(k traceKernel, out *output) *cobra.Command {
	f := traceFlags{out: out}
	cmd := verb(&cobra.Command{
		Use:   "trace [interval I] [duration D] [per-client|passes] [dev DEV] [id ID] [usecs|msecs|nsecs]",
		Short: "Show sync latency histograms, with eBPF",
		Long: `Trace ib_sync_mem syncs with eBPF and print log2 latency histograms, the way
funclatency and biolatency do, until Ctrl-C or --duration; with --interval,
print what happened in each interval.

The BPF programs attach to the module's tracepoints; nothing is rebuilt and
the module needs no option. Loading them needs root
(CAP_BPF and CAP_PERFMON). Everything is unloaded when the command ends;
until then ib_sync_mem cannot be unloaded (its tracepoints are in use).

Each device gets:

  dev DEV pass dir DIR        how long device-wide passes took (a pass syncs
                              every client of the device; tracepoint
                              ib_sync_mem:sync_end)
  dev DEV id ID dir DIR       how long one client's sync callback took
                              (ib_sync_mem:client_sync); "id all"
                              merges the clients unless per-client

Below each histogram: the count, average and total time, and the failures
by errno. "(refused before ->sync)" counts single-client syncs that failed
before the client was called (it was invalidated or unregistered).

passes keeps the pass histograms only: the client_sync program is not
attached, so a pass pays nothing per client for the tracer (the per-client
mode costs a BPF program run per client and, with the module parameter
client_timing=N, the clock read per client it brings back).

dev DEV restricts tracing to one RDMA device, id ID to one client (which
implies per-client and drops the pass histograms). Filtering happens in
the kernel. Units: -u microseconds (default), -m milliseconds, -n
nanoseconds; the row "2^k -> 2^(k+1)-1" counts the syncs that took that
long in the unit (the first row: 0 and 1), the last, "2147483648 -> inf",
every sync of 2^31 units or more: the buckets and the printer of "stats".

-j prints one JSON object per report: the raw buckets (slot, low, high,
count, bounds inclusive, in "unit"; the last bucket's high is null), the
bucket fields of "stats -j", and errors by errno, with the names of the
other commands (dev, dev_index, id, err).`,
		Example: `  syncmemctl trace                     # until Ctrl-C, all devices
  syncmemctl trace interval 1 per-client  # every second, one histogram per client
  syncmemctl trace -d 10s --dev rxe0 -m
  syncmemctl trace passes interval 1    # pass latency only, no per-client cost
  syncmemctl trace id 3 nsecs duration 5
  syncmemctl -j trace -d 30s | jq '.histograms[] | {id, count}'`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options()
			if err != nil {
				return err
			}
			if err := k.check(); err != nil {
				return err
			}
			if f.dev != "" {
				idx, err := k.resolve(f.dev)
				if err != nil {
					return fmt.Errorf("--dev %s: %w", f.dev, err)
				}
				opts.FilterDev, opts.DevIndex = true, idx
			}
			return traceRun(cmd, k, &f, opts)
		},
	})
	fl := cmd.Flags()
	fl.VarP(&f.interval, "interval", "i", "print a report every INTERVAL (seconds, or a duration: 500ms)")
	fl.VarP(&f.duration, "duration", "d", "stop after DURATION (default: at Ctrl-C)")
	fl.BoolVar(&f.perClient, "per-client", false, "one histogram per client instead of one per device")
	fl.BoolVar(&f.passes, "passes", false, "device-wide passes only: no per-client tracing cost")
	devFlag(cmd, &f.dev, "trace this RDMA device only", nil)
	idFlag(cmd, &f.ids, "trace this client only", nil)
	fl.BoolVarP(&f.usecs, "usecs", "u", false, "histograms in microseconds (default)")
	fl.BoolVarP(&f.msecs, "msecs", "m", false, "histograms in milliseconds")
	fl.BoolVarP(&f.nsecs, "nsecs", "n", false, "histograms in nanoseconds")
	cmd.MarkFlagsMutuallyExclusive("usecs", "msecs", "nsecs")
	cmd.MarkFlagsMutuallyExclusive("per-client", "passes")
	return cmd
}

// options checks the flags and turns them into trace.Options (but --dev,
// which needs the kernel).
func (f *traceFlags) options() (trace.Options, error) {
	o := trace.Options{PerClient: f.perClient, Passes: f.passes, Unit: trace.Microseconds}
	switch {
	case f.msecs:
		o.Unit = trace.Milliseconds
	case f.nsecs:
		o.Unit = trace.Nanoseconds
	}
	ids, err := parseIDs("id", f.ids)
	switch {
	case err != nil:
		return o, err
	case len(ids) > 1:
		return o, errors.New("trace follows one client at most: id ID")
	case len(ids) == 1 && f.passes:
		return o, errors.New("passes traces no client: drop id ID, or passes")
	case len(ids) == 1:
		o.Client = ids[0]
	}
	return o, nil
}

// traceRun traces until the duration ends or a signal comes, printing a
// report per interval and one at the end.
func traceRun(cmd *cobra.Command, k traceKernel, f *traceFlags, opts trace.Options) error {
	ctx, stop := k.signals(cmd.Context())
	defer stop()
	t, err := k.start(opts)
	if err != nil {
		return err
	}
	defer t.Close()
	// The duration counts from the moment the programs are attached, as
	// in bcc's tools: loading them is not part of what is traced.
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(f.duration))
		defer cancel()
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "Tracing ib_sync_mem syncs... Hit Ctrl-C to end.")

	w := cmd.OutOrStdout()
	var tick <-chan time.Time
	if f.interval > 0 {
		var stopTick func()
		tick, stopTick = k.ticker(time.Duration(f.interval))
		defer stopTick()
	}
	var prev *trace.Snapshot
	printed := false
	for {
		select {
		case <-tick:
			cur, err := t.Snapshot()
			if err != nil {
				return err
			}
			if err := tracePrint(w, k, f, cur.Sub(prev)); err != nil {
				return err
			}
			prev, printed = cur, true
		case <-ctx.Done():
			cur, err := t.Snapshot()
			if err != nil {
				return err
			}
			d := cur.Sub(prev)
			if printed && d.Empty() {
				return t.Close()
			}
			if err := tracePrint(w, k, f, d); err != nil {
				return err
			}
			return t.Close()
		}
	}
}

func tracePrint(w io.Writer, k traceKernel, f *traceFlags, s *trace.Snapshot) error {
	if f.out.isJSON() {
		return f.out.writeJSON(w, s)
	}
	if f.interval > 0 {
		if _, err := fmt.Fprintf(w, "\n%s\n", k.now().Format("15:04:05")); err != nil {
			return err
		}
	}
	return trace.WriteText(w, s)
}

// traceSeconds is a duration flag that also takes plain seconds, as the
// libbpf-tools do: "5" is 5s, "1.5" 1.5s, "500ms" half a second.
type traceSeconds time.Duration

func (d *traceSeconds) String() string {
	if *d == 0 {
		return "0"
	}
	return time.Duration(*d).String()
}

func (d *traceSeconds) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return fmt.Errorf("want seconds or a duration such as 500ms or 2m")
		}
		v = time.Duration(secs * float64(time.Second))
	}
	if v <= 0 {
		return fmt.Errorf("must be positive")
	}
	*d = traceSeconds(v)
	return nil
}

func (d *traceSeconds) Type() string { return "duration" }
