package backtest

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
)

// stepFunc adapts a function to Stepper: a hand-written decider.
type stepFunc func(i int, a strategy.Account) (strategy.Intent, error)

func (f stepFunc) Step(i int, a strategy.Account) (strategy.Intent, error) { return f(i, a) }

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// mkBars builds bars from open/close pairs; high and low bracket them.
func mkBars(series string, step time.Duration, oc ...float64) strategy.Bars {
	n := len(oc) / 2
	b := strategy.Bars{Series: series, Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for i := range n {
		o, c := oc[2*i], oc[2*i+1]
		b.Time[i] = t0.Add(time.Duration(i) * step).Unix()
		b.Open[i], b.Close[i], b.High[i], b.Low[i], b.Volume[i] = o, c, max(o, c), min(o, c), 1
	}
	return b
}

func cfgWith(capital int64, fee, slip float64) Config {
	return Config{Capital: decimal.NewFromInt(capital), FeeBps: fee, SlippageBps: slip}
}

func nan() float64 { return math.NaN() }

// near reports whether got equals want to float rounding (or both NaN).
func near(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-12*max(1, math.Abs(want))
}

func checkFloat(t *testing.T, name string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %.15g, want %.15g", name, got, want)
	}
}

func checkMoney(t *testing.T, name string, got float64, want string) {
	t.Helper()
	if s := Money(got); s != want {
		t.Errorf("%s = %s (%.15g), want %s", name, s, got, want)
	}
}

func hasWarning(r *Result, prefix string) bool {
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}

func stddev(r []float64) (mean, sd float64) {
	for _, x := range r {
		mean += x
	}
	mean /= float64(len(r))
	for _, x := range r {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(r)-1))
}

// TestMicroLongQty is a hand-computed round trip with quantity intents:
// buy 10 decided at bar 0's close fills at bar 1's open, sell 10 decided at
// bar 1's close fills at bar 2's open; fee 10 bps, slippage 50 bps.
func TestMicroLongQty(t *testing.T) {
	bars := mkBars("X@1d", 24*time.Hour, 100, 100, 100, 110, 120, 120, 120, 125)
	st := stepFunc(func(i int, a strategy.Account) (strategy.Intent, error) {
		switch i {
		case 0:
			return strategy.Intent{Kind: strategy.Qty, Value: 10}, nil
		case 1:
			if a.Position != 10 {
				t.Errorf("bar 1 position %v, want 10", a.Position)
			}
			// cash after buying 10 at 100.5 with a 1.005 fee; equity at close 110
			checkFloat(t, "bar 1 cash", a.Cash, 10000-1005-1.005)
			checkFloat(t, "bar 1 equity", a.Equity, 10000-1005-1.005+1100)
			return strategy.Intent{Kind: strategy.Qty, Value: -10}, nil
		}
		return strategy.Intent{}, nil
	})
	r, err := Run(context.Background(), bars, cfgWith(10000, 10, 50), Decisions{Stepper: st})
	if err != nil {
		t.Fatal(err)
	}
	// Fills: buy 10 @ 100*1.005 = 100.5 (fee 1.005), sell 10 @ 120*0.995 = 119.4 (fee 1.194).
	e := []float64{10000, 10000 - 1005 - 1.005 + 1100, 10000 - 1005 - 1.005 + 1194 - 1.194, 10000 - 1005 - 1.005 + 1194 - 1.194}
	final := e[3]
	for i := range e {
		checkFloat(t, "equity", r.Curve.Equity[i], e[i])
	}
	m := r.Metrics
	rets := []float64{0, e[1]/e[0] - 1, e[2]/e[1] - 1, 0}
	mean, sd := stddev(rets)
	checkFloat(t, "total_return", m.TotalReturn, final/10000-1)
	checkFloat(t, "cagr", m.CAGR, math.Pow(final/10000, 365.25/4)-1) // 3 bar steps + 1 bar = 4 days
	checkFloat(t, "sharpe", m.Sharpe, mean/sd*math.Sqrt(365))
	checkFloat(t, "sortino", m.Sortino, nan()) // no losing period
	checkFloat(t, "max_drawdown", m.MaxDrawdown, 0)
	checkFloat(t, "calmar", m.Calmar, nan())
	checkFloat(t, "win_rate", m.WinRate, 1)
	checkFloat(t, "profit_factor", m.ProfitFactor, nan()) // no losers
	checkMoney(t, "expectancy", m.Expectancy, "186.80")
	checkMoney(t, "fees_paid", m.FeesPaid, "2.20")
	checkFloat(t, "fees_paid exact", m.FeesPaid, 2.199)
	checkMoney(t, "slippage_cost", m.SlippageCost, "11.00") // 10*100*0.005 + 10*120*0.005
	checkMoney(t, "final_equity", m.FinalEquity, "10186.80")
	checkFloat(t, "exposure", m.Exposure, 0.25) // held at bar 1's close only
	checkFloat(t, "buy_and_hold", m.BuyAndHoldReturn, 0.25)
	if m.Trades != 1 || m.Bars != 4 || m.PeriodsPerYear != 365 || m.MaxDrawdownBars != 0 {
		t.Errorf("trades %d bars %d P %v dd bars %d", m.Trades, m.Bars, m.PeriodsPerYear, m.MaxDrawdownBars)
	}
	if !m.Start.Equal(t0) || !m.End.Equal(t0.Add(72*time.Hour)) {
		t.Errorf("start %v end %v", m.Start, m.End)
	}
	if len(r.Trades) != 1 {
		t.Fatalf("trades %+v", r.Trades)
	}
	tr := r.Trades[0]
	checkFloat(t, "entry", tr.EntryPrice, 100.5)
	checkFloat(t, "exit", tr.ExitPrice, 119.4)
	checkFloat(t, "pnl", tr.PnL, 1194-1005-2.199)
	checkFloat(t, "trade fees", tr.Fees, 2.199)
	checkFloat(t, "trade return", tr.Return, (1194-1005-2.199)/1005)
	if tr.Side != "long" || tr.Quantity != 10 || !tr.EntryTime.Equal(t0.Add(24*time.Hour)) || !tr.ExitTime.Equal(t0.Add(48*time.Hour)) {
		t.Errorf("trade %+v", tr)
	}
	if r.OpenPosition != nil {
		t.Errorf("open position %+v, want none", r.OpenPosition)
	}
	if !hasWarning(r, "too few trades: 1 ") {
		t.Errorf("warnings %q lack too few trades", r.Warnings)
	}
}

// TestMicroShortFlip: a short from a target, flipped long by a smaller
// target, left open at the end; no costs, so every figure is round.
func TestMicroShortFlip(t *testing.T) {
	bars := mkBars("X@1h", time.Hour, 10, 10, 10, 12, 12, 9, 8, 10, 10, 6)
	targets := []float64{-1, nan(), 0.5, nan(), nan()}
	r, err := Run(context.Background(), bars, cfgWith(1000, 0, 0), Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	// Bar 1 open: short 1000/10 = 100 @10, cash 2000. Bar 3 open: equity
	// 2000-800 = 1200, target 0.5 → long 0.5*1200/8 = 75, so buy 175 @8.
	e := []float64{1000, 800, 1100, 1350, 1050}
	for i := range e {
		checkFloat(t, "equity", r.Curve.Equity[i], e[i])
	}
	m := r.Metrics
	checkFloat(t, "total_return", m.TotalReturn, 0.05)
	checkFloat(t, "max_drawdown", m.MaxDrawdown, 1-1050.0/1350)
	if m.MaxDrawdownBars != 2 || m.MaxDrawdownDuration != 2*time.Hour {
		t.Errorf("drawdown duration %d bars %v, want 2 bars 2h (1000 at bar 0 regained at bar 2)", m.MaxDrawdownBars, m.MaxDrawdownDuration)
	}
	rets := []float64{0, -0.2, 1100.0/800 - 1, 1350.0/1100 - 1, 1050.0/1350 - 1}
	mean, sd := stddev(rets)
	dd := math.Sqrt((0.2*0.2 + (1050.0/1350-1)*(1050.0/1350-1)) / 5)
	checkFloat(t, "sharpe", m.Sharpe, mean/sd*math.Sqrt(8760))
	checkFloat(t, "sortino", m.Sortino, mean/dd*math.Sqrt(8760))
	cagr := math.Pow(1.05, 365.25*24/5) - 1 // 5 hours of data
	checkFloat(t, "cagr", m.CAGR, cagr)
	checkFloat(t, "calmar", m.Calmar, cagr/(1-1050.0/1350))
	checkFloat(t, "exposure", m.Exposure, 0.8)
	checkFloat(t, "buy_and_hold", m.BuyAndHoldReturn, -0.4)
	if m.Trades != 1 || len(r.Trades) != 1 {
		t.Fatalf("trades %d %+v", m.Trades, r.Trades)
	}
	tr := r.Trades[0]
	if tr.Side != "short" || tr.EntryPrice != 10 || tr.ExitPrice != 8 || tr.Quantity != 100 || tr.PnL != 200 || tr.EntryBar != 1 || tr.ExitBar != 3 {
		t.Errorf("trade %+v", tr)
	}
	p := r.OpenPosition
	if p == nil || p.Side != "long" || p.Quantity != 75 || p.EntryPrice != 8 || p.Mark != 6 || p.PnL != -150 {
		t.Fatalf("open position %+v", p)
	}
	if !hasWarning(r, "a position is still open") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// TestMicroTargetCosts: target sizing with costs and fill=close. A full
// target from flat spends exactly the equity, fees included; repeating the
// standing target does not trade.
func TestMicroTargetCosts(t *testing.T) {
	bars := mkBars("X@1d", 24*time.Hour, 100, 100, 100, 105, 105, 110, 110, 108)
	cfg := cfgWith(10000, 10, 5)
	cfg.Fill = FillClose
	r, err := Run(context.Background(), bars, cfg, Decisions{Targets: []float64{1, 1, 1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	q := 10000 / (100 * 1.0005 * 1.001)
	buyFee := q * 100.05 * 0.001
	cash := 10000 - q*100.05 - buyFee // 0 up to rounding
	if math.Abs(cash) > 1e-9 {
		t.Errorf("cash after a full target %v, want 0", cash)
	}
	sellPx := 108 * 0.9995
	sellFee := q * sellPx * 0.001
	final := cash + q*sellPx - sellFee
	checkFloat(t, "equity 0", r.Curve.Equity[0], cash+q*100)
	checkFloat(t, "equity 2", r.Curve.Equity[2], cash+q*110)
	checkFloat(t, "final", r.Metrics.FinalEquity, final)
	checkFloat(t, "fees", r.Metrics.FeesPaid, buyFee+sellFee)
	checkFloat(t, "slippage", r.Metrics.SlippageCost, q*100*0.0005+q*108*0.0005)
	checkFloat(t, "pnl", r.AllTrades[0].PnL, q*sellPx-sellFee-q*100.05-buyFee)
	checkFloat(t, "exposure", r.Metrics.Exposure, 0.75)
	if r.Metrics.Trades != 1 {
		t.Errorf("trades %d, want 1 (a repeated target must not trade)", r.Metrics.Trades)
	}
	if !hasWarning(r, "fill=close") {
		t.Errorf("warnings %q lack the fill=close warning", r.Warnings)
	}
	// The peak is bar 2's close; the exit at 108 less costs is the trough.
	checkFloat(t, "max_drawdown", r.Metrics.MaxDrawdown, 1-final/(cash+q*110))
}

// smaCross is the reference logic: long while the fast SMA of closes is
// above the slow one, flat otherwise.
func sma(x []float64, n int) []float64 {
	out := make([]float64, len(x))
	var sum float64
	for i, v := range x {
		sum += v
		if i >= n {
			sum -= x[i-n]
		}
		if i >= n-1 {
			out[i] = sum / float64(n)
		} else {
			out[i] = math.NaN()
		}
	}
	return out
}

func crossTargets(c []float64, fast, slow int) []float64 {
	f, s := sma(c, fast), sma(c, slow)
	t := make([]float64, len(c))
	for i := range t {
		t[i] = math.NaN()
		if i == 0 || math.IsNaN(s[i-1]) {
			continue
		}
		switch {
		case f[i] > s[i] && f[i-1] <= s[i-1]:
			t[i] = 1
		case f[i] < s[i] && f[i-1] >= s[i-1]:
			t[i] = 0
		}
	}
	return t
}

// crossStepper is the same logic written event-style, with its own state.
type crossStepper struct {
	close      []float64
	fast, slow []float64
}

func (c *crossStepper) Step(i int, a strategy.Account) (strategy.Intent, error) {
	if i == 0 || math.IsNaN(c.slow[i-1]) {
		return strategy.Intent{}, nil
	}
	f, s := c.fast[i], c.slow[i]
	switch {
	case f > s && a.Position <= 0:
		return strategy.Intent{Kind: strategy.Target, Value: 1}, nil
	case f < s && a.Position > 0:
		return strategy.Intent{Kind: strategy.Target, Value: 0}, nil
	}
	return strategy.Intent{}, nil
}

func walk(n int, seed uint64) strategy.Bars {
	b := strategy.Bars{Series: "W@1h", Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	p := 100.0
	x := seed
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		u := float64(x>>11)*0x1p-53 - 0.5
		o := p
		p *= 1 + 0.02*u + 0.0004*math.Sin(float64(i)/300)
		b.Time[i] = t0.Add(time.Duration(i) * time.Hour).Unix()
		b.Open[i], b.Close[i] = o, p
		b.High[i], b.Low[i] = max(o, p)*1.001, min(o, p)*0.999
		b.Volume[i] = 100
	}
	return b
}

func TestStylesAgree(t *testing.T) {
	bars := walk(5000, 42)
	cfg := DefaultConfig()
	vec, err := Run(context.Background(), bars, cfg, Decisions{Targets: crossTargets(bars.Close, 10, 30)})
	if err != nil {
		t.Fatal(err)
	}
	st := &crossStepper{close: bars.Close, fast: sma(bars.Close, 10), slow: sma(bars.Close, 30)}
	ev, err := Run(context.Background(), bars, cfg, Decisions{Stepper: st})
	if err != nil {
		t.Fatal(err)
	}
	if vec.Metrics.Trades < 20 {
		t.Fatalf("only %d trades; the test needs a walk that crosses", vec.Metrics.Trades)
	}
	a, _ := json.Marshal(vec)
	b, _ := json.Marshal(ev)
	if string(a) != string(b) {
		t.Errorf("vectorised and event-driven SMA cross differ:\n%s\n%s", a, b)
	}
}

func TestDeterministicJSON(t *testing.T) {
	bars := walk(20000, 7)
	targets := crossTargets(bars.Close, 5, 20)
	var first []byte
	for range 3 {
		r, err := Run(context.Background(), bars, DefaultConfig(), Decisions{Targets: targets})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatal("identical inputs gave different JSON")
		}
	}
}

func TestTradesClamped(t *testing.T) {
	bars := walk(20000, 3)
	targets := crossTargets(bars.Close, 3, 8)
	for _, tc := range []struct {
		limit, want int
		note        string
	}{
		{0, 50, "showing the first 50 of"},
		{10, 10, "showing the first 10 of"},
		{600, 500, "trades_limit 600 is above the maximum 500; showing the first 500 of"},
		{100000, 500, "trades_limit 100000 is above the maximum 500"},
	} {
		cfg := DefaultConfig()
		cfg.TradesLimit = tc.limit
		r, err := Run(context.Background(), bars, cfg, Decisions{Targets: targets})
		if err != nil {
			t.Fatal(err)
		}
		if r.Metrics.Trades <= 500 {
			t.Fatalf("only %d trades; the test needs more than 500", r.Metrics.Trades)
		}
		if len(r.Trades) != tc.want || !strings.HasPrefix(r.TradesClamped, tc.note) || len(r.AllTrades) != r.Metrics.Trades {
			t.Errorf("limit %d: %d trades listed, note %q", tc.limit, len(r.Trades), r.TradesClamped)
		}
	}
	// Few trades: no note.
	r, err := Run(context.Background(), bars, DefaultConfig(), Decisions{Targets: crossTargets(bars.Close, 200, 2000)})
	if err != nil {
		t.Fatal(err)
	}
	if r.TradesClamped != "" || len(r.Trades) != r.Metrics.Trades {
		t.Errorf("note %q with %d of %d trades", r.TradesClamped, len(r.Trades), r.Metrics.Trades)
	}
}

func TestWarnings(t *testing.T) {
	bars := mkBars("X@1d", 24*time.Hour, 100, 100, 100, 101, 101, 102)
	none := []float64{nan(), nan(), nan()}
	cfg := DefaultConfig()
	cfg.Warmup = 50
	cfg.From = t0.Add(-10 * 24 * time.Hour)
	cfg.To = t0.Add(30 * 24 * time.Hour)
	r, err := Run(context.Background(), bars, cfg, Decisions{Targets: none})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"warm-up longer than the range", "range clipped: from", "range clipped: to", "the strategy never entered"} {
		if !hasWarning(r, w) {
			t.Errorf("missing warning %q in %q", w, r.Warnings)
		}
	}
	if hasWarning(r, "too few trades") {
		t.Errorf("never entered and too few trades both reported: %q", r.Warnings)
	}
	// A range inside the data is not clipped.
	cfg = DefaultConfig()
	cfg.From, cfg.To = t0.Add(-time.Hour), t0.Add(49*time.Hour)
	r, err = Run(context.Background(), bars, cfg, Decisions{Targets: none})
	if err != nil {
		t.Fatal(err)
	}
	if hasWarning(r, "range clipped") {
		t.Errorf("unexpected %q", r.Warnings)
	}
}

func TestBustAndBorrowing(t *testing.T) {
	// Short the whole equity, then the price triples: equity goes below zero.
	bars := mkBars("X@1d", 24*time.Hour, 10, 10, 10, 10, 10, 35, 40, 40)
	r, err := Run(context.Background(), bars, cfgWith(1000, 0, 0), Decisions{Targets: []float64{-1, nan(), 0.5, nan()}})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(r, "equity reached zero") {
		t.Fatalf("warnings %q", r.Warnings)
	}
	// 2000 cash - 100*35 = -1500 at bar 2; trading stopped, equity stays.
	checkFloat(t, "equity 2", r.Curve.Equity[2], -1500)
	checkFloat(t, "equity 3", r.Curve.Equity[3], -1500)
	if r.OpenPosition != nil || r.Metrics.Trades != 1 || r.Metrics.CAGR != -1 {
		t.Errorf("position %+v trades %d cagr %v", r.OpenPosition, r.Metrics.Trades, r.Metrics.CAGR)
	}
	// Buying more than the cash allows with a quantity borrows, with a warning.
	st := stepFunc(func(i int, a strategy.Account) (strategy.Intent, error) {
		if i == 0 {
			return strategy.Intent{Kind: strategy.Qty, Value: 200}, nil
		}
		return strategy.Intent{}, nil
	})
	r, err = Run(context.Background(), mkBars("X@1d", 24*time.Hour, 10, 10, 10, 10, 10, 10), cfgWith(1000, 0, 0), Decisions{Stepper: st})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(r, "cash went negative") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

func TestScaleInOut(t *testing.T) {
	// Buy 1 @10, buy 1 @20 (avg 15), sell 2 @30: one trade, qty 2.
	bars := mkBars("X@1d", 24*time.Hour, 10, 10, 10, 10, 20, 20, 30, 30)
	qty := []float64{1, 1, -2, 0}
	st := stepFunc(func(i int, a strategy.Account) (strategy.Intent, error) {
		if qty[i] == 0 {
			return strategy.Intent{}, nil
		}
		return strategy.Intent{Kind: strategy.Qty, Value: qty[i]}, nil
	})
	r, err := Run(context.Background(), bars, cfgWith(1000, 0, 0), Decisions{Stepper: st})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.AllTrades) != 1 {
		t.Fatalf("trades %+v", r.AllTrades)
	}
	tr := r.AllTrades[0]
	if tr.Quantity != 2 || tr.EntryPrice != 15 || tr.ExitPrice != 30 || tr.PnL != 30 {
		t.Errorf("trade %+v", tr)
	}
}

func TestRunErrors(t *testing.T) {
	good := mkBars("X@1d", 24*time.Hour, 1, 1, 1, 1)
	bad := good
	bad.Close = []float64{1, 0}
	noSeries := good
	noSeries.Series = ""
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		bars strategy.Bars
		cfg  Config
		d    Decisions
		kind Kind
		msg  string
	}{
		{"no bars", strategy.Bars{}, DefaultConfig(), Decisions{Targets: []float64{}}, KindInvalid, "no bars"},
		{"zero price", bad, DefaultConfig(), Decisions{Targets: []float64{0, 0}}, KindInvalid, "above zero"},
		{"capital", good, cfgWith(0, 0, 0), Decisions{Targets: []float64{0, 0}}, KindInvalid, "capital"},
		{"fee", good, cfgWith(1, -1, 0), Decisions{Targets: []float64{0, 0}}, KindInvalid, "fee_bps"},
		{"granularity", noSeries, DefaultConfig(), Decisions{Targets: []float64{0, 0}}, KindInvalid, "annualise"},
		{"both", good, DefaultConfig(), Decisions{Targets: []float64{0, 0}, Stepper: stepFunc(nil)}, KindInvalid, "not both"},
		{"neither", good, DefaultConfig(), Decisions{}, KindInvalid, "neither"},
		{"length", good, DefaultConfig(), Decisions{Targets: []float64{0}}, KindInvalid, "1 targets for 2 bars"},
		{"inf", good, DefaultConfig(), Decisions{Targets: []float64{math.Inf(1), 0}}, KindInvalid, "finite"},
		{"step error", good, DefaultConfig(), Decisions{Stepper: stepFunc(func(int, strategy.Account) (strategy.Intent, error) {
			return strategy.Intent{}, boom
		})}, KindStrategy, "strategy failed at bar 0"},
		{"step nan", good, DefaultConfig(), Decisions{Stepper: stepFunc(func(int, strategy.Account) (strategy.Intent, error) {
			return strategy.Intent{Kind: strategy.Target, Value: math.NaN()}, nil
		})}, KindStrategy, "finite value"},
	} {
		_, err := Run(context.Background(), tc.bars, tc.cfg, tc.d)
		var be *Error
		if !errors.As(err, &be) || be.Kind != tc.kind || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %v error containing %q", tc.name, err, tc.kind, tc.msg)
		}
	}
	_, err := Run(context.Background(), good, DefaultConfig(), Decisions{Stepper: stepFunc(func(int, strategy.Account) (strategy.Intent, error) {
		return strategy.Intent{}, boom
	})})
	if !errors.Is(err, boom) {
		t.Errorf("stepper error not wrapped: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, good, DefaultConfig(), Decisions{Targets: []float64{0, 0}})
	var be *Error
	if !errors.As(err, &be) || be.Kind != KindCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled run: %v", err)
	}
}

// TestMicroWinLoss: two round trips, a winner and a loser, for the trade
// statistics: win rate, profit factor, expectancy (fee 10 bps, no slippage).
func TestMicroWinLoss(t *testing.T) {
	bars := mkBars("X@1d", 24*time.Hour, 10, 10, 10, 11, 12, 12, 12, 10, 9, 9, 9, 9)
	qty := []float64{2, -2, 2, -2, 0, 0}
	st := stepFunc(func(i int, a strategy.Account) (strategy.Intent, error) {
		if qty[i] == 0 {
			return strategy.Intent{}, nil
		}
		return strategy.Intent{Kind: strategy.Qty, Value: qty[i]}, nil
	})
	r, err := Run(context.Background(), bars, cfgWith(1000, 10, 0), Decisions{Stepper: st})
	if err != nil {
		t.Fatal(err)
	}
	// Buy 2 @10 (bar 1's open), sell 2 @12 (bar 2's): +4 less fees 0.02+0.024.
	// Buy 2 @12 (bar 3's open), sell 2 @9 (bar 4's): -6 less fees 0.024+0.018.
	win, loss := 4-0.044, -6-0.042
	if len(r.AllTrades) != 2 {
		t.Fatalf("trades %+v", r.AllTrades)
	}
	checkFloat(t, "win pnl", r.AllTrades[0].PnL, win)
	checkFloat(t, "loss pnl", r.AllTrades[1].PnL, loss)
	m := r.Metrics
	checkFloat(t, "win_rate", m.WinRate, 0.5)
	checkFloat(t, "profit_factor", m.ProfitFactor, win/-loss)
	checkFloat(t, "expectancy", m.Expectancy, (win+loss)/2)
	checkMoney(t, "expectancy", m.Expectancy, "-1.04")
	checkFloat(t, "fees", m.FeesPaid, 0.086)
	checkFloat(t, "final", m.FinalEquity, 1000+win+loss)
	checkFloat(t, "exposure", m.Exposure, 2.0/6) // held at the closes of bars 1 and 3
}

// TestEvaluateEqualsRun: the streaming evaluation reports, bit for bit,
// the metrics a full run reports, for targets, signals and a stepper,
// both fill models and a reused Scratch (a second, shorter series in
// between must leave nothing behind).
func TestEvaluateEqualsRun(t *testing.T) {
	sc := Scratch{Blocks: 7}
	withReturns := Scratch{Blocks: 7, Returns: true}
	busts := 0
	for seed := uint64(1); seed <= 4; seed++ {
		bars := walk(3000+int(seed)*500, seed)
		tg := crossTargets(bars.Close, 5+int(seed), 20+3*int(seed))
		long, exit := make([]bool, len(tg)), make([]bool, len(tg))
		for i, x := range tg {
			long[i], exit[i] = x == 1, x == 0
		}
		sig := strategy.Signals{Long: long, Exit: exit, Size: []float64{0.5 + 0.1*float64(seed)}}
		st := &crossStepper{close: bars.Close, fast: sma(bars.Close, 10), slow: sma(bars.Close, 30)}
		// Leveraged long and short, so some runs go bust.
		lev := make([]float64, len(tg))
		for i, x := range tg {
			lev[i] = x
			if x == 1 {
				lev[i] = 40
			} else if x == 0 {
				lev[i] = -40
			}
		}
		for _, fill := range []Fill{FillNextOpen, FillClose} {
			cfg := DefaultConfig()
			cfg.Fill = fill
			for name, d := range map[string]Decisions{"targets": {Targets: tg}, "leveraged": {Targets: lev}, "signals": {Signals: &sig}, "stepper": {Stepper: st}} {
				want, err := Run(context.Background(), bars, cfg, d)
				if err != nil {
					t.Fatal(err)
				}
				if want.Metrics.FinalEquity <= 0 || slices.ContainsFunc(want.Warnings, func(w string) bool { return strings.Contains(w, "equity reached zero") }) {
					busts++
				}
				got, err := Evaluate(context.Background(), bars, cfg, d, &sc)
				if err != nil {
					t.Fatal(err)
				}
				a, _ := json.Marshal(want.Metrics)
				b, _ := json.Marshal(got.Metrics)
				if string(a) != string(b) || !sameBits(want.Metrics.Sharpe, got.Metrics.Sharpe) || !sameBits(want.Metrics.FinalEquity, got.Metrics.FinalEquity) {
					t.Errorf("seed %d %s %v: Evaluate\n%s\nRun\n%s", seed, name, fill, b, a)
				}
				if mo := MomentsOf(want.Returns); mo != got.Moments {
					t.Errorf("seed %d %s %v: moments %+v, want %+v", seed, name, fill, got.Moments, mo)
				}
				// The blocks summed as the run goes are BlockStats' of the
				// returns; asked for, the returns are Run's.
				if bs := BlockStats(want.Returns, sc.Blocks); !slices.Equal(bs, got.Blocks) {
					t.Errorf("seed %d %s %v: blocks %+v, want %+v", seed, name, fill, got.Blocks, bs)
				}
				if d.Stepper == nil && got.Returns != nil {
					t.Errorf("seed %d %s %v: returns not asked for, yet kept", seed, name, fill)
				}
				kept, err := Evaluate(context.Background(), bars, cfg, d, &withReturns)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(kept.Returns, want.Returns) || kept.Moments != got.Moments || !slices.Equal(kept.Blocks, got.Blocks) {
					t.Errorf("seed %d %s %v: with the returns kept the evaluation differs", seed, name, fill)
				}
			}
		}
		short := walk(700, seed+10)
		if _, err := Evaluate(context.Background(), short, DefaultConfig(), Decisions{Targets: crossTargets(short.Close, 5, 20)}, &sc); err != nil {
			t.Fatal(err)
		}
	}
	if busts == 0 {
		t.Error("no run went bust: the bust path is not compared")
	}
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// TestEvaluateSumsDeviationsWhenTheMeanDominates: a run whose returns are
// nearly constant (a steady climb held long) has a mean too large against
// their spread for the power sums (powerMoments); an evaluation that
// kept no returns runs again keeping them and reports, bit for bit, the
// two-pass moments and the metrics Run reports.
func TestEvaluateSumsDeviationsWhenTheMeanDominates(t *testing.T) {
	const n = 400
	bars := mkBars("X@1h", time.Hour)
	p := 100.0
	for i := range n {
		o := p
		p *= 1.001 + 1e-5*float64(i%3)
		bars.Time = append(bars.Time, t0.Add(time.Duration(i)*time.Hour).Unix())
		bars.Open, bars.Close = append(bars.Open, o), append(bars.Close, p)
		bars.High, bars.Low, bars.Volume = append(bars.High, p), append(bars.Low, o), append(bars.Volume, 1)
	}
	long := make([]bool, n)
	long[0] = true
	d := Decisions{Signals: &strategy.Signals{Long: long}}
	cfg := DefaultConfig()
	want, err := Run(context.Background(), bars, cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	var s1, s2, s3, s4 float64
	for _, x := range want.Returns {
		s1 += x
		s2 += x * x
		s3 += x * x * x
		s4 += x * x * x * x
	}
	if _, ok := powerMoments(n, s1, s2, s3, s4); ok {
		t.Fatal("the returns do not need the two-pass moments: the case tests nothing")
	}
	got, err := Evaluate(context.Background(), bars, cfg, d, &Scratch{})
	if err != nil {
		t.Fatal(err)
	}
	if two := centralMoments(want.Returns, s1); got.Moments != two || got.Returns != nil {
		t.Fatalf("moments %+v, want the two-pass %+v", got.Moments, two)
	}
	a, _ := json.Marshal(want.Metrics)
	b, _ := json.Marshal(got.Metrics)
	if string(a) != string(b) || !sameBits(want.Metrics.Sharpe, got.Metrics.Sharpe) || math.IsNaN(got.Metrics.Sharpe) {
		t.Fatalf("Evaluate\n%s\nRun\n%s", b, a)
	}
}
