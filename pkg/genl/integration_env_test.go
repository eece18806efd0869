package genl

import (
	"os"
	"testing"
)

// Integration skips the test unless SYNCMEM_INTEGRATION=1, and returns a
// connection and the device to use. Once enabled, a missing module or
// device fails the test: it never skips. The tests of both test packages
// (integration_test.go, integration_dirty_test.go, integration_dump_test.go)
// use it.
func Integration(t *testing.T) (*Conn, string) {
	t.Helper()
	if os.Getenv("SYNCMEM_INTEGRATION") != "1" {
		t.Skip("integration test against the kernel: set SYNCMEM_INTEGRATION=1 to run it " +
			"(as root, ib_sync_mem loaded, rxe0 or $SYNCMEM_DEV); test/vm/55-genl-memory.sh runs it in the VM")
	}
	dev := os.Getenv("SYNCMEM_DEV")
	if dev == "" {
		dev = "rxe0"
	}
	c, err := Dial()
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Device(bg, dev); err != nil {
		t.Fatalf("device %s: %v (needs the RDMA device, with ib_sync_mem attached to it)", dev, err)
	}
	return c, dev
}
