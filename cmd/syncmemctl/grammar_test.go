package main

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
	"golang.org/x/sys/unix"
)

// Tests of the grammar every verb shares: keywords beside flags, global
// -j/-p, prefixes of the verbs, one way to name a device and a client.

// TestKeywordsAreFlags: every verb takes its options as iproute2-style
// keywords, and a command line of keywords does what the same one of flags
// does.
func TestKeywordsAreFlags(t *testing.T) {
	for _, tt := range []struct {
		keywords, flags []string
		check           func(*fakeAPI) any
	}{
		{[]string{"devices", "dev", "rxe1"}, []string{"devices", "--dev", "rxe1"}, nil},
		{[]string{"list", "dev", "rxe0"}, []string{"list", "--dev", "rxe0"}, func(f *fakeAPI) any { return f.dev }},
		{[]string{"list", "id", "3,4"}, []string{"list", "--id", "3", "--id", "4"}, func(f *fakeAPI) any { return f.calls }},
		{[]string{"register", "dev", "rxe0", "name", "a", "latency", "200us", "size", "64K", "lazy", "batch"},
			[]string{"register", "--dev", "rxe0", "--name", "a", "--latency", "200us", "--size", "64K", "--lazy", "--batch"},
			func(f *fakeAPI) any { return f.regReq }},
		{[]string{"sync", "id", "3", "id", "4,5", "dir", "to-cpu", "timeout", "5s"},
			[]string{"sync", "--id", "3", "--id", "4,5", "--dir", "to-cpu", "--timeout", "5s"},
			func(f *fakeAPI) any { return f.syncReq }},
		{[]string{"sync", "dev", "rxe0"}, []string{"sync", "--dev", "rxe0"}, func(f *fakeAPI) any { return f.syncReq }},
		{[]string{"sync", "id", "3", "dir", "inbound"}, []string{"sync", "--id", "3", "--dir", "inbound"},
			func(f *fakeAPI) any { return f.syncReq }},
		{[]string{"sync", "dev", "rxe0", "owner", "sim"}, []string{"sync", "--dev", "rxe0", "--owner", "sim"},
			func(f *fakeAPI) any { return f.syncReq }},
		{[]string{"sync", "id", "3", "offset", "4K", "len", "8K"}, []string{"sync", "--id", "3", "--offset", "4K", "--len", "8K"},
			func(f *fakeAPI) any { return f.syncReq }},
		{[]string{"mark-dirty", "id", "3", "dir", "to-cpu", "len", "64"},
			[]string{"mark-dirty", "--id", "3", "--dir", "to-cpu", "--len", "64"}, func(f *fakeAPI) any { return f.marks }},
		{[]string{"list", "owner", "sim"}, []string{"list", "--owner", "sim"}, func(f *fakeAPI) any { return f.owner }},
		{[]string{"stats", "id", "3"}, []string{"stats", "--id", "3"}, func(f *fakeAPI) any { return f.statsReq }},
		{[]string{"stats", "dev", "rxe0"}, []string{"stats", "--dev", "rxe0"}, func(f *fakeAPI) any { return f.statsReq }},
		{[]string{"unregister", "id", "3,4"}, []string{"unregister", "--id", "3", "--id", "4"}, func(f *fakeAPI) any { return f.unreg }},
		{[]string{"monitor", "count", "1"}, []string{"monitor", "--count", "1"}, nil},
	} {
		t.Run(strings.Join(tt.keywords, " "), func(t *testing.T) {
			fk, ff := readFake(), readFake()
			a, b := runFake(t, fk, tt.keywords...), runFake(t, ff, tt.flags...)
			if a.code != 0 || a != b {
				t.Fatalf("keywords: %+v\nflags:    %+v", a, b)
			}
			if tt.check != nil {
				if d := cmp.Diff(tt.check(ff), tt.check(fk)); d != "" {
					t.Errorf("request (-flags +keywords):\n%s", d)
				}
			}
		})
	}
}

// readFake is a kernel with a device, clients, statistics and an event.
func readFake() *fakeAPI {
	return &fakeAPI{
		devices: testDevices(), clients: testClients(), reg: genl.Client{ID: 3},
		stats:  genl.Stats{ClientID: 3, Counters: genl.Counters{Syncs: 1}},
		sync:   genl.SyncResult{Run: 1, Results: []genl.ClientResult{{ID: 3}}},
		events: testEvents()[:1],
	}
}

// TestBadKeywords: misspelt keywords, missing values, a keyword and its
// flag both given, and the old positional forms, each refused before the
// kernel with a message that says what to write.
func TestBadKeywords(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "device", "rxe0"}, `unknown keyword "device"`},
		{[]string{"list", "3"}, `unknown keyword "3" (a client is named "id 3" or --id 3)`},
		{[]string{"unregister", "3", "4"}, `(a client is named "id 3" or --id 3)`},
		{[]string{"devices", "rxe0"}, `unknown keyword "rxe0" (a device is named "dev rxe0" or --dev rxe0); keywords: dev`},
		{[]string{"sync", "dev"}, "dev needs a value: dev DEV"},
		{[]string{"sync", "dev", "rxe0", "dev", "rxe1"}, "dev is given twice"},
		{[]string{"sync", "id", "3", "--id", "4"}, "id is given both as --id and as a keyword"},
		{[]string{"register", "dev", "rxe0", "name", "a", "latency", "fast"}, `invalid latency "fast"`},
		{[]string{"sync", "--client", "3"}, "unknown flag: --client"},
		{[]string{"stats", "id", "3,4"}, "stats are of one client"},
		{[]string{"unregister"}, "name the clients to delete"},
	} {
		r := runFake(t, &fakeAPI{}, tt.args...)
		if r.code != 1 || r.dials != 0 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, %d dials, stderr %q, want %q", tt.args, r.code, r.dials, r.stderr, tt.want)
		}
	}
}

// TestPrefixesAndGlobalFlags: verbs by unambiguous prefixes, -j and -p
// before or after the verb.
func TestPrefixesAndGlobalFlags(t *testing.T) {
	want := mustRun(t, readFake(), "list", "-j")
	for _, args := range [][]string{
		{"-j", "list"}, {"li", "-j"}, {"-j", "l"}, {"--json", "list", "dev", "rxe0"},
	} {
		if got := mustRun(t, readFake(), args...); got != want {
			t.Errorf("%v:\n%s\nwant\n%s", args, got, want)
		}
	}
	if got := mustRun(t, readFake(), "-p", "dev"); !strings.HasPrefix(got, "[\n  {") {
		t.Errorf("-p dev: %s", got)
	}
	if r := runFake(t, readFake(), "s"); r.code == 0 {
		t.Errorf("an ambiguous prefix (sync, stats) ran: %+v", r)
	}
}

// TestListingsAreArrays: every listing prints a JSON array, filtered or
// not, of one object or none.
func TestListingsAreArrays(t *testing.T) {
	for _, args := range [][]string{
		{"devices"}, {"devices", "dev", "rxe1"}, {"list"}, {"list", "dev", "rxe0"}, {"list", "id", "3"},
	} {
		out := mustRun(t, readFake(), append([]string{"-j"}, args...)...)
		var v []map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) == 0 {
			t.Errorf("%v: not a non-empty array (%v): %s", args, err, out)
		}
	}
	if out := mustRun(t, &fakeAPI{}, "-j", "list"); out != "[]\n" {
		t.Errorf("no clients: %q", out)
	}
}

// TestJSONShapes pins the fields of every command's JSON: one set of names
// everywhere (dev, dev_index, id, err), as the README's CLI section lists
// them.
func TestJSONShapes(t *testing.T) {
	f := readFake()
	f.sync = genl.SyncResult{Err: unix.EIO, Run: 2, Errors: 1, Results: []genl.ClientResult{{ID: 3}, {ID: 4, Err: unix.EIO}}}
	f.stats = genl.Stats{ClientID: 3, DevIndex: 1, DevName: "rxe0", Counters: genl.Counters{Syncs: 1, Hist: hist.Log2{Counts: []uint64{1}}}}
	f.events = []genl.Event{
		testEvents()[0], testEvents()[5], {Type: genl.EventFamilyDel},
	}
	for _, tt := range []struct {
		args []string
		want []string // the keys of the (first) object, sorted; nested objects as key.sub
	}{
		{[]string{"devices"}, []string{"clients", "dev", "dev_index", "passes", "stats",
			"stats.bytes", "stats.errors", "stats.max_ns", "stats.syncs", "stats.time_ns"}},
		{[]string{"list"}, []string{"dev", "dev_index", "flags", "id", "kind", "name", "origin", "owner", "owner_pid",
			"owner_portid", "sim", "sim.batch", "sim.calls_bidirectional", "sim.calls_inbound", "sim.calls_to_cpu", "sim.calls_to_device",
			"sim.fail_err", "sim.fail_next", "sim.latency_ns", "sim.size", "size", "state", "stats",
			"stats.bytes", "stats.errors", "stats.max_ns", "stats.syncs", "stats.time_ns"}},
		{[]string{"register", "dev", "rxe0", "name", "a"}, []string{"dev", "dev_index", "flags", "id", "kind",
			"name", "size", "state", "stats", "stats.bytes", "stats.errors", "stats.max_ns", "stats.syncs", "stats.time_ns"}},
		{[]string{"stats", "id", "3"}, []string{"bytes", "dev", "dev_index", "errors", "hist", "id", "kind",
			"max_ns", "name", "scope", "size", "state", "syncs", "time_ns"}},
		{[]string{"monitor", "count", "1"}, []string{"dev", "dev_index", "event", "flags", "id", "kind", "name",
			"size", "state"}},
	} {
		out := stdoutOf(t, f, append([]string{"-j"}, tt.args...)...)
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %v\n%s", tt.args, err, out)
		}
		if a, ok := v.([]any); ok {
			v = a[0]
		}
		if d := cmp.Diff(tt.want, keysOf(v.(map[string]any), "")); d != "" {
			t.Errorf("%v keys (-want +got):\n%s", tt.args, d)
		}
	}
	r := runFake(t, f, "-j", "sync", "id", "3,4")
	var s map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"dir": "to-device", "err": "EIO", "run": 2.0, "errors": 1.0, "skipped": 0.0,
		"time_ns": 0.0, "results": []any{
			map[string]any{"id": 3.0, "time_ns": 0.0},
			map[string]any{"id": 4.0, "err": "EIO", "time_ns": 0.0},
		}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("sync -j (-want +got):\n%s", d)
	}
	lines := strings.Split(strings.TrimSpace(stdoutOf(t, f, "-j", "monitor", "count", "3")), "\n")
	if len(lines) != 3 || lines[1] != `{"event":"sync-failed","id":7,"dev":"rxe0","dev_index":1,"dir":"to-cpu","err":"EIO"}` ||
		lines[2] != `{"event":"family-del"}` {
		t.Errorf("monitor -j:\n%s", strings.Join(lines, "\n"))
	}
}

// stdoutOf runs args, which must succeed, and returns what they printed
// on stdout (monitor and completion print on stderr too).
func stdoutOf(t *testing.T, f *fakeAPI, args ...string) string {
	t.Helper()
	r := runFake(t, f, args...)
	if r.code != 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	return r.stdout
}

// keysOf lists the keys of m, and those of its objects as key.sub, sorted.
func keysOf(m map[string]any, prefix string) []string {
	var keys []string
	for k, v := range m {
		keys = append(keys, prefix+k)
		if sub, ok := v.(map[string]any); ok && k != "hist" {
			keys = append(keys, keysOf(sub, prefix+k+".")...)
		}
	}
	sort.Strings(keys)
	return keys
}

// TestKeywordCompletion: keywords complete, and after one its value.
func TestKeywordCompletion(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "sync", ""}, []string{"dev", "id", "dir", "owner", "timeout", "offset", "len", "async"}},
		{[]string{"__complete", "mark-dirty", ""}, []string{"id", "dir", "offset", "len"}},
		{[]string{"__complete", "mark-dirty", "id", "3", "dir", ""}, []string{"to-device", "to-cpu", "bidirectional", "inbound"}},
		{[]string{"__complete", "mark-dirty", "id", ""}, []string{"3", "4", "5"}},
		{[]string{"__complete", "mark-dirty", "id", "3", "offset", "4K", ""}, []string{"dir", "id", "len"}},
		{[]string{"__complete", "list", "owner", ""}, []string{"sim", "nv_peer"}},
		{[]string{"__complete", "sync", "dev", ""}, []string{"rxe0", "rxe1"}},
		{[]string{"__complete", "sync", "dev", "rxe0", "d"}, []string{"dir"}},
		{[]string{"__complete", "sync", "dir", ""}, []string{"to-device", "to-cpu", "bidirectional", "inbound"}},
		{[]string{"__complete", "stats", "id", ""}, []string{"3", "4", "5"}},
	} {
		out := stdoutOf(t, readFake(), tt.args...)
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if l == "" || strings.HasPrefix(l, ":") || strings.HasPrefix(l, "Completion ended") {
				continue
			}
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		sort.Strings(got)
		want := slices.Clone(tt.want)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v: %v, want %v", tt.args[1:], got, want)
		}
	}
}

// TestMonitorLines: iproute2-style lines, [object,action] then keywords.
func TestMonitorLines(t *testing.T) {
	f := &fakeAPI{events: append(testEvents(), genl.Event{Type: genl.EventFamilyDel},
		genl.Event{Type: genl.EventFamilyNew}, genl.Event{Type: genl.EventLost})}
	r := runFake(t, f, "monitor", "count", "9")
	want := `[client,new] id 5 name b dev rxe0 kind sim state live size 4KiB flags lazy
[client,del] id 5 name b dev rxe0
[client,invalidated] id 6 name c dev rxe1 reason device
[dev,new] dev rxe1 dev_index 2
[dev,del] dev rxe1 dev_index 2
[sync,failed] id 7 dev rxe0 dir to-cpu err EIO
[family,del]
[family,new]
[events,lost]
`
	if r.code != 0 || r.stdout != want || r.stderr != "monitoring ib_sync_mem events\n" {
		t.Errorf("exit %d stderr %q\ngot\n%s\nwant\n%s", r.code, r.stderr, r.stdout, want)
	}
}
