package command

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Command is one write command. Only the fields of its verb may be set; a
// zero Quantity or Price means the field is absent (a present one is always
// positive).
type Command struct {
	Verb          Verb
	Venue         string
	Symbol        string
	Side          Side
	Type          OrderType
	Quantity      decimal.Decimal
	Price         decimal.Decimal
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
// else gtc for a limit order and ioc for a market order.
func (c Command) TIF() TimeInForce {
	switch {
	case c.TimeInForce != "":
		return c.TimeInForce
	case c.Type == Limit:
		return GTC
	case c.Type == Market:
		return IOC
	}
	return ""
}

// value returns a field's display value and whether it is set.
func (c *Command) value(name string) (string, bool) {
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
	case "quantity":
		if c.Quantity.IsZero() {
			return "", false
		}
		return c.Quantity.String(), true
	case "price":
		if c.Price.IsZero() {
			return "", false
		}
		return c.Price.String(), true
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
var allFields = []string{"venue", "symbol", "side", "type", "quantity", "price", "time_in_force", "order_id", "client_order_id", "state"}

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
	if c.Quantity.IsNegative() {
		return invalid(c.Verb, "quantity", fmt.Sprintf("%s must be positive", c.Quantity))
	}
	if c.Price.IsNegative() {
		return invalid(c.Verb, "price", fmt.Sprintf("%s must be positive", c.Price))
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
		switch {
		case c.Type == Limit && c.Price.IsZero():
			return &Error{Kind: KindMissingField, Verb: c.Verb, Field: "price", Msg: "a limit order needs a price (or use type market)"}
		case c.Type == Market && !c.Price.IsZero():
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: "price", Msg: "a market order takes no price (use type limit to set one)"}
		case c.Type == Market && c.TimeInForce == GTC:
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: "time_in_force", Msg: "a market order fills at once: use ioc or omit time_in_force"}
		}
	case CancelOrder, Modify:
		if (c.OrderID == "") == (c.ClientOrderID == "") {
			return &Error{Kind: KindConflict, Verb: c.Verb, Field: "order_id",
				Msg: "give exactly one of order_id or client_order_id"}
		}
		if c.Verb == Modify && c.Quantity.IsZero() && c.Price.IsZero() {
			return &Error{Kind: KindMissingField, Verb: c.Verb, Field: "quantity",
				Msg: "give quantity, price or both: a modify must change something"}
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
		case "quantity":
			if c.Quantity.Equal(confirming.Quantity) {
				continue
			}
		case "price":
			if c.Price.Equal(confirming.Price) {
				continue
			}
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
