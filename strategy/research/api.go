package research

import (
	"encoding/json"

	"wicket/strategy/backtest"
)

// StrategyRef names the strategy a request runs: exactly one of Name (a
// strategy in the project's strategies/ folder, a bare name without .star)
// or Source (Starlark text).
type StrategyRef struct {
	Name   string `json:"name,omitempty"`
	Source string `json:"source,omitempty"`
	// Label is the file name positions in Source are reported under
	// (default "source.star"); it is ignored with Name.
	Label string `json:"label,omitempty"`
}

// Costs are a run's capital and trading costs. Empty fields take the
// project's [research] defaults from wicket.toml.
type Costs struct {
	Capital     string   `json:"capital,omitempty"` // a decimal amount, e.g. "10000"
	FeeBps      *float64 `json:"fee_bps,omitempty"`
	SlippageBps *float64 `json:"slippage_bps,omitempty"`
	// Funding, borrow, margin and the volume cap (backtest.CostOptions).
	// Funding is off unless asked for (FundingDefault): true charges the
	// store's rates (they must exist), false or absent charges none.
	backtest.CostOptions
	// FundingAuto asks for funding when the store holds the pair's rates
	// and none when it does not (the CLI's --funding auto); it applies
	// only when Funding is absent.
	FundingAuto bool `json:"funding_auto,omitempty"`
}

// Settings echo the range and costs a sweep or walk-forward ran with.
type Settings struct {
	Capital     string  `json:"capital"` // decimal string
	FeeBps      float64 `json:"fee_bps"`
	SlippageBps float64 `json:"slippage_bps"`
	From        string  `json:"from,omitempty"` // as resolved, RFC3339; empty when open
	To          string  `json:"to,omitempty"`
	// PurgeBars and EmbargoBars are a walk-forward's purge and embargo
	// in bars (0: none); nil for other runs.
	PurgeBars   *int `json:"purge_bars,omitempty"`
	EmbargoBars *int `json:"embargo_bars,omitempty"`
}

// Progress reports a long request's advance: Done of Total units
// (combinations for a sweep; combinations and out-of-sample runs for a
// walk-forward), with a short message.
type Progress struct {
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Message string `json:"message,omitempty"`
	// RunID is set by an optimisation once a batch is in the ledger: the
	// run to resume should it stop.
	RunID string `json:"run_id,omitempty"`
}

// SeriesInfo describes one stored bar series.
type SeriesInfo struct {
	Series      string `json:"series"` // SYMBOL@GRANULARITY
	Symbol      string `json:"symbol"`
	Granularity string `json:"granularity"`
	Source      string `json:"source"` // "demo" or "import"
	Bars        int    `json:"bars"`
	First       string `json:"first"` // open time of the first bar, RFC3339 UTC
	Last        string `json:"last"`

	// ProviderSymbol and FetchedAt: for bars a provider (binance, alpaca)
	// filled, its own symbol and the last fetch.
	ProviderSymbol string `json:"provider_symbol,omitempty"`
	FetchedAt      string `json:"fetched_at,omitempty"`
}

// SeriesList is every stored series, sorted by name.
type SeriesList struct {
	Series []SeriesInfo `json:"series"`
	// Note says what to do when there are none.
	Note string `json:"note,omitempty"`
}

// StrategyInfo describes one strategy file of the project, read without
// executing it.
type StrategyInfo struct {
	Name    string `json:"name"`    // bare name: strategies/<name>.star
	Summary string `json:"summary"` // first line of the module docstring
	Bytes   int64  `json:"bytes"`
	// Problem is set when the file does not parse (the first syntax error).
	Problem string `json:"problem,omitempty"`
}

// StrategyList is the project's strategies, sorted by name, at most
// MaxStrategies of them.
type StrategyList struct {
	Strategies []StrategyInfo `json:"strategies"`
	Clamped    string         `json:"clamped,omitempty"`
	Note       string         `json:"note,omitempty"`
}

// MaxStrategies bounds StrategyList.
const MaxStrategies = 500

// BacktestRequest is one backtest. Params override knob defaults. Series
// may name a series set (a list, or patterns such as *@1d): then Result
// holds each series' report and the pooled figures.
type BacktestRequest struct {
	StrategyRef
	Series string         `json:"series"`
	Params map[string]any `json:"params,omitempty"`
	From   string         `json:"from,omitempty"` // a date (2024-01-31) or RFC3339, inclusive
	To     string         `json:"to,omitempty"`   // a date (through that day) or RFC3339, inclusive
	Costs
	Fill        string `json:"fill,omitempty"`         // next_open (default) or close
	Intrabar    string `json:"intrabar,omitempty"`     // path (default) or pessimistic
	TradesLimit int    `json:"trades_limit,omitempty"` // default 50, at most 500
	Plot        bool   `json:"plot,omitempty"`         // also draw the PNG chart
	Report      bool   `json:"report,omitempty"`       // also render the tear sheet (one series or a portfolio)
	// Robustness, when set, adds the run's robustness figures.
	Robustness *backtest.Robustness `json:"robustness,omitempty"`
	// Allowance, when set, runs under a deployment's sizing limits and
	// breakers (backtest.Allowance).
	Allowance *backtest.Allowance `json:"allowance,omitempty"`
}

// BacktestResult is a finished backtest: the report (the backtest
// package's Result JSON, byte-identical for identical requests), its
// readable summary, the chart when asked for, and what the strategy
// printed.
type BacktestResult struct {
	Result json.RawMessage `json:"result"`
	Text   string          `json:"text"`
	PNG    []byte          `json:"png,omitempty"`
	HTML   []byte          `json:"html,omitempty"` // the tear sheet, when asked for
	Output string          `json:"output,omitempty"`
	// RunID is the research ledger's id of this run; LedgerWarning says
	// why it is missing when the ledger could not record it.
	RunID         string `json:"run_id,omitempty"`
	LedgerWarning string `json:"ledger_warning,omitempty"`
}

// Rank metrics for SweepRequest.RankBy and WalkForwardRequest.RankBy.
// All rank highest first except max_drawdown, which ranks lowest first.
const (
	RankSharpe       = "sharpe"
	RankCAGR         = "cagr"
	RankCalmar       = "calmar"
	RankProfitFactor = "profit_factor"
	RankTotalReturn  = "total_return"
	RankMaxDrawdown  = "max_drawdown"
)

// RankMetrics lists the valid rank_by values; the first is the default.
var RankMetrics = []string{RankSharpe, RankCAGR, RankCalmar, RankProfitFactor, RankTotalReturn, RankMaxDrawdown}

// Sweep bounds.
const (
	DefaultTop             = 10
	MaxTop                 = 100
	DefaultMaxCombinations = 5000 // when the project sets none
)

// SweepRequest asks for every combination of the grid's knob values to be
// backtested and ranked.
type SweepRequest struct {
	StrategyRef
	// Series is one series, or a series set: a comma-separated list and/or
	// patterns such as *@1d (at most MaxSeriesSet series).
	Series string `json:"series"`
	// Grid maps a knob to the values to try: a list, or {from, to, step}.
	Grid Grid `json:"grid"`
	// Params fix knobs outside the grid (others keep their defaults).
	Params map[string]any `json:"params,omitempty"`
	RankBy string         `json:"rank_by,omitempty"` // one of RankMetrics; default sharpe
	Top    int            `json:"top,omitempty"`     // default 10, at most 100
	From   string         `json:"from,omitempty"`
	To     string         `json:"to,omitempty"`
	Costs
	Intrabar string `json:"intrabar,omitempty"` // path (default) or pessimistic, as a backtest takes it
	// Estimate returns the combination count and an estimated duration,
	// from timing one combination, without running the sweep.
	Estimate bool `json:"estimate,omitempty"`
	// MaxCombinations lowers the cap on the grid's size; it cannot raise
	// it above research.max_combinations in wicket.toml (default 5,000).
	MaxCombinations int `json:"max_combinations,omitempty"`
	// DeflateBy is whose ledger trials the deflated Sharpe ratio over the
	// ledger counts: "series" (the default: every strategy's on the
	// series, so a renamed copy cannot start its count again) or
	// "strategy" (the strategy's own).
	DeflateBy string `json:"deflate_by,omitempty"`
	// Plan names the research plan the sweep's trials count against
	// (plan_sealed.go).
	Plan string `json:"plan,omitempty"`
}

// SweepResult is a ranked sweep. Top holds the best combinations with
// their metrics (the same metrics a backtest reports); DeflatedSharpe says
// how likely the winner's Sharpe ratio is luck given the number of trials.
// A cancelled sweep returns what finished with Partial set.
type SweepResult struct {
	Strategy string `json:"strategy"`
	Series   string `json:"series"`
	// SeriesSet lists the series a series-set sweep ran over (Series
	// named a list or a pattern); its Top are ranked by pooled figures.
	// Its JSON key stays "universe" (the series the run covered).
	SeriesSet    []string `json:"universe,omitempty"`
	RankBy       string   `json:"rank_by"`
	Knobs        []string `json:"knobs"`        // the swept knobs, in declaration order
	Combinations int      `json:"combinations"` // in the grid
	Evaluated    int      `json:"evaluated"`    // finished, including failed ones
	Failed       int      `json:"failed"`       // combinations whose run failed
	Partial      bool     `json:"partial"`
	// PartialReason says why a partial sweep stopped.
	PartialReason  string          `json:"partial_reason,omitempty"`
	Top            []Trial         `json:"top"`
	TopClamped     string          `json:"top_clamped,omitempty"`
	DeflatedSharpe *DeflatedSharpe `json:"deflated_sharpe"`
	// LedgerDeflatedSharpe is the winner's deflated Sharpe ratio over all
	// the research ledger's trials of this strategy on this series (this
	// sweep's included); null without a ledger.
	LedgerDeflatedSharpe *DeflatedSharpe `json:"ledger_deflated_sharpe"`
	// Overfitting is the probability of backtest overfitting (CSCV), for
	// sweeps of at least PBOMinCombinations combinations.
	Overfitting *Overfitting `json:"overfitting,omitempty"`
	// RunID is the research ledger's id of this sweep (every combination's
	// row carries it).
	RunID string `json:"run_id,omitempty"`
	// LookaheadCheck is the lookahead proof's verdict on the winner
	// ("passed (4 prefixes)"), from one more backtest of it.
	LookaheadCheck string `json:"lookahead_check,omitempty"`
	// Errors are the first few failures, with the combination that failed.
	Errors   []TrialError `json:"errors,omitempty"`
	Settings Settings     `json:"settings"`
	Estimate *Estimate    `json:"estimate,omitempty"`
	// PerSeries are a series-set sweep's series with the winner's deflated
	// Sharpe ratio on each.
	PerSeries []SeriesSweep `json:"per_series,omitempty"`
	Warnings  []string      `json:"warnings"`
}

// Trial is one evaluated combination.
type Trial struct {
	Rank int `json:"rank"` // 1 is the best
	// Params are every knob's value in this run (swept, fixed and default).
	Params map[string]any `json:"params"`
	// Score is the rank_by metric; null when undefined (no variance, no
	// losing trade), and such trials rank last.
	Score *float64 `json:"score"`
	// Metrics are exactly what a backtest of these params reports; for a
	// series set, the Pooled figures.
	Metrics json.RawMessage `json:"metrics"`
	// Series are a series set's per-series metrics of these params.
	Series []SeriesMetrics `json:"series,omitempty"`
}

// TrialError is a combination whose run failed.
type TrialError struct {
	Params  map[string]any `json:"params"`
	Message string         `json:"message"`
}

// MaxTrialErrors bounds SweepResult.Errors.
const MaxTrialErrors = 5

// DeflatedSharpe is the deflated Sharpe ratio of a sweep's winner: the
// probability that its true Sharpe ratio is above zero once the number of
// trials, their spread and the non-normality of its returns are accounted
// for. Sharpe ratios here are per period (not annualised).
type DeflatedSharpe struct {
	DSR               *float64 `json:"dsr"`                 // null when undefined
	Sharpe            *float64 `json:"sharpe_per_period"`   // the winner's SR
	ExpectedMaxSharpe *float64 `json:"expected_max_sharpe"` // SR0: the best SR expected from luck alone
	Trials            int      `json:"trials"`              // N: the trials tried, failed ones included
	TrialsVariance    *float64 `json:"trials_variance"`     // V: variance of the trials' defined SRs
	Skewness          *float64 `json:"skewness"`            // γ3 of the winner's returns
	Kurtosis          *float64 `json:"kurtosis"`            // γ4 (non-excess)
	Returns           int      `json:"returns"`             // T
	// Over the research ledger: whose trials N counts (ledger.Scopes),
	// and the counts of the series' trials (every strategy's) and of the
	// strategy's own.
	Scope          string `json:"scope,omitempty"`
	SeriesTrials   int    `json:"series_trials,omitempty"`
	StrategyTrials int    `json:"strategy_trials,omitempty"`
	// SeriesDSR is, when Scope is strategy, the DSR over every strategy's
	// trials on the series (what the default scope reports), so an answer
	// deflated by the smaller N always carries the larger one too.
	SeriesDSR *float64 `json:"series_dsr,omitempty"`
	Note      string   `json:"note"`
}

// Estimate is what a sweep would cost.
type Estimate struct {
	Combinations int `json:"combinations"`
	Workers      int `json:"workers"`
	// PerCombinationSeconds is the time one combination took, measured.
	PerCombinationSeconds float64 `json:"per_combination_seconds"`
	// Seconds is the estimated duration of the whole sweep.
	Seconds float64 `json:"seconds"`
	Note    string  `json:"note"`
}

// Walk-forward bounds.
const (
	MaxWindows = 100
	// DefaultWindows is the window count when neither a count nor any
	// length is given.
	DefaultWindows = 5
	// DefaultInSampleRatio is how many out-of-sample lengths an in-sample
	// window spans when only a window count is given (80/20).
	DefaultInSampleRatio = 4
)

// WalkForwardRequest asks for a walk-forward analysis: on each window,
// sweep the grid in-sample, pick the best by RankBy, and trade it on the
// following out-of-sample window.
//
// The windows are given as a count (Windows), as lengths (InSample and
// OutOfSample), or as a count and one length; with none of them there are
// DefaultWindows. With only a count, the out-of-sample windows tile the
// end of the range and each in-sample window is DefaultInSampleRatio
// out-of-sample lengths long.
type WalkForwardRequest struct {
	StrategyRef
	Series      string         `json:"series"`
	Grid        Grid           `json:"grid"`
	Params      map[string]any `json:"params,omitempty"`
	Windows     int            `json:"windows,omitempty"`
	InSample    Length         `json:"in_sample,omitzero"`
	OutOfSample Length         `json:"out_of_sample,omitzero"`
	// Anchored keeps every in-sample window starting at the range's start
	// (growing); otherwise the in-sample window rolls.
	Anchored bool `json:"anchored,omitempty"`
	// Purge leaves the bars just before each out-of-sample window out
	// of that window's in-sample sweep; Embargo leaves the bars just
	// after each out-of-sample window out of every later window's
	// in-sample ranking (purge.go says how). Lengths like InSample; none
	// when zero, the default.
	Purge           Length `json:"purge,omitzero"`
	Embargo         Length `json:"embargo,omitzero"`
	RankBy          string `json:"rank_by,omitempty"`
	From            string `json:"from,omitempty"`
	To              string `json:"to,omitempty"`
	MaxCombinations int    `json:"max_combinations,omitempty"`
	Costs
	Intrabar string `json:"intrabar,omitempty"` // path (default) or pessimistic, as a backtest takes it
	Plan     string `json:"plan,omitempty"`     // the research plan its trials count against
}

// Span is a range of bars, by open time, both ends inclusive.
type Span struct {
	From string `json:"from"`
	To   string `json:"to"`
	Bars int    `json:"bars"`
}

// Window is one walk-forward step.
type Window struct {
	Index       int  `json:"index"` // 1-based
	InSample    Span `json:"in_sample"`
	OutOfSample Span `json:"out_of_sample"`
	// Purged are the bars between the in-sample and the out-of-sample
	// window that the purge left out; Embargoed the in-sample bars the
	// embargo left out of the ranking (each just after an earlier
	// out-of-sample window).
	Purged    *Span  `json:"purged,omitempty"`
	Embargoed []Span `json:"embargoed,omitempty"`
	// Params are the knob values chosen in-sample.
	Params map[string]any `json:"params"`
	// InSampleScore and OutOfSampleScore are the rank_by metric.
	InSampleScore    *float64 `json:"in_sample_score"`
	OutOfSampleScore *float64 `json:"out_of_sample_score"`
	// Efficiency is the window's annualised out-of-sample return over its
	// annualised in-sample return; null when the in-sample return is <= 0.
	Efficiency         *float64        `json:"efficiency"`
	InSampleMetrics    json.RawMessage `json:"in_sample_metrics"`
	OutOfSampleMetrics json.RawMessage `json:"out_of_sample_metrics"`
	Evaluated          int             `json:"evaluated"` // in-sample combinations that ran
	Failed             int             `json:"failed"`
	// LookaheadCheck is the lookahead proof's verdict on the in-sample
	// winner over this window's bars (in-sample and out-of-sample).
	LookaheadCheck string `json:"lookahead_check,omitempty"`
	// DeflatedSharpe and Overfitting are the in-sample sweep's winner's
	// deflated Sharpe ratio over the window's combinations and their PBO
	// (for at least PBOMinCombinations combinations), as a sweep reports
	// them; an export of the run recomputes both per window.
	DeflatedSharpe *DeflatedSharpe `json:"deflated_sharpe,omitempty"`
	Overfitting    *Overfitting    `json:"overfitting,omitempty"`
}

// Stitched are the metrics of the stitched out-of-sample equity curve
// (the spec's definitions over the concatenated windows).
type Stitched struct {
	TotalReturn    *float64 `json:"total_return"`
	CAGR           *float64 `json:"cagr"`
	Sharpe         *float64 `json:"sharpe"`
	Sortino        *float64 `json:"sortino"`
	MaxDrawdown    *float64 `json:"max_drawdown"`
	Calmar         *float64 `json:"calmar"`
	Trades         int      `json:"trades"` // closed round trips across windows
	FinalEquity    string   `json:"final_equity"`
	Bars           int      `json:"bars"`
	Start          string   `json:"start"`
	End            string   `json:"end"`
	PeriodsPerYear float64  `json:"periods_per_year"`
}

// EquityPoint is one point of a reported equity curve.
type EquityPoint struct {
	Time     string   `json:"time"`
	Equity   string   `json:"equity"` // decimal string
	Drawdown *float64 `json:"drawdown"`
}

// WalkForwardResult is a finished (or, when cancelled, partial)
// walk-forward analysis.
type WalkForwardResult struct {
	Strategy     string   `json:"strategy"`
	Series       string   `json:"series"`
	RankBy       string   `json:"rank_by"`
	Anchored     bool     `json:"anchored"`
	Knobs        []string `json:"knobs"`
	Combinations int      `json:"combinations"` // per in-sample window
	Windows      []Window `json:"windows"`
	// OutOfSample are the stitched out-of-sample metrics (null when no
	// window finished); Equity the stitched curve, downsampled to at most
	// 500 points.
	OutOfSample *Stitched     `json:"out_of_sample"`
	Equity      []EquityPoint `json:"equity"`
	// InSampleAnnualReturn is the mean of the in-sample winners' CAGR;
	// OutOfSampleAnnualReturn the stitched CAGR; Efficiency their ratio
	// (walk-forward efficiency), null when the in-sample return is <= 0.
	InSampleAnnualReturn    *float64 `json:"in_sample_annual_return"`
	OutOfSampleAnnualReturn *float64 `json:"out_of_sample_annual_return"`
	Efficiency              *float64 `json:"walk_forward_efficiency"`
	Partial                 bool     `json:"partial"`
	PartialReason           string   `json:"partial_reason,omitempty"`
	Settings                Settings `json:"settings"`
	// SeriesSet, PerSeries and Pooled describe a walk-forward over a
	// series set: one analysis per series, and their out-of-sample
	// figures pooled. SeriesSet's JSON key stays "universe".
	SeriesSet []string            `json:"universe,omitempty"`
	PerSeries []WalkForwardResult `json:"per_series,omitempty"`
	Pooled    *Pooled             `json:"pooled,omitempty"`
	Warnings  []string            `json:"warnings"`
	RunID     string              `json:"run_id,omitempty"` // the research ledger's id of this run
	// LookaheadCheck sums up the windows' lookahead checks ("passed (4
	// prefixes) for the winner of each of 6 windows"); a winner that fails
	// its check fails the walk-forward.
	LookaheadCheck string `json:"lookahead_check,omitempty"`
}
