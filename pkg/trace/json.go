package trace

import (
	"encoding/json"
	"time"

	"github.com/syncmem/syncmem/pkg/hist"
)

// Report is the JSON form of a Snapshot (syncmemctl trace -j): raw
// buckets and error counts. Bucket bounds are in Unit, inclusive; the
// last bucket's (slot 31) high is null: it is open-ended.
type Report struct {
	Unit       string        `json:"unit"`
	Start      time.Time     `json:"start"`
	End        time.Time     `json:"end"`
	Histograms []ReportHist  `json:"histograms"`
	Errors     []ReportError `json:"errors"`
	Dropped    uint64        `json:"dropped"`
}

// ReportSeries identifies a histogram or error count in a Report.
type ReportSeries struct {
	Dev      string `json:"dev"` // "" when the name is unknown
	DevIndex uint32 `json:"dev_index"`
	Kind     string `json:"kind"` // "client", "pass" or "refused"
	ID       uint32 `json:"id"`   // the client; 0: all clients, or a pass
	Dir      string `json:"dir"`  // "to-device", "to-cpu", "bidirectional", "inbound"
}

// ReportHist is one histogram. Buckets run from slot 0 to the highest
// non-empty slot, empty ones included, with the fields of every
// histogram syncmemctl prints (pkg/hist's JSON, as in stats -j).
type ReportHist struct {
	ReportSeries
	Count   uint64            `json:"count"`
	TotalNs uint64            `json:"total_ns"`
	Buckets []hist.JSONBucket `json:"buckets"`
}

// ReportError counts failures of one series with one errno.
type ReportError struct {
	ReportSeries
	Err   string `json:"err"` // the errno's name: "EIO"
	Count uint64 `json:"count"`
}

func reportSeries(s Series) ReportSeries {
	return ReportSeries{Dev: s.DevName, DevIndex: s.Dev, Kind: s.Kind.String(),
		ID: s.Client, Dir: s.Dir.String()}
}

// Report converts s to its JSON form.
func (s *Snapshot) Report() Report {
	r := Report{Unit: s.Unit.String(), Start: s.Since, End: s.Time, Dropped: s.Dropped,
		Histograms: []ReportHist{}, Errors: []ReportError{}}
	for _, h := range s.Hists {
		rh := ReportHist{ReportSeries: reportSeries(h.Series), Count: h.Count,
			TotalNs: h.TotalNs, Buckets: h.Log2.JSON().Buckets}
		r.Histograms = append(r.Histograms, rh)
	}
	for _, e := range s.Errors {
		r.Errors = append(r.Errors, ReportError{ReportSeries: reportSeries(e.Series),
			Err: ErrnoName(e.Errno), Count: e.Count})
	}
	return r
}

// MarshalJSON encodes s as its Report.
func (s *Snapshot) MarshalJSON() ([]byte, error) { return json.Marshal(s.Report()) }
