package genl

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mdlayher/netlink"
	"github.com/syncmem/syncmem/pkg/hist"
	"golang.org/x/sys/unix"
)

var (
	doFlags   = netlink.Request
	dumpFlags = netlink.Request | netlink.Dump
	ackFlags  = netlink.Request | netlink.Acknowledge
)

// Replies as the kernel builds them, with padding and an attribute this
// package does not know (which it must skip).
var (
	statsAttrs = nest(attrStats,
		u64(statsSyncs, 12), u64(statsErrors, 2), flag(statsPad),
		u64(statsNS, 3000), u64(statsMaxNS, 900), u64(statsBytes, 1<<20))
	statsWant = Counters{Syncs: 12, Errors: 2, Total: 3 * time.Microsecond, Max: 900, Bytes: 1 << 20}

	simClientAttrs = []attr{
		u32(attrClientID, 7), str(attrClientName, "buf0"),
		u32(attrDevIndex, 1), str(attrDevName, "rxe0"),
		u32(attrClientKind, uint32(KindSim)), u32(attrClientFlags, uint32(FlagLazy|FlagOwned)),
		u32(attrClientState, uint32(StateLive)), u32(attrClientOrigin, uint32(OriginNetlink)),
		flag(attrPad), u64(attrClientSize, 4096), s32(attrClientLastErr, -int32(unix.EIO)),
		u32(attrClientOwnerPortID, 4242), u32(attrClientOwnerPID, 99),
		statsAttrs,
		nest(attrClientInfo,
			u32(simLatencyUS, 200), u32(simFailNext, 1), u32(simFailErrno, 5),
			u64(simSize, 4096), flag(simBatch), u64(simCallsToDevice, 3),
			u64(simCallsToCPU, 2), u64(simCallsBidirectional, 1)),
		u32(999, 1),
	}
	simClientWant = Client{
		ID: 7, Name: "buf0", DevIndex: 1, DevName: "rxe0", Kind: KindSim,
		Flags: FlagLazy | FlagOwned, State: StateLive, Origin: OriginNetlink,
		Size: 4096, LastErr: unix.EIO, OwnerPortID: 4242, OwnerPID: 99, Stats: statsWant,
		Sim: &SimInfo{
			Latency: 200 * time.Microsecond, FailNext: 1, FailErrno: unix.EIO, Size: 4096,
			Batch: true, CallsToDevice: 3, CallsToCPU: 2, CallsBidirectional: 1,
		},
	}
	// A driver's client, invalidated, as an unprivileged caller sees it.
	kernelClientAttrs = []attr{
		u32(attrClientID, 8), str(attrClientName, "gpu"), u32(attrDevIndex, 2),
		str(attrDevName, "rxe1"), u32(attrClientKind, uint32(KindKernel)),
		u32(attrClientFlags, 0), u32(attrClientState, uint32(StateInvalidated)),
		u32(attrClientInvalReason, uint32(ReasonDevice)),
		u32(attrClientOrigin, uint32(OriginKernel)), u64(attrClientSize, 0),
		s32(attrClientLastErr, 0), nest(attrStats),
	}
	kernelClientWant = Client{
		ID: 8, Name: "gpu", DevIndex: 2, DevName: "rxe1", Kind: KindKernel,
		State: StateInvalidated, InvalReason: ReasonDevice, Origin: OriginKernel,
	}
	// Region and dma-buf clients, their info before their kind; a client
	// of a kind this package does not know, whose info is skipped.
	regionClientAttrs = []attr{
		u32(attrClientID, 10),
		nest(attrClientInfo, u64(regionAddr, 0x7f0000000000), u64(regionLen, 8192),
			u32(regionAccess, uint32(RegionWrite)), u32(regionSegments, 2)),
		u32(attrClientKind, uint32(KindRegion)), u32(attrClientPinnedPages, 2),
	}
	regionClientWant = Client{ID: 10, Kind: KindRegion, PinnedPages: 2, Region: &RegionInfo{
		Addr: 0x7f0000000000, Len: 8192, Access: RegionWrite, Segments: 2,
	}}
	dmabufClientAttrs = []attr{
		u32(attrClientID, 11), u32(attrClientKind, uint32(KindDMABuf)),
		nest(attrClientInfo, u64(dmabufSize, 1<<16), str(dmabufExporter, "vgem"), u64(dmabufInode, 77)),
	}
	dmabufClientWant  = Client{ID: 11, Kind: KindDMABuf, DMABuf: &DMABufInfo{Size: 1 << 16, Exporter: "vgem", Inode: 77}}
	futureClientAttrs = []attr{u32(attrClientID, 12), u32(attrClientKind, 99), nest(attrClientInfo, u32(2, 1))}
	futureClientWant  = Client{ID: 12, Kind: 99}
)

// TestMethods checks, for every method, the command, the netlink flags and
// the exact attributes of the request, and how the reply is parsed.
func TestMethods(t *testing.T) {
	tests := []struct {
		name  string
		call  func(*Conn) (any, error)
		cmd   uint8
		flags netlink.HeaderFlags
		sent  []attr
		reply []msg
		want  any
	}{{
		name:  "Devices",
		call:  func(c *Conn) (any, error) { return c.Devices(bg) },
		cmd:   cmdDevGet,
		flags: dumpFlags,
		sent:  []attr{flag(attrDumpEnd)},
		reply: []msg{
			{Attrs: []attr{u32(attrDevIndex, 1), str(attrDevName, "rxe0"), u32(attrDevClients, 2),
				flag(attrPad), u64(attrDevPasses, 10), statsAttrs}},
			{Attrs: []attr{u32(attrDevIndex, 2), str(attrDevName, "rxe1")}},
		},
		want: []Device{
			{Index: 1, Name: "rxe0", Clients: 2, Passes: 10, Stats: statsWant},
			{Index: 2, Name: "rxe1"},
		},
	}, {
		name:  "Devices none",
		call:  func(c *Conn) (any, error) { return c.Devices(bg) },
		cmd:   cmdDevGet,
		flags: dumpFlags,
		sent:  []attr{flag(attrDumpEnd)},
		want:  []Device{},
	}, {
		name:  "Device",
		call:  func(c *Conn) (any, error) { return c.Device(bg, "rxe0") },
		cmd:   cmdDevGet,
		flags: doFlags,
		sent:  []attr{str(attrDevName, "rxe0")},
		reply: []msg{{Attrs: []attr{u32(attrDevIndex, 1), str(attrDevName, "rxe0"), u32(attrDevClients, 0)}}},
		want:  &Device{Index: 1, Name: "rxe0"},
	}, {
		name:  "Clients all",
		call:  func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{}) },
		cmd:   cmdClientGet,
		flags: dumpFlags,
		sent:  []attr{flag(attrDumpEnd)},
		reply: []msg{{Attrs: simClientAttrs}, {Attrs: kernelClientAttrs}, {Attrs: regionClientAttrs},
			{Attrs: dmabufClientAttrs}, {Attrs: futureClientAttrs}},
		want: []Client{simClientWant, kernelClientWant, regionClientWant, dmabufClientWant, futureClientWant},
	}, {
		name:  "Clients of a device",
		call:  func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{Device: "rxe1"}) },
		cmd:   cmdClientGet,
		flags: dumpFlags,
		sent:  []attr{str(attrDevName, "rxe1"), flag(attrDumpEnd)},
		reply: []msg{{Attrs: kernelClientAttrs}},
		want:  []Client{kernelClientWant},
	}, {
		name:  "Client",
		call:  func(c *Conn) (any, error) { return c.Client(bg, 7) },
		cmd:   cmdClientGet,
		flags: doFlags,
		sent:  []attr{u32(attrClientID, 7)},
		reply: []msg{{Attrs: simClientAttrs}},
		want:  &simClientWant,
	}, {
		name: "Register sim with every setting",
		call: func(c *Conn) (any, error) {
			return c.Register(bg, RegisterRequest{
				Device: "rxe0", Name: "buf0", Kind: KindSim, Flags: FlagLazy | FlagOwned,
				Sim: &SimConfig{
					Latency: new(200 * time.Microsecond), FailNext: new(uint32(1)),
					FailErrno: new(unix.EIO), Size: new(uint64(4096)), Batch: true,
				},
			})
		},
		cmd:   cmdClientNew,
		flags: doFlags,
		sent: []attr{
			str(attrDevName, "rxe0"), str(attrClientName, "buf0"),
			u32(attrClientKind, 1), u32(attrClientFlags, 3),
			nest(attrSim, u32(simLatencyUS, 200), u32(simFailNext, 1),
				u32(simFailErrno, 5), u64(simSize, 4096), flag(simBatch)),
		},
		reply: []msg{{Attrs: simClientAttrs}},
		want:  &simClientWant,
	}, {
		name: "Register with zero settings sent",
		call: func(c *Conn) (any, error) {
			return c.Register(bg, RegisterRequest{
				Device: "rxe0", Name: "z", Kind: KindSim,
				Sim: &SimConfig{Latency: new(time.Duration(0)), FailErrno: new(unix.Errno(0))},
			})
		},
		cmd:   cmdClientNew,
		flags: doFlags,
		sent: []attr{
			str(attrDevName, "rxe0"), str(attrClientName, "z"), u32(attrClientKind, 1),
			nest(attrSim, u32(simLatencyUS, 0), u32(simFailErrno, 0)),
		},
		reply: []msg{{Attrs: kernelClientAttrs}},
		want:  &kernelClientWant,
	}, {
		name: "Register minimal",
		call: func(c *Conn) (any, error) {
			return c.Register(bg, RegisterRequest{Device: "rxe0", Name: "b", Kind: KindSim})
		},
		cmd:   cmdClientNew,
		flags: doFlags,
		sent:  []attr{str(attrDevName, "rxe0"), str(attrClientName, "b"), u32(attrClientKind, 1)},
		reply: []msg{{Attrs: []attr{u32(attrClientID, 3), str(attrClientName, "b")}}},
		want:  &Client{ID: 3, Name: "b"},
	}, {
		name: "Register region",
		call: func(c *Conn) (any, error) {
			return c.Register(bg, RegisterRequest{Device: "rxe0", Name: "r", Kind: KindRegion,
				Flags: FlagOwned, Region: &RegionConfig{Addr: 0x7f0000000000, Len: 8192, Access: RegionWrite}})
		},
		cmd:   cmdClientNew,
		flags: doFlags,
		sent: []attr{
			str(attrDevName, "rxe0"), str(attrClientName, "r"), u32(attrClientKind, 2), u32(attrClientFlags, 2),
			nest(attrRegion, u64(regionAddr, 0x7f0000000000), u64(regionLen, 8192), u32(regionAccess, 1)),
		},
		reply: []msg{{Attrs: regionClientAttrs}},
		want:  &regionClientWant,
	}, {
		name: "Register dma-buf",
		call: func(c *Conn) (any, error) {
			return c.Register(bg, RegisterRequest{Device: "rxe0", Name: "d", Kind: KindDMABuf, DMABuf: &DMABufConfig{FD: 5}})
		},
		cmd:   cmdClientNew,
		flags: doFlags,
		sent: []attr{
			str(attrDevName, "rxe0"), str(attrClientName, "d"), u32(attrClientKind, 3),
			nest(attrDMABuf, s32(dmabufFD, 5)),
		},
		reply: []msg{{Attrs: dmabufClientAttrs}},
		want:  &dmabufClientWant,
	}, {
		name:  "Unregister",
		call:  func(c *Conn) (any, error) { return nil, c.Unregister(bg, 7) },
		cmd:   cmdClientDel,
		flags: ackFlags,
		sent:  []attr{u32(attrClientID, 7)},
	}, {
		name: "Sync device",
		call: func(c *Conn) (any, error) {
			return c.Sync(bg, SyncRequest{Device: "rxe0", Dir: DirToCPU})
		},
		cmd:   cmdSync,
		flags: doFlags,
		sent:  []attr{str(attrDevName, "rxe0"), u32(attrSyncDir, 2)},
		reply: []msg{{Attrs: []attr{
			s32(attrSyncErr, 0), u32(attrSyncRun, 2), u32(attrSyncErrors, 0),
			u32(attrSyncSkipped, 1), u64(attrSyncNS, 5000),
			nest(attrSyncResults,
				nest(attrSyncResult, u32(attrClientID, 3), s32(attrSyncErr, 0), u64(attrSyncNS, 1000)),
				nest(attrSyncResult, u32(attrClientID, 4), s32(attrSyncErr, 0), u64(attrSyncNS, 2000))),
		}}},
		want: &SyncResult{Run: 2, Skipped: 1, Duration: 5 * time.Microsecond, Results: []ClientResult{
			{ID: 3, Duration: time.Microsecond}, {ID: 4, Duration: 2 * time.Microsecond},
		}},
	}, {
		name: "Sync one client with a timeout",
		call: func(c *Conn) (any, error) {
			return c.Sync(bg, SyncRequest{Clients: []uint32{3}, Dir: DirToDevice, Timeout: new(5 * time.Second)})
		},
		cmd:   cmdSync,
		flags: doFlags,
		sent:  []attr{u32(attrClientID, 3), u32(attrSyncDir, 1), u32(attrSyncTimeoutMS, 5000)},
		reply: []msg{{Attrs: []attr{
			s32(attrSyncErr, -int32(unix.ETIMEDOUT)), u32(attrSyncRun, 1), u32(attrSyncErrors, 1),
			nest(attrSyncResults, nest(attrSyncResult, u32(attrClientID, 3),
				s32(attrSyncErr, -int32(unix.ETIMEDOUT)), u64(attrSyncNS, 7))),
		}}},
		want: &SyncResult{Err: unix.ETIMEDOUT, Run: 1, Errors: 1, Results: []ClientResult{
			{ID: 3, Err: unix.ETIMEDOUT, Duration: 7},
		}},
	}, {
		// A range goes with the client's id, its offset sent even when
		// 0; without one (above) neither attribute is sent.
		name: "Sync one client with a range",
		call: func(c *Conn) (any, error) {
			return c.Sync(bg, SyncRequest{Clients: []uint32{3}, Dir: DirToCPU, Range: &Range{Offset: 4096, Len: 8192}})
		},
		cmd:   cmdSync,
		flags: doFlags,
		sent: []attr{u32(attrClientID, 3), u32(attrSyncDir, 2),
			u64(attrSyncOffset, 4096), u64(attrSyncLen, 8192)},
		reply: []msg{{Attrs: []attr{s32(attrSyncErr, 0), u32(attrSyncRun, 1), u32(attrSyncErrors, 0),
			nest(attrSyncResults, nest(attrSyncResult, u32(attrClientID, 3), s32(attrSyncErr, 0), u64(attrSyncNS, 7)))}}},
		want: &SyncResult{Run: 1, Results: []ClientResult{{ID: 3, Duration: 7}}},
	}, {
		name: "Sync one client with a range from 0 and a timeout",
		call: func(c *Conn) (any, error) {
			return c.Sync(bg, SyncRequest{Clients: []uint32{3}, Dir: DirToDevice, Range: &Range{Len: 1 << 40},
				Timeout: new(time.Second)})
		},
		cmd:   cmdSync,
		flags: doFlags,
		sent: []attr{u32(attrClientID, 3), u32(attrSyncDir, 1),
			u64(attrSyncOffset, 0), u64(attrSyncLen, 1<<40), u32(attrSyncTimeoutMS, 1000)},
		reply: []msg{{Attrs: []attr{u32(attrSyncSkipped, 0), u32(attrSyncRun, 1)}}},
		want:  &SyncResult{Run: 1},
	}, {
		name:  "MarkDirty all of a client",
		call:  func(c *Conn) (any, error) { return nil, c.MarkDirty(bg, 7, DirToDevice, nil) },
		cmd:   cmdMarkDirty,
		flags: ackFlags,
		sent:  []attr{u32(attrClientID, 7), u32(attrSyncDir, 1)},
	}, {
		name: "MarkDirty a range",
		call: func(c *Conn) (any, error) {
			return nil, c.MarkDirty(bg, 7, DirInbound, &Range{Offset: 4096, Len: 8192})
		},
		cmd:   cmdMarkDirty,
		flags: ackFlags,
		sent: []attr{u32(attrClientID, 7), u32(attrSyncDir, 4),
			u64(attrSyncOffset, 4096), u64(attrSyncLen, 8192)},
	}, {
		name:  "MarkDirty a range from 0",
		call:  func(c *Conn) (any, error) { return nil, c.MarkDirty(bg, 8, DirBidirectional, &Range{Len: 64}) },
		cmd:   cmdMarkDirty,
		flags: ackFlags,
		sent:  []attr{u32(attrClientID, 8), u32(attrSyncDir, 3), u64(attrSyncOffset, 0), u64(attrSyncLen, 64)},
	}, {
		name: "Sync batch",
		call: func(c *Conn) (any, error) {
			return c.Sync(bg, SyncRequest{Clients: []uint32{4, 3}, Dir: DirBidirectional, Timeout: new(time.Duration(0))})
		},
		cmd:   cmdSync,
		flags: doFlags,
		sent: []attr{
			nest(attrSyncClients, u32(batchClientID, 4), u32(batchClientID, 3)),
			u32(attrSyncDir, 3), u32(attrSyncTimeoutMS, 0),
		},
		reply: []msg{{Attrs: []attr{
			s32(attrSyncErr, -int32(unix.EIO)), u32(attrSyncRun, 2), u32(attrSyncErrors, 1),
			nest(attrSyncResults,
				nest(attrSyncResult, u32(attrClientID, 4), s32(attrSyncErr, -int32(unix.EIO)), u64(attrSyncNS, 1)),
				nest(attrSyncResult, u32(attrClientID, 3), s32(attrSyncErr, 0), u64(attrSyncNS, 2))),
		}}},
		want: &SyncResult{Err: unix.EIO, Run: 2, Errors: 1, Results: []ClientResult{
			{ID: 4, Err: unix.EIO, Duration: 1}, {ID: 3, Duration: 2},
		}},
	}, {
		// Inbound is 4 on the wire; a client that cannot do it fails
		// with EOPNOTSUPP, in the results like any other failure.
		name: "Sync inbound",
		call: func(c *Conn) (any, error) {
			return c.Sync(bg, SyncRequest{Clients: []uint32{3, 4}, Dir: DirInbound})
		},
		cmd:   cmdSync,
		flags: doFlags,
		sent: []attr{
			nest(attrSyncClients, u32(batchClientID, 3), u32(batchClientID, 4)),
			u32(attrSyncDir, 4),
		},
		reply: []msg{{Attrs: []attr{
			s32(attrSyncErr, -int32(unix.EOPNOTSUPP)), u32(attrSyncRun, 2), u32(attrSyncErrors, 1),
			nest(attrSyncResults,
				nest(attrSyncResult, u32(attrClientID, 3), s32(attrSyncErr, 0), u64(attrSyncNS, 9)),
				nest(attrSyncResult, u32(attrClientID, 4), s32(attrSyncErr, -int32(unix.EOPNOTSUPP)), u64(attrSyncNS, 1))),
		}}},
		want: &SyncResult{Err: unix.EOPNOTSUPP, Run: 2, Errors: 1, Results: []ClientResult{
			{ID: 3, Duration: 9}, {ID: 4, Err: unix.EOPNOTSUPP, Duration: 1},
		}},
	}, {
		// Past about 2,000 results the kernel goes on in another nest.
		name: "Sync results split across nests",
		call: func(c *Conn) (any, error) {
			return c.Sync(bg, SyncRequest{Device: "rxe0", Dir: DirToDevice})
		},
		cmd:   cmdSync,
		flags: doFlags,
		sent:  []attr{str(attrDevName, "rxe0"), u32(attrSyncDir, 1)},
		reply: []msg{{Attrs: []attr{
			s32(attrSyncErr, 0), u32(attrSyncRun, 3), u32(attrSyncErrors, 0),
			nest(attrSyncResults,
				nest(attrSyncResult, u32(attrClientID, 7), s32(attrSyncErr, 0), u64(attrSyncNS, 1)),
				nest(attrSyncResult, u32(attrClientID, 5), s32(attrSyncErr, 0), u64(attrSyncNS, 2))),
			nest(attrSyncResults,
				nest(attrSyncResult, u32(attrClientID, 9), s32(attrSyncErr, 0), u64(attrSyncNS, 3))),
		}}},
		want: &SyncResult{Run: 3, Results: []ClientResult{
			{ID: 7, Duration: 1}, {ID: 5, Duration: 2}, {ID: 9, Duration: 3},
		}},
	}, {
		name:  "Stats module-wide with histogram",
		call:  func(c *Conn) (any, error) { return c.Stats(bg, StatsRequest{}) },
		cmd:   cmdStatsGet,
		flags: doFlags,
		sent:  []attr{},
		reply: []msg{{Attrs: []attr{nest(attrStats,
			u64(statsSyncs, 6), u64(statsErrors, 1), u64(statsNS, 9000), u64(statsMaxNS, 4000),
			u64(statsBytes, 8192), u32(statsClients, 3),
			nest(statsHist,
				nest(histSlot, u32(histLog2, 0), u64(histCount, 1)),
				nest(histSlot, flag(histPad), u32(histLog2, 12), u64(histCount, 4)),
				nest(histSlot, u32(histLog2, 3), u64(histCount, 1))),
		)}}},
		want: &Stats{Counters: Counters{
			Syncs: 6, Errors: 1, Total: 9 * time.Microsecond, Max: 4 * time.Microsecond,
			Bytes: 8192, Clients: 3, Hist: hist.Log2{Counts: []uint64{1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4}},
		}},
	}, {
		name:  "Stats of a device",
		call:  func(c *Conn) (any, error) { return c.Stats(bg, StatsRequest{Device: "rxe0"}) },
		cmd:   cmdStatsGet,
		flags: doFlags,
		sent:  []attr{str(attrDevName, "rxe0")},
		reply: []msg{{Attrs: []attr{u32(attrDevIndex, 1), str(attrDevName, "rxe0"), statsAttrs}}},
		want:  &Stats{DevIndex: 1, DevName: "rxe0", Counters: statsWant},
	}, {
		name:  "Stats of a client",
		call:  func(c *Conn) (any, error) { return c.Stats(bg, StatsRequest{Client: 7}) },
		cmd:   cmdStatsGet,
		flags: doFlags,
		sent:  []attr{u32(attrClientID, 7)},
		reply: []msg{{Attrs: []attr{u32(attrClientID, 7), nest(attrStats,
			nest(statsHist, nest(histSlot, u32(histLog2, 1), u64(histCount, 2))))}}},
		want: &Stats{ClientID: 7, Counters: Counters{Hist: hist.Log2{Counts: []uint64{0, 2}}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, k := dialFake(t, func(request) ([]msg, error) { return tt.reply, nil })
			got, err := tt.call(c)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if len(k.reqs) != 1 {
				t.Fatalf("%d requests sent, want 1", len(k.reqs))
			}
			req := k.reqs[0]
			if req.Command != tt.cmd {
				t.Errorf("command %d, want %d", req.Command, tt.cmd)
			}
			if req.Flags != tt.flags {
				t.Errorf("flags %v, want %v", req.Flags, tt.flags)
			}
			if d := cmp.Diff(tt.sent, req.Attrs, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("attributes sent (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
}

// TestStatsHistBuckets: the kernel's slots are pkg/hist's buckets, the
// last (31) open-ended; a slot past it is a malformed reply, not a count
// silently moved into another bucket.
func TestStatsHistBuckets(t *testing.T) {
	reply := func(slot uint32) []msg {
		return []msg{{Attrs: []attr{nest(attrStats, nest(statsHist,
			nest(histSlot, u32(histLog2, slot), u64(histCount, 3))))}}}
	}
	c, _ := dialFake(t, func(request) ([]msg, error) { return reply(hist.Buckets - 1), nil })
	s, err := c.Stats(bg, StatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Hist.Counts) != hist.Buckets || s.Hist.Counts[hist.Buckets-1] != 3 || s.Hist.Unit != hist.Nanoseconds {
		t.Errorf("slot 31: %+v", s.Hist)
	}
	c, _ = dialFake(t, func(request) ([]msg, error) { return reply(hist.Buckets), nil })
	if _, err := c.Stats(bg, StatsRequest{}); err == nil || !strings.Contains(err.Error(), "histogram slot 32 out of range") {
		t.Errorf("slot 32: %v, want histogram slot 32 out of range", err)
	}
}

// endMsg is the end message of a dump asked for with attrDumpEnd.
func endMsg(gen, endGen uint32) msg {
	return msg{Attrs: []attr{flag(attrDumpEnd), u32(attrGeneration, gen), u32(attrEndGeneration, endGen)}}
}

// withGen adds the dump generation to a message's attributes.
func withGen(attrs []attr, gen uint32) []attr {
	return append(append([]attr{}, attrs...), u32(attrGeneration, gen))
}

// TestDumpGenerations: dumps ask for the end message and are run again when
// a message's generation differs from the end's, which catches a change
// even in a dump that fits one datagram (where only NLMSG_DONE, dropped by
// the netlink library, carries NLM_F_DUMP_INTR).
func TestDumpGenerations(t *testing.T) {
	for _, tt := range []struct {
		name     string
		replies  [][]msg // per attempt; the last repeats
		call     func(*Conn) (any, error)
		wantReqs int
		want     any
		wantErr  error
	}{{
		name:     "consistent",
		replies:  [][]msg{{{Attrs: withGen(simClientAttrs, 5)}, {Attrs: withGen(kernelClientAttrs, 5)}, endMsg(5, 5)}},
		call:     func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{}) },
		wantReqs: 1,
		want:     []Client{simClientWant, kernelClientWant},
	}, {
		name: "changed during the only round",
		replies: [][]msg{
			{{Attrs: withGen(simClientAttrs, 5)}, {Attrs: withGen(kernelClientAttrs, 5)}, endMsg(5, 7)},
			{{Attrs: withGen(kernelClientAttrs, 7)}, endMsg(7, 7)},
		},
		call:     func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{}) },
		wantReqs: 2,
		want:     []Client{kernelClientWant},
	}, {
		name: "rounds at different generations",
		replies: [][]msg{
			{{Attrs: withGen(simClientAttrs, 5)}, {Attrs: withGen(kernelClientAttrs, 6)}, endMsg(6, 6)},
			{{Attrs: withGen(simClientAttrs, 6)}, endMsg(6, 6)},
		},
		call:     func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{}) },
		wantReqs: 2,
		want:     []Client{simClientWant},
	}, {
		name:     "empty dump that changed",
		replies:  [][]msg{{endMsg(3, 4)}, {endMsg(4, 4)}},
		call:     func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{Device: "rxe0"}) },
		wantReqs: 2,
		want:     []Client{},
	}, {
		name:     "devices",
		replies:  [][]msg{{{Attrs: []attr{u32(attrDevIndex, 1), u32(attrGeneration, 1)}}, endMsg(1, 2)}, {endMsg(2, 2)}},
		call:     func(c *Conn) (any, error) { return c.Devices(bg) },
		wantReqs: 2,
		want:     []Device{},
	}, {
		name:     "never consistent",
		replies:  [][]msg{{{Attrs: withGen(simClientAttrs, 1)}, endMsg(1, 2)}},
		call:     func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{}) },
		wantReqs: dumpAttempts,
		wantErr:  ErrDumpInterrupted,
	}, {
		name:     "a module without end messages",
		replies:  [][]msg{{{Attrs: simClientAttrs}}},
		call:     func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{}) },
		wantReqs: 1,
		want:     []Client{simClientWant},
	}, {
		name:     "end message not last",
		replies:  [][]msg{{endMsg(1, 1), {Attrs: withGen(simClientAttrs, 1)}}},
		call:     func(c *Conn) (any, error) { return c.Clients(bg, ClientFilter{}) },
		wantReqs: 1,
		wantErr:  errMalformed,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			c, k := dialFake(t, func(request) ([]msg, error) {
				r := tt.replies[min(n, len(tt.replies)-1)]
				n++
				return r, nil
			})
			got, err := tt.call(c)
			if len(k.reqs) != tt.wantReqs {
				t.Errorf("%d dumps, want %d", len(k.reqs), tt.wantReqs)
			}
			for i, r := range k.reqs {
				if len(r.Attrs) == 0 || r.Attrs[len(r.Attrs)-1].Type != attrDumpEnd {
					t.Errorf("dump %d does not ask for the end message: %v", i, r.Attrs)
				}
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
}

// TestDumpInterrupted: a dump marked NLM_F_DUMP_INTR is run again, and
// given up after dumpAttempts.
func TestDumpInterrupted(t *testing.T) {
	for _, tt := range []struct {
		name        string
		interrupted int // dumps marked interrupted before a clean one
		wantReqs    int
		wantErr     bool
	}{
		{"clean", 0, 1, false},
		{"once", 1, 2, false},
		{"always", dumpAttempts, dumpAttempts, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			c, k := dialFake(t, func(request) ([]msg, error) {
				n++
				if n <= tt.interrupted {
					return []msg{{Attrs: simClientAttrs}, {Attrs: kernelClientAttrs, Flags: netlink.DumpInterrupted}}, nil
				}
				return []msg{{Attrs: kernelClientAttrs}}, nil
			})
			got, err := c.Clients(bg, ClientFilter{})
			if len(k.reqs) != tt.wantReqs {
				t.Errorf("%d dumps, want %d", len(k.reqs), tt.wantReqs)
			}
			if tt.wantErr {
				if !errors.Is(err, ErrDumpInterrupted) {
					t.Fatalf("error %v, want ErrDumpInterrupted", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]Client{kernelClientWant}, got); d != "" {
				t.Errorf("clients (-want +got):\n%s", d)
			}
		})
	}
}
