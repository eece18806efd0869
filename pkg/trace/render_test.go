package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syncmem/syncmem/pkg/genl"
	"github.com/syncmem/syncmem/pkg/hist"
)

var (
	t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 = t0.Add(10 * time.Second)
)

func sampleSnapshot() *Snapshot {
	dev := func(k Kind, client uint32) Series {
		return Series{Dev: 0, DevName: "rxe0", Kind: k, Client: client, Dir: genl.DirToDevice}
	}
	return &Snapshot{
		Unit: Microseconds, Since: t0, Time: t1,
		Hists: []Hist{
			{Series: dev(KindPass, 0), Log2: hist.Log2{Counts: []uint64{0, 0, 1}}, Count: 1, TotalNs: 5000},
			{Series: dev(KindClient, 3), Log2: hist.Log2{Counts: []uint64{1, 5, 10}}, Count: 16, TotalNs: 70000},
		},
		Errors: []ErrorCount{
			{Series: dev(KindClient, 3), Errno: syscall.EIO, Count: 2},
			{Series: dev(KindClient, 3), Errno: syscall.ETIMEDOUT, Count: 1},
			{Series: dev(KindRefused, 7), Errno: syscall.ENXIO, Count: 1},
		},
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, sampleSnapshot()); err != nil {
		t.Fatal(err)
	}
	want := `dev rxe0 pass dir to-device
     usecs               : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 0        |                                        |
         4 -> 7          : 1        |****************************************|
count 1, avg 5 usecs, total 5 usecs

dev rxe0 id 3 dir to-device
     usecs               : count    distribution
         0 -> 1          : 1        |****                                    |
         2 -> 3          : 5        |********************                    |
         4 -> 7          : 10       |****************************************|
count 16, avg 4 usecs, total 70 usecs
errors: EIO 2, ETIMEDOUT 1

dev rxe0 id 7 dir to-device (refused before ->sync)
errors: ENXIO 1
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestWriteTextOpenBucket: a sync of 2^31 units or more counts in the
// last bucket, printed open-ended as the kernel's statistics print it.
func TestWriteTextOpenBucket(t *testing.T) {
	h := hist.Log2{}
	h.Add(0, 2)
	h.Add(33, 4) // the BPF side's slot 33: the last bucket
	s := &Snapshot{Unit: Nanoseconds, Hists: []Hist{{
		Series: Series{Dev: 2, Kind: KindClient, Dir: genl.DirBidirectional},
		Log2:   h, Count: 6, TotalNs: 4 * (1 << 33),
	}}, Dropped: 3}
	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"dev #2 id all dir bidirectional",
		"     nsecs               : count    distribution",
		"         0 -> 1          : 2        |********************                    |",
		"         2 -> 3          : 0        |                                        |",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got %q\nwant %q", i, lines[i], w)
		}
	}
	last := "2147483648 -> inf        : 4        |****************************************|"
	if len(lines) < 34 || lines[33] != last {
		t.Fatalf("the last bucket:\n%s\nwant line 33 %q", b.String(), last)
	}
	tail := strings.Join(lines[34:], "\n")
	wantTail := "count 6, avg 5726623061 nsecs, total 34359738368 nsecs\n\n" +
		"WARNING: 3 updates lost, a BPF map was full\n"
	if tail != wantTail {
		t.Errorf("tail:\n got %q\nwant %q", tail, wantTail)
	}
}

func TestWriteTextEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, &Snapshot{}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "no syncs traced\n" {
		t.Errorf("got %q", b.String())
	}
}

func TestJSON(t *testing.T) {
	got, err := json.MarshalIndent(sampleSnapshot(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "unit": "usecs",
  "start": "2025-01-02T03:04:05Z",
  "end": "2025-01-02T03:04:15Z",
  "histograms": [
    {
      "dev": "rxe0",
      "dev_index": 0,
      "kind": "pass",
      "id": 0,
      "dir": "to-device",
      "count": 1,
      "total_ns": 5000,
      "buckets": [
        {
          "slot": 0,
          "low": 0,
          "high": 1,
          "count": 0
        },
        {
          "slot": 1,
          "low": 2,
          "high": 3,
          "count": 0
        },
        {
          "slot": 2,
          "low": 4,
          "high": 7,
          "count": 1
        }
      ]
    },
    {
      "dev": "rxe0",
      "dev_index": 0,
      "kind": "client",
      "id": 3,
      "dir": "to-device",
      "count": 16,
      "total_ns": 70000,
      "buckets": [
        {
          "slot": 0,
          "low": 0,
          "high": 1,
          "count": 1
        },
        {
          "slot": 1,
          "low": 2,
          "high": 3,
          "count": 5
        },
        {
          "slot": 2,
          "low": 4,
          "high": 7,
          "count": 10
        }
      ]
    }
  ],
  "errors": [
    {
      "dev": "rxe0",
      "dev_index": 0,
      "kind": "client",
      "id": 3,
      "dir": "to-device",
      "err": "EIO",
      "count": 2
    },
    {
      "dev": "rxe0",
      "dev_index": 0,
      "kind": "client",
      "id": 3,
      "dir": "to-device",
      "err": "ETIMEDOUT",
      "count": 1
    },
    {
      "dev": "rxe0",
      "dev_index": 0,
      "kind": "refused",
      "id": 7,
      "dir": "to-device",
      "err": "ENXIO",
      "count": 1
    }
  ],
  "dropped": 0
}`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	// An empty snapshot has empty arrays, not nulls.
	empty, err := json.Marshal(&Snapshot{Unit: Microseconds, Since: t0, Time: t1})
	if err != nil {
		t.Fatal(err)
	}
	wantEmpty := `{"unit":"usecs","start":"2025-01-02T03:04:05Z","end":"2025-01-02T03:04:15Z",` +
		`"histograms":[],"errors":[],"dropped":0}`
	if string(empty) != wantEmpty {
		t.Errorf("empty: got %s", empty)
	}

	// It decodes back into Report.
	var r Report
	if err := json.Unmarshal(got, &r); err != nil {
		t.Fatal(err)
	}
	if r.Histograms[1].ID != 3 || r.Histograms[1].Buckets[2].Count != 10 || r.Errors[2].Kind != "refused" {
		t.Errorf("round trip: %+v", r)
	}
}

// TestInbound: a series of direction 4 is named "inbound" in the text and
// the JSON, and sorts after the other directions of the same client.
func TestInbound(t *testing.T) {
	in := Series{Dev: 1, DevName: "mlx5_0", Kind: KindClient, Client: 3, Dir: genl.DirInbound}
	bi := in
	bi.Dir = genl.DirBidirectional
	s := &Snapshot{Unit: Microseconds, Since: t0, Time: t1,
		Hists: []Hist{
			{Series: in, Log2: hist.Log2{Counts: []uint64{0, 2}}, Count: 2, TotalNs: 6000},
			{Series: bi, Log2: hist.Log2{Counts: []uint64{1}}, Count: 1, TotalNs: 1000},
		},
		Errors: []ErrorCount{{Series: in, Errno: syscall.EOPNOTSUPP, Count: 5}},
	}
	s.sort()
	if s.Hists[0].Dir != genl.DirBidirectional || s.Hists[1].Dir != genl.DirInbound {
		t.Errorf("sorted %v, %v; want bidirectional, then inbound", s.Hists[0].Dir, s.Hists[1].Dir)
	}
	if h := s.Find(1, KindClient, 3, genl.DirInbound); h == nil || h.Count != 2 {
		t.Errorf("Find inbound: %+v", h)
	}

	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	want := `dev mlx5_0 id 3 dir bidirectional
     usecs               : count    distribution
         0 -> 1          : 1        |****************************************|
count 1, avg 1 usecs, total 1 usecs

dev mlx5_0 id 3 dir inbound
     usecs               : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 2        |****************************************|
count 2, avg 3 usecs, total 6 usecs
errors: EOPNOTSUPP 5
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(got, &r); err != nil {
		t.Fatal(err)
	}
	wantSeries := ReportSeries{Dev: "mlx5_0", DevIndex: 1, Kind: "client", ID: 3, Dir: "inbound"}
	if len(r.Histograms) != 2 || r.Histograms[1].ReportSeries != wantSeries || r.Histograms[1].Count != 2 ||
		r.Histograms[1].TotalNs != 6000 || len(r.Histograms[1].Buckets) != 2 || r.Histograms[1].Buckets[1].Count != 2 {
		t.Errorf("JSON histograms: %+v", r.Histograms)
	}
	if len(r.Errors) != 1 || r.Errors[0] != (ReportError{ReportSeries: wantSeries, Err: "EOPNOTSUPP", Count: 5}) {
		t.Errorf("JSON errors: %+v", r.Errors)
	}
	if !strings.Contains(string(got), `"dir":"inbound"`) {
		t.Errorf("JSON lacks \"dir\":\"inbound\": %s", got)
	}
}
