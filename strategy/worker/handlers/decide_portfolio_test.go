package handlers

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"wicket/strategy"
	"wicket/strategy/portfolio"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

const decideRotation = `universe = ["A-USD@1h", "B-USD@1h"]
rebalance = "daily"
def signals(u):
    mom = {a: ta.roc(u[a].close, 5) for a in u.assets}
    top = u.top(mom, 1)
    return {a: top[a] * 0.5 for a in u.assets}
`

// hourly is n 1h bars of series, a seeded walk, without the bars gap
// says.
func hourly(series string, n int, seed uint64, gap func(int) bool) strategy.Bars {
	b := strategy.Bars{Series: series}
	x, p := seed, 50.0
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).Unix()
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if gap != nil && gap(i) {
			continue
		}
		c := p * (1 + (float64(x%2001)-1000)/1000*0.01)
		b.Time = append(b.Time, t0+int64(i)*3600)
		b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, p), append(b.High, math.Max(p, c)), append(b.Low, math.Min(p, c)), append(b.Close, c), append(b.Volume, 1)
		p = c
	}
	return b
}

// TestDecidePortfolio: the weights a deployment is given at a bar are
// the portfolio backtest's at that bar (signals(universe) over the
// aligned assets, one missing bars), at every prefix of the calendar;
// without assets the request describes the strategy; an on_bar portfolio
// decides from the accounts given; a strategy of one series is refused.
func TestDecidePortfolio(t *testing.T) {
	ctx := context.Background()
	raw := []strategy.Bars{hourly("A-USD@1h", 120, 3, nil), hourly("B-USD@1h", 120, 5, func(i int) bool { return i%9 == 4 })}
	assets, err := portfolio.Align(raw)
	if err != nil {
		t.Fatal(err)
	}
	s, err := script.Load(ctx, script.Source{Name: "rot.star", Text: decideRotation}, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Weights(ctx, assets)
	if err != nil {
		t.Fatal(err)
	}
	req := worker.PortfolioDecideRequest{StrategyRequest: worker.StrategyRequest{Name: "rot.star", Source: decideRotation}, Series: []string{"A-USD@1h", "B-USD@1h"}}
	cal := assets[0].Time
	for i := 10; i < len(cal); i++ {
		req.Assets = req.Assets[:0]
		for _, b := range raw {
			k := 0
			for k < b.Len() && b.Time[k] <= cal[i] {
				k++
			}
			req.Assets = append(req.Assets, b.Slice(0, k).Encode())
		}
		got, err := DecidePortfolio(ctx, req, ta.NewMemo(0))
		if err != nil {
			t.Fatal(err)
		}
		if got.Time != cal[i] || got.Rebalance != "daily" || len(got.Weights) != 2 {
			t.Fatalf("bar %d: %+v", i, got)
		}
		for a := range raw {
			w := want[a][i]
			if got.Has[a] != !math.IsNaN(w) || (got.Has[a] && got.Weights[a] != w) {
				t.Fatalf("bar %d, asset %d: decided %v (has %v), the backtest's weight %v", i, a, got.Weights[a], got.Has[a], w)
			}
		}
	}
	desc, err := DecidePortfolio(ctx, worker.PortfolioDecideRequest{StrategyRequest: req.StrategyRequest}, ta.NewMemo(0))
	if err != nil || strings.Join(desc.Universe, ",") != "A-USD@1h,B-USD@1h" || desc.Rebalance != "daily" || desc.Weights != nil {
		t.Fatalf("described as %+v (%v)", desc, err)
	}
	// An on_bar portfolio reads the account at each close: the capital
	// in cash before the first account given, then each account from its
	// time on.
	onBar := worker.PortfolioDecideRequest{StrategyRequest: worker.StrategyRequest{Name: "ob.star", Source: `universe = ["A-USD@1h", "B-USD@1h"]
def setup(ctx):
    pass
def on_bar(ctx):
    if ctx.cash > 5000 and ctx.positions["B-USD@1h"] == 0:
        ctx.target("A-USD", 0.5)
`}, Series: req.Series, Assets: req.Assets, Capital: 10000}
	got, err := DecidePortfolio(ctx, onBar, ta.NewMemo(0))
	if err != nil || !got.Has[0] || got.Weights[0] != 0.5 || got.Has[1] {
		t.Fatalf("on_bar with the capital in cash: %+v (%v)", got, err)
	}
	onBar.Accounts = []worker.PortfolioAccount{{Time: cal[len(cal)-1], Cash: 9000, Equity: 10000, Positions: []float64{0, 20}}}
	if got, err = DecidePortfolio(ctx, onBar, ta.NewMemo(0)); err != nil || got.Has[0] {
		t.Fatalf("on_bar holding B at the last bar: %+v (%v)", got, err)
	}
	onBar.Accounts[0].Positions = []float64{1}
	if _, err = DecidePortfolio(ctx, onBar, ta.NewMemo(0)); err == nil || !strings.Contains(err.Error(), "1 positions for 2 assets") {
		t.Fatalf("an account of the wrong shape: %v", err)
	}
	one := worker.PortfolioDecideRequest{StrategyRequest: worker.StrategyRequest{Name: "one.star", Source: "def signals(bars):\n    return {\"long\": bars.close > 0}\n"}}
	if _, err := DecidePortfolio(ctx, one, ta.NewMemo(0)); err == nil || !strings.Contains(err.Error(), "declares no universe") {
		t.Fatalf("a strategy of one series: %v", err)
	}
}
