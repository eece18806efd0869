package main

import (
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "syncmemctl",
		Short: "Control the ib_sync_mem registry of memory sync clients",
		Long: `syncmemctl shows and drives ib_sync_mem, the kernel's registry of memory
sync clients per RDMA device: memory that must be made coherent before a
device or the CPU uses it.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	return root
}
