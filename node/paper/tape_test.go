package paper

import (
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

func tapeBar(o, h, l, c, next string) TapeBar {
	return TapeBar{Bar: intrabar.Bar[decimal.Decimal]{Open: testkit.D(o), High: testkit.D(h), Low: testkit.D(l), Close: testkit.D(c)}, Next: testkit.D(next)}
}

// TestStepTapeWalksTheBarThenMarksTheNextOpen: a tape's bar walks the
// resting orders along its path (a stop its low passes through fills at
// its stop less slippage, though the bar closes above it; a limit the
// open gapped through fills at the open), the mark is then the next
// open, and a symbol the venue does not list is passed by.
func TestStepTapeWalksTheBarThenMarksTheNextOpen(t *testing.T) {
	h := newHarness(t, 0, 10)
	h.place(command.Buy, command.Market, "2", "")
	stop := h.placeStop(stopOrder{typ: command.Stop, side: command.Sell, stop: "95"})
	all := func(node.Order) bool { return true }

	moved := h.v.StepTape(map[string]TapeBar{"X": tapeBar("99", "101", "94", "96", "96.5"), "Y": tapeBar("1", "1", "1", "1", "1")}, t0, all, h.emit)
	if len(moved) != 1 || moved[0] != "X" {
		t.Fatalf("marks set for %v, want X alone", moved)
	}
	o, _ := h.v.Order(stop)
	if o.Status != node.OrderFilled || !o.AveragePrice.Equal(testkit.D("94.9")) { // 95 − 0.095, floored to the venue's 2 decimals
		t.Fatalf("the stop after a bar whose low passed it: %s at %s", o.Status, o.AveragePrice)
	}
	if m, _ := h.v.Mark("X"); !m.Equal(testkit.D("96.5")) {
		t.Fatalf("mark %s after the bar, want the next open 96.5", m)
	}

	limit := h.place(command.Buy, command.Limit, "1", "95")
	h.v.StepTape(map[string]TapeBar{"X": tapeBar("93", "97", "92", "96", "96")}, t0, all, h.emit)
	if o, _ := h.v.Order(limit.ID); o.Status != node.OrderFilled || !o.AveragePrice.Equal(testkit.D("93")) {
		t.Fatalf("a buy limit at 95 the open gapped under: %s at %s, want filled at the open 93", o.Status, o.AveragePrice)
	}
}

// TestStepTapeMarketOrderWaitsForTheBarAfterAGap: after a bar whose
// symbol has no bar at the tape's next calendar bar (Gap), a market order
// rests (no fill at the mark, which is already the next bar's open) and
// fills at that bar's open with slippage when the bar is walked; after a
// bar without a gap a market order fills at once, as off a tape.
func TestStepTapeMarketOrderWaitsForTheBarAfterAGap(t *testing.T) {
	h := newHarness(t, 0, 10)
	all := func(node.Order) bool { return true }
	gap := tapeBar("99", "101", "98", "100", "104")
	gap.Gap = true
	h.v.StepTape(map[string]TapeBar{"X": gap}, t0, all, h.emit)
	o := h.place(command.Buy, command.Market, "1", "")
	if o.Status != node.OrderOpen || o.Filled.IsPositive() {
		t.Fatalf("a market order before the bar after a gap: %s, %s filled; want it resting", o.Status, o.Filled)
	}
	h.v.StepTape(map[string]TapeBar{}, t0, all, h.emit) // a calendar bar the symbol misses
	if o, _ = h.v.Order(o.ID); o.Status != node.OrderOpen {
		t.Fatalf("at the calendar bar the symbol missed: %s", o.Status)
	}
	h.v.StepTape(map[string]TapeBar{"X": tapeBar("104", "105", "103", "104", "104")}, t0, all, h.emit)
	if o, _ = h.v.Order(o.ID); o.Status != node.OrderFilled || !o.AveragePrice.Equal(testkit.D("104.11")) { // 104 + 0.104, up to 2 decimals
		t.Fatalf("at the symbol's next bar: %s at %s, want filled at its open 104 plus slippage", o.Status, o.AveragePrice)
	}
	if o := h.place(command.Sell, command.Market, "1", ""); o.Status != node.OrderFilled || !o.AveragePrice.Equal(testkit.D("103.89")) {
		t.Fatalf("a market order after a bar with no gap: %s at %s, want filled at once at the mark less slippage", o.Status, o.AveragePrice)
	}

	// A bracket's market entry waits too; filled at the open, its exits
	// walk the rest of that bar: the low reaches the stop-loss.
	h.v.StepTape(map[string]TapeBar{"X": gap}, t0, all, h.emit)
	e, _, sl := h.placeBracket(command.Buy, "1", "", "110", "101", "")
	if o, _ := h.v.Order(e); o.Status != node.OrderOpen {
		t.Fatalf("a bracket's market entry before the bar after a gap: %s", o.Status)
	}
	h.v.StepTape(map[string]TapeBar{"X": tapeBar("104", "105", "100", "103", "103")}, t0, all, h.emit)
	eo, _ := h.v.Order(e)
	so, _ := h.v.Order(sl)
	if eo.Status != node.OrderFilled || !eo.AveragePrice.Equal(testkit.D("104.11")) || so.Status != node.OrderFilled || !so.AveragePrice.Equal(testkit.D("100.89")) {
		t.Fatalf("the bracket at the bar after the gap: entry %s at %s, stop-loss %s at %s; want the entry at the open and the stop on the bar's path",
			eo.Status, eo.AveragePrice, so.Status, so.AveragePrice)
	}
}

// TestTapeTrailingStopStartsFromTheEntry: on a tape a trailing stop that
// closes a long starts from the position's average price when that is
// above the mark (the entry's fill, slippage included, as the backtest's
// trailing exit starts from it), and from the mark when the mark is
// better; off a tape, from the mark.
func TestTapeTrailingStopStartsFromTheEntry(t *testing.T) {
	all := func(node.Order) bool { return true }
	for _, c := range []struct {
		name      string
		tape      bool
		mark      string
		best, stp string
	}{
		{"tape, mark below the entry", true, "100", "100.1", "99.0990"},
		{"tape, mark above the entry", true, "102", "102", "100.98"},
		{"no tape", false, "100", "100", "99"},
	} {
		h := newHarness(t, 0, 10)
		if c.tape {
			h.v.StepTape(map[string]TapeBar{"X": tapeBar("100", "100", "100", "100", "100")}, t0, all, h.emit)
		}
		if e := h.place(command.Buy, command.Market, "2", ""); !e.AveragePrice.Equal(testkit.D("100.1")) {
			t.Fatalf("%s: entry at %s", c.name, e.AveragePrice)
		}
		h.v.SetMark("X", testkit.D(c.mark))
		o, _ := h.v.Order(h.placeStop(stopOrder{typ: command.TrailingStop, side: command.Sell, trailPct: "1"}))
		if !o.TrailBest.Equal(testkit.D(c.best)) || !o.StopPrice.Equal(testkit.D(c.stp)) {
			t.Errorf("%s: trailing stop from %s, stop %s; want from %s, stop %s", c.name, o.TrailBest, o.StopPrice, c.best, c.stp)
		}
	}
}
