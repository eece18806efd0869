// Package hist is the log2 histogram of sync times that ib_sync_mem's
// statistics (pkg/genl), the eBPF tracer (pkg/trace), syncmemctl and its
// Prometheus exporter share: one bucket layout, one text printer in the
// layout of the libbpf-tools, one JSON form.
//
// Bucket i counts values v with 2^i <= v < 2^(i+1) in the histogram's
// unit, bucket 0 also 0; the last bucket, Buckets-1, is open-ended: every
// v >= 2^31. The kernel's statistics (IB_SYNC_MEM_A_HIST_LOG2) and the
// tracer's BPF programs count in exactly these buckets.
package hist

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"strings"
)

// Buckets is the number of buckets; the last one is open-ended.
const Buckets = 32

// Bucket is the bucket of v: floor(log2(v)), 0 for 0 and 1, and the last
// bucket for everything from 2^(Buckets-1) on.
func Bucket(v uint64) int {
	if v == 0 {
		return 0
	}
	return min(bits.Len64(v)-1, Buckets-1)
}

// Bounds are the values bucket i holds: lo <= v <= hi, or v >= lo when
// open (the last bucket).
func Bounds(i int) (lo, hi uint64, open bool) {
	switch {
	case i <= 0:
		return 0, 1, false
	case i >= Buckets-1:
		return 1 << (Buckets - 1), 0, true
	}
	return 1 << i, 1<<(i+1) - 1, false
}

// Unit is the unit of a histogram's values: what a bucket's bounds are
// powers of two of. The zero value is nanoseconds, the kernel's.
type Unit int

const (
	Nanoseconds Unit = iota
	Microseconds
	Milliseconds
)

// String is the libbpf-tools column name: "nsecs", "usecs" or "msecs".
func (u Unit) String() string {
	switch u {
	case Microseconds:
		return "usecs"
	case Milliseconds:
		return "msecs"
	}
	return "nsecs"
}

// Divisor is the number of nanoseconds in one unit.
func (u Unit) Divisor() uint64 {
	switch u {
	case Microseconds:
		return 1000
	case Milliseconds:
		return 1000 * 1000
	}
	return 1
}

// FromNs converts ns to the unit, truncating, as the kernel and the BPF
// programs do before taking the bucket.
func (u Unit) FromNs(ns uint64) uint64 { return ns / u.Divisor() }

// Log2 is a log2 histogram: Counts[i] is the count of bucket i. Empty
// buckets past the last used one may be left out.
type Log2 struct {
	Unit   Unit
	Counts []uint64
}

// Add counts n values in bucket i (the last bucket for any i past it).
func (h *Log2) Add(i int, n uint64) {
	i = min(max(i, 0), Buckets-1)
	if i >= len(h.Counts) {
		h.Counts = append(h.Counts, make([]uint64, i+1-len(h.Counts))...)
	}
	h.Counts[i] += n
}

// Count is the number of values counted.
func (h Log2) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Trim leaves out the empty buckets past the last used one.
func (h Log2) Trim() Log2 {
	n := len(h.Counts)
	for n > 0 && h.Counts[n-1] == 0 {
		n--
	}
	h.Counts = h.Counts[:n:n]
	return h
}

// Sub is what was counted since prev, bucket by bucket (never below 0).
func (h Log2) Sub(prev Log2) Log2 {
	d := Log2{Unit: h.Unit, Counts: make([]uint64, len(h.Counts))}
	for i, c := range h.Counts {
		if i < len(prev.Counts) {
			c -= min(prev.Counts[i], c)
		}
		d.Counts[i] = c
	}
	return d.Trim()
}

// WriteText prints h the way libbpf-tools' print_log2_hist() does, from
// bucket 0 to the last non-empty one; the last bucket's row reads
// "2147483648 -> inf". An empty histogram prints nothing.
//
//	nsecs               : count    distribution
//	    0 -> 1          : 0        |                                        |
//	    2 -> 3          : 5        |****************************************|
func WriteText(w io.Writer, h Log2) error {
	h = h.Trim()
	if len(h.Counts) == 0 {
		return nil
	}
	var most uint64
	for _, c := range h.Counts {
		most = max(most, c)
	}
	const width, stars = 10, 40
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%5s%-19s : count    distribution\n", "", h.Unit)
	for i, c := range h.Counts {
		lo, hi, open := Bounds(i)
		high := fmt.Sprint(hi)
		if open {
			high = "inf"
		}
		n := 0
		if most > 0 {
			n = int(c * stars / most)
		}
		fmt.Fprintf(bw, "%*d -> %-*s : %-8d |%s%s|\n", width, lo, width, high, c,
			strings.Repeat("*", n), strings.Repeat(" ", stars-n))
	}
	return bw.Flush()
}

// JSON is the JSON form of a histogram, the same in every command: its
// unit and the buckets from 0 to the last non-empty one.
type JSON struct {
	Unit    string       `json:"unit"`
	Buckets []JSONBucket `json:"buckets"`
}

// JSONBucket is one bucket: values low <= v <= high in the unit; high is
// null for the open-ended last bucket.
type JSONBucket struct {
	Slot  int     `json:"slot"`
	Low   uint64  `json:"low"`
	High  *uint64 `json:"high"`
	Count uint64  `json:"count"`
}

// JSON converts h to its JSON form.
func (h Log2) JSON() JSON {
	h = h.Trim()
	j := JSON{Unit: h.Unit.String(), Buckets: make([]JSONBucket, 0, len(h.Counts))}
	for i, c := range h.Counts {
		lo, hi, open := Bounds(i)
		b := JSONBucket{Slot: i, Low: lo, Count: c}
		if !open {
			b.High = &hi
		}
		j.Buckets = append(j.Buckets, b)
	}
	return j
}

// MarshalJSON encodes h as its JSON form.
func (h Log2) MarshalJSON() ([]byte, error) { return json.Marshal(h.JSON()) }
