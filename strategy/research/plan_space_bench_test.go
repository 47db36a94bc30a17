package research

import (
	"encoding/json"
	"testing"

	"wicket/strategy/ledger"
)

// BenchmarkPlanSpace: checking a 100-combination grid (fast 5..50 by 5,
// slow 50..275 by 25, as the command line writes lists) against a
// plan's grid, as every run under a plan does at its entry.
func BenchmarkPlanSpace(b *testing.B) {
	space, _ := json.Marshal(Grid{"fast": {From: fp(5), To: fp(50), Step: fp(5)}, "slow": {From: fp(50), To: fp(275), Step: fp(25)}})
	g := &planGate{plan: &ledger.Plan{Spec: ledger.PlanSpec{Name: "p", Grid: space}}}
	grid := Grid{"fast": {From: fp(5), To: fp(50), Step: fp(5)}, "slow": {Values: []any{"50", "75", "100", "125", "150", "175", "200", "225", "250", "275"}}}
	for b.Loop() {
		if err := g.inSpace(grid, nil); err != nil {
			b.Fatal(err)
		}
	}
}
