package research

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
)

// Judgement is one criterion judged.
type Judgement struct {
	Criterion string   `json:"criterion"`
	Value     *float64 `json:"value"` // null when undefined (an undefined value fails)
	Passed    bool     `json:"passed"`
}

// Verdict is a plan judged on its holdout.
type Verdict struct {
	Plan   string `json:"plan"`
	Passed bool   `json:"passed"`
	// Params are the knob values judged: the plan's trial with the
	// highest per-period Sharpe ratio (BestTrial, its ledger row).
	Params      map[string]any  `json:"params"`
	BestTrial   int64           `json:"best_trial"`
	Trials      int             `json:"trials"` // N the holdout's Sharpe ratio is deflated by
	HoldoutFrom string          `json:"holdout_from"`
	HoldoutTo   string          `json:"holdout_to,omitempty"`
	Metrics     json.RawMessage `json:"metrics"` // the holdout run's
	Deflated    *DeflatedSharpe `json:"deflated_sharpe"`
	PBO         *float64        `json:"pbo"`
	Judgements  []Judgement     `json:"judgements"`
	Seq         int64           `json:"seq,omitempty"` // the verdict's ledger row
	Time        string          `json:"time,omitempty"`
}

// VerdictRequest asks for a plan's verdict. The strategy is the text the
// plan's row keeps unless StrategyRef names it; either way its digest must
// be the plan's.
type VerdictRequest struct {
	Plan string `json:"plan"`
	StrategyRef
	Costs
}

// Verdict runs plan's holdout once, with the knob values of its trial
// with the highest per-period Sharpe ratio, judges every criterion and
// records the verdict; a plan judged before is refused. The holdout's
// Sharpe ratio is deflated by every trial of the plan (N its count, V the
// variance of their Sharpe ratios), and pbo is CSCV over the plan's
// largest run of trials with return blocks.
func (l *Local) Verdict(ctx context.Context, req VerdictRequest) (Verdict, error) {
	book, err := l.needPlanBook()
	if err != nil {
		return Verdict{}, err
	}
	p, err := book.Plan(ctx, req.Plan)
	if err != nil {
		return Verdict{}, planErr(err)
	}
	if p.Verdict != nil {
		return Verdict{}, errorf(KindInvalid, "plan %q was judged at row %d on %s, and a holdout is run once; seal a new plan (with a new holdout) to try again",
			req.Plan, p.Verdict.Seq, p.Verdict.Time)
	}
	ref := req.StrategyRef
	if ref.Name == "" && ref.Source == "" {
		var a planAudit
		if json.Unmarshal(p.Row.Audit, &a) == nil && a.Source != "" {
			ref = StrategyRef{Source: a.Source, Label: p.Row.Strategy + ".star"}
		} else {
			ref.Name = p.Row.Strategy
		}
	}
	_, source, err := l.resolve(ref)
	if err != nil {
		return Verdict{}, err
	}
	if ledger.SourceDigest(source) != p.Row.Digest {
		return Verdict{}, errorf(KindInvalid, "strategy %s's text is not the one plan %q was sealed with (digest %s…); restore that text, or pass it as source",
			p.Row.Strategy, req.Plan, p.Row.Digest[:12])
	}
	trials, err := book.PlanTrials(ctx, p)
	if err != nil {
		return Verdict{}, classify(err)
	}
	best := -1
	var srs []float64
	for i, t := range trials {
		if math.IsNaN(t.SharpePerPeriod) {
			continue
		}
		srs = append(srs, t.SharpePerPeriod)
		if best < 0 || t.SharpePerPeriod > trials[best].SharpePerPeriod {
			best = i
		}
	}
	if best < 0 {
		return Verdict{}, errorf(KindInvalid, "plan %q has %d trials and none with a Sharpe ratio to choose by: run a sweep under it (plan %q) first", req.Plan, len(trials), req.Plan)
	}
	var params map[string]any
	if err := json.Unmarshal(trials[best].Params, &params); err != nil || len(params) == 0 {
		return Verdict{}, errorf(KindInvalid, "plan %q's best trial (row %d) has no knob values to run on the holdout", req.Plan, trials[best].Seq)
	}
	grid := Grid{}
	for k, v := range params {
		grid[k] = GridSpec{Values: []any{v}}
	}
	// The holdout run: one combination, recorded only as the verdict
	// (not as a trial, and past the gate that keeps trials out of it).
	c := *l
	c.cfg.Recorder = nil
	costs, intrabar := req.Costs, ""
	if costsEmpty(costs) { // the costs the chosen trial ran under
		costs, intrabar = costsOfTrial(ReadLedgerCosts(trials[best].Costs))
	}
	res, err := c.Sweep(ctx, SweepRequest{StrategyRef: ref, Series: p.Row.Series, Grid: grid, From: p.Spec.HoldoutFrom, To: p.Spec.HoldoutTo,
		Costs: costs, Intrabar: intrabar, Top: 1}, nil)
	if err != nil {
		return Verdict{}, err
	}
	if len(res.Top) == 0 || res.Partial || res.DeflatedSharpe == nil {
		return Verdict{}, errorf(KindUnavailable, "the holdout run of plan %q did not finish (%s); nothing was recorded, so the verdict can be asked for again", req.Plan, res.PartialReason)
	}
	v := Verdict{Plan: req.Plan, Params: res.Top[0].Params, BestTrial: trials[best].Seq, Trials: len(trials),
		HoldoutFrom: p.Spec.HoldoutFrom, HoldoutTo: p.Spec.HoldoutTo, Metrics: res.Top[0].Metrics}
	w := res.DeflatedSharpe
	v.Deflated = &DeflatedSharpe{Sharpe: w.Sharpe, Skewness: w.Skewness, Kurtosis: w.Kurtosis, Returns: w.Returns, Trials: len(trials)}
	if w.Sharpe != nil && w.Skewness != nil && w.Kurtosis != nil {
		vr := variance(srs)
		dsr, sr0 := DeflatedSharpeRatio(*w.Sharpe, len(trials), vr, *w.Skewness, *w.Kurtosis, w.Returns)
		v.Deflated.DSR, v.Deflated.ExpectedMaxSharpe, v.Deflated.TrialsVariance = sig(dsr), sig(sr0), sig(vr)
	}
	v.Deflated.Note = fmt.Sprintf("the holdout's Sharpe ratio deflated by the plan's %d trials (Bailey and López de Prado, 2014)", len(trials))
	v.PBO = planPBO(trials)
	var m backtest.ReportedMetrics
	_ = json.Unmarshal(v.Metrics, &m)
	v.Passed = true
	for _, cr := range p.Spec.Criteria {
		val := metricValue(cr.Metric, m, v)
		j := Judgement{Criterion: cr.String(), Value: val, Passed: val != nil && compare(*val, cr.Op, cr.Value)}
		v.Passed = v.Passed && j.Passed
		v.Judgements = append(v.Judgements, j)
	}
	row := ledger.Row{Who: whoOf(ctx), Strategy: p.Row.Strategy, Digest: p.Row.Digest, Series: p.Row.Series,
		From: p.Spec.HoldoutFrom, To: p.Spec.HoldoutTo, Params: mustJSON(v.Params), Metrics: mustJSON(v), SharpePerPeriod: math.NaN()}
	if err := book.AppendVerdict(context.WithoutCancel(ctx), req.Plan, &row); err != nil {
		return Verdict{}, planErr(err)
	}
	v.Seq, v.Time = row.Seq, row.Time
	return v, nil
}

func costsEmpty(c Costs) bool {
	return c.Capital == "" && c.FeeBps == nil && c.SlippageBps == nil && !c.Asked() && c.Funding == nil
}

// costsOfTrial is the request's costs and intrabar rule that ran a trial
// recorded with c (empty where it recorded none: the project's defaults).
func costsOfTrial(c LedgerCosts) (Costs, string) {
	var out Costs
	if !c.Known() && c.Capital == "" {
		return out, ""
	}
	out.Capital = c.Capital
	fee, slip := c.FeeBps, c.SlippageBps
	out.FeeBps, out.SlippageBps = &fee, &slip
	switch c.Funding {
	case "on", "off":
		on := c.Funding == "on"
		out.Funding = &on
	}
	out.BorrowRate, out.Leverage, out.MaintenanceMargin, out.MaxVolumePct, out.VolumeCap = c.BorrowRate, c.Leverage, c.MaintenanceMargin, c.MaxVolumePct, c.VolumeCap
	return out, c.Intrabar
}

// metricValue is a criterion's metric for the verdict; nil when
// undefined.
func metricValue(metric string, m backtest.ReportedMetrics, v Verdict) *float64 {
	f := func(x float64) *float64 { return &x }
	switch metric {
	case "oos_sharpe":
		return m.Sharpe
	case "dsr":
		return v.Deflated.DSR
	case "pbo":
		return v.PBO
	case "max_drawdown":
		if m.MaxDrawdown == nil {
			return nil
		}
		return f(math.Abs(*m.MaxDrawdown))
	case "trades":
		return f(float64(m.Trades))
	case "total_return":
		return m.TotalReturn
	case "cagr":
		return m.CAGR
	case "calmar":
		return m.Calmar
	case "sortino":
		return m.Sortino
	case "profit_factor":
		return m.ProfitFactor
	case "win_rate":
		return m.WinRate
	}
	return nil
}

func compare(x float64, op string, v float64) bool {
	switch op {
	case ">=":
		return x >= v
	case "<=":
		return x <= v
	case ">":
		return x > v
	case "<":
		return x < v
	}
	return false
}

// planPBO is CSCV over the plan's run with the most trials carrying
// return blocks; nil when no run has enough.
func planPBO(trials []ledger.Row) *float64 {
	byRun := map[string][][]blockStat{}
	var order []string
	for _, t := range trials {
		var a trialAudit
		if len(t.Audit) == 0 || json.Unmarshal(t.Audit, &a) != nil || len(a.Blocks) == 0 {
			continue
		}
		if _, ok := byRun[t.RunID]; !ok {
			order = append(order, t.RunID)
		}
		byRun[t.RunID] = append(byRun[t.RunID], a.Blocks)
	}
	var best [][]blockStat
	for _, id := range order {
		if len(byRun[id]) > len(best) {
			best = byRun[id]
		}
	}
	if len(best) < 2 {
		return nil
	}
	s := len(best[0])
	same := best[:0:0]
	for _, b := range best {
		if len(b) == s {
			same = append(same, b)
		}
	}
	pbo, _ := cscv(same, s)
	return sig(pbo)
}

// Text is the verdict as a reader reads it.
func (v Verdict) Text() string {
	var b strings.Builder
	word := "FAILED"
	if v.Passed {
		word = "PASSED"
	}
	fmt.Fprintf(&b, "plan %s: %s on the holdout %s to %s (best of %d trials, row %d)\n", v.Plan, word, v.HoldoutFrom, cmpOr(v.HoldoutTo, "the end"), v.Trials, v.BestTrial)
	for _, j := range v.Judgements {
		val := "undefined"
		if j.Value != nil {
			val = strconv.FormatFloat(*j.Value, 'g', 6, 64)
		}
		mark := "fail"
		if j.Passed {
			mark = "pass"
		}
		fmt.Fprintf(&b, "  %-4s %-24s %s\n", mark, j.Criterion, val)
	}
	return b.String()
}
