package deploy

import (
	"context"
	"fmt"
	"time"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/strategy/book"
)

// A portfolio deployment in propose mode proposes each asset's order as
// a deployment of one series proposes its own: the proposal waits for
// an operator while its asset keeps the weight it was sized for, lapses
// when the asset takes another weight (or the deployment pauses or
// stops); orders an operator approved ahead (approve-proposal --next N)
// go as they are decided. An approval sizes the order again at the
// asset's price then, within the allowance, and sends it through the
// leg's write path (sendLeg).

// proposeLegs turns the orders of a propose-mode portfolio bar into
// proposals (journaled in b), and returns those approved ahead, to send.
func (r *Runner) proposeLegs(ctx context.Context, d *Deployment, vc project.Venue, b *Batch, orders []Intent) []Intent {
	var send []Intent
	for _, in := range orders {
		leg := d.Legs[in.N]
		if p, ok := legProposal(d, in.N); ok {
			if p.Target == in.Target { // the same weight again: the waiting proposal stands
				continue
			}
			b.Intents = append(b.Intents, r.lapseLeg(d, in.N, fmt.Sprintf("lapsed: the strategy decided another weight for %s at the bar of %s", leg.Series, in.Bar.Format(time.RFC3339)))...)
		}
		if d.PreApproved > 0 && book.MayOrder(d.Allowance.MaxOrdersPerDay, d.OrdersToday+len(send)) {
			d.PreApproved--
			in.Note = fmt.Sprintf("sent on an operator's approval of the next orders (%d left); asset %s", d.PreApproved, leg.Series)
			send = append(send, in)
			continue
		}
		in.Status = IntentProposed
		d.Proposals = append(d.Proposals, Proposal{ClientOrderID: in.ClientOrderID, Bar: in.Bar, Side: in.Side, Quantity: in.Quantity, Target: in.Target,
			Symbol: leg.Symbol, Venue: d.Venue, BarClose: leg.Mark})
		b.Intents = append(b.Intents, in)
		r.log.Info("portfolio deployment proposes an order", "deployment", d.ID, "client_order_id", in.ClientOrderID, "symbol", leg.Symbol, "side", in.Side, "quantity", in.Quantity)
	}
	if len(send) > 0 {
		if why := r.unarmedVenue(ctx, vc); why != "" {
			for i := range send {
				send[i].Status, send[i].Note = IntentRefused, why
			}
			b.Intents = append(b.Intents, send...)
			return nil
		}
	}
	return send
}

// legProposal is the waiting proposal of leg k of d, if any.
func legProposal(d *Deployment, k int) (Proposal, bool) {
	for _, p := range d.Proposals {
		if p.Symbol == d.Legs[k].Symbol {
			return p, true
		}
	}
	return Proposal{}, false
}

// lapseLeg lapses the waiting proposals of leg k of d with note.
func (r *Runner) lapseLeg(d *Deployment, k int, note string) []Intent {
	var out []Intent
	kept := d.Proposals[:0]
	for _, p := range d.Proposals {
		if p.Symbol != d.Legs[k].Symbol {
			kept = append(kept, p)
			continue
		}
		if in, ok, err := r.cfg.Store.Intent(p.ClientOrderID); err == nil && ok && in.Status == IntentProposed {
			in.Status, in.Note, in.Updated = IntentLapsed, note, r.cfg.Now().UTC()
			out = append(out, in)
		}
	}
	d.Proposals = kept
	return out
}

// sendLegProposal sends the approved proposal p of portfolio deployment
// d (taken off its waiting list; the caller holds its lock) once, sized
// again at its asset's price now; note says who approved it.
func (r *Runner) sendLegProposal(ctx context.Context, d *Deployment, p Proposal, note string) (Intent, error) {
	cid := p.ClientOrderID
	in, ok, err := r.cfg.Store.Intent(cid)
	if err != nil || !ok || in.N < 0 || in.N >= len(d.Legs) {
		return Intent{}, errorf(KindInternal, "proposal %s is not in the deployments journal: %v", cid, err)
	}
	now := r.cfg.Now().UTC()
	if d.State != StateRunning {
		in.Status, in.Note, in.Updated = IntentLapsed, fmt.Sprintf("lapsed: the deployment is %s (%s)", d.State, d.Reason), now
		return in, r.cfg.Store.Commit(Batch{Deployment: d, Intents: []Intent{in}})
	}
	if !book.MayOrder(d.Allowance.MaxOrdersPerDay, d.OrdersToday) {
		r.pause(d, fmt.Sprintf("max_orders_per_day: %d orders sent today (UTC) already; the approved proposal %s was not sent", d.OrdersToday, cid), now)
		in.Status, in.Note, in.Updated = IntentLapsed, "not sent: "+d.Reason, now
		return in, r.cfg.Store.Commit(Batch{Deployment: d, Intents: []Intent{in}})
	}
	if why := r.resizeLeg(ctx, d, &in, p); why != "" {
		in.Status, in.Note, in.Updated = IntentLapsed, "not sent: "+why, now
		if err := r.cfg.Store.Commit(Batch{Deployment: d, Intents: []Intent{in}}); err != nil {
			return Intent{}, err
		}
		return in, errorf(KindConflict, "proposal %s was not sent: %s", cid, why)
	}
	in.Status, in.Note, in.Updated = IntentSending, in.Note+note, now
	d.OrdersToday++
	if err := r.cfg.Store.Commit(Batch{Deployment: d, Intents: []Intent{in}}); err != nil {
		return Intent{}, err
	}
	if err := r.sendLeg(ctx, d, &in); err != nil {
		return in, err
	}
	r.markPortfolio(d, d.LastBar)
	r.breakers(d, r.cfg.Now().UTC())
	return in, r.cfg.Store.Commit(Batch{Deployment: d})
}

// resizeLeg sizes an approved proposal of a leg again at the venue's
// price of its symbol now, on the deployment's equity at that price, as
// the bar's order was sized; it says why it cannot be sent ("" when it
// can).
func (r *Runner) resizeLeg(ctx context.Context, d *Deployment, in *Intent, p Proposal) string {
	leg := d.Legs[in.N]
	snap, err := r.cfg.Node.Snapshot(ctx, d.Venue, 0)
	if err != nil {
		return "the venue's price could not be read to size it again: " + err.Error()
	}
	px, ok := snap.Mark(d.Venue, leg.Symbol)
	if !ok || !px.IsPositive() {
		return fmt.Sprintf("venue %s has no price of %s now to size it again at", d.Venue, leg.Symbol)
	}
	vc, _ := r.cfg.Project.Venue(d.Venue)
	eq := d.Cash
	for k, l := range d.Legs {
		m := l.Mark
		if k == in.N {
			m = px
		}
		eq = eq.Add(l.Position.Mul(m))
	}
	qty := r.sizeLeg(ctx, d, vc, in.N, in.Target, eq, px)
	if qty.IsZero() {
		return fmt.Sprintf("at %s's price now, %s (the bar closed at %s), the weight %v needs no order within the allowance", leg.Symbol, px, p.BarClose, in.Target)
	}
	side := string(command.Buy)
	if qty.IsNegative() {
		side = string(command.Sell)
	}
	if side != in.Side {
		return fmt.Sprintf("at %s's price now, %s, reaching the weight %v takes a %s, not the %s proposed", leg.Symbol, px, in.Target, side, in.Side)
	}
	if !qty.Abs().Equal(in.Quantity) {
		in.Note = fmt.Sprintf("re-sized at approval from %s at the bar's close %s to %s at the price then, %s; ", in.Quantity, p.BarClose, qty.Abs(), px)
		in.Quantity = qty.Abs()
	}
	return ""
}
