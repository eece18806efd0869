package genl

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/syncmem/syncmem/pkg/hist"
)

// Parsers of replies and events: one small function per attribute set.
// Attributes this package does not know (newer kernels, padding) are
// skipped.

// ErrnoOf converts a kernel result (a negative errno or 0; a positive
// errno is accepted too) to an Errno: the netlink family's and the
// data-path device's (pkg/syncdev) result fields.
func ErrnoOf(v int32) syscall.Errno {
	n := int64(v)
	if n < 0 {
		n = -n
	}
	return syscall.Errno(n)
}

func nanoseconds(v uint64) time.Duration { return time.Duration(v) }

func parseDevice(b []byte) (Device, error) {
	var d Device
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return d, err
	}
	for ad.Next() {
		switch ad.Type() {
		case attrDevIndex:
			d.Index = ad.Uint32()
		case attrDevName:
			d.Name = ad.String()
		case attrDevClients:
			d.Clients = ad.Uint32()
		case attrDevPasses:
			d.Passes = ad.Uint64()
		case attrStats:
			ad.Nested(parseCounters(&d.Stats))
		}
	}
	return d, ad.Err()
}

func parseClient(b []byte) (Client, error) {
	var c Client
	var info []byte
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return c, err
	}
	for ad.Next() {
		if ad.Type() == attrClientInfo {
			info = ad.Bytes()
			continue
		}
		parseClientAttr(ad, &c)
	}
	if err := ad.Err(); err != nil {
		return c, err
	}
	if info != nil {
		err = parseClientInfo(&c, info)
	}
	return c, err
}

// parseClientAttr decodes the current attribute of ad into c, if it is one
// of a client's (but the kind-specific IB_SYNC_MEM_A_CLIENT_INFO).
func parseClientAttr(ad *netlink.AttributeDecoder, c *Client) {
	switch ad.Type() {
	case attrClientID:
		c.ID = ad.Uint32()
	case attrClientName:
		c.Name = ad.String()
	case attrClientOwner:
		c.Owner = ad.String()
	case attrDevIndex:
		c.DevIndex = ad.Uint32()
	case attrDevName:
		c.DevName = ad.String()
	case attrClientKind:
		c.Kind = Kind(ad.Uint32())
	case attrClientFlags:
		c.Flags = ClientFlags(ad.Uint32())
	case attrClientState:
		c.State = State(ad.Uint32())
	case attrClientInvalReason:
		c.InvalReason = InvalReason(ad.Uint32())
	case attrClientOrigin:
		c.Origin = Origin(ad.Uint32())
	case attrClientSize:
		c.Size = ad.Uint64()
	case attrClientLastErr:
		c.LastErr = ErrnoOf(ad.Int32())
	case attrClientOwnerPortID:
		c.OwnerPortID = ad.Uint32()
	case attrClientOwnerPID:
		c.OwnerPID = ad.Uint32()
	case attrClientPinnedPages:
		c.PinnedPages = ad.Uint32()
	case attrStats:
		ad.Nested(parseCounters(&c.Stats))
	}
}

// parseClientInfo decodes IB_SYNC_MEM_A_CLIENT_INFO, whose attributes
// depend on the client's kind. The info of unknown kinds is skipped.
func parseClientInfo(c *Client, b []byte) error {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return err
	}
	switch c.Kind {
	case KindSim:
		c.Sim = new(SimInfo)
		err = parseSimInfo(c.Sim)(ad)
	case KindRegion:
		c.Region = new(RegionInfo)
		err = parseRegionInfo(c.Region)(ad)
	case KindDMABuf:
		c.DMABuf = new(DMABufInfo)
		err = parseDMABufInfo(c.DMABuf)(ad)
	}
	if err != nil {
		return err
	}
	return ad.Err()
}

func parseSimInfo(s *SimInfo) func(*netlink.AttributeDecoder) error {
	return func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case simLatencyUS:
				s.Latency = time.Duration(ad.Uint32()) * time.Microsecond
			case simFailNext:
				s.FailNext = ad.Uint32()
			case simFailErrno:
				s.FailErrno = syscall.Errno(ad.Uint32())
			case simSize:
				s.Size = ad.Uint64()
			case simBatch:
				s.Batch = ad.Flag()
			case simCallsToDevice:
				s.CallsToDevice = ad.Uint64()
			case simCallsToCPU:
				s.CallsToCPU = ad.Uint64()
			case simCallsBidirectional:
				s.CallsBidirectional = ad.Uint64()
			case simCallsInbound:
				s.CallsInbound = ad.Uint64()
			case simAddr:
				s.Addr = ad.Uint64()
			}
		}
		return nil
	}
}

func parseRegionInfo(r *RegionInfo) func(*netlink.AttributeDecoder) error {
	return func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case regionAddr:
				r.Addr = ad.Uint64()
			case regionLen:
				r.Len = ad.Uint64()
			case regionAccess:
				r.Access = RegionAccess(ad.Uint32())
			case regionSegments:
				r.Segments = ad.Uint32()
			}
		}
		return nil
	}
}

func parseDMABufInfo(d *DMABufInfo) func(*netlink.AttributeDecoder) error {
	return func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case dmabufSize:
				d.Size = ad.Uint64()
			case dmabufExporter:
				d.Exporter = ad.String()
			case dmabufInode:
				d.Inode = ad.Uint64()
			}
		}
		return nil
	}
}

func parseCounters(c *Counters) func(*netlink.AttributeDecoder) error {
	return func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case statsSyncs:
				c.Syncs = ad.Uint64()
			case statsErrors:
				c.Errors = ad.Uint64()
			case statsNS:
				c.Total = nanoseconds(ad.Uint64())
			case statsMaxNS:
				c.Max = nanoseconds(ad.Uint64())
			case statsBytes:
				c.Bytes = ad.Uint64()
			case statsClients:
				c.Clients = ad.Uint32()
			case statsHist:
				ad.Nested(parseHist(c))
			}
		}
		return nil
	}
}

func parseHist(c *Counters) func(*netlink.AttributeDecoder) error {
	return func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			if ad.Type() != histSlot {
				continue
			}
			var slot uint32
			var count uint64
			ad.Nested(parseHistSlot(&slot, &count))
			if ad.Err() != nil {
				return nil
			}
			if slot >= hist.Buckets {
				return fmt.Errorf("histogram slot %d out of range", slot)
			}
			c.Hist.Add(int(slot), count)
		}
		return nil
	}
}

func parseHistSlot(slot *uint32, count *uint64) func(*netlink.AttributeDecoder) error {
	return func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case histLog2:
				*slot = ad.Uint32()
			case histCount:
				*count = ad.Uint64()
			}
		}
		return nil
	}
}

func parseSyncResult(b []byte) (SyncResult, error) {
	var r SyncResult
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return r, err
	}
	for ad.Next() {
		switch ad.Type() {
		case attrSyncErr:
			r.Err = ErrnoOf(ad.Int32())
		case attrSyncRun:
			r.Run = ad.Uint32()
		case attrSyncErrors:
			r.Errors = ad.Uint32()
		case attrSyncSkipped:
			r.Skipped = ad.Uint32()
		case attrSyncNS:
			r.Duration = nanoseconds(ad.Uint64())
		case attrSyncResults:
			if r.Results == nil && r.Run > 0 {
				r.Results = make([]ClientResult, 0, r.Run)
			}
			if err := parseClientResults(ad.Bytes(), &r.Results); err != nil {
				return r, err
			}
		}
	}
	return r, ad.Err()
}

// The netlink attribute header: length and type, then the payload padded
// to 4 bytes.
const (
	nlaHeaderLen = 4
	nlaTypeMask  = 0x3fff // without NLA_F_NESTED and NLA_F_NET_BYTEORDER
)

// nextAttr splits the first attribute off b: its type, its payload, and the
// attributes after it.
func nextAttr(b []byte) (typ uint16, data, rest []byte, err error) {
	if len(b) < nlaHeaderLen {
		return 0, nil, nil, fmt.Errorf("netlink attribute: %d bytes, not a header", len(b))
	}
	l := int(binary.NativeEndian.Uint16(b[0:2]))
	if l < nlaHeaderLen || l > len(b) {
		return 0, nil, nil, fmt.Errorf("netlink attribute: length %d of %d bytes", l, len(b))
	}
	next := (l + 3) &^ 3
	if next > len(b) {
		next = len(b)
	}
	return binary.NativeEndian.Uint16(b[2:4]) & nlaTypeMask, b[nlaHeaderLen:l], b[next:], nil
}

// parseClientResults appends the results of one IB_SYNC_MEM_A_SYNC_RESULTS
// nest. A reply holds up to SyncBatchMax of them: they are read from the
// bytes in place, with no decoder or closure per result (5 allocations per
// result before, most of the Go side of a batch's round trip).
func parseClientResults(b []byte, rs *[]ClientResult) error {
	for len(b) > 0 {
		typ, data, rest, err := nextAttr(b)
		if err != nil {
			return err
		}
		b = rest
		if typ != attrSyncResult {
			continue
		}
		r, err := parseClientResult(data)
		if err != nil {
			return err
		}
		*rs = append(*rs, r)
	}
	return nil
}

func parseClientResult(b []byte) (ClientResult, error) {
	var r ClientResult
	for len(b) > 0 {
		typ, data, rest, err := nextAttr(b)
		if err != nil {
			return r, err
		}
		b = rest
		switch typ {
		case attrClientID:
			if len(data) != 4 {
				return r, fmt.Errorf("result CLIENT_ID: %d bytes", len(data))
			}
			r.ID = binary.NativeEndian.Uint32(data)
		case attrSyncErr:
			if len(data) != 4 {
				return r, fmt.Errorf("result SYNC_ERR: %d bytes", len(data))
			}
			r.Err = ErrnoOf(int32(binary.NativeEndian.Uint32(data)))
		case attrSyncNS:
			if len(data) != 8 {
				return r, fmt.Errorf("result SYNC_NS: %d bytes", len(data))
			}
			r.Duration = nanoseconds(binary.NativeEndian.Uint64(data))
		}
	}
	return r, nil
}

func parseStats(b []byte) (Stats, error) {
	var s Stats
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return s, err
	}
	for ad.Next() {
		switch ad.Type() {
		case attrClientID:
			s.ClientID = ad.Uint32()
		case attrDevIndex:
			s.DevIndex = ad.Uint32()
		case attrDevName:
			s.DevName = ad.String()
		case attrStats:
			ad.Nested(parseCounters(&s.Counters))
		}
	}
	return s, ad.Err()
}

// parseEvent decodes a multicast message. Client events carry the client's
// attributes; every event names its device.
func parseEvent(m genetlink.Message) (Event, error) {
	ev := Event{Type: EventType(m.Header.Command)}
	var c Client
	ad, err := netlink.NewAttributeDecoder(m.Data)
	if err != nil {
		return ev, err
	}
	for ad.Next() {
		switch ad.Type() {
		case attrSyncDir:
			ev.Dir = Direction(ad.Uint32())
		case attrSyncErr:
			ev.Err = ErrnoOf(ad.Int32())
		default:
			parseClientAttr(ad, &c)
		}
	}
	if err := ad.Err(); err != nil {
		return ev, err
	}
	ev.DevIndex, ev.DevName = c.DevIndex, c.DevName
	switch ev.Type {
	case EventDevNew, EventDevDel:
	default:
		ev.Client = &c
	}
	return ev, nil
}
