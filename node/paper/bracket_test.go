package paper

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// placeBracket places a bracket's three legs as the node does: the entry
// (its id the group's), then its exits with the entry as their parent.
func (h *harness) placeBracket(side command.Side, qty, entry, tp, sl, slLimit string) (string, string, string) {
	exit := side.Opposite()
	e := node.Order{ID: "e", Symbol: "X", Side: side, Type: command.Market, Quantity: testkit.D(qty), Group: "e", Leg: command.LegEntry}
	if entry != "" {
		e.Type, e.Price = command.Limit, testkit.D(entry)
	}
	t := node.Order{ID: "tp", Symbol: "X", Side: exit, Type: command.Limit, Quantity: testkit.D(qty), Price: testkit.D(tp), Group: "e", Leg: command.LegTakeProfit, Parent: "e"}
	s := node.Order{ID: "sl", Symbol: "X", Side: exit, Type: command.Stop, Quantity: testkit.D(qty), StopPrice: testkit.D(sl), Group: "e", Leg: command.LegStopLoss, Parent: "e"}
	if slLimit != "" {
		s.Type, s.Price = command.StopLimit, testkit.D(slLimit)
	}
	for _, o := range []node.Order{e, t, s} {
		h.v.Place(o, t0, h.emit)
	}
	return e.ID, t.ID, s.ID
}

// TestBracketAgreesWithTheBacktestRule walks random mark paths through a
// resting bracket on paper and through internal/intrabar with the same
// three orders (the exits' Parent the entry, one Group) on one-price
// bars: every leg fills at the same step and price, or not at all, on
// both. Prices are multiples of 0.25, so float64 holds them exactly.
func TestBracketAgreesWithTheBacktestRule(t *testing.T) {
	f := func(s string) intrabar.Float { return intrabar.Float(testkit.D(s).InexactFloat64()) }
	rng := rand.New(rand.NewPCG(26, 2))
	type variant struct {
		side                   command.Side
		entry, tp, sl, slLimit string
	}
	variants := []variant{
		{command.Buy, "99.5", "101.5", "98", ""},
		{command.Buy, "99.75", "101", "98.5", "98.25"},
		{command.Sell, "100.5", "98.5", "102", ""},
	}
	outcomes := map[string]int{} // which exit filled, over all runs
	for run := range 60 {
		path := make([]float64, 50)
		p := 100.0
		for i := range path {
			p += float64(rng.IntN(9)-4) * 0.25
			path[i] = max(p, 1)
		}
		for _, vr := range variants {
			h := newHarness(t, 0, 0)
			ids := [3]string{}
			ids[0], ids[1], ids[2] = h.placeBracket(vr.side, "2", vr.entry, vr.tp, vr.sl, vr.slLimit)
			side, exit := intrabar.Buy, intrabar.Sell
			if vr.side == command.Sell {
				side, exit = intrabar.Sell, intrabar.Buy
			}
			sl := intrabar.Order[intrabar.Float]{Kind: intrabar.Stop, Side: exit, Stop: f(vr.sl), Group: 1, Parent: 1}
			if vr.slLimit != "" {
				sl.Kind, sl.Limit = intrabar.StopLimit, f(vr.slLimit)
			}
			ref := []intrabar.Order[intrabar.Float]{
				{Kind: intrabar.Limit, Side: side, Limit: f(vr.entry)},
				{Kind: intrabar.Limit, Side: exit, Limit: f(vr.tp), Group: 1, Parent: 1},
				sl,
			}
			paperAt, refAt := [3]int{-1, -1, -1}, [3]int{-1, -1, -1}
			var paperPx [3]decimal.Decimal
			var refPx [3]intrabar.Float
			for i, px := range path {
				h.mark(decimal.NewFromFloat(px).String())
				for k, id := range ids {
					if o, _ := h.v.Order(id); paperAt[k] < 0 && o.Status == node.OrderFilled {
						paperAt[k], paperPx[k] = i, o.AveragePrice
					}
				}
				for _, fl := range intrabar.Step(intrabar.Mark(intrabar.Float(px)), intrabar.Path, ref, nil) {
					refAt[fl.Order], refPx[fl.Order] = i, fl.Price
				}
			}
			for k := range ids {
				if paperAt[k] != refAt[k] || (paperAt[k] >= 0 && paperPx[k].InexactFloat64() != float64(refPx[k])) {
					t.Errorf("run %d %+v leg %s: paper filled at step %d price %s, the backtest's rule at step %d price %v",
						run, vr, ids[k], paperAt[k], paperPx[k], refAt[k], refPx[k])
				}
			}
			switch {
			case paperAt[1] >= 0:
				outcomes["take_profit"]++
			case paperAt[2] >= 0:
				outcomes["stop_loss"]++
			case paperAt[0] < 0:
				outcomes["no entry"]++
			}
			if paperAt[1] >= 0 && paperAt[2] >= 0 {
				t.Errorf("run %d %+v: both exits filled", run, vr)
			}
		}
	}
	for _, k := range []string{"take_profit", "stop_loss", "no entry"} {
		if outcomes[k] == 0 {
			t.Errorf("no run ended with %s: the paths do not test it (%v)", k, outcomes)
		}
	}
}

// TestBracketExitsFollowTheEntry: the exits wait inactive (an exit's level
// reached before the entry fills fills nothing), are sized to a partial
// fill of the entry and stay when the rest of it is canceled; an entry
// canceled unfilled takes its exits with it, and a market entry that
// cannot fill leaves its exits canceled at placement.
func TestBracketExitsFollowTheEntry(t *testing.T) {
	h := newHarness(t, 0, 0)
	e, tp, sl := h.placeBracket(command.Buy, "4", "99", "103", "97", "")
	h.mark("103.5") // the take-profit's level, the entry unfilled: nothing fills
	for _, id := range []string{e, tp, sl} {
		if o, _ := h.v.Order(id); o.Status != node.OrderOpen || (id != e) != o.Inactive {
			t.Fatalf("after 103.5: %+v", o)
		}
	}
	h.emit(node.Event{Kind: node.EventFilled, Venue: "p", OrderID: e, Symbol: "X", Side: command.Buy, Quantity: testkit.D("1.5"), Price: testkit.D("99")})
	for _, id := range []string{tp, sl} {
		if o, _ := h.v.Order(id); o.Inactive || !o.Quantity.Equal(testkit.D("1.5")) {
			t.Errorf("exit after a partial fill of 1.5: %+v", o)
		}
	}
	if err := h.v.Cancel(e, "test", t0, h.emit); err != nil {
		t.Fatal(err)
	}
	if o, _ := h.v.Order(sl); o.Status != node.OrderOpen || !o.Quantity.Equal(testkit.D("1.5")) {
		t.Errorf("the stop-loss after the partly filled entry's cancel: %+v", o)
	}
	h.mark("96.5") // the stop-loss fills what the entry filled, and cancels the take-profit
	if o, _ := h.v.Order(sl); o.Status != node.OrderFilled || !o.Filled.Equal(testkit.D("1.5")) {
		t.Errorf("stop-loss: %+v", o)
	}
	if o, _ := h.v.Order(tp); o.Status != node.OrderCanceled || !strings.Contains(o.Note, "another leg of bracket e") {
		t.Errorf("take-profit: %+v", o)
	}
	if p := h.v.Position("X"); !p.IsZero() {
		t.Errorf("position %s, want 0", p)
	}

	h = newHarness(t, 0, 0)
	e, tp, sl = h.placeBracket(command.Buy, "1", "99", "103", "97", "")
	if err := h.v.Cancel(e, "test", t0, h.emit); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{tp, sl} {
		if o, _ := h.v.Order(id); o.Status != node.OrderCanceled || !strings.Contains(o.Note, "its entry e was canceled before it filled") {
			t.Errorf("exit of an entry canceled unfilled: %+v", o)
		}
	}

	h = newHarness(t, 0, 0)
	delete(h.v.marks, "X")
	_, tp, _ = h.placeBracket(command.Buy, "1", "", "103", "97", "")
	if o, _ := h.v.Order(tp); o.Status != node.OrderCanceled || !strings.Contains(o.Note, "its entry e was canceled before it filled") {
		t.Errorf("exit of a market entry that could not fill: %+v", o)
	}
	if len(h.v.OpenOrders()) != 0 {
		t.Errorf("open orders %+v", h.v.OpenOrders())
	}
}
