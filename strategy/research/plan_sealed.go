package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"wicket/internal/project"
	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
)

// Research plans, sealed before the first trial (strategy.md, "Research
// plans"). A plan is a ledger row naming the strategy's content digest,
// the series, the grid or search space, the success criteria, a trial
// budget and a holdout range. While it is open (no verdict yet), every
// sweep, optimisation and walk-forward of a strategy with that digest,
// under any name and with or without `plan`, is the plan's: it is refused
// when it would pass the budget or when its explicit range reaches into
// the holdout, and an open-ended range is cut to end before the holdout
// (with a warning). The count is the ledger's (every counted row of the
// digest after the plan's row), so the CLI, the MCP server, the data
// service and a cluster's sweeps, which all record there, share it. The
// verdict runs the holdout once and judges the criteria, deflating the
// holdout's Sharpe ratio by every trial of the plan.

// PlanBook is the part of the research ledger plans live in;
// *ledger.Ledger has it.
type PlanBook interface {
	SealPlan(ctx context.Context, spec ledger.PlanSpec, row *ledger.Row) error
	AppendVerdict(ctx context.Context, plan string, row *ledger.Row) error
	Plan(ctx context.Context, name string) (ledger.Plan, error)
	OpenPlanOf(ctx context.Context, digest string) (*ledger.Plan, error)
	PlanTrials(ctx context.Context, p ledger.Plan) ([]ledger.Row, error)
}

// Plan criteria: the metrics a verdict judges and the operators.
var (
	// PlanMetrics are the metrics a criterion may name: the holdout run's
	// own figures, its deflated Sharpe ratio over the plan's trials and
	// the probability of backtest overfitting of the plan's trials.
	PlanMetrics = []string{"oos_sharpe", "dsr", "pbo", "max_drawdown", "trades", "total_return", "cagr", "calmar", "sortino",
		"profit_factor", "win_rate"}
	// PlanOps are the comparison operators.
	PlanOps = []string{">=", "<=", ">", "<"}
)

// PlanRequest seals a plan.
type PlanRequest struct {
	Name       string `json:"name"`
	Hypothesis string `json:"hypothesis"`
	// Criteria is a comma-separated list of METRIC OP VALUE, e.g.
	// "oos_sharpe>=1, dsr>=0.95, pbo<=0.2".
	Criteria  string `json:"criteria"`
	MaxTrials int    `json:"max_trials"`
	// Holdout is FROM:[TO], dates or RFC 3339 ("2024-07-01:" is from
	// that day to the end of the series).
	Holdout string `json:"holdout"`
	StrategyRef
	Series string `json:"series"`
	Grid   Grid   `json:"grid,omitempty"`
}

// PlanInfo is a sealed plan.
type PlanInfo struct {
	Name        string          `json:"name"`
	Hypothesis  string          `json:"hypothesis"`
	Strategy    string          `json:"strategy"`
	Digest      string          `json:"digest"` // the strategy's content digest it binds
	Series      string          `json:"series"`
	Criteria    []string        `json:"criteria"`
	MaxTrials   int             `json:"max_trials"`
	Trials      int             `json:"trials"` // counted so far
	HoldoutFrom string          `json:"holdout_from"`
	HoldoutTo   string          `json:"holdout_to,omitempty"`
	Grid        json.RawMessage `json:"grid,omitempty"`
	Seq         int64           `json:"seq"` // the plan's ledger row
	Sealed      string          `json:"sealed"`
	Open        bool            `json:"open"`
	Verdict     *Verdict        `json:"verdict,omitempty"`
}

// ParseCriteria reads "oos_sharpe>=1, dsr>=0.95": METRIC OP VALUE,
// comma-separated, each metric at most once.
func ParseCriteria(s string) ([]ledger.Criterion, error) {
	bad := func(part, why string) error {
		return errorf(KindInvalid, "criterion %q %s: write METRIC OP VALUE, comma-separated (e.g. \"oos_sharpe>=1, dsr>=0.95\"), "+
			"with METRIC one of %s and OP one of %s", part, why, strings.Join(PlanMetrics, ", "), strings.Join(PlanOps, " "))
	}
	var out []ledger.Criterion
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.IndexAny(part, "<>=!")
		if i <= 0 {
			return nil, bad(part, "has no operator")
		}
		metric := strings.TrimSpace(part[:i])
		rest := part[i:]
		op := ""
		for _, o := range PlanOps { // the two-character ones first
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, bad(part, "has an operator that is not one of "+strings.Join(PlanOps, " "))
		}
		if !slices.Contains(PlanMetrics, metric) {
			return nil, bad(part, "names an unknown metric")
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[len(op):]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, bad(part, "has no number after the operator")
		}
		if slices.ContainsFunc(out, func(c ledger.Criterion) bool { return c.Metric == metric }) {
			return nil, bad(part, "repeats a metric")
		}
		out = append(out, ledger.Criterion{Metric: metric, Op: op, Value: v})
	}
	if len(out) == 0 {
		return nil, bad(s, "is empty")
	}
	return out, nil
}

// parseHoldout reads FROM:[TO] into RFC 3339 bounds (TO through its day).
func parseHoldout(s string) (from, to time.Time, err error) {
	f, t, ok := cutRange(strings.TrimSpace(s))
	if !ok || f == "" {
		return from, to, errorf(KindInvalid, "holdout %q must be FROM:[TO], e.g. 2024-07-01: (to the end of the series) or 2024-07-01:2024-12-31", s)
	}
	if from, err = backtest.ParseTime("holdout", f, false); err != nil {
		return from, to, classify(err)
	}
	if to, err = backtest.ParseTime("holdout", t, true); err != nil {
		return from, to, classify(err)
	}
	if !to.IsZero() && to.Before(from) {
		return from, to, errorf(KindInvalid, "holdout %q ends before it begins", s)
	}
	return from, to, nil
}

// cutRange splits FROM:TO at the colon that separates them: RFC 3339
// times hold colons of their own, so it is the first colon followed by a
// date, or the last one when TO is empty.
func cutRange(s string) (from, to string, ok bool) {
	if f, found := strings.CutSuffix(s, ":"); found {
		return f, "", true
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ':' && i+5 <= len(s) && isDigits(s[i+1:i+5]) && i+5 < len(s) && s[i+5] == '-' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func rfc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// planBook is the ledger's plans, or nil without a ledger.
func (l *Local) planBook() PlanBook {
	rec := l.cfg.Recorder
	if t, ok := rec.(timedRecorder); ok {
		rec = t.Recorder
	}
	b, _ := rec.(PlanBook)
	return b
}

func (l *Local) needPlanBook() (PlanBook, error) {
	b := l.planBook()
	if b == nil {
		return nil, errorf(KindUnavailable, "research plans live in the project's research ledger, and this research engine records into none; run inside the project (or through its data service)")
	}
	return b, nil
}

// SealPlan validates req and writes its plan row to the ledger, before
// any trial of it.
func (l *Local) SealPlan(ctx context.Context, req PlanRequest) (PlanInfo, error) {
	if err := project.ValidName("plan", req.Name); err != nil {
		return PlanInfo{}, errorf(KindInvalid, "%v", err)
	}
	if strings.TrimSpace(req.Hypothesis) == "" {
		return PlanInfo{}, errorf(KindInvalid, "hypothesis is empty: say, before any trial, what the strategy should show and why")
	}
	crit, err := ParseCriteria(req.Criteria)
	if err != nil {
		return PlanInfo{}, err
	}
	if req.MaxTrials <= 0 {
		return PlanInfo{}, errorf(KindInvalid, "max_trials must be a positive trial budget (every sweep combination, optimiser trial and walk-forward in-sample combination is one)")
	}
	hf, ht, err := parseHoldout(req.Holdout)
	if err != nil {
		return PlanInfo{}, err
	}
	if seriesless(req.Series) {
		return PlanInfo{}, errorf(KindInvalid, "a plan is sealed for one series: name it (SYMBOL@GRANULARITY)")
	}
	if _, single, err := l.seriesSet(req.Series); err != nil {
		return PlanInfo{}, err
	} else if !single {
		return PlanInfo{}, errorf(KindInvalid, "a plan is sealed for one series, and %q names a series set", req.Series)
	}
	label, source, err := l.resolve(req.StrategyRef)
	if err != nil {
		return PlanInfo{}, err
	}
	book, err := l.needPlanBook()
	if err != nil {
		return PlanInfo{}, err
	}
	spec := ledger.PlanSpec{Name: req.Name, Hypothesis: strings.TrimSpace(req.Hypothesis), Criteria: crit, MaxTrials: req.MaxTrials,
		HoldoutFrom: rfc(hf), HoldoutTo: rfc(ht)}
	if len(req.Grid) > 0 {
		spec.Grid = mustJSON(req.Grid)
	}
	// The row keeps the text it binds (in its audit data, under the
	// chain's hash), so the verdict runs exactly that text.
	row := ledger.Row{Who: whoOf(ctx), Strategy: LedgerName(req.StrategyRef, label, source), Digest: ledger.SourceDigest(source),
		Series: req.Series, SharpePerPeriod: math.NaN(), Audit: mustJSON(planAudit{Source: source})}
	if err := book.SealPlan(context.WithoutCancel(ctx), spec, &row); err != nil {
		return PlanInfo{}, planErr(err)
	}
	return planInfo(ledger.Plan{Row: row, Spec: spec}), nil
}

// planErr classifies a ledger error about plans.
func planErr(err error) error {
	switch {
	case errors.Is(err, ledger.ErrNoPlan):
		return &Error{Kind: KindNotFound, Msg: err.Error(), Err: err}
	case errors.Is(err, ledger.ErrPlanExists), errors.Is(err, ledger.ErrPlanOpen), errors.Is(err, ledger.ErrVerdictGiven):
		return &Error{Kind: KindInvalid, Msg: err.Error(), Err: err}
	}
	return classify(err)
}

// ShowPlan is the plan named name, with its count and verdict.
func (l *Local) ShowPlan(ctx context.Context, name string) (PlanInfo, error) {
	book, err := l.needPlanBook()
	if err != nil {
		return PlanInfo{}, err
	}
	p, err := book.Plan(ctx, name)
	if err != nil {
		return PlanInfo{}, planErr(err)
	}
	return planInfo(p), nil
}

func planInfo(p ledger.Plan) PlanInfo {
	info := PlanInfo{Name: p.Spec.Name, Hypothesis: p.Spec.Hypothesis, Strategy: p.Row.Strategy, Digest: p.Row.Digest, Series: p.Row.Series,
		MaxTrials: p.Spec.MaxTrials, Trials: p.Trials, HoldoutFrom: p.Spec.HoldoutFrom, HoldoutTo: p.Spec.HoldoutTo, Grid: p.Spec.Grid,
		Seq: p.Row.Seq, Sealed: p.Row.Time, Open: p.Open(), Criteria: []string{}}
	for _, c := range p.Spec.Criteria {
		info.Criteria = append(info.Criteria, c.String())
	}
	if p.Verdict != nil {
		var v Verdict
		if json.Unmarshal(p.Verdict.Metrics, &v) == nil {
			v.Seq, v.Time = p.Verdict.Seq, p.Verdict.Time
			info.Verdict = &v
		}
	}
	return info
}

// PlanOf is the latest plan sealed for a strategy's content digest
// (ledger.SourceDigest of its text), with its verdict, or nil: what a
// deployment's preview shows, and what auto mode asks for a pass of.
func PlanOf(ctx context.Context, l *ledger.Ledger, digest string) (*PlanInfo, error) {
	p, err := l.PlanOfDigest(ctx, digest)
	if err != nil || p == nil {
		return nil, err
	}
	info := planInfo(*p)
	return &info, nil
}

// planGate is the open plan a run falls under, if any.
type planGate struct {
	plan *ledger.Plan
	// note is the warning the run carries (its range was cut, or it was
	// counted against a plan it did not name).
	notes []string
}

// gatePlan finds the plan a sweep, optimisation or walk-forward of ref on
// series falls under: the one named (whose digest must be ref's), else
// the open plan of ref's digest. A range reaching into its holdout is
// refused when it was given and cut before the holdout when it was open.
// Without a ledger, and for a strategy under no plan, it is a no-op.
func (l *Local) gatePlan(ctx context.Context, name string, ref StrategyRef, series string, from, to *string) (*planGate, error) {
	g := &planGate{}
	book := l.planBook()
	if book == nil {
		if name != "" {
			_, err := l.needPlanBook()
			return nil, err
		}
		return g, nil
	}
	_, source, err := l.resolve(ref)
	if err != nil {
		return nil, err
	}
	digest := ledger.SourceDigest(source)
	if name != "" {
		p, err := book.Plan(ctx, name)
		if err != nil {
			return nil, planErr(err)
		}
		switch {
		case !p.Open():
			return nil, errorf(KindInvalid, "plan %q was judged at row %d and takes no more trials; seal a new plan", name, p.Verdict.Seq)
		case p.Row.Digest != digest:
			return nil, errorf(KindInvalid, "plan %q binds strategy %s with content digest %s…, and this strategy's text has digest %s…: a plan covers the exact text it was sealed with; seal a new plan for the changed strategy",
				name, p.Row.Strategy, p.Row.Digest[:12], digest[:12])
		case series != p.Row.Series:
			return nil, errorf(KindInvalid, "plan %q is sealed for series %s, not %q", name, p.Row.Series, series)
		}
		g.plan = &p
	} else {
		p, err := book.OpenPlanOf(ctx, digest)
		if err != nil {
			// The research stands when the ledger fails (it is not
			// recorded either); a run naming its plan is refused above.
			g.notes = append(g.notes, fmt.Sprintf("the research ledger could not say whether a plan covers this strategy (%v)", err))
			return g, nil
		}
		if p == nil {
			return g, nil
		}
		g.plan = p
		g.notes = append(g.notes, fmt.Sprintf("counted against plan %q: its strategy %s has this strategy's content (a plan binds the text, not the name)", p.Spec.Name, p.Row.Strategy))
	}
	p := g.plan
	if _, single, err := l.seriesSet(series); seriesless(series) || err != nil || !single {
		return nil, errorf(KindInvalid, "strategy %s is under plan %q, which covers one series (%s); run it on that series", p.Row.Strategy, p.Spec.Name, p.Row.Series)
	}
	if err := g.guardHoldout(from, to); err != nil {
		return nil, err
	}
	return g, nil
}

// guardHoldout refuses a given range that reads the plan's holdout and
// cuts an open one before it.
func (g *planGate) guardHoldout(from, to *string) error {
	p := g.plan
	hf, _ := time.Parse(time.RFC3339, p.Spec.HoldoutFrom)
	var ht time.Time
	if p.Spec.HoldoutTo != "" {
		ht, _ = time.Parse(time.RFC3339, p.Spec.HoldoutTo)
	}
	f, err := backtest.ParseTime("from", *from, false)
	if err != nil {
		return classify(err)
	}
	t, err := backtest.ParseTime("to", *to, true)
	if err != nil {
		return classify(err)
	}
	beforeHoldout := !t.IsZero() && t.Before(hf)
	afterHoldout := !ht.IsZero() && !f.IsZero() && f.After(ht)
	if beforeHoldout || afterHoldout {
		return nil
	}
	holdout := p.Spec.HoldoutFrom + " to " + cmpOr(p.Spec.HoldoutTo, "the end")
	if !t.IsZero() || !f.IsZero() && !f.Before(hf) {
		return errorf(KindInvalid, "the range %s to %s reads plan %q's holdout (%s), which only its verdict may read: end the range before %s",
			cmpOr(*from, "the start"), cmpOr(*to, "the end"), p.Spec.Name, holdout, p.Spec.HoldoutFrom)
	}
	*to = rfc(hf.Add(-time.Second))
	g.notes = append(g.notes, fmt.Sprintf("the range was cut to end at %s, before plan %q's holdout (%s), which only its verdict reads", *to, p.Spec.Name, holdout))
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// admit refuses n more trials past the plan's budget.
func (g *planGate) admit(n int) error {
	if g == nil || g.plan == nil {
		return nil
	}
	p := g.plan
	if p.Trials+n > p.Spec.MaxTrials {
		return errorf(KindInvalid, "plan %q's budget is %d trials and %d are spent, so these %d would pass it (%d of %d); narrow the grid or lower the trials to at most %d",
			p.Spec.Name, p.Spec.MaxTrials, p.Trials, n, p.Trials+n, p.Spec.MaxTrials, max(0, p.Spec.MaxTrials-p.Trials))
	}
	return nil
}

// warn adds the gate's notes to warnings.
func (g *planGate) warn(warnings *[]string) {
	if g != nil {
		*warnings = append(*warnings, g.notes...)
	}
}

// planAudit is a plan row's audit data: the strategy text it binds.
type planAudit struct {
	Source string `json:"source"`
}
