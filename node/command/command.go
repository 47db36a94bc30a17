package command

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Command is one write command. Only the fields of its verb may be set; a
// zero decimal (Quantity, Price, StopPrice, ...) means the field is absent
// (a present one is always positive).
type Command struct {
	Verb     Verb
	Venue    string
	Symbol   string
	Side     Side
	Type     OrderType
	Quantity decimal.Decimal
	// Price is a limit order's limit.
	Price decimal.Decimal
	// StopPrice is a stop or stop_limit order's trigger.
	StopPrice decimal.Decimal
	// LimitPrice is a stop_limit order's limit once triggered.
	LimitPrice decimal.Decimal
	// TrailAmount or TrailPercent (exactly one) is a trailing_stop's
	// distance from the best price: in price units, or in percent of it.
	TrailAmount  decimal.Decimal
	TrailPercent decimal.Decimal
	// TakeProfit is a bracket's take-profit: the limit price of the exit
	// that takes the gain (its stop-loss is StopPrice, a stop_limit at
	// LimitPrice when given).
	TakeProfit    decimal.Decimal
	TimeInForce   TimeInForce
	OrderID       string
	ClientOrderID string
	State         TradingState
}

// ClientOrderIDPrefix starts every minted client order id.
const ClientOrderIDPrefix = "wk-"

// NewID is the production id source for Resolve: a UUIDv7, so minted client
// order ids sort by creation time.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// Resolve returns c ready to send: a submit_order without a client order id
// gets "wk-" + newID(). Other verbs carry no order id of their own and are
// returned unchanged. newID is the caller's injected id source (NewID in
// production).
func (c Command) Resolve(newID func() string) Command {
	if c.Verb.HasOrder() && c.ClientOrderID == "" {
		c.ClientOrderID = ClientOrderIDPrefix + newID()
	}
	return c
}

// TIF is the effective time in force of a submit_order: the explicit one,
// else ioc for a market order and gtc for every other type.
func (c Command) TIF() TimeInForce {
	switch {
	case c.TimeInForce != "":
		return c.TimeInForce
	case c.Type == Market:
		return IOC
	case ruleOf(c.Type) != nil:
		return GTC
	}
	return ""
}

// decimalField is the decimal field called name, or nil when name is not
// a decimal field.
func (c *Command) decimalField(name string) *decimal.Decimal {
	switch name {
	case "quantity":
		return &c.Quantity
	case "price":
		return &c.Price
	case "stop_price":
		return &c.StopPrice
	case "limit_price":
		return &c.LimitPrice
	case "trail_amount":
		return &c.TrailAmount
	case "trail_percent":
		return &c.TrailPercent
	case "take_profit":
		return &c.TakeProfit
	}
	return nil
}

// value returns a field's display value and whether it is set.
func (c *Command) value(name string) (string, bool) {
	if d := c.decimalField(name); d != nil {
		if d.IsZero() {
			return "", false
		}
		return d.String(), true
	}
	var s string
	switch name {
	case "venue":
		s = c.Venue
	case "symbol":
		s = c.Symbol
	case "side":
		s = string(c.Side)
	case "type":
		s = string(c.Type)
	case "time_in_force":
		if c.Verb == SubmitOrder {
			s = string(c.TIF())
		} else {
			s = string(c.TimeInForce)
		}
	case "order_id":
		s = c.OrderID
	case "client_order_id":
		s = c.ClientOrderID
	case "state":
		s = string(c.State)
	}
	return s, s != ""
}

// allFields names every field a Command can carry, for checks that a
// command sets only its verb's fields.
var allFields = []string{"venue", "symbol", "side", "type", "quantity", "price", "stop_price", "limit_price", "trail_amount", "trail_percent", "take_profit", "time_in_force", "order_id", "client_order_id", "state"}

// Validate checks c against its verb's spec: known verb, only the verb's
// fields, required fields present, valid values and the cross-field rules.
// DecodeWith and Build call it; call it yourself on a Command built in Go.
func (c Command) Validate() error {
	sp := spec(c.Verb)
	if sp == nil {
		return unknownVerb(string(c.Verb))
	}
	for _, name := range allFields {
		if _, ok := sp.Field(name); ok {
			continue
		}
		if v, set := c.value(name); set {
			return &Error{Kind: KindUnknownField, Verb: c.Verb, Field: name,
				Msg: fmt.Sprintf("%s takes no %s (got %q); valid fields: %s", c.Verb, name, v, strings.Join(sp.FieldNames(), ", "))}
		}
	}
	for _, f := range sp.Fields {
		v, set := c.value(f.Name)
		if !set {
			if f.Required {
				return missing(c.Verb, f)
			}
			continue
		}
		if err := checkValue(c.Verb, f, v); err != nil {
			return err
		}
	}
	for _, name := range allFields {
		if d := c.decimalField(name); d != nil && d.IsNegative() {
			return invalid(c.Verb, name, fmt.Sprintf("%s must be positive", d))
		}
	}
	return c.checkRules()
}

// checkValue validates one set value of a Go-built command. Decoding checks
// the same things as it reads, with the raw input in the message.
func checkValue(verb Verb, f Field, v string) error {
	switch f.Kind {
	case Text, ID:
		return checkName(verb, f, v)
	case Enum:
		return checkEnum(verb, f, v)
	}
	return nil
}

// checkRules enforces the cross-field rules listed in the spec.
func (c Command) checkRules() error {
	switch c.Verb {
	case SubmitOrder:
		if err := c.checkPriceFields(); err != nil {
			return err
		}
		switch {
		case c.Type == Market && c.TimeInForce == GTC:
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: "time_in_force", Msg: "a market order fills at once: use ioc or omit time_in_force"}
		case c.Type.Rests() && c.TimeInForce == IOC:
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: "time_in_force",
				Msg: fmt.Sprintf("%s order rests until a price trades: use gtc or omit time_in_force", c.Type.withArticle())}
		case c.Type.Compound() && len(c.ClientOrderID) > MaxCompoundClientID:
			return invalid(c.Verb, "client_order_id", fmt.Sprintf("%s is %d characters; %s's legs are named with %s appended, so give at most %d",
				quote(c.ClientOrderID), len(c.ClientOrderID), c.Type.withArticle(), legSuffixes(c.Type), MaxCompoundClientID))
		}
	case CancelOrder, Modify:
		if (c.OrderID == "") == (c.ClientOrderID == "") {
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: "order_id",
				Msg: "give exactly one of order_id or client_order_id"}
		}
		if c.Verb != Modify {
			break
		}
		var set []string
		for _, name := range modifyFields {
			if _, ok := c.value(name); ok {
				set = append(set, name)
			}
		}
		switch {
		case len(set) == 0:
			return &Error{Kind: KindMissingField, Verb: c.Verb, Field: "quantity",
				Msg: "give at least one of " + strings.Join(modifyFields, ", ") + ": a modify must change something"}
		case !c.TrailAmount.IsZero() && !c.TrailPercent.IsZero():
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: "trail_percent", Msg: "give trail_amount or trail_percent, not both: the new trail is one of them"}
		case c.TrailPercent.GreaterThanOrEqual(hundred):
			return invalid(c.Verb, "trail_percent", fmt.Sprintf("%s is a percent of the best price and must be below 100", c.TrailPercent))
		}
	}
	return nil
}

// checkPriceFields enforces typeRules on a submit_order: the price fields
// its type needs are set, exactly one of a OneOf, and no other.
func (c Command) checkPriceFields() error {
	r := ruleOf(c.Type)
	if r == nil {
		return nil // an unknown type was refused with its field
	}
	for _, name := range priceFields {
		if _, set := c.value(name); set && !r.takes(name) {
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: name, Msg: fmt.Sprintf("%s order takes no %s (%s)", c.Type.withArticle(), name, r.Hint)}
		}
	}
	for _, name := range r.Needs {
		if _, set := c.value(name); !set {
			return &Error{Kind: KindMissingField, Verb: c.Verb, Field: name, Msg: fmt.Sprintf("%s order needs a %s (%s)", c.Type.withArticle(), name, r.Hint)}
		}
	}
	if len(r.OneOf) > 0 {
		var set []string
		for _, name := range r.OneOf {
			if _, ok := c.value(name); ok {
				set = append(set, name)
			}
		}
		switch len(set) {
		case 0:
			return &Error{Kind: KindMissingField, Verb: c.Verb, Field: r.OneOf[0],
				Msg: fmt.Sprintf("%s order needs %s (%s)", c.Type.withArticle(), strings.Join(r.OneOf, " or "), r.Hint)}
		case 1:
		default:
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: set[1],
				Msg: fmt.Sprintf("%s order takes one of %s, not both (%s)", c.Type.withArticle(), strings.Join(r.OneOf, " or "), r.Hint)}
		}
	}
	if c.TrailPercent.GreaterThanOrEqual(hundred) {
		return invalid(c.Verb, "trail_percent", fmt.Sprintf("%s is a percent of the best price and must be below 100 (\"2.5\" trails by 2.5 %%)", c.TrailPercent))
	}
	return nil
}

var hundred = decimal.NewFromInt(100)

// withArticle is "a stop", "an oco".
func (t OrderType) withArticle() string {
	if strings.HasPrefix(string(t), "o") || strings.HasPrefix(string(t), "e") {
		return "an " + string(t)
	}
	return "a " + string(t)
}

// Leg suffixes end the client order ids of a compound command's legs: its
// first leg (an oco's limit, a bracket's entry) carries the command's own
// id.
const (
	// StopLegSuffix ends an oco's stop leg's and a bracket's stop-loss's.
	StopLegSuffix = "-stop"
	// TakeProfitLegSuffix ends a bracket's take-profit's.
	TakeProfitLegSuffix = "-tp"
)

// MaxCompoundClientID is the longest client order id an oco or a bracket
// takes: its legs' ids, with the longest suffix, stay within a name's 64
// characters.
const MaxCompoundClientID = 64 - max(len(StopLegSuffix), len(TakeProfitLegSuffix))

// legSuffixes names the suffixes type t's legs add, for messages.
func legSuffixes(t OrderType) string {
	if t == Bracket {
		return quote(TakeProfitLegSuffix) + " and " + quote(StopLegSuffix)
	}
	return quote(StopLegSuffix)
}

// Leg names, as Leg.Name, node.Order.Leg and guardrail.Check.Leg carry
// them.
const (
	LegOrder      = "order"       // a simple order
	LegLimit      = "limit"       // an oco's limit leg
	LegStop       = "stop"        // an oco's stop leg
	LegEntry      = "entry"       // a bracket's entry
	LegTakeProfit = "take_profit" // a bracket's take-profit limit
	LegStopLoss   = "stop_loss"   // a bracket's stop-loss stop (or stop_limit)
)

// Leg is one order a submit_order places.
type Leg struct {
	// Name is LegOrder for a simple order; LegLimit and LegStop for an
	// oco's legs; LegEntry, LegTakeProfit and LegStopLoss for a
	// bracket's.
	Name    string
	Command Command
	// Exit says the leg closes what the command's entry opens (a
	// bracket's take-profit and stop-loss): it rests inactive until the
	// entry fills and is sized to what filled.
	Exit bool
}

// Legs is the orders a submit_order places, each a submit_order of a
// simple type: the command itself; an oco's limit leg (at price, with the
// command's client order id) and stop leg (at stop_price, a stop_limit
// with limit_price; its client order id ends in StopLegSuffix); or a
// bracket's entry (a limit at price, a market order without one, with the
// command's client order id), take-profit (a limit on the other side at
// take_profit, TakeProfitLegSuffix) and stop-loss (a stop on the other
// side at stop_price, a stop_limit with limit_price, StopLegSuffix), both
// of the entry's quantity. Guardrail checks and the node place each leg.
func (c Command) Legs() []Leg {
	switch c.Type {
	case OCO:
		limit := c
		limit.Type, limit.StopPrice, limit.LimitPrice = Limit, decimal.Decimal{}, decimal.Decimal{}
		return []Leg{{Name: LegLimit, Command: limit}, {Name: LegStop, Command: c.stopLeg(c.Side, StopLegSuffix)}}
	case Bracket:
		entry := c
		entry.Type, entry.StopPrice, entry.LimitPrice, entry.TakeProfit = Limit, decimal.Decimal{}, decimal.Decimal{}, decimal.Decimal{}
		entry.TimeInForce = GTC
		if c.Price.IsZero() {
			entry.Type, entry.TimeInForce = Market, IOC
		}
		exit := c.Side.Opposite()
		tp := c.stopLeg(exit, TakeProfitLegSuffix)
		tp.Type, tp.Price, tp.StopPrice, tp.LimitPrice = Limit, c.TakeProfit, decimal.Decimal{}, decimal.Decimal{}
		return []Leg{{Name: LegEntry, Command: entry}, {Name: LegTakeProfit, Command: tp, Exit: true},
			{Name: LegStopLoss, Command: c.stopLeg(exit, StopLegSuffix), Exit: true}}
	}
	return []Leg{{Name: LegOrder, Command: c}}
}

// stopLeg is c's stop leg on side: a stop at stop_price (a stop_limit
// with limit_price), its client order id c's with suffix.
func (c Command) stopLeg(side Side, suffix string) Command {
	stop := c
	stop.Side, stop.Type, stop.Price, stop.TakeProfit, stop.TimeInForce = side, Stop, decimal.Decimal{}, decimal.Decimal{}, GTC
	if !c.LimitPrice.IsZero() {
		stop.Type = StopLimit
	}
	if c.ClientOrderID != "" {
		stop.ClientOrderID = c.ClientOrderID + suffix
	}
	return stop
}

// CheckModifyOf says what is wrong with modify c for an open order of
// type t (grouped: a leg of an oco or bracket), nil when it may apply: each
// type takes its own fields (a limit's price, a stop's stop_price, a
// stop_limit's stop_price and limit_price, a trailing_stop's trail), and a
// leg takes no quantity. The guardrail and the paper venue apply the same
// rule.
func (c Command) CheckModifyOf(t OrderType, grouped bool) error {
	var takes []string
	for _, m := range modifiable {
		if m.Type == t {
			takes = m.Fields
		}
	}
	if takes == nil {
		var types []string
		for _, m := range modifiable {
			types = append(types, string(m.Type))
		}
		return &Error{Kind: KindConflict, Verb: Modify, Field: "order_id",
			Msg: fmt.Sprintf("%s order cannot be modified: only %s orders can; cancel it instead", t.withArticle(), strings.Join(types, ", "))}
	}
	for _, name := range modifyFields {
		if _, set := c.value(name); !set {
			continue
		}
		if name == "quantity" && grouped {
			return &Error{Kind: KindConflict, Verb: Modify, Field: name,
				Msg: "the order is a leg of an oco or bracket, whose legs' quantities follow one another: cancel the group and submit it again to change its size"}
		}
		if !slices.Contains(takes, name) {
			return &Error{Kind: KindConflict, Verb: Modify, Field: name,
				Msg: fmt.Sprintf("%s order takes no %s; it takes %s", t.withArticle(), name, strings.Join(takes, ", "))}
		}
	}
	return nil
}

// Diff is one field on which two commands differ.
type Diff struct {
	Field      string `json:"field"`
	Previewed  string `json:"previewed"`
	Confirming string `json:"confirming"`
}

// SameIntent reports whether confirming asks for the same thing as c (the
// previewed, resolved command). It returns nil when they match, and an
// *Error of kind Mismatch listing every differing field with both values
// otherwise. Decimals compare by value ("1.0" equals "1"); a client order id
// that confirming omits is ignored, one it gives must match.
func (c Command) SameIntent(confirming Command) error {
	if c.Verb != confirming.Verb {
		return &Error{Kind: KindMismatch, Verb: c.Verb, Field: "verb",
			Diffs: []Diff{{Field: "verb", Previewed: string(c.Verb), Confirming: string(confirming.Verb)}}}
	}
	var diffs []Diff
	for _, name := range allFields {
		a, _ := c.value(name)
		b, bset := confirming.value(name)
		switch name {
		case "client_order_id":
			if !bset {
				continue
			}
		}
		if d := c.decimalField(name); d != nil && d.Equal(*confirming.decimalField(name)) {
			continue
		}
		if a != b {
			diffs = append(diffs, Diff{Field: name, Previewed: a, Confirming: b})
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return &Error{Kind: KindMismatch, Verb: c.Verb, Field: diffs[0].Field, Diffs: diffs}
}

// String is the command as its wire JSON.
func (c Command) String() string {
	b, err := c.MarshalJSON()
	if err != nil {
		return fmt.Sprintf("invalid command %q", string(c.Verb))
	}
	return string(b)
}
