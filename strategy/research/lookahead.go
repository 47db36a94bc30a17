package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"wicket/strategy/backtest"
)

// checkWinner proves the sweep's winner free of lookahead: it backtests
// the winning values once more in a worker over the sweep's range and
// costs, which runs the lookahead proof (strategy/script CheckLookahead),
// and returns its verdict. A lookahead is an error: a sweep whose winner
// read the future ranked nothing real. The other combinations share the
// winner's code; only their knob values differ.
func (l *Local) checkWinner(ctx context.Context, p *plan, values map[string]any) (string, error) {
	return l.checkWinnerOver(ctx, p, values, p.base.From, p.base.To, p.base.Digest)
}

// checkWinnerOver is checkWinner over the bars from..to (RFC 3339) of the
// plan's series: a walk-forward window's winner is checked over the bars
// its out-of-sample run saw. digest, when set, is the digest of those
// bars, so the worker that ran the sweep's chunks uses its copy.
func (l *Local) checkWinnerOver(ctx context.Context, p *plan, values map[string]any, from, to, digest string) (string, error) {
	b := p.base
	req := backtest.Request{
		Source: b.Source, Name: b.Name, Series: b.Series, Params: values, From: from, To: to,
		Capital: b.Capital, FeeBps: &b.FeeBps, SlippageBps: &b.SlippageBps, TradesLimit: 1,
		Intrabar: b.Intrabar, CostOptions: b.CostOptions,
		HistoryPath: b.HistoryPath, IndicatorsDir: b.IndicatorsDir, Digest: digest, LookaheadOnly: true,
	}
	req.ProofSeed = l.proofSeed()
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

// checkWindows proves each finished walk-forward window's in-sample
// winner free of lookahead over the bars of that window (its in-sample
// bars and the out-of-sample ones after them, which its out-of-sample run
// saw), at most as many at once as the pool has workers. It sets each
// window's LookaheadCheck and returns the run's summary; a lookahead in
// any window is an error naming the window, since an out-of-sample result
// built on a winner that read the future shows nothing real.
func (l *Local) checkWindows(ctx context.Context, p *plan, wins []window, times []int64, res *WalkForwardResult) (string, error) {
	if len(res.Windows) == 0 {
		return "not run: no window finished", nil
	}
	if ctx.Err() != nil {
		return "not run: the walk-forward was cancelled", nil
	}
	errs := make([]error, len(res.Windows))
	sem := make(chan struct{}, max(1, l.cfg.Pool.Size()))
	var wg sync.WaitGroup
	for k := range res.Windows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			w := wins[k]
			check, err := l.checkWinnerOver(ctx, p, res.Windows[k].Params, unixRFC3339(times[w.isLo]), unixRFC3339(times[w.oosHi-1]), "")
			res.Windows[k].LookaheadCheck, errs[k] = check, err
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return "not run: the walk-forward was cancelled", nil
	}
	for k, err := range errs {
		if err == nil {
			continue
		}
		var re *Error
		if errors.As(err, &re) {
			out := *re
			out.Msg = fmt.Sprintf("window %d: the lookahead check of the in-sample winner (%s) failed: %s", k+1, fmtParams(res.Windows[k].Params), re.Msg)
			return "", &out
		}
		return "", err
	}
	first, passed := res.Windows[0].LookaheadCheck, true
	same := true
	for _, w := range res.Windows {
		same = same && w.LookaheadCheck == first
		passed = passed && strings.HasPrefix(w.LookaheadCheck, "passed (")
	}
	switch {
	case same:
		return fmt.Sprintf("%s for the winner of each of %d windows", first, len(res.Windows)), nil
	case passed:
		// Each window draws its own cuts, so their verdicts differ in the
		// count and the seed only.
		return fmt.Sprintf("passed for the winner of each of %d windows (each window's lookahead_check names its cuts)", len(res.Windows)), nil
	}
	return fmt.Sprintf("checked for the winner of each of %d windows: see each window's lookahead_check", len(res.Windows)), nil
}
