package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
)

func newSyncCmd(dial dialer, out *output) *cobra.Command {
	var (
		dev     string
		owner   string
		ids     []string
		dir     string
		timeout time.Duration
	)
	cmd := verb(&cobra.Command{
		Use:   "sync (dev DEV [owner OWNER] | id ID[,ID...]) [dir DIR] [timeout D]",
		Short: "Sync a device's clients, one client or a batch",
		Long: `Make memory coherent for the side that uses it next: every client of a
device in one device-wide pass (dev DEV), or only one owner's clients of it
(dev DEV owner OWNER, a pass of their own), one client, or a batch of
clients in the order given (id ID, repeated or comma-separated; at most
2048, an id may repeat). Needs CAP_NET_ADMIN.

dir is to-device (the default: the CPU wrote, the device reads next),
to-cpu (the device wrote, the CPU reads next), bidirectional (both) or
inbound (the NIC wrote, by RDMA; the accelerator or the CPU reads next: a
client that cannot make the NIC's writes visible there fails with
EOPNOTSUPP; bidirectional does not include it). timeout bounds each
client's waits, in whole milliseconds; without it the module's
sync_timeout_ms applies.

Prints the totals and each client's result: its id, "ok" or the errno name
(EIO, ETIMEDOUT...), and the time its sync took. The command fails when a
client's sync failed, after printing the results.`,
		Example: `  syncmemctl sync dev rxe0
  syncmemctl sync dev rxe0 owner sim
  syncmemctl sync id 3 dir to-cpu
  syncmemctl sync id 3 dir inbound
  syncmemctl sync id 3,4 timeout 500ms
  syncmemctl sync --dev rxe0 --dir bidirectional
  syncmemctl -j sync dev rxe0 | jq '.results[] | select(.err)'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (dev == "") == (len(ids) == 0) {
				return errors.New("name one target: dev DEV, or id ID[,ID...]")
			}
			if owner != "" && dev == "" {
				return errors.New("owner selects clients of a device: give dev DEV too")
			}
			req := genl.SyncRequest{Device: dev, Owner: owner}
			var err error
			if req.Clients, err = parseIDs("id", ids); err != nil {
				return err
			}
			if req.Dir, err = genl.ParseDirection(dir); err != nil {
				return badFlag("dir", dir, "want %s", genl.DirectionNames())
			}
			if changed(cmd, "timeout") {
				if err := wholeDuration("timeout", timeout, time.Millisecond, "milliseconds"); err != nil {
					return err
				}
				req.Timeout = new(timeout)
			}
			return withConn(dial, func(c api) error {
				res, err := c.Sync(cmd.Context(), req)
				if err != nil {
					return err
				}
				if err := printSync(cmd.OutOrStdout(), out, req, res); err != nil {
					return err
				}
				if failed, of := syncFailures(res); failed != 0 {
					return fmt.Errorf("sync: %d of %d clients failed, the first with %s",
						failed, of, errnoName(res.Err))
				}
				return nil
			})
		},
	})
	devFlag(cmd, &dev, "sync every client of this device", dial)
	ownerFlag(cmd, &owner, "with dev: sync only this owner's clients of the device", dial)
	idFlag(cmd, &ids, "sync these clients, in this order", dial)
	f := cmd.Flags()
	f.StringVar(&dir, "dir", genl.DirToDevice.String(), "direction: "+genl.DirectionNames())
	f.DurationVar(&timeout, "timeout", 0, "bound on each client's waits (default: the module's sync_timeout_ms)")
	var dirs []string
	for _, d := range genl.Directions() {
		dirs = append(dirs, d.String())
	}
	_ = cmd.RegisterFlagCompletionFunc("dir", cobra.FixedCompletions(dirs, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// syncFailures counts the clients of a sync that failed, of how many it
// reports: its per-client results, where an entry that did not run (an
// invalidated client in a batch) fails too; without results, its totals.
func syncFailures(res *genl.SyncResult) (failed, of int) {
	if len(res.Results) == 0 {
		if res.Err != 0 && res.Errors == 0 {
			return 1, int(res.Run)
		}
		return int(res.Errors), int(res.Run)
	}
	for _, r := range res.Results {
		if r.Err != 0 {
			failed++
		}
	}
	return failed, len(res.Results)
}

type jsonSync struct {
	Dir     string       `json:"dir"`
	Err     string       `json:"err,omitempty"` // the first client error
	Run     uint32       `json:"run"`
	Errors  uint32       `json:"errors"`
	Skipped uint32       `json:"skipped"`
	TimeNS  int64        `json:"time_ns"`
	Results []jsonResult `json:"results"`
}

type jsonResult struct {
	ID     uint32 `json:"id"`
	Err    string `json:"err,omitempty"`
	TimeNS int64  `json:"time_ns"`
}

func printSync(w io.Writer, out *output, req genl.SyncRequest, res *genl.SyncResult) error {
	if out.isJSON() {
		j := jsonSync{
			Dir: req.Dir.String(), Err: jsonErrno(res.Err), Run: res.Run,
			Errors: res.Errors, Skipped: res.Skipped, TimeNS: int64(res.Duration),
			Results: []jsonResult{},
		}
		for _, r := range res.Results {
			j.Results = append(j.Results, jsonResult{
				ID: r.ID, Err: jsonErrno(r.Err), TimeNS: int64(r.Duration),
			})
		}
		return out.writeJSON(w, j)
	}
	target := "dev " + req.Device
	if req.Device == "" {
		ids := make([]string, len(req.Clients))
		for i, id := range req.Clients {
			ids[i] = fmt.Sprint(id)
		}
		target = "id " + strings.Join(ids, ",")
	}
	fmt.Fprintf(w, "sync %s %s: %d run, %d failed, %d skipped in %s\n", req.Dir, target,
		res.Run, res.Errors, res.Skipped, duration(res.Duration))
	if len(res.Results) == 0 {
		return nil
	}
	t := newTable(w, "ID", "RESULT", "TIME")
	for _, r := range res.Results {
		t.row(fmt.Sprint(r.ID), errnoName(r.Err), duration(r.Duration))
	}
	return t.flush()
}
