package paper

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// harness applies emitted events the way the node does and records them.
type harness struct {
	t      *testing.T
	v      *Venue
	seq    int64
	events []node.Event
	n      int
}

func newHarness(t *testing.T, fee, slip float64) *harness {
	v := New(project.Venue{Name: "p", Kind: "paper", Currency: "USD", Cash: testkit.D("10000"), FeeBps: fee, SlippageBps: slip,
		Symbols: []string{"X"}, QuantityDecimals: 4, PriceDecimals: 2})
	h := &harness{t: t, v: v}
	h.emit(node.Event{Kind: node.EventVenueOpened, Venue: "p", Cash: testkit.D("10000")})
	v.SetMark("X", testkit.D("100"))
	return h
}

func (h *harness) emit(ev node.Event) {
	h.seq++
	ev.Seq = h.seq
	if err := h.v.Apply(ev); err != nil {
		h.t.Fatalf("apply %+v: %v", ev, err)
	}
	h.events = append(h.events, ev)
}

func (h *harness) place(side command.Side, typ command.OrderType, qty, price string) node.Order {
	h.n++
	o := node.Order{ID: fmt.Sprintf("o%d", h.n), Symbol: "X", Side: side, Type: typ, Quantity: testkit.D(qty)}
	if price != "" {
		o.Price = testkit.D(price)
	}
	h.v.Place(o, t0, h.emit)
	got, _ := h.v.Order(o.ID)
	return got
}

func TestPositionAccounting(t *testing.T) {
	h := newHarness(t, 0, 0)
	steps := []struct {
		side               command.Side
		qty, mark          string
		pos, avg, realized string
		cash               string
	}{
		{command.Buy, "10", "100", "10", "100", "0", "9000"},
		{command.Buy, "10", "110", "20", "105", "0", "7900"},
		{command.Sell, "5", "120", "15", "105", "75", "8500"},    // 5 × (120 − 105)
		{command.Sell, "25", "90", "-10", "90", "-150", "10750"}, // closes 15 at −15 each, opens 10 short at 90
		{command.Buy, "4", "80", "-6", "90", "-110", "10430"},    // covers 4 at +10 each
		{command.Buy, "6", "95", "0", "0", "-140", "9860"},       // covers 6 at −5 each
	}
	for i, s := range steps {
		h.v.SetMark("X", testkit.D(s.mark))
		o := h.place(s.side, command.Market, s.qty, "")
		if o.Status != node.OrderFilled || !o.AveragePrice.Equal(testkit.D(s.mark)) {
			t.Fatalf("step %d: order %+v", i, o)
		}
		snap := h.v.Snapshot()
		var p node.Position
		for _, x := range snap.Positions {
			p = x
		}
		if !p.Quantity.Equal(testkit.D(s.pos)) || !p.AveragePrice.Equal(testkit.D(s.avg)) || !p.RealizedPnL.Equal(testkit.D(s.realized)) || !snap.Cash.Equal(testkit.D(s.cash)) {
			t.Errorf("step %d: position %s @ %s realized %s cash %s; want %s @ %s realized %s cash %s",
				i, p.Quantity, p.AveragePrice, p.RealizedPnL, snap.Cash, s.pos, s.avg, s.realized, s.cash)
		}
		// Equity is cash plus the position at the mark; with no fees it
		// moves only by realized and unrealized PnL.
		want := testkit.D("10000").Add(p.RealizedPnL).Add(p.UnrealizedPnL)
		if !snap.Equity.Equal(want) {
			t.Errorf("step %d: equity %s, want %s", i, snap.Equity, want)
		}
	}
}

func TestFillPricesFeesAndTimeInForce(t *testing.T) {
	h := newHarness(t, 10, 50) // 10 bps fee, 50 bps slippage
	buy := h.place(command.Buy, command.Market, "1", "")
	sell := h.place(command.Sell, command.Market, "1", "")
	if !buy.AveragePrice.Equal(testkit.D("100.5")) || !sell.AveragePrice.Equal(testkit.D("99.5")) {
		t.Errorf("market fills at %s / %s, want 100.5 / 99.5", buy.AveragePrice, sell.AveragePrice)
	}
	if fee := h.events[len(h.events)-1].Fee; !fee.Equal(testkit.D("0.0995")) {
		t.Errorf("fee = %s, want 0.0995", fee)
	}
	// A marketable limit fills at the market price capped by its limit.
	capped := h.place(command.Buy, command.Limit, "1", "100.2")
	if capped.Status != node.OrderFilled || !capped.AveragePrice.Equal(testkit.D("100.2")) {
		t.Errorf("marketable limit = %+v", capped)
	}
	better := h.place(command.Buy, command.Limit, "1", "101")
	if !better.AveragePrice.Equal(testkit.D("100.5")) {
		t.Errorf("limit above the market filled at %s, want 100.5", better.AveragePrice)
	}
	// Not marketable: gtc rests, ioc is canceled.
	gtc := h.place(command.Buy, command.Limit, "1", "99")
	if gtc.Status != node.OrderOpen || gtc.TimeInForce != command.GTC {
		t.Errorf("gtc = %+v", gtc)
	}
	o := node.Order{ID: "ioc", Symbol: "X", Side: command.Sell, Type: command.Limit, Quantity: testkit.D("1"), Price: testkit.D("101"), TimeInForce: command.IOC}
	h.v.Place(o, t0, h.emit)
	got, _ := h.v.Order("ioc")
	if got.Status != node.OrderCanceled || !strings.Contains(got.Note, "not marketable at mark 100") {
		t.Errorf("ioc = %+v", got)
	}
	// The mark reaching a resting order fills it at its limit price.
	h.v.SetMark("X", testkit.D("98.5"))
	h.v.Match(t0, func(node.Order) bool { return true }, h.emit)
	got, _ = h.v.Order(gtc.ID)
	if got.Status != node.OrderFilled || !got.AveragePrice.Equal(testkit.D("99")) {
		t.Errorf("resting order after the cross = %+v", got)
	}
}

func TestReplayRebuildsTheVenue(t *testing.T) {
	h := newHarness(t, 7.5, 3)
	h.place(command.Buy, command.Market, "3.3333", "")
	h.place(command.Sell, command.Limit, "1", "100.5")
	r := h.place(command.Buy, command.Limit, "2", "99")
	if err := h.v.Modify(r.ID, testkit.D("2.5"), testkit.D("99.5"), t0, h.emit); err != nil {
		t.Fatal(err)
	}
	h.v.SetMark("X", testkit.D("101"))
	h.v.Match(t0, func(node.Order) bool { return true }, h.emit)
	if err := h.v.Cancel(r.ID, "test", t0, h.emit); err != nil {
		t.Fatal(err)
	}

	again := New(h.v.cfg)
	for _, ev := range h.events {
		if err := again.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	again.SetMark("X", testkit.D("101"))
	if a, b := fmt.Sprintf("%+v", h.v.Snapshot()), fmt.Sprintf("%+v", again.Snapshot()); a != b {
		t.Errorf("replayed venue differs:\n%s\n%s", a, b)
	}
}

func TestApplyRefusesInconsistentEvents(t *testing.T) {
	h := newHarness(t, 0, 0)
	o := h.place(command.Buy, command.Limit, "1", "90")
	bad := []node.Event{
		{Seq: 99, Kind: node.EventFilled, OrderID: "nope", Quantity: testkit.D("1"), Price: testkit.D("1")},
		{Seq: 99, Kind: node.EventFilled, OrderID: o.ID, Quantity: testkit.D("2"), Price: testkit.D("90")},
		{Seq: 99, Kind: node.EventAccepted, Order: &o},
		{Seq: 99, Kind: "bogus", OrderID: o.ID},
	}
	for _, ev := range bad {
		if err := h.v.Apply(ev); err == nil {
			t.Errorf("Apply(%s %s) accepted an inconsistent event", ev.Kind, ev.OrderID)
		}
	}
	if err := h.v.Cancel("nope", "", t0, h.emit); err == nil {
		t.Error("Cancel of an unknown order succeeded")
	}
}

func TestFeed(t *testing.T) {
	v := project.Venue{PriceDecimals: 2, StartPrices: map[string]decimal.Decimal{"B": testkit.D("50")}}
	f := Feed{Seed: 7, Start: map[string]decimal.Decimal{"A": testkit.D("123.456")}, Replay: map[string][]decimal.Decimal{"R": {testkit.D("1"), testkit.D("2"), testkit.D("3")}}}
	for sym, want := range map[string]string{"A": "123.46", "B": "50", "C": "100", "R": "1"} {
		if got := f.First(v, sym); !got.Equal(testkit.D(want)) {
			t.Errorf("First(%s) = %s, want %s", sym, got, want)
		}
	}
	for step, want := range []string{"1", "2", "3", "3", "3"} {
		if got := f.Next("R", int64(step), testkit.D("0"), 2); !got.Equal(testkit.D(want)) {
			t.Errorf("replay step %d = %s, want %s", step, got, want)
		}
	}
	path := func(f Feed) []string {
		m := testkit.D("100")
		var out []string
		for i := int64(1); i <= 50; i++ {
			m = f.Next("A", i, m, 2)
			out = append(out, m.String())
		}
		return out
	}
	a, b := path(f), path(f)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Error("the same seed gave two paths")
	}
	f2 := f
	f2.Seed = 8
	if strings.Join(a, ",") == strings.Join(path(f2), ",") {
		t.Error("different seeds gave the same path")
	}
	moved := 0
	prev := testkit.D("100")
	for _, s := range a {
		m := testkit.D(s)
		if step := m.Sub(prev).Abs().Div(prev); step.GreaterThan(testkit.D("0.0011")) {
			t.Errorf("a step moved %s, more than 10 bps", step)
		}
		if !m.Equal(prev) {
			moved++
		}
		prev = m
	}
	if moved < 40 {
		t.Errorf("only %d of 50 steps moved the mark", moved)
	}
	if got := f.Next("A", 1, testkit.D("0.01"), 2); got.LessThan(testkit.D("0.01")) {
		t.Errorf("mark fell below one tick: %s", got)
	}
}
