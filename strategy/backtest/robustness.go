package backtest

import (
	"fmt"
	"math"

	"wicket/strategy"
	"wicket/strategy/robust"
)

// Robustness asks a backtest for its robustness figures (strategy/robust):
// the probabilistic Sharpe ratio, the trials its length supports, Monte
// Carlo resampling of its trades and bars, and, with a benchmark, alpha,
// beta and the information ratio.
type Robustness struct {
	// Benchmark is a series of the same granularity to compare with
	// (e.g. SPY@1d); empty for none.
	Benchmark string `json:"benchmark,omitempty"`
	// Paths per Monte Carlo method (default 1000, 100 to 100,000).
	Paths int `json:"paths,omitempty"`
	// Seed of the Monte Carlo draws (default 1): the same run and seed
	// give the same figures.
	Seed uint64 `json:"seed,omitempty"`
	// Trials, when known (the ledger's N), also gives the minimum
	// backtest length for that many trials.
	Trials int `json:"trials,omitempty"`
}

// Robustness bounds.
const (
	DefaultPaths = 1000
	MaxPaths     = 100_000
)

// Check says what is wrong with the options.
func (o Robustness) Check() error {
	if o.Paths != 0 && (o.Paths < 100 || o.Paths > MaxPaths) {
		return invalidf("robustness paths %d must be between 100 and %d (default %d)", o.Paths, MaxPaths, DefaultPaths)
	}
	if o.Trials < 0 {
		return invalidf("robustness trials %d must not be negative", o.Trials)
	}
	return nil
}

// Assess computes r's robustness figures; bench holds the benchmark's bars
// over the same range when o names one.
func Assess(r *Result, o Robustness, bench *strategy.Bars) (*robust.Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	paths := o.Paths
	if paths == 0 {
		paths = DefaultPaths
	}
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	m := r.Metrics
	rep := &robust.Report{Trials: o.Trials, Benchmark: o.Benchmark}
	mean, sd, skew, kurt := shape(r.Returns)
	rep.PSR = robust.PSR(mean/sd, 0, len(r.Returns), skew, kurt)
	rep.Years = m.End.Sub(m.Start).Hours() / 24 / 365.25
	rep.MaxTrials = robust.MaxTrials(rep.Years, m.Sharpe, 1_000_000)
	if o.Trials > 0 {
		rep.MinBTLYears = robust.MinBTL(o.Trials, m.Sharpe)
	}

	trades := tradeReturns(r)
	for _, method := range robust.Methods {
		in := trades
		if method == robust.Block {
			in = r.Returns
		}
		mc, err := robust.Simulate(in, robust.MonteCarloConfig{Method: method, Paths: paths, Seed: seed})
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("monte carlo %s: %v", method, err))
			continue
		}
		rep.MonteCarlo = append(rep.MonteCarlo, mc)
	}
	if bench != nil {
		sr, br := aligned(r, *bench)
		rel, err := robust.Against(sr, br, m.PeriodsPerYear)
		if err != nil {
			return nil, invalidf("benchmark %s: %v (it needs bars at the run's times)", o.Benchmark, err)
		}
		rep.Relative = &rel
	}
	return rep, nil
}

// shape is the mean, sample standard deviation, skewness and (non-excess)
// kurtosis of per-bar returns.
func shape(x []float64) (mean, sd, skew, kurt float64) {
	mo := MomentsOf(x)
	if mo.T < 2 || mo.M2 == 0 {
		return math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	n := float64(mo.T)
	m2 := mo.M2 / n
	return mo.Mean, math.Sqrt(mo.M2 / (n - 1)), mo.M3 / n / math.Pow(m2, 1.5), mo.M4 / n / (m2 * m2)
}

// tradeReturns are the closed trades' PnL as fractions of the equity
// before each one's entry, so they compound like the run.
func tradeReturns(r *Result) []float64 {
	out := make([]float64, 0, len(r.AllTrades))
	for _, t := range r.AllTrades {
		before := r.Settings.Capital
		if t.EntryBar > 0 && t.EntryBar-1 < len(r.Curve.Equity) {
			before = r.Curve.Equity[t.EntryBar-1]
		}
		if before > 0 {
			out = append(out, max(t.PnL/before, -1))
		}
	}
	return out
}

// aligned pairs the run's per-bar returns with the benchmark's over the
// same two bar times, wherever both series have both bars.
func aligned(r *Result, bench strategy.Bars) (sr, br []float64) {
	at := make(map[int64]float64, bench.Len())
	for i, t := range bench.Time {
		at[t] = bench.Close[i]
	}
	times := r.Curve.Time
	for i := 1; i < len(times) && i < len(r.Returns); i++ {
		p0, ok0 := at[times[i-1]]
		p1, ok1 := at[times[i]]
		if ok0 && ok1 && p0 > 0 {
			sr = append(sr, r.Returns[i])
			br = append(br, p1/p0-1)
		}
	}
	return sr, br
}
