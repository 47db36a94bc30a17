package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"wicket/strategy/research"
)

func decodeJSON[T any](t *testing.T, raw string) (T, map[string]int, error) {
	t.Helper()
	var in T
	a, _, err := parseArgs("t", paramsOf[T](), json.RawMessage(raw))
	if err != nil {
		return in, nil, err
	}
	clamped, err := decodeArgs(a, &in)
	return in, clamped, err
}

// TestDeclaredArgs: defaults, bounds, enums and clamps come from the one
// declaration, and so do the schema's.
func TestDeclaredArgs(t *testing.T) {
	in, _, err := decodeJSON[sweepArgs](t, `{"series":"S","grid":{"fast":[1,2]}}`)
	if err != nil || in.Top != research.DefaultTop || in.RankBy != research.RankSharpe || in.Grid == nil {
		t.Fatalf("defaults: %+v, %v", in, err)
	}
	for raw, want := range map[string]string{
		`{"series":"S","grid":{},"top":0}`:                  `argument "top" is 0; allowed range 1..`,
		`{"series":"S","grid":{},"rank_by":"luck"}`:         `argument "rank_by" is "luck"; valid: sharpe`,
		`{"series":"S","grid":{},"fee_bps":5000}`:           `argument "fee_bps" is 5000; allowed range 0..1000`,
		`{"series":"S","grid":[1]}`:                         `argument "grid" must be an object mapping each knob`,
		`{"series":"S","grid":{},"capital":true}`:           `argument "capital" must be a decimal`,
		`{"series":"S","grid":{},"estimate":"yes"}`:         `argument "estimate" must be a JSON boolean`,
		`{"series":"S","grid":{},"params":"not an object"}`: `argument "params" must be an object mapping knob names to values`,
	} {
		if _, _, err := decodeJSON[sweepArgs](t, raw); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%s: error %v, want %q", raw, err, want)
		}
	}
	l, clamped, err := decodeJSON[seriesListArgs](t, `{"limit":100000}`)
	if err != nil || l.Limit != maxListLimit || clamped["limit"] != maxListLimit {
		t.Errorf("clamp: %+v %v %v", l, clamped, err)
	}
	b, _, _ := decodeJSON[backtestArgs](t, `{"series":"S","fee_bps":2.5}`)
	if b.TradesLimit != defaultAnswerTrades || b.Fill != "next_open" || b.FeeBps == nil || *b.FeeBps != 2.5 || b.SlippageBps != nil {
		t.Errorf("backtest defaults: %+v", b)
	}
	// The schema carries the same default and bounds the decoder applies.
	for _, p := range paramsOf[backtestArgs]() {
		if p.Name == "trades_limit" && (p.Default != defaultAnswerTrades || *p.Min != 0 || *p.Max != maxAnswerTrades) {
			t.Errorf("trades_limit param %+v", p)
		}
	}
}
