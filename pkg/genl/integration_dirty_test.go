package genl_test

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/syncmem/syncmem/pkg/genl"
)

// TestIntegrationMarkDirty drives a lazy sim client through marks and
// range syncs: a sync after MarkDirty runs over the marked bytes only
// (its stats count them), a second one owes nothing and is skipped, a
// range sync runs whatever the laziness over its range; the kernel
// refuses a mark of a client that is not lazy (EINVAL), a range past the
// end (ERANGE) or off the sim's 64-byte alignment (EINVAL), and the
// package refuses a range of 0 bytes before sending it. Needs
// ib_sync_mem_sim.
func TestIntegrationMarkDirty(t *testing.T) {
	c, dev := integration(t)
	const size = 1 << 20

	register := func(name string, flags genl.ClientFlags) uint32 {
		t.Helper()
		cl, err := c.Register(bg, genl.RegisterRequest{
			Device: dev, Name: fmt.Sprintf("%s-%d", name, os.Getpid()), Kind: genl.KindSim, Flags: flags,
			Sim: &genl.SimConfig{Size: new(uint64(size))},
		})
		if err != nil {
			t.Fatalf("register a sim client (is ib_sync_mem_sim loaded?): %v", err)
		}
		t.Cleanup(func() {
			if err := c.Unregister(bg, cl.ID); err != nil && !errors.Is(err, genl.ErrNotFound) {
				t.Errorf("clean-up: %v", err)
			}
		})
		if cl.Flags != flags || cl.Size != size {
			t.Fatalf("client %+v, want flags %s and %d bytes", cl, flags, size)
		}
		return cl.ID
	}
	lazy := register("gt-lazy", genl.FlagLazy)
	eager := register("gt-eager", 0)

	counters := func(t *testing.T) genl.Counters {
		t.Helper()
		s, err := c.Stats(bg, genl.StatsRequest{Client: lazy})
		if err != nil {
			t.Fatalf("stats: %v", err)
		}
		return s.Counters
	}
	// sync syncs the lazy client to-device (over r, if set) and checks
	// that it ran (run) or was skipped, and how many bytes its counters
	// gained.
	sync := func(t *testing.T, r *genl.Range, run bool, bytes uint64) {
		t.Helper()
		before := counters(t)
		res, err := c.Sync(bg, genl.SyncRequest{Clients: []uint32{lazy}, Dir: genl.DirToDevice,
			Timeout: new(syncTimeout), Range: r})
		if err != nil {
			t.Fatalf("sync %+v: %v", r, err)
		}
		after := counters(t)
		wantRun, wantSkipped, wantSyncs := uint32(0), uint32(1), uint64(0)
		if run {
			wantRun, wantSkipped, wantSyncs = 1, 0, 1
		}
		if res.Err != 0 || res.Errors != 0 || res.Run != wantRun || res.Skipped != wantSkipped {
			t.Errorf("sync %+v: %+v, want %d run, %d skipped, no error", r, res, wantRun, wantSkipped)
		}
		if got := after.Syncs - before.Syncs; got != wantSyncs {
			t.Errorf("sync %+v: %d sync callbacks ran, want %d", r, got, wantSyncs)
		}
		if got := after.Bytes - before.Bytes; got != bytes {
			t.Errorf("sync %+v: stats bytes +%d, want +%d", r, got, bytes)
		}
	}
	mark := func(id uint32, r *genl.Range) error {
		return c.MarkDirty(bg, id, genl.DirToDevice, r)
	}
	// kernelErr checks that the kernel refused a call with errno.
	kernelErr := func(t *testing.T, what string, err error, errno syscall.Errno) {
		t.Helper()
		var e *genl.Error
		if !errors.As(err, &e) || e.Errno != errno {
			t.Errorf("%s: %v, want the kernel's %s", what, err, errno)
			return
		}
		t.Logf("%s: %v", what, err)
	}

	// Whatever a new lazy client owes, a sync settles it.
	if _, err := c.Sync(bg, genl.SyncRequest{Clients: []uint32{lazy}, Dir: genl.DirToDevice,
		Timeout: new(syncTimeout)}); err != nil {
		t.Fatalf("first sync: %v", err)
	}

	t.Run("a mark, then a sync of the marked bytes", func(t *testing.T) {
		if err := mark(lazy, &genl.Range{Offset: 4096, Len: 8192}); err != nil {
			t.Fatalf("MarkDirty: %v", err)
		}
		sync(t, nil, true, 8192)
	})
	t.Run("clean: the next sync is skipped", func(t *testing.T) {
		sync(t, nil, false, 0)
	})
	t.Run("a range sync runs over its range", func(t *testing.T) {
		sync(t, &genl.Range{Offset: 0, Len: 4096}, true, 4096)
	})
	t.Run("a client that is not lazy: EINVAL", func(t *testing.T) {
		kernelErr(t, "mark the eager client", mark(eager, &genl.Range{Len: 4096}), syscall.EINVAL)
		kernelErr(t, "mark all of the eager client", mark(eager, nil), syscall.EINVAL)
	})
	t.Run("past the end: ERANGE", func(t *testing.T) {
		kernelErr(t, "mark past the end", mark(lazy, &genl.Range{Offset: size, Len: 4096}), syscall.ERANGE)
		kernelErr(t, "mark across the end", mark(lazy, &genl.Range{Offset: size - 4096, Len: 8192}), syscall.ERANGE)
		_, err := c.Sync(bg, genl.SyncRequest{Clients: []uint32{lazy}, Dir: genl.DirToDevice,
			Range: &genl.Range{Offset: size, Len: 64}})
		kernelErr(t, "sync past the end", err, syscall.ERANGE)
	})
	t.Run("off the sim's 64-byte alignment: EINVAL", func(t *testing.T) {
		kernelErr(t, "mark an unaligned offset", mark(lazy, &genl.Range{Offset: 4100, Len: 64}), syscall.EINVAL)
		kernelErr(t, "mark an unaligned length", mark(lazy, &genl.Range{Offset: 4096, Len: 100}), syscall.EINVAL)
		_, err := c.Sync(bg, genl.SyncRequest{Clients: []uint32{lazy}, Dir: genl.DirToDevice,
			Range: &genl.Range{Offset: 32, Len: 64}})
		kernelErr(t, "sync an unaligned range", err, syscall.EINVAL)
	})
	t.Run("0 bytes: refused before the kernel", func(t *testing.T) {
		err := mark(lazy, &genl.Range{Offset: 4096})
		var e *genl.Error
		if !errors.Is(err, genl.ErrInvalid) || errors.As(err, &e) {
			t.Errorf("MarkDirty of 0 bytes: %v, want this package's ErrInvalid, not the kernel's", err)
		}
	})
	t.Run("the refused calls left it clean", func(t *testing.T) {
		sync(t, nil, false, 0)
	})
}
