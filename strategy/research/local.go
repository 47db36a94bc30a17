package research

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"wicket/internal/project"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// Config wires a Local.
type Config struct {
	// Project gives the strategies/ and indicators/ folders and the
	// history store. A zero Project (no root) makes every method that
	// needs one fail with KindNotFound.
	Project project.Project
	// Research holds the defaults: capital, fee_bps, slippage_bps and
	// max_combinations (wicket.toml [research]). A zero Research means
	// project.Defaults().Research; a zero MaxCombinations means 5,000.
	Research project.Research
	// Pool runs every strategy execution. Its size is the sweep's
	// parallelism.
	Pool *worker.Pool
	// Chunks, when set, runs the sweep chunks instead of Pool: a research
	// cluster (strategy/cluster). Everything else still runs in Pool.
	Chunks Dispatcher
	// Now times the probe of an estimate; nil means time.Now.
	Now func() time.Time
	// Computed, when set, receives the indicator computations each sweep
	// chunk caused in its worker (catalog entry or series operation → count,
	// from the worker's memo). It is for diagnostics, tests and benchmarks,
	// and is never part of a result.
	Computed func(map[string]uint64)
	// Timing, when set, receives where each single-series sweep's time
	// went, once it returns. Like Computed it is for diagnostics and
	// benchmarks, and is never part of a result.
	Timing func(SweepTiming)
	// Recorder, when set, is the research ledger every run is appended
	// to (see record.go).
	Recorder Recorder
	// ShareFromBars is the fewest bars the workers of this machine share
	// one read-only copy of during a sweep; below it each worker reads its
	// own. 0 means DefaultShareFromBars.
	ShareFromBars int
	// ProofSeed gives the seed of each lookahead proof a run asks a worker
	// for; nil (the default) lets the worker draw one at random, which the
	// verdict names. Tests fix it to compare runs.
	ProofSeed func() uint64
}

// proofSeed is the seed of the next proof (0: the worker draws one).
func (l *Local) proofSeed() uint64 {
	if l.cfg.ProofSeed == nil {
		return 0
	}
	return l.cfg.ProofSeed()
}

// DefaultShareFromBars is Config.ShareFromBars' default: 131,072 bars are
// 6 MB a copy. Below it, writing and mapping the shared file costs more
// than the copies save (for 17,544 hourly bars, 2 ms of a sweep's fixed
// cost against under 1 MB a worker).
const DefaultShareFromBars = 1 << 17

// Local answers research requests in this process over the project's
// history store, running strategies in the worker pool. It is safe for
// concurrent use.
type Local struct {
	cfg Config
}

// NewLocal returns a Local. It does not touch the project until asked.
func NewLocal(cfg Config) *Local {
	if !cfg.Research.Capital.IsPositive() {
		mc := cfg.Research.MaxCombinations
		cfg.Research = project.Defaults().Research
		if mc > 0 {
			cfg.Research.MaxCombinations = mc
		}
	}
	if cfg.Research.MaxCombinations <= 0 {
		cfg.Research.MaxCombinations = DefaultMaxCombinations
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Local{cfg: cfg}
}

func (l *Local) needProject() error {
	if l.cfg.Project.Root == "" {
		return errorf(KindNotFound, "no wicket project: create one with `wicket init` and run inside it (or pass --project DIR)")
	}
	return nil
}

// Dispatcher runs sweep chunks (worker.KindSweep): the local worker pool,
// or a cluster of workers on other machines. Size is how many chunks it
// runs at once; Sweep is safe for concurrent use.
type Dispatcher interface {
	Size() int
	Sweep(ctx context.Context, req worker.SweepChunk) (worker.SweepChunkResult, error)
}

// pipeliner is a Dispatcher that is kept busiest with more chunks under
// way than it runs at once (a cluster: each worker's next chunk waits on
// the queue for it, rather than for its answer to reach this process and
// another chunk to be sent).
type pipeliner interface {
	InFlight() int
}

// warmer is a Dispatcher whose workers are better off with a sweep's
// bars before its first chunk (a cluster: Warm reads and hashes them
// once, ships them and has the workers fetch them, while the params
// request compiles the strategy here, and says what it read).
type warmer interface {
	Warm(ctx context.Context, bars worker.BarsRange) (worker.BarsSeen, error)
}

// readier is a Dispatcher that must find its workers before a sweep is
// cut into chunks (a cluster: how many workers it has sets the chunks).
type readier interface {
	Ready(ctx context.Context) error
}

// chunks is the dispatcher of sweep chunks.
func (l *Local) chunks() Dispatcher {
	if l.cfg.Chunks != nil {
		return l.cfg.Chunks
	}
	return l.cfg.Pool
}

// chunkWorkers is how many chunks run at once, once the dispatcher is
// ready: a cluster's error (unreachable, no workers) comes here.
func (l *Local) chunkWorkers(ctx context.Context) (int, error) {
	d := l.chunks()
	if r, ok := d.(readier); ok {
		if err := r.Ready(ctx); err != nil {
			return 0, errorf(KindUnavailable, "%v", err)
		}
	}
	return max(1, d.Size()), nil
}

func (l *Local) needPool() error {
	if l.cfg.Pool == nil {
		return errorf(KindUnavailable, "strategy workers are not available here; research runs strategies only in worker processes")
	}
	return nil
}

// ListSeries lists the series in the project's history store.
func (l *Local) ListSeries(ctx context.Context) (SeriesList, error) {
	if err := l.needProject(); err != nil {
		return SeriesList{}, err
	}
	if err := ctx.Err(); err != nil {
		return SeriesList{}, classify(err)
	}
	out := SeriesList{Series: []SeriesInfo{}}
	store, err := history.OpenReadOnly(l.cfg.Project.HistoryPath())
	if history.IsNotFound(err) {
		out.Note = noSeries
		return out, nil
	}
	if err != nil {
		return SeriesList{}, classify(err)
	}
	defer store.Close()
	infos, err := store.List()
	if err != nil {
		return SeriesList{}, classify(err)
	}
	for _, s := range infos {
		info := SeriesInfo{
			Series: s.Name, Symbol: s.Symbol, Granularity: string(s.Granularity), Source: s.Source, Bars: s.Bars,
			First: s.First.UTC().Format(time.RFC3339), Last: s.Last.UTC().Format(time.RFC3339),
			ProviderSymbol: s.ProviderSymbol,
		}
		if !s.FetchedAt.IsZero() {
			info.FetchedAt = s.FetchedAt.UTC().Format(time.RFC3339)
		}
		out.Series = append(out.Series, info)
	}
	if len(out.Series) == 0 {
		out.Note = noSeries
	}
	return out, nil
}

// noSeries is SeriesList.Note when the store holds no series.
const noSeries = "no series yet: the operator runs `wicket data seed-demo` for demo data, `wicket data fetch SYMBOL@1h` for real bars or `wicket data import FILE.csv --series SYMBOL@1h`"

// maxStrategyBytes bounds a strategy's source, by name or as text.
const maxStrategyBytes = project.MaxStrategyBytes

// ListStrategies lists the project's strategies/*.star with the first
// line of each docstring, parsed without executing anything.
func (l *Local) ListStrategies(ctx context.Context) (StrategyList, error) {
	if err := l.needProject(); err != nil {
		return StrategyList{}, err
	}
	out := StrategyList{Strategies: []StrategyInfo{}}
	dir := l.cfg.Project.StrategiesDir()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		out.Note = "no strategies/ folder: create a strategy with `wicket strategy new NAME --from TEMPLATE`, or pass source to the research tools"
		return out, nil
	}
	if err != nil {
		return StrategyList{}, errorf(KindUnavailable, "list strategies: %v", err)
	}
	var names []string
	for _, de := range entries {
		name, ok := strings.CutSuffix(de.Name(), ".star")
		if ok && !de.IsDir() && project.ValidName("strategy", name) == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) > MaxStrategies {
		out.Clamped = fmt.Sprintf("showing the first %d of %d strategies", MaxStrategies, len(names))
		names = names[:MaxStrategies]
	}
	// The summaries are parsed in a worker (this process never links the
	// Starlark interpreter), in batches of bounded size.
	var batch []worker.StrategyText
	var at []int // index into out.Strategies of each file in batch
	batchBytes := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := l.needPool(); err != nil {
			return err
		}
		res, err := l.cfg.Pool.Summaries(ctx, worker.SummariesRequest{Files: batch})
		if err != nil {
			return classify(err)
		}
		for j, s := range res.Summaries {
			if j < len(at) {
				out.Strategies[at[j]].Summary, out.Strategies[at[j]].Problem = s.Summary, s.Problem
			}
		}
		batch, at, batchBytes = nil, nil, 0
		return nil
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return StrategyList{}, classify(err)
		}
		info := StrategyInfo{Name: name}
		text, size, err := l.cfg.Project.ReadStrategy(name)
		info.Bytes = size
		out.Strategies = append(out.Strategies, info)
		if err != nil {
			out.Strategies[len(out.Strategies)-1].Problem = err.Error()
			continue
		}
		if batchBytes+len(text) > summaryBatchBytes {
			if err := flush(); err != nil {
				return StrategyList{}, err
			}
		}
		batch = append(batch, worker.StrategyText{Name: name + ".star", Text: text})
		at = append(at, len(out.Strategies)-1)
		batchBytes += len(text)
	}
	if err := flush(); err != nil {
		return StrategyList{}, err
	}
	if len(out.Strategies) == 0 {
		out.Note = "no strategies yet: create one with `wicket strategy new NAME --from TEMPLATE`, or pass source to the research tools"
	}
	return out, nil
}

// summaryBatchBytes bounds the strategy text of one summaries request.
const summaryBatchBytes = 16 << 20

// resolve turns a StrategyRef into the file name positions are reported
// under and the source text.
func (l *Local) resolve(ref StrategyRef) (label, source string, err error) {
	switch {
	case ref.Name != "" && ref.Source != "":
		return "", "", errorf(KindInvalid, "give a strategy's name or its source, not both")
	case ref.Source != "":
		if len(ref.Source) > maxStrategyBytes {
			return "", "", errorf(KindInvalid, "source is larger than %d KiB; a strategy is one short file", maxStrategyBytes>>10)
		}
		label = ref.Label
		if label == "" {
			label = "source.star"
		}
		return label, ref.Source, nil
	case ref.Name == "":
		return "", "", errorf(KindInvalid, "name a strategy of the project (name) or pass its text (source)")
	}
	if err := l.needProject(); err != nil {
		return "", "", err
	}
	st, err := templates.Resolve(&l.cfg.Project, ref.Name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", errorf(KindNotFound, "%v; list_strategies shows the project's strategies, or pass source instead", err)
	}
	if err != nil {
		return "", "", &Error{Kind: KindInvalid, Msg: err.Error(), Err: err}
	}
	return st.Label, st.Source, nil
}

// costs fills c's empty fields from the project's defaults.
func (l *Local) costs(c Costs) Costs {
	r := l.cfg.Research
	if strings.TrimSpace(c.Capital) == "" {
		c.Capital = r.Capital.String()
	}
	if c.FeeBps == nil {
		v := r.FeeBps
		c.FeeBps = &v
	}
	if c.SlippageBps == nil {
		v := r.SlippageBps
		c.SlippageBps = &v
	}
	FundingDefault(&c)
	return c
}

// indicatorsDir is the project's indicators folder, or "" without a project.
func (l *Local) indicatorsDir() string {
	if l.cfg.Project.Root == "" {
		return ""
	}
	return l.cfg.Project.IndicatorsDir()
}

func checkSeries(series string) error {
	if series == "" {
		return errorf(KindInvalid, "series is missing: name one as SYMBOL@GRANULARITY, e.g. BTC-USD@1h (list_series shows them)")
	}
	if _, _, err := history.CheckSeries(series); err != nil {
		return &Error{Kind: KindInvalid, Msg: err.Error(), Err: err}
	}
	return nil
}

// Backtest runs one backtest in a worker.
func (l *Local) Backtest(ctx context.Context, req BacktestRequest) (BacktestResult, error) {
	if strings.TrimSpace(req.Series) == "" {
		return l.backtestPortfolio(ctx, req) // portfolio.go: the strategy declares its universe
	}
	names, single, err := l.seriesSet(req.Series)
	if err != nil {
		return BacktestResult{}, err
	}
	if !single {
		return l.backtestSeriesSet(ctx, req, names)
	}
	label, source, err := l.resolve(req.StrategyRef)
	if err != nil {
		return BacktestResult{}, err
	}
	if err := checkSeries(req.Series); err != nil {
		return BacktestResult{}, err
	}
	if err := l.needProject(); err != nil {
		return BacktestResult{}, err
	}
	if err := l.needPool(); err != nil {
		return BacktestResult{}, err
	}
	c := l.costs(req.Costs)
	BorrowDefault(l.cfg.Research, req.Series, &c.CostOptions)
	breq := backtest.Request{
		Source: source, Name: label, Series: req.Series, Params: req.Params,
		From: req.From, To: req.To,
		Capital: c.Capital, FeeBps: c.FeeBps, SlippageBps: c.SlippageBps, CostOptions: c.CostOptions,
		Fill: req.Fill, Intrabar: req.Intrabar, TradesLimit: req.TradesLimit, Plot: req.Plot, Report: req.Report, Robustness: req.Robustness,
		Allowance:   req.Allowance,
		HistoryPath: l.cfg.Project.HistoryPath(), IndicatorsDir: l.indicatorsDir(),
	}
	if _, err := breq.Config(backtest.DefaultConfig()); err != nil {
		return BacktestResult{}, classify(err)
	}
	breq.ProofSeed = l.proofSeed()
	resp, err := l.cfg.Pool.Backtest(ctx, breq)
	if err != nil {
		return BacktestResult{}, classify(err)
	}
	res := BacktestResult{Result: resp.Result, Text: resp.Text, PNG: resp.PNG, HTML: resp.HTML, Output: resp.Output}
	l.recordBacktest(ctx, LedgerName(req.StrategyRef, label, source), source, req.Series, &res)
	return res, nil
}
