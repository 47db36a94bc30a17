package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether f (a stream: stdin, stdout or stderr) is an
// interactive terminal, not a pipe, file or /dev/null. Progress bars draw
// only on one; arming and approval refuse anything else.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

// isCharDevice reports whether r is a character device (a terminal, or
// /dev/null): wicket trade prompts on one instead of echoing each line, and
// wicket approve refuses anything else.
func isCharDevice(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
