package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/exporter"
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

// serveMetrics serves on ln until ctx is done.
func serveMetrics(ctx context.Context, ln net.Listener, path string, dial dialer, perClient bool, cmd *cobra.Command) error {
	errLog := log.New(cmd.ErrOrStderr(), "exporter: ", 0)
	mux := http.NewServeMux()
	mux.Handle(path, exporter.Handler(func() (exporter.Source, error) { return dial() },
		exporter.Options{PerClient: perClient, ErrorLog: errLog}))
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
