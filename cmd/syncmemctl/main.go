// Command syncmemctl drives the ib_sync_mem kernel module: the registry of
// memory sync clients per RDMA device.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Ctrl-C ends `monitor` and `register --hold` cleanly; a second one
	// kills as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, dialKernel)
	stop()
	os.Exit(code)
}
