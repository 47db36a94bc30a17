package portfolio

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/ta"
)

// benchAssets are 10 daily series of 10 years (3650 bars) on one calendar,
// each a different stretch of the smoke walk.
func benchAssets() []strategy.Bars {
	const n, shift = 3650, 211
	walk := script.SmokeBars(n + 10*shift)
	out := make([]strategy.Bars, 10)
	for k := range out {
		b := walk.Slice(k*shift, k*shift+n)
		b.Series = fmt.Sprintf("A%d-USD@1d", k)
		b.Time = make([]int64, n)
		for i := range b.Time {
			b.Time[i] = 1262304000 + int64(i)*86400 // from 2010-01-01
		}
		out[k] = b
	}
	return out
}

// The same rule both ways: hold an asset while its close is above its
// 200-bar SMA. As a portfolio, a tenth of equity each on one account,
// rebalanced weekly; as single runs, all of equity on each asset alone.
const (
	benchPortfolio = `universe = ["*-USD@1d"]
rebalance = "weekly"
def signals(u):
    return {a: (u[a].close > ta.sma(u[a].close, 200)) * 0.1 for a in u.assets}
`
	benchSingle = `def signals(bars):
    up = bars.close > ta.sma(bars.close, 200)
    return {"long": up, "exit": ~up}
`
)

// BenchmarkPortfolio10Assets10Years is a portfolio backtest as the worker
// runs one: the weights, the engine and the lookahead proof.
func BenchmarkPortfolio10Assets10Years(b *testing.B) {
	assets := benchAssets()
	prog, err := script.Compile(script.Source{Name: "bench.star", Text: benchPortfolio})
	if err != nil {
		b.Fatal(err)
	}
	reb, _ := ParseRebalance("weekly")
	cfg := backtest.DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		s, err := prog.Load(context.Background(), script.Options{Memo: ta.NewMemo(0)})
		if err != nil {
			b.Fatal(err)
		}
		w, tr, err := s.WeightsTrace(context.Background(), assets)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Run(context.Background(), assets, w, reb, cfg); err != nil {
			b.Fatal(err)
		}
		if c, err := s.CheckPortfolioLookahead(context.Background(), assets, tr); err != nil || !script.Passed(c) {
			b.Fatal(c, err)
		}
	}
}

// BenchmarkPortfolioEngine10Assets10Years is the engine alone, on
// weights computed once.
func BenchmarkPortfolioEngine10Assets10Years(b *testing.B) {
	assets := benchAssets()
	s, err := script.Load(context.Background(), script.Source{Name: "bench.star", Text: strings.Replace(benchPortfolio, `["*-USD@1d"]`, `["A0-USD@1d"]`, 1)}, script.Options{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := s.Weights(context.Background(), assets)
	if err != nil {
		b.Fatal(err)
	}
	reb, _ := ParseRebalance("weekly")
	cfg := backtest.DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), assets, w, reb, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSingle10Assets10Years is the same assets as 10 single-series
// backtests, each with its lookahead proof, as 10 worker requests run.
func BenchmarkSingle10Assets10Years(b *testing.B) {
	assets := benchAssets()
	prog, err := script.Compile(script.Source{Name: "bench.star", Text: benchSingle})
	if err != nil {
		b.Fatal(err)
	}
	cfg := backtest.DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		for _, bars := range assets {
			s, err := prog.Load(context.Background(), script.Options{Memo: ta.NewMemo(0)})
			if err != nil {
				b.Fatal(err)
			}
			sig, tr, err := s.SignalsTrace(context.Background(), bars)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := backtest.Run(context.Background(), bars, cfg, backtest.Decisions{Signals: &sig}); err != nil {
				b.Fatal(err)
			}
			if c, err := s.CheckLookahead(context.Background(), bars, tr); err != nil || !script.Passed(c) {
				b.Fatal(c, err)
			}
		}
	}
}

// BenchmarkPortfolioEngineRecorded is BenchmarkPortfolioEngine10Assets10Years
// with the per-bar record kept (Options.RecordHoldings), what a tear
// sheet's run pays; the benchmark without it is a sweep's path.
func BenchmarkPortfolioEngineRecorded(b *testing.B) {
	assets := benchAssets()
	s, err := script.Load(context.Background(), script.Source{Name: "bench.star", Text: strings.Replace(benchPortfolio, `["*-USD@1d"]`, `["A0-USD@1d"]`, 1)}, script.Options{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := s.Weights(context.Background(), assets)
	if err != nil {
		b.Fatal(err)
	}
	reb, _ := ParseRebalance("weekly")
	cfg := backtest.DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RunFrom(context.Background(), assets, w, reb, cfg, Options{RecordHoldings: true}); err != nil {
			b.Fatal(err)
		}
	}
}
