package tearsheet

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRenderRun: a walk-forward's and a CPCV's pages draw every chart
// they were given with data in it (the curve's points, a bar per
// defined window score, the distribution's bins) and the table's rows,
// and a run given none of them draws no empty chart.
// runFixtures are a walk-forward's run (300 daily points of curve, 3
// windows, one in-sample score undefined) and a CPCV's (6 path Sharpe
// ratios, one undefined).
func runFixtures() (wf, cv Run) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var times []time.Time
	var eq []float64
	e := 10000.0
	for i := range 300 {
		times = append(times, t0.Add(time.Duration(i)*24*time.Hour))
		e *= 1 + 0.01*math.Sin(float64(i)/7)
		eq = append(eq, e)
	}
	wf = Run{Kind: "walk-forward", Title: "sma on BTC", Settings: [][2]string{{"purge", "5 bars"}}, Metrics: [][2]string{{"sharpe", "1.2"}},
		Equity: Points(times, eq, 10000), EquityTitle: "Stitched out-of-sample equity",
		Pairs: &Pairs{Name: "window-scores", Title: "Sharpe per window", Labels: []string{"1", "2", "3"}, A: []float64{1.5, 0.8, math.NaN()}, B: []float64{0.4, -0.3, 0.2}, NameA: "in-sample", NameB: "out-of-sample"},
		Table: &Table{Title: "Windows", Head: []string{"window", "params"}, Rows: [][]string{{"1", "fast=5"}, {"2", "fast=10"}, {"3", "fast=5"}}}}
	cv = Run{Kind: "cpcv", Title: "cpcv", Dist: []float64{0.1, 0.5, -0.2, 0.9, math.NaN(), 0.3}, DistTitle: "Out-of-sample Sharpe ratio per path", DistCaption: "5 paths", DistUnit: "paths"}
	return wf, cv
}

func TestRenderRun(t *testing.T) {
	wf, cv := runFixtures()
	html, err := RenderRun(wf)
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, name := range []string{"equity", "drawdown", "window-scores"} {
		if !strings.Contains(page, `data-chart="`+name+`"`) {
			t.Errorf("no %s chart", name)
		}
	}
	for _, m := range regexp.MustCompile(`data-points="(\d+)"`).FindAllStringSubmatch(page, -1) {
		if m[1] != "300" {
			t.Errorf("a curve of %s points, want 300", m[1])
		}
	}
	if n := strings.Count(page, `<rect class="data"`); n != 5 { // 3 windows × 2 scores, one undefined
		t.Errorf("%d bars, want 5", n)
	}
	if !strings.Contains(page, "<td>fast=10</td>") || !strings.Contains(page, "wicket walk-forward tear sheet") {
		t.Error("the table or the kind is missing")
	}
	if strings.Contains(page, `data-chart="distribution"`) {
		t.Error("a distribution drawn without values")
	}

	html, err = RenderRun(cv)
	if err != nil {
		t.Fatal(err)
	}
	page = string(html)
	if !strings.Contains(page, `data-chart="distribution"`) || strings.Count(page, `<rect class="data"`) < 3 || strings.Contains(page, `data-chart="equity"`) {
		t.Errorf("cpcv page:\n%s", page)
	}
	if !strings.Contains(page, "1 paths from") {
		t.Error("the bins are not titled with their counts")
	}
}
