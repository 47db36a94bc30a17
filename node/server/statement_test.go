package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/alert"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// hook is a webhook receiver on loopback: each signed alert it gets.
type hook struct {
	*httptest.Server
	got chan node.Alert
}

func newHook(t *testing.T, key []byte) *hook {
	h := &hook{got: make(chan node.Alert, 64)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !alert.Verify(key, r.Header.Get(alert.HeaderTimestamp), body, r.Header.Get(alert.HeaderSignature)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var a node.Alert
		if json.Unmarshal(body, &a) == nil {
			h.got <- a
		}
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) next(t *testing.T, kind alert.Kind) node.Alert {
	t.Helper()
	for {
		select {
		case a := <-h.got:
			if a.Kind == string(kind) {
				return a
			}
		case <-time.After(10 * time.Second): // a bound on a hang
			t.Fatalf("no %s alert arrived", kind)
		}
	}
}

// TestStatementNamesAMissingFillAndAFeeDifference: one order's trade is
// charged a fee the node did not book, and the venue has a trade of an
// order the node never placed; the statement names both, with both
// figures, and passes the order that matches. After the day the node
// states it by itself and the mismatch reaches the webhook, signed.
func TestStatementNamesAMissingFillAndAFeeDifference(t *testing.T) {
	clock := testkit.NewClock(time.Now().UTC())
	key := testkit.Bytes(t, 32)
	rc := newHook(t, key)
	wh, err := alert.NewWebhook(rc.URL, key, "", rc.Client(), clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	d := alert.NewDispatcher(alert.Options{Sinks: []alert.Sink{wh}})
	t.Cleanup(d.Close)
	ticks := make(chan time.Time)
	f := venuerig.Binance(t, map[string]string{"USDT": "20000", "BTC": "0.1"}, "BTCUSDT", "ETHUSDT")
	srv := startWith(t, binanceVenue("bn", "testnet", true, f), nodetest.WithClock(clock.Now), nodetest.WithAlerts(d, ticks))
	vn := &venueNode{srv: srv, fake: f, c: srv.Client()}
	vn.waitSynced(t, "bn")
	vn.arm(t, "bn", time.Hour)

	feeOrder := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", ""))
	fine := accepted(t, vn.c, order("bn", "ETHUSDT", command.Buy, command.Market, "0.1", ""))
	waitFor(t, "both fills", func() bool {
		return len(fillPrices(t, vn.c, "bn", feeOrder.OrderID)) == 1 && len(fillPrices(t, vn.c, "bn", fine.OrderID)) == 1
	})
	var feeID int64
	for _, o := range f.Orders() {
		if o.Symbol == "BTCUSDT" {
			feeID = o.ID
		}
	}
	f.ChargeCommission(feeID, "0.6", "USDT")
	f.DateTrades(clock.Now())
	foreign := f.AddTrade("BTCUSDT", "SELL", "0.003", "60000", clock.Now())

	day := clock.Now().Format(time.DateOnly)
	sts, err := vn.c.Statement(context.Background(), day, "bn")
	if err != nil {
		t.Fatal(err)
	}
	st := sts[0]
	if !st.Independent || st.NodeFills != 2 || st.VenueFills != 3 {
		t.Fatalf("statement: independent %v, node fills %d, venue fills %d; want true, 2, 3: %+v", st.Independent, st.NodeFills, st.VenueFills, st)
	}
	if len(st.Mismatches) != 2 {
		t.Fatalf("%d mismatches, want 2: %+v", len(st.Mismatches), st.Mismatches)
	}
	byWhat := map[string]node.Mismatch{}
	for _, m := range st.Mismatches {
		byWhat[m.What] = m
	}
	fee := byWhat["fee"]
	if fee.Order != feeOrder.OrderID || fee.Node != "0" || fee.Venue != "0.6" || !strings.Contains(fee.Text, "the venue charged 0.6") {
		t.Errorf("fee mismatch %+v", fee)
	}
	miss := byWhat["missing_in_node"]
	if miss.VenueOrderID != itoa(foreign) || miss.Venue != "0.003 @ 60000" || miss.Node != "" || !strings.Contains(miss.Text, "never placed") {
		t.Errorf("missing fill %+v", miss)
	}

	// The paper venue says it has no independent history.
	paper, err := vn.c.Statement(context.Background(), day, "paper")
	if err != nil || paper[0].Independent || !strings.Contains(paper[0].Note, "no independent history") {
		t.Errorf("paper statement %+v, %v", paper, err)
	}

	// After the day (and its grace), the node states it by itself.
	next := clock.Now().Truncate(24 * time.Hour).Add(24*time.Hour + 15*time.Minute)
	clock.Set(next)
	ticks <- next
	a := rc.next(t, alert.StatementMismatch)
	if a.Venue != "bn" || !strings.Contains(a.Text, "2 mismatch(es)") || !strings.Contains(a.Text, "the venue charged 0.6") || !strings.Contains(a.Text, "never placed") {
		t.Errorf("statement alert %+v", a)
	}
	ticks <- next // stated once a day: no second alert
	// A restarted node finds the day stated in its audit trail.
	srv.Restart(t)
	ticks <- next
	ticks <- next // the first tick's statement is done once the runner takes the second
	recent, _ := d.Recent(0)
	n := 0
	for _, r := range recent {
		if r.Kind == string(alert.StatementMismatch) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d statement alerts, want 1", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestAlpacaStatementNamesFeesAndAMissingFill: Alpaca's account
// activities hold a fill of an order the node never placed and a
// regulatory fee the node has no record of; the node's own fill matches.
func TestAlpacaStatementNamesFeesAndAMissingFill(t *testing.T) {
	f := venuerig.Alpaca(t, "50000", "SPY")
	vn := startAlpacaVenue(t, f, true, "SPY")
	buy := accepted(t, vn.c, order("al", "SPY", command.Buy, command.Market, "2", ""))
	waitFor(t, "the fill", func() bool { return len(fillPrices(t, vn.c, "al", buy.OrderID)) == 1 })
	now := time.Now().UTC()
	f.DateActivities(now)
	foreign := f.AddFill("SPY", "sell", "1", "501", now)
	f.ChargeFee("0.02", now)

	sts, err := vn.c.Statement(context.Background(), now.Format(time.DateOnly), "al")
	if err != nil {
		t.Fatal(err)
	}
	st := sts[0]
	if !st.Independent || st.NodeFills != 1 || st.VenueFills != 2 || len(st.Mismatches) != 2 {
		t.Fatalf("statement %+v", st)
	}
	if m := st.Mismatches[0]; m.What != "missing_in_node" || m.VenueOrderID != foreign || m.Venue != "1 @ 501" {
		t.Errorf("missing fill %+v", m)
	}
	if m := st.Mismatches[1]; m.What != "other_fees" || m.Node != "0" || m.Venue != "0.02" {
		t.Errorf("fee %+v", m)
	}
}

// TestFuturesStatementComparesFunding: at binance-futures the day's
// funding is compared too (the node booked what the venue's income
// history holds: it matches), and a commission the node did not book is
// named.
func TestFuturesStatementComparesFunding(t *testing.T) {
	srv, f := startFutures(t)
	c := srv.Client()
	ctx := context.Background()
	if _, err := c.Arm(ctx, "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	buy := accepted(t, c, order("perps", "BTCUSDT", command.Buy, command.Market, "0.1", ""))
	now := time.Now().UTC()
	f.AddFunding("BTCUSDT", "-1.5", now)
	waitFor(t, "the funding booked", func() bool {
		snap, err := c.Snapshot(ctx, "perps", 0)
		return err == nil && snap.Venues[0].Funding.String() == "-1.5"
	})
	f.ChargeCommission(f.Orders()[0].ID, "2.4")
	f.DateTrades(now)
	sts, err := c.Statement(ctx, now.Format(time.DateOnly), "perps")
	if err != nil {
		t.Fatal(err)
	}
	st := sts[0]
	if !st.Independent || st.NodeFunding.String() != "-1.5" || st.VenueFunding.String() != "-1.5" || !strings.HasPrefix(st.Funding, "matches") {
		t.Errorf("funding: node %s venue %s %q", st.NodeFunding, st.VenueFunding, st.Funding)
	}
	if len(st.Mismatches) != 1 || st.Mismatches[0].What != "fee" || st.Mismatches[0].Order != buy.OrderID || st.Mismatches[0].Venue != "2.4" {
		t.Errorf("mismatches %+v", st.Mismatches)
	}
}
