package syncdev

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// BatchEntry is one client of a batch.
type BatchEntry struct {
	ID uint32
	// Range syncs only those bytes of the client, as in SyncRequest; nil
	// syncs all of it.
	Range *genl.Range
}

// BatchRequest is a sync of several clients, in the order given, in one
// ioctl: as the family's batch (genl.SyncRequest with several Clients),
// each entry with a range of its own if it likes.
type BatchRequest struct {
	// Entries are 1 to genl.SyncBatchMax clients; an id may repeat.
	Entries []BatchEntry
	Dir     genl.Direction // required
	Timeout time.Duration  // as in SyncRequest, for each client
	InFence *Fence         // as in SyncRequest
}

// BatchResult is the outcome of a blocking SyncBatch.
type BatchResult struct {
	Run    uint32 // entries whose sync ran
	Errors uint32 // entries that failed
	// Errs is each entry's result, in the request's order: 0 for one
	// that succeeded, its errno (EIO, ETIMEDOUT, ENXIO...) otherwise.
	Errs []syscall.Errno
}

var batchReasons = map[syscall.Errno]string{unix.ENOENT: "an id names no client; nothing ran"}

// SyncBatch syncs the clients of r in order and returns when all are
// done. A client's failure is a result (BatchResult.Errs), not an error:
// the call fails for a request the kernel refused whole (ENOENT for an
// unknown id, EINVAL or ERANGE for a bad range) or an in-fence that
// signalled with an error.
func (d *Device) SyncBatch(r BatchRequest) (*BatchResult, error) {
	arg, entries, _, err := d.syncBatch(r, 0)
	if err != nil {
		return nil, err
	}
	res := &BatchResult{Run: arg.Run, Errors: arg.Errors, Errs: make([]syscall.Errno, len(entries))}
	for i, e := range entries {
		res.Errs[i] = genl.ErrnoOf(e.Err)
	}
	return res, nil
}

// SyncBatchAsync starts a batch and returns at once with its fence, which
// signals when every entry completed, with the first failed entry's errno
// (in the batch's order) as its error.
func (d *Device) SyncBatchAsync(r BatchRequest) (*Fence, error) {
	_, _, f, err := d.syncBatch(r, flagAsync)
	return f, err
}

func (d *Device) syncBatch(r BatchRequest, flags uint32) (*iocSyncBatch, []iocEntry, *Fence, error) {
	op := batchOp(r.Entries)
	if n := len(r.Entries); n == 0 || n > genl.SyncBatchMax {
		return nil, nil, nil, invalid(op, "a batch names 1 to %d clients, not %d", genl.SyncBatchMax, n)
	}
	arg := &iocSyncBatch{N: uint32(len(r.Entries)), Dir: uint32(r.Dir), Flags: flags}
	var err error
	if arg.TimeoutMS, err = timeoutMS(op, r.Timeout); err != nil {
		return nil, nil, nil, err
	}
	// The kernel reads and writes the entries through a u64, which the
	// garbage collector does not follow: they must be on the heap (the
	// compiler may put a small slice that does not escape on the stack,
	// which moves; returning entries makes it escape) and kept alive
	// until the ioctl returned.
	entries := make([]iocEntry, len(r.Entries))
	for i, e := range r.Entries {
		entries[i].ID = e.ID
		if e.Range != nil {
			if err := e.Range.Check(); err != nil {
				return nil, nil, nil, fmt.Errorf("syncdev: %s: entry %d (id %d): %w", op, i, e.ID, err)
			}
			entries[i].Offset, entries[i].Len = e.Range.Offset, e.Range.Len
		}
	}
	arg.Entries = uint64(uintptr(unsafe.Pointer(&entries[0])))
	err = d.do(op, batchReasons, reqSyncBatch, unsafe.Pointer(arg), &inFence{r.InFence, &arg.Flags, &arg.InFence})
	runtime.KeepAlive(entries)
	f, err := outFence(op, flags, arg.OutFence, err)
	return arg, entries, f, err
}

// batchOp names a batch in errors: "sync id 3,4,5", its first ids and
// how many there are past eight.
func batchOp(entries []BatchEntry) string {
	const most = 8
	ids := make([]string, 0, min(len(entries), most))
	for _, e := range entries[:min(len(entries), most)] {
		ids = append(ids, fmt.Sprint(e.ID))
	}
	op := "sync id " + strings.Join(ids, ",")
	switch {
	case len(entries) == 0:
		op = "sync of an empty batch"
	case len(entries) > most:
		op += fmt.Sprintf(",... (%d clients)", len(entries))
	}
	return op
}
