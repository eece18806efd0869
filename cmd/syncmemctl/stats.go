package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
)

func newStatsCmd(dial dialer, out *output) *cobra.Command {
	var (
		dev string
		ids []string
	)
	cmd := verb(&cobra.Command{
		Use:   "stats [dev DEV | id ID]",
		Short: "Show sync counters and a histogram of sync times",
		Long: `Show the sync counters of the whole module, of one device (dev DEV) or of
one client (id ID): syncs run, failures, bytes made coherent, total and
longest time, and a log2 histogram of the time sync callbacks took, in
nanoseconds, in the layout of the libbpf-tools and with the buckets of
"trace" (the last one, 2147483648 -> inf, open-ended). The times count
only syncs made while the module parameter client_timing is on (the
default; /sys/module/ib_sync_mem/parameters/client_timing): with it off
the registry reads no clock per client, and device syncs report each
client's time as 0.

For a client it also shows what "list" does: its kind, its state (live, or
invalidated and why), the bytes behind it, the pages it keeps pinned (region
clients) and the result of its last sync, as an errno name.`,
		Example: `  syncmemctl stats
  syncmemctl stats dev rxe0
  syncmemctl -j stats id 3 | jq .syncs`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := parseIDs("id", ids)
			if err != nil {
				return err
			}
			switch {
			case len(list) > 1:
				return errors.New("stats are of one client: id ID")
			case dev != "" && len(list) > 0:
				return errors.New("give dev or id, not both")
			}
			req := genl.StatsRequest{Device: dev}
			if len(list) == 1 {
				req.Client = list[0]
			}
			return withConn(dial, func(c api) error {
				s, err := c.Stats(cmd.Context(), req)
				if err != nil {
					return err
				}
				var cl *genl.Client
				if req.Client != 0 {
					if cl, err = c.Client(cmd.Context(), req.Client); err != nil {
						return err
					}
				}
				return printStats(cmd.OutOrStdout(), out, req, s, cl)
			})
		},
	})
	devFlag(cmd, &dev, "counters of this device", dial)
	idFlag(cmd, &ids, "counters of this client", dial)
	return cmd
}

type jsonStats struct {
	Scope    string  `json:"scope"` // module, device or client
	ID       uint32  `json:"id,omitempty"`
	Dev      string  `json:"dev,omitempty"`
	DevIndex *uint32 `json:"dev_index,omitempty"` // with dev: index 0 is a device
	*jsonClientState
	jsonCounters
}

// jsonClientState describes the client of client-scope statistics, with
// the names of "list -j".
type jsonClientState struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	State       string  `json:"state"`
	InvalReason string  `json:"inval_reason,omitempty"`
	Size        uint64  `json:"size"`
	PinnedPages *uint32 `json:"pinned_pages,omitempty"` // region clients, even 0
	LastErr     string  `json:"last_err,omitempty"`
}

// printStats prints the counters s, and for a client, cl's description.
func printStats(w io.Writer, out *output, req genl.StatsRequest, s *genl.Stats, cl *genl.Client) error {
	scope := "module"
	switch {
	case req.Client != 0:
		scope = "client"
	case req.Device != "":
		scope = "device"
	}
	if out.isJSON() {
		j := jsonStats{Scope: scope, ID: s.ClientID, Dev: s.DevName, jsonCounters: counters(s.Counters)}
		if s.DevName != "" {
			j.DevIndex = &s.DevIndex
		}
		h := s.Hist.JSON() // always there, empty or not: the shape stays
		j.Hist = &h
		if scope != "client" {
			j.Clients = &s.Clients
		}
		if cl != nil {
			j.Dev, j.DevIndex = cl.DevName, &cl.DevIndex
			j.jsonClientState = &jsonClientState{
				Name: cl.Name, Kind: cl.Kind.String(), State: cl.State.String(), Size: cl.Size,
				PinnedPages: pinnedPages(*cl), LastErr: jsonErrno(cl.LastErr),
			}
			if cl.InvalReason != 0 {
				j.InvalReason = cl.InvalReason.String()
			}
		}
		return out.writeJSON(w, j)
	}
	t := newTable(w, "scope", scope)
	switch scope {
	case "client":
		t.row("id", fmt.Sprint(s.ClientID))
		if cl != nil {
			t.row("name", cl.Name)
			t.row("dev", cl.DevName)
			t.row("kind", cl.Kind.String())
			t.row("state", state(*cl))
			t.row("size", fmt.Sprintf("%d (%s)", cl.Size, size(cl.Size)))
			t.row("pinned pages", pinned(*cl))
			t.row("last error", errnoName(cl.LastErr))
		}
	case "device":
		t.row("dev", s.DevName)
		t.row("clients", fmt.Sprint(s.Clients))
	default:
		t.row("clients", fmt.Sprint(s.Clients))
	}
	t.row("syncs", fmt.Sprint(s.Syncs))
	t.row("errors", fmt.Sprint(s.Errors))
	t.row("bytes", fmt.Sprintf("%d (%s)", s.Bytes, size(s.Bytes)))
	t.row("total time", duration(s.Total))
	t.row("max time", duration(s.Max))
	if err := t.flush(); err != nil {
		return err
	}
	if h := s.Hist.Trim(); len(h.Counts) > 0 {
		fmt.Fprintln(w)
		return hist.WriteText(w, h)
	}
	return nil
}
