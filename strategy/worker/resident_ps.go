package worker

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// residentPS is process pid's resident set size as `ps -o rss=` reports it
// (KiB), the reading where there is no /proc: every Unix has ps.
func residentPS(pid int) (uint64, error) {
	out, err := exec.Command("ps", "-o", "rss=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return 0, fmt.Errorf("ps -p %d: %w", pid, err) // also: the process has exited
	}
	kib, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("ps -p %d: rss %q: %w", pid, out, err)
	}
	return kib << 10, nil
}
