package genl

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nlenc"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// A fake ib_sync_mem family behind an nltest socket: the controller part is
// genltest.ServeFamily, the family's commands go to a handler. Unlike
// genltest.Dial, it can set netlink header flags on replies (multi-part
// dumps, NLM_F_DUMP_INTR) and answer with extended acks.

// bg is the context of the calls that need none in particular.
var bg = context.Background()

var testFamily = genetlink.Family{
	ID:      0x1d,
	Version: FamilyVersion,
	Name:    FamilyName,
	Groups:  []genetlink.MulticastGroup{{ID: 9, Name: "other"}, {ID: 7, Name: EventsGroup}},
}

// attr is a netlink attribute tree: nested attributes (sent with
// NLA_F_NESTED) have Nested set, the others Data.
type attr struct {
	Type   uint16
	Data   []byte
	Nested []attr
}

func u32(t uint16, v uint32) attr { return attr{Type: t, Data: nlenc.Uint32Bytes(v)} }
func u64(t uint16, v uint64) attr { return attr{Type: t, Data: nlenc.Uint64Bytes(v)} }
func s32(t uint16, v int32) attr  { return attr{Type: t, Data: nlenc.Int32Bytes(v)} }
func str(t uint16, s string) attr { return attr{Type: t, Data: nlenc.Bytes(s)} }
func flag(t uint16) attr          { return attr{Type: t, Data: []byte{}} }
func nest(t uint16, as ...attr) attr {
	if as == nil {
		as = []attr{}
	}
	return attr{Type: t, Nested: as}
}

func marshal(as []attr) []byte {
	na := make([]netlink.Attribute, 0, len(as))
	for _, a := range as {
		if a.Nested != nil {
			na = append(na, netlink.Attribute{Type: a.Type | netlink.Nested, Data: marshal(a.Nested)})
			continue
		}
		na = append(na, netlink.Attribute{Type: a.Type, Data: a.Data})
	}
	return nltest.MustMarshalAttributes(na)
}

// unmarshal decodes b into a tree, descending into NLA_F_NESTED ones.
func unmarshal(b []byte) ([]attr, error) {
	na, err := netlink.UnmarshalAttributes(b)
	if err != nil {
		return nil, err
	}
	as := []attr{}
	for _, a := range na {
		if a.Type&netlink.Nested == 0 {
			as = append(as, attr{Type: a.Type, Data: a.Data})
			continue
		}
		nested, err := unmarshal(a.Data)
		if err != nil {
			return nil, err
		}
		as = append(as, attr{Type: a.Type &^ netlink.Nested, Nested: nested})
	}
	return as, nil
}

// request is a request to the family as the fake kernel received it.
type request struct {
	Command uint8
	Flags   netlink.HeaderFlags
	Attrs   []attr
}

// msg is one reply message of the handler.
type msg struct {
	Command uint8
	Attrs   []attr
	Flags   netlink.HeaderFlags // added to the netlink header
}

// kernelError is an error ack, with an extended ack message if msg is set
// and the offset of the request attribute at path (nested types; of the
// last, occurrence nth) if path is set.
type kernelError struct {
	errno syscall.Errno
	msg   string
	path  []uint16
	nth   int
}

func (e *kernelError) Error() string { return fmt.Sprintf("errno %d: %s", e.errno, e.msg) }

// nlctrlFamily is the generic netlink controller as the kernel describes
// it: its "notify" group announces families coming and going.
var nlctrlFamily = genetlink.Family{
	ID: unix.GENL_ID_CTRL, Version: 2, Name: "nlctrl",
	Groups: []genetlink.MulticastGroup{{ID: unix.GENL_ID_CTRL, Name: "notify"}},
}

type fakeKernel struct {
	t        *testing.T
	family   genetlink.Family             // the family, as the controller describes it
	noFamily bool                         // the family is not registered
	handle   func(request) ([]msg, error) // the family's commands
	reqs     []request                    // what it received
	events   func() (eventConn, error)    // Watch's socket
	ctrlReqs int                          // family lookups it answered
}

// dialFake returns a Conn talking to a fake kernel that answers with handle.
func dialFake(t *testing.T, handle func(request) ([]msg, error)) (*Conn, *fakeKernel) {
	t.Helper()
	k := &fakeKernel{t: t, handle: handle, family: testFamily}
	c, err := newConn(genetlink.NewConn(nltest.Dial(k.receive)), func() (eventConn, error) {
		return k.events()
	})
	if err != nil {
		t.Fatalf("newConn: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, k
}

// serveCtrl answers a controller request: the families it knows by name.
func (k *fakeKernel) serveCtrl(greq genetlink.Message, nreq netlink.Message) ([]netlink.Message, error) {
	k.ctrlReqs++
	ad, err := netlink.NewAttributeDecoder(greq.Data)
	if err != nil {
		return nil, err
	}
	var name string
	for ad.Next() {
		if ad.Type() == unix.CTRL_ATTR_FAMILY_NAME {
			name = ad.String()
		}
	}
	var f genetlink.Family
	switch {
	case name == nlctrlFamily.Name:
		f = nlctrlFamily
	case name == k.family.Name && !k.noFamily:
		f = k.family
	default:
		return nltest.Error(int(unix.ENOENT), []netlink.Message{nreq})
	}
	gmsgs, err := genltest.ServeFamily(f, nil)(greq, nreq)
	if err != nil {
		return nil, err
	}
	return k.pack(nreq, gmsgs, nil), nil
}

// receive is the nltest.Func of the fake kernel.
func (k *fakeKernel) receive(nreqs []netlink.Message) ([]netlink.Message, error) {
	if len(nreqs) != 1 {
		return nil, fmt.Errorf("fake kernel: %d messages sent at once", len(nreqs))
	}
	nreq := nreqs[0]
	var greq genetlink.Message
	if err := greq.UnmarshalBinary(nreq.Data); err != nil {
		return nil, err
	}
	if nreq.Header.Type == unix.GENL_ID_CTRL {
		return k.serveCtrl(greq, nreq)
	}
	if nreq.Header.Type != netlink.HeaderType(k.family.ID) || k.noFamily {
		// The genetlink core's answer to an unknown family: no message.
		return []netlink.Message{errorAck(nreq, unix.ENOENT, "")}, nil
	}
	if greq.Header.Version != FamilyVersion {
		return nil, fmt.Errorf("fake kernel: request to family %d version %d",
			nreq.Header.Type, greq.Header.Version)
	}
	attrs, err := unmarshal(greq.Data)
	if err != nil {
		return nil, fmt.Errorf("fake kernel: request attributes: %v", err)
	}
	req := request{Command: greq.Header.Command, Flags: nreq.Header.Flags, Attrs: attrs}
	k.reqs = append(k.reqs, req)
	replies, err := k.handle(req)
	if kerr, ok := err.(*kernelError); ok {
		ack := errorAck(nreq, kerr.errno, kerr.msg)
		if kerr.path != nil {
			off := offsetOf(greq.Data, kerr.path, kerr.nth)
			if off < 0 {
				return nil, fmt.Errorf("fake kernel: no attribute %v in the request", kerr.path)
			}
			ack.Header.Flags |= netlink.AcknowledgeTLVs
			ack.Data = append(ack.Data, nltest.MustMarshalAttributes([]netlink.Attribute{{
				Type: unix.NLMSGERR_ATTR_OFFS, Data: nlenc.Uint32Bytes(uint32(16 + 4 + off)),
			}})...)
		}
		return []netlink.Message{ack}, nil
	} else if err != nil {
		return nil, err
	}
	var gmsgs []genetlink.Message
	var flags []netlink.HeaderFlags
	for _, r := range replies {
		gmsgs = append(gmsgs, genetlink.Message{
			Header: genetlink.Header{Command: r.Command, Version: FamilyVersion},
			Data:   marshal(r.Attrs),
		})
		flags = append(flags, r.Flags)
	}
	out := k.pack(nreq, gmsgs, flags)
	switch {
	case nreq.Header.Flags&netlink.Dump != 0:
		for i := range out {
			out[i].Header.Flags |= netlink.Multi
		}
		out = append(out, netlink.Message{Header: netlink.Header{
			Type: netlink.Done, Flags: netlink.Multi,
			Sequence: nreq.Header.Sequence, PID: nreq.Header.PID,
		}, Data: nlenc.Int32Bytes(0)})
	case len(out) == 0 && nreq.Header.Flags&netlink.Acknowledge != 0:
		out = append(out, errorAck(nreq, 0, ""))
	}
	return out, nil
}

// pack wraps generic netlink replies in netlink messages answering nreq.
func (k *fakeKernel) pack(nreq netlink.Message, gmsgs []genetlink.Message, flags []netlink.HeaderFlags) []netlink.Message {
	out := make([]netlink.Message, 0, len(gmsgs))
	for i, g := range gmsgs {
		b, err := g.MarshalBinary()
		if err != nil {
			k.t.Fatalf("fake kernel: %v", err)
		}
		m := netlink.Message{Header: netlink.Header{
			Type:     nreq.Header.Type,
			Sequence: nreq.Header.Sequence,
			PID:      nreq.Header.PID,
		}, Data: b}
		if flags != nil {
			m.Header.Flags = flags[i]
		}
		out = append(out, m)
	}
	return out
}

// errorAck is the kernel's NLMSG_ERROR for nreq: the errno, the request
// echoed, and an extended ack message if text is set.
func errorAck(nreq netlink.Message, errno syscall.Errno, text string) netlink.Message {
	echo, err := nreq.MarshalBinary()
	if err != nil {
		panic(err)
	}
	m := netlink.Message{Header: netlink.Header{
		Type: netlink.Error, Sequence: nreq.Header.Sequence, PID: nreq.Header.PID,
	}}
	m.Data = append(nlenc.Int32Bytes(-int32(errno)), echo...)
	if text != "" {
		m.Header.Flags |= netlink.AcknowledgeTLVs
		m.Data = append(m.Data, nltest.MustMarshalAttributes([]netlink.Attribute{{
			Type: unix.NLMSGERR_ATTR_MSG, Data: nlenc.Bytes(text),
		}})...)
	}
	return m
}

// offsetOf finds, in attributes b, the attribute at path (the last type's
// occurrence nth) and returns its offset in b, or -1.
func offsetOf(b []byte, path []uint16, nth int) int {
	pos := 0
	for len(b[pos:]) >= 4 {
		l := int(nlenc.Uint16(b[pos : pos+2]))
		typ := nlenc.Uint16(b[pos+2:pos+4]) &^ netlink.Nested
		if l < 4 || pos+l > len(b) {
			return -1
		}
		if typ == path[0] {
			if len(path) > 1 {
				if off := offsetOf(b[pos+4:pos+l], path[1:], nth); off >= 0 {
					return pos + 4 + off
				}
			} else if nth == 0 {
				return pos
			} else {
				nth--
			}
		}
		pos += (l + 3) &^ 3
	}
	return -1
}
