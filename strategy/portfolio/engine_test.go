package portfolio

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/templates"
)

// fixture reads testdata/assets.csv: two daily series, B without a bar
// on 2024-01-03, aligned on their calendar.
func fixture(t *testing.T) []strategy.Bars {
	t.Helper()
	f, err := os.Open("testdata/assets.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*strategy.Bars{}
	var order []string
	for _, r := range rows[1:] {
		day, err := time.Parse(time.DateOnly, r[0])
		if err != nil {
			t.Fatal(err)
		}
		b := by[r[1]]
		if b == nil {
			b = &strategy.Bars{Series: r[1]}
			by[r[1]] = b
			order = append(order, r[1])
		}
		v := make([]float64, 5)
		for k := range v {
			if v[k], err = strconv.ParseFloat(r[2+k], 64); err != nil {
				t.Fatal(err)
			}
		}
		b.Time = append(b.Time, day.Unix())
		b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, v[0]), append(b.High, v[1]), append(b.Low, v[2]), append(b.Close, v[3]), append(b.Volume, v[4])
	}
	var raw []strategy.Bars
	for _, name := range order {
		raw = append(raw, *by[name])
	}
	al, err := Align(raw)
	if err != nil {
		t.Fatal(err)
	}
	return al
}

// table reads a hand-computed table (testdata/hand.py wrote it in exact
// decimals): per bar, cash, each quantity and equity.
type row struct {
	time                 string
	cash, qa, qb, equity decimal.Decimal
}

func table(t *testing.T, name string) []row {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []row
	for _, r := range rows[1:] {
		out = append(out, row{r[0], decimal.RequireFromString(r[1]), decimal.RequireFromString(r[2]), decimal.RequireFromString(r[3]), decimal.RequireFromString(r[4])})
	}
	return out
}

func costs() backtest.Config {
	return backtest.Config{Capital: decimal.NewFromInt(10000), FeeBps: 10, SlippageBps: 5}
}

// replay is an independent recomputation of the rules in exact decimal
// arithmetic, as the docs state them: every bar a rebalance; an asset's
// target sized at the decision's close on the equity there, filled at
// that asset's next bar's open with slippage against the trader and the
// fee on the notional; no fill, no decision, at a bar an asset lacks.
func replay(assets []strategy.Bars, weights [][]float64, feeBps, slipBps int64) []row {
	fee, slip := decimal.New(feeBps, -4), decimal.New(slipBps, -4)
	one := decimal.NewFromInt(1)
	sizing := one.Add(slip).Mul(one.Add(fee))
	cash := decimal.NewFromInt(10000)
	m, n := len(assets), assets[0].Len()
	q, mark := make([]decimal.Decimal, m), make([]decimal.Decimal, m)
	pending := map[int]decimal.Decimal{}
	var out []row
	for i := 0; i < n; i++ {
		for a := range assets {
			b := assets[a]
			if math.IsNaN(b.Close[i]) {
				continue
			}
			if tq, ok := pending[a]; ok {
				delete(pending, a)
				if dq := tq.Sub(q[a]); !dq.IsZero() {
					side := one
					if dq.IsNegative() {
						side = one.Neg()
					}
					px := decimal.NewFromFloat(b.Open[i]).Mul(one.Add(side.Mul(slip)))
					cash = cash.Sub(dq.Mul(px)).Sub(dq.Abs().Mul(px).Mul(fee))
					q[a] = tq
				}
			}
			mark[a] = decimal.NewFromFloat(b.Close[i])
		}
		eq := cash
		for a := range q {
			eq = eq.Add(q[a].Mul(mark[a]))
		}
		sum := decimal.Zero
		for a := range assets {
			if w := weights[a][i]; !math.IsNaN(w) {
				sum = sum.Add(decimal.NewFromFloat(w).Abs())
			}
		}
		for a := range assets {
			w := weights[a][i]
			if math.IsNaN(w) || math.IsNaN(assets[a].Close[i]) || i == n-1 {
				continue
			}
			wd := decimal.NewFromFloat(w)
			if sum.GreaterThan(one) {
				wd = wd.Div(sum)
			}
			pending[a] = wd.Mul(eq).DivRound(decimal.NewFromFloat(assets[a].Close[i]).Mul(sizing), 30)
		}
		out = append(out, row{cash: cash, qa: q[0], qb: q[1], equity: eq})
	}
	return out
}

func constant(n int, w float64) []float64 {
	c := make([]float64, n)
	for i := range c {
		c[i] = w
	}
	return c
}

// agree checks the engine's curve and final holdings against a table
// to the cent (quantities to 1e-8).
func agree(t *testing.T, what string, res *Result, want []row) {
	t.Helper()
	if len(res.Curve.Equity) != len(want) {
		t.Fatalf("%s: %d bars, want %d", what, len(res.Curve.Equity), len(want))
	}
	for i, w := range want {
		if got := backtest.Money(res.Curve.Equity[i]); got != w.equity.StringFixed(2) {
			t.Errorf("%s: equity at bar %d (%s) = %s, want %s", what, i, w.time, got, w.equity.StringFixed(2))
		}
	}
	last := want[len(want)-1]
	for k, wq := range []decimal.Decimal{last.qa, last.qb} {
		if got := decimal.NewFromFloat(res.Assets[k].Quantity).Round(8); !got.Equal(wq.Round(8)) {
			t.Errorf("%s: final quantity of %s = %s, want %s", what, res.Assets[k].Series, got, wq)
		}
	}
	if got := backtest.Money(res.Metrics.FinalEquity); got != last.equity.StringFixed(2) {
		t.Errorf("%s: final_equity %s, want %s", what, got, last.equity.StringFixed(2))
	}
}

func TestEqualWeightHandTable(t *testing.T) {
	assets := fixture(t)
	n := assets[0].Len()
	weights := [][]float64{constant(n, 0.5), constant(n, 0.5)}
	reb, _ := ParseRebalance("bar")
	res, err := Run(context.Background(), assets, weights, reb, costs())
	if err != nil {
		t.Fatal(err)
	}
	want := table(t, "equal_weight.csv")
	agree(t, "engine vs hand table", res, want)
	again := replay(assets, weights, 10, 5)
	for i := range want {
		if a, b := again[i].equity.StringFixed(2), want[i].equity.StringFixed(2); a != b {
			t.Errorf("recomputation vs table at bar %d: %s, %s", i, a, b)
		}
	}
	// The metrics are backtest's, on the portfolio's curve, in its shape.
	g := strategy.Granularity("1d")
	m := backtest.EquityMetrics(res.Curve, nil, 10000, g.PeriodsPerYear(), g.Duration())
	if res.Metrics.Sharpe != m.Sharpe || res.Metrics.MaxDrawdown != m.MaxDrawdown || res.Metrics.CAGR != m.CAGR {
		t.Errorf("metrics %+v differ from backtest's on the same curve %+v", res.Metrics, m)
	}
	b, _ := json.Marshal(res)
	var rep struct {
		Metrics  backtest.ReportedMetrics `json:"metrics"`
		Settings struct {
			Capital string `json:"capital"`
		} `json:"settings"`
		Assets []struct {
			Value string `json:"value"`
		} `json:"assets"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Metrics.FinalEquity != want[n-1].equity.StringFixed(2) || rep.Settings.Capital != "10000.00" || rep.Metrics.Sharpe == nil || rep.Assets[0].Value == "" {
		t.Errorf("report %s", b)
	}
	// Fees: 10 bps of each fill's notional, summed; nothing else is paid.
	if res.Metrics.FeesPaid <= 0 || res.Metrics.SlippageCost <= 0 {
		t.Errorf("fees %v, slippage %v", res.Metrics.FeesPaid, res.Metrics.SlippageCost)
	}
}

func TestPairsHandTable(t *testing.T) {
	assets := fixture(t)
	src, err := templates.Source("pairs_zscore")
	if err != nil {
		t.Fatal(err)
	}
	src = strings.Replace(src, `universe = ["BTC-USD@1d", "ETH-USD@1d"]`, `universe = ["A-USD@1d", "B-USD@1d"]`, 1)
	s, err := script.Load(context.Background(), script.Source{Name: "pairs.star", Text: src},
		script.Options{Overrides: map[string]any{"window": 3, "entry": 1.0, "size": 0.5, "ratio": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	weights, tr, err := s.WeightsTrace(context.Background(), assets)
	if err != nil {
		t.Fatal(err)
	}
	if check, err := s.CheckPortfolioLookahead(context.Background(), assets, tr); err != nil || !script.Passed(check) {
		t.Fatalf("lookahead: %q %v", check, err)
	}
	// The weights, recomputed: the z-score of A-B over the last 3 bars
	// both have, population deviation.
	n := assets[0].Len()
	var kept []int
	for i := 0; i < n; i++ {
		if !math.IsNaN(assets[1].Close[i]) {
			kept = append(kept, i)
		}
	}
	want := constant(n, math.NaN())
	for k, i := range kept {
		if k < 2 {
			continue
		}
		var win [3]float64
		mean := 0.0
		for j := range win {
			u := kept[k-2+j]
			win[j] = assets[0].Close[u] - assets[1].Close[u]
			mean += win[j] / 3
		}
		v := 0.0
		for _, x := range win {
			v += (x - mean) * (x - mean) / 3
		}
		if v == 0 {
			continue // no deviation: no z-score, no decision
		}
		z := (win[2] - mean) / math.Sqrt(v)
		switch {
		case z < -1:
			want[i] = 0.5
		case z > 1:
			want[i] = -0.5
		default:
			want[i] = 0
		}
	}
	for i := range want {
		if !(weights[0][i] == want[i] || math.IsNaN(weights[0][i]) && math.IsNaN(want[i])) || !(weights[1][i] == -want[i] || math.IsNaN(weights[1][i]) && math.IsNaN(want[i])) {
			t.Fatalf("weights A %v B %v, want A %v", weights[0], weights[1], want)
		}
	}
	reb, _ := ParseRebalance(s.Rebalance())
	res, err := Run(context.Background(), assets, weights, reb, costs())
	if err != nil {
		t.Fatal(err)
	}
	hand := table(t, "pairs.csv")
	agree(t, "engine vs hand table", res, hand)
	again := replay(assets, weights, 10, 5)
	for i := range hand {
		if a, b := again[i].equity.StringFixed(2), hand[i].equity.StringFixed(2); a != b {
			t.Errorf("recomputation vs table at bar %d: %s, %s", i, a, b)
		}
	}
	if res.Metrics.Trades < 2 {
		t.Errorf("%d closed trades; the pairs fixture opens and closes both legs", res.Metrics.Trades)
	}
}

// TestCalendarNoForwardFill: B has no bar on 2024-01-03 (bar 2). It is
// never traded there, its order decided on bar 1 waits for bar 3's open,
// a decision at bar 2 is not made for it, and its bar-2 values are
// missing, never carried forward.
func TestCalendarNoForwardFill(t *testing.T) {
	assets := fixture(t)
	b := assets[1]
	if !math.IsNaN(b.Close[2]) || !math.IsNaN(b.Open[2]) || assets[0].Time[2] != time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC).Unix() {
		t.Fatalf("bar 2 of B: open %v close %v", b.Open[2], b.Close[2])
	}
	n := b.Len()
	// B: long from bar 1's decision, flat from bar 4's; no decision
	// otherwise (a weight at bar 2 is one it cannot act on).
	wb := constant(n, math.NaN())
	wb[1], wb[2], wb[4] = 1, 0, 0
	wa := constant(n, 0)
	reb, _ := ParseRebalance("bar")
	res, err := Run(context.Background(), assets, [][]float64{wa, wb}, reb, costs())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.AllTrades {
		if tr.EntryBar == 2 || tr.ExitBar == 2 {
			t.Errorf("a trade of %s at bar 2, where it has no bar: %+v", tr.Series, tr)
		}
	}
	// Filled at bar 3's open (not bar 2's), held through bar 4's decision
	// to 0, closed at bar 5's open.
	if len(res.AllTrades) != 1 || res.AllTrades[0].EntryBar != 3 || res.AllTrades[0].ExitBar != 5 || math.Abs(res.AllTrades[0].EntryPrice-47*1.0005) > 1e-9 {
		t.Fatalf("trades %+v", res.AllTrades)
	}
	// Equity at bar 2 is flat: nothing was held, and nothing was priced
	// from a carried-forward bar.
	if res.Curve.Equity[2] != 10000 {
		t.Errorf("equity at bar 2: %v", res.Curve.Equity[2])
	}
	if res.Assets[1].Bars != n-1 {
		t.Errorf("B has %d bars, want %d", res.Assets[1].Bars, n-1)
	}
}

func TestRebalanceSchedules(t *testing.T) {
	assets := fixture(t) // 2024-01-01 (a Monday) to 2024-01-10
	n := assets[0].Len()
	weights := [][]float64{constant(n, 0.5), constant(n, 0.5)}
	for _, c := range []struct {
		sched string
		want  int
	}{{"bar", n}, {"daily", n}, {"weekly", 2}, {"monthly", 1}, {"drift:0.2", 1}, {"drift:0.001", n - 1}} {
		reb, err := ParseRebalance(c.sched)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), assets, weights, reb, costs())
		if err != nil {
			t.Fatal(err)
		}
		if c.sched == "drift:0.001" {
			if res.Rebalances < 5 {
				t.Errorf("%s: %d rebalances; a tight band rebalances most bars", c.sched, res.Rebalances)
			}
			continue
		}
		if res.Rebalances != c.want {
			t.Errorf("%s: %d rebalances, want %d", c.sched, res.Rebalances, c.want)
		}
	}
	if _, err := ParseRebalance("hourly"); err == nil {
		t.Error("an unknown schedule parsed")
	}
}

func TestWeightsClamped(t *testing.T) {
	assets := fixture(t)
	n := assets[0].Len()
	reb, _ := ParseRebalance("bar")
	over, err := Run(context.Background(), assets, [][]float64{constant(n, 0.8), constant(n, 0.8)}, reb, costs())
	if err != nil {
		t.Fatal(err)
	}
	half, err := Run(context.Background(), assets, [][]float64{constant(n, 0.5), constant(n, 0.5)}, reb, costs())
	if err != nil {
		t.Fatal(err)
	}
	if backtest.Money(over.Metrics.FinalEquity) != backtest.Money(half.Metrics.FinalEquity) {
		t.Errorf("0.8 + 0.8 scaled to 1 ended at %v, 0.5 + 0.5 at %v", over.Metrics.FinalEquity, half.Metrics.FinalEquity)
	}
	if !strings.Contains(strings.Join(over.Warnings, "\n"), "scaled down") {
		t.Errorf("no clamp warning: %q", over.Warnings)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	assets := fixture(t)
	n := assets[0].Len()
	reb, _ := ParseRebalance("bar")
	if _, err := Run(context.Background(), assets, [][]float64{constant(n, 0.5)}, reb, costs()); err == nil {
		t.Error("one weight column for two assets ran")
	}
	if _, err := Run(context.Background(), assets, [][]float64{constant(n, 0.5), constant(n-1, 0.5)}, reb, costs()); err == nil {
		t.Error("a short weight column ran")
	}
	cfg := costs()
	cfg.Capital = decimal.Zero
	if _, err := Run(context.Background(), assets, [][]float64{constant(n, 0.5), constant(n, 0.5)}, reb, cfg); err == nil {
		t.Error("zero capital ran")
	}
	h := assets[0]
	h.Series = "A-USD@1h"
	if _, err := Align([]strategy.Bars{h, assets[1]}); err == nil {
		t.Error("two granularities aligned")
	}
}

// TestOnBarEqualWeightHandTable: the equal weight written bar by bar
// (on_bar sets each asset's target from the account it is shown) is the
// same portfolio as the vectorised one, to the cent.
func TestOnBarEqualWeightHandTable(t *testing.T) {
	assets := fixture(t)
	src := `universe = ["A-USD@1d", "B-USD@1d"]
def setup(ctx):
    pass
def on_bar(ctx):
    if ctx.equity > 0 and ctx.cash <= ctx.equity:
        for a in ctx.assets:
            ctx.target(a, 0.5)
`
	s, err := script.Load(context.Background(), script.Source{Name: "ew_bar.star", Text: src}, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.BeginPortfolio(context.Background(), assets)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Record()
	reb, _ := ParseRebalance(s.Rebalance())
	res, err := RunStepper(context.Background(), assets, st, reb, costs())
	if err != nil {
		t.Fatal(err)
	}
	agree(t, "on_bar engine vs hand table", res, table(t, "equal_weight.csv"))
	tr, ok := st.Trace()
	if !ok {
		t.Fatal("no trace")
	}
	if c, err := s.CheckPortfolioLookahead(context.Background(), assets, tr); err != nil || !script.Passed(c) {
		t.Fatalf("lookahead: %q %v", c, err)
	}
	// The account it saw at bar 1's close: after bar 0's targets filled
	// at bar 1's open, the cash in the table.
	if got := decimal.NewFromFloat(tr.Accounts[1].Cash).StringFixed(2); got != "50.00" {
		t.Errorf("cash seen at bar 1: %s, want 50.00", got)
	}
}

// series makes an aligned one-asset universe from closes (open = the
// previous close).
func series(name string, closes ...float64) strategy.Bars {
	b := strategy.Bars{Series: name}
	prev := closes[0]
	for i, c := range closes {
		b.Time = append(b.Time, 1704067200+int64(i)*86400)
		b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, prev), append(b.High, max(prev, c)), append(b.Low, min(prev, c)), append(b.Close, c), append(b.Volume, 1)
		prev = c
	}
	return b
}

func TestFillAtClose(t *testing.T) {
	assets := fixture(t)
	n := assets[0].Len()
	cfg := costs()
	cfg.Fill = backtest.FillClose
	reb, _ := ParseRebalance("bar")
	res, err := Run(context.Background(), assets, [][]float64{constant(n, 0.5), constant(n, 0.5)}, reb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Bought at bar 0's close: each half costs exactly 5000 with its
	// slippage and fee (the sizing divides them out), so cash is 0 and
	// the holdings are worth 10000 / ((1 + slippage)(1 + fee)) at the marks.
	sizing := (1 + 0.0005) * (1 + 0.001)
	if got, want := backtest.Money(res.Curve.Equity[0]), backtest.Money(10000/sizing); got != want || !strings.Contains(strings.Join(res.Warnings, "\n"), "fill=close") {
		t.Errorf("equity at bar 0 %s, want %s; warnings %q", got, want, res.Warnings)
	}
	// B has no bar at 2: nothing of it fills there, at the close either.
	for _, tr := range res.AllTrades {
		if tr.Series == "B-USD@1d" && (tr.EntryBar == 2 || tr.ExitBar == 2) {
			t.Errorf("B filled at bar 2: %+v", tr)
		}
	}
}

func TestBust(t *testing.T) {
	a := series("A-USD@1d", 100, 100, 150, 250, 300, 100)
	al, err := Align([]strategy.Bars{a})
	if err != nil {
		t.Fatal(err)
	}
	reb, _ := ParseRebalance("weekly") // the six bars are one week: one rebalance
	res, err := Run(context.Background(), al, [][]float64{constant(a.Len(), -1)}, reb, costs())
	if err != nil {
		t.Fatal(err)
	}
	// Short all equity at 100 from bar 1: at 250 (bar 3) equity is below
	// zero, the position is closed there and trading stops.
	if res.Metrics.FinalEquity > 0 || res.Curve.Equity[4] != res.Curve.Equity[3] || res.Curve.Equity[5] != res.Curve.Equity[3] {
		t.Errorf("equity %v", res.Curve.Equity)
	}
	if last := res.AllTrades[len(res.AllTrades)-1]; last.ExitBar != 3 || last.Exit != "bust" || res.Assets[0].Quantity != 0 {
		t.Errorf("trades %+v, holding %v", res.AllTrades, res.Assets[0].Quantity)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "equity reached zero") {
		t.Errorf("warnings %q", res.Warnings)
	}
}
