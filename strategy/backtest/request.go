package backtest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
)

// Request is a backtest as the CLI, the MCP server or the data service
// asks a worker for it. It is plain JSON so it can cross the worker pipe
// and the data service's HTTP API unchanged.
type Request struct {
	// Source is the strategy's Starlark text and Name the file name its
	// positions are reported under (e.g. "sma_cross.star"). A caller that
	// is given a strategy name reads the project file itself: a worker
	// never turns a name into a path.
	Source string `json:"source"`
	Name   string `json:"name"`
	// Series is SYMBOL@GRANULARITY in the history store at HistoryPath.
	Series string         `json:"series"`
	Params map[string]any `json:"params,omitempty"`
	// From and To bound the range by bar open time, both inclusive: RFC3339
	// or a date (From at the day's start, To through the day's end).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Capital is a decimal string; empty means the default.
	Capital     string   `json:"capital,omitempty"`
	FeeBps      *float64 `json:"fee_bps,omitempty"`
	SlippageBps *float64 `json:"slippage_bps,omitempty"`
	Fill        string   `json:"fill,omitempty"` // next_open (default) or close
	// Intrabar is how a bar's path fills protective orders: path (the
	// default) or pessimistic (internal/intrabar).
	Intrabar    string `json:"intrabar,omitempty"`
	TradesLimit int    `json:"trades_limit,omitempty"`
	// Robustness, when set, adds the run's robustness figures.
	Robustness *Robustness `json:"robustness,omitempty"`
	Plot       bool        `json:"plot,omitempty"` // also draw the PNG chart
	// Report asks for the run's tear sheet (strategy/tearsheet), which
	// the worker renders where it holds the whole run.
	Report bool `json:"report,omitempty"`
	// Allowance, when set, runs under a deployment's limits and breakers.
	Allowance *Allowance `json:"allowance,omitempty"`
	// The costs beyond fee and slippage (costs.go); the worker that reads
	// the store adds the funding rates (CostOptions.FundingWanted).
	CostOptions

	// Set by the wiring, never by an agent: the history store file and
	// the project's indicators directory (for load("indicators/...")).
	HistoryPath   string `json:"history_path"`
	IndicatorsDir string `json:"indicators_dir,omitempty"`
	// Digest, when set, is the digest of the range's bars as the caller
	// loaded them (strategy.Bars.Digest): a worker that holds those bars
	// from a sweep uses them instead of reading the store again. Without
	// it the worker always reads the store.
	Digest string `json:"digest,omitempty"`
	// LookaheadOnly asks for the lookahead proof's verdict alone: Result
	// is {"lookahead_check": ...} and nothing else is reported (a sweep's
	// check of its winner, whose metrics it has already).
	LookaheadOnly bool `json:"lookahead_only,omitempty"`
	// ProofSeed seeds the lookahead proof's drawn cuts; 0 (the default)
	// draws one at random, which the verdict names. Give the seed of a
	// recorded verdict to rerun its proof with the same cuts.
	ProofSeed uint64 `json:"proof_seed,omitempty"`
}

// Response is what a worker returns for a Request.
type Response struct {
	// Result is the Result's JSON, byte-identical for identical requests
	// that name their ProofSeed (else the lookahead verdict names the seed
	// drawn).
	Result json.RawMessage `json:"result"`
	// Text is the readable summary (Result.WriteText).
	Text string `json:"text"`
	// PNG is the equity and drawdown chart, when the request asked for it.
	PNG []byte `json:"png,omitempty"`
	// HTML is the tear sheet, when the request asked for it.
	HTML []byte `json:"html,omitempty"`
	// Output is what the strategy printed.
	Output string `json:"output,omitempty"`
}

// Config turns the request's costs, capital, fill and trade limit into a
// Config over base (the project's research defaults), and parses the
// range. Errors are Invalid and name the field.
func (r Request) Config(base Config) (Config, error) {
	cfg := base
	if r.Capital != "" {
		c, err := decimal.NewFromString(strings.TrimSpace(r.Capital))
		if err != nil || !c.IsPositive() {
			return cfg, invalidf("capital %q must be a positive decimal amount, e.g. \"10000\"", r.Capital)
		}
		cfg.Capital = c
	}
	if r.FeeBps != nil {
		cfg.FeeBps = *r.FeeBps
	}
	if r.SlippageBps != nil {
		cfg.SlippageBps = *r.SlippageBps
	}
	for _, c := range [...]struct {
		name string
		v    float64
	}{{"fee_bps", cfg.FeeBps}, {"slippage_bps", cfg.SlippageBps}} {
		if !(c.v >= 0 && c.v < 10000) || math.IsNaN(c.v) {
			return cfg, invalidf("%s %v must be at least 0 and below 10000", c.name, c.v)
		}
	}
	fill, err := ParseFill(r.Fill)
	if err != nil {
		return cfg, err
	}
	cfg.Fill = fill
	if cfg.Intrabar, err = intrabar.ParseRule(r.Intrabar); err != nil {
		return cfg, invalidf("%v", err)
	}
	if r.TradesLimit < 0 {
		return cfg, invalidf("trades_limit %d must not be negative (0 means %d, the most is %d)", r.TradesLimit, DefaultTradesLimit, MaxTradesLimit)
	}
	cfg.TradesLimit = r.TradesLimit
	if r.Robustness != nil {
		if err := r.Robustness.Check(); err != nil {
			return cfg, err
		}
	}
	if err := r.Allowance.Check(); err != nil {
		return cfg, err
	}
	cfg.Allowance = r.Allowance
	if cfg.Costs, err = r.CostOptions.Costs(); err != nil {
		return cfg, err
	}
	if cfg.From, err = ParseTime("from", r.From, false); err != nil {
		return cfg, err
	}
	if cfg.To, err = ParseTime("to", r.To, true); err != nil {
		return cfg, err
	}
	if !cfg.From.IsZero() && !cfg.To.IsZero() && cfg.To.Before(cfg.From) {
		return cfg, invalidf("to %s is before from %s", r.To, r.From)
	}
	return cfg, nil
}

// ParseTime reads a range bound: RFC3339 (any offset), or a date that
// means the start of that UTC day, or its last second when endOfDay is
// set (so a To date includes that day's bars). Empty is the zero time.
func ParseTime(field, s string, endOfDay bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Second)
		}
		return t, nil
	}
	return time.Time{}, invalidf("%s %q is neither a date (2024-01-31) nor RFC3339 (2024-01-31T15:00:00Z)", field, s)
}

// Report renders a result for a Response: its JSON, its text, and the
// chart when asked for.
func Report(r *Result, plot bool) (Response, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return Response{}, fmt.Errorf("backtest: encode result: %w", err)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		return Response{}, err
	}
	resp := Response{Result: b, Text: text.String()}
	if plot {
		if resp.PNG, err = PNG(r); err != nil {
			return Response{}, err
		}
	}
	return resp, nil
}
