package syncdev_test

// Integration tests against the real device, opt-in like pkg/genl's and
// behind the same gate (its integration_env_test.go): they run only with
// SYNCMEM_INTEGRATION=1, as root, with ib_sync_mem loaded (a build with
// /dev/ib_sync_mem) and the RDMA device $SYNCMEM_DEV (default rxe0)
// attached. Once enabled, a missing device node, module or RDMA device
// fails them: they never skip. For the VM suites:
//
//	go test -c -o build/bin/syncdev.test ./pkg/syncdev
//	SYNCMEM_INTEGRATION=1 build/bin/syncdev.test -test.v -test.run Integration
//
// They register sim clients over pkg/genl, owned by the test's connection.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/internal/testwait"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/syncdev"
	"golang.org/x/sys/unix"
)

// env is what a test works with: the device, a netlink connection to
// register clients with, and the RDMA device.
type env struct {
	d   *syncdev.Device
	c   *genl.Conn
	dev *genl.Device
}

// integration skips the test unless SYNCMEM_INTEGRATION=1 (the gate of
// pkg/genl's integration tests), and opens what it needs.
func integration(t *testing.T) *env {
	t.Helper()
	if os.Getenv("SYNCMEM_INTEGRATION") != "1" {
		t.Skip("integration test against " + syncdev.DefaultPath + ": set SYNCMEM_INTEGRATION=1 to run it " +
			"(as root, ib_sync_mem loaded with its data-path device, rxe0 or $SYNCMEM_DEV)")
	}
	name := os.Getenv("SYNCMEM_DEV")
	if name == "" {
		name = "rxe0"
	}
	d, err := syncdev.Open("")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	c, err := genl.Dial()
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	dev, err := c.Device(context.Background(), name)
	if err != nil {
		t.Fatalf("device %s: %v (needs the RDMA device, with ib_sync_mem attached to it)", name, err)
	}
	return &env{d: d, c: c, dev: dev}
}

// sim registers an owned sim client.
func (e *env) sim(t *testing.T, name string, flags genl.ClientFlags, cfg *genl.SimConfig) *genl.Client {
	t.Helper()
	cl, err := e.c.Register(context.Background(), genl.RegisterRequest{
		Device: e.dev.Name, Name: name, Kind: genl.KindSim, Flags: flags | genl.FlagOwned, Sim: cfg,
	})
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	return cl
}

// toDevice is how many to-device syncs a sim client ran.
func (e *env) toDevice(t *testing.T, id uint32) uint64 {
	t.Helper()
	cl, err := e.c.Client(context.Background(), id)
	if err != nil || cl.Sim == nil {
		t.Fatalf("client %d: %v (sim info %v)", id, err, cl)
	}
	return cl.Sim.CallsToDevice
}

func wait(t *testing.T, f *syncdev.Fence) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.Wait(ctx)
}

func TestIntegrationNop(t *testing.T) {
	e := integration(t)
	if err := e.d.Nop(); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationSync: blocking and asynchronous syncs of one client run
// its sync once each; an unknown id is ENOENT.
func TestIntegrationSync(t *testing.T) {
	e := integration(t)
	cl := e.sim(t, "syncdev-sync", 0, &genl.SimConfig{Size: new(uint64(64 << 10))})
	r := syncdev.SyncRequest{ID: cl.ID, Dir: genl.DirToDevice, Timeout: 5 * time.Second}
	if err := e.d.Sync(r); err != nil {
		t.Fatal(err)
	}
	r.Range = &genl.Range{Offset: 4096, Len: 4096}
	if err := e.d.Sync(r); err != nil {
		t.Fatal(err)
	}
	f, err := e.d.SyncAsync(r)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := wait(t, f); err != nil {
		t.Fatalf("fence: %v", err)
	}
	if s, err := f.Status(); !s || err != nil {
		t.Errorf("Status after Wait: %v %v", s, err)
	}
	if n := e.toDevice(t, cl.ID); n != 3 {
		t.Errorf("%d to-device syncs, want 3", n)
	}
	if err := e.d.Sync(syncdev.SyncRequest{ID: ^uint32(0), Dir: genl.DirToDevice}); !errors.Is(err, unix.ENOENT) {
		t.Errorf("unknown id: %v, want ENOENT", err)
	}
	if _, err := e.d.SyncAsync(syncdev.SyncRequest{ID: ^uint32(0), Dir: genl.DirToDevice}); !errors.Is(err, unix.ENOENT) {
		t.Errorf("unknown id, async: %v, want ENOENT", err)
	}
	if err := e.d.Sync(syncdev.SyncRequest{ID: cl.ID, Dir: 99}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("direction 99: %v, want EINVAL", err)
	}
}

// TestIntegrationFenceError: a sync that fails signals its fence with the
// errno; a blocking one returns it.
func TestIntegrationFenceError(t *testing.T) {
	e := integration(t)
	cl := e.sim(t, "syncdev-fail", 0, &genl.SimConfig{FailNext: new(uint32(2)), FailErrno: new(unix.EIO)})
	r := syncdev.SyncRequest{ID: cl.ID, Dir: genl.DirToDevice}
	if err := e.d.Sync(r); !errors.Is(err, unix.EIO) {
		t.Errorf("blocking: %v, want EIO", err)
	}
	f, err := e.d.SyncAsync(r)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := wait(t, f); err != unix.EIO {
		t.Errorf("fence: %v, want EIO", err)
	}
	if s, err := f.Status(); !s || err != unix.EIO {
		t.Errorf("Status: %v %v, want signalled with EIO", s, err)
	}
}

// TestIntegrationInFence: a sync gated on a slow one's fence runs after
// it; gated on a failed one's, it does not run and carries its error.
func TestIntegrationInFence(t *testing.T) {
	e := integration(t)
	slow := e.sim(t, "syncdev-slow", 0, &genl.SimConfig{Latency: new(50 * time.Millisecond)})
	next := e.sim(t, "syncdev-next", 0, nil)
	f1, err := e.d.SyncAsync(syncdev.SyncRequest{ID: slow.ID, Dir: genl.DirToDevice})
	if err != nil {
		t.Fatal(err)
	}
	defer f1.Close()
	f2, err := e.d.SyncAsync(syncdev.SyncRequest{ID: next.ID, Dir: genl.DirToDevice, InFence: f1})
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if err := wait(t, f2); err != nil {
		t.Fatalf("gated fence: %v", err)
	}
	if s, err := f1.Status(); !s || err != nil {
		t.Errorf("the gated sync signalled before its in-fence: %v %v", s, err)
	}
	if n := e.toDevice(t, next.ID); n != 1 {
		t.Errorf("gated client: %d syncs, want 1", n)
	}

	bad := e.sim(t, "syncdev-bad", 0, &genl.SimConfig{FailNext: new(uint32(1)), FailErrno: new(unix.EREMOTEIO)})
	f3, err := e.d.SyncAsync(syncdev.SyncRequest{ID: bad.ID, Dir: genl.DirToDevice})
	if err != nil {
		t.Fatal(err)
	}
	defer f3.Close()
	f4, err := e.d.SyncAsync(syncdev.SyncRequest{ID: next.ID, Dir: genl.DirToDevice, InFence: f3})
	if err != nil {
		t.Fatal(err)
	}
	defer f4.Close()
	if err := wait(t, f4); err != unix.EREMOTEIO {
		t.Errorf("fence gated on a failed one: %v, want EREMOTEIO", err)
	}
	if n := e.toDevice(t, next.ID); n != 1 {
		t.Errorf("gated on a failed fence, the client ran: %d syncs, want 1", n)
	}
	// Blocking, gated on the same failed fence.
	if err := e.d.Sync(syncdev.SyncRequest{ID: next.ID, Dir: genl.DirToDevice, InFence: f3}); !errors.Is(err, unix.EREMOTEIO) {
		t.Errorf("blocking, gated on a failed fence: %v, want EREMOTEIO", err)
	}
}

// TestIntegrationSyncDev: a device pass reports its totals; its async
// form signals; an unknown index is ENODEV.
func TestIntegrationSyncDev(t *testing.T) {
	e := integration(t)
	cl := e.sim(t, "syncdev-dev", 0, nil)
	res, err := e.d.SyncDev(syncdev.DevRequest{DevIndex: e.dev.Index, Dir: genl.DirToDevice})
	if err != nil {
		t.Fatal(err)
	}
	if res.Clients < 1 || res.Pass == 0 {
		t.Errorf("result %+v: want at least the test's client run, a pass id", res)
	}
	f, err := e.d.SyncDevAsync(syncdev.DevRequest{DevIndex: e.dev.Index, Dir: genl.DirToDevice})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := wait(t, f); err != nil && res.Err == 0 {
		t.Errorf("fence: %v", err)
	}
	if n := e.toDevice(t, cl.ID); n != 2 {
		t.Errorf("%d syncs of the device's client, want 2", n)
	}
	if _, err := e.d.SyncDev(syncdev.DevRequest{DevIndex: 1 << 30, Dir: genl.DirToDevice}); !errors.Is(err, unix.ENODEV) {
		t.Errorf("unknown index: %v, want ENODEV", err)
	}
}

// TestIntegrationMarkDirty: a lazy client runs only once marked; one that
// is not lazy cannot be marked.
func TestIntegrationMarkDirty(t *testing.T) {
	e := integration(t)
	lazy := e.sim(t, "syncdev-lazy", genl.FlagLazy, &genl.SimConfig{Size: new(uint64(64 << 10))})
	r := syncdev.SyncRequest{ID: lazy.ID, Dir: genl.DirToDevice}
	for i, mark := range []bool{false, true} {
		if mark {
			if err := e.d.MarkDirty(lazy.ID, genl.DirToDevice, &genl.Range{Len: 64}); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.d.Sync(r); err != nil {
			t.Fatal(err)
		}
		if n := e.toDevice(t, lazy.ID); n != uint64(i) {
			t.Errorf("marked %v: %d syncs, want %d", mark, n, i)
		}
	}
	eager := e.sim(t, "syncdev-eager", 0, nil)
	err := e.d.MarkDirty(eager.ID, genl.DirToDevice, nil)
	if !errors.Is(err, unix.EINVAL) {
		t.Errorf("mark a client that is not lazy: %v, want EINVAL", err)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		t.Errorf("%v: no errno", err)
	}
	t.Log(err) // what the message looks like, in the log
}

// TestIntegrationBatch: a batch runs each entry in order and reports each
// one's result, a failed client among them; its async form's fence
// carries the first failure; an unknown id refuses the whole batch.
func TestIntegrationBatch(t *testing.T) {
	e := integration(t)
	failing := func(name string) *genl.Client {
		return e.sim(t, name, 0, &genl.SimConfig{FailNext: new(uint32(1)), FailErrno: new(unix.EIO)})
	}
	a := e.sim(t, "syncdev-batch-a", 0, &genl.SimConfig{Size: new(uint64(64 << 10))})
	b := failing("syncdev-batch-b")
	c := e.sim(t, "syncdev-batch-c", 0, nil)
	r := syncdev.BatchRequest{
		Entries: []syncdev.BatchEntry{{ID: a.ID, Range: &genl.Range{Offset: 4096, Len: 4096}}, {ID: b.ID}, {ID: c.ID}},
		Dir:     genl.DirToDevice, Timeout: 5 * time.Second,
	}
	res, err := e.d.SyncBatch(r)
	if err != nil {
		t.Fatal(err)
	}
	want := &syncdev.BatchResult{Run: 3, Errors: 1, Errs: []syscall.Errno{0, unix.EIO, 0}}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("blocking batch (-want +got):\n%s", d)
	}

	// b failed its one failure: a fresh failing client in its place.
	r.Entries[1].ID = failing("syncdev-batch-b2").ID
	f, err := e.d.SyncBatchAsync(r)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := wait(t, f); err != unix.EIO {
		t.Errorf("async batch's fence: %v, want EIO", err)
	}
	for _, cl := range []*genl.Client{a, c} {
		if n := e.toDevice(t, cl.ID); n != 2 {
			t.Errorf("client %d: %d to-device syncs, want 2", cl.ID, n)
		}
	}

	unknown := syncdev.BatchRequest{Entries: []syncdev.BatchEntry{{ID: a.ID}, {ID: ^uint32(0)}}, Dir: genl.DirToDevice}
	if res, err := e.d.SyncBatch(unknown); !errors.Is(err, unix.ENOENT) {
		t.Errorf("unknown id: %+v %v, want ENOENT", res, err)
	}
	if f, err := e.d.SyncBatchAsync(unknown); !errors.Is(err, unix.ENOENT) {
		t.Errorf("unknown id, async: %v %v, want ENOENT", f, err)
		if f != nil {
			f.Close()
		}
	}
	if n := e.toDevice(t, a.ID); n != 2 {
		t.Errorf("a batch refused for an unknown id ran its known one: %d syncs, want 2", n)
	}
}

// TestIntegrationOwn: a client an open Device took over shows FlagFile in
// place of FlagOwned, outlives the Conn that registered it as owned, is
// another Device's to own by no means (EBUSY), and is gone when its
// Device's Close returns.
func TestIntegrationOwn(t *testing.T) {
	e := integration(t)
	bg := context.Background()

	owner, err := genl.Dial()
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	closeOwner := closeOnce(t, owner)
	d1, err := syncdev.Open("")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	closeD1 := closeOnce(t, d1)
	d2, err := syncdev.Open("")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	closeOnce(t, d2)

	// register registers an owned sim client on owner, deleted at the end
	// of the test whatever happened.
	register := func(name string) *genl.Client {
		t.Helper()
		cl, err := owner.Register(bg, genl.RegisterRequest{
			Device: e.dev.Name, Name: name, Kind: genl.KindSim, Flags: genl.FlagOwned,
		})
		if err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
		t.Cleanup(func() {
			if err := e.c.Unregister(bg, cl.ID); err != nil && !errors.Is(err, genl.ErrNotFound) {
				t.Errorf("clean-up of client %d: %v", cl.ID, err)
			}
		})
		if cl.Flags != genl.FlagOwned {
			t.Fatalf("registered %s with flags %v, want owned", name, cl.Flags)
		}
		return cl
	}
	cl := register("syncdev-own")
	// A control: owned by the same socket, not taken over; its deletion
	// says the socket's close was dealt with.
	ctl := register("syncdev-own-ctl")

	if err := d1.Own(cl.ID); err != nil {
		t.Fatalf("Own: %v", err)
	}
	got, err := e.c.Client(bg, cl.ID)
	if err != nil {
		t.Fatalf("client %d after Own: %v", cl.ID, err)
	}
	if got.Flags != genl.FlagFile {
		t.Errorf("flags after Own: %v (%#x), want file only", got.Flags, uint32(got.Flags))
	}

	if err := closeOwner(); err != nil {
		t.Fatalf("close the registering Conn: %v", err)
	}
	if err := testwait.Poll(60*time.Second, func() error {
		if _, err := e.c.Client(bg, ctl.ID); !errors.Is(err, genl.ErrNotFound) {
			return fmt.Errorf("control client %d: %v, want deleted with its socket", ctl.ID, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err = e.c.Client(bg, cl.ID)
	if err != nil {
		t.Fatalf("client %d after its registering Conn closed: %v, want still there (its Device owns it)", cl.ID, err)
	}
	if got.Flags != genl.FlagFile || got.State != genl.StateLive {
		t.Errorf("client %d after its registering Conn closed: flags %v state %v, want file, live",
			cl.ID, got.Flags, got.State)
	}
	// Not being deleted either: owning it again (a client being deleted
	// is ENOENT) does nothing and succeeds.
	if err := d1.Own(cl.ID); err != nil {
		t.Errorf("Own again from the owning Device: %v, want nil", err)
	}

	if err := d2.Own(cl.ID); !errors.Is(err, unix.EBUSY) {
		t.Errorf("Own from another Device: %v, want EBUSY", err)
	}
	if err := d1.Own(^uint32(0)); !errors.Is(err, unix.ENOENT) {
		t.Errorf("Own of an unknown id: %v, want ENOENT", err)
	}

	// Deleted before Close returns: no wait.
	if err := closeD1(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, err := e.c.Client(bg, cl.ID); !errors.Is(err, genl.ErrNotFound) {
		t.Errorf("client %d right after its Device's Close: %+v %v, want ErrNotFound", cl.ID, got, err)
	}
}

// TestIntegrationCreate: a client created through the device is what
// Register makes, owned by that Device from the start, synced through it,
// and gone when it is closed; a refusal carries the kernel's reason.
func TestIntegrationCreate(t *testing.T) {
	e := integration(t)
	bg := context.Background()
	d, err := syncdev.Open("")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	closeD := closeOnce(t, d)

	id, err := d.Create(genl.RegisterRequest{Device: e.dev.Name, Name: "syncdev-create", Kind: genl.KindSim})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() {
		if err := e.c.Unregister(bg, id); err != nil && !errors.Is(err, genl.ErrNotFound) {
			t.Errorf("clean-up of client %d: %v", id, err)
		}
	})
	cl, err := e.c.Client(bg, id)
	if err != nil {
		t.Fatalf("client %d: %v", id, err)
	}
	if cl.Name != "syncdev-create" || cl.Kind != genl.KindSim || cl.Flags != genl.FlagFile ||
		cl.Origin != genl.OriginDevice || cl.OwnerPID != uint32(os.Getpid()) {
		t.Errorf("created: name %q kind %v flags %v origin %v pid %d; want syncdev-create, sim, file, device, %d",
			cl.Name, cl.Kind, cl.Flags, cl.Origin, cl.OwnerPID, os.Getpid())
	}
	if err := d.Sync(syncdev.SyncRequest{ID: id, Dir: genl.DirToDevice}); err != nil {
		t.Fatalf("Sync of the created client: %v", err)
	}
	if n := e.toDevice(t, id); n != 1 {
		t.Errorf("to-device syncs after one Sync: %d, want 1", n)
	}

	_, err = d.Create(genl.RegisterRequest{Device: e.dev.Name, Name: "syncdev-owned", Kind: genl.KindSim,
		Flags: genl.FlagOwned})
	var se *syncdev.Error
	if !errors.As(err, &se) || se.Errno != unix.EINVAL || !strings.Contains(se.Reason, "CLIENT_F_OWNED") {
		t.Errorf("Create with FlagOwned: %v, want EINVAL with the kernel's reason", err)
	}

	if err := closeD(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, err := e.c.Client(bg, id); !errors.Is(err, genl.ErrNotFound) {
		t.Errorf("client %d right after its Device's Close: %+v %v, want ErrNotFound", id, got, err)
	}
}

// closeOnce closes c when the test ends, unless the test closed it first
// with the function it returns.
func closeOnce(t *testing.T, c io.Closer) func() error {
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = c.Close()
		}
	})
	return func() error {
		closed = true
		return c.Close()
	}
}
