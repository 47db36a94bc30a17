package research

import (
	"context"
	"math"
	"strings"
	"testing"

	"wicket/strategy/ledger"
)

// sealTest seals plan name on the demo project's "mine" (sma_cross's
// text) on ETH-USD@1d with the holdout from 2023-01-01 on.
func sealTest(t *testing.T, l *Local, name string, budget int) PlanInfo {
	t.Helper()
	info, err := l.SealPlan(ctxT(t), PlanRequest{Name: name, Hypothesis: "crossings trend on ETH", Criteria: "oos_sharpe>=1, dsr>=0.95, pbo<=0.2, max_drawdown<=0.25, trades>=50",
		MaxTrials: budget, Holdout: "2023-01-01:", StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid()})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func wantRefused(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("not refused")
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("refusal %q does not say %q", err, w)
		}
	}
}

func TestPlanCriteriaParse(t *testing.T) {
	c, err := ParseCriteria("oos_sharpe>=1, dsr>=0.95, pbo<=0.2, max_drawdown<=0.25, trades>=50")
	if err != nil || len(c) != 5 || c[1] != (ledger.Criterion{Metric: "dsr", Op: ">=", Value: 0.95}) || c[3].String() != "max_drawdown<=0.25" {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []string{"", "sharpe>=1", "dsr=>0.9", "dsr>=x", "dsr>=1, dsr<=2", "trades 50"} {
		_, err := ParseCriteria(bad)
		wantRefused(t, err, "oos_sharpe, dsr, pbo", ">= <= > <")
	}
}

// TestPlanHoldoutIsNotRead: a sweep, optimisation or walk-forward of a
// planned strategy whose range reaches into the holdout is refused, and
// one with an open end is cut before it and says so.
func TestPlanHoldoutIsNotRead(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	sealTest(t, l, "eth-trend", 100)
	_, err := l.Sweep(ctx, SweepRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), From: "2018-01-01", To: "2023-06-30", Plan: "eth-trend"}, nil)
	wantRefused(t, err, "holdout", "eth-trend", "end the range before 2023-01-01")
	_, err = l.WalkForward(ctx, WalkForwardRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), To: "2024-01-01", Plan: "eth-trend"}, nil)
	wantRefused(t, err, "holdout")
	_, err = l.Optimize(ctx, OptimizeRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), From: "2023-02-01", Trials: 4, Plan: "eth-trend"}, nil)
	wantRefused(t, err, "holdout")

	res, err := l.Sweep(ctx, SweepRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), From: "2018-01-01", Plan: "eth-trend"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "cut to end at 2022-12-31T23:59:59Z") || res.Settings.To != "2022-12-31T23:59:59Z" {
		t.Fatalf("warnings %q, to %q", res.Warnings, res.Settings.To)
	}
	rows, _, err := lg.Query(ctx, ledger.Filter{RunID: res.RunID})
	if err != nil || len(rows) != 18 {
		t.Fatalf("%d rows %v", len(rows), err)
	}
	for _, r := range rows {
		if r.To >= "2023-01-01" {
			t.Fatalf("a trial read to %s", r.To)
		}
	}
}

// TestPlanBudget: trials under a plan count against its budget, in the
// ledger, and a run that would pass it is refused naming both numbers.
func TestPlanBudget(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ledger.WithWho(ctxT(t), ledger.Who{Surface: ledger.SurfaceCLI})
	sealTest(t, l, "budget", 30)
	req := SweepRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), To: "2022-06-30", Plan: "budget"}
	if _, err := l.Sweep(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	// Another surface, another engine over the same ledger.
	other := NewLocal(Config{Project: l.cfg.Project, Research: l.cfg.Research, Pool: l.cfg.Pool, Recorder: lg})
	mcp := ledger.WithWho(ctxT(t), ledger.Who{Surface: ledger.SurfaceMCP, Session: "s"})
	_, err := other.Sweep(mcp, req, nil)
	wantRefused(t, err, "budget is 30 trials and 18 are spent", "these 18")
	_, err = other.Optimize(mcp, OptimizeRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), To: "2022-06-30", Trials: 13, Plan: "budget"}, nil)
	wantRefused(t, err, "budget is 30 trials")
	if _, err := other.Optimize(mcp, OptimizeRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), To: "2022-06-30", Trials: 12, Batch: 4, Plan: "budget"}, nil); err != nil {
		t.Fatal(err)
	}
	p, err := lg.Plan(ctx, "budget")
	if err != nil || p.Trials != 30 {
		t.Fatalf("plan %+v %v", p, err)
	}
	_, err = l.WalkForward(ctx, WalkForwardRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: Grid{"fast": {Values: []any{5.0}}}, To: "2022-06-30", Plan: "budget"}, nil)
	wantRefused(t, err, "budget is 30 trials and 30 are spent")
}

// TestRenamedCopyCannotEscapeItsPlan: the same text under another name,
// without naming the plan, is counted against it and kept out of its
// holdout; a changed text cannot run under it.
func TestRenamedCopyCannotEscapeItsPlan(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	sealTest(t, l, "escape", 20)
	copyRef := templateRef(t, "sma_cross") // mine's text, labelled sma_cross.star
	_, err := l.Sweep(ctx, SweepRequest{StrategyRef: copyRef, Series: "ETH-USD@1d", Grid: smaGrid(), To: "2023-03-01"}, nil)
	wantRefused(t, err, "holdout", "escape")
	res, err := l.Sweep(ctx, SweepRequest{StrategyRef: copyRef, Series: "ETH-USD@1d", Grid: smaGrid()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), `counted against plan "escape"`) {
		t.Fatalf("warnings %q", res.Warnings)
	}
	if p, err := lg.Plan(ctx, "escape"); err != nil || p.Trials != 18 {
		t.Fatalf("plan %+v %v", p, err)
	}
	_, err = l.Sweep(ctx, SweepRequest{StrategyRef: copyRef, Series: "ETH-USD@1d", Grid: smaGrid(), To: "2022-01-01"}, nil)
	wantRefused(t, err, "budget is 20 trials and 18 are spent")
	changed := StrategyRef{Source: copyRef.Source + "\n# tweaked\n", Label: "mine2.star"}
	_, err = l.Sweep(ctx, SweepRequest{StrategyRef: changed, Series: "ETH-USD@1d", Grid: smaGrid(), To: "2022-01-01", Plan: "escape"}, nil)
	wantRefused(t, err, "content digest", "seal a new plan")
}

// TestPlanVerdictOnce: the verdict runs the holdout with the best trial's
// knobs, deflates by every trial of the plan, is recorded, and is refused
// the second time.
func TestPlanVerdictOnce(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	sealTest(t, l, "judged", 40)
	_, err := l.Verdict(ctx, VerdictRequest{Plan: "judged"})
	wantRefused(t, err, "none with a Sharpe ratio")
	fee := 25.0
	if _, err := l.Sweep(ctx, SweepRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), Plan: "judged",
		Costs: Costs{FeeBps: &fee}}, nil); err != nil {
		t.Fatal(err)
	}
	v, err := l.Verdict(ctx, VerdictRequest{Plan: "judged"})
	if err != nil {
		t.Fatal(err)
	}
	// The holdout run is the best trial's knobs under its costs, as a
	// plain sweep of them on the holdout reports it.
	plain := newLocal(t, 1)
	grid := Grid{}
	for k, x := range v.Params {
		grid[k] = GridSpec{Values: []any{x}}
	}
	hold, err := plain.Sweep(ctx, SweepRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: grid, From: "2023-01-01", Costs: Costs{FeeBps: &fee}}, nil)
	if err != nil || len(hold.Top) != 1 || string(hold.Top[0].Metrics) != string(v.Metrics) {
		t.Fatalf("holdout metrics %s, a plain sweep of the params on the holdout %s (%v)", v.Metrics, hold.Top[0].Metrics, err)
	}
	if v.Trials != 18 || v.Deflated == nil || v.Deflated.Trials != 18 || len(v.Judgements) != 5 || v.Seq == 0 || v.HoldoutFrom != "2023-01-01T00:00:00Z" {
		t.Fatalf("verdict %+v", v)
	}
	// N and V are the plan's trials' as the ledger holds them.
	pl, _ := lg.Plan(ctx, "judged")
	rows, err := lg.PlanTrials(ctx, pl)
	if err != nil || len(rows) != 18 {
		t.Fatalf("%d trials %v", len(rows), err)
	}
	var srs []float64
	for _, r := range rows {
		if !math.IsNaN(r.SharpePerPeriod) {
			srs = append(srs, r.SharpePerPeriod)
		}
	}
	d := v.Deflated
	want, _ := DeflatedSharpeRatio(*d.Sharpe, 18, variance(srs), *d.Skewness, *d.Kurtosis, d.Returns)
	if d.DSR == nil || math.Abs(*d.DSR-want) > 1e-5 || v.PBO == nil {
		t.Fatalf("dsr %v, want %v over the plan's 18 trials; pbo %v", d.DSR, want, v.PBO)
	}
	passed := true
	for _, j := range v.Judgements {
		passed = passed && j.Passed
	}
	if passed != v.Passed || !strings.Contains(v.Text(), "plan judged: ") {
		t.Fatalf("verdict %+v\n%s", v, v.Text())
	}
	_, err = l.Verdict(ctx, VerdictRequest{Plan: "judged"})
	wantRefused(t, err, "was judged at row", "run once")
	info, err := l.ShowPlan(ctx, "judged")
	if err != nil || info.Open || info.Verdict == nil || info.Verdict.Passed != v.Passed || info.Trials != 18 {
		t.Fatalf("plan %+v %v", info, err)
	}
	// A judged plan takes no more trials; its holdout is no longer kept.
	_, err = l.Sweep(ctx, SweepRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Grid: smaGrid(), Plan: "judged"}, nil)
	wantRefused(t, err, "takes no more trials")
	if got, err := PlanOf(context.Background(), lg, info.Digest); err != nil || got == nil || got.Name != "judged" || got.Verdict == nil {
		t.Fatalf("PlanOf %+v %v", got, err)
	}
}

// TestPlanVerdictOfInlineSource: a plan sealed on inline text, which no
// name finds again, is judged on the text its row keeps.
func TestPlanVerdictOfInlineSource(t *testing.T) {
	l, _ := ledgerLocal(t)
	ctx := ctxT(t)
	inline := StrategyRef{Source: templateRef(t, "sma_cross").Source + "\n# inline\n"}
	if _, err := l.SealPlan(ctx, PlanRequest{Name: "inline", Hypothesis: "h", Criteria: "trades>=1", MaxTrials: 20, Holdout: "2023-01-01:",
		StrategyRef: inline, Series: "ETH-USD@1d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Sweep(ctx, SweepRequest{StrategyRef: inline, Series: "ETH-USD@1d", Grid: smaGrid(), Plan: "inline"}, nil); err != nil {
		t.Fatal(err)
	}
	if v, err := l.Verdict(ctx, VerdictRequest{Plan: "inline"}); err != nil || v.Trials != 18 || len(v.Judgements) != 1 {
		t.Fatalf("verdict %+v %v", v, err)
	}
}
