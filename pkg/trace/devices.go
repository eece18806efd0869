package trace

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	vnl "github.com/vishvananda/netlink"

	"github.com/syncmem/syncmem/pkg/genl"
)

// noDeviceError: no RDMA device has the name asked for. It matches
// genl.ErrNoDevice, as the module's refusal of an unknown device does.
type noDeviceError struct{ msg string }

func (e *noDeviceError) Error() string { return e.msg }
func (e *noDeviceError) Unwrap() error { return genl.ErrNoDevice }

// dumpAttempts bounds the retries of an RDMA device dump that a device
// added or removed meanwhile interrupted (NLM_F_DUMP_INTR).
const dumpAttempts = 3

// rdmaLinkList is vishvananda/netlink's RDMA device dump (the nldev GET
// dump `rdma dev show` prints); a variable for the tests.
var rdmaLinkList = vnl.RdmaLinkList

// Devices returns the RDMA devices of the kernel, ib_device index to name,
// as `rdma -j dev show` lists them. The index is RDMA_NLDEV_ATTR_DEV_INDEX,
// the ib_device index that the tracepoints carry as dev_index.
func Devices() (map[uint32]string, error) {
	var links []*vnl.RdmaLink
	var err error
	for range dumpAttempts {
		links, err = rdmaLinkList()
		if !errors.Is(err, vnl.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("RDMA netlink device dump (is ib_core loaded?): %w", err)
	}
	devs := make(map[uint32]string, len(links))
	for _, l := range links {
		if l != nil && l.Attrs.Name != "" {
			devs[l.Attrs.Index] = l.Attrs.Name
		}
	}
	return devs, nil
}

// DeviceIndex resolves an RDMA device name (rxe0) to the ib_device index
// the tracepoints carry.
func DeviceIndex(name string) (uint32, error) {
	devs, err := Devices()
	if err != nil {
		return 0, err
	}
	return lookupDevice(devs, name)
}

func lookupDevice(devs map[uint32]string, name string) (uint32, error) {
	for idx, n := range devs {
		if n == name {
			return idx, nil
		}
	}
	var names []string
	for _, n := range devs {
		names = append(names, n)
	}
	if len(names) == 0 {
		return 0, &noDeviceError{fmt.Sprintf("no such RDMA device %q (there are none)", name)}
	}
	slices.Sort(names)
	return 0, &noDeviceError{fmt.Sprintf("no such RDMA device %q (have: %s)", name, strings.Join(names, ", "))}
}
