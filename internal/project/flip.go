package project

import "fmt"

// What a binance-futures venue does with an order that would take a
// position through zero (a sell of 0.3 on a long of 0.1): the venue fills
// it as one order, closing the position and opening the opposite one, so
// a reduce-only exit cannot express it and the opening part escapes the
// checks an opening order gets on its own.
const (
	// FlipRefuse refuses the order, naming the position, the order and
	// the two orders to send instead.
	FlipRefuse = "refuse"
	// FlipSplit sends a market order that flips as two market orders
	// through the node's write path: a reduce-only close of the position,
	// then the opening remainder once the venue took the close, with
	// client order ids derived from the order's (node/server's flip.go).
	// A resting order that would flip is still refused.
	FlipSplit = "split"
)

// DefaultFlip is a venue's flip policy unless wicket.toml says otherwise.
const DefaultFlip = FlipRefuse

// FlipPolicy is the venue's flip policy with the default filled in.
func (v Venue) FlipPolicy() string {
	if v.Flip == "" {
		return DefaultFlip
	}
	return v.Flip
}

// validateFlip checks the flip key of a binance-futures venue.
func (v *Venue) validateFlip() error {
	switch v.Flip {
	case "", FlipRefuse, FlipSplit:
		return nil
	}
	return fmt.Errorf("flip %q: write %q (refuse an order that would take a position through zero, the default) or %q (send a market one as a reduce-only close and the opening remainder)", v.Flip, FlipRefuse, FlipSplit)
}
