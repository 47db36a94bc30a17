package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/research"
)

// preview runs the checks a deployment passes before it trades, over its
// warm-up bars: the start-point check (a warm-up shorter than the bars the
// strategy's values need is refused, naming the figure and the fix).
// Without Research, or without warm-up bars in the store, there is nothing
// to run them over and the preview is empty.
func (r *Runner) preview(ctx context.Context, d *Deployment, bars strategy.Bars) (*Preview, error) {
	pv := &Preview{}
	if r.cfg.Research == nil || bars.Len() == 0 {
		return pv, nil
	}
	ref := research.StrategyRef{Source: d.Source, Label: d.Strategy}
	from, to := unixRFC(bars.Time[0]), unixRFC(bars.Time[bars.Len()-1])
	warm := d.Warmup
	sp, err := r.cfg.Research.StartPoint(ctx, research.StartPointRequest{StrategyRef: ref, Series: d.Series, Params: d.Params, From: from, To: to, Warmup: &warm})
	if err != nil {
		return nil, errorf(kindOf(err), "the start-point check of strategy %s over its warm-up (%s to %s) could not run: %v", d.Strategy, from, to, err)
	}
	pv.StartPoint = &sp
	if !sp.Passed {
		fix := sp.Needed
		if fix <= warm { // some series never converged: Needed is a lower bound
			fix = 2 * warm
		}
		return nil, errorf(KindBadRequest, "warm-up %d bars is shorter than the %d bars strategy %s's values need before they stop depending on where the history began (the start-point check over %d bars: %s): give --warmup %d or more (and that much history: wicket data fetch %s), or use windowed indicators (e.g. ta.sma) instead of seeded ones (ta.ema)",
			warm, sp.Needed, d.Strategy, sp.Bars, sp.Verdict, fix, d.Series)
	}
	pv.Backtest, pv.Lookahead = r.backtest(ctx, d, ref)
	return pv, nil
}

// PreviewYear is how far back the preview's backtest reaches.
const PreviewYear = 365 * 24 * time.Hour

// backtest runs the preview's backtest over the last year of the series
// with the deployment's allowance and sums it up; a run that fails is
// reported in the summary, not refused (the start-point check and
// validation decide what may deploy).
func (r *Runner) backtest(ctx context.Context, d *Deployment, ref research.StrategyRef) (*BacktestSummary, string) {
	vc, _ := r.cfg.Project.Venue(d.Venue)
	fee, slip := vc.FeeBps, vc.SlippageBps
	allow := d.Allowance
	from := r.cfg.Now().UTC().Add(-PreviewYear).Format(time.DateOnly)
	sum := &BacktestSummary{From: from}
	res, err := r.cfg.Research.Backtest(ctx, research.BacktestRequest{StrategyRef: ref, Series: d.Series, Params: d.Params, From: from,
		Costs: research.Costs{Capital: d.Capital.String(), FeeBps: &fee, SlippageBps: &slip}, Fill: "next_open", TradesLimit: 1, Allowance: &allow})
	if err != nil {
		sum.Error = "the backtest could not run: " + err.Error()
		return sum, ""
	}
	var out struct {
		Metrics struct {
			TotalReturn *float64 `json:"total_return"`
			Sharpe      *float64 `json:"sharpe"`
			MaxDrawdown *float64 `json:"max_drawdown"`
			Trades      int      `json:"trades"`
		} `json:"metrics"`
		Lookahead string            `json:"lookahead_check"`
		Breaker   *backtest.Breaker `json:"breaker"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		sum.Error = "the backtest's result could not be read: " + err.Error()
		return sum, ""
	}
	m := out.Metrics
	sum.TotalReturn, sum.Sharpe, sum.MaxDrawdown, sum.Trades, sum.Breaker = m.TotalReturn, m.Sharpe, m.MaxDrawdown, m.Trades, out.Breaker
	return sum, out.Lookahead
}

// kindOf is the error kind of a research failure: the request's fault
// (bad input, no such series) or the node's.
func kindOf(err error) Kind {
	var re *research.Error
	if errors.As(err, &re) && (re.Kind == research.KindInvalid || re.Kind == research.KindNotFound) {
		return KindBadRequest
	}
	return KindInternal
}

func unixRFC(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }
