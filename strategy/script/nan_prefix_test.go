package script

import (
	"math"
	"testing"

	"wicket/strategy/ta"
)

// TestCatalogPrefixExactWithGaps: every ta.* function stays prefix-exact when
// its inputs have missing values: a leading run (an indicator's warm-up fed
// on), isolated gaps in the middle (a division by zero), and a missing
// stretch near the end. A function that, say, skips every NaN of the whole
// input or looks for the last valid value would decide earlier bars with
// later ones.
func TestCatalogPrefixExactWithGaps(t *testing.T) {
	bars := SmokeBars(600)
	gap := func(v []float64, lead int) []float64 {
		out := append([]float64(nil), v...)
		for i := 0; i < lead && i < len(out); i++ {
			out[i] = math.NaN()
		}
		for _, i := range []int{200, 201, 333, 450, 520, 521, 522} {
			out[i] = math.NaN()
		}
		for i := 560; i < 575; i++ {
			out[i] = math.NaN()
		}
		return out
	}
	memo := ta.NewMemo(0)
	for _, lead := range []int{0, 7, 40} {
		cols := map[string][]float64{"open": gap(bars.Open, lead), "high": gap(bars.High, lead), "low": gap(bars.Low, lead), "close": gap(bars.Close, lead), "volume": gap(bars.Volume, lead)}
		cond := make([]float64, bars.Len())
		for i := range cond {
			switch {
			case math.IsNaN(cols["close"][i]):
				cond[i] = math.NaN()
			case bars.Close[i] > bars.Open[i]:
				cond[i] = 1
			}
		}
		for _, e := range ta.Builtin().Entries() {
			in := func(n int) ([][]float64, []ta.Key) {
				var vals [][]float64
				var keys []ta.Key
				for j, name := range e.Inputs {
					v, ok := cols[name]
					switch {
					case name == "condition":
						v = cond
					case !ok && j%2 == 1:
						v = cols["open"]
					case !ok:
						v = cols["close"]
					}
					vals = append(vals, v[:n])
					keys = append(keys, memo.ValuesKey(v[:n]))
				}
				return vals, keys
			}
			fv, fk := in(bars.Len())
			for _, p := range catalogParamSets(e) {
				full, _, err := memo.Compute(e, fv, fk, p)
				if err != nil {
					t.Fatalf("%s%v: %v", e.Name, p, err)
				}
				for _, cut := range append(PrefixCuts(bars.Len(), e.Lookback(p)), 201, 334, 521, 565, 580) {
					pv, pk := in(cut)
					pre, _, err := memo.Compute(e, pv, pk, p)
					if err != nil {
						t.Fatalf("%s%v over %d bars: %v", e.Name, p, cut, err)
					}
					for o := range full.Outputs {
						for i := 0; i < cut; i++ {
							if a, b := full.Outputs[o][i], pre.Outputs[o][i]; !same(a, b) {
								t.Errorf("lead %d: ta.%s%v output %d at bar %d: %v over all bars, %v over the first %d", lead, e.Name, p, o, i, a, b, cut)
								break
							}
						}
					}
				}
			}
		}
	}
}
