package server

import (
	"testing"
	"time"

	"wicket/node"
)

// TestChallenges: a challenge arms its own venue once, within its life,
// and the store stays bounded.
func TestChallenges(t *testing.T) {
	c := newChallenges()
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	a := c.issue("bn", now)
	if c.take(a, "al", now) {
		t.Error("bn's challenge taken for al")
	}
	if !c.take(a, "bn", now) || c.take(a, "bn", now) {
		t.Error("a challenge is good exactly once")
	}
	b := c.issue("bn", now)
	if c.take(b, "bn", now.Add(node.ChallengeLife+time.Second)) {
		t.Error("an expired challenge was taken")
	}
	first := c.issue("bn", now)
	for range 2 * maxChallenges {
		c.issue("bn", now)
	}
	if len(c.byID) > maxChallenges || len(c.order) > maxChallenges {
		t.Errorf("%d challenges kept, %d in order; at most %d", len(c.byID), len(c.order), maxChallenges)
	}
	if c.take(first, "bn", now) {
		t.Error("the oldest challenge survived eviction")
	}
}
