package genl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink/nlenc"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// TestKernelErrors: an error ack becomes an *Error with the kernel's
// extended ack message, matching its sentinel, its errno and the os error
// the errno stands for.
func TestKernelErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		call     func(*Conn) error
		errno    syscall.Errno
		extack   string
		path     []uint16 // the attribute the ack points at
		nth      int
		sentinel error
		osErr    error
		wantMsg  string
	}{{
		name:     "register without CAP_NET_ADMIN",
		call:     func(c *Conn) error { _, err := c.Register(bg, RegisterRequest{Device: "rxe0", Name: "a"}); return err },
		errno:    unix.EPERM,
		sentinel: ErrPermission,
		osErr:    os.ErrPermission,
		wantMsg:  "register client a: operation not permitted (requires CAP_NET_ADMIN)",
	}, {
		name:     "EPERM with a message naming the capability",
		call:     func(c *Conn) error { return c.Unregister(bg, 3) },
		errno:    unix.EPERM,
		extack:   "CAP_NET_ADMIN needed",
		sentinel: ErrPermission,
		wantMsg:  "unregister client 3: CAP_NET_ADMIN needed",
	}, {
		name:     "unknown client",
		call:     func(c *Conn) error { _, err := c.Client(bg, 9); return err },
		errno:    unix.ENOENT,
		extack:   "no client with id 9",
		sentinel: ErrNotFound,
		osErr:    os.ErrNotExist,
		wantMsg:  "get client 9: no client with id 9",
	}, {
		name:     "unknown device in a dump filter",
		call:     func(c *Conn) error { _, err := c.Clients(bg, ClientFilter{Device: "rxe9"}); return err },
		errno:    unix.ENODEV,
		extack:   "no RDMA device rxe9",
		sentinel: ErrNoDevice,
		wantMsg:  "list clients of rxe9: no RDMA device rxe9",
	}, {
		name:     "driver's client",
		call:     func(c *Conn) error { return c.Unregister(bg, 4) },
		errno:    unix.EBUSY,
		extack:   "client 4 belongs to a kernel driver",
		sentinel: ErrBusy,
		wantMsg:  "unregister client 4: client 4 belongs to a kernel driver",
	}, {
		name:     "policy violation",
		call:     func(c *Conn) error { _, err := c.Sync(bg, SyncRequest{Device: "rxe0"}); return err },
		errno:    unix.EINVAL,
		extack:   "missing attribute: IB_SYNC_MEM_A_SYNC_DIR",
		sentinel: ErrInvalid,
		wantMsg:  "sync: missing attribute: IB_SYNC_MEM_A_SYNC_DIR",
	}, {
		name: "value out of range",
		call: func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Device: "rxe0", Timeout: new(time.Duration(0))})
			return err
		},
		errno:    unix.ERANGE,
		extack:   "integer out of range",
		sentinel: ErrInvalid,
		wantMsg:  "sync: integer out of range",
	}, {
		name: "nested value out of range",
		call: func(c *Conn) error {
			_, err := c.Register(bg, RegisterRequest{Device: "rxe0", Name: "a", Kind: KindSim,
				Sim: &SimConfig{Latency: new(time.Second), FailErrno: new(syscall.Errno(0))}})
			return err
		},
		errno:    unix.ERANGE,
		extack:   "integer out of range",
		path:     []uint16{attrSim, simFailErrno},
		sentinel: ErrInvalid,
		wantMsg:  "register client a: integer out of range (SIM_FAIL_ERRNO=0)",
	}, {
		name: "unknown id in a batch",
		call: func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Clients: []uint32{3, 99}, Dir: DirToCPU})
			return err
		},
		errno:    unix.ENOENT,
		extack:   "no such client",
		path:     []uint16{attrSyncClients, attrClientID},
		nth:      1,
		sentinel: ErrNotFound,
		wantMsg:  "sync: no such client (CLIENT_ID=99)",
	}, {
		name:     "unknown device, pointed at",
		call:     func(c *Conn) error { _, err := c.Stats(bg, StatsRequest{Device: "rxe9"}); return err },
		errno:    unix.ENODEV,
		extack:   "no such RDMA device",
		path:     []uint16{attrDevName},
		sentinel: ErrNoDevice,
		wantMsg:  `get stats: no such RDMA device (DEV_NAME="rxe9")`,
	}, {
		name:     "mark dirty without CAP_NET_ADMIN",
		call:     func(c *Conn) error { return c.MarkDirty(bg, 3, DirToDevice, nil) },
		errno:    unix.EPERM,
		sentinel: ErrPermission,
		osErr:    os.ErrPermission,
		wantMsg:  "mark client 3 dirty: operation not permitted (requires CAP_NET_ADMIN)",
	}, {
		name:     "mark dirty an unknown client",
		call:     func(c *Conn) error { return c.MarkDirty(bg, 9, DirToCPU, nil) },
		errno:    unix.ENOENT,
		extack:   "no such client",
		path:     []uint16{attrClientID},
		sentinel: ErrNotFound,
		osErr:    os.ErrNotExist,
		wantMsg:  "mark client 9 dirty: no such client (CLIENT_ID=9)",
	}, {
		name:     "mark dirty a client that is not lazy",
		call:     func(c *Conn) error { return c.MarkDirty(bg, 3, DirToDevice, &Range{Len: 64}) },
		errno:    unix.EINVAL,
		extack:   "client 3 is not lazy",
		sentinel: ErrInvalid,
		wantMsg:  "mark client 3 dirty: client 3 is not lazy",
	}, {
		name:     "mark dirty past the end of a client",
		call:     func(c *Conn) error { return c.MarkDirty(bg, 3, DirToDevice, &Range{Offset: 1 << 20, Len: 4096}) },
		errno:    unix.ERANGE,
		extack:   "range outside the client",
		path:     []uint16{attrSyncOffset},
		sentinel: ErrInvalid,
		wantMsg:  "mark client 3 dirty: range outside the client (SYNC_OFFSET=1048576)",
	}, {
		name:     "mark dirty an invalidated client",
		call:     func(c *Conn) error { return c.MarkDirty(bg, 3, DirToDevice, nil) },
		errno:    unix.ENXIO,
		extack:   "memory of client 3 is gone",
		sentinel: unix.ENXIO,
		wantMsg:  "mark client 3 dirty: memory of client 3 is gone",
	}, {
		name: "sync an unaligned range",
		call: func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Clients: []uint32{3}, Dir: DirToDevice, Range: &Range{Offset: 4, Len: 60}})
			return err
		},
		errno:    unix.EINVAL,
		extack:   "range not aligned to 64 bytes",
		path:     []uint16{attrSyncLen},
		sentinel: ErrInvalid,
		wantMsg:  "sync: range not aligned to 64 bytes (SYNC_LEN=60)",
	}, {
		name:     "timeout",
		call:     func(c *Conn) error { _, err := c.Sync(bg, SyncRequest{Device: "rxe0", Dir: DirToCPU}); return err },
		errno:    unix.ETIMEDOUT,
		sentinel: ErrTimeout,
		wantMsg:  "sync: connection timed out",
	}, {
		name:     "limit",
		call:     func(c *Conn) error { _, err := c.Register(bg, RegisterRequest{Device: "rxe0", Name: "a"}); return err },
		errno:    unix.ENOSPC,
		extack:   "max_clients_per_dev (4) reached",
		sentinel: ErrLimit,
		wantMsg:  "register client a: max_clients_per_dev (4) reached",
	}, {
		name:     "no sentinel",
		call:     func(c *Conn) error { _, err := c.Stats(bg, StatsRequest{Client: 1}); return err },
		errno:    unix.EOPNOTSUPP,
		extack:   "kind 7 is not available",
		sentinel: unix.EOPNOTSUPP,
		wantMsg:  "get stats: kind 7 is not available",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := dialFake(t, func(request) ([]msg, error) {
				return nil, &kernelError{tt.errno, tt.extack, tt.path, tt.nth}
			})
			err := tt.call(c)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if e.Errno != tt.errno || e.Message != tt.extack {
				t.Errorf("Errno %v Message %q, want %v %q", e.Errno, e.Message, tt.errno, tt.extack)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.sentinel)
			}
			if !errors.Is(err, tt.errno) {
				t.Errorf("errors.Is(%v, errno %d) = false", err, tt.errno)
			}
			if tt.osErr != nil && !errors.Is(err, tt.osErr) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.osErr)
			}
			if errors.Is(err, ErrNotLoaded) || errors.Is(err, unix.E2BIG) {
				t.Errorf("%v matches an unrelated error", err)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("message %q, want %q", err.Error(), tt.wantMsg)
			}
		})
	}
}

// TestRefusedLocally: requests that cannot be encoded fail with
// ErrInvalid before anything is sent.
func TestRefusedLocally(t *testing.T) {
	for _, tt := range []struct {
		name string
		call func(*Conn) error
		want string
	}{
		{"latency below a microsecond", func(c *Conn) error {
			_, err := c.Register(bg, RegisterRequest{Name: "a", Sim: &SimConfig{Latency: new(1500 * time.Nanosecond)}})
			return err
		}, "sim latency 1.5µs is not a whole number of 1µs"},
		{"negative latency", func(c *Conn) error {
			_, err := c.Register(bg, RegisterRequest{Name: "a", Sim: &SimConfig{Latency: new(-time.Second)}})
			return err
		}, "sim latency -1s is negative"},
		{"latency overflow", func(c *Conn) error {
			_, err := c.Register(bg, RegisterRequest{Name: "a", Sim: &SimConfig{Latency: new(5000 * time.Hour)}})
			return err
		}, "sim latency 5000h0m0s is too long"},
		{"fail errno overflow", func(c *Conn) error {
			_, err := c.Register(bg, RegisterRequest{Name: "a", Sim: &SimConfig{FailErrno: new(syscall.Errno(1 << 33))}})
			return err
		}, "out of range"},
		{"timeout below a millisecond", func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Device: "rxe0", Dir: DirToDevice, Timeout: new(1500 * time.Microsecond)})
			return err
		}, "sync timeout 1.5ms is not a whole number of 1ms"},
		{"a sync range of 0 bytes", func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Clients: []uint32{3}, Dir: DirToDevice, Range: &Range{}})
			return err
		}, "sync: invalid argument: range of 0 bytes at offset 0: a range needs a length of 1 byte or more"},
		{"a sync range with an offset alone", func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Clients: []uint32{3}, Dir: DirToDevice, Range: &Range{Offset: 4096}})
			return err
		}, "range of 0 bytes at offset 4096: a range needs a length"},
		{"a range of a device", func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Device: "rxe0", Dir: DirToDevice, Range: &Range{Len: 64}})
			return err
		}, "sync: invalid argument: a range is of one client: name exactly one, not a device or a batch"},
		{"a range of a batch", func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Clients: []uint32{3, 4}, Dir: DirToDevice, Range: &Range{Len: 64}})
			return err
		}, "a range is of one client"},
		{"a range of one client and a device", func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Device: "rxe0", Clients: []uint32{3}, Dir: DirToDevice, Range: &Range{Len: 64}})
			return err
		}, "a range is of one client"},
		{"a mark of 0 bytes", func(c *Conn) error {
			return c.MarkDirty(bg, 3, DirToDevice, &Range{})
		}, "mark client 3 dirty: invalid argument: range of 0 bytes at offset 0: a range needs a length of 1 byte or more"},
		{"a mark with an offset alone", func(c *Conn) error {
			return c.MarkDirty(bg, 3, DirToDevice, &Range{Offset: 64})
		}, "mark client 3 dirty: invalid argument: range of 0 bytes at offset 64"},
		{"a batch past the limit", func(c *Conn) error {
			_, err := c.Sync(bg, SyncRequest{Clients: make([]uint32, SyncBatchMax+1), Dir: DirToDevice})
			return err
		}, "a batch names at most 2048 clients, not 2049"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, k := dialFake(t, func(request) ([]msg, error) { return nil, nil })
			err := tt.call(c)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrInvalid containing %q", err, tt.want)
			}
			if len(k.reqs) != 0 {
				t.Errorf("%d requests sent", len(k.reqs))
			}
		})
	}
}

// TestNotLoaded: a family that does not resolve gives ErrNotLoaded, with a
// message that tells why.
func TestNotLoaded(t *testing.T) {
	dir := t.TempDir()
	mkNS := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	loaded := dir // exists
	missing := filepath.Join(dir, "missing")
	nsA := mkNS("a", "net:[4026531840]")
	nsA2 := mkNS("a2", "net:[4026531840]")
	nsB := mkNS("b", "net:[4026532290]")
	for _, tt := range []struct {
		name, module, self, init, want string
	}{
		{"module not loaded", missing, nsA, nsA, "module ib_sync_mem is not loaded"},
		{"other netns", loaded, nsB, nsA, "module ib_sync_mem is not available in this network namespace: " +
			"its netlink family exists only in the initial one"},
		{"netns unknown", loaded, nsA, missing, "module ib_sync_mem is not available here: " +
			"its netlink family exists only in the initial network namespace"},
		{"initial netns, no family", loaded, nsA, nsA2, "module ib_sync_mem is loaded but has no netlink " +
			"family ib_sync_mem (a build without netlink support?)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setPath(t, &sysModulePath, tt.module)
			setPath(t, &selfNetnsPath, tt.self)
			setPath(t, &initNetnsPath, tt.init)
			k := &fakeKernel{t: t, noFamily: true}
			_, err := newConn(genetlink.NewConn(nltest.Dial(k.receive)), nil)
			if !errors.Is(err, ErrNotLoaded) {
				t.Fatalf("error %v, want ErrNotLoaded", err)
			}
			if err.Error() != tt.want {
				t.Errorf("message %q, want %q", err.Error(), tt.want)
			}
		})
	}
}

func setPath(t *testing.T, p *string, v string) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

func TestErrorString(t *testing.T) {
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{Op: "sync", Errno: unix.ENXIO, Message: "memory of client 3 is gone"}, "sync: memory of client 3 is gone"},
		{Error{Op: "sync", Errno: unix.ENXIO}, "sync: no such device or address"},
		{Error{Errno: unix.EPERM}, "operation not permitted (requires CAP_NET_ADMIN)"},
		{Error{Op: "sync", Errno: unix.ERANGE, Message: "integer out of range", Attr: "SYNC_TIMEOUT_MS=0"},
			"sync: integer out of range (SYNC_TIMEOUT_MS=0)"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%#v: %q, want %q", tt.e, got, tt.want)
		}
	}
	if !errors.Is(&Error{Errno: unix.ENXIO}, unix.ENXIO) {
		t.Error("an errno without a sentinel does not unwrap to itself")
	}
}

// TestErrnoName: the kernel's names, EOPNOTSUPP for 95, a number for an
// errno without one.
func TestErrnoName(t *testing.T) {
	for e, want := range map[syscall.Errno]string{
		unix.EIO: "EIO", unix.ENOENT: "ENOENT", 95: "EOPNOTSUPP", 5000: "errno 5000", 0: "errno 0",
	} {
		if got := ErrnoName(e); got != want {
			t.Errorf("ErrnoName(%d) = %q, want %q", int(e), got, want)
		}
	}
}

func TestDescribeAttr(t *testing.T) {
	b := marshal([]attr{
		str(attrDevName, "rxe0"),                            // at 0, 12 bytes
		nest(attrSim, u32(simFailNext, 2), u64(simSize, 1)), // at 12: nest 4 + 8 + 12
		u32(77, 1), // at 36
		nest(attrSyncClients, u32(batchClientID, 1), u32(batchClientID, 2)), // at 44
	})
	for _, tt := range []struct {
		off  int
		want string
	}{
		{0, `DEV_NAME="rxe0"`}, {12, "SIM"}, {16, "SIM_FAIL_NEXT=2"}, {24, "SIM_SIZE=1"},
		{36, "attribute 77"}, {44, "SYNC_CLIENTS"}, {56, "CLIENT_ID=2"},
		{4, ""}, {20, ""}, {-30, ""}, {1000, ""},
	} {
		if got := describeAttr(b, attrsOffset+tt.off); got != tt.want {
			t.Errorf("offset %d: %q, want %q", tt.off, got, tt.want)
		}
	}
	if got := describeAttr([]byte{1, 2, 3}, attrsOffset); got != "" {
		t.Errorf("malformed: %q", got)
	}
}

// TestErrnoAs: a kernel error unwraps to its errno for errors.As, besides
// matching its sentinel and the os error with errors.Is.
func TestErrnoAs(t *testing.T) {
	c, _ := dialFake(t, func(request) ([]msg, error) {
		return nil, &kernelError{errno: unix.ENOENT, msg: "no such client"}
	})
	err := c.Unregister(bg, 9)
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != unix.ENOENT {
		t.Errorf("errors.As(%v, *syscall.Errno): %v %v, want ENOENT", err, errors.As(err, &errno), errno)
	}
	for _, target := range []error{ErrNotFound, unix.ENOENT, os.ErrNotExist} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) is false", err, target)
		}
	}
	if errors.Is(err, ErrNoDevice) || errors.Is(err, unix.ENODEV) {
		t.Errorf("%v matches ENODEV", err)
	}
}

// TestBatchLimit: a batch of SyncBatchMax ids encodes and its reply of as
// many results parses; past the limit, and far past it (where the nest
// would overflow its 16-bit length), the error says what the limit is.
func TestBatchLimit(t *testing.T) {
	ids := make([]uint32, SyncBatchMax)
	var results []attr
	for i := range ids {
		ids[i] = uint32(i + 1)
		results = append(results, nest(attrSyncResult, u32(attrClientID, ids[i]), s32(attrSyncErr, 0),
			u64(attrSyncNS, 1)))
	}
	// The kernel splits results over nests of at most 64 KiB.
	reply := []msg{{Attrs: []attr{u32(attrSyncRun, SyncBatchMax),
		nest(attrSyncResults, results[:1000]...), nest(attrSyncResults, results[1000:]...)}}}
	c, k := dialFake(t, func(request) ([]msg, error) { return reply, nil })
	res, err := c.Sync(bg, SyncRequest{Clients: ids, Dir: DirToDevice})
	if err != nil {
		t.Fatalf("a batch of %d: %v", SyncBatchMax, err)
	}
	if len(res.Results) != SyncBatchMax || res.Results[SyncBatchMax-1].ID != SyncBatchMax {
		t.Errorf("%d results", len(res.Results))
	}
	sent := k.reqs[0].Attrs[0]
	if sent.Type != attrSyncClients || len(sent.Nested) != SyncBatchMax {
		t.Errorf("sent %d ids in attribute %d", len(sent.Nested), sent.Type)
	}
	for _, n := range []int{SyncBatchMax + 1, 8192, 100000} {
		_, err := c.Sync(bg, SyncRequest{Clients: make([]uint32, n), Dir: DirToDevice})
		want := fmt.Sprintf("a batch names at most %d clients, not %d", SyncBatchMax, n)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("a batch of %d: %v, want ErrInvalid: %s", n, err, want)
		}
	}
	if len(k.reqs) != 1 {
		t.Errorf("%d requests sent, want 1", len(k.reqs))
	}
}

// TestResultsMalformed: the per-client results are read from the reply's
// bytes in place; a truncated attribute or a field of the wrong size in
// one of them fails the call, naming what was wrong, instead of yielding a
// result with zeroes.
func TestResultsMalformed(t *testing.T) {
	good := nest(attrSyncResult, u32(attrClientID, 3), s32(attrSyncErr, 0), u64(attrSyncNS, 1))
	for _, tc := range []struct {
		name string
		bad  attr
		want string
	}{
		{"a result of 3 bytes", attr{Type: attrSyncResult, Data: []byte{1, 2, 3}}, "not a header"},
		{"an attribute longer than its nest", attr{Type: attrSyncResult, Data: []byte{200, 0, 1, 0}}, "length 200 of 4 bytes"},
		{"SYNC_NS of 4 bytes", nest(attrSyncResult, u32(attrClientID, 4), u32(attrSyncNS, 1)), "result SYNC_NS: 4 bytes"},
		{"CLIENT_ID of 8 bytes", nest(attrSyncResult, u64(attrClientID, 4)), "result CLIENT_ID: 8 bytes"},
		{"SYNC_ERR of 2 bytes", nest(attrSyncResult, attr{Type: attrSyncErr, Data: []byte{1, 0}}), "result SYNC_ERR: 2 bytes"},
	} {
		reply := []msg{{Attrs: []attr{u32(attrSyncRun, 2), nest(attrSyncResults, good, tc.bad)}}}
		c, _ := dialFake(t, func(request) ([]msg, error) { return reply, nil })
		_, err := c.Sync(bg, SyncRequest{Clients: []uint32{3, 4}, Dir: DirToDevice})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestContext: a done context sends nothing; a deadline bounds a sync's
// waits in the kernel, which runs a request to completion once sent.
func TestContext(t *testing.T) {
	c, k := dialFake(t, func(request) ([]msg, error) { return []msg{{}}, nil })
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := c.Clients(ctx, ClientFilter{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Clients with a cancelled context: %v", err)
	}
	if _, err := c.Sync(ctx, SyncRequest{Device: "rxe0", Dir: DirToDevice}); !errors.Is(err, context.Canceled) {
		t.Errorf("Sync with a cancelled context: %v", err)
	}
	if len(k.reqs) != 0 {
		t.Fatalf("%d requests sent", len(k.reqs))
	}
	timeoutOf := func(r request) (uint32, bool) {
		for _, a := range r.Attrs {
			if a.Type == attrSyncTimeoutMS {
				return nlenc.Uint32(a.Data), true
			}
		}
		return 0, false
	}
	for _, tt := range []struct {
		name     string
		deadline time.Duration // 0: none
		timeout  *time.Duration
		lo, hi   uint32 // the timeout sent, ms; 0, 0: none
	}{
		{"no deadline, no timeout", 0, nil, 0, 0},
		{"a deadline", 2 * time.Second, nil, 1000, 2000},
		{"a deadline before the timeout", 2 * time.Second, new(time.Minute), 1000, 2000},
		{"a timeout before the deadline", time.Hour, new(3 * time.Second), 3000, 3000},
		{"a deadline past the kernel's limit", 20 * time.Minute, nil, 600000, 600000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := bg
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(bg, tt.deadline)
				defer cancel()
			}
			k.reqs = nil
			if _, err := c.Sync(ctx, SyncRequest{Device: "rxe0", Dir: DirToDevice, Timeout: tt.timeout}); err != nil {
				t.Fatal(err)
			}
			ms, ok := timeoutOf(k.reqs[0])
			if ok != (tt.hi != 0) || ms < tt.lo || ms > tt.hi {
				t.Errorf("timeout sent: %d ms (%v), want %d..%d", ms, ok, tt.lo, tt.hi)
			}
		})
	}
}
