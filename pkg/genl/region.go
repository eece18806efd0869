package genl

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MaxRegionLen is the largest region client the kernel registers: 1 GiB.
const MaxRegionLen = 1 << 30

// RegisterRegion registers mem, memory of the calling process, as a region
// client named name on device dev. The kernel pins its pages (counted
// against RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK) and DMA-maps
// them on the device until the client is deleted; syncing the client makes
// them coherent for the CPU or the device. access is 0 when the device only
// reads the memory, RegionWrite when it writes it. It needs CAP_NET_ADMIN.
//
// mem may start and end anywhere, as a buffer a program allocated does:
// 1 byte to MaxRegionLen; an empty or longer one fails with ErrInvalid
// before the kernel is asked. The kernel pins and maps the whole pages that
// hold mem (PinnedPages counts them), and a sync moves mem's bytes and no
// others of those pages; a range's offset counts from mem[0]. Memory from
// AllocRegion, or unix.Mmap of a file (a memfd or tmpfs file takes any
// access; recent kernels refuse RegionWrite on a shared mapping of a file
// on a disk filesystem), has pages of its own.
//
// The memory must stay mapped as long as the client is live. Unmapping it
// (FreeRegion, unix.Munmap, also in part) or exiting invalidates the
// client: the kernel unpins the pages, the client reports
// StateInvalidated with ReasonMemory and syncs of it fail with an error
// matching syscall.ENXIO, until Unregister deletes it. madvise(MADV_DONTNEED)
// does not: like an ib_umem, the client keeps the pages it pinned. Go's garbage
// collector does not move heap memory, but it reuses and may return to the
// OS the memory of a slice that is no longer referenced: a heap slice must
// stay reachable until the client is deleted, and memory from AllocRegion
// is safer, since only FreeRegion releases it.
//
// With FlagOwned in flags the client is deleted when c is closed.
func (c *Conn) RegisterRegion(ctx context.Context, dev, name string, mem []byte, access RegionAccess, flags ClientFlags) (*Client, error) {
	addr, err := checkRegion(mem)
	if err != nil {
		return nil, fmt.Errorf("register client %s: %w", name, err)
	}
	cl, err := c.Register(ctx, RegisterRequest{
		Device: dev, Name: name, Kind: KindRegion, Flags: flags,
		Region: &RegionConfig{Addr: addr, Len: uint64(len(mem)), Access: access},
	})
	// The request carried mem's address as a number: mem must not become
	// unreachable (and its memory reused) before the kernel pinned it.
	runtime.KeepAlive(mem)
	return cl, err
}

// checkRegion checks that mem can be a region and returns its address.
func checkRegion(mem []byte) (uint64, error) {
	if len(mem) == 0 {
		return 0, invalidf("region is empty: it must be 1 byte to 1 GiB")
	}
	if len(mem) > MaxRegionLen {
		return 0, invalidf("region length %d is over the kernel's limit of 1 GiB", len(mem))
	}
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem)))), nil
}

// AllocRegion maps size bytes of anonymous, zeroed, page-aligned memory
// for RegisterRegion, pages that nothing else uses. size must be a positive
// multiple of the page size (os.Getpagesize); a region client takes 1 byte
// to MaxRegionLen, anywhere.
//
// The memory is outside Go's heap: the garbage collector neither moves nor
// frees it, and it stays mapped until FreeRegion.
func AllocRegion(size int) ([]byte, error) {
	page := os.Getpagesize()
	if size <= 0 || size%page != 0 {
		return nil, fmt.Errorf("allocate region: %w",
			invalidf("size %d is not a positive multiple of the page size %d", size, page))
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("allocate region of %d bytes: mmap: %w", size, err)
	}
	return mem, nil
}

// FreeRegion unmaps memory that AllocRegion returned (or that unix.Mmap
// mapped: the whole slice it returned). mem must not be used afterwards.
//
// A live region client on that memory is invalidated by the kernel shortly
// after, asynchronously: it then reports StateInvalidated with
// ReasonMemory and no pinned pages, and syncs of it fail with an error
// matching syscall.ENXIO. It stays registered until Unregister deletes it
// (or, with FlagOwned, until its Conn is closed). Unregister before
// FreeRegion to delete it without the invalidation.
func FreeRegion(mem []byte) error {
	if err := unix.Munmap(mem); err != nil {
		return fmt.Errorf("free region: munmap: %w", err)
	}
	return nil
}

// RegisterDMABuf registers the dma-buf behind file descriptor fd of the
// calling process as a client named name on device dev. The kernel takes
// its own reference on the buffer, attaches it to the device and maps it
// until the client is deleted, so fd may be closed once RegisterDMABuf
// returns. It needs CAP_NET_ADMIN. An fd that is not a dma-buf fails with
// an error matching syscall.EBADF.
//
// Syncing the client waits for the buffer's implicit fences and brackets
// CPU access (see Conn.Sync and the UAPI header). With FlagOwned in flags
// the client is deleted when c is closed.
func (c *Conn) RegisterDMABuf(ctx context.Context, dev, name string, fd int, flags ClientFlags) (*Client, error) {
	if fd < 0 || fd > math.MaxInt32 {
		return nil, fmt.Errorf("register client %s: %w", name, invalidf("dma-buf fd %d is out of range", fd))
	}
	return c.Register(ctx, RegisterRequest{
		Device: dev, Name: name, Kind: KindDMABuf, Flags: flags,
		DMABuf: &DMABufConfig{FD: int32(fd)},
	})
}
