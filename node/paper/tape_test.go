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
