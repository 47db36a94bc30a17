package testkit

import (
	"testing"
	"time"
)

// WaitFor polls ok until it holds, for what happens on goroutines a test
// does not drive (a fake venue's stream, a node's background reads), and
// fails the test naming what and why (the last word of ok's second
// result) when within has passed: a guard against a hang, never a timing
// assertion.
func WaitFor(tb testing.TB, what string, within time.Duration, ok func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		done, last := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s: %s", within, what, last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
