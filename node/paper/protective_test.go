package paper

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// stopOrder is a resting stop for the harness: a stop (stop only), a
// stop_limit (stop and limit) or a trailing stop (amount or percent).
type stopOrder struct {
	typ                command.OrderType
	side               command.Side
	stop, limit        string
	trailAmt, trailPct string
}

func (h *harness) placeStop(s stopOrder) string {
	h.n++
	o := node.Order{ID: fmt.Sprintf("o%d", h.n), Symbol: "X", Side: s.side, Type: s.typ, Quantity: testkit.D("2")}
	for _, f := range []struct {
		dst *decimal.Decimal
		v   string
	}{{&o.StopPrice, s.stop}, {&o.Price, s.limit}, {&o.TrailAmount, s.trailAmt}, {&o.TrailPercent, s.trailPct}} {
		if f.v != "" {
			*f.dst = testkit.D(f.v)
		}
	}
	h.v.Place(o, t0, h.emit)
	return o.ID
}

// mark moves X to m and matches, allowing every fill.
func (h *harness) mark(m string) {
	h.v.SetMark("X", testkit.D(m))
	h.v.Match(t0, func(node.Order) bool { return true }, h.emit)
}

func (h *harness) kinds(id string) []string {
	var out []string
	for _, ev := range h.events {
		if ev.OrderID == id {
			out = append(out, string(ev.Kind))
		}
	}
	return out
}

func TestStopsFillOnMarks(t *testing.T) {
	tests := []struct {
		name    string
		slipBps float64
		order   stopOrder
		marks   []string // after placement at 100
		filled  int      // index of the mark that fills it; -1: never
		price   string
		events  string // the order's events, in order
	}{
		{name: "sell stop at its stop", order: stopOrder{typ: command.Stop, side: command.Sell, stop: "95"},
			marks: []string{"98", "96", "95", "90"}, filled: 2, price: "95", events: "order_accepted order_filled"},
		{name: "sell stop gapped through fills at the mark, worse", order: stopOrder{typ: command.Stop, side: command.Sell, stop: "95"},
			marks: []string{"97", "90.5"}, filled: 1, price: "90.5", events: "order_accepted order_filled"},
		{name: "sell stop takes slippage", slipBps: 10, order: stopOrder{typ: command.Stop, side: command.Sell, stop: "95"},
			marks: []string{"94"}, filled: 0, price: "93.90", events: "order_accepted order_filled"}, // 94 − 0.094, floored to 2 decimals
		{name: "buy stop", order: stopOrder{typ: command.Stop, side: command.Buy, stop: "105"},
			marks: []string{"104.99", "106"}, filled: 1, price: "106", events: "order_accepted order_filled"},
		{name: "sell stop never reached", order: stopOrder{typ: command.Stop, side: command.Sell, stop: "95"},
			marks: []string{"99", "95.01", "120"}, filled: -1, events: "order_accepted"},
		{name: "sell stop_limit triggers, then rests as a limit", order: stopOrder{typ: command.StopLimit, side: command.Sell, stop: "95", limit: "94"},
			marks: []string{"96", "93", "93.5", "94.5"}, filled: 3, price: "94.5", events: "order_accepted order_triggered order_filled"},
		{name: "sell stop_limit triggers and fills at once, no slippage", slipBps: 10, order: stopOrder{typ: command.StopLimit, side: command.Sell, stop: "95", limit: "94"},
			marks: []string{"94.5"}, filled: 0, price: "94.5", events: "order_accepted order_triggered order_filled"},
		{name: "buy stop_limit", order: stopOrder{typ: command.StopLimit, side: command.Buy, stop: "105", limit: "106"},
			marks: []string{"107", "105.5"}, filled: 1, price: "105.5", events: "order_accepted order_triggered order_filled"},
		{name: "sell trailing stop by amount follows the best mark", order: stopOrder{typ: command.TrailingStop, side: command.Sell, trailAmt: "5"},
			marks: []string{"104", "102", "110", "105.01", "105"}, filled: 4, price: "105", events: "order_accepted order_trailed order_trailed order_filled"},
		{name: "buy trailing stop by percent", order: stopOrder{typ: command.TrailingStop, side: command.Buy, trailPct: "10"},
			marks: []string{"90", "95", "98.99", "99"}, filled: 3, price: "99", events: "order_accepted order_trailed order_filled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 0, tt.slipBps)
			id := h.placeStop(tt.order)
			if o, _ := h.v.Order(id); o.Status != node.OrderOpen {
				t.Fatalf("placed %+v, want it resting", o)
			}
			for i, m := range tt.marks {
				h.mark(m)
				o, _ := h.v.Order(id)
				if want := i >= tt.filled && tt.filled >= 0; (o.Status == node.OrderFilled) != want {
					t.Fatalf("after mark %d (%s): status %s, want filled %v", i, m, o.Status, want)
				}
			}
			o, _ := h.v.Order(id)
			if tt.filled >= 0 && !o.AveragePrice.Equal(testkit.D(tt.price)) {
				t.Errorf("filled at %s, want %s", o.AveragePrice, tt.price)
			}
			if got := strings.Join(h.kinds(id), " "); got != tt.events {
				t.Errorf("events %q, want %q", got, tt.events)
			}
		})
	}
}

func TestTrailingStopStateIsJournaled(t *testing.T) {
	h := newHarness(t, 0, 0)
	trail := h.placeStop(stopOrder{typ: command.TrailingStop, side: command.Sell, trailPct: "2"})
	sl := h.placeStop(stopOrder{typ: command.StopLimit, side: command.Sell, stop: "99", limit: "98"})
	if o, _ := h.v.Order(trail); !o.TrailBest.Equal(testkit.D("100")) || !o.StopPrice.Equal(testkit.D("98")) {
		t.Fatalf("trailing stop placed at mark 100 = best %s stop %s, want 100 and 98", o.TrailBest, o.StopPrice)
	}
	h.mark("110")
	h.mark("97.5") // triggers the stop_limit below its limit; the trailing stop (107.8) fills
	if o, _ := h.v.Order(trail); o.Status != node.OrderFilled || !o.AveragePrice.Equal(testkit.D("97.5")) || !o.StopPrice.Equal(testkit.D("107.8")) {
		t.Fatalf("trailing stop = %+v", o)
	}
	if o, _ := h.v.Order(sl); o.Status != node.OrderOpen || !o.Triggered {
		t.Fatalf("stop_limit = %+v, want triggered and resting", o)
	}
	again := New(h.v.cfg)
	for _, ev := range h.events {
		if err := again.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	again.SetMark("X", testkit.D("97.5"))
	if a, b := fmt.Sprintf("%+v", h.v.Snapshot()), fmt.Sprintf("%+v", again.Snapshot()); a != b {
		t.Errorf("replayed venue differs:\n%s\n%s", a, b)
	}
	// A second trigger of the same stop_limit is refused.
	if err := h.v.Apply(node.Event{Seq: 99, Kind: node.EventTriggered, OrderID: sl}); err == nil {
		t.Error("a stop_limit triggered twice")
	}
}

func TestVetoedStopKeepsResting(t *testing.T) {
	h := newHarness(t, 0, 0)
	id := h.placeStop(stopOrder{typ: command.Stop, side: command.Sell, stop: "95"})
	h.v.SetMark("X", testkit.D("94"))
	h.v.Match(t0, func(node.Order) bool { return false }, h.emit)
	if o, _ := h.v.Order(id); o.Status != node.OrderOpen {
		t.Fatalf("vetoed stop = %+v, want resting", o)
	}
	h.mark("93")
	if o, _ := h.v.Order(id); o.Status != node.OrderFilled || !o.AveragePrice.Equal(testkit.D("93")) {
		t.Fatalf("stop after the veto lifts = %+v", o)
	}
}

// TestPaperAgreesWithTheBacktestRule feeds one price path to the paper
// venue (decimal marks) and to intrabar with Float one-price bars, the
// backtest's number type, and checks that every kind of stop fills at the
// same step and price. Prices are multiples of 0.25 and trails dyadic, so
// float64 holds every value exactly.
func TestPaperAgreesWithTheBacktestRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	filled := map[int]int{} // order index → runs in which it filled
	for run := range 40 {
		path := make([]float64, 60)
		p := 100.0
		for i := range path {
			p += float64(rng.IntN(9)-4) * 0.25
			p = max(p, 1)
			path[i] = p
		}
		orders := []stopOrder{
			{typ: command.Stop, side: command.Sell, stop: "98.5"},
			{typ: command.Stop, side: command.Buy, stop: "101.75"},
			{typ: command.StopLimit, side: command.Sell, stop: "99", limit: "98.75"},
			{typ: command.StopLimit, side: command.Buy, stop: "101", limit: "101.5"},
			{typ: command.TrailingStop, side: command.Sell, trailAmt: "1.5"},
			{typ: command.TrailingStop, side: command.Buy, trailPct: "1.5625"}, // 1/64
		}
		for k, so := range orders {
			h := newHarness(t, 0, 0)
			id := h.placeStop(so)
			ref := []intrabar.Order[intrabar.Float]{floatOrder(t, so)}
			paperAt, refAt := -1, -1
			var paperPx decimal.Decimal
			var refPx intrabar.Float
			for i, px := range path {
				m := decimal.NewFromFloat(px)
				h.mark(m.String())
				if o, _ := h.v.Order(id); paperAt < 0 && o.Status == node.OrderFilled {
					paperAt, paperPx = i, o.AveragePrice
				}
				if fills := intrabar.Step(intrabar.Mark(intrabar.Float(px)), intrabar.Path, ref, nil); refAt < 0 && len(fills) > 0 {
					refAt, refPx = i, fills[0].Price
				}
			}
			if paperAt != refAt || (paperAt >= 0 && paperPx.InexactFloat64() != float64(refPx)) {
				t.Errorf("run %d %+v: paper filled at step %d price %s, the backtest's rule at step %d price %v", run, so, paperAt, paperPx, refAt, refPx)
			}
			if paperAt >= 0 {
				filled[k]++
			}
		}
	}
	for k := range 6 {
		if filled[k] == 0 {
			t.Errorf("order %d never filled: the paths do not test it", k)
		}
	}
}

// floatOrder is so as the backtest holds it, anchored at the placement
// mark 100.
func floatOrder(t *testing.T, so stopOrder) intrabar.Order[intrabar.Float] {
	f := func(s string) intrabar.Float { return intrabar.Float(testkit.D(s).InexactFloat64()) }
	side := intrabar.Sell
	if so.side == command.Buy {
		side = intrabar.Buy
	}
	switch so.typ {
	case command.Stop:
		return intrabar.Order[intrabar.Float]{Kind: intrabar.Stop, Side: side, Stop: f(so.stop)}
	case command.StopLimit:
		return intrabar.Order[intrabar.Float]{Kind: intrabar.StopLimit, Side: side, Stop: f(so.stop), Limit: f(so.limit)}
	case command.TrailingStop:
		if so.trailPct != "" {
			return intrabar.Trailing(side, f(so.trailPct)/100, true, 100)
		}
		return intrabar.Trailing(side, f(so.trailAmt), false, 100)
	}
	t.Fatalf("no float order for %s", so.typ)
	return intrabar.Order[intrabar.Float]{}
}

func TestOCOLegsCancelEachOther(t *testing.T) {
	for _, tc := range []struct {
		name        string
		marks       []string
		filled, px  string // the leg that fills and its price
		canceledLeg string
	}{
		{"the limit leg fills", []string{"103", "106"}, "o1", "106", "o2"}, // a gap past the limit fills at the mark, better
		{"the stop leg fills", []string{"97", "94.5"}, "o2", "94.5", "o1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 0, 0)
			for _, o := range []node.Order{
				{ID: "o1", Symbol: "X", Side: command.Sell, Type: command.Limit, Quantity: testkit.D("2"), Price: testkit.D("105"), Group: "o1"},
				{ID: "o2", Symbol: "X", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("2"), StopPrice: testkit.D("95"), Group: "o1"},
			} {
				h.v.Place(o, t0, h.emit)
			}
			h.mark(tc.marks[0])
			if n := len(h.v.OpenOrders()); n != 2 {
				t.Fatalf("after %s: %d open orders, want both legs", tc.marks[0], n)
			}
			h.mark(tc.marks[1])
			f, _ := h.v.Order(tc.filled)
			c, _ := h.v.Order(tc.canceledLeg)
			if f.Status != node.OrderFilled || !f.AveragePrice.Equal(testkit.D(tc.px)) {
				t.Errorf("filled leg = %+v, want filled at %s", f, tc.px)
			}
			if c.Status != node.OrderCanceled || !strings.Contains(c.Note, "another leg of oco o1, filled") {
				t.Errorf("other leg = %+v, want canceled", c)
			}
			if p := h.v.Position("X"); !p.Equal(testkit.D("-2")) {
				t.Errorf("position %s, want one leg's -2", p)
			}
		})
	}
	// A vetoed fill cancels nothing.
	h := newHarness(t, 0, 0)
	h.v.Place(node.Order{ID: "a", Symbol: "X", Side: command.Sell, Type: command.Limit, Quantity: testkit.D("1"), Price: testkit.D("101"), Group: "a"}, t0, h.emit)
	h.v.Place(node.Order{ID: "b", Symbol: "X", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("1"), StopPrice: testkit.D("99"), Group: "a"}, t0, h.emit)
	h.v.SetMark("X", testkit.D("102"))
	h.v.Match(t0, func(node.Order) bool { return false }, h.emit)
	if n := len(h.v.OpenOrders()); n != 2 {
		t.Errorf("a vetoed fill left %d open legs, want 2", n)
	}
	if ids := h.v.CancelGroup("a", "test", t0, h.emit); strings.Join(ids, ",") != "a,b" || len(h.v.OpenOrders()) != 0 {
		t.Errorf("CancelGroup canceled %v, open %d", ids, len(h.v.OpenOrders()))
	}
}
