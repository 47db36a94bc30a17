package research

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/strategy/ledger"
)

// ledgerLocal is a Local over the demo project recording to a fresh
// ledger.
func ledgerLocal(t *testing.T) (*Local, *ledger.Ledger) {
	t.Helper()
	lg, err := ledger.Open(filepath.Join(t.TempDir(), "research.db"), ledger.Options{Key: testkit.Bytes(t, 32)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	return NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Research: project.Defaults().Research, Pool: newPool(t, 2), Recorder: lg}), lg
}

// TestSweepRecordsAndDeflatesOverTheLedger: a sweep appends one row per
// combination under one run id and the caller's Who; its second deflated
// Sharpe ratio, deflated by the strategy, uses N and V of every ledger
// trial of the strategy on the series (earlier trials of other versions
// included, other strategies and series not), and by default those of
// every strategy on the series, while the first uses the sweep's own.
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

	req := SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "ETH-USD@1d", Grid: smaGrid(), From: "2018-01-01", DeflateBy: ledger.ScopeStrategy}
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

	if ld.Scope != ledger.ScopeStrategy || ld.StrategyTrials != ld.Trials || ld.SeriesTrials != ld.Trials+1 {
		t.Fatalf("ledger counts: %+v, want the strategy's N and the series' one more (the other strategy's backtest)", ld)
	}
	// A second sweep, deflated by the series (the default), counts the
	// first and the other strategy's trial: N grows by both.
	req.DeflateBy = ""
	res2, err := l.Sweep(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l2 := res2.LedgerDeflatedSharpe; l2.Trials != ld.Trials+len(sweepSRs)+1 || l2.Scope != ledger.ScopeSeries || res2.DeflatedSharpe.Trials != d.Trials {
		t.Fatalf("second sweep: ledger N %d (%s), sweep N %d", l2.Trials, l2.Scope, res2.DeflatedSharpe.Trials)
	}
	req.DeflateBy = "everything"
	if _, err := l.Sweep(ctx, req, nil); err == nil || !strings.Contains(err.Error(), `deflate_by "everything" is not one of series, strategy`) {
		t.Fatalf("a bad deflate_by: %v", err)
	}
	rep, err := lg.Verify(context.Background())
	if err != nil || !rep.OK() || rep.Rows != len(seed)+36 {
		t.Fatalf("verify %+v %v", rep, err)
	}
}

// TestBacktestAndWalkForwardRecord: a backtest is one row whose
// per-period Sharpe ratio is the report's over sqrt(periods_per_year); a
// walk-forward is a row per in-sample combination of each window and one
// for the run; a small sweep reports no PBO and says why.
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
	if err != nil || len(rows) != 7 || rows[6].Kind != ledger.KindWalkForward {
		t.Fatalf("walk-forward run %q: %v %v", wf.RunID, rows, err)
	}
	for k, r := range rows[:6] {
		w := wf.Windows[k/2]
		if r.Kind != ledger.KindInSample || r.From != w.InSample.From || r.To != w.InSample.To || math.IsNaN(r.SharpePerPeriod) {
			t.Fatalf("in-sample row %d: %+v, window %+v", k, r, w)
		}
	}
	sw, err := l.Sweep(ctx, SweepRequest{StrategyRef: ref, Series: "BTC-USD@1d", Grid: grid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := sw.Overfitting; o == nil || o.PBO != nil || o.Note == "" {
		t.Fatalf("a 2-combination sweep's overfitting: %+v", o)
	}
	// The backtest, the walk-forward's 6 in-sample combinations and the
	// sweep's two are trials; the walk-forward's own row is not.
	if sw.LedgerDeflatedSharpe == nil || sw.LedgerDeflatedSharpe.Trials != 9 {
		t.Fatalf("ledger DSR over %+v, want the backtest, the 6 in-sample and the two combinations", sw.LedgerDeflatedSharpe)
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

// TestEveryTrialCounts: N over the ledger counts failed combinations and
// walk-forward in-sample combinations, an unlabelled inline source is
// recorded under its content hash, and a renamed copy of a strategy
// cannot start its count again: deflated by the series (the default), its
// N holds the original's trials.
func TestEveryTrialCounts(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	src := "\"\"\"Fails for odd n.\"\"\"\nn = param.int(\"n\", 2, min=1, max=10)\ndef signals(bars):\n    if n % 2 == 1:\n        fail(\"odd n\")\n    return {\"long\": ta.cross_above(bars.close, ta.sma(bars.close, n * 5))}\n"
	grid := Grid{"n": {From: fp(1), To: fp(6)}}
	sw, err := l.Sweep(ctx, SweepRequest{StrategyRef: StrategyRef{Source: src}, Series: "BTC-USD@1d", Grid: grid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := "source-" + ledger.SourceDigest(src)[:12]
	if d := sw.LedgerDeflatedSharpe; sw.Failed != 3 || d == nil || d.Trials != 6 || sw.DeflatedSharpe.Trials != 6 {
		t.Fatalf("failed %d, ledger DSR %+v, sweep N %d: want the 3 failed combinations counted", sw.Failed, sw.LedgerDeflatedSharpe, sw.DeflatedSharpe.Trials)
	}
	rows, _, err := lg.Query(ctx, ledger.Filter{RunID: sw.RunID})
	if err != nil || len(rows) != 6 || rows[0].Strategy != name {
		t.Fatalf("rows %v %v, want 6 under %s", rows, err, name)
	}
	// Another inline source is not pooled with it.
	other := strings.Replace(src, "n * 5", "n * 6", 1)
	if _, err := l.Backtest(ctx, BacktestRequest{StrategyRef: StrategyRef{Source: other}, Series: "BTC-USD@1d", Params: map[string]any{"n": 2}}); err != nil {
		t.Fatal(err)
	}
	wf, err := l.WalkForward(ctx, WalkForwardRequest{StrategyRef: StrategyRef{Source: src}, Series: "BTC-USD@1d", Grid: Grid{"n": {Values: []any{2.0, 4.0}}}, Windows: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(wf.Windows) != 3 {
		t.Fatalf("walk-forward windows %d", len(wf.Windows))
	}
	// The same text renamed: by the series, every trial so far and its
	// own; by the strategy, its own alone.
	renamed := SweepRequest{StrategyRef: StrategyRef{Source: src, Label: "renamed.star"}, Series: "BTC-USD@1d", Grid: grid}
	again, err := l.Sweep(ctx, renamed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := again.LedgerDeflatedSharpe; d.Trials != 6+1+6+6 || d.StrategyTrials != 6 || d.SeriesTrials != 19 {
		t.Fatalf("renamed, by the series: %+v, want N 19 (6 + 1 + 6 in-sample + 6)", d)
	}
	renamed.DeflateBy = ledger.ScopeStrategy
	own, err := l.Sweep(ctx, renamed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := own.LedgerDeflatedSharpe; d.Trials != 12 || d.SeriesTrials != 25 {
		t.Fatalf("renamed, by the strategy: %+v, want N 12 (its two sweeps)", d)
	}
	// Issue 44 item 13: the smaller N is the caller's choice, so the answer
	// says so and carries the series-wide figure beside it.
	wide := again.LedgerDeflatedSharpe
	if d := own.LedgerDeflatedSharpe; d.SeriesDSR == nil || wide.DSR == nil {
		t.Fatalf("renamed, by the strategy: series_dsr %v (the series-wide DSR %v)", d.SeriesDSR, wide.DSR)
	}
	warned := false
	for _, w := range own.Warnings {
		warned = warned || (strings.Contains(w, "deflate_by strategy") && strings.Contains(w, "only renamed's 12 trials of the 25 on BTC-USD@1d"))
	}
	if !warned {
		t.Errorf("deflated by the strategy without a warning: %q", own.Warnings)
	}
	for _, w := range again.Warnings {
		if strings.Contains(w, "deflate_by") {
			t.Errorf("the default scope warns: %q", w)
		}
	}
	set, err := lg.Trials(ctx, ledger.TrialQuery{Strategy: name, Series: "BTC-USD@1d", Scope: ledger.ScopeStrategy})
	if err != nil || set.Strategy != 12 {
		t.Fatalf("%s's trials %+v %v, want its sweep's 6 and the walk-forward's 6 in-sample", name, set, err)
	}
}

// TestSeriesSetSweepRecords: a series-set sweep's combinations are trials on
// each of its series, recorded as one run.
func TestSeriesSetSweepRecords(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	res, err := l.Sweep(ctx, SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d,ETH-USD@1d", Grid: Grid{"fast": {Values: []any{5.0, 10.0}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lg.Query(ctx, ledger.Filter{RunID: res.RunID})
	if err != nil || res.RunID == "" || len(rows) != 4 {
		t.Fatalf("run %q: %d rows, %v; want 2 combinations on 2 series", res.RunID, len(rows), err)
	}
	for _, series := range []string{"BTC-USD@1d", "ETH-USD@1d"} {
		set, err := lg.Trials(ctx, ledger.TrialQuery{Strategy: "sma_cross", Series: series})
		if err != nil || set.Series != 2 || set.Strategy != 2 {
			t.Fatalf("%s: trials %+v %v", series, set, err)
		}
	}
}
