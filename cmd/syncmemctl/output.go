package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
)

// output holds the global -j/--json and -p/--pretty flags.
type output struct {
	json, pretty bool
}

func (o *output) addFlags(root *cobra.Command) {
	root.PersistentFlags().BoolVarP(&o.json, "json", "j", false, "print JSON (every listing an array)")
	root.PersistentFlags().BoolVarP(&o.pretty, "pretty", "p", false, "print indented JSON (implies --json)")
}

func (o *output) isJSON() bool { return o.json || o.pretty }

// writeJSON prints v as one JSON document (one line unless --pretty).
func (o *output) writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	if o.pretty {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// table writes aligned columns, iproute2 style.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cols ...string) { fmt.Fprintln(t.tw, strings.Join(cols, "\t")) }
func (t *table) flush() error       { return t.tw.Flush() }

// errnoName is "EIO" for 5, "ok" for 0, "errno 5000" for numbers without a
// name: genl.ErrnoName, but for 0.
func errnoName(e syscall.Errno) string {
	if e == 0 {
		return "ok"
	}
	return genl.ErrnoName(e)
}

// jsonErrno is errnoName, or "" for 0 (left out of JSON).
func jsonErrno(e syscall.Errno) string {
	if e == 0 {
		return ""
	}
	return errnoName(e)
}

// duration prints d with three significant digits: 512ns, 201us, 12.4ms.
func duration(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}}
	for _, u := range units {
		if d >= u.d {
			v := float64(d) / float64(u.d)
			switch {
			case v >= 100:
				return fmt.Sprintf("%.0f%s", v, u.name)
			case v >= 10:
				return fmt.Sprintf("%.1f%s", v, u.name)
			}
			return fmt.Sprintf("%.2f%s", v, u.name)
		}
	}
	return fmt.Sprintf("%dns", int64(d))
}

// size prints bytes in IEC units: 512B, 4KiB, 1.5MiB.
func size(b uint64) string {
	const units = "KMGTPE"
	if b < 1024 {
		return fmt.Sprintf("%dB", b)
	}
	v, i := float64(b)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	if v == float64(uint64(v)) {
		return fmt.Sprintf("%.0f%ciB", v, units[i])
	}
	return fmt.Sprintf("%.1f%ciB", v, units[i])
}

// JSON views: one set of names for every command (dev, dev_index, id, err
// and *_err for errno names, *_ns for times), enums as strings. An errno
// is its name ("EIO"), left out when it is 0: success.

type jsonCounters struct {
	Syncs   uint64     `json:"syncs"`
	Errors  uint64     `json:"errors"`
	TimeNS  int64      `json:"time_ns"`
	MaxNS   int64      `json:"max_ns"`
	Bytes   uint64     `json:"bytes"`
	Clients *uint32    `json:"clients,omitempty"`
	Hist    *hist.JSON `json:"hist,omitempty"` // stats only
}

func counters(c genl.Counters) jsonCounters {
	j := jsonCounters{Syncs: c.Syncs, Errors: c.Errors, TimeNS: int64(c.Total), MaxNS: int64(c.Max), Bytes: c.Bytes}
	return j
}

type jsonDevice struct {
	Dev      string       `json:"dev"`
	DevIndex uint32       `json:"dev_index"`
	Clients  uint32       `json:"clients"`
	Passes   uint64       `json:"passes"`
	Stats    jsonCounters `json:"stats"`
}

func device(d genl.Device) jsonDevice {
	return jsonDevice{Dev: d.Name, DevIndex: d.Index, Clients: d.Clients, Passes: d.Passes, Stats: counters(d.Stats)}
}

type jsonClient struct {
	ID          uint32       `json:"id"`
	Name        string       `json:"name"`
	Owner       string       `json:"owner,omitempty"` // the in-kernel owner
	Dev         string       `json:"dev"`
	DevIndex    uint32       `json:"dev_index"`
	Kind        string       `json:"kind"`
	Flags       []string     `json:"flags"`
	State       string       `json:"state"`
	InvalReason string       `json:"inval_reason,omitempty"`
	Origin      string       `json:"origin,omitempty"`
	Size        uint64       `json:"size"`
	LastErr     string       `json:"last_err,omitempty"` // the errno's name; left out for 0
	OwnerPortID uint32       `json:"owner_portid,omitempty"`
	OwnerPID    uint32       `json:"owner_pid,omitempty"`
	PinnedPages *uint32      `json:"pinned_pages,omitempty"` // region clients, even 0
	Stats       jsonCounters `json:"stats"`
	Sim         *jsonSim     `json:"sim,omitempty"`
	Region      *jsonRegion  `json:"region,omitempty"`
	DMABuf      *jsonDMABuf  `json:"dmabuf,omitempty"`
}

type jsonRegion struct {
	Addr     uint64 `json:"addr"`
	Len      uint64 `json:"len"`
	Write    bool   `json:"write"`
	Segments uint32 `json:"segments"`
}

type jsonDMABuf struct {
	Size     uint64 `json:"size"`
	Exporter string `json:"exporter"`
	Inode    uint64 `json:"inode"`
}

type jsonSim struct {
	LatencyNS          int64  `json:"latency_ns"`
	FailNext           uint32 `json:"fail_next"`
	FailErr            string `json:"fail_err,omitempty"`
	Size               uint64 `json:"size"`
	Batch              bool   `json:"batch"`
	CallsToDevice      uint64 `json:"calls_to_device"`
	CallsToCPU         uint64 `json:"calls_to_cpu"`
	CallsBidirectional uint64 `json:"calls_bidirectional"`
	CallsInbound       uint64 `json:"calls_inbound"`
	Addr               uint64 `json:"addr,omitempty"`
}

func client(c genl.Client) jsonClient {
	j := jsonClient{
		ID: c.ID, Name: c.Name, Owner: c.Owner, Dev: c.DevName, DevIndex: c.DevIndex, Kind: c.Kind.String(),
		Flags: c.Flags.Names(), State: c.State.String(), Size: c.Size,
		LastErr:     jsonErrno(c.LastErr),
		OwnerPortID: c.OwnerPortID, OwnerPID: c.OwnerPID, PinnedPages: pinnedPages(c),
		Stats: counters(c.Stats),
	}
	if c.InvalReason != 0 {
		j.InvalReason = c.InvalReason.String()
	}
	if c.Origin != 0 {
		j.Origin = c.Origin.String()
	}
	if r := c.Region; r != nil {
		j.Region = &jsonRegion{Addr: r.Addr, Len: r.Len, Write: r.Access&genl.RegionWrite != 0, Segments: r.Segments}
	}
	if d := c.DMABuf; d != nil {
		j.DMABuf = &jsonDMABuf{Size: d.Size, Exporter: d.Exporter, Inode: d.Inode}
	}
	if s := c.Sim; s != nil {
		j.Sim = &jsonSim{
			LatencyNS: int64(s.Latency), FailNext: s.FailNext, FailErr: jsonErrno(s.FailErrno),
			Size: s.Size, Batch: s.Batch, CallsToDevice: s.CallsToDevice,
			CallsToCPU: s.CallsToCPU, CallsBidirectional: s.CallsBidirectional,
			CallsInbound: s.CallsInbound, Addr: s.Addr,
		}
	}
	return j
}
