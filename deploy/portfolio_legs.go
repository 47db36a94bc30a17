package deploy

import (
	"context"
	"fmt"
	"time"
	"wicket/internal/project"
	"wicket/node"
	"wicket/strategy"
	"wicket/strategy/book"

	"github.com/shopspring/decimal"
)

// sizeLeg is the signed quantity that takes leg k of d to weight w of
// equity eq at price px by the one book's rules, the engine's sizing,
// clipped by the allowance's sizing limits for the leg's symbol
// (max_position_notional, max_order_notional, the capital) and cut to
// the venue's step or decimals.
func (r *Runner) sizeLeg(ctx context.Context, d *Deployment, vc project.Venue, k int, w float64, eq, px decimal.Decimal) decimal.Decimal {
	leg := &d.Legs[k]
	if !px.IsPositive() || !eq.IsPositive() {
		return decimal.Zero
	}
	sizing := book.Sizing(decimal.NewFromInt(1), decimal.NewFromFloat(vc.SlippageBps).Shift(-4), decimal.NewFromFloat(vc.FeeBps).Shift(-4))
	limits := d.Allowance.Caps(d.Capital).Decimal()
	dq := book.Target(decimal.NewFromFloat(w), eq, px, sizing, leg.Position)
	dq = limits.Clip(px, leg.Position, dq)
	if step := r.step(ctx, vc, leg.Symbol); step.IsPositive() {
		return dq.Div(step).Truncate(0).Mul(step)
	}
	return dq.Truncate(vc.QuantityDecimals)
}

// markPortfolio values d at its legs' marks at the bar of time bar, by
// the rule a deployment of one series marks by (markEquity).
func (r *Runner) markPortfolio(d *Deployment, bar time.Time) {
	eq := d.Cash
	for k := range d.Legs {
		leg := &d.Legs[k]
		leg.Value = leg.Position.Mul(leg.Mark)
		eq = eq.Add(leg.Value)
	}
	r.markEquity(d, eq, bar)
}

// legView is leg k of d as a deployment of one series: its symbol,
// position and round trip, with d's cash, so the settling of a
// deployment of one series books its fills by the one book.
func legView(d *Deployment, k int) Deployment {
	leg := d.Legs[k]
	return Deployment{ID: d.ID, Strategy: d.Strategy, StrategyHash: d.StrategyHash, Series: leg.Series, Symbol: leg.Symbol, Venue: d.Venue,
		Mode: d.Mode, Cash: d.Cash, Position: leg.Position, EntryQty: leg.EntryQty, EntryValue: leg.EntryValue, Mark: leg.Mark}
}

// fromView takes back what settling booked into leg k's view.
func fromView(d *Deployment, k int, v *Deployment) {
	leg := &d.Legs[k]
	d.Cash, leg.Position, leg.EntryQty, leg.EntryValue = v.Cash, v.Position, v.EntryQty, v.EntryValue
}

// settleLeg settles intent in (of leg in.N) from the node, as settle
// does for a deployment of one series.
func (r *Runner) settleLeg(ctx context.Context, d *Deployment, in *Intent, events int) bool {
	if in.N < 0 || in.N >= len(d.Legs) {
		return false
	}
	v := legView(d, in.N)
	changed := r.settleFrom(ctx, &v, in, events)
	fromView(d, in.N, &v)
	return changed
}

// sendLeg sends in (an order of leg in.N) through the node's one write
// path and settles what the node answered, as send does for a
// deployment of one series.
func (r *Runner) sendLeg(ctx context.Context, d *Deployment, in *Intent) error {
	v := legView(d, in.N)
	cmd := in.command(&v)
	reason := fmt.Sprintf("deployment %s (%s %s): %s to weight %v at the bar of %s", d.ID, d.Strategy, d.StrategyHash[:12], v.Series, in.Target, in.Bar.Format(time.RFC3339))
	p := node.NewPreview(ctx, r.cfg.Node, r.cfg.Guardrail, cmd, reason, r.cfg.NewID)
	if why := r.awaitMark(ctx, &p, cmd, reason); why != "" {
		in.Status, in.Note, in.Updated = IntentRefused, "not sent: the venue has no fresh mark of "+v.Symbol+" to fill it at ("+why+"); the bar is not traded late", r.cfg.Now().UTC()
		if d.OrdersToday > 0 {
			d.OrdersToday-- // counted when journaled; never sent
		}
		return r.cfg.Store.Commit(Batch{Deployment: d, Intents: []Intent{*in}})
	}
	res := node.Send(ctx, r.cfg.Node, p, node.TicketWait)
	if answered(in, res) { // step.go: the one reading of the node's answer
		r.settleLeg(ctx, d, in, sendEvents)
	}
	if in.Status == IntentRejected && d.OrdersToday > 0 {
		d.OrdersToday-- // a rejected order is not counted (nor in a backtest)
	}
	in.Updated = r.cfg.Now().UTC()
	r.log.Info("portfolio deployment order", "deployment", d.ID, "client_order_id", in.ClientOrderID, "symbol", v.Symbol, "status", in.Status, "side", in.Side, "quantity", in.Quantity)
	return r.cfg.Store.Commit(Batch{Deployment: d, Intents: []Intent{*in}})
}

// settleOpenPortfolio settles d's sent intents whose fills are not all
// known yet, and lapses an earlier bar's intent never sent.
func (r *Runner) settleOpenPortfolio(ctx context.Context, d *Deployment) []Intent {
	intents, err := r.cfg.Store.OpenIntents(d.ID)
	if err != nil {
		r.log.Error("deployments journal", "err", err)
		return nil
	}
	var out []Intent
	for _, in := range intents {
		switch in.Status {
		case IntentPending:
			if r.settleLeg(context.WithoutCancel(ctx), d, &in, settleEvents) {
				out = append(out, in)
			}
		case IntentSending:
			in.Status, in.Note, in.Updated = IntentLapsed, "lapsed: not sent before its bar passed (a restart); never traded late", r.cfg.Now().UTC()
			out = append(out, in)
		}
	}
	return out
}

// resendPortfolio sends the intents of the last bar that a crash left
// journaled but unsent, with their own client order ids.
func (r *Runner) resendPortfolio(ctx context.Context, d *Deployment, bar time.Time) error {
	intents, err := r.cfg.Store.OpenIntents(d.ID)
	if err != nil {
		return err
	}
	for _, in := range intents {
		if in.Status == IntentSending && in.Bar.Equal(bar) && d.State == StateRunning {
			if err := r.sendLeg(ctx, d, &in); err != nil {
				return err
			}
		}
	}
	return nil
}

// restorePortfolio settles a loaded portfolio deployment's open intents
// with the node (by client order id) and lapses its arming.
func (r *Runner) restorePortfolio(ctx context.Context, l *live) error {
	d := l.d
	d.ArmedUntil, d.PreApproved, d.Proposals = time.Time{}, 0, nil
	intents, err := r.cfg.Store.Intents(d.ID)
	if err != nil {
		return err
	}
	var changed []Intent
	for _, in := range intents {
		if in.Status == IntentSending || in.Status == IntentPending {
			if r.settleLeg(ctx, d, &in, settleEvents) {
				changed = append(changed, in)
			}
		}
	}
	return r.cfg.Store.Commit(Batch{Deployment: d, Intents: changed})
}

// loadLegs reads a portfolio deployment's journaled leg bars (its
// warm-up and the bars since).
func (r *Runner) loadLegs(l *live) error {
	l.legs = make([]strategy.Bars, len(l.d.Legs))
	for k, leg := range l.d.Legs {
		b, err := r.cfg.Store.Bars(legKey(l.d.ID, leg.Series), leg.Series, l.d.Warmup+1)
		if err != nil {
			return err
		}
		b.Series = leg.Series
		l.legs[k] = b
	}
	if len(l.d.Legs) > 0 {
		_, g, _ := strategy.ParseSeries(l.d.Legs[0].Series)
		l.gran = g.Duration()
	}
	return nil
}

// LegLines are a portfolio deployment's legs for people, one line each:
// series, the venue's symbol, position, mark and value, and the weight it
// last took (none for a deployment of one series).
func (d Deployment) LegLines() []string {
	out := make([]string, 0, len(d.Legs))
	for _, l := range d.Legs {
		w := "none yet"
		if l.HasWeight {
			w = fmt.Sprint(l.Weight)
		}
		line := fmt.Sprintf("%s (%s at %s): position %s at %s, worth %s; weight %s", l.Series, l.Symbol, d.Venue, l.Position, l.Mark, l.Value.StringFixed(2), w)
		if l.Late > 0 {
			line += fmt.Sprintf("; %d bar(s) late, not traded: %s", l.Late, l.LateNote)
		}
		out = append(out, line)
	}
	return out
}
