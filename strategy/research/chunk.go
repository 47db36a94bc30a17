package research

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// KindSweep is the worker request kind that backtests a chunk of knob
// combinations of one strategy over one series.
const KindSweep = "sweep"

// WorkerHandlers returns the request kinds this package adds to a worker
// process's handler table. memo is the worker's indicator cache: every
// combination of every chunk the worker evaluates shares it.
//
//	h := worker.Builtin(memo)
//	maps.Copy(h, research.WorkerHandlers(memo))
//
// The handlers execute strategy code; they must only ever be registered in
// a worker process.
func WorkerHandlers(memo *ta.Memo) worker.Handlers {
	cache := &barCache{}
	return worker.Handlers{
		KindSweep: worker.Typed(func(ctx context.Context, req chunkRequest) (chunkResponse, error) {
			return evalChunk(ctx, req, memo, cache)
		}),
	}
}

// chunkRequest asks a worker to backtest Combos one after another over
// the bars of Series between From and To (RFC3339, inclusive), trading
// from TradeFrom (empty: from the first bar; earlier bars only feed the
// indicators). It is plain JSON: it crosses the worker pipe.
type chunkRequest struct {
	Name          string `json:"name"`
	Source        string `json:"source"`
	IndicatorsDir string `json:"indicators_dir,omitempty"`
	HistoryPath   string `json:"history_path"`
	Series        string `json:"series"`
	From          string `json:"from,omitempty"`
	To            string `json:"to,omitempty"`
	TradeFrom     string `json:"trade_from,omitempty"`
	// Digest is barsDigest of the bars in [From, To] as the caller read
	// them: a worker that holds bars of that range with this digest uses
	// them instead of reading the store again.
	Digest      string           `json:"digest,omitempty"`
	Capital     string           `json:"capital"`
	FeeBps      float64          `json:"fee_bps"`
	SlippageBps float64          `json:"slippage_bps"`
	Combos      []map[string]any `json:"combos"`
	// Returns asks for every traded bar's return (walk-forward stitching).
	Returns bool `json:"returns,omitempty"`
	// Blocks, when > 0, asks for each trial's returns summed in that many
	// blocks (the probability of backtest overfitting, pbo.go).
	Blocks int `json:"blocks,omitempty"`
}

// chunkResponse holds one trial per combination, in order, and the
// indicator computations the chunk caused in this worker's memo.
type chunkResponse struct {
	Trials   []trial           `json:"trials"`
	Computed map[string]uint64 `json:"computed,omitempty"`
}

// trial is one combination's outcome.
type trial struct {
	Values  map[string]any  `json:"values,omitempty"` // every knob's value
	Metrics json.RawMessage `json:"metrics,omitempty"`
	Scores  scores          `json:"scores"`
	Stats   returnStats     `json:"stats"`
	Trades  int             `json:"trades"`
	Warmup  int             `json:"warmup"`
	Returns []float64       `json:"returns,omitempty"`
	Blocks  []blockStat     `json:"blocks,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// scores are the rank metrics, full precision; NaN is null on the wire.
type scores struct {
	Sharpe       num `json:"sharpe"`
	CAGR         num `json:"cagr"`
	Calmar       num `json:"calmar"`
	ProfitFactor num `json:"profit_factor"`
	TotalReturn  num `json:"total_return"`
	MaxDrawdown  num `json:"max_drawdown"`
}

func (s scores) get(metric string) float64 {
	switch metric {
	case RankCAGR:
		return float64(s.CAGR)
	case RankCalmar:
		return float64(s.Calmar)
	case RankProfitFactor:
		return float64(s.ProfitFactor)
	case RankTotalReturn:
		return float64(s.TotalReturn)
	case RankMaxDrawdown:
		return float64(s.MaxDrawdown)
	}
	return float64(s.Sharpe)
}

// returnStats describe a run's per-bar returns for the deflated Sharpe
// ratio: the per-period Sharpe ratio, skewness, non-excess kurtosis and
// the number of returns.
type returnStats struct {
	SR   num `json:"sr"`
	Skew num `json:"skew"`
	Kurt num `json:"kurt"`
	T    int `json:"t"`
}

// num is a float64 whose NaN and infinities cross JSON as null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

func (n *num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = num(f)
	return nil
}

// statsOf computes returnStats: SR = mean/std (ddof 1); skewness and
// kurtosis from the population moments m3/m2^1.5 and m4/m2^2.
func statsOf(r []float64) returnStats {
	t := len(r)
	st := returnStats{SR: num(math.NaN()), Skew: num(math.NaN()), Kurt: num(math.NaN()), T: t}
	if t < 2 {
		return st
	}
	var sum float64
	for _, x := range r {
		sum += x
	}
	mean := sum / float64(t)
	var m2, m3, m4 float64
	for _, x := range r {
		d := x - mean
		d2 := d * d
		m2 += d2
		m3 += d2 * d
		m4 += d2 * d2
	}
	if m2 == 0 {
		return st
	}
	sd := math.Sqrt(m2 / float64(t-1))
	st.SR = num(mean / sd)
	m2, m3, m4 = m2/float64(t), m3/float64(t), m4/float64(t)
	st.Skew = num(m3 / math.Pow(m2, 1.5))
	st.Kurt = num(m4 / (m2 * m2))
	return st
}

// evalChunk runs inside a worker: it loads the bars (or finds them in
// the worker's cache) and backtests
// each combination with the shared memo. A combination whose run fails is
// a trial with Error set; only a failure that concerns the whole chunk
// (the store, the range, cancellation) fails the request.
func evalChunk(ctx context.Context, req chunkRequest, memo *ta.Memo, cache *barCache) (chunkResponse, error) {
	breq := backtest.Request{Capital: req.Capital, FeeBps: &req.FeeBps, SlippageBps: &req.SlippageBps, From: req.From, To: req.To}
	cfg, err := breq.Config(backtest.DefaultConfig())
	if err != nil {
		return chunkResponse{}, err
	}
	tradeFrom, err := backtest.ParseTime("trade_from", req.TradeFrom, false)
	if err != nil {
		return chunkResponse{}, err
	}
	if req.HistoryPath == "" {
		return chunkResponse{}, &worker.Error{Kind: worker.KindRequest, Msg: "sweep request without a history store path"}
	}
	bars, err := cache.load(req.HistoryPath, req.Series, cfg.From, cfg.To, req.Digest)
	if err != nil {
		return chunkResponse{}, err
	}
	// The range warnings of a backtest ("range clipped") do not apply to
	// a chunk: its range is the caller's window over known bars.
	cfg.From, cfg.To = time.Time{}, time.Time{}
	start := 0
	if !tradeFrom.IsZero() {
		t := tradeFrom.Unix()
		start = sort.Search(bars.Len(), func(i int) bool { return bars.Time[i] >= t })
		if start >= bars.Len() {
			return chunkResponse{}, &backtest.Error{Kind: backtest.Invalid, Msg: "no bars to trade after trade_from " + req.TradeFrom}
		}
	}

	sreq := worker.StrategyRequest{Name: req.Name, Source: req.Source, IndicatorsDir: req.IndicatorsDir}
	opts, closeFS, err := sreq.Options(memo)
	if err != nil {
		return chunkResponse{}, err
	}
	defer closeFS()

	before := memo.Stats().Computed
	resp := chunkResponse{Trials: make([]trial, len(req.Combos))}
	for i, combo := range req.Combos {
		if err := ctx.Err(); err != nil {
			return chunkResponse{}, err
		}
		opts.Overrides = combo
		t := runTrial(ctx, req, opts, bars, start, cfg)
		if t.Values == nil {
			t.Values = combo // a failed run names the combination it was given
		}
		resp.Trials[i] = t
	}
	after := memo.Stats().Computed
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			if resp.Computed == nil {
				resp.Computed = map[string]uint64{}
			}
			resp.Computed[k] = d
		}
	}
	return resp, nil
}

// runTrial backtests one combination over bars, trading from bar start.
func runTrial(ctx context.Context, req chunkRequest, opts script.Options, bars strategy.Bars, start int, cfg backtest.Config) trial {
	fail := func(err error) trial { return trial{Error: err.Error()} }
	s, err := script.Load(ctx, script.Source{Name: req.Name, Text: req.Source}, opts)
	if err != nil {
		return fail(err)
	}
	cfg.Params = s.Values()
	traded := bars.Slice(start, bars.Len())
	var d backtest.Decisions
	switch s.Style() {
	case script.StyleSignals:
		sig, err := s.Signals(ctx, bars)
		if err != nil {
			return fail(err)
		}
		d.Targets = sig.Targets(bars.Len())[start:]
		cfg.Warmup = max(0, s.Warmup()-start)
	default:
		st, err := s.Begin(ctx, bars)
		if err != nil {
			return fail(err)
		}
		defer st.Close()
		d.Stepper = offsetStepper{st, start}
		cfg.Warmup = max(0, st.Warmup()-start)
	}
	res, err := backtest.Run(ctx, traded, cfg, d)
	if err != nil {
		return fail(err)
	}
	metrics, err := json.Marshal(res.Metrics)
	if err != nil {
		return fail(err)
	}
	m := res.Metrics
	t := trial{
		Values:  s.Values(),
		Metrics: metrics,
		Scores: scores{
			Sharpe: num(m.Sharpe), CAGR: num(m.CAGR), Calmar: num(m.Calmar), ProfitFactor: num(m.ProfitFactor),
			TotalReturn: num(m.TotalReturn), MaxDrawdown: num(m.MaxDrawdown),
		},
		Stats:  statsOf(res.Returns),
		Trades: m.Trades,
		Warmup: s.Warmup(),
	}
	if req.Returns {
		t.Returns = res.Returns
	}
	if req.Blocks > 0 {
		t.Blocks = blockStats(res.Returns, req.Blocks)
	}
	return t
}

// offsetStepper runs an event-driven strategy set up over all the loaded
// bars while the engine trades only from bar off: engine bar i is the
// strategy's bar i+off.
type offsetStepper struct {
	st  *script.Stepper
	off int
}

func (o offsetStepper) Step(i int, acct strategy.Account) (strategy.Intent, error) {
	return o.st.Step(i+o.off, acct)
}
