package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var updateMan = flag.Bool("update-man", false, "rewrite docs/man from the command tree (make man)")

// TestManPages checks that docs/man holds exactly the pages the command
// tree generates, byte for byte: one per verb, none stale, none missing.
func TestManPages(t *testing.T) {
	if *updateMan {
		if err := writeManPages(manDir); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	gen, err := genManPages(newRoot(nil), tmp)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob(filepath.Join(manDir, "*."+manSection))
	if err != nil {
		t.Fatal(err)
	}
	base := func(fs []string) []string {
		var out []string
		for _, f := range fs {
			out = append(out, filepath.Base(f))
		}
		slices.Sort(out)
		return out
	}
	if g, c := base(gen), base(committed); !slices.Equal(g, c) {
		t.Fatalf("docs/man is stale (run make man):\n generated %v\n committed %v", g, c)
	}
	for _, f := range gen {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(manDir, filepath.Base(f)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("docs/man/%s is stale (run make man)", filepath.Base(f))
		}
	}
}

// TestManPagesPerVerb checks that every verb has its own page, which
// documents its flags.
func TestManPagesPerVerb(t *testing.T) {
	tmp := t.TempDir()
	if _, err := genManPages(newRoot(nil), tmp); err != nil {
		t.Fatal(err)
	}
	root := newRoot(nil)
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		name := "syncmemctl-" + c.Name() + "." + manSection
		b, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			t.Errorf("verb %s has no man page: %v", c.Name(), err)
			continue
		}
		page := string(b)
		if !strings.Contains(page, `.TH "SYNCMEMCTL" "8"`) {
			t.Errorf("%s: no section 8 header:\n%.200s", name, page)
		}
		var missing []string
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && !strings.Contains(page, `\fB--`+f.Name+`\fP`) {
				missing = append(missing, f.Name)
			}
		})
		if len(missing) > 0 {
			t.Errorf("%s does not document --%s", name, strings.Join(missing, ", --"))
		}
	}
}
