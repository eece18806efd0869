package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/syncmem/syncmem/pkg/genl"
)

// Errors Start returns, to be matched with errors.Is, besides pkg/genl's
// ErrNotLoaded (neither /sys/module/ib_sync_mem nor its trace events
// exist) and ErrPermission (the bpf() or perf_event_open() syscall refused
// us: loading BPF needs CAP_BPF and CAP_PERFMON), which pkg/genl's calls
// return for the same causes.
var (
	// ErrTracepointMissing: the module is loaded but lacks a tracepoint
	// or its record layout differs. The error is a *TracepointError.
	ErrTracepointMissing = errors.New("tracepoint missing")
	// ErrNoTracefs: tracefs is mounted at neither usual place.
	ErrNoTracefs = errors.New("tracefs is not mounted (mount -t tracefs none /sys/kernel/tracing)")
)

// TracepointError says that a tracepoint of the module is absent or not
// laid out as the BPF programs read it.
type TracepointError struct {
	Event  string // "client_sync"
	Reason string // "" when the tracepoint is absent
}

func (e *TracepointError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("tracepoint %s:%s not found: wrong ib_sync_mem version?", system, e.Event)
	}
	return fmt.Sprintf("tracepoint %s:%s %s: wrong ib_sync_mem version?", system, e.Event, e.Reason)
}

func (e *TracepointError) Is(target error) bool { return target == ErrTracepointMissing }

const system = "ib_sync_mem"

// kernelPaths are the places the checks look at; tests point them into a
// temporary directory.
type kernelPaths struct {
	module   string   // /sys/module/ib_sync_mem
	tracefss []string // tracefs mount points, in order of preference
}

var defaultPaths = kernelPaths{
	module:   "/sys/module/" + system,
	tracefss: []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"},
}

// field is one record field the BPF programs read: its offset and size as
// the kernel's format file must state them.
type field struct {
	name   string
	offset int
	size   int
}

// layouts are the record fields the programs read, by event. They are the
// contract of kmod/ib_sync_mem/trace.h; TestRecordLayout ties them to the C
// structs.
var layouts = map[string][]field{
	"client_sync": {
		{"dev_index", 8, 4}, {"client", 12, 4}, {"dir", 16, 4},
		{"err", 20, 4}, {"ns", 24, 8},
	},
	"sync_end": {
		{"dev_index", 8, 4}, {"client", 12, 4}, {"dir", 16, 4},
		{"clients", 20, 4}, {"errors", 24, 4}, {"err", 28, 4},
		{"ns", 32, 8}, {"dev", 40, 64},
	},
}

// events are the tracepoints attached, in order.
var events = []string{"client_sync", "sync_end"}

// CheckKernel reports whether ib_sync_mem and its tracepoints are there,
// as Start does first: genl.ErrNotLoaded, ErrTracepointMissing (also when
// a record's layout changed), ErrNoTracefs or nil. What it may not read
// (tracefs is root-only) it leaves to Start.
func CheckKernel() error { return defaultPaths.check() }

// check finds out, before loading anything, whether the module and its
// tracepoints are there and laid out as expected. Paths it may not read
// (tracefs is root-only) are left to the bpf syscalls to refuse.
func (p kernelPaths) check() error {
	_, modErr := os.Stat(p.module)
	modAbsent := errors.Is(modErr, fs.ErrNotExist)
	eventsDir, err := p.findEvents()
	if err == nil {
		_, err = os.Stat(eventsDir)
	}
	switch {
	case err == nil:
	case modAbsent:
		return genl.ErrNotLoaded
	case errors.Is(err, fs.ErrPermission):
		return nil
	case errors.Is(err, ErrNoTracefs):
		return err
	default:
		return &TracepointError{Event: events[0]}
	}
	for _, ev := range events {
		b, err := os.ReadFile(filepath.Join(eventsDir, ev, "format"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return &TracepointError{Event: ev}
		case err != nil:
			continue // unreadable: the attach will tell
		}
		if err := checkFormat(ev, string(b)); err != nil {
			return err
		}
	}
	return nil
}

// findEvents returns the events/ib_sync_mem directory of the first
// tracefs mount it can see.
func (p kernelPaths) findEvents() (string, error) {
	var firstErr error
	for _, t := range p.tracefss {
		_, err := os.Stat(filepath.Join(t, "events"))
		if err == nil {
			return filepath.Join(t, "events", system), nil
		}
		if errors.Is(err, fs.ErrPermission) && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return "", firstErr
	}
	return "", ErrNoTracefs
}

// FormatField is one "field:" line of a trace event format file.
type FormatField struct {
	Name   string
	Type   string
	Offset int
	Size   int
}

// ParseFormat reads the fields of a tracefs events/<sys>/<event>/format
// file, common fields included.
func ParseFormat(text string) ([]FormatField, error) {
	var out []FormatField
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		var f FormatField
		var haveOff, haveSize bool
		for part := range strings.SplitSeq(line, ";") {
			part = strings.TrimSpace(part)
			key, val, ok := strings.Cut(part, ":")
			if !ok {
				continue
			}
			var err error
			switch key {
			case "field":
				decl := strings.TrimSpace(val)
				i := strings.LastIndexAny(decl, " \t*")
				if i < 0 {
					return nil, fmt.Errorf("format: bad field %q", decl)
				}
				f.Type = strings.TrimSpace(decl[:i+1])
				f.Name = decl[i+1:]
				if j := strings.IndexByte(f.Name, '['); j >= 0 {
					f.Type += f.Name[j:]
					f.Name = f.Name[:j]
				}
			case "offset":
				f.Offset, err = strconv.Atoi(val)
				haveOff = true
			case "size":
				f.Size, err = strconv.Atoi(val)
				haveSize = true
			}
			if err != nil {
				return nil, fmt.Errorf("format: %q: %v", line, err)
			}
		}
		if f.Name == "" || !haveOff || !haveSize {
			return nil, fmt.Errorf("format: incomplete field line %q", line)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("format: no fields")
	}
	return out, nil
}

// checkFormat compares an event's format file with the layout the BPF
// program of that event reads.
func checkFormat(event, text string) error {
	fields, err := ParseFormat(text)
	if err != nil {
		return &TracepointError{Event: event, Reason: err.Error()}
	}
	have := make(map[string]FormatField, len(fields))
	for _, f := range fields {
		have[f.Name] = f
	}
	for _, want := range layouts[event] {
		got, ok := have[want.name]
		switch {
		case !ok:
			return &TracepointError{Event: event, Reason: "has no field " + want.name}
		case got.Offset != want.offset || got.Size != want.size:
			return &TracepointError{Event: event, Reason: fmt.Sprintf(
				"has field %s at offset %d size %d, the tracer reads offset %d size %d",
				want.name, got.Offset, got.Size, want.offset, want.size)}
		}
	}
	return nil
}
