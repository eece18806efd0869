package genl_test

// Integration tests against the real kernel, opt-in like wgctrl's: they run
// only with SYNCMEM_INTEGRATION=1, as root, with ib_sync_mem loaded and the
// RDMA device $SYNCMEM_DEV (default rxe0) attached. The VM suite
// test/vm/55-genl-memory.sh runs them from the binary `make genl-test`
// builds:
//
//	SYNCMEM_INTEGRATION=1 build/bin/genl.test -test.v -test.run Integration
//
// Everything that happens asynchronously in the kernel (invalidation after
// munmap, deletion of owned clients, events) is polled for, up to a
// deadline.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/syncmem/syncmem/internal/testwait"
	"github.com/syncmem/syncmem/pkg/genl"
)

const (
	regionSize  = 64 << 10
	pollTimeout = 2 * time.Second
	syncTimeout = 5 * time.Second
)

// integration is Integration of integration_env_test.go (package genl).
var integration = genl.Integration

// bg is the context of the calls that need none in particular.
var bg = context.Background()

// wantPages is how many pages a region of regionSize pins: 16 with 4 KiB
// pages.
func wantPages() uint32 { return uint32(regionSize / os.Getpagesize()) }

func addrOf(mem []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem)))) }

func pattern(i int) byte { return byte(i*7 + i>>8 + 3) }

// checkPattern reports the first byte of mem that lost its pattern.
func checkPattern(t *testing.T, mem []byte) {
	t.Helper()
	for i, b := range mem {
		if b != pattern(i) {
			t.Fatalf("byte %d is %#x, want %#x", i, b, pattern(i))
		}
	}
}

// vmPin is the memory pinned in this process, in KiB: VmPin of
// /proc/self/status, which counts the pages region clients pin.
func vmPin(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmPin:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmPin %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("no VmPin in /proc/self/status")
	return 0
}

// checkVMPin polls until VmPin is want KiB.
func checkVMPin(t *testing.T, want int, what string) {
	t.Helper()
	got := 0
	if testwait.Poll(pollTimeout, func() error {
		if got = vmPin(t); got != want {
			return errors.New("not yet")
		}
		return nil
	}) != nil {
		t.Errorf("%s: VmPin %d kB, want %d kB", what, got, want)
	}
}

// eventLog collects the events of a watch as they arrive.
type eventLog struct {
	events chan genl.Event // received, not yet looked at
	ended  chan struct{}   // closed when the watch is over
	err    error           // why it ended; set before ended is closed
	seen   []genl.Event    // looked at by wait
}

func watch(t *testing.T, c *genl.Conn) *eventLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	events, errc, err := c.Watch(ctx)
	if err != nil {
		cancel()
		t.Fatalf("Watch: %v", err)
	}
	l := &eventLog{events: make(chan genl.Event, 1024), ended: make(chan struct{})}
	done := make(chan struct{})
	// Receive promptly, so that the kernel never drops events for a full
	// socket buffer; wait reads them from l.events.
	go func() {
		defer close(done)
		for ev := range events {
			select {
			case l.events <- ev:
			case <-ctx.Done():
			}
		}
		l.err = <-errc
		close(l.ended)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return l
}

// wait returns the first event of type typ about client id, waiting up to
// pollTimeout for it.
func (l *eventLog) wait(typ genl.EventType, id uint32) (genl.Event, error) {
	match := func(ev genl.Event) bool { return ev.Type == typ && ev.Client != nil && ev.Client.ID == id }
	for _, ev := range l.seen {
		if match(ev) {
			return ev, nil
		}
	}
	timer := time.NewTimer(pollTimeout)
	defer timer.Stop()
	for {
		select {
		case ev := <-l.events:
			l.seen = append(l.seen, ev)
			if match(ev) {
				return ev, nil
			}
			continue
		default:
		}
		select {
		case ev := <-l.events:
			l.seen = append(l.seen, ev)
			if match(ev) {
				return ev, nil
			}
		case <-l.ended:
			return genl.Event{}, fmt.Errorf("the watch ended (%v) before a %s event for client %d; events seen: %s",
				l.err, typ, id, describe(l.seen))
		case <-timer.C:
			return genl.Event{}, fmt.Errorf("no %s event for client %d within %v; events seen: %s",
				typ, id, pollTimeout, describe(l.seen))
		}
	}
}

func describe(evs []genl.Event) string {
	var s []string
	for _, ev := range evs {
		d := ev.Type.String()
		if ev.Client != nil {
			d += " " + strconv.FormatUint(uint64(ev.Client.ID), 10)
		}
		s = append(s, d)
	}
	if s == nil {
		return "none"
	}
	return strings.Join(s, ", ")
}

// syncOne syncs one client and checks it ran and succeeded.
func syncOne(t *testing.T, c *genl.Conn, id uint32, dir genl.Direction) {
	t.Helper()
	res, err := c.Sync(bg, genl.SyncRequest{Clients: []uint32{id}, Dir: dir, Timeout: new(syncTimeout)})
	if err != nil {
		t.Fatalf("sync %s: %v", dir, err)
	}
	if res.Err != 0 || res.Run != 1 || res.Errors != 0 || len(res.Results) != 1 ||
		res.Results[0].ID != id || res.Results[0].Err != 0 {
		t.Errorf("sync %s: %+v, want client %d run once, without error", dir, res, id)
	}
}

// TestIntegrationRegion drives a region client through its life: memory
// of this process registered, synced both ways, unmapped (the kernel
// invalidates the client, unpins its pages, syncs of it fail with ENXIO),
// unregistered; and the events of it.
func TestIntegrationRegion(t *testing.T) {
	c, dev := integration(t)
	events := watch(t, c)
	pages := wantPages()

	mem, err := genl.AllocRegion(regionSize)
	if err != nil {
		t.Fatal(err)
	}
	freed := false
	free := func() error {
		if freed {
			return nil
		}
		freed = true
		return genl.FreeRegion(mem)
	}
	t.Cleanup(func() { _ = free() })
	addr := addrOf(mem)
	if addr%uint64(os.Getpagesize()) != 0 || len(mem) != regionSize {
		t.Fatalf("AllocRegion: %d bytes at %#x, want %d page-aligned", len(mem), addr, regionSize)
	}
	for i := range mem {
		mem[i] = pattern(i)
	}

	name := fmt.Sprintf("gt-region-%d", os.Getpid())
	var id uint32
	t.Cleanup(func() {
		if id != 0 {
			if err := c.Unregister(bg, id); err != nil && !errors.Is(err, genl.ErrNotFound) {
				t.Errorf("clean-up: %v", err)
			}
		}
	})

	pin0 := vmPin(t)
	if !t.Run("register", func(t *testing.T) {
		cl, err := c.RegisterRegion(bg, dev, name, mem, genl.RegionWrite, 0)
		if err != nil {
			t.Fatalf("RegisterRegion: %v", err)
		}
		id = cl.ID
		if cl.ID == 0 || cl.Name != name || cl.DevName != dev || cl.Kind != genl.KindRegion ||
			cl.State != genl.StateLive || cl.Origin != genl.OriginNetlink || cl.Flags != 0 ||
			cl.Size != regionSize || cl.PinnedPages != pages || cl.OwnerPID != uint32(os.Getpid()) {
			t.Errorf("client %+v, want a live region client %q on %s of %d bytes, %d pages pinned, owner pid %d",
				cl, name, dev, regionSize, pages, os.Getpid())
		}
		if r := cl.Region; r == nil || r.Addr != addr || r.Len != regionSize || r.Access != genl.RegionWrite ||
			r.Segments < 1 || r.Segments > pages {
			t.Errorf("region info %+v, want addr %#x, len %d, access write, 1 to %d segments", r, addr, regionSize, pages)
		}
		checkVMPin(t, pin0+regionSize/1024, "registered")
	}) {
		return
	}

	t.Run("sync to-device and to-cpu", func(t *testing.T) {
		syncOne(t, c, id, genl.DirToDevice)
		syncOne(t, c, id, genl.DirToCPU)
		checkPattern(t, mem)
	})

	t.Run("live with its pages pinned", func(t *testing.T) {
		cl, err := c.Client(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		if cl.Kind != genl.KindRegion || cl.State != genl.StateLive || cl.InvalReason != 0 ||
			cl.PinnedPages != pages || cl.Size != regionSize || cl.LastErr != 0 {
			t.Errorf("client %+v, want a live region client of %d bytes with %d pinned pages", cl, regionSize, pages)
		}
		if s := cl.Stats; s.Syncs != 2 || s.Errors != 0 || s.Bytes != 2*regionSize {
			t.Errorf("stats %+v, want 2 syncs of %d bytes", s, regionSize)
		}
	})

	t.Run("event client-new", func(t *testing.T) {
		ev, err := events.wait(genl.EventClientNew, id)
		if err != nil {
			t.Fatal(err)
		}
		if cl := ev.Client; cl.Name != name || cl.Kind != genl.KindRegion || cl.State != genl.StateLive ||
			cl.Size != regionSize || ev.DevName != dev {
			t.Errorf("event %+v, client %+v", ev, cl)
		}
	})

	if !t.Run("munmap invalidates it", func(t *testing.T) {
		if err := free(); err != nil {
			t.Fatalf("FreeRegion: %v", err)
		}
		var cl *genl.Client
		err := testwait.Poll(pollTimeout, func() error {
			var err error
			if cl, err = c.Client(bg, id); err != nil {
				return err
			}
			if cl.State != genl.StateInvalidated || cl.PinnedPages != 0 {
				return fmt.Errorf("state %s, %d pinned pages", cl.State, cl.PinnedPages)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("not invalidated with its pages unpinned within %v: %v", pollTimeout, err)
		}
		if cl.InvalReason != genl.ReasonMemory || cl.Kind != genl.KindRegion {
			t.Errorf("client %+v, want invalidated for reason memory", cl)
		}
		checkVMPin(t, pin0, "unpinned")
	}) {
		return
	}

	t.Run("sync fails with ENXIO", func(t *testing.T) {
		res, err := c.Sync(bg, genl.SyncRequest{Clients: []uint32{id}, Dir: genl.DirToDevice, Timeout: new(syncTimeout)})
		var e *genl.Error
		if !errors.Is(err, syscall.ENXIO) || !errors.As(err, &e) {
			t.Fatalf("sync: %+v, %v; want an *Error matching ENXIO", res, err)
		}
		t.Logf("sync of the invalidated client: %v", err)
		// Refused before its callback: neither its counters nor its last
		// error moved.
		cl, err := c.Client(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		if cl.LastErr != 0 || cl.Stats.Syncs != 2 || cl.State != genl.StateInvalidated {
			t.Errorf("client %+v after the refused sync, want last error 0 and still 2 syncs", cl)
		}
	})

	t.Run("event client-invalidated", func(t *testing.T) {
		ev, err := events.wait(genl.EventClientInvalidated, id)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Client.InvalReason != genl.ReasonMemory || ev.Client.Name != name || ev.DevName != dev {
			t.Errorf("event %+v, client %+v, want reason memory", ev, ev.Client)
		}
	})

	t.Run("unregister", func(t *testing.T) {
		if err := c.Unregister(bg, id); err != nil {
			t.Fatalf("Unregister: %v", err)
		}
		gone := id
		id = 0
		if _, err := c.Client(bg, gone); !errors.Is(err, genl.ErrNotFound) {
			t.Errorf("Client after Unregister: %v, want ErrNotFound", err)
		}
		if _, err := events.wait(genl.EventClientDel, gone); err != nil {
			t.Error(err)
		}
	})
}

// TestIntegrationRegionOwned: a region client registered with FlagOwned is
// deleted, and its pages unpinned, when the connection that registered it
// is closed, while its memory stays mapped.
func TestIntegrationRegionOwned(t *testing.T) {
	c, dev := integration(t)
	pages := wantPages()

	owner, err := genl.Dial()
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = owner.Close()
		}
	})
	mem, err := genl.AllocRegion(regionSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = genl.FreeRegion(mem) })
	for i := range mem {
		mem[i] = pattern(i)
	}

	var id uint32
	t.Cleanup(func() {
		if id != 0 {
			if err := c.Unregister(bg, id); err != nil && !errors.Is(err, genl.ErrNotFound) {
				t.Errorf("clean-up: %v", err)
			}
		}
	})
	pin0 := vmPin(t)
	if !t.Run("register owned", func(t *testing.T) {
		cl, err := owner.RegisterRegion(bg, dev, fmt.Sprintf("gt-owned-%d", os.Getpid()), mem, 0, genl.FlagOwned)
		if err != nil {
			t.Fatalf("RegisterRegion: %v", err)
		}
		id = cl.ID
		if cl.Flags != genl.FlagOwned || cl.PinnedPages != pages || cl.State != genl.StateLive {
			t.Errorf("client %+v, want live, owned, %d pages pinned", cl, pages)
		}
		checkVMPin(t, pin0+regionSize/1024, "registered")
	}) {
		return
	}

	t.Run("seen and synced from another connection", func(t *testing.T) {
		cl, err := c.Client(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		if cl.Kind != genl.KindRegion || cl.Flags != genl.FlagOwned || cl.PinnedPages != pages ||
			cl.State != genl.StateLive {
			t.Errorf("client %+v", cl)
		}
		// Read-only (access 0): the device reads it, to-device only.
		syncOne(t, c, id, genl.DirToDevice)
	})

	t.Run("deleted when its connection closes", func(t *testing.T) {
		if err := owner.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		closed = true
		err := testwait.Poll(pollTimeout, func() error {
			cl, err := c.Client(bg, id)
			if errors.Is(err, genl.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("still there: %+v", cl)
		})
		if err != nil {
			t.Fatalf("not deleted within %v of Close: %v", pollTimeout, err)
		}
		id = 0
		checkVMPin(t, pin0, "after Close")
		// The memory is this process's still: only the client went.
		checkPattern(t, mem)
	})
}
