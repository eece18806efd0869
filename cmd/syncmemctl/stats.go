package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
)

func newStatsCmd(dial dialer) *cobra.Command {
	var (
		out    output
		dev    string
		client string
	)
	cmd := &cobra.Command{
		Use:   "stats [--dev DEV | --client ID]",
		Short: "Show sync counters and a histogram of sync times",
		Long: `Show the sync counters of the whole module, of one device (--dev) or of one
client (--client): syncs run, failures, bytes made coherent, total and
longest time, and a log2 histogram of the time sync callbacks took, in the
layout of the libbpf-tools. The histogram counts in nanoseconds when the
syncs are short and in microseconds (1 usec = 1000 ns) past 8 us.

For a client it also shows what "list" does: its kind, its state (live, or
invalidated and why), the bytes behind it, the pages it keeps pinned (region
clients) and the result of its last sync, as an errno name.`,
		Example: `  syncmemctl stats
  syncmemctl stats --dev rxe0
  syncmemctl stats --client 3 -j | jq .syncs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if changed(cmd, "dev") && changed(cmd, "client") {
				return errors.New("give --dev or --client, not both")
			}
			req := genl.StatsRequest{Device: dev}
			if changed(cmd, "client") {
				id, err := parseID("client", client)
				if err != nil {
					return err
				}
				req.Client = id
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
				return printStats(cmd.OutOrStdout(), &out, req, s, cl)
			})
		},
	}
	cmd.Flags().StringVar(&dev, "dev", "", "counters of this device")
	cmd.Flags().StringVar(&client, "client", "", "counters of this client")
	_ = cmd.RegisterFlagCompletionFunc("dev", completeDevices(dial))
	_ = cmd.RegisterFlagCompletionFunc("client", completeClients(dial))
	out.addFlags(cmd)
	return cmd
}

type jsonStats struct {
	Scope    string `json:"scope"`
	ClientID uint32 `json:"client_id,omitempty"`
	Dev      string `json:"dev,omitempty"`
	DevIndex uint32 `json:"dev_index,omitempty"`
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
	LastErrno   uint32  `json:"last_errno"`
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
		j := jsonStats{Scope: scope, ClientID: s.ClientID, Dev: s.DevName, DevIndex: s.DevIndex,
			jsonCounters: counters(s.Counters)}
		if scope != "client" {
			j.Clients = &s.Clients
		}
		if cl != nil {
			j.Dev, j.DevIndex = cl.DevName, cl.DevIndex
			j.jsonClientState = &jsonClientState{
				Name: cl.Name, Kind: cl.Kind.String(), State: cl.State.String(), Size: cl.Size,
				PinnedPages: pinnedPages(*cl), LastErrno: uint32(cl.LastErr), LastErr: jsonErrno(cl.LastErr),
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
		t.row("client", fmt.Sprint(s.ClientID))
		if cl != nil {
			t.row("name", cl.Name)
			t.row("device", cl.DevName)
			t.row("kind", cl.Kind.String())
			t.row("state", state(*cl))
			t.row("size", fmt.Sprintf("%d (%s)", cl.Size, size(cl.Size)))
			t.row("pinned pages", pinned(*cl))
			t.row("last error", errnoName(cl.LastErr))
		}
	case "device":
		t.row("device", s.DevName)
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
	if len(s.Hist) > 0 {
		fmt.Fprintln(w)
		printHist(w, s.Hist)
	}
	return nil
}

// usecsFrom is the first slot that makes the histogram count in
// microseconds: syncs of 8 us or more.
const usecsFrom = 14

// usecsFirst is the last slot under a microsecond; slots 0 to usecsFirst
// make the first row of a histogram in microseconds.
const usecsFirst = 10

// printHist prints a log2 histogram of nanosecond slots like the
// libbpf-tools' print_log2_hist, in nsecs or usecs.
func printHist(w io.Writer, hist []uint64) {
	last := len(hist) - 1
	for last > 0 && hist[last] == 0 {
		last--
	}
	type row struct{ lo, hi, n uint64 }
	var rows []row
	unit := "nsecs"
	if last >= usecsFrom {
		unit = "usecs"
		var first uint64
		for i := 0; i <= usecsFirst && i < len(hist); i++ {
			first += hist[i]
		}
		_, hi := genl.HistSlotRange(usecsFirst)
		rows = append(rows, row{0, hi / 1000, first})
		for i := usecsFirst + 1; i <= last; i++ {
			lo, hi := genl.HistSlotRange(i)
			rows = append(rows, row{lo / 1000, hi / 1000, hist[i]})
		}
	} else {
		for i := 0; i <= last; i++ {
			lo, hi := genl.HistSlotRange(i)
			rows = append(rows, row{lo, hi, hist[i]})
		}
	}
	var most uint64
	for _, r := range rows {
		most = max(most, r.n)
	}
	const width = 40
	fmt.Fprintf(w, "%5s%-19s : count    distribution\n", "", unit)
	for _, r := range rows {
		stars := 0
		if most > 0 {
			stars = int(float64(r.n) * width / float64(most))
		}
		fmt.Fprintf(w, "%10d -> %-10d : %-8d |%-*s|\n", r.lo, r.hi, r.n, width, strings.Repeat("*", stars))
	}
}
