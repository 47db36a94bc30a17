//go:build unix

package journal

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lock takes an exclusive advisory lock on path+".lock", so two nodes never
// write one journal. The kernel drops it when the process dies, even by
// SIGKILL.
func lock(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock journal: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("journal %s is in use by another running node; stop it first (one node per journal)", path)
		}
		return nil, fmt.Errorf("lock journal: %w", err)
	}
	return f, nil
}
