package server

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/paper"
)

// Exchange is what the node needs of a real venue's adapter (node/alpaca,
// node/binance). Every call is bounded by its context. A write that ends
// in node.ErrVenueUnknown may or may not have taken effect: the node never
// repeats it, it reconciles by client order id instead.
type Exchange interface {
	Kind() string
	Environment() string
	// MarkSource says where Marks come from, for the snapshot.
	MarkSource() string
	Instruments(ctx context.Context, symbols []string) (map[string]guardrail.Instrument, error)
	Account(ctx context.Context) (node.Account, error)
	Marks(ctx context.Context, symbols []string) (map[string]decimal.Decimal, error)
	Submit(ctx context.Context, r node.OrderRequest) (node.VenueOrder, error)
	// Holds says, for each leg of g (a single order: Class "" and one
	// leg), who holds it — the venue natively, or the node — or why the
	// venue cannot take it, naming what it can. It reads nothing from the
	// venue (the engine asks it at check time).
	Holds(g node.GroupRequest) ([]node.Hold, error)
	// SubmitGroup places linked legs (an oco, a bracket) in one request,
	// once; the answer lists each leg as the venue holds it, in g's order.
	SubmitGroup(ctx context.Context, g node.GroupRequest) ([]node.VenueOrder, error)
	// Cancel cancels o (ClientOrderID, VenueOrderID and Symbol set).
	Cancel(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error)
	// Replace changes o's total quantity, limit price, stop price or trail
	// (r: a zero field keeps o's own), as the venue's replace; the answer's
	// Filled counts o's earlier fills too.
	Replace(ctx context.Context, o node.VenueOrder, r node.Replacement) (node.VenueOrder, error)
	// Lookup finds an order by its venue id when o has one, else by the
	// node's client order id; an answer that it does not exist is
	// node.ErrVenueNotFound.
	Lookup(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error)
	OpenOrders(ctx context.Context, symbols []string) ([]node.VenueOrder, error)
	// Stream delivers order updates until ctx ends or the stream drops
	// (then it returns why). It reports Connected once it is subscribed.
	Stream(ctx context.Context, updates func(node.VenueUpdate)) error
}

// DefaultVenueTimeout bounds one call to a real venue.
const DefaultVenueTimeout = 10 * time.Second

// MaxArm is the longest an operator can arm a venue for.
const MaxArm = 24 * time.Hour

// remote is a real venue in the engine: the node's own book of the orders
// it placed (replayed from the journal like a paper venue's), beside the
// account, instruments, marks and external orders read from the venue.
type remote struct {
	*paper.Venue // the book: orders by id, marks; its cash and positions are not used
	cfg          project.Venue
	ex           Exchange

	instruments     map[string]guardrail.Instrument
	account         node.Account
	synced          bool          // the account has been read at least once
	accountSeq      int64         // the read that account came from (Server.readSeq)
	reads           *atomic.Int64 // numbers this venue's account reads (Server.readSeq)
	external        []node.VenueOrder
	connected       bool
	fees            map[string]decimal.Decimal // cumulative fee per order id, from fill events
	booked          map[string]decimal.Decimal // cumulative quantity × price per order id, from fill events
	reachedDisarmed map[string]bool            // held triggers reached while disarmed, logged once each
	// sent is when each bracket exit was sent to the venue (order_sent);
	// an exit not in it is kept by the node until its entry fills.
	sent map[string]time.Time
	// unguarded says, per symbol, which protective order last ended
	// without filling, and why: the snapshot's reason for an unprotected
	// position.
	unguarded map[string]string
	// funding is the funding booked from the venue (funding.go);
	// firstOrder when the node first placed an order here, from which on
	// funding is its business.
	funding    fundingBook
	firstOrder time.Time
	other      otherFees // fees paid in other assets (feeasset.go)
}

func newRemote(cfg project.Venue, ex Exchange, reads *atomic.Int64) *remote {
	return &remote{Venue: paper.New(cfg), cfg: cfg, ex: ex, fees: map[string]decimal.Decimal{}, booked: map[string]decimal.Decimal{}, reads: reads,
		sent: map[string]time.Time{}, unguarded: map[string]string{}}
}

// Apply keeps the per-order fee totals beside the book, and books a fill
// into the account at once, so the next command's checks see it before
// the venue's account is read again. An order_sent is the remote's own:
// the book does not change.
func (r *remote) Apply(ev node.Event) error {
	if ev.Kind == node.EventFunding {
		return r.applyFunding(ev)
	}
	if ev.Kind == node.EventAccepted && r.firstOrder.IsZero() {
		r.firstOrder = ev.Time
	}
	if ev.Kind == node.EventSent {
		o, ok := r.Order(ev.OrderID)
		if !ok || o.Parent == "" || o.Status != node.OrderPending {
			return fmt.Errorf("event %d: order_sent for order %s, which is not a pending bracket exit on %s", ev.Seq, ev.OrderID, r.cfg.Name)
		}
		r.sent[ev.OrderID] = ev.Time
		return nil
	}
	before, _ := r.Order(ev.OrderID)
	if err := r.Venue.Apply(ev); err != nil {
		return err
	}
	if (ev.Kind == node.EventFailed || ev.Kind == node.EventCanceled) && before.Type.Protective() {
		what := "was canceled without filling"
		if ev.Kind == node.EventFailed {
			what = "failed"
		}
		r.unguarded[before.Symbol] = fmt.Sprintf("its last protective order, %s %s %s (%s), %s: %s", before.ID, before.Type, before.Side, before.ClientOrderID, what, ev.Note)
	}
	if ev.Kind == node.EventFilled {
		r.fees[ev.OrderID] = r.fees[ev.OrderID].Add(ev.Fee)
		r.booked[ev.OrderID] = r.booked[ev.OrderID].Add(ev.Quantity.Mul(ev.Price))
		r.book(ev)
		r.applyAssetFee(ev) // feeasset.go
	}
	return nil
}

// book moves the account's position and cash by a fill. Account reads
// begun before it are stale from now on (setAccount refuses them).
func (r *remote) book(ev node.Event) {
	signed := ev.Quantity
	if ev.Side == command.Sell {
		signed = signed.Neg()
	}
	spent := signed.Mul(ev.Price).Add(ev.Fee)
	r.account.Cash = r.account.Cash.Sub(spent)
	if r.account.BuyingPower.IsPositive() {
		r.account.BuyingPower = r.account.BuyingPower.Sub(spent)
	}
	i := slices.IndexFunc(r.account.Positions, func(p node.VenuePosition) bool { return p.Symbol == ev.Symbol })
	if i < 0 {
		r.account.Positions = append(r.account.Positions, node.VenuePosition{Symbol: ev.Symbol})
		i = len(r.account.Positions) - 1
	}
	r.account.Positions[i].Quantity = r.account.Positions[i].Quantity.Add(signed)
	r.accountSeq = max(r.accountSeq, r.reads.Load())
}

// Cash is what a buy may spend: the venue's buying power (else its cash).
func (r *remote) Cash() decimal.Decimal {
	if r.account.BuyingPower.IsPositive() {
		return r.account.BuyingPower
	}
	return r.account.Cash
}

// Position is the venue's own position (last read).
func (r *remote) Position(symbol string) decimal.Decimal {
	for _, p := range r.account.Positions {
		if p.Symbol == symbol {
			return p.Quantity
		}
	}
	return decimal.Zero
}

// Held lists the configured symbols the account holds, sorted.
func (r *remote) Held() []string {
	var out []string
	for _, p := range r.account.Positions {
		if !p.Quantity.IsZero() && slices.Contains(r.cfg.Symbols, p.Symbol) {
			out = append(out, p.Symbol)
		}
	}
	sort.Strings(out)
	return out
}

// MarketPrice is the mark: the node does not guess a real venue's slippage.
func (r *remote) MarketPrice(symbol string, _ command.Side) (decimal.Decimal, bool) {
	return r.Mark(symbol)
}

// Fee is unknown before the venue charges it.
func (r *remote) Fee(decimal.Decimal, decimal.Decimal) decimal.Decimal { return decimal.Zero }

// Instrument is the venue's rule for symbol, once read.
func (r *remote) Instrument(symbol string) (guardrail.Instrument, bool) {
	in, ok := r.instruments[symbol]
	return in, ok
}

// Snapshot is the venue for the wire: the account from the venue, the
// node's working orders from its book, and the orders it did not place.
func (r *remote) Snapshot() node.Venue {
	book := r.Venue.Snapshot()
	out := node.Venue{
		Name: r.cfg.Name, Kind: r.cfg.Kind, Environment: r.cfg.Environment, MayArm: r.cfg.MayArm,
		MarkSource: r.ex.MarkSource(), Account: r.account.ID, Currency: r.account.Currency,
		Symbols: slices.Clone(r.cfg.Symbols), QuantityDecimals: r.cfg.QuantityDecimals, PriceDecimals: r.cfg.PriceDecimals,
		Cash: r.account.Cash, BuyingPower: r.account.BuyingPower, Marks: book.Marks,
		Positions: []node.Position{}, OpenOrders: book.OpenOrders, Instruments: r.instruments,
		Connection: "disconnected", Funding: r.funding.total, AssetFees: r.assetFees(),
	}
	if out.Currency == "" {
		out.Currency = r.cfg.Currency
	}
	if r.connected {
		out.Connection = "connected"
	}
	equity := r.account.Cash
	for _, p := range r.account.Positions {
		pos := node.Position{Symbol: p.Symbol, Quantity: p.Quantity, AveragePrice: p.AveragePrice}
		if m, ok := book.Marks[p.Symbol]; ok {
			pos.Mark, pos.MarketValue = m, p.Quantity.Mul(m)
			if p.AveragePrice.IsPositive() {
				pos.UnrealizedPnL = p.Quantity.Mul(m.Sub(p.AveragePrice)).Round(8)
			}
		}
		if r.account.Margined { // futures: the venue's own figures; equity is cash + unrealised P&L
			pos = marginedPosition(p, pos)
			equity = equity.Add(pos.UnrealizedPnL)
		} else {
			equity = equity.Add(pos.MarketValue)
		}
		out.UnrealizedPnL = out.UnrealizedPnL.Add(pos.UnrealizedPnL)
		out.Positions = append(out.Positions, pos)
	}
	out.Equity = equity.Round(8)
	for i, o := range out.OpenOrders {
		if r.waiting(o) { // held until its entry is done, or not at the venue yet: it protects nothing
			out.OpenOrders[i].Inactive = true
		}
	}
	out.Groups = book.Groups // paper's rule: the compound orders with a working leg
	for i, g := range out.Groups {
		entry, _ := r.Order(g.ID)
		waits := false
		for j, l := range g.Legs {
			if o, _ := r.Order(l.OrderID); r.waiting(o) {
				g.Legs[j].Inactive, waits = true, true
			}
		}
		switch {
		case r.keeps(g.ID):
			out.Groups[i].State = node.GroupAwaitingEntry
			out.Groups[i].Note = fmt.Sprintf("%s takes a bracket's exits only once its entry has filled: the node keeps them and sends them as one oco when entry %s is done (%s of %s filled so far)",
				r.cfg.Name, entry.ID, entry.Filled, entry.Quantity)
		case waits:
			out.Groups[i].State = node.GroupAwaitingEntry
			out.Groups[i].Note = fmt.Sprintf("%s holds the exits until entry %s has filled (%s of %s so far)", r.cfg.Name, entry.ID, entry.Filled, entry.Quantity)
		}
	}
	for _, o := range r.external {
		out.ExternalOrders = append(out.ExternalOrders, node.Order{
			ID: "external", ClientOrderID: o.ClientOrderID, VenueOrderID: o.VenueOrderID, Venue: r.cfg.Name,
			Symbol: o.Symbol, Side: o.Side, Type: o.Type, Quantity: o.Quantity, Price: o.Price, TimeInForce: o.TimeInForce,
			Status: node.OrderOpen, Filled: o.Filled, AveragePrice: o.AveragePrice, Updated: o.Updated,
			Note: "external: not placed by this node; never touched unless an operator names it",
		})
	}
	return out
}

// marginedPosition is a margined venue's position as the venue states it.
func marginedPosition(p node.VenuePosition, pos node.Position) node.Position {
	if p.Mark.IsPositive() {
		pos.Mark, pos.MarketValue = p.Mark, p.Quantity.Mul(p.Mark)
	}
	pos.UnrealizedPnL, pos.Leverage, pos.MarginType, pos.Margin, pos.LiquidationPrice, pos.Closed =
		p.UnrealizedPnL, p.Leverage, p.MarginType, p.Margin, p.LiquidationPrice, p.Closed
	return pos
}

// request is the venue's form of a node order.
func (o orderOf) request() node.OrderRequest {
	return node.OrderRequest{ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side, Type: o.Type,
		TimeInForce: o.TimeInForce, Quantity: o.Quantity, Price: o.Price, StopPrice: o.StopPrice, TrailAmount: o.TrailAmount, TrailPercent: o.TrailPercent,
		ReduceOnly: o.ReduceOnly}
}

// orderOf adds the venue's view to a node order.
type orderOf node.Order

func (o orderOf) venueOrder() node.VenueOrder {
	return node.VenueOrder{ClientOrderID: o.ClientOrderID, VenueOrderID: o.VenueOrderID, Symbol: o.Symbol, Side: o.Side,
		Type: o.Type, TimeInForce: o.TimeInForce, Quantity: o.Quantity, Price: o.Price, StopPrice: o.StopPrice, TrailAmount: o.TrailAmount, TrailPercent: o.TrailPercent,
		Filled: o.Filled, AveragePrice: o.AveragePrice}
}

// --- arming, in the engine ---

// armedUntil is when the venue's arming lapses; zero when disarmed. Paper
// venues need no arming.
func (e *engine) armed(name string, now time.Time) bool {
	if e.remotes[name] == nil {
		return true
	}
	until, ok := e.arming[name]
	return ok && now.Before(until)
}

// disarmedReason is the one wording of a disarmed refusal.
func disarmedReason(name string) string {
	return fmt.Sprintf("venue %s is disarmed; an operator arms it at a terminal with wicket node arm %s", name, name)
}

// checkArmed refuses a write to a disarmed real venue. market_exit over
// every venue skips the disarmed ones instead (execute says so).
func (e *engine) checkArmed(c command.Command, now time.Time) *rejection {
	if c.Verb == command.SetTradingState || c.Venue == "" {
		return nil
	}
	if e.armed(c.Venue, now) {
		return nil
	}
	return &rejection{code: "disarmed", reason: disarmedReason(c.Venue)}
}

// lapse disarms every venue whose arming has run out, emitting one event
// each.
func (e *engine) lapse(now time.Time) {
	for _, name := range e.names {
		if until, ok := e.arming[name]; ok && !now.Before(until) {
			e.emit(node.Event{Time: now, Kind: node.EventDisarmed, Venue: name, Until: until,
				Note: fmt.Sprintf("arming lapsed at %s", until.UTC().Format(time.RFC3339))})
		}
	}
}

// disarmAll disarms every armed venue at start: arming never survives a
// restart.
func (e *engine) disarmAll(now time.Time) {
	for _, name := range e.names {
		if until, ok := e.arming[name]; ok {
			e.emit(node.Event{Time: now, Kind: node.EventDisarmed, Venue: name, Until: until, Note: "the node restarted: arming lapses at every start"})
		}
	}
}

// --- reconciling a node order with the venue's report ---

// settle emits the events that bring node order o (pending or open) to the
// venue's report vo: the acknowledgement, each new fill (derived from the
// cumulative filled quantity and average price), and a terminal state. It
// is idempotent: a report already applied emits nothing.
func (e *engine) settle(r *remote, o node.Order, vo node.VenueOrder, how string, now time.Time) {
	base := orderEvent(r, o, now)
	if o.Status == node.OrderPending {
		if vo.State == node.VenueRejected {
			ev := base
			ev.Kind, ev.Note = node.EventFailed, "the venue refused it: "+nonEmpty(vo.Reason, "no reason given")
			e.emit(ev)
			return
		}
		ev := base
		ev.Kind, ev.VenueOrderID, ev.Note = node.EventAcked, vo.VenueOrderID, how
		e.emit(ev)
	}
	cur, _ := r.Order(o.ID)
	if cur.Status == node.OrderOpen && cur.VenueOrderID != "" && vo.VenueOrderID != "" && vo.VenueOrderID != cur.VenueOrderID && vo.State != node.VenueRejected {
		// The venue holds a newer incarnation (a replace whose answer was
		// lost): follow it, so later reports and cancels reach it.
		ev := base
		ev.Kind, ev.VenueOrderID, ev.Note = node.EventModified, vo.VenueOrderID, "replaced at the venue"
		if vo.Quantity.GreaterThan(cur.Filled) && !vo.Quantity.Equal(cur.Quantity) {
			ev.Quantity = vo.Quantity
		}
		if vo.Price.IsPositive() && !vo.Price.Equal(cur.Price) {
			ev.Price = vo.Price
		}
		if vo.StopPrice.IsPositive() && !vo.StopPrice.Equal(cur.StopPrice) && cur.Type != command.TrailingStop {
			ev.StopPrice = vo.StopPrice
		}
		if cur.Type == command.TrailingStop && (vo.TrailAmount.IsPositive() || vo.TrailPercent.IsPositive()) &&
			!(vo.TrailAmount.Equal(cur.TrailAmount) && vo.TrailPercent.Equal(cur.TrailPercent)) {
			ev.TrailAmount, ev.TrailPercent = vo.TrailAmount, vo.TrailPercent
		}
		e.emit(ev)
		cur, _ = r.Order(o.ID)
	}
	e.fills(r, cur, vo, base)
	cur, _ = r.Order(o.ID)
	if cur.Status.Working() && (vo.State == node.VenueCanceled || vo.State == node.VenueRejected) {
		ev := base
		ev.Kind, ev.Quantity = node.EventCanceled, cur.Remaining()
		ev.Note = "canceled at the venue"
		if vo.Reason != "" {
			ev.Note += ": " + vo.Reason
		}
		e.emit(ev)
	}
}

// orderEvent is an event about node order o at venue r, its kind and
// figures left to fill in.
func orderEvent(r *remote, o node.Order, now time.Time) node.Event {
	return node.Event{Time: now, Venue: r.cfg.Name, OrderID: o.ID, ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side}
}

// fills emits the fill that brings node order cur to the cumulative
// filled quantity (and quote amount, and fee) of the venue's report vo,
// when the report holds more than the node has booked. Its price is the
// report's own fill price when the report is of exactly that one fill;
// else the venue's cumulative quote amount less what the node booked,
// over the new quantity: decimal throughout, so a fill at 44020 books at
// 44020, never at a rounded average's 44019.9999999999.
func (e *engine) fills(r *remote, cur node.Order, vo node.VenueOrder, base node.Event) {
	delta := vo.Filled.Sub(cur.Filled)
	if !delta.IsPositive() {
		return
	}
	ev := base
	ev.Kind, ev.Quantity = node.EventFilled, decimal.Min(delta, cur.Remaining())
	if vo.LastQuantity.Equal(delta) && vo.LastPrice.IsPositive() {
		ev.Price = vo.LastPrice
	} else {
		total := vo.Notional
		if total.IsZero() {
			total = vo.Filled.Mul(vo.AveragePrice)
		}
		ev.Price = total.Sub(r.booked[cur.ID]).DivRound(delta, 10)
	}
	if fee := vo.Fee.Sub(r.fees[cur.ID]); fee.IsPositive() {
		ev.Fee = fee
	}
	r.assetFee(&ev, cur.ID, vo) // one paid in another asset (feeasset.go)
	e.emit(ev)
}

// readStart is what a reconciliation knew of the node's orders when its
// reads began: the venue order id (the incarnation) each working order
// followed.
type readStart map[string]string

// settleRead is settle for a report a reconciliation read while the node
// went on. A report names an incarnation; when it is not the one node
// order o follows now, settle takes it for a newer one (a replace whose
// answer was lost). That holds only if the node followed the same
// incarnation when the read began: if it has followed another since (a
// modify answered while the read was on its way, or an order acknowledged
// meanwhile), the report can tell of the incarnation it replaced, and
// following it would take the order back to it, so that a cancel sent
// then would go to a dead incarnation. Such a report adds only its fills,
// which are cumulative over the incarnations, so never more than
// happened; the next report tells the rest. A pending order has no
// incarnation to go back to, and settles as usual.
func (e *engine) settleRead(r *remote, o node.Order, vo node.VenueOrder, how string, start readStart, now time.Time) {
	followed, known := start[o.ID]
	if moved := o.VenueOrderID != "" && (!known || followed != o.VenueOrderID); moved && vo.VenueOrderID != o.VenueOrderID {
		e.fills(r, o, vo, orderEvent(r, o, now))
		return
	}
	e.settle(r, o, vo, how, now)
}

func nonEmpty(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// observe takes one order report from a venue's stream, or from a
// reconciliation's read (start is then what the read began from; nil for
// the stream, whose reports come in order): a node order settles; any
// other open order is external.
func (e *engine) observe(r *remote, vo node.VenueOrder, start readStart, now time.Time) {
	if ref, ok := e.byCID[vo.ClientOrderID]; ok && ref.venue == r.cfg.Name {
		o, ok := r.Order(ref.id)
		// The cancel of an incarnation the venue replaced (Binance's
		// cancel-replace, Alpaca's "replaced") is not about this order now;
		// a report of a newer incarnation is (settle follows it).
		stale := o.VenueOrderID != "" && vo.VenueOrderID != "" && vo.VenueOrderID != o.VenueOrderID && vo.State == node.VenueCanceled
		switch {
		case !ok || !o.Status.Working() || stale:
		case start != nil:
			e.settleRead(r, o, vo, "confirmed by the venue", start, now)
		default:
			e.settle(r, o, vo, "confirmed by the venue", now)
		}
		return
	}
	i := slices.IndexFunc(r.external, func(x node.VenueOrder) bool { return x.VenueOrderID == vo.VenueOrderID })
	switch {
	case vo.State == node.VenueOpen && i >= 0:
		r.external[i] = vo
	case vo.State == node.VenueOpen:
		r.external = append(r.external, vo)
	case i >= 0:
		r.external = slices.Delete(r.external, i, i+1)
	}
}

// --- secrets never leave the node ---
