package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
)

const (
	defaultListen      = "127.0.0.1:9710"
	defaultMetricsPath = "/metrics"
)

func newExporterCmd(dial dialer) *cobra.Command {
	var (
		listen, path string
		perClient    bool
	)
	cmd := verb(&cobra.Command{
		Use:   "exporter [listen ADDR] [path /metrics] [per-client]",
		Short: "Serve the module's statistics as Prometheus metrics",
		Long: `Serve ib_sync_mem's statistics over HTTP in the Prometheus exposition
format. Every scrape asks the kernel afresh (STATS_GET for the module and
each device, and with per-client for each client), so the numbers are
those of ` + "`syncmemctl stats`" + ` at that moment; nothing is cached. Open to every
user.

Metrics, with the labels to aggregate on:

  syncmem_up                              1 if the module answered the scrape
  syncmem_clients                         clients registered (module)
  syncmem_syncs_total, _errors_total, _bytes_total, _sync_seconds_total,
  syncmem_sync_duration_seconds           the module's counters and histogram
  syncmem_device_*                        the same per device {device}, plus
                                          syncmem_device_clients and
                                          syncmem_device_passes_total
  syncmem_client_*                        the same per client {device,
                                          client_id, client_name, kind},
                                          only with per-client: a scrape
                                          then costs a request per client

The *_sync_duration_seconds histograms are the kernel's log2 histograms of
sync callback times, the buckets of "stats": le=2^i ns (in seconds) for
i = 1..31; the last bucket, 2^31 ns and longer, counts only in +Inf. Do not sum
device or client series with the module's: they count the same syncs.

It prints "serving metrics on http://ADDR/PATH" on stderr once listening,
and runs until interrupted.`,
		Example: `  syncmemctl exporter
  syncmemctl exporter listen :9710 path /metrics
  syncmemctl exporter per-client
  curl -s 127.0.0.1:9710/metrics | grep ^syncmem_client_syncs_total`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !strings.HasPrefix(path, "/") {
				return badFlag("path", path, "must start with /")
			}
			if _, _, err := net.SplitHostPort(listen); err != nil {
				return badFlag("listen", listen, "%v", err)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			return serveMetrics(cmd.Context(), ln, path, dial, perClient, cmd)
		},
	})
	cmd.Flags().StringVar(&listen, "listen", defaultListen, "address to listen on, host:port")
	cmd.Flags().StringVar(&path, "path", defaultMetricsPath, "URL path of the metrics")
	cmd.Flags().BoolVar(&perClient, "per-client", false, "also the series of every client (a request per client and scrape)")
	return cmd
}

// metricsHandler serves the kernel's statistics, queried through dial at
// every scrape, plus the exporter's own process and Go metrics.
func metricsHandler(dial dialer, errLog promhttp.Logger, perClient bool) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		newSyncmemCollector(dial, errLog, perClient),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      errLog,
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// serveMetrics serves on ln until ctx is done.
func serveMetrics(ctx context.Context, ln net.Listener, path string, dial dialer, perClient bool, cmd *cobra.Command) error {
	errLog := log.New(cmd.ErrOrStderr(), "exporter: ", 0)
	mux := http.NewServeMux()
	mux.Handle(path, metricsHandler(dial, errLog, perClient))
	if path != "/" {
		mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "syncmemctl exporter: metrics at <a href=%q>%s</a>\n", path, path)
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog}
	fmt.Fprintf(cmd.ErrOrStderr(), "serving metrics on http://%s%s\n", ln.Addr(), path)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
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

// syncmemCollector asks the kernel for its statistics at every scrape:
// the module's and each device's, and with perClient each client's.
type syncmemCollector struct {
	dial      dialer
	errLog    promhttp.Logger
	perClient bool

	up, clients, devClients, devPasses *prometheus.Desc
	module, device, client             counterDescs
}

func newSyncmemCollector(dial dialer, errLog promhttp.Logger, perClient bool) *syncmemCollector {
	return &syncmemCollector{
		dial:      dial,
		errLog:    errLog,
		perClient: perClient,
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

func (c *syncmemCollector) Describe(ch chan<- *prometheus.Desc) {
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
func (c *syncmemCollector) Collect(ch chan<- prometheus.Metric) {
	var ms []prometheus.Metric
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	err := withConn(c.dial, func(a api) error {
		var err error
		ms, err = c.gather(ctx, a)
		return err
	})
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

func (c *syncmemCollector) gather(ctx context.Context, a api) ([]prometheus.Metric, error) {
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
	cls, err := a.Clients(ctx, "")
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
