package history

import (
	"time"

	"wicket/internal/testkit"
)

// cpuSince is this process's CPU time since from (from 0: so far).
func cpuSince(from time.Duration) time.Duration {
	now, _ := testkit.CPUTime(false)
	return now - from
}
