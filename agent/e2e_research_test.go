package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// seededProject is a project with the demo series.
func seededProject(t *testing.T) string {
	t.Helper()
	proj := newProject(t)
	runWicket(t, nil, "--project", proj, "data", "seed-demo")
	return proj
}

// TestResearchLoop drives the whole research loop through MCP: list
// series, validate a template, discover its knobs, backtest with a chart,
// sweep with progress notifications, and walk forward.
func TestResearchLoop(t *testing.T) {
	proj := seededProject(t)
	s := startMCP(t, nil, proj)
	var mu sync.Mutex
	var progress []map[string]any
	s.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			progress = append(progress, n.Params.AdditionalFields)
			mu.Unlock()
		}
	})

	series := object(t, s.call(t, "list_series", `{}`))
	if series["count"].(float64) < 4 || !strings.Contains(text(s.call(t, "list_series", `{}`)), "BTC-USD@1h") {
		t.Fatalf("list_series: %v", series)
	}
	if r := s.call(t, "list_series", `{"limit":100000}`); !strings.Contains(text(r), `"clamped":{"limit":500}`) {
		t.Errorf("an over-large limit is not reported clamped: %.300s", text(r))
	}
	if r := object(t, s.call(t, "list_series", `{"limit":2}`)); len(r["series"].([]any)) != 2 || r["count"] != series["count"] ||
		!strings.Contains(fmt.Sprint(r["truncated"]), "showing 2 of") {
		t.Errorf("limit 2 is not a truncated list saying so: %v", r)
	}
	runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross")
	strategies := object(t, s.call(t, "list_strategies", `{}`))
	if strategies["count"].(float64) != 1 {
		t.Fatalf("list_strategies: %v", strategies)
	}
	if rep := object(t, s.call(t, "validate_strategy", `{"name":"mine"}`)); rep["valid"] != true {
		t.Fatalf("validate mine: %v", rep)
	}
	if p := object(t, s.call(t, "discover_params", `{"name":"mine"}`)); p["count"].(float64) != 3 {
		t.Fatalf("discover_params mine: %v", p)
	}

	bt := s.call(t, "run_backtest", `{"name":"mine","series":"BTC-USD@1d","params":{"fast":5,"slow":20},"plot":true,"trades_limit":3}`)
	report := object(t, bt)
	metrics, _ := report["metrics"].(map[string]any)
	if metrics == nil || metrics["sharpe"] == nil {
		t.Fatalf("backtest report: %.500s", text(bt))
	}
	if c, _ := report["lookahead_check"].(string); !strings.HasPrefix(c, "passed (") {
		t.Errorf("backtest lookahead_check: %v", report["lookahead_check"])
	}
	if _, isString := metrics["final_equity"].(string); !isString {
		t.Errorf("final_equity is not a decimal string: %v", metrics["final_equity"])
	}
	var png bool
	for _, c := range bt.Content {
		if img, ok := c.(mcp.ImageContent); ok && img.MIMEType == "image/png" && len(img.Data) > 100 {
			png = true
		}
	}
	if !png {
		t.Error("plot: true returned no PNG image content")
	}

	// A sweep with a progressToken sends progress notifications.
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_sweep"
	req.Params.Arguments = json.RawMessage(`{"name":"mine","series":"BTC-USD@1h","grid":{"fast":{"from":5,"to":25,"step":5},"slow":[30,50]},"top":3}`)
	req.Params.Meta = &mcp.Meta{ProgressToken: "sweep-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sw, err := s.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	sweep := object(t, sw)
	if sweep["evaluated"].(float64) != 10 || len(sweep["top"].([]any)) != 3 || sweep["deflated_sharpe"] == nil {
		t.Fatalf("sweep: %.600s", text(sw))
	}
	if c, _ := sweep["lookahead_check"].(string); !strings.HasPrefix(c, "passed (") {
		t.Errorf("sweep winner's lookahead_check: %v", sweep["lookahead_check"])
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	if len(progress) == 0 || progress[0]["progressToken"] != "sweep-1" {
		t.Errorf("no progress notification for the sweep: %v", progress)
	}
	mu.Unlock()

	// Too many combinations is refused before any work, naming the count.
	big := s.call(t, "run_sweep", `{"name":"mine","series":"BTC-USD@1h","grid":{"fast":{"from":2,"to":200},"slow":{"from":3,"to":400}}}`)
	if !big.IsError || !strings.Contains(text(big), "combinations") {
		t.Errorf("over-large grid: %q", text(big))
	}
	est := object(t, s.call(t, "run_sweep", `{"name":"mine","series":"BTC-USD@1h","grid":{"fast":[5,10],"slow":[30]},"estimate":true}`))
	if est["estimate"] == nil {
		t.Errorf("estimate: %v", est)
	}

	wf := object(t, s.call(t, "run_walk_forward", `{"name":"mine","series":"BTC-USD@1d","grid":{"fast":[5,10],"slow":[20,40]},"windows":3}`))
	if len(wf["windows"].([]any)) != 3 {
		t.Fatalf("walk-forward: %v", wf)
	}
}
