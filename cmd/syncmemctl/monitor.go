package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
)

func newMonitorCmd(dial dialer, out *output) *cobra.Command {
	var (
		count  int
		rcvbuf string
	)
	cmd := verb(&cobra.Command{
		Use:   "monitor [count N] [rcvbuf SIZE]",
		Short: "Print the module's events as they happen",
		Long: `Print ib_sync_mem's events until interrupted (Ctrl-C), one line each, the
way "devlink monitor" and "rdma monitor" do: clients registered,
unregistered or invalidated, devices attached or removed, and failed syncs
(rate-limited by the kernel):

  [client,new] id 3 name gpu0 dev rxe0 kind sim state live size 64MiB
  [client,del] id 3 name gpu0 dev rxe0
  [client,invalidated] id 4 name buf dev rxe1 reason device
  [dev,new] dev rxe1 dev_index 2
  [dev,del] dev rxe1 dev_index 2
  [sync,failed] id 5 dev rxe0 dir to-device err EIO

With -j, one JSON object per line, with the names of "list -j" and an
"event" field: client-new, client-del, client-invalidated, dev-new,
dev-del, sync-failed, family-del, family-new, events-lost. Open to every
user.

Once subscribed, it says so on stderr ("monitoring ib_sync_mem events");
every event after that line is printed. count N exits after N events.

The monitor outlives the module: when ib_sync_mem is unloaded it prints
"[family,del]", when it is loaded again "[family,new]", and goes on with the
new module's events. Events lost because the monitor fell behind (the
kernel's ENOBUFS) print "[events,lost]", and the monitor goes on; rcvbuf
makes its socket's receive buffer bigger.`,
		Example: `  syncmemctl monitor
  syncmemctl -j monitor | jq -c 'select(.event == "sync-failed")'
  syncmemctl monitor count 1 -j
  syncmemctl monitor rcvbuf 4M`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 0 {
				return badFlag("count", fmt.Sprint(count), "must not be negative")
			}
			var opts []genl.WatchOption
			if changed(cmd, "rcvbuf") {
				n, err := parseSize("rcvbuf", rcvbuf)
				if err != nil {
					return err
				}
				if n == 0 || n > math.MaxInt32 {
					return badFlag("rcvbuf", rcvbuf, "want 1 byte to 2 GiB")
				}
				opts = append(opts, genl.WithReadBuffer(int(n)))
			}
			return withConn(dial, func(c api) error {
				return monitor(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr(), out, count, opts...)
			})
		},
	})
	cmd.Flags().IntVar(&count, "count", 0, "exit after this many events (0: never)")
	cmd.Flags().StringVar(&rcvbuf, "rcvbuf", "", "receive buffer of the monitor's socket (bytes: 1M, 4MiB)")
	return cmd
}

// monitor prints events until ctx is done or count events were printed.
func monitor(ctx context.Context, c api, w, status io.Writer, out *output, count int, opts ...genl.WatchOption) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, errc, err := c.Watch(ctx, opts...)
	if err != nil {
		return err
	}
	fmt.Fprintln(status, "monitoring ib_sync_mem events")
	n := 0
	for ev := range events {
		if out.isJSON() {
			err = out.writeJSON(w, eventJSON(ev))
		} else {
			_, err = fmt.Fprintln(w, eventText(ev))
		}
		if err != nil {
			return err
		}
		if n++; count > 0 && n == count {
			cancel()
			break
		}
	}
	// An interrupted monitor (Ctrl-C, count) ends without an error.
	for range events {
	}
	return <-errc
}

type jsonEvent struct {
	Event    string   `json:"event"`
	ID       uint32   `json:"id,omitempty"`
	Name     string   `json:"name,omitempty"`
	Dev      string   `json:"dev,omitempty"`       // every event but family-* and events-lost
	DevIndex *uint32  `json:"dev_index,omitempty"` // with dev: index 0 is a device
	Kind     string   `json:"kind,omitempty"`
	Flags    []string `json:"flags,omitempty"`
	State    string   `json:"state,omitempty"`
	Size     *uint64  `json:"size,omitempty"`
	Reason   string   `json:"inval_reason,omitempty"`
	Dir      string   `json:"dir,omitempty"`
	Err      string   `json:"err,omitempty"`
}

// eventJSON keeps the attributes the event type carries.
func eventJSON(ev genl.Event) jsonEvent {
	j := jsonEvent{Event: ev.Type.String(), Dev: ev.DevName}
	if ev.DevName != "" {
		j.DevIndex = &ev.DevIndex
	}
	if c := ev.Client; c != nil {
		j.ID, j.Name = c.ID, c.Name
	}
	switch ev.Type {
	case genl.EventClientNew:
		c := ev.Client
		j.Kind, j.Flags, j.State, j.Size = c.Kind.String(), c.Flags.Names(), c.State.String(), &c.Size
	case genl.EventClientInvalidated:
		j.Reason = ev.Client.InvalReason.String()
	case genl.EventSyncFailed:
		j.Dir, j.Err = ev.Dir.String(), errnoName(ev.Err)
	}
	return j
}

// eventText is one line: [object,action], then what the event carries as
// keywords, the client's id first.
func eventText(ev genl.Event) string {
	f := []string{"[" + strings.Replace(ev.Type.String(), "-", ",", 1) + "]"}
	if c := ev.Client; c != nil {
		f = append(f, "id", fmt.Sprint(c.ID))
		if c.Name != "" {
			f = append(f, "name", c.Name)
		}
	}
	if ev.DevName != "" {
		f = append(f, "dev", ev.DevName)
	}
	switch ev.Type {
	case genl.EventClientNew:
		c := ev.Client
		f = append(f, "kind", c.Kind.String(), "state", c.State.String(), "size", size(c.Size))
		if c.Flags != 0 {
			f = append(f, "flags", c.Flags.String())
		}
	case genl.EventClientInvalidated:
		f = append(f, "reason", ev.Client.InvalReason.String())
	case genl.EventSyncFailed:
		f = append(f, "dir", ev.Dir.String(), "err", errnoName(ev.Err))
	case genl.EventDevNew, genl.EventDevDel:
		f = append(f, "dev_index", fmt.Sprint(ev.DevIndex))
	}
	return strings.Join(f, " ")
}
