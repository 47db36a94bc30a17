package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
	"wicket/internal/tapeclock"
	"wicket/node/paper"
	"wicket/strategy"
)

// TapeRun drives a node and its deployments on a recorded tape at a chosen
// speed (wicket node serve --replay SERIES --from T --speed S): the node's
// clock, its paper venues' marks and the deployments' bars all follow the
// tape, so a forward test of a month of 1m bars runs in minutes through the
// live path and equals a backtest of the same bars.
//
// At each bar it moves the clock to the bar's close, puts the bar on the
// paper tape and takes one node mark step (the venues walk their resting
// orders through the bar by the backtest's intrabar rule and leave the mark
// at the next bar's open), then hands the bar to every deployment reading
// the tape (Source) and waits until each has handled it before the next
// one: an order decided at a close fills at the next open, as in the
// backtest. It waits for the first deployment before its first bar, and
// while none reads it; a deployment joins at its first read, at the
// latest bar handed over.
//
// A tape of several series (More: a portfolio deployment's legs) plays
// their calendar, the union of their bar times: at each calendar bar the
// clock moves to its close and every series with a bar there has it put
// and handed over; a series without one (the asset did not trade) keeps
// its mark at its next bar's open, and an order for it waits for that
// open (paper.TapeBar.Gap). A portfolio's reader (Group) that has taken
// its last bar is handed its next one at once, ahead of the calendar, so
// that the deployment, which reads every leg before it steps the earliest
// bar time, steps the calendar bar without it and holds that bar until
// the calendar reaches it (the backtest's calendar rule: an asset without
// a bar at t does not trade at t). A deployment of one series (Source)
// is handed each of its bars once the clock reaches its close.
type TapeRun struct {
	Series string        // SYMBOL@GRANULARITY of the tape
	Symbol string        // the symbol the paper venues trade it as
	Bars   strategy.Bars // the tape from its start on, oldest first
	// More are the tape's other series (same granularity), for a
	// portfolio deployment over them.
	More  []TapeSeries
	Clock *tapeclock.Clock
	Tape  *paper.Tape
	// Step takes one node mark step, committed before it returns
	// (*server.Server's Tick).
	Step func(ctx context.Context) error
	// Speed is tape time per wall time (60: a 1m bar a second); 0 runs as
	// fast as the deployments keep up.
	Speed float64
	// After waits on the wall clock (default time.After); tests inject one.
	After func(time.Duration) <-chan time.Time
	// OnBar, when set, is told each bar once every deployment handled it.
	OnBar func(i int)

	legs []tapeLeg // Series and More, set by Start
	cal  []int64   // the calendar: the legs' bar times, ascending

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced at every change
	published int           // calendar bars handed over
	ended     bool
	readers   map[*tapeSource]bool
}

// TapeSeries is one more series of a tape: its name, the symbol the
// paper venues trade it as, and its bars from the tape's start on.
type TapeSeries struct {
	Series string
	Symbol string
	Bars   strategy.Bars
}

// tapeLeg is one series of a run.
type tapeLeg struct {
	TapeSeries
	at map[int64]int // bar index by time
}

// ErrTapeSpeed is the refusal of a speed that is negative or not a number.
var ErrTapeSpeed = errors.New("give a speed above 0 (60: a 1m bar each second), or max")

// Start checks the run and sets the tape's first mark, before the node
// is made (its paper venues open at the tape's first open).
func (t *TapeRun) Start() error {
	if !(t.Speed >= 0) {
		return fmt.Errorf("speed %v: %w", t.Speed, ErrTapeSpeed)
	}
	_, g, err := strategy.ParseSeries(t.Series)
	if err != nil {
		return err
	}
	all := append([]TapeSeries{{Series: t.Series, Symbol: t.Symbol, Bars: t.Bars}}, t.More...)
	t.legs, t.cal = make([]tapeLeg, len(all)), nil
	seen := map[int64]bool{}
	for k, s := range all {
		if s.Bars.Len() == 0 {
			return fmt.Errorf("tape %s has no bars from its start on: record or fetch them first (wicket data fetch %s)", s.Series, s.Series)
		}
		if _, gk, err := strategy.ParseSeries(s.Series); err != nil {
			return err
		} else if gk != g {
			return fmt.Errorf("tape %s is of %s bars, %s of %s: play series of one granularity together", s.Series, gk, t.Series, g)
		}
		for j := range k {
			if all[j].Series == s.Series {
				return fmt.Errorf("tape %s is given twice: give each series once", s.Series)
			}
		}
		t.legs[k] = tapeLeg{TapeSeries: s, at: make(map[int64]int, s.Bars.Len())}
		for i, ts := range s.Bars.Time {
			t.legs[k].at[ts] = i
			if !seen[ts] {
				seen[ts] = true
				t.cal = append(t.cal, ts)
			}
		}
	}
	sort.Slice(t.cal, func(i, j int) bool { return t.cal[i] < t.cal[j] })
	for _, l := range t.legs {
		t.Tape.Start(l.Symbol, decimal.NewFromFloat(l.Bars.Open[0]))
	}
	return nil
}

// leg is the run's series named series (nil: none).
func (t *TapeRun) leg(series string) *tapeLeg {
	for k := range t.legs {
		if t.legs[k].Series == series {
			return &t.legs[k]
		}
	}
	return nil
}

// Plays reports whether series is one of the tape's (after Start).
func (t *TapeRun) Plays(series string) bool { return t.leg(series) != nil }

// Begins is the open of the tape's first calendar bar (after Start): where
// its clock starts.
func (t *TapeRun) Begins() time.Time { return time.Unix(t.cal[0], 0).UTC() }

// Len is how many calendar bars the tape plays (after Start).
func (t *TapeRun) Len() int { return len(t.cal) }

// Names lists the tape's series, comma separated.
func (t *TapeRun) Names() string {
	out := make([]string, len(t.legs))
	for k, l := range t.legs {
		out[k] = l.Series
	}
	return strings.Join(out, ",")
}

// handed is how many of l's bars the first n calendar bars hold.
func (t *TapeRun) handed(l *tapeLeg, n int) int {
	if n == 0 {
		return 0
	}
	return sort.Search(l.Bars.Len(), func(i int) bool { return l.Bars.Time[i] > t.cal[n-1] })
}

// Run plays the tape to its end (nil), or until ctx ends (its error) or
// a node step fails. Call Start first.
func (t *TapeRun) Run(ctx context.Context) error {
	_, g, err := strategy.ParseSeries(t.Series)
	if err != nil {
		return err
	}
	gran := g.Duration()
	after := t.After
	if after == nil {
		after = time.After
	}
	defer t.end()
	// The marks at the tape's start: each series' first open, walking
	// nothing.
	for _, l := range t.legs {
		open := decimal.NewFromFloat(l.Bars.Open[0])
		t.Tape.Put(l.Symbol, paper.TapeBar{Bar: intrabar.Mark(open), Next: open})
	}
	if err := t.Step(ctx); err != nil {
		return fmt.Errorf("tape %s: the node's mark step at its start: %w", t.Series, err)
	}
	pace := time.Duration(0)
	if t.Speed > 0 {
		pace = time.Duration(float64(gran) / t.Speed)
	}
	var due <-chan time.Time
	for i, at := range t.cal {
		if err := t.await(ctx, i); err != nil {
			return err
		}
		if i > 0 && t.OnBar != nil {
			t.OnBar(i - 1)
		}
		if due != nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-due:
			}
		}
		if pace > 0 {
			due = after(pace)
		}
		t.Clock.Set(time.Unix(at, 0).Add(gran))
		for _, l := range t.legs {
			j, ok := l.at[at]
			if !ok {
				continue // no bar of it at this calendar bar: its mark stays at its next open
			}
			b := l.Bars
			next := b.Close[j]
			if j+1 < b.Len() {
				next = b.Open[j+1]
			}
			// No bar of it at the next calendar bar: an order placed now
			// waits for its next bar's open, as the backtest fills it.
			_, trades := l.at[t.cal[min(i+1, len(t.cal)-1)]]
			d := decimal.NewFromFloat
			t.Tape.Put(l.Symbol, paper.TapeBar{Bar: intrabar.Bar[decimal.Decimal]{Open: d(b.Open[j]), High: d(b.High[j]), Low: d(b.Low[j]), Close: d(b.Close[j])}, Next: d(next),
				Gap: i+1 < len(t.cal) && !trades})
		}
		if err := t.Step(ctx); err != nil {
			return fmt.Errorf("tape %s at the bar of %s: the node's mark step: %w", t.Series, time.Unix(at, 0).UTC().Format(time.RFC3339), err)
		}
		t.mu.Lock()
		t.published = i + 1
		t.signal()
		t.mu.Unlock()
	}
	if err := t.await(ctx, len(t.cal)); err != nil {
		return err
	}
	if t.OnBar != nil {
		t.OnBar(len(t.cal) - 1)
	}
	return nil
}

// Published is how many calendar bars the run has handed over (of one
// series: its bars).
func (t *TapeRun) Published() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.published
}

// await waits until the deployments reading the tape (at least one) have
// each handled the first n calendar bars and wait for the next (or hold
// a bar of their series ahead of the calendar, which they take when the
// calendar reaches it).
func (t *TapeRun) await(ctx context.Context, n int) error {
	for {
		t.mu.Lock()
		ready := len(t.readers) > 0
		groups := map[*TapeGroup]bool{} // a group is ready when one of its readers says so
		for s := range t.readers {
			h := t.handed(s.leg, n)
			caught := s.waiting && (n == 0 || h == 0 || !s.after.Before(time.Unix(s.leg.Bars.Time[h-1], 0)))
			ahead := !s.waiting && n > 0 && s.took > t.cal[n-1]
			if s.group == nil {
				ready = ready && (caught || ahead)
				continue
			}
			// A portfolio reads its legs side by side, each at most one
			// bar ahead, and steps the calendar bar once it holds a bar
			// of each: back in Next for the bar after the latest calendar
			// bar, one leg says it has stepped it.
			groups[s.group] = groups[s.group] || (s.waiting && (n == 0 || s.after.Unix() == t.cal[n-1]))
		}
		for _, ok := range groups {
			ready = ready && ok
		}
		ch := t.wait()
		t.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// end tells the readers the tape has no more bars.
func (t *TapeRun) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	t.signal()
}

// wait is the channel the next change closes; t.mu is held.
func (t *TapeRun) wait() <-chan struct{} {
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// signal wakes whoever waits for a change; t.mu is held.
func (t *TapeRun) signal() {
	if t.changed != nil {
		close(t.changed)
	}
	t.changed = make(chan struct{})
}

// Source is a deployment's BarSource over the tape (Config.Bars): from
// its first read on, the run waits for it at every bar until its loop
// closes it. A source that is never read holds nothing up. A portfolio
// deployment given one per leg reads them as one Group (groupLegs).
func (t *TapeRun) Source() BarSource { return &tapeSource{run: t} }

// Group is a portfolio deployment's BarSource over the tape's series, one
// reader per leg (Config.Bars for each of its legs): the run waits at
// every calendar bar until the deployment has stepped it, which one of its
// readers, back in Next for the bar after it, says. Give each portfolio
// deployment a group of its own.
func (t *TapeRun) Group() *TapeGroup { return &TapeGroup{run: t} }

// TapeGroup is the readers of one portfolio deployment (TapeRun.Group).
type TapeGroup struct{ run *TapeRun }

// Source is a reader of the group, for one leg.
func (g *TapeGroup) Source() BarSource { return &tapeSource{run: g.run, group: g} }

// groupLegs makes the readers of this run among srcs, a portfolio
// deployment's bar sources (one per leg, none read yet), one TapeGroup:
// its legs then read the tape as one deployment (Group). Sources of
// another kind, or already in a group, are left as they are.
func groupLegs(srcs []BarSource) {
	groups := map[*TapeRun]*TapeGroup{}
	for _, src := range srcs {
		s, ok := src.(*tapeSource)
		if !ok {
			continue
		}
		s.run.mu.Lock()
		if s.group == nil {
			if groups[s.run] == nil {
				groups[s.run] = s.run.Group()
			}
			s.group = groups[s.run]
		}
		s.run.mu.Unlock()
	}
}

// tapeSource is one deployment's reader of a TapeRun.
type tapeSource struct {
	run     *TapeRun
	group   *TapeGroup // a portfolio's (nil: a deployment of one series)
	leg     *tapeLeg   // the series it reads
	waiting bool       // in Next
	after   time.Time  // the bar it asked to follow
	took    int64      // the time of the last bar it was handed
	closed  bool
}

// Next implements BarSource: the first bar handed over after the bar at
// after (zero after: the latest one handed over, or the first to come),
// waiting for it; io.EOF once the tape has ended.
func (s *tapeSource) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	t := s.run
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.leg(series)
	if l == nil || (s.leg != nil && s.leg != l) { // the run does not wait for it
		delete(t.readers, s)
		t.signal()
		return Bar{}, fmt.Errorf("series %s is not on the tape, which plays %s: deploy on %s, or start the node with --replay %s", series, t.Names(), t.Series, series)
	}
	s.leg = l
	if t.readers == nil {
		t.readers = map[*tapeSource]bool{}
	}
	if !s.closed {
		t.readers[s] = true // the run waits for it from now on
	}
	s.waiting, s.after = true, after
	t.signal()
	defer func() { s.waiting = false }()
	for {
		p := t.handed(l, t.published)
		i := p - 1
		if !after.IsZero() {
			i = sort.Search(p, func(k int) bool { return l.Bars.Time[k] > after.Unix() })
		}
		if (i < 0 || i >= p) && s.group != nil && t.published > 0 && p < l.Bars.Len() {
			if _, ok := l.at[t.cal[t.published-1]]; !ok {
				i, p = p, p+1 // it missed the latest calendar bar: its next one, ahead of the calendar
			}
		}
		if i >= 0 && i < p {
			s.took = l.Bars.Time[i]
			return Bars(l.Bars.Slice(i, i+1))[0], nil
		}
		if t.ended {
			return Bar{}, io.EOF
		}
		ch := t.wait()
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			t.mu.Lock()
			return Bar{}, ctx.Err()
		case <-ch:
		}
		t.mu.Lock()
	}
}

// Close ends the reader: the run no longer waits for it.
func (s *tapeSource) Close() {
	t := s.run
	t.mu.Lock()
	defer t.mu.Unlock()
	s.closed = true
	delete(t.readers, s)
	t.signal()
}

// NextOpen is the open of the bar after series' bar at bar on the tape
// (Config.NextOpen): what an order decided at that bar's close fills at
// before slippage. False past the tape's end or off the tape.
func (t *TapeRun) NextOpen(series string, bar time.Time) (decimal.Decimal, bool) {
	l := t.leg(series)
	if l == nil {
		return decimal.Decimal{}, false
	}
	b := l.Bars
	i := sort.Search(b.Len(), func(k int) bool { return b.Time[k] > bar.Unix() })
	if i >= b.Len() || i == 0 || b.Time[i-1] != bar.Unix() {
		return decimal.Decimal{}, false
	}
	return decimal.NewFromFloat(b.Open[i]), true
}

// fillBase is the price deployment d sizes an order decided at the close
// px of its bar at bar, and prices a bracket's exits from: the next open
// when the bar source knows it (Config.NextOpen), else px.
func (r *Runner) fillBase(d *Deployment, px decimal.Decimal, bar time.Time) decimal.Decimal {
	if r.cfg.NextOpen == nil {
		return px
	}
	if p, ok := r.cfg.NextOpen(d.Series, bar); ok && p.IsPositive() {
		return p
	}
	return px
}
