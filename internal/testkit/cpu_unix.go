//go:build unix

package testkit

import (
	"os"
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time of this process (self) or of its
// children that have exited and been waited for: a benchmark figure that a
// loaded machine inflates far less than wall time. ok is false where the
// platform does not measure it.
func CPUTime(children bool) (d time.Duration, ok bool) {
	who := syscall.RUSAGE_SELF
	if children {
		who = syscall.RUSAGE_CHILDREN
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// CanFreeze says whether Freeze works on this platform.
const CanFreeze = true

// Freeze stops a process without ending it (SIGSTOP), so a test can see
// what others do while it holds what it holds.
func Freeze(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }
