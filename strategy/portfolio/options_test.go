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

// TestRefusesMarginAndVolumeCap: the costs one account with weights
// cannot model are refused, naming why.
func TestRefusesMarginAndVolumeCap(t *testing.T) {
	a := series("A-USD@1d", 100, 100, 100)
	al, _ := Align([]strategy.Bars{a})
	reb, _ := ParseRebalance("bar")
	for _, c := range []struct {
		costs backtest.Costs
		want  string
	}{
		{backtest.Costs{Leverage: 2, MaintenanceMargin: 0.005}, "one cash account sized by weights"},
		{backtest.Costs{MaxVolumePct: 10}, "volume cap is for a backtest over one series"},
	} {
		cfg := frictionless()
		cfg.Costs = c.costs
		_, err := Run(context.Background(), al, [][]float64{constant(3, 1)}, reb, cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.costs, err, c.want)
		}
	}
}
