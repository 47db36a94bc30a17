//go:build unix

package main

import "golang.org/x/sys/unix"

// freeBytes is the space an unprivileged user may still write on the
// filesystem holding dir.
func freeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}
