package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/pkg/genl"
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
		ID: 3, Name: "buf0", DevIndex: 1, DevName: "rxe0", Kind: genl.KindSim,
		Flags: genl.FlagLazy, State: genl.StateLive, Origin: genl.OriginNetlink, Size: 4096,
		OwnerPortID: 4242, OwnerPID: 99, Stats: genl.Counters{Syncs: 5},
		Sim: &genl.SimInfo{Latency: 200 * time.Microsecond, FailErrno: unix.EIO, CallsToDevice: 5},
	}, {
		ID: 4, Name: "gpu", DevIndex: 1, DevName: "rxe0", Kind: genl.KindKernel,
		State: genl.StateInvalidated, InvalReason: genl.ReasonDevice, Origin: genl.OriginKernel,
		LastErr: unix.ENODEV, Stats: genl.Counters{Syncs: 2, Errors: 1},
	}, {
		// As an unprivileged caller sees a netlink client: no owner, no info.
		ID: 5, Name: "b", DevIndex: 1, DevName: "rxe0", Kind: genl.KindSim,
		State: genl.StateLive, Origin: genl.OriginNetlink, Size: 1 << 20,
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
		if len(got) != 2 || got[0]["name"] != "rxe0" || got[0]["clients"] != 2.0 ||
			got[0]["stats"].(map[string]any)["time_ns"] != 1.5e6 {
			t.Errorf("%s: %v", flag, got)
		}
		pretty := strings.Contains(out, "\n  ")
		if pretty != (flag == "-p" || flag == "--pretty") {
			t.Errorf("%s: indented %v:\n%s", flag, pretty, out)
		}
	}
	// One device by name is an object; an unknown one is the kernel's error.
	out := mustRun(t, f, "devices", "rxe1", "-j")
	if out != `{"name":"rxe1","index":2,"clients":0,"passes":0,"stats":{"syncs":0,"errors":0,"time_ns":0,"max_ns":0,"bytes":0}}`+"\n" {
		t.Errorf("devices rxe1 -j: %s", out)
	}
	r := runFake(t, f, "devices", "rxe9")
	if r.code != 1 || r.stderr != "Error: get device rxe9: no such RDMA device\n" || r.stdout != "" {
		t.Errorf("devices rxe9: %+v", r)
	}
}

func TestListTable(t *testing.T) {
	f := &fakeAPI{clients: testClients()}
	got := mustRun(t, f, "list", "--dev", "rxe0")
	want := `ID  DEV   NAME  KIND    STATE                FLAGS  SIZE  SYNCS  ERRORS  LAST-ERR  OWNER
3   rxe0  buf0  sim     live                 lazy   4KiB  5      0       ok        pid 99
4   rxe0  gpu   kernel  invalidated(device)  -      0B    2      1       ENODEV    kernel
5   rxe0  b     sim     live                 -      1MiB  0      0       ok        -
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if f.dev != "rxe0" {
		t.Errorf("dump filter %q", f.dev)
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
		"id": 4.0, "name": "gpu", "dev": "rxe0", "dev_index": 1.0, "kind": "kernel",
		"flags": []any{}, "state": "invalidated", "inval_reason": "device", "origin": "kernel",
		"size": 0.0, "last_errno": 19.0, "last_err": "ENODEV",
		"stats": map[string]any{"syncs": 2.0, "errors": 1.0, "time_ns": 0.0, "max_ns": 0.0, "bytes": 0.0},
	}
	if d := cmp.Diff(want, got[1]); d != "" {
		t.Errorf("client 4 (-want +got):\n%s", d)
	}
	if sim := got[0]["sim"].(map[string]any); sim["latency_ns"] != 200e3 || sim["fail_errno"] != 5.0 {
		t.Errorf("sim %v", sim)
	}
}

func TestListByID(t *testing.T) {
	f := &fakeAPI{clients: testClients()}
	r := runFake(t, f, "list", "5", "9", "-j")
	if r.code != 1 || r.stderr != "Error: get client 9: no such client\n" {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, `[{"id":5,`) {
		t.Errorf("stdout %s", r.stdout)
	}
	if r := runFake(t, f, "list", "--dev", "rxe0", "5"); r.code != 1 || r.dials != 0 {
		t.Errorf("--dev with ids: %+v", r)
	}
}

func TestStats(t *testing.T) {
	hist := make([]uint64, 19)
	hist[0], hist[9], hist[12], hist[18] = 1, 2, 4, 8
	f := &fakeAPI{stats: genl.Stats{Counters: genl.Counters{
		Syncs: 15, Errors: 1, Total: 2 * time.Millisecond, Max: 180 * time.Microsecond,
		Bytes: 3 << 20, Clients: 2, Hist: hist,
	}}}
	got := mustRun(t, f, "stats")
	want := `scope       module
clients     2
syncs       15
errors      1
bytes       3145728 (3MiB)
total time  2.00ms
max time    180us

     usecs               : count    distribution
         0 -> 1          : 3        |***************                         |
         1 -> 2          : 0        |                                        |
         2 -> 4          : 4        |********************                    |
         4 -> 8          : 0        |                                        |
         8 -> 16         : 0        |                                        |
        16 -> 32         : 0        |                                        |
        32 -> 65         : 0        |                                        |
        65 -> 131        : 0        |                                        |
       131 -> 262        : 8        |****************************************|
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if f.statsReq != (genl.StatsRequest{}) {
		t.Errorf("request %+v", f.statsReq)
	}

	mustRun(t, f, "stats", "--client", "7")
	if f.statsReq != (genl.StatsRequest{Client: 7}) {
		t.Errorf("request %+v", f.statsReq)
	}
	f.stats = genl.Stats{DevIndex: 1, DevName: "rxe0", Counters: genl.Counters{Syncs: 1, Clients: 2, Hist: []uint64{0, 0, 0, 1}}}
	var j map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, f, "stats", "--dev", "rxe0", "-j")), &j); err != nil {
		t.Fatal(err)
	}
	wantJ := map[string]any{
		"scope": "device", "dev": "rxe0", "dev_index": 1.0, "clients": 2.0, "syncs": 1.0, "errors": 0.0,
		"time_ns": 0.0, "max_ns": 0.0, "bytes": 0.0,
		"hist": []any{map[string]any{"slot": 3.0, "low_ns": 4.0, "high_ns": 7.0, "count": 1.0}},
	}
	if d := cmp.Diff(wantJ, j); d != "" {
		t.Errorf("stats -j (-want +got):\n%s", d)
	}
	if f.statsReq != (genl.StatsRequest{Device: "rxe0"}) {
		t.Errorf("request %+v", f.statsReq)
	}
}

func TestHistNanoseconds(t *testing.T) {
	var b strings.Builder
	printHist(&b, []uint64{2, 0, 1, 4, 0, 1})
	want := `     nsecs               : count    distribution
         0 -> 0          : 2        |********************                    |
         1 -> 1          : 0        |                                        |
         2 -> 3          : 1        |**********                              |
         4 -> 7          : 4        |****************************************|
         8 -> 15         : 0        |                                        |
        16 -> 31         : 1        |**********                              |
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
