package exporter

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
	"golang.org/x/sys/unix"
)

// statsFake is a kernel with one device and two clients: it answers
// Stats per request, and fails the calls named in errs.
type statsFake struct {
	devices []genl.Device
	clients []genl.Client
	byReq   map[genl.StatsRequest]genl.Stats
	errs    map[string]error // by method name

	calls  []string
	reqs   []genl.StatsRequest
	closed bool
}

func (f *statsFake) call(name string) error {
	f.calls = append(f.calls, name)
	return f.errs[name]
}

func (f *statsFake) Devices(context.Context) ([]genl.Device, error) {
	return f.devices, f.call("Devices")
}

func (f *statsFake) Clients(context.Context, genl.ClientFilter) ([]genl.Client, error) {
	return f.clients, f.call("Clients")
}

func (f *statsFake) Close() error {
	f.closed = true
	return nil
}

func (f *statsFake) Stats(_ context.Context, r genl.StatsRequest) (*genl.Stats, error) {
	f.reqs = append(f.reqs, r)
	if err := f.call("Stats"); err != nil {
		return nil, err
	}
	s, ok := f.byReq[r]
	if !ok {
		return nil, &genl.Error{Op: "get stats", Errno: unix.ENOENT, Message: "no such client"}
	}
	return &s, nil
}

func newStatsFake() *statsFake {
	return &statsFake{
		devices: []genl.Device{{Index: 1, Name: "rxe0", Clients: 2, Passes: 4}},
		clients: []genl.Client{
			{ID: 3, Name: "gpu0", DevName: "rxe0", Kind: genl.KindSim},
			{ID: 7, Name: "gpu1", DevName: "rxe0", Kind: genl.KindSim},
		},
		byReq: map[genl.StatsRequest]genl.Stats{
			{}: {Counters: genl.Counters{Syncs: 6, Errors: 1, Total: 1500 * time.Microsecond,
				Bytes: 8192, Clients: 2, Hist: hist.Log2{Counts: []uint64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3}}}},
			{Device: "rxe0"}: {DevIndex: 1, DevName: "rxe0", Counters: genl.Counters{Syncs: 6, Errors: 1,
				Total: 1500 * time.Microsecond, Bytes: 8192, Clients: 2,
				Hist: hist.Log2{Counts: []uint64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3}}}},
			{Client: 3}: {ClientID: 3, DevIndex: 1, DevName: "rxe0", Counters: genl.Counters{Syncs: 5,
				Errors: 1, Total: 1500 * time.Microsecond, Bytes: 4096,
				Hist: hist.Log2{Counts: []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3}}}},
			// Bucket 31 counts 2^31 ns and longer: only in +Inf.
			{Client: 7}: {ClientID: 7, DevIndex: 1, DevName: "rxe0", Counters: genl.Counters{Syncs: 2,
				Total: 3 * time.Second, Bytes: 4096, Hist: hist.Log2{Counts: append(make([]uint64, 31), 1)}}},
		},
	}
}

func fakeDial(s Source) Dialer { return func() (Source, error) { return s, nil } }

var quiet = log.New(io.Discard, "", 0)

// gather runs one scrape of the collector.
func gather(t *testing.T, dial Dialer) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(dial, Options{ErrorLog: quiet, PerClient: true}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func TestExporterCounters(t *testing.T) {
	f := newStatsFake()
	want := `
# HELP syncmem_up 1 if the ib_sync_mem module answered the scrape, 0 if not (not loaded, or an error).
# TYPE syncmem_up gauge
syncmem_up 1
# HELP syncmem_clients Memory sync clients registered.
# TYPE syncmem_clients gauge
syncmem_clients 2
# HELP syncmem_syncs_total Sync callbacks run, of all clients.
# TYPE syncmem_syncs_total counter
syncmem_syncs_total 6
# HELP syncmem_errors_total Sync callbacks that failed, of all clients.
# TYPE syncmem_errors_total counter
syncmem_errors_total 1
# HELP syncmem_bytes_total Bytes made coherent, by all clients.
# TYPE syncmem_bytes_total counter
syncmem_bytes_total 8192
# HELP syncmem_sync_seconds_total Total time in sync callbacks, of all clients.
# TYPE syncmem_sync_seconds_total counter
syncmem_sync_seconds_total 0.0015
# HELP syncmem_device_clients Memory sync clients registered on the device.
# TYPE syncmem_device_clients gauge
syncmem_device_clients{device="rxe0"} 2
# HELP syncmem_device_passes_total Device-wide sync passes run on the device.
# TYPE syncmem_device_passes_total counter
syncmem_device_passes_total{device="rxe0"} 4
# HELP syncmem_device_syncs_total Sync callbacks run, of the device's clients.
# TYPE syncmem_device_syncs_total counter
syncmem_device_syncs_total{device="rxe0"} 6
# HELP syncmem_client_syncs_total Sync callbacks run, of the client.
# TYPE syncmem_client_syncs_total counter
syncmem_client_syncs_total{client_id="3",client_name="gpu0",device="rxe0",kind="sim"} 5
syncmem_client_syncs_total{client_id="7",client_name="gpu1",device="rxe0",kind="sim"} 2
# HELP syncmem_client_errors_total Sync callbacks that failed, of the client.
# TYPE syncmem_client_errors_total counter
syncmem_client_errors_total{client_id="3",client_name="gpu0",device="rxe0",kind="sim"} 1
syncmem_client_errors_total{client_id="7",client_name="gpu1",device="rxe0",kind="sim"} 0
# HELP syncmem_client_bytes_total Bytes made coherent, by the client.
# TYPE syncmem_client_bytes_total counter
syncmem_client_bytes_total{client_id="3",client_name="gpu0",device="rxe0",kind="sim"} 4096
syncmem_client_bytes_total{client_id="7",client_name="gpu1",device="rxe0",kind="sim"} 4096
# HELP syncmem_client_sync_seconds_total Total time in sync callbacks, of the client.
# TYPE syncmem_client_sync_seconds_total counter
syncmem_client_sync_seconds_total{client_id="3",client_name="gpu0",device="rxe0",kind="sim"} 0.0015
syncmem_client_sync_seconds_total{client_id="7",client_name="gpu1",device="rxe0",kind="sim"} 3
`
	c := NewCollector(fakeDial(f), Options{ErrorLog: quiet, PerClient: true})
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"syncmem_up", "syncmem_clients", "syncmem_syncs_total", "syncmem_errors_total",
		"syncmem_bytes_total", "syncmem_sync_seconds_total", "syncmem_device_clients",
		"syncmem_device_passes_total", "syncmem_device_syncs_total", "syncmem_client_syncs_total",
		"syncmem_client_errors_total", "syncmem_client_bytes_total",
		"syncmem_client_sync_seconds_total"); err != nil {
		t.Error(err)
	}
	if !f.closed {
		t.Error("connection not closed after the scrape")
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func TestExporterHistogram(t *testing.T) {
	mfs := gather(t, fakeDial(newStatsFake()))
	mf := mfs["syncmem_client_sync_duration_seconds"]
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("no client histogram: %v", mf)
	}
	byID := map[string]*dto.Histogram{}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "client_id" {
				byID[l.GetValue()] = m.GetHistogram()
			}
		}
	}
	h := byID["3"]
	if h == nil {
		t.Fatal("no histogram of client 3")
	}
	if h.GetSampleCount() != 5 || h.GetSampleSum() != 0.0015 {
		t.Errorf("client 3: count %d sum %v, want 5 and 0.0015", h.GetSampleCount(), h.GetSampleSum())
	}
	bs := h.GetBucket()
	if len(bs) != histBuckets {
		t.Fatalf("client 3: %d buckets, want %d", len(bs), histBuckets)
	}
	for i, b := range bs {
		if want := float64(uint64(1)<<(i+1)) / 1e9; b.GetUpperBound() != want {
			t.Errorf("bucket %d: le %v, want 2^%d ns = %v", i, b.GetUpperBound(), i+1, want)
		}
		// Bucket 11 (2048..4095 ns) holds 2, bucket 18 (262144..524287 ns) 3.
		want := uint64(0)
		switch {
		case i >= 18:
			want = 5
		case i >= 11:
			want = 2
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("client 3 bucket le=2^%d ns: %d, want %d", i+1, b.GetCumulativeCount(), want)
		}
	}
	// Bucket 31 (2^31 ns and longer) has no finite bound: only the count sees it.
	h = byID["7"]
	if h.GetSampleCount() != 1 || h.GetBucket()[histBuckets-1].GetCumulativeCount() != 0 {
		t.Errorf("client 7: count %d, last finite bucket %d; want 1 and 0",
			h.GetSampleCount(), h.GetBucket()[histBuckets-1].GetCumulativeCount())
	}
	for _, name := range []string{"syncmem_sync_duration_seconds", "syncmem_device_sync_duration_seconds"} {
		mf := mfs[name]
		if mf == nil || len(mf.GetMetric()) != 1 || mf.GetMetric()[0].GetHistogram().GetSampleCount() != 6 {
			t.Errorf("%s: want one histogram of 6 samples, got %v", name, mf)
		}
	}
}

// TestExporterPerClientOptIn: without per-client a scrape asks for the
// module's and the devices' statistics only, whatever the number of
// clients, and has no client series; the module and device series stay.
func TestExporterPerClientOptIn(t *testing.T) {
	f := newStatsFake()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(fakeDial(f), Options{ErrorLog: quiet, PerClient: false}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
		if strings.HasPrefix(mf.GetName(), "syncmem_client_") {
			t.Errorf("client series %s without per-client", mf.GetName())
		}
	}
	for _, n := range []string{"syncmem_up", "syncmem_clients", "syncmem_syncs_total",
		"syncmem_sync_duration_seconds", "syncmem_device_syncs_total", "syncmem_device_sync_duration_seconds"} {
		if !names[n] {
			t.Errorf("no %s", n)
		}
	}
	if slices.Contains(f.calls, "Clients") || !cmp.Equal(f.reqs, []genl.StatsRequest{{}, {Device: "rxe0"}}) {
		t.Errorf("calls %v, stats requests %v; want no Clients, the module's and rxe0's stats", f.calls, f.reqs)
	}
}

// A client that goes away between the list and its statistics is left
// out; the scrape still succeeds.
func TestExporterClientGone(t *testing.T) {
	f := newStatsFake()
	delete(f.byReq, genl.StatsRequest{Client: 7})
	mfs := gather(t, fakeDial(f))
	if got := mfs["syncmem_up"].GetMetric()[0].GetGauge().GetValue(); got != 1 {
		t.Errorf("syncmem_up %v, want 1", got)
	}
	if n := len(mfs["syncmem_client_syncs_total"].GetMetric()); n != 1 {
		t.Errorf("%d client series, want 1", n)
	}
}

// When the module is not loaded or a query fails, the scrape has
// syncmem_up 0 and nothing else of the module.
func TestExporterDown(t *testing.T) {
	notLoaded := func() (Source, error) { return nil, errors.New("module ib_sync_mem is not loaded") }
	f := newStatsFake()
	f.errs = map[string]error{"Clients": &genl.Error{Op: "dump clients", Errno: unix.EPERM}}
	for name, dial := range map[string]Dialer{"not loaded": notLoaded, "query fails": fakeDial(f)} {
		mfs := gather(t, dial)
		if len(mfs) != 1 || mfs["syncmem_up"].GetMetric()[0].GetGauge().GetValue() != 0 {
			t.Errorf("%s: want only syncmem_up 0, got %v", name, mfs)
		}
	}
}

func TestExporterHTTP(t *testing.T) {
	srv := httptest.NewServer(Handler(fakeDial(newStatsFake()), Options{ErrorLog: quiet, PerClient: true}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	for _, want := range []string{
		`syncmem_client_syncs_total{client_id="3",client_name="gpu0",device="rxe0",kind="sim"} 5`,
		`syncmem_client_sync_duration_seconds_bucket{client_id="3",client_name="gpu0",device="rxe0",kind="sim",le="0.000524288"} 5`,
		"go_goroutines ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("scrape lacks %q:\n%s", want, body)
		}
	}
}
