package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

func testEvents() []genl.Event {
	return []genl.Event{
		{Type: genl.EventClientNew, DevIndex: 1, DevName: "rxe0", Client: &genl.Client{
			ID: 5, Name: "b", DevIndex: 1, DevName: "rxe0", Kind: genl.KindSim,
			Flags: genl.FlagLazy, State: genl.StateLive, Size: 4096}},
		{Type: genl.EventClientDel, DevIndex: 1, DevName: "rxe0",
			Client: &genl.Client{ID: 5, Name: "b", DevIndex: 1, DevName: "rxe0"}},
		{Type: genl.EventClientInvalidated, DevIndex: 2, DevName: "rxe1",
			Client: &genl.Client{ID: 6, Name: "c", InvalReason: genl.ReasonDevice}},
		{Type: genl.EventDevNew, DevIndex: 2, DevName: "rxe1"},
		{Type: genl.EventDevDel, DevIndex: 2, DevName: "rxe1"},
		{Type: genl.EventSyncFailed, DevIndex: 1, DevName: "rxe0", Dir: genl.DirToCPU, Err: unix.EIO,
			Client: &genl.Client{ID: 7}},
	}
}

func TestMonitorJSONCount(t *testing.T) {
	f := &fakeAPI{events: testEvents()}
	r := runFake(t, f, "monitor", "--count", "3", "-j")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 3 {
		t.Fatalf("exit %d, %d lines:\n%s", r.code, len(lines), r.stdout)
	}
	var got []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, m)
	}
	want := []map[string]any{
		{"event": "client-new", "dev": "rxe0", "dev_index": 1.0, "id": 5.0, "name": "b", "kind": "sim",
			"flags": []any{"lazy"}, "state": "live", "size": 4096.0},
		{"event": "client-del", "dev": "rxe0", "dev_index": 1.0, "id": 5.0, "name": "b"},
		{"event": "client-invalidated", "dev": "rxe1", "dev_index": 2.0, "id": 6.0, "name": "c", "inval_reason": "device"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	j := eventJSON(testEvents()[5])
	if j.Dir != "to-cpu" || j.Err != "EIO" || j.ID != 7 {
		t.Errorf("sync-failed: %+v", j)
	}
}

// TestMonitorInbound: a failed inbound sync is named "inbound", in lines
// and in JSON.
func TestMonitorInbound(t *testing.T) {
	ev := genl.Event{Type: genl.EventSyncFailed, DevIndex: 1, DevName: "rxe0", Dir: genl.DirInbound,
		Err: unix.EOPNOTSUPP, Client: &genl.Client{ID: 8}}
	r := runFake(t, &fakeAPI{events: []genl.Event{ev}}, "monitor", "count", "1")
	if want := "[sync,failed] id 8 dev rxe0 dir inbound err EOPNOTSUPP\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d stderr %q\ngot  %q\nwant %q", r.code, r.stderr, r.stdout, want)
	}
	r = runFake(t, &fakeAPI{events: []genl.Event{ev}}, "-j", "monitor", "count", "1")
	want := `{"event":"sync-failed","id":8,"dev":"rxe0","dev_index":1,"dir":"inbound","err":"EOPNOTSUPP"}` + "\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d stderr %q\ngot  %q\nwant %q", r.code, r.stderr, r.stdout, want)
	}
}

// TestMonitorReload: the module going away and coming back, and events
// lost, are lines of their own, and the monitor goes on; --rcvbuf sets the
// receive buffer.
func TestMonitorReload(t *testing.T) {
	f := &fakeAPI{events: []genl.Event{
		testEvents()[3], {Type: genl.EventFamilyDel}, {Type: genl.EventFamilyNew}, {Type: genl.EventLost},
		testEvents()[4],
	}}
	r := runFake(t, f, "monitor", "--count", "5", "--rcvbuf", "4M")
	want := "[dev,new] dev rxe1 dev_index 2\n[family,del]\n[family,new]\n[events,lost]\n[dev,del] dev rxe1 dev_index 2\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d stderr %q\ngot\n%s\nwant\n%s", r.code, r.stderr, r.stdout, want)
	}
	if f.watchOpts != 1 {
		t.Errorf("%d watch options, want the receive buffer", f.watchOpts)
	}
	r = runFake(t, &fakeAPI{events: []genl.Event{{Type: genl.EventFamilyDel}}}, "monitor", "--count", "1", "-j")
	if r.stdout != `{"event":"family-del"}`+"\n" {
		t.Errorf("JSON %q", r.stdout)
	}
	if r := runFake(t, &fakeAPI{}, "monitor", "--rcvbuf", "0"); r.code == 0 || !strings.Contains(r.stderr, "invalid --rcvbuf") {
		t.Errorf("--rcvbuf 0: %+v", r)
	}
}

// TestMonitorEnds: a cancelled context (Ctrl-C) ends the monitor without
// an error; a failing socket ends it with one.
func TestMonitorEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeAPI{events: testEvents()[:1]}
	done := make(chan error)
	var out bytes.Buffer
	go func() { done <- monitor(ctx, f, &out, &bytes.Buffer{}, &output{}, 0) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil || !strings.HasPrefix(out.String(), "[client,new]") {
			t.Errorf("error %v, output %q", err, out.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("monitor did not end")
	}

	lost := errors.New("watch events: events lost, the receiver fell behind")
	f = &fakeAPI{events: testEvents()[:2], errs: map[string]error{"Watch.Receive": lost}}
	r := runFake(t, f, "monitor")
	if r.code != 1 || !strings.HasSuffix(r.stderr, "Error: "+lost.Error()+"\n") || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("%+v", r)
	}
}

// TestHelp: every command documents itself with examples, and the
// generated completion command is there.
func TestHelp(t *testing.T) {
	root := newRoot(nil)
	root.InitDefaultCompletionCmd()
	names := map[string]bool{}
	for _, c := range root.Commands() {
		names[c.Name()] = true
		if c.Name() == "completion" || c.Name() == "help" {
			continue
		}
		if c.Short == "" || c.Long == "" || !strings.Contains(c.Example, "syncmemctl "+c.Name()) {
			t.Errorf("%s: Short %q, Long %d bytes, Example %q", c.Name(), c.Short, len(c.Long), c.Example)
		}
		if !c.SilenceUsage && !root.SilenceUsage {
			t.Errorf("%s prints usage on errors", c.Name())
		}
	}
	for _, n := range []string{"devices", "register", "unregister", "list", "sync", "stats", "monitor", "completion"} {
		if !names[n] {
			t.Errorf("no %s command", n)
		}
	}
	for _, args := range [][]string{
		{"completion", "bash"}, {"register", "--help"}, {"--version"},
	} {
		out := mustRun(t, &fakeAPI{}, args...)
		if out == "" {
			t.Errorf("%v printed nothing", args)
		}
	}
	help := mustRun(t, &fakeAPI{}, "register", "--help")
	if strings.Contains(help, "--hold") || !strings.Contains(help, "--owned") || !strings.Contains(help, "-j, --json") ||
		!strings.Contains(help, "--dmabuf-fd N ") || !strings.Contains(help, "kind dmabuf dmabuf-fd 7") ||
		!strings.Contains(help, "Conn.RegisterRegion") {
		t.Errorf("register --help:\n%s", help)
	}
}

// TestDevIndexZero: a device's index may be 0 (the first RDMA device):
// monitor -j and stats -j still say dev_index 0, and leave it out only
// where there is no device.
func TestDevIndexZero(t *testing.T) {
	f := &fakeAPI{events: []genl.Event{
		{Type: genl.EventDevNew, DevIndex: 0, DevName: "rxe0"},
		{Type: genl.EventFamilyDel},
	}}
	r := runFake(t, f, "-j", "monitor", "count", "2")
	if want := `{"event":"dev-new","dev":"rxe0","dev_index":0}` + "\n" + `{"event":"family-del"}` + "\n"; r.code != 0 || r.stdout != want {
		t.Errorf("monitor: exit %d\n%s\nwant\n%s", r.code, r.stdout, want)
	}
	f = &fakeAPI{stats: genl.Stats{DevIndex: 0, DevName: "rxe0"}}
	if got := mustRun(t, f, "-j", "stats", "dev", "rxe0"); !strings.Contains(got, `"dev":"rxe0","dev_index":0,`) {
		t.Errorf("stats dev rxe0: %s", got)
	}
	f.clients = []genl.Client{{ID: 3, Name: "a", DevIndex: 0, DevName: "rxe0"}}
	f.stats = genl.Stats{ClientID: 3}
	if got := mustRun(t, f, "-j", "stats", "id", "3"); !strings.Contains(got, `"dev":"rxe0","dev_index":0,`) {
		t.Errorf("stats id 3: %s", got)
	}
	f.stats = genl.Stats{}
	if got := mustRun(t, f, "-j", "stats"); strings.Contains(got, "dev") {
		t.Errorf("module stats: %s", got)
	}
}
