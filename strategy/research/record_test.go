package research

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/ledger"
)

// ledgerLocal is a Local over the demo project recording to a fresh
// ledger.
func ledgerLocal(t *testing.T) (*Local, *ledger.Ledger) {
	t.Helper()
	lg, err := ledger.Open(filepath.Join(t.TempDir(), "research.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	return NewLocal(Config{Project: demoProject(t), Research: project.Defaults().Research, Pool: newPool(t, 2), Recorder: lg}), lg
}

func variance(x []float64) float64 {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x)-1)
}

// TestSweepRecordsAndDeflatesOverTheLedger: a sweep appends one row per
// combination under one run id and the caller's Who; its second deflated
// Sharpe ratio uses N and V of every ledger trial of the strategy on the
// series (earlier trials of other versions included, other strategies and
// series not), while the first uses the sweep's own.
func TestSweepRecordsAndDeflatesOverTheLedger(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ledger.WithWho(ctxT(t), ledger.Who{Surface: ledger.SurfaceMCP, Session: "sess-1", Caller: "alice"})
	// Earlier trials: the same strategy under another source digest, and
	// two that must not count.
	earlier := []float64{0.05, -0.02, 0.01, 0.08, -0.04}
	var seed []ledger.Row
	for _, sr := range earlier {
		seed = append(seed, ledger.Row{Kind: ledger.KindBacktest, Who: ledger.Who{Surface: ledger.SurfaceCLI}, Strategy: "sma_cross", Digest: "older", Series: "ETH-USD@1d", SharpePerPeriod: sr})
	}
	seed = append(seed,
		ledger.Row{Kind: ledger.KindBacktest, Strategy: "other", Series: "ETH-USD@1d", SharpePerPeriod: 0.5},
		ledger.Row{Kind: ledger.KindBacktest, Strategy: "sma_cross", Series: "BTC-USD@1d", SharpePerPeriod: 0.5},
		ledger.Row{Kind: ledger.KindWalkForward, Strategy: "sma_cross", Series: "ETH-USD@1d", SharpePerPeriod: 0.5})
	if _, err := lg.Append(context.Background(), seed); err != nil {
		t.Fatal(err)
	}

	req := SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "ETH-USD@1d", Grid: smaGrid(), From: "2018-01-01"}
	res, err := l.Sweep(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID == "" {
		t.Fatal("the sweep carries no run id")
	}
	rows, total, err := lg.Query(context.Background(), ledger.Filter{RunID: res.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if total != 18 || len(rows) != 18 {
		t.Fatalf("%d rows for run %s, want one per combination (18)", total, res.RunID)
	}
	var sweepSRs []float64
	for _, r := range rows {
		if r.Kind != ledger.KindSweep || r.Strategy != "sma_cross" || r.Series != "ETH-USD@1d" || r.Who.Session != "sess-1" || r.Who.Caller != "alice" ||
			r.Digest != ledger.SourceDigest(req.Source) || r.From != "2018-01-01T00:00:00Z" {
			t.Fatalf("row %+v", r)
		}
		if !math.IsNaN(r.SharpePerPeriod) {
			sweepSRs = append(sweepSRs, r.SharpePerPeriod)
		}
	}
	d, ld := res.DeflatedSharpe, res.LedgerDeflatedSharpe
	if d == nil || ld == nil || d.DSR == nil || ld.DSR == nil {
		t.Fatalf("deflated %+v, over the ledger %+v", d, ld)
	}
	if d.Trials != len(sweepSRs) || ld.Trials != len(sweepSRs)+len(earlier) {
		t.Fatalf("N: sweep %d (want %d), ledger %d (want %d)", d.Trials, len(sweepSRs), ld.Trials, len(sweepSRs)+len(earlier))
	}
	all := append(append([]float64(nil), earlier...), sweepSRs...)
	sr, skew, kurt := float64(*d.Sharpe), float64(*d.Skewness), float64(*d.Kurtosis)
	want, sr0 := DeflatedSharpeRatio(sr, len(all), variance(all), skew, kurt, d.Returns)
	if math.Abs(*ld.DSR-want) > 1e-5 || math.Abs(*ld.ExpectedMaxSharpe-sr0) > 1e-6*math.Abs(sr0)+1e-9 {
		t.Fatalf("ledger DSR %v SR0 %v, want %v and %v", *ld.DSR, *ld.ExpectedMaxSharpe, want, sr0)
	}
	if math.Abs(*ld.TrialsVariance-variance(all)) > 1e-6*variance(all) {
		t.Fatalf("ledger V %v, want %v", *ld.TrialsVariance, variance(all))
	}
	// 18 combinations: the probability of backtest overfitting is there.
	if o := res.Overfitting; o == nil || o.PBO == nil || o.Splits != 12870 || o.Combinations != 18 || o.Blocks != 16 {
		t.Fatalf("overfitting %+v", res.Overfitting)
	}

	// A second sweep counts the first: N grows by its trials.
	res2, err := l.Sweep(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res2.LedgerDeflatedSharpe.Trials != ld.Trials+len(sweepSRs) || res2.DeflatedSharpe.Trials != d.Trials {
		t.Fatalf("second sweep: ledger N %d, sweep N %d", res2.LedgerDeflatedSharpe.Trials, res2.DeflatedSharpe.Trials)
	}
	rep, err := lg.Verify(context.Background())
	if err != nil || !rep.OK() || rep.Rows != len(seed)+36 {
		t.Fatalf("verify %+v %v", rep, err)
	}
}

// TestBacktestAndWalkForwardRecord: a backtest is one row whose
// per-period Sharpe ratio is the report's over sqrt(periods_per_year); a
// walk-forward is one row; a small sweep reports no PBO and says why.
func TestBacktestAndWalkForwardRecord(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ledger.WithWho(ctxT(t), ledger.Who{Surface: ledger.SurfaceCLI})
	ref := templateRef(t, "sma_cross")
	bt, err := l.Backtest(ctx, BacktestRequest{StrategyRef: ref, Series: "BTC-USD@1d", Params: map[string]any{"fast": 10}})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lg.Query(context.Background(), ledger.Filter{RunID: bt.RunID})
	if err != nil || len(rows) != 1 {
		t.Fatalf("backtest run %q: %d rows, %v", bt.RunID, len(rows), err)
	}
	var rep struct {
		Metrics struct {
			Sharpe         float64 `json:"sharpe"`
			PeriodsPerYear float64 `json:"periods_per_year"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(bt.Result, &rep); err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.Kind != ledger.KindBacktest || r.Who.Surface != ledger.SurfaceCLI || r.Strategy != "sma_cross" ||
		math.Abs(r.SharpePerPeriod-rep.Metrics.Sharpe/math.Sqrt(rep.Metrics.PeriodsPerYear)) > 1e-12 {
		t.Fatalf("row %+v", r)
	}
	var params map[string]any
	if err := json.Unmarshal(r.Params, &params); err != nil || params["fast"] != 10.0 {
		t.Fatalf("params %s", r.Params)
	}

	grid := Grid{"fast": {Values: []any{5.0, 10.0}}}
	wf, err := l.WalkForward(ctx, WalkForwardRequest{StrategyRef: ref, Series: "BTC-USD@1d", Grid: grid, Windows: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err = lg.Query(context.Background(), ledger.Filter{RunID: wf.RunID})
	if err != nil || len(rows) != 1 || rows[0].Kind != ledger.KindWalkForward {
		t.Fatalf("walk-forward run %q: %v %v", wf.RunID, rows, err)
	}
	sw, err := l.Sweep(ctx, SweepRequest{StrategyRef: ref, Series: "BTC-USD@1d", Grid: grid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := sw.Overfitting; o == nil || o.PBO != nil || o.Note == "" {
		t.Fatalf("a 2-combination sweep's overfitting: %+v", o)
	}
	// Only backtests and sweep combinations are trials of the DSR.
	if sw.LedgerDeflatedSharpe == nil || sw.LedgerDeflatedSharpe.Trials != 3 {
		t.Fatalf("ledger DSR over %+v, want the backtest and the two combinations", sw.LedgerDeflatedSharpe)
	}
}

// TestLedgerFailureIsAWarning: a ledger that cannot be written (here a
// closed one) leaves the research standing, with a warning saying its
// trials are missing from the count.
func TestLedgerFailureIsAWarning(t *testing.T) {
	l, lg := ledgerLocal(t)
	lg.Close()
	ref := templateRef(t, "sma_cross")
	bt, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: ref, Series: "BTC-USD@1d"})
	if err != nil {
		t.Fatal(err)
	}
	if bt.RunID != "" || !strings.Contains(bt.LedgerWarning, "the research ledger did not record this run") {
		t.Fatalf("backtest: run id %q, warning %q", bt.RunID, bt.LedgerWarning)
	}
	sw, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: ref, Series: "BTC-USD@1d", Grid: Grid{"fast": {Values: []any{5.0, 10.0}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sw.RunID != "" || sw.LedgerDeflatedSharpe != nil || sw.DeflatedSharpe == nil || !strings.Contains(strings.Join(sw.Warnings, "\n"), "missing from the ledger's count") {
		t.Fatalf("sweep: run id %q, ledger DSR %+v, warnings %q", sw.RunID, sw.LedgerDeflatedSharpe, sw.Warnings)
	}
}
