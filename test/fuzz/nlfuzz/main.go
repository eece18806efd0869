// Command nlfuzz sends random and mutated generic netlink messages to the
// ib_sync_mem family and checks that the kernel keeps its promises.
//
// It resolves the family with genetlink, then writes arbitrary bytes on a raw
// NETLINK_GENERIC socket: random commands (unknown and event-only ones too),
// random attribute trees (types, lengths, nesting, NLA_F_* bits), random
// nlmsg flags (NLM_F_DUMP, NLM_F_ACK, anything), truncated headers, wrong
// lengths, several messages in one datagram, valid requests mutated by bit
// flips, huge SYNC_CLIENTS batches, and ranges (SYNC_OFFSET, SYNC_LEN) of
// syncs and MARK_DIRTY inside, across and past clients, on and off the
// sim's alignment, with every target. Replies are read without ever
// blocking (MSG_DONTWAIT, and SO_RCVTIMEO on the final reads) and discarded
// after being counted and checked; every client a reply shows created is
// deleted at once, so the run leaves no state behind.
//
// Invariants (a violation makes the exit status 1):
//   - no event carries the sensitive attributes (OWNER_PORTID, OWNER_PID,
//     INFO);
//   - --unprivileged: every CLIENT_NEW, CLIENT_DEL, SYNC or MARK_DIRTY
//     request that the genetlink core hands to its permission check (a "do"
//     whose headers pass the core's checks, whatever its attributes: see
//     mustBeEPERM) is acked with EPERM and nothing is created; no reply
//     carries the sensitive attributes;
//   - privileged: no request is refused with EPERM;
//   - at the end the family still answers a DEV_GET and a CLIENT_GET dump.
//
// Usage: nlfuzz [--seed N] [--count N] [--timeout D] [--dev rxe0]
// [--unprivileged] [--setuid UID]
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/mdlayher/genetlink"
	"golang.org/x/sys/unix"
)

type stats struct {
	sent, msgs, datagrams int
	sendErr               map[string]int
	acks                  map[string]int // errno name, "0" for success
	replies               map[int]int    // by genl cmd
	events                map[int]int
	dones, dumpIntr       int
	other                 int
	recvErr               map[string]int
	created, deleted      int
	epermOK               int
	violations            []string
}

func (s *stats) violate(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if len(s.violations) < 20 {
		fmt.Fprintf(os.Stderr, "nlfuzz: VIOLATION: %s\n", msg)
	}
	s.violations = append(s.violations, msg)
}

type fuzzer struct {
	r       *rand.Rand
	fd      int
	fam     uint16
	dev     string
	devIdx  []uint32
	ids     []uint32 // clients seen (suite's ones and others)
	seq     uint32
	unpriv  bool
	region  []byte
	st      stats
	created []uint32 // to delete
	// seq -> true: a well-formed mutating "do" request of the last datagram
	// (unprivileged runs expect EPERM for each).
	expectEPERM map[uint32]bool
	overrun     bool
}

func errName(e syscall.Errno) string {
	if e == 0 {
		return "0"
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return fmt.Sprintf("errno%d", int(e))
}

// ---- encoding ----

func align4(n int) int { return (n + 3) &^ 3 }

func attr(typ uint16, payload []byte) []byte {
	b := make([]byte, 4+align4(len(payload)))
	binary.LittleEndian.PutUint16(b[0:], uint16(4+len(payload)))
	binary.LittleEndian.PutUint16(b[2:], typ)
	copy(b[4:], payload)
	return b
}

func u32(v uint32) []byte { b := make([]byte, 4); binary.LittleEndian.PutUint32(b, v); return b }
func u64(v uint64) []byte { b := make([]byte, 8); binary.LittleEndian.PutUint64(b, v); return b }
func str(s string) []byte { return append([]byte(s), 0) }
func nest(typ uint16, parts ...[]byte) []byte {
	var p []byte
	for _, x := range parts {
		p = append(p, x...)
	}
	return attr(typ|nlaFNested, p)
}

func (f *fuzzer) nextSeq() uint32 { f.seq++; return f.seq }

// msg builds one nlmsghdr + genlmsghdr + payload with a correct length.
func (f *fuzzer) msg(cmd uint8, flags uint16, payload []byte) []byte {
	b := make([]byte, 20, 20+len(payload))
	b = append(b, payload...)
	binary.LittleEndian.PutUint32(b[0:], uint32(len(b)))
	binary.LittleEndian.PutUint16(b[4:], f.fam)
	binary.LittleEndian.PutUint16(b[6:], flags)
	binary.LittleEndian.PutUint32(b[8:], f.nextSeq())
	b[16] = cmd
	b[17] = 1
	return b
}

// ---- generators ----

func (f *fuzzer) randFlags() uint16 {
	r := f.r
	switch n := r.Intn(100); {
	case n < 5:
		return uint16(r.Uint32())
	case n < 10:
		return uint16(r.Intn(1 << 4)) // maybe without NLM_F_REQUEST
	default:
		fl := uint16(unix.NLM_F_REQUEST)
		if r.Intn(2) == 0 {
			fl |= unix.NLM_F_ACK
		}
		if r.Intn(5) == 0 {
			fl |= nlmFDump
		} else if r.Intn(20) == 0 {
			fl |= uint16([]int{nlmFRoot, nlmFMatch, unix.NLM_F_ATOMIC, unix.NLM_F_ECHO}[r.Intn(4)])
		}
		return fl
	}
}

func (f *fuzzer) randCmd() uint8 {
	r := f.r
	switch n := r.Intn(100); {
	case n < 70:
		return doCmds[r.Intn(len(doCmds))]
	case n < 85:
		return uint8(7 + r.Intn(4)) // event-only
	case n < 90:
		return 0
	default:
		return uint8(r.Intn(256))
	}
}

// doCmds are the commands that are not only events.
var doCmds = []uint8{cmdDevGet, cmdClientNew, cmdClientDel, cmdClientGet, cmdSync, cmdStatsGet, cmdMarkDirty}

func (f *fuzzer) randID() uint32 {
	r := f.r
	if len(f.ids) > 0 && r.Intn(3) != 0 {
		return f.ids[r.Intn(len(f.ids))]
	}
	return []uint32{0, 1, 2, 3, uint32(r.Intn(1000)), r.Uint32(), 0x7fffffff, 0xffffffff}[r.Intn(8)]
}

func (f *fuzzer) randDev() []byte {
	r := f.r
	switch r.Intn(6) {
	case 0, 1:
		return attr(aDevName, str(f.dev))
	case 2:
		if len(f.devIdx) > 0 {
			return attr(aDevIndex, u32(f.devIdx[r.Intn(len(f.devIdx))]))
		}
		return attr(aDevIndex, u32(uint32(r.Intn(4))))
	case 3:
		return attr(aDevIndex, u32(r.Uint32()))
	case 4:
		return attr(aDevName, str(strings.Repeat("x", r.Intn(80))))
	default:
		return attr(aDevName, []byte(f.dev)) // no NUL
	}
}

func (f *fuzzer) randPayload(max int) []byte {
	b := make([]byte, f.r.Intn(max+1))
	f.r.Read(b)
	return b
}

// randAttrs: a random attribute tree, depth levels deep at most.
func (f *fuzzer) randAttrs(depth int) []byte {
	r := f.r
	var out []byte
	n := r.Intn(6)
	for i := 0; i < n; i++ {
		typ := uint16(r.Intn(aMax + 8))
		if r.Intn(10) == 0 {
			typ = uint16(r.Uint32())
		}
		if r.Intn(8) == 0 {
			typ |= nlaFNested
		}
		if r.Intn(16) == 0 {
			typ |= nlaFNetByteord
		}
		var p []byte
		switch k := r.Intn(10); {
		case depth > 0 && k < 3:
			p = f.randAttrs(depth - 1)
		case k < 5:
			p = u32(r.Uint32())
		case k < 6:
			p = u64(r.Uint64())
		case k < 7:
			p = str(strings.Repeat("n", r.Intn(40)))
		default:
			p = f.randPayload(40)
		}
		a := attr(typ, p)
		if r.Intn(15) == 0 { // wrong nla_len
			binary.LittleEndian.PutUint16(a[0:], uint16(r.Intn(len(a)+64)))
		}
		out = append(out, a...)
	}
	return out
}

func (f *fuzzer) simNest() []byte {
	r := f.r
	var parts [][]byte
	if r.Intn(3) == 0 {
		parts = append(parts, attr(simLatencyUS, u32(uint32(r.Intn(50)))))
	}
	if r.Intn(3) == 0 {
		parts = append(parts, attr(simFailNext, u32(uint32(r.Intn(3)))))
	}
	if r.Intn(3) == 0 {
		parts = append(parts, attr(simFailErrno, u32(uint32(r.Intn(4097)))))
	}
	if r.Intn(3) == 0 {
		parts = append(parts, attr(simSize, u64(r.Uint64()>>uint(r.Intn(64)))))
	}
	if r.Intn(3) == 0 {
		parts = append(parts, attr(simBatch, nil))
	}
	return nest(aSim, parts...)
}

// randRange: often none; else SYNC_OFFSET and SYNC_LEN, or one of them
// alone, with values on and off a sim client's 64-byte alignment, inside,
// across and past the sizes clients have, and at the edges of a u64.
func (f *fuzzer) randRange() []byte {
	r := f.r
	v := func() uint64 {
		return []uint64{0, 1, 63, 64, 4096, 8192, 1 << 20, 1<<20 - 64, 1<<20 + 64,
			r.Uint64() >> uint(r.Intn(64)), ^uint64(0) - 63, ^uint64(0)}[r.Intn(12)]
	}
	switch r.Intn(6) {
	case 0, 1:
		return nil
	case 2:
		return attr(aSyncLen, u64(v()))
	case 3:
		return attr(aSyncOffset, u64(v()))
	default:
		return append(attr(aSyncOffset, u64(v())), attr(aSyncLen, u64(v()))...)
	}
}

// randDir is a sync direction, valid or not (0 and dirLast+1).
func (f *fuzzer) randDir() []byte { return attr(aSyncDir, u32(uint32(f.r.Intn(dirLast+2)))) }

// valid builds a well-formed request (that the kernel may still refuse).
func (f *fuzzer) valid() []byte {
	r := f.r
	req := uint16(unix.NLM_F_REQUEST)
	if r.Intn(2) == 0 {
		req |= unix.NLM_F_ACK
	}
	switch r.Intn(14) {
	case 0:
		return f.msg(cmdDevGet, req, f.randDev())
	case 1:
		return f.msg(cmdDevGet, req|nlmFDump, nil)
	case 2:
		return f.msg(cmdClientGet, req|nlmFDump, nil)
	case 3:
		return f.msg(cmdClientGet, req|nlmFDump, f.randDev())
	case 4:
		return f.msg(cmdClientGet, req, attr(aClientID, u32(f.randID())))
	case 5:
		var p []byte
		switch r.Intn(3) {
		case 0:
			p = attr(aClientID, u32(f.randID()))
		case 1:
			p = f.randDev()
		}
		return f.msg(cmdStatsGet, req, p)
	case 6, 7:
		kind := uint32(1)
		if r.Intn(4) == 0 {
			kind = uint32(r.Intn(5))
		}
		p := append(f.randDev(), attr(aClientName, str(fmt.Sprintf("fz%d", r.Intn(1000))))...)
		p = append(p, attr(aClientKind, u32(kind))...)
		if r.Intn(2) == 0 {
			p = append(p, attr(aClientFlags, u32(uint32(r.Intn(4))))...)
		}
		switch kind {
		case 1:
			if r.Intn(2) == 0 {
				p = append(p, f.simNest()...)
			}
		case 2:
			addr := uint64(uintptr(unsafe.Pointer(&f.region[0])))
			ln := uint64(4096 * (1 + r.Intn(len(f.region)/4096)))
			if r.Intn(4) == 0 {
				addr += uint64(r.Intn(8192))
			}
			if r.Intn(4) == 0 {
				ln = r.Uint64() >> uint(r.Intn(64))
			}
			p = append(p, nest(aRegion, attr(regionAddr, u64(addr)), attr(regionLen, u64(ln)),
				attr(regionAccess, u32(uint32(r.Intn(3)))))...)
		case 3:
			p = append(p, nest(aDmabuf, attr(dmabufFD, u32(uint32([]int{-1, 0, 1, 2, f.fd, 1000}[r.Intn(6)]))))...)
		}
		return f.msg(cmdClientNew, req, p)
	case 8:
		return f.msg(cmdClientDel, req, attr(aClientID, u32(f.randID())))
	case 9, 10:
		p := append(attr(aClientID, u32(f.randID())), f.randDir()...)
		return f.msg(cmdMarkDirty, req, append(p, f.randRange()...))
	default:
		p := f.randDir()
		if r.Intn(3) == 0 {
			p = append(p, attr(aSyncTimeoutMS, u32([]uint32{0, 1, 100, 600000, 600001}[r.Intn(5)]))...)
		}
		switch r.Intn(3) {
		case 0:
			p = append(p, f.randDev()...)
		case 1:
			p = append(p, attr(aClientID, u32(f.randID()))...)
		default:
			var ids [][]byte
			for i := r.Intn(5); i >= 0; i-- {
				ids = append(ids, attr(aClientID, u32(f.randID())))
			}
			p = append(p, nest(aSyncClients, ids...)...)
		}
		return f.msg(cmdSync, req, append(p, f.randRange()...))
	}
}

// mutate flips bits, overwrites bytes, truncates, extends or duplicates.
func (f *fuzzer) mutate(b []byte) []byte {
	r := f.r
	for n := 1 + r.Intn(4); n > 0; n-- {
		switch r.Intn(7) {
		case 0, 1, 2:
			if len(b) > 0 {
				i := r.Intn(len(b))
				b[i] ^= 1 << uint(r.Intn(8))
			}
		case 3:
			if len(b) > 0 {
				b[r.Intn(len(b))] = byte(r.Intn(256))
			}
		case 4:
			if len(b) > 0 {
				b = b[:r.Intn(len(b))]
			}
		case 5:
			b = append(b, f.randAttrs(2)...)
		case 6:
			if len(b) > 20 {
				i := 20 + r.Intn(len(b)-20)
				b = append(b[:i:i], append(f.randPayload(12), b[i:]...)...)
			}
		}
	}
	return b
}

func (f *fuzzer) hugeBatch() []byte {
	r := f.r
	n := []int{0, 1, 1000, batchMax - 1, batchMax, batchMax + 1, hugeBatch, r.Intn(hugeBatch + 100)}[r.Intn(8)]
	// Batches of real ids run every sync: a few of those are enough.
	realIDs := len(f.ids) > 0 && r.Intn(5) == 0
	p := make([]byte, 0, 8*n+16)
	for i := 0; i < n; i++ {
		id := r.Uint32()
		if realIDs {
			id = f.ids[r.Intn(len(f.ids))]
		} else if i == n-1 && len(f.ids) > 0 {
			id = f.ids[0]
		}
		p = append(p, attr(aClientID, u32(id))...)
	}
	var nst []byte
	if 4+len(p) <= 0xffff {
		nst = nest(aSyncClients, p)
	} else {
		// nla_len is 16 bits: an oversized nest's length wraps.
		nst = make([]byte, 4, 4+len(p))
		binary.LittleEndian.PutUint16(nst[0:], uint16(4+len(p)))
		binary.LittleEndian.PutUint16(nst[2:], aSyncClients|nlaFNested)
		nst = append(nst, p...)
	}
	payload := append(attr(aSyncDir, u32(uint32(1+r.Intn(dirLast)))), nst...)
	return f.msg(cmdSync, unix.NLM_F_REQUEST|unix.NLM_F_ACK, payload)
}

// one builds a single message of any shape.
func (f *fuzzer) one() []byte {
	r := f.r
	switch n := r.Intn(100); {
	case n < 30: // valid, mostly mutated
		b := f.valid()
		if r.Intn(3) != 0 {
			b = f.mutate(b)
		}
		return b
	case n < 60: // random command, random attribute tree
		return f.msg(f.randCmd(), f.randFlags(), f.randAttrs(r.Intn(7)))
	case n < 70: // random bytes after a header
		b := f.msg(f.randCmd(), f.randFlags(), f.randPayload(300))
		if r.Intn(2) == 0 {
			b[18], b[19] = byte(r.Intn(256)), byte(r.Intn(256)) // genl reserved
		}
		return b
	case n < 80: // wrong nlmsg_len
		b := f.msg(f.randCmd(), f.randFlags(), f.randAttrs(2))
		binary.LittleEndian.PutUint32(b[0:], []uint32{0, 1, 15, 16, 17, 19, 20, uint32(len(b) + 4), r.Uint32()}[r.Intn(9)])
		return b
	case n < 85: // truncated header
		b := f.msg(f.randCmd(), f.randFlags(), nil)
		return b[:r.Intn(20)]
	case n < 87: // netlink control types (ignored or refused by the core)
		b := f.msg(f.randCmd(), f.randFlags(), f.randAttrs(1))
		binary.LittleEndian.PutUint16(b[4:], uint16(r.Intn(16)))
		return b
	case n < 88:
		if r.Intn(20) == 0 { // one message in 2000
			return f.hugeBatch()
		}
		return f.valid()
	default: // a mutated valid message with random flags and command
		b := f.valid()
		binary.LittleEndian.PutUint16(b[6:], f.randFlags())
		if r.Intn(2) == 0 {
			b[16] = f.randCmd()
		}
		return f.mutate(b)
	}
}

// datagram: one message, or several back to back.
func (f *fuzzer) datagram() ([]byte, int) {
	if f.r.Intn(10) != 0 {
		return f.one(), 1
	}
	var b []byte
	n := 2 + f.r.Intn(9)
	for i := 0; i < n; i++ {
		m := f.one()
		b = append(b, m...)
		b = append(b, make([]byte, align4(len(m))-len(m))...)
	}
	return b, n
}

// ---- the kernel's view of what was sent ----

// mustBeEPERM tells whether the kernel refuses the message at hdr with
// EPERM when the sender lacks CAP_NET_ADMIN. It mirrors, check by check,
// what runs before the permission check (the same in 6.1 and 6.12):
//   - netlink_rcv_skb hands only requests (NLM_F_REQUEST) of a type at or
//     above NLMSG_MIN_TYPE to genl_rcv_msg, which finds the family by type;
//   - genl_family_rcv_msg: nlmsg_len covers nlmsghdr + genlmsghdr (the
//     family has no user header), else EINVAL;
//   - genl_header_check (the family's resv_start_op is 0, so it applies to
//     every command): genlmsghdr.reserved is 0, and nlmsg_flags, without a
//     complete NLM_F_DUMP, hold nothing but NLM_F_REQUEST, NLM_F_ACK and
//     NLM_F_ECHO, else EINVAL;
//   - genl_get_cmd: the command exists (for a dump, in 6.12, it must have a
//     dumpit, which the mutating commands lack: EOPNOTSUPP there, EPERM in
//     6.1; dumps are left out for that reason), else EOPNOTSUPP;
//   - then GENL_ADMIN_PERM: EPERM. Attribute parsing and the policy come
//     after it, so a malformed attribute must never turn into EINVAL.
func (f *fuzzer) mustBeEPERM(hdr []byte, l int) bool {
	const allowed = unix.NLM_F_REQUEST | unix.NLM_F_ACK | unix.NLM_F_ECHO
	typ := binary.LittleEndian.Uint16(hdr[4:])
	fl := binary.LittleEndian.Uint16(hdr[6:])
	if typ != f.fam || fl&unix.NLM_F_REQUEST == 0 || l < 20 {
		return false
	}
	if fl&nlmFDump != 0 || fl&^allowed != 0 || hdr[18] != 0 || hdr[19] != 0 {
		return false
	}
	cmd := hdr[16]
	return cmd == cmdClientNew || cmd == cmdClientDel || cmd == cmdSync || cmd == cmdMarkDirty
}

// scan walks the datagram as netlink_rcv_skb does and notes the requests
// that an unprivileged caller must see refused with EPERM.
func (f *fuzzer) scan(b []byte) {
	f.expectEPERM = map[uint32]bool{}
	seen := map[uint32]bool{}
	for len(b) >= 16 {
		l := int(binary.LittleEndian.Uint32(b[0:]))
		if l < 16 || l > len(b) {
			break
		}
		seq := binary.LittleEndian.Uint32(b[8:])
		if seen[seq] {
			delete(f.expectEPERM, seq) // ambiguous
		} else if f.mustBeEPERM(b, l) {
			f.expectEPERM[seq] = true
		}
		seen[seq] = true
		if align4(l) >= len(b) {
			break
		}
		b = b[align4(l):]
	}
}

// ---- receiving ----

func parseAttrs(b []byte) map[uint16][]byte {
	m := map[uint16][]byte{}
	for len(b) >= 4 {
		l := int(binary.LittleEndian.Uint16(b[0:]))
		if l < 4 || l > len(b) {
			break
		}
		m[binary.LittleEndian.Uint16(b[2:])&^(nlaFNested|nlaFNetByteord)] = b[4:l]
		if align4(l) >= len(b) {
			break
		}
		b = b[align4(l):]
	}
	return m
}

var rbuf = make([]byte, 8<<20)

// drain reads whatever is queued; wait > 0 allows blocking reads bounded
// by SO_RCVTIMEO until nothing arrives for one timeout.
func (f *fuzzer) drain(block bool) {
	flags := unix.MSG_DONTWAIT
	if block {
		flags = 0
	}
	for i := 0; i < 100000; i++ {
		n, _, err := unix.Recvfrom(f.fd, rbuf, flags)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				return
			}
			f.st.recvErr[errName(err.(syscall.Errno))]++
			if errors.Is(err, unix.ENOBUFS) {
				f.overrun = true
				continue
			}
			return
		}
		f.handle(rbuf[:n])
	}
}

func (f *fuzzer) handle(b []byte) {
	for len(b) >= 16 {
		l := int(binary.LittleEndian.Uint32(b[0:]))
		if l < 16 || l > len(b) {
			f.st.other++
			return
		}
		typ := binary.LittleEndian.Uint16(b[4:])
		fl := binary.LittleEndian.Uint16(b[6:])
		seq := binary.LittleEndian.Uint32(b[8:])
		portid := binary.LittleEndian.Uint32(b[12:])
		body := b[16:l]
		switch {
		case typ == unix.NLMSG_ERROR && len(body) >= 4:
			e := syscall.Errno(-int32(binary.LittleEndian.Uint32(body)))
			f.st.acks[errName(e)]++
			if len(body) >= 20 {
				seq = binary.LittleEndian.Uint32(body[4+8:])
			}
			if f.expectEPERM[seq] {
				delete(f.expectEPERM, seq)
				if f.unpriv {
					if e == unix.EPERM {
						f.st.epermOK++
					} else {
						f.st.violate("unprivileged mutating request seq %d acked with %s, not EPERM%s",
							seq, errName(e), extackMsg(fl, body))
					}
				}
			}
			if !f.unpriv && e == unix.EPERM {
				f.st.violate("privileged request seq %d refused with EPERM", seq)
			}
		case typ == unix.NLMSG_DONE:
			f.st.dones++
		case typ == f.fam && len(body) >= 4:
			cmd := int(body[0])
			attrs := parseAttrs(body[4:])
			event := portid == 0 && seq == 0
			if event {
				f.st.events[cmd]++
			} else {
				f.st.replies[cmd]++
			}
			if fl&nlmFDumpIntr != 0 {
				f.st.dumpIntr++
			}
			for _, s := range []uint16{aOwnerPortID, aOwnerPID, aClientInfo} {
				if _, ok := attrs[s]; ok && (event || f.unpriv) {
					f.st.violate("sensitive attribute %d in a %s (cmd %d, seq %d)", s,
						map[bool]string{true: "event", false: "reply"}[event], cmd, seq)
				}
			}
			if id, ok := attrs[aClientID]; ok && len(id) == 4 {
				v := binary.LittleEndian.Uint32(id)
				if !event && cmd == cmdClientNew {
					f.st.created++
					f.created = append(f.created, v)
					if f.unpriv {
						f.st.violate("unprivileged CLIENT_NEW created client %d", v)
					}
				}
			}
		default:
			f.st.other++
		}
		if align4(l) >= len(b) {
			return
		}
		b = b[align4(l):]
	}
}

// extackMsg returns the extended ack's message of an NLMSG_ERROR body
// (after its nlmsghdr), as ": msg", or "".
func extackMsg(fl uint16, body []byte) string {
	const capped, tlvs, attrMsg = 0x100, 0x200, 1
	if fl&tlvs == 0 || len(body) < 20 {
		return ""
	}
	off := 20
	if fl&capped == 0 {
		off = 4 + align4(int(binary.LittleEndian.Uint32(body[4:])))
	}
	if off > len(body) {
		return ""
	}
	if m, ok := parseAttrs(body[off:])[attrMsg]; ok {
		return ": " + strings.TrimRight(string(m), "\x00")
	}
	return ""
}

func (f *fuzzer) send(b []byte) error {
	sa := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	return unix.Sendto(f.fd, b, 0, sa)
}

// cleanup deletes every client the run created (only its own).
func (f *fuzzer) cleanup() {
	for len(f.created) > 0 {
		ids := f.created
		f.created = nil
		for _, id := range ids {
			m := f.msg(cmdClientDel, unix.NLM_F_REQUEST|unix.NLM_F_ACK, attr(aClientID, u32(id)))
			seq := binary.LittleEndian.Uint32(m[8:])
			if err := f.send(m); err != nil {
				f.st.violate("cannot send CLIENT_DEL for %d: %v", id, err)
				continue
			}
			got := f.waitAck(seq)
			if got == 0 {
				f.st.deleted++
			} else if got != unix.ENOENT { // ENOENT: a fuzzed CLIENT_DEL got it first
				f.st.violate("deleting client %d the run created: %s", id, errName(got))
			}
		}
	}
}

// waitAck reads until the ack of seq arrives (bounded by SO_RCVTIMEO).
func (f *fuzzer) waitAck(seq uint32) syscall.Errno {
	for i := 0; i < 1000; i++ {
		n, _, err := unix.Recvfrom(f.fd, rbuf, 0)
		if err != nil {
			if errors.Is(err, unix.ENOBUFS) {
				continue
			}
			return err.(syscall.Errno)
		}
		b := rbuf[:n]
		var res syscall.Errno = 255
		for len(b) >= 16 {
			l := int(binary.LittleEndian.Uint32(b[0:]))
			if l < 16 || l > len(b) {
				break
			}
			if binary.LittleEndian.Uint16(b[4:]) == unix.NLMSG_ERROR && l >= 20 &&
				binary.LittleEndian.Uint32(b[8:]) == seq {
				res = syscall.Errno(-int32(binary.LittleEndian.Uint32(b[16:])))
			}
			if align4(l) >= len(b) {
				break
			}
			b = b[align4(l):]
		}
		f.handle(rbuf[:n])
		if res != 255 {
			return res
		}
	}
	return unix.ETIMEDOUT
}

// dump runs a dump to its end and returns the messages of cmd it got.
func (f *fuzzer) dump(cmd uint8, payload []byte) ([]map[uint16][]byte, error) {
	m := f.msg(cmd, unix.NLM_F_REQUEST|nlmFDump|unix.NLM_F_ACK, payload)
	seq := binary.LittleEndian.Uint32(m[8:])
	if err := f.send(m); err != nil {
		return nil, err
	}
	var out []map[uint16][]byte
	for i := 0; i < 10000; i++ {
		n, _, err := unix.Recvfrom(f.fd, rbuf, 0)
		if err != nil {
			return out, fmt.Errorf("dump of cmd %d: %w", cmd, err)
		}
		b := rbuf[:n]
		for len(b) >= 16 {
			l := int(binary.LittleEndian.Uint32(b[0:]))
			if l < 16 || l > len(b) {
				break
			}
			typ := binary.LittleEndian.Uint16(b[4:])
			if binary.LittleEndian.Uint32(b[8:]) == seq {
				switch {
				case typ == unix.NLMSG_DONE:
					return out, nil
				case typ == unix.NLMSG_ERROR && l >= 20:
					e := syscall.Errno(-int32(binary.LittleEndian.Uint32(b[16:])))
					if e != 0 {
						return out, fmt.Errorf("dump of cmd %d: %s", cmd, errName(e))
					}
				case typ == f.fam && l >= 20 && b[16] == cmd:
					out = append(out, parseAttrs(append([]byte(nil), b[20:l]...)))
				}
			}
			if align4(l) >= len(b) {
				break
			}
			b = b[align4(l):]
		}
	}
	return out, fmt.Errorf("dump of cmd %d did not end", cmd)
}

func (f *fuzzer) discover() error {
	devs, err := f.dump(cmdDevGet, nil)
	if err != nil {
		return err
	}
	for _, d := range devs {
		if v, ok := d[aDevIndex]; ok && len(v) == 4 {
			f.devIdx = append(f.devIdx, binary.LittleEndian.Uint32(v))
		}
	}
	cl, err := f.dump(cmdClientGet, nil)
	if err != nil {
		return err
	}
	f.ids = f.ids[:0]
	for _, c := range cl {
		if v, ok := c[aClientID]; ok && len(v) == 4 {
			f.ids = append(f.ids, binary.LittleEndian.Uint32(v))
		}
	}
	return nil
}

func setOpt(fd, opt int, on bool) {
	v := 0
	if on {
		v = 1
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, opt, v)
}

func histogram(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func histInt(m map[int]int) string {
	s := map[string]int{}
	for k, v := range m {
		s[fmt.Sprintf("cmd%d", k)] = v
	}
	return histogram(s)
}

func main() {
	seed := flag.Int64("seed", time.Now().UnixNano(), "random seed (default: from the clock)")
	count := flag.Int("count", 100000, "messages to send")
	timeout := flag.Duration("timeout", 5*time.Minute, "stop sending after this long")
	dev := flag.String("dev", "rxe0", "RDMA device the valid requests name")
	unpriv := flag.Bool("unprivileged", false, "expect EPERM on every mutating request, no sensitive attributes")
	setuid := flag.Int("setuid", -1, "drop to this uid and gid (all capabilities go) before opening the socket; implies --unprivileged")
	family := flag.String("family", "ib_sync_mem", "generic netlink family to fuzz (another one, such as the read-only nlctrl, only to smoke-test nlfuzz itself where the module is not loaded)")
	flag.Parse()

	if *setuid >= 0 {
		if err := syscall.Setgroups(nil); err != nil {
			fatal("setgroups: %v", err)
		}
		if err := syscall.Setresgid(*setuid, *setuid, *setuid); err != nil {
			fatal("setresgid: %v", err)
		}
		if err := syscall.Setresuid(*setuid, *setuid, *setuid); err != nil {
			fatal("setresuid: %v", err)
		}
		*unpriv = true
	}
	fmt.Printf("nlfuzz: seed %d count %d timeout %s uid %d unprivileged %v\n",
		*seed, *count, *timeout, os.Getuid(), *unpriv)

	gc, err := genetlink.Dial(nil)
	if err != nil {
		fatal("genetlink: %v", err)
	}
	fam, err := gc.GetFamily(*family)
	if err != nil {
		fatal("resolve family %s: %v", *family, err)
	}
	var group uint32
	for _, g := range fam.Groups {
		if g.Name == "events" {
			group = g.ID
		}
	}
	gc.Close()

	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		fatal("socket: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		fatal("bind: %v", err)
	}
	// Big buffers for huge batches and their replies; FORCE works for root.
	for _, o := range [][2]int{{unix.SO_SNDBUFFORCE, unix.SO_SNDBUF}, {unix.SO_RCVBUFFORCE, unix.SO_RCVBUF}} {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, o[0], 8<<20) != nil {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, o[1], 8<<20)
		}
	}
	tv := unix.NsecToTimeval(int64(2 * time.Second)) // bounds every blocking read
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	setOpt(fd, netlinkExtAck, true)
	if group != 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, int(group)); err != nil {
			fmt.Fprintf(os.Stderr, "nlfuzz: join events: %v\n", err)
		}
	}
	region, err := unix.Mmap(-1, 0, 16*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		fatal("mmap: %v", err)
	}

	f := &fuzzer{
		r: rand.New(rand.NewSource(*seed)), fd: fd, fam: fam.ID, dev: *dev,
		unpriv: *unpriv, region: region,
	}
	f.st.sendErr = map[string]int{}
	f.st.acks = map[string]int{}
	f.st.replies = map[int]int{}
	f.st.events = map[int]int{}
	f.st.recvErr = map[string]int{}
	if err := f.discover(); err != nil && *family == "ib_sync_mem" {
		fatal("discover: %v", err)
	}
	fmt.Printf("nlfuzz: family %d, devices %v, clients %v\n", fam.ID, f.devIdx, f.ids)

	start := time.Now()
	deadline := start.Add(*timeout)
	timedOut := false
	for f.st.msgs < *count {
		if time.Now().After(deadline) {
			timedOut = true
			break
		}
		b, n := f.datagram()
		f.scan(b)
		f.overrun = false
		if err := f.send(b); err != nil {
			f.st.sendErr[errName(err.(syscall.Errno))]++
			f.expectEPERM = nil // the kernel never saw it (EMSGSIZE...)
		}
		f.st.datagrams++
		f.st.msgs += n
		if f.st.msgs/10000 != (f.st.msgs-n)/10000 {
			fmt.Fprintf(os.Stderr, "nlfuzz: progress: %d messages, %s, %d violations\n",
				f.st.msgs, time.Since(start).Round(time.Millisecond), len(f.st.violations))
		}
		f.drain(false)
		if f.unpriv && !f.overrun {
			for seq := range f.expectEPERM {
				f.st.violate("unprivileged mutating request seq %d got no ack", seq)
			}
		}
		if len(f.created) > 0 {
			f.cleanup()
		}
		switch f.r.Intn(2000) {
		case 0:
			setOpt(fd, netlinkCapAck, f.r.Intn(2) == 0)
		case 1:
			setOpt(fd, netlinkExtAck, f.r.Intn(4) != 0)
		case 2:
			setOpt(fd, netlinkStrictCk, f.r.Intn(2) == 0)
		case 3:
			_ = f.discover() // ids come and go
		}
	}
	f.drain(true)
	f.cleanup()
	elapsed := time.Since(start)

	// Still answering?
	setOpt(fd, netlinkCapAck, false)
	health := "ok"
	if *family != "ib_sync_mem" {
		health = "not checked (--family " + *family + ")"
	} else if _, err := f.dump(cmdDevGet, nil); err != nil {
		health = err.Error()
	} else if _, err := f.dump(cmdClientGet, nil); err != nil {
		health = err.Error()
	}
	if health != "ok" && *family == "ib_sync_mem" {
		f.st.violate("family does not answer after the run: %s", health)
	}

	s := &f.st
	fmt.Printf("nlfuzz: seed %d sent %d messages in %d datagrams in %s%s\n", *seed, s.msgs, s.datagrams,
		elapsed.Round(time.Millisecond), map[bool]string{true: " (stopped by --timeout)", false: ""}[timedOut])
	fmt.Printf("nlfuzz: send errors: %s\n", histogram(s.sendErr))
	fmt.Printf("nlfuzz: acks by errno: %s\n", histogram(s.acks))
	fmt.Printf("nlfuzz: replies: %s; dump ends %d (%d interrupted)\n", histInt(s.replies), s.dones, s.dumpIntr)
	fmt.Printf("nlfuzz: events: %s; other messages %d; recv errors: %s\n", histInt(s.events), s.other, histogram(s.recvErr))
	fmt.Printf("nlfuzz: clients created %d, deleted by nlfuzz %d; unprivileged EPERM acks checked %d\n",
		s.created, s.deleted, s.epermOK)
	fmt.Printf("nlfuzz: health %s; violations %d\n", health, len(s.violations))
	if timedOut || len(s.violations) > 0 {
		os.Exit(1)
	}
}

func fatal(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "nlfuzz: "+format+"\n", a...)
	os.Exit(2)
}
