package trace

import (
	"reflect"
	"syscall"
	"testing"

	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
)

func TestUnits(t *testing.T) {
	const ns = 1_500_000 // a 1.5 ms sync
	cases := []struct {
		u    Unit
		name string
		div  uint64
		val  uint64
		slot int
	}{
		{Nanoseconds, "nsecs", 1, 1_500_000, 20},
		{Microseconds, "usecs", 1000, 1500, 10},
		{Milliseconds, "msecs", 1_000_000, 1, 0},
	}
	for _, c := range cases {
		if c.u.String() != c.name || c.u.Divisor() != c.div || c.u.FromNs(ns) != c.val ||
			hist.Bucket(c.u.FromNs(ns)) != c.slot {
			t.Errorf("%v: name %q div %d value %d slot %d; want %q %d %d %d", c.u, c.u.String(),
				c.u.Divisor(), c.u.FromNs(ns), hist.Bucket(c.u.FromNs(ns)), c.name, c.div, c.val, c.slot)
		}
	}
	var zero Unit
	if zero != Nanoseconds {
		t.Error("the zero Unit is not nanoseconds, pkg/hist's")
	}
}

func TestNames(t *testing.T) {
	if genl.DirToDevice.String() != "to-device" || genl.DirToCPU.String() != "to-cpu" ||
		genl.DirBidirectional.String() != "bidirectional" || genl.DirInbound.String() != "inbound" ||
		genl.Direction(9).String() != "dir-9" {
		t.Error("Dir names")
	}
	if KindClient.String() != "client" || KindPass.String() != "pass" || KindRefused.String() != "refused" {
		t.Error("Kind names")
	}
	if ErrnoName(syscall.EIO) != "EIO" || ErrnoName(syscall.Errno(4000)) != "errno 4000" {
		t.Errorf("ErrnoName: %q %q", ErrnoName(syscall.EIO), ErrnoName(syscall.Errno(4000)))
	}
	if n := ErrnoName(syscall.Errno(95)); n != "EOPNOTSUPP" {
		t.Errorf("ErrnoName(95) = %q, want EOPNOTSUPP, the kernel's name", n)
	}
}

func TestSub(t *testing.T) {
	a := Series{Dev: 1, Kind: KindClient, Client: 3, Dir: genl.DirToCPU}
	b := Series{Dev: 1, Kind: KindClient, Client: 4, Dir: genl.DirToCPU}
	prev := &Snapshot{Since: t0, Time: t0, Dropped: 1,
		Hists: []Hist{
			{Series: a, Log2: hist.Log2{Counts: []uint64{1, 2}}, Count: 3, TotalNs: 30},
			{Series: b, Log2: hist.Log2{Counts: []uint64{0, 0, 5}}, Count: 5, TotalNs: 50},
		},
		Errors: []ErrorCount{{Series: a, Errno: syscall.EIO, Count: 1}},
	}
	cur := &Snapshot{Since: t0, Time: t1, Dropped: 4,
		Hists: []Hist{
			{Series: a, Log2: hist.Log2{Counts: []uint64{1, 2, 0, 7}}, Count: 10, TotalNs: 100},
			{Series: b, Log2: hist.Log2{Counts: []uint64{0, 0, 5}}, Count: 5, TotalNs: 50},
		},
		Errors: []ErrorCount{
			{Series: a, Errno: syscall.EIO, Count: 3},
			{Series: b, Errno: syscall.EAGAIN, Count: 2},
		},
	}
	d := cur.Sub(prev)
	want := &Snapshot{Since: t0, Time: t1, Dropped: 3,
		Hists: []Hist{{Series: a, Log2: hist.Log2{Counts: []uint64{0, 0, 0, 7}}, Count: 7, TotalNs: 70}},
		Errors: []ErrorCount{
			{Series: a, Errno: syscall.EIO, Count: 2},
			{Series: b, Errno: syscall.EAGAIN, Count: 2},
		},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Sub:\n got %+v\nwant %+v", d, want)
	}
	if got := cur.Sub(nil); !reflect.DeepEqual(got.Hists, cur.Hists) || got.Since != t0 {
		t.Errorf("Sub(nil) = %+v", got)
	}
	if h := cur.Find(1, KindClient, 4, genl.DirToCPU); h == nil || h.Count != 5 {
		t.Errorf("Find: %+v", h)
	}
	if cur.Find(1, KindPass, 0, genl.DirToCPU) != nil {
		t.Error("Find found a missing series")
	}
}
