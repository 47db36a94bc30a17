package ta

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Category groups catalog entries the way a trader browses them.
type Category string

// The categories. Pattern holds TA-Lib's candlestick patterns, Math its
// math transforms and operators; Helper holds the series utilities
// (crosses, shifts, rolling extremes) that are not TA-Lib functions.
const (
	Overlap        Category = "overlap"
	Momentum       Category = "momentum"
	Volatility     Category = "volatility"
	Volume         Category = "volume"
	Trend          Category = "trend"
	Statistic      Category = "statistic"
	PriceTransform Category = "price transform"
	Cycle          Category = "cycle"
	Pattern        Category = "pattern"
	Math           Category = "math"
	Helper         Category = "helper"
)

// Categories lists every category in display order.
var Categories = []Category{Overlap, Momentum, Trend, Volatility, Volume, Statistic, PriceTransform, Cycle, Pattern, Math, Helper}

// ParamType is the type of an indicator parameter.
type ParamType string

// Parameter types. A MAType parameter is an integer 0..8 that may also be
// given by name (see MATypes).
const (
	Int    ParamType = "int"
	Float  ParamType = "float"
	MAType ParamType = "matype"
)

// MATypes names the moving-average kinds a matype parameter selects, by
// value: 0 is "sma", 1 "ema" and so on, as in TA-Lib.
var MATypes = []string{"sma", "ema", "wma", "dema", "tema", "trima", "kama", "mama", "t3"}

// Param describes one parameter of an indicator.
type Param struct {
	Name    string    `json:"name"`
	Type    ParamType `json:"type"`
	Default float64   `json:"default"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Choices []string  `json:"choices,omitempty"` // for matype: the names of 0..8
	Doc     string    `json:"doc"`
	// TALib is the TA-Lib (Python) keyword for the same parameter, accepted
	// as an alias, e.g. "timeperiod" for "period".
	TALib string `json:"talib,omitempty"`
}

// Entry is one catalog function.
type Entry struct {
	Name     string   `json:"name"`
	Category Category `json:"category"`
	Summary  string   `json:"summary"`
	// Inputs names the series the function reads, in call order:
	// "series" (any series), "a"/"b" (two series, b may be a number for the
	// helpers), or bar columns "open", "high", "low", "close", "volume". A
	// call may pass a bars (or ctx) value instead of bar columns.
	Inputs  []string `json:"inputs"`
	Params  []Param  `json:"params"`
	Outputs []string `json:"outputs"` // a single output is returned as a series; several as a struct of series
	// Warmup is the number of leading bars without a value at the default
	// parameters; WarmupRule gives it as a formula of the parameters.
	Warmup     int    `json:"warmup"`
	WarmupRule string `json:"warmup_rule"`
	Bool       bool   `json:"bool,omitempty"`  // outputs are true/false series
	TALib      string `json:"talib,omitempty"` // the TA-Lib function it reproduces

	lookback func(p []float64) int
	compute  func(in [][]float64, p []float64) [][]float64
	// check, when set, validates a combination of parameters the bounds
	// alone allow (e.g. mavp's min_period above its max_period).
	check func(p []float64) error
	// raw entries see their inputs with missing values left in and fill
	// every output position themselves (nz, shift, barssince).
	raw bool
	// aligned entries compute on their inputs with the leading missing
	// values left in and give, from the first position after the warm-up
	// on, the values they would give on the stripped inputs (each output
	// reads only the last lookback+1 inputs); Compute then marks their
	// warm-up in place instead of copying the output (cross_above/below).
	aligned bool
	// index marks outputs that are bar positions in the input; they are
	// shifted by the number of stripped leading missing values.
	index []bool
}

// Lookback is the number of leading bars without a value for parameters p
// (one value per Params, in order).
func (e *Entry) Lookback(p []float64) int { return e.lookback(p) }

// Defaults returns the default value of every parameter, in order.
func (e *Entry) Defaults() []float64 {
	p := make([]float64, len(e.Params))
	for i, q := range e.Params {
		p[i] = q.Default
	}
	return p
}

// Param returns the index of the parameter named name or with that TA-Lib
// alias, or -1.
func (e *Entry) Param(name string) int {
	for i, q := range e.Params {
		if q.Name == name || (q.TALib != "" && q.TALib == name) {
			return i
		}
	}
	return -1
}

// CheckParams validates p against the entry's bounds and types; the error
// names the parameter and its allowed range.
func (e *Entry) CheckParams(p []float64) error {
	if len(p) != len(e.Params) {
		return &Error{Func: e.Name, Msg: fmt.Sprintf("takes %d parameters, got %d", len(e.Params), len(p))}
	}
	for i, q := range e.Params {
		v := p[i]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &Error{Func: e.Name, Msg: fmt.Sprintf("%s must be a finite number, got %v", q.Name, v)}
		}
		if q.Type != Float && v != math.Trunc(v) {
			return &Error{Func: e.Name, Msg: fmt.Sprintf("%s must be a whole number, got %v", q.Name, v)}
		}
		if v < q.Min || v > q.Max {
			return &Error{Func: e.Name, Msg: fmt.Sprintf("%s = %v is out of range [%v, %v]", q.Name, v, q.Min, q.Max)}
		}
	}
	if e.check != nil {
		if err := e.check(p); err != nil {
			return &Error{Func: e.Name, Msg: err.Error()}
		}
	}
	return nil
}

// Signature renders the call shape with defaults, e.g.
// "ta.bbands(series, period=5, dev_up=2, dev_dn=2, matype=\"sma\")".
func (e *Entry) Signature() string {
	parts := append([]string(nil), e.Inputs...)
	for _, q := range e.Params {
		d := strconv.FormatFloat(q.Default, 'g', -1, 64)
		if q.Type == MAType {
			d = strconv.Quote(MATypes[int(q.Default)])
		}
		parts = append(parts, q.Name+"="+d)
	}
	return "ta." + e.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Error is an indicator call that cannot be computed: bad parameters,
// inputs of different lengths, or a failure inside a function.
type Error struct {
	Func string
	Msg  string
}

func (e *Error) Error() string { return "ta." + e.Func + ": " + e.Msg }

// Catalog holds the entries, looked up by name.
type Catalog struct {
	entries []*Entry
	byName  map[string]*Entry
}

// Builtin returns the catalog of built-in functions. Entries are shared and
// must not be modified.
func Builtin() *Catalog { return builtin }

var builtin = newCatalog(entries())

func newCatalog(es []*Entry) *Catalog {
	c := &Catalog{byName: make(map[string]*Entry, len(es))}
	for _, e := range es {
		if _, dup := c.byName[e.Name]; dup {
			panic("ta: duplicate entry " + e.Name)
		}
		if e.index == nil {
			e.index = make([]bool, len(e.Outputs))
		}
		e.Warmup = e.lookback(e.Defaults())
		c.byName[e.Name] = e
		c.entries = append(c.entries, e)
	}
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].Name < c.entries[j].Name })
	return c
}

// Lookup returns the entry named name, in the catalog's lower case or
// TA-Lib's upper case (SMA, BBANDS).
func (c *Catalog) Lookup(name string) (*Entry, bool) {
	e, ok := c.byName[strings.ToLower(name)]
	return e, ok
}

// Entries returns every entry sorted by name.
func (c *Catalog) Entries() []*Entry { return append([]*Entry(nil), c.entries...) }

// Filter returns the entries in category (all when empty) whose name
// contains name (all when empty), sorted by name. An unknown category is an
// error naming the valid ones.
func (c *Catalog) Filter(category, name string) ([]*Entry, error) {
	if category != "" && !validCategory(Category(category)) {
		names := make([]string, len(Categories))
		for i, k := range Categories {
			names[i] = string(k)
		}
		return nil, fmt.Errorf("unknown indicator category %q; valid: %s", category, strings.Join(names, ", "))
	}
	var out []*Entry
	for _, e := range c.entries {
		if category != "" && string(e.Category) != category {
			continue
		}
		if name != "" && !strings.Contains(e.Name, strings.ToLower(name)) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

func validCategory(k Category) bool {
	for _, c := range Categories {
		if c == k {
			return true
		}
	}
	return false
}
