package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// riskNode is a paper node with [risk] r on a stepping clock, and a
// client on the same clock.
func riskNode(t *testing.T, r project.Risk) (*nodetest.Server, *node.Client, *testkit.Clock) {
	t.Helper()
	cfg := project.Defaults()
	cfg.Risk = r
	clk := testkit.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithClock(clk.Now))
	return n, n.Client(node.WithClock(clk.Now)), clk
}

func limitNear(t *testing.T, c *node.Client, side command.Side, qty, factor string) command.Command {
	t.Helper()
	m := venueOf(t, snapshot(t, c), "paper").Marks["BTC-USD"]
	return order("paper", "BTC-USD", side, command.Limit, qty, m.Mul(testkit.D(factor)).Round(2).String())
}

// TestNodeThrottlesCountEveryVerbAndEveryWriter: the venue's message
// throttle counts the node's submits, modifies and cancels, whoever sends
// them; a deployment's own throttle counts only its own (by the reason
// it sends).
func TestNodeThrottlesCountEveryVerbAndEveryWriter(t *testing.T) {
	_, c, clk := riskNode(t, project.Risk{MaxMessages: 3, MaxDeploymentMessages: 1})
	lim := accepted(t, c, limitNear(t, c, command.Buy, "0.01", "0.95"))
	accepted(t, c, command.Command{Verb: command.Modify, Venue: "paper", OrderID: lim.OrderID, Quantity: testkit.D("0.02")})
	accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: lim.OrderID})
	out := rejected(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "0.01", ""), "venue_messages")
	if !strings.Contains(out.Reason, "4 message(s) to paper in the last 1s; max_messages 3 per 1s") {
		t.Errorf("throttled: %q", out.Reason)
	}
	clk.Advance(time.Second)
	dep := func(reason string) node.Outcome {
		return send(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "0.01", ""), reason)
	}
	if out := dep("deployment dep-0001 (sma.star 0123456789ab) to target 1"); out.Status != node.Accepted {
		t.Fatalf("deployment's first: %+v", out)
	}
	if out := dep("deployment dep-0001 (sma.star 0123456789ab) to target 1"); out.Code != "deployment_messages" || !strings.Contains(out.Reason, "deployment dep-0001") {
		t.Fatalf("deployment's second: %s %q", out.Code, out.Reason)
	}
	if out := dep("deployment dep-0002 (sma.star 0123456789ab) to target 1"); out.Status != node.Accepted {
		t.Fatalf("another deployment: %s %q", out.Code, out.Reason)
	}
}

// TestIdenticalOrdersAtTheNodeOnlyTheOperatorResets: the third identical
// order is refused, and stays refused an hour later; the control key
// cannot reset the throttle (403), the operator can.
func TestIdenticalOrdersAtTheNodeOnlyTheOperatorResets(t *testing.T) {
	n, c, clk := riskNode(t, project.Risk{MaxIdenticalOrders: 2})
	buy := order("paper", "BTC-USD", command.Buy, command.Market, "0.01", "")
	accepted(t, c, buy)
	accepted(t, c, buy)
	rejected(t, c, buy, "identical_orders")
	clk.Advance(time.Hour)
	out := rejected(t, c, buy, "identical_orders")
	if !strings.Contains(out.Reason, "wicket node reset-throttle") {
		t.Errorf("refusal: %q", out.Reason)
	}
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "0.02", ""))
	_, err := c.ResetThrottle(context.Background(), nil)
	forbidden(t, err, "operator_signature_required")
	st, err := c.ResetThrottle(context.Background(), n.OperatorKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Limits) == 0 {
		t.Errorf("reset answered no status: %+v", st)
	}
	accepted(t, c, buy)
}

// TestSelfTradeAndDailyNotionalAtTheNode: on paper an order crossing the
// account's own resting order is refused; the day's fills count against
// max_daily_notional; risk_status shows both, under 4 KB.
func TestSelfTradeAndDailyNotionalAtTheNode(t *testing.T) {
	_, c, _ := riskNode(t, project.Risk{SelfTrade: true, Venues: map[string]project.VenueRisk{"paper": {MaxDailyNotional: testkit.D("20000")}}})
	accepted(t, c, limitNear(t, c, command.Buy, "0.01", "0.95"))
	out := rejected(t, c, limitNear(t, c, command.Sell, "0.01", "0.94"), "self_trade")
	if !strings.Contains(out.Reason, "would cross the account's own resting buy") {
		t.Errorf("self trade: %q", out.Reason)
	}
	accepted(t, c, limitNear(t, c, command.Sell, "0.01", "0.96"))
	mark := venueOf(t, snapshot(t, c), "paper").Marks["BTC-USD"]
	qty := testkit.D("15000").Div(mark).Round(4)
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, qty.String(), ""))
	out = rejected(t, c, order("paper", "BTC-USD", command.Buy, command.Market, qty.String(), ""), "daily_notional")
	if !strings.Contains(out.Reason, "traded on paper today (UTC)") || !strings.Contains(out.Reason, "max_daily_notional 20000") {
		t.Errorf("daily notional: %q", out.Reason)
	}
	st, err := c.Risk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(st)
	if len(raw) >= 4096 || !strings.Contains(string(raw), `"check":"daily_notional"`) || !strings.Contains(string(raw), `"check":"self_trade"`) {
		t.Errorf("risk status (%d bytes): %s", len(raw), raw)
	}
}

// TestBinanceIsToldSelfTradePrevention: every order at Binance carries
// selfTradePreventionMode EXPIRE_TAKER.
func TestBinanceIsToldSelfTradePrevention(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"))
	if o := vn.fake.Orders(); len(o) != 1 || o[0].SelfTradePrevention != "EXPIRE_TAKER" {
		t.Fatalf("the venue holds %+v", o)
	}
}

// TestHeartbeatLapseIsReportedAndOnlyTheOperatorBeats: with [risk]
// heartbeat, a node without an operator heartbeat for that long trips
// its dead man's switch at its next mark step (snapshot, risk status,
// audit by the node); the control key cannot beat (403); the operator's
// heartbeat re-arms it.
func TestHeartbeatLapseIsReportedAndOnlyTheOperatorBeats(t *testing.T) {
	n, c, clk := riskNode(t, project.Risk{Heartbeat: 15 * time.Minute, OnSilence: project.OnSilenceCancel})
	hb := func() *node.HeartbeatState {
		t.Helper()
		s := snapshot(t, c)
		if s.Heartbeat == nil {
			t.Fatal("no heartbeat in the snapshot")
		}
		return s.Heartbeat
	}
	clk.Advance(14 * time.Minute)
	n.Tick(t, 1)
	if h := hb(); h.Lapsed || h.Every != "15m0s" || h.OnSilence != "cancel" {
		t.Fatalf("within the heartbeat: %+v", h)
	}
	_, err := c.Heartbeat(context.Background(), nil)
	forbidden(t, err, "operator_signature_required")
	clk.Advance(time.Minute)
	n.Tick(t, 1)
	h := hb()
	if !h.Lapsed || !strings.Contains(h.Note, "dead man's switch: no operator heartbeat since 2026-03-02T10:00:00Z") {
		t.Fatalf("after 15m of silence: %+v", h)
	}
	page, err := c.Audit(context.Background(), node.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range page.Entries {
		if e.Arming != nil && e.Arming.Action == node.ArmingSilence && e.KeyID == node.KeyNode {
			found++
		}
	}
	n.Tick(t, 3)
	if found != 1 {
		t.Errorf("%d audit entries of the lapse", found)
	}
	if _, err := c.Heartbeat(context.Background(), n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	if h := hb(); h.Lapsed || !h.Due.Equal(clk.Now().Add(15*time.Minute)) || !strings.Contains(h.Note, "re-armed") {
		t.Fatalf("after the heartbeat: %+v", h)
	}
}

// TestMarketHoursAtAlpaca: with [risk] market_hours, an equity order at
// Alpaca while its clock says closed is refused naming when it opens; a
// crypto pair trades; once the clock opens, the equity order goes.
func TestMarketHoursAtAlpaca(t *testing.T) {
	f := venuerig.Alpaca(t, "50000", "SPY", "BTC/USD")
	cfg := project.Defaults()
	cfg.Risk.MarketHours = true
	opens := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second)
	f.SetClosed(opens)
	srv := venuerig.Node(t, cfg, []venuerig.Venue{alpacaVenue(f, "SPY", "BTC-USD")}, nodetest.WithVenueTimeout(2*time.Second))
	vn := &venueNode{srv: srv, c: srv.Client()}
	vn.waitSynced(t, "al")
	vn.arm(t, "al", time.Hour)
	spy := order("al", "SPY", command.Buy, command.Market, "1", "")
	var v node.Verdict
	waitFor(t, "the clock read", func() bool {
		var err error
		v, err = vn.c.DryRun(context.Background(), command.NewEnvelope(spy, ""))
		return err == nil && v.Code == "market_hours"
	})
	out := rejected(t, vn.c, spy, "market_hours")
	if !strings.Contains(out.Reason, "al's market is closed for SPY: it opens at "+opens.Format(time.RFC3339)) {
		t.Errorf("closed: %q", out.Reason)
	}
	accepted(t, vn.c, order("al", "BTC-USD", command.Buy, command.Market, "0.01", ""))
	f.SetClosed(time.Time{})
	waitFor(t, "the clock open", func() bool {
		v, err := vn.c.DryRun(context.Background(), command.NewEnvelope(spy, ""))
		return err == nil && v.WouldAccept
	})
	accepted(t, vn.c, spy)
}

// TestRiskStatusStaysUnder4KB: with every [risk] limit on, for each of
// the default venue's symbols, a venue breaker and the heartbeat, the
// status is under 4 KB and lists each limit.
func TestRiskStatusStaysUnder4KB(t *testing.T) {
	r := project.Risk{Heartbeat: 15 * time.Minute, StopCollarPct: 20, MaxMessages: 20, MaxDeploymentMessages: 5, MaxIdenticalOrders: 3,
		SelfTrade: true, MarketHours: true, Symbols: map[string]project.SymbolRisk{}, Venues: map[string]project.VenueRisk{"paper": {MaxDailyNotional: testkit.D("1000000")}}}
	for _, s := range project.Defaults().Venues[0].Symbols {
		r.Symbols[s] = project.SymbolRisk{MaxOrderQuantity: testkit.D("2"), MaxOrderNotional: testkit.D("50000"), MaxPosition: testkit.D("5")}
	}
	cfg := project.Defaults()
	cfg.Risk = r
	cfg.Venues[0].MaxDailyLoss = testkit.D("500")
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg))
	c := n.Client()
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "0.01", ""))
	st, err := c.Risk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(st)
	t.Logf("risk status: %d limits, %d bytes", len(st.Limits), len(raw))
	if len(raw) >= 4096 {
		t.Errorf("risk status is %d bytes, over 4 KB", len(raw))
	}
	for _, check := range []string{"order_quantity", "symbol_notional", "position_quantity", "daily_notional", "venue_messages",
		"deployment_messages", "identical_orders", "stop_collar", "self_trade", "market_hours"} {
		if !strings.Contains(string(raw), `"check":"`+check+`"`) {
			t.Errorf("no %s in the status", check)
		}
	}
	if st.Heartbeat == nil || len(st.Breakers) != 1 {
		t.Errorf("heartbeat %+v, breakers %+v", st.Heartbeat, st.Breakers)
	}
}

// TestStreamLossPausesThatVenue: with [risk] stream_loss, a real venue
// whose order stream stays lost that long (on a stepping clock) is
// reported in the snapshot and risk status and audited by the node; the
// stream back clears it.
func TestStreamLossPausesThatVenue(t *testing.T) {
	f := newBinanceFake(t)
	cfg := project.Defaults()
	cfg.Risk.StreamLoss = time.Minute
	clk := testkit.NewClock(time.Now().UTC())
	srv := venuerig.Node(t, cfg, []venuerig.Venue{binanceVenue("bn", "testnet", true, f)}, nodetest.WithClock(clk.Now), nodetest.WithVenueTimeout(time.Second))
	vn := &venueNode{srv: srv, fake: f, c: srv.Client(node.WithClock(clk.Now))}
	vn.waitSynced(t, "bn")
	f.RefuseStreams(503, -1003, "stream refused by the test")
	f.DropStreams()
	waitFor(t, "the stream lost", func() bool { return vn.venue(t, "bn").Connection != "connected" })
	srv.Tick(t, 1) // the loss first seen
	clk.Advance(59 * time.Second)
	srv.Tick(t, 1)
	if s := snapshot(t, vn.c); len(s.StreamLoss) != 0 {
		t.Fatalf("tripped within the bound: %v", s.StreamLoss)
	}
	clk.Advance(time.Second)
	srv.Tick(t, 1)
	st, err := vn.c.Risk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.StreamLoss) != 1 || !strings.Contains(st.StreamLoss[0], "bn's order stream lost since") || !strings.Contains(st.StreamLoss[0], "stream_loss 1m0s") {
		t.Fatalf("risk status after a minute: %v", st.StreamLoss)
	}
	page, err := vn.c.Audit(context.Background(), node.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	audited := 0
	for _, e := range page.Entries {
		if e.Arming != nil && e.Arming.Action == node.ArmingStreamLoss && e.Arming.Venue == "bn" && e.KeyID == node.KeyNode {
			audited++
		}
	}
	srv.Tick(t, 2)
	if audited != 1 {
		t.Errorf("%d audit entries of the loss", audited)
	}
	f.RefuseStreams(0, 0, "")
	waitFor(t, "the stream back", func() bool { return vn.venue(t, "bn").Connection == "connected" })
	srv.Tick(t, 1)
	if s := snapshot(t, vn.c); len(s.StreamLoss) != 0 {
		t.Fatalf("still reported with the stream back: %v", s.StreamLoss)
	}
}
