package syncdev

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unsafe"
)

// What the C headers give on x86-64, printed by a program that includes
// linux/ib_sync_mem_dev.h and linux/sync_file.h (sizeof, offsetof and the
// ioctl macros), built with
//
//	gcc -I kmod/include/uapi -o sizes sizes.c && ./sizes
const (
	cSizeofIocSync      = 40
	cSizeofIocSyncDev   = 48
	cSizeofIocMark      = 24
	cSizeofSyncFileInfo = 56
	cSizeofIocEntry     = 24 // struct ib_sync_mem_ioc_entry
	cSizeofIocSyncBatch = 40 // struct ib_sync_mem_ioc_sync_batch
	cSizeofIocOwn       = 8  // struct ib_sync_mem_ioc_own
	cSizeofIocCreate    = 32 // struct ib_sync_mem_ioc_create

	cIocNop       = 0x0000db00 // IB_SYNC_MEM_IOC_NOP
	cIocSync      = 0xc028db01 // IB_SYNC_MEM_IOC_SYNC
	cIocSyncDev   = 0xc030db02 // IB_SYNC_MEM_IOC_SYNC_DEV
	cIocMarkDirty = 0x4018db03 // IB_SYNC_MEM_IOC_MARK_DIRTY
	cIocFileInfo  = 0xc0383e04 // SYNC_IOC_FILE_INFO
	cIocSyncBatch = 0xc028db04 // IB_SYNC_MEM_IOC_SYNC_BATCH
	cIocOwn       = 0x4008db05 // IB_SYNC_MEM_IOC_OWN
	cIocCreate    = 0xc020db06 // IB_SYNC_MEM_IOC_CREATE
)

// x86IOC is _IOC in the x86-64 layout, written out apart from ioc: dir<<30
// | size<<16 | type<<8 | nr, _IOC_WRITE 1, _IOC_READ 2.
func x86IOC(dir, typ, nr, size uint32) uint32 { return dir<<30 | size<<16 | typ<<8 | nr }

// TestIoctlNumbers: the request numbers are the C header's, computed from
// the _IOC layout and as gcc printed them.
func TestIoctlNumbers(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 || iocDirShift != 30 {
		t.Skip("the pinned numbers are x86-64's (the generic _IOC layout, 64-bit)")
	}
	for _, tt := range []struct {
		name      string
		got       uintptr
		layout, c uint32
	}{
		{"NOP", reqNop, x86IOC(0, 0xdb, 0, 0), cIocNop},
		{"SYNC", reqSync, x86IOC(3, 0xdb, 1, cSizeofIocSync), cIocSync},
		{"SYNC_DEV", reqSyncDev, x86IOC(3, 0xdb, 2, cSizeofIocSyncDev), cIocSyncDev},
		{"MARK_DIRTY", reqMarkDirty, x86IOC(1, 0xdb, 3, cSizeofIocMark), cIocMarkDirty},
		{"SYNC_BATCH", reqSyncBatch, x86IOC(3, 0xdb, 4, cSizeofIocSyncBatch), cIocSyncBatch},
		{"OWN", reqOwn, x86IOC(1, 0xdb, 5, cSizeofIocOwn), cIocOwn},
		{"CREATE", reqCreate, x86IOC(3, 0xdb, 6, cSizeofIocCreate), cIocCreate},
		{"SYNC_IOC_FILE_INFO", reqFileInfo, x86IOC(3, '>', 4, cSizeofSyncFileInfo), cIocFileInfo},
	} {
		if tt.layout != tt.c {
			t.Errorf("%s: the layout gives %#08x, gcc printed %#08x", tt.name, tt.layout, tt.c)
		}
		if tt.got != uintptr(tt.c) {
			t.Errorf("%s = %#08x, want %#08x", tt.name, tt.got, tt.c)
		}
	}
}

// TestStructLayouts: each request struct has the C struct's size, and
// its bytes put every field at the C field's offset (as gcc's offsetof
// printed them), little-endian.
func TestStructLayouts(t *testing.T) {
	if unsafe.Sizeof(iocSync{}) != cSizeofIocSync || unsafe.Sizeof(iocSyncDev{}) != cSizeofIocSyncDev ||
		unsafe.Sizeof(iocMark{}) != cSizeofIocMark || unsafe.Sizeof(syncFileInfo{}) != cSizeofSyncFileInfo {
		t.Fatalf("sizes %d %d %d %d, want %d %d %d %d", unsafe.Sizeof(iocSync{}), unsafe.Sizeof(iocSyncDev{}),
			unsafe.Sizeof(iocMark{}), unsafe.Sizeof(syncFileInfo{}),
			cSizeofIocSync, cSizeofIocSyncDev, cSizeofIocMark, cSizeofSyncFileInfo)
	}
	if unsafe.Sizeof(iocEntry{}) != cSizeofIocEntry || unsafe.Sizeof(iocSyncBatch{}) != cSizeofIocSyncBatch ||
		unsafe.Sizeof(iocOwn{}) != cSizeofIocOwn {
		t.Fatalf("sizes %d %d %d, want %d %d %d", unsafe.Sizeof(iocEntry{}), unsafe.Sizeof(iocSyncBatch{}),
			unsafe.Sizeof(iocOwn{}), cSizeofIocEntry, cSizeofIocSyncBatch, cSizeofIocOwn)
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the expected bytes are little-endian")
	}
	// field is a value at a C offset; u32 for 4 bytes, u64 for 8.
	type field struct {
		off  int
		u32  uint32
		u64  uint64
		wide bool
	}
	expect := func(size int, fields ...field) []byte {
		b := make([]byte, size)
		for _, f := range fields {
			if f.wide {
				binary.LittleEndian.PutUint64(b[f.off:], f.u64)
			} else {
				binary.LittleEndian.PutUint32(b[f.off:], f.u32)
			}
		}
		return b
	}
	u32 := func(off int, v uint32) field { return field{off: off, u32: v} }
	u64 := func(off int, v uint64) field { return field{off: off, u64: v, wide: true} }
	neg := func(v int32) uint32 { return uint32(v) }

	sync := iocSync{ID: 3, Dir: 2, Offset: 0x1000, Len: 0x2000, Flags: 3, TimeoutMS: 500, InFence: 7, OutFence: -1}
	// ioc_sync offsets: id 0 dir 4 offset 8 len 16 flags 24 timeout_ms 28 in_fence 32 out_fence 36
	want := expect(40, u32(0, 3), u32(4, 2), u64(8, 0x1000), u64(16, 0x2000), u32(24, 3), u32(28, 500),
		u32(32, 7), u32(36, neg(-1)))
	if got := bytesOf(&sync); !bytes.Equal(got, want) {
		t.Errorf("ioc_sync\n got % x\nwant % x", got, want)
	}
	dev := iocSyncDev{DevIndex: 1, Dir: 4, Flags: 1, TimeoutMS: 9, InFence: 5, OutFence: 6,
		Clients: 10, Errors: 2, Skipped: 3, Err: -5, Pass: 1 << 40}
	// ioc_sync_dev offsets: dev_index 0 dir 4 flags 8 timeout_ms 12 in_fence 16 out_fence 20
	// clients 24 errors 28 skipped 32 err 36 pass 40
	want = expect(48, u32(0, 1), u32(4, 4), u32(8, 1), u32(12, 9), u32(16, 5), u32(20, 6),
		u32(24, 10), u32(28, 2), u32(32, 3), u32(36, neg(-5)), u64(40, 1<<40))
	if got := bytesOf(&dev); !bytes.Equal(got, want) {
		t.Errorf("ioc_sync_dev\n got % x\nwant % x", got, want)
	}
	mark := iocMark{ID: 8, Dir: 1, Offset: 64, Len: 128}
	// ioc_mark offsets: id 0 dir 4 offset 8 len 16
	want = expect(24, u32(0, 8), u32(4, 1), u64(8, 64), u64(16, 128))
	if got := bytesOf(&mark); !bytes.Equal(got, want) {
		t.Errorf("ioc_mark\n got % x\nwant % x", got, want)
	}
	entry := iocEntry{ID: 6, Err: -5, Offset: 64, Len: 1 << 33}
	// ioc_entry offsets: id 0 err 4 offset 8 len 16
	want = expect(24, u32(0, 6), u32(4, neg(-5)), u64(8, 64), u64(16, 1<<33))
	if got := bytesOf(&entry); !bytes.Equal(got, want) {
		t.Errorf("ioc_entry\n got % x\nwant % x", got, want)
	}
	batch := iocSyncBatch{Entries: 0xffff_8000_1234_5678, N: 3, Dir: 2, Flags: 3, TimeoutMS: 250,
		InFence: 9, OutFence: -1, Run: 3, Errors: 1}
	// ioc_sync_batch offsets: entries 0 n 8 dir 12 flags 16 timeout_ms 20 in_fence 24 out_fence 28
	// run 32 errors 36
	want = expect(40, u64(0, 0xffff_8000_1234_5678), u32(8, 3), u32(12, 2), u32(16, 3), u32(20, 250),
		u32(24, 9), u32(28, neg(-1)), u32(32, 3), u32(36, 1))
	if got := bytesOf(&batch); !bytes.Equal(got, want) {
		t.Errorf("ioc_sync_batch\n got % x\nwant % x", got, want)
	}
	own := iocOwn{ID: 0x01020304, Flags: 0x0a0b0c0d}
	// ioc_own offsets: id 0 flags 4
	want = expect(8, u32(0, 0x01020304), u32(4, 0x0a0b0c0d))
	if got := bytesOf(&own); !bytes.Equal(got, want) {
		t.Errorf("ioc_own\n got % x\nwant % x", got, want)
	}
	create := iocCreate{Attrs: 0x7fff_0000_1000, AttrsLen: 48, Flags: 2, Msg: 0x7fff_0000_2000, MsgLen: 256, ID: 7}
	// ioc_create offsets: attrs 0 attrs_len 8 flags 12 msg 16 msg_len 24 id 28
	want = expect(cSizeofIocCreate, u64(0, 0x7fff_0000_1000), u32(8, 48), u32(12, 2), u64(16, 0x7fff_0000_2000),
		u32(24, 256), u32(28, 7))
	if got := bytesOf(&create); !bytes.Equal(got, want) {
		t.Errorf("ioc_create\n got % x\nwant % x", got, want)
	}
	info := syncFileInfo{Status: -5, Flags: 1, NumFences: 2, Pad: 3, SyncFenceInfo: 4}
	copy(info.Name[:], "f")
	// sync_file_info offsets: status 32 flags 36 num_fences 40 (pad 44) sync_fence_info 48
	want = expect(56, u32(0, 'f'), u32(32, neg(-5)), u32(36, 1), u32(40, 2), u32(44, 3), u64(48, 4))
	if got := bytesOf(&info); !bytes.Equal(got, want) {
		t.Errorf("sync_file_info\n got % x\nwant % x", got, want)
	}
}

// bytesOf is the memory of *p, as the kernel reads it.
func bytesOf[T any](p *T) []byte {
	return bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p)))
}
