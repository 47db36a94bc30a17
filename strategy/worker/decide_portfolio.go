package worker

import "context"

// KindDecidePortfolio asks a portfolio strategy (one that declares a
// universe) for its target weights at the last bar of its assets, as the
// portfolio backtest's decision function makes them at that bar:
// PortfolioDecideRequest → PortfolioDecision. Without assets it only
// describes the strategy (its universe and rebalance schedule). A
// portfolio deployment calls it at every closed calendar bar.
const KindDecidePortfolio = "decide_portfolio"

// PortfolioDecideRequest is a portfolio strategy and its assets' bars:
// Series[k] names Assets[k] (strategy.Bars.Encode() of the asset's bars,
// warm-up and every bar up to the one that just closed). The worker
// aligns them on one calendar (the union of their times, no forward
// fill), as the backtest does; the decision is at the calendar's last
// bar. The series must be the strategy's universe, in its order.
type PortfolioDecideRequest struct {
	StrategyRequest
	Series []string `json:"series,omitempty"`
	Assets [][]byte `json:"assets,omitempty"`
	// Accounts, for an on_bar portfolio strategy, are the account it had
	// at the closes of the calendar's bars, oldest first, each from its
	// Time on (a bar without one carries the one before it; before the
	// first, Capital in cash and nothing held): on_bar is stepped through
	// every calendar bar with its account and the assets' last closes as
	// marks, as the backtest steps it with its own, and the decision is
	// its targets at the last.
	Accounts []PortfolioAccount `json:"accounts,omitempty"`
	Capital  float64            `json:"capital,omitempty"`
}

// PortfolioAccount is what an on_bar portfolio strategy's ctx reads of
// its account at a bar's close: cash, equity and each asset's position
// (in the universe's order).
type PortfolioAccount struct {
	Time      int64     `json:"time"`
	Cash      float64   `json:"cash"`
	Equity    float64   `json:"equity"`
	Positions []float64 `json:"positions"`
}

// PortfolioDecision is a portfolio strategy's decision at the calendar's
// last bar: per asset of its universe (in its order), whether it decided
// a weight there (Has) and the weight (a fraction of equity, negative
// short). Universe and Rebalance are what the strategy declares; Warmup
// its warm-up in bars; Bars the calendar bars it decided over; Style its
// style (only signals(universe) deploys).
type PortfolioDecision struct {
	Style     string    `json:"style"`
	Universe  []string  `json:"universe"`
	Rebalance string    `json:"rebalance"`
	Time      int64     `json:"time,omitempty"`
	Weights   []float64 `json:"weights,omitempty"`
	Has       []bool    `json:"has,omitempty"`
	Warmup    int       `json:"warmup"`
	Bars      int       `json:"bars"`
}

// DecidePortfolio asks a worker for a portfolio strategy's weights at the
// last bar.
func (p *Pool) DecidePortfolio(ctx context.Context, req PortfolioDecideRequest) (PortfolioDecision, error) {
	return Call[PortfolioDecideRequest, PortfolioDecision](ctx, p, KindDecidePortfolio, req)
}
