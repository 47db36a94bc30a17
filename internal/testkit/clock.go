package testkit

import (
	"sync"
	"time"
)

// Clock is a hand-set clock for code that takes an injected now func: it
// reads what it was set to, moves only when told (or by a fixed step at
// every reading, for NewSteppingClock), and is safe for concurrent use.
type Clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// NewClock returns a clock that reads start until it is set or advanced.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// NewSteppingClock returns a clock that moves by step before every
// reading: the first Now is start+step, the next start+2*step. It times
// work without sleeping: each reading is one step after the last.
func NewSteppingClock(start time.Time, step time.Duration) *Clock {
	return &Clock{t: start, step: step}
}

// Now returns the clock's time (after one step, for a stepping clock).
// Pass c.Now where the code wants a func() time.Time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// Set moves the clock to t, forward or back.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d (back, if d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
