package deploy

import (
	"math"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/ta"
)

// longForward starts a forward test over thousands of bars: it runs
// beside the others (it waits on synced writes mostly, and two overlap
// well), and not under -short, the inner loop of development, which has
// the shorter forward tests; make test runs it.
func longForward(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a forward test over thousands of bars: make test runs it")
	}
	t.Parallel()
}

// TestDeployForwardTestEqualsBacktest runs a 2,000-bar recorded tape
// through a fake bar source into an auto deployment on a paper venue and
// checks, bar for bar, that its decisions equal a backtest's of the same
// bars, its fills are the backtest's fills (bar, side, price to the cent,
// quantity) and its equity at every close is the backtest's to the cent.
//
// Equality holds by construction, not tolerance: the decision is the
// worker's decide over bar t and the 60 before it (the backtest's decision
// function; windowed SMAs do not depend on where their history began, and
// the lookahead proof makes a prefix decide as the whole does); the
// tape's opens are the previous closes and the paper mark the order
// fills at is bar t's close (the node steps its mark from the market's
// price just before the order reaches it), so the paper fill at mark × (1 ± slippage) is the
// backtest's fill at the next open; the backtest's fee and slippage are
// the venue's; and the deployment sizes the order as the engine does,
// f × equity / (price × (1+slip)(1+fee)), cut to 8 decimals (under a
// millionth of a cent of notional per fill).
func TestDeployForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	const n = 2000
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	bars := tape(n, 7, start)
	clk := testkit.NewClock(start)
	cfg := venueConfig()
	mkt := &price{}
	ns := paperNode(t, cfg, mkt, clk.Now)
	src := &fakeTape{bars: Bars(bars), clock: clk, price: mkt, gran: time.Minute}
	conn := marketConn{Client: ns.Client(node.WithClock(clk.Now)), t: t, node: ns}
	r, err := New(ctxT(t), Config{Project: cfg, Store: openStore(t, t.TempDir()), Node: conn,
		Strategies: newPool(t), Now: clk.Now, NewID: seq(),
		Bars: func(_ project.Venue, _ string) BarSource { return src }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Create(ctxT(t), Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper",
		Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 60})
	if err != nil {
		t.Fatal(err)
	}
	r.Start(ctxT(t))
	r.Wait()

	// The backtest of the same bars, by the same engine.
	s, err := script.Load(ctxT(t), script.Source{Name: "sma_half.star", Text: smaHalf}, script.Options{Memo: ta.NewMemo(0)})
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.Signals(ctxT(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	bc := backtest.DefaultConfig()
	bc.Capital, bc.FeeBps, bc.SlippageBps = decimal.NewFromInt(10000), cfg.Venues[0].FeeBps, cfg.Venues[0].SlippageBps
	res, err := backtest.Run(ctxT(t), bars, bc, backtest.Decisions{Signals: &sig})
	if err != nil {
		t.Fatal(err)
	}

	decs, err := r.cfg.Store.Decisions(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(decs) != n {
		t.Fatalf("%d decisions for %d bars", len(decs), n)
	}
	for i, dc := range decs {
		want := sig.TargetAt(i)
		if dc.Status != DecisionDecided || dc.HasTarget != (want == want) || (dc.HasTarget && dc.Target != want) {
			t.Fatalf("bar %d: live decision %+v, backtest target %v", i, dc, want)
		}
		if got, want := dc.Equity.Round(2), decimal.NewFromFloat(res.Curve.Equity[i]).Round(2); !got.Equal(want) {
			t.Fatalf("bar %d: live equity %s at the close, backtest %s", i, got, want)
		}
	}
	intents, err := r.cfg.Store.Intents(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	type fill struct {
		bar   int
		side  string
		price float64
		qty   float64
	}
	var want []fill
	for _, tr := range res.AllTrades {
		want = append(want, fill{tr.EntryBar, "buy", tr.EntryPrice, tr.Quantity}, fill{tr.ExitBar, "sell", tr.ExitPrice, tr.Quantity})
	}
	if p := res.OpenPosition; p != nil {
		want = append(want, fill{p.EntryBar, "buy", p.EntryPrice, p.Quantity})
	}
	if len(want) < 20 {
		t.Fatalf("the backtest made only %d fills: the fixture should trade often", len(want))
	}
	if len(intents) != len(want) {
		t.Fatalf("%d orders live, %d fills in the backtest", len(intents), len(want))
	}
	index := map[int64]int{}
	for i, ts := range bars.Time {
		index[ts] = i
	}
	for k, in := range intents {
		w := want[k]
		bar := index[in.Bar.Unix()] + 1 // decided at bar i's close, filled at bar i+1's open
		price, _ := in.Price.Float64()
		qty, _ := in.Filled.Float64()
		if in.Status != IntentFilled || bar != w.bar || in.Side != w.side ||
			!in.Price.Round(2).Equal(decimal.NewFromFloat(w.price).Round(2)) || math.Abs(qty-w.qty) > 1e-6 {
			t.Fatalf("fill %d: live %s bar %d %s %v at %v; backtest bar %d %s %v at %v", k, in.Status, bar, in.Side, qty, price, w.bar, w.side, w.qty, w.price)
		}
	}
	final, _ := r.Get(d.ID)
	if got, want := final.Equity.Round(2), decimal.NewFromFloat(res.Curve.Equity[n-1]).Round(2); !got.Equal(want) {
		t.Fatalf("final equity live %s, backtest %s", got, want)
	}
	t.Logf("%d bars, %d fills; final equity %s", n, len(intents), final.Equity.StringFixed(2))
}
