package deploy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/book"
)

// Live against replay, in money (deployments.md): the difference between
// a deployment's live P&L and its replay's — the backtest engine over the
// same journaled bars with the strategy's decisions, filling by its rule
// (the next bar's open with the venue's slippage and fee; exits by the
// intrabar rule) — split into parts that sum to it exactly:
//
//   - decisions: orders one side made and the other did not (a decision
//     that diverged, an order the node refused or a breaker held back, an
//     exit that triggered on one side only, a position held before the
//     replayed window), valued at the marks after them;
//   - timing: the model's fill at the next open against the model's fill
//     rule applied when live filled (at the deciding bar's close), for the
//     quantity live filled; an exit fills on the same bar in both, so its
//     timing is 0;
//   - price: the live fill against the model's rule at that moment:
//     slippage against the model;
//   - sizing: the quantity live filled against the model's, valued from
//     the model's price on (earlier gaps compound into equity and so into
//     the next order's size; the venue's step cuts quantities);
//   - fees: the model's fees less live's;
//   - funding: funding live received (negative: paid) less the replay's:
//     the replay charges research's stored rates for the symbol by the
//     backtest's rule, or, where none are stored, the rate each live
//     payment implies on the position live held (attrib_funding.go).
//
// Each part is a ledger of cash and position flows, valued at each UTC
// day's last close: a day's part is the change of its value over the day,
// so days sum to the total, and parts to the gap. Money is decimal, each
// fill's quantity, value and fee kept to attribPlaces, so every sum is
// exact; bps are of the capital, rounded to a hundredth.

// Attribution is the gap between a deployment's live P&L and its
// replay's, by part, in total and per UTC day.
type Attribution struct {
	From    time.Time       `json:"from"` // the close the replayed window starts at
	To      time.Time       `json:"to"`   // its last bar
	Capital decimal.Decimal `json:"capital"`
	Live    decimal.Decimal `json:"live_pnl"`   // from the journaled fills and funding, at the last close
	Replay  decimal.Decimal `json:"replay_pnl"` // from the replay's fills, and its funding
	// ReplayFunding is the funding the replay would have received
	// (negative: paid) on its own position, at the stored rates or the
	// ones live's payments imply (chargeFunding); the backtest engine's
	// replay charges none itself.
	ReplayFunding decimal.Decimal `json:"replay_funding"`
	Total         GapParts        `json:"total"`
	Days          []GapDay        `json:"days"`
	// Assets, for a portfolio deployment, is the gap of each asset: the
	// parts of its own fills, which sum to the totals (attrib_portfolio.go).
	Assets []AssetGap `json:"assets,omitempty"`
	Notes  []string   `json:"notes,omitempty"`
}

// GapParts is a gap (live − replay) and its parts.
type GapParts struct {
	Gap       Amount `json:"gap"`
	Decisions Amount `json:"decisions"`
	Timing    Amount `json:"fill_timing"`
	Price     Amount `json:"fill_price"`
	Sizing    Amount `json:"sizing"`
	Fees      Amount `json:"fees"`
	Funding   Amount `json:"funding"`
}

// GapDay is one UTC day's gap and parts.
type GapDay struct {
	Day string `json:"day"` // YYYY-MM-DD, or FROM..TO for the earlier days summed (MaxGapDays)
	GapParts
}

// Amount is money (a decimal string) and its bps of the capital.
type Amount struct {
	Money decimal.Decimal `json:"money"`
	Bps   decimal.Decimal `json:"bps"`
}

// The parts, in GapParts' order.
const (
	partDecisions = iota
	partTiming
	partPrice
	partSizing
	partFees
	partFunding
	nParts
)

// MaxGapDays bounds the attribution's day rows: the earlier days of a
// longer window are summed in its first row ("FROM..TO").
const MaxGapDays = 31

// replayFill is one fill of the replay, in decimals.
type replayFill struct {
	bar  int // into the window
	exit string
	qty  decimal.Decimal // signed
	val  decimal.Decimal // qty × price, signed as qty
	fee  decimal.Decimal
}

// replayRun is the backtest engine run over window w with decisions as
// its signals and the strategy's exits, at the venue's fee and
// slippage, under the deployment's allowance, its fills kept.
type replayRun struct {
	res   *backtest.Result
	fills []replayFill
	slip  decimal.Decimal // a fraction of the price
	rates replayRates     // the funding rates it charges (attrib_funding.go)
}

// runReplay runs the replay of d over window w (from the first decision
// replayed) with the decisions decided (the live ones, or the replay's),
// from d's capital.
func (r *Runner) runReplay(ctx context.Context, d *Deployment, w strategy.Bars, decided []Decision) (*replayRun, error) {
	return r.runReplayFrom(ctx, d, w, decided, d.Capital)
}

// runReplayFrom is runReplay from another capital: the drift breaker's,
// whose window starts later, where live was flat with that equity.
func (r *Runner) runReplayFrom(ctx context.Context, d *Deployment, w strategy.Bars, decided []Decision, capital decimal.Decimal) (*replayRun, error) {
	n := w.Len()
	sig := strategy.Signals{Long: make([]bool, n), Short: make([]bool, n), Exit: make([]bool, n), Size: make([]float64, n),
		Exits: strategy.Exits{StopLoss: d.Exits.StopLoss, TakeProfit: d.Exits.TakeProfit, TrailingStop: d.Exits.TrailingStop}}
	at := map[int64]int{}
	for i, t := range w.Time {
		at[t] = i
		sig.Size[i] = 1
	}
	for _, dc := range decided {
		i, ok := at[dc.Bar.Unix()]
		if !ok || !dc.HasTarget {
			continue
		}
		switch {
		case dc.Target > 0:
			sig.Long[i], sig.Size[i] = true, dc.Target
		case dc.Target < 0:
			sig.Short[i], sig.Size[i] = true, -dc.Target
		default:
			sig.Exit[i] = true
		}
	}
	vc, _ := r.cfg.Project.Venue(d.Venue)
	allow := d.Allowance
	out := &replayRun{slip: decimal.NewFromFloat(vc.SlippageBps).Shift(-4)}
	var events []backtest.FillEvent
	cfg := backtest.Config{Capital: capital, FeeBps: vc.FeeBps, SlippageBps: vc.SlippageBps, Fill: backtest.FillNextOpen, Allowance: &allow,
		OnFill: func(f backtest.FillEvent) { events = append(events, f) }}
	res, err := backtest.Run(ctx, w, cfg, backtest.Decisions{Signals: &sig})
	if err != nil {
		return nil, err
	}
	out.res = res
	for _, f := range events {
		// The fill again by the one book's rule in decimals: its value and
		// fee exactly as the book makes them from the same mark and rates.
		qty := decimal.NewFromFloat(f.Qty).Round(attribPlaces) // the attribution's places first, so value ÷ quantity is the price
		val, fee := fillValue(decimal.NewFromFloat(f.Mark), qty, decimal.NewFromFloat(f.Slip), decimal.NewFromFloat(f.Rate))
		out.fills = append(out.fills, replayFill{bar: f.Bar, exit: f.Exit, qty: qty, val: val, fee: fee})
	}
	return out, nil
}

// fillValue is what a fill of qty (signed) at mark with slippage slip and
// fee rate rate costs by the book (strategy/book Account.Fill): its value
// (qty × price, slippage included) and its fee.
func fillValue(mark, qty, slip, rate decimal.Decimal) (val, fee decimal.Decimal) {
	if qty.IsZero() {
		return decimal.Zero, decimal.Zero
	}
	acct := book.DecimalAccount(decimal.Zero)
	var pos book.Position[decimal.Decimal]
	fee, _ = acct.Fill(&pos, 0, mark, qty, slip, rate)
	return acct.Cash.Neg().Sub(fee), fee
}

// fillKey pairs a live fill with the replay's: the bar that decided an
// order (it fills at the next open in the replay, at the close live), or
// the bar on whose path an exit filled, and the exit.
type fillKey struct {
	bar  int64
	exit string
}

// side is one side's fills of a key, summed.
type side struct {
	qty, val, fee decimal.Decimal
	at            time.Time // when it filled (the day it counts in)
	ok            bool
}

func (s *side) add(qty, val, fee decimal.Decimal, at time.Time) {
	s.qty, s.val, s.fee = s.qty.Add(qty.Round(attribPlaces)), s.val.Add(val.Round(attribPlaces)), s.fee.Add(fee.Round(attribPlaces))
	if !s.ok || at.Before(s.at) {
		s.at = at
	}
	s.ok = true
}

// attribPlaces is the decimals the attribution keeps its flows in (each
// fill's quantity, value and fee, and the parts computed from them), so
// its figures are exact and short.
const attribPlaces = 10

// gapLedger is each part's cash and position flows by day index.
type gapLedger struct {
	days  []int64 // Unix days of the window, ascending
	marks []decimal.Decimal
	cash  [nParts][]decimal.Decimal
	qty   [nParts][]decimal.Decimal
}

func newGapLedger(w strategy.Bars) *gapLedger {
	g := &gapLedger{}
	for i, t := range w.Time {
		day := book.UnixDay(t)
		c := decimal.NewFromFloat(w.Close[i])
		if n := len(g.days); n > 0 && g.days[n-1] == day {
			g.marks[n-1] = c
			continue
		}
		g.days, g.marks = append(g.days, day), append(g.marks, c)
	}
	for p := range nParts {
		g.cash[p] = make([]decimal.Decimal, len(g.days))
		g.qty[p] = make([]decimal.Decimal, len(g.days))
	}
	return g
}

// dayOf is t's day index, clamped to the window.
func (g *gapLedger) dayOf(t time.Time) int {
	day := book.UnixDay(t.Unix())
	i := 0
	for i < len(g.days)-1 && g.days[i] < day {
		i++
	}
	return i
}

func (g *gapLedger) add(part int, at time.Time, cash, qty decimal.Decimal) {
	i := g.dayOf(at)
	g.cash[part][i] = g.cash[part][i].Add(cash)
	g.qty[part][i] = g.qty[part][i].Add(qty)
}

// values is part's value at each day's last close.
func (g *gapLedger) values(part int) []decimal.Decimal {
	out := make([]decimal.Decimal, len(g.days))
	var cash, qty decimal.Decimal
	for i := range g.days {
		cash, qty = cash.Add(g.cash[part][i]), qty.Add(g.qty[part][i])
		out[i] = cash.Add(qty.Mul(g.marks[i]))
	}
	return out
}

// attribute sets the live fills of intents (and the funding booked)
// against the replay's over window w, whose first bar is the close the
// comparison starts at; diverged are the decision bars whose live
// decision the replay did not make.
func attribute(d *Deployment, w strategy.Bars, gran time.Duration, rp *replayRun, intents []Intent, funding []FundingPayment, diverged map[int64]bool) *Attribution {
	n := w.Len()
	t0 := time.Unix(w.Time[0], 0).UTC()
	a := &Attribution{From: t0.Add(gran), To: time.Unix(w.Time[n-1], 0).UTC(), Capital: d.Capital, Days: []GapDay{}}
	g := newGapLedger(w)
	closeAt := map[int64]decimal.Decimal{}
	for i, t := range w.Time {
		closeAt[t] = decimal.NewFromFloat(w.Close[i])
	}
	live, model := map[fillKey]*side{}, map[fillKey]*side{}
	var keys []fillKey // in the order first seen
	seen := map[fillKey]bool{}
	get := func(m map[fillKey]*side, k fillKey) *side {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		s := m[k]
		if s == nil {
			s = &side{}
			m[k] = s
		}
		return s
	}
	var carried decimal.Decimal // live's position at the window's start
	var liveQty, liveCash, modelQty, modelCash decimal.Decimal
	for _, in := range intents {
		if !in.Filled.IsPositive() {
			continue
		}
		qty := in.Filled
		if in.Side == "sell" {
			qty = qty.Neg()
		}
		k := fillKey{bar: in.Bar.Unix()}
		at := in.Bar.Add(gran)
		if in.Exit != "" {
			bar := in.Updated.Add(-gran).Truncate(gran) // booked at the close of the bar on whose path it filled
			k, at = fillKey{bar.Unix(), in.Exit}, bar
		}
		if k.bar < w.Time[0] {
			carried = carried.Add(qty)
			continue
		}
		get(live, k).add(qty, qty.Mul(in.Price), in.Fee, at)
	}
	if !carried.IsZero() {
		c := closeAt[w.Time[0]]
		g.add(partDecisions, t0, carried.Mul(c).Neg(), carried)
		liveQty, liveCash = liveQty.Add(carried), liveCash.Sub(carried.Mul(c))
		a.Notes = append(a.Notes, fmt.Sprintf("live held %s before the replayed window: valued from its first close %s, under decisions", carried, c))
	}
	for _, f := range rp.fills {
		at := time.Unix(w.Time[f.bar], 0).UTC()
		k := fillKey{bar: w.Time[f.bar], exit: f.exit}
		if f.exit == "" && f.bar > 0 {
			k.bar = w.Time[f.bar-1] // the deciding bar
		}
		get(model, k).add(f.qty, f.val, f.fee, at)
	}
	for _, k := range keys {
		L, M := live[k], model[k]
		if L != nil {
			liveQty, liveCash = liveQty.Add(L.qty), liveCash.Sub(L.val).Sub(L.fee)
		}
		if M != nil {
			modelQty, modelCash = modelQty.Add(M.qty), modelCash.Sub(M.val).Sub(M.fee)
		}
		switch {
		case L != nil && M != nil && !diverged[k.bar] && !L.qty.IsZero() && !M.qty.IsZero():
			// The model's price for the quantity live filled, and the
			// model's rule at live's moment (an entry: the deciding
			// bar's close; an exit: the model's own price).
			pM := M.val.DivRound(M.qty, 16)
			atModel := L.qty.Mul(pM)
			atLive := atModel
			if c, ok := closeAt[k.bar]; ok && k.exit == "" {
				atLive, _ = fillValue(c, L.qty, rp.slip, decimal.Zero)
			}
			timing := atModel.Sub(atLive).Round(attribPlaces)
			price := atLive.Sub(L.val).Round(attribPlaces)
			fees := M.fee.Sub(L.fee)
			diff := M.val.Sub(L.val).Add(fees) // live's cash less the model's
			g.add(partTiming, L.at, timing, decimal.Zero)
			g.add(partPrice, L.at, price, decimal.Zero)
			g.add(partFees, L.at, fees, decimal.Zero)
			g.add(partSizing, L.at, diff.Sub(timing).Sub(price).Sub(fees), L.qty.Sub(M.qty))
		default:
			if L != nil {
				g.add(partDecisions, L.at, L.val.Add(L.fee).Neg(), L.qty)
			}
			if M != nil {
				g.add(partDecisions, M.at, M.val.Add(M.fee), M.qty.Neg())
			}
		}
	}
	liveFunding, modelFunding := chargeFunding(g, w, rp, funding, a) // attrib_funding.go
	final := g.marks[len(g.marks)-1]
	a.Live = liveCash.Add(liveQty.Mul(final)).Add(liveFunding)
	a.Replay = modelCash.Add(modelQty.Mul(final)).Add(modelFunding)
	a.ReplayFunding = modelFunding

	bps := func(m decimal.Decimal) Amount { return amountOf(m, d.Capital) }
	vals := make([][]decimal.Decimal, nParts)
	for p := range nParts {
		vals[p] = g.values(p)
	}
	// parts is the change of each part's value from the close before
	// day from to the last close of day to.
	parts := func(from, to int) GapParts {
		v := func(p int) decimal.Decimal {
			if from == 0 {
				return vals[p][to]
			}
			return vals[p][to].Sub(vals[p][from-1])
		}
		var gp GapParts
		var sum decimal.Decimal
		for p, dst := range []*Amount{&gp.Decisions, &gp.Timing, &gp.Price, &gp.Sizing, &gp.Fees, &gp.Funding} {
			*dst = bps(v(p))
			sum = sum.Add(v(p))
		}
		gp.Gap = bps(sum)
		return gp
	}
	last := len(g.days) - 1
	a.Total = parts(0, last)
	date := func(i int) string { return time.Unix(g.days[i]*86400, 0).UTC().Format(time.DateOnly) }
	first := 0
	if len(g.days) > MaxGapDays { // the earlier days in one row, so the rows still sum to the total
		first = len(g.days) - MaxGapDays + 1
		a.Days = append(a.Days, GapDay{Day: date(0) + ".." + date(first-1), GapParts: parts(0, first-1)})
	}
	for i := first; i <= last; i++ {
		a.Days = append(a.Days, GapDay{Day: date(i), GapParts: parts(i, i)})
	}
	return a
}

// amountOf is money m and its bps of capital, to a hundredth.
func amountOf(m, capital decimal.Decimal) Amount {
	out := Amount{Money: m}
	if capital.IsPositive() {
		out.Bps = m.Shift(4).DivRound(capital, 2)
	}
	return out
}

// list is the parts as name, amount pairs, in order (for people).
func (p GapParts) list() []struct {
	Name string
	Amount
} {
	return []struct {
		Name string
		Amount
	}{{"decisions", p.Decisions}, {"fill timing", p.Timing}, {"fill price", p.Price}, {"sizing", p.Sizing}, {"fees", p.Fees}, {"funding", p.Funding}}
}

// Summary is the gap and its parts in one line: "gap -12.34 (-12.34 bps):
// decisions 0.00, fill timing -3.10 (...)".
func (p GapParts) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gap %s (%s bps):", p.Gap.Money.StringFixed(2), p.Gap.Bps.StringFixed(2))
	for i, x := range p.list() {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %s (%s bps)", x.Name, x.Money.StringFixed(2), x.Bps.StringFixed(2))
	}
	return b.String()
}
