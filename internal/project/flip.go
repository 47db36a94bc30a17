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
	// FlipSplit would send it as a reduce-only close and the opening
	// remainder; the node does not build it yet, and a venue naming it
	// is refused at load.
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
	case "", FlipRefuse:
		return nil
	case FlipSplit:
		return fmt.Errorf("flip %q: splitting a flip into a reduce-only close and an opening order is not built yet; write %q (or leave the key out) and send the close and the opening order yourself", v.Flip, FlipRefuse)
	}
	return fmt.Errorf("flip %q: write %q (refuse an order that would take a position through zero) or leave the key out", v.Flip, FlipRefuse)
}
