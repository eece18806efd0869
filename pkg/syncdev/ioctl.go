package syncdev

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The wire numbers of include/uapi/linux/ib_sync_mem_dev.h and of the
// kernel's linux/sync_file.h. TestIoctlNumbers and TestStructLayouts pin
// them to what the C headers give.

// DefaultPath is the node of the module's misc device.
const DefaultPath = "/dev/" + devName

const (
	devName = "ib_sync_mem" // IB_SYNC_MEM_DEV_NAME

	flagAsync   uint32 = 1 << 0 // IB_SYNC_MEM_IOC_F_ASYNC
	flagInFence uint32 = 1 << 1 // IB_SYNC_MEM_IOC_F_IN_FENCE

	attrsMax = 4096 // IB_SYNC_MEM_IOC_ATTRS_MAX

	iocMagic  = 0xDB // IB_SYNC_MEM_IOC_MAGIC
	syncMagic = '>'  // SYNC_IOC_MAGIC
)

// struct ib_sync_mem_ioc_sync
type iocSync struct {
	ID        uint32
	Dir       uint32
	Offset    uint64
	Len       uint64
	Flags     uint32
	TimeoutMS uint32
	InFence   int32
	OutFence  int32
}

// struct ib_sync_mem_ioc_sync_dev
type iocSyncDev struct {
	DevIndex  uint32
	Dir       uint32
	Flags     uint32
	TimeoutMS uint32
	InFence   int32
	OutFence  int32
	Clients   uint32
	Errors    uint32
	Skipped   uint32
	Err       int32
	Pass      uint64
}

// struct ib_sync_mem_ioc_entry: one client of a batch
type iocEntry struct {
	ID     uint32
	Err    int32
	Offset uint64
	Len    uint64
}

// struct ib_sync_mem_ioc_sync_batch
type iocSyncBatch struct {
	Entries   uint64 // user pointer to N iocEntry
	N         uint32
	Dir       uint32
	Flags     uint32
	TimeoutMS uint32
	InFence   int32
	OutFence  int32
	Run       uint32
	Errors    uint32
}

// struct ib_sync_mem_ioc_mark
type iocMark struct {
	ID     uint32
	Dir    uint32
	Offset uint64
	Len    uint64
}

// struct ib_sync_mem_ioc_own
type iocOwn struct {
	ID    uint32
	Flags uint32 // 0
}

// struct ib_sync_mem_ioc_create
type iocCreate struct {
	Attrs    uint64 // user pointer to AttrsLen bytes of CLIENT_NEW's attributes
	AttrsLen uint32
	Flags    uint32 // 0
	Msg      uint64 // user pointer to MsgLen bytes for the reason of a failure
	MsgLen   uint32
	ID       uint32 // set on success
}

// struct sync_file_info (linux/sync_file.h)
type syncFileInfo struct {
	Name          [32]byte
	Status        int32
	Flags         uint32
	NumFences     uint32
	Pad           uint32
	SyncFenceInfo uint64
}

var (
	reqNop       = ioc(iocNone, iocMagic, 0, 0)                                       // IB_SYNC_MEM_IOC_NOP
	reqSync      = ioc(iocRead|iocWrite, iocMagic, 1, unsafe.Sizeof(iocSync{}))       // IB_SYNC_MEM_IOC_SYNC
	reqSyncDev   = ioc(iocRead|iocWrite, iocMagic, 2, unsafe.Sizeof(iocSyncDev{}))    // IB_SYNC_MEM_IOC_SYNC_DEV
	reqMarkDirty = ioc(iocWrite, iocMagic, 3, unsafe.Sizeof(iocMark{}))               // IB_SYNC_MEM_IOC_MARK_DIRTY
	reqSyncBatch = ioc(iocRead|iocWrite, iocMagic, 4, unsafe.Sizeof(iocSyncBatch{}))  // IB_SYNC_MEM_IOC_SYNC_BATCH
	reqOwn       = ioc(iocWrite, iocMagic, 5, unsafe.Sizeof(iocOwn{}))                // IB_SYNC_MEM_IOC_OWN
	reqCreate    = ioc(iocRead|iocWrite, iocMagic, 6, unsafe.Sizeof(iocCreate{}))     // IB_SYNC_MEM_IOC_CREATE
	reqFileInfo  = ioc(iocRead|iocWrite, syncMagic, 4, unsafe.Sizeof(syncFileInfo{})) // SYNC_IOC_FILE_INFO
)

// ioc is the kernel's _IOC(dir, type, nr, size), in the layout of this
// architecture (ioc_*.go).
func ioc(dir, typ, nr, size uintptr) uintptr {
	return dir<<iocDirShift | size<<iocSizeShift | typ<<iocTypeShift | nr<<iocNrShift
}

const (
	iocNrShift   = 0
	iocTypeShift = 8
	iocSizeShift = 16
)

// ioctl runs one ioctl on fd, arg pointing at its argument (or nil); a
// variable so that tests can stand in for the kernel.
var ioctl = func(fd, req uintptr, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}
