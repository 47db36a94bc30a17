package worker

import (
	"context"

	"wicket/strategy/scriptapi"
)

// KindDecide asks a strategy for its decision at the last of the given
// bars, as the backtest's decision function makes it at that bar:
// DecideRequest → Decision. A deployment calls it at every closed bar.
const KindDecide = "decide"

// DecideRequest is a strategy and the bars it decides over: warm-up and
// every bar up to the one that just closed, the last being the bar decided
// at. Bars is strategy.Bars.Encode() of them.
type DecideRequest struct {
	StrategyRequest
	Series string `json:"series"`
	Bars   []byte `json:"bars"`
	// Accounts, for an on_bar strategy, are the account it saw at the
	// close of each of the bars, one per bar (a deployment's own: its
	// position, cash and equity then). on_bar is stepped through every
	// bar with its account, as a backtest steps it with its own, and the
	// decision is its intent at the last. Empty: every bar flat with
	// nothing.
	Accounts []Account `json:"accounts,omitempty"`
}

// Account is what an on_bar strategy's ctx reads of its account at a
// bar's close.
type Account struct {
	Position float64 `json:"position"`
	Cash     float64 `json:"cash"`
	Equity   float64 `json:"equity"`
}

// Decision is a strategy's decision at the last bar: a target exposure
// (fraction of equity, negative short) when HasTarget, else no change,
// and the protective exits the position rests with (fractions of its
// average entry price, as the backtest places them; 0 is none).
// Warmup is the strategy's warm-up in bars; Bars how many it decided over.
type Decision struct {
	Style        scriptapi.Style `json:"style"`
	Time         int64           `json:"time"` // the last bar's unix time
	HasTarget    bool            `json:"has_target"`
	Target       float64         `json:"target"`
	StopLoss     float64         `json:"stop_loss,omitempty"`
	TakeProfit   float64         `json:"take_profit,omitempty"`
	TrailingStop float64         `json:"trailing_stop,omitempty"`
	// HasQty: an on_bar strategy asked for a quantity (ctx.buy, ctx.sell):
	// Qty is it, signed (buy > 0), instead of a target.
	HasQty bool    `json:"has_qty,omitempty"`
	Qty    float64 `json:"qty,omitempty"`
	Warmup int     `json:"warmup"`
	Bars   int     `json:"bars"`
}

// Decide asks a worker for a strategy's decision at the last bar.
func (p *Pool) Decide(ctx context.Context, req DecideRequest) (Decision, error) {
	return Call[DecideRequest, Decision](ctx, p, KindDecide, req)
}
