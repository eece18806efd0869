package syncdev

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// A Device is an open /dev/ib_sync_mem. Its methods may be called
// concurrently; each is one ioctl.
type Device struct {
	f *os.File
}

// Open opens the module's device at path, DefaultPath if path is "".
func Open(path string) (*Device, error) {
	if path == "" {
		path = DefaultPath
	}
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, newError("open "+path, openReasons, err)
	}
	return &Device{f: f}, nil
}

var openReasons = map[syscall.Errno]string{
	unix.ENOENT: "no such node: is ib_sync_mem loaded, a build with its data-path device?",
	unix.EACCES: "the node's mode lets only root open it",
}

// Close closes the device. Syncs it started still run, and their fences
// still signal. The clients it owns (Own) are deleted before it returns,
// unless a duplicate of its file descriptor is still open.
func (d *Device) Close() error { return d.f.Close() }

// Nop runs IB_SYNC_MEM_IOC_NOP, which does nothing: the cost of the
// shortest way into the module. It needs no capability.
func (d *Device) Nop() error {
	return d.do("nop", nil, reqNop, nil, nil)
}

// SyncRequest is a sync of one client.
type SyncRequest struct {
	ID  uint32
	Dir genl.Direction // required
	// Range syncs only those bytes of the client, lazy or not; nil syncs
	// all of it.
	Range *genl.Range
	// Timeout bounds the client's sync from when it begins, in whole
	// milliseconds; 0 leaves the module's sync_timeout_ms.
	Timeout time.Duration
	// InFence, if not nil, is waited for before the sync runs (a blocking
	// sync waits for it in the kernel, bounded by Timeout); one that
	// signals with an error fails the sync with that error, and no sync
	// runs. It stays the caller's to close.
	InFence *Fence
}

var clientReasons = map[syscall.Errno]string{unix.ENOENT: "no such client"}

// Sync syncs one client and returns when it is done: nil, or an *Error
// with the client's errno (ETIMEDOUT, EIO, ...) as IB_SYNC_MEM_CMD_SYNC
// returns it. It fails with ENOENT for an unknown id, EINVAL or ERANGE for
// a bad range, ENXIO or ENODEV for an invalidated client.
func (d *Device) Sync(r SyncRequest) error {
	_, err := d.sync(r, 0)
	return err
}

// SyncAsync starts a sync of one client and returns at once with its
// fence, which signals when the sync completed, with the sync's errno as
// its error (Fence.Wait). Errors found before the sync starts (no such
// client, a bad range) fail the call itself, as for Sync.
func (d *Device) SyncAsync(r SyncRequest) (*Fence, error) {
	return d.sync(r, flagAsync)
}

func (d *Device) sync(r SyncRequest, flags uint32) (*Fence, error) {
	op := fmt.Sprintf("sync id %d", r.ID)
	arg := iocSync{ID: r.ID, Dir: uint32(r.Dir), Flags: flags}
	var err error
	if arg.TimeoutMS, err = timeoutMS(op, r.Timeout); err != nil {
		return nil, err
	}
	if r.Range != nil {
		if err := r.Range.Check(); err != nil {
			return nil, fmt.Errorf("syncdev: %s: %w", op, err)
		}
		arg.Offset, arg.Len = r.Range.Offset, r.Range.Len
	}
	err = d.do(op, clientReasons, reqSync, unsafe.Pointer(&arg), &inFence{r.InFence, &arg.Flags, &arg.InFence})
	return outFence(op, flags, arg.OutFence, err)
}

// DevRequest is a sync of every client of a device, in one device-wide
// pass.
type DevRequest struct {
	DevIndex uint32         // genl.Device.Index
	Dir      genl.Direction // required
	Timeout  time.Duration  // as in SyncRequest
	InFence  *Fence         // as in SyncRequest
}

// DevResult is the outcome of a blocking SyncDev: its pass's totals.
type DevResult struct {
	Clients uint32        // clients whose sync ran
	Errors  uint32        // of them, how many failed
	Skipped uint32        // not run: lazy and clean, or invalidated
	Err     syscall.Errno // the pass's first client error, 0 if none
	Pass    uint64        // the pass's id
}

var devReasons = map[syscall.Errno]string{
	unix.ENOENT: "no such device index",
	unix.ENODEV: "no such device index, or its device went away",
}

// SyncDev syncs every client of a device and returns the pass's totals
// when it is done. A client's failure is a result (DevResult.Err), not an
// error: the call fails for a request the kernel refused (ENOENT for an
// unknown index) or an in-fence that signalled with an error.
func (d *Device) SyncDev(r DevRequest) (*DevResult, error) {
	arg, _, err := d.syncDev(r, 0)
	if err != nil {
		return nil, err
	}
	return &DevResult{Clients: arg.Clients, Errors: arg.Errors, Skipped: arg.Skipped,
		Err: genl.ErrnoOf(arg.Err), Pass: arg.Pass}, nil
}

// SyncDevAsync starts a device-wide pass and returns at once with its
// fence, which signals when the pass completed, with its first client
// error as its error.
func (d *Device) SyncDevAsync(r DevRequest) (*Fence, error) {
	_, f, err := d.syncDev(r, flagAsync)
	return f, err
}

func (d *Device) syncDev(r DevRequest, flags uint32) (*iocSyncDev, *Fence, error) {
	op := fmt.Sprintf("sync dev index %d", r.DevIndex)
	arg := iocSyncDev{DevIndex: r.DevIndex, Dir: uint32(r.Dir), Flags: flags}
	var err error
	if arg.TimeoutMS, err = timeoutMS(op, r.Timeout); err != nil {
		return nil, nil, err
	}
	err = d.do(op, devReasons, reqSyncDev, unsafe.Pointer(&arg), &inFence{r.InFence, &arg.Flags, &arg.InFence})
	f, err := outFence(op, flags, arg.OutFence, err)
	return &arg, f, err
}

var markReasons = map[syscall.Errno]string{
	unix.ENOENT: "no such client",
	unix.EINVAL: "not a lazy client, or a bad direction or range",
}

// MarkDirty says that a lazy client's memory was written: its next sync
// in a direction covering dir runs, over the bytes marked (r; nil marks
// all of the client) for kinds that sync ranges. As genl.Conn.MarkDirty.
func (d *Device) MarkDirty(id uint32, dir genl.Direction, r *genl.Range) error {
	op := fmt.Sprintf("mark id %d dirty", id)
	arg := iocMark{ID: id, Dir: uint32(dir)}
	if r != nil {
		if err := r.Check(); err != nil {
			return fmt.Errorf("syncdev: %s: %w", op, err)
		}
		arg.Offset, arg.Len = r.Offset, r.Len
	}
	return d.do(op, markReasons, reqMarkDirty, unsafe.Pointer(&arg), nil)
}

var ownReasons = map[syscall.Errno]string{
	unix.ENOENT: "no such client",
	unix.EPERM:  "not created through the family (a kernel driver's client), or no CAP_NET_ADMIN",
	unix.EBUSY:  "another open file of the device owns it",
}

// Own takes a client over: the kernel deletes it when the open file of d
// is released, that is when d is closed (before Close returns, after the
// client's syncs in flight) or when the program dies, however it dies.
// The fences of its syncs still signal, with ENODEV for a sync the
// deletion came before. The client then reports genl.FlagFile in place of
// genl.FlagOwned: a client its netlink socket owned no longer dies with
// that socket (genl.Conn.Close), only with d. Owning a client d owns
// already does nothing and succeeds.
//
// The open file is released when its last file descriptor is closed.
// This package never duplicates d's, but a descriptor of it that the
// program duplicates or passes on (dup, SCM_RIGHTS) keeps the client
// alive until that one is closed too.
//
// Only a client created through the netlink family (genl.Conn.Register,
// RegisterRegion, RegisterDMABuf) can be owned, by one open file at a
// time. Own fails with ENOENT for an unknown client or one being
// deleted, EPERM for a kernel driver's client (or a caller without
// CAP_NET_ADMIN), EBUSY for a client another open file of the device
// owns.
func (d *Device) Own(id uint32) error {
	arg := iocOwn{ID: id}
	return d.do(fmt.Sprintf("own id %d", id), ownReasons, reqOwn, unsafe.Pointer(&arg), nil)
}

// createMsgLen is the size of the buffer for the kernel's reason of a
// refused Create: its messages are one line.
const createMsgLen = 256

var createReasons = map[syscall.Errno]string{
	unix.EINVAL:     "missing or malformed attribute, or FlagOwned",
	unix.ENODEV:     "no such device, or it is going away",
	unix.EOPNOTSUPP: "client kind not available (module not loaded?)",
	unix.ENOSPC:     "client limit reached",
	unix.E2BIG:      "request larger than the device takes",
}

// Create registers a client as genl.Conn.Register does, owned by this
// open file from the start: it shows genl.FlagFile and genl.OriginDevice,
// and is deleted when the file is released (Close, with no duplicate of
// its descriptor open, or the death of the process), or by
// genl.Conn.Unregister. The memory a kind takes (a region's pages, a
// dma-buf's descriptor) is this process's. r.Flags must not have
// genl.FlagOwned, a netlink socket's ownership (EINVAL). It returns the
// new client's id; a refusal is an *Error whose Reason is the kernel's
// own message when it gave one, and leaves no client. It needs
// CAP_NET_ADMIN when the device was opened (EPERM).
func (d *Device) Create(r genl.RegisterRequest) (uint32, error) {
	op := "create client " + r.Name
	b, err := r.Attributes()
	if err != nil {
		return 0, fmt.Errorf("syncdev: %s: %w", op, err)
	}
	if len(b) > attrsMax {
		return 0, invalid(op, "%d bytes of attributes, more than the device takes (%d)", len(b), attrsMax)
	}
	msg := make([]byte, createMsgLen)
	arg := iocCreate{
		Attrs:    uint64(uintptr(unsafe.Pointer(&b[0]))),
		AttrsLen: uint32(len(b)),
		Msg:      uint64(uintptr(unsafe.Pointer(&msg[0]))),
		MsgLen:   createMsgLen,
	}
	err = d.do(op, createReasons, reqCreate, unsafe.Pointer(&arg), nil)
	// The kernel read and wrote them through the request's pointers.
	runtime.KeepAlive(b)
	runtime.KeepAlive(msg)
	var e *Error
	if errors.As(err, &e) {
		if m, _, _ := bytes.Cut(msg, []byte{0}); len(m) > 0 {
			e.Reason = string(m)
		}
	}
	if err != nil {
		return 0, err
	}
	return arg.ID, nil
}

// timeoutMS is a request's timeout_ms: whole milliseconds that fit a u32.
func timeoutMS(op string, d time.Duration) (uint32, error) {
	if d < 0 || d%time.Millisecond != 0 || d/time.Millisecond > genl.SyncTimeoutMaxMS {
		return 0, invalid(op, "timeout %v is not a whole number of milliseconds from 0 to %d", d, genl.SyncTimeoutMaxMS)
	}
	return uint32(d / time.Millisecond), nil
}

// inFence is where a request takes its in-fence: with a fence, the flag
// is set and the fd filled in while the ioctl runs.
type inFence struct {
	fence *Fence
	flags *uint32
	fd    *int32
}

// do runs the ioctl req on the device with arg, an in-fence's fd held
// open meanwhile, and returns its error as an *Error of op.
func (d *Device) do(op string, own map[syscall.Errno]string, req uintptr, arg unsafe.Pointer, in *inFence) error {
	call := func() error {
		return control(d.f, func(fd uintptr) error { return ioctl(fd, req, arg) })
	}
	var err error
	if in == nil || in.fence == nil {
		err = call()
	} else {
		*in.flags |= flagInFence
		cerr := control(in.fence.f, func(fd uintptr) error {
			*in.fd = int32(fd)
			err = call()
			return nil
		})
		if cerr != nil {
			return fmt.Errorf("syncdev: %s: in-fence: %w", op, cerr)
		}
	}
	if err != nil {
		return newError(op, own, err)
	}
	return nil
}

// control runs fn with f's fd, which stays open meanwhile (a concurrent
// Close waits), and returns fn's error or f's (os.ErrClosed).
func control(f *os.File, fn func(fd uintptr) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(fd) }); err != nil {
		// The one error of Control for an *os.File: internal/poll's
		// ErrFileClosing, which the methods of os.File return as this.
		return os.ErrClosed
	}
	return ferr
}

// outFence is the fence of an asynchronous request that succeeded.
func outFence(op string, flags uint32, fd int32, err error) (*Fence, error) {
	if err != nil || flags&flagAsync == 0 {
		return nil, err
	}
	if fd < 0 {
		return nil, fmt.Errorf("syncdev: %s: the kernel returned no fence (out_fence %d)", op, fd)
	}
	return NewFence(os.NewFile(uintptr(fd), "sync_file")), nil
}
