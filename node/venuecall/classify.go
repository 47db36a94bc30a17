package venuecall

import (
	"errors"
	"fmt"
	"slices"

	"wicket/node"
)

// Classify is the node's kind of a failed call that is not an answer of
// the venue's own API (each adapter reads those first, in its venue's
// terms): a rate limit is a refusal (nothing was sent), a failure that
// may have reached the venue is unknown (Unknown), anything else a plain
// error naming the venue. nil stays nil. No key or signed query reaches
// the message (Message).
func Classify(venue string, err error) error {
	if err == nil {
		return nil
	}
	var rl *RateLimited
	if errors.As(err, &rl) {
		return &node.VenueError{Kind: node.ErrVenueRejected, Venue: venue, Message: rl.Error() + "; nothing was sent"}
	}
	if Unknown(err) {
		return &node.VenueError{Kind: node.ErrVenueUnknown, Venue: venue, Message: Message(err)}
	}
	return fmt.Errorf("%s: %s", venue, Message(err))
}

// States maps a venue's order statuses to the node's order states: the
// statuses listed as filled, canceled (expired, replaced: done without a
// fill to come) and rejected; any other is open (new, partially filled,
// pending), so a status the venue adds later keeps the order watched.
type States struct {
	Filled, Canceled, Rejected []string
}

// Of is the node's state of status.
func (s States) Of(status string) node.VenueState {
	switch {
	case slices.Contains(s.Filled, status):
		return node.VenueFilled
	case slices.Contains(s.Canceled, status):
		return node.VenueCanceled
	case slices.Contains(s.Rejected, status):
		return node.VenueRejected
	}
	return node.VenueOpen
}
