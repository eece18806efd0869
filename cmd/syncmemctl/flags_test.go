package main

import (
	"syscall"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"4096", 4096, true}, {"4k", 4096, true}, {"64K", 65536, true},
		{"1.5MiB", 3 << 19, true}, {"2G", 2 << 30, true}, {"1TB", 1 << 40, true}, {"7b", 7, true},
		{"18446744073709551615", 1<<64 - 1, true},
		{"", 0, false}, {"K", 0, false}, {"-1", 0, false}, {"1.5", 0, false}, {"1..5K", 0, false},
		{"4X", 0, false}, {"18446744073709551616", 0, false}, {"16777216T", 0, false},
	} {
		got, err := parseSize("size", tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseErrno(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want syscall.Errno
		ok   bool
	}{
		{"5", 5, true}, {"EIO", 5, true}, {"etimedout", 110, true}, {"0", 0, true}, {"5000", 5000, true},
		{"EOPNOTSUPP", 95, true}, {"ENOTSUP", 95, true},
		{"EFOO", 0, false}, {"-5", 0, false}, {"x", 0, false}, {"4294967296", 0, false},
	} {
		got, err := parseErrno("fail-errno", tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseErrno(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestFormat(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0ns", 999: "999ns", time.Microsecond: "1.00us", 12345: "12.3us", 201 * time.Microsecond: "201us",
		1500 * time.Microsecond: "1.50ms", 2 * time.Second: "2.00s", 150 * time.Second: "150s",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%d) = %q, want %q", d, got, want)
		}
	}
	for b, want := range map[uint64]string{
		0: "0B", 1023: "1023B", 1024: "1KiB", 1536: "1.5KiB", 1 << 20: "1MiB", 1<<64 - 1: "16EiB",
	} {
		if got := size(b); got != want {
			t.Errorf("size(%d) = %q, want %q", b, got, want)
		}
	}
	if errnoName(0) != "ok" || errnoName(5) != "EIO" || errnoName(95) != "EOPNOTSUPP" || errnoName(5000) != "errno 5000" {
		t.Error("errnoName")
	}
}
