package trace

import (
	"errors"
	"testing"

	"github.com/mdlayher/netlink"
	"github.com/syncmem/syncmem/pkg/genl"
)

func nldevMsg(t *testing.T, idx uint32, name string) netlink.Message {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(rdmaNldevAttrDevIdx, idx)
	ae.String(rdmaNldevAttrDevName, name)
	ae.Uint32(3, 1) // RDMA_NLDEV_ATTR_PORT_INDEX, ignored
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return netlink.Message{Data: b}
}

func TestParseDevices(t *testing.T) {
	devs, err := parseDevices([]netlink.Message{nldevMsg(t, 0, "rxe0"), nldevMsg(t, 4, "mlx5_1")})
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 || devs[0] != "rxe0" || devs[4] != "mlx5_1" {
		t.Fatalf("got %v", devs)
	}
	if idx, err := lookupDevice(devs, "mlx5_1"); err != nil || idx != 4 {
		t.Errorf("mlx5_1: %d, %v", idx, err)
	}
	_, err = lookupDevice(devs, "rxe9")
	if !errors.Is(err, genl.ErrNoDevice) || err.Error() != `no such RDMA device "rxe9" (have: mlx5_1, rxe0)` {
		t.Errorf("rxe9: %v", err)
	}
	_, err = lookupDevice(map[uint32]string{}, "rxe0")
	if err == nil || err.Error() != `no such RDMA device "rxe0" (there are none)` {
		t.Errorf("no devices: %v", err)
	}
	if _, err := parseDevices([]netlink.Message{{Data: []byte{1, 2, 3}}}); err == nil {
		t.Error("garbage parsed")
	}
}
