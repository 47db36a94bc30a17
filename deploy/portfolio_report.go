package deploy

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
)

// portfolioReport is Report for a portfolio deployment (ok false for one
// of one series): each journaled decision's weights replayed through the
// worker's decision function over the legs' journaled bars as they stood
// at that bar (they must be equal), and the fill of each decision replayed
// against the close of its asset's decision bar, and the gap between live
// P&L and the replay's attributed by part, per day and per asset
// (attrib_portfolio.go).
func (r *Runner) portfolioReport(ctx context.Context, id string) (Report, bool, error) {
	l, err := r.get(id)
	if err != nil {
		return Report{}, false, nil // Report says so
	}
	l.mu.Lock()
	d := *l.d
	d.Legs = append([]Leg(nil), l.d.Legs...)
	gran := l.gran
	l.mu.Unlock()
	if len(d.Legs) == 0 {
		return Report{}, false, nil
	}
	rep := Report{Deployment: id, Diverged: []Divergence{}, Fills: []FillTrack{}}
	decs, err := r.cfg.Store.Decisions(id)
	if err != nil {
		return rep, true, err
	}
	var decided []Decision
	for _, dc := range decs {
		if dc.Status == DecisionDecided {
			decided = append(decided, dc)
		}
	}
	if len(decided) > MaxReportDecisions {
		rep.Truncated = fmt.Sprintf("the latest %d of %d decisions replayed", MaxReportDecisions, len(decided))
		decided = decided[len(decided)-MaxReportDecisions:]
	}
	legs := make([]strategy.Bars, len(d.Legs))
	names := make([]string, len(d.Legs))
	for k, leg := range d.Legs {
		if legs[k], err = r.cfg.Store.Bars(legKey(id, leg.Series), leg.Series, len(decided)+d.Warmup+1+d.Missed); err != nil {
			return rep, true, err
		}
		legs[k].Series, names[k] = leg.Series, leg.Series
	}
	replayed := map[int64]bool{}
	weights := map[int64][]float64{} // the replay's own, for its P&L
	diverged := map[int64]bool{}
	for _, dc := range decided {
		t := dc.Bar.Unix()
		replayed[t] = true
		win := make([]strategy.Bars, len(legs))
		for k, b := range legs {
			end := 0
			for end < b.Len() && b.Time[end] <= t {
				end++
			}
			if end > 0 && b.Time[end-1] == t && slices.Contains(d.Legs[k].LateAt, t) {
				end-- // it arrived after live decided this bar without it
			}
			win[k] = b.Slice(max(0, end-(d.Warmup+1)), end)
			win[k].Series = b.Series
		}
		got, err := r.decidePortfolio(ctx, &d, win)
		if err != nil {
			return rep, true, fmt.Errorf("replay of %s at %s: %w", id, dc.Bar.Format(time.RFC3339), err)
		}
		rep.Replayed++
		col := make([]float64, len(names))
		for k := range col {
			col[k] = math.NaN()
			if k < len(got.Has) && got.Has[k] {
				col[k] = got.Weights[k]
			}
		}
		weights[t] = col
		if note := weightsNote(names, got); note == dc.Note {
			rep.Equal++
		} else {
			diverged[t] = true
			rep.Diverged = append(rep.Diverged, Divergence{Bar: dc.Bar, Live: dc.Note, Replay: note})
			r.log.Error("portfolio deployment decision diverged from its replay (a defect)", "deployment", id, "bar", dc.Bar, "live", dc.Note, "replay", note)
		}
	}
	intents, err := r.cfg.Store.Intents(id)
	if err != nil {
		return rep, true, err
	}
	rep.Attribution = r.portfolioAttribution(ctx, &d, gran, legs, decided, weights, intents, diverged)
	for _, in := range intents {
		if !in.Filled.IsPositive() || in.N < 0 || in.N >= len(legs) || !replayed[in.Bar.Unix()] { // the fills of the decisions replayed
			continue
		}
		b := legs[in.N]
		c := -1.0
		for k := range b.Time {
			if b.Time[k] == in.Bar.Unix() {
				c = b.Close[k]
			}
		}
		if c <= 0 {
			continue
		}
		bc := decimal.NewFromFloat(c)
		diff := in.Price.Sub(bc)
		against := diff
		if in.Side == "sell" {
			against = diff.Neg()
		}
		rep.Fills = append(rep.Fills, FillTrack{ClientOrderID: in.ClientOrderID, Bar: in.Bar, Side: in.Side, Quantity: in.Quantity, Filled: in.Filled,
			BarClose: bc, Price: in.Price, PriceDiff: diff, SlippageBps: against.Div(bc).Shift(4).Round(4),
			Latency: in.Updated.Sub(in.Bar.Add(gran))})
	}
	return rep, true, nil
}
