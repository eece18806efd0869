//go:build !(mips || mipsle || mips64 || mips64le || ppc64 || ppc64le || sparc64)

package syncdev

// The generic _IOC layout (include/uapi/asm-generic/ioctl.h): x86, arm,
// arm64, riscv, s390x, loong64. 14 size bits, the direction above them.
const (
	iocNone     = 0
	iocWrite    = 1
	iocRead     = 2
	iocDirShift = 30
)
