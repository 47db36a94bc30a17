package tearsheet

import (
	"math"
	"strconv"
	"strings"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/robust"
)

// tick is an axis label at a position along its axis.
type tick struct {
	At     string
	Label  string
	Anchor string // text-anchor of a time tick ("middle" when empty)
}

// lineChart is a curve (or, with Area, a filled region down to zero) over
// time. Path is SVG path data; N counts its points.
type lineChart struct {
	Name, Label, Caption string
	H                    int
	Path                 string
	Area                 bool
	N                    int
	XTicks, YTicks       []tick
	Zero                 string // y of the zero line; empty when off the chart
	Left, Right, Bottom  int    // plot area edges, for the axis lines
	Bench                []benchPath
}

// frame maps times and values onto a plot area of height h.
type frame struct {
	t0, t1 float64
	v0, v1 float64
	h      int
}

func (f frame) x(t int64) float64 {
	if f.t1 == f.t0 {
		return marginL + plotW/2
	}
	return marginL + (float64(t)-f.t0)/(f.t1-f.t0)*plotW
}

func (f frame) y(v float64) float64 {
	plotH := float64(f.h - marginT - marginB)
	return marginT + (f.v1-v)/(f.v1-f.v0)*plotH
}

func coord(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// newFrame spans times ts and the values' range widened to nice ticks.
func newFrame(ts []int64, lo, hi float64, h int) (frame, []float64) {
	if hi <= lo {
		pad := math.Max(math.Abs(lo)*0.01, 1e-9)
		lo, hi = lo-pad, hi+pad
	}
	ticks := niceTicks(lo, hi, 5)
	return frame{t0: float64(ts[0]), t1: float64(ts[len(ts)-1]), v0: ticks[0], v1: ticks[len(ticks)-1], h: h}, ticks
}

// niceTicks are about n round values (steps of 1, 2 or 5 times a power of
// ten) covering [lo, hi], the first at or below lo, the last at or above.
func niceTicks(lo, hi float64, n int) []float64 {
	raw := (hi - lo) / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p * 10
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	first := math.Floor(lo/step) * step
	var out []float64
	for v := first; len(out) < 4*n; v += step {
		out = append(out, clean(v, step))
		if v >= hi-step*1e-9 {
			break
		}
	}
	return out
}

// clean rounds v to the precision of step, so ticks print without noise.
func clean(v, step float64) float64 {
	d := math.Max(0, -math.Floor(math.Log10(step))+1)
	s := math.Pow(10, d)
	r := math.Round(v*s) / s
	if r == 0 {
		return 0
	}
	return r
}

func (c *lineChart) axes(f frame, ticks []float64, label func(float64) string, ts []int64) {
	c.H, c.Left, c.Right, c.Bottom = f.h, marginL, marginL+plotW, f.h-marginB
	for _, v := range ticks {
		c.YTicks = append(c.YTicks, tick{At: coord(f.y(v)), Label: label(v)})
	}
	c.XTicks = timeTicks(f, ts)
	if f.v0 < 0 && f.v1 > 0 {
		c.Zero = coord(f.y(0))
	}
}

// timeTicks are five dates spread evenly over the chart's time span.
func timeTicks(f frame, ts []int64) []tick {
	const n = 5
	if ts[0] == ts[len(ts)-1] {
		return []tick{{At: coord(f.x(ts[0])), Label: day(ts[0]), Anchor: "middle"}}
	}
	out := make([]tick, n)
	for i := range n {
		t := ts[0] + int64(float64(ts[len(ts)-1]-ts[0])*float64(i)/float64(n-1))
		out[i] = tick{At: coord(f.x(t)), Label: day(t), Anchor: "middle"}
	}
	out[n-1].Anchor = "end" // at the plot's right edge: centred, it would overflow the chart
	return out
}

func day(t int64) string { return time.Unix(t, 0).UTC().Format(time.DateOnly) }

func pctLabel(v float64) string { return strconv.FormatFloat(100*v, 'f', -1, 64) + "%" }

func plainLabel(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// equityView is the equity section: the curve with its benchmarks on a
// linear scale and, when every value is above zero, the same on a log
// scale; a checkbox toggles between the two with CSS alone (the page
// runs no script).
type equityView struct {
	Title       string
	Linear, Log *lineChart
	LogNote     string // why there is no log scale
	Legend      []legendItem
}

// legendItem names a line of the equity chart: its look and where it
// ended.
type legendItem struct {
	Name, Class, Final, Return string
}

// benchPath is a benchmark's line on a chart.
type benchPath struct {
	Path, Class, Name string
	N                 int
}

// benchClasses style the benchmarks in turn.
var benchClasses = [...]string{"bench", "bench2"}

// equityCharts draws the downsampled curve with the benchmarks (each
// drawn from its own pixel columns' extremes) and the drawdown.
func equityCharts(pts []backtest.Point, capital float64, benches []Benchmark) (*equityView, *lineChart) {
	ts := make([]int64, len(pts))
	lo, hi := math.Inf(1), math.Inf(-1)
	ddMax := 0.0
	for i, p := range pts {
		ts[i] = p.Time.Unix()
		lo, hi = math.Min(lo, p.Equity), math.Max(hi, p.Equity)
		ddMax = math.Max(ddMax, p.Drawdown)
	}
	bs := make([][]tv, len(benches))
	v := &equityView{Legend: []legendItem{{Name: "equity", Class: "line", Final: money(pts[len(pts)-1].Equity), Return: pct(change(pts[len(pts)-1].Equity, capital))}}}
	for k, b := range benches {
		bs[k] = columns(b.Time, b.Equity, plotW)
		for _, p := range bs[k] {
			if !bad(p.v) {
				lo, hi = math.Min(lo, p.v), math.Max(hi, p.v)
			}
		}
		last := lastDefined(b.Equity)
		v.Legend = append(v.Legend, legendItem{Name: b.Name, Class: benchClasses[k%len(benchClasses)], Final: money(last), Return: pct(change(last, capital))})
	}
	line := func(name, label string, f frame, ticks []float64, scale func(float64) float64, tickLabel func(float64) string) *lineChart {
		c := &lineChart{Name: name, Label: label, N: len(pts)}
		var b strings.Builder
		for i, p := range pts {
			step(&b, i == 0, f.x(ts[i]), f.y(scale(p.Equity)))
		}
		c.Path = b.String()
		for k, pts := range bs {
			bp := benchPath{Class: benchClasses[k%len(benchClasses)], Name: benches[k].Name}
			var b strings.Builder
			pen := false
			for _, p := range pts {
				if bad(p.v) {
					pen = false
					continue
				}
				step(&b, !pen, f.x(p.t), f.y(scale(p.v)))
				pen = true
				bp.N++
			}
			bp.Path = b.String()
			c.Bench = append(c.Bench, bp)
		}
		c.axes(f, ticks, tickLabel, ts)
		return c
	}
	f, ticks := newFrame(ts, lo, hi, 260)
	v.Linear = line("equity", "equity at each bar's close", f, ticks, func(x float64) float64 { return x }, plainLabel)
	if lo > 0 {
		lt := logTicks(lo, hi)
		logs := make([]float64, len(lt))
		for i, t := range lt {
			logs[i] = math.Log10(t)
		}
		lf := frame{t0: f.t0, t1: f.t1, v0: logs[0], v1: logs[len(logs)-1], h: 260}
		v.Log = line("equity-log", "equity at each bar's close, log scale", lf, logs, math.Log10, func(x float64) string { return plainLabel(clean(math.Pow(10, x), math.Pow(10, x)/100)) })
	} else {
		v.LogNote = "equity or a benchmark reached zero: a log scale cannot show it"
	}

	fd, dticks := newFrame(ts, -math.Max(ddMax, 1e-4), 0, 180)
	dd := &lineChart{Name: "drawdown", Label: "drawdown from the running peak", N: len(pts), Area: true}
	var b strings.Builder
	b.WriteString("M" + coord(fd.x(ts[0])) + "," + coord(fd.y(0)))
	for i, p := range pts {
		b.WriteString(" L" + coord(fd.x(ts[i])) + "," + coord(fd.y(-p.Drawdown)))
	}
	b.WriteString(" L" + coord(fd.x(ts[len(ts)-1])) + "," + coord(fd.y(0)) + " Z")
	dd.Path = b.String()
	dd.axes(fd, dticks, pctLabel, ts)
	return v, dd
}

// logTicks are the round values of a log axis covering [lo, hi], lo > 0,
// the first at or below lo and the last at or above hi: over less than a
// tenfold range a linear axis's ticks (when all are above zero), else 1,
// 2 and 5 times the powers of ten (the powers alone over a wide range).
func logTicks(lo, hi float64) []float64 {
	if hi < 10*lo {
		if lin := niceTicks(lo, hi, 5); lin[0] > 0 {
			return lin
		}
	}
	k0, k1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	if k1 == k0 {
		k1++
	}
	var c []float64
	for k := k0; k <= k1; k++ {
		p := math.Pow(10, float64(k))
		for _, m := range []float64{1, 2, 5} {
			c = append(c, clean(m*p, p))
		}
	}
	i0, i1 := 0, len(c)-1
	for i, x := range c {
		if x <= lo {
			i0 = i
		}
		if x >= hi && i < i1 {
			i1 = i
		}
	}
	ticks := c[i0 : i1+1]
	if len(ticks) > 10 {
		ticks = nil
		for k := k0; k <= k1; k++ {
			ticks = append(ticks, clean(math.Pow(10, float64(k)), math.Pow(10, float64(k))))
		}
	}
	return ticks
}

func lastDefined(xs []float64) float64 {
	for i := len(xs) - 1; i >= 0; i-- {
		if !bad(xs[i]) {
			return xs[i]
		}
	}
	return math.NaN()
}

// step adds a point to path data: a move to it, or a line to it.
func step(b *strings.Builder, move bool, x, y float64) {
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if move {
		b.WriteByte('M')
	} else {
		b.WriteByte('L')
	}
	b.WriteString(coord(x) + "," + coord(y))
}

// RollingWindow is the rolling Sharpe ratio's window in bars for a run of
// n bars at periodsPerYear: half a year of bars, or a quarter of the run
// when that is shorter; 0 (no chart) when the window would be under 10
// bars.
func RollingWindow(n int, periodsPerYear float64) int {
	w := int(math.Round(periodsPerYear / 2))
	if w < 10 || 2*w > n {
		w = n / 4
	}
	if w < 10 {
		return 0
	}
	return w
}

// rolling draws the annualised Sharpe ratio of each window of returns,
// ending at each bar; a window without variance has none (a gap).
func rolling(ts []int64, returns []float64, periodsPerYear float64) (*lineChart, string) {
	n := len(returns)
	w := RollingWindow(n, periodsPerYear)
	if w == 0 {
		return nil, "too few bars for a rolling Sharpe ratio (it needs at least 40)"
	}
	ann := math.Sqrt(periodsPerYear)
	vals := make([]float64, n)
	var s, s2 float64
	for i, r := range returns {
		s += r
		s2 += r * r
		if i >= w {
			o := returns[i-w]
			s -= o
			s2 -= o * o
		}
		vals[i] = math.NaN()
		if i >= w-1 {
			mean := s / float64(w)
			v := (s2 - s*mean) / float64(w-1)
			if v > 1e-18 {
				vals[i] = mean / math.Sqrt(v) * ann
			}
		}
	}
	pts := columns(ts[w-1:], vals[w-1:], plotW)
	lo, hi := math.Inf(1), math.Inf(-1)
	kept := 0
	for _, p := range pts {
		if !math.IsNaN(p.v) {
			lo, hi = math.Min(lo, p.v), math.Max(hi, p.v)
			kept++
		}
	}
	note := "annualised Sharpe ratio of the last " + strconv.Itoa(w) + " bars at each bar"
	if kept == 0 {
		return nil, "no window of " + strconv.Itoa(w) + " bars had varying returns: no rolling Sharpe ratio to draw"
	}
	f, ticks := newFrame(ts[w-1:], math.Min(lo, 0), math.Max(hi, 0), 200)
	c := &lineChart{Name: "rolling-sharpe", Label: note, Caption: note}
	var b strings.Builder
	pen := false
	for _, p := range pts {
		if math.IsNaN(p.v) {
			pen = false
			continue
		}
		step(&b, !pen, f.x(p.t), f.y(p.v))
		pen = true
		c.N++
	}
	c.Path = b.String()
	c.axes(f, ticks, plainLabel, ts[w-1:])
	return c, ""
}

type tv struct {
	t int64
	v float64
}

// columns keeps, from each of n equal runs of points, the lowest and the
// highest defined value in time order; a run with none gives one NaN (a
// gap in the line).
func columns(ts []int64, vals []float64, n int) []tv {
	if len(vals) <= columnPoints*n {
		out := make([]tv, len(vals))
		for i := range vals {
			out[i] = tv{ts[i], vals[i]}
		}
		return out
	}
	out := make([]tv, 0, columnPoints*n)
	for k := range n {
		lo, hi := k*len(vals)/n, (k+1)*len(vals)/n
		mn, mx := -1, -1
		for i := lo; i < hi; i++ {
			v := vals[i]
			if math.IsNaN(v) {
				continue
			}
			if mn < 0 || v < vals[mn] {
				mn = i
			}
			if mx < 0 || v > vals[mx] {
				mx = i
			}
		}
		switch {
		case mn < 0:
			out = append(out, tv{ts[lo], math.NaN()})
		case mn == mx:
			out = append(out, tv{ts[mn], vals[mn]})
		case mn < mx:
			out = append(out, tv{ts[mn], vals[mn]}, tv{ts[mx], vals[mx]})
		default:
			out = append(out, tv{ts[mx], vals[mx]}, tv{ts[mn], vals[mn]})
		}
	}
	return out
}

// heatmap is the monthly returns: a row per year, a column per month and
// one for the year.
type heatmap struct {
	W, H   int
	Months []tick
	Years  []tick
	Cells  []cell
	Note   string
}

type cell struct {
	X, Y, W, H, TX, TY string
	Fill, Text, Title  string
	Ink                string
}

const (
	cellW = plotW / 13
	cellH = 20
)

var monthNames = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// monthly computes each calendar month's return (UTC, by bar open time)
// from the equity at its last bar against the month before's (or the
// capital), and each year's the same way.
func monthly(c backtest.Curve, capital float64) *heatmap {
	type mret struct {
		year, month int
		r           float64
	}
	var months, years []mret
	prevM, prevY := capital, capital
	// A month ends at the last bar before the next month's first second:
	// the calendar is consulted once a month, not once a bar.
	var cur time.Time
	var next int64 = math.MinInt64
	for i, t := range c.Time {
		if t >= next {
			cur = time.Unix(t, 0).UTC()
			y, m, _ := cur.Date()
			next = time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
		}
		if i < len(c.Time)-1 && c.Time[i+1] < next {
			continue
		}
		e := c.Equity[i]
		months = append(months, mret{cur.Year(), int(cur.Month()), change(e, prevM)})
		prevM = e
		if i == len(c.Time)-1 || cur.Month() == time.December || time.Unix(c.Time[i+1], 0).UTC().Year() != cur.Year() {
			years = append(years, mret{cur.Year(), 0, change(e, prevY)})
			prevY = e
		}
	}
	h := &heatmap{}
	first := years[0].year
	if last := years[len(years)-1].year; last-first+1 > MaxYears {
		first = last - MaxYears + 1
		h.Note = "the run spans " + strconv.Itoa(last-years[0].year+1) + " years; the last " + strconv.Itoa(MaxYears) + " are shown"
	}
	top := marginT + cellH
	row := func(y int) int { return top + (y-first)*cellH }
	scale := 0.0
	for _, m := range months {
		if m.year >= first && !bad(m.r) {
			scale = math.Max(scale, math.Abs(m.r))
		}
	}
	add := func(m mret, col int, s float64) {
		x, y := marginL+col*cellW, row(m.year)
		label := dash
		if !bad(m.r) {
			label = strconv.FormatFloat(100*m.r, 'f', 1, 64)
		}
		when := strconv.Itoa(m.year)
		if m.month > 0 {
			when += "-" + monthNames[m.month-1]
		}
		fill, ink := shade(m.r, s)
		h.Cells = append(h.Cells, cell{
			X: strconv.Itoa(x), Y: strconv.Itoa(y), W: strconv.Itoa(cellW - 1), H: strconv.Itoa(cellH - 1),
			TX: strconv.Itoa(x + cellW/2), TY: strconv.Itoa(y + cellH/2 + 4),
			Fill: fill, Ink: ink, Text: label, Title: when + ": " + pct(m.r),
		})
	}
	for _, m := range months {
		if m.year >= first {
			add(m, m.month-1, scale)
		}
	}
	yscale := 0.0
	for _, y := range years {
		if y.year >= first && !bad(y.r) {
			yscale = math.Max(yscale, math.Abs(y.r))
		}
	}
	for _, y := range years {
		if y.year >= first {
			add(y, 12, yscale)
		}
	}
	for i, n := range monthNames {
		h.Months = append(h.Months, tick{At: strconv.Itoa(marginL + i*cellW + cellW/2), Label: n})
	}
	h.Months = append(h.Months, tick{At: strconv.Itoa(marginL + 12*cellW + cellW/2), Label: "year"})
	for y := first; y <= years[len(years)-1].year; y++ {
		h.Years = append(h.Years, tick{At: strconv.Itoa(row(y) + cellH/2 + 4), Label: strconv.Itoa(y)})
	}
	h.W, h.H = chartW, row(years[len(years)-1].year)+cellH+marginT
	return h
}

func change(e, prev float64) float64 {
	if prev <= 0 {
		return math.NaN()
	}
	return e/prev - 1
}

// shade colours a return on a diverging scale whose ends are ±scale:
// green for gains, red for losses, white at zero; ink is the text colour
// that stays readable on it.
func shade(r, scale float64) (fill, ink string) {
	if bad(r) || scale == 0 {
		return "#eeeeee", "#222222"
	}
	t := math.Min(math.Abs(r)/scale, 1)
	to := [3]float64{26, 152, 80}
	if r < 0 {
		to = [3]float64{215, 48, 39}
	}
	var c [3]int
	for i := range c {
		c[i] = int(math.Round(255 + (to[i]-255)*t))
	}
	ink = "#222222"
	if t > 0.6 {
		ink = "#ffffff"
	}
	return "#" + hex2(c[0]) + hex2(c[1]) + hex2(c[2]), ink
}

func hex2(v int) string {
	s := strconv.FormatInt(int64(v), 16)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

// histogram is the distribution of closed trades' returns.
type histogram struct {
	H              int
	Bars           []bar
	XTicks, YTicks []tick
	Left, Right    int
	Bottom         int
	Count          int
	Zero           string
}

type bar struct {
	X, Y, W, H, Fill, Title string
}

// tradeHistogram bins the trades' returns (pnl over entry notional) into
// Bins equal bins from the lowest to the highest; nil without trades.
func tradeHistogram(trades []backtest.Trade) *histogram {
	rs := make([]float64, 0, len(trades))
	for _, t := range trades {
		if !bad(t.Return) {
			rs = append(rs, t.Return)
		}
	}
	return binned(rs, "trades", pct)
}

// binned bins the values rs into Bins equal bins from the lowest to the
// highest, each bar titled with its count of what and its range written
// by label; nil without values.
func binned(rs []float64, what string, label func(float64) string) *histogram {
	if len(rs) == 0 {
		return nil
	}
	lo, hi := rs[0], rs[0]
	for _, r := range rs {
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	if hi == lo {
		pad := math.Max(math.Abs(lo)*0.01, 1e-4)
		lo, hi = lo-pad, hi+pad
	}
	counts := make([]int, Bins)
	width := (hi - lo) / Bins
	for _, r := range rs {
		counts[min(int((r-lo)/width), Bins-1)]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	const h = 200
	plotH := float64(h - marginT - marginB)
	yt := niceTicks(0, float64(top), 4)
	ymax := yt[len(yt)-1]
	g := &histogram{H: h, Left: marginL, Right: marginL + plotW, Bottom: h - marginB, Count: len(rs)}
	xAt := func(v float64) float64 { return marginL + (v-lo)/(hi-lo)*plotW }
	for i, c := range counts {
		if c == 0 {
			continue
		}
		b0, b1 := lo+float64(i)*width, lo+float64(i+1)*width
		bh := float64(c) / ymax * plotH
		fill := "#1a9850"
		if (b0+b1)/2 < 0 {
			fill = "#d73027"
		}
		g.Bars = append(g.Bars, bar{
			X: coord(xAt(b0)), W: coord(math.Max(xAt(b1)-xAt(b0)-1, 1)), Y: coord(marginT + plotH - bh), H: coord(bh),
			Fill: fill, Title: strconv.Itoa(c) + " " + what + " from " + label(b0) + " to " + label(b1),
		})
	}
	for _, v := range yt {
		g.YTicks = append(g.YTicks, tick{At: coord(marginT + plotH - v/ymax*plotH), Label: plainLabel(v)})
	}
	for i := range 5 {
		v := lo + (hi-lo)*float64(i)/4
		g.XTicks = append(g.XTicks, tick{At: coord(xAt(v)), Label: label(v)})
	}
	if lo < 0 && hi > 0 {
		g.Zero = coord(xAt(0))
	}
	return g
}

// rangeChart shows each Monte Carlo method's final equity, p5 to p95 as
// a bar and p50 as a mark.
type rangeChart struct {
	H           int
	Rows        []rangeRow
	XTicks      []tick
	Left, Right int
	Bottom      int
	Start       string // x of the starting capital
}

type rangeRow struct {
	Label, Y, TY, X, W, Mid, Title string
}

func monteCarloRanges(mcs []robust.MonteCarlo, capital float64) *rangeChart {
	var ok []robust.MonteCarlo
	lo, hi := 1.0, 1.0
	for _, mc := range mcs {
		q := mc.FinalEquity
		if bad(q.P5) || bad(q.P95) || bad(q.P50) {
			continue
		}
		ok = append(ok, mc)
		lo, hi = math.Min(lo, q.P5), math.Max(hi, q.P95)
	}
	if len(ok) == 0 {
		return nil
	}
	const rowH = 28
	h := marginT + len(ok)*rowH + marginB
	ticks := niceTicks(lo*capital, hi*capital, 5)
	x0, x1 := ticks[0], ticks[len(ticks)-1]
	xAt := func(v float64) float64 { return marginL + (v-x0)/(x1-x0)*plotW }
	c := &rangeChart{H: h, Left: marginL, Right: marginL + plotW, Bottom: h - marginB, Start: coord(xAt(capital))}
	for i, mc := range ok {
		q := mc.FinalEquity
		y := marginT + i*rowH
		a, b := xAt(q.P5*capital), xAt(q.P95*capital)
		c.Rows = append(c.Rows, rangeRow{
			Label: string(mc.Method), Y: strconv.Itoa(y + 6), TY: strconv.Itoa(y + rowH/2 + 4),
			X: coord(a), W: coord(math.Max(b-a, 1)), Mid: coord(xAt(q.P50 * capital)),
			Title: string(mc.Method) + ": final equity p5 " + money(q.P5*capital) + ", p50 " + money(q.P50*capital) + ", p95 " + money(q.P95*capital),
		})
	}
	for _, v := range ticks {
		c.XTicks = append(c.XTicks, tick{At: coord(xAt(v)), Label: plainLabel(v)})
	}
	return c
}
