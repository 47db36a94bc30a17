package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/strategy"
)

// DefaultQuietBound is Config.QuietBound's default: how long after a
// calendar bar's close a portfolio deployment waits for a leg that has
// not reported a bar at or after it. A provider's bar of a minute comes
// within seconds of its close.
const DefaultQuietBound = 15 * time.Second

// legArrival is what a leg's reader hands the loop: its next closed bar,
// or the end of its source.
type legArrival struct {
	k     int
	bar   Bar
	ended bool
}

// portfolioLoop feeds l the closed bars of its legs, one calendar bar at
// a time: the earliest bar time any leg has next, with every leg's bar at
// that time (a leg whose next bar is later has none there: it does not
// trade at that bar). It decides that calendar bar as soon as every leg
// has reported a bar at or after it, or once the quiet bound passed after
// its close: a venue that skips empty minutes (Alpaca's stock bars) sends
// nothing for a quiet asset, which then has no bar at that time (the
// calendar rule) instead of stalling the others until it trades. A leg's
// bar that arrives for a calendar bar already decided is recorded but
// never traded late: it counts as missed, with the reason. Each leg is
// read one bar ahead at most (a recorded tape waits for a bar's handling
// before it plays the next). A leg's source that ended leaves the others
// going.
func (r *Runner) portfolioLoop(ctx context.Context, l *live, vc project.Venue) {
	l.mu.Lock()
	id, gran := l.d.ID, l.gran
	series := make([]string, len(l.d.Legs))
	for k, leg := range l.d.Legs {
		series[k] = leg.Series
	}
	l.mu.Unlock()
	srcs := make([]BarSource, len(series))
	for k, s := range series {
		if srcs[k] = r.barSource(vc, s); srcs[k] == nil {
			r.log.Error("portfolio deployment has no bar source for a leg", "deployment", id, "series", s)
			return
		}
	}
	groupLegs(srcs) // on a recorded tape its legs read as one deployment (taperun.go)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bound := r.cfg.QuietBound
	if bound <= 0 {
		bound = DefaultQuietBound
	}
	after := r.cfg.After
	if after == nil {
		after = time.After
	}
	arrivals := make(chan legArrival)
	asks := make([]chan time.Time, len(series))
	for k := range srcs {
		asks[k] = make(chan time.Time, 1)
		go r.readLeg(ctx, id, srcs[k], series[k], k, asks[k], arrivals)
	}
	last := make([]time.Time, len(series)) // each leg's last bar read
	peek := make([]*Bar, len(series))
	asked := make([]bool, len(series))
	ended := make([]bool, len(series))
	var decided time.Time // the last calendar bar this loop decided
	for ctx.Err() == nil {
		for k := range asks {
			if !asked[k] && peek[k] == nil && !ended[k] {
				asks[k] <- last[k]
				asked[k] = true
			}
		}
		var at time.Time
		complete := true
		for k, p := range peek {
			switch {
			case p != nil:
				if at.IsZero() || p.Time.Before(at) {
					at = p.Time
				}
			case !ended[k]:
				complete = false
			}
		}
		if at.IsZero() && complete {
			return // every leg's source ended
		}
		var wake <-chan time.Time
		if !at.IsZero() {
			wait := at.Add(gran).Add(bound).Sub(r.cfg.Now())
			if complete || wait <= 0 {
				set := map[string]Bar{}
				for k, p := range peek {
					if p != nil && p.Time.Equal(at) {
						set[series[k]], peek[k] = *p, nil
					}
				}
				decided = at
				if err := r.StepPortfolio(ctx, id, at, set); err != nil {
					r.log.Error("portfolio deployment step", "deployment", id, "bar", at, "err", err)
				}
				continue
			}
			wake = after(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case a := <-arrivals:
			asked[a.k] = false
			switch {
			case a.ended:
				ended[a.k] = true
			case !decided.IsZero() && !a.bar.Time.After(decided):
				last[a.k] = a.bar.Time
				if err := r.lateLegBar(id, a.k, a.bar, bound); err != nil {
					r.log.Error("portfolio deployment late bar", "deployment", id, "series", series[a.k], "bar", a.bar.Time, "err", err)
				}
			default:
				b := a.bar
				last[a.k], peek[a.k] = b.Time, &b
			}
		}
	}
}

// readLeg reads leg k's source: for each time asked, the leg's next
// closed bar after it (retrying a failed read every second), handed to
// arrivals; io.EOF ends the leg.
func (r *Runner) readLeg(ctx context.Context, id string, src BarSource, series string, k int, asks <-chan time.Time, arrivals chan<- legArrival) {
	for {
		var last time.Time
		select {
		case <-ctx.Done():
			return
		case last = <-asks:
		}
		var a legArrival
		for {
			b, err := src.Next(ctx, series, last)
			if err == nil {
				a = legArrival{k: k, bar: b}
				break
			}
			if errors.Is(err, io.EOF) {
				a = legArrival{k: k, ended: true}
				break
			}
			if ctx.Err() != nil {
				return
			}
			r.log.Warn("portfolio deployment bar source", "deployment", id, "series", series, "err", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		select {
		case <-ctx.Done():
			return
		case arrivals <- a:
		}
		if a.ended {
			return
		}
	}
}

// lateLegBar records bar of leg k of portfolio deployment id, which
// arrived after its calendar bar was decided without it: the leg's bars
// keep it (the strategy reads it from the next decision on, as the
// backtest does), but it is never traded late; it counts as a missed bar
// of the leg and of the deployment, with the reason.
func (r *Runner) lateLegBar(id string, k int, bar Bar, bound time.Duration) error {
	l, err := r.get(id)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.d
	if k < 0 || k >= len(d.Legs) || k >= len(l.legs) {
		return fmt.Errorf("deployment %s has no leg %d", id, k)
	}
	leg, lb := &d.Legs[k], &l.legs[k]
	t := bar.Time.Unix()
	if n := lb.Len(); n > 0 && t <= lb.Time[n-1] {
		return nil // held already
	}
	now := r.cfg.Now().UTC()
	appendBar(lb, t, bar.Open, bar.High, bar.Low, bar.Close, bar.Volume)
	if over := lb.Len() - (d.Warmup + 1); over > 0 {
		*lb = lb.Slice(over, lb.Len())
	}
	fresh := lb.Slice(lb.Len()-1, lb.Len())
	fresh.Series = leg.Series
	if err := r.cfg.Store.commitLegBars(d.ID, []strategy.Bars{fresh}); err != nil {
		return err
	}
	leg.Mark, leg.LastBar = decimal.NewFromFloat(bar.Close), bar.Time.UTC() // its last close, as the backtest marks it
	leg.Late++
	leg.LateAt = append(leg.LateAt, t)
	if over := len(leg.LateAt) - maxLateKept; over > 0 {
		leg.LateAt = leg.LateAt[over:]
	}
	leg.LateNote = fmt.Sprintf("its bar of %s arrived at %s, after the calendar bar was decided without it (the quiet bound %s after the close had passed): recorded, not traded",
		bar.Time.UTC().Format(time.RFC3339), now.Format(time.RFC3339), bound)
	d.Missed++
	d.Updated = now
	r.log.Warn("portfolio deployment leg bar arrived late: recorded, not traded", "deployment", id, "series", leg.Series, "bar", bar.Time, "at", now)
	return r.cfg.Store.Commit(Batch{Deployment: d})
}
