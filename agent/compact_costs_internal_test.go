package agent

import (
	"strings"
	"testing"
)

// TestBacktestSummaryShowsCosts (issue 44 item 19): the text a client
// reads names every cost the run charged: fees and slippage always, and
// funding and borrow when the metrics carry them.
func TestBacktestSummaryShowsCosts(t *testing.T) {
	ans := map[string]any{"series": "BTC-USD@1h", "metrics": map[string]any{
		"total_return": 0.1, "fees_paid": "12.30", "slippage_cost": "6.15", "funding_paid": "-3.21", "borrow_paid": "1.00"}}
	got := backtestSummary(ans, "wicket://runs/x")
	for _, want := range []string{`fees_paid "12.30"`, `slippage_cost "6.15"`, `funding_paid "-3.21"`, `borrow_paid "1.00"`} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %s: %s", want, got)
		}
	}
}
