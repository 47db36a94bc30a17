package gate

// This file is the tests' command type: the gate's users bind tokens to
// their own (the node's command), so it lives with the tests, which the
// external gate_test package reaches as gate.Fields.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// FieldKind says how a Field's value is compared.
type FieldKind uint8

// The kinds of Field.
const (
	// TextField values compare byte for byte: "BTC-USD" is not "btc-usd".
	TextField FieldKind = iota
	// DecimalField values compare by value, as github.com/shopspring/decimal
	// reads them (the node's money type): "1.0" equals "1", "+2" equals "2",
	// "1e2" equals "100". A value that does not parse as a decimal compares
	// as text.
	DecimalField
	// ClientIDField values compare byte for byte, except that a confirming
	// command that does not give one matches any: the preview minted the id
	// and the stored command carries it.
	ClientIDField
)

// Field is one named value of a command. An empty Value means the command does
// not give the field; it is the same as leaving the field out.
type Field struct {
	Name  string
	Value string
	Kind  FieldKind
}

// Text returns a TextField.
func Text(name, value string) Field { return Field{Name: name, Value: value, Kind: TextField} }

// Decimal returns a DecimalField.
func Decimal(name, value string) Field { return Field{Name: name, Value: value, Kind: DecimalField} }

// ClientID returns a ClientIDField.
func ClientID(name, value string) Field { return Field{Name: name, Value: value, Kind: ClientIDField} }

// Fields is the tests' reference command type: an ordered list of named
// fields, each name at most once. It implements Command[Fields]. Issue keeps
// the slice it is given: do not change its elements afterwards.
type Fields []Field

var _ Command[Fields] = Fields(nil)

// Lookup returns the field called name.
func (f Fields) Lookup(name string) (Field, bool) {
	for _, x := range f {
		if x.Name == name {
			return x, true
		}
	}
	return Field{}, false
}

// String renders the fields as name=value pairs in order, quoting a value
// that is empty or holds a space, a quote or an equals sign.
func (f Fields) String() string {
	var b strings.Builder
	for i, x := range f {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.Name)
		b.WriteByte('=')
		if x.Value == "" || strings.ContainsAny(x.Value, " \t\n\"=") {
			b.WriteString(strconv.Quote(x.Value))
		} else {
			b.WriteString(x.Value)
		}
	}
	return b.String()
}

// SameIntent reports nil when confirming asks for the same thing as f, the
// previewed command. Fields are matched by name, whatever their order, and
// compared by the kind the previewed command gives them (by confirming's kind
// for a field only confirming has). A field that one command gives and the
// other does not differs, except a ClientIDField that confirming omits.
//
// The error is Differences, naming every differing field with both values, or
// a plain error when either command names a field twice.
func (f Fields) SameIntent(confirming Fields) error {
	if err := f.unique("previewed"); err != nil {
		return err
	}
	if err := confirming.unique("confirming"); err != nil {
		return err
	}
	var diffs Differences
	for _, p := range f {
		c, _ := confirming.Lookup(p.Name)
		if !sameValue(p.Kind, p.Value, c.Value) {
			diffs = append(diffs, Difference{Field: p.Name, Previewed: p.Value, Confirming: c.Value})
		}
	}
	for _, c := range confirming {
		if _, ok := f.Lookup(c.Name); ok {
			continue
		}
		if !sameValue(c.Kind, "", c.Value) {
			diffs = append(diffs, Difference{Field: c.Name, Confirming: c.Value})
		}
	}
	if diffs != nil {
		return diffs
	}
	return nil
}

// unique refuses a command that names a field twice: which of the two would
// be compared is a guess, and the gate does not guess.
func (f Fields) unique(which string) error {
	for i := range f {
		for j := i + 1; j < len(f); j++ {
			if f[i].Name == f[j].Name {
				return fmt.Errorf("the %s command gives field %q twice; a command names each field once", which, f[i].Name)
			}
		}
	}
	return nil
}

// sameValue compares a previewed and a confirming value of one field.
func sameValue(kind FieldKind, previewed, confirming string) bool {
	switch kind {
	case ClientIDField:
		return confirming == "" || previewed == confirming
	case DecimalField:
		return sameDecimal(previewed, confirming)
	}
	return previewed == confirming
}

// sameDecimal compares two decimals by value, and as text when either does
// not parse. Plain decimals, the usual case, compare without allocating.
func sameDecimal(a, b string) bool {
	if a == b {
		return true
	}
	an, ai, af, aok := plainDecimal(a)
	bn, bi, bf, bok := plainDecimal(b)
	if aok && bok {
		return an == bn && ai == bi && af == bf
	}
	da, err := decimal.NewFromString(a)
	if err != nil {
		return false
	}
	db, err := decimal.NewFromString(b)
	return err == nil && da.Equal(db)
}

// plainDecimal splits s, of the form [+-]digits[.digits], into its sign, its
// integer digits without leading zeros and its fraction digits without
// trailing zeros; zero has no sign. ok is false for any other form.
func plainDecimal(s string) (neg bool, whole, frac string, ok bool) {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	if !digits(whole) || dot && !digits(frac) {
		return false, "", "", false
	}
	whole = strings.TrimLeft(whole, "0")
	frac = strings.TrimRight(frac, "0")
	if whole == "" && frac == "" {
		neg = false
	}
	return neg, whole, frac, true
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Difference is one field on which a confirming command differs from the
// previewed one. An empty value means that command does not give the field.
type Difference struct {
	Field      string
	Previewed  string
	Confirming string
}

// Differences is the error Fields.SameIntent returns: every differing field,
// in the previewed command's order, then fields only the confirming command
// gives.
type Differences []Difference

func (d Differences) Error() string {
	var b strings.Builder
	for i, x := range d {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: previewed %s, confirming %s", x.Field, value(x.Previewed), value(x.Confirming))
	}
	return b.String()
}

// value quotes a field value for an error text, cut short when long.
func value(s string) string {
	const max = 64
	switch {
	case s == "":
		return "(not given)"
	case len(s) > max:
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}
