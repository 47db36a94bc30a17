package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

func TestTradingStates(t *testing.T) {
	srv := nodetest.NewServer(t, replay(map[string][]decimal.Decimal{"BTC-USD": ds("100", "100", "89", "111")}))
	c := srv.Client()
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "10", ""))
	bid := accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Limit, "1", "90"))

	// reduce_only: nothing that increases the position.
	accepted(t, c, command.Command{Verb: command.SetTradingState, State: command.ReduceOnly})
	rejected(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "1", ""), "reduce_only")
	rejected(t, c, order("paper", "ETH-USD", command.Sell, command.Market, "1", ""), "reduce_only")  // opens a short
	rejected(t, c, order("paper", "BTC-USD", command.Sell, command.Market, "11", ""), "reduce_only") // flips
	ask := accepted(t, c, order("paper", "BTC-USD", command.Sell, command.Limit, "6", "110"))
	rejected(t, c, order("paper", "BTC-USD", command.Sell, command.Limit, "5", "110"), "reduce_only") // 6 + 5 working > 10
	rejected(t, c, command.Command{Verb: command.Modify, Venue: "paper", OrderID: ask.OrderID, Quantity: testkit.D("11")}, "reduce_only")
	accepted(t, c, command.Command{Verb: command.Modify, Venue: "paper", OrderID: ask.OrderID, Quantity: testkit.D("7")})
	// The resting bid would increase the position: the mark reaching it in
	// reduce_only does not fill it.
	srv.Tick(t, 2)
	if openOrder(t, c, bid.OrderID) == nil {
		t.Fatal("a position-increasing resting order filled in reduce_only")
	}

	// halted: only cancels and set_trading_state.
	accepted(t, c, command.Command{Verb: command.SetTradingState, State: command.Halted})
	for _, cmd := range []command.Command{
		order("paper", "BTC-USD", command.Sell, command.Market, "1", ""),
		{Verb: command.Modify, Venue: "paper", OrderID: ask.OrderID, Price: testkit.D("105")},
		{Verb: command.Flatten, Venue: "paper"},
		{Verb: command.MarketExit},
	} {
		out := rejected(t, c, cmd, "halted")
		if !strings.Contains(out.Reason, "set the trading state to reduce_only or active") {
			t.Errorf("halted reason does not say what to do: %s", out.Reason)
		}
	}
	// The mark reaching the reducing ask while halted does not fill it either.
	srv.Tick(t, 1)
	if openOrder(t, c, ask.OrderID) == nil {
		t.Fatal("a resting order filled while halted")
	}
	accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: bid.OrderID})
	accepted(t, c, command.Command{Verb: command.MassCancel, Venue: "paper"})
	accepted(t, c, command.Command{Verb: command.SetTradingState, State: command.Active})
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "1", ""))
}

func TestDuplicateClientOrderID(t *testing.T) {
	srv := nodetest.NewServer(t)
	c := srv.Client()
	first := order("paper", "BTC-USD", command.Buy, command.Limit, "1", "95")
	first.ClientOrderID = "retry-me"
	placed := accepted(t, c, first)

	// The retry, even with other fields, is refused and names the order.
	retry := first
	retry.Quantity = testkit.D("2")
	out := rejected(t, c, retry, "duplicate_client_order_id")
	if out.ExistingOrder == nil || out.ExistingOrder.ID != placed.OrderID || !out.ExistingOrder.Quantity.Equal(testkit.D("1")) {
		t.Errorf("existing order = %+v, want %s", out.ExistingOrder, placed.OrderID)
	}
	if !strings.Contains(out.Reason, placed.OrderID) {
		t.Errorf("reason %q does not name the order", out.Reason)
	}
	v, err := c.DryRun(context.Background(), command.NewEnvelope(retry, ""))
	if err != nil || v.WouldAccept || v.Code != "duplicate_client_order_id" || v.ExistingOrder.ID != placed.OrderID {
		t.Errorf("dry-run = %+v, %v", v, err)
	}
	// Still refused once the order is closed, and after a restart.
	accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", ClientOrderID: "retry-me"})
	srv.Restart(t)
	c = srv.Client()
	out = rejected(t, c, retry, "duplicate_client_order_id")
	if out.ExistingOrder.Status != node.OrderCanceled {
		t.Errorf("existing order after restart = %+v", out.ExistingOrder)
	}
	if n := len(venueOf(t, snapshot(t, c), "paper").OpenOrders); n != 0 {
		t.Errorf("%d open orders: the retry placed one", n)
	}
}

// TestNodeLimits sends commands straight to the node, skipping the
// client-side guardrail, and checks the node refuses what the limits
// forbid, saying which limit and by how much.
func TestNodeLimits(t *testing.T) {
	cfg := project.Defaults()
	cfg.Venues = append(cfg.Venues, project.Venue{Name: "small", Kind: "paper", Currency: "USD", Cash: testkit.D("1000"),
		Symbols: []string{"SOL-USD"}, QuantityDecimals: 2, PriceDecimals: 2})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := nodetest.NewServer(t, nodetest.WithConfig(cfg), replay(map[string][]decimal.Decimal{"BTC-USD": ds("1000"), "SOL-USD": ds("10")}))
	c := srv.Client()
	tests := []struct {
		cmd    command.Command
		code   string
		reason string
	}{
		{order("paper", "DOGE-USD", command.Buy, command.Market, "1", ""), "unknown_symbol", "DOGE-USD is not listed on paper"},
		{order("nowhere", "BTC-USD", command.Buy, command.Market, "1", ""), "unknown_venue", `unknown venue "nowhere"`},
		{order("paper", "BTC-USD", command.Buy, command.Market, "26", ""), "max_order_notional", "26 × mark 1000 = 26000 exceeds max_order_notional 25000"},
		{order("paper", "BTC-USD", command.Buy, command.Market, "0.0000001", ""), "precision", "has 7 decimals; paper allows 6"},
		{order("paper", "BTC-USD", command.Buy, command.Limit, "1", "1000.001"), "precision", "price 1000.001 has 3 decimals"},
		{order("paper", "BTC-USD", command.Buy, command.Limit, "1", "1100.01"), "price_collar", "from mark 1000 (collar 10%)"},
		{order("small", "SOL-USD", command.Buy, command.Market, "101", ""), "insufficient_cash", "small holds 1000 cash"},
		{command.Command{Verb: command.Flatten, Venue: "small", Symbol: "BTC-USD"}, "unknown_symbol", "BTC-USD is not listed on small"},
	}
	for _, tt := range tests {
		out := rejected(t, c, tt.cmd, tt.code)
		if !strings.Contains(out.Reason, tt.reason) {
			t.Errorf("%s: reason %q does not contain %q", tt.cmd, out.Reason, tt.reason)
		}
	}
	// A modify is checked as the order it makes: a resting buy whose new
	// limit costs more than the venue's cash is refused.
	rest := accepted(t, c, order("small", "SOL-USD", command.Buy, command.Limit, "99", "9.5"))
	if out := rejected(t, c, command.Command{Verb: command.Modify, Venue: "small", OrderID: rest.OrderID, Price: testkit.D("10.5")}, "insufficient_cash"); !strings.Contains(out.Reason, "buying 99 SOL-USD at 10.5 costs 1039.5") {
		t.Errorf("modify reason = %q", out.Reason)
	}
	accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "small", OrderID: rest.OrderID})

	// Position limit: two orders under the order limit, the second taking
	// the position over 50000.
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "25", ""))
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "24", ""))
	out := rejected(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "2", ""), "max_position_notional")
	if !strings.Contains(out.Reason, "position 49 → 51 BTC-USD; 51 × mark 1000 = 51000 exceeds max_position_notional 50000") {
		t.Errorf("reason = %q", out.Reason)
	}
	// Reducing is always allowed by the position limit; flatten ignores the order limit.
	accepted(t, c, order("paper", "BTC-USD", command.Sell, command.Market, "20", ""))
	accepted(t, c, command.Command{Verb: command.Flatten, Venue: "paper"})

	// A rejected command changed nothing.
	checkBooks(t, snapshot(t, c), "small", testkit.D("1000"))
	if v := venueOf(t, snapshot(t, c), "small"); len(v.Positions) != 0 || !v.Cash.Equal(testkit.D("1000")) {
		t.Errorf("small venue changed: %+v", v)
	}

	// The dry-run shows the same checks with their numbers.
	v, err := c.DryRun(context.Background(), command.NewEnvelope(order("paper", "BTC-USD", command.Buy, command.Market, "26", ""), ""))
	if err != nil {
		t.Fatal(err)
	}
	if v.WouldAccept || v.Code != "max_order_notional" || len(v.Checks) == 0 || !strings.HasPrefix(v.Command.ClientOrderID, "wk-") {
		t.Errorf("dry-run = %+v", v)
	}
}

// TestSnapshotMoneyIsDecimalStrings reads the raw snapshot JSON and checks
// every money, price and quantity field is a JSON string holding a decimal.
func TestSnapshotMoneyIsDecimalStrings(t *testing.T) {
	srv := nodetest.NewServer(t)
	c := srv.Client()
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "1.5", ""))
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Limit, "1", "95"))

	body := signedGet(t, srv, "/v1/snapshot?events=50")
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	money := map[string]bool{
		"cash": true, "equity": true, "unrealized_pnl": true, "realized_pnl": true, "fees": true, "quantity": true,
		"average_price": true, "mark": true, "market_value": true, "price": true, "filled": true, "fee": true,
	}
	decimalText := regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	seen := map[string]int{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if money[k] || strings.HasSuffix(path, ".marks") {
					s, ok := e.(string)
					if !ok || !decimalText.MatchString(s) {
						t.Errorf("%s.%s = %#v, want a decimal string", path, k, e)
					}
					seen[k]++
					continue
				}
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		case float64:
			if !strings.HasSuffix(path, "decimals") && !strings.HasSuffix(path, ".seq") {
				t.Errorf("%s is a JSON number (%v)", path, x)
			}
		}
	}
	walk("", doc)
	for _, k := range []string{"cash", "equity", "quantity", "average_price", "mark", "price", "fee"} {
		if seen[k] == 0 {
			t.Errorf("snapshot has no %s field to check", k)
		}
	}
}

func signedGet(t *testing.T, srv *nodetest.Server, target string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+srv.Addr+target, nil)
	ts, nonce := node.Timestamp(time.Now()), node.NewNonce()
	req.Header.Set(node.HeaderKey, node.KeyObserve)
	req.Header.Set(node.HeaderTimestamp, ts)
	req.Header.Set(node.HeaderNonce, nonce)
	req.Header.Set(node.HeaderSignature, node.Sign(srv.ObserveKey, "GET", target, ts, nonce, nil))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", target, resp.StatusCode, body)
	}
	return body
}
