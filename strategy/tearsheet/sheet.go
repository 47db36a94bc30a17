package tearsheet

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/robust"
)

// Page geometry, in CSS pixels: every chart's plot area is plotW wide.
const (
	chartW  = 760
	marginL = 64
	marginR = 12
	marginT = 10
	marginB = 24
	plotW   = chartW - marginL - marginR
)

// Bounds of the page.
const (
	// MaxYears is how many calendar years the monthly heatmap shows (the
	// last ones); a longer run says so under it.
	MaxYears = 100
	// Bins is the trade histogram's number of bins.
	Bins = 24
	// columnPoints is how many points a curve keeps per pixel column.
	columnPoints = 2
)

// CSP is the page's Content-Security-Policy: nothing may be fetched.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

//go:embed page.html.tmpl
var pageText string

var page = template.Must(template.New("page").Parse(pageText))

// Render writes r's tear sheet; strategy names the strategy in the title
// (empty for none). It uses the full run when r has it (a result from this
// process: every bar's equity and return, every trade) and the reported
// curve and trades otherwise (a result read back from JSON). The equity
// chart draws the benchmarks beside the curve (Hold: the run's series
// bought and held, a named benchmark series); a benchmark is drawn only
// over the full run's bars.
func Render(r *backtest.Result, strategy string, benches ...Benchmark) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("tear sheet: no result")
	}
	v := build(r, strategy, benches)
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		return nil, fmt.Errorf("tear sheet: %w", err)
	}
	return b.Bytes(), nil
}

// view is what the template shows.
type view struct {
	Title, Strategy, Series string
	Settings, Metrics       []row
	Lookahead               string
	Warnings                []string
	Equity                  *equityView
	Drawdown, Rolling       *lineChart
	Drawdowns               *drawdownTable
	RollingNote             string
	Monthly                 *heatmap
	Trades                  *histogram
	Robust                  *robustView
	NoEquity                bool
}

type row struct{ K, V string }

func build(r *backtest.Result, strategy string, benches []Benchmark) view {
	m, s := r.Metrics, r.Settings
	v := view{Strategy: strategy, Series: r.Series, Lookahead: r.LookaheadCheck, Warnings: r.Warnings}
	v.Title = strings.TrimSpace(strings.Join(slices.DeleteFunc([]string{strategy, r.Series}, func(x string) bool { return x == "" }), " on "))
	if v.Title == "" {
		v.Title = "backtest"
	}
	v.Settings = []row{
		{"series", orDash(r.Series)}, {"granularity", orDash(string(s.Granularity))},
		{"from", timeOrOpen(s.From)}, {"to", timeOrOpen(s.To)},
		{"capital", backtest.Money(s.Capital)}, {"fee", num(s.FeeBps) + " bps"}, {"slippage", num(s.SlippageBps) + " bps"},
		{"fill", s.Fill.String()}, {"intrabar", s.Intrabar.String()}, {"warm-up", strconv.Itoa(s.Warmup) + " bars"},
	}
	if len(s.Params) > 0 {
		v.Settings = append(v.Settings, row{"params", params(s.Params)})
	}
	v.Metrics = []row{
		{"total return", pct(m.TotalReturn)}, {"buy & hold", pct(m.BuyAndHoldReturn)},
		{"CAGR", pct(backtest.Bounded(m.CAGR))}, {"final equity", backtest.Money(m.FinalEquity)},
		{"Sharpe", ratio(backtest.Bounded(m.Sharpe))}, {"Sortino", ratio(backtest.Bounded(m.Sortino))},
		{"max drawdown", pct(m.MaxDrawdown)}, {"longest drawdown", length(m.MaxDrawdownBars, m.MaxDrawdownDuration)},
		{"Calmar", ratio(backtest.Bounded(m.Calmar))}, {"exposure", pct(m.Exposure)},
		{"trades", strconv.Itoa(m.Trades)}, {"win rate", pct(m.WinRate)},
		{"profit factor", ratio(m.ProfitFactor)}, {"expectancy", money(m.Expectancy)},
	}
	for _, c := range m.CostLines() { // every cost the run charged
		v.Metrics = append(v.Metrics, row{c.Name, c.Value})
	}
	v.Metrics = append(v.Metrics, row{"bars", strconv.Itoa(m.Bars)}, row{"periods per year", num(m.PeriodsPerYear)},
		row{"start", stamp(m.Start)}, row{"end", stamp(m.End)})

	curve, returns := runCurve(r)
	if len(curve.Equity) == 0 {
		v.NoEquity = true
	} else {
		pts := backtest.Downsample(curve, s.Capital, columnPoints*plotW)
		var drawn []Benchmark
		for _, b := range benches {
			if len(b.Equity) == len(curve.Equity) && len(b.Time) == len(b.Equity) { // the full run's bars
				drawn = append(drawn, b)
			}
		}
		v.Equity, v.Drawdown = equityCharts(pts, s.Capital, drawn)
		v.Equity.Title = "Equity"
		v.Drawdowns = drawdowns(curve, s.Capital)
		if len(r.Curve.Equity) == 0 {
			v.Drawdowns.thinned(len(curve.Equity))
		}
		v.Monthly = monthly(curve, s.Capital)
		v.Rolling, v.RollingNote = rolling(curve.Time, returns, m.PeriodsPerYear)
	}
	trades := r.AllTrades
	if len(trades) == 0 {
		trades = r.Trades
	}
	v.Trades = tradeHistogram(trades)
	if r.Robustness != nil {
		v.Robust = robustness(r.Robustness, s.Capital)
	}
	return v
}

// runCurve is the run's curve and per-bar returns: the full ones when the
// result holds them, else the reported points.
func runCurve(r *backtest.Result) (backtest.Curve, []float64) {
	c := r.Curve
	if len(c.Equity) == 0 || len(c.Time) != len(c.Equity) {
		c = backtest.Curve{Time: make([]int64, len(r.Equity)), Equity: make([]float64, len(r.Equity))}
		for i, p := range r.Equity {
			c.Time[i], c.Equity[i] = p.Time.Unix(), p.Equity
		}
		return c, backtest.Returns(c.Equity, r.Settings.Capital)
	}
	if len(r.Returns) == len(c.Equity) {
		return c, r.Returns
	}
	return c, backtest.Returns(c.Equity, r.Settings.Capital)
}

// Formatting: percentages and ratios as the text report rounds them, money
// as decimal strings with cents; "–" for an undefined figure.
const dash = "–"

func pct(x float64) string {
	if bad(x) {
		return dash
	}
	return strconv.FormatFloat(100*x, 'f', 2, 64) + "%"
}

func ratio(x float64) string {
	if bad(x) {
		return dash
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func money(x float64) string {
	if bad(x) {
		return dash
	}
	return backtest.Money(x)
}

func num(x float64) string {
	if bad(x) {
		return dash
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

func num1(x float64) string {
	if bad(x) {
		return dash
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return dash
	}
	return t.UTC().Format(time.RFC3339)
}

func timeOrOpen(t time.Time) string {
	if t.IsZero() {
		return "open"
	}
	return stamp(t)
}

// params lists knobs by name, so the page does not depend on map order.
func params(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, p[k])
	}
	return strings.Join(parts, ", ")
}

// robustView is the robustness section.
type robustView struct {
	Figures    []row
	MonteCarlo []mcRow
	Relative   []row
	Notes      []string
	Ranges     *rangeChart
}

type mcRow struct {
	Method, Paths, Steps, Ruin, Final, Drawdown string
}

func robustness(rep *robust.Report, capital float64) *robustView {
	v := &robustView{Notes: rep.Notes}
	v.Figures = []row{
		{"probabilistic Sharpe ratio", ratio(rep.PSR)},
		{"years", ratio(rep.Years)},
		{"trials its length supports", strconv.Itoa(rep.MaxTrials)},
	}
	if rep.Trials > 0 {
		v.Figures = append(v.Figures, row{"minimum backtest length", fmt.Sprintf("%s years for %d trials", ratio(rep.MinBTLYears), rep.Trials)})
	}
	for _, mc := range rep.MonteCarlo {
		q := func(x robust.Quantiles, f func(float64) string) string {
			return f(x.P5) + " / " + f(x.P50) + " / " + f(x.P95)
		}
		v.MonteCarlo = append(v.MonteCarlo, mcRow{
			Method: string(mc.Method), Paths: strconv.Itoa(mc.Paths), Steps: strconv.Itoa(mc.Steps),
			Ruin:     pct(mc.ProbabilityOfRuin),
			Final:    q(mc.FinalEquity, func(x float64) string { return money(x * capital) }),
			Drawdown: q(mc.MaxDrawdown, pct),
		})
	}
	if rel := rep.Relative; rel != nil {
		v.Relative = []row{
			{"benchmark", rep.Benchmark}, {"alpha", pct(rel.Alpha)}, {"beta", ratio(rel.Beta)},
			{"correlation", ratio(rel.Correlation)}, {"tracking error", pct(rel.TrackingError)},
			{"information ratio", ratio(rel.InformationRatio)}, {"periods", strconv.Itoa(rel.Periods)},
		}
	}
	v.Ranges = monteCarloRanges(rep.MonteCarlo, capital)
	return v
}
