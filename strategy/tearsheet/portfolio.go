package tearsheet

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
)

// Stack is values per series over time drawn stacked: each time's
// positive values piled up from zero, its negative ones down (a
// portfolio's weights, longs above and shorts below).
type Stack struct {
	Name, Title, Caption string
	Times                []time.Time
	Names                []string
	Values               [][]float64 // [series][time]; NaN counts as 0
}

// Line is one value over time drawn as a line.
type Line struct {
	Name, Title, Caption string
	Times                []time.Time
	Values               []float64
	Format               func(float64) string // tick text; plain when nil
}

// stackView is a drawn Stack: an area per series and its legend.
type stackView struct {
	lineChart
	Title, Caption string
	Areas          []area
}

type area struct{ Path, Fill, Name string }

// palette colours a stack's series in turn.
var palette = [...]string{"#1f5fbf", "#d04030", "#2a9d4a", "#e08a00", "#7b3fb0", "#1aa3a3", "#b0306a", "#6b6b00", "#5a7fa8", "#8c564b"}

// stackChart draws s's areas on at most columnPoints×plotW of its times
// (evenly taken: weights move in steps).
func stackChart(s Stack) *stackView {
	n := len(s.Times)
	if n == 0 || len(s.Values) == 0 {
		return nil
	}
	stride := max(1, n/(columnPoints*plotW))
	var idx []int
	for i := 0; i < n; i += stride {
		idx = append(idx, i)
	}
	if idx[len(idx)-1] != n-1 {
		idx = append(idx, n-1)
	}
	ts := make([]int64, len(idx))
	pos, neg := make([][]float64, len(s.Values)+1), make([][]float64, len(s.Values)+1)
	pos[0], neg[0] = make([]float64, len(idx)), make([]float64, len(idx))
	lo, hi := 0.0, 0.0
	for k, vals := range s.Values {
		pos[k+1], neg[k+1] = slices.Clone(pos[k]), slices.Clone(neg[k])
		for j, i := range idx {
			ts[j] = s.Times[i].Unix()
			if v := vals[i]; v > 0 {
				pos[k+1][j] += v
			} else if v < 0 {
				neg[k+1][j] += v
			}
			hi, lo = math.Max(hi, pos[k+1][j]), math.Min(lo, neg[k+1][j])
		}
	}
	f, ticks := newFrame(ts, lo, hi, 240)
	v := &stackView{lineChart: lineChart{Name: s.Name, Label: s.Title, N: len(idx)}, Title: s.Title, Caption: s.Caption}
	v.axes(f, ticks, pctLabel, ts)
	edge := func(b *strings.Builder, from, to []float64) {
		for j := range idx {
			step(b, j == 0, f.x(ts[j]), f.y(to[j]))
		}
		for j := len(idx) - 1; j >= 0; j-- {
			step(b, false, f.x(ts[j]), f.y(from[j]))
		}
		b.WriteString(" Z")
	}
	for k, name := range s.Names {
		var b strings.Builder
		edge(&b, pos[k], pos[k+1])
		b.WriteByte(' ')
		edge(&b, neg[k], neg[k+1])
		v.Areas = append(v.Areas, area{Path: b.String(), Fill: palette[k%len(palette)], Name: name})
	}
	return v
}

// lineOf draws l, keeping each pixel column's extremes.
func lineOf(l Line) *lineChart {
	if len(l.Times) == 0 {
		return nil
	}
	ts := make([]int64, len(l.Times))
	for i, t := range l.Times {
		ts[i] = t.Unix()
	}
	pts := columns(ts, l.Values, plotW)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		if !math.IsNaN(p.v) {
			lo, hi = math.Min(lo, p.v), math.Max(hi, p.v)
		}
	}
	if math.IsInf(lo, 1) {
		return nil
	}
	f, ticks := newFrame(ts, math.Min(lo, 0), hi, 180)
	c := &lineChart{Name: l.Name, Label: l.Title, Caption: l.Caption}
	var b strings.Builder
	move := true
	for _, p := range pts {
		if math.IsNaN(p.v) {
			move = true
			continue
		}
		step(&b, move, f.x(p.t), f.y(p.v))
		move = false
		c.N++
	}
	c.Path = b.String()
	format := l.Format
	if format == nil {
		format = plainLabel
	}
	c.axes(f, ticks, format, ts)
	return c
}

// RenderPortfolio writes a portfolio backtest's tear sheet: its settings
// and metrics, the equity and its drawdown, each asset's weight over
// time (stacked), each asset's contribution to the P&L and the turnover.
// r must hold its per-bar record (portfolio.Options.RecordHoldings);
// strategy names the strategy in the title (empty for none).
func RenderPortfolio(r *portfolio.Result, strategy string) ([]byte, error) {
	if r == nil || r.Holdings == nil {
		return nil, fmt.Errorf("tear sheet: the portfolio run kept no per-bar record; run it with RecordHoldings")
	}
	h, s, m := r.Holdings, r.Settings, r.Metrics
	eq := r.Curve.Equity
	if len(h.Time) != len(eq) {
		return nil, fmt.Errorf("tear sheet: a record of %d bars for a curve of %d", len(h.Time), len(eq))
	}
	title := "portfolio on " + r.Series
	if strategy != "" {
		title = strategy + " on " + r.Series
	}
	run := Run{Kind: "portfolio", Title: title, Warnings: r.Warnings, EquityTitle: "Equity"}
	run.Settings = [][2]string{{"universe", strings.Join(r.Universe, ", ")}, {"rebalance", r.Rebalance + " (" + strconv.Itoa(r.Rebalances) + " rebalances)"},
		{"granularity", orDash(string(s.Granularity))}, {"from", timeOrOpen(s.From)}, {"to", timeOrOpen(s.To)},
		{"capital", backtest.Money(s.Capital)}, {"fee", num(s.FeeBps) + " bps"}, {"slippage", num(s.SlippageBps) + " bps"}, {"fill", s.Fill.String()}}
	if len(s.Params) > 0 {
		run.Settings = append(run.Settings, [2]string{"params", params(s.Params)})
	}
	// Turnover: each bar's filled notional over the equity at the bar
	// before (the capital at the first), and per year over the run.
	turn := make([]float64, len(eq))
	total := 0.0
	for i, x := range h.Traded {
		base := s.Capital
		if i > 0 {
			base = eq[i-1]
		}
		turn[i] = math.NaN()
		if base > 0 {
			turn[i] = x / base
			total += turn[i]
		}
	}
	years := 0.0
	if m.PeriodsPerYear > 0 {
		years = float64(len(eq)) / m.PeriodsPerYear
	}
	annual := math.NaN()
	if years > 0 {
		annual = total / years
	}
	run.Metrics = [][2]string{{"total return", pct(m.TotalReturn)}, {"buy & hold (equal parts)", pct(m.BuyAndHoldReturn)},
		{"CAGR", pct(backtest.Bounded(m.CAGR))}, {"final equity", backtest.Money(m.FinalEquity)},
		{"Sharpe", ratio(backtest.Bounded(m.Sharpe))}, {"Sortino", ratio(backtest.Bounded(m.Sortino))},
		{"max drawdown", pct(m.MaxDrawdown)}, {"exposure", pct(m.Exposure)}, {"trades", strconv.Itoa(m.Trades)},
		{"turnover per year", pct(annual)}}
	for _, c := range m.CostLines() {
		run.Metrics = append(run.Metrics, [2]string{c.Name, c.Value})
	}
	run.Metrics = append(run.Metrics, [2]string{"bars", strconv.Itoa(m.Bars)})
	if len(eq) > 0 {
		curve := r.Curve
		run.Equity = backtest.Downsample(curve, s.Capital, columnPoints*plotW)
		run.Capital, run.Drawdowns = s.Capital, &curve
		run.Benchmarks = []Benchmark{EqualParts("buy & hold (equal parts)", h, s.Capital)}
	}
	w := Stack{Name: "weights", Title: "Weights over time", Times: h.Time, Names: r.Universe,
		Caption: "each asset's value at its last close as a share of equity at each bar's close; longs above zero, shorts below"}
	for a := range r.Universe {
		col := make([]float64, len(eq))
		for i := range col {
			col[i] = h.Weight(a, i, eq[i])
		}
		w.Values = append(w.Values, col)
	}
	run.Weights = &w
	last := len(eq) - 1
	c := Pairs{Name: "contribution", Title: "Contribution to P&L per asset", NameA: "before fees", NameB: "after every cost", Format: func(x float64) string { return backtest.Money(x) },
		CaptionAppend: "; the assets' P&L after every cost sums to the run's", Step: "asset"}
	for a, name := range r.Universe {
		c.Labels = append(c.Labels, name)
		net := math.NaN()
		if last >= 0 {
			net = h.PnL[a][last]
		}
		c.A, c.B = append(c.A, net+r.Assets[a].Fees), append(c.B, net)
	}
	run.Pairs = &c
	run.Turnover = &Line{Name: "turnover", Title: "Turnover", Times: h.Time, Values: turn, Format: pctLabel,
		Caption: "each bar's filled notional as a share of equity before it"}
	return RenderRun(run)
}
