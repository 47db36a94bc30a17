package agent_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestPlanBudgetAcrossCLIAndMCP: a plan sealed by the CLI counts the
// trials of the CLI's sweeps and the agent's alike, refusing either past
// its budget; the agent's verdict is given once.
func TestPlanBudgetAcrossCLIAndMCP(t *testing.T) {
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "research", "plan", "budget", "--strategy", "sma_cross", "--series", "ETH-USD@1d",
		"--hypothesis", "crossings trend", "--criteria", "oos_sharpe>=1, dsr>=0.95, trades>=5", "--max-trials", "7", "--holdout", "2024-01-01:")
	runWicket(t, nil, "--project", proj, "sweep", "sma_cross", "--series", "ETH-USD@1d", "--grid", "fast=5,10", "--grid", "slow=30,40", "--plan", "budget")

	s := startMCP(t, nil, proj)
	r := s.call(t, "run_sweep", `{"name":"sma_cross","series":"ETH-USD@1d","grid":{"fast":[5,10],"slow":[30,40]},"plan":"budget"}`)
	if !r.IsError || !strings.Contains(text(r), "budget is 7 trials and 4 are spent") {
		t.Fatalf("the agent's sweep past the CLI's count: %s", text(r))
	}
	// Unnamed, the same text is counted all the same.
	r = s.call(t, "run_sweep", `{"name":"sma_cross","series":"ETH-USD@1d","grid":{"fast":[5,10],"slow":[30]}}`)
	if w, _ := object(t, r)["warnings"].([]any); r.IsError || !strings.Contains(fmt.Sprint(w), `counted against plan "budget"`) {
		t.Fatalf("run_sweep under the plan: %s", text(r))
	}
	code, stderr := runWicketCode(t, proj, "sweep", "sma_cross", "--series", "ETH-USD@1d", "--grid", "fast=5,10", "--grid", "slow=30", "--plan", "budget")
	if code != 2 || !strings.Contains(stderr, "budget is 7 trials and 6 are spent") {
		t.Fatalf("the CLI's sweep past the agent's count: exit %d %s", code, stderr)
	}

	r = s.call(t, "research_verdict", `{"plan":"budget"}`)
	v, _ := object(t, r)["verdict"].(map[string]any)
	if r.IsError || v["trials"] != float64(6) {
		t.Fatalf("research_verdict: %s", text(r))
	}
	if r := s.call(t, "research_verdict", `{"plan":"budget"}`); !r.IsError || !strings.Contains(text(r), "run once") {
		t.Fatalf("a second verdict: %s", text(r))
	}
	if r := s.call(t, "research_plan", `{"plan":"budget"}`); r.IsError || !strings.Contains(text(r), `"open":false`) {
		t.Fatalf("research_plan shows: %s", text(r))
	}
}
