package genl

import (
	"strconv"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nlenc"
)

// The kernel's extended ack points at the attribute it refused by its
// offset in the request. describeAttr turns that offset back into the
// attribute this package sent, so that a message like "integer out of
// range" says which value: "SIM_FAIL_ERRNO=0".

// attrKind is how an attribute's value is printed.
type attrKind int

const (
	kindU32 attrKind = iota
	kindS32
	kindU64
	kindString
	kindFlag
	kindNest
)

type attrInfo struct {
	name   string // without the IB_SYNC_MEM_A_ prefix
	kind   attrKind
	nested map[uint16]attrInfo // for kindNest
}

// requestAttrs are the attributes requests carry. TestUAPIHeader checks
// each name against the header's value.
var requestAttrs = map[uint16]attrInfo{
	attrDevIndex:      {"DEV_INDEX", kindU32, nil},
	attrDevName:       {"DEV_NAME", kindString, nil},
	attrClientID:      {"CLIENT_ID", kindU32, nil},
	attrClientName:    {"CLIENT_NAME", kindString, nil},
	attrClientKind:    {"CLIENT_KIND", kindU32, nil},
	attrClientFlags:   {"CLIENT_FLAGS", kindU32, nil},
	attrSyncDir:       {"SYNC_DIR", kindU32, nil},
	attrSyncTimeoutMS: {"SYNC_TIMEOUT_MS", kindU32, nil},
	attrSyncOffset:    {"SYNC_OFFSET", kindU64, nil},
	attrSyncLen:       {"SYNC_LEN", kindU64, nil},
	attrSyncClients: {"SYNC_CLIENTS", kindNest, map[uint16]attrInfo{
		batchClientID: {"CLIENT_ID", kindU32, nil},
	}},
	attrSim: {"SIM", kindNest, map[uint16]attrInfo{
		simLatencyUS: {"SIM_LATENCY_US", kindU32, nil},
		simFailNext:  {"SIM_FAIL_NEXT", kindU32, nil},
		simFailErrno: {"SIM_FAIL_ERRNO", kindU32, nil},
		simSize:      {"SIM_SIZE", kindU64, nil},
		simBatch:     {"SIM_BATCH", kindFlag, nil},
	}},
	attrRegion: {"REGION", kindNest, map[uint16]attrInfo{
		regionAddr:   {"REGION_ADDR", kindU64, nil},
		regionLen:    {"REGION_LEN", kindU64, nil},
		regionAccess: {"REGION_ACCESS", kindU32, nil},
	}},
	attrDMABuf: {"DMABUF", kindNest, map[uint16]attrInfo{
		dmabufFD: {"DMABUF_FD", kindS32, nil},
	}},
}

// Where the attributes start in a request, as the ack's offset counts:
// from the netlink header, past it and the generic netlink header.
const attrsOffset = 16 + 4

// describeAttr names the attribute of a request whose attributes are b
// that starts at offset off of the netlink message, with its value. It
// returns "" if no attribute starts there.
func describeAttr(b []byte, off int) string {
	return findAttr(b, off-attrsOffset, requestAttrs)
}

func findAttr(b []byte, off int, infos map[uint16]attrInfo) string {
	attrs, err := netlink.UnmarshalAttributes(b)
	if err != nil || off < 0 {
		return ""
	}
	pos := 0
	for _, a := range attrs {
		const hdr = 4
		typ := a.Type &^ (netlink.Nested | netlink.NetByteOrder)
		info, known := infos[typ]
		if !known {
			info = attrInfo{name: "attribute " + strconv.Itoa(int(typ)), kind: kindFlag}
		}
		end := pos + int(a.Length)
		switch {
		case off == pos:
			return info.name + value(info.kind, a.Data)
		case off >= pos+hdr && off < end && info.kind == kindNest:
			return findAttr(a.Data, off-pos-hdr, info.nested)
		}
		pos += (int(a.Length) + 3) &^ 3
	}
	return ""
}

// value prints an attribute's value as "=value", or "" if it has none.
func value(k attrKind, b []byte) string {
	switch {
	case k == kindU32 && len(b) == 4:
		return "=" + strconv.FormatUint(uint64(nlenc.Uint32(b)), 10)
	case k == kindS32 && len(b) == 4:
		return "=" + strconv.FormatInt(int64(nlenc.Int32(b)), 10)
	case k == kindU64 && len(b) == 8:
		return "=" + strconv.FormatUint(nlenc.Uint64(b), 10)
	case k == kindString:
		return "=" + strconv.Quote(nlenc.String(b))
	}
	return ""
}
