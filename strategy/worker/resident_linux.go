package worker

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// residentBytes is process pid's resident set size, from /proc/PID/statm
// (its second field, in pages).
func residentBytes(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(data)
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/statm: %q has no resident field", pid, data)
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/statm: %w", pid, err)
	}
	return pages * uint64(os.Getpagesize()), nil
}
