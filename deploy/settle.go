package deploy

import (
	"context"
	"fmt"
	"strings"
	"time"
	"wicket/node"
	"wicket/node/command"

	"github.com/shopspring/decimal"
)

// settleOpen settles the deployment's sent intents whose fills are not
// all known yet (a real venue fills later).
func (r *Runner) settleOpen(ctx context.Context, d *Deployment) []Intent {
	intents, err := r.cfg.Store.OpenIntents(d.ID)
	if err != nil {
		r.log.Error("deployments journal", "err", err)
		return nil
	}
	var out []Intent
	for _, in := range intents {
		switch {
		case in.Status == IntentPending || (in.Status == IntentSending && in.Parent != ""):
			if r.settle(context.WithoutCancel(ctx), d, &in) {
				out = append(out, in)
			}
		case in.Status == IntentSending: // an earlier bar's intent never sent: that bar is gone, never traded late
			in.Status, in.Note, in.Updated = IntentLapsed, "lapsed: not sent before its bar passed (a restart); never traded late", r.cfg.Now().UTC()
			out = append(out, in)
		}
	}
	if d.Guard == "" {
		d.Guard = workingGuard(intents, out)
	}
	if d.Guard != "" {
		status := map[string]string{}
		for _, in := range intents {
			status[in.ClientOrderID] = in.Status
		}
		for _, in := range out {
			status[in.ClientOrderID] = in.Status
		}
		working := false
		for _, in := range intents {
			if st := status[in.ClientOrderID]; in.Exit != "" && (in.ClientOrderID == d.Guard || in.Parent == d.Guard) && (st == IntentPending || st == IntentSending) {
				working = true
			}
		}
		if !working {
			d.Guard = ""
		}
	}
	return out
}

// workingGuard is the client order id of the command whose exit legs
// still work (pending or sending after settling: changed holds the
// intents settling changed), the newest such, or "". A node that died
// after its venue took a bracket's exits but before the deployment
// journaled the bracket as its guard leaves the guard unset with its legs
// working: it is found here, so the deployment neither protects its
// position a second time nor leaves those exits resting when it trades.
func workingGuard(intents, changed []Intent) string {
	status := map[string]string{}
	for _, in := range intents {
		status[in.ClientOrderID] = in.Status
	}
	for _, in := range changed {
		status[in.ClientOrderID] = in.Status
	}
	guard, at := "", time.Time{}
	for _, in := range intents {
		if st := status[in.ClientOrderID]; in.Exit == "" || (st != IntentPending && st != IntentSending) {
			continue
		}
		g := in.Parent
		if g == "" { // an oco's first leg is the command itself
			g = in.ClientOrderID
		}
		if guard == "" || !in.Bar.Before(at) {
			guard, at = g, in.Bar
		}
	}
	return guard
}

// settle reads in's order and fills from the node by client order id and
// books the fills not booked yet into d. It reports whether in changed.
func (r *Runner) settle(ctx context.Context, d *Deployment, in *Intent) bool {
	return r.settleFrom(ctx, d, in, settleEvents)
}

func (r *Runner) settleFrom(ctx context.Context, d *Deployment, in *Intent, events int) bool {
	snap, err := r.cfg.Node.Snapshot(ctx, d.Venue, events)
	if err != nil {
		return false
	}
	var qty, value, fee, assetFee decimal.Decimal
	var fills []fill // in.ClientOrderID's fills, oldest first
	feeAsset, unvalued := "", false
	for _, ev := range snap.Events {
		if ev.Kind == node.EventFilled && sentAs(in.ClientOrderID, ev.ClientOrderID) {
			f := ev.Fee.Add(ev.FeeValue) // a fee in another asset (BNB) at its worth when the node booked it
			qty, value, fee = qty.Add(ev.Quantity), value.Add(ev.Quantity.Mul(ev.Price)), fee.Add(f)
			if ev.FeeAsset != "" {
				feeAsset, assetFee = ev.FeeAsset, assetFee.Add(ev.AssetFee)
				unvalued = unvalued || ev.FeeValue.IsZero()
			}
			fills = append(fills, fill{qty: ev.Quantity, price: ev.Price, fee: f})
		}
	}
	working := false
	for _, v := range snap.Venues {
		for _, o := range v.OpenOrders {
			if sentAs(in.ClientOrderID, o.ClientOrderID) && o.Status.Working() {
				working = true
			}
		}
	}
	if qty.IsZero() && !working && in.Parent != "" && (in.Status == IntentSending || in.Status == IntentPending) {
		if events < settleEvents {
			return r.settleFrom(ctx, d, in, settleEvents)
		}
		// A leg the node placed with its command ended without a fill:
		// another leg filled, the group was canceled, or its entry never
		// filled. It is never sent on its own.
		in.Status, in.Updated = IntentCanceled, r.cfg.Now().UTC()
		in.Note = "canceled without a fill: another leg of " + in.Parent + " filled, the deployment canceled the group for a new order, or its entry never filled"
		return true
	}
	if qty.IsZero() && !working && (in.Status == IntentSending || in.Status == IntentPending) {
		if events < settleEvents { // its fills may be further back: many orders went in since
			return r.settleFrom(ctx, d, in, settleEvents)
		}
		order, found, err := r.known(ctx, in.ClientOrderID)
		if err != nil {
			return false // settled at a later bar
		}
		if !found { // never reached the node: sent again only while its bar is the latest
			if in.Status == IntentPending {
				in.Status, in.Updated = IntentSending, r.cfg.Now().UTC()
				return true
			}
			return false
		}
		if order != nil && order.Filled.IsPositive() {
			// Its fill events are older than the node keeps: the order
			// as the node answered it has the quantity and price; the
			// fee is not known here.
			qty, value = order.Filled, order.Filled.Mul(order.AveragePrice)
			if dq := qty.Sub(in.Filled); dq.IsPositive() { // the rest, at the price the average leaves it
				fills = []fill{{qty: dq, price: value.Sub(in.Filled.Mul(in.Price)).Div(dq)}}
			}
			in.Note = "settled from the node's order: its fill events were no longer among the node's recent events, so its fee is not booked"
		}
	}
	changed := false
	if dq := qty.Sub(in.Filled); dq.IsPositive() {
		// The fills not booked yet are the latest dq of them: each is
		// booked at the price and fee the venue reported, by the one
		// book (strategy/book), as the backtest books its fills.
		bookFills(d, in.Side == string(command.Sell), latest(fills, dq))
		in.Filled, in.Fee = qty, fee
		if feeAsset != "" {
			in.FeeAsset, in.AssetFee = feeAsset, assetFee
			if unvalued && !strings.Contains(in.Note, "not valued") {
				in.Note = strings.TrimPrefix(in.Note+"; ", "; ") + fmt.Sprintf("its fee of %s %s is not valued in the book: the venue gave no mark for %s (list a %s symbol there)",
					assetFee, feeAsset, feeAsset, feeAsset)
			}
		}
		in.Price = value.DivRound(qty, 10)
		d.Target, d.NoTarget = in.Target, in.Qty
		changed = true
	}
	status := in.Status
	switch {
	case !working && in.Filled.GreaterThanOrEqual(in.Quantity):
		status = IntentFilled
	case !working && (in.Status == IntentPending || in.Status == IntentSending):
		status = IntentFilled // done: partly filled or canceled; what filled is booked
		if in.Filled.IsZero() {
			status, in.Note = IntentRejected, "the order ended at the node without a fill"
			if in.Exit != "" {
				status, in.Note = IntentCanceled, "canceled without a fill: another leg filled, or the deployment canceled it for a new order"
			}
		}
	}
	if status != in.Status {
		in.Status, changed = status, true
	}
	if changed {
		in.Updated = r.cfg.Now().UTC()
	}
	return changed
}

// known reports whether the node's audit trail has an accepted command
// with client order id cid, and the order as the node answered it.
func (r *Runner) known(ctx context.Context, cid string) (*node.Order, bool, error) {
	a, ok := r.cfg.Node.(interface {
		Audit(ctx context.Context, q node.AuditQuery) (node.AuditPage, error)
	})
	if !ok {
		return nil, false, nil
	}
	page, err := a.Audit(ctx, node.AuditQuery{ClientOrderID: cid, Limit: 10})
	if err != nil {
		return nil, false, err
	}
	for _, e := range page.Entries {
		if e.Outcome.Status == node.Accepted {
			return e.Outcome.Order, true, nil
		}
	}
	return nil, false, nil
}

// The node's recent events settle reads: right after a send the fills of
// a paper order are among the last few; later, as many as the node keeps.
const (
	sendEvents   = 20
	settleEvents = 500
)
