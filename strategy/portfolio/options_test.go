package portfolio

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
)

func frictionless() backtest.Config {
	return backtest.Config{Capital: decimal.NewFromInt(10000)}
}

// TestRunFromTradesWindowOnly: weights decided from bar 2 (after a
// warm-up) but trading from bar 5: nothing fills before bar 5, the
// decision of bar 4's close fills at bar 5's open, and the result covers
// bars 5 on.
func TestRunFromTradesWindowOnly(t *testing.T) {
	a := series("A-USD@1d", 100, 110, 120, 130, 140, 150, 160, 170)
	al, err := Align([]strategy.Bars{a})
	if err != nil {
		t.Fatal(err)
	}
	w := constant(a.Len(), 1)
	w[0], w[1] = nan, nan
	reb, _ := ParseRebalance("bar")
	from := time.Unix(a.Time[5], 0)
	res, err := RunFrom(context.Background(), al, [][]float64{w}, reb, frictionless(), Options{TradeFrom: from})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Curve.Time) != 3 || res.Curve.Time[0] != a.Time[5] {
		t.Fatalf("curve %v, want bars 5 to 7", res.Curve.Time)
	}
	// 10000 / 140 units bought at bar 5's open (140), marked at 150, 160, 170.
	q := 10000.0 / 140
	for k, c := range []float64{150, 160, 170} {
		if got, want := backtest.Money(res.Curve.Equity[k]), backtest.Money(q*c); got != want {
			t.Errorf("equity at bar %d: %s, want %s", 5+k, got, want)
		}
	}
	if res.Metrics.Bars != 3 || backtest.Money(res.Metrics.FinalEquity) != backtest.Money(q*170) {
		t.Errorf("metrics bars %d final %v", res.Metrics.Bars, res.Metrics.FinalEquity)
	}
	// Without TradeFrom the same weights trade from bar 3's open.
	all, err := Run(context.Background(), al, [][]float64{w}, reb, frictionless())
	if err != nil {
		t.Fatal(err)
	}
	if all.Curve.Equity[3] == 10000 {
		t.Errorf("the full run did not trade at bar 3: %v", all.Curve.Equity)
	}
	if _, err := RunFrom(context.Background(), al, [][]float64{w}, reb, frictionless(), Options{TradeFrom: time.Unix(a.Time[7]+1, 0)}); err == nil || !strings.Contains(err.Error(), "after the last bar") {
		t.Errorf("trade_from past the end: %v", err)
	}
}

var nan = math.NaN()

// recorder is a stepper that asks for all of equity in the asset and
// records the account it saw at each bar.
type recorder struct{ seen []script.PortfolioAccount }

func (r *recorder) Step(i int, acct script.PortfolioAccount) ([]float64, error) {
	r.seen = append(r.seen, acct)
	return []float64{1}, nil
}

// TestRunStepperFromWarmsUp: the stepper is stepped at every bar (its
// indicators see the history) but holds nothing before TradeFrom.
func TestRunStepperFromWarmsUp(t *testing.T) {
	a := series("A-USD@1d", 100, 110, 120, 130, 140, 150)
	al, _ := Align([]strategy.Bars{a})
	reb, _ := ParseRebalance("weekly") // one period: only the window's opening rebalance trades
	st := &recorder{}
	res, err := RunStepperFrom(context.Background(), al, st, reb, frictionless(), Options{TradeFrom: time.Unix(a.Time[3], 0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.seen) != a.Len() {
		t.Fatalf("stepped %d bars of %d", len(st.seen), a.Len())
	}
	for i := 0; i < 3; i++ {
		if st.seen[i].Positions[0] != 0 || st.seen[i].Cash != 10000 {
			t.Errorf("bar %d: account %+v before the window traded", i, st.seen[i])
		}
	}
	if st.seen[3].Positions[0] == 0 {
		t.Errorf("bar 3: nothing held after the window's first open")
	}
	if res.Rebalances != 1 || len(res.Curve.Time) != 3 || backtest.Money(res.Curve.Equity[0]) != backtest.Money(10000.0/120*130) {
		t.Errorf("rebalances %d curve %v", res.Rebalances, res.Curve.Equity)
	}
}

// TestFundingAndBorrowHandComputed: A long 50 units at 100, B short 100
// units at 50, from bar 1's open, flat prices, no fee or slippage.
//
//	A funding, +0.01% at 00h, 08h and 16h of days 1 and 2: 6 × 50 × 100 × 0.0001 = 3.00 paid
//	  (a settlement before the first bar and one on day 0, when flat: nothing)
//	B funding, +0.01% three times on day 2: 3 × (−100) × 50 × 0.0001 = −1.50 (received)
//	B borrow, 3.65% a year on 5000 of notional: 5000 × 0.0365 / 365 = 0.50 a day, closes of days 1–3: 1.50
//
// Final equity 10000 − 1.50 − 1.50 = 9997.00.
func TestFundingAndBorrowHandComputed(t *testing.T) {
	a := series("A-USD@1d", 100, 100, 100, 100)
	b := series("B-USD@1d", 50, 50, 50, 50)
	al, err := Align([]strategy.Bars{a, b})
	if err != nil {
		t.Fatal(err)
	}
	day := func(d, h int64) int64 { return a.Time[0] + d*86400 + h*3600 }
	var fa, fb []backtest.FundingRate
	fa = append(fa, backtest.FundingRate{Time: day(0, -8), Rate: 0.0001}, backtest.FundingRate{Time: day(0, 8), Rate: 0.0001})
	for _, d := range []int64{1, 2} {
		for _, h := range []int64{0, 8, 16} {
			fa = append(fa, backtest.FundingRate{Time: day(d, h), Rate: 0.0001})
		}
	}
	for _, h := range []int64{0, 8, 16} {
		fb = append(fb, backtest.FundingRate{Time: day(2, h), Rate: 0.0001})
	}
	cfg := frictionless()
	cfg.Costs = backtest.Costs{Funding: true, BorrowRate: 0.0365}
	reb, _ := ParseRebalance("weekly")
	n := a.Len()
	res, err := RunFrom(context.Background(), al, [][]float64{constant(n, 0.5), constant(n, -0.5)}, reb, cfg, Options{Funding: [][]backtest.FundingRate{fa, fb}})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"funding_paid", m.FundingPaid, 1.50}, {"borrow_paid", m.BorrowPaid, 1.50}, {"final_equity", m.FinalEquity, 9997}} {
		if backtest.Money(c.got) != backtest.Money(c.want) {
			t.Errorf("%s %s, want %s", c.name, backtest.Money(c.got), backtest.Money(c.want))
		}
	}
	js, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if s := string(js); !strings.Contains(s, `"funding_paid":"1.50"`) || !strings.Contains(s, `"borrow_paid":"1.50"`) {
		t.Errorf("metrics JSON does not report the costs: %s", s)
	}
}

// TestRefusesMargin: the margin one account with weights cannot model is
// refused, naming why.
func TestRefusesMargin(t *testing.T) {
	a := series("A-USD@1d", 100, 100, 100)
	al, _ := Align([]strategy.Bars{a})
	reb, _ := ParseRebalance("bar")
	cfg := frictionless()
	cfg.Costs = backtest.Costs{Leverage: 2, MaintenanceMargin: 0.005}
	_, err := Run(context.Background(), al, [][]float64{constant(3, 1)}, reb, cfg)
	if err == nil || !strings.Contains(err.Error(), "one cash account sized by weights") {
		t.Errorf("%v, want the margin refused", err)
	}
}

// TestVolumeCapPerAsset, by hand: two assets at 100, each weight 0.5 of
// 10,000 is 50 units. A trades 100 a bar, so at 10 % it fills 10 a bar:
// bars 1 to 5 take it to 50 (the rest carried, 4 capped fills past the
// first... every fill short of the target is capped: bars 1-4). B trades
// 1000 a bar, so its 50 fill at once. With drop, A stays at 10. A series
// with no volume is not capped and the result says so; with the cap off
// the 50 units are half of A's bar, which warns.
func TestVolumeCapPerAsset(t *testing.T) {
	mk := func(name string, vol float64) strategy.Bars {
		b := series(name, 100, 100, 100, 100, 100, 100, 100, 100)
		for i := range b.Volume {
			b.Volume[i] = vol
		}
		return b
	}
	al, err := Align([]strategy.Bars{mk("A-USD@1d", 100), mk("B-USD@1d", 1000)})
	if err != nil {
		t.Fatal(err)
	}
	reb, _ := ParseRebalance("monthly") // one decision: the rest is not superseded
	w := [][]float64{constant(8, 0.5), constant(8, 0.5)}
	for _, c := range []struct {
		mode       backtest.VolumeCap
		pct        float64
		a          float64
		capped     int
		warn       string
		fillClosed bool
	}{
		{backtest.VolumeCarry, 10, 50, 4, "volume cap: 4 fills were capped at 10% of their bar's volume and the rest carried to the asset's next bars (1 orders exceeded the cap; the largest order asked for 50% of its bar's volume (A-USD@1d", false},
		{backtest.VolumeCarry, 10, 50, 4, "volume cap: 4 fills were capped", true},
		{backtest.VolumeDrop, 10, 10, 1, "the rest dropped", false},
		{backtest.VolumeOff, 0, 50, 0, "volume cap off: 1 orders took more than 10% of their bar's volume; the largest order asked for 50%", false},
	} {
		cfg := frictionless()
		if c.fillClosed {
			cfg.Fill = backtest.FillClose
		}
		cfg.Costs = backtest.Costs{MaxVolumePct: c.pct, VolumeCap: c.mode}
		res, err := Run(context.Background(), al, w, reb, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if q := res.Assets[0].Quantity; math.Abs(q-c.a) > 1e-9 || res.Assets[1].Quantity != 50 || res.Metrics.VolumeCappedFills != c.capped {
			t.Errorf("%v close=%v: A %v B %v, %d capped; want A %v B 50, %d capped", c.mode, c.fillClosed, q, res.Assets[1].Quantity, res.Metrics.VolumeCappedFills, c.a, c.capped)
		}
		if !strings.Contains(strings.Join(res.Warnings, "\n"), c.warn) {
			t.Errorf("%v: warnings %q, want %q", c.mode, res.Warnings, c.warn)
		}
	}
	// No volume anywhere: not capped, and said.
	nv, _ := Align([]strategy.Bars{mk("A-USD@1d", 0)})
	cfg := frictionless()
	cfg.Costs = backtest.Costs{MaxVolumePct: 10}
	res, err := Run(context.Background(), nv, [][]float64{constant(8, 1)}, reb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Assets[0].Quantity != 100 || res.Metrics.VolumeCappedFills != 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "A-USD@1d has no volume (0 on every bar), so its fills were not capped") {
		t.Errorf("no volume: %v units, %d capped, warnings %q", res.Assets[0].Quantity, res.Metrics.VolumeCappedFills, res.Warnings)
	}
}
