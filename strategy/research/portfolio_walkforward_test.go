package research

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"wicket/strategy/ledger"
)

// TestPortfolioWalkForward: a portfolio strategy (no series) is walked
// forward over its universe's calendar: each window's in-sample sweep
// picks a winner that trades out of sample from the window's start only
// (its metrics start there), the windows report a deflated Sharpe ratio
// over their combinations and a PBO, the stitched curve covers the
// out-of-sample bars, every in-sample trial is a ledger row, and each
// winner is proven free of lookahead.
func TestPortfolioWalkForward(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	grid := Grid{"lookback": {Values: []any{10, 20, 30}}, "k": {Values: []any{1, 2}}}
	res, err := l.WalkForward(ctx, WalkForwardRequest{StrategyRef: templateRef(t, "momentum_rotation"), Grid: grid, From: "2022-01-01", Windows: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const universe = "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d"
	if res.Series != universe || len(res.Windows) != 3 || res.Partial || res.OutOfSample == nil || len(res.Equity) == 0 {
		t.Fatalf("series %q, %d windows, partial %v, out of sample %+v", res.Series, len(res.Windows), res.Partial, res.OutOfSample)
	}
	oosBars := 0
	for k, w := range res.Windows {
		if w.InSample.To >= w.OutOfSample.From || w.Evaluated != 6 {
			t.Errorf("window %d: in-sample %+v, out-of-sample %+v, %d evaluated", k+1, w.InSample, w.OutOfSample, w.Evaluated)
		}
		var m struct {
			Start string `json:"start"`
			Bars  int    `json:"bars"`
		}
		if err := json.Unmarshal(w.OutOfSampleMetrics, &m); err != nil {
			t.Fatal(err)
		}
		// Traded from the window's start only, the bars before it warming up.
		if m.Start != w.OutOfSample.From || m.Bars != w.OutOfSample.Bars {
			t.Errorf("window %d: out-of-sample metrics from %s over %d bars, want from %s over %d", k+1, m.Start, m.Bars, w.OutOfSample.From, w.OutOfSample.Bars)
		}
		oosBars += w.OutOfSample.Bars
		if d := w.DeflatedSharpe; d == nil || d.Trials != 6 {
			t.Errorf("window %d: deflated Sharpe %+v, want over its 6 combinations", k+1, d)
		}
		if w.Overfitting == nil || w.Overfitting.Note == "" {
			t.Errorf("window %d: overfitting %+v", k+1, w.Overfitting)
		}
		if !strings.HasPrefix(w.LookaheadCheck, "passed") {
			t.Errorf("window %d: lookahead %q", k+1, w.LookaheadCheck)
		}
	}
	if res.OutOfSample.Bars != oosBars || res.Equity[0].Time < res.Windows[0].OutOfSample.From {
		t.Errorf("stitched %d bars from %s, want the windows' %d from %s", res.OutOfSample.Bars, res.Equity[0].Time, oosBars, res.Windows[0].OutOfSample.From)
	}
	if !strings.HasPrefix(res.LookaheadCheck, "passed") {
		t.Errorf("lookahead %q", res.LookaheadCheck)
	}
	rows, total, err := lg.Query(context.Background(), ledger.Filter{RunID: res.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID == "" || total != 3*6+1 || len(rows) != total {
		t.Fatalf("run %q has %d rows, want 19 (18 in-sample trials and the walk-forward)", res.RunID, total)
	}
	for _, r := range rows {
		if r.Series != universe {
			t.Errorf("row %s under %q", r.Kind, r.Series)
		}
	}
}

// TestPortfolioWalkForwardRefusals: windows the calendar cannot hold and
// a strategy without a universe are refused before any sweep runs.
func TestPortfolioWalkForwardRefusals(t *testing.T) {
	l := newLocal(t, 1)
	ctx := ctxT(t)
	_, err := l.WalkForward(ctx, WalkForwardRequest{StrategyRef: templateRef(t, "momentum_rotation"), Grid: Grid{"k": {Values: []any{1, 2}}}, From: "2022-01-01", Windows: 3, InSample: Length{Bars: 100000}}, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot hold an in-sample window") {
		t.Errorf("windows too long: %v", err)
	}
	_, err = l.WalkForward(ctx, WalkForwardRequest{StrategyRef: templateRef(t, "sma_cross"), Grid: Grid{"fast": {Values: []any{5, 10}}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "declares no universe") {
		t.Errorf("single-series strategy without a series: %v", err)
	}
}
