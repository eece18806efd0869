package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// Tests of the commands that change things: register, unregister, sync,
// mark-dirty.

func TestRegisterRequest(t *testing.T) {
	base := []string{"register", "--dev", "rxe0", "--name", "buf0"}
	for _, tt := range []struct {
		args []string
		want genl.RegisterRequest
	}{
		{nil, genl.RegisterRequest{Device: "rxe0", Name: "buf0", Kind: genl.KindSim}},
		{[]string{"--lazy", "--owned"}, genl.RegisterRequest{Device: "rxe0", Name: "buf0",
			Kind: genl.KindSim, Flags: genl.FlagLazy | genl.FlagOwned}},
		{[]string{"--latency", "200us", "--size", "64K", "--batch"}, genl.RegisterRequest{
			Device: "rxe0", Name: "buf0", Kind: genl.KindSim, Sim: &genl.SimConfig{
				Latency: new(200 * time.Microsecond), Size: new(uint64(65536)), Batch: true,
			}}},
		{[]string{"--fail-next", "3", "--fail-errno", "EIO"}, genl.RegisterRequest{
			Device: "rxe0", Name: "buf0", Kind: genl.KindSim, Sim: &genl.SimConfig{
				FailNext: new(uint32(3)), FailErrno: new(unix.EIO),
			}}},
		// Out-of-range values go to the kernel, which says what is wrong.
		{[]string{"--fail-errno", "0", "--latency", "0s"}, genl.RegisterRequest{
			Device: "rxe0", Name: "buf0", Kind: genl.KindSim, Sim: &genl.SimConfig{
				FailErrno: new(syscall.Errno(0)), Latency: new(time.Duration(0)),
			}}},
		// So does a kind by number, which the kernel may not have.
		{[]string{"--fail-errno", "5000", "--kind", "7"}, genl.RegisterRequest{
			Device: "rxe0", Name: "buf0", Kind: 7, Sim: &genl.SimConfig{
				FailErrno: new(syscall.Errno(5000)),
			}}},
		{[]string{"--kind", "1"}, genl.RegisterRequest{Device: "rxe0", Name: "buf0", Kind: genl.KindSim}},
	} {
		f := &fakeAPI{reg: genl.Client{ID: 42}}
		args := append(append([]string{}, base...), tt.args...)
		if out := mustRun(t, f, args...); out != "42\n" {
			t.Errorf("%v printed %q", args, out)
		}
		if d := cmp.Diff(tt.want, f.regReq); d != "" {
			t.Errorf("%v: request (-want +got):\n%s", args, d)
		}
	}
}

// openFD returns a file descriptor open in this process, closed at the
// end of the test: what a parent process leaves to syncmemctl.
func openFD(t *testing.T) int {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return int(r.Fd())
}

// TestRegisterDMABuf: --kind dmabuf --dmabuf-fd N sends the inherited fd.
func TestRegisterDMABuf(t *testing.T) {
	fd := openFD(t)
	base := []string{"register", "--dev", "rxe0", "--name", "frame0", "--kind", "dmabuf", "--dmabuf-fd", strconv.Itoa(fd)}
	for _, tt := range []struct {
		args []string
		want genl.RegisterRequest
	}{
		{nil, genl.RegisterRequest{Device: "rxe0", Name: "frame0", Kind: genl.KindDMABuf,
			DMABuf: &genl.DMABufConfig{FD: int32(fd)}}},
		{[]string{"--lazy", "--owned"}, genl.RegisterRequest{Device: "rxe0", Name: "frame0", Kind: genl.KindDMABuf,
			Flags: genl.FlagLazy | genl.FlagOwned, DMABuf: &genl.DMABufConfig{FD: int32(fd)}}},
		{[]string{"--kind", "3"}, genl.RegisterRequest{Device: "rxe0", Name: "frame0", Kind: genl.KindDMABuf,
			DMABuf: &genl.DMABufConfig{FD: int32(fd)}}},
	} {
		f := &fakeAPI{reg: genl.Client{ID: 12}}
		args := append(append([]string{}, base...), tt.args...)
		if out := mustRun(t, f, args...); out != "12\n" {
			t.Errorf("%v printed %q", args, out)
		}
		if d := cmp.Diff(tt.want, f.regReq); d != "" {
			t.Errorf("%v: request (-want +got):\n%s", args, d)
		}
	}

	// -j prints the client as the kernel describes it.
	f := &fakeAPI{reg: memClients()[2]}
	var got map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, f, append(base, "-j")...)), &got); err != nil {
		t.Fatal(err)
	}
	if got["id"] != 12.0 || got["kind"] != "dmabuf" || got["dmabuf"].(map[string]any)["exporter"] != "drm" {
		t.Errorf("%v", got)
	}

	// The kernel's refusal of an fd that is no dma-buf.
	f = &fakeAPI{errs: map[string]error{"Register": &genl.Error{Op: "register client frame0", Errno: unix.EBADF,
		Message: "not a dma-buf fd", Attr: "DMABUF_FD=" + strconv.Itoa(fd)}}}
	r := runFake(t, f, base...)
	if want := "Error: register client frame0: not a dma-buf fd (DMABUF_FD=" + strconv.Itoa(fd) + ")\n"; r.code != 1 ||
		r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
}

// TestRegisterRefusedKinds: region and dma-buf registrations syncmemctl
// cannot make, refused with a message that says why, before dialing.
func TestRegisterRefusedKinds(t *testing.T) {
	fd := strconv.Itoa(openFD(t))
	reg := []string{"register", "--dev", "rxe0", "--name", "a"}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--kind", "region"}, []string{`invalid --kind "region": a region client cannot be registered ` +
			`from syncmemctl: its memory would be syncmemctl's own, gone when it exits`, "pkg/genl", "RegisterRegion"}},
		{[]string{"--kind", "2"}, []string{`invalid --kind "2": a region client cannot be registered`}},
		{[]string{"--kind", "region", "--dmabuf-fd", fd}, []string{`invalid --kind "region"`}},
		{[]string{"--kind", "kernel"}, []string{`invalid --kind "kernel": kernel clients are registered by kernel drivers`}},
		{[]string{"--kind", "dmabuf"}, []string{"--kind dmabuf needs --dmabuf-fd N"}},
		{[]string{"--dmabuf-fd", fd}, []string{"--dmabuf-fd goes with --kind dmabuf only, not --kind sim"}},
		{[]string{"--kind", "7", "--dmabuf-fd", fd}, []string{"--dmabuf-fd goes with --kind dmabuf only, not --kind 7"}},
		{[]string{"--kind", "dmabuf", "--dmabuf-fd", "x"}, []string{`invalid argument "x" for "--dmabuf-fd" flag`}},
		{[]string{"--kind", "dmabuf", "--dmabuf-fd", "-1"}, []string{`invalid --dmabuf-fd "-1": want a file descriptor number`}},
		{[]string{"--kind", "dmabuf", "--dmabuf-fd", "4294967296"}, []string{`invalid --dmabuf-fd "4294967296"`}},
		{[]string{"--kind", "dmabuf", "--dmabuf-fd", "1000000"}, []string{
			`invalid --dmabuf-fd "1000000": not an open file descriptor of syncmemctl (bad file descriptor)`,
			"without close-on-exec"}},
		{[]string{"--kind", "dmabuf", "--dmabuf-fd", fd, "--size", "4K"}, []string{"--size configures sim clients, not --kind dmabuf"}},
		{[]string{"--kind", "dmabuf", "--dmabuf-fd", fd, "--latency", "0s"}, []string{"--latency configures sim clients"}},
		{[]string{"--kind", "dmabuf", "--dmabuf-fd", fd, "--batch"}, []string{"--batch configures sim clients"}},
	} {
		args := append(append([]string{}, reg...), tt.args...)
		r := runFake(t, &fakeAPI{}, args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "Error: ") || r.dials != 0 || r.stdout != "" {
			t.Errorf("%v: exit %d, dialed %d times, stdout %q, stderr %q", args, r.code, r.dials, r.stdout, r.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr %q, want %q", args, r.stderr, w)
			}
		}
	}
}

func TestRegisterJSON(t *testing.T) {
	f := &fakeAPI{reg: testClients()[0]}
	var got map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, f, "register", "--dev", "rxe0", "--name", "buf0", "-j")), &got); err != nil {
		t.Fatal(err)
	}
	if got["id"] != 3.0 || got["owner_pid"] != 99.0 {
		t.Errorf("%v", got)
	}
}

func TestRegisterHold(t *testing.T) {
	f := &fakeAPI{reg: genl.Client{ID: 42}}
	start := time.Now()
	if out := mustRun(t, f, "register", "--dev", "rxe0", "--name", "o", "--owned", "--hold", "50ms"); out != "42\n" {
		t.Errorf("printed %q", out)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("returned after %v", d)
	}
}

// TestBadCommandLines: every bad command line is refused with a message
// naming the problem, before dialing the kernel.
func TestBadCommandLines(t *testing.T) {
	reg := []string{"register", "--dev", "rxe0", "--name", "a"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"register", "--name", "a"}, `required flag(s) "dev" not set`},
		{[]string{"register", "--dev", "rxe0"}, `required flag(s) "name" not set`},
		{append(reg, "--latency", "abc"), `invalid argument "abc" for "--latency" flag`},
		{append(reg, "--latency", "-1s"), `invalid --latency "-1s": must not be negative`},
		{append(reg, "--latency", "1500ns"), `invalid --latency "1.5µs": must be a whole number of microseconds`},
		{append(reg, "--size", "4Q"), `invalid --size "4Q": want bytes`},
		{append(reg, "--size", "0.5"), `invalid --size "0.5": not a whole number of bytes`},
		{append(reg, "--size", "99999999T"), `invalid --size "99999999T": too large`},
		{append(reg, "--fail-errno", "EFOO"), `invalid --fail-errno "EFOO": no such errno name`},
		{append(reg, "--fail-errno", "-5"), `invalid --fail-errno "-5": want an errno number or name`},
		{append(reg, "--fail-next", "x"), `invalid argument "x" for "--fail-next" flag`},
		{append(reg, "--kind", "gpu"), `invalid --kind "gpu"`},
		{append(reg, "extra"), `unknown keyword "extra"; keywords: batch, dev`},
		{[]string{"unregister"}, "name the clients to delete: id ID[,ID...] or --id ID"},
		{[]string{"unregister", "id", "3,x"}, `invalid --id "x": want a positive client id`},
		{[]string{"unregister", "id", "0"}, `invalid --id "0"`},
		{[]string{"sync"}, "name one target: dev DEV, or id ID[,ID...]"},
		{[]string{"sync", "--dev", "rxe0", "--id", "3"}, "name one target"},
		{[]string{"sync", "id", "3", "owner", "sim"}, "owner selects clients of a device: give dev DEV too"},
		{[]string{"sync", "--id", "3,,4"}, `invalid --id "": want a positive client id`},
		{[]string{"sync", "id", "3", "dir", "up"}, `invalid --dir "up": want to-device, to-cpu, bidirectional or inbound`},
		{[]string{"sync", "id", "3", "dir", "in"}, `invalid --dir "in": want to-device, to-cpu, bidirectional or inbound`},
		{[]string{"sync", "id", "3", "dir", "4"}, `invalid --dir "4": want to-device, to-cpu, bidirectional or inbound`},
		{[]string{"sync", "--id", "3", "--timeout", "1500us"}, `invalid --timeout "1.5ms": must be a whole number of milliseconds`},
		{[]string{"sync", "--id", "3", "--timeout", "-1s"}, `must not be negative`},
		{[]string{"sync", "dev", "rxe0", "len", "4K"}, "offset and len are bytes of one client: give one id ID, not dev DEV or a batch"},
		{[]string{"sync", "id", "3,4", "offset", "0", "len", "4K"}, "offset and len are bytes of one client"},
		{[]string{"sync", "id", "3", "offset", "4K"}, "offset needs len: offset BYTES len BYTES, the bytes from offset"},
		{[]string{"sync", "id", "3", "len", "0"}, "invalid argument: range of 0 bytes at offset 0: a range needs a length of 1 byte or more"},
		{[]string{"sync", "id", "3", "offset", "4K", "len", "0"}, "range of 0 bytes at offset 4096"},
		{[]string{"sync", "id", "3", "len", "4Q"}, `invalid --len "4Q": want bytes`},
		{[]string{"sync", "id", "3", "offset", "4 pages", "len", "4K"}, `invalid --offset "4 pages": want bytes`},
		{[]string{"sync", "id", "3", "len", "64", "len", "128"}, "len is given twice"},
		{[]string{"mark-dirty"}, "name the one client to mark: id ID"},
		{[]string{"mark-dirty", "id", "3,4"}, "name the one client to mark: id ID"},
		{[]string{"mark-dirty", "id", "x"}, `invalid --id "x": want a positive client id`},
		{[]string{"mark-dirty", "id", "3", "dir", "up"}, `invalid --dir "up": want to-device, to-cpu, bidirectional or inbound`},
		{[]string{"mark-dirty", "id", "3", "offset", "64"}, "offset needs len"},
		{[]string{"mark-dirty", "id", "3", "len", "0"}, "range of 0 bytes at offset 0: a range needs a length of 1 byte or more"},
		{[]string{"mark-dirty", "id", "3", "len", "1.5"}, `invalid --len "1.5": not a whole number of bytes`},
		{[]string{"mark-dirty", "id", "3", "timeout", "1s"}, `unknown keyword "timeout"; keywords: dir, id, len, offset`},
		{[]string{"stats", "dev", "rxe0", "id", "3"}, "give dev or id, not both"},
		{[]string{"stats", "--id", "x"}, `invalid --id "x"`},
		{[]string{"monitor", "--count", "-1"}, `invalid --count "-1": must not be negative`},
		{[]string{"list", "--bogus"}, "unknown flag: --bogus\nRun 'syncmemctl list --help' for usage."},
	} {
		r := runFake(t, &fakeAPI{}, tt.args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "Error: ") || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
		if r.dials != 0 || r.stdout != "" {
			t.Errorf("%v: dialed %d times, printed %q", tt.args, r.dials, r.stdout)
		}
	}
}

func TestUnregister(t *testing.T) {
	f := &fakeAPI{}
	r := runFake(t, f, "unregister", "id", "3", "id", "99", "id", "4,5")
	if want := []uint32{3, 99, 4, 5}; !cmp.Equal(f.unreg, want) {
		t.Errorf("unregistered %v, want %v", f.unreg, want)
	}
	if r.code != 1 || r.stderr != "Error: unregister client 99: no such client\n" || r.stdout != "" {
		t.Errorf("%+v", r)
	}
	if out := mustRun(t, &fakeAPI{}, "unregister", "id", "7"); out != "" {
		t.Errorf("printed %q", out)
	}
}

func TestSyncRequest(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want genl.SyncRequest
	}{
		{[]string{"--dev", "rxe0"}, genl.SyncRequest{Device: "rxe0", Dir: genl.DirToDevice}},
		{[]string{"dev", "rxe0", "owner", "sim"}, genl.SyncRequest{Device: "rxe0", Owner: "sim", Dir: genl.DirToDevice}},
		{[]string{"--id", "3", "--dir", "to-cpu"}, genl.SyncRequest{Clients: []uint32{3}, Dir: genl.DirToCPU}},
		{[]string{"id", "3,4", "id", "5", "dir", "bidirectional", "timeout", "5s"},
			genl.SyncRequest{Clients: []uint32{3, 4, 5}, Dir: genl.DirBidirectional, Timeout: new(5 * time.Second)}},
		{[]string{"id", "3", "dir", "inbound"}, genl.SyncRequest{Clients: []uint32{3}, Dir: genl.DirInbound}},
		{[]string{"--dev", "rxe0", "--dir", "inbound"}, genl.SyncRequest{Device: "rxe0", Dir: genl.DirInbound}},
		{[]string{"id", "3", "offset", "4K", "len", "8K"}, genl.SyncRequest{Clients: []uint32{3}, Dir: genl.DirToDevice,
			Range: &genl.Range{Offset: 4096, Len: 8192}}},
		{[]string{"id", "3", "len", "64", "dir", "to-cpu"}, genl.SyncRequest{Clients: []uint32{3}, Dir: genl.DirToCPU,
			Range: &genl.Range{Len: 64}}},
		{[]string{"--id", "3", "--offset", "0", "--len", "1MiB", "--timeout", "1s"}, genl.SyncRequest{Clients: []uint32{3},
			Dir: genl.DirToDevice, Timeout: new(time.Second), Range: &genl.Range{Len: 1 << 20}}},
		// Past the client, unaligned: the kernel says what is wrong.
		{[]string{"id", "3", "offset", "1T", "len", "3"}, genl.SyncRequest{Clients: []uint32{3}, Dir: genl.DirToDevice,
			Range: &genl.Range{Offset: 1 << 40, Len: 3}}},
		// 0 is sent: the kernel rejects it and says why.
		{[]string{"--dev", "rxe0", "--timeout", "0"}, genl.SyncRequest{Device: "rxe0", Dir: genl.DirToDevice, Timeout: new(time.Duration(0))}},
	} {
		f := &fakeAPI{}
		mustRun(t, f, append([]string{"sync"}, tt.args...)...)
		if d := cmp.Diff(tt.want, f.syncReq); d != "" {
			t.Errorf("%v: request (-want +got):\n%s", tt.args, d)
		}
	}
}

func TestSyncOutput(t *testing.T) {
	f := &fakeAPI{sync: genl.SyncResult{Run: 2, Skipped: 1, Duration: 412 * time.Microsecond,
		Results: []genl.ClientResult{{ID: 3, Duration: 201 * time.Microsecond}, {ID: 4, Duration: 2 * time.Microsecond}}}}
	got := mustRun(t, f, "sync", "--dev", "rxe0")
	want := `sync to-device dev rxe0: 2 run, 0 failed, 1 skipped in 412us
ID  RESULT  TIME
3   ok      201us
4   ok      2.00us
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// A client failed: the results, then an error and exit status 1.
	f.sync = genl.SyncResult{Err: unix.ETIMEDOUT, Run: 2, Errors: 1, Duration: 5 * time.Millisecond,
		Results: []genl.ClientResult{{ID: 4, Err: unix.ETIMEDOUT, Duration: 5 * time.Millisecond}, {ID: 3, Duration: 10}}}
	r := runFake(t, f, "sync", "id", "4,3")
	want = `sync to-device id 4,3: 2 run, 1 failed, 0 skipped in 5.00ms
ID  RESULT     TIME
4   ETIMEDOUT  5.00ms
3   ok         10ns
`
	if r.stdout != want || r.code != 1 ||
		r.stderr != "Error: sync: 1 of 2 clients failed, the first with ETIMEDOUT\n" {
		t.Errorf("exit %d\nstdout\n%s\nwant\n%s\nstderr %q", r.code, r.stdout, want, r.stderr)
	}

	r = runFake(t, f, "sync", "--id", "4,3", "-j", "--dir", "to-cpu")
	var j map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatal(err)
	}
	wantJ := map[string]any{
		"dir": "to-cpu", "err": "ETIMEDOUT", "run": 2.0, "errors": 1.0, "skipped": 0.0,
		"time_ns": 5e6, "results": []any{
			map[string]any{"id": 4.0, "err": "ETIMEDOUT", "time_ns": 5e6},
			map[string]any{"id": 3.0, "time_ns": 10.0},
		},
	}
	if d := cmp.Diff(wantJ, j); d != "" || r.code != 1 {
		t.Errorf("exit %d, JSON (-want +got):\n%s", r.code, d)
	}
}

// TestSyncInbound: "dir inbound" sends direction 4 and names it inbound
// in the output; a client that cannot do it fails with EOPNOTSUPP.
func TestSyncInbound(t *testing.T) {
	f := &fakeAPI{sync: genl.SyncResult{Err: unix.EOPNOTSUPP, Run: 2, Errors: 1, Duration: 30 * time.Microsecond,
		Results: []genl.ClientResult{{ID: 3, Duration: 20 * time.Microsecond}, {ID: 4, Err: unix.EOPNOTSUPP, Duration: 1}}}}
	r := runFake(t, f, "sync", "id", "3,4", "dir", "inbound")
	if got := uint32(f.syncReq.Dir); got != 4 {
		t.Errorf("sent dir %d, want 4", got)
	}
	want := `sync inbound id 3,4: 2 run, 1 failed, 0 skipped in 30.0us
ID  RESULT      TIME
3   ok          20.0us
4   EOPNOTSUPP  1ns
`
	if r.stdout != want || r.code != 1 ||
		r.stderr != "Error: sync: 1 of 2 clients failed, the first with EOPNOTSUPP\n" {
		t.Errorf("exit %d\nstdout\n%s\nwant\n%s\nstderr %q", r.code, r.stdout, want, r.stderr)
	}

	r = runFake(t, f, "-j", "sync", "--dev", "rxe0", "--dir", "inbound")
	if got := uint32(f.syncReq.Dir); got != 4 || f.syncReq.Device != "rxe0" {
		t.Errorf("sent %+v, want dev rxe0 dir 4", f.syncReq)
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatal(err)
	}
	wantJ := map[string]any{
		"dir": "inbound", "err": "EOPNOTSUPP", "run": 2.0, "errors": 1.0, "skipped": 0.0,
		"time_ns": 30e3, "results": []any{
			map[string]any{"id": 3.0, "time_ns": 20e3},
			map[string]any{"id": 4.0, "err": "EOPNOTSUPP", "time_ns": 1.0},
		},
	}
	if d := cmp.Diff(wantJ, j); d != "" || r.code != 1 {
		t.Errorf("exit %d, JSON (-want +got):\n%s", r.code, d)
	}
}

// TestSyncRange: a range sync names its range after the client, in the
// text and in JSON (offset 0 too); a sync without one has neither field.
func TestSyncRange(t *testing.T) {
	f := &fakeAPI{sync: genl.SyncResult{Run: 1, Duration: 3 * time.Microsecond,
		Results: []genl.ClientResult{{ID: 3, Duration: 2 * time.Microsecond}}}}
	got := mustRun(t, f, "sync", "id", "3", "offset", "4K", "len", "8K")
	want := `sync to-device id 3 offset 4096 len 8192: 1 run, 0 failed, 0 skipped in 3.00us
ID  RESULT  TIME
3   ok      2.00us
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = mustRun(t, f, "-j", "sync", "id", "3", "len", "64")
	want = `{"dir":"to-device","offset":0,"len":64,"run":1,"errors":0,"skipped":0,"time_ns":3000,` +
		`"results":[{"id":3,"time_ns":2000}]}` + "\n"
	if got != want {
		t.Errorf("-j: got\n%s\nwant\n%s", got, want)
	}

	// A lazy client that owes nothing: skipped, no results.
	f.sync = genl.SyncResult{Skipped: 1, Duration: 500}
	if got, want := mustRun(t, f, "sync", "id", "3"), "sync to-device id 3: 0 run, 0 failed, 1 skipped in 500ns\n"; got != want {
		t.Errorf("skipped: %q, want %q", got, want)
	}
	if got, want := mustRun(t, f, "-j", "sync", "id", "3"),
		`{"dir":"to-device","run":0,"errors":0,"skipped":1,"time_ns":500,"results":[]}`+"\n"; got != want {
		t.Errorf("skipped -j: %q, want %q", got, want)
	}
}

// TestMarkDirty: mark-dirty sends one client, the direction (to-device
// unless given) and the range if one is given; it prints nothing, -j or
// not.
func TestMarkDirty(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want markReq
	}{
		{[]string{"id", "3"}, markReq{ID: 3, Dir: genl.DirToDevice}},
		{[]string{"id", "3", "dir", "to-cpu"}, markReq{ID: 3, Dir: genl.DirToCPU}},
		{[]string{"--id", "7", "--dir", "inbound", "--len", "4K"}, markReq{ID: 7, Dir: genl.DirInbound,
			Range: &genl.Range{Len: 4096}}},
		{[]string{"id", "3", "offset", "4K", "len", "8K", "dir", "bidirectional"}, markReq{ID: 3,
			Dir: genl.DirBidirectional, Range: &genl.Range{Offset: 4096, Len: 8192}}},
		{[]string{"len", "1.5KiB", "offset", "64", "id", "3"}, markReq{ID: 3, Dir: genl.DirToDevice,
			Range: &genl.Range{Offset: 64, Len: 1536}}},
		// Past the client, unaligned: the kernel says what is wrong.
		{[]string{"id", "3", "offset", "1T", "len", "1"}, markReq{ID: 3, Dir: genl.DirToDevice,
			Range: &genl.Range{Offset: 1 << 40, Len: 1}}},
	} {
		for _, j := range [][]string{nil, {"-j"}} {
			f := &fakeAPI{}
			args := append(append([]string{"mark-dirty"}, tt.args...), j...)
			if out := mustRun(t, f, args...); out != "" {
				t.Errorf("%v printed %q", args, out)
			}
			if d := cmp.Diff([]markReq{tt.want}, f.marks); d != "" {
				t.Errorf("%v: request (-want +got):\n%s", args, d)
			}
		}
	}
}

// TestKernelErrors: kernel errors print as "Error: <message>" with the
// extended ack text, and exit 1.
func TestKernelErrors(t *testing.T) {
	for _, tt := range []struct {
		method string
		err    error
		args   []string
		want   string
	}{
		{"Register", &genl.Error{Op: "register client a", Errno: unix.EPERM},
			[]string{"register", "--dev", "rxe0", "--name", "a"},
			"Error: register client a: operation not permitted (requires CAP_NET_ADMIN)\n"},
		{"Sync", &genl.Error{Op: "sync", Errno: unix.EPERM},
			[]string{"sync", "--dev", "rxe0"}, "Error: sync: operation not permitted (requires CAP_NET_ADMIN)\n"},
		{"Register", &genl.Error{Op: "register client a", Errno: unix.ENODEV, Message: "no such RDMA device"},
			[]string{"register", "--dev", "rxe9", "--name", "a"}, "Error: register client a: no such RDMA device\n"},
		{"Sync", &genl.Error{Op: "sync", Errno: unix.EINVAL, Message: "integer out of range"},
			[]string{"sync", "--dev", "rxe0", "--timeout", "0"}, "Error: sync: integer out of range\n"},
		{"Clients", &genl.Error{Op: "list clients of rxe9", Errno: unix.ENODEV, Message: "no such RDMA device"},
			[]string{"list", "--dev", "rxe9"}, "Error: list clients of rxe9: no such RDMA device\n"},
		{"Stats", &genl.Error{Op: "get stats", Errno: unix.ENOENT, Message: "no such client"},
			[]string{"stats", "id", "9"}, "Error: get stats: no such client\n"},
		{"MarkDirty", &genl.Error{Op: "mark client 3 dirty", Errno: unix.EPERM},
			[]string{"mark-dirty", "id", "3"}, "Error: mark client 3 dirty: operation not permitted (requires CAP_NET_ADMIN)\n"},
		{"MarkDirty", &genl.Error{Op: "mark client 3 dirty", Errno: unix.EINVAL, Message: "client 3 is not lazy"},
			[]string{"mark-dirty", "id", "3"}, "Error: mark client 3 dirty: client 3 is not lazy\n"},
		{"MarkDirty", &genl.Error{Op: "mark client 3 dirty", Errno: unix.ERANGE, Message: "range outside the client",
			Attr: "SYNC_OFFSET=1048576"}, []string{"mark-dirty", "id", "3", "offset", "1M", "len", "4K"},
			"Error: mark client 3 dirty: range outside the client (SYNC_OFFSET=1048576)\n"},
		{"Sync", &genl.Error{Op: "sync", Errno: unix.EINVAL, Message: "range not aligned to 64 bytes", Attr: "SYNC_LEN=3"},
			[]string{"sync", "id", "3", "len", "3"}, "Error: sync: range not aligned to 64 bytes (SYNC_LEN=3)\n"},
		{"Watch", &genl.Error{Op: "watch events", Errno: unix.EPERM},
			[]string{"monitor"}, "Error: watch events: operation not permitted (requires CAP_NET_ADMIN)\n"},
	} {
		f := &fakeAPI{errs: map[string]error{tt.method: tt.err}}
		r := runFake(t, f, tt.args...)
		if r.code != 1 || r.stderr != tt.want || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
}

// TestNotLoaded: every command says the module is not loaded.
func TestNotLoaded(t *testing.T) {
	notLoaded := genl.ErrNotLoaded
	for _, args := range [][]string{
		{"devices"}, {"list"}, {"stats"}, {"monitor"}, {"unregister", "id", "3"},
		{"register", "--dev", "rxe0", "--name", "a"}, {"sync", "--dev", "rxe0"}, {"mark-dirty", "id", "3"},
	} {
		r := runWith(t, nil, notLoaded, args...)
		if r.code != 1 || r.stderr != "Error: module ib_sync_mem is not loaded\n" || r.stdout != "" || r.dials != 1 {
			t.Errorf("%v: %+v", args, r)
		}
	}
}
