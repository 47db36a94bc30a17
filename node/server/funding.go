package server

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/journal"
)

// fundingReader is what a venue that charges funding (binance-futures)
// gives the node besides Exchange: the funding payments it booked since
// a time, from its income history. The engine asks for it by type.
type fundingReader interface {
	Funding(ctx context.Context, since time.Time) ([]node.Funding, error)
}

// fundingBook is a venue's funding as the journal holds it: each payment
// once, by the venue's id.
type fundingBook struct {
	seen   map[string]bool
	last   time.Time
	total  decimal.Decimal
	readAt time.Time // the last read of the venue's funding (not journaled)
}

// fundingReads is how many marks polls pass between two funding reads:
// settlements come hours apart, and the income history costs a venue
// read weight (Binance: 30 of 2400 a minute), so once every 20 polls (20 s
// at the default 1 s) is soon enough.
const fundingReads = 20

// applyFunding books one funding event (replayed from the journal too, so
// a restart knows what is booked).
func (r *remote) applyFunding(ev node.Event) error {
	if r.funding.seen == nil {
		r.funding.seen = map[string]bool{}
	}
	if ev.VenueOrderID == "" || r.funding.seen[ev.VenueOrderID] {
		return fmt.Errorf("event %d: funding %q on %s is booked already or has no venue id", ev.Seq, ev.VenueOrderID, r.cfg.Name)
	}
	r.funding.seen[ev.VenueOrderID] = true
	r.funding.total = r.funding.total.Add(ev.Cash)
	if ev.Time.After(r.funding.last) {
		r.funding.last = ev.Time
	}
	return nil
}

// fundingSince is when the venue's next funding read starts: the last
// payment booked, else the node's first order there (funding before it
// is not the node's); zero while the node has placed none.
func (r *remote) fundingSince() time.Time {
	if !r.funding.last.IsZero() {
		return r.funding.last
	}
	return r.firstOrder
}

// pollFunding reads the funding venue name booked since the last one the
// journal holds and books each new payment once, on the fold; a read that
// fails is tried again at the next poll.
func (s *Server) pollFunding(name string) {
	fr, ok := fundingOf(s.cfg.Exchanges[name])
	if !ok {
		return
	}
	var since time.Time
	s.onFold(func() {
		r := s.eng.remotes[name]
		if r == nil || s.fault != nil || s.cfg.Now().Sub(r.funding.readAt) < fundingReads*s.cfg.MarkEvery {
			return
		}
		if since = r.fundingSince(); !since.IsZero() {
			r.funding.readAt = s.cfg.Now()
		}
	})
	if since.IsZero() {
		return
	}
	ctx, cancel := context.WithTimeout(s.bg, s.cfg.VenueTimeout)
	list, err := fr.Funding(ctx, since)
	cancel()
	if err != nil {
		if s.bg.Err() == nil {
			s.log.Warn("venue funding unreadable; read again at the next poll", "venue", name, "err", err)
		}
		return
	}
	s.onFold(func() {
		r := s.eng.remotes[name]
		if r == nil || s.fault != nil {
			return
		}
		for _, f := range list {
			if r.funding.seen[f.ID] || f.Time.Before(since) {
				continue
			}
			s.eng.emit(node.Event{Time: f.Time, Kind: node.EventFunding, Venue: name, Symbol: f.Symbol, Cash: f.Amount, VenueOrderID: f.ID,
				Note: fmt.Sprintf("funding on %s booked by %s: %s", f.Symbol, name, f.Amount)})
		}
		if events := s.eng.take(); len(events) > 0 {
			s.commit(&journal.Batch{Events: events}) //nolint:errcheck // a failed commit rebuilds from the journal; the next poll books it again
		}
	})
}

// fundingOf is ex's funding reader, when its adapter is one (through the
// scrubbing wrapper, whose errors it scrubs like every other call's).
func fundingOf(ex Exchange) (fundingReader, bool) {
	x, wrapped := ex.(scrubbedExchange)
	if !wrapped {
		fr, ok := ex.(fundingReader)
		return fr, ok
	}
	if _, ok := x.ex.(fundingReader); !ok {
		return nil, false
	}
	return x, true
}

// Funding is the adapter's funding read, its error scrubbed.
func (x scrubbedExchange) Funding(ctx context.Context, since time.Time) ([]node.Funding, error) {
	list, err := x.ex.(fundingReader).Funding(ctx, since)
	return list, x.sc.Error(err)
}
