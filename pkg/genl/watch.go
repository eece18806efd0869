package genl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// An eventConn is the socket Watch listens on (a *genetlink.Conn; tests
// fake it).
type eventConn interface {
	Receive() ([]genetlink.Message, []netlink.Message, error)
	JoinGroup(group uint32) error
	SetReadBuffer(bytes int) error
	Close() error
}

func dialEvents() (eventConn, error) { return genetlink.Dial(nil) }

// A WatchOption configures Watch.
type WatchOption func(*watchConfig)

type watchConfig struct {
	readBuffer int
}

// WithReadBuffer sets the receive buffer of the watch's socket to bytes
// (SO_RCVBUF; the kernel doubles it and caps it at net.core.rmem_max). A
// bigger buffer loses fewer events to a receiver that falls behind.
func WithReadBuffer(bytes int) WatchOption {
	return func(c *watchConfig) { c.readBuffer = bytes }
}

// Watch subscribes to the module's events on a netlink socket of its own,
// joined to the EventsGroup multicast group and to the generic netlink
// controller's "notify" group, so that watching neither delays nor is
// delayed by requests on c. When Watch returns without an error the
// subscription is in place: every later event is delivered.
//
// Events arrive on the first channel until ctx is done or receiving
// fails. Then that channel is closed, and the error channel yields the
// failure (nothing when ctx ended the watch) and is closed:
//
//	events, errc, err := c.Watch(ctx)
//	if err != nil { ... }
//	for ev := range events { ... }
//	if err := <-errc; err != nil { ... }
//
// The watch outlives the module: when ib_sync_mem is unloaded it reports
// EventFamilyDel, and when it is loaded again EventFamilyNew, joins the
// new family's events group and goes on. A receiver that falls behind
// loses events once the socket's buffer is full; the watch reports
// EventLost and goes on (WithReadBuffer makes the buffer bigger). Only ctx
// ends a watch: closing c does not.
func (c *Conn) Watch(ctx context.Context, opts ...WatchOption) (<-chan Event, <-chan error, error) {
	const op = "watch events"
	var cfg watchConfig
	for _, o := range opts {
		o(&cfg)
	}
	c.mu.Lock()
	family, group := c.family.ID, c.group
	notify, err := c.notifyGroup()
	c.mu.Unlock()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	if group == 0 {
		return nil, nil, fmt.Errorf("%s: family %s has no %q multicast group", op, FamilyName, EventsGroup)
	}
	ec, err := c.dialEvents()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	if cfg.readBuffer > 0 {
		if err := ec.SetReadBuffer(cfg.readBuffer); err != nil {
			_ = ec.Close()
			return nil, nil, fmt.Errorf("%s: set receive buffer: %w", op, err)
		}
	}
	// The controller first: a reload from now on is seen.
	for _, g := range []struct {
		id   uint32
		name string
	}{{notify, "nlctrl notify"}, {group, EventsGroup}} {
		if err := ec.JoinGroup(g.id); err != nil {
			_ = ec.Close()
			return nil, nil, fmt.Errorf("%s: join multicast group %q: %w", op, g.name, err)
		}
	}
	events := make(chan Event)
	errc := make(chan error, 1)
	w := &watcher{ec: ec, family: family, events: events, errc: errc}
	go w.run(ctx)
	return events, errc, nil
}

// notifyGroup is the id of the controller's "notify" group. c.mu is held.
func (c *Conn) notifyGroup() (uint32, error) {
	f, err := c.c.GetFamily(ctrlName)
	if err != nil {
		return 0, fmt.Errorf("resolve generic netlink family %s: %w", ctrlName, err)
	}
	for _, g := range f.Groups {
		if g.Name == ctrlNotifyGroup {
			return g.ID, nil
		}
	}
	return 0, fmt.Errorf("generic netlink family %s has no %q group", ctrlName, ctrlNotifyGroup)
}

// The generic netlink controller and its group of family notifications.
const (
	ctrlName        = "nlctrl"
	ctrlNotifyGroup = "notify"
)

// A watcher is the receiving side of a Watch.
type watcher struct {
	ec     eventConn
	family uint16 // the family's id; 0 while it is gone
	events chan<- Event
	errc   chan<- error
}

// run receives until ctx is done or receiving fails.
func (w *watcher) run(ctx context.Context) {
	const op = "watch events"
	defer close(w.errc)
	defer close(w.events)

	// Closing the socket is what interrupts a blocked Receive.
	var once sync.Once
	closeSocket := func() { once.Do(func() { _ = w.ec.Close() }) }
	defer closeSocket()
	stop := context.AfterFunc(ctx, closeSocket)
	defer stop()

	for {
		msgs, nmsgs, err := w.ec.Receive()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return
		case errors.Is(err, unix.ENOBUFS):
			// The kernel dropped events for a full buffer, and says so
			// once; the socket goes on.
			if !w.send(ctx, Event{Type: EventLost}) {
				return
			}
			continue
		default:
			w.errc <- opError(op, err, nil)
			return
		}
		for i, m := range msgs {
			ev, ok, err := w.event(m, nmsgs[i].Header.Type)
			if err != nil {
				w.errc <- fmt.Errorf("%s: %w", op, err)
				return
			}
			if ok && !w.send(ctx, ev) {
				return
			}
		}
	}
}

func (w *watcher) send(ctx context.Context, ev Event) bool {
	select {
	case w.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// event turns a message into the Event it reports, if it is one of ours:
// an event of the family, or the controller's news of the family.
func (w *watcher) event(m genetlink.Message, typ netlink.HeaderType) (Event, bool, error) {
	switch {
	case typ == unix.GENL_ID_CTRL:
		return w.familyEvent(m)
	case w.family != 0 && typ == netlink.HeaderType(w.family):
		ev, err := parseEvent(m)
		if err != nil {
			return ev, false, fmt.Errorf("%w: %w", errMalformed, err)
		}
		return ev, true, nil
	}
	return Event{}, false, nil
}

// familyEvent follows the family through the controller's notifications:
// gone, or back, when its new events group is joined.
func (w *watcher) familyEvent(m genetlink.Message) (Event, bool, error) {
	if m.Header.Command != unix.CTRL_CMD_NEWFAMILY && m.Header.Command != unix.CTRL_CMD_DELFAMILY {
		return Event{}, false, nil
	}
	f, err := parseFamily(m.Data)
	if err != nil {
		return Event{}, false, fmt.Errorf("controller notification: %w: %w", errMalformed, err)
	}
	if f.Name != FamilyName {
		return Event{}, false, nil
	}
	if m.Header.Command == unix.CTRL_CMD_DELFAMILY {
		w.family = 0
		return Event{Type: EventFamilyDel}, true, nil
	}
	for _, g := range f.Groups {
		if g.Name == EventsGroup {
			if err := w.ec.JoinGroup(g.ID); err != nil {
				return Event{}, false, fmt.Errorf("join multicast group %q of the reloaded family: %w",
					EventsGroup, err)
			}
		}
	}
	w.family = f.ID
	return Event{Type: EventFamilyNew}, true, nil
}

// parseFamily decodes the controller's description of a family: its id,
// name and multicast groups.
func parseFamily(b []byte) (genetlink.Family, error) {
	var f genetlink.Family
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return f, err
	}
	for ad.Next() {
		switch ad.Type() {
		case unix.CTRL_ATTR_FAMILY_ID:
			f.ID = ad.Uint16()
		case unix.CTRL_ATTR_FAMILY_NAME:
			f.Name = ad.String()
		case unix.CTRL_ATTR_MCAST_GROUPS:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					var g genetlink.MulticastGroup
					nad.Nested(func(gad *netlink.AttributeDecoder) error {
						for gad.Next() {
							switch gad.Type() {
							case unix.CTRL_ATTR_MCAST_GRP_NAME:
								g.Name = gad.String()
							case unix.CTRL_ATTR_MCAST_GRP_ID:
								g.ID = gad.Uint32()
							}
						}
						return nil
					})
					f.Groups = append(f.Groups, g)
				}
				return nil
			})
		}
	}
	return f, ad.Err()
}
