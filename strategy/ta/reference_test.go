package ta

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The TA-Lib C reference: every function at its default parameters over a
// fixed 500-bar series (see testdata/talib/README.md for provenance).
const (
	refBars = "../../testdata/talib/bars-500-seed7.csv"
	refJSON = "../../testdata/talib/talib-c-defaults-500-seed7.json"
)

type refFunc struct {
	Group   string                `json:"group"`
	Inputs  []string              `json:"inputs"`
	Params  map[string]float64    `json:"params"`
	Outputs map[string][]*float64 `json:"outputs"`
}

type refData struct {
	N         int                `json:"n"`
	Functions map[string]refFunc `json:"functions"`
}

type columns map[string][]float64

func loadBars(t testing.TB) columns {
	t.Helper()
	f, err := os.Open(refBars)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cols := columns{}
	header := rows[0]
	for _, row := range rows[1:] {
		for j, name := range header {
			v, err := strconv.ParseFloat(row[j], 64)
			if err != nil {
				t.Fatal(err)
			}
			cols[name] = append(cols[name], v)
		}
	}
	return cols
}

func loadRef(t testing.TB) refData {
	t.Helper()
	b, err := os.ReadFile(refJSON)
	if err != nil {
		t.Fatal(err)
	}
	var r refData
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
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

func refOutputName(e *Entry, ours string, ref refFunc) string {
	if len(e.Outputs) == 1 {
		for k := range ref.Outputs {
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

// inputsFor maps an entry's inputs onto the reference bars the way the
// reference was computed: a single series is the close, two series are
// high and low.
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
		default:
			in[i] = bars[name]
		}
	}
	return in
}

// TestTALibReference checks every catalog function that exists in TA-Lib
// against the C library's output at TA-Lib's default parameters: missing
// (None) exactly where TA-Lib gives no value, and equal to 1e-9 relative
// after that (values within 1e-12 of zero compare absolutely: TA-Lib and
// go-talib round a running sum that returns to zero differently).
func TestTALibReference(t *testing.T) {
	bars := loadBars(t)
	ref := loadRef(t)
	checked := 0
	for _, e := range Builtin().Entries() {
		if e.TALib == "" {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			rf, ok := ref.Functions[e.TALib]
			if !ok {
				t.Fatalf("no TA-Lib reference for %s", e.TALib)
			}
			// Our defaults are TA-Lib's, and every TA-Lib parameter maps to one of ours.
			p := e.Defaults()
			for name, v := range rf.Params {
				alias := strings.ToLower(strings.TrimPrefix(name, "optIn"))
				i := e.Param(alias)
				if i < 0 {
					t.Fatalf("TA-Lib parameter %s (%s) has no counterpart", name, alias)
				}
				if p[i] != v {
					t.Errorf("default %s = %v, TA-Lib's is %v", e.Params[i].Name, p[i], v)
				}
			}
			if len(rf.Params) != len(e.Params) {
				t.Errorf("%d parameters, TA-Lib has %d", len(e.Params), len(rf.Params))
			}
			res, err := Compute(e, inputsFor(e, bars), p)
			if err != nil {
				t.Fatal(err)
			}
			if len(rf.Outputs) != len(e.Outputs) {
				t.Fatalf("%d outputs, TA-Lib has %d", len(e.Outputs), len(rf.Outputs))
			}
			for j, name := range e.Outputs {
				rname := refOutputName(e, name, rf)
				want, ok := rf.Outputs[rname]
				if !ok {
					t.Fatalf("output %s: no TA-Lib output %q", name, rname)
				}
				compareRef(t, name, res.Outputs[j], want)
			}
			first := len(bars["close"])
			for _, col := range rf.Outputs {
				for i, v := range col {
					if v != nil {
						first = min(first, i)
						break
					}
				}
			}
			if res.Start != first {
				t.Errorf("Start = %d, TA-Lib's first value is at %d", res.Start, first)
			}
			if e.Warmup != first {
				t.Errorf("catalog warm-up %d, TA-Lib's first value is at %d", e.Warmup, first)
			}
		})
		checked++
	}
	if checked < 60 {
		t.Errorf("only %d functions checked against TA-Lib; the catalog promises at least 60", checked)
	}
}

func compareRef(t *testing.T, output string, got []float64, want []*float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", output, len(got), len(want))
	}
	bad := 0
	for i := range want {
		g := got[i]
		if want[i] == nil {
			if !math.IsNaN(g) {
				t.Errorf("%s[%d] = %v, TA-Lib has no value (warm-up)", output, i, g)
				bad++
			}
		} else if w := *want[i]; math.IsNaN(g) || math.Abs(g-w) > 1e-9*math.Abs(w) && math.Abs(g-w) > 1e-12 {
			t.Errorf("%s[%d] = %.17g, TA-Lib %.17g (rel %.3g)", output, i, g, w, math.Abs(g-w)/math.Abs(w))
			bad++
		}
		if bad >= 5 {
			t.Errorf("%s: stopping after 5 mismatches", output)
			return
		}
	}
}
