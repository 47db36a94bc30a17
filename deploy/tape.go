package deploy

import (
	"context"
	"time"

	"wicket/strategy"
)

// TapeRead reads the recorded bars of series from a tape: those that
// opened after after, oldest first (at most a page of them), or with a
// zero after the latest one only. No bar yet is no bars and no error.
type TapeRead func(ctx context.Context, series string, after time.Time) (strategy.Bars, error)

// TapeBars is a BarSource over a recorded tape: the bars `wicket data
// record` appends to the history store as they close. It polls the tape
// every Every for the next bar; a bar on the tape has closed.
type TapeBars struct {
	Read  TapeRead
	Every time.Duration

	ready []Bar
}

// Next implements BarSource.
func (s *TapeBars) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	var t *time.Ticker
	for {
		for len(s.ready) > 0 {
			b := s.ready[0]
			s.ready = s.ready[1:]
			if b.Time.After(after) {
				return b, nil
			}
		}
		bars, err := s.Read(ctx, series, after)
		if err != nil {
			return Bar{}, err
		}
		if bars.Len() > 0 {
			s.ready = Bars(bars)
			continue
		}
		if t == nil {
			t = time.NewTicker(s.Every)
			defer t.Stop()
		}
		select {
		case <-ctx.Done():
			return Bar{}, ctx.Err()
		case <-t.C:
		}
	}
}
