package syncdev

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// fakeKernel stands in for the module's ioctls: it records each request
// and its argument as the kernel would read it, and answers with errno, or
// with results: out_fence (a pipe's read end: readable when the test
// writes to fenceW), a device pass's totals, a fence status.
type fakeKernel struct {
	t     *testing.T
	reqs  []uintptr
	syncs []iocSync
	devs  []iocSyncDev
	marks []iocMark
	owns  []iocOwn
	// creates are the CREATE requests, createAttrs their attributes as
	// the kernel read them; one answers with createID, or with errno and
	// createMsg in the caller's buffer.
	creates     []iocCreate
	createAttrs [][]byte
	createID    uint32
	createMsg   string
	inFD        bool // the in-fence's fd was open during the ioctl
	errno       syscall.Errno
	dev         iocSyncDev   // totals a SYNC_DEV returns
	status      atomic.Int32 // what SYNC_IOC_FILE_INFO reports (set while Wait runs)
	fenceW      *os.File     // write end of the last out_fence

	// batches are the SYNC_BATCH requests, entries their entries as the
	// kernel read them; a blocking batch answers with run and errors from
	// batch, and entry i's err from entryErrs[i].
	batches   []iocSyncBatch
	entries   [][]iocEntry
	batch     iocSyncBatch
	entryErrs []int32
}

// fake replaces ioctl with k until the test ends.
func fake(t *testing.T) *fakeKernel {
	k := &fakeKernel{t: t}
	k.status.Store(1)
	saved := ioctl
	ioctl = k.ioctl
	t.Cleanup(func() {
		ioctl = saved
		if k.fenceW != nil {
			k.fenceW.Close()
		}
	})
	return k
}

func (k *fakeKernel) ioctl(_, req uintptr, arg unsafe.Pointer) error {
	k.reqs = append(k.reqs, req)
	switch req {
	case reqSync:
		a := (*iocSync)(arg)
		k.syncs = append(k.syncs, *a)
		k.checkInFence(a.Flags, a.InFence)
		if k.errno == 0 && a.Flags&flagAsync != 0 {
			a.OutFence = k.newFence()
		}
	case reqSyncDev:
		a := (*iocSyncDev)(arg)
		k.devs = append(k.devs, *a)
		k.checkInFence(a.Flags, a.InFence)
		if k.errno == 0 {
			a.Clients, a.Errors, a.Skipped, a.Err, a.Pass = k.dev.Clients, k.dev.Errors, k.dev.Skipped, k.dev.Err, k.dev.Pass
			if a.Flags&flagAsync != 0 {
				a.OutFence = k.newFence()
			}
		}
	case reqSyncBatch:
		a := (*iocSyncBatch)(arg)
		k.batches = append(k.batches, *a)
		k.checkInFence(a.Flags, a.InFence)
		// The u64 as the pointer it is (unsafe.Pointer(uintptr(...)) would
		// upset vet).
		entries := unsafe.Slice((*iocEntry)(*(*unsafe.Pointer)(unsafe.Pointer(&a.Entries))), a.N)
		k.entries = append(k.entries, slices.Clone(entries))
		switch {
		case k.errno != 0:
		case a.Flags&flagAsync != 0:
			a.OutFence = k.newFence()
		default:
			a.Run, a.Errors = k.batch.Run, k.batch.Errors
			for i, e := range k.entryErrs {
				entries[i].Err = e
			}
		}
	case reqMarkDirty:
		k.marks = append(k.marks, *(*iocMark)(arg))
	case reqOwn:
		k.owns = append(k.owns, *(*iocOwn)(arg))
	case reqCreate:
		a := (*iocCreate)(arg)
		k.creates = append(k.creates, *a)
		attrs := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&a.Attrs))), a.AttrsLen)
		k.createAttrs = append(k.createAttrs, slices.Clone(attrs))
		if k.errno == 0 {
			a.ID = k.createID
		} else {
			msg := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&a.Msg))), a.MsgLen)
			msg[copy(msg[:len(msg)-1], k.createMsg)] = 0
		}
	case reqFileInfo:
		info := (*syncFileInfo)(arg)
		if info.NumFences != 0 || info.Flags != 0 || info.Pad != 0 {
			return unix.EINVAL
		}
		info.Status = k.status.Load()
	}
	if k.errno != 0 {
		return k.errno
	}
	return nil
}

func (k *fakeKernel) checkInFence(flags uint32, fd int32) {
	if flags&flagInFence != 0 {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		k.inFD = err == nil
	}
}

// newFence returns the fd of a pipe's read end, as the kernel returns a
// new sync_file's.
func (k *fakeKernel) newFence() int32 {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		k.t.Fatal(err)
	}
	if k.fenceW != nil {
		k.fenceW.Close()
	}
	k.fenceW = os.NewFile(uintptr(p[1]), "fence-w")
	return int32(p[0])
}

// openNull opens /dev/null as the device: a real fd for the fake.
func openNull(t *testing.T) *Device {
	t.Helper()
	d, err := Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestSyncRequests: what each call puts in its struct, and what it makes
// of the kernel's answer.
func TestSyncRequests(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	if err := d.Nop(); err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(SyncRequest{ID: 3, Dir: genl.DirToCPU, Range: &genl.Range{Offset: 4096, Len: 8192},
		Timeout: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	f, err := d.SyncAsync(SyncRequest{ID: 4, Dir: genl.DirInbound})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Fd() < 0 {
		t.Errorf("fence fd %d", f.Fd())
	}
	k.dev = iocSyncDev{Clients: 5, Errors: 1, Skipped: 2, Err: -int32(unix.EIO), Pass: 77}
	res, err := d.SyncDev(DevRequest{DevIndex: 2, Dir: genl.DirBidirectional, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&DevResult{Clients: 5, Errors: 1, Skipped: 2, Err: unix.EIO, Pass: 77}, res); d != "" {
		t.Errorf("SyncDev result (-want +got):\n%s", d)
	}
	df, err := d.SyncDevAsync(DevRequest{DevIndex: 2, Dir: genl.DirToDevice, InFence: f})
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	if !k.inFD {
		t.Error("the in-fence's fd was not open during the ioctl")
	}
	if err := d.MarkDirty(9, genl.DirToDevice, &genl.Range{Len: 64}); err != nil {
		t.Fatal(err)
	}
	if err := d.MarkDirty(9, genl.DirToCPU, nil); err != nil {
		t.Fatal(err)
	}

	if d := cmp.Diff([]uintptr{reqNop, reqSync, reqSync, reqSyncDev, reqSyncDev, reqMarkDirty, reqMarkDirty}, k.reqs); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	wantSyncs := []iocSync{
		{ID: 3, Dir: 2, Offset: 4096, Len: 8192, TimeoutMS: 500},
		{ID: 4, Dir: 4, Flags: flagAsync},
	}
	if d := cmp.Diff(wantSyncs, k.syncs); d != "" {
		t.Errorf("ioc_sync (-want +got):\n%s", d)
	}
	wantDevs := []iocSyncDev{
		{DevIndex: 2, Dir: 3, TimeoutMS: 1000},
		{DevIndex: 2, Dir: 1, Flags: flagAsync | flagInFence, InFence: int32(f.Fd())},
	}
	if d := cmp.Diff(wantDevs, k.devs); d != "" {
		t.Errorf("ioc_sync_dev (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]iocMark{{ID: 9, Dir: 1, Len: 64}, {ID: 9, Dir: 2}}, k.marks); d != "" {
		t.Errorf("ioc_mark (-want +got):\n%s", d)
	}
}

// TestOwn: Own is one IB_SYNC_MEM_IOC_OWN with the id and flags 0, each
// time it is called (the kernel decides what a second one means).
func TestOwn(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	for _, id := range []uint32{7, 7, 0xfffffffe} {
		if err := d.Own(id); err != nil {
			t.Fatalf("Own(%d): %v", id, err)
		}
	}
	if d := cmp.Diff([]uintptr{reqOwn, reqOwn, reqOwn}, k.reqs); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]iocOwn{{ID: 7}, {ID: 7}, {ID: 0xfffffffe}}, k.owns); d != "" {
		t.Errorf("ioc_own (-want +got):\n%s", d)
	}

	k.errno = unix.EBUSY
	err := d.Own(9)
	var e *Error
	if !errors.Is(err, unix.EBUSY) || !errors.Is(err, genl.ErrBusy) || !errors.As(err, &e) ||
		e.Op != "own id 9" || e.Errno != unix.EBUSY || e.Reason != "another open file of the device owns it" ||
		!strings.Contains(err.Error(), "another open file of the device owns it") {
		t.Errorf("Own refused with EBUSY: %#v", err)
	}
	if d := cmp.Diff([]iocOwn{{ID: 7}, {ID: 7}, {ID: 0xfffffffe}, {ID: 9}}, k.owns); d != "" {
		t.Errorf("ioc_own after a refusal (-want +got):\n%s", d)
	}

	d.Close()
	if err := d.Own(1); !errors.Is(err, os.ErrClosed) || err.Error() != "syncdev: own id 1: file already closed" {
		t.Errorf("Own on a closed device: %v", err)
	}
	if len(k.reqs) != 4 {
		t.Errorf("%d ioctls, want 4 (none on a closed device)", len(k.reqs))
	}
}

// TestRefusedBeforeTheKernel: what cannot be encoded fails with
// genl.ErrInvalid (or the in-fence's own error) and no ioctl.
func TestRefusedBeforeTheKernel(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	closed := NewFence(os.NewFile(uintptr(openFD(t)), "closed"))
	closed.Close()
	for _, tt := range []struct {
		name string
		call func() error
		want string
		is   error
	}{
		{"negative timeout", func() error { return d.Sync(SyncRequest{ID: 1, Dir: 1, Timeout: -time.Millisecond}) },
			"syncdev: sync id 1: invalid argument: timeout -1ms is not a whole number of milliseconds from 0 to 600000", genl.ErrInvalid},
		{"timeout past the most", func() error {
			return d.Sync(SyncRequest{ID: 1, Dir: 1, Timeout: (genl.SyncTimeoutMaxMS + 1) * time.Millisecond})
		}, "syncdev: sync id 1: invalid argument: timeout 10m0.001s is not a whole number of milliseconds from 0 to 600000", genl.ErrInvalid},
		{"sub-millisecond timeout", func() error { return d.Sync(SyncRequest{ID: 1, Dir: 1, Timeout: 1500 * time.Microsecond}) },
			"timeout 1.5ms is not a whole number", genl.ErrInvalid},
		{"timeout past u32", func() error {
			_, err := d.SyncDev(DevRequest{DevIndex: 1, Dir: 1, Timeout: (1 << 32) * time.Millisecond})
			return err
		}, "syncdev: sync dev index 1: invalid argument: timeout", genl.ErrInvalid},
		{"empty range", func() error { return d.Sync(SyncRequest{ID: 2, Dir: 1, Range: &genl.Range{Offset: 64}}) },
			"syncdev: sync id 2: invalid argument: range of 0 bytes at offset 64", genl.ErrInvalid},
		{"empty mark", func() error { return d.MarkDirty(2, 1, &genl.Range{}) },
			"syncdev: mark id 2 dirty: invalid argument: range of 0 bytes", genl.ErrInvalid},
		{"closed in-fence", func() error {
			_, err := d.SyncAsync(SyncRequest{ID: 5, Dir: 1, InFence: closed})
			return err
		}, "syncdev: sync id 5: in-fence: file already closed", os.ErrClosed},
	} {
		err := tt.call()
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.is) {
			t.Errorf("%s: %v, want %q matching %v", tt.name, err, tt.want, tt.is)
		}
	}
	if len(k.reqs) != 0 {
		t.Errorf("ioctls run: %#x", k.reqs)
	}
	d.Close()
	if err := d.Nop(); !errors.Is(err, os.ErrClosed) || err.Error() != "syncdev: nop: file already closed" {
		t.Errorf("Nop on a closed device: %v", err)
	}
}

// openFD is a file descriptor of /dev/null for the test to own.
func openFD(t *testing.T) int {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestKernelErrors: an errno of the kernel is an *Error naming the
// operation and what the errno means for it, matching the errno and
// pkg/genl's sentinel.
func TestKernelErrors(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	for _, tt := range []struct {
		errno syscall.Errno
		call  func() error
		want  string
		is    error
	}{
		{unix.ENOENT, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 1}) },
			"syncdev: sync id 3: ENOENT (no such client)", genl.ErrNotFound},
		{unix.ENOENT, func() error { _, err := d.SyncAsync(SyncRequest{ID: 3, Dir: 1}); return err },
			"syncdev: sync id 3: ENOENT (no such client)", genl.ErrNotFound},
		{unix.ENOENT, func() error { _, err := d.SyncDev(DevRequest{DevIndex: 9, Dir: 1}); return err },
			"syncdev: sync dev index 9: ENOENT (no such device index)", genl.ErrNotFound},
		{unix.ENOENT, func() error { _, err := d.SyncDevAsync(DevRequest{DevIndex: 9, Dir: 1}); return err },
			"syncdev: sync dev index 9: ENOENT (no such device index)", genl.ErrNotFound},
		{unix.ENODEV, func() error { _, err := d.SyncDev(DevRequest{DevIndex: 9, Dir: 1}); return err },
			"syncdev: sync dev index 9: ENODEV (no such device index, or its device went away)", genl.ErrNoDevice},
		{unix.ENODEV, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 1}) },
			"syncdev: sync id 3: ENODEV (device gone)", genl.ErrNoDevice},
		{unix.ENXIO, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 1}) },
			"syncdev: sync id 3: ENXIO (client invalidated)", unix.ENXIO},
		{unix.EBADF, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 1}) },
			"syncdev: sync id 3: EBADF (in-fence is not an open file descriptor)", unix.EBADF},
		{unix.EPERM, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 1}) },
			"syncdev: sync id 3: EPERM (requires CAP_NET_ADMIN)", genl.ErrPermission},
		{unix.EINVAL, func() error { return d.Sync(SyncRequest{ID: 3}) },
			"syncdev: sync id 3: EINVAL (bad direction, range, flags or in-fence)", genl.ErrInvalid},
		{unix.EINVAL, func() error { return d.MarkDirty(3, 1, nil) },
			"syncdev: mark id 3 dirty: EINVAL (not a lazy client, or a bad direction or range)", genl.ErrInvalid},
		{unix.ERANGE, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 1, Range: &genl.Range{Len: 1 << 40}}) },
			"syncdev: sync id 3: ERANGE (range outside the client)", genl.ErrInvalid},
		{unix.ETIMEDOUT, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 1}) },
			"syncdev: sync id 3: ETIMEDOUT (sync timed out)", genl.ErrTimeout},
		{unix.EIO, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 1}) },
			"syncdev: sync id 3: EIO (input/output error)", unix.EIO},
		{unix.EOPNOTSUPP, func() error { return d.Sync(SyncRequest{ID: 3, Dir: 4}) },
			"syncdev: sync id 3: EOPNOTSUPP (operation not supported)", unix.EOPNOTSUPP},
		{unix.ENOENT, func() error { return d.Own(3) },
			"syncdev: own id 3: ENOENT (no such client)", genl.ErrNotFound},
		{unix.EPERM, func() error { return d.Own(3) },
			"syncdev: own id 3: EPERM (not created through the family (a kernel driver's client), or no CAP_NET_ADMIN)",
			genl.ErrPermission},
		{unix.EBUSY, func() error { return d.Own(3) },
			"syncdev: own id 3: EBUSY (another open file of the device owns it)", genl.ErrBusy},
		{unix.EINVAL, func() error { return d.Own(3) },
			"syncdev: own id 3: EINVAL (bad direction, range, flags or in-fence)", genl.ErrInvalid},
		{unix.ENOTTY, func() error { return d.Own(3) },
			"syncdev: own id 3: ENOTTY (not ib_sync_mem's device, or an ioctl this module does not know)", unix.ENOTTY},
		{unix.ENOTTY, func() error { return d.Nop() },
			"syncdev: nop: ENOTTY (not ib_sync_mem's device, or an ioctl this module does not know)", unix.ENOTTY},
	} {
		k.errno = tt.errno
		err := tt.call()
		var e *Error
		var errno syscall.Errno
		if err == nil || err.Error() != tt.want || !errors.Is(err, tt.is) || !errors.Is(err, tt.errno) ||
			!errors.As(err, &e) || !errors.As(err, &errno) || errno != tt.errno {
			t.Errorf("%v: %v, want %q matching %v", tt.errno, err, tt.want, tt.is)
		}
	}
}

// TestRealIoctlErrors: the real ioctl on /dev/null, which knows none of
// them: ENOTTY, and no fence.
func TestRealIoctlErrors(t *testing.T) {
	d := openNull(t)
	if err := d.Nop(); !errors.Is(err, unix.ENOTTY) {
		t.Errorf("Nop on /dev/null: %v, want ENOTTY", err)
	}
	if f, err := d.SyncAsync(SyncRequest{ID: 1, Dir: 1}); f != nil || !errors.Is(err, unix.ENOTTY) {
		t.Errorf("SyncAsync on /dev/null: %v %v, want ENOTTY", f, err)
	}
	if err := d.Own(1); !errors.Is(err, unix.ENOTTY) {
		t.Errorf("Own on /dev/null: %v, want ENOTTY", err)
	}
	f := NewFence(os.NewFile(uintptr(openFD(t)), "null"))
	defer f.Close()
	if s, err := f.Status(); s || err == nil ||
		err.Error() != "syncdev: fence status: ENOTTY (not a sync_file)" || !errors.Is(err, unix.ENOTTY) {
		t.Errorf("Status of /dev/null: %v %v", s, err)
	}
}

// TestOpen: a missing node is ENOENT, saying what is missing.
func TestOpen(t *testing.T) {
	_, err := Open("/nonexistent/ib_sync_mem")
	want := "syncdev: open /nonexistent/ib_sync_mem: ENOENT (no such node: is ib_sync_mem loaded, a build with its data-path device?)"
	if err == nil || err.Error() != want || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open: %v\nwant %s", err, want)
	}
}

// TestFenceWait: Wait polls the fd (a pipe here: readable once written)
// and then reads the status: nil for 1, the errno for a negative one; a
// context ends the wait.
func TestFenceWait(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	f, err := d.SyncAsync(SyncRequest{ID: 1, Dir: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	k.status.Store(0)
	if s, err := f.Status(); s || err != nil {
		t.Errorf("pending: %v %v", s, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := f.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait on a pending fence, past its deadline: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if err := f.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a pending fence, cancelled: %v", err)
	}

	// It signals, with EIO, while Wait waits.
	done := make(chan error)
	go func() { done <- f.Wait(context.Background()) }()
	time.Sleep(10 * time.Millisecond)
	k.status.Store(-int32(unix.EIO))
	if _, err := k.fenceW.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != unix.EIO {
		t.Errorf("Wait: %#v, want the bare errno EIO", err)
	}
	if s, err := f.Status(); !s || err != unix.EIO {
		t.Errorf("Status after: %v %v", s, err)
	}
	k.status.Store(1)
	if err := f.Wait(context.Background()); err != nil {
		t.Errorf("Wait on a fence signalled ok: %v", err)
	}
	k.status.Store(0)
	if err := f.Wait(context.Background()); err == nil || err.Error() != "syncdev: fence wait: EPROTO (readable but not signalled)" {
		t.Errorf("readable but pending: %v", err)
	}
	f.Close()
	if err := f.Wait(context.Background()); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Wait on a closed fence: %v", err)
	}
}

// TestFenceStatus: sync_file_info.status as the kernel reports it.
func TestFenceStatus(t *testing.T) {
	for _, tt := range []struct {
		status    int32
		signalled bool
		err       error
	}{
		{1, true, nil}, {0, false, nil},
		{-int32(unix.EIO), true, unix.EIO}, {-int32(unix.ETIMEDOUT), true, unix.ETIMEDOUT},
		{-int32(unix.ENXIO), true, unix.ENXIO},
	} {
		s, err := fenceStatus(tt.status)
		if s != tt.signalled || err != tt.err {
			t.Errorf("status %d: %v %v, want %v %v", tt.status, s, err, tt.signalled, tt.err)
		}
	}
}

// TestCreate: Create is one IB_SYNC_MEM_IOC_CREATE carrying what
// Conn.Register sends, flags 0 and a buffer for the reason; it returns the
// id the kernel set, or the kernel's reason, or the package's own when the
// kernel gave none.
func TestCreate(t *testing.T) {
	k := fake(t)
	d := openNull(t)
	r := genl.RegisterRequest{Device: "rxe0", Name: "made", Kind: genl.KindSim, Flags: genl.FlagLazy}
	want, err := r.Attributes()
	if err != nil {
		t.Fatal(err)
	}
	k.createID = 42
	id, err := d.Create(r)
	if err != nil || id != 42 {
		t.Fatalf("Create = %d, %v; want 42, nil", id, err)
	}
	if len(k.creates) != 1 || k.creates[0].Flags != 0 || k.creates[0].MsgLen != createMsgLen ||
		k.creates[0].Msg == 0 || int(k.creates[0].AttrsLen) != len(want) {
		t.Fatalf("ioc_create %+v, want flags 0, msg_len %d, attrs_len %d", k.creates, createMsgLen, len(want))
	}
	if d := cmp.Diff(want, k.createAttrs[0]); d != "" {
		t.Errorf("attributes, against Register's (-want +got):\n%s", d)
	}

	k.errno, k.createMsg = unix.EINVAL, "client name is empty"
	_, err = d.Create(r)
	var e *Error
	if !errors.Is(err, genl.ErrInvalid) || !errors.As(err, &e) || e.Op != "create client made" ||
		e.Reason != "client name is empty" ||
		err.Error() != "syncdev: create client made: EINVAL (client name is empty)" {
		t.Errorf("Create refused with a reason: %v", err)
	}
	k.errno, k.createMsg = unix.ENOSPC, ""
	_, err = d.Create(r)
	if !errors.As(err, &e) || e.Errno != unix.ENOSPC || e.Reason != "client limit reached" {
		t.Errorf("Create refused without a reason: %v", err)
	}

	// Attributes the kernel would refuse as too many: not sent.
	r.Name = strings.Repeat("n", attrsMax)
	if _, err := d.Create(r); !errors.Is(err, genl.ErrInvalid) || !strings.Contains(err.Error(), "more than the device takes") {
		t.Errorf("Create of %d bytes of name: %v", attrsMax, err)
	}
	if len(k.creates) != 3 {
		t.Errorf("%d ioctls, want 3 (none for the request too large)", len(k.creates))
	}
}
