package research

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"wicket/strategy/ledger"
)

// TestCPCVMatchesReference: CPCV over the fixture of testdata/cpcv (five
// combinations whose returns overlap three bars, one never trading; 97
// bars in 6 groups, 2 tested, 3 bars purged, 2 % embargoed) equals what
// testdata/cpcv_ref.py, an independent plain-Python implementation,
// computed: every split's training bars, pick and logit, every path's
// Sharpe ratio, the quantiles and PBO.
func TestCPCVMatchesReference(t *testing.T) {
	raw, err := os.ReadFile("testdata/cpcv/returns.csv")
	if err != nil {
		t.Fatal(err)
	}
	var returns [][]float64
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r []float64
		for _, f := range strings.Split(line, ",") {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			r = append(r, x)
		}
		returns = append(returns, r)
	}
	got, err := CPCV(returns, CPCVConfig{Groups: 6, Test: 2, Purge: 3, Embargo: 0.02, PeriodsPerYear: 365})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/cpcv/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var want CPCVResult
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	close := func(what string, g, w *float64) {
		t.Helper()
		switch {
		case (g == nil) != (w == nil):
			t.Errorf("%s: %v, want %v", what, g, w)
		case g != nil && math.Abs(*g-*w) > 1e-12*max(1, math.Abs(*w)):
			t.Errorf("%s: %.17g, want %.17g", what, *g, *w)
		}
	}
	if got.EmbargoBars != want.EmbargoBars || len(got.Splits) != len(want.Splits) || len(got.PathSharpe) != len(want.PathSharpe) {
		t.Fatalf("embargo %d, %d splits, %d paths; want %d, %d, %d", got.EmbargoBars, len(got.Splits), len(got.PathSharpe), want.EmbargoBars, len(want.Splits), len(want.PathSharpe))
	}
	for i, s := range got.Splits {
		w := want.Splits[i]
		if s.Train != w.Train || s.Picked != w.Picked || len(s.Test) != len(w.Test) || s.Test[0] != w.Test[0] || s.Test[1] != w.Test[1] {
			t.Errorf("split %d: test %v, %d training bars, picked %d; want %v, %d, %d", i, s.Test, s.Train, s.Picked, w.Test, w.Train, w.Picked)
		}
		close("logit", s.Logit, w.Logit)
	}
	for p := range got.PathSharpe {
		close("path sharpe", got.PathSharpe[p], want.PathSharpe[p])
	}
	for _, c := range []struct {
		name string
		g, w *float64
	}{{"mean", got.Mean, want.Mean}, {"p5", got.P5, want.P5}, {"p25", got.P25, want.P25}, {"median", got.Median, want.Median},
		{"p75", got.P75, want.P75}, {"p95", got.P95, want.P95}, {"pbo", got.PBO, want.PBO}} {
		close(c.name, c.g, c.w)
	}
	if len(got.PathSharpe) != 5 || got.PBO == nil {
		t.Errorf("%d paths, pbo %v: C(5,1) paths and a PBO expected", len(got.PathSharpe), got.PBO)
	}
}

// TestCPCVRefuses: settings that cannot make splits are refused, naming
// the fix.
func TestCPCVRefuses(t *testing.T) {
	r := [][]float64{make([]float64, 100)}
	for _, c := range []struct {
		cfg  CPCVConfig
		want string
	}{
		{CPCVConfig{Groups: 1, Test: 1}, "at least 2 groups"},
		{CPCVConfig{Groups: 5, Test: 5}, "from 1 to groups-1"},
		{CPCVConfig{Groups: 30, Test: 15}, "more than 10000"},
		{CPCVConfig{Groups: 60, Test: 1}, "needs at least 120 bars"},
		{CPCVConfig{Groups: 5, Test: 2, Embargo: 0.7}, "embargo 0.7"},
	} {
		if _, err := CPCV(r, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestLocalCPCV: a CPCV of sma_cross's nine combinations over BTC-USD@1d,
// 6 groups, 2 tested: 15 splits and 5 paths; the purge is the grid's
// longest warm-up (the slow average of 90 bars needs at least 90), each
// pick is a combination of the grid; an asked purge keeps more training
// bars.
func TestLocalCPCV(t *testing.T) {
	l := newLocal(t, 2)
	req := CPCVRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", Grid: wfGrid, Groups: 6, Test: 2}
	res, err := l.CPCV(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Splits) != 15 || len(res.PathSharpe) != 5 || res.Combinations != 9 || res.Failed != 0 {
		t.Fatalf("%d splits, %d paths, %d combinations (%d failed)", len(res.Splits), len(res.PathSharpe), res.Combinations, res.Failed)
	}
	if res.PurgeFrom != "warmup" || res.Purge < 90 || res.EmbargoBars != int(math.Ceil(0.01*float64(res.Bars))) {
		t.Errorf("purge %d from %s, embargo %d bars of %d", res.Purge, res.PurgeFrom, res.EmbargoBars, res.Bars)
	}
	for i, p := range res.Picks {
		if len(p) < 2 {
			t.Errorf("split %d picked %v", i, p)
		}
	}
	if res.PBO == nil || res.Median == nil {
		t.Errorf("pbo %v, median %v", res.PBO, res.Median)
	}
	purge := 5
	req.Purge = &purge
	asked, err := l.CPCV(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if asked.Purge != 5 || asked.PurgeFrom != "asked" || asked.Splits[0].Train <= res.Splits[0].Train {
		t.Errorf("asked purge: %d from %s, %d training bars (the warm-up purge left %d)", asked.Purge, asked.PurgeFrom, asked.Splits[0].Train, res.Splits[0].Train)
	}
	if _, err := l.CPCV(ctxT(t), CPCVRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", Grid: wfGrid, Groups: 4, Test: 4}, nil); err == nil || !strings.Contains(err.Error(), "groups-1") {
		t.Errorf("k = N: %v", err)
	}
}

// TestCPCVRecordsTrials: a CPCV's combinations are trials, recorded in
// the ledger as a sweep's are, one row each under the run's id.
func TestCPCVRecordsTrials(t *testing.T) {
	l, lg := ledgerLocal(t)
	res, err := l.CPCV(ctxT(t), CPCVRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", Grid: wfGrid, Groups: 5, Test: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID == "" {
		t.Fatalf("no run id; warnings %q", res.Warnings)
	}
	rows, total, err := lg.Query(context.Background(), ledger.Filter{RunID: res.RunID})
	if err != nil || total != 9 || len(rows) != 9 {
		t.Errorf("%d rows (%d in all) for the 9 combinations: %v", len(rows), total, err)
	}
}

// TestSweepWarnsOfCappedWinner: over bars that trade a thousandth of a
// unit, the default volume cap cuts the winner's fills and the sweep says
// so; with the cap off it does not.
func TestSweepWarnsOfCappedWinner(t *testing.T) {
	bars := sineBars(3000)
	for i := range bars.Volume {
		bars.Volume[i] = 0.001
	}
	l := NewLocal(Config{Project: benchProject(t, t.TempDir(), bars), Pool: newPool(t, 1)})
	req := SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BENCH@1h", Grid: Grid{"fast": {Values: []any{5.0, 10.0}}}}
	res, err := l.Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "the winner's volume cap cut") {
		t.Errorf("warnings %q", res.Warnings)
	}
	req.Costs.VolumeCap = "off"
	off, err := l.Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(off.Warnings, "\n"), "volume cap cut") {
		t.Errorf("cap off, warnings %q", off.Warnings)
	}
}

// TestPortfolioCPCV: a portfolio strategy without a series is
// cross-validated over its universe's calendar: every combination's
// equity-curve returns, 10 splits of 5 groups, 4 paths, daily Sharpe
// ratios annualised over 365 days, and the trials recorded.
func TestPortfolioCPCV(t *testing.T) {
	l, lg := ledgerLocal(t)
	grid := Grid{"lookback": {Values: []any{20, 45, 90}}, "k": {Values: []any{1, 2}}}
	res, err := l.CPCV(ctxT(t), CPCVRequest{StrategyRef: templateRef(t, "momentum_rotation"), Grid: grid, From: "2022-01-01", Groups: 5, Test: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Series != "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d" || len(res.Splits) != 10 || len(res.PathSharpe) != 4 || res.Combinations != 6 || res.Failed != 0 || res.Bars == 0 || res.Bars != res.Range.Bars {
		t.Fatalf("series %q, %d splits, %d paths, %d combinations (%d failed), %d bars, range %+v", res.Series, len(res.Splits), len(res.PathSharpe), res.Combinations, res.Failed, res.Bars, res.Range)
	}
	if res.PBO == nil || res.Median == nil || res.PurgeFrom != "warmup" || res.Purge < 90 {
		t.Errorf("pbo %v, median %v, purge %d from %s", res.PBO, res.Median, res.Purge, res.PurgeFrom)
	}
	if rows, total, err := lg.Query(context.Background(), ledger.Filter{RunID: res.RunID}); err != nil || total != 6 || len(rows) != 6 {
		t.Errorf("%d rows recorded (%d), want 6: %v", len(rows), total, err)
	}
}
