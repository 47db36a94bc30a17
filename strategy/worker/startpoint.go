package worker

import (
	"context"

	"wicket/strategy/scriptapi"
)

// KindStartPoint runs the start-point check (strategy/script
// CheckStartPoint): StartPointRequest → scriptapi.StartPoint.
const KindStartPoint = "start_point"

// StartPointRequest asks how much history a strategy's values need, over
// the bars Bars names (the validation's synthetic bars when nil), and
// whether Warmup bars are enough (nil: the strategy's own warm-up, the
// bars before its last indicator's first value).
type StartPointRequest struct {
	StrategyRequest
	Warmup *int `json:"warmup,omitempty"`
}

// StartPoint runs the start-point check in a worker.
func (p *Pool) StartPoint(ctx context.Context, req StartPointRequest) (scriptapi.StartPoint, error) {
	return Call[StartPointRequest, scriptapi.StartPoint](ctx, p, KindStartPoint, req)
}
