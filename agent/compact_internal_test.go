package agent

import (
	"strings"
	"testing"
)

func trades(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"n": float64(i)}
	}
	return out
}

func TestCompactBacktestCuts(t *testing.T) {
	full := map[string]any{"metrics": map[string]any{"sharpe": 1.0}, "trades": trades(20), "equity": []any{1.0, 2.0},
		"trades_clamped": "engine note", "lookahead_check": map[string]any{"ok": true}}
	for _, tc := range []struct {
		shape      backtestShape
		n          int
		firstLast  [2]float64
		withEquity bool
	}{
		{backtestShape{tradesLimit: 10}, 10, [2]float64{0, 19}, false},
		{backtestShape{tradesLimit: 7}, 7, [2]float64{0, 19}, false},
		{backtestShape{tradesLimit: 1}, 1, [2]float64{0, 0}, false},
		{backtestShape{tradesLimit: 20, equity: true}, 20, [2]float64{0, 19}, true},
		{backtestShape{tradesLimit: 500, plot: true}, 20, [2]float64{0, 19}, true},
		{backtestShape{tradesLimit: 0}, 0, [2]float64{}, false},
	} {
		ans := compactBacktest(full, tc.shape)
		got := ans["trades"].([]any)
		if len(got) != tc.n || (ans["equity"] != nil) != tc.withEquity || ans["lookahead_check"] == nil || ans["trades_clamped"] != nil {
			t.Errorf("%+v: %d trades, equity %v, keys %v", tc.shape, len(got), ans["equity"] != nil, ans)
			continue
		}
		if tc.n > 0 && (got[0].(map[string]any)["n"] != tc.firstLast[0] || got[len(got)-1].(map[string]any)["n"] != tc.firstLast[1]) {
			t.Errorf("%+v: first/last %v %v", tc.shape, got[0], got[len(got)-1])
		}
		if tc.shape.tradesLimit == 7 && !strings.Contains(ans["trades_shown"].(string), "the first 4 and the last 3 of 20") {
			t.Errorf("trades_shown %v", ans["trades_shown"])
		}
	}
	if len(full["trades"].([]any)) != 20 || full["equity"] == nil {
		t.Error("compactBacktest changed the stored report")
	}
}

func TestRunStoreBounded(t *testing.T) {
	s := newRunStore()
	for i := 0; i < maxStoredRuns+5; i++ {
		s.put(strings.Repeat("x", i+1), storedRun{kind: "backtest", report: map[string]any{}})
	}
	if _, ok := s.get("x"); ok {
		t.Error("the oldest run was kept past the bound")
	}
	if ids := s.ids(); len(ids) != maxStoredRuns || ids[0] != strings.Repeat("x", maxStoredRuns+5) {
		t.Errorf("%d ids, newest %q", len(ids), ids[0])
	}
	if _, err := s.tradesPage(strings.Repeat("x", 50), "7"); err == nil || !strings.Contains(err.Error(), "not a page") {
		t.Errorf("bad cursor: %v", err)
	}
}
