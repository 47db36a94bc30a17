package worker

import (
	"context"
	"strings"

	"wicket/strategy/scriptapi"
)

// The request kinds of the strategy handlers (strategy/worker/run).
const (
	KindValidate = "validate" // StrategyRequest → scriptapi.Report
	KindParams   = "params"   // StrategyRequest → ParamsResult
)

// MemoBytes is the indicator cache budget of a worker process
// (ta.NewMemo(MemoBytes)): what its indicator columns may keep resident,
// two of a million bars (ta.Columns). A column of a million bars pushed
// out of it goes to the worker's spill (strategy/worker/handlers,
// spill.go), from which it is read back for about 35 µs of CPU instead of
// computed again for about 2–3 ms, so a larger budget saves next to
// nothing on long series and costs 8 MB resident a column (about 24 ms
// to fault in on a virtual machine that backs a page only when first
// written). On the 100-combination million-bar sweep on two workers, 16
// MiB with the spill peaked at 283–292 MB (caller and workers) against
// 317–329 MB with 32 MiB and the spill, and 308–311 MB with 32 MiB and no
// spill (which computed 71–72 SMAs for 18 distinct lengths; with the
// spill 33–36, each worker each of its lengths once).
const MemoBytes = 16 << 20

// StrategyRequest names a strategy by its text: a worker never opens a
// strategy file. IndicatorsDir is the project's indicators directory, the
// only place load("indicators/<name>") reads from (through an os.Root, so
// not even a symlink leads out of it).
type StrategyRequest struct {
	Name          string           `json:"name"` // the name positions are reported under, e.g. "sma_cross.star"
	Source        string           `json:"source"`
	IndicatorsDir string           `json:"indicators_dir,omitempty"`
	Overrides     map[string]any   `json:"overrides,omitempty"`
	Limits        scriptapi.Limits `json:"limits,omitempty"`
	// Bars, in a params request, is the range a sweep is about to run
	// over: the worker reads it into its bar cache first (a store error
	// comes before a strategy's), so the sweep's chunks on this worker and
	// the winner's lookahead check find it there, and reports what it read
	// (ParamsResult.Bars): the caller never reads the bars itself.
	Bars *BarsRange `json:"bars,omitempty"`
}

// BarsRange names the bars of Series between From and To (RFC 3339 or
// dates, inclusive; empty: open) in the history store at HistoryPath.
type BarsRange struct {
	HistoryPath string `json:"history_path"`
	Series      string `json:"series"`
	From        string `json:"from,omitempty"`
	To          string `json:"to,omitempty"`
	// ShareDir, in a params request, is a directory private to the caller
	// in which the worker writes the bars it read, once, as a shared bars
	// file (strategy.Bars.Encode's form), named in ParamsResult.Shared:
	// the other workers of the machine map that file read-only
	// (SweepChunk.SharedBars) instead of each reading its own copy.
	ShareDir string `json:"share_dir,omitempty"`
	// ShareFrom is the fewest bars the worker shares so; a smaller range
	// is only read (0 shares any).
	ShareFrom int `json:"share_from,omitempty"`
}

// ParamsResult is a strategy's style, summary and knobs, and the bars the
// request named, once read.
type ParamsResult struct {
	Style   scriptapi.Style  `json:"style"`
	Summary string           `json:"summary"`
	Knobs   []scriptapi.Knob `json:"knobs"`
	// Universe and Rebalance are a portfolio strategy's declared series
	// (patterns as written) and rebalance schedule; empty for one series.
	Universe  []string  `json:"universe,omitempty"`
	Rebalance string    `json:"rebalance,omitempty"`
	Bars      *BarsSeen `json:"bars,omitempty"`
	// Shared is the shared bars file written in BarsRange.ShareDir.
	Shared string `json:"shared,omitempty"`
}

// Validate validates a strategy in a worker (script.Validate).
func (p *Pool) Validate(ctx context.Context, req StrategyRequest) (scriptapi.Report, error) {
	return Call[StrategyRequest, scriptapi.Report](ctx, p, KindValidate, req)
}

// Params discovers a strategy's knobs in a worker.
// One that reads bars goes to the worker that last read the same range,
// when it is idle: its cache may hold them still, and it knows whether
// the store changed since.
func (p *Pool) Params(ctx context.Context, req StrategyRequest) (ParamsResult, error) {
	var resp ParamsResult
	key := ""
	if b := req.Bars; b != nil {
		key = strings.Join([]string{KindParams, b.HistoryPath, b.Series, b.From, b.To}, "\x00")
	}
	err := p.doOn(ctx, key, KindParams, req, &resp)
	return resp, err
}

// KindSummaries reads the module docstrings of strategy files without
// running them: SummariesRequest → SummariesResult.
const KindSummaries = "summaries"

// StrategyText is one strategy file's name and text.
type StrategyText struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// SummariesRequest asks for the summary of each file.
type SummariesRequest struct {
	Files []StrategyText `json:"files"`
}

// Summary is one file's docstring first line, or the first syntax error
// that kept it from being read.
type Summary struct {
	Summary string `json:"summary"`
	Problem string `json:"problem,omitempty"`
}

// SummariesResult holds one Summary per file, in order.
type SummariesResult struct {
	Summaries []Summary `json:"summaries"`
}

// Summaries reads strategy summaries in a worker.
func (p *Pool) Summaries(ctx context.Context, req SummariesRequest) (SummariesResult, error) {
	return Call[SummariesRequest, SummariesResult](ctx, p, KindSummaries, req)
}
