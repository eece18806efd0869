// Command syncmemctl drives the ib_sync_mem kernel module: the registry of
// memory sync clients per RDMA device.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
}
