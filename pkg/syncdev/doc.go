// Package syncdev drives ib_sync_mem's data path, the misc character
// device /dev/ib_sync_mem (include/uapi/linux/ib_sync_mem_dev.h describes
// its ioctls): syncs of one client, of a batch of clients or of a device
// from a program's hot path, without a netlink round trip, and
// asynchronous syncs that return a dma_fence as a sync_file.
//
// The generic netlink family (pkg/genl) creates, lists and deletes the
// clients; this device knows the same client ids, directions
// (genl.Direction) and device indexes (genl.Device.Index).
//
//	d, err := syncdev.Open("") // DefaultPath
//	defer d.Close()
//	err = d.Sync(syncdev.SyncRequest{ID: cl.ID, Dir: genl.DirToDevice})
//	f, err := d.SyncAsync(syncdev.SyncRequest{ID: cl.ID, Dir: genl.DirToCPU})
//	defer f.Close()
//	err = f.Wait(ctx) // nil, or the sync's errno (syscall.Errno)
//	res, err := d.SyncBatch(syncdev.BatchRequest{Entries: []syncdev.BatchEntry{{ID: a}, {ID: b}},
//		Dir: genl.DirToDevice}) // res.Errs: each entry's errno, 0 if it succeeded
//
// A fence can gate another sync: with InFence set, the kernel waits for it
// before running the sync (IB_SYNC_MEM_IOC_F_IN_FENCE), and a fence that
// signalled with an error fails the sync with that error. NewFence wraps
// a sync_file from elsewhere (another driver's) for the same use.
//
// A Device may take over clients created through the family (Own): the
// kernel then deletes them when the Device is closed or the program dies,
// and no longer when the genl.Conn that registered them with
// genl.FlagOwned is closed. They report genl.FlagFile.
//
//	cl, err := c.Register(ctx, genl.RegisterRequest{Device: "rxe0", Name: "buf0", Kind: genl.KindSim})
//	err = d.Own(cl.ID) // deleted by d.Close(), or at the program's death
//
// Nop is open to whoever opened the device; every other call needs
// CAP_NET_ADMIN in the initial user namespace, judged by the credentials
// of the process that opened the device. Errors of the kernel are of type
// *Error: errors.Is matches the errno and pkg/genl's sentinel for it
// (genl.ErrNotFound for ENOENT, ...), errors.As finds the syscall.Errno.
// Requests this package cannot encode are refused with genl.ErrInvalid
// before reaching the kernel.
package syncdev
