package research

import (
	"context"

	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

// StartPointRequest asks the start-point check of a strategy over a
// stored series: how many bars of history its values need before they
// stop depending on where the history began, and whether Warmup bars
// (nil: the strategy's own warm-up) are enough. A deployment asks it
// before it trusts a warm-up.
type StartPointRequest struct {
	StrategyRef
	Series string         `json:"series"`
	Params map[string]any `json:"params,omitempty"`
	From   string         `json:"from,omitempty"` // a date or RFC3339, inclusive
	To     string         `json:"to,omitempty"`
	Warmup *int           `json:"warmup,omitempty"`
}

// StartPoint runs the start-point check in a worker (strategy code runs
// only there) over the series' bars in the range.
func (l *Local) StartPoint(ctx context.Context, req StartPointRequest) (scriptapi.StartPoint, error) {
	label, source, err := l.resolve(req.StrategyRef)
	if err != nil {
		return scriptapi.StartPoint{}, err
	}
	if err := checkSeries(req.Series); err != nil {
		return scriptapi.StartPoint{}, err
	}
	if err := l.needProject(); err != nil {
		return scriptapi.StartPoint{}, err
	}
	if err := l.needPool(); err != nil {
		return scriptapi.StartPoint{}, err
	}
	if req.Warmup != nil && *req.Warmup < 0 {
		return scriptapi.StartPoint{}, errorf(KindInvalid, "warmup %d must be 0 or more bars (leave it out for the strategy's own)", *req.Warmup)
	}
	rep, err := l.cfg.Pool.StartPoint(ctx, worker.StartPointRequest{
		StrategyRequest: worker.StrategyRequest{
			Name: label, Source: source, IndicatorsDir: l.indicatorsDir(), Overrides: req.Params,
			Bars: &worker.BarsRange{HistoryPath: l.cfg.Project.HistoryPath(), Series: req.Series, From: req.From, To: req.To},
		},
		Warmup: req.Warmup,
	})
	if err != nil {
		return scriptapi.StartPoint{}, classify(err)
	}
	return rep, nil
}
