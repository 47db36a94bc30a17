//go:build !unix

package authserver

import "os"

// lockFile opens path without a lock where advisory locks are not
// available; the server and the operator commands then race on a write.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
