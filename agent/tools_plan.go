package agent

import (
	"context"
	"encoding/json"
	"errors"

	"wicket/strategy/research"
)

// Research plans (strategy/research/plan_sealed.go): research_plan seals
// one in the ledger before its first trial, or shows it; research_verdict
// runs its holdout once. Sealing writes the ledger, not the market, so it
// is no gated write.

// planner is the part of the research engine plans need: research.Local
// has it; a data service client does not.
type planner interface {
	SealPlan(ctx context.Context, req research.PlanRequest) (research.PlanInfo, error)
	ShowPlan(ctx context.Context, name string) (research.PlanInfo, error)
	Verdict(ctx context.Context, req research.VerdictRequest) (research.Verdict, error)
}

var errNoPlanner = errors.New("research plans live in the project's research ledger, which this server's research (through a data service) does not reach; " +
	"the operator runs `wicket research plan` in the data service's project")

type (
	// planArg names the plan a run's trials count against.
	planArg struct {
		Plan string `json:"plan"`
	}
	planArgs struct {
		Plan       string         `json:"plan" arg:"required"`
		Name       string         `json:"name" desc:"strategy"`
		Source     string         `json:"source" desc:"or its text"`
		Series     string         `json:"series"`
		Hypothesis string         `json:"hypothesis"`
		Criteria   string         `json:"criteria" desc:"e.g. dsr>=0.95"`
		MaxTrials  int            `json:"max_trials" arg:"min=1"`
		Holdout    string         `json:"holdout" desc:"FROM:[TO]"`
		Grid       map[string]any `json:"grid" arg:"shape=knobs"`
	}
	verdictArgs struct {
		Plan string `json:"plan" arg:"required"`
	}
)

// The plan tools' output schemas, shallow: the fields a caller decides by.
var (
	planSchema = map[string]any{"type": "object", "properties": map[string]any{
		"open": map[string]any{"type": "boolean"}, "verdict": map[string]any{"type": "object"}}}
	verdictSchema = map[string]any{"type": "object", "properties": map[string]any{"verdict": map[string]any{"type": "object"}}}
)

func (tb *toolbox) planTools() []*toolSpec {
	return []*toolSpec{{
		Name: "research_plan", Title: "Research plan", Ring: ringResearch,
		// Like the run_* tools it writes the research ledger only.
		Hints:       hints{ReadOnly: true, OpenWorld: flag(false)},
		Description: "Seals a research plan, or shows one.",
		Params:      paramsOf[planArgs](),
		Output:      planSchema,
		Handle:      tb.researchPlan,
	}, {
		Name: "research_verdict", Title: "Plan verdict", Ring: ringResearch,
		Hints:       hints{ReadOnly: true, OpenWorld: flag(false)},
		Description: "Runs a plan's holdout once and judges it.",
		Params:      paramsOf[verdictArgs](),
		Output:      verdictSchema,
		Handle:      tb.researchVerdict,
	}}
}

func (tb *toolbox) planner() (planner, *result) {
	if r := tb.needResearch(); r != nil {
		return nil, r
	}
	p, ok := tb.Research.(planner)
	if !ok {
		return nil, failErr(errNoPlanner)
	}
	return p, nil
}

func (tb *toolbox) researchPlan(ctx context.Context, c *call) *result {
	p, r := tb.planner()
	if r != nil {
		return r
	}
	var in planArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	if in.Name == "" && in.Source == "" && in.Criteria == "" && in.Hypothesis == "" {
		info, err := p.ShowPlan(ctx, in.Plan)
		if err != nil {
			return failErr(err)
		}
		return ok(info)
	}
	ref, err := strategyArgs{Name: in.Name, Source: in.Source}.ref()
	if err != nil {
		return failErr(err)
	}
	var grid research.Grid
	if len(in.Grid) > 0 {
		b, _ := json.Marshal(in.Grid)
		if err := json.Unmarshal(b, &grid); err != nil {
			return fail("grid: %v", err)
		}
	}
	info, err := p.SealPlan(ctx, research.PlanRequest{Name: in.Plan, Hypothesis: in.Hypothesis, Criteria: in.Criteria, MaxTrials: in.MaxTrials,
		Holdout: in.Holdout, StrategyRef: ref, Series: in.Series, Grid: grid})
	if err != nil {
		return failErr(err)
	}
	return ok(info)
}

func (tb *toolbox) researchVerdict(ctx context.Context, c *call) *result {
	p, r := tb.planner()
	if r != nil {
		return r
	}
	var in verdictArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	req := research.VerdictRequest{Plan: in.Plan}
	v, err := p.Verdict(ctx, req)
	if err != nil {
		return failErr(err)
	}
	return ok(map[string]any{"verdict": v, "text": v.Text()})
}
