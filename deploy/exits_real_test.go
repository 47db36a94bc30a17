package deploy

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/binance/binancefake"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
	"wicket/strategy"
)

// flipBracket is flip with a stop-loss and a take-profit.
var flipBracket = strings.Replace(flip, `"size": 0.5}`, `"size": 0.5, "stop_loss": 0.004, "take_profit": 0.006}`, 1)

// waitUntil waits for ok (a fake venue's stream reaches the node on its
// own goroutines), within a bound against a hang.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	testkit.WaitFor(t, what, 20*time.Second, func() (bool, string) { return ok(), "not yet" })
}

// TestDeployBracketAtBinance: an auto deployment of a bracketed strategy
// on a Binance venue (the fake of its spot API) sends its entry as one
// bracket; Binance takes the exits only once the entry has filled, so
// the node sends them then as one orderList/oco at the venue; when the
// price trades through the stop the venue fills the stop-loss leg and
// cancels the take-profit, and the deployment books that fill: flat, its
// target flat, the exit signal after it sending nothing.
func TestDeployBracketAtBinance(t *testing.T) {
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	f.SetPrice("BTCUSDT", "60010")
	rv := venuerig.OnBinance(f, project.Venue{Name: "bn", Environment: "testnet", MayArm: true, Symbols: []string{"BTCUSDT"}})
	ns := venuerig.Start(t, []venuerig.Venue{rv}, nodetest.WithVenueTimeout(500*time.Millisecond))
	c := ns.Client()
	s := openStore(t, t.TempDir())
	r, err := New(ctxT(t), Config{Project: ns.Config, Store: s, Node: c, Strategies: newPool(t), OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Arm(context.Background(), "bn", time.Hour, "bn", ns.OperatorKey); err != nil {
		t.Fatal(err)
	}
	d, err := r.Create(ctxT(t), Spec{Strategy: "flip_bracket.star", Source: flipBracket, Series: "BTCUSDT@1m", Venue: "bn", Mode: ModeAuto,
		Capital: decimal.NewFromInt(1000), Warmup: 10})
	if err != nil {
		t.Fatal(err)
	}
	operatorArms(t, r, d.ID, ns.OperatorKey, "1h")
	now := time.Now().UTC().Truncate(time.Minute)
	bar := func(i int, up bool) Bar {
		o, cl := 60020.0, 60010.0
		if up {
			o = 60000
		}
		return Bar{Time: now.Add(time.Duration(i-10) * time.Minute), Open: o, High: 60030, Low: 59990, Close: cl, Volume: 1}
	}
	if err := r.Step(ctxT(t), d.ID, bar(0, true)); err != nil {
		t.Fatal(err)
	}
	in := mustIntents(t, s, d.ID)
	if len(in) == 0 || in[0].Type != "bracket" || !in[0].StopPrice.Equal(decimal.RequireFromString("59769.96")) || !in[0].LimitPrice.Equal(decimal.RequireFromString("60370.06")) {
		t.Fatalf("the entry: %+v, want a bracket with its stop at 59769.96 and take-profit at 60370.06", in)
	}
	// The entry fills at the venue; the node then sends the exits as one
	// orderList/oco.
	legs := func() (limit, stop *binancefake.Order) {
		for _, o := range f.Orders() {
			switch {
			case o.ListID >= 0 && o.Type == "LIMIT_MAKER":
				limit = &o
			case o.ListID >= 0 && strings.HasPrefix(o.Type, "STOP_LOSS"):
				stop = &o
			}
		}
		return limit, stop
	}
	waitUntil(t, "the exits at binance", func() bool { l, s := legs(); return l != nil && s != nil })
	limit, stop := legs()
	if limit.Side != "SELL" || !limit.Price.Equal(decimal.RequireFromString("60370.06")) || !stop.StopPrice.Equal(decimal.RequireFromString("59769.96")) {
		t.Fatalf("exits at binance: take-profit %+v, stop %+v", *limit, *stop)
	}
	// The price trades through the stop: Binance fills the stop-loss and
	// cancels the take-profit.
	f.SetPrice("BTCUSDT", "59700")
	waitUntil(t, "the stop's fill at the node", func() bool {
		snap, err := c.Snapshot(context.Background(), "bn", 0)
		if err != nil {
			return false
		}
		for _, v := range snap.Venues {
			for _, p := range v.Positions {
				if p.Symbol == "BTCUSDT" && !p.Quantity.IsZero() {
					return false
				}
			}
		}
		return true
	})
	if err := r.Step(ctxT(t), d.ID, bar(1, false)); err != nil { // an exit signal: the position is flat already
		t.Fatal(err)
	}
	got, _ := r.Get(d.ID)
	byExit := map[string]Intent{}
	for _, x := range mustIntents(t, s, d.ID) {
		byExit[x.Exit] = x
	}
	sl, tp := byExit["stop_loss"], byExit["take_profit"]
	if !got.Position.IsZero() || got.Target != 0 || got.Guard != "" || sl.Status != IntentFilled || !sl.Filled.Equal(byExit[""].Filled) || tp.Status != IntentCanceled {
		t.Fatalf("after the stop: position %s target %v guard %q; stop-loss %+v; take-profit %+v", got.Position, got.Target, got.Guard, sl, tp)
	}
	if n := len(mustIntents(t, s, d.ID)); n != 3 {
		t.Fatalf("%d intents, want the bracket and its two legs: the exit signal after the stop sends nothing", n)
	}
	t.Logf("entry %s at %s; stop-loss filled at %s; cash %s", byExit[""].Filled, byExit[""].Price, sl.Price, got.Cash.StringFixed(2))
}

// TestDeployRefusesExitsAlpacaCryptoCannotCarry: Alpaca takes neither a
// bracket nor a plain stop on a crypto pair, so a bracketed strategy, and
// a stop-only one, deployed on its BTC/USD (the fake of its API) are
// refused at deploy naming the leg, before anything trades.
func TestDeployRefusesExitsAlpacaCryptoCannotCarry(t *testing.T) {
	rv := alpacaVenue(t)
	ns := venuerig.Start(t, []venuerig.Venue{rv.venue}, nodetest.WithVenueTimeout(500*time.Millisecond))
	c := ns.Client()
	if _, err := c.Arm(context.Background(), rv.name, time.Hour, rv.name, ns.OperatorKey); err != nil {
		t.Fatal(err)
	}
	hist := func(ctx context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		b := strategy.Bars{Series: series}
		for i := range 20 {
			appendBar(&b, before.Add(time.Duration(i-20)*time.Minute).Unix(), 60000, 60010, 59990, 60000+float64(i%2), 1)
		}
		return b, nil
	}
	r, err := New(ctxT(t), Config{Project: ns.Config, Store: openStore(t, t.TempDir()), Node: c, Strategies: newPool(t), History: hist,
		OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Strategy: "flip_bracket.star", Source: flipBracket, Series: rv.series, Venue: rv.name, Mode: ModeAuto, Capital: decimal.NewFromInt(1000), Warmup: 10}
	_, err = r.Create(ctxT(t), spec)
	wantErr(t, err, "venue al cannot carry strategy flip_bracket.star's stop_loss and take_profit (a bracket) exit", "no bracket on crypto pairs")
	spec.Strategy, spec.Source = "flip_stop.star", strings.Replace(flip, `"size": 0.5}`, `"size": 0.5, "stop_loss": 0.01}`, 1)
	_, err = r.Create(ctxT(t), spec)
	wantErr(t, err, "cannot carry strategy flip_stop.star's stop_loss exit as stop")
	if n := rv.orders(); n != 0 || len(r.List()) != 0 {
		t.Fatalf("%d orders at the venue, %d deployments", n, len(r.List()))
	}
}
