package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/deploy"
)

// TestDescribePortfolioProposal: a portfolio deployment's proposal is
// shown with its asset's symbol (the deployment has none of its own),
// and its legs are listed.
func TestDescribePortfolioProposal(t *testing.T) {
	d := deploy.Deployment{ID: "dep-1", Strategy: "rotation.star", Series: "BTC-USD@1m,SOL-USD@1m", Venue: "paper",
		Legs: []deploy.Leg{{Series: "BTC-USD@1m", Symbol: "BTC-USD"}, {Series: "SOL-USD@1m", Symbol: "SOL-USD", Position: decimal.NewFromInt(3), Mark: decimal.NewFromInt(20), Value: decimal.NewFromInt(60), Weight: 0.9, HasWeight: true}}}
	p := deploy.Proposal{ClientOrderID: "wd-1", Bar: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), Side: "buy", Quantity: decimal.NewFromInt(5), Target: 0.9,
		Symbol: "SOL-USD", BarClose: decimal.NewFromInt(20)}
	var out bytes.Buffer
	describeProposal(&out, d, p, decimal.NewFromInt(21))
	if !strings.Contains(out.String(), "buy 5 SOL-USD at market on venue paper") || strings.Contains(out.String(), "no price of") {
		t.Fatalf("described as:\n%s", out.String())
	}
	out.Reset()
	printDeployment(&out, d)
	if !strings.Contains(out.String(), "leg          SOL-USD@1m (SOL-USD at paper): position 3 at 20, worth 60.00; weight 0.9") {
		t.Fatalf("printed as:\n%s", out.String())
	}
}
