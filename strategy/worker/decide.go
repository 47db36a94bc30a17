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
	Warmup       int             `json:"warmup"`
	Bars         int             `json:"bars"`
}

// Decide asks a worker for a strategy's decision at the last bar.
func (p *Pool) Decide(ctx context.Context, req DecideRequest) (Decision, error) {
	return Call[DecideRequest, Decision](ctx, p, KindDecide, req)
}
