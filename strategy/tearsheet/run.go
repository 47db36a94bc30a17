package tearsheet

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"time"

	"wicket/strategy/backtest"
)

// Run is a research run's tear sheet (a walk-forward's, a CPCV's): its
// settings and figures, an equity curve with its drawdown (a
// walk-forward's stitched out-of-sample curve), pairs of values per
// step (each window's in-sample and out-of-sample score), a distribution
// (the CPCV paths' Sharpe ratios) and a table (the windows, the splits).
// Every part is optional; the page draws those given.
type Run struct {
	Kind              string // "walk-forward", "cpcv": named on the page
	Title             string
	Settings, Metrics [][2]string
	Warnings          []string
	// Equity is the curve (its points' drawdowns filled), EquityTitle
	// what it is.
	Equity      []backtest.Point
	EquityTitle string
	// Capital is where the curve started: the legend's returns and the
	// drawdowns' first peak (none of them when zero).
	Capital float64
	// Benchmarks are drawn beside the curve (EqualParts: a portfolio's
	// universe held in equal parts).
	Benchmarks []Benchmark
	// Drawdowns, when set, is the curve whose deepest drawdown periods
	// are listed (every bar of it, from Capital).
	Drawdowns *backtest.Curve
	// DrawdownsThinned says Drawdowns is a reported (downsampled) curve,
	// not every bar; the table says so.
	DrawdownsThinned bool
	// Pairs are two values per step, drawn side by side.
	Pairs *Pairs
	// Dist are values whose distribution is drawn, DistTitle and
	// DistCaption say what they are.
	Dist                   []float64
	DistTitle, DistCaption string
	DistUnit               string // what one value is ("paths"); "values" when empty
	Table                  *Table
	// Weights are values per series stacked over time (a portfolio's
	// weights), Turnover a value over time.
	Weights  *Stack
	Turnover *Line
}

// Pairs are two series of values over the same steps: A and B per step
// (NaN: undefined, drawn as nothing), named by Labels and the legend.
type Pairs struct {
	Name, Title   string
	Labels        []string // per step
	A, B          []float64
	NameA, NameB  string
	Format        func(float64) string // tick and title text; plain when nil
	CaptionAppend string
	Step          string // what one step is ("asset"); "step" when empty
}

// Table is a titled table of text.
type Table struct {
	Title string
	Head  []string
	Rows  [][]string
}

//go:embed run.html.tmpl
var runText string

// runPage is the page's templates (its "line" chart among them) with
// the run page's.
var runPage = template.Must(template.Must(page.Clone()).Parse(runText))

// RenderRun writes r's tear sheet.
func RenderRun(r Run) ([]byte, error) {
	v := runView{Kind: r.Kind, Title: r.Title, Warnings: r.Warnings, EquityTitle: r.EquityTitle, DistTitle: r.DistTitle, DistCaption: r.DistCaption, Table: r.Table}
	if v.Kind == "" {
		v.Kind = "research"
	}
	for _, kv := range r.Settings {
		v.Settings = append(v.Settings, row{kv[0], kv[1]})
	}
	for _, kv := range r.Metrics {
		v.Metrics = append(v.Metrics, row{kv[0], kv[1]})
	}
	if len(r.Equity) > 0 {
		v.Equity, v.Drawdown = equityCharts(r.Equity, r.Capital, r.Benchmarks)
		v.Equity.Title = r.EquityTitle
		if r.Drawdowns != nil && r.Capital > 0 {
			v.Drawdowns = drawdowns(*r.Drawdowns, r.Capital)
			if r.DrawdownsThinned {
				v.Drawdowns.thinned(len(r.Drawdowns.Equity))
			}
		}
	}
	if r.Pairs != nil {
		v.Pairs = pairChart(*r.Pairs)
	}
	var dist []float64
	for _, x := range r.Dist {
		if !bad(x) {
			dist = append(dist, x)
		}
	}
	unit := r.DistUnit
	if unit == "" {
		unit = "values"
	}
	v.Dist = binned(dist, unit, plainLabel3)
	if r.Weights != nil {
		v.Weights = stackChart(*r.Weights)
	}
	if r.Turnover != nil {
		if v.Turnover = lineOf(*r.Turnover); v.Turnover != nil {
			v.TurnoverTitle = r.Turnover.Title
		}
	}
	var b bytes.Buffer
	if err := runPage.ExecuteTemplate(&b, "run", v); err != nil {
		return nil, fmt.Errorf("tear sheet: %w", err)
	}
	return b.Bytes(), nil
}

type runView struct {
	Kind, Title, EquityTitle, DistTitle, DistCaption string
	Settings, Metrics                                []row
	Warnings                                         []string
	Equity                                           *equityView
	Drawdown                                         *lineChart
	Drawdowns                                        *drawdownTable
	Pairs                                            *pairView
	Dist                                             *histogram
	Table                                            *Table
	Weights                                          *stackView
	Turnover                                         *lineChart
	TurnoverTitle                                    string
}

type pairView struct {
	Name, Title, Caption string
	H                    int
	Bars                 []bar
	XTicks, YTicks       []tick
	Left, Right, Bottom  int
	Zero                 string
}

// pairChart draws p's two values per step as side-by-side bars from zero.
func pairChart(p Pairs) *pairView {
	format := p.Format
	if format == nil {
		format = plainLabel3
	}
	lo, hi := 0.0, 0.0
	for _, xs := range [][]float64{p.A, p.B} {
		for _, x := range xs {
			if !bad(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	if hi == lo {
		hi = lo + 1
	}
	const h = 220
	ticks := niceTicks(lo, hi, 4)
	f := frame{v0: ticks[0], v1: ticks[len(ticks)-1], h: h}
	v := &pairView{Name: p.Name, Title: p.Title, H: h, Left: marginL, Right: marginL + plotW, Bottom: h - marginB,
		Caption: "per " + cmp.Or(p.Step, "step") + ": " + p.NameA + " (grey) and " + p.NameB + " (blue)" + p.CaptionAppend}
	for _, t := range ticks {
		v.YTicks = append(v.YTicks, tick{At: coord(f.y(t)), Label: format(t)})
	}
	if f.v0 < 0 && f.v1 > 0 {
		v.Zero = coord(f.y(0))
	}
	n := len(p.Labels)
	if n == 0 {
		return v
	}
	slot := float64(plotW) / float64(n)
	w := math.Max(slot*0.4, 1)
	for i, label := range p.Labels {
		x0 := marginL + float64(i)*slot + slot*0.1
		for j, s := range []struct {
			vals []float64
			name string
			fill string
		}{{p.A, p.NameA, "#9e9e9e"}, {p.B, p.NameB, "#1f5fbf"}} {
			if i >= len(s.vals) || bad(s.vals[i]) {
				continue
			}
			y0, y1 := f.y(0), f.y(s.vals[i])
			top, height := math.Min(y0, y1), math.Max(math.Abs(y1-y0), 0.5)
			v.Bars = append(v.Bars, bar{X: coord(x0 + float64(j)*w), Y: coord(top), W: coord(w), H: coord(height), Fill: s.fill,
				Title: label + " " + s.name + " " + format(s.vals[i])})
		}
		if n <= 20 || i%((n+19)/20) == 0 {
			v.XTicks = append(v.XTicks, tick{At: coord(x0 + w), Label: label})
		}
	}
	return v
}

func plainLabel3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// Points turns a curve's (time, equity) pairs into chart points with
// their drawdowns from the running peak, starting at capital.
func Points(times []time.Time, equity []float64, capital float64) []backtest.Point {
	out := make([]backtest.Point, len(times))
	peak := capital
	for i, t := range times {
		peak = math.Max(peak, equity[i])
		dd := 0.0
		if peak > 0 {
			dd = 1 - equity[i]/peak
		}
		out[i] = backtest.Point{Time: t, Equity: equity[i], Drawdown: dd}
	}
	return out
}
