package deploy

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/strategy"
	"wicket/strategy/book"
	"wicket/strategy/history"
)

// FundingPayment is a futures venue's funding settlement as the
// deployment's book took it: its share of the payment the venue booked
// for the symbol (the deployment's position over the venue's, at most
// all of it), received positive.
type FundingPayment struct {
	ID     string          `json:"id"` // the venue's id for the payment
	Time   time.Time       `json:"time"`
	Symbol string          `json:"symbol"`
	Venue  decimal.Decimal `json:"venue_amount"` // the whole payment
	Amount decimal.Decimal `json:"amount"`       // the deployment's share
	// Position is the deployment's position the share was charged on.
	Position decimal.Decimal `json:"position"`
	Note     string          `json:"note,omitempty"`
}

// bookFunding books into d the funding its venue settled since the last
// payment it read: on a venue that charges funding (binance-futures), each
// funding event of the node for d's symbol is booked once (by the node's
// event sequence), at the share of the venue's position d held since its
// last bar (its position before this bar's fills: a settlement comes
// between two bar closes). Cash takes it, so equity and the breakers see
// it, as the venue's account does. A read that fails is tried at the next
// bar.
func (r *Runner) bookFunding(ctx context.Context, d *Deployment, vc project.Venue) []FundingPayment {
	if vc.Kind != project.KindBinanceFutures {
		return nil
	}
	snap, err := r.cfg.Node.Snapshot(ctx, d.Venue, settleEvents)
	if err != nil || len(snap.Venues) == 0 {
		return nil
	}
	v := &snap.Venues[0]
	sym := v.Listed(d.Symbol)
	var venuePos decimal.Decimal
	for _, p := range v.Positions {
		if v.Listed(p.Symbol) == sym {
			venuePos = p.Quantity
		}
	}
	var out []FundingPayment
	for _, ev := range snap.Events {
		if ev.Kind != node.EventFunding || ev.Seq <= d.FundingSeq {
			continue
		}
		d.FundingSeq = ev.Seq
		if v.Listed(ev.Symbol) != sym || d.Position.IsZero() || ev.Time.Before(d.Created) {
			continue
		}
		share := decimal.NewFromInt(1)
		note := "the venue's whole payment: the deployment held the venue's position"
		if venuePos.Sign() == d.Position.Sign() && venuePos.Abs().GreaterThan(d.Position.Abs()) {
			share = d.Position.Div(venuePos)
			note = fmt.Sprintf("the deployment's %s of the venue's position %s", d.Position, venuePos)
		}
		amt := ev.Cash.Mul(share).Round(8)
		d.Cash, d.Funding = d.Cash.Add(amt), d.Funding.Add(amt)
		out = append(out, FundingPayment{ID: ev.VenueOrderID, Time: ev.Time.UTC(), Symbol: ev.Symbol, Venue: ev.Cash, Amount: amt, Position: d.Position, Note: note})
		r.log.Info("deployment booked funding", "deployment", d.ID, "symbol", ev.Symbol, "amount", amt)
	}
	return out
}

// commitFunding journals b's funding payments (each once) in tx.
func commitFunding(tx *sql.Tx, b Batch) error {
	if b.Deployment == nil {
		return nil
	}
	for _, f := range b.Funding {
		doc, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("deployments journal: %w", err)
		}
		if _, err := tx.Exec(`INSERT OR IGNORE INTO funding VALUES (?, ?, ?, ?)`, b.Deployment.ID, f.ID, f.Time.Unix(), string(doc)); err != nil {
			return fmt.Errorf("deployments journal: %w", err)
		}
	}
	return nil
}

// FundingPayments reads the funding a deployment booked, oldest first.
func (s *Store) FundingPayments(id string) ([]FundingPayment, error) {
	rows, err := s.read.Query(`SELECT doc FROM funding WHERE deployment = ? ORDER BY time, id`, id)
	if err != nil {
		return nil, fmt.Errorf("deployments journal: %w", err)
	}
	defer rows.Close()
	var out []FundingPayment
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("deployments journal: %w", err)
		}
		var f FundingPayment
		if err := json.Unmarshal([]byte(doc), &f); err != nil {
			return nil, fmt.Errorf("deployments journal: a funding row does not read: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FundingRates reads research's stored funding settlements of symbol
// (its canonical spelling, BTC-USD) in [from, to], oldest first: the
// rates `wicket data fetch --funding` wrote to the history store
// (history.Store.Funding). None and no error when the store holds none.
type FundingRates func(ctx context.Context, symbol string, from, to time.Time) ([]history.FundingRate, error)

// replayRates is the funding a replay charges: research's stored rates
// over its window when the store holds any for the symbol (held), else
// the rates live's payments imply; note says which, for the report.
type replayRates struct {
	held  bool
	rates []history.FundingRate
	gran  time.Duration // the series' bar length: the last bar's span
	note  string
}

// replayRates reads the stored funding rates of d's symbol over window
// w for a replay of a deployment on a venue that charges funding; a
// store that holds none, or cannot be read, leaves the replay on the
// rates live's payments imply, and the note says so.
func (r *Runner) replayRates(ctx context.Context, d *Deployment, w strategy.Bars, gran time.Duration, funding []FundingPayment) replayRates {
	vc, _ := r.cfg.Project.Venue(d.Venue)
	if vc.Kind != project.KindBinanceFutures || w.Len() == 0 {
		return replayRates{}
	}
	sym := d.Symbol
	if c, err := vc.Instruments().Canonical(sym); err == nil {
		sym = c
	}
	implied := fmt.Sprintf("no funding rates of %s are stored: the replay charges the rate each of live's %d payments implies "+
		"(fetch them with wicket data fetch --funding %s)", sym, len(funding), sym)
	if r.cfg.FundingRates == nil {
		return replayRates{note: implied}
	}
	from, to := time.Unix(w.Time[0], 0).UTC(), time.Unix(w.Time[w.Len()-1], 0).UTC().Add(gran-time.Millisecond)
	rates, err := r.cfg.FundingRates(ctx, sym, from, to)
	switch {
	case err != nil:
		return replayRates{note: fmt.Sprintf("the stored funding rates of %s could not be read (%v): the replay charges the rates live's payments imply", sym, err)}
	case len(rates) == 0:
		return replayRates{note: implied}
	}
	return replayRates{held: true, rates: rates, gran: gran, note: fmt.Sprintf("the replay charges the %d funding rates of %s stored from %s to %s "+
		"(research's history store), by the backtest's rule", len(rates), sym, rates[0].Time.Format(time.RFC3339), rates[len(rates)-1].Time.Format(time.RFC3339))}
}

// chargeFunding books the funding part into g: live's payments as
// booked, less the replay's funding on its own position. With stored
// rates (rp.rates.held) the replay pays by the backtest's rule
// (strategy/backtest costs.go): a settlement at t falls in the bar whose
// span holds it (book.FundingEnd; none outside the window's bars) and is
// charged at that bar's open, after the open's fill: position × open ×
// rate, paid when positive. Without, each live payment implies a rate
// per unit of position (its amount over the position live held), paid
// on the replay's position at the payment. It returns live's total and
// the replay's, and notes which rates the replay charged in a.
func chargeFunding(g *gapLedger, w strategy.Bars, rp *replayRun, funding []FundingPayment, a *Attribution) (live, model decimal.Decimal) {
	n := w.Len()
	t0 := time.Unix(w.Time[0], 0).UTC()
	if rp.rates.note != "" && (rp.rates.held || len(funding) > 0) {
		a.Notes = append(a.Notes, rp.rates.note)
	}
	// heldAt is the replay's position at bar i's open, after its fill.
	heldAt := func(i int) decimal.Decimal {
		var pos decimal.Decimal
		for _, m := range rp.fills {
			if m.bar < i || (m.bar == i && m.exit == "") {
				pos = pos.Add(m.qty.Round(attribPlaces))
			}
		}
		return pos
	}
	// barOf is the last bar opening at or before t (-1: none).
	barOf := func(t time.Time) int {
		i := -1
		for i+1 < n && w.Time[i+1] <= t.Unix() {
			i++
		}
		return i
	}
	for _, f := range funding {
		if f.Time.Before(t0) {
			continue
		}
		g.add(partFunding, f.Time, f.Amount, decimal.Zero)
		live = live.Add(f.Amount)
		if rp.rates.held || f.Position.IsZero() {
			continue
		}
		i := barOf(f.Time)
		if i < 0 {
			continue
		}
		mf := f.Amount.Mul(heldAt(i)).DivRound(f.Position, attribPlaces)
		g.add(partFunding, f.Time, mf.Neg(), decimal.Zero)
		model = model.Add(mf)
	}
	if !rp.rates.held {
		return live, model
	}
	barSecs := int64(rp.rates.gran / time.Second)
	for _, s := range rp.rates.rates {
		i := barOf(s.Time)
		if i < 0 || s.Time.Unix() >= book.FundingEnd(w.Time[i], nextOpen(w, i), i+1 < n, barSecs) {
			continue
		}
		mf := heldAt(i).Mul(decimal.NewFromFloat(w.Open[i])).Mul(s.Rate).Neg().Round(attribPlaces)
		g.add(partFunding, s.Time, mf.Neg(), decimal.Zero)
		model = model.Add(mf)
	}
	return live, model
}

// nextOpen is the open time of the bar after bar i of w (0 past the last).
func nextOpen(w strategy.Bars, i int) int64 {
	if i+1 < w.Len() {
		return w.Time[i+1]
	}
	return 0
}

// StoredFunding is FundingRates over the history store at path (the
// node's project store, which `wicket data fetch --funding` writes),
// opened read-only for each read; a store not made yet holds none.
func StoredFunding(path string) FundingRates {
	return func(_ context.Context, symbol string, from, to time.Time) ([]history.FundingRate, error) {
		s, err := history.OpenReadOnly(path)
		if err != nil {
			if history.IsNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		defer s.Close()
		return s.Funding(symbol, from, to)
	}
}
