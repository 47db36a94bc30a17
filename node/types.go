package node

import (
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// Money, prices and quantities are decimal.Decimal, which encodes as a JSON
// string ("41000.5"). Zero-valued optional decimals are left out.

// OrderStatus is where an order is in its life.
type OrderStatus string

// Order statuses.
const (
	OrderOpen     OrderStatus = "open"
	OrderFilled   OrderStatus = "filled"
	OrderCanceled OrderStatus = "canceled"
	// OrderPending is an order sent to a real venue that the venue has not
	// confirmed yet (or whose answer was lost): it is never resent, and
	// reconciliation by client order id settles it.
	OrderPending OrderStatus = "pending"
	// OrderFailed is an order a real venue refused, or that reconciliation
	// proved absent at the venue; Note says why.
	OrderFailed OrderStatus = "failed"
)

// Working reports whether an order may still fill (open or pending).
func (s OrderStatus) Working() bool { return s == OrderOpen || s == OrderPending }

// Order is one order on a venue.
type Order struct {
	ID            string            `json:"order_id"`
	ClientOrderID string            `json:"client_order_id,omitempty"`
	Venue         string            `json:"venue"`
	Symbol        string            `json:"symbol"`
	Side          command.Side      `json:"side"`
	Type          command.OrderType `json:"type"`
	Quantity      decimal.Decimal   `json:"quantity"`
	Price         decimal.Decimal   `json:"price,omitzero"` // limit price (a stop_limit's limit_price)
	// StopPrice is a stop's or stop_limit's trigger, and a trailing stop's
	// current stop (TrailAmount or TrailPercent behind TrailBest, the best
	// mark since placement). Triggered says a stop_limit's stop traded: it
	// rests as a limit at Price.
	StopPrice    decimal.Decimal `json:"stop_price,omitzero"`
	TrailAmount  decimal.Decimal `json:"trail_amount,omitzero"`
	TrailPercent decimal.Decimal `json:"trail_percent,omitzero"`
	TrailBest    decimal.Decimal `json:"trail_best,omitzero"`
	Triggered    bool            `json:"triggered,omitempty"`
	// Group links the legs of one oco or bracket (the id of its first
	// leg): the first exit to fill cancels the rest, and cancel_order on
	// one cancels them all. Leg names the leg (command.LegLimit, ...).
	Group string `json:"group,omitempty"`
	Leg   string `json:"leg,omitempty"`
	// Parent is a bracket exit's entry (its order id): the exit is
	// Inactive until the entry fills, then sized to what it filled.
	Parent       string              `json:"parent,omitempty"`
	Inactive     bool                `json:"inactive,omitempty"`
	TimeInForce  command.TimeInForce `json:"time_in_force"`
	Status       OrderStatus         `json:"status"`
	Filled       decimal.Decimal     `json:"filled"`
	AveragePrice decimal.Decimal     `json:"average_price,omitzero"` // of the fills
	Created      time.Time           `json:"created"`
	Updated      time.Time           `json:"updated"`
	Note         string              `json:"note,omitempty"`           // why it was canceled, or who placed it
	VenueOrderID string              `json:"venue_order_id,omitempty"` // the real venue's own id
	// ReduceOnly marks an order that only closes (flatten, market_exit):
	// a venue that can is told so, and refuses it if it would open or
	// grow a position. It is a flag of the send, not journaled: an order
	// is sent once, and a restarted node only looks it up.
	ReduceOnly bool `json:"-"`
}

// Remaining is the quantity still to fill.
func (o Order) Remaining() decimal.Decimal { return o.Quantity.Sub(o.Filled) }

// Position is the holding of one symbol on a venue.
type Position struct {
	Symbol        string          `json:"symbol"`
	Quantity      decimal.Decimal `json:"quantity"` // negative is short
	AveragePrice  decimal.Decimal `json:"average_price"`
	Mark          decimal.Decimal `json:"mark"`
	MarketValue   decimal.Decimal `json:"market_value"` // quantity × mark
	UnrealizedPnL decimal.Decimal `json:"unrealized_pnl"`
	RealizedPnL   decimal.Decimal `json:"realized_pnl"` // before fees
	// Unprotected says the protective orders (stop, stop_limit or
	// trailing_stop on the closing side, active) that can fire do not
	// cover the whole position; UnprotectedReason says why (none asked
	// for, a leg canceled or rejected, a leg lost at restart, what they
	// cover, a stop that cannot fire); Covered is the quantity the ones
	// that can fire cover (MarkUnprotected, protect.go).
	Unprotected       bool            `json:"unprotected,omitempty"`
	UnprotectedReason string          `json:"unprotected_reason,omitempty"`
	Covered           decimal.Decimal `json:"covered,omitzero"`
	// A margined venue's position (binance-futures) as the venue keeps it:
	// leverage, margin type and margin, liquidation price. Closed, on a
	// zero quantity, says why the venue closed it (a liquidation).
	Leverage         int             `json:"leverage,omitempty"`
	MarginType       string          `json:"margin_type,omitempty"`
	Margin           decimal.Decimal `json:"margin,omitzero"`
	LiquidationPrice decimal.Decimal `json:"liquidation_price,omitzero"`
	Closed           string          `json:"closed,omitempty"`
}

// Group is one compound order's legs, as a snapshot lists it.
type Group struct {
	ID     string            `json:"group"` // its first leg's order id
	Type   command.OrderType `json:"type"`  // oco or bracket
	Symbol string            `json:"symbol"`
	State  GroupState        `json:"state"`
	Legs   []GroupLeg        `json:"legs"`           // in placement order
	Note   string            `json:"note,omitempty"` // what the state means now
}

// GroupLeg is one leg of a Group.
type GroupLeg struct {
	Leg      string            `json:"leg"`
	OrderID  string            `json:"order_id"`
	ClientID string            `json:"client_order_id,omitempty"`
	Type     command.OrderType `json:"type"`
	Side     command.Side      `json:"side"`
	Quantity decimal.Decimal   `json:"quantity"`
	Filled   decimal.Decimal   `json:"filled"`
	Status   OrderStatus       `json:"status"`
	Inactive bool              `json:"inactive,omitempty"`
}

// GroupState is where a compound order is.
type GroupState string

// Group states.
const (
	GroupAwaitingEntry GroupState = "awaiting_entry" // a bracket's entry works; its exits are inactive
	GroupActive        GroupState = "active"         // the exits work (a bracket's sized to what its entry filled)
)

// Venue is one venue's state in a snapshot.
type Venue struct {
	Name        string    `json:"name"`
	Kind        string    `json:"kind"`        // "paper", "alpaca", "binance", "binance-futures"
	Environment string    `json:"environment"` // "paper", "testnet" or "live" (real money)
	Armed       bool      `json:"armed"`       // paper venues are always armed
	ArmedUntil  time.Time `json:"armed_until,omitzero"`
	MayArm      bool      `json:"may_arm,omitempty"`
	MarkSource  string    `json:"mark_source"` // where marks come from
	// Breaker, when set, says why the venue's breaker moved it to
	// reduce_only; only an operator clears it (wicket node clear-breaker).
	Breaker          string                     `json:"breaker,omitempty"`
	Account          string                     `json:"account,omitempty"`
	BuyingPower      decimal.Decimal            `json:"buying_power,omitzero"`
	Connection       string                     `json:"connection,omitempty"` // real venues: the order stream's state
	Currency         string                     `json:"currency"`
	Symbols          []string                   `json:"symbols"`
	QuantityDecimals int32                      `json:"quantity_decimals"`
	PriceDecimals    int32                      `json:"price_decimals"`
	Cash             decimal.Decimal            `json:"cash"`
	Equity           decimal.Decimal            `json:"equity"` // cash + Σ quantity × mark
	UnrealizedPnL    decimal.Decimal            `json:"unrealized_pnl"`
	RealizedPnL      decimal.Decimal            `json:"realized_pnl"`
	Fees             decimal.Decimal            `json:"fees"`
	Funding          decimal.Decimal            `json:"funding,omitzero"` // funding booked from the venue (received positive)
	Marks            map[string]decimal.Decimal `json:"marks"`
	Positions        []Position                 `json:"positions"`
	OpenOrders       []Order                    `json:"open_orders"`
	Groups           []Group                    `json:"groups,omitempty"` // compound orders with a working leg
	// ExternalOrders are open at the venue but were not placed by this
	// node: shown, never touched unless an operator names them.
	ExternalOrders []Order                         `json:"external_orders,omitempty"`
	Instruments    map[string]guardrail.Instrument `json:"instruments,omitempty"` // real venues: the venue's rules
	// Spellings, for each listed symbol the venue spells another way, are
	// both: wicket's (BTC-USD) and the venue's own (BTCUSDT). A command
	// may name either; the node works in the listed one.
	Spellings map[string]project.Spelling `json:"spellings,omitempty"`
	// AssetFees are the fees paid in other assets (BNB), each in its own
	// and at its worth (feeasset.go).
	AssetFees []AssetFee `json:"asset_fees,omitempty"`
}

// Listed is the venue's listed symbol that sym spells (BTCUSDT or
// BTC-USD for a listed BTC-USD at binance), else sym as it is.
func (v *Venue) Listed(sym string) string {
	if slices.Contains(v.Symbols, sym) {
		return sym
	}
	for listed, sp := range v.Spellings {
		if strings.EqualFold(sym, sp.Canonical) || strings.EqualFold(sym, sp.Venue) {
			return listed
		}
	}
	return sym
}

// Both is sym as wicket writes it with the venue's own spelling after it
// when that differs: "BTC-USD (BTCUSDT)"; sym itself otherwise.
func (v *Venue) Both(sym string) string {
	if sp, ok := v.Spellings[v.Listed(sym)]; ok {
		return sp.Canonical + " (" + sp.Venue + ")"
	}
	return sym
}

// EventKind names a state change.
type EventKind string

// Event kinds. Each is journaled before the command that caused it is
// acknowledged, and replaying them rebuilds the node's state.
const (
	EventVenueOpened  EventKind = "venue_opened"
	EventAccepted     EventKind = "order_accepted"
	EventFilled       EventKind = "order_filled"
	EventCanceled     EventKind = "order_canceled"
	EventModified     EventKind = "order_modified"
	EventTradingState EventKind = "trading_state"
	EventAcked        EventKind = "order_acked"     // a real venue confirmed a pending order
	EventFailed       EventKind = "order_failed"    // a real venue refused it, or it is provably absent
	EventArmed        EventKind = "venue_armed"     // an operator armed a real venue until Until
	EventDisarmed     EventKind = "venue_disarmed"  // disarmed by an operator, or lapsed
	EventTriggered    EventKind = "order_triggered" // a stop_limit's stop traded (Price: the mark); it rests as a limit
	EventTrailed      EventKind = "order_trailed"   // a trailing stop's best mark moved to Price, and its stop with it
	EventSent         EventKind = "order_sent"      // a bracket's exit at a real venue is sent (Quantity: its size); until then the node keeps it
	// EventBreaker: a venue's breaker (wicket.toml max_daily_loss or
	// max_drawdown_pct) tripped and moved it to reduce_only (Note: why;
	// Cash: its equity then); EventBreakerCleared: an operator cleared it
	// (Cash: the equity the breakers measure from again).
	EventBreaker        EventKind = "venue_breaker"
	EventBreakerCleared EventKind = "venue_breaker_cleared"
	// EventFunding: a funding payment the venue booked (Symbol; Cash: the
	// signed amount, received positive; VenueOrderID: the venue's id for
	// it, so it is booked once; Time: when the venue booked it).
	EventFunding EventKind = "funding"
)

// Event is one state change: the node's journal is a sequence of them, and a
// snapshot shows the recent ones.
type Event struct {
	Seq           int64           `json:"seq"`
	Time          time.Time       `json:"time"`
	Kind          EventKind       `json:"kind"`
	Venue         string          `json:"venue,omitempty"`
	OrderID       string          `json:"order_id,omitempty"`
	ClientOrderID string          `json:"client_order_id,omitempty"`
	Symbol        string          `json:"symbol,omitempty"`
	Side          command.Side    `json:"side,omitempty"`
	Quantity      decimal.Decimal `json:"quantity,omitzero"`
	Price         decimal.Decimal `json:"price,omitzero"`
	// StopPrice, TrailAmount and TrailPercent are an order_modified's new
	// stop and trail (zero: unchanged).
	StopPrice    decimal.Decimal      `json:"stop_price,omitzero"`
	TrailAmount  decimal.Decimal      `json:"trail_amount,omitzero"`
	TrailPercent decimal.Decimal      `json:"trail_percent,omitzero"`
	Fee          decimal.Decimal      `json:"fee,omitzero"`
	Cash         decimal.Decimal      `json:"cash,omitzero"` // venue_opened
	State        command.TradingState `json:"state,omitempty"`
	Order        *Order               `json:"order,omitempty"` // order_accepted
	Note         string               `json:"note,omitempty"`
	Ticket       string               `json:"ticket,omitempty"`         // order_accepted of a pending order: its command's ticket
	VenueOrderID string               `json:"venue_order_id,omitempty"` // order_acked, order_modified on a real venue
	Until        time.Time            `json:"until,omitzero"`           // venue_armed: armed until; venue_disarmed: the arming it ended
	// FeeAsset, AssetFee and FeeValue are an order_filled's commission
	// paid in another asset (feeasset.go): the asset, the amount in it,
	// and its worth in the account currency at the asset's mark then
	// (zero: no mark). Fee is the account currency's part alone.
	FeeAsset string          `json:"fee_asset,omitempty"`
	AssetFee decimal.Decimal `json:"asset_fee,omitzero"`
	FeeValue decimal.Decimal `json:"fee_value,omitzero"`
	// Override is an override_granted's or override_used's (override.go).
	Override *OverrideState `json:"override,omitempty"`
}

// Snapshot is the node's state as GET /v1/snapshot returns it.
type Snapshot struct {
	Time         time.Time            `json:"time"`
	TradingState command.TradingState `json:"trading_state"`
	Kill         *KillState           `json:"kill,omitempty"`        // the operator's kill switch (risk.go)
	Heartbeat    *HeartbeatState      `json:"heartbeat,omitempty"`   // the dead man's switch, when configured
	StreamLoss   []string             `json:"stream_loss,omitempty"` // [risk] stream_loss tripped, per venue (risk.go)
	Venues       []Venue              `json:"venues"`
	Events       []Event              `json:"events"`
}

var _ guardrail.View = (*Snapshot)(nil)
var _ guardrail.InstrumentView = (*Snapshot)(nil)

// Instrument is a real venue's rules for symbol, in either spelling
// (guardrail.InstrumentView).
func (s *Snapshot) Instrument(venue, symbol string) (guardrail.Instrument, bool) {
	if v := s.venue(venue); v != nil {
		in, ok := v.Instruments[v.Listed(symbol)]
		return in, ok
	}
	return guardrail.Instrument{}, false
}

func (s *Snapshot) venue(name string) *Venue {
	for i := range s.Venues {
		if s.Venues[i].Name == name {
			return &s.Venues[i]
		}
	}
	return nil
}

// Mark is the last mark of symbol, in either spelling, on venue
// (guardrail.View).
func (s *Snapshot) Mark(venue, symbol string) (decimal.Decimal, bool) {
	if v := s.venue(venue); v != nil {
		m, ok := v.Marks[v.Listed(symbol)]
		return m, ok
	}
	return decimal.Decimal{}, false
}

// Position is the signed quantity of symbol, in either spelling, held on
// venue (guardrail.View).
func (s *Snapshot) Position(venue, symbol string) decimal.Decimal {
	if v := s.venue(venue); v != nil {
		symbol = v.Listed(symbol)
		for _, p := range v.Positions {
			if p.Symbol == symbol {
				return p.Quantity
			}
		}
	}
	return decimal.Zero
}

// OpenOrder finds an open order by order id or client order id
// (guardrail.View).
func (s *Snapshot) OpenOrder(venue, orderID, clientOrderID string) (guardrail.Order, bool) {
	if v := s.venue(venue); v != nil {
		for _, o := range v.ExternalOrders { // named by its client order id only
			if orderID == "" && clientOrderID != "" && o.ClientOrderID == clientOrderID {
				return o.View(), true
			}
		}
		for _, o := range v.OpenOrders {
			if o.Status != OrderOpen {
				continue
			}
			if (orderID != "" && o.ID == orderID) || (clientOrderID != "" && o.ClientOrderID == clientOrderID) {
				return o.View(), true
			}
		}
	}
	return guardrail.Order{}, false
}

// View is the order as the guardrail sees it.
func (o Order) View() guardrail.Order {
	return guardrail.Order{ID: o.ID, ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side,
		Type: o.Type, Quantity: o.Remaining(), Price: o.Price, StopPrice: o.StopPrice,
		TrailAmount: o.TrailAmount, TrailPercent: o.TrailPercent, TrailBest: o.TrailBest, Group: o.Group, Leg: o.Leg, Parent: o.Parent, Inactive: o.Inactive}
}

// Status is where a ticket is.
type Status string

// Ticket statuses.
const (
	Pending  Status = "pending"  // queued or being applied
	Accepted Status = "accepted" // applied and journaled
	Rejected Status = "rejected" // refused by the node's rules; nothing changed
)

// Outcome is a ticket's result.
type Outcome struct {
	Ticket        string               `json:"ticket"`
	Status        Status               `json:"status"`
	Verb          command.Verb         `json:"verb,omitempty"`
	ClientOrderID string               `json:"client_order_id,omitempty"`
	OrderID       string               `json:"order_id,omitempty"`      // the order placed, canceled or modified
	Order         *Order               `json:"order,omitempty"`         // that order after the command
	OrderIDs      []string             `json:"order_ids,omitempty"`     // orders placed by flatten and market_exit
	Canceled      []string             `json:"canceled,omitempty"`      // orders canceled by mass_cancel and market_exit
	TradingState  command.TradingState `json:"trading_state,omitempty"` // after the command
	Code          string               `json:"code,omitempty"`          // why it was rejected, for programs
	Reason        string               `json:"reason,omitempty"`        // why it was rejected, for people
	ExistingOrder *Order               `json:"existing_order,omitempty"`
	Detail        string               `json:"detail,omitempty"` // what happened, one line
	Time          time.Time            `json:"time,omitzero"`
}

// Verdict is the node's dry-run answer: whether it would accept the command
// now, and why not.
type Verdict struct {
	WouldAccept   bool                 `json:"would_accept"`
	Code          string               `json:"code,omitempty"`
	Reason        string               `json:"reason,omitempty"`
	Command       command.Command      `json:"command"`
	TradingState  command.TradingState `json:"trading_state"`
	Checks        []guardrail.Check    `json:"checks"`
	ExistingOrder *Order               `json:"existing_order,omitempty"`
}

// AuditEntry is one command the node took, with who sent it (the key id),
// why (the reason) and what came of it; or one change to a real venue's
// arming (Arming set, Command zero): armed or disarmed by an operator
// under a key id, or lapsed, by the node itself (KeyNode). Arming is no
// command: no client verb, tool or envelope carries it.
type AuditEntry struct {
	Seq           int64           `json:"seq"`
	Time          time.Time       `json:"time"`
	Ticket        string          `json:"ticket"`
	KeyID         string          `json:"key_id"`
	Command       command.Command `json:"command,omitzero"` // zero on an arming entry
	Arming        *ArmingChange   `json:"arming,omitempty"` // set, instead of Command, on an arming entry
	Reason        string          `json:"reason,omitempty"`
	ClientOrderID string          `json:"client_order_id,omitempty"`
	Outcome       Outcome         `json:"outcome"`
}

// KeyNode is the key id of audit entries the node made by itself (an
// arming that lapsed, or ended at a restart).
const KeyNode = "node"

// ArmingAction is what changed a real venue's arming.
type ArmingAction string

// The arming changes the audit trail records.
const (
	ArmingArm    ArmingAction = "arm"    // an operator armed the venue until Until
	ArmingDisarm ArmingAction = "disarm" // an operator disarmed it
	ArmingLapse  ArmingAction = "lapse"  // its arming ran out, or the node restarted
	// A venue's breaker moved it to reduce_only, or an operator cleared it.
	ArmingBreaker      ArmingAction = "breaker"
	ArmingBreakerClear ArmingAction = "breaker_clear"
	// The node pinned its operator key, or an operator rotated it.
	ArmingOperatorKey ArmingAction = "operator_key"
)

// ArmingChange is an arming entry of the audit trail: which venue, in
// which environment, and until when it is (arm) or was (disarm, lapse)
// armed.
type ArmingChange struct {
	Action      ArmingAction `json:"action"`
	Venue       string       `json:"venue"`
	Environment string       `json:"environment"`
	Until       time.Time    `json:"until,omitzero"`
	Note        string       `json:"note,omitempty"`
}

// AuditQuery selects audit entries: those at or after Since (zero: from the
// start) with a sequence number above After and, when ClientOrderID is set,
// that client order id; oldest first, at most Limit (0 means the node's
// default of 100; the most is 1000).
type AuditQuery struct {
	Since         time.Time
	After         int64
	ClientOrderID string
	Limit         int
}

// AuditPage is one page of the audit trail. When More is set, ask again
// with After = Next.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	More    bool         `json:"more"`
	Next    int64        `json:"next,omitempty"`
}

// Health is GET /v1/health.
type Health struct {
	Status       string               `json:"status"` // "ok"
	Version      string               `json:"version,omitempty"`
	TradingState command.TradingState `json:"trading_state"`
	Venues       []string             `json:"venues"`
	Started      time.Time            `json:"started"`
	Time         time.Time            `json:"time"`
	Tick         int64                `json:"tick"` // mark steps taken since the journal began
	Journal      string               `json:"journal"`
}
