package server

import (
	"sync"
	"time"

	"wicket/node"
)

// maxChallenges bounds the arming challenges a node keeps: reading arming
// (any key) makes one, so the oldest go first once this many wait.
const maxChallenges = 256

// challenges are the arming challenges the node has issued: each names its
// venue, is good for node.ChallengeLife and for one arming. They live in
// memory only, so a restarted node knows none of its predecessor's.
type challenges struct {
	mu    sync.Mutex
	byID  map[string]challenge
	order []string // issue order, for eviction
}

type challenge struct {
	venue   string
	expires time.Time
}

func newChallenges() *challenges { return &challenges{byID: map[string]challenge{}} }

// issue makes a challenge for venue at now.
func (c *challenges) issue(venue string, now time.Time) string {
	id := node.NewNonce()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) > 0 && (len(c.order) >= maxChallenges || now.After(c.byID[c.order[0]].expires)) {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
	c.byID[id] = challenge{venue: venue, expires: now.Add(node.ChallengeLife)}
	c.order = append(c.order, id)
	return id
}

// take uses up the challenge id for venue at now; false when it is
// unknown, used, expired or another venue's.
func (c *challenges) take(id, venue string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.byID[id]
	if !ok || ch.venue != venue || now.After(ch.expires) {
		return false
	}
	delete(c.byID, id) // its place in order is dropped when it comes up
	return true
}
