package script

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"wicket/strategy"
)

// TestStepsReadBackBitForBit: the compact record gives back every bar's
// account and intent exactly (NaN, -0 and repeated values included), read
// from any bar on, and keeps only the changes of position and cash.
func TestStepsReadBackBitForBit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(vals ...float64) float64 { return vals[r.IntN(len(vals))] }
	const n = 5000
	var (
		accts   []strategy.Account
		intents []strategy.Intent
	)
	s := newSteps(n)
	a := strategy.Account{Cash: 10000, Equity: 10000}
	for range n {
		if r.IntN(50) == 0 { // a fill
			a.Position, a.Cash = pick(0, math.Copysign(0, -1), 1.5, -2, math.NaN()), pick(10000, 9000.25, 0)
		}
		a.Equity = pick(a.Equity, a.Equity+1, math.Copysign(0, -1), math.NaN())
		var in strategy.Intent
		switch r.IntN(20) {
		case 0:
			in = strategy.Intent{Kind: strategy.Target, Value: pick(0, 1, math.NaN())}
		case 1:
			in = strategy.Intent{Kind: strategy.None, Value: math.Copysign(0, -1)}
		case 2:
			in = strategy.Intent{Kind: strategy.Qty, Value: -3, Exits: strategy.Exits{StopLoss: 0.01}}
		}
		accts, intents = append(accts, a), append(intents, in)
		s.add(a, in)
	}
	if s.len() != n {
		t.Fatalf("len %d, want %d", s.len(), n)
	}
	if len(s.held) > n/10 {
		t.Errorf("%d position and cash changes kept for %d bars: not compact", len(s.held), n)
	}
	bits := math.Float64bits
	sameAcct := func(x, y strategy.Account) bool {
		return bits(x.Position) == bits(y.Position) && bits(x.Cash) == bits(y.Cash) && bits(x.Equity) == bits(y.Equity)
	}
	sameIntent := func(x, y strategy.Intent) bool {
		return x.Kind == y.Kind && bits(x.Value) == bits(y.Value) && x.Exits == y.Exits
	}
	for _, from := range []int{0, 1, 49, 50, 2500, n - 1} {
		c := s.from(from)
		for i := from; i < n; i++ {
			got, in := c.next()
			if !sameAcct(got, accts[i]) || !sameIntent(in, intents[i]) {
				t.Fatalf("from %d, bar %d: %+v %+v, want %+v %+v", from, i, got, in, accts[i], intents[i])
			}
		}
	}
}

// TestStepsKeepEveryField: steps keeps an Account's position, cash and
// equity and an Intent's kind, value and exits; a field added to either
// would be dropped from the proof's record without a word, so it must be
// added to steps too.
func TestStepsKeepEveryField(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want int
	}{{strategy.Account{}, 3}, {strategy.Intent{}, 3}, {strategy.Exits{}, 4}} {
		if n := reflect.TypeOf(tc.v).NumField(); n != tc.want {
			t.Errorf("%T has %d fields, steps keeps %d: keep the new one in steps.add and stepCursor.next", tc.v, n, tc.want)
		}
	}
}

// intent is the intent s recorded at bar i (the zero one past the end).
func (s *steps) intent(i int) strategy.Intent {
	if i >= s.len() {
		return strategy.Intent{}
	}
	_, in := s.from(i).next()
	return in
}
