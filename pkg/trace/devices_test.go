package trace

import (
	"errors"
	"testing"

	"syscall"

	vnl "github.com/vishvananda/netlink"

	"github.com/syncmem/syncmem/pkg/genl"
)

// stubLinks makes rdmaLinkList return each answer in turn.
func stubLinks(t *testing.T, answers ...func() ([]*vnl.RdmaLink, error)) *int {
	t.Helper()
	calls := 0
	old := rdmaLinkList
	rdmaLinkList = func() ([]*vnl.RdmaLink, error) {
		a := answers[min(calls, len(answers)-1)]
		calls++
		return a()
	}
	t.Cleanup(func() { rdmaLinkList = old })
	return &calls
}

func links(pairs ...any) func() ([]*vnl.RdmaLink, error) {
	return func() ([]*vnl.RdmaLink, error) {
		var ls []*vnl.RdmaLink
		for i := 0; i < len(pairs); i += 2 {
			ls = append(ls, &vnl.RdmaLink{Attrs: vnl.RdmaLinkAttrs{Index: pairs[i].(uint32), Name: pairs[i+1].(string)}})
		}
		return ls, nil
	}
}

func TestDevices(t *testing.T) {
	stubLinks(t, links(uint32(0), "rxe0", uint32(4), "mlx5_1"))
	devs, err := Devices()
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
}

// An interrupted dump is retried; one that stays interrupted, or another
// error, is reported.
func TestDevicesDumpInterrupted(t *testing.T) {
	intr := func() ([]*vnl.RdmaLink, error) { return nil, vnl.ErrDumpInterrupted }
	calls := stubLinks(t, intr, links(uint32(1), "rxe1"))
	devs, err := Devices()
	if err != nil || devs[1] != "rxe1" || *calls != 2 {
		t.Fatalf("after one interruption: %v, %v, %d calls", devs, err, *calls)
	}
	calls = stubLinks(t, intr)
	if _, err := Devices(); !errors.Is(err, vnl.ErrDumpInterrupted) || *calls != dumpAttempts {
		t.Fatalf("always interrupted: %v, %d calls", err, *calls)
	}
	stubLinks(t, func() ([]*vnl.RdmaLink, error) { return nil, syscall.EPROTONOSUPPORT })
	if _, err := Devices(); !errors.Is(err, syscall.EPROTONOSUPPORT) {
		t.Fatalf("no RDMA netlink: %v", err)
	}
}
