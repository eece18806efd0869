package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/syncdev"
)

func newSyncCmd(dial dialer, out *output) *cobra.Command {
	var (
		dev     string
		owner   string
		ids     []string
		dir     string
		timeout time.Duration
		offset  string
		length  string
		async   bool
	)
	cmd := verb(&cobra.Command{
		Use:   "sync (dev DEV [owner OWNER] | id ID[,ID...] | id ID [offset BYTES] len BYTES) [dir DIR] [timeout D] [async]",
		Short: "Sync a device's clients, one client, part of one, or a batch",
		Long: `Make memory coherent for the side that uses it next: every client of a
device in one device-wide pass (dev DEV), or only one owner's clients of it
(dev DEV owner OWNER, a pass of their own), one client, or a batch of
clients in the order given (id ID, repeated or comma-separated; at most
2048, an id may repeat). Needs CAP_NET_ADMIN.

With one client, offset and len sync only the len bytes from offset
(default 0) of it, lazy or not: the bytes the caller says were written.
offset counts from the client's first byte (for a region, its address,
wherever in its page that is).
Sizes take units (4096, 64K, 1MiB). The range must lie inside the client
(ERANGE otherwise) and, for a sim client, start and end on 64 bytes
(EINVAL); kinds that cannot sync part of themselves (dma-buf) sync all.
A lazy client (register ... lazy) is otherwise synced only when it owes a
sync (see mark-dirty): one that owes none is skipped.

dir is to-device (the default: the CPU wrote, the device reads next),
to-cpu (the device wrote, the CPU reads next), bidirectional (both) or
inbound (the NIC wrote, by RDMA; the accelerator or the CPU reads next: a
client that cannot make the NIC's writes visible there fails with
EOPNOTSUPP; bidirectional does not include it). timeout bounds each
client's waits, in whole milliseconds; without it the module's
sync_timeout_ms applies.

Prints the totals and each client's result: its id, "ok" or the errno name
(EIO, ETIMEDOUT...), and the time its sync took. The command fails when a
client's sync failed, after printing the results.

With async, the sync goes through the module's data-path device
/dev/ib_sync_mem instead of netlink, for one client (id ID, with offset and
len or without), a batch (id ID,ID...: in one ioctl, refused whole if an
id is unknown) or a device (dev DEV): it is submitted and returns at once
with a fence (a sync_file), which syncmemctl then waits for. It prints a
line when the sync was submitted, then the fence's outcome once it
signalled: "ok" or the sync's errno (a batch's or a device's first client
error), and the time since the submission. The command fails when the
fence carries an error. Not with owner; timeout 0 is the module's
sync_timeout_ms there.`,
		Example: `  syncmemctl sync dev rxe0
  syncmemctl sync dev rxe0 owner sim
  syncmemctl sync id 3 dir to-cpu
  syncmemctl sync id 3 dir inbound
  syncmemctl sync id 3 offset 4K len 8K
  syncmemctl sync id 3,4 timeout 500ms
  syncmemctl sync --dev rxe0 --dir bidirectional
  syncmemctl -j sync dev rxe0 | jq '.results[] | select(.err)'
  syncmemctl sync id 3 len 64K async
  syncmemctl sync id 3,4,5 dir to-cpu async
  syncmemctl -j sync dev rxe0 dir to-cpu async`,
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
			if async && owner != "" {
				return errors.New("async takes client ids or dev DEV")
			}
			if req.Range, err = parseRange(cmd, offset, length); err != nil {
				return err
			}
			if req.Range != nil && len(req.Clients) != 1 {
				return errors.New("offset and len are bytes of one client: give one id ID, not dev DEV or a batch")
			}
			if req.Dir, err = parseDir(dir); err != nil {
				return err
			}
			if changed(cmd, "timeout") {
				if err := wholeDuration("timeout", timeout, time.Millisecond, "milliseconds"); err != nil {
					return err
				}
				req.Timeout = new(timeout)
			}
			if async {
				return syncAsync(cmd, dial, out, req)
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
	dirFlag(cmd, &dir, "direction")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "bound on each client's waits (default: the module's sync_timeout_ms)")
	rangeFlags(cmd, &offset, &length, "to sync")
	cmd.Flags().BoolVar(&async, "async", false, "with ids or dev: submit through "+syncdev.DefaultPath+", then wait for the fence")
	return cmd
}

// syncDev is the part of *syncdev.Device that sync ... async uses;
// tests replace openSyncDev.
type syncDev interface {
	SyncAsync(r syncdev.SyncRequest) (fence, error)
	SyncBatchAsync(r syncdev.BatchRequest) (fence, error)
	SyncDevAsync(r syncdev.DevRequest) (fence, error)
	Close() error
}

// fence is the part of *syncdev.Fence that sync ... async uses.
type fence interface {
	Fd() int
	Wait(ctx context.Context) error
	Close() error
}

// openSyncDev opens the data-path device.
var openSyncDev = func() (syncDev, error) {
	d, err := syncdev.Open("")
	if err != nil {
		return nil, err
	}
	return kernelDev{d}, nil
}

// kernelDev is a *syncdev.Device as a syncDev.
type kernelDev struct{ *syncdev.Device }

func (d kernelDev) SyncAsync(r syncdev.SyncRequest) (fence, error) {
	return asFence(d.Device.SyncAsync(r))
}

func (d kernelDev) SyncBatchAsync(r syncdev.BatchRequest) (fence, error) {
	return asFence(d.Device.SyncBatchAsync(r))
}

func (d kernelDev) SyncDevAsync(r syncdev.DevRequest) (fence, error) {
	return asFence(d.Device.SyncDevAsync(r))
}

// asFence keeps a nil *syncdev.Fence out of the interface.
func asFence(f *syncdev.Fence, err error) (fence, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// syncAsync submits req through the data-path device, one client, a
// batch or a device (by its index, which netlink tells), and waits for its
// fence.
func syncAsync(cmd *cobra.Command, dial dialer, out *output, req genl.SyncRequest) error {
	ctx := cmd.Context()
	var devIndex uint32
	if req.Device != "" {
		err := withConn(dial, func(c api) error {
			d, err := c.Device(ctx, req.Device)
			if err == nil {
				devIndex = d.Index
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	var timeout time.Duration
	if req.Timeout != nil {
		timeout = *req.Timeout
	}
	d, err := openSyncDev()
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	var f fence
	switch {
	case req.Device != "":
		f, err = d.SyncDevAsync(syncdev.DevRequest{DevIndex: devIndex, Dir: req.Dir, Timeout: timeout})
	case len(req.Clients) > 1:
		entries := make([]syncdev.BatchEntry, len(req.Clients))
		for i, id := range req.Clients {
			entries[i].ID = id
		}
		f, err = d.SyncBatchAsync(syncdev.BatchRequest{Entries: entries, Dir: req.Dir, Timeout: timeout})
	default:
		f, err = d.SyncAsync(syncdev.SyncRequest{ID: req.Clients[0], Dir: req.Dir, Range: req.Range, Timeout: timeout})
	}
	if err != nil {
		return err
	}
	defer f.Close()
	submitted := time.Since(start)
	w := cmd.OutOrStdout()
	if !out.isJSON() {
		fmt.Fprintf(w, "sync %s %s: submitted, fence fd %d\n", req.Dir, syncTarget(req), f.Fd())
	}
	err = f.Wait(ctx)
	// A fence that signalled with an error is its bare errno; any other
	// error is the wait's own.
	errno, signalled := err.(syscall.Errno)
	if err != nil && !signalled {
		return err
	}
	took := time.Since(start)
	if out.isJSON() {
		j := jsonAsync{Dir: req.Dir.String(), Err: jsonErrno(errno), FenceFD: f.Fd(),
			SubmitNS: int64(submitted), TimeNS: int64(took)}
		switch {
		case req.Device != "":
			j.Dev, j.DevIndex = req.Device, &devIndex
		case len(req.Clients) > 1:
			j.IDs = req.Clients
		default:
			j.ID = &req.Clients[0]
		}
		if r := req.Range; r != nil {
			j.Offset, j.Len = &r.Offset, &r.Len
		}
		if err := out.writeJSON(w, j); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "fence signalled: %s in %s\n", errnoName(errno), duration(took))
	}
	if errno != 0 {
		return fmt.Errorf("sync: the fence signalled with %s", errnoName(errno))
	}
	return nil
}

// jsonAsync is the outcome of sync ... async.
type jsonAsync struct {
	Dir      string   `json:"dir"`
	ID       *uint32  `json:"id,omitempty"`  // one client's
	IDs      []uint32 `json:"ids,omitempty"` // or a batch's
	Dev      string   `json:"dev,omitempty"` // or a device's
	DevIndex *uint32  `json:"dev_index,omitempty"`
	Offset   *uint64  `json:"offset,omitempty"` // a range sync's
	Len      *uint64  `json:"len,omitempty"`
	Err      string   `json:"err,omitempty"` // the fence's error
	FenceFD  int      `json:"fence_fd"`
	SubmitNS int64    `json:"submit_ns"` // until the submission returned
	TimeNS   int64    `json:"time_ns"`   // until the fence signalled
}

func newMarkDirtyCmd(dial dialer) *cobra.Command {
	var (
		ids    []string
		dir    string
		offset string
		length string
	)
	cmd := verb(&cobra.Command{
		Use:   "mark-dirty id ID [dir DIR] [[offset BYTES] len BYTES]",
		Short: "Say that a lazy client's memory was written",
		Long: `Mark a lazy client (register ... lazy) dirty: its memory was written, and
its next sync in a direction that covers dir runs, where a lazy client
that owes nothing is skipped. For kinds that sync part of themselves (sim,
region) that sync covers only the bytes marked since the last one that
way. Needs CAP_NET_ADMIN.

dir is the sync now owed: to-device (the default: the CPU wrote, the
device reads next), to-cpu (the device wrote), inbound (the NIC wrote, by
RDMA) or bidirectional (both the CPU and the device). offset and len give
the bytes written: the len bytes from offset (default 0, the client's first
byte); without them all of the client is marked. Sizes take units (4096, 64K, 1MiB). The range
must lie inside the client (ERANGE otherwise) and, for a sim client, start
and end on 64 bytes (EINVAL).

A client that is not lazy is refused (EINVAL): its syncs always run.
Prints nothing.`,
		Example: `  syncmemctl mark-dirty id 3
  syncmemctl mark-dirty id 3 dir to-cpu offset 4K len 8K
  syncmemctl mark-dirty id 3 len 64K && syncmemctl sync id 3`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := parseIDs("id", ids)
			if err != nil {
				return err
			}
			if len(list) != 1 {
				return errors.New("name the one client to mark: id ID")
			}
			d, err := parseDir(dir)
			if err != nil {
				return err
			}
			r, err := parseRange(cmd, offset, length)
			if err != nil {
				return err
			}
			return withConn(dial, func(c api) error {
				return c.MarkDirty(cmd.Context(), list[0], d, r)
			})
		},
	})
	idFlag(cmd, &ids, "the lazy client whose memory was written (required)", dial)
	dirFlag(cmd, &dir, "the sync now owed")
	rangeFlags(cmd, &offset, &length, "written")
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
	Offset  *uint64      `json:"offset,omitempty"` // a range sync's
	Len     *uint64      `json:"len,omitempty"`
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
		if r := req.Range; r != nil {
			j.Offset, j.Len = &r.Offset, &r.Len
		}
		for _, r := range res.Results {
			j.Results = append(j.Results, jsonResult{
				ID: r.ID, Err: jsonErrno(r.Err), TimeNS: int64(r.Duration),
			})
		}
		return out.writeJSON(w, j)
	}
	fmt.Fprintf(w, "sync %s %s: %d run, %d failed, %d skipped in %s\n", req.Dir, syncTarget(req),
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

// syncTarget names what req syncs: "dev rxe0", "id 3,4", "id 3 offset 0
// len 64".
func syncTarget(req genl.SyncRequest) string {
	target := "dev " + req.Device
	if req.Device == "" {
		ids := make([]string, len(req.Clients))
		for i, id := range req.Clients {
			ids[i] = fmt.Sprint(id)
		}
		target = "id " + strings.Join(ids, ",")
	}
	if r := req.Range; r != nil {
		target += fmt.Sprintf(" offset %d len %d", r.Offset, r.Len)
	}
	return target
}
