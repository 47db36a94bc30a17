package guardrail

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/command"
)

// fakeView is a hand-written market view.
type fakeView struct {
	marks     map[string]decimal.Decimal // symbol → mark (venue "paper")
	positions map[string]decimal.Decimal
	orders    []Order
}

func (f fakeView) Mark(venue, symbol string) (decimal.Decimal, bool) {
	m, ok := f.marks[symbol]
	return m, ok && venue == "paper"
}

func (f fakeView) Position(venue, symbol string) decimal.Decimal { return f.positions[symbol] }

func (f fakeView) OpenOrder(venue, id, cid string) (Order, bool) {
	for _, o := range f.orders {
		if (id != "" && o.ID == id) || (cid != "" && o.ClientOrderID == cid) {
			return o, true
		}
	}
	return Order{}, false
}

func config() project.Config {
	cfg := project.Defaults()
	cfg.Venues[0].Symbols = []string{"BTC-USD", "ETH-USD"}
	cfg.Venues = append(cfg.Venues, project.Venue{Name: "alt", Kind: "paper", Currency: "USD", Cash: testkit.D("1000"),
		Symbols: []string{"SOL-USD"}, QuantityDecimals: 2, PriceDecimals: 4})
	return cfg
}

var view = fakeView{
	marks:     map[string]decimal.Decimal{"BTC-USD": testkit.D("40000"), "ETH-USD": testkit.D("2000")},
	positions: map[string]decimal.Decimal{"BTC-USD": testkit.D("1"), "ETH-USD": testkit.D("-3")},
	orders: []Order{
		{ID: "ord-1", ClientOrderID: "wk-1", Symbol: "BTC-USD", Side: command.Buy, Type: command.Limit, Quantity: testkit.D("0.1"), Price: testkit.D("39000")},
		{ID: "ord-2", ClientOrderID: "wk-2", Symbol: "BTC-USD", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.1")},
	},
}

func submit(side command.Side, typ command.OrderType, qty, price string) command.Command {
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: side, Type: typ, Quantity: testkit.D(qty)}
	if price != "" {
		c.Price = testkit.D(price)
	}
	return c
}

func TestCheck(t *testing.T) {
	g := New(config())
	tests := []struct {
		name string
		cmd  command.Command
		view View
		// failing check → a fragment of its detail; every other check must pass
		fail map[string]string
		// passing check → a fragment of its detail
		pass map[string]string
	}{
		{name: "a good limit order", cmd: submit(command.Buy, command.Limit, "0.2", "41000"), view: view,
			pass: map[string]string{
				"price_collar":      "limit 41000 is 2.50% from mark 40000 (collar 10%)",
				"order_notional":    "0.2 × limit 41000 = 8200 ≤ max_order_notional 25000",
				"position_notional": "position 1 → 1.2 BTC-USD; 1.2 × mark 40000 = 48000 ≤ max_position_notional 50000",
			}},
		{name: "over the position limit", cmd: submit(command.Buy, command.Limit, "0.5", "41000"), view: view,
			fail: map[string]string{"position_notional": "position 1 → 1.5 BTC-USD; 1.5 × mark 40000 = 60000 exceeds max_position_notional 50000"}},
		{name: "unknown venue", cmd: with(submit(command.Buy, command.Market, "1", ""), func(c *command.Command) { c.Venue = "nope" }),
			view: view, fail: map[string]string{"venue": `unknown venue "nope"; configured: paper, alt`}},
		{name: "unlisted symbol", cmd: with(submit(command.Buy, command.Market, "1", ""), func(c *command.Command) { c.Symbol = "SOL-USD" }),
			view: view, fail: map[string]string{"symbol": "SOL-USD is not listed on paper; listed: BTC-USD, ETH-USD"}},
		{name: "too many quantity decimals", cmd: submit(command.Sell, command.Market, "0.1234567", ""), view: view,
			fail: map[string]string{"precision": "quantity 0.1234567 has 7 decimals; paper allows 6"}},
		{name: "trailing zeros are not precision", cmd: submit(command.Sell, command.Limit, "0.1000000", "40000.000"), view: view,
			pass: map[string]string{"precision": "quantity 1 of 6 decimals, price 0 of 2"}},
		{name: "too many price decimals", cmd: submit(command.Buy, command.Limit, "0.1", "40000.001"), view: view,
			fail: map[string]string{"precision": "price 40000.001 has 3 decimals; paper allows 2"}},
		{name: "outside the collar", cmd: submit(command.Buy, command.Limit, "0.1", "44000.01"), view: view,
			fail: map[string]string{"price_collar": "limit 44000.01 is more than 10.00% from mark 40000"}},
		{name: "on the collar edge", cmd: submit(command.Buy, command.Limit, "0.1", "36000"), view: view,
			pass: map[string]string{"price_collar": "limit 36000 is 10.00% from mark 40000"}},
		{name: "no mark", cmd: submit(command.Buy, command.Limit, "0.1", "40000"), view: nil,
			fail: map[string]string{"price_collar": "no mark for BTC-USD", "position_notional": "cannot value"}},
		{name: "a zero mark is no mark", cmd: submit(command.Buy, command.Limit, "0.1", "40000"), view: fakeView{marks: map[string]decimal.Decimal{"BTC-USD": testkit.D("0")}},
			fail: map[string]string{"price_collar": "no mark for BTC-USD", "position_notional": "cannot value"}},
		{name: "order notional", cmd: submit(command.Sell, command.Market, "0.7", ""), view: view,
			fail: map[string]string{"order_notional": "0.7 × mark 40000 = 28000 exceeds max_order_notional 25000"},
			pass: map[string]string{"position_notional": "position 1 → 0.3 BTC-USD: reduces it"}},
		{name: "flipping is not reducing", cmd: submit(command.Sell, command.Market, "2.5", ""), view: view,
			fail: map[string]string{"order_notional": "exceeds", "position_notional": "position 1 → -1.5 BTC-USD; 1.5 × mark 40000 = 60000 exceeds"}},
		{name: "cover a short", cmd: with(submit(command.Buy, command.Market, "3", ""), func(c *command.Command) { c.Symbol = "ETH-USD" }), view: view,
			pass: map[string]string{"position_notional": "position -3 → 0 ETH-USD: reduces it"}},
		{name: "modify by client id", cmd: command.Command{Verb: command.Modify, Venue: "paper", ClientOrderID: "wk-1", Price: testkit.D("39500")}, view: view,
			pass: map[string]string{"order": "open: ord-1 limit buy 0.1 BTC-USD @ 39000", "order_notional": "0.1 × limit 39500 = 3950",
				"position_notional": "position 1 → 1.1 BTC-USD; 1.1 × mark 40000 = 44000 ≤"}},
		{name: "modify over the order limit", cmd: command.Command{Verb: command.Modify, Venue: "paper", OrderID: "ord-1", Quantity: testkit.D("0.7")}, view: view,
			fail: map[string]string{"order_notional": "0.7 × limit 39000 = 27300 exceeds", "position_notional": "1.7 × mark 40000 = 68000 exceeds"}},
		{name: "modify a market order", cmd: command.Command{Verb: command.Modify, Venue: "paper", OrderID: "ord-2", Quantity: testkit.D("1")}, view: view,
			fail: map[string]string{"modify": "a market order cannot be modified: only limit, stop, stop_limit, trailing_stop orders can"}},
		{name: "cancel an unknown order", cmd: command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: "ord-9"}, view: view,
			fail: map[string]string{"order": "no open order with order_id ord-9 on paper"}},
		{name: "mass cancel a symbol", cmd: command.Command{Verb: command.MassCancel, Venue: "alt", Symbol: "SOL-USD"}, view: view,
			pass: map[string]string{"symbol": "SOL-USD is listed on alt"}},
		{name: "market exit everywhere", cmd: command.Command{Verb: command.MarketExit}, view: nil,
			pass: map[string]string{"venue": "every venue: paper, alt"}},
		{name: "a sell stop below the mark", cmd: stop(command.Sell, "0.5", "38000", ""), view: view,
			pass: map[string]string{
				"stop_side":         "sell stop_price 38000 must be below mark 40000",
				"price_collar":      "stop order: no limit price to check",
				"order_notional":    "0.5 × stop 38000 = 19000 ≤ max_order_notional 25000",
				"position_notional": "position 1 → 0.5 BTC-USD: reduces it",
			}},
		{name: "a sell stop at the mark", cmd: stop(command.Sell, "0.5", "40000", ""), view: view,
			fail: map[string]string{"stop_side": "sell stop_price 40000 must be below mark 40000 (a sell stop triggers on a fall; at or above the mark it would fill at once)"}},
		{name: "a buy stop below the mark", cmd: stop(command.Buy, "0.1", "39999.99", ""), view: view,
			fail: map[string]string{"stop_side": "buy stop_price 39999.99 must be above mark 40000"}},
		{name: "a buy stop above the mark", cmd: stop(command.Buy, "0.1", "41000", ""), view: view,
			pass: map[string]string{"stop_side": "buy stop_price 41000 must be above", "order_notional": "0.1 × stop 41000 = 4100 ≤"}},
		{name: "a stop valued at its stop", cmd: stop(command.Buy, "0.6", "42000", ""), view: fakeView{marks: view.marks},
			fail: map[string]string{"order_notional": "0.6 × stop 42000 = 25200 exceeds max_order_notional 25000"}},
		{name: "a stop with no mark", cmd: stop(command.Sell, "0.1", "38000", ""), view: nil,
			fail: map[string]string{"stop_side": "no mark for BTC-USD on paper: cannot check the stop's side", "position_notional": "cannot value"}},
		{name: "a stop's price decimals", cmd: stop(command.Sell, "0.1", "38000.001", ""), view: view,
			fail: map[string]string{"precision": "stop_price 38000.001 has 3 decimals; paper allows 2"}},
		{name: "a stop_limit's limit within the collar of its stop", cmd: stop(command.Sell, "0.5", "38000", "37000"), view: view,
			pass: map[string]string{"price_collar": "limit_price 37000 is 2.63% from stop 38000 (collar 10%)",
				"order_notional": "0.5 × limit_price 37000 = 18500 ≤", "stop_side": "sell stop_price 38000 must be below"}},
		{name: "a stop_limit's limit outside the collar", cmd: stop(command.Sell, "0.5", "38000", "30000"), view: view,
			fail: map[string]string{"price_collar": "limit_price 30000 is 21.05% from stop 38000 (collar 10%)"}},
		{name: "a stop_limit valued at its limit", cmd: stop(command.Buy, "0.5", "41000", "52000"), view: fakeView{marks: view.marks},
			fail: map[string]string{"order_notional": "0.5 × limit_price 52000 = 26000 exceeds", "price_collar": "limit_price 52000 is 26.83% from stop 41000"}},
		{name: "a stop_limit's limit decimals", cmd: stop(command.Buy, "0.1", "41000", "41000.005"), view: view,
			fail: map[string]string{"precision": "limit_price 41000.005 has 3 decimals"}},
		{name: "a trailing stop by amount", cmd: trail(command.Sell, "0.5", "1000", ""), view: view,
			pass: map[string]string{"stop_side": "sell first stop 39000 must be below mark 40000", "order_notional": "0.5 × first stop 39000 = 19500 ≤"}},
		{name: "a trailing stop by percent", cmd: trail(command.Buy, "0.1", "", "2.5"), view: view,
			pass: map[string]string{"stop_side": "buy first stop 41000 must be above mark 40000", "order_notional": "0.1 × first stop 41000 = 4100"}},
		{name: "a trailing stop's trail beyond the mark", cmd: trail(command.Sell, "0.5", "40000", ""), view: view,
			fail: map[string]string{"stop_side": "trail_amount 40000 is not below mark 40000: the stop would start at 0"}},
		{name: "a trailing stop with no mark", cmd: trail(command.Sell, "0.5", "100", ""), view: nil,
			fail: map[string]string{"stop_side": "no mark", "order_notional": "cannot value a trailing_stop order", "position_notional": "cannot value"}},
		{name: "a trailing stop's amount decimals", cmd: trail(command.Sell, "0.5", "100.125", ""), view: view,
			fail: map[string]string{"precision": "trail_amount 100.125 has 3 decimals"}},
		{name: "trading state", cmd: command.Command{Verb: command.SetTradingState, State: command.Halted}, view: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := g.Check(tt.cmd, tt.view)
			if rep.OK != (len(tt.fail) == 0) {
				t.Errorf("OK = %v; report: %s", rep.OK, rep.Summary())
			}
			seen := map[string]Check{}
			for _, c := range rep.Checks {
				seen[c.Name] = c
				if _, want := tt.fail[c.Name]; !want && !c.OK {
					t.Errorf("check %s failed unexpectedly: %s", c.Name, c.Detail)
				}
			}
			for name, frag := range tt.fail {
				c, ok := seen[name]
				if !ok || c.OK || !strings.Contains(c.Detail, frag) {
					t.Errorf("check %s = %+v, want a failure containing %q", name, c, frag)
				}
			}
			for name, frag := range tt.pass {
				if c := seen[name]; !strings.Contains(c.Detail, frag) {
					t.Errorf("check %s detail = %q, want %q", name, c.Detail, frag)
				}
			}
		})
	}
}

// stop is a stop order, or a stop_limit when limit is given.
func stop(side command.Side, qty, stopPrice, limit string) command.Command {
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: side, Type: command.Stop, Quantity: testkit.D(qty), StopPrice: testkit.D(stopPrice)}
	if limit != "" {
		c.Type, c.LimitPrice = command.StopLimit, testkit.D(limit)
	}
	return c
}

// trail is a trailing stop by amount, or by percent when amount is "".
func trail(side command.Side, qty, amount, percent string) command.Command {
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: side, Type: command.TrailingStop, Quantity: testkit.D(qty)}
	if amount != "" {
		c.TrailAmount = testkit.D(amount)
	} else {
		c.TrailPercent = testkit.D(percent)
	}
	return c
}

func TestOCOChecksEachLeg(t *testing.T) {
	g := New(config())
	oco := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Sell, Type: command.OCO,
		Quantity: testkit.D("0.5"), Price: testkit.D("42000"), StopPrice: testkit.D("38000"), LimitPrice: testkit.D("37900")}
	rep := g.Check(oco, view)
	if !rep.OK {
		t.Fatalf("a good oco: %s", rep.Summary())
	}
	var got []string
	for _, c := range rep.Checks {
		got = append(got, c.Leg+"/"+c.Name)
	}
	want := "/venue /symbol limit/quantity limit/precision limit/price_collar limit/order_notional limit/position_notional limit/limit_side " +
		"stop/quantity stop/precision stop/price_collar stop/stop_side stop/order_notional stop/position_notional /legs"
	if strings.Join(got, " ") != want {
		t.Errorf("checks %s\nwant   %s", strings.Join(got, " "), want)
	}
	for _, tc := range []struct {
		set  func(*command.Command)
		want string
	}{
		{func(c *command.Command) { c.Price = testkit.D("39000") }, "limit leg limit_side: sell limit 39000 must be above mark 40000"},
		{func(c *command.Command) { c.StopPrice = testkit.D("41000"); c.LimitPrice = testkit.D("40900") }, "stop leg stop_side: sell stop_price 41000 must be below mark 40000"},
		{func(c *command.Command) { c.Price = testkit.D("45000") }, "limit leg price_collar: limit 45000 is 12.50% from mark 40000"},
		{func(c *command.Command) { c.LimitPrice = testkit.D("30000") }, "stop leg price_collar: limit_price 30000 is 21.05% from stop 38000"},
		{func(c *command.Command) { c.Quantity = testkit.D("0.6"); c.Price = testkit.D("43000") }, "limit leg order_notional: 0.6 × limit 43000 = 25800 exceeds"},
	} {
		c := oco
		tc.set(&c)
		if rep := g.Check(c, view); rep.OK || !strings.Contains(rep.Summary(), tc.want) {
			t.Errorf("%s: %s, want a failure with %q", c, rep.Summary(), tc.want)
		}
	}
}

func TestAt(t *testing.T) {
	mark := testkit.D("40000")
	for _, tc := range []struct {
		c    command.Command
		at   string
		what string
	}{
		{submit(command.Buy, command.Limit, "1", "39000"), "39000", "limit"},
		{submit(command.Buy, command.Market, "1", ""), "40000", "mark"},
		{stop(command.Buy, "1", "41000", ""), "41000", "stop"},
		{stop(command.Buy, "1", "41000", "41200"), "41200", "limit_price"},
		{trail(command.Buy, "1", "", "2.5"), "41000", "first stop"},
		{command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy, Type: command.OCO,
			Quantity: testkit.D("1"), Price: testkit.D("38000"), StopPrice: testkit.D("42000")}, "42000", "stop"},
	} {
		at, what, ok := At(tc.c, mark, true)
		if !ok || !at.Equal(testkit.D(tc.at)) || what != tc.what {
			t.Errorf("At(%s) = %s %s %v, want %s %s", tc.c, at, what, ok, tc.at, tc.what)
		}
	}
	if _, _, ok := At(trail(command.Sell, "1", "5", ""), decimal.Decimal{}, false); ok {
		t.Error("a trailing stop was valued without a mark")
	}
}

func TestPlaces(t *testing.T) {
	for in, want := range map[string]int32{"1": 0, "100": 0, "1.50": 1, "0.000001": 6, "1.0000000": 0, "-2.25": 2, "0": 0} {
		if got := places(testkit.D(in)); got != want {
			t.Errorf("places(%s) = %d, want %d", in, got, want)
		}
	}
}

func with(c command.Command, f func(*command.Command)) command.Command { f(&c); return c }

// TestBracketChecksEachLeg: a bracket's entry is checked as an order, its
// exits against the position the entry leaves and on the protecting side
// of the entry's price (not the mark), each check naming its leg.
func TestBracketChecksEachLeg(t *testing.T) {
	g := New(config())
	br := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy, Type: command.Bracket,
		Quantity: testkit.D("0.2"), Price: testkit.D("39000"), TakeProfit: testkit.D("39800"), StopPrice: testkit.D("38000")}
	rep := g.Check(br, view)
	if !rep.OK {
		t.Fatalf("a good bracket: %s", rep.Summary())
	}
	var got []string
	for _, c := range rep.Checks {
		got = append(got, c.Leg+"/"+c.Name)
	}
	want := "/venue /symbol entry/quantity entry/precision entry/price_collar entry/order_notional entry/position_notional " +
		"take_profit/quantity take_profit/precision take_profit/price_collar take_profit/order_notional take_profit/position_notional take_profit/limit_side " +
		"stop_loss/quantity stop_loss/precision stop_loss/price_collar stop_loss/stop_side stop_loss/order_notional stop_loss/position_notional /legs"
	if strings.Join(got, " ") != want {
		t.Errorf("checks %s\nwant   %s", strings.Join(got, " "), want)
	}
	for _, ch := range rep.Checks {
		if ch.Leg == command.LegTakeProfit && ch.Name == "position_notional" && !strings.Contains(ch.Detail, "position 1.2 → 1 BTC-USD: reduces it") {
			t.Errorf("take-profit position check: %s (want it against the position after the entry)", ch.Detail)
		}
	}
	for _, tc := range []struct {
		set  func(*command.Command)
		want string
	}{
		// 39800 is below the mark but above the entry: a good take-profit; at 38900 it is below the entry.
		{func(c *command.Command) { c.TakeProfit = testkit.D("38900") }, "take_profit leg limit_side: sell limit 38900 must be above entry price 39000"},
		{func(c *command.Command) { c.StopPrice = testkit.D("39100") }, "stop_loss leg stop_side: sell stop_price 39100 must be below entry price 39000"},
		// a market entry opens at the mark
		{func(c *command.Command) { c.Price = decimal.Decimal{}; c.TakeProfit = testkit.D("39900") }, "take_profit leg limit_side: sell limit 39900 must be above mark 40000"},
		// a marketable limit entry fills at the mark
		{func(c *command.Command) { c.Price = testkit.D("40500"); c.StopPrice = testkit.D("40200") }, "stop_loss leg stop_side: sell stop_price 40200 must be below entry price 40000"},
		{func(c *command.Command) { c.Quantity = testkit.D("0.7") }, "entry leg order_notional: 0.7 × limit 39000 = 27300 exceeds"},
	} {
		c := br
		tc.set(&c)
		if rep := g.Check(c, view); rep.OK || !strings.Contains(rep.Summary(), tc.want) {
			t.Errorf("%s: %s, want a failure with %q", c, rep.Summary(), tc.want)
		}
	}
	if at, what, ok := At(br, testkit.D("40000"), true); !ok || !at.Equal(testkit.D("39000")) || what != "limit" {
		t.Errorf("At(bracket) = %s %s %v, want the entry's limit 39000", at, what, ok)
	}
}
