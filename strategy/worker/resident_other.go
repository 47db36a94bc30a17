//go:build !linux

package worker

// residentBytes reads resident memory with ps where there is no /proc.
func residentBytes(pid int) (uint64, error) { return residentPS(pid) }
