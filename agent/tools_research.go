package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/strategy/backtest"
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

func researchHints() hints { return hints{ReadOnly: true, Idempotent: true, OpenWorld: flag(true)} }

// maxCostBps bounds fee_bps and slippage_bps (10%); the schema and the
// handler read the same number.
const maxCostBps = 1000

// List bounds for the research listings.
const (
	defaultListLimit = 100
	maxListLimit     = 500
)

// The research tools' arguments, declared once (see declare.go).
type (
	seriesArg struct {
		Series string `json:"series" arg:"required" desc:"SYMBOL@GRANULARITY (list_series)"`
	}
	// optionalSeriesArg is the series of a run that a portfolio strategy
	// may leave out (it names its own universe).
	optionalSeriesArg struct {
		Series string `json:"series" desc:"SYMBOL@GRANULARITY or a list; omit for a portfolio"`
	}
	rangeArgs struct {
		From string `json:"from" desc:"first bar, inclusive: a date or RFC3339"`
		To   string `json:"to" desc:"last bar, inclusive: a date or RFC3339"`
	}
	costArgs struct {
		Capital     decimalText `json:"capital" arg:"schema=decimal" desc:"default [research]"`
		FeeBps      *float64    `json:"fee_bps" arg:"min=0,max=$maxCostBps" desc:"default [research]"`
		SlippageBps *float64    `json:"slippage_bps" arg:"min=0,max=$maxCostBps" desc:"default [research]"`
		Costs       costOptions `json:"costs" arg:"schema=costs" desc:"funding (bool), borrow_rate, leverage, maintenance_margin, max_volume_pct, volume_cap"`
	}
	// intrabarArg is how protective orders fill inside a bar, for every
	// run that fills them.
	intrabarArg struct {
		Intrabar string `json:"intrabar" arg:"enum=$intrabarRules,default=path" desc:"fill order in a bar"`
	}
	knobsArg struct {
		Params map[string]any `json:"params" arg:"shape=knobs" desc:"knob values"`
	}
	gridArgs struct {
		Grid   research.Grid `json:"grid" arg:"required,schema=grid" desc:"per knob: [values] or {from, to, step}, inclusive"`
		RankBy string        `json:"rank_by" arg:"enum=$rankMetrics,default=$rankSharpe" desc:"max_drawdown ranks lowest first"`
	}
	// runArgs are what every research run takes.
	runArgs struct {
		strategyArgs
		seriesArg
		knobsArg
		rangeArgs
		costArgs
	}
	backtestArgs struct {
		strategyArgs
		optionalSeriesArg
		knobsArg
		rangeArgs
		costArgs
		Fill string `json:"fill" arg:"enum=next_open|close,default=next_open" desc:"close: the deciding bar's (optimistic)"`
		intrabarArg
		Robustness  bool           `json:"robustness" arg:"default=false" desc:"add PSR, max trials, Monte Carlo"`
		Benchmark   string         `json:"benchmark" desc:"a series for alpha and beta (robustness)"`
		TradesLimit int            `json:"trades_limit" arg:"default=$defaultAnswerTrades,min=0,max=$maxAnswerTrades" desc:"first and last trades"`
		Equity      bool           `json:"equity" arg:"default=false" desc:"add the equity curve"`
		Plot        bool           `json:"plot" arg:"default=false" desc:"add an equity and drawdown PNG"`
		Allowance   map[string]any `json:"allowance" desc:"a deployment's limits: max_order_notional, max_position_notional, max_orders_per_day, max_daily_loss, max_drawdown_pct"`
	}
	sweepArgs struct {
		strategyArgs
		optionalSeriesArg
		knobsArg
		rangeArgs
		costArgs
		gridArgs
		intrabarArg
		Top             int  `json:"top" arg:"default=$defaultTop,min=1,max=$maxTop" desc:"how many best to return"`
		Estimate        bool `json:"estimate" arg:"default=false" desc:"only count and time the grid"`
		MaxCombinations int  `json:"max_combinations" arg:"min=1" desc:"refuse a larger grid (at most [research] max_combinations)"`

		DeflateBy string `json:"deflate_by" arg:"enum=$deflateScopes,default=$scopeSeries" desc:"the DSR counts every ledger trial on the series, or the strategy's own"`
		planArg
	}
	walkForwardArgs struct {
		strategyArgs
		optionalSeriesArg
		knobsArg
		rangeArgs
		costArgs
		gridArgs
		intrabarArg
		Windows         int             `json:"windows" arg:"min=1,max=$maxWindows" desc:"default 5 without lengths"`
		InSample        research.Length `json:"in_sample" arg:"schema=length" desc:"bars or a duration (\"180d\")"`
		OutOfSample     research.Length `json:"out_of_sample" arg:"schema=length"`
		Anchored        bool            `json:"anchored" arg:"default=false" desc:"in-sample from the start"`
		Purge           research.Length `json:"purge" arg:"schema=length" desc:"cut before each test window from its training"`
		Embargo         research.Length `json:"embargo" arg:"schema=length" desc:"cut after each test window from later training"`
		MaxCombinations int             `json:"max_combinations" arg:"min=1" desc:"refuse a larger grid per window"`
		planArg
	}
	seriesListArgs struct {
		Limit int `json:"limit" arg:"default=$defaultListLimit,min=1,max=$maxListLimit,clamp" desc:"at most this many"`
	}
	strategyListArgs struct {
		Limit int `json:"limit" arg:"default=$defaultListLimit,min=1,max=$maxListLimit,clamp" desc:"at most this many"`
	}
)

// lengthShape is what in_sample and out_of_sample must be.
const lengthShape = "a number of bars (an integer) or a duration such as \"180d\" or \"720h\""

func (tb *toolbox) researchTools() []*toolSpec {
	return []*toolSpec{
		{
			Name: "list_series", Title: "List bar series", Ring: ringResearch, Hints: researchHints(),
			Description: "Lists the stored bar series: name, symbol, granularity, source, bars, first and last bar.",
			Params:      paramsOf[seriesListArgs](),
			Output:      seriesListSchema,
			Handle:      tb.listSeries,
		},
		{
			Name: "list_strategies", Title: "List project strategies", Ring: ringResearch, Hints: researchHints(),
			Description: "Lists the project's strategies (strategies/*.star) with their summaries.",
			Params:      paramsOf[strategyListArgs](),
			Output:      strategiesSchema,
			Handle:      tb.listStrategies,
		},
		{
			Name: "run_backtest", Title: "Backtest a strategy", Ring: ringResearch, Hints: researchHints(),
			Description: "Backtests a strategy on a stored series, or a portfolio on its universe. Metrics, warnings, settings, first and last round trips, a run link.",
			Params:      paramsOf[backtestArgs](),
			Output:      backtestSchema,
			UI:          uriTearSheetApp, // report_app.go
			Handle:      tb.runBacktest,
		},
		{
			Name: "run_sweep", Title: "Sweep strategy knobs", Ring: ringResearch, Hints: researchHints(),
			Description: "Backtests every combination of a knob grid and ranks them, with the winner's deflated Sharpe and probability of overfitting.",
			Params:      paramsOf[sweepArgs](),
			Output:      sweepSchema,
			Handle:      tb.runSweep,
		},
		{
			Name: "run_walk_forward", Title: "Walk-forward analysis", Ring: ringResearch, Hints: researchHints(),
			Description: "Optimises the knob grid on rolling or anchored in-sample windows, testing each winner on the next.",
			Params:      paramsOf[walkForwardArgs](),
			Output:      walkForwardSchema,
			Handle:      tb.runWalkForward,
		},
		tb.optimizeTool(), // tools_optimize.go
	}
}

func (tb *toolbox) needResearch() *result {
	if tb.Research == nil {
		return failErr(errNoProject)
	}
	return nil
}

func (tb *toolbox) listSeries(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	var in seriesListArgs
	clamped, err := decodeArgs(c.args, &in)
	if err != nil {
		return failErr(err)
	}
	list, err := tb.Research.ListSeries(ctx)
	if err != nil {
		return failErr(err)
	}
	return ok(bounded("series", list.Series, in.Limit, clamped != nil, list.Note))
}

func (tb *toolbox) listStrategies(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	var in strategyListArgs
	clamped, err := decodeArgs(c.args, &in)
	if err != nil {
		return failErr(err)
	}
	list, err := tb.Research.ListStrategies(ctx)
	if err != nil {
		return failErr(err)
	}
	return ok(bounded("strategies", list.Strategies, in.Limit, clamped != nil, list.Note, list.Clamped))
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

// ref is the name-or-source arguments as the engine takes them; the
// engine checks that exactly one is given and validates the name before
// any file access.
func (a strategyArgs) ref() (research.StrategyRef, error) {
	if a.Name == "" && a.Source == "" {
		return research.StrategyRef{}, fmt.Errorf("give name (a strategy in the project; list_strategies shows them) or source (Starlark text)")
	}
	return research.StrategyRef{Name: a.Name, Source: a.Source}, nil
}

// costs are the cost arguments as the engine takes them.
func (a costArgs) costs() research.Costs {
	return research.Costs{Capital: string(a.Capital), FeeBps: a.FeeBps, SlippageBps: a.SlippageBps, CostOptions: backtest.CostOptions(a.Costs)}
}

// costOptions is the costs argument: backtest.CostOptions, refusing a key
// it does not know (a misspelt cost must not go uncharged).
type costOptions backtest.CostOptions

func (c *costOptions) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var o backtest.CostOptions
	if err := d.Decode(&o); err != nil {
		return fmt.Errorf("costs takes funding, borrow_rate, leverage, maintenance_margin, max_volume_pct and volume_cap: %w", err)
	}
	*c = costOptions(o)
	return nil
}

// allowanceArg reads the allowance argument: each limit a decimal (a
// string or a number), max_orders_per_day a whole number.
func allowanceArg(m map[string]any) (*backtest.Allowance, error) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	var kv []string
	for _, k := range names {
		switch v := m[k].(type) {
		case string:
			kv = append(kv, k+"="+v)
		case float64:
			kv = append(kv, k+"="+strconv.FormatFloat(v, 'f', -1, 64))
		default:
			return nil, fmt.Errorf("argument \"allowance\": %s must be a decimal string or a number", k)
		}
	}
	a, err := backtest.ParseAllowance(kv)
	if err != nil {
		return nil, fmt.Errorf("argument \"allowance\": %w", err)
	}
	return a, nil
}

func (tb *toolbox) runBacktest(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	var in backtestArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	ref, err := in.ref()
	if err != nil {
		return failErr(err)
	}
	req := research.BacktestRequest{StrategyRef: ref, Series: in.Series, Params: in.Params, From: in.From, To: in.To, Costs: in.costs(),
		Fill: in.Fill, Intrabar: in.Intrabar, Plot: in.Plot, Report: true} // report: the tear sheet (report.go)
	if in.Robustness {
		req.Robustness = &backtest.Robustness{Benchmark: in.Benchmark}
	}
	if req.Allowance, err = allowanceArg(in.Allowance); err != nil {
		return failErr(err)
	}
	shape := backtestShape{tradesLimit: in.TradesLimit, equity: in.Equity, plot: in.Plot} // compact.go
	req.TradesLimit = maxAnswerTrades                                                     // the store keeps every trade the engine reports
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
	if len(res.HTML) > 0 {
		tb.sheets.put(id, res.HTML) // report.go: ui://wicket/report/{run}
		out.links = append(out.links, reportLink(id))
	}
	return out
}

func (tb *toolbox) runSweep(ctx context.Context, c *call) *result {
	if r := tb.needResearch(); r != nil {
		return r
	}
	var in sweepArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	ref, err := in.ref()
	if err != nil {
		return failErr(err)
	}
	req := research.SweepRequest{StrategyRef: ref, Series: in.Series, Params: in.Params, From: in.From, To: in.To, Costs: in.costs(), Intrabar: in.Intrabar,
		Grid: in.Grid, RankBy: in.RankBy, Top: in.Top, Estimate: in.Estimate, MaxCombinations: in.MaxCombinations, DeflateBy: in.DeflateBy, Plan: in.Plan}
	res, err := tb.Research.Sweep(ctx, req, tb.progressReporter(ctx, c, "sweep"))
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
	var in walkForwardArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	ref, err := in.ref()
	if err != nil {
		return failErr(err)
	}
	req := research.WalkForwardRequest{StrategyRef: ref, Series: in.Series, Params: in.Params, From: in.From, To: in.To, Costs: in.costs(), Intrabar: in.Intrabar,
		Grid: in.Grid, RankBy: in.RankBy, Windows: in.Windows, InSample: in.InSample, OutOfSample: in.OutOfSample,
		Anchored: in.Anchored, Purge: in.Purge, Embargo: in.Embargo, MaxCombinations: in.MaxCombinations, Plan: in.Plan}
	res, err := tb.Research.WalkForward(ctx, req, tb.progressReporter(ctx, c, "walk-forward"))
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
func (tb *toolbox) progressReporter(ctx context.Context, c *call, what string) func(research.Progress) {
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
		now := tb.clock()
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
