package script

import (
	"math"
	"sort"

	"wicket/strategy"
)

// steps is what an on_bar run recorded for its proof: the account each bar
// was stepped with and the intent it gave. Kept as those values, a million
// bars would be 64 MB of memory a run fills once, which costs more to
// fault in than the run itself takes. So it is kept compact: equity moves
// at every bar a position is held and is kept per bar, while position and
// cash move only with fills, and most bars decide nothing, so those two
// are kept where they change. Values are compared bit for bit, so what a
// prefix run is stepped with is exactly what the full run was.
type steps struct {
	equity  []float64
	held    []change[[2]float64] // position and cash, from bar at on
	decided []change[strategy.Intent]
}

// change is a value from bar at on (held) or at bar at only (decided).
type change[T any] struct {
	at int
	v  T
}

// newSteps has room for n bars' equity.
func newSteps(n int) *steps { return &steps{equity: make([]float64, 0, n)} }

// len is how many bars were stepped.
func (s *steps) len() int {
	if s == nil {
		return 0
	}
	return len(s.equity)
}

// add records the next bar's account and intent.
func (s *steps) add(a strategy.Account, in strategy.Intent) {
	i := len(s.equity)
	s.equity = append(s.equity, a.Equity)
	pc := [2]float64{a.Position, a.Cash}
	if k := len(s.held); k == 0 || math.Float64bits(s.held[k-1].v[0]) != math.Float64bits(pc[0]) || math.Float64bits(s.held[k-1].v[1]) != math.Float64bits(pc[1]) {
		s.held = append(s.held, change[[2]float64]{i, pc})
	}
	if !zeroIntent(in) {
		s.decided = append(s.decided, change[strategy.Intent]{i, in})
	}
}

// zeroIntent reports whether in is the zero Intent, bit for bit.
func zeroIntent(in strategy.Intent) bool {
	bits := math.Float64bits
	return in.Kind == strategy.None && bits(in.Value)|bits(in.Exits.StopLoss)|bits(in.Exits.TakeProfit)|bits(in.Exits.TrailingStop)|bits(in.Exits.StopLimit) == 0
}

// from is a cursor at bar i, for a run that steps on from there in order.
func (s *steps) from(i int) *stepCursor {
	c := &stepCursor{s: s, i: i}
	c.h = sort.Search(len(s.held), func(k int) bool { return s.held[k].at > i }) - 1
	c.d = sort.Search(len(s.decided), func(k int) bool { return s.decided[k].at >= i })
	return c
}

// stepCursor reads steps bar by bar: h is the held change in force at
// bar i, d the first decided bar at or after i.
type stepCursor struct {
	s    *steps
	i    int
	h, d int
}

// next is bar i's account and intent; the cursor moves to bar i+1.
func (c *stepCursor) next() (strategy.Account, strategy.Intent) {
	s, i := c.s, c.i
	for c.h+1 < len(s.held) && s.held[c.h+1].at <= i {
		c.h++
	}
	a := strategy.Account{Equity: s.equity[i]}
	if c.h >= 0 {
		a.Position, a.Cash = s.held[c.h].v[0], s.held[c.h].v[1]
	}
	var in strategy.Intent
	if c.d < len(s.decided) && s.decided[c.d].at == i {
		in = s.decided[c.d].v
		c.d++
	}
	c.i++
	return a, in
}
