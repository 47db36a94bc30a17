package node

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node/command"
)

// The types below are what a real venue's adapter (node/alpaca,
// node/binance) hands the node. The node's engine declares the interface it
// needs of an adapter; these are its vocabulary.

// VenueState is where a real venue says an order is.
type VenueState string

// Venue order states, mapped by each adapter from the venue's own.
const (
	VenueOpen     VenueState = "open" // accepted, resting or partly filled
	VenueFilled   VenueState = "filled"
	VenueCanceled VenueState = "canceled" // canceled or expired (an ioc's rest)
	VenueRejected VenueState = "rejected"
)

// VenueOrder is one order as a real venue reports it. Filled and
// AveragePrice are cumulative over the order's whole life, replaced
// incarnations included: the node derives each fill from the change, so a
// missed stream message loses nothing.
type VenueOrder struct {
	ClientOrderID string // the node's client order id (mapped back by the adapter); a foreign id for an external order
	VenueOrderID  string
	Symbol        string
	Side          command.Side
	Type          command.OrderType
	TimeInForce   command.TimeInForce
	Quantity      decimal.Decimal
	Price         decimal.Decimal // limit price
	StopPrice     decimal.Decimal // a stop's trigger, when the venue states it
	// TrailAmount or TrailPercent is a trailing stop's trail (the node's,
	// when it names an order to the adapter).
	TrailAmount, TrailPercent decimal.Decimal
	State                     VenueState
	Filled                    decimal.Decimal
	AveragePrice              decimal.Decimal
	Fee                       decimal.Decimal // cumulative, in the account currency when the venue says so
	Reason                    string          // why rejected or canceled, when the venue says
	Updated                   time.Time
	// FeeAsset and AssetFee are the commissions charged in another asset
	// than the account currency (Binance's BNB), cumulative, in it.
	FeeAsset string
	AssetFee decimal.Decimal
	// Notional is the fills' cumulative quote amount as the venue states it
	// (Binance's cummulativeQuoteQty), so each fill's price is derived
	// exactly; zero: Filled × AveragePrice.
	Notional decimal.Decimal
	// LastQuantity and LastPrice, on a report of one fill (a stream's
	// trade event), are that fill's own quantity and price.
	LastQuantity, LastPrice decimal.Decimal
}

// OrderRequest is a new order for a real venue.
type OrderRequest struct {
	ClientOrderID string
	Symbol        string
	Side          command.Side
	Type          command.OrderType
	TimeInForce   command.TimeInForce
	Quantity      decimal.Decimal
	Price         decimal.Decimal // limit price: a limit's, a stop_limit's once triggered
	// StopPrice is a stop's or stop_limit's trigger; TrailAmount or
	// TrailPercent a trailing stop's distance from the best price.
	StopPrice, TrailAmount, TrailPercent decimal.Decimal
	// ReduceOnly: the order only closes (flatten, market_exit); a venue
	// that can (binance-futures) sends it reduce-only.
	ReduceOnly bool
}

// Replacement is what a modify changes in a resting order at a real
// venue; a zero field keeps the order's own. Price is a limit's price or
// a stop_limit's limit; StopPrice a stop's or stop_limit's trigger;
// TrailAmount or TrailPercent a trailing stop's new trail.
type Replacement struct {
	Quantity, Price, StopPrice, TrailAmount, TrailPercent decimal.Decimal
}

// Group classes: linked orders a venue takes in one request.
const (
	// GroupOCO is two exits, one cancelling the other: Legs[0] the limit
	// (take-profit), Legs[1] the stop or stop_limit.
	GroupOCO = "oco"
	// GroupBracket is an entry with its two exits, active once the entry
	// fills: Legs[0] the entry (market or limit), Legs[1] the take-profit
	// limit, Legs[2] the stop-loss stop or stop_limit.
	GroupBracket = "bracket"
)

// Leg suffixes: the client order id of a linked leg is its group's (the
// first leg's) with a suffix, so a venue that names legs itself (Alpaca)
// has them mapped back to the node's ids after a restart too.
const (
	StopLegSuffix       = command.StopLegSuffix       // an oco's or a bracket's stop leg
	TakeProfitLegSuffix = command.TakeProfitLegSuffix // a bracket's take-profit leg
	FireSuffix          = "-fire"                     // the market order a trigger the node holds fires
)

// Split flip suffixes: a market order a margined venue's flip = "split"
// sends as two goes out as its client order id with FlipCloseSuffix (the
// reduce-only close) and FlipOpenSuffix (the opening remainder).
const (
	FlipCloseSuffix = "-close"
	FlipOpenSuffix  = "-open"
)

// GroupRequest is linked orders for one request to a real venue: every
// leg on the same symbol, each with its own client order id.
type GroupRequest struct {
	Class string // GroupOCO or GroupBracket
	Legs  []OrderRequest
}

// Hold says who holds an order's trigger at a real venue.
type Hold string

// Who holds it.
const (
	// HoldVenue: the venue takes the order natively.
	HoldVenue Hold = "venue"
	// HoldNode: the venue cannot hold it, so the node does: the trigger is
	// journaled before it is armed, checked on the venue's marks, and fires
	// one market order (client order id: the trigger's + FireSuffix).
	HoldNode Hold = "node"
	// HoldAfterEntry: the venue holds the leg natively but takes it only
	// once the bracket's entry has filled, so the node keeps it until then
	// and sends it (with the other exit, as one oco) for what filled.
	HoldAfterEntry Hold = "after_entry"
)

// VenuePosition is a holding at a real venue.
type VenuePosition struct {
	Symbol       string
	Quantity     decimal.Decimal // signed
	AveragePrice decimal.Decimal
	// A margined venue (binance-futures) states the rest as it keeps it:
	// mark, unrealised P&L, leverage, margin type and margin, liquidation
	// price. Closed, on a zero quantity, says why the venue closed the
	// position (a liquidation).
	Mark, UnrealizedPnL, Margin, LiquidationPrice decimal.Decimal
	Leverage                                      int
	MarginType                                    string
	Closed                                        string
}

// Funding is one funding payment a venue booked to the account (a
// perpetual's settlement): Amount is signed, received positive, paid
// negative; ID is the venue's own id for it (unique per account).
type Funding struct {
	ID     string
	Symbol string
	Amount decimal.Decimal
	Time   time.Time
}

// Account is a real venue's account state.
type Account struct {
	ID          string // the venue's account id or number, for the operator
	Currency    string
	Cash        decimal.Decimal
	BuyingPower decimal.Decimal
	Positions   []VenuePosition
	// Margined says positions are margined contracts (futures): equity is
	// cash plus their unrealised P&L, not their market value.
	Margined bool
}

// VenueUpdate is one message from a venue's order stream: an order's new
// state, or (Order nil) a change of the stream's connection.
type VenueUpdate struct {
	Order     *VenueOrder
	Connected bool // with Order nil: the stream (re)connected, so the node resyncs
	// Resync, with Order nil: the adapter saw a report it cannot put in
	// context (an incarnation of a replaced order it did not replace
	// itself), so the node reads the orders back over REST.
	Resync bool
}

// Errors an adapter returns, wrapped with the venue's own message; test
// them with errors.Is.
var (
	// ErrVenueRejected: the venue answered and refused; nothing was placed
	// or changed.
	ErrVenueRejected = errors.New("the venue refused it")
	// ErrVenueUnknown: the outcome is unknown (a timeout, a lost response,
	// a 5xx on a write): the request may or may not have taken effect. A
	// write that ends here is never resent.
	ErrVenueUnknown = errors.New("the venue's answer was lost")
	// ErrVenueNotFound: the venue answered that no such order exists.
	ErrVenueNotFound = errors.New("the venue has no such order")
	// ErrUnknownSymbol: the venue answered that it does not list a
	// configured symbol (the message names it, and the venue's own symbol
	// for it when one is found): a configuration error, not an outage.
	ErrUnknownSymbol = errors.New("the venue does not list a configured symbol")
)

// VenueError wraps one of the errors above with the venue's message.
type VenueError struct {
	Kind    error // ErrVenueRejected, ErrVenueUnknown or ErrVenueNotFound
	Venue   string
	Message string
}

func (e *VenueError) Error() string { return fmt.Sprintf("%s: %s: %s", e.Venue, e.Kind, e.Message) }

// Unwrap lets errors.Is match the kind.
func (e *VenueError) Unwrap() error { return e.Kind }
