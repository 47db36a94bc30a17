// Package tapeclock is the clock of a node that runs on a recorded tape
// (wicket node serve --replay SERIES --from T): its time is the close of
// the last bar the tape has handed over, set by the tape's driver and read
// in place of the wall clock by the node's server (event times, days of
// the breakers), its paper venues (through the times the server gives
// them) and the deployments (warm-up cut, bar times, order times).
//
// It never reads the wall clock, never moves backwards and imports no
// domain package: node and deploy both read it.
package tapeclock

import (
	"sync"
	"time"
)

// Clock is a tape's time. The zero value is not usable: use New.
type Clock struct {
	mu  sync.RWMutex
	now time.Time
}

// New is a clock at start (the tape's first bar's open).
func New(start time.Time) *Clock { return &Clock{now: start.UTC()} }

// Now is the tape's time. It is safe for concurrent use, and its method
// value is the func() time.Time the node and the deployments take.
func (c *Clock) Now() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.now
}

// Set moves the clock to t; a t before the clock's time leaves it where
// it is (a tape's time never runs backwards). It reports whether the
// clock moved.
func (c *Clock) Set(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !t.After(c.now) {
		return false
	}
	c.now = t.UTC()
	return true
}
