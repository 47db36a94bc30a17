package deploy

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
)

// Live against replay for a portfolio deployment. Its replay is the
// portfolio backtest (strategy/portfolio, the engine its preview ran)
// over the legs' journaled bars from the first decision compared, with
// the decided weights at their calendar bars, the deployment's rebalance
// schedule, its capital and the venue's fee and slippage, filling at each
// asset's next open. P&L is additive over assets (each fill's cash flow
// and each position belong to one asset), so the gap is attributed asset
// by asset by the one rule of a series (attribute, attrib.go: each
// asset's fills against the replay's over its own bars, valued at its
// own closes) and the assets' parts summed: the parts still sum exactly
// to the gap, the days to the total, and each asset's gap is reported.
// The drift breaker (max_tracking_gap) compares the same replay's P&L,
// over everything the deployment decided, with live's at every calendar
// bar's close, through the pause every breaker takes.

// AssetGap is one asset's share of a portfolio's gap.
type AssetGap struct {
	Series string   `json:"series"`
	Total  GapParts `json:"total"`
}

// portfolioReplay is a portfolio backtest over a window of the legs'
// bars with the weights decided, its fills per leg.
type portfolioReplay struct {
	res   *portfolio.Result
	own   []strategy.Bars // each leg's bars in the window
	fills [][]replayFill  // per leg, bar indexes into own
	slip  decimal.Decimal
}

// runPortfolioReplay runs the portfolio backtest of d over each leg's
// bars in legs from unix time from to upto (inclusive), with weights
// (by calendar bar, in the legs' order, NaN for none) decided there. It
// needs two calendar bars at least (the first decision fills at the
// next); ok false when the window is shorter.
func (r *Runner) runPortfolioReplay(ctx context.Context, d *Deployment, legs []strategy.Bars, weights map[int64][]float64, from, upto int64) (*portfolioReplay, bool, error) {
	vc, _ := r.cfg.Project.Venue(d.Venue)
	out := &portfolioReplay{own: make([]strategy.Bars, len(legs)), fills: make([][]replayFill, len(legs)), slip: decimal.NewFromFloat(vc.SlippageBps).Shift(-4)}
	for k, b := range legs {
		i, j := 0, b.Len()
		for i < j && b.Time[i] < from {
			i++
		}
		for j > i && b.Time[j-1] > upto {
			j--
		}
		out.own[k] = b.Slice(i, j)
		out.own[k].Series = d.Legs[k].Series
	}
	assets, err := portfolio.Align(out.own)
	if err != nil {
		return nil, false, err
	}
	cal := assets[0].Time
	if len(cal) < 2 || cal[0] != from {
		return out, false, nil
	}
	cols := make([][]float64, len(legs))
	for k := range cols {
		cols[k] = make([]float64, len(cal))
		for i, t := range cal {
			cols[k][i] = math.NaN()
			if w, ok := weights[t]; ok {
				cols[k][i] = w[k]
			}
		}
	}
	reb, err := portfolio.ParseRebalance(d.Rebalance)
	if err != nil {
		return nil, false, err
	}
	cfg := backtest.DefaultConfig()
	cfg.Capital, cfg.FeeBps, cfg.SlippageBps, cfg.Fill = d.Capital, vc.FeeBps, vc.SlippageBps, backtest.FillNextOpen
	res, err := portfolio.RunFrom(ctx, assets, cols, reb, cfg, portfolio.Options{TradeFrom: time.Unix(cal[1], 0), RecordFills: true})
	if err != nil {
		return nil, false, err
	}
	out.res = res
	rate := decimal.NewFromFloat(vc.FeeBps).Shift(-4)
	for _, f := range res.Fills {
		k := slices.IndexFunc(d.Legs, func(l Leg) bool { return l.Series == f.Series })
		if k < 0 {
			continue
		}
		j := barIndex(out.own[k], f.Time.Unix())
		if j < 0 {
			continue
		}
		// The fill again by the one book's rule in decimals, from the
		// open it filled at (attrib.go's runReplay does the same).
		qty := decimal.NewFromFloat(f.Qty).Round(attribPlaces)
		val, fee := fillValue(decimal.NewFromFloat(out.own[k].Open[j]), qty, out.slip, rate)
		out.fills[k] = append(out.fills[k], replayFill{bar: j, qty: qty, val: val, fee: fee})
	}
	return out, true, nil
}

// barIndex is the index of the bar at unix time t in b (-1: none).
func barIndex(b strategy.Bars, t int64) int {
	i, ok := slices.BinarySearch(b.Time, t)
	if !ok {
		return -1
	}
	return i
}

// final is the replay's equity at the window's last close.
func (p *portfolioReplay) final() decimal.Decimal {
	eq := p.res.Curve.Equity
	return decimal.NewFromFloat(eq[len(eq)-1])
}

// portfolioAttribution attributes the gap between portfolio deployment
// d's live P&L and its replay's over the legs' bars from the first of
// decided (the replay's own decisions, weights by calendar bar) on;
// diverged are the calendar bars whose live weights the replay did not
// decide. Nil when nothing can be compared.
func (r *Runner) portfolioAttribution(ctx context.Context, d *Deployment, gran time.Duration, legs []strategy.Bars, decided []Decision,
	weights map[int64][]float64, intents []Intent, diverged map[int64]bool) *Attribution {
	if len(decided) == 0 || gran <= 0 {
		return nil
	}
	from := decided[0].Bar.Unix()
	upto := int64(math.MinInt64)
	for _, b := range legs {
		if n := b.Len(); n > 0 {
			upto = max(upto, b.Time[n-1])
		}
	}
	rp, ok, err := r.runPortfolioReplay(ctx, d, legs, weights, from, upto)
	if err != nil {
		return &Attribution{Notes: []string{"the replay could not run: " + err.Error()}}
	}
	if !ok {
		return nil
	}
	var parts []*Attribution
	var series []string
	for k := range d.Legs {
		w := rp.own[k]
		if w.Len() == 0 {
			continue
		}
		var own []Intent
		for _, in := range intents {
			if in.N == k {
				own = append(own, in)
			}
		}
		a := attribute(d, w, gran, &replayRun{fills: rp.fills[k], slip: rp.slip}, own, nil, diverged)
		parts, series = append(parts, a), append(series, d.Legs[k].Series)
	}
	return sumAttributions(d.Capital, parts, series)
}

// sumAttributions is the attributions of a portfolio's assets summed:
// money part by part, day by day (a day one asset has no bar on counts
// only the others), the bps again from the sums; each asset's total
// kept.
func sumAttributions(capital decimal.Decimal, parts []*Attribution, series []string) *Attribution {
	out := &Attribution{Capital: capital, Days: []GapDay{}, Assets: []AssetGap{}}
	if len(parts) == 0 {
		return nil
	}
	type money [nParts + 1]decimal.Decimal // the parts, then the gap
	of := func(p GapParts) money {
		return money{p.Decisions.Money, p.Timing.Money, p.Price.Money, p.Sizing.Money, p.Fees.Money, p.Funding.Money, p.Gap.Money}
	}
	back := func(m money) GapParts {
		a := func(i int) Amount { return amountOf(m[i], capital) }
		return GapParts{Decisions: a(partDecisions), Timing: a(partTiming), Price: a(partPrice), Sizing: a(partSizing), Fees: a(partFees), Funding: a(partFunding), Gap: a(nParts)}
	}
	add := func(x, y money) money {
		for i := range x {
			x[i] = x[i].Add(y[i])
		}
		return x
	}
	var total money
	days := map[string]money{}
	var keys []string
	for k, a := range parts {
		if out.From.IsZero() || a.From.Before(out.From) {
			out.From = a.From
		}
		if a.To.After(out.To) {
			out.To = a.To
		}
		out.Live, out.Replay, out.ReplayFunding = out.Live.Add(a.Live), out.Replay.Add(a.Replay), out.ReplayFunding.Add(a.ReplayFunding)
		total = add(total, of(a.Total))
		for _, day := range a.Days {
			if _, ok := days[day.Day]; !ok {
				keys = append(keys, day.Day)
			}
			days[day.Day] = add(days[day.Day], of(day.GapParts))
		}
		for _, n := range a.Notes {
			out.Notes = append(out.Notes, series[k]+": "+n)
		}
		out.Assets = append(out.Assets, AssetGap{Series: series[k], Total: a.Total})
	}
	slices.Sort(keys) // "FROM..TO" sorts before its TO's next day
	for _, k := range keys {
		out.Days = append(out.Days, GapDay{Day: k, GapParts: back(days[k])})
	}
	out.Total = back(total)
	return out
}

// portfolioDrift is what the drift breaker of a running portfolio
// deployment replays, kept between bars so that a check reads only what
// the last step journaled: every decision since the deployment's first
// (its weights by calendar bar) and each leg's journaled bars from it.
// The whole run is replayed, not the report's window: a replay from a
// later decision would start flat from the capital while live holds
// positions from before, a gap that is not drift.
type portfolioDrift struct {
	loaded  bool
	after   int64           // the last decision read (unix)
	from    int64           // the first decision's bar (0: none yet)
	start   decimal.Decimal // the equity at its close, before its orders
	weights map[int64][]float64
	legs    []strategy.Bars
}

// refresh reads what d journaled since the last check.
func (w *portfolioDrift) refresh(s *Store, d *Deployment) error {
	if !w.loaded {
		*w = portfolioDrift{loaded: true, after: math.MinInt64, weights: map[int64][]float64{}, legs: make([]strategy.Bars, len(d.Legs))}
	}
	decs, err := s.decidedAfter(d.ID, w.after, math.MaxInt32)
	if err != nil {
		w.loaded = false
		return err
	}
	names := make([]string, len(d.Legs))
	for k, l := range d.Legs {
		names[k] = l.Series
	}
	for _, dc := range decs {
		t := dc.Bar.Unix()
		if w.from == 0 {
			w.from, w.start = t, dc.Equity
		}
		if ws, ok := parseWeightsNote(names, dc.Note); ok {
			w.weights[t] = ws
		}
		w.after = t
	}
	if w.from == 0 {
		return nil
	}
	for k, l := range d.Legs {
		from := w.from
		if n := w.legs[k].Len(); n > 0 {
			from = w.legs[k].Time[n-1] + 1
		} else {
			w.legs[k].Series = l.Series
		}
		more, err := s.barsSince(legKey(d.ID, l.Series), l.Series, time.Unix(from, 0))
		if err != nil {
			w.loaded = false
			return err
		}
		for i := range more.Time {
			appendBar(&w.legs[k], more.Time[i], more.Open[i], more.High[i], more.Low[i], more.Close[i], more.Volume[i])
		}
	}
	return nil
}

// portfolioTrackingGap is live P&L less the replay's over everything
// portfolio deployment l has decided, at the close of calendar bar at
// (its legs' bars journaled): the live weights replayed through the
// portfolio backtest from the capital against the deployment's equity
// now. ok is false when there is nothing to compare yet.
func (r *Runner) portfolioTrackingGap(ctx context.Context, l *live, at time.Time) (gap, live, replay decimal.Decimal, ok bool, err error) {
	d, w := l.d, &l.pdrift
	if err := w.refresh(r.cfg.Store, d); err != nil || w.from == 0 {
		return gap, live, replay, false, err
	}
	rp, ok, err := r.runPortfolioReplay(ctx, d, w.legs, w.weights, w.from, at.Unix())
	if err != nil || !ok {
		return gap, live, replay, false, err
	}
	start := w.start
	if start.IsZero() {
		start = d.Capital
	}
	live = d.Equity.Sub(start)
	replay = rp.final().Sub(d.Capital)
	return live.Sub(replay), live, replay, true, nil
}

// driftedPortfolio is the drift breaker of portfolio deployment l at the
// close of calendar bar at: it pauses the deployment, as every breaker
// does, when its live P&L left its replay's by more than
// max_tracking_gap, and reports whether it did. A replay that cannot run
// pauses nothing (it is logged).
func (r *Runner) driftedPortfolio(ctx context.Context, l *live, at, now time.Time) bool {
	d := l.d
	if d.Allowance.MaxTrackingGap == nil || d.State != StateRunning {
		return false
	}
	gap, live, replay, ok, err := r.portfolioTrackingGap(ctx, l, at)
	if err != nil {
		r.log.Error("the drift breaker's replay could not run", "deployment", d.ID, "err", err)
		return false
	}
	return r.pauseDrifted(d, gap, live, replay, ok, at, now)
}

// parseWeightsNote reads a decision's weights back from its journal row
// (weightsNote): each asset's weight in names' order, NaN where it
// decided none; ok false when the note is not one.
func parseWeightsNote(names []string, note string) ([]float64, bool) {
	rest, ok := strings.CutPrefix(note, "weights ")
	if !ok {
		return nil, false
	}
	fields := strings.Fields(rest)
	if len(fields) != len(names) {
		return nil, false
	}
	out := make([]float64, len(names))
	for k, f := range fields {
		name, w, ok := strings.Cut(f, "=")
		if !ok || name != names[k] {
			return nil, false
		}
		if w == "-" {
			out[k] = math.NaN()
			continue
		}
		v, err := strconv.ParseFloat(w, 64)
		if err != nil {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}
