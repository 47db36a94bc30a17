package project

import (
	"strings"
	"testing"
)

// TestAgentEnvelopeKeys: [agent.envelope.VENUE] reads its limits as
// decimal strings; an unknown venue, a negative limit, close_on_breach
// without max_daily_loss and an unknown key are refused naming the fix.
func TestAgentEnvelopeKeys(t *testing.T) {
	base := "[[venues]]\nname = \"paper\"\nkind = \"paper\"\ncurrency = \"USD\"\ncash = \"10000\"\nsymbols = [\"BTC-USD\"]\n"
	cfg, err := ParseConfig("wicket.toml", []byte(base+"[agent.envelope.paper]\nmax_notional = \"5000\"\nmax_daily_loss = \"250.5\"\nclose_on_breach = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := cfg.Agent.Envelope["paper"]
	if !ok || e.MaxNotional.String() != "5000" || e.MaxDailyLoss.String() != "250.5" || !e.CloseOnBreach {
		t.Fatalf("read %+v", cfg.Agent.Envelope)
	}
	for text, want := range map[string]string{
		"[agent.envelope.kraken]\nmax_notional = \"1\"\n":   "agent.envelope.kraken: no such venue in [[venues]]",
		"[agent.envelope.paper]\nmax_daily_loss = \"-1\"\n": "agent.envelope.paper: max_notional and max_daily_loss must not be negative",
		"[agent.envelope.paper]\nclose_on_breach = true\n":  "agent.envelope.paper: close_on_breach needs max_daily_loss",
		"[agent.envelope.paper]\nmax_notionals = \"1\"\n":   "unknown key(s) agent.envelope.paper.max_notionals",
	} {
		if _, err := ParseConfig("wicket.toml", []byte(base+text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
