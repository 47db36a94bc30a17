package portfolio

import (
	"context"
	"math"
	"testing"

	"wicket/strategy"
	"wicket/strategy/backtest"
)

// holdingsRun runs 4 of the bench assets over 600 daily bars, the third
// without a bar on every seventh day, long and short on weights that
// swing with the bar, rebalanced weekly, with fee, slippage and borrow
// as cfg says, recording its fills and holdings as asked.
func holdingsRun(t testing.TB, cfg backtest.Config, record bool) *Result {
	t.Helper()
	var raw []strategy.Bars
	for k, b := range benchAssets()[:4] {
		b = b.Slice(0, 600)
		if k == 2 {
			var keep strategy.Bars
			keep.Series = b.Series
			for i := range b.Time {
				if i%7 != 3 {
					keep.Time, keep.Open, keep.High, keep.Low, keep.Close, keep.Volume = append(keep.Time, b.Time[i]), append(keep.Open, b.Open[i]), append(keep.High, b.High[i]), append(keep.Low, b.Low[i]), append(keep.Close, b.Close[i]), append(keep.Volume, b.Volume[i])
				}
			}
			b = keep
		}
		raw = append(raw, b)
	}
	assets, err := Align(raw)
	if err != nil {
		t.Fatal(err)
	}
	n := assets[0].Len()
	weights := make([][]float64, len(assets))
	for a := range weights {
		weights[a] = make([]float64, n)
		for i := range n {
			weights[a][i] = 0.3 * math.Sin(float64(i)/(9+float64(a)*4)+float64(a))
		}
	}
	reb, _ := ParseRebalance("weekly")
	res, err := RunFrom(context.Background(), assets, weights, reb, cfg, Options{RecordFills: record, RecordHoldings: record, TradeFrom: unixTime(assets[0].Time[50])})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHoldingsEqualFills: the per-bar record equals what the run's fills
// imply, recomputed here from the fills and the bars alone: each asset's
// quantity is the sum of its fills so far, its value that at its last
// close, its P&L that value less the fills' cash and fees, and each
// bar's turnover the fills' notional; the assets' P&L plus the capital
// is the equity curve. Borrow, charged outside the fills, is checked by
// the last identity on a run that pays it. Off, nothing is recorded.
func TestHoldingsEqualFills(t *testing.T) {
	cfg := backtest.DefaultConfig()
	cfg.FeeBps, cfg.SlippageBps = 10, 5
	cfg.Costs.VolumeCap = backtest.VolumeOff
	res := holdingsRun(t, cfg, true)
	h := res.Holdings
	if h == nil || len(h.Time) != len(res.Curve.Time) || len(res.Fills) < 100 {
		t.Fatalf("record of %v bars for a curve of %d, %d fills", h != nil, len(res.Curve.Time), len(res.Fills))
	}
	capital, _ := cfg.Capital.Float64()
	m := len(res.Universe)
	qty, flow, last := make([]float64, m), make([]float64, m), make([]float64, m)
	index := map[string]int{}
	for a, s := range res.Universe {
		index[s] = a
	}
	closes := map[string]map[int64]float64{}
	for _, b := range benchAssets()[:4] {
		closes[b.Series] = map[int64]float64{}
		for i := range b.Time {
			closes[b.Series][b.Time[i]] = b.Close[i]
		}
	}
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-6*math.Max(1, math.Abs(y)) }
	f := 0
	for i, tm := range h.Time {
		traded := 0.0
		for ; f < len(res.Fills) && !res.Fills[f].Time.After(tm); f++ {
			fl := res.Fills[f]
			a := index[fl.Series]
			qty[a] += fl.Qty
			flow[a] -= fl.Qty*fl.Price + fl.Fee
			traded += math.Abs(fl.Qty * fl.Price)
		}
		sum := 0.0
		for a, s := range res.Universe {
			if c, ok := closes[s][tm.Unix()]; ok && !(a == 2 && (i+50)%7 == 3) {
				last[a] = c
			}
			if math.Abs(qty[a]) < 1e-9 {
				qty[a] = 0
			}
			v := qty[a] * last[a]
			if !near(h.Qty[a][i], qty[a]) || !near(h.Value[a][i], v) || !near(h.PnL[a][i], v+flow[a]) {
				t.Fatalf("%s at %s: recorded qty %v value %v pnl %v, the fills imply %v %v %v", s, tm, h.Qty[a][i], h.Value[a][i], h.PnL[a][i], qty[a], v, v+flow[a])
			}
			sum += h.PnL[a][i]
		}
		if !near(h.Traded[i], traded) {
			t.Fatalf("bar %s: turnover %v, the fills imply %v", tm, h.Traded[i], traded)
		}
		if !near(capital+sum, res.Curve.Equity[i]) {
			t.Fatalf("bar %s: capital plus the assets' P&L %v, equity %v", tm, capital+sum, res.Curve.Equity[i])
		}
	}
	if f != len(res.Fills) {
		t.Errorf("%d fills after the last recorded bar", len(res.Fills)-f)
	}

	cfg.Costs.BorrowRate = 0.2
	res = holdingsRun(t, cfg, true)
	if res.Metrics.BorrowPaid <= 0 {
		t.Fatal("no borrow paid")
	}
	last1 := len(res.Holdings.Time) - 1
	sum := 0.0
	for a := range res.Universe {
		sum += res.Holdings.PnL[a][last1]
	}
	if !near(capital+sum, res.Curve.Equity[last1]) {
		t.Errorf("with borrow: capital plus the assets' P&L %v, equity %v", capital+sum, res.Curve.Equity[last1])
	}
	if holdingsRun(t, cfg, false).Holdings != nil {
		t.Error("a run not asked to record its holdings recorded them")
	}
}
