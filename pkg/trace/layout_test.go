package trace

import (
	"reflect"
	"testing"
)

// TestRecordLayout ties three things together: the tracepoint layout of
// kmod/ib_sync_mem/trace.h (the offsets the brief of the tracer lists), the
// C structs the BPF programs read (through the Go types bpf2go generated
// from their BTF), and the table Start checks the kernel's format files
// against.
func TestRecordLayout(t *testing.T) {
	contract := map[string]map[string][2]int{ // field -> offset, size
		"client_sync": {"dev_index": {8, 4}, "client": {12, 4}, "dir": {16, 4}, "err": {20, 4}, "ns": {24, 8}},
		"sync_end": {"dev_index": {8, 4}, "client": {12, 4}, "dir": {16, 4}, "clients": {20, 4},
			"errors": {24, 4}, "err": {28, 4}, "ns": {32, 8}, "dev": {40, 64}},
	}
	goTypes := map[string]reflect.Type{
		"client_sync": reflect.TypeFor[synctraceSmClientSyncRec](),
		"sync_end":    reflect.TypeFor[synctraceSmSyncEndRec](),
	}
	goName := map[string]string{"dev_index": "DevIndex", "client": "Client", "dir": "Dir",
		"clients": "Clients", "errors": "Errors", "err": "Err", "ns": "Ns", "dev": "Dev"}

	for ev, fields := range contract {
		if len(layouts[ev]) != len(fields) {
			t.Errorf("%s: layouts has %d fields, the contract %d", ev, len(layouts[ev]), len(fields))
		}
		for _, f := range layouts[ev] {
			if want, ok := fields[f.name]; !ok || want != [2]int{f.offset, f.size} {
				t.Errorf("%s.%s: layouts says offset %d size %d, contract %v", ev, f.name, f.offset, f.size, want)
			}
		}
		typ := goTypes[ev]
		for name, want := range fields {
			sf, ok := typ.FieldByName(goName[name])
			if !ok {
				t.Errorf("%s: BPF record struct has no field %s", ev, name)
				continue
			}
			if got := [2]int{int(sf.Offset), int(sf.Type.Size())}; got != want {
				t.Errorf("%s.%s: BPF reads offset %d size %d, contract %v", ev, name, got[0], got[1], want)
			}
		}
		if hdr, _ := typ.FieldByName("Common"); hdr.Offset != 0 || hdr.Type.Size() != 8 {
			t.Errorf("%s: common header at %d, %d bytes; want 0, 8", ev, hdr.Offset, hdr.Type.Size())
		}
	}
}

// TestMapKeys checks that the map keys have no padding holes: BPF zeroes
// them field by field, and a hole would make equal keys differ.
func TestMapKeys(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[synctraceSmHistKey](), reflect.TypeFor[synctraceSmErrKey](),
	} {
		var sum uintptr
		for i := range typ.NumField() {
			sum += typ.Field(i).Type.Size()
		}
		if sum != typ.Size() {
			t.Errorf("%s: fields cover %d of %d bytes", typ.Name(), sum, typ.Size())
		}
	}
}

func TestSizeMaps(t *testing.T) {
	for ncpu, want := range map[int][2]uint32{
		1: {4096, 4096}, 15: {4096, 4096}, 16: {3971, 4096}, 64: {992, 4096},
		256: {256, 4096}, 1024: {256, 2048}, 8192: {256, 1024},
	} {
		spec, err := loadSynctrace()
		if err != nil {
			t.Fatal(err)
		}
		sizeMaps(spec, ncpu)
		got := [2]uint32{spec.Maps["sm_hist"].MaxEntries, spec.Maps["sm_errors"].MaxEntries}
		if got != want {
			t.Errorf("%d CPUs: sm_hist, sm_errors max entries %v, want %v", ncpu, got, want)
		}
	}
}
