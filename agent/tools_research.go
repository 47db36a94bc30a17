package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/strategy/research"
)

// Research is what the research tools reach: the in-process engine over
// the project's history store (*research.Local) or `wicket data serve`
// through *research.Client. Both run strategy code only in workers.
type Research interface {
	ListSeries(ctx context.Context) (research.SeriesList, error)
	ListStrategies(ctx context.Context) (research.StrategyList, error)
	Backtest(ctx context.Context, req research.BacktestRequest) (research.BacktestResult, error)
	Sweep(ctx context.Context, req research.SweepRequest, progress func(research.Progress)) (research.SweepResult, error)
	WalkForward(ctx context.Context, req research.WalkForwardRequest, progress func(research.Progress)) (research.WalkForwardResult, error)
}

func researchHints() Hints { return Hints{ReadOnly: true, Idempotent: true, OpenWorld: flag(true)} }

// maxCostBps bounds fee_bps and slippage_bps (10%); the schema and the
// handler read the same number.
const maxCostBps = 1000

// List bounds for the research listings.
const (
	defaultListLimit = 100
	maxListLimit     = 500
)

var (
	seriesParam = Param{Name: "series", Type: "string", Required: true, Description: "a stored series, SYMBOL@GRANULARITY (e.g. BTC-USD@1h); list_series shows them"}
	rangeParams = []Param{
		{Name: "from", Type: "string", Description: "first bar: a date (2024-01-31) or RFC3339 time, inclusive; default the series' start"},
		{Name: "to", Type: "string", Description: "last bar: a date (through that day) or RFC3339 time, inclusive; default the series' end"},
	}
	costParams = []Param{
		{Name: "capital", Type: "", Schema: map[string]any{"type": []string{"string", "number"}}, Description: "starting capital as a decimal string, e.g. \"10000\"; default from wicket.toml [research]"},
		{Name: "fee_bps", Type: "number", Min: num(0), Max: num(maxCostBps), Description: "fee per trade in basis points of notional; default from wicket.toml [research] (10)"},
		{Name: "slippage_bps", Type: "number", Min: num(0), Max: num(maxCostBps), Description: "slippage per fill in basis points; default from wicket.toml [research] (5)"},
	}
	gridParam = Param{Name: "grid", Required: true, Description: "per knob, a list of values or {from, to, step} (inclusive), e.g. {\"fast\": {\"from\": 5, \"to\": 50, \"step\": 5}, \"slow\": [20, 30, 50]}",
		Schema: map[string]any{"type": "object", "additionalProperties": map[string]any{
			"anyOf": []any{
				map[string]any{"type": "array"},
				map[string]any{"type": "object", "properties": map[string]any{
					"from": map[string]any{"type": "number"}, "to": map[string]any{"type": "number"}, "step": map[string]any{"type": "number"}},
					"required": []string{"from", "to"}},
			}}}}
	rankParam  = Param{Name: "rank_by", Type: "string", Enum: research.RankMetrics, Default: research.RankSharpe, Description: "the metric the best combination is chosen by (max_drawdown ranks lowest first)"}
	knobsParam = Param{Name: "params", Type: "object", Description: "knob values by name (overrides of the strategy's defaults)"}
)

func concat(groups ...[]Param) []Param {
	var out []Param
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func (tb *toolbox) researchTools() []*ToolSpec {
	return []*ToolSpec{
		{
			Name: "list_series", Title: "List bar series", Ring: RingResearch, Hints: researchHints(),
			Description: "Lists the bar series in the history store: name, symbol, granularity, source, bar count, first and last bar.",
			Params:      []Param{limitParam("series")},
			Handle:      tb.listSeries,
		},
		{
			Name: "list_strategies", Title: "List project strategies", Ring: RingResearch, Hints: researchHints(),
			Description: "Lists the project's strategies (strategies/*.star) with their summaries, read without running them.",
			Params:      []Param{limitParam("strategies")},
			Handle:      tb.listStrategies,
		},
		{
			Name: "run_backtest", Title: "Backtest a strategy", Ring: RingResearch, Hints: researchHints(),
			Description: "Backtests a strategy on a stored series: metrics, warnings, settings and the first and last round trips, with a link to the full run; equity: true adds the curve, plot: true a PNG chart.",
			Params: concat(strategyParams, []Param{seriesParam, knobsParam}, rangeParams, costParams, []Param{
				{Name: "fill", Type: "string", Enum: []string{"next_open", "close"}, Default: "next_open", Description: "when decisions fill: the next bar's open (default) or, optimistically, the deciding bar's close"},
				{Name: "trades_limit", Type: "integer", Default: defaultAnswerTrades, Min: num(0), Max: num(maxAnswerTrades), Description: "how many trades to list, the first and the last (0 = none); the run's resource_link has them all"},
				{Name: "equity", Type: "boolean", Default: false, Description: "also return the downsampled equity curve (the run's resource_link always has it)"},
				{Name: "plot", Type: "boolean", Default: false, Description: "also return the equity and drawdown chart as a PNG image"},
			}),
			Handle: tb.runBacktest,
		},
		{
			Name: "run_sweep", Title: "Sweep strategy knobs", Ring: RingResearch, Hints: researchHints(),
			Description: "Backtests every combination of a knob grid in parallel and ranks them, with the winner's deflated Sharpe ratio over this sweep and over the research ledger, and the probability of backtest overfitting; estimate: true only counts and times.",
			Params: concat(strategyParams, []Param{seriesParam, gridParam, knobsParam, rankParam,
				{Name: "top", Type: "integer", Default: research.DefaultTop, Min: num(1), Max: num(research.MaxTop), Description: "how many of the best combinations to return"},
				{Name: "estimate", Type: "boolean", Default: false, Description: "return the combination count and an estimated duration without running the sweep"},
				{Name: "max_combinations", Type: "integer", Min: num(1), Description: "refuse a grid larger than this (cannot exceed wicket.toml's research.max_combinations, default 5000)"},
			}, rangeParams, costParams),
			Handle: tb.runSweep,
		},
		{
			Name: "run_walk_forward", Title: "Walk-forward analysis", Ring: RingResearch, Hints: researchHints(),
			Description: "Optimises the knob grid on rolling (or anchored) in-sample windows and tests each winner on the following out-of-sample window; reports per window, stitched out-of-sample metrics and walk-forward efficiency.",
			Params: concat(strategyParams, []Param{seriesParam, gridParam, knobsParam, rankParam,
				{Name: "windows", Type: "integer", Min: num(1), Max: num(research.MaxWindows), Description: "number of out-of-sample windows (default 5 when no lengths are given)"},
				{Name: "in_sample", Type: "", Schema: map[string]any{"type": []string{"string", "integer"}}, Description: "in-sample length: bars (an integer) or a duration such as \"180d\" or \"720h\""},
				{Name: "out_of_sample", Type: "", Schema: map[string]any{"type": []string{"string", "integer"}}, Description: "out-of-sample length: bars or a duration"},
				{Name: "anchored", Type: "boolean", Default: false, Description: "grow every in-sample window from the range's start instead of rolling it"},
				{Name: "max_combinations", Type: "integer", Min: num(1), Description: "refuse a grid larger than this per window"},
			}, rangeParams, costParams),
			Handle: tb.runWalkForward,
		},
	}
}

func limitParam(what string) Param {
	return Param{Name: "limit", Type: "integer", Default: defaultListLimit, Min: num(1), Max: num(maxListLimit),
		Description: "how many " + what + " to return at most"}
}

func (tb *toolbox) needResearch() *result {
	if tb.Research == nil {
		return failErr(errNoProject)
	}
	return nil
}

// limitArg reads the limit argument; a value over the hard maximum is
// clamped and the result says so.
func limitArg(c *call) (n int, clamped bool, err error) {
	if !c.args.has("limit") {
		return defaultListLimit, false, nil
	}
	n, err = c.args.integer("limit", defaultListLimit, 1, 1<<30)
	if err != nil {
		return 0, false, err
	}
	if n > maxListLimit {
		return maxListLimit, true, nil
	}
	return n, false, nil
}

func (tb *toolbox) listSeries(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	limit, clamped, err := limitArg(c)
	if err != nil {
		return failErr(err)
	}
	list, err := tb.Research.ListSeries(ctx)
	if err != nil {
		return failErr(err)
	}
	return ok(bounded("series", list.Series, limit, clamped, list.Note))
}

func (tb *toolbox) listStrategies(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	limit, clamped, err := limitArg(c)
	if err != nil {
		return failErr(err)
	}
	list, err := tb.Research.ListStrategies(ctx)
	if err != nil {
		return failErr(err)
	}
	return ok(bounded("strategies", list.Strategies, limit, clamped, list.Note, list.Clamped))
}

// bounded is a listing's result: the count, the items under key cut to
// limit (saying so), the clamped limit when the request asked for more than
// the maximum, and the non-empty notes joined.
func bounded[T any](key string, items []T, limit int, clamped bool, notes ...string) map[string]any {
	out := map[string]any{"count": len(items)}
	if len(items) > limit {
		out["truncated"] = fmt.Sprintf("showing %d of %d %s; raise limit (at most %d)", limit, len(items), key, maxListLimit)
		items = items[:limit]
	}
	if items == nil {
		items = []T{}
	}
	out[key] = items
	var said []string
	for _, n := range notes {
		if n != "" {
			said = append(said, n)
		}
	}
	if len(said) > 0 {
		out["note"] = strings.Join(said, "; ")
	}
	if clamped {
		out["clamped"] = map[string]int{"limit": maxListLimit}
	}
	return out
}

// ref reads the name-or-source arguments; the engine checks that exactly
// one is given and validates the name before any file access.
func ref(c *call) (research.StrategyRef, error) {
	name, err := c.args.str("name", "")
	if err != nil {
		return research.StrategyRef{}, err
	}
	source, err := c.args.str("source", "")
	if err != nil {
		return research.StrategyRef{}, err
	}
	if name == "" && source == "" {
		return research.StrategyRef{}, fmt.Errorf("give name (a strategy in the project; list_strategies shows them) or source (Starlark text)")
	}
	return research.StrategyRef{Name: name, Source: source}, nil
}

// common reads the arguments every research run shares.
type runArgs struct {
	ref      research.StrategyRef
	series   string
	params   map[string]any
	from, to string
	costs    research.Costs
}

func readRunArgs(c *call) (runArgs, error) {
	var a runArgs
	var err error
	if a.ref, err = ref(c); err != nil {
		return a, err
	}
	if a.series, err = c.args.str("series", ""); err != nil {
		return a, err
	}
	if err = c.args.object("params", &a.params); err != nil {
		return a, err
	}
	if a.from, err = c.args.str("from", ""); err != nil {
		return a, err
	}
	if a.to, err = c.args.str("to", ""); err != nil {
		return a, err
	}
	if a.costs.Capital, err = c.args.decimalText("capital", ""); err != nil {
		return a, err
	}
	for _, f := range []struct {
		name string
		dst  **float64
	}{{"fee_bps", &a.costs.FeeBps}, {"slippage_bps", &a.costs.SlippageBps}} {
		if !c.args.has(f.name) {
			continue
		}
		var v float64
		if err := json.Unmarshal(c.args[f.name], &v); err != nil || v < 0 || v > maxCostBps {
			return a, fmt.Errorf("argument %q must be a number of basis points from 0 to %d", f.name, maxCostBps)
		}
		*f.dst = &v
	}
	return a, nil
}

func (tb *toolbox) runBacktest(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	a, err := readRunArgs(c)
	if err != nil {
		return failErr(err)
	}
	req := research.BacktestRequest{StrategyRef: a.ref, Series: a.series, Params: a.params, From: a.from, To: a.to, Costs: a.costs}
	if req.Fill, err = c.args.str("fill", ""); err != nil {
		return failErr(err)
	}
	shape, err := readShape(c) // compact.go: trades_limit, equity, plot
	if err != nil {
		return failErr(err)
	}
	req.TradesLimit, req.Plot = maxAnswerTrades, shape.plot // the store keeps every trade the engine reports
	res, err := tb.Research.Backtest(ctx, req)
	if err != nil {
		return failErr(err)
	}
	var report map[string]any
	if err := json.Unmarshal(res.Result, &report); err != nil {
		return fail("internal error: the backtest report is not a JSON object: %v", err)
	}
	if res.Output != "" {
		report["strategy_output"] = res.Output
	}
	if res.RunID != "" {
		report["run_id"] = res.RunID
	}
	if res.LedgerWarning != "" {
		report["ledger_warning"] = res.LedgerWarning
	}
	id := res.RunID
	if id == "" {
		id = tb.newID() // no ledger: the in-process store names the run
		report["run_id"] = id
	}
	out := tb.runs.backtest(id, report, shape) // runs.go: store, compact answer, resource_link
	if len(res.PNG) > 0 {
		out.images = append(out.images, res.PNG)
	}
	return out
}

func (tb *toolbox) runSweep(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	a, err := readRunArgs(c)
	if err != nil {
		return failErr(err)
	}
	req := research.SweepRequest{StrategyRef: a.ref, Series: a.series, Params: a.params, From: a.from, To: a.to, Costs: a.costs}
	if err := c.args.object("grid", &req.Grid); err != nil {
		return failErr(err)
	}
	if req.RankBy, err = c.args.str("rank_by", ""); err != nil {
		return failErr(err)
	}
	if req.Top, err = c.args.integer("top", research.DefaultTop, 1, research.MaxTop); err != nil {
		return failErr(err)
	}
	if req.Estimate, err = c.args.boolean("estimate", false); err != nil {
		return failErr(err)
	}
	if req.MaxCombinations, err = c.args.integer("max_combinations", 0, 1, 1<<30); err != nil {
		return failErr(err)
	}
	res, err := tb.Research.Sweep(ctx, req, progressReporter(ctx, c, "sweep"))
	if err != nil {
		return failErr(err)
	}
	if req.Estimate {
		return ok(res)
	}
	return tb.runs.sweep(res, res.RunID, tb.newID) // runs.go: stored, summarised, linked
}

func (tb *toolbox) runWalkForward(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	a, err := readRunArgs(c)
	if err != nil {
		return failErr(err)
	}
	req := research.WalkForwardRequest{StrategyRef: a.ref, Series: a.series, Params: a.params, From: a.from, To: a.to, Costs: a.costs}
	if err := c.args.object("grid", &req.Grid); err != nil {
		return failErr(err)
	}
	if req.RankBy, err = c.args.str("rank_by", ""); err != nil {
		return failErr(err)
	}
	if req.Windows, err = c.args.integer("windows", 0, 1, research.MaxWindows); err != nil {
		return failErr(err)
	}
	if err := c.args.object("in_sample", &req.InSample); err != nil {
		return failErr(err)
	}
	if err := c.args.object("out_of_sample", &req.OutOfSample); err != nil {
		return failErr(err)
	}
	if req.Anchored, err = c.args.boolean("anchored", false); err != nil {
		return failErr(err)
	}
	if req.MaxCombinations, err = c.args.integer("max_combinations", 0, 1, 1<<30); err != nil {
		return failErr(err)
	}
	res, err := tb.Research.WalkForward(ctx, req, progressReporter(ctx, c, "walk-forward"))
	if err != nil {
		return failErr(err)
	}
	return tb.runs.walkForward(res, res.RunID, tb.newID) // runs.go: window summaries, curve at the run's resource
}

// progressInterval spaces progress notifications.
const progressInterval = 200 * time.Millisecond

// progressReporter turns engine progress into MCP notifications/progress
// when the request carried a progressToken; otherwise it does nothing.
// Notifications are spaced at least progressInterval apart, except the
// last one.
func progressReporter(ctx context.Context, c *call, what string) func(research.Progress) {
	meta := c.request.Params.Meta
	srv := server.ServerFromContext(ctx)
	if meta == nil || meta.ProgressToken == nil || srv == nil {
		return nil
	}
	token := meta.ProgressToken
	var mu sync.Mutex
	var last time.Time
	return func(p research.Progress) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if p.Done < p.Total && now.Sub(last) < progressInterval {
			return
		}
		last = now
		msg := p.Message
		if msg == "" {
			msg = fmt.Sprintf("%s: %d of %d", what, p.Done, p.Total)
		}
		_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
			"progressToken": token,
			"progress":      p.Done,
			"total":         p.Total,
			"message":       strings.TrimSpace(msg),
		})
	}
}
