package paper

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
	"wicket/node"
	"wicket/node/command"
)

// Tape hands paper venues the bars of a recorded tape (wicket node serve
// --replay SERIES --from T): whoever drives the tape puts each bar as it
// closes, and the node's next mark step walks every paper venue's resting
// orders of the symbol through it by the backtest's intrabar rule, then
// leaves the mark at the first price after the bar, so an order decided
// at the close fills where the backtest fills it: at the next bar's open.
// It is safe for concurrent use (the driver puts, the node's fold takes).
type Tape struct {
	mu    sync.Mutex
	bars  map[string]TapeBar
	start map[string]decimal.Decimal
}

// TapeBar is one closed bar of a tape and the first price after it.
type TapeBar struct {
	Bar intrabar.Bar[decimal.Decimal]
	// Next is the first price after the bar's close: the next bar's
	// open, or the bar's close at the end of the tape.
	Next decimal.Decimal
	// Gap says the symbol has no bar at the tape's next calendar bar (of
	// a tape of several series: the asset did not trade then). A market
	// order placed before its next bar then rests, and fills at that
	// bar's open when the bar is walked, as the backtest fills an order
	// at its asset's next bar: not a calendar bar early.
	Gap bool
}

// tapeState is what a venue keeps of the tape that steps it.
type tapeState struct {
	on   bool            // a tape has stepped the venue
	shut map[string]bool // symbols whose last bar was a TapeBar.Gap
}

// NewTape is a tape with nothing put yet.
func NewTape() *Tape {
	return &Tape{bars: map[string]TapeBar{}, start: map[string]decimal.Decimal{}}
}

// Start sets symbol's first mark: the open of the tape's first bar.
func (t *Tape) Start(symbol string, open decimal.Decimal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start[symbol] = open
}

// Put hands over symbol's bar that has just closed, for the next mark
// step; a bar not yet taken is replaced (a step walks the latest bar).
func (t *Tape) Put(symbol string, b TapeBar) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bars[symbol] = b
}

// Take returns the bars put since the last Take, by symbol, and forgets
// them: each is walked at one mark step only. A nil tape has none.
func (t *Tape) Take() map[string]TapeBar {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.bars
	t.bars = map[string]TapeBar{}
	return out
}

// Symbols lists the symbols the tape drives, sorted.
func (t *Tape) Symbols() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Collect(maps.Keys(t.start))
	sort.Strings(out)
	return out
}

func (t *Tape) first(symbol string) (decimal.Decimal, bool) {
	if t == nil {
		return decimal.Decimal{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.start[symbol]
	return m, ok
}

// StepTape walks the venue's resting orders of each symbol in bars (the
// tape's bars of this mark step, Tape.Take) through its bar by
// internal/intrabar's Path rule, the backtest's: limits fill at their
// limit (at the open when it gapped through), stops at the price the
// path met them plus slippage, a bracket's exits from where its entry
// filled, the first exit of a group cancelling the rest. Then the mark is
// the first price after the bar. It returns the symbols whose mark it
// set, sorted. Symbols the venue does not list are passed by.
//
// A market order that waited for the bar (TapeBar.Gap) fills first, at
// the bar's open with slippage, or is canceled when allow vetoes it (a
// market order cannot wait further); a bracket's entry so fills with its
// exits then walked through the same bar.
func (v *Venue) StepTape(bars map[string]TapeBar, now time.Time, allow func(node.Order) bool, emit Emit) []string {
	v.tape.on = true
	if v.tape.shut == nil {
		v.tape.shut = map[string]bool{}
	}
	var moved []string
	for _, s := range v.cfg.Symbols {
		b, ok := bars[s]
		if !ok {
			continue
		}
		// A market order rests only for this: it fills at the bar's open
		// (one left resting by a restart too).
		for _, id := range slices.Clone(v.open) {
			o := v.orders[id]
			if o.Symbol != s || o.Status != node.OrderOpen || o.Type != command.Market || exitLeg(o) {
				continue
			}
			if !allow(*o) {
				v.cancel(o, "not filled: the node's trading state vetoed it at the open it waited for", now, emit)
				continue
			}
			v.fill(o, v.slipped(b.Bar.Open, o.Side), now, emit)
		}
		var resting []*node.Order
		for _, id := range v.open {
			if o := v.orders[id]; o.Symbol == s && o.Status == node.OrderOpen {
				resting = append(resting, o)
			}
		}
		if len(resting) > 0 {
			v.step(resting, b.Bar, now, allow, emit)
		}
		v.SetMarkAt(s, floor(b.Next.Round(v.cfg.PriceDecimals), v.cfg.PriceDecimals), now)
		v.tape.shut[s] = b.Gap
		moved = append(moved, s)
	}
	sort.Strings(moved)
	return moved
}

// trailFrom is the best price a trailing stop on side placed at mark m
// starts from. On a tape, one that reduces the venue's position in
// symbol starts from the better of m and the position's average price,
// as the backtest's trailing exit starts from the position's average
// entry (a long's entry filled above the open by its slippage); m's
// price is the next bar's open, the first its path visits, so the two
// then trail alike. Off a tape, and for any other trailing stop, m.
func (v *Venue) trailFrom(symbol string, side command.Side, m decimal.Decimal) decimal.Decimal {
	p := v.positions[symbol]
	if !v.tape.on || p == nil || p.qty.IsZero() || !p.avg.IsPositive() {
		return m
	}
	switch {
	case side == command.Sell && p.qty.IsPositive():
		return decimal.Max(m, p.avg)
	case side == command.Buy && p.qty.IsNegative():
		return decimal.Min(m, p.avg)
	}
	return m
}
