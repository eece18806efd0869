package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// fakeAPI stands in for the kernel: canned replies, recorded requests.
type fakeAPI struct {
	devices []genl.Device
	clients []genl.Client
	reg     genl.Client
	sync    genl.SyncResult
	stats   genl.Stats
	events  []genl.Event
	errs    map[string]error // by method name

	calls     []string
	regReq    genl.RegisterRequest
	syncReq   genl.SyncRequest
	marks     []markReq
	statsReq  genl.StatsRequest
	unreg     []uint32
	watchOpts int
	dev       string
	owner     string
	closed    bool
}

func (f *fakeAPI) call(name string) error {
	f.calls = append(f.calls, name)
	return f.errs[name]
}

func (f *fakeAPI) Devices(context.Context) ([]genl.Device, error) {
	return f.devices, f.call("Devices")
}

func (f *fakeAPI) Device(_ context.Context, name string) (*genl.Device, error) {
	if err := f.call("Device"); err != nil {
		return nil, err
	}
	for _, d := range f.devices {
		if d.Name == name {
			return &d, nil
		}
	}
	return nil, &genl.Error{Op: "get device " + name, Errno: unix.ENODEV, Message: "no such RDMA device"}
}

func (f *fakeAPI) Clients(_ context.Context, filter genl.ClientFilter) ([]genl.Client, error) {
	f.dev, f.owner = filter.Device, filter.Owner
	return f.clients, f.call("Clients")
}

func (f *fakeAPI) Client(_ context.Context, id uint32) (*genl.Client, error) {
	if err := f.call("Client"); err != nil {
		return nil, err
	}
	for _, c := range f.clients {
		if c.ID == id {
			return &c, nil
		}
	}
	return nil, &genl.Error{Op: fmt.Sprintf("get client %d", id), Errno: unix.ENOENT, Message: "no such client"}
}

func (f *fakeAPI) Register(_ context.Context, r genl.RegisterRequest) (*genl.Client, error) {
	f.regReq = r
	return &f.reg, f.call("Register")
}

func (f *fakeAPI) Unregister(_ context.Context, id uint32) error {
	f.unreg = append(f.unreg, id)
	if id == 99 {
		return &genl.Error{Op: "unregister client 99", Errno: unix.ENOENT, Message: "no such client"}
	}
	return f.call("Unregister")
}

func (f *fakeAPI) Sync(_ context.Context, r genl.SyncRequest) (*genl.SyncResult, error) {
	f.syncReq = r
	return &f.sync, f.call("Sync")
}

// markReq is the arguments of one MarkDirty.
type markReq struct {
	ID    uint32
	Dir   genl.Direction
	Range *genl.Range
}

func (f *fakeAPI) MarkDirty(_ context.Context, id uint32, dir genl.Direction, r *genl.Range) error {
	f.marks = append(f.marks, markReq{ID: id, Dir: dir, Range: r})
	return f.call("MarkDirty")
}

func (f *fakeAPI) Stats(_ context.Context, r genl.StatsRequest) (*genl.Stats, error) {
	f.statsReq = r
	return &f.stats, f.call("Stats")
}

// Watch delivers the canned events, then waits for ctx like the real one.
func (f *fakeAPI) Watch(ctx context.Context, opts ...genl.WatchOption) (<-chan genl.Event, <-chan error, error) {
	f.watchOpts = len(opts)
	if err := f.call("Watch"); err != nil {
		return nil, nil, err
	}
	events := make(chan genl.Event)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(events)
		for _, ev := range f.events {
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
		if err := f.errs["Watch.Receive"]; err != nil {
			errc <- err
			return
		}
		<-ctx.Done()
	}()
	return events, errc, nil
}

func (f *fakeAPI) Close() error {
	f.closed = true
	return nil
}

// result is what one syncmemctl run printed and returned.
type result struct {
	stdout, stderr string
	code           int
	dials          int
}

// runWith runs syncmemctl args against f (or, if f is nil, a dial that
// fails with dialErr).
func runWith(t *testing.T, f *fakeAPI, dialErr error, args ...string) result {
	t.Helper()
	var r result
	dial := func() (api, error) {
		r.dials++
		if f == nil {
			return nil, dialErr
		}
		return f, nil
	}
	var out, errb bytes.Buffer
	r.code = run(context.Background(), args, &out, &errb, dial)
	r.stdout, r.stderr = out.String(), errb.String()
	if f != nil && r.dials > 0 && !f.closed {
		t.Errorf("%v: connection not closed", args)
	}
	return r
}

func runFake(t *testing.T, f *fakeAPI, args ...string) result {
	t.Helper()
	return runWith(t, f, nil, args...)
}

// mustRun runs args and fails the test if the command failed.
func mustRun(t *testing.T, f *fakeAPI, args ...string) string {
	t.Helper()
	r := runFake(t, f, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	return r.stdout
}
