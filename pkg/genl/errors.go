package genl

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Sentinel errors. An *Error unwraps to the one matching its errno and to
// the errno itself: errors.Is matches either (and the os.Err* values the
// errno stands for), errors.As with a *syscall.Errno finds the errno.
var (
	// ErrNotLoaded: the generic netlink family does not exist here, because
	// the module is not loaded or the caller is not in the initial network
	// namespace, the only one where the family exists. pkg/trace returns
	// it too, when the module or its tracepoints are absent.
	ErrNotLoaded = errors.New("module ib_sync_mem is not loaded")
	// ErrNotFound (ENOENT): no such client.
	ErrNotFound = errors.New("not found")
	// ErrNoDevice (ENODEV): no such device, or it went away; also
	// pkg/trace's lookup of an RDMA device name.
	ErrNoDevice = errors.New("no such device")
	// ErrPermission (EPERM): the command needs CAP_NET_ADMIN in the initial
	// user namespace. pkg/trace's refusals to load BPF (CAP_BPF and
	// CAP_PERFMON) match it too; each error's text names the capability.
	ErrPermission = errors.New("permission denied")
	// ErrBusy (EBUSY): the client belongs to a kernel driver; for
	// pkg/syncdev's Own, another open file of /dev/ib_sync_mem owns it.
	ErrBusy = errors.New("busy")
	// ErrInvalid (EINVAL, or ERANGE for a value out of its range): a bad or
	// missing attribute. Requests this package cannot encode are refused
	// with it before reaching the kernel.
	ErrInvalid = errors.New("invalid argument")
	// ErrTimeout (ETIMEDOUT): a sync waited past its timeout.
	ErrTimeout = errors.New("timed out")
	// ErrLimit (ENOSPC): past the module's max_clients or
	// max_clients_per_dev.
	ErrLimit = errors.New("client limit reached")
	// ErrDumpInterrupted: a dump kept being interrupted by concurrent
	// changes (NLM_F_DUMP_INTR) and was given up after a few attempts.
	ErrDumpInterrupted = errors.New("dump interrupted by concurrent changes")
)

var sentinels = map[syscall.Errno]error{
	unix.ENOENT:    ErrNotFound,
	unix.ENODEV:    ErrNoDevice,
	unix.EPERM:     ErrPermission,
	unix.EBUSY:     ErrBusy,
	unix.EINVAL:    ErrInvalid,
	unix.ERANGE:    ErrInvalid,
	unix.ETIMEDOUT: ErrTimeout,
	unix.ENOSPC:    ErrLimit,
}

// An Error is a command the kernel refused.
type Error struct {
	Op      string        // what was attempted, such as "register client"
	Errno   syscall.Errno // the errno of the netlink ack
	Message string        // the kernel's extended ack message, if any
	// Attr is the request attribute the kernel pointed at, if any, as
	// its name in the UAPI header without the IB_SYNC_MEM_A_ prefix, with
	// its value: SIM_FAIL_ERRNO=0, DEV_NAME="rxe9".
	Attr string

	offset int // of that attribute in the request, from the ack
}

// Error returns "op: message (attribute)", with the kernel's message when
// it sent one and the errno's text otherwise. EPERM says which capability
// is missing.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Errno.Error()
	}
	if e.Attr != "" {
		msg += " (" + e.Attr + ")"
	}
	if e.Errno == unix.EPERM && !strings.Contains(msg, "CAP_NET_ADMIN") {
		msg += " (requires CAP_NET_ADMIN)"
	}
	if e.Op == "" {
		return msg
	}
	return e.Op + ": " + msg
}

// Unwrap returns the sentinel error of the errno (ErrNotFound, ...), if
// it has one, and the errno: errors.Is matches both (and, through the
// errno, the os.Err* values it stands for), and errors.As finds the
// syscall.Errno.
func (e *Error) Unwrap() []error {
	if s, ok := sentinels[e.Errno]; ok {
		return []error{s, e.Errno}
	}
	return []error{e.Errno}
}

// ErrnoName is the symbolic name of e ("EIO"), or "errno N" for a number
// without one. 95 is EOPNOTSUPP, the kernel's name, which the UAPI headers
// use (x/sys names it ENOTSUP, glibc's alias of the same number). The one
// definition syncmemctl, pkg/trace and pkg/syncdev print errnos with.
func ErrnoName(e syscall.Errno) string {
	if e == unix.EOPNOTSUPP {
		return "EOPNOTSUPP"
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}

// notLoadedError explains why the family could not be resolved.
type notLoadedError struct{ msg string }

func (e *notLoadedError) Error() string { return e.msg }
func (e *notLoadedError) Unwrap() error { return ErrNotLoaded }

// Where notLoaded looks; variables so that tests can point them elsewhere.
var (
	sysModulePath = "/sys/module/ib_sync_mem"
	selfNetnsPath = "/proc/self/ns/net"
	initNetnsPath = "/proc/1/ns/net"
)

// notLoaded builds the error for a family that does not resolve, telling
// an unloaded module from one loaded outside this network namespace.
func notLoaded() error {
	_, err := os.Stat(sysModulePath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &notLoadedError{ErrNotLoaded.Error()}
	case err != nil:
		return &notLoadedError{ErrNotLoaded.Error() + " (or this is not the initial network" +
			" namespace, the only one where its netlink family exists)"}
	}
	self, err1 := os.Readlink(selfNetnsPath)
	initNS, err2 := os.Readlink(initNetnsPath)
	switch {
	case err1 != nil || err2 != nil:
		return &notLoadedError{"module ib_sync_mem is not available here: its netlink" +
			" family exists only in the initial network namespace"}
	case self != initNS:
		return &notLoadedError{"module ib_sync_mem is not available in this network" +
			" namespace: its netlink family exists only in the initial one"}
	}
	return &notLoadedError{"module ib_sync_mem is loaded but has no netlink family " +
		FamilyName + " (a build without netlink support?)"}
}
