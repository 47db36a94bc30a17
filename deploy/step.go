package deploy

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/book"
)

// maxMissedRows bounds the missed bars recorded one by one after a gap;
// the rest are counted.
const maxMissedRows = 1000

// Step handles one closed bar of deployment id: it records the bar (and
// any bars missed before it), marks the deployment's equity at its close,
// checks the breakers, evaluates the strategy at the bar in a worker and
// turns a change of target into an order through the node's write path,
// journaling the intent before it is sent. A bar at or before the last one
// handled is not evaluated again; an intent of that bar left unsent by a
// crash is sent with its own client order id, which the node refuses if
// it had it already.
func (r *Runner) Step(ctx context.Context, id string, bar Bar) error {
	l, err := r.get(id)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() {
		if r.cfg.OnStep != nil {
			r.cfg.OnStep(id, bar.Time)
		}
	}()
	d := l.d
	if len(d.Legs) > 0 {
		return errorf(KindBadRequest, "deployment %s is a portfolio over %s: its calendar bars go to StepPortfolio", id, d.Series)
	}
	bar.Time = bar.Time.UTC()
	if !d.LastBar.IsZero() && !bar.Time.After(d.LastBar) {
		if bar.Time.Equal(d.LastBar) {
			return r.resend(ctx, l, bar)
		}
		return nil
	}
	if n := l.bars.Len(); n > 0 && bar.Time.Unix() <= l.bars.Time[n-1] {
		return nil // the warm-up from the history store holds it already
	}
	now := r.cfg.Now().UTC()
	vc, _ := r.cfg.Project.Venue(d.Venue)
	var b Batch
	b.Deployment = d
	b.Funding = r.bookFunding(ctx, d, vc) // on the position held since the last bar, before its fills
	b.Intents = append(b.Intents, r.settleOpen(ctx, d)...)
	// Bars missed while the node was down or the tape had a gap: reported,
	// never traded late.
	last := d.LastBar
	if last.IsZero() && l.bars.Len() > 0 { // the first live bar: the bars after the warm-up's last were skipped too
		last = time.Unix(l.bars.Time[l.bars.Len()-1], 0).UTC()
	}
	if !last.IsZero() && l.gran > 0 {
		n := 0
		for t := last.Add(l.gran); t.Before(bar.Time); t = t.Add(l.gran) {
			if n < maxMissedRows {
				b.Decisions = append(b.Decisions, Decision{Bar: t, Status: DecisionMissed, Note: "missed: no bar was handled at its close; never traded late"})
			}
			n++
		}
		d.Missed += n
	}
	b.Bars = append(b.Bars, bar)
	appendBar(&l.bars, bar.Time.Unix(), bar.Open, bar.High, bar.Low, bar.Close, bar.Volume)
	if over := l.bars.Len() - (d.Warmup + 1); over > 0 {
		l.bars = l.bars.Slice(over, l.bars.Len())
	}
	d.LastBar, d.Updated = bar.Time, now
	px := decimal.NewFromFloat(bar.Close)
	r.mark(d, px, bar.Time)
	if d.State != StateRunning {
		b.Intents = append(b.Intents, r.lapseProposals(d, "lapsed: the deployment is "+string(d.State))...)
		b.Decisions = append(b.Decisions, Decision{Bar: bar.Time, Status: DecisionNotRunning, Equity: d.Equity, Note: string(d.State) + ": " + d.Reason})
		return r.cfg.Store.Commit(b)
	}
	if r.breakers(d, now) || r.drifted(ctx, l, bar, now) {
		b.Intents = append(b.Intents, r.lapseProposals(d, "lapsed: a breaker paused the deployment")...)
		b.Decisions = append(b.Decisions, Decision{Bar: bar.Time, Status: DecisionNotRunning, Equity: d.Equity, Note: d.Reason})
		return r.cfg.Store.Commit(b)
	}
	acct := Account{Bar: bar.Time, Position: d.Position, Cash: d.Cash, Equity: d.Equity}
	b.Accounts = append(b.Accounts, acct)
	req, err := r.decideRequest(d, l.bars, &acct)
	if err != nil {
		return err
	}
	dec, err := r.cfg.Strategies.Decide(ctx, req)
	if err != nil {
		b.Decisions = append(b.Decisions, Decision{Bar: bar.Time, Status: DecisionFailed, Equity: d.Equity, Note: "the strategy could not be evaluated: " + err.Error()})
		if cerr := r.cfg.Store.Commit(b); cerr != nil {
			return cerr
		}
		return fmt.Errorf("deployment %s at %s: %w", id, bar.Time.Format(time.RFC3339), err)
	}
	b.Decisions = append(b.Decisions, Decision{Bar: bar.Time, Status: DecisionDecided, HasTarget: dec.HasTarget, Target: dec.Target, Equity: d.Equity})
	if dec.HasQty {
		b.Decisions[len(b.Decisions)-1].Note = fmt.Sprintf("quantity %v", dec.Qty)
	}
	// Propose mode batches: a proposal waits while the strategy still
	// wants its target (the same target again, or no change), and lapses
	// when it decides another.
	if len(d.Proposals) > 0 && (dec.HasTarget || dec.HasQty) {
		if p := d.Proposals[len(d.Proposals)-1]; dec.HasTarget && !p.Qty && p.Target == dec.Target {
			b.Decisions[len(b.Decisions)-1].Note = "still proposed: " + p.ClientOrderID + " waits for an operator"
			return r.cfg.Store.Commit(b)
		}
		b.Intents = append(b.Intents, r.lapseProposals(d, fmt.Sprintf("lapsed: the strategy decided another order at the bar of %s", bar.Time.Format(time.RFC3339)))...)
	}
	if !changed(d, dec) {
		// No change of target: nothing to trade (drift is not rebalanced,
		// as in the backtest); a position without its exits gets them.
		if err := r.cfg.Store.Commit(b); err != nil {
			return err
		}
		return r.protect(ctx, d, vc, bar.Time)
	}
	d.Exits = exitsOf(dec)            // the exits the order's position rests with
	at := r.fillBase(d, px, bar.Time) // taperun.go
	qty := r.order(d, vc, dec, at, r.step(ctx, vc, d.Symbol))
	if qty.IsZero() {
		d.Target, d.NoTarget = dec.Target, dec.HasQty
		if err := r.cfg.Store.Commit(b); err != nil {
			return err
		}
		return r.protect(ctx, d, vc, bar.Time)
	}
	if !book.MayOrder(d.Allowance.MaxOrdersPerDay, d.OrdersToday) {
		r.pause(d, fmt.Sprintf("%s: %d orders sent in the UTC day %s already, the allowance's limit; the order for target %v at %s was not sent",
			backtest.AllowMaxOrdersPerDay, d.OrdersToday, d.Day, dec.Target, bar.Time.Format(time.RFC3339)), now)
		return r.cfg.Store.Commit(b)
	}
	in := Intent{ClientOrderID: intentID(vc, d.ID, bar.Time, 0), Deployment: d.ID, Bar: bar.Time, Side: string(command.Buy),
		Quantity: qty.Abs(), Target: dec.Target, Qty: dec.HasQty, Status: IntentSending, Updated: now}
	if qty.IsNegative() {
		in.Side = string(command.Sell)
	}
	if d.Exits.bracket() && d.Position.IsZero() {
		asBracket(&in, d, at, r.tick(ctx, vc, d.Symbol), vc)
	}
	if d.Mode == ModePropose && d.PreApproved == 0 {
		in.Status = IntentProposed
		d.Proposals = append(d.Proposals, Proposal{ClientOrderID: in.ClientOrderID, Bar: bar.Time, Side: in.Side, Quantity: in.Quantity, Target: in.Target,
			Symbol: d.Symbol, Venue: d.Venue, BarClose: px, Type: in.Type, Qty: in.Qty})
		b.Intents = append(b.Intents, in)
		r.log.Info("deployment proposes an order", "deployment", d.ID, "client_order_id", in.ClientOrderID, "side", in.Side, "quantity", in.Quantity)
		return r.cfg.Store.Commit(b)
	}
	why := ""
	if d.Mode == ModePropose { // approved ahead by an operator: sent as approved, the venue's arming still applies
		d.PreApproved--
		in.Note = fmt.Sprintf("sent on an operator's approval of the next orders (%d left); ", d.PreApproved)
		why = r.unarmedVenue(ctx, vc)
	} else {
		why = r.unarmed(ctx, d, vc, now)
	}
	if why != "" {
		in.Status, in.Note = IntentRefused, why
		b.Intents = append(b.Intents, in)
		return r.cfg.Store.Commit(b)
	}
	if d.Guard != "" { // the exits resting for the position make way first
		why, changed := r.cancelGuard(ctx, d)
		b.Intents = append(b.Intents, changed...)
		if why != "" {
			in.Status, in.Note = IntentRefused, why
			b.Intents = append(b.Intents, in)
			return r.cfg.Store.Commit(b)
		}
		if q := r.order(d, vc, dec, at, r.step(ctx, vc, d.Symbol)); !q.Equal(qty) { // a leg filled meanwhile
			if q.IsZero() {
				d.Target, d.NoTarget = dec.Target, dec.HasQty
				return r.cfg.Store.Commit(b)
			}
			in.Quantity, in.Side = q.Abs(), string(command.Buy)
			if q.IsNegative() {
				in.Side = string(command.Sell)
			}
		}
	}
	// The intent is durable before the node hears of it.
	b.Intents = append(b.Intents, in)
	b.Intents = append(b.Intents, legs(in)...)
	d.OrdersToday++
	if err := r.cfg.Store.Commit(b); err != nil {
		return err
	}
	if err := r.send(ctx, d, &in); err != nil {
		return err
	}
	return r.protect(ctx, d, vc, bar.Time)
}

// resend sends the intents of the last bar that a crash left journaled
// but unsettled, with their own client order ids.
func (r *Runner) resend(ctx context.Context, l *live, bar Bar) error {
	intents, err := r.cfg.Store.OpenIntents(l.d.ID)
	if err != nil {
		return err
	}
	for _, in := range intents {
		if in.Status == IntentSending && in.Bar.Equal(bar.Time.UTC()) && l.d.State == StateRunning {
			if err := r.send(ctx, l.d, &in); err != nil {
				return err
			}
		}
	}
	return nil
}

// size is the signed quantity that takes d from its position to target
// (a fraction of its equity) at price px by the one book's rules
// (strategy/book), the backtest's: the target position costs
// (1+slippage)(1+fee) per unit of price, and the allowance's sizing
// limits clip it (the position within the capital and
// max_position_notional, not added to when drift took it above and
// always reducible; the order within max_order_notional). The quantity is
// then cut toward zero to the venue's step (a real venue's instrument) or
// decimals.
func (r *Runner) size(d *Deployment, vc project.Venue, target float64, px, step decimal.Decimal) decimal.Decimal {
	sizing := book.Sizing(decimal.NewFromInt(1), decimal.NewFromFloat(vc.SlippageBps).Shift(-4), decimal.NewFromFloat(vc.FeeBps).Shift(-4))
	eq := d.Cash.Add(d.Position.Mul(px))
	dq := book.Target(decimal.NewFromFloat(target), eq, px, sizing, d.Position)
	limits := d.Allowance.Caps(d.Capital).Decimal()
	dq = limits.Clip(px, d.Position, dq)
	if step.IsPositive() {
		return dq.Div(step).Truncate(0).Mul(step)
	}
	return dq.Truncate(vc.QuantityDecimals)
}

// step is a real venue's quantity increment for symbol, as the node read
// it from the venue (zero: the venue's quantity_decimals apply).
func (r *Runner) step(ctx context.Context, vc project.Venue, symbol string) decimal.Decimal {
	if !vc.Real() {
		return decimal.Zero
	}
	snap, err := r.cfg.Node.Snapshot(ctx, vc.Name, 0)
	if err != nil {
		return decimal.Zero
	}
	in, _ := snap.Instrument(vc.Name, symbol)
	return in.Step
}

// unarmed says why an auto deployment on a real venue may not send now,
// or "" when it may (paper venues need no arming).
func (r *Runner) unarmed(ctx context.Context, d *Deployment, vc project.Venue, now time.Time) string {
	if !vc.Real() {
		return ""
	}
	if !now.Before(d.ArmedUntil) {
		return fmt.Sprintf("not sent: deployment %s is disarmed (auto on a real venue sends only while an operator has armed it: wicket node arm %s)", d.ID, d.ID)
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

// send sends in through the node's one write path and settles what the
// node answered.
func (r *Runner) send(ctx context.Context, d *Deployment, in *Intent) error {
	cmd := in.command(d)
	reason := fmt.Sprintf("deployment %s (%s %s) to target %v at the bar of %s", d.ID, d.Strategy, d.StrategyHash[:12], in.Target, in.Bar.Format(time.RFC3339))
	if in.Exit != "" {
		reason = fmt.Sprintf("deployment %s (%s %s): the exits of its position, at the bar of %s", d.ID, d.Strategy, d.StrategyHash[:12], in.Bar.Format(time.RFC3339))
	}
	p := node.NewPreview(ctx, r.cfg.Node, r.cfg.Guardrail, cmd, reason, r.cfg.NewID)
	if why := r.awaitMark(ctx, &p, cmd, reason); why != "" {
		// No mark at the venue yet (the node just started, or its feed
		// lags): the order would be rejected no_mark. It is not sent, and
		// the bar is never traded late.
		in.Status, in.Note, in.Updated = IntentRefused, "not sent: the venue has no fresh mark to fill it at ("+why+"); the bar is not traded late", r.cfg.Now().UTC()
		if in.Exit == "" && d.OrdersToday > 0 {
			d.OrdersToday-- // counted when journaled; never sent
		}
		r.log.Warn("deployment order not sent: no mark", "deployment", d.ID, "client_order_id", in.ClientOrderID, "why", why)
		return r.cfg.Store.Commit(Batch{Deployment: d, Intents: []Intent{*in}})
	}
	res := node.Send(ctx, r.cfg.Node, p, node.TicketWait)
	now := r.cfg.Now().UTC()
	if answered(in, res) {
		r.settleFrom(ctx, d, in, sendEvents)
	}
	in.Updated = now
	switch {
	case in.Status != IntentRejected && in.Exit == "":
		d.Target, d.NoTarget = in.Target, in.Qty
	case in.Status == IntentRejected && in.Exit == "" && d.OrdersToday > 0:
		d.OrdersToday-- // counted when journaled; a rejected order is not (nor in a backtest)
	}
	if in.Status != IntentRejected && (in.Exit != "" || command.OrderType(in.Type) == command.Bracket) {
		d.Guard = in.ClientOrderID // its legs protect the position from now on
	}
	r.mark(d, d.Mark, in.Bar)
	r.breakers(d, now)
	r.log.Info("deployment order", "deployment", d.ID, "client_order_id", in.ClientOrderID, "status", in.Status, "side", in.Side, "quantity", in.Quantity)
	return r.cfg.Store.Commit(Batch{Deployment: d, Intents: []Intent{*in}})
}

// answered sets in's status from the node's answer to its send: rejected,
// pending with the node's advice (no answer yet), or pending to be
// settled from the node's order (taken, now or by an earlier send a
// restart repeated), which it reports. A single-series deployment and a
// portfolio's legs read an answer by this one rule.
func answered(in *Intent, res node.SendResult) (settle bool) {
	switch {
	case res.Status == string(node.Rejected) && res.ExistingOrder == nil:
		in.Status, in.Note = IntentRejected, "the node rejected it: "+res.Reason
	case res.Status == string(node.Accepted) || res.ExistingOrder != nil:
		in.Status = IntentPending
		if res.ExistingOrder != nil {
			in.Note = "the node had it already (a restart sent it again): settled from the node's order"
		}
		return true
	default:
		in.Status, in.Note = IntentPending, res.Advice
	}
	return false
}

// mark values d at price px at the bar of time bar, as the backtest marks
// a run (allowance.go): a bar of a new UTC day first starts the day at
// the equity the last mark left (the capital on the first day) and its
// order count at 0; the peak is the running peak, the capital included.
//
// The rule is book.Day's; the deployment journals its day as a date
// (day), which maps one to one to book.Day's Unix day.
func (r *Runner) mark(d *Deployment, px decimal.Decimal, bar time.Time) {
	acct, pos := d.account()
	r.markEquity(d, acct.Equity(&pos, px), bar)
	d.Mark = px
}

// markEquity is mark with the equity given (a portfolio's: its cash and
// every leg at its mark).
func (r *Runner) markEquity(d *Deployment, eq decimal.Decimal, bar time.Time) {
	day := book.Day[decimal.Decimal]{Day: unixDay(d.Day), Start: d.DayStart, Last: d.Equity, Peak: d.Peak}
	day.Mark(book.UnixDay(bar.Unix()), eq)
	if date := time.Unix(day.Day*86400, 0).UTC().Format(time.DateOnly); date != d.Day {
		d.Day, d.OrdersToday = date, 0
	}
	d.Equity, d.DayStart, d.Peak = day.Last, day.Start, day.Peak
}

// unixDay is the Unix day of a journaled date (YYYY-MM-DD), or before
// every day for none (book.NewDay's).
func unixDay(date string) int64 {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return math.MinInt64
	}
	return book.UnixDay(t.Unix())
}

// breakers checks the daily loss and drawdown limits by the one book's
// rule (strategy/book), the backtest's, and pauses d when one tripped; it
// reports whether d is paused.
func (r *Runner) breakers(d *Deployment, now time.Time) bool {
	if d.State != StateRunning {
		return d.State == StatePaused
	}
	a := d.Allowance
	limits := a.Caps(d.Capital).Decimal()
	day := book.Day[decimal.Decimal]{Start: d.DayStart, Last: d.Equity, Peak: d.Peak}
	switch limits.Breached(&day, d.Equity) {
	case book.DailyLoss:
		r.pause(d, fmt.Sprintf("%s: equity %s is %s below the UTC day's opening equity %s, more than the allowance's %s",
			backtest.AllowMaxDailyLoss, d.Equity.StringFixed(2), d.DayStart.Sub(d.Equity).StringFixed(2), d.DayStart.StringFixed(2), a.MaxDailyLoss), now)
		return true
	case book.Drawdown:
		dd := d.Peak.Sub(d.Equity).Div(d.Peak).Shift(2)
		r.pause(d, fmt.Sprintf("%s: equity %s is %s%% below its peak %s, more than the allowance's %s%%",
			backtest.AllowMaxDrawdownPct, d.Equity.StringFixed(2), dd.StringFixed(2), d.Peak.StringFixed(2), a.MaxDrawdownPct), now)
		return true
	}
	return false
}

// pause pauses d with why; only an operator resumes it.
func (r *Runner) pause(d *Deployment, why string, now time.Time) {
	d.State, d.Reason, d.Updated = StatePaused, why, now
	r.log.Warn("deployment paused", "deployment", d.ID, "breaker", why)
}

// lapseProposals lapses d's waiting proposals with note.
func (r *Runner) lapseProposals(d *Deployment, note string) []Intent {
	var out []Intent
	for _, p := range d.Proposals {
		in, ok, err := r.cfg.Store.Intent(p.ClientOrderID)
		if err != nil || !ok || in.Status != IntentProposed {
			continue
		}
		in.Status, in.Note, in.Updated = IntentLapsed, note, r.cfg.Now().UTC()
		out = append(out, in)
	}
	d.Proposals = nil
	return out
}

// Bars converts strategy bars to closed bars (for sources and tests).
func Bars(b strategy.Bars) []Bar {
	out := make([]Bar, b.Len())
	for i := range out {
		out[i] = Bar{Time: time.Unix(b.Time[i], 0).UTC(), Open: b.Open[i], High: b.High[i], Low: b.Low[i], Close: b.Close[i], Volume: b.Volume[i]}
	}
	return out
}

// awaitMark waits, up to Config.MarkWait, while the node's dry run of p
// says the venue has no fresh mark for its symbol (no_mark, stale_mark:
// after a restart the first price arrives before it becomes the mark),
// asking again every markPoll; it returns the node's reason when the mark
// never came, "" when the order may go.
func (r *Runner) awaitMark(ctx context.Context, p *node.Preview, cmd command.Command, reason string) string {
	noMark := func() bool {
		return p.DryRun != nil && !p.DryRun.WouldAccept && (p.DryRun.Code == "no_mark" || p.DryRun.Code == "stale_mark")
	}
	if !noMark() {
		return ""
	}
	for waited := time.Duration(0); waited < r.cfg.MarkWait; waited += markPoll {
		t := time.NewTimer(markPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return p.DryRun.Reason
		case <-t.C:
		}
		*p = node.NewPreview(ctx, r.cfg.Node, r.cfg.Guardrail, cmd, reason, r.cfg.NewID)
		if !noMark() {
			return ""
		}
	}
	return p.DryRun.Reason
}

// markPoll is how often awaitMark asks the node again.
const markPoll = 250 * time.Millisecond
