package research

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wicket/internal/project"
)

// TestDeflatedSharpeWorkedExample checks the numerical example of Bailey
// and López de Prado (2014), section "A numerical example": 100 trials
// whose annualised Sharpe ratios have variance 1/2, a winner with an
// annualised Sharpe ratio of 2.5 over 1,250 daily returns (250 a year),
// skewness -3 and kurtosis 10. The paper gets SR0 = 0.1132 per day and
// DSR = 0.9004.
func TestDeflatedSharpeWorkedExample(t *testing.T) {
	const periods = 250
	sr := 2.5 / math.Sqrt(periods)
	dsr, sr0 := DeflatedSharpeRatio(sr, 100, 0.5/periods, -3, 10, 1250)
	if math.Abs(sr0-0.1132) > 5e-5 {
		t.Errorf("SR0 = %.6f, the paper's is 0.1132", sr0)
	}
	if math.Abs(dsr-0.9004) > 5e-5 {
		t.Errorf("DSR = %.6f, the paper's is 0.9004", dsr)
	}
}

func TestDeflatedSharpeProperties(t *testing.T) {
	// One trial: no selection, SR0 = 0, and DSR is the probabilistic
	// Sharpe ratio against zero.
	dsr, sr0 := DeflatedSharpeRatio(0.05, 1, 0.01, 0, 3, 1001)
	want := normCDF(0.05 * math.Sqrt(1000) / math.Sqrt(1+0.5*0.05*0.05))
	if sr0 != 0 || math.Abs(dsr-want) > 1e-12 {
		t.Errorf("one trial: DSR %v SR0 %v, want %v and 0", dsr, sr0, want)
	}
	// More trials, or more spread among them, deflate more.
	prev := 1.0
	for _, n := range []int{2, 10, 100, 1000, 10000} {
		d, _ := DeflatedSharpeRatio(0.05, n, 0.0004, 0, 3, 1000)
		if !(d < prev) {
			t.Errorf("%d trials: DSR %v is not below %v", n, d, prev)
		}
		prev = d
	}
	// Undefined inputs give NaN, never a number.
	for _, tc := range []struct {
		sr, v, skew, kurt float64
		n, t              int
	}{
		{math.NaN(), 0.01, 0, 3, 10, 100},
		{0.05, 0.01, 0, 3, 10, 1},
		{0.05, 0.01, 0, 3, 0, 100},
		{2, 0.01, 5, 1, 10, 100}, // 1 - 10 + 0 < 0
	} {
		if d, _ := DeflatedSharpeRatio(tc.sr, tc.n, tc.v, tc.skew, tc.kurt, tc.t); !math.IsNaN(d) {
			t.Errorf("%+v: DSR %v, want NaN", tc, d)
		}
	}
	// Φ and Φ⁻¹ invert each other.
	for _, p := range []float64{0.001, 0.1, 0.5, 0.9, 0.999} {
		if got := normCDF(normQuantile(p)); math.Abs(got-p) > 1e-12 {
			t.Errorf("Φ(Φ⁻¹(%v)) = %v", p, got)
		}
	}
}

func TestGridSpecJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want GridSpec
		out  string
		err  string
	}{
		{in: `[5, 10, 20]`, want: GridSpec{Values: []any{5.0, 10.0, 20.0}}, out: `[5,10,20]`},
		{in: `["fast", true, 0.5]`, want: GridSpec{Values: []any{"fast", true, 0.5}}, out: `["fast",true,0.5]`},
		{in: `{"from": 5, "to": 50, "step": 5}`, want: GridSpec{From: fp(5), To: fp(50), Step: fp(5)}, out: `{"from":5,"to":50,"step":5}`},
		{in: `{"from": 5, "to": 50}`, want: GridSpec{From: fp(5), To: fp(50)}, out: `{"from":5,"to":50}`},
		{in: `0.5`, want: GridSpec{Values: []any{0.5}}, out: `[0.5]`},
		{in: `[]`, want: GridSpec{Values: []any{}}, out: `[]`},
		{in: `{"from": 5}`, err: "needs both from and to"},
		{in: `{"from": 5, "to": 9, "by": 1}`, err: `unknown field "by"`},
		{in: `[[1]]`, err: "not a list"},
		{in: `null`, err: "not null"},
		{in: `{"from": "a", "to": 9}`, err: "a grid range is"},
	} {
		var g GridSpec
		err := json.Unmarshal([]byte(tc.in), &g)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, g); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.in, diff)
		}
		if b, _ := json.Marshal(g); string(b) != tc.out {
			t.Errorf("%s marshals to %s, want %s", tc.in, b, tc.out)
		}
	}
	// A whole request decodes both shapes.
	var req SweepRequest
	if err := json.Unmarshal([]byte(`{"name":"mine","series":"BTC-USD@1h","grid":{"fast":{"from":5,"to":50,"step":5},"slow":[20,30,50]}}`), &req); err != nil {
		t.Fatal(err)
	}
	if !req.Grid["fast"].IsRange() || req.Grid["slow"].IsRange() || req.Name != "mine" {
		t.Errorf("%+v", req)
	}
}

func TestParseGridFlag(t *testing.T) {
	for _, tc := range []struct {
		in, name string
		want     GridSpec
		err      string
	}{
		{in: "fast=5:50:5", name: "fast", want: GridSpec{From: fp(5), To: fp(50), Step: fp(5)}},
		{in: "fast=5:50", name: "fast", want: GridSpec{From: fp(5), To: fp(50)}},
		{in: " slow = 20,30, 50 ", name: "slow", want: GridSpec{Values: []any{"20", "30", "50"}}},
		{in: "mode=fast", name: "mode", want: GridSpec{Values: []any{"fast"}}},
		{in: "fast", err: "write KNOB=FROM:TO:STEP"},
		{in: "=5", err: "write KNOB=FROM:TO:STEP"},
		{in: "fast=5:x", err: `"x" in "5:x" is not a number`},
		{in: "fast=1:2:3:4", err: "a range is FROM:TO or FROM:TO:STEP"},
		{in: "slow=20,,30", err: "empty value"},
	} {
		name, g, err := ParseGridFlag(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || name != tc.name {
			t.Errorf("%q: %q, %v", tc.in, name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, g); diff != "" {
			t.Errorf("%q: (-want +got)\n%s", tc.in, diff)
		}
	}
}

func TestLength(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		in   string
		want Length
		out  string
		err  string
	}{
		{in: `500`, want: Length{Bars: 500}, out: `500`},
		{in: `"500"`, want: Length{Bars: 500}, out: `500`},
		{in: `"180d"`, want: Length{Duration: 180 * day}, out: `"180d"`},
		{in: `"4320h"`, want: Length{Duration: 4320 * time.Hour}, out: `"180d"`},
		{in: `"26w"`, want: Length{Duration: 26 * 7 * day}, out: `"26w"`},
		{in: `"90m"`, want: Length{Duration: 90 * time.Minute}, out: `"90m"`},
		{in: `2.5`, err: "whole number"},
		{in: `0`, err: "at least 1"},
		{in: `"3 months"`, err: "give a number of bars"},
		{in: `"-5d"`, err: "give a number of bars"},
		{in: `true`, err: "a number of bars or a duration"},
	} {
		var l Length
		err := json.Unmarshal([]byte(tc.in), &l)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || l != tc.want {
			t.Errorf("%s: %+v, %v", tc.in, l, err)
			continue
		}
		if b, _ := json.Marshal(l); string(b) != tc.out {
			t.Errorf("%s marshals to %s, want %s", tc.in, b, tc.out)
		}
	}
	if got := (Length{Duration: 180 * day}).barsOf(time.Hour); got != 4320 {
		t.Errorf("180d of 1h bars = %d", got)
	}
	// A request without lengths omits them.
	if b, _ := json.Marshal(WalkForwardRequest{Windows: 3}); strings.Contains(string(b), "sample") {
		t.Errorf("zero lengths are written: %s", b)
	}
}

func TestListStrategies(t *testing.T) {
	l := newLocal(t, 1) // the summaries are parsed in a worker
	got, err := l.ListStrategies(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Strategies) != 2 || got.Note != "" {
		t.Fatalf("%+v", got)
	}
	broken, mine := got.Strategies[0], got.Strategies[1]
	if broken.Name != "broken" || !strings.Contains(broken.Problem, "broken.star:2:") || broken.Summary != "" {
		t.Errorf("broken: %+v", broken)
	}
	if mine.Name != "mine" || !strings.HasPrefix(mine.Summary, "SMA crossover:") || mine.Problem != "" || mine.Bytes == 0 {
		t.Errorf("mine: %+v", mine)
	}
	empty := NewLocal(Config{ProofSeed: fixedSeed, Project: project.Project{Root: t.TempDir()}})
	got, err = empty.ListStrategies(ctxT(t))
	if err != nil || len(got.Strategies) != 0 || !strings.Contains(got.Note, "wicket strategy new") {
		t.Errorf("no strategies: %+v %v", got, err)
	}
	_, err = NewLocal(Config{ProofSeed: fixedSeed}).ListStrategies(ctxT(t))
	var re *Error
	if !errors.As(err, &re) || re.Kind != KindNotFound || !strings.Contains(re.Msg, "wicket init") {
		t.Errorf("no project: %v", err)
	}
}

func TestListSeries(t *testing.T) {
	got, err := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t)}).ListSeries(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var hourly *SeriesInfo
	for i, s := range got.Series {
		if s.Series == "BTC-USD@1h" {
			hourly = &got.Series[i]
		}
	}
	if hourly == nil || hourly.Symbol != "BTC-USD" || hourly.Granularity != "1h" || hourly.Source != "demo" || hourly.Bars < 17000 ||
		hourly.Last != "2024-12-31T23:00:00Z" {
		t.Errorf("BTC-USD@1h: %+v", hourly)
	}
	none, err := NewLocal(Config{ProofSeed: fixedSeed, Project: project.Project{Root: t.TempDir()}}).ListSeries(ctxT(t))
	if err != nil || len(none.Series) != 0 || !strings.Contains(none.Note, "wicket data seed-demo") {
		t.Errorf("no store: %+v %v", none, err)
	}
}

func TestBacktestByName(t *testing.T) {
	l := newLocal(t, 1)
	fee := 0.0
	res, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "SPY@1d", Params: map[string]any{"fast": 5},
		Costs: Costs{Capital: "2500", FeeBps: &fee}, Plot: true, TradesLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Settings struct {
			Capital     string
			FeeBps      float64 `json:"fee_bps"`
			SlippageBps float64 `json:"slippage_bps"`
			Params      map[string]any
		}
	}
	if err := json.Unmarshal(res.Result, &r); err != nil {
		t.Fatal(err)
	}
	// Capital and fee from the request, slippage from the project's defaults.
	if r.Settings.Capital != "2500.00" || r.Settings.FeeBps != 0 || r.Settings.SlippageBps != 5 || r.Settings.Params["fast"] != 5.0 {
		t.Errorf("settings %+v", r.Settings)
	}
	if len(res.PNG) < 100 || !strings.Contains(res.Text, "SPY@1d") {
		t.Errorf("png %d bytes, text %q", len(res.PNG), res.Text)
	}
	for _, tc := range []struct {
		req  BacktestRequest
		kind Kind
		want string
	}{
		{BacktestRequest{StrategyRef: StrategyRef{Name: "../x"}, Series: "SPY@1d"}, KindInvalid, "invalid strategy name"},
		{BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}}, KindInvalid, "declares no universe: run it over one series"},
		{BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "SPY@1d", Params: map[string]any{"fast": 1000}}, KindInvalid, "knob fast: 1000 is out of range"},
		{BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "SPY@1d", Fill: "vwap"}, KindInvalid, `fill "vwap" is not one of`},
		{BacktestRequest{StrategyRef: StrategyRef{Name: "broken"}, Series: "SPY@1d"}, KindStrategy, "broken.star:2:"},
		{BacktestRequest{Series: "SPY@1d"}, KindInvalid, "name a strategy"},
		{BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "DOGE-USD@1d"}, KindNotFound, "series DOGE-USD@1d: no such series"},
		{BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "SPY@1d", From: "2090-01-01"}, KindInvalid, "no bars between"},
	} {
		_, err := l.Backtest(ctxT(t), tc.req)
		var re *Error
		if !errors.As(err, &re) || re.Kind != tc.kind || !strings.Contains(re.Msg, tc.want) {
			t.Errorf("%+v: %v, want %s containing %q", tc.req, err, tc.kind, tc.want)
		}
	}
}

func ExampleDeflatedSharpeRatio() {
	// The best of 100 trials: a daily Sharpe ratio of 0.158 (2.5 a year)
	// over 1,250 days, with skewed, fat-tailed returns.
	dsr, sr0 := DeflatedSharpeRatio(0.1581, 100, 0.002, -3, 10, 1250)
	fmt.Printf("luck alone reaches %.4f; the winner is real with probability %.2f\n", sr0, dsr)
	// Output: luck alone reaches 0.1132; the winner is real with probability 0.90
}

func ExampleParseGridFlag() {
	for _, flag := range []string{"fast=5:50:5", "slow=20,30,50"} {
		name, spec, _ := ParseGridFlag(flag)
		b, _ := json.Marshal(Grid{name: spec})
		fmt.Println(string(b))
	}
	// Output:
	// {"fast":{"from":5,"to":50,"step":5}}
	// {"slow":["20","30","50"]}
}
