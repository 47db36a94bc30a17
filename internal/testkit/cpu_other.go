//go:build !unix

package testkit

import (
	"errors"
	"os"
	"time"
)

// CPUTime is not measured on this platform.
func CPUTime(children bool) (time.Duration, bool) { return 0, false }

// CanFreeze says whether Freeze works on this platform.
const CanFreeze = false

// Freeze cannot stop a process on this platform.
func Freeze(p *os.Process) error { return errors.ErrUnsupported }
