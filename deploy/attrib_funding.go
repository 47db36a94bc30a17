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
	rows, err := s.db.Query(`SELECT doc FROM funding WHERE deployment = ? ORDER BY time, id`, id)
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
