package deploy

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
	"wicket/strategy/script"
	"wicket/strategy/ta"
)

// slippedPortfolio deploys the three-asset rotation on a paper venue
// (warm bars of warm-up, then n calendar bars, no asset missing one) with
// allowance a, and steps it through every bar with each asset's market
// price (the paper venue's mark its orders fill at) at the bar's close
// × (1 + bump(i)) for live bar i: fills that slip against the model's.
func slippedPortfolio(t testing.TB, warm, n int, a Allowance, bump func(i int) float64) (*portfolioRig, Deployment, map[string]strategy.Bars, []int64) {
	t.Helper()
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	series := []string{"BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"}
	all := map[string]strategy.Bars{
		series[0]: walk(series[0], warm+n, 7, 100, start, nil),
		series[1]: walk(series[1], warm+n, 11, 40, start, nil),
		series[2]: walk(series[2], warm+n, 13, 20, start, nil),
	}
	btc := all[series[0]]
	cal := btc.Time[warm:]
	g := newPortfolioRig(t, time.Unix(cal[0], 0).UTC(), all, &multiTape{})
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "rotation.star", Source: rotation, Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: warm, Allowance: a})
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range cal {
		set := map[string]Bar{}
		for _, s := range series {
			b := all[s]
			k := index(b, at)
			set[s] = Bars(b.Slice(k, k+1))[0]
			sym, _, _ := strategy.ParseSeries(s)
			g.marks.set(sym, decimal.NewFromFloat(b.Close[k]*(1+bump(i))))
		}
		g.clk.Set(time.Unix(at, 0).Add(time.Minute))
		if err := g.r.StepPortfolio(ctxT(t), d.ID, time.Unix(at, 0).UTC(), set); err != nil {
			t.Fatal(err)
		}
	}
	dep, err := g.r.Get(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	return g, dep, all, cal
}

// TestDeployPortfolioAttributionSumsToTheGap: a portfolio deployment
// whose fills slip 0.2 % above each bar's close tracks its replay, the
// portfolio backtest of the same bars with the same weights: the report's
// parts sum exactly to the gap, the days and the assets each to the
// total; live P&L is the deployment's own book's and the replay's is an
// independent portfolio backtest's (each to the cent); the fill price
// part is the slip of every live fill against the model's fill at its
// bar's close, recomputed here from the journal.
func TestDeployPortfolioAttributionSumsToTheGap(t *testing.T) {
	t.Parallel() // long: it overlaps the forward tests in make test's plain step
	const warm, n = 60, 240
	g, dep, all, cal := slippedPortfolio(t, warm, n, Allowance{}, func(int) float64 { return 0.002 })
	rep, err := g.r.Report(ctxT(t), dep.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Attribution
	if a == nil || len(a.Assets) != 3 || len(a.Days) == 0 {
		t.Fatalf("attribution %+v: want one over three assets", a)
	}
	tot := a.Total
	if !sumParts(tot).Equal(tot.Gap.Money) || !tot.Gap.Money.Equal(a.Live.Sub(a.Replay)) {
		t.Fatalf("parts sum to %s, gap %s, live %s less replay %s", sumParts(tot), tot.Gap.Money, a.Live, a.Replay)
	}
	var days, assets decimal.Decimal
	for _, d := range a.Days {
		if !sumParts(d.GapParts).Equal(d.Gap.Money) {
			t.Fatalf("day %s: parts %s, gap %s", d.Day, sumParts(d.GapParts), d.Gap.Money)
		}
		days = days.Add(d.Gap.Money)
	}
	for _, x := range a.Assets {
		if !sumParts(x.Total).Equal(x.Total.Gap.Money) {
			t.Fatalf("asset %s: parts %s, gap %s", x.Series, sumParts(x.Total), x.Total.Gap.Money)
		}
		assets = assets.Add(x.Total.Gap.Money)
	}
	if !days.Equal(tot.Gap.Money) || !assets.Equal(tot.Gap.Money) {
		t.Fatalf("days sum to %s, assets to %s, the total gap is %s", days, assets, tot.Gap.Money)
	}
	if live := dep.Equity.Sub(dep.Capital); !a.Live.Round(2).Equal(live.Round(2)) {
		t.Fatalf("live P&L %s, the deployment's book %s", a.Live, live)
	}

	// The replay's P&L is the portfolio backtest's of the same bars,
	// trading from the first live decision.
	series := []string{"BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"}
	raw := make([]strategy.Bars, len(series))
	for k, s := range series {
		b := all[s]
		raw[k] = b.Slice(0, b.Len())
	}
	assetsAligned, err := portfolio.Align(raw)
	if err != nil {
		t.Fatal(err)
	}
	s, err := script.Load(ctxT(t), script.Source{Name: "rotation.star", Text: rotation}, script.Options{Memo: ta.NewMemo(0)})
	if err != nil {
		t.Fatal(err)
	}
	weights, err := s.Weights(ctxT(t), assetsAligned)
	if err != nil {
		t.Fatal(err)
	}
	for k := range weights {
		for i := range weights[k][:warm] {
			weights[k][i] = math.NaN() // decided before the deployment went live
		}
	}
	reb, _ := portfolio.ParseRebalance(s.Rebalance())
	vc := g.r.cfg.Project.Venues[0]
	bc := backtest.DefaultConfig()
	bc.Capital, bc.FeeBps, bc.SlippageBps = decimal.NewFromInt(10000), vc.FeeBps, vc.SlippageBps
	res, err := portfolio.RunFrom(ctxT(t), assetsAligned, weights, reb, bc, portfolio.Options{TradeFrom: time.Unix(cal[1], 0)})
	if err != nil {
		t.Fatal(err)
	}
	want := decimal.NewFromFloat(res.Curve.Equity[len(res.Curve.Equity)-1]).Sub(bc.Capital)
	if !a.Replay.Round(2).Equal(want.Round(2)) {
		t.Fatalf("replay P&L %s, the portfolio backtest's %s", a.Replay, want)
	}

	// Fill price: each live fill against the model's fill at its bar's
	// close (the close with the model's slippage), for what live filled.
	intents, err := g.store.Intents(dep.ID)
	if err != nil {
		t.Fatal(err)
	}
	slip := decimal.NewFromFloat(vc.SlippageBps).Shift(-4)
	var price decimal.Decimal
	fills := 0
	for _, in := range intents {
		if !in.Filled.IsPositive() {
			continue
		}
		fills++
		b := all[series[in.N]]
		c := decimal.NewFromFloat(b.Close[index(b, in.Bar.Unix())])
		model := c.Mul(decimal.NewFromInt(1).Add(slip))
		if in.Side == "sell" {
			model = c.Mul(decimal.NewFromInt(1).Sub(slip))
		}
		q := in.Filled
		if in.Side == "sell" {
			q = q.Neg()
		}
		price = price.Add(q.Mul(model.Sub(in.Price)))
	}
	if fills < 10 || !tot.Price.Money.Round(4).Equal(price.Round(4)) || !tot.Price.Money.IsNegative() && !tot.Price.Money.IsPositive() {
		t.Fatalf("%d fills: fill price part %s, the journal's slip %s", fills, tot.Price.Money, price)
	}
	if tot.Gap.Money.IsZero() || !a.Capital.Equal(dep.Capital) || !tot.Gap.Bps.Equal(tot.Gap.Money.Shift(4).DivRound(dep.Capital, 2)) {
		t.Fatalf("gap %s (%s bps) of capital %s", tot.Gap.Money, tot.Gap.Bps, a.Capital)
	}
	t.Logf("%d fills; %s", fills, tot.Summary())
	for _, x := range a.Assets {
		t.Logf("%s: %s", x.Series, x.Total.Summary())
	}
}

// TestDeployPortfolioDriftBreaker: max_tracking_gap applies to a
// portfolio deployment (it was refused): fills that slip 2 % above the
// bar's close for the first bars leave the replay by more than 5 and the
// deployment pauses at the next close, naming the breaker, through the
// pause every breaker takes; without the slip it runs through.
func TestDeployPortfolioDriftBreaker(t *testing.T) {
	gap, err := backtest.ParseTrackingGap("5")
	if err != nil {
		t.Fatal(err)
	}
	_, dep, _, _ := slippedPortfolio(t, 60, 40, Allowance{MaxTrackingGap: &gap}, func(i int) float64 {
		if i < 3 {
			return 0.02
		}
		return 0
	})
	if dep.State != StatePaused || !strings.Contains(dep.Reason, backtest.AllowMaxTrackingGap) || !strings.Contains(dep.Reason, "from its replay's") {
		t.Fatalf("state %s (%s): want paused by %s", dep.State, dep.Reason, backtest.AllowMaxTrackingGap)
	}
	g, calm, _, _ := slippedPortfolio(t, 60, 40, Allowance{MaxTrackingGap: &gap}, func(int) float64 { return 0 })
	if calm.State != StateRunning {
		t.Fatalf("without slip: state %s (%s), want running", calm.State, calm.Reason)
	}
	rep, err := g.r.Report(ctxT(t), calm.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.Attribution; a == nil || a.Total.Gap.Money.Abs().GreaterThan(decimal.NewFromFloat(0.01)) {
		t.Fatalf("without slip the gap is %+v, want none", a)
	}
	t.Logf("paused: %s", dep.Reason)
}

// TestDeployPortfolioDriftPastTheReportWindow: a portfolio deployment
// tracking its replay to the cent runs on past the report's window of
// decisions under a tight max_tracking_gap: the drift breaker replays
// everything it decided, from the capital, not a later window that would
// start flat while live holds positions (a gap that is not drift).
func TestDeployPortfolioDriftPastTheReportWindow(t *testing.T) {
	t.Parallel() // long: it overlaps the forward tests in make test's plain step
	gap, err := backtest.ParseTrackingGap("2")
	if err != nil {
		t.Fatal(err)
	}
	g, dep, _, _ := slippedPortfolio(t, 60, MaxReportDecisions+100, Allowance{MaxTrackingGap: &gap}, func(int) float64 { return 0 })
	if dep.State != StateRunning {
		t.Fatalf("state %s (%s), want running", dep.State, dep.Reason)
	}
	l, err := g.r.get(dep.ID)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	d := *l.d
	gapNow, lv, replay, ok, gapErr := g.r.portfolioTrackingGap(ctxT(t), l, d.LastBar)
	l.mu.Unlock()
	// Live paid the costs of the last bar's orders at its close; the
	// replay fills them at the next open: that is the gap, to the cent.
	intents, err := g.store.Intents(dep.ID)
	if err != nil {
		t.Fatal(err)
	}
	var costs decimal.Decimal
	for _, in := range intents {
		if in.Bar.Equal(d.LastBar) && in.Filled.IsPositive() {
			c := d.Legs[in.N].Mark
			costs = costs.Add(in.Fee).Add(in.Filled.Mul(in.Price.Sub(c).Abs()))
		}
	}
	if gapErr != nil || !ok || !gapNow.Round(2).Equal(costs.Neg().Round(2)) {
		t.Fatalf("gap %s (live %s, replay %s, %v, %v): want the last bar's costs, %s", gapNow, lv, replay, ok, gapErr, costs.Neg())
	}
	// A fresh read of the journal (a restart) gives the same gap.
	var fresh live
	fresh.d = &d
	again, _, _, _, err := g.r.portfolioTrackingGap(ctxT(t), &fresh, d.LastBar)
	if err != nil || !again.Equal(gapNow) {
		t.Fatalf("fresh read: gap %s (%v), kept window %s", again, err, gapNow)
	}
	t.Logf("%d calendar bars: live %s, replay %s", MaxReportDecisions+100, lv.StringFixed(2), replay.StringFixed(2))
}

// BenchmarkPortfolioDriftCheck measures the portfolio drift breaker's
// check at a calendar close for a three-asset deployment that has
// decided n bars (its window kept: the replay of everything decided is
// what max_tracking_gap adds to a step).
func BenchmarkPortfolioDriftCheck(b *testing.B) {
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("decided=%d", n), func(b *testing.B) {
			gap := backtest.TrackingGap{Amount: decimal.NewFromInt(1_000_000)}
			g, dep, _, _ := slippedPortfolio(b, 60, n, Allowance{MaxTrackingGap: &gap}, func(int) float64 { return 0 })
			l, err := g.r.get(dep.ID)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, _, _, ok, err := g.r.portfolioTrackingGap(context.Background(), l, dep.LastBar); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
