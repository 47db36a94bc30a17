//go:build !unix

package trace

import (
	"errors"
	"io/fs"
	"os"
)

// writeLine writes line to f. Outside unix the standard library's write may
// take more than one system call for a short write; a short write is an
// error.
func writeLine(f *os.File, line []byte) error {
	n, err := f.Write(line)
	if err == nil && n != len(line) {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: &shortWrite{n: n, of: len(line)}}
	}
	return err
}

// removed reports whether f's name no longer names f: it, or its
// directory, was removed (or replaced) while open.
func removed(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false // a failing file shows on the next write
	}
	named, err := os.Stat(f.Name())
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return !os.SameFile(fi, named)
}
