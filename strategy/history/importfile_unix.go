//go:build unix

package history

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading with O_NONBLOCK, so a FIFO with no
// writer does not block the open (ImportFile then refuses it).
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
