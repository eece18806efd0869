package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
)

func newDevicesCmd(dial dialer) *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "devices [DEV]",
		Short: "List the RDMA devices the module is attached to",
		Long: `List the RDMA devices ib_sync_mem is attached to, with the number of
clients on each, the device-wide sync passes run and the counters of all
their clients. With DEV, show that device only.`,
		Example: `  syncmemctl devices
  syncmemctl devices rxe0
  syncmemctl devices -j | jq -r '.[].name'`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeDevices(dial),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withConn(dial, func(c api) error {
				var devs []genl.Device
				if len(args) == 1 {
					d, err := c.Device(cmd.Context(), args[0])
					if err != nil {
						return err
					}
					devs = []genl.Device{*d}
				} else {
					var err error
					if devs, err = c.Devices(cmd.Context()); err != nil {
						return err
					}
				}
				return printDevices(cmd, &out, devs, len(args) == 1)
			})
		},
	}
	out.addFlags(cmd)
	return cmd
}

// printDevices prints a table, or JSON: an array, or an object for one
// device asked for by name.
func printDevices(cmd *cobra.Command, out *output, devs []genl.Device, one bool) error {
	w := cmd.OutOrStdout()
	if out.isJSON() {
		if one {
			return out.writeJSON(w, device(devs[0]))
		}
		js := make([]jsonDevice, 0, len(devs))
		for _, d := range devs {
			js = append(js, device(d))
		}
		return out.writeJSON(w, js)
	}
	t := newTable(w, "DEV", "INDEX", "CLIENTS", "PASSES", "SYNCS", "ERRORS", "BYTES", "SYNC-TIME")
	for _, d := range devs {
		t.row(d.Name, fmt.Sprint(d.Index), fmt.Sprint(d.Clients), fmt.Sprint(d.Passes),
			fmt.Sprint(d.Stats.Syncs), fmt.Sprint(d.Stats.Errors), size(d.Stats.Bytes),
			duration(d.Stats.Total))
	}
	return t.flush()
}
