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
func (v *Venue) StepTape(bars map[string]TapeBar, now time.Time, allow func(node.Order) bool, emit Emit) []string {
	var moved []string
	for _, s := range v.cfg.Symbols {
		b, ok := bars[s]
		if !ok {
			continue
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
		moved = append(moved, s)
	}
	sort.Strings(moved)
	return moved
}
