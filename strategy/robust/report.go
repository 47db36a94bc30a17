package robust

import (
	"encoding/json"
	"math"
	"strconv"
)

// Report is a run's robustness figures, as a backtest result carries them.
type Report struct {
	// PSR is the probabilistic Sharpe ratio against a true Sharpe ratio
	// of zero, from the run's per-bar returns.
	PSR float64
	// Years is the run's length; MaxTrials the most independent trials
	// after which its Sharpe ratio is still beyond luck at that length
	// (MinBTL turned round); MinBTLYears is MinBTL for Trials, when the
	// caller knows how many were run.
	Years       float64
	MaxTrials   int
	Trials      int
	MinBTLYears float64
	MonteCarlo  []MonteCarlo
	// Benchmark names the series the run was compared with; Relative is
	// the comparison (nil without a benchmark).
	Benchmark string
	Relative  *Relative
	Notes     []string
}

// MaxTrials is the most trials whose MinBTL for an annualised sharpe fits
// in years (0 when not even one trial's luck is ruled out, that is for a
// Sharpe ratio at or below zero). It stops counting at limit.
func MaxTrials(years, sharpe float64, limit int) int {
	if !(sharpe > 0) || !(years > 0) {
		return 0
	}
	if MinBTL(2, sharpe) > years {
		return 1
	}
	lo, hi := 2, 2
	for hi < limit && MinBTL(hi, sharpe) <= years {
		lo, hi = hi, min(hi*2, limit)
	}
	if MinBTL(hi, sharpe) <= years {
		return hi
	}
	for hi-lo > 1 { // MinBTL(lo) <= years < MinBTL(hi)
		mid := (lo + hi) / 2
		if MinBTL(mid, sharpe) <= years {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// num is a figure for JSON: 6 significant digits, null when undefined.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return &r
}

type quantilesJSON struct {
	P5  *float64 `json:"p5"`
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
}

func (q Quantiles) json() quantilesJSON { return quantilesJSON{num(q.P5), num(q.P50), num(q.P95)} }

// MarshalJSON writes the figures rounded, undefined ones as null.
func (m MonteCarlo) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Method            Method        `json:"method"`
		Paths             int           `json:"paths"`
		Seed              uint64        `json:"seed"`
		Steps             int           `json:"steps"`
		BlockLength       *float64      `json:"block_length,omitempty"`
		Ruin              float64       `json:"ruin_equity"`
		FinalEquity       quantilesJSON `json:"final_equity"`
		MaxDrawdown       quantilesJSON `json:"max_drawdown"`
		ProbabilityOfRuin float64       `json:"probability_of_ruin"`
	}{m.Method, m.Paths, m.Seed, m.Steps, func() *float64 {
		if m.Method != Block {
			return nil
		}
		return num(m.BlockLength)
	}(), m.Ruin, m.FinalEquity.json(), m.MaxDrawdown.json(), m.ProbabilityOfRuin})
}

// MarshalJSON writes the comparison rounded, undefined figures as null.
func (r Relative) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Alpha            *float64 `json:"alpha"`
		Beta             *float64 `json:"beta"`
		Correlation      *float64 `json:"correlation"`
		TrackingError    *float64 `json:"tracking_error"`
		InformationRatio *float64 `json:"information_ratio"`
		Periods          int      `json:"periods"`
	}{num(r.Alpha), num(r.Beta), num(r.Correlation), num(r.TrackingError), num(r.InformationRatio), r.Periods})
}

// MarshalJSON writes the report with its figures rounded.
func (r Report) MarshalJSON() ([]byte, error) {
	var minBTL *float64
	if r.Trials > 0 {
		minBTL = num(r.MinBTLYears)
	}
	return json.Marshal(struct {
		PSR         *float64     `json:"psr"`
		Years       *float64     `json:"years"`
		MaxTrials   int          `json:"max_trials"`
		Trials      int          `json:"trials,omitempty"`
		MinBTLYears *float64     `json:"min_backtest_years,omitempty"`
		MonteCarlo  []MonteCarlo `json:"monte_carlo"`
		Benchmark   string       `json:"benchmark,omitempty"`
		Relative    *Relative    `json:"relative,omitempty"`
		Notes       []string     `json:"notes,omitempty"`
	}{num(r.PSR), num(r.Years), r.MaxTrials, r.Trials, minBTL, r.MonteCarlo, r.Benchmark, r.Relative, r.Notes})
}
