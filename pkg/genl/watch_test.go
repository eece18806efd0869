package genl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// eventSocket is a fake socket joined to the events group: each Receive
// returns the next batch sent on batches, or fails once ctx is done.
func eventSocket(ctx context.Context, batches <-chan []netlink.Message, fail error) *genetlink.Conn {
	return genetlink.NewConn(nltest.Dial(func(reqs []netlink.Message) ([]netlink.Message, error) {
		if len(reqs) != 0 {
			return nil, errors.New("request sent on the events socket")
		}
		select {
		case b, ok := <-batches:
			if !ok {
				return nil, fail
			}
			return b, nil
		case <-ctx.Done():
			return nil, errors.New("socket closed")
		}
	}))
}

func event(family uint16, cmd uint8, attrs ...attr) netlink.Message {
	b, err := (genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: FamilyVersion},
		Data:   marshal(attrs),
	}).MarshalBinary()
	if err != nil {
		panic(err)
	}
	return netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(family)}, Data: b}
}

func TestWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := make(chan []netlink.Message, 4)
	c, k := dialFake(t, nil)
	var joined uint32
	k.events = func(group uint32) (*genetlink.Conn, error) {
		joined = group
		return eventSocket(ctx, batches, nil), nil
	}
	events, errc, err := c.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if joined != 7 {
		t.Errorf("joined group %d, want 7 (%q)", joined, EventsGroup)
	}

	dev := []attr{u32(attrDevIndex, 1), str(attrDevName, "rxe0")}
	fid := testFamily.ID
	batches <- []netlink.Message{
		event(fid, cmdClientNew, append(dev, u32(attrClientID, 5), str(attrClientName, "b"),
			u32(attrClientKind, 1), u32(attrClientFlags, 1), u32(attrClientState, 1),
			u64(attrClientSize, 64), s32(attrClientLastErr, 0))...),
		event(fid+1, cmdClientNew, dev...), // another family: skipped
	}
	batches <- []netlink.Message{
		event(fid, cmdClientDel, append(dev, u32(attrClientID, 5), str(attrClientName, "b"))...),
		event(fid, cmdClientInvalidated, append(dev, u32(attrClientID, 6), str(attrClientName, "c"),
			u32(attrClientInvalReason, uint32(ReasonMemory)))...),
	}
	batches <- []netlink.Message{
		event(fid, cmdDevNew, u32(attrDevIndex, 2), str(attrDevName, "rxe1")),
		event(fid, cmdDevDel, u32(attrDevIndex, 2), str(attrDevName, "rxe1")),
		event(fid, cmdSyncFailed, append(dev, u32(attrClientID, 6), u32(attrSyncDir, 2),
			s32(attrSyncErr, -int32(unix.EIO)))...),
	}
	want := []Event{
		{Type: EventClientNew, DevIndex: 1, DevName: "rxe0", Client: &Client{ID: 5, Name: "b",
			DevIndex: 1, DevName: "rxe0", Kind: KindSim, Flags: FlagLazy, State: StateLive, Size: 64}},
		{Type: EventClientDel, DevIndex: 1, DevName: "rxe0",
			Client: &Client{ID: 5, Name: "b", DevIndex: 1, DevName: "rxe0"}},
		{Type: EventClientInvalidated, DevIndex: 1, DevName: "rxe0",
			Client: &Client{ID: 6, Name: "c", DevIndex: 1, DevName: "rxe0", InvalReason: ReasonMemory}},
		{Type: EventDevNew, DevIndex: 2, DevName: "rxe1"},
		{Type: EventDevDel, DevIndex: 2, DevName: "rxe1"},
		{Type: EventSyncFailed, DevIndex: 1, DevName: "rxe0", Dir: DirToCPU, Err: unix.EIO,
			Client: &Client{ID: 6, DevIndex: 1, DevName: "rxe0"}},
	}
	var got []Event
	for len(got) < len(want) {
		select {
		case ev := <-events:
			got = append(got, ev)
		case <-time.After(5 * time.Second):
			t.Fatalf("timed out after %d events", len(got))
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if s := got[5].Type.String(); s != "sync-failed" {
		t.Errorf("type %q", s)
	}

	cancel()
	for ev := range events {
		t.Errorf("event after cancel: %+v", ev)
	}
	if err := <-errc; err != nil {
		t.Errorf("error after cancel: %v", err)
	}
}

func TestWatchOverrun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := make(chan []netlink.Message)
	close(batches)
	c, k := dialFake(t, nil)
	k.events = func(uint32) (*genetlink.Conn, error) { return eventSocket(ctx, batches, unix.ENOBUFS), nil }
	events, errc, err := c.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range events {
		t.Error("event")
	}
	err = <-errc
	if !errors.Is(err, unix.ENOBUFS) || !strings.Contains(err.Error(), "events lost") {
		t.Errorf("error %v, want ENOBUFS, events lost", err)
	}
}

func TestWatchJoinFails(t *testing.T) {
	c, k := dialFake(t, nil)
	k.events = func(uint32) (*genetlink.Conn, error) { return nil, unix.EPERM }
	if _, _, err := c.Watch(context.Background()); !errors.Is(err, unix.EPERM) {
		t.Errorf("error %v, want EPERM", err)
	}
	c.group = 0
	if _, _, err := c.Watch(context.Background()); err == nil || !strings.Contains(err.Error(), "no \"events\" multicast group") {
		t.Errorf("error %v, want no events group", err)
	}
}
