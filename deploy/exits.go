package deploy

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/strategy/book"
	"wicket/strategy/worker"
)

// Protective exits. A signals strategy's stop_loss, take_profit and
// trailing_stop rest with every position it opens, priced from the
// position's average entry, as the backtest places them
// (strategy/backtest/protect.go). A deployment sends them through the
// node's one write path, as the node's own compound commands:
//
//   - an entry from flat with a stop-loss and a take-profit goes out as one
//     bracket (a market entry, its take-profit limit and stop-loss stop,
//     priced from the model's fill: the bar's close with the venue's
//     slippage, which is the backtest's next-open fill on a 24/7 tape), so
//     the node holds the exits from the entry's fill on: native at a venue
//     that takes brackets, after the entry at one that takes the exits only
//     then, node-held where the venue cannot hold a leg;
//   - any other position the deployment holds without protection (an entry
//     with a single exit, a resize, a reversal, exits lost at a restart)
//     gets its exits once the fill is booked: an oco (take-profit and
//     stop-loss), or a stop, a limit or a trailing stop, for the whole
//     position, priced from its average entry.
//
// Before a new order changes the position, the exits resting for it are
// canceled (one cancel_order of the command's client order id cancels its
// group); the order is not sent while a leg is still working. A leg's fill
// is booked into the deployment's cash and position like any fill, and
// sets its standing target to flat, as a backtest's exit does.

// Exits are a strategy's protective exits, fractions of the average entry
// price; 0 is none.
type Exits struct {
	StopLoss     float64 `json:"stop_loss,omitempty"`
	TakeProfit   float64 `json:"take_profit,omitempty"`
	TrailingStop float64 `json:"trailing_stop,omitempty"`
}

// Any reports whether e asks for a protective order.
func (e Exits) Any() bool { return e.StopLoss != 0 || e.TakeProfit != 0 || e.TrailingStop != 0 }

// bracket reports whether an entry with e goes out as one bracket.
func (e Exits) bracket() bool { return e.StopLoss != 0 && e.TakeProfit != 0 && e.TrailingStop == 0 }

func exitsOf(dec worker.Decision) Exits {
	return Exits{StopLoss: dec.StopLoss, TakeProfit: dec.TakeProfit, TrailingStop: dec.TrailingStop}
}

// uncarried names the exit no venue's command can carry with the others,
// or "" when every one can: the node's oco and bracket take a limit and a
// stop, never a trailing stop beside them.
func (e Exits) uncarried(strategyName string) string {
	if e.TrailingStop != 0 && (e.StopLoss != 0 || e.TakeProfit != 0) {
		other := "stop_loss"
		if e.StopLoss == 0 {
			other = "take_profit"
		}
		return fmt.Sprintf("strategy %s attaches a trailing_stop together with a %s, and no venue command carries a trailing leg in one group with another exit (an oco or a bracket is a limit and a stop): the trailing_stop leg cannot be placed as the backtest places it. Deploy it with the trailing_stop alone, or with stop_loss and take_profit",
			strategyName, other)
	}
	return ""
}

// Protective intents' numbers within a bar (ClientOrderID's n): the bar's
// order is 0.
const (
	nProtect = 2 // exits placed for the position the bar's order left
)

// priceRound puts p on the venue's price grid: its instrument's tick, or
// its price decimals.
func priceRound(p, tick decimal.Decimal, vc project.Venue) decimal.Decimal {
	if tick.IsPositive() {
		return p.Div(tick).Round(0).Mul(tick)
	}
	return p.Round(vc.PriceDecimals)
}

// exitPrices are the stop-loss and take-profit of a position long (or
// short) from entry, as the backtest prices them.
func exitPrices(e Exits, long bool, entry, tick decimal.Decimal, vc project.Venue) (stop, take decimal.Decimal) {
	one := decimal.NewFromInt(1)
	sign := one
	if !long {
		sign = sign.Neg()
	}
	if e.StopLoss != 0 {
		stop = priceRound(entry.Mul(one.Sub(sign.Mul(decimal.NewFromFloat(e.StopLoss)))), tick, vc)
	}
	if e.TakeProfit != 0 {
		take = priceRound(entry.Mul(one.Add(sign.Mul(decimal.NewFromFloat(e.TakeProfit)))), tick, vc)
	}
	return stop, take
}

// modelFill is the price the backtest fills an order of side at, decided
// at a bar closing at px: the next open (px on a 24/7 tape; a recorded
// tape's next open is passed as px, Config.NextOpen) with the venue's
// slippage against the trader.
func modelFill(px decimal.Decimal, side command.Side, vc project.Venue) decimal.Decimal {
	slip := decimal.NewFromFloat(vc.SlippageBps).Shift(-4)
	if side == command.Sell {
		slip = slip.Neg()
	}
	return px.Mul(decimal.NewFromInt(1).Add(slip))
}

// asBracket makes in, an entry from flat, one bracket with d's stop-loss
// and take-profit priced from the model's fill at px.
func asBracket(in *Intent, d *Deployment, px, tick decimal.Decimal, vc project.Venue) {
	side := command.Side(in.Side)
	in.Type, in.ClientOrderID = string(command.Bracket), groupID(in.ClientOrderID)
	in.StopPrice, in.LimitPrice = exitPrices(d.Exits, side == command.Buy, modelFill(px, side, vc), tick, vc)
}

// legs are the intents of in's exit legs that are not intents of their
// own command: a bracket's take-profit and stop-loss, an oco's stop.
func legs(in Intent) []Intent {
	closing := command.Side(in.Side)
	leg := func(suffix, exit string) Intent {
		return Intent{ClientOrderID: in.ClientOrderID + suffix, Deployment: in.Deployment, Bar: in.Bar, N: in.N, Side: string(closing),
			Quantity: in.Quantity, Status: IntentPending, Exit: exit, Parent: in.ClientOrderID, Updated: in.Updated,
			Note: "a leg of " + in.Type + " " + in.ClientOrderID}
	}
	switch command.OrderType(in.Type) {
	case command.Bracket:
		closing = closing.Opposite()
		return []Intent{leg(command.TakeProfitLegSuffix, "take_profit"), leg(command.StopLegSuffix, "stop_loss")}
	case command.OCO:
		return []Intent{leg(command.StopLegSuffix, "stop_loss")}
	}
	return nil
}

// command is the submit_order in asks the node for.
func (in Intent) command(d *Deployment) command.Command {
	c := command.Command{Verb: command.SubmitOrder, Venue: d.Venue, Symbol: d.Symbol, Side: command.Side(in.Side),
		Type: command.Market, Quantity: in.Quantity, ClientOrderID: in.ClientOrderID}
	switch t := command.OrderType(in.Type); t {
	case command.Bracket:
		c.Type, c.TakeProfit, c.StopPrice = t, in.LimitPrice, in.StopPrice
	case command.OCO:
		c.Type, c.Price, c.StopPrice = t, in.LimitPrice, in.StopPrice
	case command.Stop:
		c.Type, c.StopPrice = t, in.StopPrice
	case command.Limit:
		c.Type, c.Price = t, in.LimitPrice
	case command.TrailingStop:
		c.Type, c.TrailPercent = t, in.TrailPercent
	}
	return c
}

// protective is the command that protects d's whole position with its
// exits, priced from the position's average entry, as intent n of bar.
func (r *Runner) protective(ctx context.Context, d *Deployment, vc project.Venue, bar time.Time, n int) (Intent, bool) {
	if !d.Exits.Any() || d.Position.IsZero() || d.Guard != "" || !d.EntryQty.IsPositive() {
		return Intent{}, false
	}
	long := d.Position.IsPositive()
	closing := command.Sell
	if !long {
		closing = command.Buy
	}
	entry := d.EntryValue.Div(d.EntryQty)
	stop, take := exitPrices(d.Exits, long, entry, r.tick(ctx, vc, d.Symbol), vc)
	in := Intent{ClientOrderID: groupID(ClientOrderID(d.ID, bar, n)), Deployment: d.ID, Bar: bar, N: n, Side: string(closing),
		Quantity: d.Position.Abs(), Status: IntentSending, // Target 0: a leg's fill leaves the position flat Updated: r.cfg.Now().UTC(),
		StopPrice: stop, LimitPrice: take}
	e := d.Exits
	switch {
	case e.StopLoss != 0 && e.TakeProfit != 0:
		in.Type, in.Exit = string(command.OCO), "take_profit"
	case e.StopLoss != 0:
		in.Type, in.Exit = string(command.Stop), "stop_loss"
	case e.TakeProfit != 0:
		in.Type, in.Exit = string(command.Limit), "take_profit"
	default:
		in.Type, in.Exit = string(command.TrailingStop), "trailing_stop"
		in.TrailPercent = decimal.NewFromFloat(e.TrailingStop).Shift(2)
	}
	return in, true
}

// protect places the exits of d's position when it holds one without
// them (auto and propose alike: a protective order adds no exposure).
func (r *Runner) protect(ctx context.Context, d *Deployment, vc project.Venue, bar time.Time) error {
	if d.State != StateRunning {
		return nil
	}
	in, ok := r.protective(ctx, d, vc, bar, nProtect)
	if !ok {
		return nil
	}
	if why := r.unarmedVenue(ctx, vc); why != "" {
		return nil // a disarmed real venue takes nothing; the next bar tries again
	}
	if _, done, err := r.cfg.Store.Intent(in.ClientOrderID); err != nil || done {
		return err
	}
	if err := r.cfg.Store.Commit(Batch{Deployment: d, Intents: append([]Intent{in}, legs(in)...)}); err != nil {
		return err
	}
	return r.send(ctx, d, &in)
}

// unarmedVenue is unarmed for a command that protects a position: only
// the venue's arming matters (a position protected is never less safe).
func (r *Runner) unarmedVenue(ctx context.Context, vc project.Venue) string {
	if !vc.Real() {
		return ""
	}
	armed, err := r.venueArmed(ctx, vc.Name)
	switch {
	case err != nil:
		return "not sent: the venue's arming could not be read from the node: " + err.Error()
	case !armed:
		return fmt.Sprintf("not sent: venue %s is disarmed (an operator arms it: wicket node arm %s)", vc.Name, vc.Name)
	}
	return ""
}

// cancelGuard cancels the exits resting for d's position before an
// order changes it, and settles their legs. It reports why the order may
// not go now ("" when it may): a leg still working at the node.
func (r *Runner) cancelGuard(ctx context.Context, d *Deployment) (string, []Intent) {
	if d.Guard == "" {
		return "", nil
	}
	cmd := command.Command{Verb: command.CancelOrder, Venue: d.Venue, ClientOrderID: d.Guard}
	reason := fmt.Sprintf("deployment %s (%s %s): its exits make way for a new order", d.ID, d.Strategy, d.StrategyHash[:12])
	p := node.NewPreview(ctx, r.cfg.Node, r.cfg.Guardrail, cmd, reason, r.cfg.NewID)
	res := node.Send(ctx, r.cfg.Node, p, node.TicketWait)
	changed, working := r.settleGuard(ctx, d)
	if working {
		return fmt.Sprintf("not sent: the exits %s resting for the position could not be canceled first (%s %s)", d.Guard, res.Status, res.Reason+res.Advice), changed
	}
	return "", changed
}

// settleGuard settles the legs of d's guard from the node and clears the
// guard once none of them works; it reports the intents that changed and
// whether a leg still works.
func (r *Runner) settleGuard(ctx context.Context, d *Deployment) ([]Intent, bool) {
	if d.Guard == "" {
		return nil, false
	}
	open, err := r.cfg.Store.OpenIntents(d.ID)
	if err != nil {
		return nil, true
	}
	var changed []Intent
	working := false
	for _, in := range open {
		if in.Exit == "" || (in.ClientOrderID != d.Guard && in.Parent != d.Guard) {
			continue
		}
		if r.settle(context.WithoutCancel(ctx), d, &in) {
			changed = append(changed, in)
		}
		if in.Status == IntentPending || in.Status == IntentSending {
			working = true
		}
	}
	if !working {
		d.Guard = ""
	}
	return changed, working
}

// fill is one fill of an intent: its quantity, and the price and fee
// the venue reported.
type fill struct{ qty, price, fee decimal.Decimal }

// latest is the last qty of fills (oldest first): the newest whole, the
// oldest of them in part (its fee by its share) when qty ends inside it.
func latest(fills []fill, qty decimal.Decimal) []fill {
	i := len(fills)
	for i > 0 && qty.IsPositive() {
		i--
		qty = qty.Sub(fills[i].qty)
	}
	out := append([]fill(nil), fills[i:]...)
	if qty.IsNegative() && len(out) > 0 { // the oldest only in part
		f := &out[0]
		part := f.qty.Add(qty)
		f.fee, f.qty = f.fee.Mul(part).Div(f.qty), part
	}
	return out
}

// account is d's cash and position as the one book (strategy/book) keeps
// them: the open position's trip is its increases (EntryQty, EntryValue).
// Its flat tolerance is none: the venue's quantities are exact decimals,
// so a remainder the book would call dust (a float's rounding) is a real
// position the venue holds.
func (d *Deployment) account() (book.Account[decimal.Decimal], book.Position[decimal.Decimal]) {
	acct := book.DecimalAccount(d.Cash)
	acct.Dust = decimal.Zero
	pos := book.Position[decimal.Decimal]{Qty: d.Position}
	if !d.Position.IsZero() {
		pos.Trip = book.Trip[decimal.Decimal]{Active: true, Short: d.Position.IsNegative(), QtyIn: d.EntryQty, ValueIn: d.EntryValue}
		if d.EntryQty.IsPositive() {
			pos.Trip.Entry = d.EntryValue.Div(d.EntryQty)
		}
	}
	return acct, pos
}

// bookFills books fills (sells when sell) into d by the one book: cash
// falls by quantity × price + fee, and the entry follows the round trip
// (increases add to it, a reduction leaves it, a reversal starts a new
// one with what is left, flat clears it), as the backtest keeps it.
func bookFills(d *Deployment, sell bool, fills []fill) {
	acct, pos := d.account()
	for _, f := range fills {
		dq := f.qty
		if sell {
			dq = dq.Neg()
		}
		if !dq.IsZero() {
			acct.Book(&pos, 0, dq, f.price, f.fee)
		}
	}
	d.Cash, d.Position = acct.Cash, pos.Qty
	d.EntryQty, d.EntryValue = pos.Trip.QtyIn, pos.Trip.ValueIn
}

// tick is a real venue's price increment for symbol, as the node read it
// from the venue (zero: the venue's price_decimals apply).
func (r *Runner) tick(ctx context.Context, vc project.Venue, symbol string) decimal.Decimal {
	if !vc.Real() {
		return decimal.Zero
	}
	snap, err := r.cfg.Node.Snapshot(ctx, vc.Name, 0)
	if err != nil {
		return decimal.Zero
	}
	in, _ := snap.Instrument(vc.Name, symbol)
	return in.Tick
}

// checkExits refuses a strategy whose exits the venue cannot carry,
// naming the leg: one no command carries (a trailing stop grouped with
// another exit), or one the venue refuses to take (the node's dry run of
// the commands the deployment would send, priced at close, answers
// unsupported_order_type).
func (r *Runner) checkExits(ctx context.Context, d *Deployment, close float64) error {
	if !d.Exits.Any() {
		return nil
	}
	if why := d.Exits.uncarried(d.Strategy); why != "" {
		return errorf(KindBadRequest, "%s", why)
	}
	vc, _ := r.cfg.Project.Venue(d.Venue)
	px := decimal.NewFromFloat(close)
	qty := decimal.New(1, -vc.QuantityDecimals)
	if st := r.step(ctx, vc, d.Symbol); st.IsPositive() {
		qty = st
	}
	probe := *d
	probe.Position, probe.EntryQty, probe.EntryValue, probe.Guard = qty, qty, qty.Mul(px), ""
	var cmds []Intent
	if d.Exits.bracket() {
		entry := Intent{ClientOrderID: ClientOrderID(d.ID, time.Unix(0, 0), 0), Side: string(command.Buy), Quantity: qty}
		asBracket(&entry, d, px, r.tick(ctx, vc, d.Symbol), vc)
		cmds = append(cmds, entry)
	}
	if in, ok := r.protective(ctx, &probe, vc, time.Unix(0, 0), nProtect); ok {
		cmds = append(cmds, in)
	}
	for _, in := range cmds {
		c := in.command(d)
		v, err := r.cfg.Node.DryRun(ctx, command.NewEnvelope(c, "deploy check: can the venue carry the exits"))
		if err != nil || v.Code != "unsupported_order_type" {
			continue // only what the venue cannot take is refused here; the rest is the moment's
		}
		leg := in.Exit
		if leg == "" {
			leg = "stop_loss and take_profit (a bracket)"
		}
		return errorf(KindBadRequest, "venue %s cannot carry strategy %s's %s exit as %s: %s. Deploy it on a venue that takes it, or change the strategy's exits",
			d.Venue, d.Strategy, leg, in.Type, v.Reason)
	}
	return nil
}
