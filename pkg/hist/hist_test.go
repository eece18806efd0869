package hist

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBucket(t *testing.T) {
	for _, tt := range []struct {
		v    uint64
		want int
	}{
		{0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 2}, {1023, 9}, {1024, 10},
		{1<<31 - 1, 30}, {1 << 31, 31}, {1 << 40, 31}, {^uint64(0), 31},
	} {
		if got := Bucket(tt.v); got != tt.want {
			t.Errorf("Bucket(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

// TestBounds: every value falls in the bucket whose bounds hold it, and
// the last bucket is open-ended.
func TestBounds(t *testing.T) {
	for i := range Buckets {
		lo, hi, open := Bounds(i)
		if Bucket(lo) != i || (!open && Bucket(hi) != i) || (!open && Bucket(hi+1) != i+1) {
			t.Errorf("bucket %d: %d..%d (open %v)", i, lo, hi, open)
		}
		if open != (i == Buckets-1) {
			t.Errorf("bucket %d open %v", i, open)
		}
	}
	if lo, _, _ := Bounds(0); lo != 0 {
		t.Errorf("bucket 0 starts at %d", lo)
	}
	if lo, _, open := Bounds(Buckets - 1); lo != 1<<31 || !open {
		t.Errorf("the last bucket: >= %d, open %v; want >= 2^31, open", lo, open)
	}
}

func TestAddSubCount(t *testing.T) {
	var h Log2
	h.Add(3, 2)
	h.Add(0, 1)
	h.Add(40, 1) // past the last bucket: in the last
	if want := []uint64{1, 0, 0, 2}; !cmp.Equal(h.Counts[:4], want) || h.Counts[Buckets-1] != 1 || h.Count() != 4 {
		t.Errorf("%v", h.Counts)
	}
	prev := Log2{Counts: []uint64{1, 0, 0, 1}}
	d := h.Sub(prev)
	if d.Count() != 2 || d.Counts[3] != 1 || d.Counts[0] != 0 {
		t.Errorf("Sub: %v", d.Counts)
	}
	if got := (Log2{Counts: []uint64{1, 2, 0, 0}}).Trim().Counts; !cmp.Equal(got, []uint64{1, 2}) {
		t.Errorf("Trim: %v", got)
	}
}

// TestWriteText: the libbpf-tools layout, the same for the kernel's
// statistics and the tracer's histograms, the last bucket open-ended.
func TestWriteText(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, Log2{Counts: []uint64{2, 0, 1, 4, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	want := `     nsecs               : count    distribution
         0 -> 1          : 2        |********************                    |
         2 -> 3          : 0        |                                        |
         4 -> 7          : 1        |**********                              |
         8 -> 15         : 4        |****************************************|
        16 -> 31         : 0        |                                        |
        32 -> 63         : 1        |**********                              |
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	h := Log2{Unit: Microseconds}
	h.Add(30, 1)
	h.Add(Buckets-1, 3)
	if err := WriteText(&b, h); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "     usecs               : count    distribution" ||
		lines[31] != "1073741824 -> 2147483647 : 1        |*************                           |" ||
		lines[32] != "2147483648 -> inf        : 3        |****************************************|" {
		t.Errorf("got\n%s", b.String())
	}

	b.Reset()
	if err := WriteText(&b, Log2{}); err != nil || b.String() != "" {
		t.Errorf("an empty histogram printed %q (%v)", b.String(), err)
	}
}

// TestJSON: the buckets from 0 to the last non-empty one, bounds in the
// unit, inclusive; the last bucket's high is null.
func TestJSON(t *testing.T) {
	h := Log2{Counts: []uint64{0, 2}}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"unit":"nsecs","buckets":[{"slot":0,"low":0,"high":1,"count":0},{"slot":1,"low":2,"high":3,"count":2}]}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	h = Log2{Unit: Milliseconds}
	h.Add(Buckets-1, 1)
	j := h.JSON()
	last := j.Buckets[len(j.Buckets)-1]
	if j.Unit != "msecs" || len(j.Buckets) != Buckets || last.High != nil || last.Low != 1<<31 || last.Count != 1 {
		t.Errorf("%+v, last %+v", j, last)
	}
	if b, _ := json.Marshal(Log2{}); string(b) != `{"unit":"nsecs","buckets":[]}` {
		t.Errorf("empty: %s", b)
	}
}

func TestUnit(t *testing.T) {
	for _, tt := range []struct {
		u    Unit
		name string
		div  uint64
	}{{Nanoseconds, "nsecs", 1}, {Microseconds, "usecs", 1000}, {Milliseconds, "msecs", 1e6}} {
		if tt.u.String() != tt.name || tt.u.Divisor() != tt.div || tt.u.FromNs(6*tt.div-1) != 5 {
			t.Errorf("%v: %q %d", tt.u, tt.u.String(), tt.u.Divisor())
		}
	}
	var zero Unit
	if zero != Nanoseconds {
		t.Error("the zero Unit is not nanoseconds")
	}
}
