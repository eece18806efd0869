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
//	cl, err := c.Register(genl.RegisterRequest{
//		Device: "rxe0", Name: "buf0", Kind: genl.KindSim,
//	})
//	res, err := c.Sync(genl.SyncRequest{
//		Clients: []uint32{cl.ID}, Dir: genl.DirToDevice,
//		Timeout: new(5 * time.Second),
//	})
//
// Besides sim clients, a program registers memory it owns as a region
// client, pinned and DMA-mapped on the device while the client is live,
// and dma-bufs it holds a file descriptor of:
//
//	mem, err := genl.AllocRegion(64 << 10) // page-aligned, outside Go's heap
//	defer genl.FreeRegion(mem)
//	cl, err := c.RegisterRegion("rxe0", "frames", mem, genl.RegionWrite, genl.FlagOwned)
//	...
//	cl, err = c.RegisterDMABuf("rxe0", "gpu0", fd, 0)
//
// Listing, describing and statistics are open to every user (the sensitive
// attributes are left out for callers without CAP_NET_ADMIN); Register,
// Unregister and Sync need CAP_NET_ADMIN in the initial user namespace.
//
// Errors the kernel returns are of type *Error, which keeps the kernel's
// extended ack message and matches both a sentinel (ErrNotFound,
// ErrNoDevice, ErrPermission, ...) and its errno with errors.Is.
package genl
