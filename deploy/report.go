package deploy

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
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
	// Exits sets each protective exit that filled live against the
	// replay's: the backtest engine run over the same bars with the live
	// decisions and the strategy's exits, filling them by its intrabar
	// rule (ExitReplay says what it found; nil: no exits to replay).
	Exits *ExitReplay `json:"exits,omitempty"`
	// Attribution is live P&L against the replay's in money, by part
	// (decisions, fill timing, fill price, sizing, fees, funding), in
	// total and per UTC day (attrib.go); nil with nothing replayed.
	Attribution *Attribution `json:"attribution,omitempty"`
	// Funding is the funding the deployment's book took from its venue.
	Funding   []FundingPayment `json:"funding,omitempty"`
	Truncated string           `json:"truncated,omitempty"`
}

// ExitReplay is the replay of a deployment's protective exits: each live
// exit fill with the replay's fill of the same exit on the same bar, and
// the replay's exits that did not fill live.
type ExitReplay struct {
	Live        int         `json:"live"`
	Replayed    int         `json:"replayed"`
	Equal       int         `json:"equal"` // same bar and exit, price to the cent
	Fills       []ExitTrack `json:"fills"`
	MissedLive  []ExitTrack `json:"missed_live,omitempty"` // the replay's exits with no live fill
	Error       string      `json:"error,omitempty"`
	FinalEquity string      `json:"replay_final_equity,omitempty"`
}

// ExitTrack is one exit's fill, live and in the replay.
type ExitTrack struct {
	Bar         time.Time       `json:"bar"` // the bar on whose path it filled
	Exit        string          `json:"exit"`
	Live        decimal.Decimal `json:"live_price,omitzero"`
	Replay      decimal.Decimal `json:"replay_price,omitzero"`
	SlippageBps decimal.Decimal `json:"slippage_bps"` // live against the replay, in bps of the replay's price, against the trader when positive
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
	// Fee is the fill's fee in the venue's currency as the book took it;
	// FeeAsset and AssetFee, the part the venue charged in another asset
	// (BNB), in that asset (Fee counts it at its mark then).
	Fee      decimal.Decimal `json:"fee"`
	FeeAsset string          `json:"fee_asset,omitempty"`
	AssetFee decimal.Decimal `json:"asset_fee,omitzero"`
}

func target(has bool, t float64) string {
	if !has {
		return "no change"
	}
	return fmt.Sprint(t)
}

// Report replays deployment id's latest decisions and tracks its fills.
func (r *Runner) Report(ctx context.Context, id string) (Report, error) {
	if rep, ok, err := r.portfolioReport(ctx, id); ok { // a portfolio: portfolio_report.go
		return rep, err
	}
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
	replayed := make([]Decision, 0, len(decided)) // the replay's own decisions, for its P&L
	diverged := map[int64]bool{}
	for _, dc := range decided {
		k, ok := at[dc.Bar.Unix()]
		if !ok {
			continue
		}
		closeOf[dc.Bar.Unix()] = bars.Close[k]
		w := bars.Slice(max(0, k-d.Warmup), k+1)
		req, err := r.decideRequest(&d, w, nil) // an on_bar strategy's ctx: the journaled accounts
		if err != nil {
			return rep, err
		}
		got, err := r.cfg.Strategies.Decide(ctx, req)
		if err != nil {
			return rep, fmt.Errorf("replay of %s at %s: %w", id, dc.Bar.Format(time.RFC3339), err)
		}
		rep.Replayed++
		replayed = append(replayed, Decision{Bar: dc.Bar, Status: DecisionDecided, HasTarget: got.HasTarget, Target: got.Target})
		if got.HasTarget == dc.HasTarget && (!got.HasTarget || got.Target == dc.Target) {
			rep.Equal++
			continue
		}
		diverged[dc.Bar.Unix()] = true
		rep.Diverged = append(rep.Diverged, Divergence{Bar: dc.Bar, Live: target(dc.HasTarget, dc.Target), Replay: target(got.HasTarget, got.Target)})
		r.log.Error("deployment decision diverged from its replay (a defect)", "deployment", id, "bar", dc.Bar, "live", target(dc.HasTarget, dc.Target),
			"replay", target(got.HasTarget, got.Target))
	}
	intents, err := r.cfg.Store.Intents(id)
	if err != nil {
		return rep, err
	}
	rep.Exits = r.replayExits(ctx, &d, gran, bars, decided, intents)
	if rep.Funding, err = r.cfg.Store.FundingPayments(id); err != nil {
		return rep, err
	}
	rep.Attribution = r.attribution(ctx, &d, gran, bars, replayed, intents, rep.Funding, diverged)
	for _, in := range intents {
		if !in.Filled.IsPositive() || in.Exit != "" {
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
			Latency: in.Updated.Sub(in.Bar.Add(gran)), Fee: in.Fee, FeeAsset: in.FeeAsset, AssetFee: in.AssetFee})
	}
	return rep, nil
}

// replayExits runs the backtest engine over the journaled bars from the
// first decision replayed, with the live decisions as its signals and the
// strategy's exits, and sets the live exit fills against its own.
func (r *Runner) replayExits(ctx context.Context, d *Deployment, gran time.Duration, bars strategy.Bars, decided []Decision, intents []Intent) *ExitReplay {
	if !d.Exits.Any() || len(decided) == 0 || gran <= 0 {
		return nil
	}
	out := &ExitReplay{Fills: []ExitTrack{}}
	k0 := -1
	for i, t := range bars.Time {
		if t == decided[0].Bar.Unix() {
			k0 = i
		}
	}
	if k0 < 0 {
		out.Error = "the first replayed decision's bar is not in the journal"
		return out
	}
	w := bars.Slice(k0, bars.Len())
	n := w.Len()
	at := map[int64]int{}
	for i, t := range w.Time {
		at[t] = i
	}
	rp, err := r.runReplay(ctx, d, w, decided)
	if err != nil {
		out.Error = "the replay could not run: " + err.Error()
		return out
	}
	res := rp.res
	out.FinalEquity = decimal.NewFromFloat(res.Curve.Equity[n-1]).StringFixed(2)
	type key struct {
		bar  int64
		exit string
	}
	replay := map[key]decimal.Decimal{}
	for _, tr := range res.AllTrades {
		if tr.Exit != "" {
			replay[key{w.Time[tr.ExitBar], tr.Exit}] = decimal.NewFromFloat(tr.ExitPrice)
			out.Replayed++
		}
	}
	seen := map[key]bool{}
	for _, in := range intents {
		if in.Exit == "" || !in.Filled.IsPositive() {
			continue
		}
		bar := in.Updated.Add(-gran).Truncate(gran) // booked at the close of the bar on whose path it filled
		k := key{bar.Unix(), in.Exit}
		if _, ok := at[k.bar]; !ok {
			continue // before the replayed window
		}
		out.Live++
		tr := ExitTrack{Bar: bar, Exit: in.Exit, Live: in.Price}
		if rp, ok := replay[k]; ok {
			seen[k] = true
			tr.Replay = rp
			diff := rp.Sub(in.Price)
			if in.Side == "buy" {
				diff = diff.Neg()
			}
			tr.SlippageBps = diff.Div(rp).Shift(4).Round(4)
			if in.Price.Round(2).Equal(rp.Round(2)) {
				out.Equal++
			}
		}
		out.Fills = append(out.Fills, tr)
	}
	for k, p := range replay {
		if !seen[k] {
			out.MissedLive = append(out.MissedLive, ExitTrack{Bar: time.Unix(k.bar, 0).UTC(), Exit: k.exit, Replay: p})
		}
	}
	sort.Slice(out.MissedLive, func(i, j int) bool { return out.MissedLive[i].Bar.Before(out.MissedLive[j].Bar) })
	return out
}

// attribution replays the strategy's own decisions (replayed) over the
// journaled bars from the first one and attributes the gap between the
// live P&L and the replay's (attrib.go); nil when nothing was replayed.
func (r *Runner) attribution(ctx context.Context, d *Deployment, gran time.Duration, bars strategy.Bars, replayed []Decision, intents []Intent,
	funding []FundingPayment, diverged map[int64]bool) *Attribution {
	if len(replayed) == 0 || gran <= 0 {
		return nil
	}
	k0 := -1
	for i, t := range bars.Time {
		if t == replayed[0].Bar.Unix() {
			k0 = i
		}
	}
	if k0 < 0 {
		return nil
	}
	w := bars.Slice(k0, bars.Len())
	rp, err := r.runReplay(ctx, d, w, replayed)
	if err != nil {
		return &Attribution{Notes: []string{"the replay could not run: " + err.Error()}}
	}
	rp.rates = r.replayRates(ctx, d, w, gran, funding)
	a := attribute(d, w, gran, rp, intents, funding, diverged)
	if d.Style == "on_bar" {
		a.Notes = append(a.Notes, "an on_bar strategy's quantity orders are not replayed as targets: their fills count under decisions")
	}
	return a
}
