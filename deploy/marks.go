package deploy

import (
	"context"
	"fmt"
	"time"

	"wicket/node"
	"wicket/strategy"
)

// MarkBars is the bar source of a paper deployment: the venue's marks,
// read from the node every Every, aggregated to the series' granularity.
// A bar is handed over once the clock has passed its end; a bar period in
// which no mark was read has no bar (the deployment records it missed),
// and the period the source started in is partial, so it is none.
type MarkBars struct {
	Node  node.Conn
	Venue string
	Every time.Duration
	Now   func() time.Time

	cur   Bar
	open  bool
	ready []Bar
	first time.Time // the period the source started in: partial, never a bar
}

// Next implements BarSource.
func (m *MarkBars) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	sym, g, err := strategy.ParseSeries(series)
	if err != nil {
		return Bar{}, err
	}
	gran := g.Duration()
	t := time.NewTicker(m.Every)
	defer t.Stop()
	for {
		for len(m.ready) > 0 {
			b := m.ready[0]
			m.ready = m.ready[1:]
			if b.Time.After(after) {
				return b, nil
			}
		}
		snap, err := m.Node.Snapshot(ctx, m.Venue, 0)
		if err != nil && ctx.Err() != nil {
			return Bar{}, ctx.Err()
		}
		now := m.Now().UTC()
		if err == nil {
			m.add(snap, sym, now, gran)
		}
		if m.open && !now.Before(m.cur.Time.Add(gran)) {
			m.ready, m.open = append(m.ready, m.cur), false
			continue
		}
		select {
		case <-ctx.Done():
			return Bar{}, ctx.Err()
		case <-t.C:
		}
	}
}

func (m *MarkBars) add(snap *node.Snapshot, sym string, now time.Time, gran time.Duration) {
	px, ok := snap.Mark(m.Venue, sym)
	if !ok || !px.IsPositive() {
		return
	}
	p, _ := px.Float64()
	start := now.Truncate(gran)
	if m.first.IsZero() {
		m.first = start
	}
	if start.Equal(m.first) {
		return // marks of a period already under way would make a partial bar
	}
	if m.open && start.After(m.cur.Time) {
		m.ready, m.open = append(m.ready, m.cur), false
	}
	if !m.open {
		m.cur, m.open = Bar{Time: start, Open: p, High: p, Low: p, Close: p}, true
		return
	}
	m.cur.High, m.cur.Low, m.cur.Close = max(m.cur.High, p), min(m.cur.Low, p), p
}

// String names the source for logs.
func (m *MarkBars) String() string {
	return fmt.Sprintf("paper marks of %s every %s", m.Venue, m.Every)
}
