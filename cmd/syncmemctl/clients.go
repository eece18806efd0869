package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

type registerOpts struct {
	dev, name, kind    string
	latency, hold      time.Duration
	failNext           uint32
	failErrno, size    string
	lazy, batch, owned bool
	dmabufFD           int
	out                *output
}

// simFlags are the flags that configure a sim client.
var simFlags = []string{"latency", "fail-next", "fail-errno", "size", "batch"}

func newRegisterCmd(dial dialer, out *output) *cobra.Command {
	o := registerOpts{out: out}
	cmd := verb(&cobra.Command{
		Use: "register dev DEV name NAME [kind sim|dmabuf] [latency D] [size BYTES] [fail-next N] " +
			"[fail-errno E] [batch] [lazy] [owned] [dmabuf-fd N]",
		Short: "Register a memory sync client",
		Long: `Register a client on an RDMA device and print its id. Needs CAP_NET_ADMIN.

The client persists after syncmemctl exits, until "syncmemctl unregister"
deletes it or its device goes away. Clients of kind sim (the default;
ib_sync_mem_sim must be loaded) model accelerator memory: --latency,
--fail-next, --fail-errno, --size and --batch configure them; settings not
given keep the module's defaults.

Clients of kind dmabuf stand for a dma-buf that the program running
syncmemctl opened and left open across exec (not close-on-exec):
--dmabuf-fd N names it by its file descriptor number in syncmemctl. The
kernel takes its own reference on the buffer, so the client keeps it after
syncmemctl exits.

Region clients (kind region) cannot be registered here: a region is memory
of the process that registers it, which for syncmemctl would be its own
memory, gone when it exits. A program registers its own memory with
pkg/genl (Conn.RegisterRegion): any bytes of it, at any address and of any
length up to 1 GiB (the kernel pins the pages that hold them), such as a
buffer from malloc or from AllocRegion.

--owned ties the client to the netlink socket that created it: the kernel
deletes it when the socket closes, which for a one-shot command is as soon
as syncmemctl exits. It is meant for programs that keep their connection
open (see pkg/genl); here it mostly serves tests.`,
		Example: `  syncmemctl register dev rxe0 name buf0
  syncmemctl register dev rxe0 name slow latency 200us size 64K lazy
  syncmemctl register --dev rxe0 --name flaky --fail-next 3 --fail-errno EIO
  id=$(syncmemctl register dev rxe0 name buf1)
  # from a program that holds a dma-buf as fd 7 and runs syncmemctl:
  syncmemctl register dev rxe0 name frame0 kind dmabuf dmabuf-fd 7`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := o.request(cmd)
			if err != nil {
				return err
			}
			return withConn(dial, func(c api) error {
				cl, err := c.Register(cmd.Context(), req)
				if err != nil {
					return err
				}
				if o.out.isJSON() {
					err = o.out.writeJSON(cmd.OutOrStdout(), client(*cl))
				} else {
					_, err = fmt.Fprintln(cmd.OutOrStdout(), cl.ID)
				}
				if err != nil || o.hold == 0 {
					return err
				}
				// Keep the socket, and an owned client, alive.
				select {
				case <-time.After(o.hold):
				case <-cmd.Context().Done():
				}
				return nil
			})
		},
	})
	devFlag(cmd, &o.dev, "RDMA device to register on (required)", dial)
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "client name, 1 to 31 bytes (required)")
	f.StringVar(&o.kind, "kind", "sim", "client kind: sim or dmabuf (region clients: see pkg/genl)")
	f.IntVar(&o.dmabufFD, "dmabuf-fd", 0, "dmabuf: the dma-buf, file descriptor `N` of syncmemctl, inherited open")
	f.DurationVar(&o.latency, "latency", 0, "sim: time one sync takes, whole microseconds (e.g. 200us)")
	f.Uint32Var(&o.failNext, "fail-next", 0, "sim: fail the next N syncs")
	f.StringVar(&o.failErrno, "fail-errno", "", "sim: errno of the failing syncs, a number or a name (EIO)")
	f.StringVar(&o.size, "size", "", "sim: bytes the client stands for (4096, 64K, 1MiB)")
	f.BoolVar(&o.batch, "batch", false, "sim: use the prepare/finish batching hooks")
	f.BoolVar(&o.lazy, "lazy", false, "sync only when marked dirty (mark-dirty)")
	f.BoolVar(&o.owned, "owned", false, "delete the client when this command's socket closes (at exit)")
	f.DurationVar(&o.hold, "hold", 0, "keep the connection open this long after registering (debug)")
	_ = f.MarkHidden("hold")
	_ = cmd.MarkFlagRequired("dev")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.RegisterFlagCompletionFunc("kind", cobra.FixedCompletions(
		[]string{"sim", "dmabuf"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// request checks the flags and builds the request. Sim settings are sent
// only when given, so that the kernel's defaults and checks apply.
func (o *registerOpts) request(cmd *cobra.Command) (genl.RegisterRequest, error) {
	req := genl.RegisterRequest{Device: o.dev, Name: o.name}
	var err error
	if req.Kind, err = genl.ParseKind(o.kind); err != nil {
		return req, badFlag("kind", o.kind, "want sim or dmabuf")
	}
	switch req.Kind {
	case genl.KindRegion:
		return req, badFlag("kind", o.kind, "a region client cannot be registered from syncmemctl: "+
			"its memory would be syncmemctl's own, gone when it exits; register it from the program "+
			"that owns the memory, with pkg/genl (Conn.RegisterRegion)")
	case genl.KindKernel:
		return req, badFlag("kind", o.kind, "kernel clients are registered by kernel drivers, not from userspace")
	}
	if err := o.dmabuf(cmd, &req); err != nil {
		return req, err
	}
	if o.lazy {
		req.Flags |= genl.FlagLazy
	}
	if o.owned {
		req.Flags |= genl.FlagOwned
	}
	if o.hold < 0 {
		return req, badFlag("hold", o.hold.String(), "must not be negative")
	}
	var sim genl.SimConfig
	if changed(cmd, "latency") {
		if err := wholeDuration("latency", o.latency, time.Microsecond, "microseconds"); err != nil {
			return req, err
		}
		sim.Latency = new(o.latency)
	}
	if changed(cmd, "fail-next") {
		sim.FailNext = new(o.failNext)
	}
	if changed(cmd, "fail-errno") {
		e, err := parseErrno("fail-errno", o.failErrno)
		if err != nil {
			return req, err
		}
		sim.FailErrno = &e
	}
	if changed(cmd, "size") {
		n, err := parseSize("size", o.size)
		if err != nil {
			return req, err
		}
		sim.Size = &n
	}
	sim.Batch = o.batch
	if sim != (genl.SimConfig{}) {
		req.Sim = &sim
	}
	if req.Kind == genl.KindDMABuf {
		for _, name := range simFlags {
			if changed(cmd, name) {
				return req, fmt.Errorf("--%s configures sim clients, not --kind %s", name, o.kind)
			}
		}
	}
	return req, nil
}

// dmabuf checks --dmabuf-fd against the kind and fills in the request's
// dma-buf: a file descriptor open in this process, which the kernel
// resolves when it registers the client.
func (o *registerOpts) dmabuf(cmd *cobra.Command, req *genl.RegisterRequest) error {
	given := changed(cmd, "dmabuf-fd")
	switch {
	case req.Kind == genl.KindDMABuf && !given:
		return fmt.Errorf("--kind %s needs --dmabuf-fd N: the dma-buf, a file descriptor syncmemctl inherited", o.kind)
	case req.Kind != genl.KindDMABuf && given:
		return fmt.Errorf("--dmabuf-fd goes with --kind dmabuf only, not --kind %s", o.kind)
	case !given:
		return nil
	}
	value := strconv.Itoa(o.dmabufFD)
	if o.dmabufFD < 0 || o.dmabufFD > math.MaxInt32 {
		return badFlag("dmabuf-fd", value, "want a file descriptor number, 0 or more")
	}
	if _, err := unix.FcntlInt(uintptr(o.dmabufFD), unix.F_GETFD, 0); err != nil {
		return badFlag("dmabuf-fd", value, "not an open file descriptor of syncmemctl (%v): the program "+
			"running it must leave the dma-buf open across exec, without close-on-exec", err)
	}
	req.DMABuf = &genl.DMABufConfig{FD: int32(o.dmabufFD)}
	return nil
}

func newUnregisterCmd(dial dialer) *cobra.Command {
	var ids []string
	cmd := verb(&cobra.Command{
		Use:   "unregister id ID[,ID...]",
		Short: "Delete clients",
		Long: `Delete clients by id. Needs CAP_NET_ADMIN. When it returns, none of their
callbacks runs any more. Clients registered by kernel drivers cannot be
deleted this way. Every id is tried; the command fails if one failed.`,
		Example: `  syncmemctl unregister id 3
  syncmemctl unregister id 3,4,5
  syncmemctl unregister --id 3 --id 4
  syncmemctl -j list dev rxe0 | jq -r '[.[].id] | join(",")' | xargs syncmemctl unregister id`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := parseIDs("id", ids)
			if err != nil {
				return err
			}
			if len(list) == 0 {
				return errors.New("name the clients to delete: id ID[,ID...] or --id ID")
			}
			return withConn(dial, func(c api) error {
				var errs []error
				for _, id := range list {
					errs = append(errs, c.Unregister(cmd.Context(), id))
				}
				return joinFailures(errs...)
			})
		},
	})
	idFlag(cmd, &ids, "the clients to delete (required)", dial)
	return cmd
}

func newListCmd(dial dialer, out *output) *cobra.Command {
	var f genl.ClientFilter
	var ids []string
	cmd := verb(&cobra.Command{
		Use:   "list [dev DEV] [owner OWNER] | list id ID[,ID...]",
		Short: "List clients",
		Long: `List the registered clients: all of them, those of one device (dev DEV)
or of one owner (owner OWNER: the in-kernel owner a client is registered
under, such as a driver's, or sim, region, dma-buf), or the ones given by
id. Open to every user; without CAP_NET_ADMIN the kernel leaves out who
created a client (the creator's portid and pid) and its kind-specific
settings. -j prints an array, also for one client or none.`,
		Example: `  syncmemctl list
  syncmemctl list dev rxe0
  syncmemctl list dev rxe0 owner sim
  syncmemctl list id 3,4
  syncmemctl -j list | jq 'length'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := parseIDs("id", ids)
			if err != nil {
				return err
			}
			if (f.Device != "" || f.Owner != "") && len(list) > 0 {
				return errors.New("give either dev and owner, or id, not both")
			}
			return withConn(dial, func(c api) error {
				if len(list) == 0 {
					cs, err := c.Clients(cmd.Context(), f)
					if err != nil {
						return err
					}
					return printClients(cmd, out, cs)
				}
				var cs []genl.Client
				var errs []error
				for _, id := range list {
					cl, err := c.Client(cmd.Context(), id)
					if err != nil {
						errs = append(errs, err)
						continue
					}
					cs = append(cs, *cl)
				}
				return joinFailures(append(errs, printClients(cmd, out, cs))...)
			})
		},
	})
	devFlag(cmd, &f.Device, "list the clients of this device only", dial)
	ownerFlag(cmd, &f.Owner, "list the clients of this owner only", dial)
	idFlag(cmd, &ids, "list these clients only", dial)
	return cmd
}

func printClients(cmd *cobra.Command, out *output, cs []genl.Client) error {
	w := cmd.OutOrStdout()
	if out.isJSON() {
		js := make([]jsonClient, 0, len(cs))
		for _, c := range cs {
			js = append(js, client(c))
		}
		return out.writeJSON(w, js)
	}
	t := newTable(w, "ID", "DEV", "NAME", "OWNER", "KIND", "STATE", "FLAGS", "SIZE", "PINNED", "SYNCS",
		"ERRORS", "LAST-ERR", "CREATOR")
	for _, c := range cs {
		t.row(fmt.Sprint(c.ID), c.DevName, c.Name, orDash(c.Owner), c.Kind.String(), state(c),
			orDash(c.Flags.String()), size(c.Size), pinned(c), fmt.Sprint(c.Stats.Syncs),
			fmt.Sprint(c.Stats.Errors), errnoName(c.LastErr), creator(c))
	}
	return t.flush()
}

// state is "live", or "invalidated(reason)".
func state(c genl.Client) string {
	s := c.State.String()
	if c.InvalReason != 0 {
		s += "(" + c.InvalReason.String() + ")"
	}
	return s
}

// pinned is the number of pages a region client keeps pinned, "-" for the
// other kinds, which pin nothing.
func pinned(c genl.Client) string {
	if p := pinnedPages(c); p != nil {
		return fmt.Sprint(*p)
	}
	return "-"
}

// pinnedPages is what the kernel reports for region clients, nil for the
// other kinds (left out of JSON).
func pinnedPages(c genl.Client) *uint32 {
	if c.Kind != genl.KindRegion {
		return nil
	}
	return &c.PinnedPages
}

// owner says who registered a client, as far as the caller may know.
// creator is who created a client: a kernel driver, or a process.
func creator(c genl.Client) string {
	switch {
	case c.Origin == genl.OriginKernel:
		return "kernel"
	case c.OwnerPID != 0:
		return fmt.Sprintf("pid %d", c.OwnerPID)
	}
	return "-"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
