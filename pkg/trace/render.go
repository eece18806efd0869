package trace

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/syncmem/syncmem/pkg/hist"
)

// WriteText writes s the way libbpf-tools print log2 histograms (with
// pkg/hist's printer, which syncmemctl stats uses too), one section per
// series, sections separated by an empty line:
//
//	dev rxe0 id 3 dir to-device
//	     usecs               : count    distribution
//	         0 -> 1          : 0        |                                        |
//	         2 -> 3          : 5        |****************************************|
//	count 5, avg 2 usecs, total 12 usecs
//	errors: EIO 2
//
// Device-wide passes come first for each device ("dev rxe0 pass dir
// to-device"); "id all" is every client merged. A series with only
// errors has no histogram. An empty snapshot prints "no syncs traced".
func WriteText(w io.Writer, s *Snapshot) error {
	bw := bufio.NewWriter(w)
	errs := map[seriesKey][]ErrorCount{}
	for _, e := range s.Errors {
		errs[e.key()] = append(errs[e.key()], e)
	}
	first := true
	section := func(ser Series) {
		if !first {
			bw.WriteString("\n")
		}
		first = false
		fmt.Fprintln(bw, SeriesTitle(ser))
	}
	for _, h := range s.Hists {
		section(h.Series)
		h.Log2.Unit = s.Unit
		if err := hist.WriteText(bw, h.Log2); err != nil {
			return err
		}
		fmt.Fprintf(bw, "count %d, avg %d %s, total %d %s\n", h.Count,
			s.Unit.FromNs(h.TotalNs/max(h.Count, 1)), s.Unit, s.Unit.FromNs(h.TotalNs), s.Unit)
		if e := errs[h.key()]; e != nil {
			fmt.Fprintf(bw, "errors: %s\n", errorList(e))
			delete(errs, h.key())
		}
	}
	// Series with errors only, in snapshot order.
	for _, e := range s.Errors {
		list := errs[e.key()]
		if list == nil {
			continue
		}
		section(e.Series)
		fmt.Fprintf(bw, "errors: %s\n", errorList(list))
		delete(errs, e.key())
	}
	if first {
		fmt.Fprintln(bw, "no syncs traced")
	}
	if s.Dropped > 0 {
		fmt.Fprintf(bw, "\nWARNING: %d updates lost, a BPF map was full\n", s.Dropped)
	}
	return bw.Flush()
}

// SeriesTitle is the first line of a series' section.
func SeriesTitle(s Series) string {
	dev := s.DevName
	if dev == "" {
		dev = fmt.Sprintf("#%d", s.Dev)
	}
	var who string
	switch {
	case s.Kind == KindPass:
		who = "pass"
	case s.Client == 0:
		who = "id all"
	default:
		who = fmt.Sprintf("id %d", s.Client)
	}
	title := fmt.Sprintf("dev %s %s dir %s", dev, who, s.Dir)
	if s.Kind == KindRefused {
		title += " (refused before ->sync)"
	}
	return title
}

func errorList(es []ErrorCount) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s %d", ErrnoName(e.Errno), e.Count)
	}
	return strings.Join(parts, ", ")
}
