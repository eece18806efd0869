package main

// The wire numbers, from their one source: ib_sync_mem's UAPI header,
// through cgo (the header has no includes), and the kernel's netlink
// headers, through x/sys/unix. Nothing is copied by hand.

// #cgo CFLAGS: -I${SRCDIR}/../../../kmod/include/uapi
// #include <linux/ib_sync_mem.h>
import "C"

import "golang.org/x/sys/unix"

const (
	cmdDevGet      = C.IB_SYNC_MEM_CMD_DEV_GET
	cmdClientNew   = C.IB_SYNC_MEM_CMD_CLIENT_NEW
	cmdClientDel   = C.IB_SYNC_MEM_CMD_CLIENT_DEL
	cmdClientGet   = C.IB_SYNC_MEM_CMD_CLIENT_GET
	cmdSync        = C.IB_SYNC_MEM_CMD_SYNC
	cmdStatsGet    = C.IB_SYNC_MEM_CMD_STATS_GET
	cmdMarkDirty   = C.IB_SYNC_MEM_CMD_MARK_DIRTY
	cmdMaxKnown    = C.IB_SYNC_MEM_CMD_MAX
	aDevIndex      = C.IB_SYNC_MEM_A_DEV_INDEX
	aDevName       = C.IB_SYNC_MEM_A_DEV_NAME
	aClientID      = C.IB_SYNC_MEM_A_CLIENT_ID
	aClientName    = C.IB_SYNC_MEM_A_CLIENT_NAME
	aClientKind    = C.IB_SYNC_MEM_A_CLIENT_KIND
	aClientFlags   = C.IB_SYNC_MEM_A_CLIENT_FLAGS
	aOwnerPortID   = C.IB_SYNC_MEM_A_CLIENT_OWNER_PORTID
	aOwnerPID      = C.IB_SYNC_MEM_A_CLIENT_OWNER_PID
	aClientInfo    = C.IB_SYNC_MEM_A_CLIENT_INFO
	aSim           = C.IB_SYNC_MEM_A_SIM
	aSyncDir       = C.IB_SYNC_MEM_A_SYNC_DIR
	aSyncTimeoutMS = C.IB_SYNC_MEM_A_SYNC_TIMEOUT_MS
	aSyncClients   = C.IB_SYNC_MEM_A_SYNC_CLIENTS
	aSyncOffset    = C.IB_SYNC_MEM_A_SYNC_OFFSET
	aSyncLen       = C.IB_SYNC_MEM_A_SYNC_LEN
	aRegion        = C.IB_SYNC_MEM_A_REGION
	aDmabuf        = C.IB_SYNC_MEM_A_DMABUF
	aMax           = C.IB_SYNC_MEM_A_MAX
	simLatencyUS   = C.IB_SYNC_MEM_A_SIM_LATENCY_US
	simFailNext    = C.IB_SYNC_MEM_A_SIM_FAIL_NEXT
	simFailErrno   = C.IB_SYNC_MEM_A_SIM_FAIL_ERRNO
	simSize        = C.IB_SYNC_MEM_A_SIM_SIZE
	simBatch       = C.IB_SYNC_MEM_A_SIM_BATCH
	regionAddr     = C.IB_SYNC_MEM_A_REGION_ADDR
	regionLen      = C.IB_SYNC_MEM_A_REGION_LEN
	regionAccess   = C.IB_SYNC_MEM_A_REGION_ACCESS
	dmabufFD       = C.IB_SYNC_MEM_A_DMABUF_FD
	// dirLast is the highest sync direction (inbound); the valid ones
	// are 1 to dirLast.
	dirLast = C.IB_SYNC_MEM_SYNC_INBOUND
	// batchMax is the kernel's limit, whose edges the fuzzer probes;
	// hugeBatch is far past it, past what a 16-bit nla_len can say.
	batchMax  = C.IB_SYNC_MEM_SYNC_BATCH_MAX
	hugeBatch = 65536

	nlaFNested      = unix.NLA_F_NESTED
	nlaFNetByteord  = unix.NLA_F_NET_BYTEORDER
	nlmFRoot        = unix.NLM_F_ROOT
	nlmFMatch       = unix.NLM_F_MATCH
	nlmFDump        = unix.NLM_F_DUMP
	nlmFDumpIntr    = unix.NLM_F_DUMP_INTR
	netlinkCapAck   = unix.NETLINK_CAP_ACK
	netlinkExtAck   = unix.NETLINK_EXT_ACK
	netlinkStrictCk = unix.NETLINK_GET_STRICT_CHK
)
