package syncdev

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// An Error is a call the kernel refused.
type Error struct {
	Op    string        // what was attempted, such as "sync id 3"
	Errno syscall.Errno // what ioctl(), open() or poll() returned
	// Reason is what the errno means for Op, such as "no such client";
	// the errno's own text when the UAPI gives it no particular meaning.
	Reason string
}

// Error returns "syncdev: op: ERRNO (reason)":
// "syncdev: sync id 3: ENOENT (no such client)".
func (e *Error) Error() string {
	return "syncdev: " + e.Op + ": " + genl.ErrnoName(e.Errno) + " (" + e.Reason + ")"
}

// Unwrap returns what a *genl.Error of the same errno unwraps to: pkg/genl's
// sentinel for it (genl.ErrNotFound, genl.ErrPermission, ...), if it has
// one, and the errno. errors.Is matches both, errors.As finds the errno.
func (e *Error) Unwrap() []error { return (&genl.Error{Errno: e.Errno}).Unwrap() }

// What the errnos of the device's ioctls mean (ib_sync_mem_dev.h).
var reasons = map[syscall.Errno]string{
	unix.EPERM:     "requires CAP_NET_ADMIN",
	unix.EINVAL:    "bad direction, range, flags or in-fence",
	unix.ERANGE:    "range outside the client",
	unix.EBADF:     "in-fence is not an open file descriptor",
	unix.ENXIO:     "client invalidated",
	unix.ENODEV:    "device gone",
	unix.ETIMEDOUT: "sync timed out",
	unix.ENOTTY:    "not ib_sync_mem's device, or an ioctl this module does not know",
}

// newError makes the *Error of op failing with err (a syscall.Errno; any
// other error is wrapped as it is). own says what errnos mean for op where
// that differs from reasons: ENOENT is "no such client" for a sync of one.
func newError(op string, own map[syscall.Errno]string, err error) error {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return fmt.Errorf("syncdev: %s: %w", op, err)
	}
	reason, ok := own[e]
	if !ok {
		reason, ok = reasons[e]
	}
	if !ok {
		reason = e.Error()
	}
	return &Error{Op: op, Errno: e, Reason: reason}
}

// invalid is a request this package cannot encode, refused before the
// kernel: it matches genl.ErrInvalid.
func invalid(op, format string, args ...any) error {
	return fmt.Errorf("syncdev: %s: %w: %s", op, genl.ErrInvalid, fmt.Sprintf(format, args...))
}
