package tapeclock

import (
	"testing"
	"time"
)

// TestClockFollowsTheTapeForwardOnly: the clock reads the time it was
// set to, and a time before it leaves it where it is.
func TestClockFollowsTheTapeForwardOnly(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.FixedZone("x", 3600))
	c := New(start)
	if !c.Now().Equal(start) || c.Now().Location() != time.UTC {
		t.Fatalf("start: %v", c.Now())
	}
	if !c.Set(start.Add(time.Minute)) || !c.Now().Equal(start.Add(time.Minute)) {
		t.Fatalf("after a bar: %v", c.Now())
	}
	if c.Set(start) || !c.Now().Equal(start.Add(time.Minute)) {
		t.Fatalf("set backwards moved the clock to %v", c.Now())
	}
}
