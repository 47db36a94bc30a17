//go:build unix

package deploy

import (
	"syscall"
	"time"
)

// cpuTime is the user and system CPU time of this process (self) or of
// its children that have exited and been waited for.
func cpuTime(children bool) (time.Duration, bool) {
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
