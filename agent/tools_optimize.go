package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"wicket/strategy/optimize"
	"wicket/strategy/research"
)

// optimizer is what run_optimize needs of the research engine (Local and
// Client have it).
type optimizer interface {
	Optimize(ctx context.Context, req research.OptimizeRequest, progress func(research.Progress)) (research.OptimizeResult, error)
}

// maxOptimizeSeconds bounds run_optimize's time budget (a day).
const maxOptimizeSeconds = 86400

func init() {
	argConsts["optimizeMethods"] = strings.Join(optimize.Methods, "|")
	argConsts["defaultOptimizeMethod"] = research.DefaultOptimizeMethod
	argConsts["defaultOptimizeTrials"] = research.DefaultOptimizeTrials
	argConsts["maxOptimizeBatch"] = research.MaxOptimizeBatch
	argConsts["maxOptimizeSeconds"] = maxOptimizeSeconds
}

// optimizeArgs are run_optimize's arguments.
type optimizeArgs struct {
	runArgs
	gridArgs
	intrabarArg
	planArg
	Method  string   `json:"method" arg:"enum=$optimizeMethods,default=$defaultOptimizeMethod" desc:"the optimiser"`
	Trials  int      `json:"trials" arg:"default=$defaultOptimizeTrials,min=1" desc:"trial budget, resumed included"`
	Seconds *float64 `json:"seconds" arg:"min=0,max=$maxOptimizeSeconds" desc:"time budget, seconds"`
	Seed    *int     `json:"seed" desc:"default 1"`
	Batch   int      `json:"batch" arg:"min=1,max=$maxOptimizeBatch" desc:"trials at once (default: workers')"`
	Resume  string   `json:"resume" desc:"run_id to continue (same costs)"`
	Top     int      `json:"top" arg:"default=$defaultTop,min=1,max=$maxTop" desc:"how many best trials to return"`
}

// optimizeSchema describes the answer's top level (outschema.go).
var optimizeSchema = outputSchemaFor[research.OptimizeResult]()

func (tb *toolbox) optimizeTool() *toolSpec {
	return &toolSpec{
		Name: "run_optimize", Title: "Optimise strategy knobs", Ring: ringResearch, Hints: researchHints(),
		Description: "Searches a knob grid by random, TPE or CMA-ES within a trial or time budget: best trials, Pareto front, DSR, PBO.",
		Params:      paramsOf[optimizeArgs](),
		Output:      optimizeSchema,
		Handle:      tb.runOptimize,
	}
}

func (tb *toolbox) runOptimize(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	o, isOpt := tb.Research.(optimizer)
	if !isOpt {
		return fail("this research engine cannot optimise; run_sweep searches a grid whole")
	}
	var in optimizeArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	ref, err := in.ref()
	if err != nil {
		return failErr(err)
	}
	req := research.OptimizeRequest{StrategyRef: ref, Series: in.Series, Params: in.Params, From: in.From, To: in.To, Costs: in.costs(),
		Intrabar: in.Intrabar, Grid: in.Grid, RankBy: in.RankBy, Method: in.Method, Trials: in.Trials, Batch: in.Batch, Resume: in.Resume, Top: in.Top, Plan: in.Plan}
	if in.Resume != "" && !c.args.has("method") {
		req.Method = "" // the run's own
	}
	if in.Seconds != nil {
		req.Seconds = *in.Seconds
	}
	if in.Seed != nil {
		if *in.Seed < 0 {
			return fail("argument \"seed\" is %d; give a whole number 0 or above", *in.Seed)
		}
		s := uint64(*in.Seed)
		req.Seed = &s
	}
	res, err := o.Optimize(ctx, req, tb.progressReporter(ctx, c, "optimize"))
	if err != nil {
		return failErr(err)
	}
	return tb.runs.optimize(res, res.RunID, tb.newID, in.Top)
}

// optimize answers an optimisation: its best trials and at most top of
// its Pareto front, with headline metrics; the whole result is stored and
// linked.
func (s *runStore) optimize(res any, runID string, newID func() string, top int) *result {
	full, ans, id, err := runAnswer(res, runID, newID)
	if err != nil {
		return fail("internal error: cannot encode the optimisation: %v", err)
	}
	for _, k := range []string{"top", "pareto"} {
		if _, ok := full[k]; ok {
			ans[k] = cutEach(full[k], "metrics")
		}
	}
	if front, _ := ans["pareto"].([]any); len(front) > top {
		ans["pareto"] = front[:top]
		ans["pareto_clamped"] = fmt.Sprintf("showing %d of the front's %d trials (top bounds both); every one is at run_uri", top, len(front))
	}
	ans["metrics_shown"] = "headline metrics of each entry; every metric is at run_uri"
	sum := fmt.Sprintf("Optimisation (%v) of %v on %v: %v trials of %v combinations, ranked by %v; stopped: %v.",
		full["method"], full["strategy"], full["series"], full["evaluated"], full["combinations"], full["rank_by"], full["stopped"])
	if top, _ := ans["top"].([]any); len(top) > 0 {
		b, _ := json.Marshal(top[0])
		sum += " Best: " + truncate(string(b), 400)
	}
	return s.research("optimisation", id, full, ans, sum)
}
