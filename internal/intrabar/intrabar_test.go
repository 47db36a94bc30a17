package intrabar

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// fillCase is one block of testdata/fills.txt.
type fillCase struct {
	name   string
	line   int
	rule   Rule
	orders []Order[decimal.Decimal]
	bars   []Bar[decimal.Decimal]
	fills  []string // "BAR ORDER PRICE LEG [gap] [taker]", normalised
	stops  map[[2]int]decimal.Decimal
}

func readCases(t *testing.T) []*fillCase {
	t.Helper()
	f, err := os.Open("testdata/fills.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []*fillCase
	var c *fillCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		if word != "case" && c == nil {
			t.Fatalf("fills.txt:%d: %q before the first case", n, word)
		}
		fail := func(err error) { t.Fatalf("fills.txt:%d: %v", n, err) }
		switch word {
		case "case":
			c = &fillCase{name: rest, line: n, stops: map[[2]int]decimal.Decimal{}}
			cases = append(cases, c)
		case "rule":
			if c.rule, err = ParseRule(rest); err != nil {
				fail(err)
			}
		case "order":
			o, err := parseOrder(rest)
			if err != nil {
				fail(err)
			}
			c.orders = append(c.orders, o)
		case "bar":
			p, err := decimals(rest, 4)
			if err != nil {
				fail(err)
			}
			c.bars = append(c.bars, Bar[decimal.Decimal]{p[0], p[1], p[2], p[3]})
		case "fill":
			f := strings.Fields(rest)
			if len(f) < 4 {
				fail(fmt.Errorf("fill needs BAR ORDER PRICE LEG"))
			}
			c.fills = append(c.fills, strings.Join(f, " "))
		case "stop":
			f := strings.Fields(rest)
			bar, err1 := strconv.Atoi(f[0])
			ord, err2 := strconv.Atoi(f[1])
			p, err3 := decimal.NewFromString(f[2])
			if err1 != nil || err2 != nil || err3 != nil {
				fail(fmt.Errorf("stop needs BAR ORDER PRICE"))
			}
			c.stops[[2]int{bar, ord}] = p
		default:
			fail(fmt.Errorf("unknown word %q", word))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func decimals(s string, n int) ([]decimal.Decimal, error) {
	f := strings.Fields(s)
	if len(f) != n {
		return nil, fmt.Errorf("want %d prices, got %q", n, s)
	}
	out := make([]decimal.Decimal, n)
	for i, v := range f {
		d, err := decimal.NewFromString(v)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

func parseOrder(s string) (Order[decimal.Decimal], error) {
	var o Order[decimal.Decimal]
	f := strings.Fields(s)
	if len(f) < 2 {
		return o, fmt.Errorf("order needs SIDE KIND")
	}
	switch f[0] {
	case "buy":
		o.Side = Buy
	case "sell":
		o.Side = Sell
	default:
		return o, fmt.Errorf("side %q", f[0])
	}
	for _, k := range []Kind{Limit, Stop, StopLimit, TrailingStop} {
		if k.String() == f[1] {
			o.Kind = k
		}
	}
	for _, kv := range f[2:] {
		k, v, _ := strings.Cut(kv, "=")
		if k == "group" || k == "parent" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return o, err
			}
			if k == "group" {
				o.Group = n
			} else {
				o.Parent = n + 1
			}
			continue
		}
		d, err := decimal.NewFromString(v)
		if err != nil {
			return o, fmt.Errorf("%s: %w", k, err)
		}
		switch k {
		case "limit":
			o.Limit = d
		case "stop":
			o.Stop = d
		case "trail":
			o.Trail = d
		case "trail_pct":
			o.Trail, o.TrailFraction = d, true
		case "anchor":
			o.anchor(d)
		default:
			return o, fmt.Errorf("unknown field %q", k)
		}
	}
	return o, o.Validate()
}

func describe[P Number[P]](bar int, f Fill[P], price string) string {
	s := fmt.Sprintf("%d %d %s %d", bar, f.Order, price, f.Leg)
	if f.Gap {
		s += " gap"
	}
	if f.Taker {
		s += " taker"
	}
	return s
}

// TestFills runs every hand-computed case of testdata/fills.txt in
// decimals, exactly.
func TestFills(t *testing.T) {
	cases := readCases(t)
	if len(cases) < 20 {
		t.Fatalf("read %d cases from testdata/fills.txt", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orders := append([]Order[decimal.Decimal](nil), c.orders...)
			var got []string
			for b, bar := range c.bars {
				for _, f := range Step(bar, c.rule, orders, nil) {
					got = append(got, describe(b+1, f, f.Price.String()))
				}
				for i := range orders {
					if want, ok := c.stops[[2]int{b + 1, i}]; ok && !orders[i].Stop.Equal(want) {
						t.Errorf("fills.txt:%d: after bar %d order %d's stop is %s, want %s", c.line, b+1, i, orders[i].Stop, want)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.fills, "\n") {
				t.Errorf("fills.txt:%d: fills\n%s\nwant\n%s", c.line, strings.Join(got, "\n"), strings.Join(c.fills, "\n"))
			}
		})
	}
}

// TestFloatAgrees runs the same cases in Float, research's type: the same
// orders fill on the same legs at the same prices, to float precision.
func TestFloatAgrees(t *testing.T) {
	toF := func(d decimal.Decimal) Float { v, _ := d.Float64(); return Float(v) }
	for _, c := range readCases(t) {
		dec := append([]Order[decimal.Decimal](nil), c.orders...)
		flt := make([]Order[Float], len(c.orders))
		for i, o := range c.orders {
			flt[i] = Order[Float]{Kind: o.Kind, Side: o.Side, Limit: toF(o.Limit), Stop: toF(o.Stop),
				Trail: toF(o.Trail), TrailFraction: o.TrailFraction, Best: toF(o.Best), Anchored: o.Anchored,
				Group: o.Group, Parent: o.Parent}
		}
		for b, bar := range c.bars {
			df := Step(bar, c.rule, dec, nil)
			ff := Step(Bar[Float]{toF(bar.Open), toF(bar.High), toF(bar.Low), toF(bar.Close)}, c.rule, flt, nil)
			if len(df) != len(ff) {
				t.Fatalf("%s, bar %d: %d fills in decimals, %d in floats", c.name, b+1, len(df), len(ff))
			}
			for i := range df {
				want, _ := df[i].Price.Float64()
				if df[i].Order != ff[i].Order || df[i].Leg != ff[i].Leg || math.Abs(float64(ff[i].Price)-want) > 1e-9*want {
					t.Errorf("%s, bar %d: float fill %+v, decimal %+v", c.name, b+1, ff[i], df[i])
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	d := decimal.RequireFromString
	for _, c := range []struct {
		o    Order[decimal.Decimal]
		want string
	}{
		{Order[decimal.Decimal]{Kind: Limit, Side: Buy}, "a limit order needs a positive limit_price"},
		{Order[decimal.Decimal]{Kind: StopLimit, Side: Sell, Stop: d("95")}, "a stop_limit order needs a positive limit_price"},
		{Order[decimal.Decimal]{Kind: TrailingStop, Side: Sell, Trail: d("1"), TrailFraction: true}, "a sell trailing stop's trail_percent must be below 100"},
		{Order[decimal.Decimal]{Kind: Stop, Stop: d("1")}, "side must be buy or sell"},
		{Order[decimal.Decimal]{Kind: TrailingStop, Side: Sell, Trail: d("0.99"), TrailFraction: true}, ""},
	} {
		err := c.o.Validate()
		if got := fmt.Sprint(err); (err == nil) != (c.want == "") || (err != nil && got != c.want) {
			t.Errorf("%+v: Validate() = %v, want %q", c.o, err, c.want)
		}
	}
}

func TestParseRule(t *testing.T) {
	for s, want := range map[string]Rule{"": Path, "path": Path, "pessimistic": Pessimistic} {
		if r, err := ParseRule(s); err != nil || r != want {
			t.Errorf("ParseRule(%q) = %v, %v", s, r, err)
		}
	}
	if _, err := ParseRule("optimistic"); err == nil || !strings.Contains(err.Error(), "path (the default) or pessimistic") {
		t.Errorf("ParseRule(optimistic) = %v", err)
	}
}
