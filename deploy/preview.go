package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/research"
	"wicket/strategy/scriptapi"
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
		return nil, errorf(KindBadRequest, "%s", startPointRefusal(d, sp, warm))
	}
	var lookErr error
	pv.Backtest, pv.Lookahead, lookErr = r.backtest(ctx, d, ref)
	if lookErr != nil {
		return nil, lookErr
	}
	return pv, nil
}

// startPointRefusal is the refusal of a warm-up the start-point check
// failed. When every series converged within the bars checked, Needed is
// the warm-up to give; when some did not (Needed is then only a lower
// bound, and may be below the warm-up judged), no warm-up up to the bars
// checked is enough, and the message says that instead of calling the
// warm-up shorter than a smaller figure.
func startPointRefusal(d *Deployment, sp scriptapi.StartPoint, warm int) string {
	fix := "or use windowed indicators (e.g. ta.sma) instead of seeded ones (ta.ema)"
	var never []string // values whose difference does not shrink: no warm-up is enough
	for _, se := range sp.Series {
		if !se.Converged && !se.Undecided {
			never = append(never, se.Name)
		}
	}
	if len(never) > 0 {
		return fmt.Sprintf("strategy %s cannot be deployed on any warm-up: %s never stops depending on where the history began (the start-point check over %d bars: %s); use windowed indicators (e.g. ta.sma) or reset the cumulative value, then deploy again",
			d.Strategy, strings.Join(never, ", "), sp.Bars, sp.Verdict)
	}
	if sp.Needed > warm {
		return fmt.Sprintf("warm-up %d bars is shorter than the %d bars strategy %s's values need before they stop depending on where the history began (the start-point check over %d bars: %s): give --warmup %d or more (and that much history: wicket data fetch %s), %s",
			warm, sp.Needed, d.Strategy, sp.Bars, sp.Verdict, sp.Needed, d.Series, fix)
	}
	var open []string
	for _, se := range sp.Series {
		if !se.Converged {
			open = append(open, se.Name)
		}
	}
	if sp.Outputs != nil && !sp.Outputs.Converged {
		open = append(open, sp.Outputs.Name)
	}
	which := "some of its values"
	if len(open) > 0 {
		which = strings.Join(open, ", ")
	}
	return fmt.Sprintf("the start-point check of strategy %s ran over the %d-bar warm-up and %s still depended on where the history began at its last bar, so the bars needed are more than the check could see: give a longer warm-up, --warmup %d or more, with that much history (wicket data fetch %s), and deploy again, %s",
		d.Strategy, sp.Bars, which, 2*warm, d.Series, fix)
}

// PreviewYear is how far back the preview's backtest reaches.
const PreviewYear = 365 * 24 * time.Hour

// backtest runs the preview's backtest over the last year of the series
// with the deployment's allowance and sums it up, its range the bars the
// store really holds. A run that fails is reported in the summary, not
// refused (the start-point check and validation decide what may deploy),
// except a failed lookahead proof: a strategy whose decisions read later
// bars cannot trade as it backtests, so it is refused (in every mode),
// naming the bar and the cut that differ.
func (r *Runner) backtest(ctx context.Context, d *Deployment, ref research.StrategyRef) (*BacktestSummary, string, error) {
	vc, _ := r.cfg.Project.Venue(d.Venue)
	fee, slip := vc.FeeBps, vc.SlippageBps
	allow := d.Allowance
	from := r.cfg.Now().UTC().Add(-PreviewYear).Format(time.DateOnly)
	sum := &BacktestSummary{From: from}
	req := research.BacktestRequest{StrategyRef: ref, Series: d.Series, Params: d.Params, From: from,
		Costs: research.Costs{Capital: d.Capital.String(), FeeBps: &fee, SlippageBps: &slip}, Fill: "next_open", TradesLimit: 1, Allowance: &allow}
	if len(d.Legs) > 0 { // a portfolio: the backtest over the universe it declares (portfolio.go), which takes no allowance
		req.Series, req.Allowance = "", nil
	}
	res, err := r.cfg.Research.Backtest(ctx, req)
	if err != nil {
		var re *research.Error
		if errors.As(err, &re) && re.Problem != nil && re.Problem.Kind == scriptapi.KindLookahead {
			return nil, "", errorf(KindBadRequest, "strategy %s fails the lookahead proof over the last year of %s, so it cannot trade as it backtests: %s. Fix the strategy (wicket strategy validate %s names the line) and deploy again",
				d.Strategy, d.Series, re.Problem.Message, d.Strategy)
		}
		sum.Error = "the backtest could not run: " + err.Error()
		return sum, "", nil
	}
	var out struct {
		Metrics struct {
			TotalReturn *float64 `json:"total_return"`
			Sharpe      *float64 `json:"sharpe"`
			MaxDrawdown *float64 `json:"max_drawdown"`
			Trades      int      `json:"trades"`
			Start       string   `json:"start"`
			End         string   `json:"end"`
		} `json:"metrics"`
		Lookahead string            `json:"lookahead_check"`
		Breaker   *backtest.Breaker `json:"breaker"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		sum.Error = "the backtest's result could not be read: " + err.Error()
		return sum, "", nil
	}
	m := out.Metrics
	if m.Start != "" {
		sum.From, sum.To = m.Start, m.End
	}
	sum.TotalReturn, sum.Sharpe, sum.MaxDrawdown, sum.Trades, sum.Breaker = m.TotalReturn, m.Sharpe, m.MaxDrawdown, m.Trades, out.Breaker
	return sum, out.Lookahead, nil
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
