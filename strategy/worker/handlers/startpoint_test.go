package handlers

import (
	"strings"
	"testing"

	"wicket/strategy/worker"
)

const emaTrend = `"""EMA trend."""
def signals(bars):
    e = ta.ema(bars.close, 50)
    return {"long": bars.close > e, "exit": bars.close < e}
`

// TestStartPointThroughPool: the start_point request runs the check in a
// worker over a stored series, judging the strategy's own warm-up or the
// one asked for.
func TestStartPointThroughPool(t *testing.T) {
	p := newPool(t, worker.Config{Size: 1})
	store := demoStore(t)
	bars := &worker.BarsRange{HistoryPath: store, Series: "BTC-USD@1d", From: "2020-01-01"}
	rep, err := p.StartPoint(ctxT(t), worker.StartPointRequest{StrategyRequest: worker.StrategyRequest{Name: "ema.star", Source: emaTrend, Bars: bars}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Warmup != 49 || rep.Passed || rep.Needed <= 100 || !strings.Contains(rep.Verdict, "ta.ema(50)") {
		t.Fatalf("EMA(50) over BTC-USD@1d: %+v", rep)
	}
	enough := rep.Needed
	rep, err = p.StartPoint(ctxT(t), worker.StartPointRequest{StrategyRequest: worker.StrategyRequest{Name: "ema.star", Source: emaTrend, Bars: bars}, Warmup: &enough})
	if err != nil || !rep.Passed {
		t.Fatalf("with the warm-up it asked for (%d): %+v, %v", enough, rep, err)
	}
	// No bars: the synthetic ones validation uses; knob overrides apply.
	rep, err = p.StartPoint(ctxT(t), worker.StartPointRequest{StrategyRequest: worker.StrategyRequest{Name: "sma.star", Source: smaCross, Overrides: map[string]any{"fast": 5.0}}})
	if err != nil || !rep.Passed || rep.Needed != 29 || rep.Bars != 1000 {
		t.Fatalf("SMA cross on the smoke bars: %+v, %v", rep, err)
	}
	bad := -1
	if _, err := p.StartPoint(ctxT(t), worker.StartPointRequest{StrategyRequest: worker.StrategyRequest{Name: "sma.star", Source: smaCross}, Warmup: &bad}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("a negative warm-up: %v", err)
	}
}
