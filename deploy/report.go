package deploy

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy/worker"
)

// MaxReportDecisions bounds the decisions a tracking report replays (the
// latest ones).
const MaxReportDecisions = 500

// Report is a deployment's tracking: its live decisions replayed through
// the backtest's decision function over the same journaled bars (they must
// be equal; a divergence is a defect and is logged as one), and each fill
// against the bar it was decided at: the price difference from that bar's
// close (slippage, the market moving) and the time from the bar's close
// to the fill being booked (latency).
type Report struct {
	Deployment string       `json:"deployment"`
	Replayed   int          `json:"replayed"`
	Equal      int          `json:"equal"`
	Diverged   []Divergence `json:"diverged"`
	Fills      []FillTrack  `json:"fills"`
	Truncated  string       `json:"truncated,omitempty"`
}

// Divergence is a bar whose live decision the replay did not make.
type Divergence struct {
	Bar    time.Time `json:"bar"`
	Live   string    `json:"live"`
	Replay string    `json:"replay"`
}

// FillTrack is one order's fill against its bar.
type FillTrack struct {
	ClientOrderID string          `json:"client_order_id"`
	Bar           time.Time       `json:"bar"`
	Side          string          `json:"side"`
	Quantity      decimal.Decimal `json:"quantity"`
	Filled        decimal.Decimal `json:"filled"`
	BarClose      decimal.Decimal `json:"bar_close"`
	Price         decimal.Decimal `json:"price"`
	PriceDiff     decimal.Decimal `json:"price_diff"`   // price − bar close, against the trader when positive on a buy
	SlippageBps   decimal.Decimal `json:"slippage_bps"` // the difference in basis points of the close, signed against the trader
	Latency       time.Duration   `json:"latency_ns"`   // from the bar's close to the fill being booked
}

func target(has bool, t float64) string {
	if !has {
		return "no change"
	}
	return fmt.Sprint(t)
}

// Report replays deployment id's latest decisions and tracks its fills.
func (r *Runner) Report(ctx context.Context, id string) (Report, error) {
	l, err := r.get(id)
	if err != nil {
		return Report{}, err
	}
	l.mu.Lock()
	d := *l.d
	gran := l.gran
	l.mu.Unlock()
	rep := Report{Deployment: id, Diverged: []Divergence{}, Fills: []FillTrack{}}
	decs, err := r.cfg.Store.Decisions(id)
	if err != nil {
		return rep, err
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
	bars, err := r.cfg.Store.Bars(id, d.Series, len(decided)+d.Warmup+1+d.Missed)
	if err != nil {
		return rep, err
	}
	at := map[int64]int{}
	for i, t := range bars.Time {
		at[t] = i
	}
	closeOf := map[int64]float64{}
	for _, dc := range decided {
		k, ok := at[dc.Bar.Unix()]
		if !ok {
			continue
		}
		closeOf[dc.Bar.Unix()] = bars.Close[k]
		w := bars.Slice(max(0, k-d.Warmup), k+1)
		got, err := r.cfg.Strategies.Decide(ctx, worker.DecideRequest{
			StrategyRequest: worker.StrategyRequest{Name: d.Strategy, Source: d.Source, IndicatorsDir: r.cfg.IndicatorsDir, Overrides: d.Params},
			Series:          d.Series, Bars: w.Encode()})
		if err != nil {
			return rep, fmt.Errorf("replay of %s at %s: %w", id, dc.Bar.Format(time.RFC3339), err)
		}
		rep.Replayed++
		if got.HasTarget == dc.HasTarget && (!got.HasTarget || got.Target == dc.Target) {
			rep.Equal++
			continue
		}
		rep.Diverged = append(rep.Diverged, Divergence{Bar: dc.Bar, Live: target(dc.HasTarget, dc.Target), Replay: target(got.HasTarget, got.Target)})
		r.log.Error("deployment decision diverged from its replay (a defect)", "deployment", id, "bar", dc.Bar, "live", target(dc.HasTarget, dc.Target),
			"replay", target(got.HasTarget, got.Target))
	}
	intents, err := r.cfg.Store.Intents(id)
	if err != nil {
		return rep, err
	}
	for _, in := range intents {
		if !in.Filled.IsPositive() {
			continue
		}
		c, ok := closeOf[in.Bar.Unix()]
		if !ok {
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
	return rep, nil
}
