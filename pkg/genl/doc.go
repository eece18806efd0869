// Package genl is a client of ib_sync_mem, the kernel's registry of memory
// sync clients per RDMA device, over its generic netlink family
// "ib_sync_mem" (include/uapi/linux/ib_sync_mem.h describes the wire
// format).
//
// Dial resolves the family; a Conn then lists devices and clients,
// registers and unregisters clients, syncs them and reads their
// statistics. Watch follows the module's events on a socket of its own.
//
//	c, err := genl.Dial()
//	if errors.Is(err, genl.ErrNotLoaded) {
//		// the module is not loaded, or this is not the initial netns
//	}
//	defer c.Close()
//	cl, err := c.Register(ctx, genl.RegisterRequest{
//		Device: "rxe0", Name: "buf0", Kind: genl.KindSim,
//	})
//	res, err := c.Sync(ctx, genl.SyncRequest{
//		Clients: []uint32{cl.ID}, Dir: genl.DirToDevice,
//		Timeout: new(5 * time.Second),
//	})
//
// Every call takes a context: one that is done fails the call before
// anything is sent. Once sent, the kernel runs a request to completion;
// the deadline of a Sync's context bounds its waits in the kernel.
//
// Besides sim clients, a program registers memory it owns as a region
// client, pinned and DMA-mapped on the device while the client is live,
// and dma-bufs it holds a file descriptor of:
//
//	mem, err := genl.AllocRegion(64 << 10) // page-aligned, outside Go's heap
//	defer genl.FreeRegion(mem)
//	cl, err := c.RegisterRegion(ctx, "rxe0", "frames", mem, genl.RegionWrite, genl.FlagOwned)
//	...
//	cl, err = c.RegisterDMABuf(ctx, "rxe0", "gpu0", fd, 0)
//
// A lazy client (FlagLazy) is synced only when it owes a sync: MarkDirty
// says which bytes were written and by whom, and its next sync that way
// runs over those bytes only (for kinds that sync ranges: sim, region).
// A Range also syncs part of one client directly:
//
//	err = c.MarkDirty(ctx, cl.ID, genl.DirToDevice, &genl.Range{Offset: 4096, Len: 8192})
//	res, err = c.Sync(ctx, genl.SyncRequest{Clients: []uint32{cl.ID}, Dir: genl.DirToDevice})
//	res, err = c.Sync(ctx, genl.SyncRequest{Clients: []uint32{cl.ID}, Dir: genl.DirToDevice,
//		Range: &genl.Range{Len: 4096}})
//
// Listing, describing and statistics are open to every user (the sensitive
// attributes are left out for callers without CAP_NET_ADMIN); Register,
// Unregister, Sync and MarkDirty need CAP_NET_ADMIN in the initial user
// namespace.
//
// Errors the kernel returns are of type *Error, which keeps the kernel's
// extended ack message and matches both a sentinel (ErrNotFound,
// ErrNoDevice, ErrPermission, ...) and its errno with errors.Is; errors.As
// finds the syscall.Errno. Dumps (Devices, Clients) show one state of the
// registry: one that concurrent changes made inconsistent is run again.
// A Conn outlives a reload of the module: it finds the new family, and
// while the module is gone its calls fail with ErrNotLoaded; Watch follows
// the module across reloads too.
package genl
