package research

import (
	"math"
	"slices"
	"time"
	"wicket/strategy/backtest"
	"wicket/strategy/worker"
)

// Pooled are a series set's figures, defined in docs/strategies.md
// ("Series sets and pooled metrics"): an equal-weight portfolio of one sleeve per series, the
// capital split equally and never rebalanced.
type Pooled struct {
	Series      int      `json:"series"`
	TotalReturn *float64 `json:"total_return"` // mean of the sleeves' total returns
	CAGR        *float64 `json:"cagr"`         // of the pooled total return over the union of the ranges
	Sharpe      *float64 `json:"sharpe"`       // mean of the sleeves' (defined) Sharpe ratios
	Sortino     *float64 `json:"sortino"`      // mean of the sleeves' (defined) Sortino ratios
	MaxDrawdown *float64 `json:"max_drawdown"` // the worst sleeve's
	Calmar      *float64 `json:"calmar"`       // pooled CAGR / pooled max drawdown
	Trades      int      `json:"trades"`       // all sleeves' closed trades
	WinRate     *float64 `json:"win_rate"`     // winners / trades over all sleeves
	Exposure    *float64 `json:"exposure"`     // mean of the sleeves' exposure
	FinalEquity string   `json:"final_equity"` // capital × (1 + total_return)
	Start       string   `json:"start"`
	End         string   `json:"end"`
}

// sleeve is one series' figures at full precision, the input of pool.
type sleeve struct {
	totalReturn, sharpe, sortino, maxDD, winRate, exposure float64
	trades                                                 int
	start, end                                             time.Time
}

func sleeveOf(s worker.Scores, trades int, start, end time.Time) sleeve {
	return sleeve{
		totalReturn: float64(s.TotalReturn), sharpe: float64(s.Sharpe), sortino: float64(s.Sortino),
		maxDD: float64(s.MaxDrawdown), winRate: float64(s.WinRate), exposure: float64(s.Exposure),
		trades: trades, start: start, end: end,
	}
}

// pooledScores are the pooled figures as rank scores.
type pooledScores struct {
	totalReturn, cagr, sharpe, sortino, maxDD, calmar, winRate, exposure float64
	trades                                                               int
	start, end                                                           time.Time
}

// pool combines sleeves; barLength extends the union's span by its last bar.
func pool(ss []sleeve, barLength time.Duration) pooledScores {
	mean := func(get func(sleeve) float64) float64 {
		var sum float64
		n := 0
		for _, s := range ss {
			if v := get(s); !math.IsNaN(v) {
				sum += v
				n++
			}
		}
		if n == 0 {
			return math.NaN()
		}
		return sum / float64(n)
	}
	p := pooledScores{
		totalReturn: mean(func(s sleeve) float64 { return s.totalReturn }),
		sharpe:      mean(func(s sleeve) float64 { return s.sharpe }),
		sortino:     mean(func(s sleeve) float64 { return s.sortino }),
		exposure:    mean(func(s sleeve) float64 { return s.exposure }),
		maxDD:       math.NaN(), winRate: math.NaN(),
	}
	winners := 0.0
	for i, s := range ss {
		if i == 0 || s.start.Before(p.start) {
			p.start = s.start
		}
		if i == 0 || s.end.After(p.end) {
			p.end = s.end
		}
		if !math.IsNaN(s.maxDD) && (math.IsNaN(p.maxDD) || s.maxDD > p.maxDD) {
			p.maxDD = s.maxDD
		}
		p.trades += s.trades
		if s.trades > 0 && !math.IsNaN(s.winRate) {
			winners += math.Round(s.winRate * float64(s.trades))
		}
	}
	if p.trades > 0 {
		p.winRate = winners / float64(p.trades)
	}
	years := (p.end.Sub(p.start) + barLength).Hours() / 24 / 365.25
	switch {
	case 1+p.totalReturn <= 0:
		p.cagr = -1
	case years > 0:
		p.cagr = math.Pow(1+p.totalReturn, 1/years) - 1
	default:
		p.cagr = math.NaN()
	}
	p.calmar = math.NaN()
	if p.maxDD > 0 {
		p.calmar = p.cagr / p.maxDD
	}
	return p
}

// score is the pooled rank metric (profit_factor has no pooled form).
func (p pooledScores) score(metric string) float64 {
	switch metric {
	case RankCAGR:
		return p.cagr
	case RankCalmar:
		return p.calmar
	case RankTotalReturn:
		return p.totalReturn
	case RankMaxDrawdown:
		return p.maxDD
	}
	return p.sharpe
}

func (p pooledScores) report(n int, capital float64) Pooled {
	return Pooled{
		Series: n, TotalReturn: backtest.Ratio(p.totalReturn), CAGR: backtest.Ratio(p.cagr),
		Sharpe: backtest.Ratio(p.sharpe), Sortino: backtest.Ratio(p.sortino), MaxDrawdown: backtest.Ratio(p.maxDD),
		Calmar: backtest.Ratio(p.calmar), Trades: p.trades, WinRate: backtest.Ratio(p.winRate), Exposure: backtest.Ratio(p.exposure),
		FinalEquity: backtest.Money(capital * (1 + p.totalReturn)),
		Start:       p.start.UTC().Format(time.RFC3339), End: p.end.UTC().Format(time.RFC3339),
	}
}

// noPooled refuses a rank metric that has no pooled form.
func noPooled(rankBy string) error {
	if rankBy == RankProfitFactor {
		return errorf(KindInvalid, "rank_by profit_factor has no pooled form over a series set; rank a series set by sharpe, cagr, calmar, total_return or max_drawdown (each series' profit factor is in its metrics)")
	}
	return nil
}

// pooledTrial is a combination of a series-set sweep and its pooled
// figures.
type pooledTrial struct {
	combo int
	p     pooledScores
}

// rankPooled pools each combination's figures over the series set and
// ranks them best first. A combination is ranked when it ran on every
// series without failing; res counts it evaluated, or its failures.
func rankPooled(plans []*plan, trials [][]*worker.Trial, names []string, res *SweepResult) []pooledTrial {
	p0 := plans[0]
	bar := p0.gran.Duration()
	var ranked []pooledTrial
	for i := range p0.count {
		ss := make([]sleeve, 0, len(names))
		complete := true
		for s := range names {
			t := trials[s][i]
			switch {
			case t == nil:
				complete = false
			case t.Error != "":
				complete = false
				res.Failed++
				if len(res.Errors) < MaxTrialErrors {
					res.Errors = append(res.Errors, TrialError{Params: t.Values, Message: names[s] + ": " + t.Error})
				}
			default:
				pl := plans[s].bars
				ss = append(ss, sleeveOf(t.Scores, t.Trades, time.Unix(pl.Time[0], 0), time.Unix(pl.Time[pl.Len()-1], 0)))
			}
		}
		if complete {
			res.Evaluated++
			ranked = append(ranked, pooledTrial{i, pool(ss, bar)})
		}
	}
	lower := p0.rankBy == RankMaxDrawdown
	slices.SortStableFunc(ranked, func(a, b pooledTrial) int {
		x, y := a.p.score(p0.rankBy), b.p.score(p0.rankBy)
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xn && yn, x == y:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		case lower == (x < y):
			return -1
		}
		return 1
	})
	return ranked
}
