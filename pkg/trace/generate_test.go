package trace

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedUpToDate runs the //go:generate command of gen.go, the
// same bpf2go and clang invocation `make generate` runs, into a temporary
// directory and fails unless the committed object and Go bindings are
// byte for byte what it produces: editing bpf/ without regenerating, or
// regenerating with another clang than the project's, fails here.
func TestGeneratedUpToDate(t *testing.T) {
	for _, tool := range []string{"clang", "llvm-strip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed, so the committed BPF object cannot be checked "+
				"against bpf/synctrace.bpf.c: install it (make setup installs clang and llvm)", tool)
		}
	}
	// Open the sources from this process so that `go test` caching sees
	// them change (it only tracks files the test itself opens).
	sources, _ := filepath.Glob("bpf/*")
	for _, f := range sources {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile("gen.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for line := range strings.SplitSeq(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate go run "); ok {
			args = strings.Fields(rest)
		}
	}
	if len(args) < 2 || args[0] != "github.com/cilium/ebpf/cmd/bpf2go" {
		t.Fatalf("gen.go has no //go:generate go run github.com/cilium/ebpf/cmd/bpf2go line")
	}
	out := t.TempDir()
	// Flags go before bpf2go's positional arguments.
	args = slices.Concat([]string{"run", args[0], "-output-dir", out}, args[1:])

	cmd := exec.Command(goTool(t), args...)
	cmd.Env = append(os.Environ(), "GOPACKAGE=trace", "GOFILE=gen.go")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}

	fresh, _ := filepath.Glob(filepath.Join(out, "synctrace_*"))
	committed, _ := filepath.Glob("synctrace_*")
	var names []string
	for _, f := range fresh {
		names = append(names, filepath.Base(f))
	}
	slices.Sort(names)
	slices.Sort(committed)
	if !slices.Equal(names, committed) {
		t.Fatalf("bpf2go generates %v, the package has %v: run `make generate`", names, committed)
	}
	clang, _ := exec.Command("clang", "--version").Output()
	for _, name := range names {
		want, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("pkg/trace/%s is stale: it is not what bpf2go builds from bpf/ with %s"+
				"Run `make generate` and commit the result.", name, firstLine(clang))
		}
	}
}

func goTool(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	t.Fatal("cannot find the go command to run bpf2go")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s + "\n"
}
