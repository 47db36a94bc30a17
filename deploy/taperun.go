package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
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
type TapeRun struct {
	Series string        // SYMBOL@GRANULARITY of the tape
	Symbol string        // the symbol the paper venues trade it as
	Bars   strategy.Bars // the tape from its start on, oldest first
	Clock  *tapeclock.Clock
	Tape   *paper.Tape
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

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced at every change
	published int           // bars handed over
	ended     bool
	readers   map[*tapeSource]bool
}

// ErrTapeSpeed is the refusal of a speed that is negative or not a number.
var ErrTapeSpeed = errors.New("give a speed above 0 (60: a 1m bar each second), or max")

// Start checks the run and sets the tape's first mark, before the node
// is made (its paper venues open at the tape's first open).
func (t *TapeRun) Start() error {
	if t.Bars.Len() == 0 {
		return fmt.Errorf("tape %s has no bars from its start on: record or fetch them first (wicket data fetch %s)", t.Series, t.Series)
	}
	if !(t.Speed >= 0) {
		return fmt.Errorf("speed %v: %w", t.Speed, ErrTapeSpeed)
	}
	t.Tape.Start(t.Symbol, decimal.NewFromFloat(t.Bars.Open[0]))
	return nil
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
	// The mark at the tape's start: its first open, walking nothing.
	open := decimal.NewFromFloat(t.Bars.Open[0])
	t.Tape.Put(t.Symbol, paper.TapeBar{Bar: intrabar.Mark(open), Next: open})
	if err := t.Step(ctx); err != nil {
		return fmt.Errorf("tape %s: the node's mark step at its start: %w", t.Series, err)
	}
	pace := time.Duration(0)
	if t.Speed > 0 {
		pace = time.Duration(float64(gran) / t.Speed)
	}
	var due <-chan time.Time
	for i := range t.Bars.Len() {
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
		b := t.Bars
		t.Clock.Set(time.Unix(b.Time[i], 0).Add(gran))
		next := b.Close[i]
		if i+1 < b.Len() {
			next = b.Open[i+1]
		}
		d := decimal.NewFromFloat
		t.Tape.Put(t.Symbol, paper.TapeBar{Bar: intrabar.Bar[decimal.Decimal]{Open: d(b.Open[i]), High: d(b.High[i]), Low: d(b.Low[i]), Close: d(b.Close[i])}, Next: d(next)})
		if err := t.Step(ctx); err != nil {
			return fmt.Errorf("tape %s at the bar of %s: the node's mark step: %w", t.Series, time.Unix(b.Time[i], 0).UTC().Format(time.RFC3339), err)
		}
		t.mu.Lock()
		t.published = i + 1
		t.signal()
		t.mu.Unlock()
	}
	if err := t.await(ctx, t.Bars.Len()); err != nil {
		return err
	}
	if t.OnBar != nil {
		t.OnBar(t.Bars.Len() - 1)
	}
	return nil
}

// Published is how many bars the run has handed over.
func (t *TapeRun) Published() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.published
}

// await waits until the deployments reading the tape (at least one) have
// each handled the first n bars and wait for the next.
func (t *TapeRun) await(ctx context.Context, n int) error {
	for {
		t.mu.Lock()
		ready := len(t.readers) > 0
		for s := range t.readers {
			ready = ready && s.waiting && (n == 0 || !s.after.Before(time.Unix(t.Bars.Time[n-1], 0)))
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
// closes it. A source that is never read holds nothing up.
func (t *TapeRun) Source() BarSource { return &tapeSource{run: t} }

// tapeSource is one deployment's reader of a TapeRun.
type tapeSource struct {
	run     *TapeRun
	waiting bool      // in Next
	after   time.Time // the bar it asked to follow
	closed  bool
}

// Next implements BarSource: the first bar handed over after the bar at
// after (zero after: the latest one handed over, or the first to come),
// waiting for it; io.EOF once the tape has ended.
func (s *tapeSource) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	t := s.run
	t.mu.Lock()
	defer t.mu.Unlock()
	if series != t.Series { // the run does not wait for it
		delete(t.readers, s)
		t.signal()
		return Bar{}, fmt.Errorf("series %s is not on the tape, which plays %s: deploy on %s, or start the node with --replay %s", series, t.Series, t.Series, series)
	}
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
		p := t.published
		i := p - 1
		if !after.IsZero() {
			i = sort.Search(p, func(k int) bool { return t.Bars.Time[k] > after.Unix() })
		}
		if i >= 0 && i < p {
			return Bars(t.Bars.Slice(i, i+1))[0], nil
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
	if series != t.Series {
		return decimal.Decimal{}, false
	}
	i := sort.Search(t.Bars.Len(), func(k int) bool { return t.Bars.Time[k] > bar.Unix() })
	if i >= t.Bars.Len() || i == 0 || t.Bars.Time[i-1] != bar.Unix() {
		return decimal.Decimal{}, false
	}
	return decimal.NewFromFloat(t.Bars.Open[i]), true
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
