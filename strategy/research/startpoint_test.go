package research

import (
	"encoding/json"
	"strings"
	"testing"

	"wicket/strategy/backtest"
)

// TestStartPoint: the research API's start-point check over a stored
// series, by strategy name, with knob overrides; bad input is refused
// before any worker runs.
func TestStartPoint(t *testing.T) {
	l := newLocal(t, 1)
	rep, err := l.StartPoint(ctxT(t), StartPointRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1h", From: "2024-01-01", Params: map[string]any{"fast": 5, "slow": 20}})
	if err != nil {
		t.Fatal(err)
	}
	// sma_cross: SMA(20) needs 19 bars (its cross one more at most), within
	// its own warm-up of 20.
	if !rep.Passed || rep.Needed < 19 || rep.Needed > 20 || rep.Warmup != 20 || len(rep.Offsets) != 4 || rep.Series[1].Name != "ta.sma(20)" || rep.Series[1].Needed != 19 {
		t.Fatalf("sma_cross: %+v", rep)
	}
	short := 10
	if rep, err := l.StartPoint(ctxT(t), StartPointRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1h", From: "2024-01-01", Warmup: &short}); err != nil || rep.Passed {
		t.Errorf("a warm-up of 10: %+v, %v", rep, err)
	}
	neg := -1
	for _, tc := range []struct {
		req  StartPointRequest
		want string
	}{
		{StartPointRequest{StrategyRef: StrategyRef{Name: "mine"}}, "series is missing"},
		{StartPointRequest{StrategyRef: StrategyRef{Name: "../x"}, Series: "SPY@1d"}, "invalid strategy name"},
		{StartPointRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "SPY@1d", Warmup: &neg}, "must be 0 or more"},
		{StartPointRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "NONE@1d"}, "NONE@1d"},
	} {
		if _, err := l.StartPoint(ctxT(t), tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.req, err, tc.want)
		}
	}
}

// TestBacktestAllowance: the research API passes the allowance to the
// engine; the report names the breaker.
func TestBacktestAllowance(t *testing.T) {
	l := newLocal(t, 1)
	a, err := backtest.ParseAllowance([]string{"max_drawdown_pct=1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "BTC-USD@1h", From: "2024-01-01", To: "2024-06-30", Allowance: a})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Breaker *backtest.Breaker `json:"breaker"`
	}
	if err := json.Unmarshal(res.Result, &r); err != nil || r.Breaker == nil || r.Breaker.Name != backtest.AllowMaxDrawdownPct {
		t.Errorf("breaker %+v (%v): %.300s", r.Breaker, err, res.Result)
	}
}
