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
	"wicket/strategy/ledger"
	"wicket/strategy/research"
	"wicket/strategy/scriptapi"
)

// preview runs the checks a deployment passes before it trades, over its
// warm-up bars: the start-point check (a warm-up shorter than the bars the
// strategy's values need is refused, naming the figure and the fix).
// Without Research, or without warm-up bars in the store, there is nothing
// to run them over and the preview is empty.
func (r *Runner) preview(ctx context.Context, d *Deployment, bars strategy.Bars) (*Preview, error) {
	pv := &Preview{Plan: r.planStatus(ctx, d)}
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

// Plans reads the research plan binding a strategy's text: the latest
// plan sealed for its content digest (ledger.SourceDigest), with its
// verdict, or nil (research.PlanOf over the project's research ledger).
type Plans interface {
	PlanOf(ctx context.Context, digest string) (*research.PlanInfo, error)
}

// Plan statuses (PlanStatus.Status).
const (
	PlanNone    = "none"    // no plan binds the strategy's text
	PlanOpen    = "open"    // sealed, not judged yet
	PlanPassed  = "passed"  // judged on its holdout: every criterion passed
	PlanFailed  = "failed"  // judged: some criterion failed
	PlanUnknown = "unknown" // the research ledger could not be read
)

// PlanStatus is the research plan of a deployment's strategy as its
// preview shows it: the plan, its criteria and budget, its verdict's
// judgements, and what it means for arming.
type PlanStatus struct {
	Status     string               `json:"status"`
	Name       string               `json:"name,omitempty"`
	Hypothesis string               `json:"hypothesis,omitempty"`
	Series     string               `json:"series,omitempty"`
	Criteria   []string             `json:"criteria,omitempty"`
	Trials     int                  `json:"trials,omitempty"`
	MaxTrials  int                  `json:"max_trials,omitempty"`
	Judgements []research.Judgement `json:"judgements,omitempty"`
	Note       string               `json:"note"`
}

// planTimeout bounds a read of the research ledger.
const planTimeout = 10 * time.Second

// planStatus reads the plan of d's strategy text; nil when the node reads
// no research ledger.
func (r *Runner) planStatus(ctx context.Context, d *Deployment) *PlanStatus {
	if r.cfg.Plans == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, planTimeout)
	defer cancel()
	st := &PlanStatus{Status: PlanNone}
	p, err := r.cfg.Plans.PlanOf(ctx, ledger.SourceDigest(d.Source))
	switch {
	case err != nil:
		st.Status = PlanUnknown
		st.Note = fmt.Sprintf("the research ledger could not be read (%v)", err)
	case p == nil:
		st.Note = fmt.Sprintf("no research plan binds strategy %s's text: seal one before the first trial (wicket research plan) and pass its verdict (wicket research verdict)", d.Strategy)
	default:
		st.Name, st.Hypothesis, st.Series, st.Criteria, st.Trials, st.MaxTrials = p.Name, p.Hypothesis, p.Series, p.Criteria, p.Trials, p.MaxTrials
		switch v := p.Verdict; {
		case v == nil:
			st.Status = PlanOpen
			st.Note = fmt.Sprintf("plan %s is not judged yet (%d of %d trials): its verdict (wicket research verdict %s) runs the holdout once", p.Name, p.Trials, p.MaxTrials, p.Name)
		case v.Passed:
			st.Status, st.Judgements = PlanPassed, v.Judgements
			st.Note = fmt.Sprintf("plan %s passed every criterion on its holdout (%s)", p.Name, judged(v.Judgements))
		default:
			st.Status, st.Judgements = PlanFailed, v.Judgements
			st.Note = fmt.Sprintf("plan %s failed on its holdout (%s)", p.Name, judged(v.Judgements))
		}
	}
	if st.Status != PlanPassed && d.Mode == ModeAuto {
		if vc, ok := r.cfg.Project.Venue(d.Venue); ok && vc.Real() {
			st.Note += fmt.Sprintf("; auto mode on real venue %s is armed only under a passed plan, or with the operator's signed override (wicket node arm DEPLOYMENT --without-plan)", vc.Name)
		}
	}
	return st
}

// judged writes judgements as "oos_sharpe>=1 passed, dsr>=0.95 failed".
func judged(js []research.Judgement) string {
	parts := make([]string, len(js))
	for i, j := range js {
		word := "failed"
		if j.Passed {
			word = "passed"
		}
		parts[i] = j.Criterion + " " + word
	}
	return strings.Join(parts, ", ")
}

// planToArm decides whether act may arm d: an auto deployment on a real
// venue needs a passed plan for ActArm; ActArmWithoutPlan is the
// operator's override, returned as the note the deployment then carries.
// Without Plans nothing is asked.
func (r *Runner) planToArm(d *Deployment, act string) (string, error) {
	vc, ok := r.cfg.Project.Venue(d.Venue)
	needs := r.cfg.Plans != nil && d.Mode == ModeAuto && ok && vc.Real()
	var st *PlanStatus
	if needs {
		st = r.planStatus(context.Background(), d)
	}
	switch {
	case act == ActArm && (!needs || st.Status == PlanPassed):
		return "", nil
	case act == ActArm:
		return "", errorf(KindForbidden, "deployment %s trades strategy %s in auto mode on real venue %s without a passed research plan (plan: %s; %s): pass a plan's verdict, or the operator signs the override: wicket node arm %s --without-plan",
			d.ID, d.Strategy, d.Venue, st.Status, st.Note, d.ID)
	case !needs:
		return "", errorf(KindBadRequest, "deployment %s needs no research plan to arm (only an auto deployment on a real venue does): arm it with wicket node arm %s", d.ID, d.ID)
	case st.Status == PlanPassed:
		return "", errorf(KindBadRequest, "deployment %s's plan %s passed: arm it without the override (wicket node arm %s)", d.ID, st.Name, d.ID)
	}
	return fmt.Sprintf("armed at %s by the operator's signed override without a passed research plan (plan: %s)", r.cfg.Now().UTC().Format(time.RFC3339), st.Status), nil
}
