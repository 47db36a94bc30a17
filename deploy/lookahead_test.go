package deploy

import (
	"testing"

	"github.com/shopspring/decimal"
)

// peeks reads the next bar's close: rule 1 of the lookahead check refuses
// it at its line when the strategy is loaded.
const peeks = `"""Buys when the next close is higher."""
def signals(bars):
    nxt = ta.shift(bars.close, -1)
    return {"long": nxt > bars.close, "exit": nxt < bars.close, "size": 0.5}
`

// TestDeployRefusesALookahead: a strategy that reads a later bar is
// refused before it trades, in auto and propose modes alike, naming the
// line that reads it (issue 41 item 10). No strategy's own code can fail
// the prefix proof without first failing rule 1 (strategy/script's
// TestLeakAttempts lists the routes), so this is the refusal a deployer
// meets.
func TestDeployRefusesALookahead(t *testing.T) {
	g := researchRig(t, 400)
	for _, mode := range []Mode{ModeAuto, ModePropose} {
		spec := Spec{Strategy: "peeks.star", Source: peeks, Series: symbol + "@1m", Venue: "paper", Mode: mode, Capital: decimal.NewFromInt(10000), Warmup: 40}
		_, err := g.r.Create(ctxT(t), spec)
		wantErr(t, err, "line 3", "into the future", "wicket strategy validate peeks.star")
		if ds := g.r.List(); len(ds) != 0 {
			t.Fatalf("%s: %d deployments after the refusal", mode, len(ds))
		}
	}
}
