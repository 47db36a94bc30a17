package research

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"wicket/internal/golden"
	"wicket/strategy/templates"
)

var updateGolden = flag.Bool("update", false, "rewrite the sweep golden files under testdata/golden")

// goldenGrids sweep two or three knobs of every template, so each
// template's sweep exercises shared indicators, and the ranking has ties
// and undefined scores to order.
var goldenGrids = map[string]Grid{
	"atr_trailing_stop":  {"breakout": {Values: []any{10.0, 20.0, 40.0}}, "mult": {Values: []any{2.0, 3.0}}},
	"bollinger_breakout": {"period": {Values: []any{10.0, 20.0}}, "dev": {Values: []any{1.5, 2.0, 2.5}}, "exit_at": {Values: []any{"middle", "lower"}}},
	"donchian_breakout":  {"entry": {Values: []any{10.0, 20.0, 55.0}}, "exit_len": {Values: []any{5.0, 10.0, 20.0}}},
	"ema_cross":          {"fast": {From: fp(5), To: fp(15), Step: fp(5)}, "slow": {Values: []any{20.0, 40.0, 80.0}}},
	"ema_long_short":     {"fast": {Values: []any{10.0, 20.0}}, "slow": {Values: []any{50.0, 100.0}}, "size": {Values: []any{0.5, 1.0}}},
	"macd_trend":         {"fast": {Values: []any{8.0, 12.0}}, "slow": {Values: []any{26.0, 40.0}}, "above_zero": {Values: []any{false, true}}},
	"rsi_reversion":      {"period": {Values: []any{7.0, 14.0}}, "oversold": {Values: []any{25.0, 30.0}}, "exit_level": {Values: []any{50.0, 60.0}}},
	"sma_cross":          {"fast": {From: fp(2), To: fp(20), Step: fp(6)}, "slow": {From: fp(30), To: fp(120), Step: fp(30)}},
	"sma_cross_bar":      {"fast": {From: fp(2), To: fp(20), Step: fp(6)}, "slow": {From: fp(30), To: fp(120), Step: fp(30)}},
}

// goldenSeries are the demo series the golden sweeps run on: daily bars
// over the whole history and two years of hourly bars.
var goldenSeries = []string{"BTC-USD@1d", "ETH-USD@1h"}

func goldenCompare(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got, *updateGolden, "go test ./strategy/research -run Golden -update")
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, marshal(t, v), "", " "); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// TestSweepGolden pins every template's sweep (every combination, ranked,
// with its metrics and the deflated Sharpe ratio) on the demo series, at
// one worker and at two: the sweep engine may get faster, never different.
func TestSweepGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps every template")
	}
	locals := map[int]*Local{1: newLocal(t, 1), 2: newLocal(t, 2)}
	for _, name := range templates.Names() {
		if isPortfolioTemplate(t, name) {
			continue // portfolio_test.go: not swept
		}
		grid, ok := goldenGrids[name]
		if !ok {
			t.Errorf("template %s has no golden grid; add one to goldenGrids", name)
			continue
		}
		for _, series := range goldenSeries {
			for _, size := range []int{1, 2} {
				if *updateGolden && size == 2 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/workers=%d", name, series, size), func(t *testing.T) {
					req := SweepRequest{StrategyRef: templateRef(t, name), Series: series, Grid: grid, Top: MaxTop}
					res, err := locals[size].Sweep(ctxT(t), req, nil)
					if err != nil {
						t.Fatal(err)
					}
					if res.Evaluated != res.Combinations || res.Partial {
						t.Fatalf("evaluated %d of %d", res.Evaluated, res.Combinations)
					}
					goldenCompare(t, fmt.Sprintf("sweep-%s-%s.json", name, series), indentJSON(t, res))
				})
			}
		}
	}
}

// TestWalkForwardGolden pins a walk-forward analysis per style (signals
// and on_bar) at one and two workers.
func TestWalkForwardGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs walk-forward analyses")
	}
	locals := map[int]*Local{1: newLocal(t, 1), 2: newLocal(t, 2)}
	for _, name := range []string{"sma_cross", "sma_cross_bar", "rsi_reversion"} {
		for _, size := range []int{1, 2} {
			if *updateGolden && size == 2 {
				continue
			}
			t.Run(fmt.Sprintf("%s/workers=%d", name, size), func(t *testing.T) {
				req := WalkForwardRequest{StrategyRef: templateRef(t, name), Series: "BTC-USD@1d", Grid: goldenGrids[name], Windows: 4}
				res, err := locals[size].WalkForward(ctxT(t), req, nil)
				if err != nil {
					t.Fatal(err)
				}
				goldenCompare(t, fmt.Sprintf("walkforward-%s.json", name), indentJSON(t, res))
			})
		}
	}
}
