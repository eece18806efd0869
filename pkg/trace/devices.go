package trace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mdlayher/netlink"
	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// RDMA netlink (include/uapi/rdma/rdma_netlink.h): the nldev GET dump is
// what `rdma dev show` prints; its "ifindex" is RDMA_NLDEV_ATTR_DEV_INDEX,
// the ib_device index that the tracepoints carry as dev_index.
const (
	rdmaNLNldev          = 5 // RDMA_NL_NLDEV
	rdmaNldevCmdGet      = 1 // RDMA_NLDEV_CMD_GET
	rdmaNldevAttrDevIdx  = 1 // RDMA_NLDEV_ATTR_DEV_INDEX, u32
	rdmaNldevAttrDevName = 2 // RDMA_NLDEV_ATTR_DEV_NAME, string
)

// noDeviceError: no RDMA device has the name asked for. It matches
// genl.ErrNoDevice, as the module's refusal of an unknown device does.
type noDeviceError struct{ msg string }

func (e *noDeviceError) Error() string { return e.msg }
func (e *noDeviceError) Unwrap() error { return genl.ErrNoDevice }

// Devices returns the RDMA devices of the kernel, ib_device index to name,
// from RDMA netlink (as `rdma -j dev show` lists them).
func Devices() (map[uint32]string, error) {
	c, err := netlink.Dial(unix.NETLINK_RDMA, nil)
	if err != nil {
		return nil, fmt.Errorf("RDMA netlink (is ib_core loaded?): %w", err)
	}
	defer c.Close()
	msgs, err := c.Execute(netlink.Message{Header: netlink.Header{
		Type:  netlink.HeaderType(rdmaNLNldev<<10 | rdmaNldevCmdGet),
		Flags: netlink.Request | netlink.Dump,
	}})
	if err != nil {
		return nil, fmt.Errorf("RDMA netlink device dump: %w", err)
	}
	return parseDevices(msgs)
}

func parseDevices(msgs []netlink.Message) (map[uint32]string, error) {
	devs := make(map[uint32]string, len(msgs))
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, fmt.Errorf("RDMA netlink device dump: %w", err)
		}
		var idx uint32
		var name string
		var haveIdx bool
		for ad.Next() {
			switch ad.Type() {
			case rdmaNldevAttrDevIdx:
				idx, haveIdx = ad.Uint32(), true
			case rdmaNldevAttrDevName:
				name = ad.String()
			}
		}
		if err := ad.Err(); err != nil {
			return nil, fmt.Errorf("RDMA netlink device dump: %w", err)
		}
		if haveIdx && name != "" {
			devs[idx] = name
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
