package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// The man pages in docs/man are generated from the command tree, one page
// per verb in section 8 (syncmemctl administers a kernel module), and
// committed: they are installed by `make install` without a Go toolchain,
// and reviewing a change to the CLI shows its documentation change too.
// TestManPages regenerates them into a temporary directory and fails when
// the committed pages differ; `make man` rewrites them.
const (
	manSection = "8"
	manDir     = "../../docs/man" // from the package directory, where go test runs
)

// manDate is the date in the pages' footer. It is fixed, not the time of
// the build, so that the pages are reproducible; move it with releases.
var manDate = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// genManPages writes the man pages of the command tree rooted at root into
// dir, which must exist, and returns the files it wrote.
func genManPages(root *cobra.Command, dir string) ([]string, error) {
	root.DisableAutoGenTag = true
	date := manDate
	hdr := &doc.GenManHeader{
		Title:   "SYNCMEMCTL",
		Section: manSection,
		Date:    &date,
		Source:  "syncmem",
		Manual:  "syncmem manual",
	}
	if err := doc.GenManTree(root, hdr, dir); err != nil {
		return nil, fmt.Errorf("generate man pages: %w", err)
	}
	return filepath.Glob(filepath.Join(dir, "*."+manSection))
}

// writeManPages replaces the pages in dir with freshly generated ones.
func writeManPages(dir string) error {
	old, err := filepath.Glob(filepath.Join(dir, "*."+manSection))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	_, err = genManPages(newRoot(nil), dir)
	return err
}
