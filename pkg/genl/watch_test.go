package genl

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nlenc"
	"golang.org/x/sys/unix"
)

// fakeEvents is Watch's socket in tests: each Receive returns the next
// batch sent on batches (or fails with its err), or fails once closed.
type fakeEvents struct {
	batches chan batch
	closed  chan struct{}
	once    sync.Once

	mu      sync.Mutex
	joined  []uint32
	rcvbuf  int
	joinErr error
}

type batch struct {
	msgs []netlink.Message
	err  error
}

func newFakeEvents() *fakeEvents {
	return &fakeEvents{batches: make(chan batch, 8), closed: make(chan struct{})}
}

func (f *fakeEvents) Receive() ([]genetlink.Message, []netlink.Message, error) {
	select {
	case b := <-f.batches:
		if b.err != nil {
			return nil, nil, b.err
		}
		gmsgs := make([]genetlink.Message, len(b.msgs))
		for i, m := range b.msgs {
			if err := gmsgs[i].UnmarshalBinary(m.Data); err != nil {
				return nil, nil, err
			}
		}
		return gmsgs, b.msgs, nil
	case <-f.closed:
		return nil, nil, errors.New("use of closed socket")
	}
}

func (f *fakeEvents) JoinGroup(g uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.joinErr != nil {
		return f.joinErr
	}
	f.joined = append(f.joined, g)
	return nil
}

func (f *fakeEvents) SetReadBuffer(n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rcvbuf = n
	return nil
}

func (f *fakeEvents) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func (f *fakeEvents) groups() []uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.joined)
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

// familyEvent is the controller's notification of a family registered
// (CTRL_CMD_NEWFAMILY) or unregistered (CTRL_CMD_DELFAMILY), as the kernel
// builds it: id, name, version and the multicast groups.
func familyEvent(cmd uint8, f genetlink.Family) netlink.Message {
	var groups []attr
	for i, g := range f.Groups {
		groups = append(groups, nest(uint16(i+1),
			str(unix.CTRL_ATTR_MCAST_GRP_NAME, g.Name), u32(unix.CTRL_ATTR_MCAST_GRP_ID, g.ID)))
	}
	b, err := (genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: 2},
		Data: marshal([]attr{
			{Type: unix.CTRL_ATTR_FAMILY_ID, Data: nlenc.Uint16Bytes(f.ID)},
			str(unix.CTRL_ATTR_FAMILY_NAME, f.Name), u32(unix.CTRL_ATTR_VERSION, uint32(f.Version)),
			nest(unix.CTRL_ATTR_MCAST_GROUPS, groups...),
		}),
	}).MarshalBinary()
	if err != nil {
		panic(err)
	}
	return netlink.Message{Header: netlink.Header{Type: unix.GENL_ID_CTRL}, Data: b}
}

// watchFake starts a Watch on a fake kernel and returns its socket.
func watchFake(t *testing.T, ctx context.Context, opts ...WatchOption) (*fakeEvents, <-chan Event, <-chan error) {
	t.Helper()
	c, k := dialFake(t, nil)
	ev := newFakeEvents()
	k.events = func() (eventConn, error) { return ev, nil }
	events, errc, err := c.Watch(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ev, events, errc
}

// collect receives n events.
func collect(t *testing.T, events <-chan Event, n int) []Event {
	t.Helper()
	var got []Event
	for len(got) < n {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("events closed after %d of %d", len(got), n)
			}
			got = append(got, ev)
		case <-time.After(5 * time.Second):
			t.Fatalf("timed out after %d of %d events", len(got), n)
		}
	}
	return got
}

func TestWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev, events, errc := watchFake(t, ctx)
	if g := ev.groups(); !slices.Equal(g, []uint32{unix.GENL_ID_CTRL, 7}) {
		t.Errorf("joined groups %v, want nlctrl's notify (%d) then %q (7)", g, unix.GENL_ID_CTRL, EventsGroup)
	}

	dev := []attr{u32(attrDevIndex, 1), str(attrDevName, "rxe0")}
	fid := testFamily.ID
	ev.batches <- batch{msgs: []netlink.Message{
		event(fid, cmdClientNew, append(dev, u32(attrClientID, 5), str(attrClientName, "b"),
			u32(attrClientKind, 1), u32(attrClientFlags, 1), u32(attrClientState, 1),
			u64(attrClientSize, 64), s32(attrClientLastErr, 0))...),
		event(fid+1, cmdClientNew, dev...), // another family: skipped
	}}
	ev.batches <- batch{msgs: []netlink.Message{
		event(fid, cmdClientDel, append(dev, u32(attrClientID, 5), str(attrClientName, "b"))...),
		event(fid, cmdClientInvalidated, append(dev, u32(attrClientID, 6), str(attrClientName, "c"),
			u32(attrClientInvalReason, uint32(ReasonMemory)))...),
	}}
	ev.batches <- batch{msgs: []netlink.Message{
		event(fid, cmdDevNew, u32(attrDevIndex, 2), str(attrDevName, "rxe1")),
		event(fid, cmdDevDel, u32(attrDevIndex, 2), str(attrDevName, "rxe1")),
		event(fid, cmdSyncFailed, append(dev, u32(attrClientID, 6), u32(attrSyncDir, 2),
			s32(attrSyncErr, -int32(unix.EIO)))...),
		event(fid, cmdSyncFailed, append(dev, u32(attrClientID, 7), u32(attrSyncDir, 4),
			s32(attrSyncErr, -int32(unix.EOPNOTSUPP)))...),
	}}
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
		{Type: EventSyncFailed, DevIndex: 1, DevName: "rxe0", Dir: DirInbound, Err: unix.EOPNOTSUPP,
			Client: &Client{ID: 7, DevIndex: 1, DevName: "rxe0"}},
	}
	got := collect(t, events, len(want))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if s := got[5].Type.String(); s != "sync-failed" {
		t.Errorf("type %q", s)
	}
	if s := got[6].Dir.String(); s != "inbound" {
		t.Errorf("dir %q, want inbound", s)
	}

	cancel()
	for ev := range events {
		t.Errorf("event after cancel: %+v", ev)
	}
	if err := <-errc; err != nil {
		t.Errorf("error after cancel: %v", err)
	}
}

// TestWatchModuleReload: the family going away is reported, and when it
// comes back (with another id and group) the watch joins its new group
// and goes on; the controller's news of other families are skipped.
func TestWatchModuleReload(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev, events, _ := watchFake(t, ctx)
	dev := []attr{u32(attrDevIndex, 1), str(attrDevName, "rxe0")}
	reloaded := genetlink.Family{ID: 0x2a, Version: FamilyVersion, Name: FamilyName,
		Groups: []genetlink.MulticastGroup{{ID: 12, Name: EventsGroup}}}
	other := genetlink.Family{ID: 0x30, Name: "devlink", Groups: []genetlink.MulticastGroup{{ID: 13, Name: "config"}}}
	ev.batches <- batch{msgs: []netlink.Message{
		event(testFamily.ID, cmdDevNew, dev...),
		familyEvent(unix.CTRL_CMD_DELFAMILY, testFamily),
		familyEvent(unix.CTRL_CMD_NEWFAMILY, other),
	}}
	ev.batches <- batch{msgs: []netlink.Message{
		familyEvent(unix.CTRL_CMD_NEWFAMILY, reloaded),
		event(testFamily.ID, cmdDevDel, dev...), // the old id: not ours any more
		event(reloaded.ID, cmdDevNew, dev...),
	}}
	want := []Event{
		{Type: EventDevNew, DevIndex: 1, DevName: "rxe0"},
		{Type: EventFamilyDel},
		{Type: EventFamilyNew},
		{Type: EventDevNew, DevIndex: 1, DevName: "rxe0"},
	}
	if d := cmp.Diff(want, collect(t, events, len(want))); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if g := ev.groups(); !slices.Equal(g, []uint32{unix.GENL_ID_CTRL, 7, 12}) {
		t.Errorf("joined groups %v, want notify, 7, then the reloaded family's 12", g)
	}
	if s := EventFamilyDel.String(); s != "family-del" {
		t.Errorf("EventFamilyDel is %q", s)
	}
}

// TestWatchOverrun: events lost for a full socket buffer (ENOBUFS) are
// reported as an EventLost, and the watch goes on.
func TestWatchOverrun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev, events, errc := watchFake(t, ctx, WithReadBuffer(1<<20))
	dev := []attr{u32(attrDevIndex, 1), str(attrDevName, "rxe0")}
	ev.batches <- batch{err: &netlink.OpError{Op: "receive", Err: unix.ENOBUFS}}
	ev.batches <- batch{msgs: []netlink.Message{event(testFamily.ID, cmdDevNew, dev...)}}
	want := []Event{{Type: EventLost}, {Type: EventDevNew, DevIndex: 1, DevName: "rxe0"}}
	if d := cmp.Diff(want, collect(t, events, len(want))); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	ev.mu.Lock()
	rcvbuf := ev.rcvbuf
	ev.mu.Unlock()
	if rcvbuf != 1<<20 {
		t.Errorf("receive buffer %d, want %d", rcvbuf, 1<<20)
	}
	// Any other failure ends the watch.
	ev.batches <- batch{err: &netlink.OpError{Op: "receive", Err: unix.EBADF}}
	for range events {
	}
	if err := <-errc; !errors.Is(err, unix.EBADF) {
		t.Errorf("error %v, want EBADF", err)
	}
}

func TestWatchJoinFails(t *testing.T) {
	c, k := dialFake(t, nil)
	ev := newFakeEvents()
	ev.joinErr = unix.EPERM
	k.events = func() (eventConn, error) { return ev, nil }
	if _, _, err := c.Watch(context.Background()); !errors.Is(err, unix.EPERM) {
		t.Errorf("error %v, want EPERM", err)
	}
	c.group = 0
	ev.joinErr = nil
	if _, _, err := c.Watch(context.Background()); err == nil || !strings.Contains(err.Error(), "no \"events\" multicast group") {
		t.Errorf("error %v, want no events group", err)
	}
}

// TestReloadedFamily: a request to a family that went away fails with
// ErrNotLoaded, not as the unknown client the genetlink core's ENOENT
// would otherwise be read as; once the family is back under another id,
// requests reach it again.
func TestReloadedFamily(t *testing.T) {
	c, k := dialFake(t, func(request) ([]msg, error) { return []msg{{Attrs: simClientAttrs}}, nil })
	setPath(t, &sysModulePath, "/nonexistent")
	k.noFamily = true
	_, err := c.Client(bg, 7)
	if !errors.Is(err, ErrNotLoaded) || errors.Is(err, ErrNotFound) {
		t.Fatalf("error %v, want ErrNotLoaded and not ErrNotFound", err)
	}
	k.noFamily = false
	k.family.ID = 0x2a
	cl, err := c.Client(bg, 7)
	if err != nil {
		t.Fatalf("after the reload: %v", err)
	}
	if cl.ID != 7 {
		t.Errorf("client %d", cl.ID)
	}
	// A client the family does not know is still ErrNotFound, and the
	// family is not looked up again for it.
	k.handle = func(request) ([]msg, error) {
		return nil, &kernelError{errno: unix.ENOENT, msg: "no such client"}
	}
	before := k.ctrlReqs
	if _, err := c.Client(bg, 8); !errors.Is(err, ErrNotFound) {
		t.Errorf("error %v, want ErrNotFound", err)
	}
	if k.ctrlReqs != before {
		t.Errorf("%d family lookups for an unknown client", k.ctrlReqs-before)
	}
}
