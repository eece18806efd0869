package genl

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/syncmem/syncmem/pkg/hist"
)

// A Device is an RDMA device the module is attached to.
type Device struct {
	Index   uint32   // RDMA device index
	Name    string   // RDMA device name, such as "rxe0"
	Clients uint32   // clients registered on it
	Passes  uint64   // device-wide sync passes run
	Stats   Counters // counters of all its clients, without a histogram
}

// A Client is a registered memory sync client.
type Client struct {
	ID   uint32
	Name string
	// Owner is the in-kernel owner the client is registered under: a
	// driver's, or that of the kind that made it ("region", "dma-buf",
	// "sim"). Not the netlink socket that created it (OwnerPortID).
	Owner       string
	DevIndex    uint32
	DevName     string
	Kind        Kind
	Flags       ClientFlags
	State       State
	InvalReason InvalReason   // zero unless State is StateInvalidated
	Origin      Origin        // zero when not reported (events)
	Size        uint64        // bytes behind the client
	LastErr     syscall.Errno // result of its last sync; 0: success
	// OwnerPortID and OwnerPID identify the netlink socket and process
	// that created the client. They are sensitive: zero unless the caller
	// has CAP_NET_ADMIN and the client was created over netlink (OwnerPID
	// alone for one created through /dev/ib_sync_mem).
	OwnerPortID uint32
	OwnerPID    uint32
	Stats       Counters // its counters, without a histogram
	PinnedPages uint32   // pages a region client keeps pinned

	// Kind-specific descriptions, sensitive: the one of the client's kind
	// is set for callers with CAP_NET_ADMIN, the others are nil.
	Sim    *SimInfo
	Region *RegionInfo
	DMABuf *DMABufInfo
}

// SimInfo is what a client of ib_sync_mem_sim reports about itself.
type SimInfo struct {
	Latency            time.Duration // time one sync takes
	FailNext           uint32        // syncs still to fail
	FailErrno          syscall.Errno // errno of those
	Size               uint64        // bytes the client stands for
	Batch              bool          // uses the prepare/finish hooks
	CallsToDevice      uint64        // syncs run per direction
	CallsToCPU         uint64
	CallsBidirectional uint64
	CallsInbound       uint64
	Addr               uint64 // user address of the memory it stands for, or 0
}

// RegionInfo describes a region client: memory of the process that
// registered it, pinned and DMA-mapped on the device.
type RegionInfo struct {
	Addr     uint64 // user address
	Len      uint64 // bytes
	Access   RegionAccess
	Segments uint32 // DMA segments mapped
}

// DMABufInfo describes a dma-buf client.
type DMABufInfo struct {
	Size     uint64
	Exporter string // such as "vgem"
	Inode    uint64 // as in /proc/<pid>/fdinfo
}

// RegionAccess are IB_SYNC_MEM_REGION_F_* bits.
type RegionAccess uint32

// Counters are the sync statistics of a client, a device or the module.
type Counters struct {
	Syncs  uint64        // sync callbacks run
	Errors uint64        // of them, failed
	Total  time.Duration // total time in sync callbacks
	Max    time.Duration // longest sync callback
	Bytes  uint64        // bytes made coherent
	// Clients is the number of registered clients, in the statistics of
	// the module and of a device.
	Clients uint32
	// Hist is the log2 histogram of sync callback times, in nanoseconds,
	// reported only by Stats: the buckets of pkg/hist, which the kernel
	// counts in (the last one, 2^31 ns and longer, open-ended). Empty
	// buckets past the last used one are left out.
	Hist hist.Log2
}

// SyncResult is the outcome of Sync.
type SyncResult struct {
	Err      syscall.Errno // first client error, 0 if none
	Run      uint32        // clients whose sync ran
	Errors   uint32        // of them, how many failed
	Skipped  uint32        // not run: lazy and clean, or invalidated
	Duration time.Duration // wall time of the sync in the kernel
	Results  []ClientResult
}

// ClientResult is the outcome of one client's sync.
type ClientResult struct {
	ID       uint32
	Err      syscall.Errno // 0 or the client's errno
	Duration time.Duration // time in its sync callback
}

// Stats are the counters Stats reports, with the selector they are for.
type Stats struct {
	ClientID uint32 // the client, or 0
	DevIndex uint32 // the device (or the client's), or 0
	DevName  string
	Counters
}

// Kind is what implements a client.
type Kind uint32

func (k Kind) String() string {
	switch k {
	case KindKernel:
		return "kernel"
	case KindSim:
		return "sim"
	case KindRegion:
		return "region"
	case KindDMABuf:
		return "dmabuf"
	}
	return "kind-" + strconv.FormatUint(uint64(k), 10)
}

// ParseKind parses a kind name ("sim", "region", "dmabuf", "kernel") or
// number.
func ParseKind(s string) (Kind, error) {
	for _, k := range []Kind{KindKernel, KindSim, KindRegion, KindDMABuf} {
		if s == k.String() {
			return k, nil
		}
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "kind-"), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("unknown client kind %q (want sim, region, dmabuf, kernel or a number)", s)
	}
	return Kind(n), nil
}

// Direction says which side is about to use the memory.
type Direction uint32

func (d Direction) String() string {
	switch d {
	case DirToDevice:
		return "to-device"
	case DirToCPU:
		return "to-cpu"
	case DirBidirectional:
		return "bidirectional"
	case DirInbound:
		return "inbound"
	}
	return "dir-" + strconv.FormatUint(uint64(d), 10)
}

// Directions lists the sync directions, in the order of their numbers.
func Directions() []Direction {
	return []Direction{DirToDevice, DirToCPU, DirBidirectional, DirInbound}
}

// DirectionNames is the names of Directions as a message lists them:
// "to-device, to-cpu, bidirectional or inbound".
func DirectionNames() string {
	ds := Directions()
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.String()
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ParseDirection parses "to-device", "to-cpu", "bidirectional" or
// "inbound".
func ParseDirection(s string) (Direction, error) {
	for _, d := range Directions() {
		if s == d.String() {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown sync direction %q (want %s)", s, DirectionNames())
}

// ClientFlags are IB_SYNC_MEM_CLIENT_F_* bits.
type ClientFlags uint32

// Names lists the flags set, unknown bits as hexadecimal numbers.
func (f ClientFlags) Names() []string {
	names := []string{}
	for _, b := range []struct {
		f    ClientFlags
		name string
	}{{FlagLazy, "lazy"}, {FlagOwned, "owned"}, {FlagFile, "file"}} {
		if f&b.f != 0 {
			names = append(names, b.name)
			f &^= b.f
		}
	}
	if f != 0 {
		names = append(names, fmt.Sprintf("%#x", uint32(f)))
	}
	return names
}

func (f ClientFlags) String() string { return strings.Join(f.Names(), ",") }

// State is the life cycle state of a client.
type State uint32

func (s State) String() string {
	switch s {
	case StateLive:
		return "live"
	case StateInvalidated:
		return "invalidated"
	}
	return "state-" + strconv.FormatUint(uint64(s), 10)
}

// InvalReason is why a client was invalidated.
type InvalReason uint32

func (r InvalReason) String() string {
	switch r {
	case ReasonDevice:
		return "device"
	case ReasonMemory:
		return "memory"
	}
	return "reason-" + strconv.FormatUint(uint64(r), 10)
}

// Origin is who registered a client.
type Origin uint32

func (o Origin) String() string {
	switch o {
	case OriginKernel:
		return "kernel"
	case OriginNetlink:
		return "netlink"
	case OriginDevice:
		return "device"
	}
	return "origin-" + strconv.FormatUint(uint64(o), 10)
}

// EventType is the kind of an Event: the command the kernel multicast, or
// what the watch itself saw (EventFamilyNew, EventFamilyDel, EventLost).
type EventType uint16

// Events of the watch itself, past the commands' numbers. Watch reports
// them with no other field set.
const (
	// EventFamilyNew: the module was loaded (again); the watch follows
	// its new family.
	EventFamilyNew EventType = 0x100 + iota
	// EventFamilyDel: the module was unloaded.
	EventFamilyDel
	// EventLost: events were lost, the socket's buffer was full.
	EventLost
)

func (t EventType) String() string {
	switch t {
	case EventClientNew:
		return "client-new"
	case EventClientDel:
		return "client-del"
	case EventClientInvalidated:
		return "client-invalidated"
	case EventDevNew:
		return "dev-new"
	case EventDevDel:
		return "dev-del"
	case EventSyncFailed:
		return "sync-failed"
	case EventFamilyNew:
		return "family-new"
	case EventFamilyDel:
		return "family-del"
	case EventLost:
		return "events-lost"
	}
	return "event-" + strconv.FormatUint(uint64(t), 10)
}

// An Event is a notification from the kernel's "events" multicast group.
type Event struct {
	Type EventType
	// Client holds the client attributes the event carries: everything
	// but the sensitive attributes for EventClientNew; ID, Name, DevIndex
	// and DevName for EventClientDel, plus InvalReason for
	// EventClientInvalidated; ID, DevIndex and DevName for
	// EventSyncFailed. Nil for device events.
	Client *Client
	// DevIndex and DevName name the device; every event carries them.
	DevIndex uint32
	DevName  string
	// Dir and Err describe the failed sync of an EventSyncFailed.
	Dir Direction
	Err syscall.Errno
}
