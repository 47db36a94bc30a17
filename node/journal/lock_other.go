//go:build !unix

package journal

import "os"

// lock is a no-op where advisory file locks are not available; running two
// nodes on one journal is then the operator's mistake to avoid.
func lock(path string) (*os.File, error) {
	return os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
}
