package ta

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The TA-Lib C reference (testdata/talib, see its README for provenance):
// every TA-Lib function on three series at its defaults and at other
// parameter sets, bounds included, plus TA-Lib's parameter bounds.
const refDir = "../../testdata/talib/"

var refSeries = []string{"flat", "tiny", "huge", "long", "patterns"}

type refCall struct {
	Fn      string                `json:"fn"`
	Params  map[string]float64    `json:"params"`
	Inputs  []string              `json:"inputs"`
	Beg     int                   `json:"beg"`
	Nb      int                   `json:"nb"`
	Outputs map[string][]*float64 `json:"outputs"`
}

type refFixture struct {
	Series  string               `json:"series"`
	N       int                  `json:"n"`
	Columns map[string][]float64 `json:"columns"`
	Sample  []int                `json:"sample"`
	Calls   []refCall            `json:"calls"`
}

type refBound struct {
	Type    string  `json:"type"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Default float64 `json:"default"`
}

var (
	fixtureMu    sync.Mutex
	fixtureCache = map[string]*refFixture{}
)

func loadFixture(t testing.TB, name string) *refFixture {
	t.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if f, ok := fixtureCache[name]; ok {
		return f
	}
	var f refFixture
	readGzipJSON(t, refDir+name+".json.gz", &f)
	fixtureCache[name] = &f
	return &f
}

// readGzipJSON decodes the gzip JSON file at path into v.
func readGzipJSON(t testing.TB, path string, v any) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	zr, err := gzip.NewReader(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func loadBounds(t testing.TB) map[string]map[string]refBound {
	t.Helper()
	b, err := os.ReadFile(refDir + "bounds.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]refBound
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

type columns map[string][]float64

// inputsFor maps an entry's inputs onto bars: a single series is the
// close, two series are high and low, mavp's periods cycle through 2..30
// unless the bars carry them.
func inputsFor(e *Entry, bars columns) [][]float64 {
	in := make([][]float64, len(e.Inputs))
	for i, name := range e.Inputs {
		switch name {
		case "series", "condition":
			in[i] = bars["close"]
		case "a":
			in[i] = bars["high"]
		case "b":
			in[i] = bars["low"]
		case "periods":
			in[i] = bars["periods"]
			if in[i] == nil {
				p := make([]float64, len(bars["close"]))
				for j := range p {
					p[j] = float64(2 + j%29)
				}
				in[i] = p
			}
		default:
			in[i] = bars[name]
		}
	}
	return in
}

// talibEntries maps TA-Lib function names to catalog entries.
func talibEntries() map[string]*Entry {
	m := map[string]*Entry{}
	for _, e := range Builtin().Entries() {
		if e.TALib != "" {
			m[e.TALib] = e
		}
	}
	return m
}

// refOutput names the TA-Lib output for each of our multi-output names.
var refOutput = map[string]string{
	"upper": "outRealUpperBand", "middle": "outRealMiddleBand", "lower": "outRealLowerBand",
	"macd": "outMACD", "signal": "outMACDSignal", "hist": "outMACDHist",
	"mama": "outMAMA", "fama": "outFAMA",
	"down": "outAroonDown", "up": "outAroonUp",
	"inphase": "outInPhase", "quadrature": "outQuadrature",
	"sine": "outSine", "leadsine": "outLeadSine",
	"min": "outMin", "max": "outMax", "minidx": "outMinIdx", "maxidx": "outMaxIdx",
}

func refOutputName(e *Entry, ours string, outputs map[string][]*float64) string {
	if len(e.Outputs) == 1 {
		for k := range outputs {
			return k
		}
	}
	switch e.Name {
	case "stoch":
		return map[string]string{"k": "outSlowK", "d": "outSlowD"}[ours]
	case "stochf", "stochrsi":
		return map[string]string{"k": "outFastK", "d": "outFastD"}[ours]
	}
	return refOutput[ours]
}

// paramAlias is our name for a TA-Lib optional input: optInFastK_Period
// is fastk_period, which an entry accepts as its TA-Lib alias.
func paramAlias(optIn string) string { return strings.ToLower(strings.TrimPrefix(optIn, "optIn")) }

// refParams orders a call's TA-Lib parameters as the entry's.
func refParams(e *Entry, params map[string]float64) ([]float64, error) {
	p := e.Defaults()
	for name, v := range params {
		i := e.Param(paramAlias(name))
		if i < 0 {
			return nil, fmt.Errorf("TA-Lib parameter %s has no counterpart", name)
		}
		p[i] = v
	}
	if len(params) != len(p) {
		return nil, fmt.Errorf("%d parameters, TA-Lib has %d", len(p), len(params))
	}
	return p, nil
}

// closeTo is the reference comparison: exact for TA-Lib's integer outputs
// (patterns, bar positions, trend mode), else 1e-9 relative, with an
// absolute floor of 1e-12 times the output's largest magnitude (running
// sums that return to zero round differently).
func closeTo(got, want, scale float64, exact bool) bool {
	if exact {
		return got == want
	}
	d := math.Abs(got - want)
	return d <= 1e-9*math.Abs(want) || d <= 1e-12*scale
}

// TestTALibReference holds every TA-Lib function of the catalog to the C
// library's output on every fixture call: missing exactly where TA-Lib
// gives no value, the first value at TA-Lib's begIdx (the warm-up), equal
// after that (see closeTo).
func TestTALibReference(t *testing.T) {
	byName := talibEntries()
	held := map[string]int{}
	fired := map[string]int{} // bars where a pattern is non-zero in the reference
	calls, notHeld, off, refused := 0, 0, 0, 0
	for _, sname := range refSeries {
		fx := loadFixture(t, sname)
		bars := columns(fx.Columns)
		for _, c := range fx.Calls {
			e, ok := byName[c.Fn]
			if !ok {
				continue
			}
			label := fmt.Sprintf("%s/%s%s", sname, c.Fn, fmtParams(c.Params))
			if c.Fn == "MAVP" && c.Params["optInMinPeriod"] > c.Params["optInMaxPeriod"] {
				// TA-Lib writes values of later bars there (its MA starts at
				// the longer period's lookback but is copied as if it started
				// at max_period's); we refuse the combination.
				p, _ := refParams(e, c.Params)
				if err := e.CheckParams(p); err == nil {
					t.Errorf("%s: accepted; min_period above max_period must be refused", label)
				}
				refused++
				continue
			}
			if err := checkCall(e, c, fx, bars); err != nil {
				if why, ok := stillOff[label]; ok {
					t.Logf("%s: still off (%s): %v", label, why, err)
					off++
					continue
				}
				t.Errorf("%s: %v", label, err)
				continue
			}
			if only, _ := readsOutside(c); only == "-" {
				notHeld++
				continue
			}
			held[c.Fn]++
			calls++
			if e.Category == Pattern {
				for _, v := range c.Outputs["outInteger"] {
					if v != nil && *v != 0 {
						fired[c.Fn]++
					}
				}
			}
		}
	}
	t.Logf("%d functions held to TA-Lib C over %d calls (function x parameter set x series); %d calls where TA-Lib reads outside its input not held; %d still off; %d refused", len(held), calls, notHeld, off, refused)
	for _, e := range Builtin().Entries() {
		if e.Category == Pattern && fired[e.TALib] == 0 {
			t.Errorf("%s never fires in the reference: the fixtures do not test it", e.TALib)
		}
	}
	var missing []string
	for name := range talibFunctions(t) {
		if _, ok := byName[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d TA-Lib functions not in the catalog: %s", len(missing), strings.Join(missing, " "))
	}
}

func talibFunctions(t testing.TB) map[string]bool {
	m := map[string]bool{}
	for name := range loadBounds(t) {
		m[name] = true
	}
	return m
}

func fmtParams(p map[string]float64) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", paramAlias(k), p[k])
	}
	return "(" + strings.Join(parts, ",") + ")"
}

func checkCall(e *Entry, c refCall, fx *refFixture, bars columns) error {
	p, err := refParams(e, c.Params)
	if err != nil {
		return err
	}
	if len(c.Inputs) != len(e.Inputs) {
		return fmt.Errorf("%d inputs, TA-Lib has %d", len(e.Inputs), len(c.Inputs))
	}
	in := make([][]float64, len(c.Inputs))
	for i, col := range c.Inputs {
		in[i] = bars[col]
	}
	res, err := Compute(e, in, p)
	if err != nil {
		return err
	}
	return checkResult(e, c, fx, p, res)
}

// checkResult holds res, e's output for call c, to TA-Lib's.
func checkResult(e *Entry, c refCall, fx *refFixture, p []float64, res Result) error {
	if len(c.Outputs) != len(e.Outputs) {
		return fmt.Errorf("%d outputs, TA-Lib has %d", len(e.Outputs), len(c.Outputs))
	}
	wantStart := fx.N
	if c.Nb > 0 {
		wantStart = c.Beg
	}
	beg := c.Beg
	only, quirk := readsOutside(c)
	if quirk {
		// TA-Lib's first value there comes from before its input: ours
		// start one bar later, and the outputs TA-Lib shifts are not held.
		wantStart++
		beg++
	}
	if res.Start != wantStart {
		return fmt.Errorf("first value at %d, TA-Lib's at %d", res.Start, wantStart)
	}
	if c.Nb > 0 && e.Lookback(p) != beg {
		return fmt.Errorf("lookback %d, TA-Lib's %d", e.Lookback(p), beg)
	}
	var msgs []string
	for j, name := range e.Outputs {
		rname := refOutputName(e, name, c.Outputs)
		want, ok := c.Outputs[rname]
		if !ok {
			return fmt.Errorf("output %s: no TA-Lib output %q", name, rname)
		}
		if only != "" && rname != only {
			continue
		}
		idx := fx.Sample
		if len(want) == fx.N {
			idx = nil
		}
		exact := strings.HasPrefix(c.Fn, "CDL") || e.index[j] || c.Fn == "HT_TRENDMODE"
		scale := 0.0
		for _, w := range want {
			if w != nil {
				scale = math.Max(scale, math.Abs(*w))
			}
		}
		bad := 0
		for k, w := range want {
			bar := k
			if idx != nil {
				bar = idx[k]
			}
			g := res.Outputs[j][bar]
			inRange := c.Nb > 0 && bar >= c.Beg && bar < c.Beg+c.Nb
			if quirk && (bar < beg || !inRange) {
				continue
			}
			var miss string
			switch {
			case !inRange:
				if !math.IsNaN(g) {
					miss = fmt.Sprintf("%s[%d] = %v, TA-Lib has no value", name, bar, g)
				}
			case w == nil:
				if !math.IsNaN(g) && !math.IsInf(g, 0) {
					miss = fmt.Sprintf("%s[%d] = %v, TA-Lib's is not finite", name, bar, g)
				}
			case !closeTo(g, *w, scale, exact):
				miss = fmt.Sprintf("%s[%d] = %.17g, TA-Lib %.17g (rel %.3g)", name, bar, g, *w, math.Abs(g-*w)/math.Abs(*w))
			}
			if miss != "" {
				bad++
				if bad <= 3 {
					msgs = append(msgs, miss)
				}
			}
		}
		if bad > 3 {
			msgs = append(msgs, fmt.Sprintf("%s: %d mismatches in all", name, bad))
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return nil
}

// stillOff lists the calls known to leave TA-Lib C, with the reason: none
// now. (STOCH with MAMA smoothing of a flat stretch was, from the last
// bit of Go's arc tangent; MAMA now uses a correctly rounded one, atan.)
var stillOff = map[string]string{}

// readsOutside reports the parameter sets at which TA-Lib C reads before
// the start of its buffers, because a sub-function's lookback is -1 for a
// one-bar period (TA_EMA_Lookback(1), TA_SMA_Lookback(1)): MACD and
// MACDFIX with signal 1 (whose first MACD value is uninitialised memory and
// whose signal line is the MACD line two bars ahead), TRIX with period 1
// and ULTOSC with all periods 1 (whose first value uses the bar before the
// first; TRIX's later values are also garbage there). We start one bar
// later; only names the single output still held ("" for all, "-" for
// none).
func readsOutside(c refCall) (only string, ok bool) {
	switch {
	case (c.Fn == "MACD" || c.Fn == "MACDFIX") && c.Params["optInSignalPeriod"] == 1:
		return "outMACD", true
	case c.Fn == "TRIX" && c.Params["optInTimePeriod"] == 1:
		return "-", true
	case c.Fn == "ULTOSC" && c.Params["optInTimePeriod1"] == 1 && c.Params["optInTimePeriod2"] == 1 && c.Params["optInTimePeriod3"] == 1:
		return "", true
	}
	return "", false
}

// TestTALibBounds: every catalog entry that reproduces a TA-Lib function
// has TA-Lib's parameters, defaults and bounds (MA kinds 0..8).
func TestTALibBounds(t *testing.T) {
	byName := talibEntries()
	for fn, params := range loadBounds(t) {
		e, ok := byName[fn]
		if !ok {
			continue
		}
		if len(params) != len(e.Params) {
			t.Errorf("%s: %d parameters, TA-Lib has %d", fn, len(e.Params), len(params))
		}
		for optIn, b := range params {
			i := e.Param(paramAlias(optIn))
			if i < 0 {
				t.Errorf("%s: TA-Lib parameter %s has no counterpart", fn, optIn)
				continue
			}
			q := e.Params[i]
			if q.Min != b.Min || q.Max != b.Max || q.Default != b.Default {
				t.Errorf("%s.%s: default %v in [%v, %v], TA-Lib's %v in [%v, %v]", e.Name, q.Name, q.Default, q.Min, q.Max, b.Default, b.Min, b.Max)
			}
			want := map[string]ParamType{"int": Int, "real": Float, "list": MAType}[b.Type]
			if q.Type != want {
				t.Errorf("%s.%s: type %s, TA-Lib's %s", e.Name, q.Name, q.Type, b.Type)
			}
		}
	}
}
