package server

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/journal"
	"wicket/node/paper"
)

// venue is what the engine needs of a venue. paper.Venue is the only one
// today; a live exchange adapter would be another.
type venue interface {
	Name() string
	Opened() bool
	Cash() decimal.Decimal
	Apply(node.Event) error
	Mark(symbol string) (decimal.Decimal, bool)
	SetMark(symbol string, price decimal.Decimal)
	SetMarkAt(symbol string, price decimal.Decimal, at time.Time)
	FreshMark(symbol string, now time.Time) error
	MarketPrice(symbol string, side command.Side) (decimal.Decimal, bool)
	Fee(qty, price decimal.Decimal) decimal.Decimal
	Position(symbol string) decimal.Decimal
	Held() []string
	Order(id string) (node.Order, bool)
	OpenOrders() []node.Order
	Place(o node.Order, now time.Time, emit paper.Emit)
	Cancel(id, note string, now time.Time, emit paper.Emit) error
	CancelGroup(group, note string, now time.Time, emit paper.Emit) []string
	Modify(id string, qty, price decimal.Decimal, now time.Time, emit paper.Emit) error
	Match(now time.Time, allow func(node.Order) bool, emit paper.Emit)
	Snapshot() node.Venue
}

var (
	_ venue = (*paper.Venue)(nil)
	_ venue = (*remote)(nil)
)

// recentCap is how many recent events the engine keeps for snapshots.
const recentCap = 500

// engine is the node's state and rules. Only the fold goroutine touches
// it. Every change goes through apply, live and on replay.
type engine struct {
	cfg    project.Config
	guard  *guardrail.Guardrail
	feed   paper.Feed
	state  command.TradingState
	venues map[string]venue
	names  []string // configuration order
	byCID  map[string]orderRef
	orders int64 // orders accepted so far; the next id is orders+1
	seq    int64 // last event number
	tick   int64 // mark steps taken
	recent []node.Event

	step  []node.Event // events of the step in progress
	fault error        // first failure to apply an event in this step

	remotes  map[string]*remote   // the real venues, also in venues
	ticketOf map[string]string    // real venues' order id → the ticket that placed it
	arming   map[string]time.Time // armed real venues and when each lapses
	// unsettled holds the commands to real venues whose outcome was
	// committed pending, by ticket, until reconciliation settles them.
	unsettled map[string]node.AuditEntry
	now       func() time.Time

	marks map[string]MarkFeed           // paper venues fed by a provider (marks.go)
	fed   map[string]map[string]fedMark // what each feed has given in this run

	breakers map[string]*venueBreaker // per-venue breakers (breakers.go)
	risk     riskState                // kill switch, ledger, heartbeat (risk.go)
}

type orderRef struct{ venue, id string }

func newEngine(cfg project.Config, feed paper.Feed, marks map[string]MarkFeed, exchanges map[string]Exchange, reads map[string]*atomic.Int64, now func() time.Time) *engine {
	e := &engine{
		cfg: cfg, guard: guardrail.New(cfg), feed: feed, state: command.Active,
		venues: map[string]venue{}, byCID: map[string]orderRef{},
		remotes: map[string]*remote{}, ticketOf: map[string]string{}, arming: map[string]time.Time{}, unsettled: map[string]node.AuditEntry{}, now: now,
		marks: marks, fed: map[string]map[string]fedMark{},
		risk: riskState{ledger: guardrail.NewLedger(), beat: heartbeat{last: now()}, clocks: map[string]node.MarketClock{},
			lost: map[string]time.Time{}, losses: map[string]string{}},
	}
	for _, vc := range cfg.Venues {
		if vc.Real() {
			r := newRemote(vc, exchanges[vc.Name], reads[vc.Name])
			e.venues[vc.Name], e.remotes[vc.Name] = r, r
		} else {
			e.venues[vc.Name] = paper.New(vc)
		}
		e.names = append(e.names, vc.Name)
	}
	e.newBreakers()
	return e
}

// paperNames lists the simulated venues, in configuration order.
func (e *engine) paperNames() []string {
	var out []string
	for _, n := range e.names {
		if e.remotes[n] == nil {
			out = append(out, n)
		}
	}
	return out
}

// load rebuilds the engine from j and returns the batch that opens venues
// new to the journal and stores their first marks (nil when there is none).
func (e *engine) load(j *journal.Journal, now time.Time) (*journal.Batch, error) {
	if err := j.Replay(e.apply); err != nil {
		return nil, err
	}
	tick, marks, err := j.Marks()
	if err != nil {
		return nil, err
	}
	e.tick = tick
	pending, err := j.Unsettled()
	if err != nil {
		return nil, err
	}
	for _, en := range pending {
		e.await(en)
	}
	for _, m := range marks {
		if v := e.venues[m.Venue]; v != nil {
			v.SetMark(m.Symbol, m.Price)
		}
	}
	b := &journal.Batch{}
	e.disarmAll(now)
	for _, vc := range e.cfg.Venues {
		v := e.venues[vc.Name]
		if vc.Real() {
			continue // a real venue's cash and marks are the venue's own
		}
		if !v.Opened() {
			e.emit(node.Event{Time: now, Kind: node.EventVenueOpened, Venue: vc.Name, Cash: vc.Cash,
				Note: fmt.Sprintf("%s venue opened with %s %s", paper.Kind, vc.Cash, vc.Currency)})
		}
		for _, s := range vc.Symbols {
			if _, ok := v.Mark(s); !ok {
				m := e.feed.First(vc, s)
				v.SetMark(s, m)
				b.Marks = append(b.Marks, journal.Mark{Venue: vc.Name, Symbol: s, Price: m})
			}
		}
	}
	b.Events = e.take()
	if e.fault != nil {
		return nil, e.fault
	}
	if len(b.Events) == 0 && len(b.Marks) == 0 {
		return nil, nil
	}
	return b, nil
}

// apply changes the state by one event.
func (e *engine) apply(ev node.Event) error {
	if ev.Seq != e.seq+1 {
		return fmt.Errorf("journal: event %d follows %d; the journal has a gap and cannot be replayed", ev.Seq, e.seq)
	}
	switch ev.Kind {
	case node.EventTradingState:
		e.state = ev.State
	case node.EventArmed:
		e.arming[ev.Venue] = ev.Until
	case node.EventDisarmed:
		delete(e.arming, ev.Venue)
	case node.EventBreaker, node.EventBreakerCleared:
		e.applyBreaker(ev)
	case node.EventKilled, node.EventKillEnded:
		e.applyRisk(ev)
	case node.EventAgentOrder, EventAgentDay, EventAgentDeployment: // the agent's envelope (envelope.go)
		e.applyEnvelope(ev)
	case node.EventOverride, node.EventOverrideUsed: // the operator's one-off overrides (override.go)
		e.applyOverride(ev)
	default:
		v := e.venues[ev.Venue]
		if v == nil {
			return fmt.Errorf("journal: event %d is for venue %q, which wicket.toml does not list; add the venue back (or start with a fresh journal)", ev.Seq, ev.Venue)
		}
		if err := v.Apply(ev); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		if ev.Kind == node.EventAccepted {
			e.orders++
			if ev.ClientOrderID != "" {
				e.byCID[ev.ClientOrderID] = orderRef{ev.Venue, ev.OrderID}
			}
			if ev.Ticket != "" {
				e.ticketOf[ev.OrderID] = ev.Ticket
			}
		}
		if ev.Kind == node.EventFilled {
			e.applyRisk(ev)
		}
	}
	e.seq = ev.Seq
	if len(e.recent) == recentCap {
		e.recent = append(e.recent[:0], e.recent[1:]...)
	}
	e.recent = append(e.recent, ev)
	return nil
}

// emit numbers, applies and records an event of the current step.
func (e *engine) emit(ev node.Event) {
	if e.fault != nil {
		return
	}
	ev.Seq = e.seq + 1
	if err := e.apply(ev); err != nil {
		e.fault = err
		return
	}
	e.step = append(e.step, ev)
}

// take returns the current step's events and starts a new step.
func (e *engine) take() []node.Event {
	out := e.step
	e.step = nil
	return out
}

// --- guardrail.View over the node's own state ---

var _ guardrail.InstrumentView = (*engine)(nil)

// Instrument is a real venue's rule for symbol (paper venues use their
// configured decimals).
func (e *engine) Instrument(venue, symbol string) (guardrail.Instrument, bool) {
	if r := e.remotes[venue]; r != nil {
		return r.Instrument(symbol)
	}
	return guardrail.Instrument{}, false
}

func (e *engine) Mark(venue, symbol string) (decimal.Decimal, bool) {
	if v := e.venues[venue]; v != nil {
		return v.Mark(symbol)
	}
	return decimal.Decimal{}, false
}

func (e *engine) Position(venue, symbol string) decimal.Decimal {
	if v := e.venues[venue]; v != nil {
		return v.Position(symbol)
	}
	return decimal.Zero
}

func (e *engine) OpenOrder(venue, orderID, clientOrderID string) (guardrail.Order, bool) {
	o, ok := e.find(venue, orderID, clientOrderID)
	if !ok && orderID == "" {
		if x, found := e.external(venue, clientOrderID); found {
			return x.View(), true
		}
	}
	if !ok || o.Status != node.OrderOpen {
		return guardrail.Order{}, false
	}
	return o.View(), true
}

// external finds an order open at a real venue that the node did not
// place, by its client order id: only a command naming it touches it.
func (e *engine) external(venue, clientOrderID string) (node.Order, bool) {
	r := e.remotes[venue]
	if r == nil || clientOrderID == "" {
		return node.Order{}, false
	}
	for _, o := range r.Snapshot().ExternalOrders {
		if o.ClientOrderID == clientOrderID {
			return o, true
		}
	}
	return node.Order{}, false
}

// find looks an order up by id or client order id on a venue, in any status.
func (e *engine) find(venue, orderID, clientOrderID string) (node.Order, bool) {
	v := e.venues[venue]
	if v == nil {
		return node.Order{}, false
	}
	if orderID == "" {
		ref, ok := e.byCID[clientOrderID]
		if !ok || ref.venue != venue {
			return node.Order{}, false
		}
		orderID = ref.id
	}
	return v.Order(orderID)
}

// --- rules ---

// codes maps guardrail check names to rejection codes.
var codes = map[string]string{
	"venue": "unknown_venue", "symbol": "unknown_symbol", "order": "unknown_order", "quantity": "bad_quantity",
	"precision": "precision", "price_collar": "price_collar", "order_notional": "max_order_notional",
	"position_notional": "max_position_notional", "min_notional": "min_notional", "shortable": "not_shortable",
	"stop_side": "stop_side", "limit_side": "limit_side", "modify": "not_modifiable", "legs": "legs",
	"max_leverage": "max_leverage", "liquidation_distance": "liquidation_distance",
}

// --- execution ---

// execute applies c (already resolved: a submit carries its client order
// id) and returns its outcome; the step's events are collected by take.
func (e *engine) execute(c command.Command, now time.Time) node.Outcome {
	out := node.Outcome{Status: node.Accepted, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now}
	if _, r := e.admit(c); r != nil {
		out.Status, out.Code, out.Reason, out.ExistingOrder = node.Rejected, r.code, r.reason, r.existing
		out.TradingState = e.state
		return out
	}
	switch {
	case c.Verb != command.SetTradingState:
		dispatch(c, paperVerbs{e, now, &out})
	case c.State == e.state:
		out.Detail = "trading state was already " + string(c.State)
	default:
		out.Detail = fmt.Sprintf("trading state %s → %s", e.state, c.State)
		e.emit(node.Event{Time: now, Kind: node.EventTradingState, State: c.State, Note: out.Detail})
	}
	out.TradingState = e.state
	return out
}

// groupType is what kind of compound order a group of v's is: a bracket
// when its first leg is an entry.
func groupType(v venue, group string) command.OrderType {
	if o, ok := v.Order(group); ok && o.Leg == command.LegEntry {
		return command.Bracket
	}
	return command.OCO
}

// paperOrder is the order a simple submit_order (or an oco's leg) places:
// a stop_limit's limit_price is its Price.
func paperOrder(c command.Command, id, group string) node.Order {
	limit := c.Price
	if c.Type == command.StopLimit {
		limit = c.LimitPrice
	}
	return node.Order{ID: id, ClientOrderID: c.ClientOrderID, Symbol: c.Symbol, Side: c.Side,
		Type: c.Type, Quantity: c.Quantity, Price: limit, StopPrice: c.StopPrice, TrailAmount: c.TrailAmount,
		TrailPercent: c.TrailPercent, TimeInForce: c.TIF(), Group: group}
}

func (e *engine) must(err error) {
	if err != nil && e.fault == nil {
		e.fault = err
	}
}

func (e *engine) nextOrderID() string { return fmt.Sprintf("ord-%08d", e.orders+1) }

// describeOrder fills the outcome with the order's state after the command.
func (e *engine) describeOrder(out *node.Outcome, venue, id string) {
	o, ok := e.venues[venue].Order(id)
	if !ok {
		return
	}
	out.OrderID, out.Order = o.ID, &o
	if out.ClientOrderID == "" {
		out.ClientOrderID = o.ClientOrderID
	}
	what := fmt.Sprintf("%s %s %s %s", o.Type, o.Side, o.Quantity, o.Symbol)
	if o.Leg != "" {
		what = o.Leg + " " + what
	}
	switch {
	case o.Status == node.OrderFilled:
		out.Detail = fmt.Sprintf("%s %s filled at %s", o.ID, what, o.AveragePrice)
	case o.Status == node.OrderCanceled:
		out.Detail = fmt.Sprintf("%s %s canceled: %s", o.ID, what, o.Note)
	case o.Type.Protective():
		out.Detail = fmt.Sprintf("%s %s stop %s resting", o.ID, what, o.StopPrice)
		if o.Price.IsPositive() {
			out.Detail = fmt.Sprintf("%s %s stop %s limit %s resting", o.ID, what, o.StopPrice, o.Price)
		}
	default:
		out.Detail = fmt.Sprintf("%s %s @ %s resting", o.ID, what, o.Price)
	}
	if o.Inactive {
		out.Detail += ", inactive until entry " + o.Parent + " fills"
	}
}

// flattenSymbols is what a flatten command closes on v: the one symbol it
// names, or every position held.
func flattenSymbols(v venue, c command.Command) []string {
	if c.Symbol != "" {
		return []string{c.Symbol}
	}
	return v.Held()
}

// closingOrders are the market orders that close each listed position on
// v, one per symbol held, for any venue: the paper flatten places them
// here, the real one sends them (flattenRemote).
func closingOrders(v venue, symbols []string, note string) []node.Order {
	var out []node.Order
	for _, s := range symbols {
		pos := v.Position(s)
		if pos.IsZero() {
			continue
		}
		side := command.Sell
		if pos.IsNegative() {
			side = command.Buy
		}
		out = append(out, node.Order{Symbol: s, Side: side, Type: command.Market, Quantity: pos.Abs(),
			TimeInForce: command.IOC, Note: note, ReduceOnly: true})
	}
	return out
}

// flatten closes each listed position with a market order.
func (e *engine) flatten(venueName string, symbols []string, note string, now time.Time) []string {
	v := e.venues[venueName]
	var ids []string
	for _, o := range closingOrders(v, symbols, note) {
		o.ID = e.nextOrderID()
		v.Place(o, now, e.emit)
		ids = append(ids, o.ID)
	}
	return ids
}

// cancelWhere cancels the open orders on a venue matching symbol and side
// (empty: any).
func (e *engine) cancelWhere(venueName, symbol string, side command.Side, note string, now time.Time) []string {
	v := e.venues[venueName]
	open := v.OpenOrders()
	for _, o := range open {
		if cur, _ := v.Order(o.ID); cur.Status != node.OrderOpen {
			continue // a bracket's exits went with their entry
		}
		if (symbol == "" || o.Symbol == symbol) && (side == "" || o.Side == side) {
			e.must(v.Cancel(o.ID, "canceled by "+note, now, e.emit))
		}
	}
	var ids []string // what was canceled: the matches, and the exits of a canceled bracket entry
	for _, o := range open {
		if cur, _ := v.Order(o.ID); cur.Status == node.OrderCanceled {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// advance takes one mark step: every configured symbol moves, then resting
// orders the new marks reach fill (subject to the trading state). It
// returns the new marks.
func (e *engine) advance(now time.Time) []journal.Mark {
	e.tick++
	tape := e.feed.Tape.Take()
	var marks []journal.Mark
	for _, vc := range e.cfg.Venues {
		v := e.venues[vc.Name]
		if vc.Real() {
			continue // polled from the venue
		}
		if pv, ok := v.(*paper.Venue); ok && e.feed.Tape != nil && e.marks[vc.Name] == nil {
			// on a recorded tape: its bars walk the orders (node/paper/tape.go)
			for _, s := range pv.StepTape(tape, now, func(o node.Order) bool { return e.mayFill(v, o) }, e.emit) {
				m, _ := v.Mark(s)
				marks = append(marks, journal.Mark{Venue: vc.Name, Symbol: s, Price: m})
			}
			continue
		}
		for _, s := range vc.Symbols {
			prev, had := v.Mark(s)
			m, at, ok := e.nextMark(vc, s, prev, had, now)
			if !ok {
				continue // a fed symbol with no price yet keeps its mark
			}
			v.SetMarkAt(s, m, at)
			marks = append(marks, journal.Mark{Venue: vc.Name, Symbol: s, Price: m})
		}
		v.Match(now, func(o node.Order) bool { return e.mayFill(v, o) }, e.emit)
	}
	return marks
}

// mayFill decides whether a resting order may fill in the current trading
// state: never when halted; in reduce_only only when the fill reduces the
// position without flipping it.
func (e *engine) mayFill(v venue, o node.Order) bool {
	switch {
	case e.state == command.Halted:
		return false
	case e.state == command.ReduceOnly || e.breakerReason(v.Name()) != "":
		return reduces(v.Position(o.Symbol), o.Side, o.Remaining())
	}
	return true
}

// reduces reports whether trading qty on side against the position pos
// reduces it without flipping it: the one reduce_only rule, for orders and
// for fills.
func reduces(pos decimal.Decimal, side command.Side, qty decimal.Decimal) bool {
	opposes := (side == command.Sell && pos.IsPositive()) || (side == command.Buy && pos.IsNegative())
	return opposes && qty.LessThanOrEqual(pos.Abs())
}

// snapshot is the state for the wire; venueName "" means every venue.
func (e *engine) snapshot(venueName string, events int, now time.Time) (node.Snapshot, error) {
	s := node.Snapshot{Time: now, TradingState: e.state, Venues: []node.Venue{}, Events: []node.Event{}}
	e.riskSnapshot(&s, now)
	if venueName != "" && e.venues[venueName] == nil {
		return s, node.Errorf(node.KindNotFound, "unknown_venue", "no venue %q; this node has: %s", venueName, strings.Join(e.names, ", "))
	}
	for i, name := range e.names {
		if venueName == "" || name == venueName {
			vs := e.venues[name].Snapshot()
			if e.remotes[name] == nil {
				vs.Environment, vs.Armed, vs.MarkSource = project.KindPaper, true, e.markSource(e.cfg.Venues[i], now)
			} else {
				if e.armed(name, now) {
					vs.Armed, vs.ArmedUntil = true, e.arming[name]
				}
				r := e.remotes[name] // whether a stop can fire depends on the arming: marked here, once it is known
				vs.MarkUnprotected(r.unprotectedWhy, func(o node.Order) bool { return heldByNode(o) || r.keptExit(o) })
			}
			vs.Breaker = e.breakerReason(name)
			vs.Spellings = e.cfg.Venues[i].Spellings()
			s.Venues = append(s.Venues, vs)
		}
	}
	for i := len(e.recent) - 1; i >= 0 && len(s.Events) < events; i-- {
		if ev := e.recent[i]; venueName == "" || ev.Venue == venueName || ev.Venue == "" {
			s.Events = append(s.Events, ev)
		}
	}
	// newest last
	for i, j := 0, len(s.Events)-1; i < j; i, j = i+1, j-1 {
		s.Events[i], s.Events[j] = s.Events[j], s.Events[i]
	}
	return s, nil
}

// dryRun reports what execute would decide for c now.
func (e *engine) dryRun(c command.Command) node.Verdict {
	rep, r := e.check(c)
	if r == nil {
		r = e.checkEnvelope(c) // the agent's capital envelope, as admit applies it
	}
	v := node.Verdict{WouldAccept: r == nil, Command: c, TradingState: e.state, Checks: rep.Checks}
	if v.Checks == nil {
		v.Checks = []guardrail.Check{}
	}
	if r != nil {
		v.Code, v.Reason, v.ExistingOrder = r.code, r.reason, r.existing
	}
	return v
}
