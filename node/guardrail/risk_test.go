package guardrail

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/command"
)

// restingView is view with its open orders resting on the book.
type restingView struct{ fakeView }

func (r restingView) Resting(venue, symbol string) []Order {
	var out []Order
	for _, o := range r.orders {
		if o.Symbol == symbol {
			out = append(out, o)
		}
	}
	return out
}

// riskConfig is config() with every [risk] check on.
func riskConfig() project.Config {
	cfg := config()
	cfg.Risk = project.Risk{StopCollarPct: 20, MaxMessages: 3, MaxDeploymentMessages: 2, MaxIdenticalOrders: 2, SelfTrade: true,
		Symbols: map[string]project.SymbolRisk{"BTC-USD": {MaxOrderQuantity: testkit.D("0.5"), MaxOrderNotional: testkit.D("10000"), MaxPosition: testkit.D("1.3")}},
		Venues:  map[string]project.VenueRisk{"paper": {MaxDailyNotional: testkit.D("30000")}}}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return cfg
}

// outcome is the named check of rep: found, passed, its detail.
func outcome(rep Report, name string) (Check, bool) {
	for _, c := range rep.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

func expect(t *testing.T, what string, rep Report, name string, ok bool, fragment string) {
	t.Helper()
	c, found := outcome(rep, name)
	switch {
	case !found:
		t.Errorf("%s: no %s check in %+v", what, name, rep.Checks)
	case c.OK != ok:
		t.Errorf("%s: %s ok=%v, want %v: %s", what, name, c.OK, ok, c.Detail)
	case !strings.Contains(c.Detail, fragment):
		t.Errorf("%s: %s detail %q lacks %q", what, name, c.Detail, fragment)
	}
}

func stopAt(side command.Side, qty, stopPrice string) command.Command {
	c := submit(side, command.Stop, qty, "")
	c.StopPrice = testkit.D(stopPrice)
	return c
}

// TestRiskChecksRefuseTheirFixtureAndPassTheirNeighbour: each [risk]
// check refuses its fixture naming the limit and the figure, and passes
// the order just inside it.
func TestRiskChecksRefuseTheirFixtureAndPassTheirNeighbour(t *testing.T) {
	g := New(riskConfig())
	v := restingView{view} // BTC-USD mark 40000, position 1, a buy resting @ 39000
	tests := []struct {
		name, check    string
		bad, good      command.Command
		badMsg, goodOK string
	}{
		{"stop collar", "stop_collar", stopAt(command.Sell, "0.1", "31000"), stopAt(command.Sell, "0.1", "33000"),
			"stop 31000 is 22.50% from mark 40000 (stop_collar_pct 20)", "stop 33000 is 17.50% from mark 40000"},
		{"order quantity", "order_quantity", submit(command.Sell, command.Market, "0.6", ""), submit(command.Sell, command.Market, "0.5", ""),
			"quantity 0.6 exceeds max_order_quantity 0.5 of BTC-USD", "quantity 0.5 ≤ max_order_quantity 0.5"},
		{"symbol notional", "symbol_notional", submit(command.Buy, command.Limit, "0.26", "40000"), submit(command.Buy, command.Limit, "0.25", "40000"),
			"0.26 × 40000 = 10400 exceeds max_order_notional 10000 of BTC-USD", "0.25 × 40000 = 10000 ≤ max_order_notional 10000"},
		{"position quantity", "position_quantity", submit(command.Buy, command.Limit, "0.31", "40000"), submit(command.Buy, command.Limit, "0.3", "40000"),
			"position 1 → 1.31 BTC-USD: 1.31 exceeds max_position 1.3", "1.3 ≤ max_position 1.3"},
		{"self trade", "self_trade", submit(command.Sell, command.Limit, "0.1", "39000"), submit(command.Sell, command.Limit, "0.1", "39000.01"),
			"sell 0.1 BTC-USD at 39000 would cross the account's own resting buy 0.1 @ 39000 (order ord-1)", "crosses none"},
	}
	for _, tc := range tests {
		expect(t, tc.name+" (fixture)", g.Check(tc.bad, v), tc.check, false, tc.badMsg)
		expect(t, tc.name+" (neighbour)", g.Check(tc.good, v), tc.check, true, tc.goodOK)
	}
	// A market sell crosses any resting buy.
	expect(t, "market self trade", g.Check(submit(command.Sell, command.Market, "0.1", ""), v), "self_trade", false, "at market would cross")
	// Off by default: no [risk] check appears in a report.
	for _, c := range New(config()).Check(submit(command.Sell, command.Market, "0.6", ""), v).Checks {
		switch c.Name {
		case "stop_collar", "order_quantity", "symbol_notional", "position_quantity", "self_trade":
			t.Errorf("check %s without [risk]: %+v", c.Name, c)
		}
	}
}

func TestSelfTradeAtBinanceIsTheVenues(t *testing.T) {
	cfg := riskConfig()
	cfg.Venues[0].Kind = project.KindBinance
	rep := New(cfg).Check(submit(command.Sell, command.Limit, "0.1", "39000"), restingView{view})
	expect(t, "binance", rep, "self_trade", true, "selfTradePreventionMode EXPIRE_TAKER")
}

// TestThrottlesCountSubmitsModifiesAndCancels: the venue's message
// throttle counts every verb in its window; the deployment's counts its
// own; the daily notional counts fills of the UTC day.
func TestThrottlesCountSubmitsModifiesAndCancels(t *testing.T) {
	g := New(riskConfig())
	l := NewLedger()
	clk := testkit.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	act := func(dep string) *Activity { return &Activity{Ledger: l, Deployment: dep, Now: clk.Now()} }
	msgs := []command.Command{
		submit(command.Buy, command.Limit, "0.1", "39500"),
		{Verb: command.Modify, Venue: "paper", OrderID: "ord-1", Price: testkit.D("39100")},
		{Verb: command.CancelOrder, Venue: "paper", OrderID: "ord-1"},
	}
	for i, c := range msgs {
		rep := g.CheckWith(c, view, act(""))
		expect(t, string(c.Verb), rep, "venue_messages", true, "max_messages 3 per 1s")
		if !rep.OK {
			t.Fatalf("message %d refused: %s", i, rep.Summary())
		}
		g.Record(l, c, "", clk.Now())
	}
	rep := g.CheckWith(msgs[2], view, act(""))
	expect(t, "a 4th message in the window", rep, "venue_messages", false, "4 message(s) to paper in the last 1s; max_messages 3 per 1s")
	clk.Advance(time.Second)
	expect(t, "after the window", g.CheckWith(msgs[2], view, act("")), "venue_messages", true, "1 message(s)")

	// Per deployment: its own count, beside the venue's.
	for range 2 {
		g.Record(l, msgs[2], "dep-a", clk.Now())
	}
	expect(t, "dep-a's 3rd", g.CheckWith(msgs[2], view, act("dep-a")), "deployment_messages", false, "3 message(s) from deployment dep-a in the last 1s; max_deployment_messages 2")
	expect(t, "dep-b's 1st", g.CheckWith(msgs[2], view, act("dep-b")), "deployment_messages", true, "1 message(s) from deployment dep-b")

	// Daily notional: fills today plus the order against the limit.
	clk.Advance(time.Minute)
	l.Filled("paper", clk.Now().Add(-24*time.Hour), testkit.D("25000")) // yesterday's: not today's
	l.Filled("paper", clk.Now(), testkit.D("26000"))
	expect(t, "over the day", g.CheckWith(submit(command.Buy, command.Limit, "0.11", "40000"), view, act("")), "daily_notional", false,
		"26000 traded on paper today (UTC) + 4400 = 30400 exceeds max_daily_notional 30000")
	expect(t, "within the day", g.CheckWith(submit(command.Buy, command.Limit, "0.1", "40000"), view, act("")), "daily_notional", true, "= 30000 ≤ max_daily_notional 30000")
	clk.Advance(24 * time.Hour)
	expect(t, "the next day", g.CheckWith(submit(command.Buy, command.Limit, "0.11", "40000"), view, act("")), "daily_notional", true, "0 traded on paper today")
}

// TestIdenticalOrdersStayRefusedUntilReset: past max_identical_orders in
// the window an identical order is refused, and stays refused after the
// window until the operator's reset; a different order passes.
func TestIdenticalOrdersStayRefusedUntilReset(t *testing.T) {
	g := New(riskConfig())
	l := NewLedger()
	clk := testkit.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	c := submit(command.Buy, command.Limit, "0.1", "39500")
	for range 2 {
		rep := g.CheckWith(c, view, &Activity{Ledger: l, Now: clk.Now()})
		if !rep.OK {
			t.Fatal(rep.Summary())
		}
		g.Record(l, c, "", clk.Now())
		clk.Advance(2 * time.Second) // out of the message window
	}
	rep := g.CheckWith(c, view, &Activity{Ledger: l, Now: clk.Now()})
	expect(t, "3rd identical", rep, "identical_orders", false, "3 identical order(s) limit buy 0.1 BTC-USD @ 39500 in the last 1m0s; max_identical_orders 2")
	g.Refused(l, c, rep)
	other := submit(command.Buy, command.Limit, "0.1", "39501")
	expect(t, "a different order", g.CheckWith(other, view, &Activity{Ledger: l, Now: clk.Now()}), "identical_orders", true, "1 identical order(s)")
	clk.Advance(time.Hour)
	expect(t, "an hour later", g.CheckWith(c, view, &Activity{Ledger: l, Now: clk.Now()}), "identical_orders", false, "until an operator runs wicket node reset-throttle")
	if cleared := l.Reset(); len(cleared) != 1 || !strings.Contains(cleared[0], "limit buy 0.1 BTC-USD @ 39500 on paper") {
		t.Fatalf("reset cleared %v", cleared)
	}
	expect(t, "after the reset", g.CheckWith(c, view, &Activity{Ledger: l, Now: clk.Now()}), "identical_orders", true, "1 identical order(s)")
}

// TestStatusShowsEveryLimitWithHeadroom: risk_status's limits.
func TestStatusShowsEveryLimitWithHeadroom(t *testing.T) {
	g := New(riskConfig())
	l := NewLedger()
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	l.Filled("paper", now, testkit.D("1000"))
	g.Record(l, submit(command.Buy, command.Limit, "0.1", "39500"), "dep-a", now)
	got := map[string]Headroom{}
	for _, h := range g.Status(view, l, now) {
		got[h.Check+" "+h.Scope] = h
	}
	for key, want := range map[string]string{
		"position_quantity paper BTC-USD":     "1.3/1/0.3",
		"daily_notional paper":                "30000/1000/29000",
		"venue_messages paper":                "3/1/2",
		"deployment_messages each deployment": "2/1/1",
		"order_quantity BTC-USD":              "0.5//",
	} {
		h, ok := got[key]
		if !ok {
			t.Errorf("no %s in %v", key, got)
			continue
		}
		if s := h.Limit + "/" + h.Used + "/" + h.Headroom; s != want {
			t.Errorf("%s: %s, want %s", key, s, want)
		}
	}
}

// sessionView is view with a market session for SPY on paper.
type sessionView struct {
	fakeView
	open bool
}

func (s sessionView) Session(venue, symbol string) (bool, string, bool) {
	if symbol != "SPY" {
		return true, "", false
	}
	if s.open {
		return true, "paper's market is open until 20:00", true
	}
	return false, "paper's market is closed for SPY: it opens at 13:30 (its clock); send the order then", true
}

// TestMarketHoursRefusesAClosedSession: an equity order while its market
// is closed is refused naming when it opens; open, it passes; a symbol
// without sessions is not checked.
func TestMarketHoursRefusesAClosedSession(t *testing.T) {
	cfg := riskConfig()
	cfg.Venues[0].Symbols = append(cfg.Venues[0].Symbols, "SPY")
	cfg.Risk.MarketHours = true
	g := New(cfg)
	spy := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "SPY", Side: command.Buy, Type: command.Market, Quantity: testkit.D("1")}
	v := view
	v.marks = map[string]decimal.Decimal{"SPY": testkit.D("500"), "BTC-USD": testkit.D("40000")}
	expect(t, "closed", g.Check(spy, sessionView{v, false}), "market_hours", false, "closed for SPY: it opens at 13:30")
	expect(t, "open", g.Check(spy, sessionView{v, true}), "market_hours", true, "open until 20:00")
	if _, found := outcome(g.Check(submit(command.Sell, command.Market, "0.1", ""), sessionView{v, false}), "market_hours"); found {
		t.Error("a symbol without sessions was checked for market hours")
	}
}
