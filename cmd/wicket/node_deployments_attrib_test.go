package main

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/deploy"
)

// TestPrintAttribution: the report's text carries both P&Ls, the gap
// with each part in money and bps, a line per UTC day, and the funding
// booked.
func TestPrintAttribution(t *testing.T) {
	at := time.Date(2026, 3, 2, 0, 5, 0, 0, time.UTC)
	m := func(s, bps string) deploy.Amount {
		return deploy.Amount{Money: decimal.RequireFromString(s), Bps: decimal.RequireFromString(bps)}
	}
	parts := deploy.GapParts{Gap: m("-26.5", "-26.5"), Price: m("-25.96", "-25.96"), Fees: m("-0.04", "-0.04"), Funding: m("-1.5", "-1.5"), Sizing: m("1", "1")}
	a := &deploy.Attribution{From: at, To: at.Add(time.Hour), Capital: decimal.NewFromInt(10000), Live: decimal.RequireFromString("100.004"),
		Replay: decimal.RequireFromString("126.5"), Total: parts, Days: []deploy.GapDay{{Day: "2026-03-02", GapParts: parts}},
		Assets: []deploy.AssetGap{{Series: "BTC-USD@1m", Total: parts}}}
	var b strings.Builder
	printAttribution(&b, a, []deploy.FundingPayment{{Symbol: "BTCUSDT", Time: at, Amount: decimal.RequireFromString("-1.5"), Venue: decimal.RequireFromString("-1.5")}})
	for _, want := range []string{"funding      -1.5 on BTCUSDT at 2026-03-02T00:05:00Z", "live P&L 100.00, replay P&L 126.50 (capital 10000)",
		"gap total    gap -26.50 (-26.50 bps): decisions 0.00 (0.00 bps), fill timing 0.00 (0.00 bps), fill price -25.96 (-25.96 bps), sizing 1.00 (1.00 bps), fees -0.04 (-0.04 bps), funding -1.50 (-1.50 bps)",
		"gap 2026-03-02 gap -26.50", "gap BTC-USD@1m gap -26.50 (-26.50 bps): decisions"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("report text lacks %q:\n%s", want, b.String())
		}
	}
}
