package main

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/syncdev"
	"golang.org/x/sys/unix"
)

// Tests of sync ... async, against a stand-in for /dev/ib_sync_mem.

// fakeDev stands in for the data-path device: it records the requests and
// returns fakeFences that signal with fenceErr (a syscall.Errno: the
// fence's error; another error: the wait failed).
type fakeDev struct {
	openErr, submitErr, fenceErr error

	opened, closed bool
	syncs          []syncdev.SyncRequest
	batches        []syncdev.BatchRequest
	devs           []syncdev.DevRequest
	fences         []*fakeFence
}

type fakeFence struct {
	err    error
	closed bool
}

func (f *fakeFence) Fd() int                        { return 7 }
func (f *fakeFence) Wait(ctx context.Context) error { return f.err }
func (f *fakeFence) Close() error                   { f.closed = true; return nil }

func (d *fakeDev) submit() (fence, error) {
	if d.submitErr != nil {
		return nil, d.submitErr
	}
	f := &fakeFence{err: d.fenceErr}
	d.fences = append(d.fences, f)
	return f, nil
}

func (d *fakeDev) SyncAsync(r syncdev.SyncRequest) (fence, error) {
	d.syncs = append(d.syncs, r)
	return d.submit()
}

func (d *fakeDev) SyncBatchAsync(r syncdev.BatchRequest) (fence, error) {
	d.batches = append(d.batches, r)
	return d.submit()
}

func (d *fakeDev) SyncDevAsync(r syncdev.DevRequest) (fence, error) {
	d.devs = append(d.devs, r)
	return d.submit()
}

func (d *fakeDev) Close() error { d.closed = true; return nil }

// useDev makes sync ... async open d until the test ends, and checks then
// that whatever was opened was closed.
func useDev(t *testing.T, d *fakeDev) {
	saved := openSyncDev
	openSyncDev = func() (syncDev, error) {
		if d.openErr != nil {
			return nil, d.openErr
		}
		d.opened = true
		return d, nil
	}
	t.Cleanup(func() {
		openSyncDev = saved
		if d.opened && !d.closed {
			t.Error("device not closed")
		}
		for _, f := range d.fences {
			if !f.closed {
				t.Error("fence not closed")
			}
		}
	})
}

// TestSyncAsyncRequests: what each command line submits; keywords and
// flags alike. A device is named by its index, which netlink tells.
func TestSyncAsyncRequests(t *testing.T) {
	for _, tt := range []struct {
		keywords, flags []string
		sync            *syncdev.SyncRequest
		dev             *syncdev.DevRequest
		batch           *syncdev.BatchRequest
	}{
		{[]string{"id", "3", "async"}, []string{"--id", "3", "--async"},
			&syncdev.SyncRequest{ID: 3, Dir: genl.DirToDevice}, nil, nil},
		{[]string{"id", "3", "offset", "4K", "len", "8K", "dir", "to-cpu", "timeout", "500ms", "async"},
			[]string{"--id", "3", "--offset", "4K", "--len", "8K", "--dir", "to-cpu", "--timeout", "500ms", "--async"},
			&syncdev.SyncRequest{ID: 3, Dir: genl.DirToCPU, Range: &genl.Range{Offset: 4096, Len: 8192},
				Timeout: 500 * time.Millisecond}, nil, nil},
		{[]string{"dev", "rxe1", "dir", "inbound", "async"}, []string{"--dev", "rxe1", "--dir", "inbound", "--async"},
			nil, &syncdev.DevRequest{DevIndex: 2, Dir: genl.DirInbound}, nil},
		{[]string{"async", "dev", "rxe0", "timeout", "2s"}, []string{"--async", "--dev", "rxe0", "--timeout", "2s"},
			nil, &syncdev.DevRequest{DevIndex: 1, Dir: genl.DirToDevice, Timeout: 2 * time.Second}, nil},
		// A batch, in its order, an id repeated: one ioctl.
		{[]string{"id", "4,3", "id", "4", "dir", "to-cpu", "timeout", "1s", "async"},
			[]string{"--id", "4,3", "--id", "4", "--dir", "to-cpu", "--timeout", "1s", "--async"},
			nil, nil, &syncdev.BatchRequest{Entries: []syncdev.BatchEntry{{ID: 4}, {ID: 3}, {ID: 4}},
				Dir: genl.DirToCPU, Timeout: time.Second}},
	} {
		for _, args := range [][]string{tt.keywords, tt.flags} {
			d := &fakeDev{}
			useDev(t, d)
			f := readFake()
			mustRun(t, f, append([]string{"sync"}, args...)...)
			var want struct {
				Syncs   []syncdev.SyncRequest
				Devs    []syncdev.DevRequest
				Batches []syncdev.BatchRequest
			}
			if tt.sync != nil {
				want.Syncs = append(want.Syncs, *tt.sync)
			}
			if tt.dev != nil {
				want.Devs = append(want.Devs, *tt.dev)
			}
			if tt.batch != nil {
				want.Batches = append(want.Batches, *tt.batch)
			}
			if diff := cmp.Diff(want.Syncs, d.syncs); diff != "" {
				t.Errorf("%v: sync requests (-want +got):\n%s", args, diff)
			}
			if diff := cmp.Diff(want.Devs, d.devs); diff != "" {
				t.Errorf("%v: device requests (-want +got):\n%s", args, diff)
			}
			if diff := cmp.Diff(want.Batches, d.batches); diff != "" {
				t.Errorf("%v: batch requests (-want +got):\n%s", args, diff)
			}
			if wantCalls := []string{"Device"}; tt.dev == nil && len(f.calls) != 0 ||
				tt.dev != nil && !cmp.Equal(wantCalls, f.calls) {
				t.Errorf("%v: netlink calls %v", args, f.calls)
			}
		}
	}
}

// TestSyncAsyncOutput: a line when the sync was submitted, one when its
// fence signalled; a fence's error fails the command after printing it.
func TestSyncAsyncOutput(t *testing.T) {
	d := &fakeDev{}
	useDev(t, d)
	out := mustRun(t, readFake(), "sync", "id", "3", "offset", "0", "len", "64", "async")
	want := regexp.MustCompile(`^sync to-device id 3 offset 0 len 64: submitted, fence fd 7\n` +
		`fence signalled: ok in [0-9.]+(ns|us|ms|s)\n$`)
	if !want.MatchString(out) {
		t.Errorf("printed\n%s", out)
	}

	d = &fakeDev{fenceErr: unix.EIO}
	useDev(t, d)
	r := runFake(t, readFake(), "sync", "dev", "rxe0", "dir", "to-cpu", "async")
	want = regexp.MustCompile(`^sync to-cpu dev rxe0: submitted, fence fd 7\nfence signalled: EIO in [0-9.]+(ns|us|ms|s)\n$`)
	if r.code != 1 || !want.MatchString(r.stdout) || r.stderr != "Error: sync: the fence signalled with EIO\n" {
		t.Errorf("exit %d, stdout\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}

	// A batch: its fence carries its first failed entry's errno.
	d = &fakeDev{fenceErr: unix.ETIMEDOUT}
	useDev(t, d)
	r = runFake(t, readFake(), "sync", "id", "3,4", "async")
	want = regexp.MustCompile(`^sync to-device id 3,4: submitted, fence fd 7\nfence signalled: ETIMEDOUT in [0-9.]+(ns|us|ms|s)\n$`)
	if r.code != 1 || !want.MatchString(r.stdout) || r.stderr != "Error: sync: the fence signalled with ETIMEDOUT\n" {
		t.Errorf("batch: exit %d, stdout\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestSyncAsyncJSON: one object once the fence signalled, named like the
// other commands' fields.
func TestSyncAsyncJSON(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		fenceErr error
		want     map[string]any // without the times
	}{
		{[]string{"id", "3", "len", "64"}, nil,
			map[string]any{"dir": "to-device", "id": 3.0, "offset": 0.0, "len": 64.0, "fence_fd": 7.0}},
		{[]string{"dev", "rxe0", "dir", "inbound"}, unix.EOPNOTSUPP,
			map[string]any{"dir": "inbound", "dev": "rxe0", "dev_index": 1.0, "err": "EOPNOTSUPP", "fence_fd": 7.0}},
		{[]string{"id", "3,4,5"}, nil,
			map[string]any{"dir": "to-device", "ids": []any{3.0, 4.0, 5.0}, "fence_fd": 7.0}},
		{[]string{"id", "3,4", "dir", "to-cpu"}, unix.EIO,
			map[string]any{"dir": "to-cpu", "ids": []any{3.0, 4.0}, "err": "EIO", "fence_fd": 7.0}},
	} {
		useDev(t, &fakeDev{fenceErr: tt.fenceErr})
		r := runFake(t, readFake(), append(append([]string{"-j", "sync"}, tt.args...), "async")...)
		if (r.code != 0) != (tt.fenceErr != nil) {
			t.Errorf("%v: exit %d, stderr %q", tt.args, r.code, r.stderr)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v: %v\n%s", tt.args, err, r.stdout)
		}
		for _, k := range []string{"submit_ns", "time_ns"} {
			if v, ok := got[k].(float64); !ok || v < 0 {
				t.Errorf("%v: %s %v", tt.args, k, got[k])
			}
			delete(got, k)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%v (-want +got):\n%s", tt.args, d)
		}
	}
}

// TestSyncAsyncErrors: async with an owner, or a range of a batch, is
// refused before anything is opened; errors of netlink, of the device and
// of the wait fail the command with their own messages.
func TestSyncAsyncErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sync", "dev", "rxe0", "owner", "sim", "async"}, "Error: async takes client ids or dev DEV\n"},
		{[]string{"sync", "--dev", "rxe0", "--owner", "sim", "--async"}, "Error: async takes client ids or dev DEV\n"},
		{[]string{"sync", "id", "3,4", "len", "64", "async"},
			"Error: offset and len are bytes of one client: give one id ID, not dev DEV or a batch\n"},
	} {
		d := &fakeDev{}
		useDev(t, d)
		r := runFake(t, readFake(), tt.args...)
		if r.code != 1 || r.stderr != tt.want || r.dials != 0 || d.opened {
			t.Errorf("%v: exit %d, stderr %q, %d dials, opened %v", tt.args, r.code, r.stderr, r.dials, d.opened)
		}
	}

	notFound := &syncdev.Error{Op: "sync id 9", Errno: unix.ENOENT, Reason: "no such client"}
	for _, tt := range []struct {
		dev  *fakeDev
		args []string
		want string
	}{
		{&fakeDev{}, []string{"dev", "rxe9"}, "Error: get device rxe9: no such RDMA device\n"},
		{&fakeDev{openErr: &syncdev.Error{Op: "open /dev/ib_sync_mem", Errno: unix.ENOENT, Reason: "no such node"}},
			[]string{"id", "3"}, "Error: syncdev: open /dev/ib_sync_mem: ENOENT (no such node)\n"},
		{&fakeDev{submitErr: notFound}, []string{"id", "9"}, "Error: syncdev: sync id 9: ENOENT (no such client)\n"},
		{&fakeDev{submitErr: &syncdev.Error{Op: "sync id 3,9", Errno: unix.ENOENT, Reason: "an id names no client; nothing ran"}},
			[]string{"id", "3,9"}, "Error: syncdev: sync id 3,9: ENOENT (an id names no client; nothing ran)\n"},
		{&fakeDev{fenceErr: context.Canceled}, []string{"id", "3"}, "Error: context canceled\n"},
	} {
		useDev(t, tt.dev)
		r := runFake(t, readFake(), append(append([]string{"sync"}, tt.args...), "async")...)
		if r.code != 1 || r.stderr != tt.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
		if tt.dev.fenceErr == nil && r.stdout != "" {
			t.Errorf("%v: printed %q", tt.args, r.stdout)
		}
	}
	if !errors.Is(notFound, genl.ErrNotFound) {
		t.Error("a syncdev ENOENT is not genl.ErrNotFound")
	}
}
