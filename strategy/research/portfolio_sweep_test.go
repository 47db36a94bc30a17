package research

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"wicket/strategy/ledger"
)

// TestPortfolioSweep: a 2-knob grid over the momentum_rotation template
// (no series: it declares its universe) runs each combination as a
// portfolio backtest, with the same metrics as that backtest run alone;
// every combination is a ledger row under the universe's label and the
// deflated Sharpe ratio counts them all; PBO is computed from the
// combinations' equity-curve returns; the winner is proven free of
// lookahead.
func TestPortfolioSweep(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	ref := templateRef(t, "momentum_rotation")
	grid := Grid{"lookback": {Values: []any{20, 30, 45, 60, 90, 120}}, "k": {Values: []any{1, 2, 3}}}
	res, err := l.Sweep(ctx, SweepRequest{StrategyRef: ref, Grid: grid, From: "2022-01-01", Top: MaxTop}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const universe = "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d"
	if res.Series != universe || res.Combinations != 18 || res.Evaluated != 18 || res.Failed != 0 || len(res.Top) != 18 {
		t.Fatalf("series %q, %d combinations, %d evaluated, %d failed, %d ranked", res.Series, res.Combinations, res.Evaluated, res.Failed, len(res.Top))
	}
	if strings.Join(res.Knobs, ",") != "lookback,k" {
		t.Errorf("knobs %v", res.Knobs)
	}
	for i := 1; i < len(res.Top); i++ {
		a, b := res.Top[i-1].Score, res.Top[i].Score
		if a != nil && b != nil && *a < *b {
			t.Errorf("rank %d scores %v above rank %d's %v", i+1, *b, i, *a)
		}
	}
	// Each combination's metrics are its backtest's, run alone.
	for _, tr := range res.Top[:3] {
		alone, err := l.Backtest(ctx, BacktestRequest{StrategyRef: ref, Params: tr.Params, From: "2022-01-01"})
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Metrics json.RawMessage `json:"metrics"`
		}
		if err := json.Unmarshal(alone.Result, &rep); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, rep.Metrics, tr.Metrics) {
			t.Errorf("params %v: sweep metrics %s, backtest alone %s", tr.Params, tr.Metrics, rep.Metrics)
		}
	}
	rows, total, err := lg.Query(context.Background(), ledger.Filter{RunID: res.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID == "" || total != 18 || len(rows) != 18 {
		t.Fatalf("run %q has %d rows, want one per combination (18)", res.RunID, total)
	}
	winners := 0
	for _, r := range rows {
		if r.Kind != ledger.KindSweep || r.Strategy != "momentum_rotation" || r.Series != universe {
			t.Fatalf("row %+v", r)
		}
		if bytes.Contains(r.Audit, []byte(`"winner":true`)) {
			winners++
		}
	}
	if res.DeflatedSharpe == nil || res.DeflatedSharpe.Trials != 18 {
		t.Errorf("deflated Sharpe %+v, want over the 18 trials", res.DeflatedSharpe)
	}
	// The ledger holds this sweep's rows and, since the backtests above
	// ran after it, the ledger-wide figure counts exactly the sweep's.
	if d := res.LedgerDeflatedSharpe; d == nil || d.Trials != total {
		t.Errorf("ledger deflated Sharpe %+v, want N = %d (the ledger's rows)", d, total)
	}
	if o := res.Overfitting; o == nil || o.PBO == nil || o.Combinations != 18 || o.Splits == 0 {
		t.Errorf("overfitting %+v, want PBO over the 18 combinations", o)
	}
	if !strings.HasPrefix(res.LookaheadCheck, "passed") {
		t.Errorf("lookahead check %q", res.LookaheadCheck)
	}
	if winners != 1 {
		t.Errorf("%d rows marked the winner, want 1", winners)
	}
}

// TestPortfolioSweepRefusals: a portfolio sweep checks its grid against
// the strategy's knobs, and a strategy without a universe needs a series.
func TestPortfolioSweepRefusals(t *testing.T) {
	l := newLocal(t, 1)
	ctx := ctxT(t)
	_, err := l.Sweep(ctx, SweepRequest{StrategyRef: templateRef(t, "momentum_rotation"), Grid: Grid{"nope": {Values: []any{1, 2}}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown knob: %v", err)
	}
	_, err = l.Sweep(ctx, SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Grid: Grid{"fast": {Values: []any{5, 10}}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "declares no universe") {
		t.Errorf("single-series strategy without a series: %v", err)
	}
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
