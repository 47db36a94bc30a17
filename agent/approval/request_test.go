package approval

import (
	"strings"
	"testing"
	"time"
)

// TestLiveVenueSaidFirst: a request on a live venue leads with its
// attention line, in what `wicket approve` shows and in the elicitation;
// one without it starts with the command.
func TestLiveVenueSaidFirst(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	r := Request{Command: "submit_order: buy 1 BTCUSDT at market", Guardrail: "all checks passed", DryRun: "the node would accept it",
		Venue:     "LIVE VENUE, REAL MONEY: bnlive (binance venue): environment LIVE (real money); armed by an operator until 2026-01-01 11:00:00 UTC",
		Attention: "LIVE VENUE bnlive (binance live): this is real money; armed until 2026-01-01T11:00:00Z", Expires: now.Add(time.Minute)}
	desc := r.Describe(now)
	if !strings.HasPrefix(desc, r.Attention+"\n"+r.Command+"\n") {
		t.Errorf("Describe does not lead with the live venue:\n%s", desc)
	}
	el := r.Elicitation(now)
	if !strings.HasPrefix(el, r.Attention+"\n"+ElicitIntro+"\n"+r.Command+"\n") || !strings.Contains(el, "venue: LIVE VENUE, REAL MONEY: bnlive") {
		t.Errorf("Elicitation does not lead with the live venue:\n%s", el)
	}
	if strings.Count(el, r.Attention) != 1 {
		t.Errorf("the attention line is repeated:\n%s", el)
	}
	r.Attention = ""
	if desc := r.Describe(now); !strings.HasPrefix(desc, r.Command+"\n") {
		t.Errorf("Describe of a paper command:\n%s", desc)
	}
	if el := r.Elicitation(now); !strings.HasPrefix(el, ElicitIntro+"\n"+r.Command+"\n") {
		t.Errorf("Elicitation of a paper command:\n%s", el)
	}
}
