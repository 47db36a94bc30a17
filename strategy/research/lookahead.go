package research

import (
	"context"
	"encoding/json"

	"wicket/strategy/backtest"
)

// checkWinner proves the sweep's winner free of lookahead: it backtests
// the winning values once more in a worker over the sweep's range and
// costs, which runs the lookahead proof (strategy/script CheckLookahead),
// and returns its verdict. A lookahead is an error: a sweep whose winner
// read the future ranked nothing real. The other combinations share the
// winner's code; only their knob values differ.
func (l *Local) checkWinner(ctx context.Context, p *plan, values map[string]any) (string, error) {
	b := p.base
	req := backtest.Request{
		Source: b.Source, Name: b.Name, Series: b.Series, Params: values, From: b.From, To: b.To,
		Capital: b.Capital, FeeBps: &b.FeeBps, SlippageBps: &b.SlippageBps, TradesLimit: 1,
		HistoryPath: b.HistoryPath, IndicatorsDir: b.IndicatorsDir,
	}
	resp, err := l.cfg.Pool.Backtest(ctx, req)
	if err != nil {
		return "", classify(err)
	}
	var r struct {
		LookaheadCheck string `json:"lookahead_check"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return "", errorf(KindUnavailable, "lookahead check of the winner: %v", err)
	}
	return r.LookaheadCheck, nil
}
