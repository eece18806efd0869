package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
)

func newDevicesCmd(dial dialer, out *output) *cobra.Command {
	var dev string
	cmd := verb(&cobra.Command{
		Use:   "devices [dev DEV]",
		Short: "List the RDMA devices the module is attached to",
		Long: `List the RDMA devices ib_sync_mem is attached to, with the number of
clients on each, the device-wide sync passes run and the counters of all
their clients. With dev DEV, that device only. -j prints an array, also
for one device.`,
		Example: `  syncmemctl devices
  syncmemctl devices dev rxe0
  syncmemctl -j devices | jq -r '.[].dev'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withConn(dial, func(c api) error {
				var devs []genl.Device
				if dev != "" {
					d, err := c.Device(cmd.Context(), dev)
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
				return printDevices(cmd, out, devs)
			})
		},
	})
	devFlag(cmd, &dev, "show this RDMA device only", dial)
	return cmd
}

// printDevices prints a table, or JSON: an array, always.
func printDevices(cmd *cobra.Command, out *output, devs []genl.Device) error {
	w := cmd.OutOrStdout()
	if out.isJSON() {
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
