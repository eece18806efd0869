package genl

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"
)

// allocRegion is AllocRegion for tests, freed at the end of the test.
func allocRegion(t *testing.T, size int) []byte {
	t.Helper()
	mem, err := AllocRegion(size)
	if err != nil {
		t.Fatalf("AllocRegion(%d): %v", size, err)
	}
	t.Cleanup(func() { _ = FreeRegion(mem) })
	return mem
}

func addrOf(mem []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem)))) }

// TestRegisterRegion: the request carries the slice's address and length,
// the access bits and the flags.
func TestRegisterRegion(t *testing.T) {
	page := os.Getpagesize()
	mem := allocRegion(t, 4*page)
	for _, tt := range []struct {
		name   string
		mem    []byte
		access RegionAccess
		flags  ClientFlags
		sent   []attr
	}{{
		name: "whole, read-only, no flags",
		mem:  mem,
		sent: []attr{
			str(attrDevName, "rxe0"), str(attrClientName, "r"), u32(attrClientKind, uint32(KindRegion)),
			nest(attrRegion, u64(regionAddr, addrOf(mem)), u64(regionLen, uint64(4*page)), u32(regionAccess, 0)),
		},
	}, {
		name:   "second and third page, written by the device, owned",
		mem:    mem[page : 3*page],
		access: RegionWrite,
		flags:  FlagOwned | FlagLazy,
		sent: []attr{
			str(attrDevName, "rxe0"), str(attrClientName, "r"), u32(attrClientKind, uint32(KindRegion)),
			u32(attrClientFlags, uint32(FlagOwned|FlagLazy)),
			nest(attrRegion, u64(regionAddr, addrOf(mem)+uint64(page)), u64(regionLen, uint64(2*page)),
				u32(regionAccess, uint32(RegionWrite))),
		},
	}, {
		name:   "at byte 100, a page and 11 bytes long, as malloc returns one",
		mem:    mem[100 : 100+page+11],
		access: RegionWrite,
		sent: []attr{
			str(attrDevName, "rxe0"), str(attrClientName, "r"), u32(attrClientKind, uint32(KindRegion)),
			nest(attrRegion, u64(regionAddr, addrOf(mem)+100), u64(regionLen, uint64(page+11)),
				u32(regionAccess, uint32(RegionWrite))),
		},
	}, {
		name: "one byte in the middle of a page",
		mem:  mem[page/2 : page/2+1],
		sent: []attr{
			str(attrDevName, "rxe0"), str(attrClientName, "r"), u32(attrClientKind, uint32(KindRegion)),
			nest(attrRegion, u64(regionAddr, addrOf(mem)+uint64(page/2)), u64(regionLen, 1), u32(regionAccess, 0)),
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			c, k := dialFake(t, func(request) ([]msg, error) { return []msg{{Attrs: regionClientAttrs}}, nil })
			got, err := c.RegisterRegion(bg, "rxe0", "r", tt.mem, tt.access, tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			if len(k.reqs) != 1 || k.reqs[0].Command != cmdClientNew || k.reqs[0].Flags != doFlags {
				t.Fatalf("requests %+v, want one CLIENT_NEW", k.reqs)
			}
			if d := cmp.Diff(tt.sent, k.reqs[0].Attrs, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("attributes sent (-want +got):\n%s", d)
			}
			if d := cmp.Diff(&regionClientWant, got); d != "" {
				t.Errorf("client (-want +got):\n%s", d)
			}
		})
	}
}

// TestRegisterRegionRefused: memory that cannot be a region is refused
// with ErrInvalid before anything is sent.
func TestRegisterRegionRefused(t *testing.T) {
	page := os.Getpagesize()
	mem := allocRegion(t, 2*page)
	// Address space past the kernel's limit, reserved but never committed.
	huge, err := unix.Mmap(-1, 0, MaxRegionLen+page, unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer func() { _ = unix.Munmap(huge) }()
	for _, tt := range []struct {
		name string
		mem  []byte
		want string
	}{
		{"nil", nil, "region is empty"},
		{"empty", mem[:0], "region is empty"},
		{"over 1 GiB", huge, "over the kernel's limit of 1 GiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, k := dialFake(t, func(request) ([]msg, error) { return []msg{{Attrs: regionClientAttrs}}, nil })
			_, err := c.RegisterRegion(bg, "rxe0", "r", tt.mem, RegionWrite, 0)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) ||
				!strings.HasPrefix(err.Error(), "register client r: invalid argument: ") {
				t.Errorf("error %v, want ErrInvalid: ... %q", err, tt.want)
			}
			if len(k.reqs) != 0 {
				t.Errorf("%d requests sent", len(k.reqs))
			}
		})
	}
	// Exactly 1 GiB is the limit, not over it.
	if _, err := checkRegion(huge[:MaxRegionLen]); err != nil {
		t.Errorf("1 GiB: %v", err)
	}
}

// TestRegisterRegionKernelError: the kernel's refusal (here, as for memory
// that is not mapped) comes back as an *Error.
func TestRegisterRegionKernelError(t *testing.T) {
	mem := allocRegion(t, os.Getpagesize())
	c, _ := dialFake(t, func(request) ([]msg, error) {
		return nil, &kernelError{unix.EFAULT, "cannot pin the region (not mapped?)", []uint16{attrRegion}, 0}
	})
	_, err := c.RegisterRegion(bg, "rxe0", "r", mem, 0, 0)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, syscall.EFAULT) ||
		err.Error() != "register client r: cannot pin the region (not mapped?) (REGION)" {
		t.Errorf("error %v", err)
	}
}

func TestAllocRegion(t *testing.T) {
	page := os.Getpagesize()
	mem := allocRegion(t, 3*page)
	if len(mem) != 3*page || cap(mem) != 3*page {
		t.Errorf("len %d cap %d, want %d", len(mem), cap(mem), 3*page)
	}
	if _, err := checkRegion(mem); err != nil {
		t.Errorf("not a valid region: %v", err)
	}
	for i, b := range mem {
		if b != 0 {
			t.Fatalf("byte %d is %d, want zeroed memory", i, b)
		}
	}
	for i := range mem {
		mem[i] = byte(i)
	}
	for _, size := range []int{0, -page, 1, page + 1, page / 2} {
		if m, err := AllocRegion(size); !errors.Is(err, ErrInvalid) || m != nil ||
			!strings.Contains(err.Error(), "not a positive multiple of the page size") {
			t.Errorf("AllocRegion(%d) = %d bytes, %v; want ErrInvalid", size, len(m), err)
		}
	}
}

func TestFreeRegion(t *testing.T) {
	page := os.Getpagesize()
	mem, err := AllocRegion(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := FreeRegion(mem); err != nil {
		t.Fatalf("FreeRegion: %v", err)
	}
	if err := FreeRegion(mem); !errors.Is(err, unix.EINVAL) {
		t.Errorf("FreeRegion twice: %v, want EINVAL", err)
	}
	if err := FreeRegion(make([]byte, page)); !errors.Is(err, unix.EINVAL) {
		t.Errorf("FreeRegion of heap memory: %v, want EINVAL", err)
	}
}

func TestRegisterDMABuf(t *testing.T) {
	c, k := dialFake(t, func(request) ([]msg, error) { return []msg{{Attrs: dmabufClientAttrs}}, nil })
	got, err := c.RegisterDMABuf(bg, "rxe0", "d", 7, FlagOwned)
	if err != nil {
		t.Fatal(err)
	}
	want := []attr{
		str(attrDevName, "rxe0"), str(attrClientName, "d"), u32(attrClientKind, uint32(KindDMABuf)),
		u32(attrClientFlags, uint32(FlagOwned)), nest(attrDMABuf, s32(dmabufFD, 7)),
	}
	if len(k.reqs) != 1 || k.reqs[0].Command != cmdClientNew {
		t.Fatalf("requests %+v", k.reqs)
	}
	if d := cmp.Diff(want, k.reqs[0].Attrs); d != "" {
		t.Errorf("attributes sent (-want +got):\n%s", d)
	}
	if d := cmp.Diff(&dmabufClientWant, got); d != "" {
		t.Errorf("client (-want +got):\n%s", d)
	}

	for _, fd := range []int{-1, 1 << 31} {
		c, k := dialFake(t, func(request) ([]msg, error) { return nil, nil })
		if _, err := c.RegisterDMABuf(bg, "rxe0", "d", fd, 0); !errors.Is(err, ErrInvalid) ||
			!strings.Contains(err.Error(), "out of range") {
			t.Errorf("fd %d: %v, want ErrInvalid", fd, err)
		}
		if len(k.reqs) != 0 {
			t.Errorf("fd %d: %d requests sent", fd, len(k.reqs))
		}
	}

	// Not a dma-buf: the kernel's EBADF, pointing at the fd.
	c, _ = dialFake(t, func(request) ([]msg, error) {
		return nil, &kernelError{unix.EBADF, "not a dma-buf", []uint16{attrDMABuf, dmabufFD}, 0}
	})
	_, err = c.RegisterDMABuf(bg, "rxe0", "d", 0, 0)
	if !errors.Is(err, syscall.EBADF) || err.Error() != "register client d: not a dma-buf (DMABUF_FD=0)" {
		t.Errorf("error %v", err)
	}
}
