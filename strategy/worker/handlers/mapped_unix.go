//go:build unix

package handlers

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// errNoMmap says this platform maps no files (mapped_other.go).
var errNoMmap = errors.New("no mmap")

// mapFile maps the whole file at path read-only and shared: every process
// that maps it reads the same pages.
func mapFile(path string) ([]byte, func([]byte) error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() || st.Size() <= 0 || st.Size() > 1<<40 {
		return nil, nil, fmt.Errorf("shared bars file %s is not a regular file of bars", path)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map the shared bars: %w", err)
	}
	return data, syscall.Munmap, nil
}

// processAlive says whether a process of id pid runs.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
