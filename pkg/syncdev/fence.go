package syncdev

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"syscall"
	"unsafe"

	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// A Fence is a sync_file: a dma_fence as a file descriptor, which signals
// once, when the sync it stands for completed, with the sync's error.
// SyncAsync, SyncBatchAsync and SyncDevAsync return one; NewFence wraps
// one from elsewhere. Closing it does not cancel the sync.
type Fence struct {
	f *os.File
}

// NewFence wraps f, a sync_file, in a Fence, which owns it from then on.
func NewFence(f *os.File) *Fence { return &Fence{f: f} }

// File returns the sync_file, to pass it on (to another process, or to a
// driver that takes sync_files). It stays the Fence's: Close closes it.
func (f *Fence) File() *os.File { return f.f }

// Fd returns the sync_file's file descriptor number, valid until Close.
func (f *Fence) Fd() int { return int(f.f.Fd()) }

// Close closes the sync_file. The sync still runs and the fence still
// signals, for whoever else holds it.
func (f *Fence) Close() error { return f.f.Close() }

// Wait waits until the fence signals, or ctx is done (then it returns an
// error matching ctx.Err()). It returns nil for a fence that signalled without error, and
// the fence's error, a syscall.Errno (EIO, ETIMEDOUT, ENXIO...), for one
// that signalled with one; other errors are *Error (the poll or the
// status failed).
func (f *Fence) Wait(ctx context.Context) error {
	if err := control(f.f, func(fd uintptr) error { return pollIn(ctx, int(fd)) }); err != nil {
		return newError("fence wait", nil, err)
	}
	signalled, err := f.Status()
	if err == nil && !signalled {
		return &Error{Op: "fence wait", Errno: unix.EPROTO, Reason: "readable but not signalled"}
	}
	return err
}

// Status asks the kernel about the fence (SYNC_IOC_FILE_INFO) without
// waiting: signalled is false while it is pending; once it signalled, err
// is nil or the fence's error, a syscall.Errno. A Status that failed (not
// a sync_file: ENOTTY) returns signalled false and an *Error.
func (f *Fence) Status() (signalled bool, err error) {
	// num_fences 0: the kernel fills in the status only.
	var info syncFileInfo
	if err := control(f.f, func(fd uintptr) error { return ioctl(fd, reqFileInfo, unsafe.Pointer(&info)) }); err != nil {
		return false, newError("fence status", statusReasons, err)
	}
	return fenceStatus(info.Status)
}

var statusReasons = map[syscall.Errno]string{unix.ENOTTY: "not a sync_file"}

// fenceStatus reads sync_file_info.status: 1 signalled, 0 pending, a
// negative errno signalled with that error.
func fenceStatus(status int32) (bool, error) {
	if status < 0 {
		return true, genl.ErrnoOf(status)
	}
	return status > 0, nil
}

// pollIn waits for fd to be readable (a sync_file: signalled), or ctx to
// be done, which an eventfd polled beside it tells.
func pollIn(ctx context.Context, fd int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if ctx.Done() != nil {
		efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return err
		}
		defer unix.Close(efd)
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(fired)
			_, _ = unix.Write(efd, binary.NativeEndian.AppendUint64(nil, 1))
		})
		defer func() {
			if !stop() {
				<-fired // done writing before efd closes
			}
		}()
		fds = append(fds, unix.PollFd{Fd: int32(efd), Events: unix.POLLIN})
	}
	for {
		_, err := unix.Poll(fds, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case fds[0].Revents&unix.POLLIN != 0:
			return nil
		case fds[0].Revents&unix.POLLNVAL != 0:
			return unix.EBADF
		case fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
			return unix.EPIPE
		case ctx.Err() != nil:
			return ctx.Err()
		}
	}
}
