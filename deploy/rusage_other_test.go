//go:build !unix

package deploy

import "time"

// cpuTime is not measured here.
func cpuTime(bool) (time.Duration, bool) { return 0, false }
