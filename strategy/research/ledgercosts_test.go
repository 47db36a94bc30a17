package research

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
)

// TestLedgerRecordsCostsForEveryKind: a backtest, a sweep's combinations,
// a walk-forward's rows and an optimisation's trials each record the
// costs they ran under (fee, slippage, funding, borrow rate, leverage,
// volume cap) and the intrabar rule, in the one LedgerCosts shape.
func TestLedgerRecordsCostsForEveryKind(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ledger.WithWho(ctxT(t), ledger.Who{Surface: ledger.SurfaceCLI})
	ref := templateRef(t, "ema_long_short")
	f := func(v float64) *float64 { return &v }
	off := false
	costs := Costs{FeeBps: f(7), SlippageBps: f(3)}
	costs.BorrowRate, costs.Leverage, costs.MaxVolumePct, costs.Funding = f(0.2), f(4), f(0.5), &off
	series, from, rule := "ETH-USD@1d", "2022-01-01", "pessimistic"
	grid := Grid{"fast": {Values: []any{5.0, 10.0}}}

	bt, err := l.Backtest(ctx, BacktestRequest{StrategyRef: ref, Series: series, From: from, Costs: costs, Intrabar: rule})
	if err != nil {
		t.Fatal(err)
	}
	sw, err := l.Sweep(ctx, SweepRequest{StrategyRef: ref, Series: series, From: from, Grid: grid, Costs: costs, Intrabar: rule}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := l.WalkForward(ctx, WalkForwardRequest{StrategyRef: ref, Series: series, From: from, Grid: grid, Windows: 2, Costs: costs, Intrabar: rule}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(3)
	op, err := l.Optimize(ctx, OptimizeRequest{StrategyRef: ref, Series: series, From: from, Grid: Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}},
		Trials: 3, Seed: &seed, Batch: 3, Costs: costs, Intrabar: rule}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, id := range []string{bt.RunID, sw.RunID, wf.RunID, op.RunID} {
		rows, _, err := lg.Query(context.Background(), ledger.Filter{RunID: id})
		if err != nil || len(rows) == 0 {
			t.Fatalf("run %q: %d rows, %v", id, len(rows), err)
		}
		for _, r := range rows {
			kinds[r.Kind]++
			c := ReadLedgerCosts(r.Costs)
			if !c.Known() || c.Intrabar != rule || c.FeeBps != 7 || c.SlippageBps != 3 || c.Funding != "off" || c.Capital == "" {
				t.Errorf("%s row %d: costs %s", r.Kind, r.Seq, r.Costs)
			}
			if c.BorrowRate == nil || *c.BorrowRate != 0.2 || c.Leverage == nil || *c.Leverage != 4 || c.MaintenanceMargin == nil ||
				c.MaxVolumePct == nil || *c.MaxVolumePct != 0.5 || c.VolumeCap != "carry" {
				t.Errorf("%s row %d: costs beyond fee and slippage %s", r.Kind, r.Seq, r.Costs)
			}
			want := "fee=7 slip=3 intrabar=pessimistic funding=off borrow=0.2 leverage=4 mm="
			if r.Kind == ledger.KindBacktest {
				want = "fee=7 slip=3 fill=next_open intrabar=pessimistic funding=off borrow=0.2 leverage=4 mm="
			}
			if s := c.String(); !strings.HasPrefix(s, want) || !strings.HasSuffix(s, " vol%=0.5 vol_cap=carry") {
				t.Errorf("%s row %d: compact costs %q", r.Kind, r.Seq, s)
			}
		}
	}
	for _, k := range ledger.TrialKinds {
		if kinds[k] == 0 {
			t.Errorf("no %s row recorded: %v", k, kinds)
		}
	}
	// The default costs: the intrabar rule is still named.
	bt2, err := l.Backtest(ctx, BacktestRequest{StrategyRef: ref, Series: series, From: from})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, _ := lg.Query(context.Background(), ledger.Filter{RunID: bt2.RunID})
	if c := ReadLedgerCosts(rows[0].Costs); !c.Known() || c.Intrabar != "path" || c.Funding != "off" || c.Leverage != nil || strings.Contains(c.String(), "unknown") {
		t.Errorf("a default backtest's costs %s read %q", rows[0].Costs, c)
	}
}

// TestLedgerCostsOfOldRows: a row written before the costs shape (capital,
// fee and slippage alone) or with none reads as unknown, and is compared
// only on what it carried.
func TestLedgerCostsOfOldRows(t *testing.T) {
	old := ReadLedgerCosts(json.RawMessage(`{"capital":"10000","fee_bps":10,"slippage_bps":5}`))
	if old.Known() || old.String() != "fee=10 slip=5 rest=unknown" {
		t.Errorf("an old row: known %v, %q", old.Known(), old)
	}
	for _, raw := range []string{`{}`, ``, `not json`} {
		if c := ReadLedgerCosts(json.RawMessage(raw)); c.Known() || c.String() != "unknown" {
			t.Errorf("costs %q read %q", raw, c)
		}
	}
	now := LedgerCosts{Capital: "10000", FeeBps: 10, SlippageBps: 5, Intrabar: "pessimistic", Funding: "auto"}
	if d := now.Diff(old); len(d) != 0 {
		t.Errorf("an old row is compared on what it never recorded: %v", d)
	}
	now.FeeBps = 12
	if d := now.Diff(old); len(d) != 1 || d[0] != "fee_bps 10 then, 12 now" {
		t.Errorf("diff %v", d)
	}
	was := now
	was.Intrabar, was.Leverage = "path", new(2.0)
	if d := now.Diff(was); len(d) != 2 || d[0] != "intrabar path then, pessimistic now" || d[1] != "leverage 2 then, off now" {
		t.Errorf("diff %v", d)
	}
	// The JSON is the shape's own: read back, it is the same.
	if got := ReadLedgerCosts(was.JSON()); len(got.Diff(was)) != 0 || !bytes.Contains(was.JSON(), []byte(`"intrabar":"path"`)) {
		t.Errorf("round trip %s", was.JSON())
	}
}

// TestOptimizeResumeRefusedUnderOtherCosts: a stopped optimisation
// resumes only under the costs and intrabar rule it ran under; the
// refusal names what differs.
func TestOptimizeResumeRefusedUnderOtherCosts(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ledger.WithWho(ctxT(t), ledger.Who{Surface: ledger.SurfaceCLI})
	req := optRequest(t, 4)
	first, err := l.Optimize(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name string
		edit func(*OptimizeRequest)
		want string
	}{
		{"intrabar", func(r *OptimizeRequest) { r.Intrabar = "pessimistic" }, "intrabar path then, pessimistic now"},
		{"fee", func(r *OptimizeRequest) { r.FeeBps = f(25) }, "fee_bps 10 then, 25 now"},
		{"leverage", func(r *OptimizeRequest) { r.Leverage = f(3) }, "leverage off then, 3 now"},
		{"funding", func(r *OptimizeRequest) { on := true; r.Funding = &on }, "funding off then, on now"},
	}
	for _, c := range cases {
		r := req
		r.Trials, r.Resume = 8, first.RunID
		c.edit(&r)
		_, err := l.Optimize(ctx, r, nil)
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Kind != KindInvalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: resume under other costs: %v", c.name, err)
		}
	}
	if n := len(runParams(t, lg, first.RunID)); n != 4 {
		t.Fatalf("a refused resume ran trials: the run holds %d rows", n)
	}
	r := req
	r.Trials, r.Resume = 8, first.RunID
	res, err := l.Optimize(ctx, r, nil)
	if err != nil || res.Evaluated != 8 || res.Resumed != 4 {
		t.Fatalf("the same costs resume: %+v %v", res.Evaluated, err)
	}
}

// TestOptimizeIntrabarRule: an optimisation's trials run under its
// intrabar rule: on a bracketed strategy the same search under the
// pessimistic rule reports other metrics than under the path rule, and
// its winner's metrics are its backtest's under that rule.
func TestOptimizeIntrabarRule(t *testing.T) {
	l := newLocal(t, 2)
	ref := StrategyRef{Source: bracketed, Label: "bracketed.star"}
	grid := Grid{"fast": {Values: []any{5.0, 10.0}}, "tp": {Values: []any{0.002, 0.004}}}
	seed := uint64(1)
	var tops [2][]Trial
	for k, rule := range []string{"path", "pessimistic"} {
		req := OptimizeRequest{StrategyRef: ref, Series: "BTC-USD@1h", Grid: grid, Method: "random", Trials: 4, Seed: &seed, Batch: 4,
			Top: MaxTop, From: "2024-10-01", Intrabar: rule}
		res, err := l.Optimize(ctxT(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Evaluated != 4 || res.Failed != 0 {
			t.Fatalf("%s: evaluated %d, failed %d", rule, res.Evaluated, res.Failed)
		}
		tops[k] = res.Top
		win := res.Top[0]
		one, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: ref, Series: req.Series, From: req.From, Params: win.Params, Intrabar: rule})
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Metrics json.RawMessage }
		if err := json.Unmarshal(one.Result, &r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Metrics, win.Metrics) {
			t.Errorf("%s: the winner differs from its backtest under the rule:\n%s\n%s", rule, win.Metrics, r.Metrics)
		}
	}
	byParams := map[string]string{}
	for _, tr := range tops[0] {
		byParams[fmtParams(tr.Params)] = string(tr.Metrics)
	}
	differ := false
	for _, tr := range tops[1] {
		differ = differ || byParams[fmtParams(tr.Params)] != string(tr.Metrics)
	}
	if !differ {
		t.Error("the pessimistic optimisation reports the path one's metrics: the rule did not reach the trials")
	}
}

// TestFundingOffUnlessAsked (issue 44 item 19): a run that names no
// funding charges none, whatever the store holds; true charges it, and
// FundingAuto leaves the worker to charge it when the store holds it.
func TestFundingOffUnlessAsked(t *testing.T) {
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t)})
	if c := l.costs(Costs{}); c.Funding == nil || *c.Funding || c.FundingWanted() != "off" {
		t.Errorf("no funding asked: %v", c.FundingWanted())
	}
	on := true
	if c := l.costs(Costs{CostOptions: backtest.CostOptions{Funding: &on}}); c.FundingWanted() != "on" {
		t.Errorf("funding asked: %v", c.FundingWanted())
	}
	if c := l.costs(Costs{FundingAuto: true}); c.FundingWanted() != "auto" {
		t.Errorf("funding auto: %v", c.FundingWanted())
	}
}
