package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
	"wicket/strategy/worker"
)

// Recorder keeps the research ledger (strategy.md, "The research ledger:
// every trial counts"); *ledger.Ledger satisfies it. Local, given one in
// Config.Recorder, appends a row for every backtest, one per sweep
// combination (the whole sweep in one batch, failed combinations
// included) and, for a walk-forward run, one per in-sample combination of
// every window and one for the run, under the ledger.Who its context
// carries (ledger.WithWho), and reports the sweep's deflated Sharpe ratio
// over the ledger's trials as well as over its own.
type Recorder interface {
	Append(ctx context.Context, rows []ledger.Row) (string, error)
	Trials(ctx context.Context, q ledger.TrialQuery) (ledger.TrialSet, error)
}

// LedgerName is the name a strategy's trials are recorded under: a
// project strategy's name, a labelled source's label (without .star), and
// for an inline source with no label "source-" and the first 12 hex
// digits of its content's digest, so that different inline strategies are
// never pooled under one name and the same text always is.
func LedgerName(ref StrategyRef, label, source string) string {
	switch {
	case ref.Name != "":
		return ref.Name
	case ref.Source != "" && ref.Label == "":
		return "source-" + ledger.SourceDigest(source)[:12]
	}
	return strings.TrimSuffix(label, ".star")
}

// trialAudit is a trial's audit data in the ledger: its return
// statistics, its returns in PBO blocks (count, sum and sum of squares
// per block, when the sweep asked for them), and whether it was the
// run's winner, so that the deflated Sharpe ratio and the probability of
// backtest overfitting can be recomputed from the ledger alone.
type trialAudit struct {
	Stats  worker.ReturnStats `json:"stats"`
	Blocks []worker.BlockStat `json:"blocks,omitempty"`
	Winner bool               `json:"winner,omitempty"`
}

// auditOf is t's audit as json.Marshal writes trialAudit, written
// directly: a sweep's rows carry 16 blocks of two numbers each per
// combination, whose reflection and allocations were a third of the
// rows' cost (TestAuditOfIsMarshal holds the bytes equal).
func auditOf(t *worker.Trial, winner bool) json.RawMessage {
	b := make([]byte, 0, 96+len(t.Blocks)*72)
	b = append(b, `{"stats":{"sr":`...)
	b = appendNum(b, float64(t.Stats.SR))
	b = append(b, `,"skew":`...)
	b = appendNum(b, float64(t.Stats.Skew))
	b = append(b, `,"kurt":`...)
	b = appendNum(b, float64(t.Stats.Kurt))
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, int64(t.Stats.T), 10)
	b = append(b, '}')
	for i, k := range t.Blocks {
		if !isFinite(k.Sum) || !isFinite(k.SumSq) { // json.Marshal refuses them: its note instead
			return mustJSON(trialAudit{Stats: t.Stats, Blocks: []worker.BlockStat(t.Blocks), Winner: winner})
		}
		if i == 0 {
			b = append(b, `,"blocks":[`...)
		} else {
			b = append(b, ',')
		}
		b = append(b, `{"n":`...)
		b = strconv.AppendInt(b, int64(k.N), 10)
		b = append(b, `,"s":`...)
		b = appendNum(b, k.Sum)
		b = append(b, `,"q":`...)
		b = appendNum(b, k.SumSq)
		b = append(b, '}')
	}
	if len(t.Blocks) > 0 {
		b = append(b, ']')
	}
	if winner {
		b = append(b, `,"winner":true`...)
	}
	return append(b, '}')
}

// paramsOf is a trial's knob values as json.Marshal writes them
// (mustJSON), written directly where every key and value is a plain
// one: a key or string that JSON writes as it is (ledger.PlainJSON), a finite
// number, a bool or null, which is all a trial's values hold but a
// strategy's odd knob (TestParamsOfIsMarshal). The rows of a sweep carry
// one each, after the chunks, and the reflection took half the rows' time.
func paramsOf(values map[string]any) json.RawMessage {
	keys := make([]string, 0, len(values))
	for k := range values {
		if !ledger.PlainJSON(k) {
			return mustJSON(values)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 16*len(keys)+2)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), k...), '"', ':')
		switch v := values[k].(type) {
		case float64:
			if !isFinite(v) {
				return mustJSON(values)
			}
			b = appendNum(b, v)
		case string:
			if !ledger.PlainJSON(v) {
				return mustJSON(values)
			}
			b = append(append(append(b, '"'), v...), '"')
		case bool:
			b = strconv.AppendBool(b, v)
		case nil:
			b = append(b, "null"...)
		default:
			return mustJSON(values)
		}
	}
	return append(b, '}')
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// appendNum appends x as encoding/json writes a float64 (worker.Num for
// NaN and the infinities: null): the shortest form that reads back
// exactly, in exponent form below 1e-6 and from 1e21, its exponent
// without a leading zero.
func appendNum(b []byte, x float64) []byte {
	if !isFinite(x) {
		return append(b, "null"...)
	}
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if k := len(b); format == 'e' && k >= 4 && b[k-4] == 'e' && b[k-3] == '-' && b[k-2] == '0' {
		b[k-2] = b[k-1]
		b = b[:k-1]
	}
	return b
}

// ledgerWarning is the warning a result carries when its trials could not
// be recorded: the research itself stands.
func ledgerWarning(err error) string {
	if errors.Is(err, ledger.ErrUnanchored) {
		return fmt.Sprintf("the research ledger recorded this run but could not anchor it (%v)", err)
	}
	return fmt.Sprintf("the research ledger did not record this run (%v); its trials are missing from the ledger's count", err)
}

// whoOf is the ledger identity ctx carries; research asked for without one
// is recorded as "unknown".
func whoOf(ctx context.Context) ledger.Who {
	if w, ok := ledger.WhoFrom(ctx); ok {
		return w
	}
	return ledger.Who{Surface: "unknown"}
}

// WhoHeader carries the caller's ledger.Who from Client to the data
// service, whose ledger records it (a JSON object).
const WhoHeader = "Wicket-Who"

// setWho puts ctx's Who on an outgoing request.
func setWho(ctx context.Context, r *http.Request) {
	if w, ok := ledger.WhoFrom(ctx); ok {
		if b, err := json.Marshal(w); err == nil {
			r.Header.Set(WhoHeader, string(b))
		}
	}
}

// whoFromRequest is the Who a data-service request names, sanitised and
// bounded; a request without one is the data service's own.
func whoFromRequest(r *http.Request) *http.Request {
	w := ledger.Who{Surface: ledger.SurfaceData}
	if h := r.Header.Get(WhoHeader); h != "" && len(h) <= 1024 {
		var got ledger.Who
		if json.Unmarshal([]byte(h), &got) == nil && got.Surface != "" {
			w = ledger.Who{Surface: clean(got.Surface), Session: clean(got.Session), Caller: clean(got.Caller)}
		}
	}
	return r.WithContext(ledger.WithWho(r.Context(), w))
}

// clean keeps printable text, at most 128 runes.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	if r := []rune(s); len(r) > 128 {
		s = string(r[:128])
	}
	return s
}

// ledgerCosts is the costs p's trials run under.
func (p *plan) ledgerCosts() LedgerCosts {
	return ledgerCostsOf(p.settings, p.base.Intrabar, p.base.CostOptions)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"unencodable": err.Error()})
	}
	return b
}

// BacktestRow is the ledger row of a finished backtest, from its report
// (the backtest package's Result JSON): the params, costs, range and
// metrics it ran with, and the per-period Sharpe ratio, the report's
// annualised Sharpe over sqrt(periods_per_year). strategy is the name it
// is recorded under (a file's base name without .star).
func BacktestRow(ctx context.Context, strategy, source, series string, report json.RawMessage) (ledger.Row, error) {
	var r struct {
		Settings json.RawMessage `json:"settings"`
		Metrics  json.RawMessage `json:"metrics"`
	}
	var set struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(report, &r); err != nil {
		return ledger.Row{}, fmt.Errorf("read the backtest report: %w", err)
	}
	if err := json.Unmarshal(r.Settings, &set); err != nil {
		return ledger.Row{}, fmt.Errorf("read the backtest settings: %w", err)
	}
	var m backtest.ReportedMetrics
	if err := json.Unmarshal(r.Metrics, &m); err != nil {
		return ledger.Row{}, fmt.Errorf("read the backtest metrics: %w", err)
	}
	sr := math.NaN()
	if m.Sharpe != nil && m.PeriodsPerYear > 0 {
		sr = *m.Sharpe / math.Sqrt(m.PeriodsPerYear)
	}
	return ledger.Row{
		Kind: ledger.KindBacktest, Who: whoOf(ctx), Strategy: strings.TrimSuffix(strategy, ".star"), Digest: ledger.SourceDigest(source),
		Series: series, From: m.Start, To: m.End, Params: set.Params, Costs: backtestCosts(r.Settings).JSON(),
		Metrics: r.Metrics, SharpePerPeriod: sr,
	}, nil
}

// RecordBacktest appends a finished backtest to rec and returns its run
// id. It is what Local does after a backtest; the CLI's local backtest,
// which runs in a worker of its own, calls it too.
func RecordBacktest(ctx context.Context, rec Recorder, strategy, source, series string, report json.RawMessage) (string, error) {
	row, err := BacktestRow(ctx, strategy, source, series, report)
	if err != nil {
		return "", err
	}
	return rec.Append(context.WithoutCancel(ctx), []ledger.Row{row})
}

// recordBacktest records a Local backtest; a ledger failure is a warning.
func (l *Local) recordBacktest(ctx context.Context, label, source, series string, res *BacktestResult) {
	if l.cfg.Recorder == nil {
		return
	}
	id, err := RecordBacktest(ctx, l.cfg.Recorder, label, source, series, res.Result)
	res.RunID = id // an anchor that failed still leaves the rows recorded
	if err != nil {
		res.LedgerWarning = ledgerWarning(err)
	}
}

// afterSweep records every finished combination of a sweep, failed ones
// included, as one batch, then reports the deflated Sharpe ratio over the
// ledger's trials on the series (every strategy's, unless deflateBy asks
// for the strategy's own), and the probability of backtest overfitting.
func (l *Local) afterSweep(ctx context.Context, p *plan, trials []*worker.Trial, win *worker.Trial, deflateBy string, res *SweepResult) {
	// PBO is computed while the ledger writes (a transaction with its
	// fsync): neither needs the other.
	pbo := make(chan *Overfitting, 1)
	go func() { pbo <- overfitting(trials, p.base.Blocks) }()
	defer func() { res.Overfitting = <-pbo }()
	if l.cfg.Recorder == nil {
		return
	}
	ctx = context.WithoutCancel(ctx) // a cancelled sweep still records what finished
	rows := sweepRows(ctx, p, trials, win)
	if len(rows) == 0 {
		return
	}
	id, err := l.cfg.Recorder.Append(ctx, rows)
	res.RunID = id
	if err != nil {
		res.Warnings = append(res.Warnings, ledgerWarning(err))
		if id == "" {
			return
		}
	}
	if win == nil {
		return
	}
	set, d, warn, err := l.ledgerDeflated(ctx, p, win.Stats, deflateBy, rows[len(rows)-1].Seq)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the deflated Sharpe ratio over the research ledger is missing: %v", err))
		return
	}
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	if d.DSR != nil {
		whose := fmt.Sprintf("all %d trials on %s in the research ledger, every strategy's (%d of them %s's)", d.Trials, p.base.Series, set.Strategy, p.ledgerName)
		if set.Scope == ledger.ScopeStrategy {
			whose = fmt.Sprintf("all %d trials of %s on %s in the research ledger (of %d on the series, every strategy's)", d.Trials, p.ledgerName, p.base.Series, set.Series)
		}
		d.Note = fmt.Sprintf("the same probability over %s, failed ones included, any source version, not only this sweep's %d; "+
			"luck alone would be expected to reach a per-period Sharpe ratio of %s", whose, res.DeflatedSharpe.Trials, fmtFloat(float64(*d.ExpectedMaxSharpe)))
	}
	res.LedgerDeflatedSharpe = d
}

// ledgerDeflated is the winner's deflated Sharpe ratio over the research
// ledger's trials on the plan's series up to row upTo, of scope: every
// strategy's (the default) or the strategy's own. A name is the caller's
// choice (a renamed copy starts from no trials), so the strategy's scope
// also computes the series-wide figure (SeriesDSR) and returns a warning
// that says which N was used and what the other gives.
func (l *Local) ledgerDeflated(ctx context.Context, p *plan, win worker.ReturnStats, scope string, upTo int64) (ledger.TrialSet, *DeflatedSharpe, string, error) {
	q := ledger.TrialQuery{Strategy: p.ledgerName, Series: p.base.Series, Scope: scope, UpTo: upTo}
	set, err := l.cfg.Recorder.Trials(ctx, q)
	if err != nil {
		return set, nil, "", err
	}
	d := deflated(win, set.Sharpes.Variance(), set.N())
	d.Scope, d.SeriesTrials, d.StrategyTrials = set.Scope, set.Series, set.Strategy
	if set.Scope != ledger.ScopeStrategy {
		return set, d, "", nil
	}
	q.Scope = ledger.ScopeSeries
	all, err := l.cfg.Recorder.Trials(ctx, q)
	if err != nil {
		return set, nil, "", err
	}
	wide := deflated(win, all.Sharpes.Variance(), all.N())
	d.SeriesDSR = wide.DSR
	warn := fmt.Sprintf("deflate_by strategy: the deflated Sharpe ratio over the research ledger counts only %s's %d trials of the %d on %s (the name is yours to choose, and a renamed copy starts from none); over every strategy's trials it is %s",
		p.ledgerName, set.Strategy, set.Series, p.base.Series, ratioText(wide.DSR))
	return set, d, warn, nil
}

// ratioText is a reported ratio, "undefined" when it is null.
func ratioText(x *float64) string {
	if x == nil {
		return "undefined"
	}
	return fmtFloat(*x)
}

// sweepRows are the ledger rows of a sweep's finished combinations on
// p's series, failed ones included; win, when set, is marked the winner.
func sweepRows(ctx context.Context, p *plan, trials []*worker.Trial, win *worker.Trial) []ledger.Row {
	from, to := p.span()
	costs := p.ledgerCosts().JSON()
	who, digest := whoOf(ctx), ledger.SourceDigest(p.base.Source)
	rows := make([]ledger.Row, 0, len(trials))
	for _, t := range trials {
		if t == nil {
			continue
		}
		row := ledger.Row{
			Kind: ledger.KindSweep, Who: who, Strategy: p.ledgerName, Digest: digest, Series: p.base.Series,
			From: from, To: to, Params: paramsOf(t.Values), Costs: costs, Metrics: t.Metrics, SharpePerPeriod: float64(t.Stats.SR),
			Audit: auditOf(t, t == win),
		}
		if t.Error != "" {
			row.Metrics, row.SharpePerPeriod = mustJSON(map[string]string{"error": t.Error}), math.NaN()
		}
		rows = append(rows, row)
	}
	return rows
}

// recordSeriesSet records a series-set sweep's finished combinations on
// every series, failed ones included, as one batch: each is a trial on
// its series.
func (l *Local) recordSeriesSet(ctx context.Context, plans []*plan, trials [][]*worker.Trial, res *SweepResult) {
	if l.cfg.Recorder == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	var rows []ledger.Row
	for s, p := range plans {
		rows = append(rows, sweepRows(ctx, p, trials[s], nil)...)
	}
	if len(rows) == 0 {
		return
	}
	id, err := l.cfg.Recorder.Append(ctx, rows)
	res.RunID = id
	if err != nil {
		res.Warnings = append(res.Warnings, ledgerWarning(err))
	}
}

// inSample is one walk-forward window's in-sample sweep: its range and
// its combinations (nil where one did not finish).
type inSample struct {
	from, to string
	trials   []*worker.Trial
	winner   *worker.Trial // nil for a window that did not finish
}

// afterWalkForward records a finished walk-forward run as one batch: a
// row per in-sample combination of every window (each a trial, failed
// ones included), then the run's row: the grid and each window's chosen
// params, the stitched out-of-sample metrics and the walk-forward
// efficiency.
func (l *Local) afterWalkForward(ctx context.Context, p *plan, req WalkForwardRequest, windows []inSample, res *WalkForwardResult) {
	if l.cfg.Recorder == nil {
		return
	}
	from, to := p.span()
	chosen := make([]map[string]any, len(res.Windows))
	for i, w := range res.Windows {
		chosen[i] = w.Params
	}
	grid := make(map[string][]any, len(p.swept)) // the values as checked against the knobs
	for i, k := range p.swept {
		grid[k] = p.axes[i]
	}
	sr := math.NaN()
	if o := res.OutOfSample; o != nil && o.Sharpe != nil && o.PeriodsPerYear > 0 {
		sr = *o.Sharpe / math.Sqrt(o.PeriodsPerYear)
	}
	who, digest, costs := whoOf(ctx), ledger.SourceDigest(p.base.Source), p.ledgerCosts().JSON()
	var rows []ledger.Row
	for k, w := range windows {
		for _, t := range w.trials {
			if t == nil {
				continue
			}
			row := ledger.Row{
				Kind: ledger.KindInSample, Who: who, Strategy: p.ledgerName, Digest: digest, Series: p.base.Series,
				From: w.from, To: w.to, Params: mustJSON(map[string]any{"window": k + 1, "values": t.Values}), Costs: costs,
				Metrics: t.Metrics, SharpePerPeriod: float64(t.Stats.SR), Audit: auditOf(t, t == w.winner),
			}
			if t.Error != "" {
				row.Metrics, row.SharpePerPeriod = mustJSON(map[string]string{"error": t.Error}), math.NaN()
			}
			rows = append(rows, row)
		}
	}
	rows = append(rows, ledger.Row{
		Kind: ledger.KindWalkForward, Who: who, Strategy: p.ledgerName, Digest: digest, Series: p.base.Series,
		From: from, To: to,
		Params: mustJSON(map[string]any{"grid": grid, "params": req.Params, "rank_by": p.rankBy, "anchored": req.Anchored, "chosen": chosen}),
		Costs:  costs,
		Metrics: mustJSON(map[string]any{"out_of_sample": res.OutOfSample, "walk_forward_efficiency": res.Efficiency,
			"windows": len(res.Windows), "partial": res.Partial}),
		SharpePerPeriod: sr,
	})
	id, err := l.cfg.Recorder.Append(context.WithoutCancel(ctx), rows)
	res.RunID = id
	if err != nil {
		res.Warnings = append(res.Warnings, ledgerWarning(err))
	}
}
