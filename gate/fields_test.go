package gate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"pgregory.net/rapid"

	"wicket/gate"
)

func TestSameIntent(t *testing.T) {
	tests := []struct {
		name       string
		previewed  gate.Fields
		confirming gate.Fields
		want       gate.Differences // nil: same intent
	}{
		{"identical", order(), order(), nil},
		{"both empty", nil, gate.Fields{}, nil},
		{"order does not matter", gate.Fields{gate.Text("a", "1"), gate.Text("b", "2")},
			gate.Fields{gate.Text("b", "2"), gate.Text("a", "1")}, nil},

		{"decimal trailing zeros", f(gate.Decimal("q", "1.0")), f(gate.Decimal("q", "1")), nil},
		{"decimal leading zeros", f(gate.Decimal("q", "007.50")), f(gate.Decimal("q", "7.5")), nil},
		{"decimal plus sign", f(gate.Decimal("q", "+2")), f(gate.Decimal("q", "2.000")), nil},
		{"decimal negative zero", f(gate.Decimal("q", "-0.00")), f(gate.Decimal("q", "0")), nil},
		{"decimal zero forms", f(gate.Decimal("q", "000")), f(gate.Decimal("q", "0.0")), nil},
		{"decimal differs", f(gate.Decimal("q", "1.0")), f(gate.Decimal("q", "1.01")),
			gate.Differences{{"q", "1.0", "1.01"}}},
		{"decimal fraction digit differs", f(gate.Decimal("q", "1.5")), f(gate.Decimal("q", "1.6")),
			gate.Differences{{"q", "1.5", "1.6"}}},
		{"decimal sign differs", f(gate.Decimal("q", "-1")), f(gate.Decimal("q", "1")),
			gate.Differences{{"q", "-1", "1"}}},
		{"decimal scale differs", f(gate.Decimal("q", "10")), f(gate.Decimal("q", "1.0")),
			gate.Differences{{"q", "10", "1.0"}}},
		{"decimal exponent", f(gate.Decimal("q", "1.5e2")), f(gate.Decimal("q", "150")), nil},
		{"decimal negative exponent", f(gate.Decimal("q", "25E-2")), f(gate.Decimal("q", "0.250")), nil},
		{"decimal exponent differs", f(gate.Decimal("q", "1e1")), f(gate.Decimal("q", "1")),
			gate.Differences{{"q", "1e1", "1"}}},
		{"decimal out of range compares as text", f(gate.Decimal("q", "1e999999999")), f(gate.Decimal("q", "1")),
			gate.Differences{{"q", "1e999999999", "1"}}},
		{"decimal unparsable, same text", f(gate.Decimal("q", "abc")), f(gate.Decimal("q", "abc")), nil},
		{"decimal unparsable differs", f(gate.Decimal("q", "1..0")), f(gate.Decimal("q", "1")),
			gate.Differences{{"q", "1..0", "1"}}},
		{"decimal with a space", f(gate.Decimal("q", " 1")), f(gate.Decimal("q", "1")),
			gate.Differences{{"q", " 1", "1"}}},
		{"text is exact", f(gate.Text("side", "buy")), f(gate.Text("side", "Buy")),
			gate.Differences{{"side", "buy", "Buy"}}},
		{"text does not compare as decimal", f(gate.Text("n", "1.0")), f(gate.Text("n", "1")),
			gate.Differences{{"n", "1.0", "1"}}},

		{"client id omitted", f(gate.ClientID("cid", "c-1")), nil, nil},
		{"client id empty", f(gate.ClientID("cid", "c-1")), f(gate.ClientID("cid", "")), nil},
		{"client id same", f(gate.ClientID("cid", "c-1")), f(gate.ClientID("cid", "c-1")), nil},
		{"client id differs", f(gate.ClientID("cid", "c-1")), f(gate.ClientID("cid", "c-2")),
			gate.Differences{{"cid", "c-1", "c-2"}}},
		{"client id only in confirming", nil, f(gate.ClientID("cid", "c-2")),
			gate.Differences{{"cid", "", "c-2"}}},
		{"text field omitted is a difference", f(gate.Text("price", "5")), nil,
			gate.Differences{{"price", "5", ""}}},
		{"empty text equals absent", f(gate.Text("price", "")), nil, nil},
		{"extra confirming field", nil, f(gate.Decimal("price", "5")),
			gate.Differences{{"price", "", "5"}}},
		{"every difference, previewed order first", order(),
			with(with(with(order(), "reduce_only", "true"), "side", "sell"), "quantity", "2"),
			gate.Differences{{"side", "buy", "sell"}, {"quantity", "0.50", "2"}, {"reduce_only", "", "true"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.previewed.SameIntent(tt.confirming)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("SameIntent: %v, want nil", err)
				}
				return
			}
			var got gate.Differences
			if !errors.As(err, &got) {
				t.Fatalf("SameIntent: %v, want Differences", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}

func f(fields ...gate.Field) gate.Fields { return fields }

// TestDecimalFieldsCompareAsShopspring checks DecimalField against
// shopspring/decimal on random short strings: two values are the same intent
// exactly when they are the same text or both parse to equal decimals.
func TestDecimalFieldsCompareAsShopspring(t *testing.T) {
	plain := rapid.StringMatching(`[+-]?0{0,2}[0-9]{0,3}(\.[0-9]{0,3}0{0,2})?`)
	exponent := rapid.StringMatching(`[+-]?[0-9]{0,3}(\.[0-9]{0,3})?[eE][+-]?[0-9]{1,2}`)
	num := rapid.OneOf(plain, plain, exponent)
	rapid.Check(t, func(t *rapid.T) {
		a := num.Draw(t, "a")
		// b is unrelated, a common value, or a with one character changed
		// (usually a digit for a digit, which keeps it a plain decimal).
		edit := rapid.Custom(func(t *rapid.T) string {
			c := rapid.SampledFrom([]byte("01234567890123456789.-+e")).Draw(t, "to")
			if a == "" {
				return string(c)
			}
			i := rapid.IntRange(0, len(a)-1).Draw(t, "at")
			return a[:i] + string(c) + a[i+1:]
		})
		b := rapid.OneOf(num, edit, edit, rapid.SampledFrom([]string{a, "0", "-0", "1", "1.0", "+1", "10"})).Draw(t, "b")
		da, erra := decimal.NewFromString(a)
		db, errb := decimal.NewFromString(b)
		want := a == b || erra == nil && errb == nil && da.Equal(db)
		got := f(gate.Decimal("q", a)).SameIntent(f(gate.Decimal("q", b))) == nil
		if got != want {
			t.Fatalf("Decimal %q vs %q: same intent = %v, shopspring says %v", a, b, got, want)
		}
	})
}

func TestSameIntentRefusesRepeatedNames(t *testing.T) {
	twice := gate.Fields{gate.Decimal("q", "1"), gate.Decimal("q", "2")}
	for _, tt := range []struct{ previewed, confirming gate.Fields }{
		{twice, gate.Fields{gate.Decimal("q", "1")}},
		{gate.Fields{gate.Decimal("q", "1")}, twice},
	} {
		err := tt.previewed.SameIntent(tt.confirming)
		if err == nil || !strings.Contains(err.Error(), `field "q" twice`) {
			t.Errorf("SameIntent with a repeated name: %v, want a refusal naming it", err)
		}
	}
}

func TestDifferencesText(t *testing.T) {
	long := strings.Repeat("9", 100)
	tests := []struct {
		d    gate.Differences
		want string
	}{
		{gate.Differences{{"quantity", "1", "2"}}, `quantity: previewed "1", confirming "2"`},
		{gate.Differences{{"price", "5", ""}, {"tif", "", "ioc"}},
			`price: previewed "5", confirming (not given); tif: previewed (not given), confirming "ioc"`},
		{gate.Differences{{"q", long, "1"}}, `q: previewed "` + long[:64] + `"..., confirming "1"`},
		{gate.Differences{{"sym", "a\"b\n", "x"}}, `sym: previewed "a\"b\n", confirming "x"`},
	}
	for _, tt := range tests {
		if got := tt.d.Error(); got != tt.want {
			t.Errorf("Error() = %s\nwant      %s", got, tt.want)
		}
	}
}

func TestFieldsLookupAndString(t *testing.T) {
	cmd := gate.Fields{gate.Text("symbol", "BTC-USD"), gate.Decimal("quantity", "0.5"), gate.Text("note", "two words"), gate.ClientID("cid", "")}
	if got, want := cmd.String(), `symbol=BTC-USD quantity=0.5 note="two words" cid=""`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
	if x, ok := cmd.Lookup("quantity"); !ok || x != gate.Decimal("quantity", "0.5") {
		t.Errorf("Lookup(quantity) = %v, %v", x, ok)
	}
	if _, ok := cmd.Lookup("price"); ok {
		t.Error("Lookup found a field that is not there")
	}
}
