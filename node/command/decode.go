package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// arg is one argument as received: a JSON value or a text field.
type arg struct {
	name string
	null bool   // JSON null
	str  bool   // a JSON string or a text field
	num  bool   // a JSON number (text holds its exact digits)
	text string // the string's content or the number's text
	raw  json.RawMessage
}

// DecodeWith builds a command from JSON arguments: an object holding the
// verb's fields. It is strict: an unknown field is an error naming the valid
// ones; a wrong type, a missing required field, a non-positive quantity or
// price, an unknown enum value or a broken cross-field rule is an error
// naming the field. Decimals are accepted as JSON strings ("0.5") or JSON
// numbers, read by their exact text and never through float64. A null or
// empty-string value counts as absent. Decoding never mints: call Resolve
// for that.
//
// The arguments may also carry keys the caller owns, named in extra (the
// agent's reason, confirm and preview_token): those are returned, raw,
// instead of being refused, and the unknown-field error lists them among
// the valid names.
func DecodeWith(verb string, raw json.RawMessage, extra ...string) (Command, map[string]json.RawMessage, error) {
	args, err := parseObject(Verb(verb), raw)
	if err != nil {
		return Command{}, nil, err
	}
	return fromArgs(Verb(verb), args, extra)
}

// Build makes a command from text fields (a REPL's parsed words): the same
// rules as DecodeWith, with every value given as text. An empty value counts as
// absent.
func Build(verb string, fields map[string]string) (Command, error) {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	args := make([]arg, len(names))
	for i, k := range names {
		args[i] = arg{name: k, str: true, text: fields[k]}
	}
	c, _, err := fromArgs(Verb(verb), args, nil)
	return c, err
}

// maxArgsBytes bounds the JSON a command may be decoded from.
const maxArgsBytes = 64 << 10

// parseObject reads a JSON object into its members in order, keeping
// numbers' exact text and refusing duplicate keys and trailing data.
func parseObject(verb Verb, raw json.RawMessage) ([]arg, error) {
	if len(raw) > maxArgsBytes {
		return nil, &Error{Kind: KindMalformed, Verb: verb, Msg: fmt.Sprintf("arguments are %d bytes; the limit is %d", len(raw), maxArgsBytes)}
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil
	}
	malformed := func(why string) error {
		return &Error{Kind: KindMalformed, Verb: verb, Msg: "arguments must be one JSON object: " + why}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, malformed(err.Error())
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, malformed(fmt.Sprintf("got %s", jsonKind(trimmed)))
	}
	var args []arg
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err.Error())
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, &Error{Kind: KindMalformed, Verb: verb, Field: key, Msg: "appears twice; give each field once"}
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, malformed(err.Error())
		}
		a := arg{name: key, raw: v}
		switch {
		case string(v) == "null":
			a.null = true
		case v[0] == '"':
			if err := json.Unmarshal(v, &a.text); err != nil {
				return nil, malformed(err.Error())
			}
			a.str = true
		case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'):
			a.num, a.text = true, string(v)
		}
		args = append(args, a)
	}
	if _, err := dec.Token(); err != nil {
		return nil, malformed(err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, malformed("trailing data after the object")
	}
	return args, nil
}

func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// fromArgs is the single construction site: every decoded or built command
// passes here.
func fromArgs(verb Verb, args []arg, extra []string) (Command, map[string]json.RawMessage, error) {
	sp := spec(verb)
	if sp == nil {
		return Command{}, nil, unknownVerb(string(verb))
	}
	c := Command{Verb: verb}
	var extras map[string]json.RawMessage
	for _, a := range args {
		if slices.Contains(extra, a.name) {
			if extras == nil {
				extras = map[string]json.RawMessage{}
			}
			extras[a.name] = a.raw
			continue
		}
		f, ok := sp.Field(a.name)
		if !ok {
			valid := append(sp.FieldNames(), extra...)
			return Command{}, nil, &Error{Kind: KindUnknownField, Verb: verb, Field: a.name,
				Msg: fmt.Sprintf("unknown field %s; valid fields: %s", quote(a.name), strings.Join(valid, ", "))}
		}
		if err := c.set(f, a); err != nil {
			return Command{}, nil, err
		}
	}
	if verb == SubmitOrder && c.TimeInForce == "" {
		c.TimeInForce = c.TIF()
	}
	if err := c.Validate(); err != nil {
		return Command{}, nil, err
	}
	return c, extras, nil
}

// set assigns one argument to its field, checking its type and value.
func (c *Command) set(f Field, a arg) error {
	if a.null || (a.str && a.text == "") {
		return nil // absent
	}
	if f.Kind == Decimal {
		if !a.str && !a.num {
			return invalid(c.Verb, f.Name, "must be a decimal string such as \"0.5\" (got "+jsonKind(a.raw)+")")
		}
		d, err := parseDecimal(a.text)
		if err != nil {
			return invalid(c.Verb, f.Name, err.Error())
		}
		if !d.IsPositive() {
			return invalid(c.Verb, f.Name, fmt.Sprintf("%s must be positive", quote(a.text)))
		}
		if p := c.decimalField(f.Name); p != nil {
			*p = d
		}
		return nil
	}
	if !a.str {
		return invalid(c.Verb, f.Name, "must be a string (got "+jsonKind(a.raw)+")")
	}
	v := a.text
	if err := checkValue(c.Verb, f, v); err != nil {
		return err
	}
	switch f.Name {
	case "venue":
		c.Venue = v
	case "symbol":
		c.Symbol = v
	case "side":
		c.Side = Side(v)
	case "type":
		c.Type = OrderType(v)
	case "time_in_force":
		c.TimeInForce = TimeInForce(v)
	case "order_id":
		c.OrderID = v
	case "client_order_id":
		c.ClientOrderID = v
	case "state":
		c.State = TradingState(v)
	}
	return nil
}

// decimalText is the only decimal notation accepted: optional minus, digits,
// optional fraction. No exponent, no sign on the right, no grouping.
var decimalText = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// maxDecimalLen bounds a decimal's text, so no input can make arithmetic
// or printing expensive.
const maxDecimalLen = 40

// parseDecimal reads a decimal in plain notation ("0.5", "41000", "-2.25")
// exactly, never through float64. Exponents, grouping and text longer than
// 40 characters are refused.
func parseDecimal(s string) (decimal.Decimal, error) {
	if len(s) > maxDecimalLen {
		return decimal.Decimal{}, fmt.Errorf("%s is longer than %d characters", quote(s), maxDecimalLen)
	}
	if !decimalText.MatchString(s) {
		return decimal.Decimal{}, fmt.Errorf("%s is not a plain decimal: write digits with an optional fraction, such as \"0.5\" or \"41000\"", quote(s))
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%s is not a decimal", quote(s))
	}
	return d, nil
}

// MarshalJSON writes the command as one JSON object: "verb" first, then
// the set fields in the verb's display order, decimals as strings. The
// same command always gives the same bytes.
func (c Command) MarshalJSON() ([]byte, error) {
	sp := spec(c.Verb)
	if sp == nil {
		return nil, unknownVerb(string(c.Verb))
	}
	var b bytes.Buffer
	b.WriteString(`{"verb":`)
	writeString(&b, string(c.Verb))
	for _, f := range sp.Fields {
		v, ok := c.value(f.Name)
		if !ok {
			continue
		}
		b.WriteByte(',')
		writeString(&b, f.Name)
		b.WriteByte(':')
		writeString(&b, v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string always marshals
	b.Write(q)
}

// UnmarshalJSON reads the wire form written by MarshalJSON with the same
// strictness as DecodeWith.
func (c *Command) UnmarshalJSON(data []byte) error {
	args, err := parseObject("", data)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(args, func(a arg) bool { return a.name == "verb" })
	if i < 0 {
		return &Error{Kind: KindMissingField, Field: "verb", Msg: "is required: one of " + verbList()}
	}
	v := args[i]
	if !v.str {
		return &Error{Kind: KindInvalidValue, Field: "verb", Msg: "must be a string: one of " + verbList()}
	}
	got, _, err := fromArgs(Verb(v.text), slices.Delete(args, i, i+1), nil)
	if err != nil {
		return err
	}
	*c = got
	return nil
}

func verbList() string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = string(s.Verb)
	}
	return strings.Join(names, ", ")
}
