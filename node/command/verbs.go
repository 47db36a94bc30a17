package command

import (
	"fmt"
	"strings"
)

// Verb names a write command.
type Verb string

// The verbs, in the order surfaces list them.
const (
	SubmitOrder     Verb = "submit_order"
	CancelOrder     Verb = "cancel_order"
	Modify          Verb = "modify"
	Flatten         Verb = "flatten"
	MarketExit      Verb = "market_exit"
	MassCancel      Verb = "mass_cancel"
	SetTradingState Verb = "set_trading_state"
)

// Side is the direction of an order.
type Side string

// Sides.
const (
	Buy  Side = "buy"
	Sell Side = "sell"
)

// OrderType is how an order is priced.
type OrderType string

// Order types.
const (
	Market OrderType = "market"
	Limit  OrderType = "limit"
	// Stop becomes a market order once the price trades through
	// stop_price: a sell at or below it, a buy at or above.
	Stop OrderType = "stop"
	// StopLimit becomes a limit order at limit_price once the price
	// trades through stop_price.
	StopLimit OrderType = "stop_limit"
	// TrailingStop is a stop that follows the best price since placement,
	// trail_amount (a price distance) or trail_percent (of the best price)
	// behind it.
	TrailingStop OrderType = "trailing_stop"
	// OCO is two exit orders of one command, one cancelling the other: a
	// limit at price and a stop at stop_price (a stop_limit at limit_price
	// when given). See Command.Legs.
	OCO OrderType = "oco"
	// Bracket is an entry with its two exits, one command: a limit entry
	// at price (a market entry without one), a take-profit limit at
	// take_profit and a stop-loss at stop_price (a stop_limit at
	// limit_price when given), both on the other side. The exits rest
	// inactive until the entry fills, are sized to what filled, and are an
	// oco from then on. See Command.Legs.
	Bracket OrderType = "bracket"
)

// Protective reports whether an order of type t waits for a stop to
// trade (stop, stop_limit, trailing_stop).
func (t OrderType) Protective() bool { return t == Stop || t == StopLimit || t == TrailingStop }

// Rests reports whether an order of type t always rests until a price
// trades (the stop types and oco): gtc, never ioc.
func (t OrderType) Rests() bool { return t.Protective() || t.Compound() }

// Compound reports whether an order of type t places several linked legs
// as one command (oco, bracket).
func (t OrderType) Compound() bool { return t == OCO || t == Bracket }

// Opposite is the other side: the side that closes what s opens.
func (s Side) Opposite() Side {
	if s == Buy {
		return Sell
	}
	return Buy
}

// typeRule is what one order type takes among the price fields.
type typeRule struct {
	Type     OrderType
	Needs    []string // price fields it must have
	OneOf    []string // it must have exactly one of these
	Optional []string // it may have these
	Hint     string   // what a wrong price field should be instead
}

// priceFields are the submit_order fields that price an order; typeRules
// says which each type takes. Decoding enforces the table and the spec's
// rules are written from it.
var (
	priceFields = []string{"price", "stop_price", "limit_price", "trail_amount", "trail_percent", "take_profit"}
	typeRules   = []typeRule{
		{Type: Market, Hint: "use type limit to set one, or stop, stop_limit or trailing_stop for an order a price triggers"},
		{Type: Limit, Needs: []string{"price"}, Hint: "or use type market"},
		{Type: Stop, Needs: []string{"stop_price"}, Hint: "a stop fills at the market once stop_price trades; use stop_limit with limit_price to cap its fill"},
		{Type: StopLimit, Needs: []string{"stop_price", "limit_price"}, Hint: "a stop_limit takes stop_price and limit_price"},
		{Type: TrailingStop, OneOf: []string{"trail_amount", "trail_percent"}, Hint: "a trailing_stop takes exactly one of trail_amount or trail_percent"},
		{Type: OCO, Needs: []string{"price", "stop_price"}, Optional: []string{"limit_price"},
			Hint: "an oco takes price for its limit leg and stop_price for its stop leg, with limit_price to make that a stop_limit"},
		{Type: Bracket, Needs: []string{"take_profit", "stop_price"}, Optional: []string{"price", "limit_price"},
			Hint: "a bracket takes price for a limit entry (none for a market entry), take_profit for its take-profit limit and stop_price for its stop-loss, with limit_price to make that a stop_limit"},
	}
)

func ruleOf(t OrderType) *typeRule {
	for i := range typeRules {
		if typeRules[i].Type == t {
			return &typeRules[i]
		}
	}
	return nil
}

// takes reports whether the rule allows the price field name.
func (r *typeRule) takes(name string) bool {
	for _, n := range r.Needs {
		if n == name {
			return true
		}
	}
	for _, n := range r.OneOf {
		if n == name {
			return true
		}
	}
	for _, n := range r.Optional {
		if n == name {
			return true
		}
	}
	return false
}

// typeRuleLines renders typeRules as the spec's rule lines.
func typeRuleLines() []string {
	var out []string
	for _, r := range typeRules {
		switch {
		case len(r.Optional) > 0:
			out = append(out, fmt.Sprintf("type %s needs %s, may take %s, and takes no other price field", r.Type, strings.Join(r.Needs, " and "), strings.Join(r.Optional, " and ")))
		case len(r.Needs) > 0:
			out = append(out, fmt.Sprintf("type %s needs %s and takes no other price field", r.Type, strings.Join(r.Needs, " and ")))
		case len(r.OneOf) > 0:
			out = append(out, fmt.Sprintf("type %s needs exactly one of %s and takes no other price field", r.Type, strings.Join(r.OneOf, " or ")))
		default:
			out = append(out, fmt.Sprintf("type %s takes no price field (%s)", r.Type, strings.Join(priceFields, ", ")))
		}
	}
	return out
}

// modifiable is what a modify may change of an open order, by its type.
var modifiable = []struct {
	Type   OrderType
	Fields []string
}{
	{Limit, []string{"quantity", "price"}},
	{Stop, []string{"quantity", "stop_price"}},
	{StopLimit, []string{"quantity", "stop_price", "limit_price"}},
	{TrailingStop, []string{"quantity", "trail_amount", "trail_percent"}},
}

// modifyFields are the fields a modify changes.
var modifyFields = []string{"quantity", "price", "stop_price", "limit_price", "trail_amount", "trail_percent"}

// modifyRuleLines renders modifiable as the spec's rule lines.
func modifyRuleLines() []string {
	var out []string
	for _, m := range modifiable {
		out = append(out, fmt.Sprintf("an open %s order takes %s", m.Type, strings.Join(m.Fields, ", ")))
	}
	return append(out, "a leg of an oco or bracket takes no quantity: its legs' quantities follow one another")
}

// TimeInForce says how long an order may rest.
type TimeInForce string

// Times in force.
const (
	GTC TimeInForce = "gtc" // rests until filled or canceled
	IOC TimeInForce = "ioc" // fills at once or is canceled
)

// TradingState is the node-wide trading switch.
type TradingState string

// Trading states.
const (
	Active     TradingState = "active"      // everything allowed
	ReduceOnly TradingState = "reduce_only" // nothing that increases a position
	Halted     TradingState = "halted"      // only cancels and set_trading_state
)

// FieldKind is the type of a field's value.
type FieldKind string

// Field kinds.
const (
	Text    FieldKind = "text"    // a bare name (venue, symbol)
	Decimal FieldKind = "decimal" // a positive decimal, as a JSON string or number
	Enum    FieldKind = "enum"    // one of Field.Choices
	ID      FieldKind = "id"      // an order id or client order id
)

// Field describes one field of a verb.
type Field struct {
	Name        string
	Kind        FieldKind
	Choices     []string // for Enum
	Required    bool     // always required; see Spec.Rules for conditional ones
	Description string   // one line
}

// Spec describes one verb: what it does, its fields in display order, and
// the cross-field rules decoding enforces, one line each.
type Spec struct {
	Verb    Verb
	Summary string
	Fields  []Field
	Rules   []string
}

// Field returns the field with that name.
func (s *Spec) Field(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// FieldNames lists the field names in display order.
func (s *Spec) FieldNames() []string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return names
}

var (
	sides        = []string{string(Buy), string(Sell)}
	orderTypes   = []string{string(Market), string(Limit), string(Stop), string(StopLimit), string(TrailingStop), string(OCO), string(Bracket)}
	timesInForce = []string{string(GTC), string(IOC)}
	states       = []string{string(Active), string(ReduceOnly), string(Halted)}
)

func venueField(required bool, what string) Field {
	return Field{Name: "venue", Kind: Text, Required: required, Description: what}
}

var (
	orderIDField = Field{Name: "order_id", Kind: ID,
		Description: "the node's order id (ord-...), as in the snapshot"}
	clientIDField = Field{Name: "client_order_id", Kind: ID,
		Description: "the client order id the order was submitted with (wk-...)"}
)

// specs is the verb table. Surfaces render schemas and help from it; decoding
// enforces it.
var specs = []Spec{
	{
		Verb:    SubmitOrder,
		Summary: "Place an order: market, limit, stop, stop_limit, trailing_stop, oco (two exits, one cancels the other) or bracket (an entry with both exits).",
		Fields: []Field{
			venueField(true, "venue to trade on, as named in wicket.toml"),
			{Name: "symbol", Kind: Text, Required: true, Description: "instrument the venue lists, e.g. BTC-USD"},
			{Name: "side", Kind: Enum, Choices: sides, Required: true, Description: "buy or sell"},
			{Name: "type", Kind: Enum, Choices: orderTypes, Required: true, Description: "market, limit, stop, stop_limit, trailing_stop, oco or bracket"},
			{Name: "quantity", Kind: Decimal, Required: true, Description: "amount to trade, a positive decimal string such as \"0.5\""},
			{Name: "price", Kind: Decimal, Description: "limit price of a limit order, an oco's limit leg or a bracket's entry (none: a market entry)"},
			{Name: "stop_price", Kind: Decimal, Description: "trigger of a stop, stop_limit, oco stop leg or bracket stop-loss"},
			{Name: "limit_price", Kind: Decimal, Description: "the limit a triggered stop_limit (oco stop leg, bracket stop-loss) rests at"},
			{Name: "trail_amount", Kind: Decimal, Description: "a trailing_stop's distance from the best mark, in price units"},
			{Name: "trail_percent", Kind: Decimal, Description: "a trailing_stop's distance from the best mark, in percent (\"2.5\"), below 100"},
			{Name: "take_profit", Kind: Decimal, Description: "a bracket's take-profit limit price"},
			{Name: "time_in_force", Kind: Enum, Choices: timesInForce, Description: "gtc rests until filled or canceled (default but for market); ioc fills at once or cancels"},
			{Name: "client_order_id", Kind: ID, Description: "your id (minted as wk-<uuidv7> when omitted); a duplicate is refused"},
		},
		Rules: append(typeRuleLines(),
			"trail_percent is below 100",
			"time_in_force gtc is not allowed for a market order, ioc not for stop, stop_limit, trailing_stop, oco or bracket",
			fmt.Sprintf("an oco's or a bracket's client_order_id names its first leg and leaves room for the others' (the same with %s, %s): at most %d characters",
				StopLegSuffix, TakeProfitLegSuffix, MaxCompoundClientID),
		),
	},
	{
		Verb:    CancelOrder,
		Summary: "Cancel one open order.",
		Fields:  []Field{venueField(true, "venue the order is on"), orderIDField, clientIDField},
		Rules:   []string{"exactly one of order_id or client_order_id"},
	},
	{
		Verb:    Modify,
		Summary: "Change an open order: its quantity, limit price, stop_price or trail.",
		Fields: []Field{
			venueField(true, "venue the order is on"), orderIDField, clientIDField,
			{Name: "quantity", Kind: Decimal, Description: "new total quantity"},
			{Name: "price", Kind: Decimal, Description: "new limit price of a limit order"},
			{Name: "stop_price", Kind: Decimal, Description: "new stop of a stop or stop_limit"},
			{Name: "limit_price", Kind: Decimal, Description: "new limit of a stop_limit"},
			{Name: "trail_amount", Kind: Decimal, Description: "new trail, in price units"},
			{Name: "trail_percent", Kind: Decimal, Description: "new trail, in percent"},
		},
		Rules: append([]string{
			"exactly one of order_id or client_order_id",
			"at least one of quantity, price, stop_price, limit_price, trail_amount or trail_percent",
			"not both trail_amount and trail_percent; trail_percent is below 100",
		}, modifyRuleLines()...),
	},
	{
		Verb:    Flatten,
		Summary: "Close one position (symbol given) or every position on a venue with market orders; open orders stay.",
		Fields: []Field{
			venueField(true, "venue whose positions to close"),
			{Name: "symbol", Kind: Text, Description: "close only this symbol's position; omit for every position on the venue"},
		},
	},
	{
		Verb:    MarketExit,
		Summary: "Cancel every open order, then close every position with market orders, on one venue or on all.",
		Fields: []Field{
			venueField(false, "limit the exit to this venue; omit for every venue"),
		},
	},
	{
		Verb:    MassCancel,
		Summary: "Cancel every open order on a venue, optionally only for one symbol or one side.",
		Fields: []Field{
			venueField(true, "venue whose open orders to cancel"),
			{Name: "symbol", Kind: Text, Description: "cancel only this symbol's orders"},
			{Name: "side", Kind: Enum, Choices: sides, Description: "cancel only buy or only sell orders"},
		},
	},
	{
		Verb:    SetTradingState,
		Summary: "Switch the node's trading state: active, reduce_only (nothing that increases a position) or halted (only cancels and this verb).",
		Fields: []Field{
			{Name: "state", Kind: Enum, Choices: states, Required: true, Description: "active, reduce_only or halted"},
		},
	},
}

// Specs returns the verb table in display order. The result is a copy; the
// table itself never changes.
func Specs() []Spec {
	out := make([]Spec, len(specs))
	for i := range specs {
		out[i] = specs[i].clone()
	}
	return out
}

// Lookup returns the spec of a verb (a copy).
func Lookup(verb Verb) (Spec, bool) {
	if s := spec(verb); s != nil {
		return s.clone(), true
	}
	return Spec{}, false
}

func (s *Spec) clone() Spec {
	c := *s
	c.Fields = append([]Field(nil), s.Fields...)
	for j := range c.Fields {
		c.Fields[j].Choices = append([]string(nil), c.Fields[j].Choices...)
	}
	c.Rules = append([]string(nil), s.Rules...)
	return c
}

// Verbs lists the verb names in display order.
func Verbs() []Verb {
	out := make([]Verb, len(specs))
	for i, s := range specs {
		out[i] = s.Verb
	}
	return out
}

// spec is the internal, uncopied lookup.
func spec(verb Verb) *Spec {
	for i := range specs {
		if specs[i].Verb == verb {
			return &specs[i]
		}
	}
	return nil
}

// HasOrder reports whether a verb places an order that carries a client
// order id (only submit_order).
func (v Verb) HasOrder() bool { return v == SubmitOrder }
