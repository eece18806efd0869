// Command nlbench measures ib_sync_mem's generic netlink family from Go,
// through pkg/genl, each figure beside its floor, for `make bench`.
//
//	nlbench -suite rtt    one-client sync round trips against nlctrl
//	                      GETFAMILY round trips on the same kind of socket
//	nlbench -suite batch  one sync request for N clients against N requests
//	                      of one client each
//	nlbench -suite memory kernel memory per client: /proc/slabinfo before
//	                      and after registering N in-kernel no-op clients
//	                      (through the bench module), N sim clients and
//	                      N/10 one-page region clients
//
// Each repeat prints one line, "SUITE key=value ...", in the format of
// the in-kernel bench module, for bench/report.py. It needs CAP_NET_ADMIN,
// the module and its sim client kind (ib_sync_mem_sim) loaded, and creates
// and deletes its own clients.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mdlayher/genetlink"

	"github.com/syncmem/syncmem/pkg/genl"
)

// ctx is the context of every request: the bench runs to its end.
var ctx = context.Background()

func main() {
	var (
		suite = flag.String("suite", "", "rtt, batch or memory")
		dev   = flag.String("dev", "rxe0", "RDMA device to register clients on")
		iters = flag.Int("iters", 2000, "round trips per repeat (rtt)")
		reps  = flag.Int("reps", 5, "repeats")
		n     = flag.Int("n", 1000, "clients (batch, memory)")
		only  = flag.String("only", "", "batch: time only the batch (\"batch\") or only the singles (\"singles\"), for a profile; the line reports 0 for the other")
	)
	flag.Parse()
	if *iters <= 0 || *reps <= 0 || *n <= 0 {
		fatalf("-iters, -reps and -n must be positive")
	}
	c, err := genl.Dial()
	if err != nil {
		fatalf("%v", err)
	}
	defer c.Close()

	b := &bench{c: c, dev: *dev}
	defer b.cleanup()
	switch *suite {
	case "rtt":
		err = b.rtt(*iters, *reps)
	case "batch":
		err = b.batch(*n, *reps, *only)
	case "memory":
		err = b.memory(*n)
	default:
		err = fmt.Errorf("unknown -suite %q (rtt, batch, memory)", *suite)
	}
	if err != nil {
		b.cleanup()
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "nlbench: "+format+"\n", args...)
	os.Exit(1)
}

type bench struct {
	c       *genl.Conn
	dev     string
	clients []uint32
}

// sims registers n sim clients whose sync returns at once.
func (b *bench) sims(n int) ([]uint32, error) {
	zero := time.Duration(0)
	ids := make([]uint32, 0, n)
	for i := 0; i < n; i++ {
		cl, err := b.c.Register(ctx, genl.RegisterRequest{
			Device: b.dev, Name: fmt.Sprintf("bench%d", i), Kind: genl.KindSim,
			Sim: &genl.SimConfig{Latency: &zero},
		})
		if err != nil {
			return nil, fmt.Errorf("register sim client %d of %d: %w", i+1, n, err)
		}
		ids = append(ids, cl.ID)
		b.clients = append(b.clients, cl.ID)
	}
	return ids, nil
}

func (b *bench) cleanup() {
	for _, id := range b.clients {
		if err := b.c.Unregister(ctx, id); err != nil {
			fmt.Fprintf(os.Stderr, "nlbench: unregister %d: %v\n", id, err)
		}
	}
	b.clients = nil
}

func (b *bench) sync(ids []uint32) error {
	res, err := b.c.Sync(ctx, genl.SyncRequest{Clients: ids, Dir: genl.DirToDevice})
	if err != nil {
		return err
	}
	if res.Run != uint32(len(ids)) || res.Err != 0 {
		return fmt.Errorf("sync of %d clients ran %d, error %d", len(ids), res.Run, res.Err)
	}
	return nil
}

// rtt: the floor is the cheapest generic netlink request there is that
// still goes through the genetlink core and back, nlctrl's GETFAMILY.
func (b *bench) rtt(iters, reps int) error {
	ids, err := b.sims(1)
	if err != nil {
		return err
	}
	floor, err := genetlink.Dial(nil)
	if err != nil {
		return fmt.Errorf("open generic netlink socket: %w", err)
	}
	defer floor.Close()

	getFamily := func() error {
		_, err := floor.GetFamily("ib_sync_mem")
		return err
	}
	syncOne := func() error { return b.sync(ids) }
	// Warm-up.
	for i := 0; i < 100; i++ {
		if err := syncOne(); err != nil {
			return err
		}
		if err := getFamily(); err != nil {
			return err
		}
	}
	for r := 0; r < reps; r++ {
		syncNS, err := timeN(iters, syncOne)
		if err != nil {
			return err
		}
		floorNS, err := timeN(iters, getFamily)
		if err != nil {
			return err
		}
		fmt.Printf("netlink_rtt rep=%d iters=%d sync_ns=%d getfamily_ns=%d\n",
			r, iters, syncNS, floorNS)
	}
	return nil
}

// batch: one request naming n clients against n requests of one.
func (b *bench) batch(n, reps int, only string) error {
	if only != "" && only != "batch" && only != "singles" {
		return fmt.Errorf("-only %q: batch or singles", only)
	}
	ids, err := b.sims(n)
	if err != nil {
		return err
	}
	batchOnce := func() error { return b.sync(ids) }
	singles := func() error {
		for _, id := range ids {
			if err := b.sync([]uint32{id}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := batchOnce(); err != nil {
		return err
	}
	if err := singles(); err != nil {
		return err
	}
	for r := 0; r < reps; r++ {
		var batchNS, singlesNS int64
		if only != "singles" {
			if batchNS, err = timeN(1, batchOnce); err != nil {
				return err
			}
		}
		if only != "batch" {
			if singlesNS, err = timeN(1, singles); err != nil {
				return err
			}
		}
		fmt.Printf("netlink_batch rep=%d n=%d batch_ns=%d singles_ns=%d\n",
			r, n, batchNS, singlesNS)
	}
	return nil
}

func timeN(n int, f func() error) (int64, error) {
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if err := f(); err != nil {
			return 0, err
		}
	}
	return time.Since(t0).Nanoseconds(), nil
}

// memory: what the kernel holds per client, as the slab allocator and the
// per-CPU allocator account it, summed over every cache (a cache may be
// merged with others of its size and not show under its own name).
func (b *bench) memory(n int) error {
	measure := func(kind string, n int, add func() error, extra string) error {
		slab0, err := kmem()
		if err != nil {
			return err
		}
		if err := add(); err != nil {
			return err
		}
		slab1, err := kmem()
		if err != nil {
			return err
		}
		var total int64
		var grew []string
		for name, bytes := range slab1 {
			d := bytes - slab0[name]
			total += d
			if d >= int64(n)*8 {
				grew = append(grew, fmt.Sprintf("%s:%d", name, d/int64(n)))
			}
		}
		sort.Strings(grew)
		fmt.Printf("memory kind=%s n=%d slab_bytes=%d%s grew=%s\n",
			kind, n, total/int64(n), extra, strings.Join(grew, ","))
		return nil
	}

	// The registry's own: clients with no private data, from the kernel.
	const benchRun = "/sys/kernel/debug/ib_sync_mem_bench/run"
	hold := func() error {
		return os.WriteFile(benchRun, []byte(fmt.Sprintf("hold %d", n)), 0)
	}
	if err := measure("kernel", n, hold, ""); err != nil {
		return fmt.Errorf("%w (is ib_sync_mem_bench loaded?)", err)
	}
	if err := os.WriteFile(benchRun, []byte("release"), 0); err != nil {
		return err
	}

	if err := measure("sim", n, func() error { _, err := b.sims(n); return err }, ""); err != nil {
		return err
	}
	b.cleanup()

	// Region clients of one page each: their sg table is one entry.
	regions := n / 10
	if regions == 0 {
		regions = 1
	}
	var mems [][]byte
	defer func() {
		b.cleanup()
		for _, m := range mems {
			_ = genl.FreeRegion(m)
		}
	}()
	addRegions := func() error {
		page := os.Getpagesize()
		for i := 0; i < regions; i++ {
			m, err := genl.AllocRegion(page)
			if err != nil {
				return err
			}
			mems = append(mems, m)
			m[0] = 1 // fault the page in: pinning it is not its allocation
			cl, err := b.c.RegisterRegion(ctx, b.dev, fmt.Sprintf("region%d", i), m, genl.RegionWrite, 0)
			if err != nil {
				return fmt.Errorf("register region client %d of %d: %w", i+1, regions, err)
			}
			b.clients = append(b.clients, cl.ID)
		}
		return nil
	}
	return measure("region", regions, addRegions, " sg_entries=1")
}

// kmem reads the bytes in use per slab cache.
func kmem() (map[string]int64, error) {
	f, err := os.Open("/proc/slabinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	slab := map[string]int64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 4 || strings.HasPrefix(fields[0], "#") || fields[0] == "slabinfo" {
			continue
		}
		active, err1 := strconv.ParseInt(fields[1], 10, 64)
		size, err2 := strconv.ParseInt(fields[3], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/slabinfo: cannot parse %q", s.Text())
		}
		slab[fields[0]] += active * size
	}
	return slab, s.Err()
}
