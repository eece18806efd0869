package genl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// A Conn is a connection to the ib_sync_mem generic netlink family. Its
// methods are safe for concurrent use; requests are serialized.
type Conn struct {
	mu     sync.Mutex
	c      *genetlink.Conn
	family genetlink.Family
	group  uint32 // the events multicast group, 0 if the family has none

	// dialEvents opens the socket Watch listens on.
	dialEvents func() (eventConn, error)
}

// Dial opens a generic netlink socket and resolves the ib_sync_mem family.
// If the family does not exist, the error matches ErrNotLoaded and tells
// an unloaded module from a caller outside the initial network namespace,
// the only one where the family exists.
func Dial() (*Conn, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("open generic netlink socket: %w", err)
	}
	// Extended acks carry the kernel's error messages. Kernels without
	// them report the errno alone, so a failure here is not fatal.
	_ = c.SetOption(netlink.ExtendedAcknowledge, true)
	conn, err := newConn(c, dialEvents)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return conn, nil
}

// newConn resolves the family over c.
func newConn(c *genetlink.Conn, events func() (eventConn, error)) (*Conn, error) {
	conn := &Conn{c: c, dialEvents: events}
	if err := conn.resolve(); err != nil {
		return nil, err
	}
	return conn, nil
}

// resolve looks the family up and takes its id and events group. c.mu is
// held, or c is not shared yet.
func (c *Conn) resolve() error {
	f, err := c.c.GetFamily(FamilyName)
	if errors.Is(err, unix.ENOENT) {
		return notLoaded()
	}
	if err != nil {
		return fmt.Errorf("resolve generic netlink family %s: %w", FamilyName, err)
	}
	c.family, c.group = f, 0
	for _, g := range f.Groups {
		if g.Name == EventsGroup {
			c.group = g.ID
		}
	}
	return nil
}

// Close closes the socket. Clients registered on it with FlagOwned are
// unregistered by the kernel, except those an open /dev/ib_sync_mem has
// taken over since (FlagFile, syncdev.Device.Own).
func (c *Conn) Close() error { return c.c.Close() }

// execute sends one request and returns its replies, with their netlink
// headers. Errors in the netlink ack become an *Error carrying the kernel's
// extended ack message.
//
// A module reloaded since the family was resolved has another family id;
// the genetlink core answers the old one with a bare ENOENT. Then the family
// is looked up again: gone, the error matches ErrNotLoaded; back, the
// request goes to it (it never reached the module before).
func (c *Conn) execute(op string, cmd uint8, flags netlink.HeaderFlags, attrs []byte) ([]genetlink.Message, []netlink.Message, error) {
	msg := genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: FamilyVersion},
		Data:   attrs,
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for attempt := 1; ; attempt++ {
		msgs, nmsgs, err := c.send(msg, flags)
		if err == nil {
			return msgs, nmsgs, nil
		}
		var kerr *Error
		if attempt > 1 || !errors.As(err, &kerr) || kerr.Errno != unix.ENOENT || kerr.Message != "" {
			return nil, nil, opError(op, err, attrs)
		}
		id := c.family.ID
		if rerr := c.resolve(); rerr != nil {
			return nil, nil, fmt.Errorf("%s: %w", op, rerr)
		}
		if c.family.ID == id {
			return nil, nil, opError(op, err, attrs)
		}
	}
}

// send sends msg to the family and receives the replies. c.mu is held.
func (c *Conn) send(msg genetlink.Message, flags netlink.HeaderFlags) ([]genetlink.Message, []netlink.Message, error) {
	req, err := c.c.Send(msg, c.family.ID, flags)
	if err != nil {
		return nil, nil, err
	}
	msgs, nmsgs, err := c.c.Receive()
	if err != nil {
		return nil, nil, ackError(err)
	}
	if err := netlink.Validate(req, nmsgs); err != nil {
		return nil, nil, err
	}
	return msgs, nmsgs, nil
}

// do runs a "do" request, unless ctx is done.
func (c *Conn) do(ctx context.Context, op string, cmd uint8, flags netlink.HeaderFlags, attrs []byte) ([]genetlink.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, _, err := c.execute(op, cmd, flags|netlink.Request, attrs)
	return msgs, err
}

// ackError turns an errno of the kernel's ack (a bare Errno in a
// *netlink.OpError, not a system call's) into an *Error, with the kernel's
// extended ack message and the offset of the attribute it points at.
func ackError(err error) error {
	var oerr *netlink.OpError
	if errors.As(err, &oerr) {
		if errno, ok := oerr.Err.(syscall.Errno); ok {
			return &Error{Errno: errno, Message: oerr.Message, offset: oerr.Offset}
		}
	}
	return err
}

// opError names what failed: an *Error gets op and the request attribute
// (of attrs) its ack points at, anything else is wrapped.
func opError(op string, err error, attrs []byte) error {
	var kerr *Error
	if errors.As(err, &kerr) {
		e := *kerr
		e.Op = op
		if e.offset > 0 {
			e.Attr = describeAttr(attrs, e.offset)
		}
		return &e
	}
	return fmt.Errorf("%s: %w", op, err)
}

// one returns the single reply of a "do" request.
func one(op string, msgs []genetlink.Message) ([]byte, error) {
	if len(msgs) != 1 {
		return nil, fmt.Errorf("%s: %d replies, want 1", op, len(msgs))
	}
	return msgs[0].Data, nil
}

// errMalformed is a reply this package cannot make sense of.
var errMalformed = errors.New("malformed reply")

func malformed(op string, err error) error {
	return fmt.Errorf("%s: %w: %w", op, errMalformed, err)
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
