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

// Watch subscribes to the module's events on a netlink socket of its own,
// joined to the EventsGroup multicast group, so that watching neither
// delays nor is delayed by requests on c. When Watch returns without an
// error the subscription is in place: every later event is delivered.
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
// A receiver that falls behind loses events: once the socket's buffer is
// full the kernel drops them, and the watch ends with an error matching
// syscall.ENOBUFS. Only ctx ends a watch: closing c does not.
func (c *Conn) Watch(ctx context.Context) (<-chan Event, <-chan error, error) {
	const op = "watch events"
	if c.group == 0 {
		return nil, nil, fmt.Errorf("%s: family %s has no %q multicast group", op, FamilyName, EventsGroup)
	}
	ec, err := c.dialEvents(c.group)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: join multicast group %q: %w", op, EventsGroup, err)
	}
	events := make(chan Event)
	errc := make(chan error, 1)
	go c.watch(ctx, ec, events, errc)
	return events, errc, nil
}

// watch receives on ec until ctx is done or receiving fails.
func (c *Conn) watch(ctx context.Context, ec *genetlink.Conn, events chan<- Event, errc chan<- error) {
	const op = "watch events"
	defer close(errc)
	defer close(events)

	// Closing the socket is what interrupts a blocked Receive.
	var once sync.Once
	closeSocket := func() { once.Do(func() { _ = ec.Close() }) }
	defer closeSocket()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			closeSocket()
		case <-stop:
		}
	}()

	for {
		msgs, nmsgs, err := ec.Receive()
		if err != nil {
			switch {
			case ctx.Err() != nil:
			case errors.Is(err, unix.ENOBUFS):
				errc <- fmt.Errorf("%s: events lost, the receiver fell behind: %w", op, err)
			default:
				errc <- opError(op, err, nil)
			}
			return
		}
		for i, m := range msgs {
			if nmsgs[i].Header.Type != netlink.HeaderType(c.family.ID) {
				continue
			}
			ev, err := parseEvent(m)
			if err != nil {
				errc <- malformed(op, err)
				return
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}
}
