package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/alert"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
	"wicket/node/venuerig"
)

// TestStreamLossAlert: a real venue's order stream dropping is an alert
// at the webhook (signed), listed by GET /v1/alerts.
func TestStreamLossAlert(t *testing.T) {
	key := testkit.Bytes(t, 32)
	rc := newHook(t, key)
	wh, err := alert.NewWebhook(rc.URL, key, "", rc.Client(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	d := alert.NewDispatcher(alert.Options{Sinks: []alert.Sink{wh}})
	t.Cleanup(d.Close)
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) }, nodetest.WithAlerts(d, nil))
	vn.fake.DropStreams()
	a := rc.next(t, alert.StreamLost)
	if a.Venue != "bn" || !strings.Contains(a.Text, "order stream is down") {
		t.Errorf("stream alert %+v", a)
	}
	page, err := vn.c.Alerts(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, x := range page.Alerts {
		kinds[x.Kind] = true
	}
	if !kinds["stream_lost"] || page.Next < 1 {
		t.Errorf("GET /v1/alerts: %+v", page)
	}
	if more, err := vn.c.Alerts(context.Background(), page.Next); err != nil || len(more.Alerts) != 0 {
		t.Errorf("after %d: %+v %v", page.Next, more, err)
	}
}

// TestBreakerTripAlert: a venue breaker's trip, an audit entry by the
// node, is a critical alert at the webhook, once.
func TestBreakerTripAlert(t *testing.T) {
	key := testkit.Bytes(t, 32)
	rc := newHook(t, key)
	wh, _ := alert.NewWebhook(rc.URL, key, "", rc.Client(), time.Now)
	d := alert.NewDispatcher(alert.Options{Sinks: []alert.Sink{wh}})
	t.Cleanup(d.Close)
	cfg := project.Defaults()
	v := &cfg.Venues[0]
	v.Marks, v.Cash, v.MaxDailyLoss = "binance", decimal.NewFromInt(10000), decimal.NewFromInt(50)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	feed := &settablePrice{}
	feed.set("100")
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithMarks(map[string]server.MarkFeed{"paper": feed}), nodetest.WithAlerts(d, nil))
	n.Tick(t, 1)
	accepted(t, n.Client(), order("paper", "BTC-USD", command.Buy, command.Market, "10", ""))
	feed.set("94")
	n.Tick(t, 1)
	a := rc.next(t, alert.BreakerTrip)
	if a.Venue != "paper" || a.Severity != string(alert.Critical) || !strings.Contains(a.Text, "max_daily_loss") || !strings.HasPrefix(a.ID, "audit-") {
		t.Errorf("breaker alert %+v", a)
	}
	n.Tick(t, 1)
	recent, _ := d.Recent(0)
	if len(recent) != 1 {
		t.Errorf("%d alerts, want the one trip: %+v", len(recent), recent)
	}
}
