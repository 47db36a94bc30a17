package robust

import (
	"bytes"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1e-300, math.Abs(want))
}

// TestMinBTLPublished: Bailey, Borwein, López de Prado and Zhu (2014)
// read off their Figure 2 that with five years of data no more than 45
// independent configurations should be tried for an annualised Sharpe
// ratio of 1.
func TestMinBTLPublished(t *testing.T) {
	if got := MinBTL(45, 1); math.Abs(got-5) > 0.01 {
		t.Errorf("MinBTL(45, 1) = %v years, want about 5", got)
	}
	if got := MinBTL(1, 1); got != 0 {
		t.Errorf("MinBTL(1, 1) = %v, want 0 (no selection)", got)
	}
	if !math.IsNaN(MinBTL(10, 0)) {
		t.Error("MinBTL for a Sharpe ratio of 0 is defined")
	}
	// More trials need more history.
	if !(MinBTL(1000, 1) > MinBTL(100, 1) && MinBTL(100, 1) > MinBTL(45, 1)) {
		t.Error("MinBTL does not grow with the trials")
	}
}

// TestAgainstIndependentPython compares PSR and MinBTL with
// testdata/independent.py, the papers' formulas on Python's standard
// library (another normal distribution, another quantile function).
func TestAgainstIndependentPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the independent check of PSR and MinBTL is skipped")
	}
	type c struct {
		line string
		got  float64
	}
	cases := []c{
		{"psr 0.1 0 250 -0.5 4", PSR(0.1, 0, 250, -0.5, 4)},
		{"psr 0.05 0.02 1000 0.3 6", PSR(0.05, 0.02, 1000, 0.3, 6)},
		{"psr -0.03 0 500 -1.2 9", PSR(-0.03, 0, 500, -1.2, 9)},
		{"psr 0.2 0.1 60 0 3", PSR(0.2, 0.1, 60, 0, 3)},
		{"minbtl 45 1", MinBTL(45, 1)},
		{"minbtl 7 0.5", MinBTL(7, 0.5)},
		{"minbtl 2222 1.5", MinBTL(2222, 1.5)},
	}
	var in strings.Builder
	for _, k := range cases {
		in.WriteString(k.line + "\n")
	}
	cmd := exec.Command(py, "testdata/independent.py")
	cmd.Stdin = strings.NewReader(in.String())
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("independent.py: %v: %s", err, stderr.String())
	}
	lines := strings.Fields(out.String())
	if len(lines) != len(cases) {
		t.Fatalf("independent.py printed %d values for %d cases", len(lines), len(cases))
	}
	for i, k := range cases {
		want, err := strconv.ParseFloat(lines[i], 64)
		if err != nil {
			t.Fatal(err)
		}
		if !near(k.got, want, 1e-9) {
			t.Errorf("%s: Go %v, Python %v", k.line, k.got, want)
		}
	}
}

func TestPSRUndefined(t *testing.T) {
	for _, v := range []float64{PSR(0.1, 0, 1, 0, 3), PSR(math.NaN(), 0, 100, 0, 3), PSR(3, 0, 100, 5, 3)} {
		if !math.IsNaN(v) {
			t.Errorf("PSR = %v, want NaN", v)
		}
	}
	// A Sharpe ratio at its benchmark is a coin toss.
	if got := PSR(0.1, 0.1, 100, 0, 3); got != 0.5 {
		t.Errorf("PSR at the benchmark = %v, want 0.5", got)
	}
}

// TestAgainstHand: strategy returns r = 2b + 0.001 against
// b = (0.01, -0.02, 0.03, 0), daily (252 a year). By hand: beta 2,
// alpha 0.001 × 252 = 0.252, correlation 1; r - b = b + 0.001 has mean
// 0.006 and standard deviation sqrt(0.0013/3) = 0.0208166599946613, so
// the tracking error is that × sqrt(252) = 0.330454232837166 and the
// information ratio 0.006 / 0.0208166599946613 × sqrt(252) =
// 4.57552014697615.
func TestAgainstHand(t *testing.T) {
	b := []float64{0.01, -0.02, 0.03, 0}
	r := make([]float64, len(b))
	for i := range b {
		r[i] = 2*b[i] + 0.001
	}
	rel, err := Against(r, b, 252)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"beta", rel.Beta, 2}, {"alpha", rel.Alpha, 0.252}, {"correlation", rel.Correlation, 1},
		{"tracking error", rel.TrackingError, 0.330454232837166}, {"information ratio", rel.InformationRatio, 4.57552014697615},
	} {
		if !near(c.got, c.want, 1e-12) {
			t.Errorf("%s = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
	if _, err := Against(r, b[:3], 252); err == nil {
		t.Error("returns of different lengths were compared")
	}
	flat, _ := Against(r, []float64{0.01, 0.01, 0.01, 0.01}, 252)
	if !math.IsNaN(flat.Beta) {
		t.Errorf("beta against a benchmark without variance = %v", flat.Beta)
	}
}

// TestBootstrapBinomial: 100 trades, half +10 % and half -10 %. A
// bootstrap path's final equity is 1.1^k 0.9^(100-k) with k ~ Bin(100,
// 1/2), whose median is 50 and whose 5th percentile is 42 (by the exact
// distribution), so the figures are 0.99^50 and 1.1^42 0.9^58, up to one
// step of k in 20,000 paths.
func TestBootstrapBinomial(t *testing.T) {
	trades := make([]float64, 100)
	for i := range trades {
		trades[i] = 0.1
		if i%2 == 1 {
			trades[i] = -0.1
		}
	}
	mc, err := Simulate(trades, MonteCarloConfig{Method: Bootstrap, Paths: 20000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	kOf := func(eq float64) float64 { return (math.Log(eq) - 100*math.Log(0.9)) / (math.Log(1.1) - math.Log(0.9)) }
	for _, c := range []struct {
		name string
		eq   float64
		k    float64
	}{{"p50", mc.FinalEquity.P50, 50}, {"p5", mc.FinalEquity.P5, 42}, {"p95", mc.FinalEquity.P95, 58}} {
		if k := kOf(c.eq); math.Abs(k-c.k) > 1.0001 {
			t.Errorf("%s final equity %v is k = %.2f winners, want %v ± 1", c.name, c.eq, k, c.k)
		}
	}
}

// TestReshuffleKeepsTheEnd: a reshuffle reorders the same trades, so every
// path ends where the run did; its drawdowns spread around the run's.
func TestReshuffleKeepsTheEnd(t *testing.T) {
	trades := []float64{0.05, -0.02, 0.03, -0.04, 0.01, 0.06, -0.03, 0.02, -0.01, 0.04}
	end := 1.0
	for _, r := range trades {
		end *= 1 + r
	}
	mc, err := Simulate(trades, MonteCarloConfig{Method: Reshuffle, Paths: 1000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []float64{mc.FinalEquity.P5, mc.FinalEquity.P50, mc.FinalEquity.P95} {
		if !near(q, end, 1e-12) {
			t.Errorf("a reshuffled path ends at %v, the run at %v", q, end)
		}
	}
	if !(mc.MaxDrawdown.P5 < mc.MaxDrawdown.P95) {
		t.Errorf("reshuffled drawdowns do not spread: %+v", mc.MaxDrawdown)
	}
	if mc.ProbabilityOfRuin != 0 {
		t.Errorf("ruin %v on trades that never lose half", mc.ProbabilityOfRuin)
	}
	again, _ := Simulate(trades, MonteCarloConfig{Method: Reshuffle, Paths: 1000, Seed: 3})
	other, _ := Simulate(trades, MonteCarloConfig{Method: Reshuffle, Paths: 1000, Seed: 4})
	if again != mc {
		t.Error("the same seed gave other figures")
	}
	if other.MaxDrawdown == mc.MaxDrawdown {
		t.Error("another seed gave the same drawdowns")
	}
}

// TestBlockKeepsDependence: per-bar returns that alternate +10 % and
// -10/11 (each pair ends where it began). Long blocks keep the pairs, so
// the paths' ends stay near 1; an iid bootstrap of the same bars spreads
// them far wider.
func TestBlockKeepsDependence(t *testing.T) {
	bars := make([]float64, 1000)
	for i := range bars {
		bars[i] = 0.1
		if i%2 == 1 {
			bars[i] = 1/1.1 - 1
		}
	}
	blocks, err := Simulate(bars, MonteCarloConfig{Method: Block, Paths: 2000, Seed: 5, BlockLength: 100})
	if err != nil {
		t.Fatal(err)
	}
	iid, err := Simulate(bars, MonteCarloConfig{Method: Bootstrap, Paths: 2000, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	spread := func(q Quantiles) float64 { return math.Log(q.P95) - math.Log(q.P5) }
	if !(spread(blocks.FinalEquity) < spread(iid.FinalEquity)/3) {
		t.Errorf("block spread %v is not far below the iid spread %v", spread(blocks.FinalEquity), spread(iid.FinalEquity))
	}
	if blocks.BlockLength != 100 || blocks.Steps != 1000 {
		t.Errorf("block report %+v", blocks)
	}
	if iid.ProbabilityOfRuin == 0 {
		t.Error("no iid path lost half, on bars of ±10 %")
	}
}

func TestSimulateRefuses(t *testing.T) {
	ok := []float64{0.1, -0.1, 0.05}
	for _, c := range []struct {
		r    []float64
		cfg  MonteCarloConfig
		want string
	}{
		{ok[:1], MonteCarloConfig{Method: Bootstrap, Paths: 100}, "too few returns"},
		{ok, MonteCarloConfig{Method: Bootstrap, Paths: 10}, "paths 10 must be between 100 and 1,000,000"},
		{ok, MonteCarloConfig{Method: "jackknife", Paths: 100}, `unknown method "jackknife"`},
		{[]float64{0.1, math.NaN()}, MonteCarloConfig{Method: Bootstrap, Paths: 100}, "return NaN is not a finite return"},
		{ok, MonteCarloConfig{Method: Block, Paths: 100, BlockLength: 10}, "block length 10 must be between 1 and the 3 returns"},
		{ok, MonteCarloConfig{Method: Bootstrap, Paths: 100, Ruin: 1.5}, "ruin 1.5 must be a fraction"},
	} {
		_, err := Simulate(c.r, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := ParseMethod("block"); err != nil {
		t.Error(err)
	}
	if _, err := ParseMethod("x"); err == nil {
		t.Error("ParseMethod(x) passed")
	}
}

// BenchmarkMonteCarlo is the figure issue 28 asks for: 10,000 paths on
// 1,000 trades, per method.
func BenchmarkMonteCarlo(b *testing.B) {
	trades := make([]float64, 1000)
	for i := range trades {
		trades[i] = 0.01 * math.Sin(float64(i)*1.3)
	}
	for _, m := range Methods {
		b.Run(string(m), func(b *testing.B) {
			for b.Loop() {
				if _, err := Simulate(trades, MonteCarloConfig{Method: m, Paths: 10000, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
		})
	}
}

// TestMaxTrials turns MinBTL round: the published 45 trials fit in five
// years at a Sharpe ratio of 1 (MinBTL(45, 1) = 4.998), 46 do not.
func TestMaxTrials(t *testing.T) {
	if got := MaxTrials(5, 1, 1<<20); got != 45 {
		t.Errorf("MaxTrials(5 years, 1) = %d, want 45", got)
	}
	if got := MaxTrials(5, -0.2, 1<<20); got != 0 {
		t.Errorf("MaxTrials for a losing Sharpe ratio = %d, want 0", got)
	}
	if got := MaxTrials(1000, 3, 5000); got != 5000 {
		t.Errorf("MaxTrials does not stop at its limit: %d", got)
	}
}
