package main

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/syncmem/syncmem/pkg/genl"
	"golang.org/x/sys/unix"
)

// Parsers of flag values and arguments. Each fails with a message naming
// the flag and the value, before anything reaches the kernel.

// parseID parses a client id: a positive 32-bit number.
func parseID(flag, s string) (uint32, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil || n == 0 {
		if flag == "" {
			return 0, badArg("client id", s, "want a positive number")
		}
		return 0, badFlag(flag, s, "want a positive client id")
	}
	return uint32(n), nil
}

// parseIDs parses client ids given as separate values and comma lists.
func parseIDs(flag string, values []string) ([]uint32, error) {
	var ids []uint32
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			id, err := parseID(flag, s)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func badArg(what, value, why string) error {
	return &argError{what: what, value: value, why: why}
}

type argError struct{ what, value, why string }

func (e *argError) Error() string {
	return "invalid " + e.what + " " + strconv.Quote(e.value) + ": " + e.why
}

var sizeUnits = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// parseSize parses a byte count: a number with an optional binary unit,
// such as 4096, 64K, 1.5MiB, 2G (K, KB and KiB all mean 1024 bytes).
func parseSize(flag, s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, badFlag(flag, s, "want bytes, optionally with a unit: 4096, 64K, 1.5MiB, 2G")
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, badFlag(flag, s, "%q is not a number", num)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(mult)))
	if !r.IsInt() {
		return 0, badFlag(flag, s, "not a whole number of bytes")
	}
	if !r.Num().IsUint64() {
		return 0, badFlag(flag, s, "too large")
	}
	return r.Num().Uint64(), nil
}

// parseDir parses the dir flag: a sync direction by its name.
func parseDir(s string) (genl.Direction, error) {
	d, err := genl.ParseDirection(s)
	if err != nil {
		return 0, badFlag("dir", s, "want %s", genl.DirectionNames())
	}
	return d, nil
}

// parseRange reads the offset and len flags (rangeFlags): nil when
// neither is given. A range needs its length; its offset defaults to 0.
// Whether it fits the client is the kernel's to say.
func parseRange(cmd *cobra.Command, offset, length string) (*genl.Range, error) {
	if !changed(cmd, "len") {
		if changed(cmd, "offset") {
			return nil, errors.New("offset needs len: offset BYTES len BYTES, the bytes from offset")
		}
		return nil, nil
	}
	var r genl.Range
	var err error
	if changed(cmd, "offset") {
		if r.Offset, err = parseSize("offset", offset); err != nil {
			return nil, err
		}
	}
	if r.Len, err = parseSize("len", length); err != nil {
		return nil, err
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	return &r, nil
}

// parseErrno parses an errno as a number or a name (EIO; the names
// errnoName prints, and x/sys's, such as ENOTSUP for EOPNOTSUPP). Any
// 32-bit number goes: the kernel decides which errnos it takes.
func parseErrno(flag, s string) (syscall.Errno, error) {
	t := strings.TrimSpace(s)
	if name := strings.ToUpper(t); strings.HasPrefix(name, "E") {
		for e := syscall.Errno(1); e < 4096; e++ {
			if errnoName(e) == name || unix.ErrnoName(e) == name {
				return e, nil
			}
		}
		return 0, badFlag(flag, s, "no such errno name")
	}
	n, err := strconv.ParseUint(t, 10, 32)
	if err != nil {
		return 0, badFlag(flag, s, "want an errno number or name, such as 5 or EIO")
	}
	return syscall.Errno(n), nil
}

// wholeDuration checks a duration flag: not negative, a whole number of
// unit, and at most max units.
func wholeDuration(flag string, d, unit time.Duration, unitName string) error {
	switch {
	case d < 0:
		return badFlag(flag, d.String(), "must not be negative")
	case d%unit != 0:
		return badFlag(flag, d.String(), "must be a whole number of %s", unitName)
	case d/unit > math.MaxUint32:
		return badFlag(flag, d.String(), "too long")
	}
	return nil
}

// changed reports whether a flag was given on the command line.
func changed(cmd *cobra.Command, flag string) bool { return cmd.Flags().Changed(flag) }
