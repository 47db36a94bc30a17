package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// TestPortfolioSweepChunk: each combination of a chunk is the portfolio
// backtest of its values (the same metrics), with its equity-curve
// returns in the blocks asked for, and the chunk names the universe and
// its calendar; a combination whose run fails is a trial with its error,
// and the rest still run.
func TestPortfolioSweepChunk(t *testing.T) {
	ctx := context.Background()
	base := templateRequest(t, "momentum_rotation", "")
	base.From = "2023-01-01"
	combos := []map[string]any{{"lookback": 30, "k": 1}, {"lookback": 60, "k": 2}}
	resp, err := PortfolioSweep(ctx, worker.PortfolioSweepChunk{Request: base, Combos: combos, Blocks: 4}, ta.NewMemo(0))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Series != "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d" || resp.Calendar.Count == 0 || len(resp.Trials) != 2 {
		t.Fatalf("series %q, calendar %+v, %d trials", resp.Series, resp.Calendar, len(resp.Trials))
	}
	for i, tr := range resp.Trials {
		if tr.Error != "" || len(tr.Blocks) != 4 || tr.Stats.T != resp.Calendar.Count {
			t.Fatalf("trial %d: error %q, %d blocks, %d returns (calendar %d)", i, tr.Error, len(tr.Blocks), tr.Stats.T, resp.Calendar.Count)
		}
		req := base
		req.Params = combos[i]
		alone, err := Portfolio(ctx, req, ta.NewMemo(0))
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Metrics json.RawMessage `json:"metrics"`
		}
		if err := json.Unmarshal(alone.Result, &rep); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rep.Metrics, tr.Metrics) {
			t.Errorf("combination %v: chunk metrics %s, backtest %s", combos[i], tr.Metrics, rep.Metrics)
		}
	}

	// A strategy that fails for one value of its knob.
	src := "universe = [\"BTC-USD@1d\", \"ETH-USD@1d\"]\nn = param.int(\"n\", 1, min=0, max=3)\n" +
		"def signals(u):\n    if n == 0:\n        fail(\"n must not be zero\")\n    return {a: u[a].close > 0 for a in u.assets}\n"
	bad := base
	bad.Name, bad.Source = "flaky.star", src
	resp, err = PortfolioSweep(ctx, worker.PortfolioSweepChunk{Request: bad, Combos: []map[string]any{{"n": 0}, {"n": 1}}}, ta.NewMemo(0))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Trials[0].Error, "n must not be zero") || resp.Trials[0].Values["n"] != 0 || resp.Trials[1].Error != "" || resp.Series != "BTC-USD@1d,ETH-USD@1d" {
		t.Errorf("trials %+v, series %q", resp.Trials, resp.Series)
	}
	if _, err := PortfolioSweep(ctx, worker.PortfolioSweepChunk{Request: templateRequest(t, "momentum_rotation", "BTC-USD@1d"), Combos: combos}, ta.NewMemo(0)); err == nil {
		t.Error("a chunk naming a series ran")
	}
}
