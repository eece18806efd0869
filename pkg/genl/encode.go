package genl

import (
	"encoding/binary"
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// RegisterRequest describes a client to create with Conn.Register.
type RegisterRequest struct {
	Device string      // RDMA device name (required)
	Name   string      // 1 to NameLen-1 bytes (required)
	Kind   Kind        // KindSim, KindRegion, KindDMABuf; KindKernel cannot be created
	Flags  ClientFlags // FlagLazy, FlagOwned (FlagFile is only reported)
	// Sim configures a sim client; nil sends no settings and leaves the
	// module's defaults.
	Sim *SimConfig
	// Region is required for KindRegion, DMABuf for KindDMABuf.
	// Conn.RegisterRegion and Conn.RegisterDMABuf fill them in.
	Region *RegionConfig
	DMABuf *DMABufConfig
}

// RegionConfig is memory of the calling process for a region client:
// Len bytes at Addr, any address, 1 byte to 1 GiB. The pages that hold it
// stay pinned (counted against RLIMIT_MEMLOCK unless the caller has
// CAP_IPC_LOCK) and DMA-mapped until the client is deleted.
type RegionConfig struct {
	Addr   uint64
	Len    uint64
	Access RegionAccess
}

// DMABufConfig names the dma-buf of a dma-buf client: a file descriptor of
// the calling process.
type DMABufConfig struct {
	FD int32
}

// SimConfig holds the settings of a sim client. A nil field is not sent,
// leaving the module's default.
type SimConfig struct {
	Latency   *time.Duration // time one sync takes: whole microseconds, <= 10s
	FailNext  *uint32        // fail the next N syncs
	FailErrno *syscall.Errno // with this errno, 1..4095
	Size      *uint64        // bytes the client stands for
	Batch     bool           // use the prepare/finish hooks
}

// SyncRequest selects what Conn.Sync syncs: either every client of
// Device, or the clients in Clients. One id syncs that client; several are
// a batch of at most SyncBatchMax, synced in that order (rejected whole if
// one id is unknown).
type SyncRequest struct {
	Device string
	// Owner, with Device, syncs only that owner's clients of the device,
	// in a pass of their own.
	Owner   string
	Clients []uint32
	Dir     Direction // required
	// Timeout bounds each client's waits, in whole milliseconds; nil
	// leaves the module's sync_timeout_ms.
	Timeout *time.Duration
	// Range, with exactly one id in Clients, syncs only those bytes of
	// the client, whether it is lazy or not; nil syncs all of it.
	Range *Range
}

// A Range is Len bytes of a client from Offset: what a sync of one client
// syncs, or what MarkDirty marks, instead of all of the client. It must
// lie inside the client (ErrInvalid matching ERANGE otherwise) and, for a
// kind with a range alignment, start and end on it (EINVAL: a sim
// client's is 64 bytes). Kinds that sync ranges (region, sim) sync and
// count only those bytes; the others sync all of the client.
type Range struct {
	Offset uint64
	Len    uint64 // 1 or more
}

// Check reports what is wrong with r whatever the client: a length of 0
// (also a range given by its offset alone). The kernel judges the rest.
func (r Range) Check() error {
	if r.Len == 0 {
		return invalidf("range of 0 bytes at offset %d: a range needs a length of 1 byte or more", r.Offset)
	}
	return nil
}

// StatsRequest selects the counters Conn.Stats reports: a client (by ID),
// a device (by name), or, when both are zero, the whole module.
type StatsRequest struct {
	Device string
	Client uint32
}

// invalidf is a request this package cannot encode.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// inUnits converts d to a whole number of unit that fits a u32.
func inUnits(what string, d, unit time.Duration) (uint32, error) {
	switch {
	case d < 0:
		return 0, invalidf("%s %v is negative", what, d)
	case d%unit != 0:
		return 0, invalidf("%s %v is not a whole number of %v", what, d, unit)
	case d/unit > math.MaxUint32:
		return 0, invalidf("%s %v is too long", what, d)
	}
	return uint32(d / unit), nil
}

func encodeDevice(name string) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(attrDevName, name)
	return ae.Encode()
}

func encodeClientID(id uint32) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrClientID, id)
	return ae.Encode()
}

// A ClientFilter selects the clients Conn.Clients lists: those of one
// device, of one owner, or both; the zero filter lists every client.
type ClientFilter struct {
	Device string
	Owner  string
}

func encodeClientFilter(f ClientFilter) ([]byte, error) {
	if f.Device == "" && f.Owner == "" {
		return nil, nil
	}
	ae := netlink.NewAttributeEncoder()
	if f.Device != "" {
		ae.String(attrDevName, f.Device)
	}
	if f.Owner != "" {
		ae.String(attrClientOwner, f.Owner)
	}
	return ae.Encode()
}

// Attributes returns r as IB_SYNC_MEM_CMD_CLIENT_NEW's attributes: what
// Conn.Register sends, and what /dev/ib_sync_mem's IB_SYNC_MEM_IOC_CREATE
// takes (syncdev.Device.Create).
func (r RegisterRequest) Attributes() ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	if r.Device != "" {
		ae.String(attrDevName, r.Device)
	}
	ae.String(attrClientName, r.Name)
	ae.Uint32(attrClientKind, uint32(r.Kind))
	if r.Flags != 0 {
		ae.Uint32(attrClientFlags, uint32(r.Flags))
	}
	if r.Sim != nil {
		ae.Nested(attrSim, func(nae *netlink.AttributeEncoder) error {
			return encodeSim(nae, r.Sim)
		})
	}
	if r.Region != nil {
		ae.Nested(attrRegion, func(nae *netlink.AttributeEncoder) error {
			nae.Uint64(regionAddr, r.Region.Addr)
			nae.Uint64(regionLen, r.Region.Len)
			nae.Uint32(regionAccess, uint32(r.Region.Access))
			return nil
		})
	}
	if r.DMABuf != nil {
		ae.Nested(attrDMABuf, func(nae *netlink.AttributeEncoder) error {
			nae.Int32(dmabufFD, r.DMABuf.FD)
			return nil
		})
	}
	return ae.Encode()
}

func encodeSim(ae *netlink.AttributeEncoder, s *SimConfig) error {
	if s.Latency != nil {
		us, err := inUnits("sim latency", *s.Latency, time.Microsecond)
		if err != nil {
			return err
		}
		ae.Uint32(simLatencyUS, us)
	}
	if s.FailNext != nil {
		ae.Uint32(simFailNext, *s.FailNext)
	}
	if s.FailErrno != nil {
		if *s.FailErrno > math.MaxUint32 {
			return invalidf("sim fail errno %d is out of range", uintptr(*s.FailErrno))
		}
		ae.Uint32(simFailErrno, uint32(*s.FailErrno))
	}
	if s.Size != nil {
		ae.Uint64(simSize, *s.Size)
	}
	ae.Flag(simBatch, s.Batch)
	return nil
}

func encodeSync(r SyncRequest) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	if r.Device != "" {
		ae.String(attrDevName, r.Device)
	}
	if r.Owner != "" {
		if r.Device == "" {
			return nil, invalidf("an owner selects clients of a device: name the device")
		}
		ae.String(attrClientOwner, r.Owner)
	}
	if len(r.Clients) > SyncBatchMax {
		return nil, invalidf("a batch names at most %d clients, not %d", SyncBatchMax, len(r.Clients))
	}
	switch len(r.Clients) {
	case 0:
	case 1:
		ae.Uint32(attrClientID, r.Clients[0])
	default:
		ae.Bytes(attrSyncClients|unix.NLA_F_NESTED, encodeIDs(r.Clients))
	}
	ae.Uint32(attrSyncDir, uint32(r.Dir))
	if r.Range != nil && (r.Device != "" || len(r.Clients) != 1) {
		return nil, invalidf("a range is of one client: name exactly one, not a device or a batch")
	}
	if err := encodeRange(ae, r.Range); err != nil {
		return nil, err
	}
	if r.Timeout != nil {
		ms, err := inUnits("sync timeout", *r.Timeout, time.Millisecond)
		if err != nil {
			return nil, err
		}
		ae.Uint32(attrSyncTimeoutMS, ms)
	}
	return ae.Encode()
}

// encodeRange adds a range's offset and length, if there is one.
func encodeRange(ae *netlink.AttributeEncoder, r *Range) error {
	if r == nil {
		return nil
	}
	if err := r.Check(); err != nil {
		return err
	}
	ae.Uint64(attrSyncOffset, r.Offset)
	ae.Uint64(attrSyncLen, r.Len)
	return nil
}

func encodeMarkDirty(id uint32, dir Direction, r *Range) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrClientID, id)
	ae.Uint32(attrSyncDir, uint32(dir))
	if err := encodeRange(ae, r); err != nil {
		return nil, err
	}
	return ae.Encode()
}

// encodeIDs: one CLIENT_ID attribute per id, built in one buffer (a
// nested encoder allocates per attribute, and a batch has up to
// SyncBatchMax).
func encodeIDs(ids []uint32) []byte {
	const l = nlaHeaderLen + 4
	b := make([]byte, l*len(ids))
	for i, id := range ids {
		a := b[i*l:]
		binary.NativeEndian.PutUint16(a[0:2], l)
		binary.NativeEndian.PutUint16(a[2:4], batchClientID)
		binary.NativeEndian.PutUint32(a[4:8], id)
	}
	return b
}

func encodeStats(r StatsRequest) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	if r.Client != 0 {
		ae.Uint32(attrClientID, r.Client)
	}
	if r.Device != "" {
		ae.String(attrDevName, r.Device)
	}
	return ae.Encode()
}
