package main

import "golang.org/x/term"

// isTerminal reports whether f (a stream: stdin, stdout or stderr) is an
// interactive terminal, not a pipe, file or /dev/null. Progress bars draw
// only on one; arming and approval refuse anything else.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}
