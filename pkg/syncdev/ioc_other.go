//go:build mips || mipsle || mips64 || mips64le || ppc64 || ppc64le || sparc64

package syncdev

// The _IOC layout of mips, powerpc and sparc (their asm/ioctl.h): 13 size
// bits, three direction bits above them.
const (
	iocNone     = 1
	iocRead     = 2
	iocWrite    = 4
	iocDirShift = 29
)
