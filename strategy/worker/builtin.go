package worker

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"wicket/strategy/script"
	"wicket/strategy/ta"
)

// The request kinds Builtin serves.
const (
	KindValidate = "validate" // StrategyRequest → script.Report
	KindParams   = "params"   // StrategyRequest → ParamsResult
)

// MemoBytes is the indicator cache budget of a worker process
// (ta.NewMemo(MemoBytes)): room for sixteen indicator columns of a
// million bars, which a sweep's combinations share, while a worker's
// resident memory over a million-bar sweep stays under 300 MB.
const MemoBytes = 128 << 20

// StrategyRequest names a strategy by its text: a worker never opens a
// strategy file. IndicatorsDir is the project's indicators directory, the
// only place load("indicators/<name>") reads from (through an os.Root, so
// not even a symlink leads out of it).
type StrategyRequest struct {
	Name          string         `json:"name"` // the name positions are reported under, e.g. "sma_cross.star"
	Source        string         `json:"source"`
	IndicatorsDir string         `json:"indicators_dir,omitempty"`
	Overrides     map[string]any `json:"overrides,omitempty"`
	Limits        script.Limits  `json:"limits,omitempty"`
}

// ParamsResult is a strategy's style, summary and knobs.
type ParamsResult struct {
	Style   script.Style  `json:"style"`
	Summary string        `json:"summary"`
	Knobs   []script.Knob `json:"knobs"`
}

// Builtin returns the handlers for validate, params, backtest and sweep. memo is the
// worker's indicator cache, shared by its handlers across requests. Add
// other kinds to the returned table:
//
//	h := worker.Builtin(memo)
//	h["sweep"] = worker.Typed(runSweep)
func Builtin(memo *ta.Memo) Handlers {
	return Handlers{
		KindValidate: Typed(func(ctx context.Context, req StrategyRequest) (script.Report, error) {
			opts, closeFS, err := req.Options(memo)
			if err != nil {
				return script.Report{}, err
			}
			defer closeFS()
			return script.Validate(ctx, script.Source{Name: req.Name, Text: req.Source}, opts), nil
		}),
		KindBacktest: runBacktest(memo),
		KindSweep:    runSweep(memo),
		KindParams: Typed(func(ctx context.Context, req StrategyRequest) (ParamsResult, error) {
			opts, closeFS, err := req.Options(memo)
			if err != nil {
				return ParamsResult{}, err
			}
			defer closeFS()
			s, err := script.Load(ctx, script.Source{Name: req.Name, Text: req.Source}, opts)
			if err != nil {
				return ParamsResult{}, err
			}
			return ParamsResult{Style: s.Style(), Summary: s.Summary(), Knobs: s.Knobs()}, nil
		}),
	}
}

// Options turns the request into script options inside a worker: the
// indicators directory opened as an os.Root. Call the returned func when
// done with the strategy.
func (r StrategyRequest) Options(memo *ta.Memo) (script.Options, func(), error) {
	opts := script.Options{Overrides: r.Overrides, Limits: r.Limits, Memo: memo}
	if r.IndicatorsDir == "" {
		return opts, func() {}, nil
	}
	root, err := os.OpenRoot(r.IndicatorsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return opts, func() {}, nil
	}
	if err != nil {
		return opts, nil, &Error{Kind: KindRequest, Msg: "open the indicators directory: " + err.Error(), err: err}
	}
	opts.Indicators = root.FS()
	return opts, func() { root.Close() }, nil
}

// Validate runs script.Validate in a worker.
func (p *Pool) Validate(ctx context.Context, req StrategyRequest) (script.Report, error) {
	return Call[StrategyRequest, script.Report](ctx, p, KindValidate, req)
}

// Params discovers a strategy's knobs in a worker.
func (p *Pool) Params(ctx context.Context, req StrategyRequest) (ParamsResult, error) {
	return Call[StrategyRequest, ParamsResult](ctx, p, KindParams, req)
}
