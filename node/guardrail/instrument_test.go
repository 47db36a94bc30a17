package guardrail

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node/command"
)

// instrumentView adds a real venue's rules to fakeView.
type instrumentView struct {
	fakeView
	in map[string]Instrument
}

func (v instrumentView) Instrument(venue, symbol string) (Instrument, bool) {
	in, ok := v.in[symbol]
	return in, ok
}

func TestInstrumentRules(t *testing.T) {
	g := New(config())
	view := instrumentView{
		fakeView: fakeView{marks: map[string]decimal.Decimal{"BTC-USD": testkit.D("60000"), "ETH-USD": testkit.D("3000")}},
		in: map[string]Instrument{
			"BTC-USD": {Tick: testkit.D("0.01"), Step: testkit.D("0.00001"), MinQuantity: testkit.D("0.0001"), MinNotional: testkit.D("5"), Fractional: true},
			"ETH-USD": {Tick: testkit.D("0.5"), Fractional: false, Shortable: true},
		},
	}
	for _, tc := range []struct {
		name, symbol, qty, price string
		side                     command.Side
		check, want              string
		ok                       bool
	}{
		{"on the grid", "BTC-USD", "0.01", "59000.01", command.Buy, "precision", "on step 0.00001", true},
		{"too fine a quantity", "BTC-USD", "0.000001", "59000", command.Buy, "precision", "not a multiple of paper's step 0.00001", false},
		{"too fine a price", "BTC-USD", "0.01", "59000.001", command.Buy, "precision", "not a multiple of paper's tick 0.01", false},
		{"below the minimum quantity", "BTC-USD", "0.00002", "59000", command.Buy, "precision", "below paper's minimum 0.0001", false},
		{"below the minimum notional", "BTC-USD", "0.0001", "40000", command.Buy, "min_notional", "minimum for BTC-USD is 5", false},
		{"market order valued at the mark", "BTC-USD", "0.0001", "", command.Buy, "min_notional", "0.0001 × 60000 = 6", true},
		{"no shorting", "BTC-USD", "0.01", "61000", command.Sell, "shortable", "does not allow shorting", false},
		{"whole units only", "ETH-USD", "1.5", "3000", command.Buy, "precision", "step 1", false},
		{"shortable", "ETH-USD", "2", "3000.5", command.Sell, "precision", "on step 1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ := command.Limit
			c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: tc.symbol, Side: tc.side, Quantity: testkit.D(tc.qty)}
			if tc.price == "" {
				typ = command.Market
			} else {
				c.Price = testkit.D(tc.price)
			}
			c.Type = typ
			rep := g.Check(c, view)
			for _, ch := range rep.Checks {
				if ch.Name == tc.check {
					if ch.OK != tc.ok || !strings.Contains(ch.Detail, tc.want) {
						t.Errorf("%s: ok %v %q, want ok %v containing %q", ch.Name, ch.OK, ch.Detail, tc.ok, tc.want)
					}
					return
				}
			}
			t.Errorf("no %s check in %+v", tc.check, rep.Checks)
		})
	}
	// A stop's prices keep to the tick too, and the minimum notional is at
	// the stop.
	for _, tc := range []struct {
		c    command.Command
		want string
		ok   bool
	}{
		{command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Sell, Type: command.StopLimit,
			Quantity: testkit.D("0.01"), StopPrice: testkit.D("59000.005"), LimitPrice: testkit.D("58900")}, "stop_price 59000.005 is not a multiple of paper's tick 0.01", false},
		{command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Sell, Type: command.StopLimit,
			Quantity: testkit.D("0.01"), StopPrice: testkit.D("59000"), LimitPrice: testkit.D("58900.001")}, "limit_price 58900.001 is not a multiple", false},
		{command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Sell, Type: command.Stop,
			Quantity: testkit.D("0.0001"), StopPrice: testkit.D("40000")}, "0.0001 × 40000 = 4; paper's minimum for BTC-USD is 5", false},
	} {
		rep := g.Check(tc.c, instrumentView{fakeView: fakeView{marks: view.marks, positions: map[string]decimal.Decimal{"BTC-USD": testkit.D("1")}}, in: view.in})
		if rep.OK != tc.ok || !strings.Contains(rep.Summary(), tc.want) {
			t.Errorf("%s: %s, want ok %v with %q", tc.c, rep.Summary(), tc.ok, tc.want)
		}
	}
	// Without an instrument the configured decimals still apply.
	rep := g.Check(command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy, Type: command.Market,
		Quantity: testkit.D("0.0000001")}, view.fakeView)
	if rep.OK || !strings.Contains(rep.Summary(), "decimals") {
		t.Errorf("decimals without an instrument: %s", rep.Summary())
	}
}
