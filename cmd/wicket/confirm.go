package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// A destructive command asks before it acts when a person is there to
// answer, and from a pipe or a script acts only on --yes (which it names).

// atTerminal reports whether a person can answer: both the input and the
// output are interactive terminals.
func atTerminal(in io.Reader, out io.Writer) bool { return isTerminal(in) && isTerminal(out) }

// askYes writes question and " [y/N] " to out and reports whether the
// line read from in is y or yes (any case); anything else, an empty line
// or the end of input is no.
func askYes(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprint(out, question+" [y/N] ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
