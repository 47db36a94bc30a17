//go:build unix

package trace

import (
	"fmt"
	"os"
	"syscall"
)

// writeLine writes line to f in exactly one write(2). With O_APPEND the
// kernel places it at the end of the file as one piece, so lines from
// several writers never interleave. A short write is an error (the file
// then ends in a fragment, which the next open terminates).
func writeLine(f *os.File, line []byte) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), line)
			if werr != syscall.EINTR {
				return true
			}
		}
	})
	if err != nil {
		return &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	if werr != nil {
		return &os.PathError{Op: "write", Path: f.Name(), Err: werr}
	}
	if n != len(line) {
		return &os.PathError{Op: "write", Path: f.Name(), Err: fmt.Errorf("short write: %d of %d bytes", n, len(line))}
	}
	return nil
}
