package worker

import (
	"context"

	"wicket/strategy/backtest"
)

// KindPortfolioSweep runs a chunk of a portfolio strategy's sweep:
// PortfolioSweepChunk → PortfolioSweepResult, one Trial per combination,
// in order, each a whole portfolio backtest on the universe's calendar.
const KindPortfolioSweep = "portfolio_sweep"

// PortfolioSweepChunk is a chunk of a portfolio sweep: the backtest
// request every combination shares (without a series: the strategy
// names its universe), the combinations (each overrides the request's
// params), and for PBO the number of blocks to sum each combination's
// equity-curve returns in.
type PortfolioSweepChunk struct {
	Request backtest.Request `json:"request"`
	Combos  []map[string]any `json:"combos"`
	Blocks  int              `json:"blocks,omitempty"`
	// TradeFrom (RFC3339), when set, trades each combination from the
	// first calendar bar at or after it, the earlier bars of the range
	// only warming the strategy up (a walk-forward's out-of-sample run).
	TradeFrom string `json:"trade_from,omitempty"`
	// Returns asks for every traded bar's return (walk-forward
	// stitching); Times for the calendar's bar times (its windows).
	Returns bool `json:"returns,omitempty"`
	Times   bool `json:"times,omitempty"`
}

// PortfolioSweep runs a portfolio sweep chunk in a worker.
func (p *Pool) PortfolioSweep(ctx context.Context, req PortfolioSweepChunk) (PortfolioSweepResult, error) {
	return Call[PortfolioSweepChunk, PortfolioSweepResult](ctx, p, KindPortfolioSweep, req)
}

// PortfolioSweepResult is a portfolio sweep chunk's trials, with the
// universe's label (its series, comma-separated, as the report names
// them; the ledger records the trials under it) and the calendar the
// combinations ran on (Digest left empty), both from the chunk's first
// combination that ran; empty when none did.
type PortfolioSweepResult struct {
	SweepChunkResult
	Series   string   `json:"series,omitempty"`
	Calendar BarsSeen `json:"calendar"`
	Times    []int64  `json:"times,omitempty"` // when asked: every calendar bar's time
}
