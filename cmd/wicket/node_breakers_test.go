package main

import (
	"strings"
	"testing"
)

// TestClearBreakerNeedsATerminal: wicket node clear-breaker refuses a
// pipe (an operator's act), and names what it takes.
func TestClearBreakerNeedsATerminal(t *testing.T) {
	code, _, stderr := wicket(t, "node", "clear-breaker", "paper")
	if code != 1 || !strings.Contains(stderr, "needs an interactive terminal") {
		t.Fatalf("from a pipe: code %d %s", code, stderr)
	}
	if code, _, stderr := wicket(t, "node", "clear-breaker"); code != 2 || !strings.Contains(stderr, "takes one VENUE") {
		t.Fatalf("no venue: code %d %s", code, stderr)
	}
}
