//go:build !unix

package trace

import (
	"fmt"
	"os"
)

// writeLine writes line to f. Outside unix the standard library's write may
// take more than one system call for a short write; a short write is an
// error.
func writeLine(f *os.File, line []byte) error {
	n, err := f.Write(line)
	if err == nil && n != len(line) {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: fmt.Errorf("short write: %d of %d bytes", n, len(line))}
	}
	return err
}
