package research

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestSeriesSetSweep: a list and a pattern name the same series set; each
// combination's pooled figures follow from its per-series ones by the
// definitions in docs/strategies.md, and each per-series entry equals the
// single-series sweep's metrics for those params.
func TestSeriesSetSweep(t *testing.T) {
	l := newLocal(t, 2)
	ref := templateRef(t, "sma_cross")
	grid := Grid{"fast": {Values: []any{5.0, 10.0}}, "slow": {Values: []any{30.0, 60.0}}}
	byList, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: ref, Series: "BTC-USD@1d, ETH-USD@1d", Grid: grid, Top: MaxTop}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(byList.SeriesSet) != 2 || byList.Evaluated != 4 || len(byList.Top) != 4 || len(byList.PerSeries) != 2 {
		t.Fatalf("series set %q evaluated %d top %d per-series %d", byList.SeriesSet, byList.Evaluated, len(byList.Top), len(byList.PerSeries))
	}
	all, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: ref, Series: "*@1d", Grid: grid, Top: MaxTop}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.SeriesSet) < 3 || !strings.HasSuffix(all.SeriesSet[0], "@1d") {
		t.Fatalf("*@1d matched %q", all.SeriesSet)
	}
	single := map[string]map[string]json.RawMessage{} // series → params → metrics
	for _, s := range byList.SeriesSet {
		one, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: ref, Series: s, Grid: grid, Top: MaxTop}, nil)
		if err != nil {
			t.Fatal(err)
		}
		single[s] = map[string]json.RawMessage{}
		for _, tr := range one.Top {
			single[s][fmtParams(tr.Params)] = tr.Metrics
		}
	}
	prev := math.Inf(1)
	for _, tr := range byList.Top {
		var pooled Pooled
		if err := json.Unmarshal(tr.Metrics, &pooled); err != nil {
			t.Fatal(err)
		}
		var sumTR, sumSharpe, worst float64
		trades := 0
		for _, sm := range tr.Series {
			if want := single[sm.Series][fmtParams(tr.Params)]; string(sm.Metrics) != string(want) {
				t.Errorf("%s %s: series-set metrics differ from the single sweep's", sm.Series, fmtParams(tr.Params))
			}
			var m struct {
				TotalReturn, Sharpe, MaxDrawdown float64
				Trades                           int
			}
			json.Unmarshal(sm.Metrics, &m)
			var raw map[string]any
			json.Unmarshal(sm.Metrics, &raw)
			m.TotalReturn, m.Sharpe, m.MaxDrawdown = raw["total_return"].(float64), raw["sharpe"].(float64), raw["max_drawdown"].(float64)
			sumTR += m.TotalReturn
			sumSharpe += m.Sharpe
			worst = max(worst, m.MaxDrawdown)
			trades += m.Trades
		}
		n := float64(len(tr.Series))
		if pooled.Series != 2 || pooled.Trades != trades || math.Abs(*pooled.TotalReturn-sumTR/n) > 2e-6 ||
			math.Abs(*pooled.Sharpe-sumSharpe/n) > 2e-6 || math.Abs(*pooled.MaxDrawdown-worst) > 2e-6 {
			t.Errorf("%s: pooled %+v from total returns mean %v, sharpe mean %v, worst drawdown %v, trades %d",
				fmtParams(tr.Params), pooled, sumTR/n, sumSharpe/n, worst, trades)
		}
		if *tr.Score > prev {
			t.Errorf("rank %d is out of order", tr.Rank)
		}
		prev = *tr.Score
	}
	for _, ps := range byList.PerSeries {
		if ps.DeflatedSharpe == nil || ps.Evaluated != 4 {
			t.Errorf("per series %+v", ps)
		}
	}
}

// TestSeriesSetBounds: patterns that match nothing, malformed patterns,
// empty elements, too many series, and a rank metric without a pooled
// form are refused before any work.
func TestSeriesSetBounds(t *testing.T) {
	l := newLocal(t, 1)
	ref := templateRef(t, "sma_cross")
	grid := Grid{"fast": {Values: []any{5.0}}}
	long := strings.Repeat("BTC-USD@1d,", MaxSeriesSet) + "ETH-USD@1d"
	for _, tc := range []struct {
		series, rankBy, want string
		kind                 Kind
	}{
		{"*@4h", "", "matches no stored series", KindNotFound},
		{"[@1d", "", "malformed", KindInvalid},
		{"BTC-USD@1d,,ETH-USD@1d", "", "empty element", KindInvalid},
		{"BTC-USD@1d,nope", "", "SYMBOL@GRANULARITY", KindInvalid},
		{"*@1d", RankProfitFactor, "no pooled form", KindInvalid},
		{long, "", "", ""},
	} {
		_, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: ref, Series: tc.series, Grid: grid, RankBy: tc.rankBy}, nil)
		if tc.kind == "" {
			if err != nil {
				t.Errorf("%.40s: a repeated series counts once: %v", tc.series, err)
			}
			continue
		}
		var re *Error
		if !errors.As(err, &re) || re.Kind != tc.kind || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a %s error containing %q", tc.series, err, tc.kind, tc.want)
		}
	}
	var distinct []string
	for i := range MaxSeriesSet + 1 {
		distinct = append(distinct, "S"+strconv.Itoa(i)+"@1d")
	}
	if _, _, err := l.seriesSet(strings.Join(distinct, ",")); err == nil || !strings.Contains(err.Error(), "at most 32") {
		t.Errorf("%d series: %v", len(distinct), err)
	}
	var many []string
	for _, s := range []string{"BTC-USD", "ETH-USD", "SOL-USD", "SPY"} {
		for _, g := range []string{"1h", "1d"} {
			many = append(many, s+"@"+g)
		}
	}
	if _, _, err := l.seriesSet(strings.Join(many, ",")); err != nil {
		t.Errorf("eight series: %v", err)
	}
}

// TestSeriesSetBacktestAndWalkForward: a series-set backtest holds each
// series' own report and pools them; a series-set walk-forward holds each
// series' analysis and pools their out-of-sample figures.
func TestSeriesSetBacktestAndWalkForward(t *testing.T) {
	l := newLocal(t, 2)
	ref := templateRef(t, "sma_cross")
	res, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: ref, Series: "BTC-USD@1d,SPY@1d"})
	if err != nil {
		t.Fatal(err)
	}
	var u SeriesSetBacktest
	if err := json.Unmarshal(res.Result, &u); err != nil {
		t.Fatal(err)
	}
	if len(u.Results) != 2 || u.Pooled.Series != 2 || !strings.Contains(res.Text, "pooled over 2 series") {
		t.Fatalf("%+v\n%s", u.Pooled, res.Text)
	}
	trades := 0
	for _, r := range u.Results {
		one, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: ref, Series: r.Series})
		if err != nil {
			t.Fatal(err)
		}
		if string(one.Result) != string(r.Result) {
			t.Errorf("%s: the series set's report differs from the series' own", r.Series)
		}
		var m struct{ Metrics struct{ Trades int } }
		json.Unmarshal(r.Result, &m)
		trades += m.Metrics.Trades
	}
	if u.Pooled.Trades != trades {
		t.Errorf("pooled trades %d, want %d", u.Pooled.Trades, trades)
	}
	if _, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: ref, Series: "*@1d", Plot: true}); err == nil {
		t.Error("a series-set plot was drawn")
	}

	wf, err := l.WalkForward(ctxT(t), WalkForwardRequest{StrategyRef: ref, Series: "BTC-USD@1d,ETH-USD@1d",
		Grid: Grid{"fast": {Values: []any{5.0, 10.0}}}, Windows: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(wf.PerSeries) != 2 || wf.Pooled == nil || wf.Pooled.Series != 2 || len(wf.PerSeries[0].Windows) != 3 {
		t.Fatalf("walk-forward over a series set: %d per series, pooled %+v", len(wf.PerSeries), wf.Pooled)
	}
	mean := (*wf.PerSeries[0].OutOfSample.TotalReturn + *wf.PerSeries[1].OutOfSample.TotalReturn) / 2
	if math.Abs(*wf.Pooled.TotalReturn-mean) > 2e-6 {
		t.Errorf("pooled out-of-sample return %v, want the mean %v", *wf.Pooled.TotalReturn, mean)
	}
}
