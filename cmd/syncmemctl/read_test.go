package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
	"golang.org/x/sys/unix"
)

// Tests of the read commands: devices, list, stats.

func testDevices() []genl.Device {
	return []genl.Device{
		{Index: 1, Name: "rxe0", Clients: 2, Passes: 10, Stats: genl.Counters{
			Syncs: 20, Errors: 1, Total: 1500 * time.Microsecond, Max: 200 * time.Microsecond, Bytes: 8192,
		}},
		{Index: 2, Name: "rxe1"},
	}
}

func testClients() []genl.Client {
	return []genl.Client{{
		ID: 3, Name: "buf0", Owner: "sim", DevIndex: 1, DevName: "rxe0", Kind: genl.KindSim,
		Flags: genl.FlagLazy, State: genl.StateLive, Origin: genl.OriginNetlink, Size: 4096,
		OwnerPortID: 4242, OwnerPID: 99, Stats: genl.Counters{Syncs: 5},
		Sim: &genl.SimInfo{Latency: 200 * time.Microsecond, FailErrno: unix.EIO, CallsToDevice: 5},
	}, {
		ID: 4, Name: "gpu", Owner: "nv_peer", DevIndex: 1, DevName: "rxe0", Kind: genl.KindKernel,
		State: genl.StateInvalidated, InvalReason: genl.ReasonDevice, Origin: genl.OriginKernel,
		LastErr: unix.ENODEV, Stats: genl.Counters{Syncs: 2, Errors: 1},
	}, {
		// As an unprivileged caller sees a netlink client: no owner, no info.
		ID: 5, Name: "b", Owner: "sim", DevIndex: 1, DevName: "rxe0", Kind: genl.KindSim,
		State: genl.StateLive, Origin: genl.OriginNetlink, Size: 1 << 20,
	}}
}

// memClients are region and dma-buf clients: a live region, one whose
// memory was unmapped, and a dma-buf whose last sync timed out.
func memClients() []genl.Client {
	return []genl.Client{{
		ID: 10, Name: "frames", Owner: "region", DevIndex: 1, DevName: "rxe0", Kind: genl.KindRegion,
		Flags: genl.FlagOwned, State: genl.StateLive, Origin: genl.OriginNetlink, Size: 64 << 10,
		PinnedPages: 16, OwnerPortID: 7, OwnerPID: 42, Stats: genl.Counters{Syncs: 2, Bytes: 128 << 10},
		Region: &genl.RegionInfo{Addr: 0x7f0000000000, Len: 64 << 10, Access: genl.RegionWrite, Segments: 1},
	}, {
		ID: 11, Name: "gone", Owner: "region", DevIndex: 1, DevName: "rxe0", Kind: genl.KindRegion,
		State: genl.StateInvalidated, InvalReason: genl.ReasonMemory, Origin: genl.OriginNetlink,
		Size: 8192, Stats: genl.Counters{Syncs: 1, Bytes: 8192},
	}, {
		ID: 12, Name: "gpu0", Owner: "dma-buf", DevIndex: 1, DevName: "rxe0", Kind: genl.KindDMABuf,
		State: genl.StateLive, Origin: genl.OriginNetlink, Size: 1 << 20, LastErr: unix.ETIMEDOUT,
		Stats:  genl.Counters{Syncs: 3, Errors: 1, Bytes: 2 << 20},
		DMABuf: &genl.DMABufInfo{Size: 1 << 20, Exporter: "drm", Inode: 77},
	}}
}

func TestDevicesTable(t *testing.T) {
	f := &fakeAPI{devices: testDevices()}
	got := mustRun(t, f, "devices")
	want := `DEV   INDEX  CLIENTS  PASSES  SYNCS  ERRORS  BYTES  SYNC-TIME
rxe0  1      2        10      20     1       8KiB   1.50ms
rxe1  2      0        0       0      0       0B     0ns
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !cmp.Equal(f.calls, []string{"Devices"}) {
		t.Errorf("calls %v", f.calls)
	}
}

func TestDevicesJSON(t *testing.T) {
	f := &fakeAPI{devices: testDevices()}
	for _, flag := range []string{"-j", "--json", "-p", "--pretty"} {
		out := mustRun(t, f, "devices", flag)
		var got []map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: %v\n%s", flag, err, out)
		}
		if len(got) != 2 || got[0]["dev"] != "rxe0" || got[0]["dev_index"] != 1.0 || got[0]["clients"] != 2.0 ||
			got[0]["stats"].(map[string]any)["time_ns"] != 1.5e6 {
			t.Errorf("%s: %v", flag, got)
		}
		pretty := strings.Contains(out, "\n  ")
		if pretty != (flag == "-p" || flag == "--pretty") {
			t.Errorf("%s: indented %v:\n%s", flag, pretty, out)
		}
	}
	// One device by name is an array too; an unknown one is the kernel's error.
	out := mustRun(t, f, "devices", "dev", "rxe1", "-j")
	if out != `[{"dev":"rxe1","dev_index":2,"clients":0,"passes":0,"stats":{"syncs":0,"errors":0,"time_ns":0,"max_ns":0,"bytes":0}}]`+"\n" {
		t.Errorf("devices dev rxe1 -j: %s", out)
	}
	r := runFake(t, f, "devices", "dev", "rxe9")
	if r.code != 1 || r.stderr != "Error: get device rxe9: no such RDMA device\n" || r.stdout != "" {
		t.Errorf("devices rxe9: %+v", r)
	}
}

func TestListTable(t *testing.T) {
	f := &fakeAPI{clients: testClients()}
	got := mustRun(t, f, "list", "--dev", "rxe0")
	want := `ID  DEV   NAME  OWNER    KIND    STATE                FLAGS  SIZE  PINNED  SYNCS  ERRORS  LAST-ERR  CREATOR
3   rxe0  buf0  sim      sim     live                 lazy   4KiB  -       5      0       ok        pid 99
4   rxe0  gpu   nv_peer  kernel  invalidated(device)  -      0B    -       2      1       ENODEV    kernel
5   rxe0  b     sim      sim     live                 -      1MiB  -       0      0       ok        -
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if f.dev != "rxe0" || f.owner != "" {
		t.Errorf("dump filter %q %q", f.dev, f.owner)
	}
	// The owner filter goes to the kernel, with or without a device.
	mustRun(t, f, "list", "dev", "rxe0", "owner", "sim")
	if f.dev != "rxe0" || f.owner != "sim" {
		t.Errorf("dump filter %q %q", f.dev, f.owner)
	}
	mustRun(t, f, "list", "--owner", "nv_peer")
	if f.dev != "" || f.owner != "nv_peer" {
		t.Errorf("dump filter %q %q", f.dev, f.owner)
	}
	r := runFake(t, f, "list", "owner", "sim", "id", "3")
	if r.code != 1 || r.stderr != "Error: give either dev and owner, or id, not both\n" {
		t.Errorf("list owner and id: %+v", r)
	}
}

func TestListJSON(t *testing.T) {
	f := &fakeAPI{clients: testClients()}
	var got []map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, f, "list", "-j")), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d clients", len(got))
	}
	// The sensitive fields are there when the kernel sent them, and left
	// out, not zero, when it did not.
	if got[0]["owner_pid"] != 99.0 || got[0]["owner_portid"] != 4242.0 || got[0]["sim"] == nil {
		t.Errorf("privileged view: %v", got[0])
	}
	for _, k := range []string{"owner_pid", "owner_portid", "sim"} {
		if _, ok := got[2][k]; ok {
			t.Errorf("unprivileged view has %s: %v", k, got[2])
		}
	}
	want := map[string]any{
		"id": 4.0, "name": "gpu", "owner": "nv_peer", "dev": "rxe0", "dev_index": 1.0, "kind": "kernel",
		"flags": []any{}, "state": "invalidated", "inval_reason": "device", "origin": "kernel",
		"size": 0.0, "last_err": "ENODEV",
		"stats": map[string]any{"syncs": 2.0, "errors": 1.0, "time_ns": 0.0, "max_ns": 0.0, "bytes": 0.0},
	}
	if d := cmp.Diff(want, got[1]); d != "" {
		t.Errorf("client 4 (-want +got):\n%s", d)
	}
	if sim := got[0]["sim"].(map[string]any); sim["latency_ns"] != 200e3 || sim["fail_err"] != "EIO" {
		t.Errorf("sim %v", sim)
	}
}

// TestListMemory: bytes, pinned pages (region clients only, 0 once
// invalidated), state with its reason and the last error, in the table and
// in JSON.
func TestListMemory(t *testing.T) {
	f := &fakeAPI{clients: memClients()}
	got := mustRun(t, f, "list")
	want := `ID  DEV   NAME    OWNER    KIND    STATE                FLAGS  SIZE   PINNED  SYNCS  ERRORS  LAST-ERR   CREATOR
10  rxe0  frames  region   region  live                 owned  64KiB  16      2      0       ok         pid 42
11  rxe0  gone    region   region  invalidated(memory)  -      8KiB   0       1      0       ok         -
12  rxe0  gpu0    dma-buf  dmabuf  live                 -      1MiB   -       3      1       ETIMEDOUT  -
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	var js []map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, f, "list", "-j")), &js); err != nil {
		t.Fatal(err)
	}
	stats := func(syncs, errors, bytes float64) map[string]any {
		return map[string]any{"syncs": syncs, "errors": errors, "time_ns": 0.0, "max_ns": 0.0, "bytes": bytes}
	}
	wantJ := []map[string]any{{
		"id": 10.0, "name": "frames", "owner": "region", "dev": "rxe0", "dev_index": 1.0, "kind": "region",
		"flags": []any{"owned"}, "state": "live", "origin": "netlink", "size": 65536.0,
		"pinned_pages": 16.0, "owner_portid": 7.0, "owner_pid": 42.0,
		"stats":  stats(2, 0, 131072),
		"region": map[string]any{"addr": float64(0x7f0000000000), "len": 65536.0, "write": true, "segments": 1.0},
	}, {
		"id": 11.0, "name": "gone", "owner": "region", "dev": "rxe0", "dev_index": 1.0, "kind": "region",
		"flags": []any{}, "state": "invalidated", "inval_reason": "memory", "origin": "netlink",
		"size": 8192.0, "pinned_pages": 0.0, "stats": stats(1, 0, 8192),
	}, {
		"id": 12.0, "name": "gpu0", "owner": "dma-buf", "dev": "rxe0", "dev_index": 1.0, "kind": "dmabuf",
		"flags": []any{}, "state": "live", "origin": "netlink", "size": 1048576.0,
		"last_err": "ETIMEDOUT", "stats": stats(3, 1, 2097152),
		"dmabuf": map[string]any{"size": 1048576.0, "exporter": "drm", "inode": 77.0},
	}}
	if d := cmp.Diff(wantJ, js); d != "" {
		t.Errorf("list -j (-want +got):\n%s", d)
	}
}

func TestListByID(t *testing.T) {
	f := &fakeAPI{clients: testClients()}
	r := runFake(t, f, "list", "id", "5,9", "-j")
	if r.code != 1 || r.stderr != "Error: get client 9: no such client\n" {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, `[{"id":5,`) {
		t.Errorf("stdout %s", r.stdout)
	}
	if r := runFake(t, f, "list", "--dev", "rxe0", "id", "5"); r.code != 1 || r.dials != 0 {
		t.Errorf("--dev with ids: %+v", r)
	}
}

func TestStats(t *testing.T) {
	var h hist.Log2
	h.Add(0, 1)
	h.Add(9, 2)
	h.Add(12, 4)
	h.Add(17, 8)
	f := &fakeAPI{stats: genl.Stats{Counters: genl.Counters{
		Syncs: 15, Errors: 1, Total: 2 * time.Millisecond, Max: 180 * time.Microsecond,
		Bytes: 3 << 20, Clients: 2, Hist: h,
	}}}
	got := mustRun(t, f, "stats")
	want := `scope       module
clients     2
syncs       15
errors      1
bytes       3145728 (3MiB)
total time  2.00ms
max time    180us

     nsecs               : count    distribution
         0 -> 1          : 1        |*****                                   |
         2 -> 3          : 0        |                                        |
         4 -> 7          : 0        |                                        |
         8 -> 15         : 0        |                                        |
        16 -> 31         : 0        |                                        |
        32 -> 63         : 0        |                                        |
        64 -> 127        : 0        |                                        |
       128 -> 255        : 0        |                                        |
       256 -> 511        : 0        |                                        |
       512 -> 1023       : 2        |**********                              |
      1024 -> 2047       : 0        |                                        |
      2048 -> 4095       : 0        |                                        |
      4096 -> 8191       : 4        |********************                    |
      8192 -> 16383      : 0        |                                        |
     16384 -> 32767      : 0        |                                        |
     32768 -> 65535      : 0        |                                        |
     65536 -> 131071     : 0        |                                        |
    131072 -> 262143     : 8        |****************************************|
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if f.statsReq != (genl.StatsRequest{}) {
		t.Errorf("request %+v", f.statsReq)
	}

	f.clients = []genl.Client{{ID: 7, Name: "buf0", DevIndex: 1, DevName: "rxe0", Kind: genl.KindSim,
		State: genl.StateLive, Size: 4096}}
	mustRun(t, f, "stats", "id", "7")
	if f.statsReq != (genl.StatsRequest{Client: 7}) {
		t.Errorf("request %+v", f.statsReq)
	}
	if !cmp.Equal(f.calls[len(f.calls)-2:], []string{"Stats", "Client"}) {
		t.Errorf("calls %v, want Stats then Client", f.calls)
	}
	f.stats = genl.Stats{DevIndex: 1, DevName: "rxe0", Counters: genl.Counters{Syncs: 1, Clients: 2, Hist: hist.Log2{Counts: []uint64{0, 0, 0, 1}}}}
	var j map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, f, "stats", "--dev", "rxe0", "-j")), &j); err != nil {
		t.Fatal(err)
	}
	wantJ := map[string]any{
		"scope": "device", "dev": "rxe0", "dev_index": 1.0, "clients": 2.0, "syncs": 1.0, "errors": 0.0,
		"time_ns": 0.0, "max_ns": 0.0, "bytes": 0.0,
		"hist": map[string]any{"unit": "nsecs", "buckets": []any{
			map[string]any{"slot": 0.0, "low": 0.0, "high": 1.0, "count": 0.0},
			map[string]any{"slot": 1.0, "low": 2.0, "high": 3.0, "count": 0.0},
			map[string]any{"slot": 2.0, "low": 4.0, "high": 7.0, "count": 0.0},
			map[string]any{"slot": 3.0, "low": 8.0, "high": 15.0, "count": 1.0},
		}},
	}
	if d := cmp.Diff(wantJ, j); d != "" {
		t.Errorf("stats -j (-want +got):\n%s", d)
	}
	if f.statsReq != (genl.StatsRequest{Device: "rxe0"}) {
		t.Errorf("request %+v", f.statsReq)
	}
}

// TestStatsClient: the statistics of a client say what it is: kind, state
// and why it was invalidated, bytes, pinned pages, last error.
func TestStatsClient(t *testing.T) {
	cs := memClients()
	f := &fakeAPI{clients: cs, stats: genl.Stats{ClientID: 11, Counters: genl.Counters{
		Syncs: 1, Bytes: 8192, Total: 3 * time.Microsecond, Max: 3 * time.Microsecond, Hist: hist.Log2{Counts: []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
	}}}
	got := mustRun(t, f, "stats", "id", "11")
	want := `scope         client
id            11
name          gone
dev           rxe0
kind          region
state         invalidated(memory)
size          8192 (8KiB)
pinned pages  0
last error    ok
syncs         1
errors        0
bytes         8192 (8KiB)
total time    3.00us
max time      3.00us

     nsecs               : count    distribution
         0 -> 1          : 0        |                                        |
`
	if !strings.HasPrefix(got, want) {
		t.Errorf("got\n%s\nwant a prefix\n%s", got, want)
	}

	var j map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, f, "stats", "--id", "11", "-j")), &j); err != nil {
		t.Fatal(err)
	}
	wantJ := map[string]any{
		"scope": "client", "id": 11.0, "dev": "rxe0", "dev_index": 1.0,
		"name": "gone", "kind": "region", "state": "invalidated", "inval_reason": "memory",
		"size": 8192.0, "pinned_pages": 0.0,
		"syncs": 1.0, "errors": 0.0, "time_ns": 3000.0, "max_ns": 3000.0, "bytes": 8192.0,
	}
	hj, _ := j["hist"].(map[string]any)
	delete(j, "hist")
	if bs, _ := hj["buckets"].([]any); hj["unit"] != "nsecs" || len(bs) != 13 ||
		!cmp.Equal(bs[12], map[string]any{"slot": 12.0, "low": 4096.0, "high": 8191.0, "count": 1.0}) {
		t.Errorf("stats --client 11 -j: hist %v, want buckets 0..12, 1 in 4096..8191 ns", hj)
	}
	if d := cmp.Diff(wantJ, j); d != "" {
		t.Errorf("stats --client 11 -j (-want +got):\n%s", d)
	}

	// A live region client, and a dma-buf one: no pinned pages to show.
	f.stats = genl.Stats{ClientID: 10}
	got = mustRun(t, f, "stats", "id", "10")
	for _, row := range []string{"state         live\n", "pinned pages  16\n", "size          65536 (64KiB)\n"} {
		if !strings.Contains(got, row) {
			t.Errorf("stats --client 10: no %q in\n%s", row, got)
		}
	}
	f.stats = genl.Stats{ClientID: 12}
	got = mustRun(t, f, "stats", "id", "12")
	for _, row := range []string{"kind          dmabuf\n", "pinned pages  -\n", "last error    ETIMEDOUT\n"} {
		if !strings.Contains(got, row) {
			t.Errorf("stats --client 12: no %q in\n%s", row, got)
		}
	}
	j = nil // Unmarshal would merge into the old map
	if err := json.Unmarshal([]byte(mustRun(t, f, "stats", "id", "12", "-j")), &j); err != nil {
		t.Fatal(err)
	}
	if _, ok := j["pinned_pages"]; ok || j["last_err"] != "ETIMEDOUT" || j["kind"] != "dmabuf" {
		t.Errorf("stats --client 12 -j: %v", j)
	}

	// The module's and a device's statistics describe no client.
	f.stats = genl.Stats{Counters: genl.Counters{Clients: 3}}
	j = nil
	if err := json.Unmarshal([]byte(mustRun(t, f, "stats", "-j")), &j); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "kind", "state", "size", "pinned_pages", "last_err"} {
		if _, ok := j[k]; ok {
			t.Errorf("module stats have %s: %v", k, j)
		}
	}

	// A client gone between the two requests: the kernel's error.
	r := runFake(t, &fakeAPI{stats: genl.Stats{ClientID: 9}}, "stats", "id", "9")
	if r.code != 1 || r.stderr != "Error: get client 9: no such client\n" || r.stdout != "" {
		t.Errorf("%+v", r)
	}
}

// TestStatsHistOpenBucket: stats prints and encodes the last bucket
// open-ended, as trace does: "2147483648 -> inf", high null.
func TestStatsHistOpenBucket(t *testing.T) {
	var h hist.Log2
	h.Add(hist.Buckets-1, 3)
	f := &fakeAPI{stats: genl.Stats{Counters: genl.Counters{Syncs: 3, Clients: 1, Hist: h}}}
	if got := mustRun(t, f, "stats"); !strings.HasSuffix(got,
		"1073741824 -> 2147483647 : 0        |                                        |\n"+
			"2147483648 -> inf        : 3        |****************************************|\n") {
		t.Errorf("got\n%s", got)
	}
	var j struct {
		Hist struct {
			Unit    string
			Buckets []struct {
				Slot  int
				Low   uint64
				High  *uint64
				Count uint64
			}
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, f, "-j", "stats")), &j); err != nil {
		t.Fatal(err)
	}
	last := j.Hist.Buckets[len(j.Hist.Buckets)-1]
	if j.Hist.Unit != "nsecs" || len(j.Hist.Buckets) != hist.Buckets || last.Slot != 31 ||
		last.Low != 1<<31 || last.High != nil || last.Count != 3 {
		t.Errorf("stats -j hist: %+v", j.Hist)
	}
	// A client that never synced has the histogram's shape too.
	f.stats = genl.Stats{}
	if got := mustRun(t, f, "-j", "stats"); !strings.Contains(got, `"hist":{"unit":"nsecs","buckets":[]}`) {
		t.Errorf("no syncs: %s", got)
	}
}
