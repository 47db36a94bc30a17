package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/ledger"
)

// TestOptimizeIntrabarAndHistoryCosts: run_optimize takes intrabar as
// run_sweep does and its trials run under it; research_history shows each
// trial's costs in their compact form (an old row's as unknown) and its
// default answer stays under 8 KB; a resume under another rule is refused,
// naming it.
func TestOptimizeIntrabarAndHistoryCosts(t *testing.T) {
	proj := seededProject(t)
	p := project.Project{Root: proj}
	secrets, err := p.Secrets(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _, _ := secrets.Lookup(project.KeyLedger)
	l, err := ledger.Open(p.ResearchPath(), ledger.Options{Key: []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	old := ledger.Row{Kind: ledger.KindBacktest, Who: ledger.Who{Surface: ledger.SurfaceCLI}, Strategy: "old", Series: "BTC-USD@1d",
		Costs: json.RawMessage(`{"capital":"10000","fee_bps":10,"slippage_bps":5}`)}
	if _, err := l.Append(context.Background(), []ledger.Row{old}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	s := startMCP(t, nil, proj)

	args := `{"name":"sma_cross","series":"BTC-USD@1d","grid":{"fast":{"from":2,"to":20,"step":2}},"trials":4,"batch":2,"seed":2,"fee_bps":7%s}`
	r := s.call(t, "run_optimize", fmt.Sprintf(args, `,"intrabar":"pessimistic"`))
	if r.IsError {
		t.Fatalf("run_optimize: %s", text(r))
	}
	runID, _ := object(t, r)["run_id"].(string)
	h := s.call(t, "research_history", `{"limit":5}`)
	if b, _ := json.Marshal(h); len(b) >= 8192 {
		t.Errorf("research_history's default answer is %d bytes", len(b))
	}
	rows := object(t, h)["trials"].([]any)
	if len(rows) != 5 {
		t.Fatalf("research_history: %d rows", len(rows))
	}
	for i, row := range rows {
		m := row.(map[string]any)
		costs, _ := m["costs"].(string)
		switch {
		case i == 0 && costs != "fee=10 slip=5 rest=unknown":
			t.Errorf("the old row's costs: %q", costs)
		case i > 0 && (m["run_id"] != runID || !strings.HasPrefix(costs, "fee=7 slip=5 intrabar=pessimistic funding=off")):
			t.Errorf("trial %v of run %v: costs %q", m["seq"], m["run_id"], costs)
		}
	}
	r = s.call(t, "run_optimize", fmt.Sprintf(args, fmt.Sprintf(`,"trials":6,"resume":%q`, runID)))
	if !r.IsError || !strings.Contains(text(r), "intrabar pessimistic then, path now") {
		t.Errorf("a resume under the path rule: %.300s", text(r))
	}
}
