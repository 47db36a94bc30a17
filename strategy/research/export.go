package research

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"wicket/strategy/ledger"
	"wicket/strategy/worker"
)

// ExportFormat names the layout of a RunExport.
const ExportFormat = "wicket-research-export-v1"

// AuditLedger is what Export reads: the research ledger
// (*ledger.Ledger).
type AuditLedger interface {
	Query(ctx context.Context, f ledger.Filter) ([]ledger.Row, int, error)
	TrialList(ctx context.Context, series string, upTo int64) ([]ledger.Counted, error)
	Verify(ctx context.Context, copies ...string) (ledger.Report, error)
}

// RunExport is a run as the research ledger holds it, laid out so that an
// auditor can recompute its deflated Sharpe ratios and its probability of
// backtest overfitting without wicket (docs/strategies.md shows how): each
// trial's params, metrics, return statistics and PBO blocks, the winner
// marked (a walk-forward's per window), the run's settings, and every trial on the series N counts, up
// to the run's last row.
type RunExport struct {
	Format   string          `json:"format"`
	RunID    string          `json:"run_id"`
	Kind     string          `json:"kind"` // the run's: backtest, sweep or walk_forward
	Strategy string          `json:"strategy"`
	Digest   string          `json:"digest"`
	Series   string          `json:"series"`
	From     string          `json:"from"`
	To       string          `json:"to"`
	Costs    json.RawMessage `json:"costs"`
	Who      ledger.Who      `json:"who"`
	Time     string          `json:"time"`
	// Summary is a walk-forward's own row: its grid, chosen params and
	// stitched out-of-sample metrics.
	Summary *ExportTrial `json:"summary,omitempty"`
	// Trials are the run's trials in ledger order: a backtest's one, a
	// sweep's combinations, a walk-forward's in-sample combinations.
	Trials []ExportTrial `json:"trials"`
	// Ledger is every trial N counts on the series, any strategy, up to
	// the run's last row: the deflated Sharpe ratio over the ledger
	// deflates by all of them (scope series, the default) or by the
	// strategy's (scope strategy).
	Ledger ExportLedger `json:"ledger"`
	// Verify is the ledger's check at export time.
	Verify ledger.Report `json:"verify"`
}

// ExportTrial is one trial of a run.
type ExportTrial struct {
	Seq    int64           `json:"seq"`
	Kind   string          `json:"kind"`
	From   string          `json:"from"`
	To     string          `json:"to"`
	Params json.RawMessage `json:"params"`
	// Metrics are the trial's metrics; Error is set instead when it failed.
	Metrics json.RawMessage `json:"metrics,omitempty"`
	Error   string          `json:"error,omitempty"`
	// Sharpe is the per-period Sharpe ratio the ledger counts (null when
	// undefined or failed).
	Sharpe *float64 `json:"sharpe_per_period"`
	// Stats are the trial's return statistics (per-period Sharpe ratio,
	// skewness, non-excess kurtosis, returns T), Blocks its returns cut
	// into the PBO's S blocks (each its count n, sum s and sum of squares
	// q), and Winner marks a sweep's winner.
	Stats  *worker.ReturnStats `json:"stats,omitempty"`
	Blocks []worker.BlockStat  `json:"blocks,omitempty"`
	Winner bool                `json:"winner,omitempty"`
	// Window is a walk-forward in-sample trial's window (1-based): each
	// window is a sweep of its own, with its own winner, so DSR and PBO
	// are recomputed per window.
	Window int    `json:"window,omitempty"`
	Hash   string `json:"hash"`
}

// ExportLedger is the ledger's trials on the run's series.
type ExportLedger struct {
	UpToSeq int64 `json:"up_to_seq"`
	// Trials are every counted trial (ledger.CountedKinds), failed ones
	// included, in ledger order.
	Trials []LedgerTrial `json:"trials"`
}

// LedgerTrial is one counted trial on the series.
type LedgerTrial struct {
	Seq      int64    `json:"seq"`
	Kind     string   `json:"kind"`
	Strategy string   `json:"strategy"`
	Sharpe   *float64 `json:"sharpe_per_period"`
}

// Export builds run runID's export from the ledger. A run the ledger does
// not hold is KindNotFound.
func Export(ctx context.Context, l AuditLedger, runID string) (*RunExport, error) {
	rows, _, err := l.Query(ctx, ledger.Filter{RunID: runID})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errorf(KindNotFound, "the research ledger holds no run %q; `wicket research ledger` lists the runs (the run column)", runID)
	}
	first, last := rows[0], rows[len(rows)-1]
	x := &RunExport{
		Format: ExportFormat, RunID: runID, Kind: first.Kind, Strategy: first.Strategy, Digest: first.Digest, Series: first.Series,
		From: first.From, To: first.To, Costs: first.Costs, Who: first.Who, Time: first.Time, Trials: []ExportTrial{},
	}
	for _, r := range rows {
		t, err := exportTrial(r)
		if err != nil {
			return nil, err
		}
		if r.Kind == ledger.KindWalkForward {
			x.Kind, x.From, x.To, x.Summary = r.Kind, r.From, r.To, &t
			continue
		}
		x.Trials = append(x.Trials, t)
	}
	markOptimizeWinner(rows, x.Trials) // optimize.go
	counted, err := l.TrialList(ctx, first.Series, last.Seq)
	if err != nil {
		return nil, err
	}
	x.Ledger = ExportLedger{UpToSeq: last.Seq, Trials: make([]LedgerTrial, 0, len(counted))}
	for _, c := range counted {
		x.Ledger.Trials = append(x.Ledger.Trials, LedgerTrial{Seq: c.Seq, Kind: c.Kind, Strategy: c.Strategy, Sharpe: finite(c.Sharpe)})
	}
	if x.Verify, err = l.Verify(ctx); err != nil {
		return nil, err
	}
	return x, nil
}

func exportTrial(r ledger.Row) (ExportTrial, error) {
	t := ExportTrial{Seq: r.Seq, Kind: r.Kind, From: r.From, To: r.To, Params: r.Params, Metrics: r.Metrics, Sharpe: finite(r.SharpePerPeriod), Hash: r.Hash}
	var failed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(r.Metrics, &failed) == nil && failed.Error != "" {
		t.Metrics, t.Error = nil, failed.Error
	}
	if r.Kind == ledger.KindInSample {
		var p struct {
			Window int `json:"window"`
		}
		if err := json.Unmarshal(r.Params, &p); err != nil {
			return ExportTrial{}, fmt.Errorf("row %d's params: %w", r.Seq, err)
		}
		t.Window = p.Window
	}
	if len(r.Audit) > 0 {
		var a trialAudit
		if err := json.Unmarshal(r.Audit, &a); err != nil {
			return ExportTrial{}, fmt.Errorf("row %d's audit data: %w", r.Seq, err)
		}
		t.Stats, t.Blocks, t.Winner = &a.Stats, a.Blocks, a.Winner
	}
	return t, nil
}

// finite is x, or nil when it is NaN or infinite.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
