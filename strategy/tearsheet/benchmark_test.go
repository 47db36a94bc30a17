package tearsheet

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
)

// fixedBars are daily bars with the given closes (NaN: no bar), each
// opening at the close before, from 2024-03-01; volume large enough
// that no cap binds.
func fixedBars(series string, closes ...float64) strategy.Bars {
	n := len(closes)
	b := strategy.Bars{Series: series, Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: closes, Volume: make([]float64, n)}
	t0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	prev := closes[0]
	for i, c := range closes {
		b.Time[i] = t0.AddDate(0, 0, i).Unix()
		o := prev
		switch {
		case math.IsNaN(c):
			o = math.NaN()
		case math.IsNaN(prev): // the first bar opens at its close
			o, prev = c, c
		default:
			prev = c
		}
		b.Open[i], b.High[i], b.Low[i], b.Volume[i] = o, math.Max(o, c)*1.001, math.Min(o, c)*0.999, 1e12
	}
	return b
}

// period is one drawdown period as the test finds it on its own: a run
// of bars below the running maximum (the capital first), the bar before
// it (or the first) its peak, its lowest ratio to that maximum its
// trough, the bar after it (if any) its recovery.
type period struct {
	peak, trough, end int
	recovered         bool
	depth             float64
}

func periods(equity []float64, capital float64) []period {
	var out []period
	for i := 0; i < len(equity); {
		top := capital
		for _, e := range equity[:i] {
			top = math.Max(top, e)
		}
		if equity[i] >= top {
			i++
			continue
		}
		j := i
		p := period{peak: max(i-1, 0), trough: i, depth: 1 - equity[i]/top}
		for j < len(equity) && equity[j] < top {
			if d := 1 - equity[j]/top; d > p.depth {
				p.trough, p.depth = j, d
			}
			j++
		}
		p.end, p.recovered = j, j < len(equity)
		if !p.recovered {
			p.end = len(equity) - 1
		}
		out = append(out, p)
		i = j
	}
	slices.SortStableFunc(out, func(a, b period) int {
		switch {
		case a.depth > b.depth:
			return -1
		case a.depth < b.depth:
			return 1
		}
		return 0
	})
	return out[:min(5, len(out))]
}

// wantRows are the drawdown table's rows the test expects for a curve at
// times ts.
func wantRows(ts []int64, equity []float64, capital float64) [][]string {
	day := func(i int) string { return time.Unix(ts[i], 0).UTC().Format(time.DateOnly) }
	var rows [][]string
	for _, p := range periods(equity, capital) {
		rec := "not recovered"
		if p.recovered {
			rec = day(p.end)
		}
		rows = append(rows, []string{day(p.peak), day(p.trough), rec, strconv.FormatFloat(100*p.depth, 'f', 2, 64) + "%",
			fmt.Sprintf("%d bars (%.1f days)", p.end-p.peak, float64(ts[p.end]-ts[p.peak])/86400)})
	}
	return rows
}

// pageRows are the rows of the page's drawdown table.
func pageRows(t *testing.T, page string) [][]string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<table data-table="drawdowns">(.*?)</table>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no drawdown table")
	}
	var rows [][]string
	for _, tr := range regexp.MustCompile(`<tr>((?:<td>[^<]*</td>)+)</tr>`).FindAllStringSubmatch(m[1], -1) {
		var row []string
		for _, td := range regexp.MustCompile(`<td>([^<]*)</td>`).FindAllStringSubmatch(tr[1], -1) {
			row = append(row, td[1])
		}
		rows = append(rows, row)
	}
	return rows
}

// pathYs are the y coordinates of a path's points.
func pathYs(t *testing.T, d string) []float64 {
	t.Helper()
	var ys []float64
	for _, m := range regexp.MustCompile(`[ML](-?[0-9.]+),(-?[0-9.]+)`).FindAllStringSubmatch(d, -1) {
		y, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		ys = append(ys, y)
	}
	return ys
}

// affine fails t unless ys (drawn to 0.1 px) are a + b·xs for one a and
// b: the line draws xs on one linear scale.
func affine(t *testing.T, what string, xs, ys []float64) {
	t.Helper()
	if len(xs) != len(ys) {
		t.Fatalf("%s: %d points drawn for %d values", what, len(ys), len(xs))
	}
	lo, hi := 0, 0
	for i, x := range xs {
		if x < xs[lo] {
			lo = i
		}
		if x > xs[hi] {
			hi = i
		}
	}
	b := (ys[hi] - ys[lo]) / (xs[hi] - xs[lo])
	a := ys[lo] - b*xs[lo]
	for i, x := range xs {
		if d := math.Abs(a + b*x - ys[i]); d > 0.1 {
			t.Errorf("%s: point %d (%v) drawn at y %v, the scale puts it at %v", what, i, x, ys[i], a+b*x)
		}
	}
}

// chartPaths are a chart's data path and its benchmark paths by name
// (as the page writes it, escaped).
func chartPaths(t *testing.T, page, chart string) (string, map[string]string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<svg data-chart="` + chart + `".*?</svg>`).FindString(page)
	if m == "" {
		t.Fatalf("no %s chart", chart)
	}
	bench := map[string]string{}
	for _, b := range regexp.MustCompile(`data-bench="([^"]*)" data-points="\d+" d="([^"]*)"`).FindAllStringSubmatch(m, -1) {
		bench[b[1]] = b[2]
	}
	data := regexp.MustCompile(`<path class="data line" data-points="\d+" d="([^"]*)"`).FindStringSubmatch(m)
	if data == nil {
		t.Fatalf("%s: no curve", chart)
	}
	return data[1], bench
}

// TestSheetFiguresOnFixedSeries: on a dozen fixed daily closes traded
// long, the page's buy-and-hold line, its legend, the log-scale chart
// and the drawdown-periods table equal the test's own computation from
// the closes and the run's curve; the deepest period's depth is the max
// drawdown metric as the page prints it.
func TestSheetFiguresOnFixedSeries(t *testing.T) {
	closes := []float64{100, 104, 98, 101, 106, 103, 95, 99, 107, 104, 102, 105, 97, 99}
	b := fixedBars("FX-USD@1d", closes...)
	cfg := backtest.DefaultConfig()
	cfg.Capital = decimal.NewFromInt(10000)
	cfg.Costs.VolumeCap = backtest.VolumeOff
	targets := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1} // long, flat twice: trades and drawdowns
	r, err := backtest.Run(context.Background(), b, cfg, backtest.Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	capital := r.Settings.Capital
	html, err := Render(r, "fixed.star", Hold("buy & hold "+b.Series, b.Time, b.Time, b.Close, capital))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)

	// Buy and hold: capital × close / first close at every bar.
	hold := make([]float64, len(closes))
	for i, c := range closes {
		hold[i] = capital * c / closes[0]
	}
	last := hold[len(hold)-1]
	bh := strconv.FormatFloat(100*(closes[len(closes)-1]/closes[0]-1), 'f', 2, 64) + "%"
	if !strings.Contains(page, "<td>buy &amp; hold</td><td class=\"v\">"+bh+"</td>") {
		t.Errorf("the metrics' buy & hold is not %s", bh)
	}
	legend := "buy &amp; hold FX-USD@1d: " + strconv.FormatFloat(last, 'f', 2, 64) + " (" + bh + ")"
	if !strings.Contains(page, legend) {
		t.Errorf("the legend lacks %q", legend)
	}
	curve, bench := chartPaths(t, page, "equity")
	affine(t, "equity", r.Curve.Equity, pathYs(t, curve))
	affine(t, "buy & hold", hold, pathYs(t, bench["buy &amp; hold FX-USD@1d"]))
	logs := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.Log10(x)
		}
		return out
	}
	curve, bench = chartPaths(t, page, "equity-log")
	affine(t, "equity on the log scale", logs(r.Curve.Equity), pathYs(t, curve))
	affine(t, "buy & hold on the log scale", logs(hold), pathYs(t, bench["buy &amp; hold FX-USD@1d"]))

	got, want := pageRows(t, page), wantRows(b.Time, r.Curve.Equity, capital)
	if len(want) < 3 || !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("drawdown periods:\n got %q\nwant %q", got, want)
	}
	if md := strconv.FormatFloat(100*r.Metrics.MaxDrawdown, 'f', 2, 64) + "%"; len(got) == 0 || got[0][3] != md {
		t.Errorf("the deepest period is not the max drawdown %s: %q", md, got)
	}
}

// TestEqualPartsOnFixedUniverse: a universe of three assets, one of
// which starts late and one with a missing bar, is held in equal parts
// (each from its first close, cash before it) as the test computes it,
// ending at the buy & hold metric; the portfolio page draws it, and its
// drawdown table is the test's own from the run's curve.
func TestEqualPartsOnFixedUniverse(t *testing.T) {
	nan := math.NaN()
	assets := []strategy.Bars{
		fixedBars("A-USD@1d", 50, 52, 49, 51, 55, 54, 50, 53, 56, 52),
		fixedBars("B-USD@1d", 200, 190, 195, 205, 210, nan, 198, 202, 215, 220),
		fixedBars("C-USD@1d", nan, nan, nan, 10, 11, 9, 12, 12.5, 11, 13),
	}
	n := assets[0].Len()
	w := make([][]float64, 3)
	for a := range w {
		w[a] = make([]float64, n)
		for i := range n {
			w[a][i] = 0.3 * math.Cos(float64(i+a))
		}
	}
	cfg := backtest.DefaultConfig()
	cfg.Costs.VolumeCap = backtest.VolumeOff
	reb, err := portfolio.ParseRebalance("daily")
	if err != nil {
		t.Fatal(err)
	}
	r, err := portfolio.RunFrom(context.Background(), assets, w, reb, cfg, portfolio.Options{RecordHoldings: true})
	if err != nil {
		t.Fatal(err)
	}
	capital := r.Settings.Capital
	want := make([]float64, n)
	for _, b := range assets {
		first, last := nan, nan
		for i, c := range b.Close {
			if !math.IsNaN(c) {
				if math.IsNaN(first) {
					first = c
				}
				last = c
			}
			part := 1.0
			if !math.IsNaN(first) {
				part = last / first
			}
			want[i] += capital * part / 3
		}
	}
	got := EqualParts("held", r.Holdings, capital)
	for i := range want {
		if math.Abs(got.Equity[i]-want[i]) > 1e-9*capital || got.Time[i] != assets[0].Time[i] {
			t.Errorf("bar %d: equal parts %v at %d, want %v at %d", i, got.Equity[i], got.Time[i], want[i], assets[0].Time[i])
		}
	}
	if end := capital * (1 + r.Metrics.BuyAndHoldReturn); math.Abs(got.Equity[n-1]-end) > 1e-9*capital {
		t.Errorf("equal parts end at %v, the buy & hold metric at %v", got.Equity[n-1], end)
	}
	html, err := RenderPortfolio(r, "swing.star")
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	if !strings.Contains(page, "buy &amp; hold (equal parts): "+strconv.FormatFloat(want[n-1], 'f', 2, 64)) {
		t.Errorf("the legend does not end the equal parts at %.2f", want[n-1])
	}
	_, bench := chartPaths(t, page, "equity")
	affine(t, "equal parts", want, pathYs(t, bench["buy &amp; hold (equal parts)"]))
	if rows, w := pageRows(t, page), wantRows(assets[0].Time, r.Curve.Equity, capital); len(w) == 0 || !slices.EqualFunc(rows, w, slices.Equal) {
		t.Errorf("drawdown periods:\n got %q\nwant %q", rows, w)
	}
}

// TestHoldAlignsAnotherSeries: a benchmark series is held at its last
// close at or before each of the run's bars, and not before its first.
func TestHoldAlignsAnotherSeries(t *testing.T) {
	run := []int64{10, 20, 30, 40, 50}
	b := Hold("x", run, []int64{15, 30, 45}, []float64{2, 3, 4}, 100)
	want := []float64{math.NaN(), 100, 150, 150, 200}
	for i := range want {
		if got := b.Equity[i]; got != want[i] && !(math.IsNaN(got) && math.IsNaN(want[i])) {
			t.Errorf("bar %d: %v, want %v", i, got, want[i])
		}
	}
}

// TestLogTicks: a log axis's ticks cover the range, rise, stay above
// zero and are round.
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []float64
	}{
		{7459, 12400, []float64{7000, 8000, 9000, 10000, 11000, 12000, 13000}},
		{50, 20000, []float64{50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000}},
		{3, 2e6, []float64{1, 10, 100, 1000, 10000, 100000, 1e6, 1e7}},
		{1000, 9000, []float64{1000, 2000, 5000, 10000}},
	} {
		if got := logTicks(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("logTicks(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

// A run that loses everything has no log scale and says why.
func TestNoLogScaleAtZero(t *testing.T) {
	pts := Points([]time.Time{time.Unix(0, 0), time.Unix(86400, 0)}, []float64{100, 0}, 100)
	eq, _ := equityCharts(pts, 100, nil)
	if eq.Log != nil || eq.LogNote == "" {
		t.Errorf("a curve reaching zero: log chart %v, note %q", eq.Log, eq.LogNote)
	}
}
