package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// Format files as the kernel writes them for kmod/ib_sync_mem/trace.h.
const clientSyncFormat = `name: client_sync
ID: 1523
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:u32 dev_index;	offset:8;	size:4;	signed:0;
	field:u32 client;	offset:12;	size:4;	signed:0;
	field:u32 dir;	offset:16;	size:4;	signed:0;
	field:s32 err;	offset:20;	size:4;	signed:1;
	field:u64 ns;	offset:24;	size:8;	signed:0;

print fmt: "dev_index=%u client=%u dir=%s ns=%llu err=%d", REC->dev_index, REC->client, __print_symbolic(REC->dir, { 1, "to-device" }, { 2, "to-cpu" }, { 3, "bidirectional" }), REC->ns, REC->err
`

const syncEndFormat = `name: sync_end
ID: 1524
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:u32 dev_index;	offset:8;	size:4;	signed:0;
	field:u32 client;	offset:12;	size:4;	signed:0;
	field:u32 dir;	offset:16;	size:4;	signed:0;
	field:u32 clients;	offset:20;	size:4;	signed:0;
	field:u32 errors;	offset:24;	size:4;	signed:0;
	field:s32 err;	offset:28;	size:4;	signed:1;
	field:u64 ns;	offset:32;	size:8;	signed:0;
	field:char dev[64];	offset:40;	size:64;	signed:0;

print fmt: "dev=%s client=%u", REC->dev, REC->client
`

func TestParseFormat(t *testing.T) {
	fields, err := ParseFormat(syncEndFormat)
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 12 {
		t.Fatalf("got %d fields, want 12: %+v", len(fields), fields)
	}
	want := []FormatField{
		{Name: "common_type", Type: "unsigned short", Offset: 0, Size: 2},
		{Name: "common_pid", Type: "int", Offset: 4, Size: 4},
		{Name: "err", Type: "s32", Offset: 28, Size: 4},
		{Name: "dev", Type: "char[64]", Offset: 40, Size: 64},
	}
	for _, w := range want {
		found := false
		for _, f := range fields {
			if f.Name == w.Name {
				found = true
				if f != w {
					t.Errorf("field %s: got %+v, want %+v", w.Name, f, w)
				}
			}
		}
		if !found {
			t.Errorf("field %s missing", w.Name)
		}
	}
	if _, err := ParseFormat("name: x\nformat:\n"); err == nil {
		t.Error("a format without fields parsed")
	}
	if _, err := ParseFormat("\tfield:u32 x;\toffset:eight;\tsize:4;\n"); err == nil {
		t.Error("a bad offset parsed")
	}
}

func TestCheckFormat(t *testing.T) {
	if err := checkFormat("client_sync", clientSyncFormat); err != nil {
		t.Errorf("client_sync: %v", err)
	}
	if err := checkFormat("sync_end", syncEndFormat); err != nil {
		t.Errorf("sync_end: %v", err)
	}
	moved := strings.Replace(clientSyncFormat, "offset:24;", "offset:32;", 1)
	err := checkFormat("client_sync", moved)
	want := "tracepoint ib_sync_mem:client_sync has field ns at offset 32 size 8, " +
		"the tracer reads offset 24 size 8: wrong ib_sync_mem version?"
	if err == nil || err.Error() != want {
		t.Errorf("moved field: got %v, want %q", err, want)
	}
	if !errors.Is(err, ErrTracepointMissing) {
		t.Errorf("moved field: %v is not ErrTracepointMissing", err)
	}
	gone := strings.Replace(syncEndFormat, "field:u32 clients;", "field:u32 nclients;", 1)
	err = checkFormat("sync_end", gone)
	want = "tracepoint ib_sync_mem:sync_end has no field clients: wrong ib_sync_mem version?"
	if err == nil || err.Error() != want {
		t.Errorf("renamed field: got %v, want %q", err, want)
	}
}

// fakeKernel builds a /sys/module and tracefs tree under a temp dir.
func fakeKernel(t *testing.T, module, tracefs bool, evs map[string]string) kernelPaths {
	t.Helper()
	root := t.TempDir()
	p := kernelPaths{
		module:   filepath.Join(root, "sys/module/ib_sync_mem"),
		tracefss: []string{filepath.Join(root, "tracing"), filepath.Join(root, "debug/tracing")},
	}
	if module {
		must(t, os.MkdirAll(p.module, 0o755))
	}
	if tracefs {
		must(t, os.MkdirAll(filepath.Join(p.tracefss[0], "events/sched"), 0o755))
	}
	for ev, format := range evs {
		dir := filepath.Join(p.tracefss[0], "events/ib_sync_mem", ev)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "format"), []byte(format), 0o644))
	}
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestKernelCheck(t *testing.T) {
	both := map[string]string{"client_sync": clientSyncFormat, "sync_end": syncEndFormat}
	cases := []struct {
		name            string
		module, tracefs bool
		events          map[string]string
		want            string // "" for no error
	}{
		{"loaded", true, true, both, ""},
		{"not loaded", false, true, nil, "module ib_sync_mem is not loaded"},
		{"not loaded, no tracefs", false, false, nil, "module ib_sync_mem is not loaded"},
		{"loaded, no tracefs", true, false, nil,
			"tracefs is not mounted (mount -t tracefs none /sys/kernel/tracing)"},
		{"loaded without events", true, true, nil,
			"tracepoint ib_sync_mem:client_sync not found: wrong ib_sync_mem version?"},
		{"loaded without sync_end", true, true, map[string]string{"client_sync": clientSyncFormat},
			"tracepoint ib_sync_mem:sync_end not found: wrong ib_sync_mem version?"},
		{"loaded without client_sync", true, true, map[string]string{"sync_end": syncEndFormat},
			"tracepoint ib_sync_mem:client_sync not found: wrong ib_sync_mem version?"},
		// /sys/module lacks it but the events are there: trust the events.
		{"events without sysfs entry", false, true, both, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := fakeKernel(t, c.module, c.tracefs, c.events).check()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	err := fakeKernel(t, false, true, nil).check()
	if !errors.Is(err, genl.ErrNotLoaded) {
		t.Errorf("%v is not genl.ErrNotLoaded", err)
	}
	err = fakeKernel(t, true, true, nil).check()
	var te *TracepointError
	if !errors.As(err, &te) || te.Event != "client_sync" || !errors.Is(err, ErrTracepointMissing) {
		t.Errorf("%v: want a *TracepointError for client_sync", err)
	}
}

func TestClassify(t *testing.T) {
	perm := classify("load BPF", errors.Join(errors.New("map create"), unix.EPERM))
	if !errors.Is(perm, genl.ErrPermission) || !errors.Is(perm, unix.EPERM) ||
		!strings.HasPrefix(perm.Error(), "loading BPF needs root (CAP_BPF and CAP_PERFMON): load BPF: ") {
		t.Errorf("EPERM: got %q", perm)
	}
	acc := classify("attach", unix.EACCES)
	if !errors.Is(acc, genl.ErrPermission) {
		t.Errorf("EACCES from perf_event_open: got %q", acc)
	}
	other := classify("load BPF", errors.New("boom"))
	if errors.Is(other, genl.ErrPermission) || other.Error() != "load BPF: boom" {
		t.Errorf("other error: got %q", other)
	}
}
