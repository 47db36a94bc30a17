package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestOptimizeToolRecordsAndResumes: run_optimize through the real
// server runs its budget in batches with progress notifications, puts
// every trial in the research ledger under its run id (research_history
// counts them), reports N as that count, and resume continues the run to
// a larger budget without repeating a trial.
func TestOptimizeToolRecordsAndResumes(t *testing.T) {
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross")
	s := startMCP(t, nil, proj)
	progress := make(chan map[string]any, 64)
	s.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			select {
			case progress <- n.Params.AdditionalFields:
			default:
			}
		}
	})
	grid := `{"fast":{"from":2,"to":30,"step":2},"slow":{"from":30,"to":120,"step":10}}`
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_optimize"
	req.Params.Arguments = json.RawMessage(`{"name":"mine","series":"BTC-USD@1d","grid":` + grid + `,"trials":6,"batch":3,"seed":5,"method":"cmaes"}`)
	req.Params.Meta = &mcp.Meta{ProgressToken: "opt-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := s.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	first := object(t, r)
	runID, _ := first["run_id"].(string)
	if first["evaluated"] != 6.0 || first["batches"] != 2.0 || first["method"] != "cmaes" || runID == "" || len(first["pareto"].([]any)) == 0 {
		t.Fatalf("run_optimize: %.800s", text(r))
	}
	if d := first["deflated_sharpe"].(map[string]any); d["trials"] != 6.0 {
		t.Errorf("N over the run is %v, want 6", d["trials"])
	}
	select {
	case p := <-progress:
		if p["progressToken"] != "opt-1" {
			t.Errorf("progress notification %v", p)
		}
	case <-time.After(10 * time.Second):
		t.Error("no progress notification for the optimisation")
	}

	r = s.call(t, "run_optimize", `{"name":"mine","series":"BTC-USD@1d","grid":`+grid+`,"trials":10,"top":2,"resume":`+fmt.Sprintf("%q", runID)+`}`)
	more := object(t, r)
	if b, _ := json.Marshal(r); len(b) >= 8192 || len(more["top"].([]any)) != 2 || len(more["pareto"].([]any)) > 2 {
		t.Errorf("the answer is %d bytes with %d best trials and %d of the front (want under 8 KB, 2 and at most 2)", len(b), len(more["top"].([]any)), len(more["pareto"].([]any)))
	}
	if _, ok := runLinkOf(r); !ok {
		t.Error("the answer has no link to the run's resource")
	}
	if more["run_id"] != runID || more["resumed"] != 6.0 || more["evaluated"] != 10.0 || more["method"] != "cmaes" || more["seed"] != 5.0 {
		t.Fatalf("resumed: %v", more)
	}
	h := object(t, s.call(t, "research_history", `{"run_id":`+fmt.Sprintf("%q", runID)+`,"limit":100}`))
	rows := h["trials"].([]any)
	if h["count"] != 10.0 || len(rows) != 10 {
		t.Fatalf("research_history of run %s: %v rows", runID, h["count"])
	}
	seen := map[string]bool{}
	for _, row := range rows {
		p := fmt.Sprint(row.(map[string]any)["params"])
		if seen[p] {
			t.Errorf("trial %s is in the ledger twice", p)
		}
		seen[p] = true
	}
	if d := more["ledger_deflated_sharpe"].(map[string]any); d["trials"] != 10.0 {
		t.Errorf("N over the ledger is %v; the ledger holds 10 trials on the series", d["trials"])
	}
	bad := s.call(t, "run_optimize", `{"name":"mine","series":"BTC-USD@1d","grid":`+grid+`,"method":"anneal"}`)
	if !bad.IsError || !strings.Contains(text(bad), "valid: random, tpe, cmaes") {
		t.Errorf("unknown method: %s", text(bad))
	}
}
