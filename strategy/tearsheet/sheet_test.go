package tearsheet

import (
	"bytes"
	"context"
	"flag"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	goldenfile "wicket/internal/golden"
	"wicket/strategy"
	"wicket/strategy/backtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/tearsheet")

// bars is a seeded random walk of n bars of granularity g from 2021-01-01.
func bars(n int, g strategy.Granularity, seed uint64) strategy.Bars {
	b := strategy.Bars{Series: "W@" + string(g), Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	t0 := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	p, x := 100.0, seed
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		u := float64(x>>11)*0x1p-53 - 0.5
		o := p
		p *= 1 + 0.03*u + 0.001*math.Sin(float64(i)/40)
		b.Time[i] = t0.Add(time.Duration(i) * g.Duration()).Unix()
		b.Open[i], b.Close[i] = o, p
		b.High[i], b.Low[i] = max(o, p)*1.002, min(o, p)*0.998
		b.Volume[i] = 100
	}
	return b
}

// trend is long while the close is above its 20-bar mean, flat otherwise.
func trend(c []float64) []float64 {
	t := make([]float64, len(c))
	s := 0.0
	for i := range c {
		s += c[i]
		if i >= 20 {
			s -= c[i-20]
		}
		t[i] = math.NaN()
		if i >= 19 {
			t[i] = 0
			if c[i] > s/20 {
				t[i] = 1
			}
		}
	}
	return t
}

// fixture is a three-year daily run with its robustness figures.
func fixture(t testing.TB) *backtest.Result {
	t.Helper()
	r, _ := fixtureBars(t)
	return r
}

// fixtureBars is fixture with its bars.
func fixtureBars(t testing.TB) (*backtest.Result, strategy.Bars) {
	t.Helper()
	b := bars(3*365, "1d", 7)
	cfg := backtest.DefaultConfig()
	cfg.Warmup = 20
	cfg.Params = map[string]any{"window": 20, "exposure": 1}
	r, err := backtest.Run(context.Background(), b, cfg, backtest.Decisions{Targets: trend(b.Close)})
	if err != nil {
		t.Fatal(err)
	}
	r.LookaheadCheck = "passed (fixture)"
	if r.Robustness, err = backtest.Assess(r, backtest.Robustness{Paths: 200, Seed: 3, Trials: 12}, nil); err != nil {
		t.Fatal(err)
	}
	return r, b
}

func render(t testing.TB, r *backtest.Result) []byte {
	t.Helper()
	page, err := Render(r, "trend.star")
	if err != nil {
		t.Fatal(err)
	}
	return page
}

func TestGoldenSheet(t *testing.T) {
	r, b := fixtureBars(t)
	page, err := Render(r, "trend.star", Hold("buy & hold "+b.Series, b.Time, b.Time, b.Close, r.Settings.Capital))
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("..", "..", "testdata", "tearsheet", "trend.html"), page, *update, "go test ./strategy/tearsheet -run Golden -update")
}

func TestRenderIsDeterministic(t *testing.T) {
	a, b := render(t, fixture(t)), render(t, fixture(t))
	if !bytes.Equal(a, b) {
		t.Fatal("two renders of the same result differ")
	}
}

// charts are the page's charts by name, each with how many data elements
// it draws and how many points its data paths hold (benchmark lines left
// out).
func charts(page string) map[string][2]int {
	out := map[string][2]int{}
	svg := regexp.MustCompile(`(?s)<svg data-chart="([a-z-]+)".*?</svg>`)
	paths := regexp.MustCompile(`<path class="data[^"]*"[^>]* d="([^"]*)"`)
	pts := regexp.MustCompile(`[ML]-?[0-9.]+,-?[0-9.]+`)
	for _, m := range svg.FindAllStringSubmatch(page, -1) {
		data := strings.Count(m[0], `class="data`)
		n := 0
		for _, p := range paths.FindAllStringSubmatch(m[0], -1) {
			n += len(pts.FindAllString(p[1], -1))
		}
		out[m[1]] = [2]int{data, n}
	}
	return out
}

var allCharts = []string{"equity", "drawdown", "monthly-returns", "rolling-sharpe", "trade-distribution", "monte-carlo"}

func TestEveryChartHasData(t *testing.T) {
	r := fixture(t)
	got := charts(string(render(t, r)))
	for _, name := range allCharts {
		c, ok := got[name]
		if !ok || c[0] == 0 {
			t.Errorf("chart %s: missing or without data (%v)", name, c)
		}
	}
	if p := got["equity"][1]; p != r.Metrics.Bars {
		t.Errorf("equity: %d points for %d bars (fewer bars than pixel columns: every bar is drawn)", p, r.Metrics.Bars)
	}
	// 36 months and 3 year totals.
	if c := got["monthly-returns"][0]; c != 36+3 {
		t.Errorf("monthly-returns: %d cells, want 39", c)
	}
}

func TestPageAsksForNothing(t *testing.T) {
	page := string(render(t, fixture(t)))
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="`+CSP+`">`) {
		t.Error("the page has no CSP meta with " + CSP)
	}
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "url(", "@import", "src=", "href="} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	rest := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	if i := strings.Index(rest, "://"); i >= 0 {
		t.Errorf("the page names a URL: %q", rest[max(0, i-20):min(len(rest), i+20)])
	}
}

func TestMoneyIsDecimal(t *testing.T) {
	r := fixture(t)
	page := string(render(t, r))
	for _, want := range []string{backtest.Money(r.Metrics.FinalEquity), backtest.Money(r.Settings.Capital), backtest.Money(r.Metrics.FeesPaid)} {
		if !strings.Contains(page, ">"+want+"<") {
			t.Errorf("the page does not show %s as a cell", want)
		}
	}
}

// A long run's page stays small: every curve keeps at most two points
// per pixel column (BenchmarkRender reports a 1,000,000-bar page's size).
func TestLongRunBounded(t *testing.T) {
	b := bars(200_000, "1m", 11)
	r, err := backtest.Run(context.Background(), b, backtest.DefaultConfig(), backtest.Decisions{Targets: trend(b.Close)})
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, r)
	t.Logf("a %d-bar run with %d trades: %d bytes", len(b.Time), len(r.AllTrades), len(page))
	if len(page) > 400<<10 {
		t.Errorf("the page is %d bytes, over 400 KiB", len(page))
	}
	got := charts(string(page))
	for _, name := range []string{"equity", "drawdown", "rolling-sharpe"} {
		if p := got[name][1]; p == 0 || p > columnPoints*plotW+2 {
			t.Errorf("%s: %d points, want 1 to %d", name, p, columnPoints*plotW+2)
		}
	}
	if got["trade-distribution"][0] == 0 {
		t.Error("trade-distribution: no bins")
	}
}

// A result read back from JSON (no full curve) is drawn from its
// reported points.
func TestReportedCurve(t *testing.T) {
	r := fixture(t)
	r.Curve, r.Returns, r.AllTrades = backtest.Curve{}, nil, nil
	r.Robustness = nil
	page := string(render(t, r))
	got := charts(page)
	for _, name := range []string{"equity", "drawdown", "monthly-returns", "rolling-sharpe", "trade-distribution"} {
		if got[name][0] == 0 {
			t.Errorf("%s: no data from the reported curve", name)
		}
	}
	if !strings.Contains(page, "--robustness") {
		t.Error("without robustness figures the page does not say how to ask for them")
	}
}

func TestMonthlyReturns(t *testing.T) {
	at := func(s string) int64 {
		tm, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Unix()
	}
	c := backtest.Curve{
		Time:   []int64{at("2023-12-30"), at("2023-12-31"), at("2024-01-15"), at("2024-01-31"), at("2024-02-01")},
		Equity: []float64{900, 1100, 1000, 1210, 1089},
	}
	h := monthly(c, 1000)
	want := map[string]string{"2023-Dec": "10.00%", "2024-Jan": "10.00%", "2024-Feb": "-10.00%", "2023": "10.00%", "2024": "-1.00%"}
	if len(h.Cells) != len(want) {
		t.Fatalf("%d cells, want %d", len(h.Cells), len(want))
	}
	for _, cl := range h.Cells {
		k, v, _ := strings.Cut(cl.Title, ": ")
		if want[k] != v {
			t.Errorf("%s: %s, want %s", k, v, want[k])
		}
	}
}

func TestRollingWindow(t *testing.T) {
	for _, c := range []struct {
		n    int
		p    float64
		want int
	}{{1095, 365, 183}, {300, 365, 75}, {39, 365, 0}, {100_000, 525960, 25000}, {1_000_000, 525960, 262980}} {
		if got := RollingWindow(c.n, c.p); got != c.want {
			t.Errorf("RollingWindow(%d, %v) = %d, want %d", c.n, c.p, got, c.want)
		}
	}
}

// The rolling Sharpe ratio at a bar equals one computed from scratch over
// its window.
func TestRollingSharpeValue(t *testing.T) {
	r := fixture(t)
	w := RollingWindow(len(r.Returns), r.Metrics.PeriodsPerYear)
	c, note := rolling(r.Curve.Time, r.Returns, r.Metrics.PeriodsPerYear)
	if c == nil {
		t.Fatal(note)
	}
	last := r.Returns[len(r.Returns)-w:]
	mean := 0.0
	for _, x := range last {
		mean += x
	}
	mean /= float64(w)
	v := 0.0
	for _, x := range last {
		v += (x - mean) * (x - mean)
	}
	want := mean / math.Sqrt(v/float64(w-1)) * math.Sqrt(r.Metrics.PeriodsPerYear)
	// The last point of the path is the last window's ratio.
	fields := strings.Fields(c.Path)
	lastY, _ := strconv.ParseFloat(strings.Split(fields[len(fields)-1], ",")[1], 64)
	ticks := c.YTicks
	top, _ := strconv.ParseFloat(ticks[len(ticks)-1].At, 64)
	bottom, _ := strconv.ParseFloat(ticks[0].At, 64)
	vTop, _ := strconv.ParseFloat(ticks[len(ticks)-1].Label, 64)
	vBottom, _ := strconv.ParseFloat(ticks[0].Label, 64)
	got := vBottom + (bottom-lastY)/(bottom-top)*(vTop-vBottom)
	if math.Abs(got-want) > 0.02*math.Max(1, math.Abs(vTop-vBottom)) {
		t.Errorf("last rolling Sharpe drawn at %v, computed %v", got, want)
	}
}

func TestColumnsKeepExtremes(t *testing.T) {
	n := 1000
	ts, vals := make([]int64, n), make([]float64, n)
	for i := range n {
		ts[i], vals[i] = int64(i), math.Sin(float64(i)/10)
	}
	vals[500] = 9
	vals[501] = -9
	for i := 600; i < 700; i++ {
		vals[i] = math.NaN()
	}
	out := columns(ts, vals, 50)
	if len(out) > 100 {
		t.Fatalf("%d points from 50 columns", len(out))
	}
	var hi, lo, gaps bool
	for i, p := range out {
		hi = hi || p.v == 9
		lo = lo || p.v == -9
		gaps = gaps || math.IsNaN(p.v)
		if i > 0 && p.t < out[i-1].t {
			t.Fatalf("point %d out of time order", i)
		}
	}
	if !hi || !lo || !gaps {
		t.Errorf("kept the highest %v, the lowest %v, a gap %v; want all", hi, lo, gaps)
	}
}

func TestNoTrades(t *testing.T) {
	b := bars(200, "1d", 5)
	flat := make([]float64, len(b.Close))
	r, err := backtest.Run(context.Background(), b, backtest.DefaultConfig(), backtest.Decisions{Targets: flat})
	if err != nil {
		t.Fatal(err)
	}
	page := string(render(t, r))
	if !strings.Contains(page, "No closed trades") {
		t.Error("a run without trades does not say so")
	}
	if !strings.Contains(page, "no window of") {
		t.Error("a run that never moved does not say why there is no rolling Sharpe ratio")
	}
}

// BenchmarkRender is the tear sheet of a 1,000,000-bar run: what
// `--report` and every MCP backtest add to a run.
func BenchmarkRender(b *testing.B) {
	bs := bars(1_000_000, "1m", 11)
	r, err := backtest.Run(context.Background(), bs, backtest.DefaultConfig(), backtest.Decisions{Targets: trend(bs.Close)})
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for b.Loop() {
		page, err := Render(r, "trend.star")
		if err != nil {
			b.Fatal(err)
		}
		size = len(page)
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// BenchmarkRun is the same run's backtest alone, to compare with.
func BenchmarkRun(b *testing.B) {
	bs := bars(1_000_000, "1m", 11)
	targets := trend(bs.Close)
	for b.Loop() {
		if _, err := backtest.Run(context.Background(), bs, backtest.DefaultConfig(), backtest.Decisions{Targets: targets}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRelativeFigures(t *testing.T) {
	r := fixture(t)
	bench := bars(3*365, "1d", 99)
	rep, err := backtest.Assess(r, backtest.Robustness{Benchmark: "B@1d", Paths: 200}, &bench)
	if err != nil {
		t.Fatal(err)
	}
	r.Robustness = rep
	page := string(render(t, r))
	for _, want := range []string{"<td>benchmark</td><td class=\"v\">B@1d</td>", "<td>information ratio</td>", "<td>beta</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

func TestNamesAreEscaped(t *testing.T) {
	r := fixture(t)
	r.Series = `X"><script>alert(1)</script>`
	page, err := Render(r, "<b>evil</b>.star")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "<script") || strings.Contains(string(page), "<b>evil") {
		t.Error("a strategy or series name reached the page as markup")
	}
}
