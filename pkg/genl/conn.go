package genl

import (
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

	// dialEvents opens the socket Watch listens on, joined to group.
	dialEvents func(group uint32) (*genetlink.Conn, error)
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
func newConn(c *genetlink.Conn, events func(uint32) (*genetlink.Conn, error)) (*Conn, error) {
	f, err := c.GetFamily(FamilyName)
	if errors.Is(err, unix.ENOENT) {
		return nil, notLoaded()
	}
	if err != nil {
		return nil, fmt.Errorf("resolve generic netlink family %s: %w", FamilyName, err)
	}
	conn := &Conn{c: c, family: f, dialEvents: events}
	for _, g := range f.Groups {
		if g.Name == EventsGroup {
			conn.group = g.ID
		}
	}
	return conn, nil
}

func dialEvents(group uint32) (*genetlink.Conn, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, err
	}
	if err := c.JoinGroup(group); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the socket. Clients registered on it with FlagOwned are
// unregistered by the kernel.
func (c *Conn) Close() error { return c.c.Close() }

// execute sends one request and returns its replies, with their netlink
// headers. Errors in the netlink ack become an *Error carrying the kernel's
// extended ack message.
func (c *Conn) execute(op string, cmd uint8, flags netlink.HeaderFlags, attrs []byte) ([]genetlink.Message, []netlink.Message, error) {
	msg := genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: FamilyVersion},
		Data:   attrs,
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	req, err := c.c.Send(msg, c.family.ID, flags)
	if err != nil {
		return nil, nil, opError(op, err, attrs)
	}
	msgs, nmsgs, err := c.c.Receive()
	if err != nil {
		return nil, nil, opError(op, err, attrs)
	}
	if err := netlink.Validate(req, nmsgs); err != nil {
		return nil, nil, opError(op, err, attrs)
	}
	return msgs, nmsgs, nil
}

// do runs a "do" request.
func (c *Conn) do(op string, cmd uint8, flags netlink.HeaderFlags, attrs []byte) ([]genetlink.Message, error) {
	msgs, _, err := c.execute(op, cmd, flags|netlink.Request, attrs)
	return msgs, err
}

// opError maps an error of the netlink layer. An errno from the kernel's
// ack (a bare Errno, not a system call's) becomes an *Error, naming the
// attribute of the request (attrs) the ack points at.
func opError(op string, err error, attrs []byte) error {
	var oerr *netlink.OpError
	if errors.As(err, &oerr) {
		if errno, ok := oerr.Err.(syscall.Errno); ok {
			e := &Error{Op: op, Errno: errno, Message: oerr.Message}
			if oerr.Offset > 0 {
				e.Attr = describeAttr(attrs, oerr.Offset)
			}
			return e
		}
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

// Devices lists the RDMA devices the module is attached to, as they were
// at one moment (see Clients).
func (c *Conn) Devices() ([]Device, error) {
	const op = "list devices"
	msgs, err := c.dump(op, cmdDevGet, nil)
	if err != nil {
		return nil, err
	}
	devs := make([]Device, 0, len(msgs))
	for _, m := range msgs {
		d, err := parseDevice(m.Data)
		if err != nil {
			return nil, malformed(op, err)
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// Device describes one RDMA device. An unknown name fails with ErrNoDevice.
func (c *Conn) Device(name string) (*Device, error) {
	op := "get device " + name
	b, err := encodeDevice(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.do(op, cmdDevGet, 0, b)
	if err != nil {
		return nil, err
	}
	data, err := one(op, msgs)
	if err != nil {
		return nil, err
	}
	d, err := parseDevice(data)
	if err != nil {
		return nil, malformed(op, err)
	}
	return &d, nil
}

// Clients lists the clients of device dev, or of every device if dev is
// "", as they were at one moment: a dump that concurrent changes may have
// made inconsistent is run again, and if that keeps happening the error
// matches ErrDumpInterrupted.
func (c *Conn) Clients(dev string) ([]Client, error) {
	op := "list clients"
	if dev != "" {
		op += " of " + dev
	}
	b, err := encodeClientFilter(dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.dump(op, cmdClientGet, b)
	if err != nil {
		return nil, err
	}
	cs := make([]Client, 0, len(msgs))
	for _, m := range msgs {
		cl, err := parseClient(m.Data)
		if err != nil {
			return nil, malformed(op, err)
		}
		cs = append(cs, cl)
	}
	return cs, nil
}

// Client describes one client. An unknown id fails with ErrNotFound.
func (c *Conn) Client(id uint32) (*Client, error) {
	op := "get client " + itoa(id)
	b, err := encodeClientID(id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return c.clientReply(op, cmdClientGet, b)
}

// clientReply runs a "do" command whose reply describes one client.
func (c *Conn) clientReply(op string, cmd uint8, b []byte) (*Client, error) {
	msgs, err := c.do(op, cmd, 0, b)
	if err != nil {
		return nil, err
	}
	data, err := one(op, msgs)
	if err != nil {
		return nil, err
	}
	cl, err := parseClient(data)
	if err != nil {
		return nil, malformed(op, err)
	}
	return &cl, nil
}

// Register creates a client and returns it as the kernel describes it.
// It needs CAP_NET_ADMIN (ErrPermission otherwise).
//
// A client registered with FlagOwned lives only as long as this Conn: the
// kernel unregisters it when the Conn is closed or the process exits.
// Without it, the client persists until Unregister, from any process, or
// until its device goes away.
func (c *Conn) Register(r RegisterRequest) (*Client, error) {
	op := "register client"
	if r.Name != "" {
		op += " " + r.Name
	}
	b, err := encodeRegister(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return c.clientReply(op, cmdClientNew, b)
}

// Unregister deletes a client; when it returns, none of the client's
// callbacks runs any more. It needs CAP_NET_ADMIN. It fails with
// ErrNotFound for an unknown id, ErrBusy for a client of a kernel driver.
func (c *Conn) Unregister(id uint32) error {
	op := "unregister client " + itoa(id)
	b, err := encodeClientID(id)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = c.do(op, cmdClientDel, netlink.Acknowledge, b)
	return err
}

// Sync makes the selected clients' memory coherent for r.Dir and reports
// what ran. It needs CAP_NET_ADMIN. It succeeds when the sync ran, even if
// clients failed: read SyncResult.Err and the per-client results.
func (c *Conn) Sync(r SyncRequest) (*SyncResult, error) {
	const op = "sync"
	b, err := encodeSync(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.do(op, cmdSync, 0, b)
	if err != nil {
		return nil, err
	}
	data, err := one(op, msgs)
	if err != nil {
		return nil, err
	}
	res, err := parseSyncResult(data)
	if err != nil {
		return nil, malformed(op, err)
	}
	return &res, nil
}

// Stats reports the counters of a client, a device or the whole module,
// with the log2 histogram of sync callback times.
func (c *Conn) Stats(r StatsRequest) (*Stats, error) {
	const op = "get stats"
	b, err := encodeStats(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.do(op, cmdStatsGet, 0, b)
	if err != nil {
		return nil, err
	}
	data, err := one(op, msgs)
	if err != nil {
		return nil, err
	}
	s, err := parseStats(data)
	if err != nil {
		return nil, malformed(op, err)
	}
	return &s, nil
}
