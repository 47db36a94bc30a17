package robust

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Method is how a Monte Carlo path is drawn from a run.
type Method string

// Methods.
const (
	// Reshuffle permutes the trades' returns: the same trades in another
	// order (the final equity is the run's; the path and its drawdowns
	// change).
	Reshuffle Method = "reshuffle"
	// Bootstrap draws as many trades as the run had, with replacement.
	Bootstrap Method = "bootstrap"
	// Block is the stationary block bootstrap of Politis and Romano (1994)
	// over the per-bar returns: blocks of consecutive bars of geometric
	// length (mean BlockLength), wrapping at the end, so the returns'
	// serial dependence survives.
	Block Method = "block"
)

// Methods lists the methods, for flags and schemas.
var Methods = []Method{Reshuffle, Bootstrap, Block}

// MonteCarloConfig says how to resample.
type MonteCarloConfig struct {
	Method Method
	// Paths is how many paths to draw (at least 100).
	Paths int
	// Seed makes the draw repeatable: the same inputs and seed give the
	// same figures.
	Seed uint64
	// BlockLength is Block's mean block length in bars (0: the cube root
	// of the number of returns, at least 1).
	BlockLength float64
	// Ruin is the equity, as a fraction of the start, at or below which a
	// path is ruined (0: 0.5, half the capital lost).
	Ruin float64
}

// Quantiles are a figure's 5th, 50th and 95th percentiles over the paths.
type Quantiles struct {
	P5, P50, P95 float64
}

// MonteCarlo is what the paths say. Equity is a multiple of the starting
// equity (1.2 is a 20 % gain); drawdowns are fractions (0.3 is 30 %).
type MonteCarlo struct {
	Method      Method
	Paths       int
	Seed        uint64
	Steps       int     // returns per path (trades, or bars for Block)
	BlockLength float64 // Block only
	Ruin        float64 // the ruin level used
	FinalEquity Quantiles
	MaxDrawdown Quantiles
	// ProbabilityOfRuin is the share of paths whose equity touched Ruin.
	ProbabilityOfRuin float64
}

// Simulate resamples returns (each a trade's or a bar's fractional return,
// compounded) by cfg. Trade methods take the trades' returns, Block the
// per-bar returns.
func Simulate(returns []float64, cfg MonteCarloConfig) (MonteCarlo, error) {
	if len(returns) < 2 {
		return MonteCarlo{}, ErrTooShort
	}
	if cfg.Paths < 100 || cfg.Paths > 1_000_000 {
		return MonteCarlo{}, fmt.Errorf("paths %d must be between 100 and 1,000,000", cfg.Paths)
	}
	for _, r := range returns {
		if !(r >= -1) || math.IsInf(r, 0) {
			return MonteCarlo{}, fmt.Errorf("return %v is not a finite return of at least -1 (-100 %%)", r)
		}
	}
	ruin := cfg.Ruin
	if ruin == 0 {
		ruin = 0.5
	}
	if !(ruin > 0 && ruin < 1) {
		return MonteCarlo{}, fmt.Errorf("ruin %v must be a fraction of the starting equity above 0 and below 1", cfg.Ruin)
	}
	n := len(returns)
	mean := cfg.BlockLength
	switch cfg.Method {
	case Reshuffle, Bootstrap:
	case Block:
		if mean == 0 {
			mean = max(1, math.Cbrt(float64(n)))
		}
		if !(mean >= 1 && mean <= float64(n)) {
			return MonteCarlo{}, fmt.Errorf("block length %v must be between 1 and the %d returns", cfg.BlockLength, n)
		}
	default:
		return MonteCarlo{}, fmt.Errorf("unknown method %q: use reshuffle, bootstrap or block", cfg.Method)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x77696b6574)) // "wicket"
	finals := make([]float64, cfg.Paths)
	dds := make([]float64, cfg.Paths)
	ruined := 0
	path := make([]float64, n)
	for p := range cfg.Paths {
		switch cfg.Method {
		case Reshuffle:
			copy(path, returns)
			rng.Shuffle(n, func(i, j int) { path[i], path[j] = path[j], path[i] })
		case Bootstrap:
			for i := range path {
				path[i] = returns[rng.IntN(n)]
			}
		case Block:
			// A new block starts with probability 1/mean at each step.
			at := rng.IntN(n)
			for i := range path {
				if i > 0 && rng.Float64() < 1/mean {
					at = rng.IntN(n)
				}
				path[i] = returns[at]
				at = (at + 1) % n
			}
		}
		eq, peak, dd, broke := 1.0, 1.0, 0.0, false
		for _, r := range path {
			eq *= 1 + r
			peak = max(peak, eq)
			dd = max(dd, 1-eq/peak)
			broke = broke || eq <= ruin
		}
		finals[p], dds[p] = eq, dd
		if broke {
			ruined++
		}
	}
	mc := MonteCarlo{Method: cfg.Method, Paths: cfg.Paths, Seed: cfg.Seed, Steps: n, Ruin: ruin,
		FinalEquity: quantiles(finals), MaxDrawdown: quantiles(dds),
		ProbabilityOfRuin: float64(ruined) / float64(cfg.Paths)}
	if cfg.Method == Block {
		mc.BlockLength = mean
	}
	return mc, nil
}

// quantiles sorts x and reads its percentiles by the nearest rank.
func quantiles(x []float64) Quantiles {
	slices.Sort(x)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(x)))) - 1
		return x[min(max(i, 0), len(x)-1)]
	}
	return Quantiles{at(0.05), at(0.5), at(0.95)}
}

// ErrNoMethod is returned by ParseMethod for an unknown name.
var ErrNoMethod = errors.New("unknown Monte Carlo method: use reshuffle, bootstrap or block")

// ParseMethod reads a method's name.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	return "", ErrNoMethod
}
