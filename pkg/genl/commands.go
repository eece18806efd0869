package genl

import (
	"context"
	"fmt"
	"time"

	"github.com/mdlayher/netlink"
)

// The commands of the family. Each takes a context: one that is done
// before the request is sent fails it at once (and a dump retried for
// consistency stops retrying). Once sent, the kernel runs a request to
// completion; for a sync, a deadline of ctx bounds its waits (Sync).

// Devices lists the RDMA devices the module is attached to, as they were
// at one moment (see Clients).
func (c *Conn) Devices(ctx context.Context) ([]Device, error) {
	const op = "list devices"
	msgs, err := c.dump(ctx, op, cmdDevGet, nil)
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
func (c *Conn) Device(ctx context.Context, name string) (*Device, error) {
	op := "get device " + name
	b, err := encodeDevice(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return doOne(ctx, c, op, cmdDevGet, b, parseDevice)
}

// Clients lists the clients f selects (every client for the zero filter)
// as they were at one moment: a dump that concurrent changes may have made
// inconsistent is run again, and if that keeps happening the error matches
// ErrDumpInterrupted. An unknown owner fails with ErrNotFound, an unknown
// device with ErrNoDevice.
func (c *Conn) Clients(ctx context.Context, f ClientFilter) ([]Client, error) {
	op := "list clients"
	if f.Device != "" {
		op += " of " + f.Device
	}
	if f.Owner != "" {
		op += " owned by " + f.Owner
	}
	b, err := encodeClientFilter(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.dump(ctx, op, cmdClientGet, b)
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
func (c *Conn) Client(ctx context.Context, id uint32) (*Client, error) {
	op := "get client " + itoa(id)
	b, err := encodeClientID(id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return c.clientReply(ctx, op, cmdClientGet, b)
}

// doOne runs a "do" command whose reply is one message, parsed by parse.
func doOne[T any](ctx context.Context, c *Conn, op string, cmd uint8, b []byte,
	parse func([]byte) (T, error)) (*T, error) {
	msgs, err := c.do(ctx, op, cmd, 0, b)
	if err != nil {
		return nil, err
	}
	data, err := one(op, msgs)
	if err != nil {
		return nil, err
	}
	v, err := parse(data)
	if err != nil {
		return nil, malformed(op, err)
	}
	return &v, nil
}

// clientReply runs a "do" command whose reply describes one client.
func (c *Conn) clientReply(ctx context.Context, op string, cmd uint8, b []byte) (*Client, error) {
	return doOne(ctx, c, op, cmd, b, parseClient)
}

// Register creates a client and returns it as the kernel describes it.
// It needs CAP_NET_ADMIN (ErrPermission otherwise).
//
// A client registered with FlagOwned lives only as long as this Conn: the
// kernel unregisters it when the Conn is closed or the process exits.
// Without FlagOwned, the client persists until Unregister, from any
// process, or until its device goes away. Either may be taken over by an
// open /dev/ib_sync_mem (syncdev.Device.Own): it then shows FlagFile, not
// FlagOwned, and dies with that file. syncdev.Device.Create registers a
// client owned by such a file from the start, with no netlink socket.
func (c *Conn) Register(ctx context.Context, r RegisterRequest) (*Client, error) {
	op := "register client"
	if r.Name != "" {
		op += " " + r.Name
	}
	b, err := r.Attributes()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return c.clientReply(ctx, op, cmdClientNew, b)
}

// Unregister deletes a client; when it returns, none of the client's
// callbacks runs any more. It needs CAP_NET_ADMIN. It fails with
// ErrNotFound for an unknown id, ErrBusy for a client of a kernel driver.
func (c *Conn) Unregister(ctx context.Context, id uint32) error {
	op := "unregister client " + itoa(id)
	b, err := encodeClientID(id)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = c.do(ctx, op, cmdClientDel, netlink.Acknowledge, b)
	return err
}

// Sync makes the selected clients' memory coherent for r.Dir and reports
// what ran (a lazy client that owes nothing in r.Dir is skipped, unless
// r.Range names the bytes to sync). It needs CAP_NET_ADMIN. It succeeds
// when the sync ran, even if clients failed: read SyncResult.Err and the
// per-client results. A deadline of ctx bounds the kernel's waits like
// r.Timeout does: the sooner of the two is sent.
func (c *Conn) Sync(ctx context.Context, r SyncRequest) (*SyncResult, error) {
	const op = "sync"
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	r.Timeout = deadlineTimeout(ctx, r.Timeout)
	b, err := encodeSync(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return doOne(ctx, c, op, cmdSync, b, parseSyncResult)
}

// MarkDirty tells the kernel that a lazy client's memory was written: its
// next sync in a direction covering dir runs (dir is what is now owed:
// DirToDevice when the CPU wrote, DirToCPU when the device wrote,
// DirInbound when the NIC wrote, DirBidirectional for the first two), and
// for a kind that syncs ranges, only over the bytes marked since. r is the
// bytes written; nil marks all of the client. It needs CAP_NET_ADMIN. It
// fails with ErrNotFound for an unknown id, ErrInvalid for a client that
// is not lazy or a bad range (matching ERANGE for one outside the client),
// ENXIO or ENODEV for an invalidated client.
func (c *Conn) MarkDirty(ctx context.Context, id uint32, dir Direction, r *Range) error {
	op := "mark client " + itoa(id) + " dirty"
	b, err := encodeMarkDirty(id, dir, r)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = c.do(ctx, op, cmdMarkDirty, netlink.Acknowledge, b)
	return err
}

// Stats reports the counters of a client, a device or the whole module,
// with the log2 histogram of sync callback times.
func (c *Conn) Stats(ctx context.Context, r StatsRequest) (*Stats, error) {
	const op = "get stats"
	b, err := encodeStats(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return doOne(ctx, c, op, cmdStatsGet, b, parseStats)
}

// deadlineTimeout is the sync timeout to send: the sooner of timeout and
// ctx's deadline, in whole milliseconds rounded up, within the kernel's
// 1 ms to 10 min; nil if neither is set.
func deadlineTimeout(ctx context.Context, timeout *time.Duration) *time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return timeout
	}
	left := time.Until(dl)
	if timeout != nil && *timeout <= left {
		return timeout
	}
	ms := min(max((left+time.Millisecond-1)/time.Millisecond, 1), SyncTimeoutMaxMS)
	return new(time.Duration(ms) * time.Millisecond)
}
