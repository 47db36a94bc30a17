package research

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/backtest"
)

// bracketed is sma_cross entering with a tight bracket, so that many
// hourly bars reach both legs and the intrabar rule decides the fill.
const bracketed = `"""SMA crossover with a tight bracket."""
fast = param.int("fast", 10, min=2, max=50, step=1)
tp = param.float("tp", 0.004, min=0.001, max=0.05, step=0.001)

def signals(bars):
    f = ta.sma(bars.close, fast)
    s = ta.sma(bars.close, 30)
    return {
        "long": ta.cross_above(f, s),
        "exit": ta.cross_below(f, s),
        "stop_loss": 0.003,
        "take_profit": tp,
    }
`

// TestSweepIntrabarRule: a sweep and a walk-forward take the intrabar
// rule as a backtest does; pessimistic fills differ from path fills on a
// bracketed strategy, and each sweep trial is exactly the backtest of its
// params under the same rule.
func TestSweepIntrabarRule(t *testing.T) {
	l := newLocal(t, 2)
	ref := StrategyRef{Source: bracketed, Label: "bracketed.star"}
	grid := Grid{"fast": {Values: []any{5.0, 10.0}}, "tp": {Values: []any{0.002, 0.004}}}
	metrics := map[string][]json.RawMessage{}
	for _, rule := range []string{"path", "pessimistic"} {
		req := SweepRequest{StrategyRef: ref, Series: "BTC-USD@1h", Grid: grid, Top: MaxTop, From: "2024-10-01", Intrabar: rule}
		res, err := l.Sweep(ctxT(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Evaluated != 4 || res.Failed != 0 {
			t.Fatalf("%s: evaluated %d, failed %d", rule, res.Evaluated, res.Failed)
		}
		for _, tr := range res.Top {
			metrics[rule] = append(metrics[rule], tr.Metrics)
		}
		top := res.Top[0]
		one, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: ref, Series: req.Series, From: req.From, Params: top.Params, Intrabar: rule})
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Metrics json.RawMessage }
		if err := json.Unmarshal(one.Result, &r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Metrics, top.Metrics) {
			t.Errorf("%s: the sweep's winner differs from its backtest:\n%s\n%s", rule, top.Metrics, r.Metrics)
		}
	}
	differ := false
	for _, p := range metrics["path"] {
		found := false
		for _, q := range metrics["pessimistic"] {
			found = found || bytes.Equal(p, q)
		}
		differ = differ || !found
	}
	if !differ {
		t.Error("the pessimistic sweep reports the path sweep's metrics: the rule did not reach the workers")
	}

	var oos [2]string
	for k, rule := range []string{"path", "pessimistic"} {
		wfGrid := Grid{"fast": {Values: []any{10.0, 12.0}}, "tp": {Values: []any{0.002}}}
		res, err := l.WalkForward(ctxT(t), WalkForwardRequest{StrategyRef: ref, Series: "BTC-USD@1h", Grid: wfGrid, From: "2024-07-01", Windows: 2, Intrabar: rule}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.OutOfSample)
		oos[k] = string(b)
	}
	if oos[0] == oos[1] {
		t.Errorf("walk-forward out-of-sample figures are the same under both rules: %s", oos[0])
	}
}

// TestSweepCosts: a sweep's costs reach its trials, which report them
// exactly as a backtest with the same costs does.
func TestSweepCosts(t *testing.T) {
	l := newLocal(t, 2)
	ref := templateRef(t, "ema_long_short")
	f := func(v float64) *float64 { return &v }
	costs := Costs{}
	costs.BorrowRate, costs.Leverage, costs.MaxVolumePct = f(0.2), f(4), f(0.5)
	req := SweepRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: Grid{"fast": {Values: []any{5.0, 10.0}}}, Top: MaxTop, From: "2022-01-01", Costs: costs}
	res, err := l.Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Top {
		for _, k := range []string{`"borrow_paid"`, `"liquidations"`, `"volume_capped_fills"`} {
			if !strings.Contains(string(tr.Metrics), k) {
				t.Errorf("trial %v reports no %s: %s", tr.Params, k, tr.Metrics)
			}
		}
		one, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: ref, Series: req.Series, From: req.From, Params: tr.Params, Costs: costs})
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Metrics json.RawMessage }
		if err := json.Unmarshal(one.Result, &r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Metrics, tr.Metrics) {
			t.Errorf("%v: the sweep's metrics differ from a backtest's with the same costs:\n%s\n%s", tr.Params, tr.Metrics, r.Metrics)
		}
	}
}

// TestBorrowDefault: wicket.toml's [research] borrow_rates give a run its
// symbol's rate unless the run names one.
func TestBorrowDefault(t *testing.T) {
	r := project.Research{BorrowRates: map[string]float64{"BTC-USD": 0.05}}
	var o backtest.CostOptions
	BorrowDefault(r, "BTC-USD@1h", &o)
	if o.BorrowRate == nil || *o.BorrowRate != 0.05 {
		t.Fatalf("borrow rate %v, want the project's 0.05", o.BorrowRate)
	}
	own := 0.2
	o.BorrowRate = &own
	BorrowDefault(r, "BTC-USD@1h", &o)
	if *o.BorrowRate != 0.2 {
		t.Errorf("the run's own rate was replaced: %v", *o.BorrowRate)
	}
	var other backtest.CostOptions
	BorrowDefault(r, "ETH-USD@1h", &other)
	if other.BorrowRate != nil {
		t.Errorf("ETH-USD got a borrow rate: %v", *other.BorrowRate)
	}
}
