//go:build !unix

package history

import "os"

// openNonBlocking opens path for reading; systems without unix FIFOs need
// no non-blocking open.
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
