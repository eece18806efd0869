package genl

import (
	"context"
	"errors"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

// Dumps and their consistency. The kernel walks its clients or devices in
// rounds, one per datagram, while they may come and go. Every message of a
// dump carries the registry's generation when its round began, and the end
// message this package asks for (attrDumpEnd) the generation once the walk
// was done: the dump shows a state the registry was in when they are all
// equal. NLM_F_DUMP_INTR alone is not enough: for a dump that fits one
// datagram only NLMSG_DONE can carry it, and the netlink library drops
// that message.

// dumpAttempts is how many times a dump that concurrent changes made
// inconsistent is run before giving up with ErrDumpInterrupted.
const dumpAttempts = 5

// dumpEndAttr is the request attribute that asks for the end message.
var dumpEndAttr = func() []byte {
	b, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: attrDumpEnd}})
	if err != nil {
		panic(err)
	}
	return b
}()

// dump runs a dump until it is consistent and returns its messages, the
// end message left out.
func (c *Conn) dump(ctx context.Context, op string, cmd uint8, attrs []byte) ([]genetlink.Message, error) {
	attrs = append(append([]byte{}, attrs...), dumpEndAttr...)
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		msgs, v, err := c.dumpOnce(op, cmd, attrs)
		if err != nil || v.consistent() {
			return msgs, err
		}
		if attempt == dumpAttempts {
			return nil, fmt.Errorf("%s: %w (%d attempts)", op, ErrDumpInterrupted, attempt)
		}
	}
}

// dumpVerdict says what made a dump inconsistent, if anything.
type dumpVerdict struct {
	intr     bool // a message carries NLM_F_DUMP_INTR
	mismatch bool // a message's generation is not the end's
}

func (v dumpVerdict) consistent() bool { return !v.intr && !v.mismatch }

// dumpOnce runs a dump once and says whether it shows one state of the
// registry. A module that sends no end message (an older one) is trusted
// unless a message carries NLM_F_DUMP_INTR.
func (c *Conn) dumpOnce(op string, cmd uint8, attrs []byte) ([]genetlink.Message, dumpVerdict, error) {
	var v dumpVerdict
	msgs, nmsgs, err := c.execute(op, cmd, netlink.Request|netlink.Dump, attrs)
	if err != nil {
		return nil, v, err
	}
	for _, m := range nmsgs {
		if m.Header.Flags&netlink.DumpInterrupted != 0 {
			v.intr = true
		}
	}
	gens := make([]uint32, 0, len(msgs))
	for i, m := range msgs {
		g, err := parseDumpGen(m.Data)
		if err != nil {
			return nil, v, malformed(op, err)
		}
		if !g.end {
			if g.hasGen {
				gens = append(gens, g.gen)
			}
			continue
		}
		if i != len(msgs)-1 {
			return nil, v, malformed(op, errors.New("dump end message before the last message"))
		}
		for _, gen := range append(gens, g.gen) {
			if gen != g.endGen {
				v.mismatch = true
			}
		}
		msgs = msgs[:i]
	}
	return msgs, v, nil
}

// dumpGen is what a dump message says of the dump's consistency.
type dumpGen struct {
	hasGen bool
	gen    uint32 // the generation its round began at
	end    bool   // the end message
	endGen uint32 // in the end message: the generation at the end
}

func parseDumpGen(b []byte) (dumpGen, error) {
	var g dumpGen
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return g, err
	}
	for ad.Next() {
		switch ad.Type() {
		case attrGeneration:
			g.gen, g.hasGen = ad.Uint32(), true
		case attrDumpEnd:
			g.end = true
		case attrEndGeneration:
			g.endGen = ad.Uint32()
		}
	}
	return g, ad.Err()
}
