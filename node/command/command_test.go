package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
)

func TestDecodeValid(t *testing.T) {
	tests := []struct {
		verb, args string
		want       Command
	}{
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"0.5","price":"41000"}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Buy, Type: Limit, Quantity: testkit.D("0.5"), Price: testkit.D("41000"), TimeInForce: GTC}},
		{"submit_order", `{"venue":"paper","symbol":"ETH-USD","side":"sell","type":"market","quantity":1.25}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "ETH-USD", Side: Sell, Type: Market, Quantity: testkit.D("1.25"), TimeInForce: IOC}},
		{"submit_order", `{"venue":"paper","symbol":"SPY","side":"buy","type":"limit","quantity":"3","price":"0.10000000000000000555","time_in_force":"ioc","client_order_id":"mine-1"}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "SPY", Side: Buy, Type: Limit, Quantity: testkit.D("3"), Price: testkit.D("0.10000000000000000555"), TimeInForce: IOC, ClientOrderID: "mine-1"}},
		{"submit_order", `{"venue":"paper","symbol":"SPY","side":"buy","type":"market","quantity":"1","price":null,"client_order_id":""}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "SPY", Side: Buy, Type: Market, Quantity: testkit.D("1"), TimeInForce: IOC}},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop","quantity":"0.5","stop_price":"39000.5"}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Sell, Type: Stop, Quantity: testkit.D("0.5"), StopPrice: testkit.D("39000.5"), TimeInForce: GTC}},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"stop_limit","quantity":"1","stop_price":41000,"limit_price":"41100","time_in_force":"gtc"}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Buy, Type: StopLimit, Quantity: testkit.D("1"), StopPrice: testkit.D("41000"), LimitPrice: testkit.D("41100"), TimeInForce: GTC}},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"trailing_stop","quantity":"1","trail_amount":"250"}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Sell, Type: TrailingStop, Quantity: testkit.D("1"), TrailAmount: testkit.D("250"), TimeInForce: GTC}},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"trailing_stop","quantity":"1","trail_percent":"2.5","trail_amount":null}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Buy, Type: TrailingStop, Quantity: testkit.D("1"), TrailPercent: testkit.D("2.5"), TimeInForce: GTC}},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"oco","quantity":"1","price":"44000","stop_price":"38000"}`,
			Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Sell, Type: OCO, Quantity: testkit.D("1"), Price: testkit.D("44000"), StopPrice: testkit.D("38000"), TimeInForce: GTC}},
		{"cancel_order", `{"venue":"paper","order_id":"ord-00000001"}`,
			Command{Verb: CancelOrder, Venue: "paper", OrderID: "ord-00000001"}},
		{"cancel_order", `{"venue":"paper","client_order_id":"wk-1"}`,
			Command{Verb: CancelOrder, Venue: "paper", ClientOrderID: "wk-1"}},
		{"modify", `{"venue":"paper","order_id":"ord-1","price":"40000.5"}`,
			Command{Verb: Modify, Venue: "paper", OrderID: "ord-1", Price: testkit.D("40000.5")}},
		{"flatten", `{"venue":"paper"}`, Command{Verb: Flatten, Venue: "paper"}},
		{"flatten", `{"venue":"paper","symbol":"BTC-USD"}`, Command{Verb: Flatten, Venue: "paper", Symbol: "BTC-USD"}},
		{"market_exit", `{}`, Command{Verb: MarketExit}},
		{"market_exit", ``, Command{Verb: MarketExit}},
		{"market_exit", `null`, Command{Verb: MarketExit}},
		{"mass_cancel", `{"venue":"paper","side":"sell"}`, Command{Verb: MassCancel, Venue: "paper", Side: Sell}},
		{"set_trading_state", ` {"state":"reduce_only"} `, Command{Verb: SetTradingState, State: ReduceOnly}},
	}
	for _, tt := range tests {
		t.Run(tt.verb+" "+tt.args, func(t *testing.T) {
			got, _, err := DecodeWith(tt.verb, json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(decimal.Decimal.Equal)); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeInvalid(t *testing.T) {
	tests := []struct {
		verb, args string
		kind       Kind
		field      string
		text       string // must appear in the message
	}{
		{"submit", `{}`, KindUnknownVerb, "verb", "valid: submit_order, cancel_order, modify, flatten, market_exit, mass_cancel, set_trading_state"},
		{"submit_order", `[1]`, KindMalformed, "", "got an array"},
		{"submit_order", `{"venue":"paper"`, KindMalformed, "", "one JSON object"},
		{"submit_order", `{"venue":"paper"} {}`, KindMalformed, "", "trailing data"},
		{"submit_order", `{"venue":"paper","venue":"other"}`, KindMalformed, "venue", "twice"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","qty":"1"}`, KindUnknownField, "qty",
			"valid fields: venue, symbol, side, type, quantity, price, stop_price, limit_price, trail_amount, trail_percent, take_profit, time_in_force, client_order_id"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market"}`, KindMissingField, "quantity", "is required"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0"}`, KindInvalidValue, "quantity", "must be positive"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"-1"}`, KindInvalidValue, "quantity", "must be positive"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":-0.5}`, KindInvalidValue, "quantity", "must be positive"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"1e3"}`, KindInvalidValue, "quantity", "plain decimal"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":1e3}`, KindInvalidValue, "quantity", "plain decimal"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"NaN"}`, KindInvalidValue, "quantity", "plain decimal"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":true}`, KindInvalidValue, "quantity", "got a boolean"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"1` + strings.Repeat("0", 50) + `"}`, KindInvalidValue, "quantity", "longer than"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"BUY","type":"market","quantity":"1"}`, KindInvalidValue, "side", "not one of buy, sell"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":1,"type":"market","quantity":"1"}`, KindInvalidValue, "side", "must be a string"},
		{"submit_order", `{"venue":"../etc","symbol":"BTC-USD","side":"buy","type":"market","quantity":"1"}`, KindInvalidValue, "venue", "is not valid"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"1"}`, KindMissingField, "price", "needs a price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"1","price":"5"}`, KindConflict, "price", "takes no price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"1","time_in_force":"gtc"}`, KindConflict, "time_in_force", "use ioc"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop","quantity":"1"}`, KindMissingField, "stop_price", "a stop order needs a stop_price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop","quantity":"1","price":"5"}`, KindConflict, "price", "a stop order takes no price (a stop fills at the market"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop","quantity":"1","stop_price":"5","limit_price":"4"}`, KindConflict, "limit_price", "use stop_limit"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop","quantity":"1","stop_price":"0"}`, KindInvalidValue, "stop_price", "must be positive"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop","quantity":"1","stop_price":"5e2"}`, KindInvalidValue, "stop_price", "plain decimal"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop","quantity":"1","stop_price":"5","time_in_force":"ioc"}`, KindConflict, "time_in_force", "rests until a price trades"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop_limit","quantity":"1","stop_price":"5"}`, KindMissingField, "limit_price", "a stop_limit order needs a limit_price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop_limit","quantity":"1","limit_price":"5"}`, KindMissingField, "stop_price", "needs a stop_price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"stop_limit","quantity":"1","stop_price":"5","price":"4"}`, KindConflict, "price", "takes stop_price and limit_price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"limit","quantity":"1","price":"5","stop_price":"4"}`, KindConflict, "stop_price", "a limit order takes no stop_price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"limit","quantity":"1","limit_price":"5"}`, KindConflict, "limit_price", "a limit order takes no limit_price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"1","trail_amount":"5"}`, KindConflict, "trail_amount", "a market order takes no trail_amount"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"trailing_stop","quantity":"1"}`, KindMissingField, "trail_amount", "needs trail_amount or trail_percent"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"trailing_stop","quantity":"1","trail_amount":"5","trail_percent":"1"}`, KindConflict, "trail_percent", "not both"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"trailing_stop","quantity":"1","stop_price":"5","trail_amount":"5"}`, KindConflict, "stop_price", "exactly one of trail_amount or trail_percent"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"trailing_stop","quantity":"1","trail_percent":"100"}`, KindInvalidValue, "trail_percent", "below 100"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"trailing_stop","quantity":"1","trail_percent":-1}`, KindInvalidValue, "trail_percent", "must be positive"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"take_profit","quantity":"1"}`, KindInvalidValue, "type", "market, limit, stop, stop_limit, trailing_stop"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"oco","quantity":"1","price":"5"}`, KindMissingField, "stop_price", "an oco order needs a stop_price"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"oco","quantity":"1","stop_price":"5"}`, KindMissingField, "price", "an oco takes price for its limit leg"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"oco","quantity":"1","price":"6","stop_price":"5","trail_amount":"1"}`, KindConflict, "trail_amount", "an oco order takes no trail_amount"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"oco","quantity":"1","price":"6","stop_price":"5","time_in_force":"ioc"}`, KindConflict, "time_in_force", "use gtc"},
		{"submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"oco","quantity":"1","price":"6","stop_price":"5","client_order_id":"` + strings.Repeat("a", 60) + `"}`, KindInvalidValue, "client_order_id", "give at most 59"},
		{"cancel_order", `{"venue":"paper","stop_price":"5","order_id":"a"}`, KindUnknownField, "stop_price", "valid fields: venue, order_id, client_order_id"},
		{"cancel_order", `{"venue":"paper"}`, KindConflict, "order_id", "exactly one"},
		{"cancel_order", `{"venue":"paper","order_id":"a","client_order_id":"b"}`, KindConflict, "order_id", "exactly one"},
		{"modify", `{"venue":"paper","order_id":"a"}`, KindMissingField, "quantity", "must change something"},
		{"flatten", `{"symbol":"BTC-USD"}`, KindMissingField, "venue", "is required"},
		{"set_trading_state", `{"state":"paused"}`, KindInvalidValue, "state", "active, reduce_only, halted"},
		{"set_trading_state", `{"state":"halted","reason":"x"}`, KindUnknownField, "reason", "valid fields: state"},
	}
	for _, tt := range tests {
		t.Run(tt.verb+" "+tt.args, func(t *testing.T) {
			_, _, err := DecodeWith(tt.verb, json.RawMessage(tt.args))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode = %v, want *Error", err)
			}
			if e.Kind != tt.kind || e.Field != tt.field {
				t.Errorf("kind, field = %s, %q; want %s, %q (%v)", e.Kind, e.Field, tt.kind, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q does not contain %q", err, tt.text)
			}
		})
	}
}

func TestDecodeWithSetsAsideExtras(t *testing.T) {
	raw := `{"state":"halted","reason":"drill","confirm":true,"preview_token":"pt-1"}`
	c, extra, err := DecodeWith("set_trading_state", json.RawMessage(raw), "reason", "confirm", "preview_token")
	if err != nil {
		t.Fatal(err)
	}
	if c.State != Halted {
		t.Errorf("state = %q", c.State)
	}
	want := map[string]string{"reason": `"drill"`, "confirm": "true", "preview_token": `"pt-1"`}
	for k, v := range want {
		if string(extra[k]) != v {
			t.Errorf("extra[%s] = %s, want %s", k, extra[k], v)
		}
	}
	_, _, err = DecodeWith("set_trading_state", json.RawMessage(`{"state":"halted","bogus":1}`), "reason", "confirm", "preview_token")
	if err == nil || !strings.Contains(err.Error(), "valid fields: state, reason, confirm, preview_token") {
		t.Errorf("unknown-field error = %v, want the extras listed", err)
	}
}

// TestBracketLegs: a bracket is three legs — the entry (a limit at price,
// a market order without one) with the command's client order id, and two
// exits on the other side of the entry's quantity with derived ids — and
// its id leaves room for the longest suffix.
func TestBracketLegs(t *testing.T) {
	c := Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Buy, Type: Bracket, Quantity: testkit.D("2"),
		Price: testkit.D("40000"), TakeProfit: testkit.D("44000"), StopPrice: testkit.D("38000"), TimeInForce: GTC, ClientOrderID: "wk-b"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []Leg{
		{Name: LegEntry, Command: Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Buy, Type: Limit, Quantity: testkit.D("2"), Price: testkit.D("40000"), TimeInForce: GTC, ClientOrderID: "wk-b"}},
		{Name: LegTakeProfit, Exit: true, Command: Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Sell, Type: Limit, Quantity: testkit.D("2"), Price: testkit.D("44000"), TimeInForce: GTC, ClientOrderID: "wk-b-tp"}},
		{Name: LegStopLoss, Exit: true, Command: Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Sell, Type: Stop, Quantity: testkit.D("2"), StopPrice: testkit.D("38000"), TimeInForce: GTC, ClientOrderID: "wk-b-stop"}},
	}
	if diff := cmp.Diff(want, c.Legs(), cmp.Comparer(decimal.Decimal.Equal)); diff != "" {
		t.Errorf("legs (-want +got):\n%s", diff)
	}
	market := c
	market.Price, market.LimitPrice = decimal.Decimal{}, testkit.D("37900")
	legs := market.Legs()
	if legs[0].Command.Type != Market || legs[0].Command.TIF() != IOC || legs[2].Command.Type != StopLimit || !legs[2].Command.LimitPrice.Equal(testkit.D("37900")) {
		t.Errorf("market bracket legs: %+v", legs)
	}
	for _, l := range append(legs, c.Legs()...) {
		if err := l.Command.Validate(); err != nil {
			t.Errorf("leg %s does not validate: %v", l.Name, err)
		}
	}
	for _, args := range []struct{ json, want string }{
		{`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"1","stop_price":"38000"}`, "a bracket order needs a take_profit"},
		{`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"1","take_profit":"44000","stop_price":"38000","trail_amount":"5"}`, "a bracket order takes no trail_amount"},
		{`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"1","take_profit":"44000","stop_price":"38000","time_in_force":"ioc"}`, "a bracket order rests"},
		{`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"1","price":"1","take_profit":"44000"}`, "a limit order takes no take_profit"},
		{`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"1","take_profit":"44000","stop_price":"38000","client_order_id":"` + strings.Repeat("x", 60) + `"}`, "at most 59"},
	} {
		if _, _, err := DecodeWith("submit_order", json.RawMessage(args.json)); err == nil || !strings.Contains(err.Error(), args.want) {
			t.Errorf("%s: err %v, want %q", args.json, err, args.want)
		}
	}
	ok := `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"1","take_profit":"44000","stop_price":"38000","client_order_id":"` + strings.Repeat("x", 59) + `"}`
	if _, _, err := DecodeWith("submit_order", json.RawMessage(ok)); err != nil {
		t.Errorf("59 characters: %v", err)
	}
}

func TestOCOLegs(t *testing.T) {
	c := Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Sell, Type: OCO, Quantity: testkit.D("2"),
		Price: testkit.D("44000"), StopPrice: testkit.D("38000"), LimitPrice: testkit.D("37900"), TimeInForce: GTC, ClientOrderID: "wk-x"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	legs := c.Legs()
	want := []Leg{
		{Name: "limit", Command: Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Sell, Type: Limit, Quantity: testkit.D("2"), Price: testkit.D("44000"), TimeInForce: GTC, ClientOrderID: "wk-x"}},
		{Name: "stop", Command: Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Sell, Type: StopLimit, Quantity: testkit.D("2"), StopPrice: testkit.D("38000"), LimitPrice: testkit.D("37900"), TimeInForce: GTC, ClientOrderID: "wk-x-stop"}},
	}
	if diff := cmp.Diff(want, legs, cmp.Comparer(decimal.Decimal.Equal)); diff != "" {
		t.Errorf("legs (-want +got):\n%s", diff)
	}
	for _, l := range legs {
		if err := l.Command.Validate(); err != nil {
			t.Errorf("leg %s does not validate: %v", l.Name, err)
		}
	}
	plain := Command{Verb: SubmitOrder, Type: Market}
	if l := plain.Legs(); len(l) != 1 || l[0].Name != "order" || l[0].Command.Type != Market {
		t.Errorf("a simple order's legs = %+v", l)
	}
}

func TestBuildMatchesDecode(t *testing.T) {
	built, err := Build("submit_order", map[string]string{
		"venue": "paper", "symbol": "BTC-USD", "side": "sell", "type": "limit", "quantity": "0.50", "price": "41000", "client_order_id": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	decoded, _, err := DecodeWith("submit_order", json.RawMessage(`{"venue":"paper","symbol":"BTC-USD","side":"sell","type":"limit","quantity":0.5,"price":"41000.00"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := built.SameIntent(decoded); err != nil {
		t.Errorf("Build and Decode differ: %v", err)
	}
	if _, err := Build("submit_order", map[string]string{"venue": "paper", "quantity": "x"}); err == nil {
		t.Error("Build accepted a bad quantity")
	}
}

func TestValidateGoBuiltCommand(t *testing.T) {
	bad := []Command{
		{Verb: "nope"},
		{Verb: SetTradingState, State: Halted, Venue: "paper"},
		{Verb: SubmitOrder, Venue: "paper", Symbol: "X", Side: Buy, Type: Market, Quantity: testkit.D("-1")},
		{Verb: SubmitOrder, Venue: "paper", Symbol: "X", Side: "up", Type: Market, Quantity: testkit.D("1")},
		{Verb: Flatten},
		{Verb: SubmitOrder, Venue: "paper", Symbol: "X", Side: Sell, Type: Stop, Quantity: testkit.D("1"), StopPrice: testkit.D("-5")},
		{Verb: SubmitOrder, Venue: "paper", Symbol: "X", Side: Sell, Type: Stop, Quantity: testkit.D("1")},
		{Verb: SubmitOrder, Venue: "paper", Symbol: "X", Side: Sell, Type: TrailingStop, Quantity: testkit.D("1"), TrailAmount: testkit.D("1"), TrailPercent: testkit.D("1")},
		{Verb: CancelOrder, Venue: "paper", OrderID: "a", LimitPrice: testkit.D("1")},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
	good := Command{Verb: SubmitOrder, Venue: "paper", Symbol: "X", Side: Buy, Type: Market, Quantity: testkit.D("1")}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate(good) = %v", err)
	}
}

func TestResolveMints(t *testing.T) {
	n := 0
	ids := func() string { n++; return fmt.Sprintf("id-%d", n) }
	sub := Command{Verb: SubmitOrder, Venue: "paper", Symbol: "X", Side: Buy, Type: Market, Quantity: testkit.D("1")}
	got := sub.Resolve(ids)
	if got.ClientOrderID != "wk-id-1" {
		t.Errorf("minted %q, want wk-id-1", got.ClientOrderID)
	}
	if sub.ClientOrderID != "" {
		t.Error("Resolve changed its receiver")
	}
	kept := Command{Verb: SubmitOrder, ClientOrderID: "mine"}.Resolve(ids)
	if kept.ClientOrderID != "mine" || n != 1 {
		t.Errorf("Resolve replaced a given id: %q (mints %d)", kept.ClientOrderID, n)
	}
	if c := (Command{Verb: Flatten, Venue: "paper"}).Resolve(ids); c.ClientOrderID != "" || n != 1 {
		t.Errorf("Resolve minted for flatten: %q", c.ClientOrderID)
	}
}

func TestNewIDIsUUIDv7(t *testing.T) {
	c := Command{Verb: SubmitOrder}.Resolve(NewID)
	if !strings.HasPrefix(c.ClientOrderID, "wk-") || len(c.ClientOrderID) != 39 || c.ClientOrderID[3+14] != '7' {
		t.Errorf("minted %q, want wk- and a UUIDv7", c.ClientOrderID)
	}
	if err := (Command{Verb: CancelOrder, Venue: "paper", ClientOrderID: c.ClientOrderID}).Validate(); err != nil {
		t.Errorf("a minted id does not validate: %v", err)
	}
}

func TestSameIntent(t *testing.T) {
	previewed := Command{Verb: SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: Buy, Type: Limit,
		Quantity: testkit.D("1.0"), Price: testkit.D("41000"), TimeInForce: GTC, ClientOrderID: "wk-a"}
	tests := []struct {
		name       string
		confirming Command
		diffs      []Diff
	}{
		{"identical", previewed, nil},
		{"omitted client order id", with(previewed, func(c *Command) { c.ClientOrderID = "" }), nil},
		{"decimals by value", with(previewed, func(c *Command) { c.Quantity = testkit.D("1"); c.Price = testkit.D("41000.000") }), nil},
		{"default time in force", with(previewed, func(c *Command) { c.TimeInForce = "" }), nil},
		{"other client order id", with(previewed, func(c *Command) { c.ClientOrderID = "wk-b" }),
			[]Diff{{"client_order_id", "wk-a", "wk-b"}}},
		{"two fields", with(previewed, func(c *Command) { c.Quantity = testkit.D("2"); c.Side = Sell }),
			[]Diff{{"side", "buy", "sell"}, {"quantity", "1", "2"}}},
		{"price dropped", with(previewed, func(c *Command) { c.Type = Market; c.Price = decimal.Decimal{}; c.TimeInForce = "" }),
			[]Diff{{"type", "limit", "market"}, {"price", "41000", ""}, {"time_in_force", "gtc", "ioc"}}},
		{"stop price set", with(previewed, func(c *Command) { c.Type = Stop; c.Price = decimal.Decimal{}; c.StopPrice = testkit.D("40000") }),
			[]Diff{{"type", "limit", "stop"}, {"price", "41000", ""}, {"stop_price", "", "40000"}}},
		{"other verb", Command{Verb: CancelOrder, Venue: "paper", ClientOrderID: "wk-a"},
			[]Diff{{"verb", "submit_order", "cancel_order"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := previewed.SameIntent(tt.confirming)
			if tt.diffs == nil {
				if err != nil {
					t.Fatalf("SameIntent = %v, want nil", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindMismatch {
				t.Fatalf("SameIntent = %v, want a Mismatch", err)
			}
			if diff := cmp.Diff(tt.diffs, e.Diffs); diff != "" {
				t.Errorf("diffs (-want +got):\n%s", diff)
			}
			for _, d := range tt.diffs {
				if !strings.Contains(err.Error(), d.Field+" previewed") {
					t.Errorf("message %q does not name %s", err, d.Field)
				}
			}
		})
	}
}

func with(c Command, f func(*Command)) Command { f(&c); return c }

func TestJSONIsDeterministicAndRoundTrips(t *testing.T) {
	c, _, err := DecodeWith("submit_order", json.RawMessage(`{"price":"41000.50","client_order_id":"wk-x","quantity":0.50,"type":"limit","side":"buy","symbol":"BTC-USD","venue":"paper"}`))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"verb":"submit_order","venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"0.5","price":"41000.5","time_in_force":"gtc","client_order_id":"wk-x"}`
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", b, want)
	}
	var back Command
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := c.SameIntent(back); err != nil || back.ClientOrderID != "wk-x" {
		t.Errorf("round trip changed the command: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"venue":"paper"}`), &back); err == nil || !strings.Contains(err.Error(), "verb: is required") {
		t.Errorf("Unmarshal without verb = %v", err)
	}
}

func TestEnvelope(t *testing.T) {
	c := Command{Verb: SetTradingState, State: Halted}
	e := NewEnvelope(c, "  incident\n#42\x00\u202e ")
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"command":{"verb":"set_trading_state","state":"halted"},"reason":"incident #42"}`
	if string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
	var back Envelope
	if err := json.Unmarshal(b, &back); err != nil || back.Reason != "incident #42" || back.Command.State != Halted {
		t.Errorf("Unmarshal = %+v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"command":{"verb":"market_exit"},"confirm":true}`), &back); err == nil || !strings.Contains(err.Error(), "valid fields: command, reason") {
		t.Errorf("unknown envelope key = %v", err)
	}
	if err := json.Unmarshal([]byte(`{"reason":"x"}`), &back); err == nil {
		t.Error("an envelope without a command was accepted")
	}
}

func TestSanitizeReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"line\nbreak\ttab", "line break tab"},
		{"bell\a esc\x1b[31m del\x7f c1\u0085", "bell esc[31m del c1"},
		{"bidi \u202eevil\u2066", "bidi evil"},
		{"bad \xff utf8", "bad  utf8"},
		{"  trim  ", "trim"},
		{"naïve ünïcode ✓", "naïve ünïcode ✓"},
	}
	for _, tt := range tests {
		if got := SanitizeReason(tt.in); got != tt.want {
			t.Errorf("SanitizeReason(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := SanitizeReason(strings.Repeat("é", 600))
	if n := utf8.RuneCountInString(long); n != MaxReasonRunes {
		t.Errorf("long reason kept %d characters, want %d", n, MaxReasonRunes)
	}
}

func TestSpecsIsACopy(t *testing.T) {
	s := Specs()
	s[0].Fields[0].Name = "changed"
	s[0].Fields[2].Choices[0] = "changed"
	if f := Specs()[0].Fields; f[0].Name != "venue" || f[2].Choices[0] != "buy" {
		t.Error("Specs exposes the table itself")
	}
	if len(Verbs()) != 7 {
		t.Errorf("Verbs() = %v, want the 7 verbs", Verbs())
	}
	for _, sp := range Specs() {
		for _, f := range sp.Fields {
			if f.Description == "" || strings.Contains(f.Description, "\n") {
				t.Errorf("%s.%s needs a one-line description", sp.Verb, f.Name)
			}
			if (f.Kind == Enum) != (len(f.Choices) > 0) {
				t.Errorf("%s.%s: choices only and always for enums", sp.Verb, f.Name)
			}
		}
	}
}
