// Package exporter is syncmemctl's Prometheus collector of ib_sync_mem's
// statistics: at every scrape it asks the kernel, through pkg/genl, for
// the module's counters and histogram, each device's, and (opt-in,
// Options.PerClient) each client's. Nothing is cached: a scrape shows one
// consistent view or, with syncmem_up 0, nothing of the module.
package exporter

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
)

// Source is what a scrape asks: the subset of *genl.Conn it uses.
type Source interface {
	Devices(ctx context.Context) ([]genl.Device, error)
	Clients(ctx context.Context, f genl.ClientFilter) ([]genl.Client, error)
	Stats(ctx context.Context, r genl.StatsRequest) (*genl.Stats, error)
	Close() error
}

var _ Source = (*genl.Conn)(nil)

// Dialer opens the connection of one scrape; it is closed once the
// scrape's queries are done, so concurrent scrapes do not share one.
type Dialer func() (Source, error)

// Options of a Collector.
type Options struct {
	// PerClient adds the syncmem_client_* series: one CLIENT_GET dump and
	// a STATS_GET per client at every scrape.
	PerClient bool
	// ErrorLog, if not nil, gets the error of a failed scrape.
	ErrorLog promhttp.Logger
}

// Handler serves the kernel's statistics, queried through dial at every
// scrape, plus the exporter's own process and Go metrics.
func Handler(dial Dialer, o Options) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		NewCollector(dial, o),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      o.ErrorLog,
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// scrapeTimeout bounds the kernel queries of one scrape.
const scrapeTimeout = 30 * time.Second

// histBuckets is the number of finite buckets of the sync duration
// histograms: le = 2^1 .. 2^31 ns. The last of pkg/hist's buckets counts
// everything from 2^31 ns on, so it has no finite upper bound.
const histBuckets = hist.Buckets - 1

var (
	moduleLabels = []string(nil)
	deviceLabels = []string{"device"}
	clientLabels = []string{"device", "client_id", "client_name", "kind"}
)

// counterDescs are the counters and the histogram of one scope.
type counterDescs struct {
	syncs, errors, bytes, seconds, hist *prometheus.Desc
}

func newCounterDescs(prefix, what string, labels []string) counterDescs {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prefix+name, help+" "+what+".", labels, nil)
	}
	return counterDescs{
		syncs:   d("syncs_total", "Sync callbacks run, of"),
		errors:  d("errors_total", "Sync callbacks that failed, of"),
		bytes:   d("bytes_total", "Bytes made coherent, by"),
		seconds: d("sync_seconds_total", "Total time in sync callbacks, of"),
		hist:    d("sync_duration_seconds", "Time sync callbacks took (the kernel's log2 histogram), of"),
	}
}

// Collector asks the kernel for its statistics at every scrape: the
// module's and each device's, and with Options.PerClient each client's.
type Collector struct {
	dial      Dialer
	errLog    promhttp.Logger
	perClient bool

	up, clients, devClients, devPasses *prometheus.Desc
	module, device, client             counterDescs
}

// NewCollector returns a collector that scrapes through dial.
func NewCollector(dial Dialer, o Options) *Collector {
	return &Collector{
		dial:      dial,
		errLog:    o.ErrorLog,
		perClient: o.PerClient,
		up: prometheus.NewDesc("syncmem_up",
			"1 if the ib_sync_mem module answered the scrape, 0 if not (not loaded, or an error).", nil, nil),
		clients: prometheus.NewDesc("syncmem_clients",
			"Memory sync clients registered.", nil, nil),
		devClients: prometheus.NewDesc("syncmem_device_clients",
			"Memory sync clients registered on the device.", deviceLabels, nil),
		devPasses: prometheus.NewDesc("syncmem_device_passes_total",
			"Device-wide sync passes run on the device.", deviceLabels, nil),
		module: newCounterDescs("syncmem_", "all clients", moduleLabels),
		device: newCounterDescs("syncmem_device_", "the device's clients", deviceLabels),
		client: newCounterDescs("syncmem_client_", "the client", clientLabels),
	}
}

func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.clients, c.devClients, c.devPasses} {
		ch <- d
	}
	for _, s := range []counterDescs{c.module, c.device, c.client} {
		ch <- s.syncs
		ch <- s.errors
		ch <- s.bytes
		ch <- s.seconds
		ch <- s.hist
	}
}

// Collect queries the kernel over a connection of its own, so concurrent
// scrapes do not share one. Metrics are sent only once every query has
// succeeded: a scrape shows one consistent view or, with syncmem_up 0,
// nothing.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	var ms []prometheus.Metric
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	a, err := c.dial()
	if err == nil {
		ms, err = c.gather(ctx, a)
		a.Close()
	}
	up := 1.0
	if err != nil {
		up = 0
		if c.errLog != nil {
			c.errLog.Println(err)
		}
		ms = nil
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up)
	for _, m := range ms {
		ch <- m
	}
}

// gone reports an error of an object that went away between listing it
// and asking for its statistics: it is left out of the scrape.
func gone(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENODEV)
}

func (c *Collector) gather(ctx context.Context, a Source) ([]prometheus.Metric, error) {
	var ms []prometheus.Metric
	add := func(d counterDescs, s *genl.Stats, labels ...string) {
		ms = append(ms,
			prometheus.MustNewConstMetric(d.syncs, prometheus.CounterValue, float64(s.Syncs), labels...),
			prometheus.MustNewConstMetric(d.errors, prometheus.CounterValue, float64(s.Errors), labels...),
			prometheus.MustNewConstMetric(d.bytes, prometheus.CounterValue, float64(s.Bytes), labels...),
			prometheus.MustNewConstMetric(d.seconds, prometheus.CounterValue, s.Total.Seconds(), labels...),
			histogram(d.hist, s.Counters, labels...),
		)
	}

	mod, err := a.Stats(ctx, genl.StatsRequest{})
	if err != nil {
		return nil, err
	}
	ms = append(ms, prometheus.MustNewConstMetric(c.clients, prometheus.GaugeValue, float64(mod.Clients)))
	add(c.module, mod)

	devs, err := a.Devices(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		s, err := a.Stats(ctx, genl.StatsRequest{Device: d.Name})
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ms = append(ms,
			prometheus.MustNewConstMetric(c.devClients, prometheus.GaugeValue, float64(s.Clients), d.Name),
			prometheus.MustNewConstMetric(c.devPasses, prometheus.CounterValue, float64(d.Passes), d.Name))
		add(c.device, s, d.Name)
	}

	if !c.perClient {
		return ms, nil
	}
	cls, err := a.Clients(ctx, genl.ClientFilter{})
	if err != nil {
		return nil, err
	}
	for _, cl := range cls {
		s, err := a.Stats(ctx, genl.StatsRequest{Client: cl.ID})
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		add(c.client, s, cl.DevName, strconv.FormatUint(uint64(cl.ID), 10), cl.Name, cl.Kind.String())
	}
	return ms, nil
}

// histogram turns the kernel's log2 histogram into a Prometheus one.
// Bucket i of pkg/hist counts times t < 2^(i+1) ns (and at least 2^i), so
// the cumulative count up to it is the bucket le = 2^(i+1) ns; the last
// bucket, 2^31 ns and longer, is open-ended and counts only in +Inf.
// Every series has the same finite buckets, so that they aggregate. The
// count is the sum of the buckets, the sum the total time in sync
// callbacks.
func histogram(d *prometheus.Desc, s genl.Counters, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, histBuckets)
	var cum uint64
	for i := range histBuckets {
		if i < len(s.Hist.Counts) {
			cum += s.Hist.Counts[i]
		}
		_, hi, _ := hist.Bounds(i)
		buckets[float64(hi+1)/1e9] = cum
	}
	return prometheus.MustNewConstHistogram(d, s.Hist.Count(), s.Total.Seconds(), buckets, labels...)
}
