package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes, decided here and nowhere else.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime failure: one line on stderr
	exitUsage   = 2 // a usage error: names the valid choices
)

// usageError marks an error as the caller's mistake: exit code 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitCode maps an error to the process exit code and prints it as one line.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	code := exitFailure
	var ue usageError
	var ec cli.ExitCoder
	switch {
	case errors.As(err, &ue):
		code = exitUsage
	case errors.As(err, &ec):
		code = ec.ExitCode()
	}
	if msg := strings.TrimSpace(err.Error()); msg != "" {
		msg = strings.ReplaceAll(msg, "\n", "; ")
		if !strings.HasPrefix(msg, "wicket ") { // "wicket trace: ..." names itself already
			msg = "wicket: " + msg
		}
		fmt.Fprintln(stderr, msg)
	}
	return code
}
