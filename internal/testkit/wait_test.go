package testkit

import (
	"strings"
	"testing"
	"time"
)

// fatalTB records a Fatalf instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, a ...any) {
	f.msg = format
	panic(f)
}

// TestWaitFor: a condition that comes true returns; one that never does
// fails naming what was waited for and the last word on it.
func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, "the third poll", time.Minute, func() (bool, string) { n++; return n == 3, "" })
	if n != 3 {
		t.Fatalf("polled %d times", n)
	}
	f := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != f {
				panic(r)
			}
		}()
		WaitFor(f, "never", 0, func() (bool, string) { return false, "still no" })
	}()
	if !strings.Contains(f.msg, "waited %s for %s") {
		t.Errorf("failure %q", f.msg)
	}
}
