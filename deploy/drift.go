package deploy

import (
	"context"
	"fmt"
	"math"
	"time"
	"wicket/strategy"
	"wicket/strategy/backtest"

	"github.com/shopspring/decimal"
)

// driftWindow is the drift breaker's window of a running deployment,
// kept between bars so a check reads only what the last step journaled:
// the decisions that decided since the window's start and the recorded
// bars from the first of them. The window starts at the deployment's
// first decision and moves on only to a decision taken flat (the one
// before it decided a flat target), at most MaxReportDecisions back:
// there live's equity is all cash, so a replay started from it with that
// equity as its capital is what live should have made since. A window
// cut anywhere else would replay from the capital, flat, against a live
// book that holds positions and has compounded, and call the difference
// drift. A deployment never flat keeps every decision.
type driftWindow struct {
	loaded  bool
	cut     bool // the window no longer starts at the first decision
	decided []Decision
	bars    strategy.Bars
}

// flatCut is the latest index k <= over at which decided may start a
// window (the decision before it decided a flat target), or 0.
func flatCut(decided []Decision, over int) int {
	for k := min(over, len(decided)-1); k > 0; k-- {
		if prev := decided[k-1]; prev.HasTarget && prev.Target == 0 {
			return k
		}
	}
	return 0
}

// refresh reads what d journaled since the last check.
func (w *driftWindow) refresh(s *Store, d *Deployment) error {
	after := int64(math.MinInt64)
	if n := len(w.decided); w.loaded && n > 0 {
		after = w.decided[n-1].Bar.Unix()
	}
	limit := MaxReportDecisions // one step journals one decision
	if !w.loaded {
		limit = -1 // all: where the window may start is read from the first
	}
	decs, err := s.decidedAfter(d.ID, after, limit)
	if err != nil {
		return err
	}
	w.decided = append(w.decided, decs...)
	if over := len(w.decided) - MaxReportDecisions; over > 0 {
		if k := flatCut(w.decided, over); k > 0 {
			w.decided, w.cut = w.decided[k:], true
		}
	}
	w.loaded = true
	if len(w.decided) == 0 {
		return nil
	}
	from := w.decided[0].Bar
	if n := w.bars.Len(); n > 0 {
		from = time.Unix(w.bars.Time[n-1]+1, 0)
	}
	more, err := s.barsSince(d.ID, d.Series, from)
	if err != nil {
		return err
	}
	if w.bars.Len() == 0 {
		w.bars.Series = d.Series
	}
	for i := range more.Time {
		appendBar(&w.bars, more.Time[i], more.Open[i], more.High[i], more.Low[i], more.Close[i], more.Volume[i])
	}
	k := 0
	for k < w.bars.Len() && w.bars.Time[k] < w.decided[0].Bar.Unix() {
		k++
	}
	if k > 0 {
		w.bars = w.bars.Slice(k, w.bars.Len())
	}
	return nil
}

// trackingGap is live P&L less the replay's over the latest decisions
// (the report's window): the live decisions replayed through the
// backtest engine over the journaled bars and bar (not journaled yet),
// against d's equity at bar's close. ok is false when there is nothing to
// compare yet.
func (r *Runner) trackingGap(ctx context.Context, d *Deployment, win *driftWindow, bar Bar) (gap, live, replay decimal.Decimal, ok bool, err error) {
	if err := win.refresh(r.cfg.Store, d); err != nil {
		return gap, live, replay, false, err
	}
	decided := win.decided
	if len(decided) == 0 || win.bars.Len() == 0 || win.bars.Time[0] != decided[0].Bar.Unix() {
		return gap, live, replay, false, nil
	}
	w := win.bars
	if n := w.Len(); w.Time[n-1] < bar.Time.Unix() {
		w = w.Slice(0, n) // a copy of the header: appending the bar leaves the window's own length alone
		appendBar(&w, bar.Time.Unix(), bar.Open, bar.High, bar.Low, bar.Close, bar.Volume)
	}
	// The live change over the window: from the capital, or, once the
	// window was cut (at a flat decision), from the equity before that
	// decision, which the replay starts from too; to d's now.
	start := d.Capital
	if win.cut && decided[0].Equity.IsPositive() {
		start = decided[0].Equity
	}
	rp, err := r.runReplayFrom(ctx, d, w, decided, start)
	if err != nil {
		return gap, live, replay, false, err
	}
	live = d.Equity.Sub(start)
	replay = decimal.NewFromFloat(rp.res.Curve.Equity[w.Len()-1]).Sub(start)
	return live.Sub(replay), live, replay, true, nil
}

// drifted checks the allowance's max_tracking_gap at bar's close and
// pauses d when live left its replay by more; it reports whether it
// paused d. A replay that cannot run pauses nothing (it is logged).
func (r *Runner) drifted(ctx context.Context, l *live, bar Bar, now time.Time) bool {
	d := l.d
	a := d.Allowance
	if a.MaxTrackingGap == nil || d.State != StateRunning {
		return false
	}
	gap, live, replay, ok, err := r.trackingGap(ctx, d, &l.drift, bar)
	if err != nil {
		r.log.Error("the drift breaker's replay could not run", "deployment", d.ID, "err", err)
		return false
	}
	return r.pauseDrifted(d, gap, live, replay, ok, bar.Time, now)
}

// pauseDrifted pauses d when its live P&L left its replay's by more than
// the allowance's max_tracking_gap (book Limits.Drifted), naming both and
// the bound; it reports whether it paused d. ok false: nothing compared.
func (r *Runner) pauseDrifted(d *Deployment, gap, live, replay decimal.Decimal, ok bool, bar, now time.Time) bool {
	limits := d.Allowance.Caps(d.Capital).Decimal()
	if !ok || !limits.Drifted(gap) {
		return false
	}
	r.pause(d, fmt.Sprintf("%s: live P&L %s is %s from its replay's %s at the close of %s, more than the allowance's %s (%s); the tracking report attributes the gap (wicket node deployments %s --report)",
		backtest.AllowMaxTrackingGap, live.StringFixed(2), gap.StringFixed(2), replay.StringFixed(2), bar.Format(time.RFC3339), d.Allowance.MaxTrackingGap,
		limits.Gap.StringFixed(2), d.ID), now)
	return true
}

// decidedAfter reads a deployment's latest limit decisions that decided
// at bars after after (Unix), oldest first.
func (s *Store) decidedAfter(id string, after int64, limit int) ([]Decision, error) {
	rows, err := s.read.Query(`SELECT bar, has_target, target, equity, note FROM
		(SELECT * FROM decisions WHERE deployment = ? AND status = ? AND bar > ? ORDER BY bar DESC LIMIT ?) ORDER BY bar`, id, DecisionDecided, after, limit)
	if err != nil {
		return nil, fmt.Errorf("deployments journal: %w", err)
	}
	defer rows.Close()
	var out []Decision
	for rows.Next() {
		var t int64
		d := Decision{Status: DecisionDecided}
		var eq string
		if err := rows.Scan(&t, &d.HasTarget, &d.Target, &eq, &d.Note); err != nil {
			return nil, fmt.Errorf("deployments journal: %w", err)
		}
		d.Equity, _ = decimal.NewFromString(eq)
		d.Bar = time.Unix(t, 0).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// barsSince reads a deployment's recorded bars from from on, oldest
// first.
func (s *Store) barsSince(id, series string, from time.Time) (strategy.Bars, error) {
	rows, err := s.read.Query(`SELECT time, open, high, low, close, volume FROM bars WHERE deployment = ? AND time >= ? ORDER BY time`, id, from.Unix())
	if err != nil {
		return strategy.Bars{}, fmt.Errorf("deployments journal: %w", err)
	}
	return scanBars(rows, series)
}
