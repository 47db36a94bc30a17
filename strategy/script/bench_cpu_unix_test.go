//go:build unix

package script

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used (user and system, every
// thread): on a loaded machine it measures the work where wall-clock time
// also measures the neighbours.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
