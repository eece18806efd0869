package genl

// The wire numbers of include/uapi/linux/ib_sync_mem.h. TestUAPIHeader
// parses that header and checks every constant here against it; keep the
// two in step (and its table, which names the C counterpart of each).

// Family identity.
const (
	// FamilyName is the name of the generic netlink family.
	FamilyName = "ib_sync_mem"
	// FamilyVersion is the family version this package speaks.
	FamilyVersion = 1
	// EventsGroup is the multicast group that carries events.
	EventsGroup = "events"
	// NameLen is the size of a client name buffer in the kernel, with the
	// terminating NUL: names are 1 to NameLen-1 bytes.
	NameLen = 32
	// SyncBatchMax is the most client ids one batch sync may name.
	SyncBatchMax = 2048
	// DevClientsMax is the most clients one device may have (the
	// module's max_clients_per_dev is at most this).
	DevClientsMax = 2048
	// SyncTimeoutMaxMS is the longest timeout a sync may be given, in
	// milliseconds (10 min), over netlink and through /dev/ib_sync_mem.
	SyncTimeoutMaxMS = 600000
)

// enum ib_sync_mem_cmd
const (
	cmdUnspec            uint8 = 0
	cmdDevGet            uint8 = 1
	cmdClientNew         uint8 = 2
	cmdClientDel         uint8 = 3
	cmdClientGet         uint8 = 4
	cmdSync              uint8 = 5
	cmdStatsGet          uint8 = 6
	cmdClientInvalidated uint8 = 7  // event only
	cmdDevNew            uint8 = 8  // event only
	cmdDevDel            uint8 = 9  // event only
	cmdSyncFailed        uint8 = 10 // event only
	cmdMarkDirty         uint8 = 11
)

// enum ib_sync_mem_attr
const (
	attrUnspec            uint16 = 0
	attrPad               uint16 = 1
	attrDevIndex          uint16 = 2
	attrDevName           uint16 = 3
	attrDevClients        uint16 = 4
	attrDevPasses         uint16 = 5
	attrClientID          uint16 = 6
	attrClientName        uint16 = 7
	attrClientKind        uint16 = 8
	attrClientFlags       uint16 = 9
	attrClientState       uint16 = 10
	attrClientInvalReason uint16 = 11
	attrClientOrigin      uint16 = 12
	attrClientSize        uint16 = 13
	attrClientLastErr     uint16 = 14
	attrClientOwnerPortID uint16 = 15
	attrClientOwnerPID    uint16 = 16
	attrClientInfo        uint16 = 17
	attrSim               uint16 = 18
	attrSyncDir           uint16 = 19
	attrSyncTimeoutMS     uint16 = 20
	attrSyncClients       uint16 = 21
	attrSyncErr           uint16 = 22
	attrSyncRun           uint16 = 23
	attrSyncErrors        uint16 = 24
	attrSyncSkipped       uint16 = 25
	attrSyncNS            uint16 = 26
	attrSyncResults       uint16 = 27
	attrSyncResult        uint16 = 28
	attrStats             uint16 = 29
	attrRegion            uint16 = 30
	attrDMABuf            uint16 = 31
	attrClientPinnedPages uint16 = 32
	attrGeneration        uint16 = 33
	attrDumpEnd           uint16 = 34
	attrEndGeneration     uint16 = 35
	attrClientOwner       uint16 = 36
	attrSyncOffset        uint16 = 37
	attrSyncLen           uint16 = 38
)

// enum ib_sync_mem_batch_attr, inside attrSyncClients: the batch's client
// ids, at attrClientID's number.
const batchClientID uint16 = 6

// enum ib_sync_mem_stats_attr, inside attrStats.
const (
	statsUnspec  uint16 = 0
	statsPad     uint16 = 1
	statsSyncs   uint16 = 2
	statsErrors  uint16 = 3
	statsNS      uint16 = 4
	statsMaxNS   uint16 = 5
	statsBytes   uint16 = 6
	statsHist    uint16 = 7
	statsClients uint16 = 8
)

// enum ib_sync_mem_hist_attr, inside statsHist.
const (
	histUnspec uint16 = 0
	histPad    uint16 = 1
	histSlot   uint16 = 2
	histLog2   uint16 = 3
	histCount  uint16 = 4
)

// enum ib_sync_mem_sim_attr, inside attrSim and a sim client's attrClientInfo.
const (
	simUnspec             uint16 = 0
	simPad                uint16 = 1
	simLatencyUS          uint16 = 2
	simFailNext           uint16 = 3
	simFailErrno          uint16 = 4
	simSize               uint16 = 5
	simBatch              uint16 = 6
	simCallsToDevice      uint16 = 7
	simCallsToCPU         uint16 = 8
	simCallsBidirectional uint16 = 9
	simCallsInbound       uint16 = 10
	simAddr               uint16 = 11
)

// enum ib_sync_mem_region_attr, inside attrRegion and a region client's
// attrClientInfo.
const (
	regionUnspec   uint16 = 0
	regionPad      uint16 = 1
	regionAddr     uint16 = 2
	regionLen      uint16 = 3
	regionAccess   uint16 = 4
	regionSegments uint16 = 5
)

// IB_SYNC_MEM_REGION_F_*
const (
	// RegionWrite: the device writes the region. Without it the pages are
	// pinned for reading, and a to-cpu or bidirectional sync of the region
	// fails with EACCES (nothing is ever synced in from the device).
	RegionWrite RegionAccess = 1 << 0
)

// enum ib_sync_mem_dmabuf_attr, inside attrDMABuf and a dma-buf client's
// attrClientInfo.
const (
	dmabufUnspec   uint16 = 0
	dmabufPad      uint16 = 1
	dmabufFD       uint16 = 2
	dmabufSize     uint16 = 3
	dmabufExporter uint16 = 4
	dmabufInode    uint16 = 5
)

// enum ib_sync_mem_sync_dir
const (
	DirToDevice      Direction = 1 // the CPU wrote, the device reads next
	DirToCPU         Direction = 2 // the device wrote, the CPU reads next
	DirBidirectional Direction = 3 // both
	// DirInbound: the NIC wrote the memory (an RDMA WRITE or a READ's
	// response landed); the accelerator or the CPU reads next. A client
	// that cannot make the NIC's writes visible there fails it with
	// EOPNOTSUPP. DirBidirectional does not include it.
	DirInbound Direction = 4
)

// enum ib_sync_mem_kind
const (
	// KindKernel is what clients registered by kernel drivers report; it
	// cannot be created from userspace.
	KindKernel Kind = 0
	// KindSim is a client of ib_sync_mem_sim, the simulated accelerator.
	KindSim Kind = 1
	// KindRegion is pinned memory of the process that registered it.
	KindRegion Kind = 2
	// KindDMABuf is a dma-buf.
	KindDMABuf Kind = 3
)

// IB_SYNC_MEM_CLIENT_F_*
const (
	// FlagLazy: sync only when the client was marked dirty (by its
	// driver, or Conn.MarkDirty).
	FlagLazy ClientFlags = 1 << 0
	// FlagOwned: the client dies with the netlink socket that created it.
	FlagOwned ClientFlags = 1 << 1
	// FlagFile: an open file of /dev/ib_sync_mem took the client over
	// (syncdev.Device.Own), and the client dies when that file is
	// released; it replaces FlagOwned, the socket no longer owning it.
	// Reported only: Register does not accept it.
	FlagFile ClientFlags = 1 << 2
)

// enum ib_sync_mem_client_state
const (
	StateLive        State = 1
	StateInvalidated State = 2
)

// enum ib_sync_mem_inval_reason
const (
	ReasonDevice InvalReason = 1 // its device went away
	ReasonMemory InvalReason = 2 // its memory went away
)

// enum ib_sync_mem_origin
const (
	OriginKernel  Origin = 1 // registered by a kernel driver
	OriginNetlink Origin = 2 // registered with IB_SYNC_MEM_CMD_CLIENT_NEW
	OriginDevice  Origin = 3 // registered with IB_SYNC_MEM_IOC_CREATE
)

// Event types are the commands the kernel multicasts on EventsGroup.
const (
	EventClientNew         = EventType(cmdClientNew)
	EventClientDel         = EventType(cmdClientDel)
	EventClientInvalidated = EventType(cmdClientInvalidated)
	EventDevNew            = EventType(cmdDevNew)
	EventDevDel            = EventType(cmdDevDel)
	EventSyncFailed        = EventType(cmdSyncFailed)
)
