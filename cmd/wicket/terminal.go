package main

import (
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

// isCharDevice reports whether r (a stream) is a character device (a
// terminal, or /dev/null): wicket trade prompts on one instead of echoing
// each line, and the research progress bar draws only on one. A check that
// a person is there (arming, approval) uses isTerminal, which /dev/null
// does not pass.
func isCharDevice(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
