//go:build unix

package authserver

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive advisory lock on path (waiting for it), so
// the server and `wicket callers revoke` / `wicket approve --oauth` never
// write the grants file over each other. The kernel drops it when the
// process dies.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("oauth grants: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("oauth grants: lock: %w", err)
	}
	return f, nil
}
