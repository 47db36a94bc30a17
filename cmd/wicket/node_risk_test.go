package main

import (
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/nodetest"
)

// TestNodeRiskOperatorCommandsNeedATerminal: kill, resume-trading,
// heartbeat and reset-throttle are an operator's acts: a pipe is refused.
func TestNodeRiskOperatorCommandsNeedATerminal(t *testing.T) {
	for _, verb := range []string{"kill", "resume-trading", "heartbeat", "reset-throttle", "override"} {
		code, _, stderr := wicket(t, "node", verb)
		if code != 1 || !strings.Contains(stderr, "wicket node "+verb+" needs an interactive terminal") {
			t.Errorf("%s from a pipe: code %d %s", verb, code, stderr)
		}
	}
}

// TestNodeRiskShowsEveryLimit: wicket node risk prints the limits with
// their headroom (and --json the node's answer).
func TestNodeRiskShowsEveryLimit(t *testing.T) {
	cfg := project.Defaults()
	cfg.Risk.MaxMessages = 20
	cfg.Risk.Venues = map[string]project.VenueRisk{"paper": {MaxDailyNotional: testkit.D("100000")}}
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg))
	dir := tradeProject(t, n)
	code, out, stderr := wicket(t, "--project", dir, "node", "risk", "--addr", n.Addr)
	if code != 0 {
		t.Fatalf("node risk: %d %s", code, stderr)
	}
	for _, want := range []string{"trading state  active", "daily_notional", "100000", "venue_messages", "1s"} {
		if !strings.Contains(out, want) {
			t.Errorf("node risk lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := wicket(t, "--project", dir, "node", "risk", "--addr", n.Addr, "--json"); code != 0 || !strings.Contains(out, `"check": "daily_notional"`) {
		t.Errorf("--json: %d %s", code, out)
	}
}
