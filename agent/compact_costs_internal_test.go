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

// TestCompactNumberPlain (issue 45 item 7): a large figure in the text
// summary is a plain number, never scientific notation.
func TestCompactNumberPlain(t *testing.T) {
	for v, want := range map[float64]string{1e6: "1000000", -2345678.9: "-2345679", 12345.4: "12345", 0.123456: "0.1235", 1.5: "1.5"} {
		if got := compactNumber(v); got != want {
			t.Errorf("compactNumber(%v) = %q, want %q", v, got, want)
		}
	}
}
