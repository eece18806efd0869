package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// api is the part of *genl.Conn the commands use; tests replace it.
type api interface {
	Devices(ctx context.Context) ([]genl.Device, error)
	Device(ctx context.Context, name string) (*genl.Device, error)
	Clients(ctx context.Context, f genl.ClientFilter) ([]genl.Client, error)
	Client(ctx context.Context, id uint32) (*genl.Client, error)
	Register(ctx context.Context, r genl.RegisterRequest) (*genl.Client, error)
	Unregister(ctx context.Context, id uint32) error
	Sync(ctx context.Context, r genl.SyncRequest) (*genl.SyncResult, error)
	MarkDirty(ctx context.Context, id uint32, dir genl.Direction, r *genl.Range) error
	Stats(ctx context.Context, r genl.StatsRequest) (*genl.Stats, error)
	Watch(ctx context.Context, opts ...genl.WatchOption) (<-chan genl.Event, <-chan error, error)
	Close() error
}

// dialer opens the connection a command talks to the kernel through.
type dialer func() (api, error)

var _ api = (*genl.Conn)(nil)

func dialKernel() (api, error) {
	c, err := genl.Dial()
	if err != nil {
		return nil, err
	}
	return c, nil
}

func newRootCmd() *cobra.Command { return newRoot(dialKernel) }

// newRoot builds the command tree; every command reaches the kernel
// through dial, after its flags and keywords have been checked.
func newRoot(dial dialer) *cobra.Command {
	// "syncmemctl li" is list, as "ip l" is ip link.
	cobra.EnablePrefixMatching = true
	root := &cobra.Command{
		Use:   "syncmemctl [-j] [-p] VERB [KEYWORD VALUE]...",
		Short: "Control the ib_sync_mem registry of memory sync clients",
		Long: `syncmemctl shows and drives ib_sync_mem, the kernel's registry of memory
sync clients per RDMA device: memory that must be made coherent before a
device or the CPU uses it.

Every verb takes its options as flags or as iproute2-style keywords: a
device is "dev DEV" or --dev DEV, a client "id ID" or --id ID (several:
"id 3,4"), and "latency 200us" is --latency 200us. -j prints JSON (every
listing an array), -p indented JSON; both go anywhere on the command line.
A verb may be shortened to any unambiguous prefix: syncmemctl li.

It talks to the module over its generic netlink family, which exists only
in the initial network namespace, and sync ... async through its data-path
device /dev/ib_sync_mem. Listing and statistics are open to every user;
register, unregister, sync and mark-dirty need CAP_NET_ADMIN.`,
		Example: `  syncmemctl devices
  syncmemctl register dev rxe0 name buf0 latency 200us
  syncmemctl sync dev rxe0
  syncmemctl -j list | jq '.[].id'
  syncmemctl monitor`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w\nRun '%s --help' for usage.", err, cmd.CommandPath())
	})
	out := &output{}
	out.addFlags(root)
	root.AddCommand(
		newDevicesCmd(dial, out),
		newRegisterCmd(dial, out),
		newUnregisterCmd(dial),
		newListCmd(dial, out),
		newSyncCmd(dial, out),
		newMarkDirtyCmd(dial),
		newStatsCmd(dial, out),
		newMonitorCmd(dial, out),
		newTraceCmd(out),
		newExporterCmd(dial),
	)
	return root
}

// run executes the command line args and returns the exit status. Errors
// go to stderr as "Error: <message>", one line per error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, dial dialer) int {
	root := newRoot(dial)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	errs := []error{err}
	if m, ok := err.(failures); ok {
		errs = m
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "Error: %s\n", strings.TrimSuffix(e.Error(), "\n"))
	}
	return 1
}

// failures are the errors of a command that tried several things (each
// client of an unregister), printed one per line.
type failures []error

// joinFailures is the error of several attempts: nil if none failed.
func joinFailures(errs ...error) error {
	var f failures
	for _, err := range errs {
		if err != nil {
			f = append(f, err)
		}
	}
	switch len(f) {
	case 0:
		return nil
	case 1:
		return f[0]
	}
	return f
}

func (f failures) Error() string {
	msgs := make([]string, len(f))
	for i, err := range f {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

func (f failures) Unwrap() []error { return f }

// withConn dials, runs fn and closes the connection.
func withConn(dial dialer, fn func(api) error) error {
	c, err := dial()
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// completeDevices completes a device name from the kernel's list.
func completeDevices(dial dialer) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var names []cobra.Completion
		_ = withConn(dial, func(c api) error {
			devs, err := c.Devices(cmd.Context())
			for _, d := range devs {
				names = append(names, d.Name)
			}
			return err
		})
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFromClients completes what word makes of each registered
// client; a client it makes nothing of ("") adds none, nor does a repeat.
func completeFromClients(dial dialer, word func(genl.Client) cobra.Completion) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var words []cobra.Completion
		_ = withConn(dial, func(c api) error {
			cs, err := c.Clients(cmd.Context(), genl.ClientFilter{})
			for _, cl := range cs {
				if w := word(cl); w != "" && !slices.Contains(words, w) {
					words = append(words, w)
				}
			}
			return err
		})
		return words, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeClients completes client ids, described by their names.
func completeClients(dial dialer) cobra.CompletionFunc {
	return completeFromClients(dial, func(cl genl.Client) cobra.Completion {
		return cobra.CompletionWithDesc(fmt.Sprint(cl.ID), cl.DevName+" "+cl.Name)
	})
}

// completeOwners completes the owners of the registered clients.
func completeOwners(dial dialer) cobra.CompletionFunc {
	return completeFromClients(dial, func(cl genl.Client) cobra.Completion { return cl.Owner })
}

// badFlag reports an invalid flag value, found before reaching the kernel.
func badFlag(flag, value, format string, args ...any) error {
	return fmt.Errorf("invalid --%s %q: %s", flag, value, fmt.Sprintf(format, args...))
}
