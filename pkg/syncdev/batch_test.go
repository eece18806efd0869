package syncdev

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// TestBatchRequests: what SyncBatch and SyncBatchAsync put in the struct
// and in the entries it points at, and what SyncBatch makes of the
// kernel's answer: the totals, and each entry's err in order.
func TestBatchRequests(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	k.batch = iocSyncBatch{Run: 3, Errors: 1}
	k.entryErrs = []int32{0, -int32(unix.EIO), 0}
	res, err := d.SyncBatch(BatchRequest{
		Entries: []BatchEntry{{ID: 3}, {ID: 4, Range: &genl.Range{Offset: 4096, Len: 64}}, {ID: 3}},
		Dir:     genl.DirToCPU, Timeout: 250 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&BatchResult{Run: 3, Errors: 1, Errs: []syscall.Errno{0, unix.EIO, 0}}, res); d != "" {
		t.Errorf("SyncBatch result (-want +got):\n%s", d)
	}

	in, err := d.SyncAsync(SyncRequest{ID: 1, Dir: genl.DirToDevice})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	k.inFD = false
	f, err := d.SyncBatchAsync(BatchRequest{Entries: []BatchEntry{{ID: 7}}, Dir: genl.DirInbound, InFence: in})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Fd() < 0 || f.Fd() == in.Fd() {
		t.Errorf("fence fd %d (in-fence %d)", f.Fd(), in.Fd())
	}
	if !k.inFD {
		t.Error("the in-fence's fd was not open during the ioctl")
	}

	if d := cmp.Diff([]uintptr{reqSyncBatch, reqSync, reqSyncBatch}, k.reqs); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	for i, b := range k.batches {
		if b.Entries == 0 {
			t.Errorf("batch %d: a null entries pointer", i)
		}
		k.batches[i].Entries = 0
	}
	wantBatches := []iocSyncBatch{
		{N: 3, Dir: 2, TimeoutMS: 250},
		{N: 1, Dir: 4, Flags: flagAsync | flagInFence, InFence: int32(in.Fd())},
	}
	if d := cmp.Diff(wantBatches, k.batches); d != "" {
		t.Errorf("ioc_sync_batch (-want +got):\n%s", d)
	}
	wantEntries := [][]iocEntry{
		{{ID: 3}, {ID: 4, Offset: 4096, Len: 64}, {ID: 3}},
		{{ID: 7}},
	}
	if d := cmp.Diff(wantEntries, k.entries); d != "" {
		t.Errorf("entries as the kernel read them (-want +got):\n%s", d)
	}
}

// TestBatchMax: a batch of genl.SyncBatchMax entries goes to the kernel
// whole, and comes back with an err for each.
func TestBatchMax(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	entries := make([]BatchEntry, genl.SyncBatchMax)
	for i := range entries {
		entries[i].ID = uint32(i + 1)
	}
	k.entryErrs = make([]int32, genl.SyncBatchMax)
	k.entryErrs[genl.SyncBatchMax-1] = -int32(unix.ETIMEDOUT)
	k.batch = iocSyncBatch{Run: genl.SyncBatchMax, Errors: 1}
	res, err := d.SyncBatch(BatchRequest{Entries: entries, Dir: genl.DirToDevice})
	if err != nil {
		t.Fatal(err)
	}
	if res.Run != genl.SyncBatchMax || len(res.Errs) != genl.SyncBatchMax ||
		res.Errs[0] != 0 || res.Errs[genl.SyncBatchMax-1] != unix.ETIMEDOUT {
		t.Errorf("result: run %d, %d errs, first %v, last %v", res.Run, len(res.Errs), res.Errs[0], res.Errs[len(res.Errs)-1])
	}
	if got := k.entries[0]; len(got) != genl.SyncBatchMax || got[genl.SyncBatchMax-1].ID != genl.SyncBatchMax {
		t.Errorf("the kernel read %d entries", len(got))
	}
}

// TestBatchRefused: what cannot be encoded fails with genl.ErrInvalid (or
// the in-fence's own error) and no ioctl.
func TestBatchRefused(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	closed := NewFence(os.NewFile(uintptr(openFD(t)), "closed"))
	closed.Close()
	one := []BatchEntry{{ID: 1}}
	tooMany := make([]BatchEntry, genl.SyncBatchMax+1)
	for _, tt := range []struct {
		name string
		r    BatchRequest
		want string
		is   error
	}{
		{"no entries", BatchRequest{Dir: 1},
			"syncdev: sync of an empty batch: invalid argument: a batch names 1 to 2048 clients, not 0", genl.ErrInvalid},
		{"past the max", BatchRequest{Entries: tooMany, Dir: 1},
			"syncdev: sync id 0,0,0,0,0,0,0,0,... (2049 clients): invalid argument: a batch names 1 to 2048 clients, not 2049", genl.ErrInvalid},
		{"empty range", BatchRequest{Entries: []BatchEntry{{ID: 1}, {ID: 2, Range: &genl.Range{Offset: 64}}}, Dir: 1},
			"syncdev: sync id 1,2: entry 1 (id 2): invalid argument: range of 0 bytes at offset 64", genl.ErrInvalid},
		{"negative timeout", BatchRequest{Entries: one, Dir: 1, Timeout: -time.Millisecond},
			"syncdev: sync id 1: invalid argument: timeout -1ms is not a whole number", genl.ErrInvalid},
		{"sub-millisecond timeout", BatchRequest{Entries: one, Dir: 1, Timeout: time.Microsecond},
			"timeout 1µs is not a whole number", genl.ErrInvalid},
		{"closed in-fence", BatchRequest{Entries: one, Dir: 1, InFence: closed},
			"syncdev: sync id 1: in-fence: file already closed", os.ErrClosed},
	} {
		_, err := d.SyncBatch(tt.r)
		_, aerr := d.SyncBatchAsync(tt.r)
		for _, err := range []error{err, aerr} {
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.is) {
				t.Errorf("%s: %v, want %q matching %v", tt.name, err, tt.want, tt.is)
			}
		}
	}
	if len(k.reqs) != 0 {
		t.Errorf("ioctls run: %#x", k.reqs)
	}
}

// TestBatchKernelErrors: a request the kernel refused whole is an *Error,
// blocking or not, and no fence.
func TestBatchKernelErrors(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	ids := func(n int) []BatchEntry {
		e := make([]BatchEntry, n)
		for i := range e {
			e[i].ID = uint32(i + 3)
		}
		return e
	}
	for _, tt := range []struct {
		errno syscall.Errno
		r     BatchRequest
		want  string
		is    error
	}{
		{unix.ENOENT, BatchRequest{Entries: ids(2), Dir: 1},
			"syncdev: sync id 3,4: ENOENT (an id names no client; nothing ran)", genl.ErrNotFound},
		{unix.ENOENT, BatchRequest{Entries: ids(9), Dir: 1},
			"syncdev: sync id 3,4,5,6,7,8,9,10,... (9 clients): ENOENT (an id names no client; nothing ran)", genl.ErrNotFound},
		{unix.ERANGE, BatchRequest{Entries: []BatchEntry{{ID: 3, Range: &genl.Range{Len: 1 << 40}}}, Dir: 1},
			"syncdev: sync id 3: ERANGE (range outside the client)", genl.ErrInvalid},
		{unix.EPERM, BatchRequest{Entries: ids(1), Dir: 1},
			"syncdev: sync id 3: EPERM (requires CAP_NET_ADMIN)", genl.ErrPermission},
	} {
		k.errno = tt.errno
		res, err := d.SyncBatch(tt.r)
		f, aerr := d.SyncBatchAsync(tt.r)
		if res != nil || f != nil {
			t.Errorf("%v: result %v, fence %v", tt.errno, res, f)
		}
		for _, err := range []error{err, aerr} {
			var e *Error
			if err == nil || err.Error() != tt.want || !errors.Is(err, tt.is) || !errors.Is(err, tt.errno) || !errors.As(err, &e) {
				t.Errorf("%v: %v, want %q matching %v", tt.errno, err, tt.want, tt.is)
			}
		}
	}
}

// TestBatchOp: how errors name a batch.
func TestBatchOp(t *testing.T) {
	for n, want := range map[int]string{
		0: "sync of an empty batch", 1: "sync id 1", 8: "sync id 1,2,3,4,5,6,7,8",
		9: "sync id 1,2,3,4,5,6,7,8,... (9 clients)",
	} {
		e := make([]BatchEntry, n)
		for i := range e {
			e[i].ID = uint32(i + 1)
		}
		if got := batchOp(e); got != want {
			t.Errorf("%d entries: %q, want %q", n, got, want)
		}
	}
}

// TestBatchRealIoctl: the real ioctl on /dev/null, which knows it not:
// ENOTTY, no result and no fence.
func TestBatchRealIoctl(t *testing.T) {
	d := openNull(t)
	r := BatchRequest{Entries: []BatchEntry{{ID: 1}, {ID: 2}}, Dir: genl.DirToDevice}
	if res, err := d.SyncBatch(r); res != nil || !errors.Is(err, unix.ENOTTY) {
		t.Errorf("SyncBatch on /dev/null: %v %v, want ENOTTY", res, err)
	}
	if f, err := d.SyncBatchAsync(r); f != nil || !errors.Is(err, unix.ENOTTY) {
		t.Errorf("SyncBatchAsync on /dev/null: %v %v, want ENOTTY", f, err)
	}
}
