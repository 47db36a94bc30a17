//go:build unix

package trace

import (
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
		return &os.PathError{Op: "write", Path: f.Name(), Err: &shortWrite{n: n, of: len(line)}}
	}
	return nil
}

// removed reports whether f, written to a moment ago, no longer has a name:
// it, or its directory, was removed while open, so what was written to it
// is lost. One fstat, no path lookup.
func removed(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false // a failing file shows on the next write
	}
	var st syscall.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) }); err != nil || serr != nil {
		return false
	}
	return st.Nlink == 0
}
